// SPDX-License-Identifier: GPL-2.0
/*
 * RFC 5424 messages, SD escaping and RFC 6587 framing (runtime/sink/syslog.c),
 * and the on-disk spool (runtime/sink/spool.c): order, exactly once across a
 * reopen, the cap and its loss message, a torn tail.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <regex.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/dnsproxy.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/sink.h"
#include "runtime/sink/spool.h"
#include "runtime/sink/syslog.h"

static const struct syslog_header header = { .facility = 16, .hostname = "fallback",
					     .procid = 99 };

static struct record run_record(uint64_t seq, const char *run_id,
				const struct record_context *ctx)
{
	struct record rec = { .kind = RECORD_RUN, .seq = seq, .mono_ns = 1, .run_id = run_id,
			      .ctx = ctx };

	rec.run.event = RECORD_RUN_OUTPUT_TRUNCATED;
	rec.run.truncated = (struct record_run_truncated){ .stream = "stdout",
							    .output_bytes_max = 7 };
	return rec;
}

static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	bool ok;

	cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0, "%s", pattern);
	ok = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

Test(syslog, sd_values_escape_quote_backslash_and_bracket)
{
	struct strbuf sb = { 0 };
	const char in[] = "a\"b\\c]d[e=f g";

	cr_assert_eq(syslog_sd_escape(&sb, in, strlen(in)), 0);
	cr_assert_str_eq(sb.data, "a\\\"b\\\\c\\]d[e=f g");
	sb_free(&sb);
}

Test(syslog, octet_counting_frames_the_whole_message)
{
	struct strbuf sb = { 0 };

	cr_assert_eq(syslog_frame_octet(&sb, "<134>1 x", 8), 0);
	cr_assert_eq(syslog_frame_octet(&sb, "", 0), 0);
	cr_assert_eq(sb.len, strlen("8 <134>1 x0 "));
	cr_assert_eq(memcmp(sb.data, "8 <134>1 x0 ", sb.len), 0, "%s", sb.data);
	sb_free(&sb);
}

Test(syslog, a_run_record_is_one_rfc5424_message)
{
	struct record_context ctx = { .host = "node-1" };
	struct record rec = run_record(7, "r\"1]", &ctx);
	struct strbuf sb = { 0 };
	bool truncated = true;

	cr_assert_eq(syslog_format_record(&header, &rec, 42, SYSLOG_MSG_MAX, &sb, &truncated), 0);
	cr_expect_not(truncated);
	/* local0 (16) * 8 + info (6) = 134 */
	cr_expect(matches(sb.data, "^<134>1 [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
				   "\\.[0-9]{6}Z node-1 tether 99 run "),
		  "%s", sb.data);
	cr_expect_not_null(strstr(sb.data, " run [tether@32473 id=\"42\" run_id=\"r\\\"1\\]\" "
					   "seq=\"7\"] {\"schema_version\":3,\"seq\":7,"), "%s", sb.data);
	cr_expect_eq(sb.data[sb.len - 1], '}', "MSG is the JSON object, nothing after: %s", sb.data);
	cr_expect_null(strchr(sb.data, '\n'));
	sb_free(&sb);
}

Test(syslog, format_ocsf_makes_the_msg_an_ocsf_event_and_keeps_node_log_lines)
{
	struct syslog_header ocsf = header;
	struct record_context ctx = { .host = "node-1" };
	struct record_names names = { .run_id = "r-1", .ctx = &ctx };
	struct tether_fs_event ev = { .hdr = { .kind = tether_fs_op_kind(TETHER_FS_OPEN_READ),
					       .size = sizeof(ev), .seq = 9, .ts_ns = 1 },
				      .op = TETHER_FS_OPEN_READ, .access = TETHER_ACCESS_READ,
				      .decision = TETHER_DECISION_DENY, .err = -EACCES,
				      .reason = TETHER_REASON_DEFAULT_DENY,
				      .rule_id = TETHER_RULE_NONE };
	const char line[] = "{\"kind\":\"checkpoint\",\"log_seq\":4,\"mac\":\"00\"}";
	struct record node = { .kind = RECORD_NODE_LINE, .line = { line, sizeof(line) - 1 },
			       .line_kind = "checkpoint" };
	struct record_scratch scratch = { 0 };
	struct record rec;
	struct strbuf sb = { 0 };
	bool truncated;

	snprintf(ev.path, sizeof(ev.path), "/etc/shadow");
	cr_assert_eq(record_decode(&ev, sizeof(ev), &names, &scratch, &rec), 0);
	ocsf.format = SYSLOG_FORMAT_OCSF;
	cr_assert_eq(syslog_format_record(&ocsf, &rec, 3, SYSLOG_MSG_MAX, &sb, &truncated), 0);
	/* the header as ever; the MSG is the OCSF File System Activity event */
	cr_expect_not_null(strstr(sb.data, " node-1 tether 99 fs [tether@32473 id=\"3\" "
					   "run_id=\"r-1\" seq=\"9\"] {"), "%s", sb.data);
	cr_expect_not_null(strstr(sb.data, "\"class_uid\":1001"), "%s", sb.data);
	cr_expect_null(strstr(sb.data, "\"schema_version\":3"), "%s", sb.data);
	sb.len = 0;
	cr_assert_eq(syslog_format_record(&ocsf, &node, 4, SYSLOG_MSG_MAX, &sb, &truncated), 0);
	cr_expect_not_null(strstr(sb.data, " checkpoint [tether@32473 id=\"4\"] {\"kind\":"
					   "\"checkpoint\",\"log_seq\":4,\"mac\":\"00\"}"), "%s", sb.data);
	sb_free(&sb);
}

