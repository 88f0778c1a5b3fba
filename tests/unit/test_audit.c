// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "runtime/audit.h"

static char *json(const char *s, size_t max)
{
	struct strbuf sb = { 0 };

	cr_assert_eq(sb_json_string(&sb, s, max), 0);
	return sb.data;
}

Test(audit, json_plain_and_escapes)
{
	char *s = json("a\"b\\c\nd\te\x01", 64);

	cr_assert_str_eq(s, "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
	free(s);
}

Test(audit, json_keeps_valid_utf8)
{
	char *s = json("/tmp/caf\xc3\xa9/\xe2\x82\xac", 64);

	cr_assert_str_eq(s, "\"/tmp/caf\xc3\xa9/\xe2\x82\xac\"");
	free(s);
}

Test(audit, json_escapes_invalid_utf8_bytes)
{
	/* a lone continuation byte, a truncated sequence, an overlong '/' and a surrogate */
	char *s = json("\x80x\xc3" "y\xc0\xaf\xed\xa0\x80", 64);

	cr_assert_str_eq(s, "\"\\u0080x\\u00c3y\\u00c0\\u00af\\u00ed\\u00a0\\u0080\"");
	free(s);
}

Test(audit, json_stops_at_max_len)
{
	char *s = json("abcdef", 3);

	cr_assert_str_eq(s, "\"abc\"");
	free(s);
}

static struct tether_fs_event sample(void)
{
	struct tether_fs_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = TETHER_EVENT_FS;
	ev.hdr.size = sizeof(ev);
	ev.hdr.run_slot = 3;
	ev.hdr.cgroup_id = 77;
	ev.hdr.pid = 10;
	ev.hdr.tgid = 9;
	ev.hdr.seq = 5;
	ev.op = TETHER_FS_OPEN_WRITE;
	ev.decision = TETHER_DECISION_DENY;
	ev.err = -13;
	ev.reason = TETHER_REASON_DEFAULT_DENY;
	ev.access = TETHER_ACCESS_WRITE;
	strcpy(ev.comm, "sh");
	strcpy(ev.path, "/etc/\"x\"");
	strcpy(ev.exe, "/bin/sh");
	return ev;
}

Test(audit, formats_fs_record)
{
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };
	const char *after_time;

	struct audit_stream st = { .run_id = "run-1" };

	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert(strncmp(sb.data, "{\"seq\":5,\"time\":\"", 17) == 0, "%s", sb.data);
	after_time = strstr(sb.data, "Z\",");
	cr_assert_not_null(after_time);
	cr_assert_str_eq(after_time + 3,
			 "\"run_id\":\"run-1\",\"kind\":\"fs\",\"op\":\"open_write\","
			 "\"path\":\"/etc/\\\"x\\\"\",\"access\":\"write\",\"decision\":\"deny\","
			 "\"errno\":\"EACCES\",\"reason\":\"default_deny\",\"pid\":10,\"tgid\":9,"
			 "\"uid\":0,\"comm\":\"sh\",\"exe\":\"/bin/sh\",\"cgroup_id\":77}");
	sb_free(&sb);
}

/* Several rights, audit mode, a protected path with and without a rule. */
Test(audit, formats_access_decision_and_protected)
{
	const char *const rule_paths[] = { "/", "/etc/shadow" };
	struct audit_stream st = { .run_id = "r", .rule_paths = rule_paths, .rule_count = 2 };
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };

	ev.op = TETHER_FS_OPEN_READ;
	ev.access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE;
	ev.decision = TETHER_DECISION_WOULD_DENY;
	ev.reason = TETHER_REASON_PROTECTED;
	ev.rule_id = 1;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"op\":\"open_read\",\"path\":\"/etc/\\\"x\\\"\","
					   "\"access\":\"read,write\",\"decision\":\"would_deny\","
					   "\"errno\":\"EACCES\",\"reason\":\"protected\",\"rule\":1,"
					   "\"rule_path\":\"/etc/shadow\",\"pid\""), "%s", sb.data);
	sb_free(&sb);

	ev.access = TETHER_ACCESS_READ | TETHER_ACCESS_EXEC;
	ev.rule_id = TETHER_RULE_NONE;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"access\":\"read,exec\""), "%s", sb.data);
	cr_assert_not_null(strstr(sb.data, "\"reason\":\"protected\",\"pid\""), "%s", sb.data);
	sb_free(&sb);

	ev.access = 0;
	ev.reason = TETHER_REASON_FORBIDDEN;
	ev.decision = TETHER_DECISION_DENY;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_null(strstr(sb.data, "\"access\""), "%s", sb.data);
	sb_free(&sb);
}

