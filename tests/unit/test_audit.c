// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "runtime/audit.h"
#include "runtime/dnsproxy.h"
#include "runtime/sink/sink.h"

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

/* A JSON Lines sink over a memfd, read back whole by captured(). */
static struct sink *capture(int *fd)
{
	struct sink *sink;

	*fd = memfd_create("audit", MFD_CLOEXEC);
	cr_assert_geq(*fd, 0);
	cr_assert_eq(sink_jsonl_open(*fd, false, &sink), 0);
	return sink;
}

static char *captured(struct sink *sink, int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);

	cr_assert_eq(sink_close(sink), 0);
	cr_assert_eq(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	return buf;
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
	ev.ppid = 8;
	strcpy(ev.parent_exe, "/usr/bin/make");
	return ev;
}

Test(audit, formats_fs_record)
{
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };
	const char *after_time;

	struct record_names st = { .run_id = "run-1" };

	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert(strncmp(sb.data, "{\"schema_version\":3,\"seq\":5,\"time\":\"", 36) == 0, "%s", sb.data);
	after_time = strstr(sb.data, "Z\",");
	cr_assert_not_null(after_time);
	cr_assert_str_eq(after_time + 3,
			 "\"run_id\":\"run-1\",\"kind\":\"fs\",\"op\":\"open_write\","
			 "\"path\":\"/etc/\\\"x\\\"\",\"access\":\"write\",\"decision\":\"deny\","
			 "\"errno\":\"EACCES\",\"reason\":\"default_deny\",\"pid\":10,\"tgid\":9,\"ppid\":8,"
			 "\"uid\":0,\"comm\":\"sh\",\"exe\":\"/bin/sh\",\"parent_exe\":\"/usr/bin/make\",\"cgroup_id\":77}");
	sb_free(&sb);
}

/* The record after the time field, for records whose time does not matter. */
static char *format_after_time(const struct tether_fs_event *ev)
{
	struct record_names st = { .run_id = "r" };
	struct strbuf sb = { 0 };
	const char *after;
	char *copy;

	cr_assert_eq(audit_format_record(ev, sizeof(*ev), &st, &sb), 0);
	after = strstr(sb.data, "Z\",");
	cr_assert_not_null(after, "%s", sb.data);
	copy = strdup(after + 3);
	sb_free(&sb);
	return copy;
}

/* The kernel writes a capability's number; the record names it. */
Test(audit, capability_records_name_the_capability)
{
	static const struct {
		const char *number, *name;
	} cases[] = {
		{ "12", "cap_net_admin" }, { "21", "cap_sys_admin" }, { "0", "cap_chown" },
		{ "16", "cap_sys_module" }, { "34", "cap_syslog" },   { "40", "cap_checkpoint_restore" },
		{ "41", "cap_41" },	     /* newer than the table */
		{ "cap_net_admin", "cap_net_admin" },	/* already a name */
		{ "12x", "12x" },	     /* not a number: shown as it came */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tether_fs_event ev = sample();
		char expect[512], *got;

		ev.op = TETHER_FS_CAPABILITY;
		ev.hdr.kind = TETHER_EVENT_CAPABILITY;
		ev.err = -EPERM;
		ev.reason = TETHER_REASON_FORBIDDEN;
		ev.access = 0;
		strcpy(ev.path, cases[i].number);
		snprintf(expect, sizeof(expect),
			 "\"run_id\":\"r\",\"kind\":\"capability\",\"op\":\"capability\",\"path\":\"%s\","
			 "\"decision\":\"deny\",\"errno\":\"EPERM\",\"reason\":\"forbidden\","
			 "\"pid\":10,\"tgid\":9,\"ppid\":8,\"uid\":0,\"comm\":\"sh\",\"exe\":\"/bin/sh\","
			 "\"parent_exe\":\"/usr/bin/make\",\"cgroup_id\":77}",
			 cases[i].name);
		got = format_after_time(&ev);
		cr_assert_str_eq(got, expect, "capability %s", cases[i].number);
		free(got);
	}
}

/* A number that fills the whole field (no NUL, out of range) is shown cut, as it came. */
Test(audit, capability_number_without_nul_stays_in_bounds)
{
	struct tether_fs_event ev = sample();
	char expect[300], *got;

	ev.op = TETHER_FS_CAPABILITY;
	ev.hdr.kind = TETHER_EVENT_CAPABILITY;
	memset(ev.path, '1', sizeof(ev.path));
	snprintf(expect, sizeof(expect), "\"op\":\"capability\",\"path\":\"%.*s\",",
		 (int)sizeof(ev.path) - 1, ev.path);
	got = format_after_time(&ev);
	cr_assert_not_null(strstr(got, expect), "%s", got);
	free(got);
}

