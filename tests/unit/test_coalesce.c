// SPDX-License-Identifier: GPL-2.0
/*
 * Coalescing repeated denials (runtime/coalesce.h) through the audit stream
 * (runtime/audit.c) into JSON Lines: which records are coalesced, what the
 * coalesced record says, and that every sequence number is accounted for
 * exactly once.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "runtime/audit.h"
#include "runtime/coalesce.h"
#include "runtime/sink/sink.h"

#define MS 1000000ull
#define T0 (1000 * COALESCE_WINDOW_NS) /* any kernel time well past 0 */

/* The run's one sequence: the kernel's records and the controller's draw on it. */
struct fixture {
	struct audit_stream st;
	uint64_t counter;
	int fd;
};

static int next_seq(void *ctx, uint64_t *seq)
{
	*seq = ++*(uint64_t *)ctx;
	return 0;
}

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->fd = memfd_create("audit", MFD_CLOEXEC);
	cr_assert_geq(f->fd, 0);
	cr_assert_eq(sink_jsonl_open(f->fd, false, &f->st.sink), 0);
	f->st.names.run_id = "r";
	f->st.seq_next = next_seq;
	f->st.seq_ctx = &f->counter;
}

/* Everything written so far. */
static char *written(struct fixture *f)
{
	off_t len = lseek(f->fd, 0, SEEK_END);
	char *buf = calloc(1, (size_t)len + 1);

	cr_assert_eq(pread(f->fd, buf, (size_t)len, 0), len);
	return buf;
}

/* Flushes the stream, closes the sink, and returns the whole stream. */
static char *finish(struct fixture *f)
{
	char *buf;

	audit_flush(&f->st);
	buf = written(f);
	cr_assert_eq(sink_close(f->st.sink), 0);
	audit_stream_release(&f->st);
	close(f->fd);
	return buf;
}

static size_t lines(const char *buf)
{
	size_t n = 0;

	for (; *buf; buf++)
		n += *buf == '\n';
	return n;
}

/* A denial of kind fs by thread `pid`: /proc/PID/stat as ps reads it. */
static struct tether_fs_event denial(uint32_t pid, uint64_t ts_ns, const char *path)
{
	struct tether_fs_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = TETHER_EVENT_FS;
	ev.hdr.size = sizeof(ev);
	ev.hdr.cgroup_id = 77;
	ev.hdr.pid = pid;
	ev.hdr.tgid = pid;
	ev.hdr.ts_ns = ts_ns;
	ev.op = TETHER_FS_OPEN_READ;
	ev.decision = TETHER_DECISION_DENY;
	ev.err = -EACCES;
	ev.reason = TETHER_REASON_PROTECTED;
	ev.rule_id = TETHER_RULE_NONE;
	ev.access = TETHER_ACCESS_READ;
	strcpy(ev.comm, "ps");
	snprintf(ev.path, sizeof(ev.path), "%s", path);
	strcpy(ev.exe, "/bin/busybox");
	return ev;
}

/* The kernel made `ev` now: it takes the run's next number and goes through the ring. */
static uint64_t kernel(struct fixture *f, struct tether_fs_event ev)
{
	ev.hdr.seq = ++f->counter;
	cr_assert_eq(audit_handle_record(&f->st, &ev, sizeof(ev)), 0);
	return ev.hdr.seq;
}

static void assert_has(const char *buf, const char *what)
{
	cr_assert_not_null(strstr(buf, what), "expected\n  %s\nin\n%s", what, buf);
}

/* The line whose "seq" is `seq`, without its time (which depends on the clock). */
static char *line_of(const char *buf, uint64_t seq)
{
	char prefix[64];
	const char *p, *end, *after;

	snprintf(prefix, sizeof(prefix), "{\"schema_version\":3,\"seq\":%" PRIu64 ",", seq);
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, prefix, strlen(prefix)))
			continue;
		end = strchr(p, '\n');
		after = strstr(p, "Z\",");
		cr_assert(after && after < end, "no time in line %" PRIu64, seq);
		return strndup(after + 3, (size_t)(end - after - 3));
	}
	cr_assert_fail("no line with seq %" PRIu64 " in\n%s", seq, buf);
	return NULL;
}

