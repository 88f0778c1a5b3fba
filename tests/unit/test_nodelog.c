// SPDX-License-Identifier: GPL-2.0
/*
 * The node log (runtime/sink/nodelog.c) and its verifier: an untouched log
 * verifies; one edited, one removed, two swapped lines and a tail cut are
 * each named; rotation, the disk bound and its drop line; a restart after a
 * close and after a crash; a full disk (RLIMIT_FSIZE) loses records
 * counted, never silently, and never tears the chain.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/record.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/sink.h"

static char dir[] = "/tmp/tether-nodelog-XXXXXX";
static char logdir[128], keypath[128], logpath[192], anchorpath[192];
static char out_text[1 << 16], err_text[1 << 16];

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	snprintf(logdir, sizeof(logdir), "%.64s/audit", dir);
	snprintf(keypath, sizeof(keypath), "%s/node-log.key", dir);
	snprintf(logpath, sizeof(logpath), "%s/node.log", logdir);
	snprintf(anchorpath, sizeof(anchorpath), "%s/anchor.jsonl", dir);
}

static void teardown(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", dir);
}

TestSuite(nodelog, .init = setup, .fini = teardown);

static struct record run_record(uint64_t seq)
{
	static const struct record_context ctx = { .host = "node-1", .boot_id = "b", .attempt = 1 };
	struct record rec = { .kind = RECORD_RUN, .seq = seq, .mono_ns = 1, .run_id = "run-1",
			      .ctx = &ctx };

	rec.run.event = RECORD_RUN_OUTPUT_TRUNCATED;
	rec.run.truncated = (struct record_run_truncated){ .stream = "stdout",
							    .output_bytes_max = seq };
	return rec;
}

/* The log with `records` records; the exported checkpoints in anchor.jsonl. */
static struct sink *open_log(struct nodelog_options *o, struct sink **anchor)
{
	struct sink *s = NULL;
	char why[512] = "";
	int fd;

	if (anchor) {
		fd = open(anchorpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		cr_assert_geq(fd, 0);
		cr_assert_eq(sink_jsonl_open(fd, true, anchor), 0);
		o->export = anchor;
		o->export_count = 1;
	}
	o->dir = logdir;
	o->key_path = keypath;
	o->host = "node-1";
	o->boot_id = "b";
	cr_assert_eq(sink_nodelog_open(o, &s, why, sizeof(why)), 0, "%s", why);
	return s;
}

static void write_log(struct nodelog_options *o, unsigned int records, bool with_anchor)
{
	struct sink *anchor = NULL, *s = open_log(o, with_anchor ? &anchor : NULL);

	for (unsigned int i = 1; i <= records; i++) {
		struct record rec = run_record(i);

		cr_assert_eq(sink_write(s, &rec), 0);
		if (i % 7 == 0)
			cr_assert_eq(sink_flush(s), 0);
	}
	cr_assert_eq(sink_close(s), 0);
	sink_close(anchor);
}

/* Runs the verifier over `paths`; its output in out_text and err_text. */
static int verify(const char *const *paths, size_t n, const char *anchor, const char *pub)
{
	struct nodelog_verify_options o = { .key_path = pub ? NULL : keypath,
					    .public_key_path = pub, .anchor_path = anchor };
	FILE *out = fmemopen(out_text, sizeof(out_text), "w");
	FILE *err = fmemopen(err_text, sizeof(err_text), "w");
	int r;

	cr_assert(out && err);
	r = nodelog_verify(&o, paths, n, out, err);
	fclose(out);
	fclose(err);
	return r;
}

static int verify_one(const char *anchor)
{
	const char *paths[] = { logpath };

	return verify(paths, 1, anchor, NULL);
}

/* The rotated node.log.1 as the only file: the first run of a log rotates at restart. */
struct lines {
	char *line[8192];
	size_t n;
};

static void read_lines(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	cr_assert_not_null(f, "%s", path);
	l->n = 0;
	while (getline(&line, &cap, f) > 0) {
		cr_assert_lt(l->n, 8192);
		l->line[l->n++] = strdup(line);
	}
	free(line);
	fclose(f);
}

static void write_lines(const char *path, const struct lines *l, size_t upto)
{
	FILE *f = fopen(path, "we");

	cr_assert_not_null(f);
	for (size_t i = 0; i < upto; i++)
		if (l->line[i])
			fputs(l->line[i], f);
	fclose(f);
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->line[i]);
}