Test(audit, names_the_kernel_boundary_ops)
{
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_USERNS), "userns_create");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_PERF_EVENT), "perf_event_open");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_SYSLOG), "syslog");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_SETTIME), "settime");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_KEY), "keyctl");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_TASK_CONTROL), "task_control");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_ANON_INODE), "anon_inode");
	cr_assert_str_eq(record_fs_op_name(TETHER_FS_ANON_INODE + 1), "unknown");
}

/* A key record: the description as the path, EACCES; a syslog action by number. */
Test(audit, formats_key_and_syslog_records)
{
	struct tether_fs_event ev = sample();
	char *got;

	ev.op = TETHER_FS_KEY;
	ev.hdr.kind = TETHER_EVENT_PROC;
	ev.err = -EACCES;
	ev.reason = TETHER_REASON_FORBIDDEN;
	ev.access = 0;
	strcpy(ev.path, "_uid.0");
	got = format_after_time(&ev);
	cr_assert_str_eq(got, "\"run_id\":\"r\",\"kind\":\"proc\",\"op\":\"keyctl\",\"path\":\"_uid.0\","
			      "\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":\"forbidden\","
			      "\"pid\":10,\"tgid\":9,\"ppid\":8,\"uid\":0,\"comm\":\"sh\",\"exe\":\"/bin/sh\","
			      "\"parent_exe\":\"/usr/bin/make\",\"cgroup_id\":77}");
	free(got);
	ev.op = TETHER_FS_SYSLOG;
	ev.hdr.kind = TETHER_EVENT_KERNEL;
	ev.err = -EPERM;
	strcpy(ev.path, "10");
	got = format_after_time(&ev);
	cr_assert_not_null(strstr(got, "\"op\":\"syslog\",\"path\":\"10\",\"decision\":\"deny\","
					"\"errno\":\"EPERM\""), "%s", got);
	free(got);
}

/* A userfaultfd or io_uring refusal: kind kernel, the inode's name as the path. */
Test(audit, formats_anon_inode_records)
{
	struct tether_fs_event ev = sample();
	char *got;

	ev.op = TETHER_FS_ANON_INODE;
	ev.hdr.kind = tether_fs_op_kind(TETHER_FS_ANON_INODE);
	ev.err = -EPERM;
	ev.reason = TETHER_REASON_FORBIDDEN;
	ev.access = 0;
	strcpy(ev.path, "[userfaultfd]");
	got = format_after_time(&ev);
	cr_assert_str_eq(got, "\"run_id\":\"r\",\"kind\":\"kernel\",\"op\":\"anon_inode\","
			      "\"path\":\"[userfaultfd]\",\"decision\":\"deny\",\"errno\":\"EPERM\","
			      "\"reason\":\"forbidden\",\"pid\":10,\"tgid\":9,\"ppid\":8,\"uid\":0,\"comm\":\"sh\","
			      "\"exe\":\"/bin/sh\",\"parent_exe\":\"/usr/bin/make\",\"cgroup_id\":77}");
	free(got);
}

/*
 * Record version 2: each operation's kind (docs/audit.md, "Record kinds"),
 * as the kernel writes it, and the name the decoder gives it.
 */