Test(syslog, no_context_takes_the_nodes_name_and_no_seq_is_left_out)
{
	struct record rec = run_record(0, NULL, NULL);
	struct strbuf sb = { 0 };
	bool truncated;

	cr_assert_eq(syslog_format_record(&header, &rec, 1, SYSLOG_MSG_MAX, &sb, &truncated), 0);
	cr_expect_not_null(strstr(sb.data, "Z fallback tether 99 run [tether@32473 id=\"1\"] {"),
			   "%s", sb.data);
	sb_free(&sb);
}

Test(syslog, a_hostname_with_spaces_stays_one_field)
{
	struct record_context ctx = { .host = "bad host\n" };
	struct record rec = run_record(1, "r", &ctx);
	struct strbuf sb = { 0 };
	bool truncated;

	cr_assert_eq(syslog_format_record(&header, &rec, 1, SYSLOG_MSG_MAX, &sb, &truncated), 0);
	cr_expect_not_null(strstr(sb.data, "Z bad_host_ tether 99 run "), "%s", sb.data);
	sb_free(&sb);
}

Test(syslog, a_denial_is_a_warning_a_would_deny_a_notice)
{
	struct dns_event refused = { .kind = DNS_EV_REFUSED_NAME, .name = "x.example", .qtype = 1,
				     .transport = IPPROTO_UDP, .rcode = 5 };
	struct dns_event allowed = refused;
	struct record rec = { .kind = RECORD_DNS, .seq = 3, .mono_ns = 1, .run_id = "r",
			      .dns = &refused };
	struct strbuf sb = { 0 };
	bool truncated;

	allowed.kind = DNS_EV_ALLOWED;
	cr_expect_eq(syslog_severity(&rec), 4);
	cr_assert_eq(syslog_format_record(&header, &rec, 5, SYSLOG_MSG_MAX, &sb, &truncated), 0);
	cr_expect(strncmp(sb.data, "<132>1 ", 7) == 0, "%s", sb.data);
	cr_expect_not_null(strstr(sb.data, " tether 99 dns [tether@32473 "), "%s", sb.data);
	rec.dns = &allowed;
	cr_expect_eq(syslog_severity(&rec), 6);
	rec = (struct record){ .kind = RECORD_KERNEL_FS };
	rec.fs.decision = TETHER_DECISION_WOULD_DENY;
	cr_expect_eq(syslog_severity(&rec), 5);
	sb_free(&sb);
}

Test(syslog, a_message_over_the_limit_is_cut_and_marked)
{
	char name[251];
	struct dns_event refused = { .kind = DNS_EV_REFUSED_NAME, .name = name, .qtype = 1,
				     .transport = IPPROTO_UDP, .rcode = 5 };
	struct record rec = { .kind = RECORD_DNS, .seq = 3, .mono_ns = 1, .run_id = "r",
			      .dns = &refused };
	struct strbuf sb = { 0 }, json = { 0 };
	char marker[64];
	bool truncated = false;

	memset(name, '"', sizeof(name) - 1);	/* each one escaped: \" */
	name[sizeof(name) - 1] = 0;
	cr_assert_eq(sink_jsonl_encode(&rec, &json), 0);
	cr_assert_gt(json.len, 512);
	cr_assert_eq(syslog_format_record(&header, &rec, 5, 512, &sb, &truncated), 0);
	cr_expect(truncated);
	cr_expect_eq(sb.len, 512, "cut to the limit exactly: %zu", sb.len);
	snprintf(marker, sizeof(marker), " seq=\"3\" truncated=\"%zu\"] {", json.len);
	cr_expect_not_null(strstr(sb.data, marker), "%s", sb.data);
	sb_free(&sb);
	sb_free(&json);
}