static void assert_line(const char *buf, uint64_t seq, const char *expect)
{
	char *got = line_of(buf, seq);

	cr_assert_str_eq(got, expect, "line %" PRIu64, seq);
	free(got);
}

/*
 * ps: one thread refused /proc/PID/stat of ten processes outside the run.
 * The first is written at once, in full; the other nine are one coalesced
 * record at the end, which takes the next number and names every seq.
 */
Test(coalesce, ps_is_one_full_record_and_one_coalesced_record)
{
	struct fixture f;
	char path[64], *buf;

	setup(&f);
	f.counter = 1; /* the start record had 1 */
	for (int i = 1; i <= 10; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", i);
		kernel(&f, denial(40, T0 + (uint64_t)i * MS, path));
		if (i == 1) {
			char *now = written(&f);

			cr_assert_eq(lines(now), 1, "the first denial is written at once:\n%s",
				     now);
			free(now);
		}
	}
	buf = written(&f);
	cr_assert_eq(lines(buf), 1, "the other nine wait for their window:\n%s", buf);
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 2, "%s", buf);
	assert_line(
	    buf, 2,
	    "\"run_id\":\"r\",\"kind\":\"fs\",\"op\":\"open_read\",\"path\":\"/proc/1/stat\","
	    "\"access\":\"read\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":"
	    "\"protected\",\"pid\":40,\"tgid\":40,\"ppid\":0,\"uid\":0,\"comm\":\"ps\",\"exe\":"
	    "\"/bin/busybox\",\"parent_exe\":\"\",\"cgroup_id\":77}");
	assert_line(buf, 12,
		    "\"run_id\":\"r\",\"kind\":\"fs\",\"op\":\"open_read\",\"coalesced\":9,"
		    "\"first_seq\":2,\"coalesced_seqs\":[[3,11]],\"paths\":[\"/proc/2/stat\","
		    "\"/proc/3/stat\",\"/proc/4/stat\",\"/proc/5/stat\",\"/proc/6/stat\","
		    "\"/proc/7/stat\",\"/proc/8/stat\",\"/proc/9/stat\"],\"paths_unlisted\":1,"
		    "\"access\":\"read\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":"
		    "\"protected\",\"pid\":40,\"tgid\":40,\"ppid\":0,\"uid\":0,\"comm\":\"ps\",\"exe\":"
		    "\"/bin/busybox\",\"parent_exe\":\"\",\"cgroup_id\":77}");
	/* ten kernel records and the coalesced one; nine of them only counted */
	cr_assert_eq(f.st.records, 11);
	cr_assert_eq(f.st.coalesced, 9);
	cr_assert_eq(f.st.max_seq, 11);
	cr_assert_eq(f.counter, 12);
	free(buf);
}

/* Microseconds into the day of a line's "time" (HH:MM:SS.uuuuuu). */
static int64_t time_us(const char *line)
{
	const char *t = strstr(line, "\"time\":\"");
	int h, m, sec, us;

	cr_assert_not_null(t);
	cr_assert_eq(sscanf(t + strlen("\"time\":\"") + 11, "%d:%d:%d.%d", &h, &m, &sec, &us), 4,
		     "%.60s", t);
	return (((int64_t)h * 60 + m) * 60 + sec) * 1000000 + us;
}

/* The coalesced record's time is that of the last record it stands for. */
Test(coalesce, the_coalesced_record_has_the_last_records_time)
{
	struct fixture f;
	char *buf;
	int64_t apart;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));
	kernel(&f, denial(40, T0 + 5 * MS, "/proc/2/stat"));
	kernel(&f, denial(40, T0 + 700 * MS, "/proc/3/stat"));
	buf = finish(&f);
	cr_assert_not_null(strstr(buf, "{\"schema_version\":3,\"seq\":4,"), "%s", buf);
	apart = time_us(strstr(buf, "{\"schema_version\":3,\"seq\":4,")) - time_us(strstr(buf, "{\"schema_version\":3,\"seq\":1,"));
	if (apart < 0)
		apart += 86400ll * 1000000; /* midnight in between */
	/* the sink converts each time with its own clock reads: a few microseconds apart */
	cr_assert(apart >= 700000 - 50 && apart <= 700000 + 50, "%lld us apart:\n%s",
		  (long long)apart, buf);
	free(buf);
}