Test(audit, each_fs_body_op_has_its_kind)
{
	static const struct {
		uint32_t op;
		uint16_t kind;
		const char *name;
	} cases[] = {
		{ TETHER_FS_OPEN_WRITE, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_EXEC, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_MOUNT, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_IOCTL, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_TTY_INJECT, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_MKNOD_DEVICE, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_OPEN_DEVICE, TETHER_EVENT_FS, "fs" },
		{ TETHER_FS_CLONE_INTO_CGROUP, TETHER_EVENT_PROC, "proc" },
		{ TETHER_FS_PTRACE, TETHER_EVENT_PROC, "proc" },
		{ TETHER_FS_SIGNAL, TETHER_EVENT_PROC, "proc" },
		{ TETHER_FS_USERNS, TETHER_EVENT_PROC, "proc" },
		{ TETHER_FS_KEY, TETHER_EVENT_PROC, "proc" },
		{ TETHER_FS_TASK_CONTROL, TETHER_EVENT_PROC, "proc" },
		{ TETHER_FS_CAPABILITY, TETHER_EVENT_CAPABILITY, "capability" },
		{ TETHER_FS_BPF, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_KERNEL_LOAD, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_MODULE_REQUEST, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_PERF_EVENT, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_SYSLOG, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_SETTIME, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_ANON_INODE, TETHER_EVENT_KERNEL, "kernel" },
		{ TETHER_FS_UNIX_CONNECT, TETHER_EVENT_UNIX, "unix" },
		{ TETHER_FS_UNIX_SEND, TETHER_EVENT_UNIX, "unix" },
		{ TETHER_FS_SOCKET_CREATE, TETHER_EVENT_NET_SOCKET, "net" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tether_fs_event ev = sample();
		char expect[64], *got;

		ev.op = cases[i].op;
		ev.hdr.kind = tether_fs_op_kind(ev.op);
		cr_assert_eq(ev.hdr.kind, cases[i].kind, "kind of %s", record_fs_op_name(ev.op));
		snprintf(expect, sizeof(expect), "\"kind\":\"%s\",\"op\":\"%s\",", cases[i].name,
			 record_fs_op_name(ev.op));
		got = format_after_time(&ev);
		cr_assert_not_null(strstr(got, expect), "%s", got);
		free(got);
	}
}

/* A controller kind is never a kernel record: the decoder refuses it. */
Test(audit, controller_kinds_are_not_kernel_records)
{
	struct tether_fs_event ev = sample();
	struct record_names st = { .run_id = "r" };
	struct strbuf sb = { 0 };

	ev.hdr.kind = TETHER_EVENT_DNS;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), -EBADMSG);
	ev.hdr.kind = TETHER_EVENT_RUN;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), -EBADMSG);
	sb_free(&sb);
}

/* Several rights, audit mode, a protected path with and without a rule. */
Test(audit, formats_access_decision_and_protected)
{
	const char *const rule_paths[] = { "/", "/etc/shadow" };
	struct record_names st = { .run_id = "r", .rule_paths = rule_paths, .rule_count = 2 };
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

/* The kernel's own permission check refused (fexit/may_open): no rule, the kernel's errno. */
Test(audit, the_kernels_own_refusals_say_permission)
{
	const char *const rule_paths[] = { "/" };
	struct record_names st = { .run_id = "r", .rule_paths = rule_paths, .rule_count = 1 };
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };

	ev.op = TETHER_FS_OPEN_READ;
	ev.access = TETHER_ACCESS_READ;
	ev.reason = TETHER_REASON_PERMISSION;
	ev.rule_id = TETHER_RULE_NONE;
	ev.uid = 1000;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"op\":\"open_read\",\"path\":\"/etc/\\\"x\\\"\","
					   "\"access\":\"read\",\"decision\":\"deny\","
					   "\"errno\":\"EACCES\",\"reason\":\"permission\",\"pid\""),
			   "%s", sb.data);
	sb_free(&sb);

	/* append-only, immutable, O_NOATIME: EPERM */
	ev.op = TETHER_FS_OPEN_WRITE;
	ev.access = TETHER_ACCESS_WRITE;
	ev.err = -1;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"errno\":\"EPERM\",\"reason\":\"permission\",\"pid\""),
			   "%s", sb.data);
	sb_free(&sb);
}

Test(audit, unterminated_strings_stay_in_bounds)
{
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };

	memset(ev.path, 'a', sizeof(ev.path));
	memset(ev.comm, 'b', sizeof(ev.comm));
	struct record_names st = { .run_id = "r" };

	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"comm\":\"bbbbbbbbbbbbbbbb\""));
	sb_free(&sb);
}

Test(audit, rejects_short_or_unknown_records)
{
	struct tether_fs_event ev = sample();
	struct strbuf sb = { 0 };
	struct record_names st = { .run_id = "r" };

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
	int fd;
	struct audit_stream st = { .sink = capture(&fd), .names.run_id = "r" };
	char *buf;

	audit_handle_record(&st, &ev, sizeof(ev));
	ev.hdr.seq = 6;
	audit_handle_record(&st, &ev, sizeof(ev));
	audit_handle_record(&st, &ev, 4);
	/* the same denial again: counted in its window until the stream is flushed */
	audit_flush(&st);
	buf = captured(st.sink, fd);
	audit_stream_release(&st);
	cr_assert_eq(st.records, 2);
	cr_assert_eq(st.max_seq, 6);
	cr_assert_eq(st.malformed, 1);
	cr_assert_not_null(strstr(buf, "\"seq\":6"));
	free(buf);
}