Test(syslog, a_cut_never_ends_inside_a_utf8_sequence)
{
	char name[251];
	struct dns_event refused = { .kind = DNS_EV_REFUSED_NAME, .name = name, .qtype = 1,
				     .transport = IPPROTO_UDP, .rcode = 5 };
	struct record rec = { .kind = RECORD_DNS, .seq = 3, .mono_ns = 1, .run_id = "r",
			      .dns = &refused };
	bool truncated;

	for (size_t i = 0; i + 2 < sizeof(name); i += 2)
		memcpy(name + i, "\xc3\xa9", 2);
	name[248] = 0;
	for (size_t max = 512; max < 520; max++) {
		struct strbuf sb = { 0 };

		cr_assert_eq(syslog_format_record(&header, &rec, 5, max, &sb, &truncated), 0);
		cr_expect_leq(sb.len, max);
		cr_expect_neq((unsigned char)sb.data[sb.len - 1], 0xc3, "max %zu ends mid-sequence",
			      max);
		sb_free(&sb);
	}
}

Test(syslog, addresses_are_numeric_with_a_port)
{
	struct sockaddr_storage addr;
	socklen_t len;
	char *host = NULL;

	cr_assert_eq(syslog_address_parse("192.0.2.10:6514", &addr, &len, &host), 0);
	cr_expect_eq(addr.ss_family, AF_INET);
	cr_expect_eq(ntohs(((struct sockaddr_in *)&addr)->sin_port), 6514);
	cr_expect_str_eq(host, "192.0.2.10");
	free(host);
	cr_assert_eq(syslog_address_parse("[2001:db8::1]:514", &addr, &len, &host), 0);
	cr_expect_eq(addr.ss_family, AF_INET6);
	cr_expect_str_eq(host, "2001:db8::1");
	free(host);
	cr_expect_eq(syslog_address_parse("collector.example:514", &addr, &len, NULL), -EINVAL);
	cr_expect_eq(syslog_address_parse("2001:db8::1:514", &addr, &len, NULL), -EINVAL,
		     "IPv6 without brackets is ambiguous");
	cr_expect_eq(syslog_address_parse("[192.0.2.1]:514", &addr, &len, NULL), -EINVAL);
	cr_expect_eq(syslog_address_parse("192.0.2.1:0", &addr, &len, NULL), -EINVAL);
	cr_expect_eq(syslog_address_parse("192.0.2.1:65536", &addr, &len, NULL), -EINVAL);
	cr_expect_eq(syslog_address_parse("192.0.2.1:", &addr, &len, NULL), -EINVAL);
	cr_expect_eq(syslog_address_parse("192.0.2.1:+5", &addr, &len, NULL), -EINVAL);
	cr_expect_eq(syslog_address_parse(NULL, &addr, &len, NULL), -EINVAL);
}

/* ---- the spool ---------------------------------------------------------- */

static char spool_dir[64];

static void spool_setup(void)
{
	char tmpl[] = "/tmp/tether-test-spool-XXXXXX";

	cr_assert_not_null(mkdtemp(tmpl));
	snprintf(spool_dir, sizeof(spool_dir), "%s/s", tmpl);
}

static void spool_teardown(void)
{
	char cmd[128];

	*strrchr(spool_dir, '/') = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", spool_dir);
	cr_expect_eq(system(cmd), 0);
}

struct text {
	uint64_t n;
	size_t pad;
};

static int format_text(void *ctx, uint64_t id, struct strbuf *out)
{
	const struct text *t = ctx;

	return sb_printf(out, "msg %llu id %llu", (unsigned long long)t->n,
			 (unsigned long long)id) ?:
	       sb_printf(out, "%*s", (int)t->pad, "");
}

static int format_loss(void *ctx, uint64_t id, const struct spool_loss *loss, struct strbuf *out)
{
	(*(int *)ctx)++;
	return sb_printf(out, "loss id=%llu lost=%llu ids=%llu-%llu tags=%llu-%llu",
			 (unsigned long long)id, (unsigned long long)loss->count,
			 (unsigned long long)loss->first_id, (unsigned long long)loss->last_id,
			 (unsigned long long)loss->first_tag, (unsigned long long)loss->last_tag);
}

static int loss_calls;