/* Two alike are two lines either way: the second is written as it came. */
Test(coalesce, a_window_with_one_more_writes_it_in_full)
{
	struct fixture f;
	char *buf;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));
	kernel(&f, denial(40, T0 + MS, "/proc/2/stat"));
	buf = finish(&f);
	cr_assert_eq(lines(buf), 2, "%s", buf);
	assert_has(buf, "{\"schema_version\":3,\"seq\":2,");
	assert_line(
	    buf, 2,
	    "\"run_id\":\"r\",\"kind\":\"fs\",\"op\":\"open_read\",\"path\":\"/proc/2/stat\","
	    "\"access\":\"read\",\"decision\":\"deny\",\"errno\":\"EACCES\",\"reason\":"
	    "\"protected\",\"pid\":40,\"tgid\":40,\"ppid\":0,\"uid\":0,\"comm\":\"ps\",\"exe\":"
	    "\"/bin/busybox\",\"parent_exe\":\"\",\"cgroup_id\":77}");
	cr_assert_null(strstr(buf, "coalesced"), "%s", buf);
	cr_assert_eq(f.st.records, 2);
	cr_assert_eq(f.st.coalesced, 0);
	cr_assert_eq(f.counter, 2, "no number was taken");
	free(buf);
}

/* Allowed records and audit mode's would_deny are never coalesced. */
Test(coalesce, allowed_and_would_deny_records_are_all_written)
{
	static const uint32_t decisions[] = {TETHER_DECISION_ALLOW, TETHER_DECISION_WOULD_DENY};

	for (size_t d = 0; d < 2; d++) {
		struct fixture f;
		char *buf;

		setup(&f);
		/* a denial first, so the stream has its table of windows */
		kernel(&f, denial(99, T0, "/proc/1/stat"));
		for (int i = 0; i < 6; i++) {
			struct tether_fs_event ev = denial(40, T0 + (uint64_t)i * MS, "/srv/ws/f");

			ev.decision = decisions[d];
			if (decisions[d] == TETHER_DECISION_ALLOW)
				ev.err = 0;
			kernel(&f, ev);
		}
		cr_assert_not_null(f.st.coalesce);
		buf = written(&f);
		cr_assert_eq(lines(buf), 7, "written at once:\n%s", buf);
		free(buf);
		buf = finish(&f);
		cr_assert_eq(lines(buf), 7, "%s", buf);
		cr_assert_null(strstr(buf, "coalesced"), "%s", buf);
		cr_assert_eq(f.st.coalesced, 0);
		free(buf);
	}
}

/* Allowed records between denials of one key pass at once and do not split the window. */
Test(coalesce, allowed_records_between_denials_are_untouched)
{
	struct fixture f;
	char *buf;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat")); /* 1 */
	for (int i = 0; i < 3; i++) {
		struct tether_fs_event ok = denial(40, T0 + MS, "/srv/ws/out");

		ok.decision = TETHER_DECISION_ALLOW;
		ok.err = 0;
		ok.op = TETHER_FS_OPEN_WRITE;
		ok.access = TETHER_ACCESS_WRITE;
		ok.reason = TETHER_REASON_RULE;
		ok.rule_id = 0;
		kernel(&f, ok);					     /* 2, 4, 6 */
		kernel(&f, denial(40, T0 + 2 * MS, "/proc/2/stat")); /* 3, 5, 7 */
	}
	buf = written(&f);
	cr_assert_eq(lines(buf), 4, "the first denial and the three allowed:\n%s", buf);
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 5, "%s", buf);
	assert_has(buf, "\"coalesced\":3,\"first_seq\":1,\"coalesced_seqs\":[[3,3],[5,5],[7,7]],"
			"\"paths\":[\"/proc/2/stat\"],\"paths_unlisted\":0,");
	cr_assert_eq(f.st.records, 8);
	free(buf);
}