Test(audit, stream_drops_a_record_of_the_slots_earlier_run)
{
	struct tether_fs_event ev = sample();
	int fd;
	struct audit_stream st = { .sink = capture(&fd), .names.run_id = "r", .cgroup_id = 77 };
	char *buf;

	ev.hdr.seq = 3;
	audit_handle_record(&st, &ev, sizeof(ev));
	/* a program of the run that held the slot before committed late */
	ev.hdr.cgroup_id = 76;
	ev.hdr.seq = 9;
	audit_handle_record(&st, &ev, sizeof(ev));
	audit_flush(&st);
	buf = captured(st.sink, fd);
	audit_stream_release(&st);
	cr_assert_eq(st.records, 1);
	cr_assert_eq(st.foreign, 1);
	cr_assert_eq(st.max_seq, 3);
	cr_assert_null(strstr(buf, "\"seq\":9"), "%s", buf);
	free(buf);
}

Test(audit, names_the_deciding_rule)
{
	static const char *const paths[] = { "/", "/srv/ws" };
	struct tether_fs_event ev = sample();
	struct record_names st = { .run_id = "r", .rule_paths = paths, .rule_count = 2 };
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
	struct record_names st = { .run_id = "r", .rule_paths = paths, .rule_count = 2 };
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

static struct tether_net_event net_sample(void)
{
	struct tether_net_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = TETHER_EVENT_NET;
	ev.hdr.size = sizeof(ev);
	ev.hdr.cgroup_id = 77;
	ev.hdr.pid = 10;
	ev.hdr.tgid = 9;
	ev.hdr.seq = 2;
	ev.op = TETHER_NET_CONNECT;
	ev.decision = TETHER_DECISION_DENY;
	ev.err = -1;
	ev.reason = TETHER_REASON_DEFAULT_DENY;
	ev.rule_id = TETHER_RULE_NONE;
	ev.family = 10;
	ev.type = 1;
	ev.protocol = 6;
	ev.port = 80;
	/* ::ffff:169.254.169.254 is shown as the IPv4 address it is */
	ev.addr[10] = ev.addr[11] = 0xff;
	ev.addr[12] = 169, ev.addr[13] = 254, ev.addr[14] = 169, ev.addr[15] = 254;
	strcpy(ev.comm, "curl");
	return ev;
}

Test(audit, formats_net_records)
{
	const char *const nets[] = { "192.0.2.0/24" };
	const char *const hosts[] = { "*.example.com" };
	struct record_names st = { .run_id = "r", .net_rule_names = nets, .net_rule_count = 1,
				   .host_rule_names = hosts, .host_rule_count = 1 };
	struct tether_net_event ev = net_sample();
	struct strbuf sb = { 0 };

	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"run_id\":\"r\",\"kind\":\"net\",\"op\":\"connect\","
					   "\"family\":\"inet6\",\"protocol\":\"tcp\",\"address\":"
					   "\"169.254.169.254\",\"port\":80,\"decision\":\"deny\","
					   "\"errno\":\"EPERM\",\"reason\":\"default_deny\",\"pid\":10,"
					   "\"tgid\":9,\"uid\":0,\"comm\":\"curl\",\"cgroup_id\":77}"),
			   "%s", sb.data);
	sb_free(&sb);

	/* allowed by a hostname's DNS answer: the name is in the record */
	ev.decision = TETHER_DECISION_ALLOW;
	ev.err = 0;
	ev.reason = TETHER_REASON_RULE;
	ev.rule_id = TETHER_NET_RULE_HOST | 0;
	memset(ev.addr, 0, 16);
	ev.addr[0] = 0x20, ev.addr[1] = 0x01, ev.addr[2] = 0x0d, ev.addr[3] = 0xb8, ev.addr[15] = 1;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"address\":\"2001:db8::1\",\"port\":80,\"decision\":"
					   "\"allow\",\"reason\":\"rule\",\"host_rule\":0,\"rule_host\":"
					   "\"*.example.com\",\"pid\":10"), "%s", sb.data);
	sb_free(&sb);

	/* a dropped packet has no task; a budget record carries the cap */
	ev = net_sample();
	ev.op = TETHER_NET_EGRESS_BUDGET;
	ev.reason = TETHER_REASON_BUDGET;
	ev.family = 2;
	ev.bytes = 65536;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"op\":\"egress_budget\",\"family\":\"inet\","
					   "\"protocol\":\"tcp\",\"address\":\"169.254.169.254\","
					   "\"port\":80,\"bytes\":65536,\"decision\":\"deny\",\"errno\":"
					   "\"EPERM\",\"reason\":\"budget_exhausted\",\"cgroup_id\":77}"),
			   "%s", sb.data);
	sb_free(&sb);

	/* a record of the wrong size is malformed, not read past its end */
	ev.hdr.size = sizeof(ev) - 8;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &st, &sb), -EBADMSG);
	sb_free(&sb);
}