static struct spool *open_spool(uint64_t max_bytes)
{
	struct spool_options o = { .dir = spool_dir, .max_bytes = max_bytes,
				   .segment_bytes = 4096, .loss_format = format_loss,
				   .loss_ctx = &loss_calls };
	struct spool *sp = NULL;

	cr_assert_eq(spool_open(&o, &sp), 0);
	return sp;
}

static void append(struct spool *sp, uint64_t n, size_t pad, int expect)
{
	struct text t = { n, pad };

	cr_assert_eq(spool_append(sp, n, format_text, &t, NULL), expect, "append %llu",
		     (unsigned long long)n);
}

/* Reads the next message: "msg N id ID" expected, acked when asked. */
static void expect_next(struct spool *sp, uint64_t n, bool ack)
{
	struct strbuf sb = { 0 };
	char want[64];
	uint64_t id;

	cr_assert_eq(spool_next(sp, &sb, &id), 0, "message %llu", (unsigned long long)n);
	snprintf(want, sizeof(want), "msg %llu id %llu", (unsigned long long)n,
		 (unsigned long long)id);
	cr_expect(strncmp(sb.data, want, strlen(want)) == 0, "got %.*s, want %s", (int)sb.len,
		  sb.data, want);
	if (ack)
		spool_ack(sp, id);
	sb_free(&sb);
}

Test(spool, messages_come_back_in_order_across_segments, .init = spool_setup,
     .fini = spool_teardown)
{
	struct spool *sp = open_spool(1 << 20);
	struct strbuf sb = { 0 };
	uint64_t id;

	for (uint64_t i = 1; i <= 100; i++)
		append(sp, i, 100, 0);	/* 4096-byte segments: several */
	for (uint64_t i = 1; i <= 100; i++)
		expect_next(sp, i, true);
	cr_expect_eq(spool_next(sp, &sb, &id), -EAGAIN);
	cr_expect_eq(spool_sync(sp), 0);
	cr_expect_eq(spool_close(sp), 0);
	sb_free(&sb);
}

Test(spool, exactly_once_after_a_reopen, .init = spool_setup, .fini = spool_teardown)
{
	struct spool *sp = open_spool(1 << 20);
	struct spool_stats st;
	struct strbuf sb = { 0 };
	uint64_t id;

	for (uint64_t i = 1; i <= 10; i++)
		append(sp, i, 0, 0);
	for (uint64_t i = 1; i <= 5; i++)
		expect_next(sp, i, true);
	cr_assert_eq(spool_sync(sp), 0);
	expect_next(sp, 6, false);	/* read, never acknowledged: comes again */
	expect_next(sp, 7, false);
	cr_assert_eq(spool_close(sp), 0);

	sp = open_spool(1 << 20);
	spool_stats(sp, &st);
	cr_expect_eq(st.pending, 5);
	cr_expect_eq(st.acked_id, 5);
	for (uint64_t i = 6; i <= 10; i++)
		expect_next(sp, i, true);
	cr_expect_eq(spool_next(sp, &sb, &id), -EAGAIN);
	append(sp, 11, 0, 0);	/* ids go on where they were */
	expect_next(sp, 11, true);
	cr_assert_eq(spool_close(sp), 0);

	sp = open_spool(1 << 20);
	cr_expect_eq(spool_next(sp, &sb, &id), -EAGAIN, "everything acknowledged stays gone");
	spool_stats(sp, &st);
	cr_expect_eq(st.pending, 0);
	cr_expect_eq(st.next_id, 12);
	cr_assert_eq(spool_close(sp), 0);
	sb_free(&sb);
}

Test(spool, a_rewind_sends_the_unacknowledged_again, .init = spool_setup, .fini = spool_teardown)
{
	struct spool *sp = open_spool(1 << 20);

	for (uint64_t i = 1; i <= 4; i++)
		append(sp, i, 0, 0);
	expect_next(sp, 1, true);
	expect_next(sp, 2, false);
	expect_next(sp, 3, false);
	spool_rewind(sp);
	expect_next(sp, 2, true);
	expect_next(sp, 3, true);
	expect_next(sp, 4, true);
	cr_assert_eq(spool_close(sp), 0);
}