/* Each thread has its own key; their windows close oldest first. */
Test(coalesce, different_pids_are_different_keys)
{
	struct fixture f;
	char *buf, *a, *b;

	setup(&f);
	for (int i = 0; i < 4; i++) {
		kernel(&f, denial(40, T0 + (uint64_t)i * MS, "/proc/1/stat")); /* 1 3 5 7 */
		kernel(&f, denial(41, T0 + (uint64_t)i * MS, "/proc/1/stat")); /* 2 4 6 8 */
	}
	buf = finish(&f);
	cr_assert_eq(lines(buf), 4, "%s", buf);
	assert_has(buf, "{\"schema_version\":3,\"seq\":1,");
	assert_has(buf, "{\"schema_version\":3,\"seq\":2,");
	a = strstr(buf, "{\"schema_version\":3,\"seq\":9,");
	b = strstr(buf, "{\"schema_version\":3,\"seq\":10,");
	cr_assert(a && b && a < b, "%s", buf);
	cr_assert_not_null(
	    strstr(a, "\"coalesced\":3,\"first_seq\":1,\"coalesced_seqs\":[[3,3],[5,5],[7,7]]"));
	cr_assert_not_null(strstr(a, "\"pid\":40,"));
	cr_assert_not_null(
	    strstr(b, "\"coalesced\":3,\"first_seq\":2,\"coalesced_seqs\":[[4,4],[6,6],[8,8]]"));
	cr_assert_not_null(strstr(b, "\"pid\":41,"));
	cr_assert_eq(f.st.coalesced, 6);
	free(buf);
}

/*
 * A different refusal between repeats of one key is written at once, in
 * its place; the repeats around it are one coalesced record.
 */
Test(coalesce, another_key_in_between_is_written_in_place)
{
	struct fixture f;
	struct tether_fs_event other = denial(40, T0 + 2 * MS, "/etc/shadow");
	char *buf;

	other.reason = TETHER_REASON_RULE;
	other.rule_id = 3;
	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));	     /* 1 */
	kernel(&f, denial(40, T0 + MS, "/proc/2/stat"));     /* 2 */
	kernel(&f, other);				     /* 3 */
	kernel(&f, denial(40, T0 + 3 * MS, "/proc/3/stat")); /* 4 */
	kernel(&f, denial(40, T0 + 4 * MS, "/proc/4/stat")); /* 5 */
	buf = written(&f);
	cr_assert_eq(lines(buf), 2, "%s", buf);
	cr_assert(strstr(buf, "{\"schema_version\":3,\"seq\":1,") < strstr(buf, "{\"schema_version\":3,\"seq\":3,"), "%s", buf);
	assert_has(buf, "\"path\":\"/etc/shadow\",");
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 3, "%s", buf);
	assert_has(buf, "{\"schema_version\":3,\"seq\":6,");
	assert_has(buf, "\"coalesced\":3,\"first_seq\":1,\"coalesced_seqs\":[[2,2],[4,5]],"
			"\"paths\":[\"/proc/2/stat\",\"/proc/3/stat\",\"/proc/4/stat\"],"
			"\"paths_unlisted\":0,");
	free(buf);
}

/* A key seen again after its window: the window's coalesced record, then a new full record. */
Test(coalesce, a_window_ends_after_one_second_of_kernel_time)
{
	struct fixture f;
	char *buf, *sum, *again;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));			     /* 1 */
	kernel(&f, denial(40, T0 + 500 * MS, "/proc/2/stat"));		     /* 2 */
	kernel(&f, denial(40, T0 + COALESCE_WINDOW_NS - 1, "/proc/3/stat")); /* 3 */
	kernel(&f, denial(40, T0 + COALESCE_WINDOW_NS, "/proc/4/stat"));     /* 4: next window */
	buf = written(&f);
	cr_assert_eq(lines(buf), 3, "%s", buf);
	sum = strstr(buf, "{\"schema_version\":3,\"seq\":5,");
	again = strstr(buf, "{\"schema_version\":3,\"seq\":4,");
	cr_assert(sum && again && sum < again, "the window's record first:\n%s", buf);
	cr_assert_not_null(
	    strstr(sum, "\"coalesced\":2,\"first_seq\":1,\"coalesced_seqs\":[[2,3]]"));
	cr_assert_not_null(strstr(again, "\"path\":\"/proc/4/stat\""));
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 3, "nothing was counted in the second window:\n%s", buf);
	free(buf);
}