/*
 * The budget record is written like any other; it steers nothing (the run
 * reads the kernel's flag, which is set before the record is made).
 */
Test(audit, the_budget_record_is_written_like_any_other)
{
	struct tether_net_event ev = net_sample();
	int fd;
	struct audit_stream st = { .sink = capture(&fd), .names.run_id = "r" };
	char *buf;

	audit_handle_record(&st, &ev, sizeof(ev));
	ev.op = TETHER_NET_EGRESS_BUDGET;
	audit_handle_record(&st, &ev, sizeof(ev));
	cr_expect_eq(st.records, 2);
	buf = captured(st.sink, fd);
	cr_expect_not_null(strstr(buf, "\"op\":\"egress_budget\""), "%s", buf);
	free(buf);
}

Test(audit, formats_dns_records_without_payloads)
{
	struct dns_addr answers[1] = { { .addr = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 },
					 .ttl = 60 } };
	uint8_t lo[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	struct dns_event allowed = {
		.kind = DNS_EV_ALLOWED, .name = "api.example.com", .qtype = 1,
		.transport = IPPROTO_UDP, .addrs = answers, .addr_count = 1,
	};
	struct dns_event rebind = {
		.kind = DNS_EV_REFUSED_ANSWER, .name = "rebind.example", .qtype = 1,
		.transport = IPPROTO_TCP, .rcode = 5, .refused_addr = lo,
		.refused_class = TP_ADDR_LOOPBACK,
	};
	struct dns_event tunnel = {
		.kind = DNS_EV_REFUSED_NAME, .name = "x\"y.example", .qtype = 16,
		.transport = IPPROTO_UDP, .rcode = 5, .suspected_tunnel = true,
	};
	int fd;
	struct audit_stream st = { .sink = capture(&fd), .names.run_id = "r" };
	char *buf;

	cr_assert_eq(audit_write_dns_event(&st, &allowed), 0);
	cr_assert_eq(audit_write_dns_event(&st, &rebind), 0);
	cr_assert_eq(audit_write_dns_event(&st, &tunnel), 0);
	buf = captured(st.sink, fd);
	cr_expect_not_null(strstr(buf, "\"kind\":\"dns\",\"name\":\"api.example.com\",\"qtype\":"
				       "\"A\",\"transport\":\"udp\",\"decision\":\"allow\",\"reason\":"
				       "\"listed\",\"rcode\":\"NOERROR\",\"answers\":[{\"address\":"
				       "\"192.0.2.2\",\"ttl\":60}]}\n"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"name\":\"rebind.example\",\"qtype\":\"A\",\"transport\":"
				       "\"tcp\",\"decision\":\"deny\",\"reason\":\"rebinding\","
				       "\"rcode\":\"REFUSED\",\"refused_address\":\"127.0.0.1\","
				       "\"refused_class\":\"loopback\"}\n"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"name\":\"x\\\"y.example\",\"qtype\":\"TXT\",\"transport\":"
				       "\"udp\",\"decision\":\"deny\",\"reason\":\"not_listed\","
				       "\"rcode\":\"REFUSED\",\"suspected_tunnel\":true}\n"), "%s", buf);
	free(buf);
}

static int fake_seq(void *ctx, uint64_t *seq)
{
	*seq = ++*(uint64_t *)ctx;
	return 0;
}

/*
 * The controller's records take their numbers from the run's one sequence
 * (in a run, tl_run_seq_next: the kernel's counter), so a gap is visible
 * whoever made the record; every record written is counted.
 */