Test(spool, the_cap_drops_counts_and_writes_one_loss_message, .init = spool_setup,
     .fini = spool_teardown)
{
	struct spool *sp = open_spool(SPOOL_MIN_BYTES);
	struct spool_stats st;
	struct strbuf sb = { 0 };
	uint64_t id, kept = 0, dropped = 0, n;
	char want[128];

	loss_calls = 0;
	for (n = 1; n <= 40; n++) {
		struct text t = { n, 1000 };
		int r = spool_append(sp, n, format_text, &t, NULL);

		cr_assert(r == 0 || r == -ENOSPC, "append %llu: %d", (unsigned long long)n, r);
		if (r == 0)
			cr_assert_eq(dropped, 0, "nothing fits again until room is freed");
		r == 0 ? kept++ : dropped++;
	}
	cr_assert_gt(dropped, 0);
	spool_stats(sp, &st);
	cr_expect_eq(st.dropped, dropped);
	cr_expect_eq(st.unreported.count, dropped);
	cr_expect_eq(st.unreported.first_id, kept + 1);
	cr_expect_eq(st.unreported.last_id, 40);
	cr_expect_leq(st.pending_bytes, SPOOL_MIN_BYTES);
	for (uint64_t i = 1; i <= kept; i++)
		expect_next(sp, i, true);
	cr_assert_eq(spool_next(sp, &sb, &id), -EAGAIN);
	cr_assert_eq(spool_sync(sp), 0);	/* room freed: the loss message goes in */
	cr_assert_eq(spool_next(sp, &sb, &id), 0);
	cr_expect_eq(id, 41);
	snprintf(want, sizeof(want), "loss id=41 lost=%llu ids=%llu-40 tags=%llu-40",
		 (unsigned long long)dropped, (unsigned long long)kept + 1,
		 (unsigned long long)kept + 1);
	cr_expect(sb.len == strlen(want) && memcmp(sb.data, want, sb.len) == 0, "%.*s",
		  (int)sb.len, sb.data);
	spool_ack(sp, id);
	append(sp, 99, 0, 0);
	expect_next(sp, 99, true);
	spool_stats(sp, &st);
	cr_expect_eq(st.loss_messages, 1);
	cr_expect_eq(st.unreported.count, 0);
	cr_assert_eq(spool_close(sp), 0);
	sb_free(&sb);
}

Test(spool, an_unreported_loss_survives_a_reopen, .init = spool_setup, .fini = spool_teardown)
{
	struct spool *sp = open_spool(SPOOL_MIN_BYTES);
	struct spool_stats st;
	uint64_t n;

	for (n = 1; n <= 40; n++) {
		struct text t = { n, 1000 };

		spool_append(sp, n, format_text, &t, NULL);
	}
	spool_stats(sp, &st);
	cr_assert_gt(st.unreported.count, 0);
	cr_assert_eq(spool_close(sp), 0);
	sp = open_spool(SPOOL_MIN_BYTES);
	{
		struct spool_stats again;

		spool_stats(sp, &again);
		cr_expect_eq(again.unreported.count, st.unreported.count);
		cr_expect_eq(again.unreported.first_id, st.unreported.first_id);
		cr_expect_eq(again.next_id, 41, "dropped ids are not given again");
	}
	cr_assert_eq(spool_close(sp), 0);
}

Test(spool, a_torn_tail_is_cut_off, .init = spool_setup, .fini = spool_teardown)
{
	struct spool *sp = open_spool(1 << 20);
	struct strbuf sb = { 0 };
	char path[128];
	uint64_t id;
	int fd;

	append(sp, 1, 0, 0);
	append(sp, 2, 0, 0);
	cr_assert_eq(spool_close(sp), 0);
	snprintf(path, sizeof(path), "%s/%020d.seg", spool_dir, 1);
	fd = open(path, O_WRONLY | O_APPEND);
	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(write(fd, "TSP1\x40\0\0\0\3\0", 10), 10);	/* a header cut short */
	close(fd);
	sp = open_spool(1 << 20);
	expect_next(sp, 1, true);
	expect_next(sp, 2, true);
	cr_expect_eq(spool_next(sp, &sb, &id), -EAGAIN);
	append(sp, 3, 0, 0);
	expect_next(sp, 3, true);
	cr_assert_eq(spool_close(sp), 0);
	sb_free(&sb);
}

Test(spool, the_directory_is_0700_and_its_files_0600, .init = spool_setup,
     .fini = spool_teardown)
{
	struct spool *sp = open_spool(1 << 20);
	struct dirent *de;
	struct stat st;
	char path[400];
	DIR *dir;
	int files = 0;

	append(sp, 1, 0, 0);
	cr_assert_eq(stat(spool_dir, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0700);
	dir = opendir(spool_dir);
	cr_assert_not_null(dir);
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", spool_dir, de->d_name);
		cr_assert_eq(stat(path, &st), 0);
		cr_expect_eq(st.st_mode & 0777, 0600, "%s", path);
		files++;
	}
	closedir(dir);
	cr_expect_eq(files, 2, "state and one segment");
	cr_assert_eq(spool_close(sp), 0);
}