/* Time passing is seen in any later record: a window ends without its key coming again. */
Test(coalesce, a_later_record_of_another_key_closes_a_window)
{
	struct fixture f;
	struct tether_fs_event other = denial(41, T0 + 2 * COALESCE_WINDOW_NS, "/x");
	char *buf;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));
	kernel(&f, denial(40, T0 + MS, "/proc/2/stat"));
	kernel(&f, denial(40, T0 + 2 * MS, "/proc/3/stat"));
	kernel(&f, other); /* 4 */
	buf = written(&f);
	cr_assert_eq(lines(buf), 3, "%s", buf);
	cr_assert(strstr(buf, "{\"schema_version\":3,\"seq\":5,") < strstr(buf, "{\"schema_version\":3,\"seq\":4,"), "%s", buf);
	free(buf);
	audit_flush(&f.st);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 3, "%s", buf);
	free(buf);
}

/* An allowed record past the window closes it too, and comes after its record. */
Test(coalesce, an_allowed_record_past_the_window_closes_it)
{
	struct fixture f;
	struct tether_fs_event ok = denial(40, T0 + 2 * COALESCE_WINDOW_NS, "/srv/ws/out");
	char *buf;

	ok.decision = TETHER_DECISION_ALLOW;
	ok.err = 0;
	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));
	kernel(&f, denial(40, T0 + MS, "/proc/2/stat"));
	kernel(&f, denial(40, T0 + 2 * MS, "/proc/3/stat"));
	kernel(&f, ok); /* 4 */
	buf = written(&f);
	cr_assert_eq(lines(buf), 3, "%s", buf);
	cr_assert(strstr(buf, "{\"schema_version\":3,\"seq\":5,") &&
		      strstr(buf, "{\"schema_version\":3,\"seq\":5,") < strstr(buf, "{\"schema_version\":3,\"seq\":4,"),
		  "%s", buf);
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 3, "%s", buf);
	free(buf);
}

/* The run's timer: the deadline is the window's end; before it nothing, at it the record. */
Test(coalesce, expiry_writes_at_the_windows_end)
{
	struct fixture f;
	uint64_t due = 0;
	char *buf;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));
	cr_assert_not(audit_next_expiry(&f.st, &due), "nothing counted: nothing due");
	kernel(&f, denial(40, T0 + 10 * MS, "/proc/2/stat"));
	kernel(&f, denial(40, T0 + 20 * MS, "/proc/3/stat"));
	cr_assert(audit_next_expiry(&f.st, &due));
	cr_assert_eq(due, T0 + COALESCE_WINDOW_NS);
	audit_expire(&f.st, due - 1);
	buf = written(&f);
	cr_assert_eq(lines(buf), 1, "%s", buf);
	free(buf);
	audit_expire(&f.st, due);
	buf = written(&f);
	cr_assert_eq(lines(buf), 2, "%s", buf);
	assert_has(buf, "\"coalesced\":2,\"first_seq\":1,\"coalesced_seqs\":[[2,3]]");
	free(buf);
	cr_assert_not(audit_next_expiry(&f.st, &due));
	buf = finish(&f);
	cr_assert_eq(lines(buf), 2, "flushing again writes nothing:\n%s", buf);
	free(buf);
}

/*
 * For kinds whose path is what was refused (a capability, a key, a
 * module), the path is part of the key, and the coalesced record keeps it.
 */