Test(audit, controller_records_take_the_runs_next_number)
{
	struct tether_fs_event ev = sample();
	uint64_t counter = 0;
	int fd;
	struct audit_stream st = { .sink = capture(&fd), .names.run_id = "r",
				   .seq_next = fake_seq, .seq_ctx = &counter };
	struct record start = { .kind = RECORD_RUN };
	struct dns_event dns = { .kind = DNS_EV_REFUSED_NAME, .name = "x.example", .qtype = 1,
				 .transport = IPPROTO_UDP, .rcode = 5 };
	char *buf;

	start.run.event = RECORD_RUN_OUTPUT_TRUNCATED;
	start.run.truncated = (struct record_run_truncated){ .stream = "stdout",
							      .output_bytes_max = 7 };
	cr_assert_eq(audit_write(&st, &start), 0);
	ev.hdr.seq = ++counter;	/* the kernel's next record takes 2 */
	audit_handle_record(&st, &ev, sizeof(ev));
	cr_assert_eq(audit_write_dns_event(&st, &dns), 0);
	cr_expect_eq(st.records, 3);
	buf = captured(st.sink, fd);
	cr_expect_not_null(strstr(buf, "{\"schema_version\":3,\"seq\":1,"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"run_id\":\"r\",\"kind\":\"run\",\"event\":"
				       "\"output_truncated\",\"stream\":\"stdout\","
				       "\"output_bytes_max\":7}\n{\"schema_version\":3,\"seq\":2,"), "%s", buf);
	cr_expect_not_null(strstr(buf, "}\n{\"schema_version\":3,\"seq\":3,"), "%s", buf);
	cr_expect_not_null(strstr(buf, "\"kind\":\"dns\",\"name\":\"x.example\""), "%s", buf);
	free(buf);
	audit_stream_release(&st);
}

static struct record truncated_record(uint64_t seq)
{
	struct record rec = { .kind = RECORD_RUN, .seq = seq, .mono_ns = 1, .run_id = "r" };

	rec.run.event = RECORD_RUN_OUTPUT_TRUNCATED;
	rec.run.truncated = (struct record_run_truncated){ .stream = "stdout",
							    .output_bytes_max = 7 };
	return rec;
}

static char *read_all(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);

	cr_assert_eq(pread(fd, buf, (size_t)len, 0), len);
	return buf;
}

/* A file whose last line an earlier writer left cut: the first record starts a line of its own. */
Test(audit, jsonl_ends_a_cut_line_before_its_first_record)
{
	struct record rec = truncated_record(1);
	int fd = memfd_create("audit", MFD_CLOEXEC);
	struct sink *sink;
	char *buf;

	cr_assert_eq(write(fd, "{\"seq\":9,\"ti", 12), 12);
	cr_assert_eq(sink_jsonl_open(fd, false, &sink), 0);
	cr_assert_eq(sink_write(sink, &rec), 0);
	cr_assert_eq(sink_close(sink), 0);
	buf = read_all(fd);
	cr_assert(strncmp(buf, "{\"seq\":9,\"ti\n{\"schema_version\":3,\"seq\":1,\"time\":", 47) == 0, "%s", buf);
	cr_assert_eq(buf[strlen(buf) - 1], '\n');
	free(buf);
	close(fd);
}

/*
 * A record cut short by a full file system (here RLIMIT_FSIZE, which cuts a
 * write the same way) is reported, and the next record that fits starts a
 * line of its own instead of finishing the cut one.
 */
Test(audit, jsonl_never_glues_a_record_to_a_cut_one)
{
	struct record first = truncated_record(1), second = truncated_record(2);
	char path[] = "/tmp/tether-test-jsonl-XXXXXX";
	int fd = mkstemp(path);
	struct rlimit small = { 40, RLIM_INFINITY };
	struct sink *sink;
	char *buf, *nl;

	cr_assert_geq(fd, 0);
	unlink(path);
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(sink_jsonl_open(fd, false, &sink), 0);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	cr_assert_eq(sink_write(sink, &first), -EFBIG);
	small.rlim_cur = RLIM_INFINITY;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	cr_assert_eq(sink_write(sink, &second), 0);
	cr_assert_eq(sink_close(sink), -EFBIG, "the first error is what close reports");
	buf = read_all(fd);
	nl = strchr(buf, '\n');
	cr_assert_not_null(nl, "%s", buf);
	cr_assert_eq(nl - buf, 40, "the cut record is alone on its line: %s", buf);
	cr_assert(strncmp(nl + 1, "{\"schema_version\":3,\"seq\":2,\"time\":", 35) == 0, "%s", buf);
	cr_assert_eq(buf[strlen(buf) - 1], '\n');
	free(buf);
	close(fd);
}