Test(audit, unterminated_strings_stay_in_bounds)
{
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };

	memset(ev.path, 'a', sizeof(ev.path));
	memset(ev.comm, 'b', sizeof(ev.comm));
	struct audit_stream st = { .run_id = "r" };

	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"comm\":\"bbbbbbbbbbbbbbbb\""));
	sb_free(&sb);
}

Test(audit, rejects_short_or_unknown_records)
{
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };
	struct audit_stream st = { .run_id = "r" };

	cr_assert_eq(audit_format_record(&ev, 8, &st, &sb), -EBADMSG);
	ev.hdr.size = sizeof(ev) + 1;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), -EBADMSG);
	ev = sample();
	ev.hdr.kind = 99;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), -EBADMSG);
	sb_free(&sb);
}

Test(audit, stream_counts_records)
{
	struct tether_fs_event ev = sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct audit_stream st = { .out = out, .run_id = "r" };

	audit_handle_record(&st, &ev, sizeof(ev));
	ev.hdr.seq = 6;
	audit_handle_record(&st, &ev, sizeof(ev));
	audit_handle_record(&st, &ev, 4);
	fclose(out);
	cr_assert_eq(st.records, 2);
	cr_assert_eq(st.max_seq, 6);
	cr_assert_eq(st.malformed, 1);
	cr_assert_not_null(strstr(buf, "\"seq\":6"));
	free(buf);
}

Test(audit, names_the_deciding_rule)
{
	static const char *const paths[] = { "/", "/srv/ws" };
	struct tether_fs_event ev = sample();
	struct audit_stream st = { .run_id = "r", .rule_paths = paths, .rule_count = 2 };
	struct strbuf sb = { 0 };

	ev.reason = TETHER_REASON_RULE;
	ev.rule_id = 1;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"reason\":\"rule\",\"rule\":1,\"rule_path\":\"/srv/ws\","),
			   "%s", sb.data);
	sb_free(&sb);
	/* an out-of-range id from the kernel is reported without a path, not read past the end */
	ev.rule_id = 7;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"rule\":7,\"pid\""), "%s", sb.data);
	sb_free(&sb);
}

Test(audit, below_rule_paths_are_joined_to_the_rule)
{
	static const char *const paths[] = { "/", "/srv/ws" };
	struct tether_fs_event ev = sample();
	struct audit_stream st = { .run_id = "r", .rule_paths = paths, .rule_count = 2 };
	struct strbuf sb = { 0 };

	ev.decision = TETHER_DECISION_ALLOW;
	ev.err = 0;
	ev.reason = TETHER_REASON_RULE;
	ev.flags = TETHER_FS_PATH_BELOW_RULE;
	ev.rule_id = 1;
	strcpy(ev.path, "/xd/f");
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"path\":\"/srv/ws/xd/f\",\"access\":\"write\",\"decision\":\"allow\",\"reason\""),
			   "%s", sb.data);
	sb_free(&sb);
	ev.path[0] = 0;	/* the rule's root itself */
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"path\":\"/srv/ws\","), "%s", sb.data);
	sb_free(&sb);
	ev.rule_id = 0;
	strcpy(ev.path, "/a");
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"path\":\"/a\","), "%s", sb.data);
	sb_free(&sb);
}