Test(coalesce, capabilities_keep_their_name_in_the_key)
{
	struct fixture f;
	char *buf;

	setup(&f);
	for (int i = 0; i < 3; i++) {
		for (int c = 0; c < 2; c++) {
			struct tether_fs_event ev =
			    denial(40, T0 + (uint64_t)i * MS, c ? "19" : "21");

			ev.hdr.kind = TETHER_EVENT_CAPABILITY;
			ev.op = TETHER_FS_CAPABILITY;
			ev.err = -EPERM;
			ev.reason = TETHER_REASON_FORBIDDEN;
			ev.access = 0;
			kernel(&f, ev);
		}
	}
	buf = finish(&f);
	cr_assert_eq(lines(buf), 4, "%s", buf);
	assert_has(buf,
		   "\"kind\":\"capability\",\"op\":\"capability\",\"coalesced\":2,\"first_seq\":1,"
		   "\"coalesced_seqs\":[[3,3],[5,5]],\"path\":\"cap_sys_admin\",\"decision\"");
	assert_has(buf,
		   "\"kind\":\"capability\",\"op\":\"capability\",\"coalesced\":2,\"first_seq\":2,"
		   "\"coalesced_seqs\":[[4,4],[6,6]],\"path\":\"cap_sys_ptrace\",\"decision\"");
	cr_assert_null(strstr(buf, "\"paths\""), "%s", buf);
	free(buf);
}

/* What else makes a key: op, reason, rule, errno, comm, exe (one exec later), path flags. */
Test(coalesce, every_field_but_the_path_is_in_the_key)
{
	struct fixture f;
	char *buf;

	setup(&f);
	for (int variant = 0; variant < 8; variant++) {
		for (int i = 0; i < 3; i++) {
			struct tether_fs_event ev =
			    denial(40, T0 + (uint64_t)i * MS, "/proc/1/stat");

			switch (variant) {
			case 1:
				ev.op = TETHER_FS_OPEN_WRITE;
				break;
			case 2:
				ev.reason = TETHER_REASON_DEFAULT_DENY;
				break;
			case 3:
				ev.reason = TETHER_REASON_RULE;
				ev.rule_id = 4;
				break;
			case 4:
				ev.reason = TETHER_REASON_RULE;
				ev.rule_id = 5;
				break;
			case 5:
				strcpy(ev.comm, "cat");
				break;
			case 6:
				strcpy(ev.exe, "/usr/bin/cat");
				break;
			case 7:
				ev.flags = TETHER_FS_PATH_TRUNCATED;
				break;
			}
			kernel(&f, ev);
		}
	}
	buf = finish(&f);
	/* eight keys: each its full record and one coalesced record of two */
	cr_assert_eq(lines(buf), 16, "%s", buf);
	cr_assert_eq(f.st.coalesced, 16);
	assert_has(buf, "\"coalesced\":2,\"first_seq\":22,\"coalesced_seqs\":[[23,24]],\"paths\":"
			"[\"/proc/1/stat\"],\"paths_unlisted\":0,\"path_truncated\":true,");
	free(buf);
}

/*
 * More keys than slots: the oldest window that holds something is closed
 * to make room (its one counted record written in full), and nothing is
 * lost.
 */
Test(coalesce, a_full_table_closes_its_oldest_window)
{
	struct fixture f;
	char *buf;

	setup(&f);
	for (uint32_t pid = 100; pid < 100 + COALESCE_SLOTS; pid++) {
		kernel(&f, denial(pid, T0, "/proc/1/stat"));
		kernel(&f, denial(pid, T0 + MS, "/proc/2/stat"));
	}
	buf = written(&f);
	cr_assert_eq(lines(buf), COALESCE_SLOTS, "%s", buf);
	free(buf);
	kernel(&f, denial(99, T0 + 2 * MS, "/proc/1/stat")); /* one key too many */
	buf = written(&f);
	cr_assert_eq(lines(buf), COALESCE_SLOTS + 2, "%s", buf);
	/* pid 100's second record, seq 2, as it came */
	assert_has(buf, "{\"schema_version\":3,\"seq\":2,");
	assert_has(buf, "{\"schema_version\":3,\"seq\":65,");
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 2 * COALESCE_SLOTS + 1, "%s", buf);
	cr_assert_eq(f.st.coalesced, 0);
	cr_assert_eq(f.counter, 2 * COALESCE_SLOTS + 1);
	free(buf);
}