/* Every record of a run carries the envelope, in docs/audit.md's order, before its kind. */
Test(audit, records_carry_the_envelope)
{
	struct tether_fs_event ev = sample();
	const struct record_context ctx = {
		.host = "node-7", .boot_id = "0b6c8f58-9a3e-4c1e-8d49-2f3f7f0e6a11",
		.tether_version = "9.8.7", .tenant = "team-a", .attempt = 2,
		.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736", .span_id = "00f067aa0ba902b7",
		.policy_digest = "sha256:ab",
	};
	const struct record_context bare = { .host = "n", .boot_id = "b", .tether_version = "v",
					     .attempt = 1, .policy_digest = "sha256:cd" };
	struct record_names names = { .run_id = "r", .ctx = &ctx };
	struct strbuf sb = { 0 };
	const char *after;

	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &names, &sb), 0);
	cr_assert(strncmp(sb.data, "{\"schema_version\":3,\"seq\":5,\"time\":\"", 36) == 0, "%s",
		  sb.data);
	after = strstr(sb.data, "Z\",");
	cr_assert_not_null(after);
	cr_assert(strncmp(after + 3,
			  "\"host\":\"node-7\",\"boot_id\":\"0b6c8f58-9a3e-4c1e-8d49-2f3f7f0e6a11\","
			  "\"tether_version\":\"9.8.7\",\"run_id\":\"r\",\"attempt\":2,"
			  "\"tenant\":\"team-a\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\","
			  "\"span_id\":\"00f067aa0ba902b7\",\"policy_digest\":\"sha256:ab\","
			  "\"kind\":\"fs\",\"op\":\"open_write\",",
			  strlen("\"host\":\"node-7\",\"boot_id\":\"0b6c8f58-9a3e-4c1e-8d49-2f3f7f0e6a11\","
				 "\"tether_version\":\"9.8.7\",\"run_id\":\"r\",\"attempt\":2,"
				 "\"tenant\":\"team-a\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\","
				 "\"span_id\":\"00f067aa0ba902b7\",\"policy_digest\":\"sha256:ab\","
				 "\"kind\":\"fs\",\"op\":\"open_write\",")) == 0,
		  "%s", sb.data);
	sb_free(&sb);
	names.ctx = &bare;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &names, &sb), 0);
	cr_assert_not_null(strstr(sb.data, "\"run_id\":\"r\",\"attempt\":1,\"tenant\":null,"
					   "\"trace_id\":null,\"span_id\":null,"
					   "\"policy_digest\":\"sha256:cd\",\"kind\":\"fs\""),
			   "%s", sb.data);
	sb_free(&sb);
}

/* A run's envelope encoded once (record_context.encoded) writes the very same bytes. */
Test(audit, the_envelope_encoded_once_is_the_same_bytes)
{
	struct tether_fs_event ev = sample();
	struct record_context ctx = {
		.host = "node-\"7", .boot_id = "0b6c8f58-9a3e-4c1e-8d49-2f3f7f0e6a11",
		.tether_version = "9.8.7", .tenant = "team-a", .attempt = 2,
		.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736", .policy_digest = "sha256:ab",
	};
	struct record_names names = { .run_id = "r-1", .ctx = &ctx };
	struct strbuf plain = { 0 }, once = { 0 }, members = { 0 };

	ev.hdr.ts_ns = 0;	/* "now": the two times may differ, the rest may not */
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &names, &plain), 0);
	cr_assert_eq(sink_jsonl_encode_context(&ctx, "r-1", &members), 0);
	ctx.encoded = members.data;
	ctx.encoded_len = members.len;
	ctx.encoded_run_id = "r-1";
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &names, &once), 0);
	/* the time aside (it is read anew), byte for byte */
	cr_assert_str_eq(strstr(once.data, "Z\","), strstr(plain.data, "Z\","));
	cr_assert(strstr(once.data, members.data), "%s", once.data);
	/* another run's record with the same context does not take the cached run_id */
	names.run_id = "r-2";
	once.len = 0;
	cr_assert_eq(audit_format_record(&ev, sizeof(ev), &names, &once), 0);
	cr_assert(strstr(once.data, "\"run_id\":\"r-2\""), "%s", once.data);
	sb_free(&plain);
	sb_free(&once);
	sb_free(&members);
}