static unsigned int count_in(const char *text, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(nodelog, an_untouched_log_verifies_and_every_line_chains)
{
	struct nodelog_options o = { 0 };
	struct lines l;

	write_log(&o, 200, true);
	cr_assert_eq(verify_one(NULL), 0, "%s%s", out_text, err_text);
	cr_assert_eq(count_in(err_text, "error"), 0, "%s", err_text);
	cr_assert(strstr(out_text, "verified: 202 lines, log_seq 1..202"), "%s", out_text);
	read_lines(logpath, &l);
	cr_assert_eq(l.n, 202);
	cr_assert(strstr(l.line[0], "\"kind\":\"checkpoint\",\"checkpoint\":{\"reason\":\"open\""));
	cr_assert(strstr(l.line[0], "\"previous\":\"none\""), "%s", l.line[0]);
	cr_assert(strstr(l.line[201], "{\"reason\":\"close\""), "%s", l.line[201]);
	cr_assert(strstr(l.line[1], ",\"log_seq\":2,\"mac\":\""), "%s", l.line[1]);
	free_lines(&l);
	/* with the anchor (the close checkpoint, exported) too */
	cr_assert_eq(verify_one(anchorpath), 0, "%s%s", out_text, err_text);
	/* the key file is 0600 and the directory 0700 */
	struct stat st;

	cr_assert_eq(stat(keypath, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_eq(stat(logdir, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);
	cr_assert_eq(stat(logpath, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
}

Test(nodelog, an_edited_line_is_named)
{
	struct nodelog_options o = { 0 };
	struct lines l;
	char *p;

	write_log(&o, 100, false);
	read_lines(logpath, &l);
	p = strstr(l.line[49], "\"output_bytes_max\":49");
	cr_assert_not_null(p, "%s", l.line[49]);
	p[strlen("\"output_bytes_max\":")] = '8';
	write_lines(logpath, &l, l.n);
	cr_assert_eq(verify_one(NULL), 1);
	cr_assert(strstr(err_text, "/node.log:50: error: log_seq 50: its MAC does not match: the "
				   "line was edited"), "%s", err_text);
	cr_assert_eq(count_in(err_text, "error"), 1, "%s", err_text);
	free_lines(&l);
}

Test(nodelog, a_removed_line_is_named)
{
	struct nodelog_options o = { 0 };
	struct lines l;

	write_log(&o, 100, false);
	read_lines(logpath, &l);
	free(l.line[29]);
	l.line[29] = NULL;
	write_lines(logpath, &l, l.n);
	cr_assert_eq(verify_one(NULL), 1);
	cr_assert(strstr(err_text, "/node.log:30: error: log_seq 30..30 missing before this line: "
				   "records removed"), "%s", err_text);
	cr_assert_eq(count_in(err_text, "error"), 1, "%s", err_text);
	free_lines(&l);
}

Test(nodelog, two_swapped_lines_are_named_as_reordered_not_edited)
{
	struct nodelog_options o = { 0 };
	struct lines l;
	char *t;

	write_log(&o, 100, false);
	read_lines(logpath, &l);
	t = l.line[60];
	l.line[60] = l.line[61];
	l.line[61] = t;
	write_lines(logpath, &l, l.n);
	cr_assert_eq(verify_one(NULL), 1);
	cr_assert(strstr(err_text, "/node.log:62: error: log_seq 61 comes after log_seq 62 "),
		  "%s", err_text);
	cr_assert(strstr(err_text, "records reordered"), "%s", err_text);
	cr_assert_eq(count_in(err_text, "error"), 1, "%s", err_text);
	free_lines(&l);
}

Test(nodelog, a_tail_cut_is_named_given_the_anchor)
{
	struct nodelog_options o = { 0 };
	struct lines l;

	write_log(&o, 100, true);
	read_lines(logpath, &l);
	write_lines(logpath, &l, 90);	/* lines 91..102 cut, the close checkpoint with them */
	/* whole lines cut: without the anchor only a note says the end is not a close */
	cr_assert_eq(verify_one(NULL), 0, "%s", err_text);
	cr_assert(strstr(err_text, "note: the log does not end with a close checkpoint"), "%s",
		  err_text);
	cr_assert_eq(verify_one(anchorpath), 1);
	cr_assert(strstr(err_text, "/node.log:90: error: log_seq 91..102 cut off the end of the "
				   "log after this line"), "%s", err_text);
	free_lines(&l);
}

Test(nodelog, a_line_cut_in_the_middle_is_named)
{
	struct nodelog_options o = { 0 };
	struct lines l;

	write_log(&o, 20, false);
	read_lines(logpath, &l);
	l.line[21][40] = '\0';	/* the close checkpoint, cut short without its newline */
	write_lines(logpath, &l, l.n);
	cr_assert_eq(verify_one(NULL), 1);
	cr_assert(strstr(err_text, "/node.log:22: error: the line is cut short"), "%s", err_text);
	free_lines(&l);
}

Test(nodelog, edited_removed_swapped_and_cut_in_one_log_are_each_named)
{
	struct nodelog_options o = { .checkpoint_records = 25 };
	struct lines l;
	char *p, *t;

	write_log(&o, 200, true);
	read_lines(logpath, &l);
	p = strstr(l.line[10], "run-1");	/* log_seq 11: run_id run-1 -> run-2 */
	cr_assert_not_null(p);
	p[4] = '2';
	free(l.line[40]);	/* log_seq 41 removed */
	l.line[40] = NULL;
	t = l.line[80];		/* log_seq 81 and 82 swapped */
	l.line[80] = l.line[81];
	l.line[81] = t;
	write_lines(logpath, &l, 150);	/* log_seq 151.. cut off */
	cr_assert_eq(verify_one(anchorpath), 1);
	cr_assert(strstr(err_text, "node.log:11: error: log_seq 11: its MAC does not match"), "%s",
		  err_text);
	cr_assert(strstr(err_text, "node.log:41: error: log_seq 41..41 missing"), "%s", err_text);
	/* lines after the removed one are a line up */
	cr_assert(strstr(err_text, "node.log:81: error: log_seq 81 comes after log_seq 82"), "%s",
		  err_text);
	cr_assert(strstr(err_text, "node.log:149: error: log_seq 151..") &&
		  strstr(err_text, "cut off the end"), "%s", err_text);
	cr_assert_eq(count_in(err_text, "error"), 4, "%s", err_text);
	cr_assert(strstr(out_text, "4 problems"), "%s", out_text);
	cr_assert(strstr(out_text, "the first at ") && strstr(out_text, "node.log:11\n"), "%s",
		  out_text);
	free_lines(&l);
}

Test(nodelog, a_forged_line_with_a_recomputed_plain_hash_still_fails)
{
	struct nodelog_options o = { 0 };
	struct lines l;
	char *p;

	/* whoever edits a line and puts any other mac on it is caught without the key */
	write_log(&o, 10, false);
	read_lines(logpath, &l);
	p = strstr(l.line[5], ",\"mac\":\"");
	cr_assert_not_null(p);
	memset(p + 8, 'a', 64);
	write_lines(logpath, &l, l.n);
	cr_assert_eq(verify_one(NULL), 1);
	cr_assert(strstr(err_text, "node.log:6: error: log_seq 6: its MAC does not match"), "%s",
		  err_text);
	/* its successor chains to the forged mac: named too */
	cr_assert(strstr(err_text, "node.log:7: error: log_seq 7: its MAC"), "%s", err_text);
	free_lines(&l);
}

Test(nodelog, the_public_key_checks_signatures_only_and_a_wrong_key_fails)
{
	struct nodelog_options o = { 0 };
	const char *paths[] = { logpath };
	char pub[300], other[300];
	struct lines l;
	char *p;

	write_log(&o, 30, false);
	snprintf(pub, sizeof(pub), "%s/node-log.pub", logdir);
	cr_assert_eq(verify(paths, 1, NULL, pub), 0, "%s", err_text);
	cr_assert(strstr(err_text, "the lines' MACs not"), "%s", err_text);
	/* a checkpoint edited: its signature fails, whatever key reads it */
	read_lines(logpath, &l);
	p = strstr(l.line[31], "\"reason\":\"close\"");
	cr_assert_not_null(p);
	memcpy(p + 10, "CLOSE", 5);
	write_lines(logpath, &l, l.n);
	cr_assert_eq(verify(paths, 1, NULL, pub), 1);
	cr_assert(strstr(err_text, "node.log:32: error: log_seq 32: the checkpoint's signature does "
				   "not verify"), "%s", err_text);
	free_lines(&l);
	/* another node's key: every signature and MAC fails */
	snprintf(other, sizeof(other), "%s/other.key", dir);
	cr_assert_eq(nodelog_key_create(other), 0);
	cr_assert_eq(nodelog_key_create(other), -EEXIST);
	struct nodelog_verify_options vo = { .key_path = other };
	FILE *out = fmemopen(out_text, sizeof(out_text), "w");
	FILE *err = fmemopen(err_text, sizeof(err_text), "w");

	cr_assert_eq(nodelog_verify(&vo, paths, 1, out, err), 1);
	fclose(out);
	fclose(err);
	cr_assert(strstr(err_text, "not by this key"), "%s", err_text);
}

static size_t dir_files(char names[][192], size_t max, uint64_t *total)
{
	DIR *d = opendir(logdir);
	struct dirent *e;
	size_t n = 0;

	cr_assert_not_null(d);
	*total = 0;
	while ((e = readdir(d))) {
		char path[512];
		struct stat st;

		if (strncmp(e->d_name, "node.log", 8))
			continue;
		snprintf(path, sizeof(path), "%s/%s", logdir, e->d_name);
		cr_assert_eq(stat(path, &st), 0);
		*total += (uint64_t)st.st_size;
		if (n < max)
			snprintf(names[n], 192, "%s/%.48s", logdir, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

Test(nodelog, rotation_bounds_the_disk_and_says_what_went)
{
	struct nodelog_options o = { .file_bytes = 16 << 10, .max_bytes = 64 << 10,
				     .checkpoint_records = 50 };
	char names[64][192];
	const char *paths[64];
	uint64_t total;
	size_t n;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	unsigned int drops = 0;

	write_log(&o, 3000, false);	/* ~1.2 MB of lines through a 64 KiB bound */
	n = dir_files(names, 64, &total);
	cr_assert_lt(n, 64);
	/* the bound holds, give or take the file being written (one file, one buffer) */
	cr_assert_leq(total, (64 << 10) + (16 << 10) + (64 << 10), "%llu bytes",
		      (unsigned long long)total);
	for (size_t i = 0; i < n; i++)
		paths[i] = names[i];
	cr_assert_eq(verify(paths, n, NULL, NULL), 0, "%s", err_text);
	cr_assert(strstr(err_text, "removed by the disk bound"), "%s", err_text);
	cr_assert(strstr(err_text, "the log starts at log_seq"), "%s", err_text);
	f = fopen(logpath, "re");
	cr_assert_not_null(f);
	while (getline(&line, &cap, f) > 0)
		if (strstr(line, "\"kind\":\"node_log_dropped\",\"node_log_dropped\":{\"reason\":"
				 "\"max_bytes\""))
			drops++;
	free(line);
	fclose(f);
	/* the newest drop line is in the file being written (older ones went with their files) */
	cr_assert_geq(drops, 1);
}

Test(nodelog, a_restart_continues_the_chain_after_a_close_and_after_a_crash)
{
	struct nodelog_options o = { 0 };
	char names[16][192];
	const char *paths[16];
	uint64_t total;
	size_t n;
	struct lines l;
	FILE *f;

	write_log(&o, 10, false);	/* node.log: lines 1..12 */
	write_log(&o, 10, false);	/* node.log.1 has 1..12; node.log 13..24 */
	read_lines(logpath, &l);
	cr_assert(strstr(l.line[0], "\"reason\":\"open\",\"file_index\":2,\"covers_log_seq\":12"),
		  "%s", l.line[0]);
	cr_assert(strstr(l.line[0], "\"previous\":\"closed\""), "%s", l.line[0]);
	/* a crash: no close checkpoint, and half a line at the end */
	f = fopen(logpath, "we");
	for (size_t i = 0; i + 1 < l.n; i++)
		fputs(l.line[i], f);
	fputs("{\"schema_version\":3,\"half", f);
	fclose(f);
	free_lines(&l);
	write_log(&o, 10, false);
	read_lines(logpath, &l);
	cr_assert(strstr(l.line[0], "\"file_index\":3,\"covers_log_seq\":23"), "%s", l.line[0]);
	cr_assert(strstr(l.line[0], "\"previous\":\"unclosed\""), "%s", l.line[0]);
	cr_assert(strstr(l.line[1], "\"node_log_dropped\":{\"reason\":\"cut_by_crash\",\"bytes\":25}"),
		  "%s", l.line[1]);
	free_lines(&l);
	n = dir_files(names, 16, &total);
	cr_assert_eq(n, 3);
	for (size_t i = 0; i < n; i++)
		paths[i] = names[i];
	cr_assert_eq(verify(paths, n, NULL, NULL), 0, "%s", err_text);
	cr_assert(strstr(out_text, "log_seq 1..36"), "%s", out_text);
}

Test(nodelog, a_last_line_that_is_not_ours_refuses_to_start)
{
	struct nodelog_options o = { .dir = logdir, .key_path = keypath };
	struct sink *s = NULL;
	char why[512];
	FILE *f;

	write_log(&o, 3, false);
	f = fopen(logpath, "ae");
	fputs("{\"forged\":true}\n", f);
	fclose(f);
	cr_assert_eq(sink_nodelog_open(&o, &s, why, sizeof(why)), -EINVAL);
	cr_assert(strstr(why, "its last line is not a node log line"), "%s", why);
}

Test(nodelog, a_full_disk_loses_records_counted_and_never_tears_the_chain)
{
	struct nodelog_options o = { 0 };
	struct rlimit lim;
	struct sink *s;
	unsigned int records = 0, in_log = 0, said = 0;
	uint64_t lost;
	struct lines l;

	signal(SIGXFSZ, SIG_IGN);
	s = open_log(&o, NULL);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &lim), 0);
	struct rlimit small = { .rlim_cur = 20000, .rlim_max = lim.rlim_max };

	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	for (unsigned int i = 1; i <= 300; i++) {
		struct record rec = run_record(i);

		sink_write(s, &rec);
		records++;
		if (i % 5 == 0)
			sink_flush(s);
	}
	lost = sink_nodelog_lost(s);
	cr_assert_gt(lost, 0);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (unsigned int i = 301; i <= 320; i++) {
		struct record rec = run_record(i);

		cr_assert_eq(sink_write(s, &rec), 0);
		records++;
	}
	sink_close(s);	/* its first error stays the full disk's */
	read_lines(logpath, &l);
	for (size_t i = 0; i < l.n; i++) {
		char *p = strstr(l.line[i], "\"reason\":\"write_failed\",\"records\":");

		in_log += strstr(l.line[i], "\"kind\":\"run\"") != NULL;
		if (p)
			said += (unsigned int)strtoul(p + strlen("\"reason\":\"write_failed\",\"records\":"),
						      NULL, 10);
	}
	free_lines(&l);
	/* generated = written + lost, and the drop lines say every lost one */
	cr_assert_eq(in_log + lost, records, "%u in the log, %llu lost, %u written", in_log,
		     (unsigned long long)lost, records);
	cr_assert_eq(said, lost);
	cr_assert_eq(verify_one(NULL), 0, "%s", err_text);
}