/* Seqs that never run on fill the ranges: the window closes and the next record opens another. */
Test(coalesce, full_ranges_close_the_window)
{
	struct fixture f;
	struct tether_fs_event other = denial(41, T0, "/x");
	char *buf;
	uint64_t first_of_next = 0;

	setup(&f);
	kernel(&f, denial(40, T0, "/proc/1/stat"));
	for (int i = 0; i <= COALESCE_RANGES; i++) {
		kernel(&f, other); /* another thread between each: no two seqs adjacent */
		first_of_next = kernel(&f, denial(40, T0 + MS, "/proc/2/stat"));
	}
	buf = finish(&f);
	/*
	 * Thread 40: 1 full, 1 coalesced of 32 ranges, the 33rd in full.
	 * Thread 41 began a record later: 1 full, 1 coalesced of 32 (at the end).
	 */
	cr_assert_eq(lines(buf), 5, "%s", buf);
	assert_has(buf, "\"coalesced\":32,\"first_seq\":1,\"coalesced_seqs\":[[3,3],[5,5],");
	{
		char want[32];

		snprintf(want, sizeof(want), "{\"schema_version\":3,\"seq\":%" PRIu64 ",", first_of_next);
		assert_has(buf, want);
	}
	assert_has(buf, "\"coalesced\":32,\"first_seq\":2,\"coalesced_seqs\":[[4,4],[6,6],");
	free(buf);
}

/* The stream without a sink still counts. */
Test(coalesce, a_stream_without_a_sink_counts)
{
	struct audit_stream st = {.names.run_id = "r"};
	uint64_t seq = 0;

	for (int i = 0; i < 5; i++) {
		struct tether_fs_event ev = denial(40, T0 + (uint64_t)i * MS, "/proc/1/stat");

		ev.hdr.seq = ++seq;
		audit_handle_record(&st, &ev, sizeof(ev));
	}
	audit_flush(&st);
	cr_assert_eq(st.records, 6);
	cr_assert_eq(st.coalesced, 4);
	audit_stream_release(&st);
	cr_assert_null(st.coalesce);
	audit_stream_release(&st); /* twice is fine */
}

/* ---- every number accounted for, whatever the interleaving ------------- */

/* Appends the seqs a line stands for: its own, or a coalesced record's list too. */
static void account(const char *line, uint8_t *seen, size_t max, uint64_t *coalesced_total)
{
	uint64_t seq = strtoull(line + strlen("{\"schema_version\":3,\"seq\":"), NULL, 10), count = 0, sum = 0;
	const char *c = strstr(line, "\"coalesced\":");
	const char *nl = strchr(line, '\n');

	cr_assert(seq > 0 && seq < max, "seq %" PRIu64, seq);
	seen[seq]++;
	if (!c || c > nl)
		return;
	count = strtoull(c + strlen("\"coalesced\":"), NULL, 10);
	c = strstr(c, "\"coalesced_seqs\":[");
	cr_assert_not_null(c);
	c += strlen("\"coalesced_seqs\":[");
	while (*c == '[' || *c == ',') {
		char *end;
		uint64_t a, b;

		if (*c == ',')
			c++;
		a = strtoull(c + 1, &end, 10);
		b = strtoull(end + 1, &end, 10);
		cr_assert(a <= b && b < max, "range %" PRIu64 "-%" PRIu64, a, b);
		for (uint64_t s = a; s <= b; s++)
			seen[s]++;
		sum += b - a + 1;
		c = end + 1;
	}
	cr_assert_eq(sum, count, "the ranges hold what the count says: %.200s", line);
	*coalesced_total += count;
}

/*
 * Thousands of records from a handful of threads and keys, denials and
 * allowed ones mixed, time moving on, the run's timer firing: every seq
 * from 1 to the last is a line of its own or in exactly one coalesced
 * record's list, and the counters say the same.
 */