/*
 * Flood control: past rate_limit lines in a second of kernel time, records
 * are counted, with their seqs, in one suppressed record when the window
 * ends; nothing is dropped without a count, and a later window writes again.
 */
Test(audit, a_flood_past_the_ceiling_is_counted_in_a_suppressed_record)
{
	struct tether_fs_event ev = sample();
	uint64_t counter = 0;
	int fd;
	struct audit_stream st = { .sink = capture(&fd), .names.run_id = "r",
				   .seq_next = fake_seq, .seq_ctx = &counter, .rate_limit = 3 };
	char *buf;

	for (int i = 0; i < 10; i++) {
		ev.hdr.seq = ++counter;
		ev.hdr.pid = ev.hdr.tgid = 100 + (uint32_t)i;	/* each its own key: no coalescing */
		ev.hdr.ts_ns = 5000000000ull + (uint64_t)i * 1000;
		audit_handle_record(&st, &ev, sizeof(ev));
	}
	cr_expect_eq(st.suppressed, 0, "counted until the window ends");
	ev.hdr.seq = ++counter;	/* 11, a second later: closes the window, then written */
	ev.hdr.pid = ev.hdr.tgid = 200;
	ev.hdr.ts_ns = 6000000001ull;
	audit_handle_record(&st, &ev, sizeof(ev));
	audit_flush(&st);
	cr_expect_eq(st.records, 12);
	cr_expect_eq(st.suppressed, 7);
	buf = captured(st.sink, fd);
	cr_expect_not_null(strstr(buf, "\"kind\":\"run\",\"event\":\"suppressed\",\"suppressed\":7,"
				       "\"denied\":7,\"rate_limit\":3,\"window_ms\":1000,"
				       "\"suppressed_seqs\":[[4,10]],\"seqs_unlisted\":0,"
				       "\"by_kind\":{\"fs\":7}}"), "%s", buf);
	cr_expect_not_null(strstr(buf, "{\"schema_version\":3,\"seq\":12,"), "the summary takes a number: %s", buf);
	cr_expect_not_null(strstr(buf, "{\"schema_version\":3,\"seq\":11,"), "%s", buf);
	cr_expect_null(strstr(buf, "{\"schema_version\":3,\"seq\":4,"), "%s", buf);
	for (int seq = 1; seq <= 3; seq++) {
		char want[64];

		snprintf(want, sizeof(want), "{\"schema_version\":3,\"seq\":%d,", seq);
		cr_expect_not_null(strstr(buf, want), "%s in %s", want, buf);
	}
	free(buf);
	audit_stream_release(&st);
}

/* The start record's workspace source: a directory's tree digest, or a git source's commit and tree. */
Test(audit, start_record_names_the_workspace_source)
{
	struct record_run_start dir = { .source = "/srv/src\"x",
					.source_digest = "sha256:00000000000000000000000000000000"
							 "00000000000000000000000000000001" };
	struct record_run_start git = { .source = "/srv/repo.git",
					.source_commit = "0123456789abcdef0123456789abcdef01234567",
					.source_tree = "89abcdef0123456789abcdef0123456789abcdef" };
	struct record_run_start none = { 0 };
	struct strbuf sb = { 0 };

	cr_assert_eq(record_encode_source(&dir, &sb), 0);
	cr_expect_str_eq(sb.data, ",\"source\":\"/srv/src\\\"x\",\"source_digest\":\"sha256:"
				  "0000000000000000000000000000000000000000000000000000000000000001\"");
	sb_free(&sb);
	sb = (struct strbuf){ 0 };
	cr_assert_eq(record_encode_source(&git, &sb), 0);
	cr_expect_str_eq(sb.data, ",\"source\":\"/srv/repo.git\",\"source_commit\":"
				  "\"0123456789abcdef0123456789abcdef01234567\",\"source_tree\":"
				  "\"89abcdef0123456789abcdef0123456789abcdef\"");
	sb_free(&sb);
	sb = (struct strbuf){ 0 };
	cr_assert_eq(record_encode_source(&none, &sb), 0);
	cr_expect(sb.data == NULL || sb.data[0] == 0);
	sb_free(&sb);
}