Test(coalesce, every_seq_is_accounted_for_exactly_once)
{
	enum { N = 5000 };
	static uint8_t seen[2 * N + 8];
	struct fixture f;
	uint64_t lcg = 12345, ts = T0, coalesced_total = 0, line_count = 0;
	char *buf, *p;

	setup(&f);
	for (int i = 0; i < N; i++) {
		struct tether_fs_event ev;
		char path[64];

		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		ts += (lcg >> 33) % (4 * MS);
		snprintf(path, sizeof(path), "/proc/%u/stat", (unsigned)((lcg >> 20) % 300));
		ev = denial(40 + (uint32_t)((lcg >> 40) % 5), ts, path);
		switch ((lcg >> 50) % 8) {
		case 0:
			ev.decision = TETHER_DECISION_ALLOW;
			ev.err = 0;
			break;
		case 1:
			ev.op = TETHER_FS_PTRACE;
			ev.hdr.kind = TETHER_EVENT_PROC;
			ev.path[0] = 0;
			break;
		case 2:
			ev.reason = TETHER_REASON_DEFAULT_DENY;
			break;
		default:
			break;
		}
		kernel(&f, ev);
		if ((lcg >> 58) == 0) /* now and then, the run's timer */
			audit_expire(&f.st, ts);
		if ((lcg >> 59) == 1) { /* and a record of the controller's */
			struct record run = {.kind = RECORD_RUN,
					     .run.event = RECORD_RUN_OUTPUT_TRUNCATED};

			run.run.truncated.stream = "stdout";
			cr_assert_eq(audit_write(&f.st, &run), 0);
		}
	}
	buf = finish(&f);
	cr_assert_lt(f.counter, sizeof(seen));
	for (p = buf; *p; p = strchr(p, '\n') + 1) {
		account(p, seen, sizeof(seen), &coalesced_total);
		line_count++;
	}
	for (uint64_t s = 1; s <= f.counter; s++)
		cr_assert_eq(seen[s], 1, "seq %" PRIu64 " is accounted for %u times", s, seen[s]);
	cr_assert_eq(coalesced_total, f.st.coalesced);
	cr_assert_eq(f.st.records, f.counter, "every number is a record of the run");
	cr_assert_eq(line_count + f.st.coalesced, f.st.records);
	cr_assert_lt(line_count, f.st.records / 2, "it coalesced something: %" PRIu64 " lines",
		     line_count);
	free(buf);
}

/* Network records are not coalesced: five identical refused connects are five lines. */
Test(coalesce, network_records_are_not_coalesced)
{
	struct fixture f;
	char *buf;

	setup(&f);
	for (int i = 0; i < 5; i++) {
		struct tether_net_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.hdr.kind = TETHER_EVENT_NET;
		ev.hdr.size = sizeof(ev);
		ev.hdr.pid = ev.hdr.tgid = 40;
		ev.hdr.ts_ns = T0 + (uint64_t)i * MS;
		ev.hdr.seq = ++f.counter;
		ev.op = TETHER_NET_CONNECT;
		ev.decision = TETHER_DECISION_DENY;
		ev.err = -EPERM;
		ev.reason = TETHER_REASON_DEFAULT_DENY;
		ev.rule_id = TETHER_RULE_NONE;
		ev.family = 2;
		ev.protocol = 6;
		ev.port = 80;
		audit_handle_record(&f.st, &ev, sizeof(ev));
	}
	buf = written(&f);
	cr_assert_eq(lines(buf), 5, "%s", buf);
	free(buf);
	buf = finish(&f);
	cr_assert_eq(lines(buf), 5, "%s", buf);
	cr_assert_null(f.st.coalesce, "nothing to coalesce: no table");
	free(buf);
}

/* The end record says how many of its audit_records were counted in coalesced records. */
Test(coalesce, the_end_record_counts_coalesced_records)
{
	struct record rec = {.kind = RECORD_RUN, .seq = 9, .mono_ns = T0, .run_id = "r"};
	struct strbuf sb = {0};

	rec.run.event = RECORD_RUN_END;
	rec.run.end = (struct record_run_end){
	    .audit_records = 8, .audit_seq_last = 8, .audit_coalesced = 5, .reason = "succeeded"};
	cr_assert_eq(sink_jsonl_encode(&rec, &sb), 0);
	assert_has(sb.data, "\"audit_records\":8,\"audit_seq_last\":8,\"audit_lost\":0,"
			    "\"audit_malformed\":0,\"audit_coalesced\":5,\"audit_suppressed\":0,\"egress_bytes\":0,");
	sb_free(&sb);
}
