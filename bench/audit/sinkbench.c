// SPDX-License-Identifier: GPL-2.0
/*
 * The audit stream's benchmark (make bench-audit; bench/audit/README.md).
 *
 *   sinkbench [-n RECORDS] [-r REPETITIONS]
 *
 * Floods denial records (kind fs, op open_read, decision deny, EACCES, a
 * deny rule, the full envelope of a daemon run, the path /etc/shadow-N
 * varying) through the controller's sinks, one producer thread, each case
 * on its own in a fresh directory under $TMPDIR (default /tmp):
 *
 *   baseline     write(2) of the same JSON lines, pre-encoded, one per record
 *   jsonl        sink_jsonl_open() on a file (a run's records file)
 *   ocsf         sink_lines_open() with ocsf_encode() on a file
 *   node log     sink_nodelog_open() with default options, sink_flush()
 *                every 64 records (the daemon flushes once per ring
 *                batch), then sink_close(); nodelog_verify() afterwards,
 *                not timed, must say 0 (verified)
 *   syslog-unix  sink_syslog_open(), SYSLOG_UNIX, to a datagram socket a
 *                collector thread of ours reads; timed until sink_close()
 *                returns, with close_ms large enough that close returns
 *                only once the spool is empty (everything sent or named by
 *                an audit_loss message)
 *   fan-out      sink_fanout_open() of a jsonl records file plus the node
 *                log: the daemon's shape for one run
 *
 * For each: records per second (delivered over the median time), CPU per
 * 100,000 records (getrusage RUSAGE_SELF user+sys over the timed part,
 * the sink's own threads included, our collector thread's excluded), the
 * time as a ratio of the baseline's, and generated = delivered + counted
 * lost.  Delivered is counted afterwards from what arrived: lines in the
 * files (in seq order, each once), record lines of the node log (its
 * checkpoints not counted), datagrams at the collector (ids in order, each
 * once, every gap named by an audit_loss message).  Lost is what the sink
 * itself counted: sink_nodelog_lost(), the audit_loss messages' "lost",
 * the errors write() returned.
 *
 * It reports; the 500,000 records/s target is PASS or MISS and never
 * fails it.  It exits 1 when anything is unaccounted (generated !=
 * delivered + lost, in any repetition), when a check of what arrived fails,
 * or when it cannot measure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/stats.h"

#include "bpf/abi/event.h"
#include "bpf/abi/rules.h"
#include "common/version.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/ocsf.h"
#include "runtime/sink/sink.h"
#include "runtime/sink/syslog.h"

#define DEFAULT_RECORDS		1000000ull
#define FLUSH_EVERY		64	/* the daemon flushes once per ring batch */
#define BASELINE_RING		65536	/* pre-encoded lines, written round */
#define TARGET_NODELOG_RATE	500000.0
#define SYSLOG_CLOSE_MS		600000	/* close returns when the spool is empty */
#define MAX_REPS		15

/* ---- the records ----------------------------------------------------------- */

static uint64_t n_records = DEFAULT_RECORDS;
static char (*paths)[40];		/* /etc/shadow-N, one per record */
static struct tether_fs_event event;
static struct record template_rec;
static uint64_t mono_base;
static char host[256], boot_id[64];

static const char *const rule_paths[] = { "/", "/work", "/etc/shadow", "/root" };
static struct record_context context = {
	.host = host,
	.boot_id = boot_id,
	.tether_version = TETHER_VERSION,
	.tenant = "team-a",
	.attempt = 1,
	.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
	.span_id = "00f067aa0ba902b7",
	.policy_digest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
};

static uint64_t mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One decoded denial, as the daemon has it after record_decode(): the
 * template comes from the decoder itself, so every field is what a real
 * record of the kernel's carries.
 */
static int make_template(void)
{
	const struct record_names names = {
		.run_id = "r-0c5f1e2a9b7d4f63",
		.ctx = &context,
		.rule_paths = rule_paths,
		.rule_count = sizeof(rule_paths) / sizeof(rule_paths[0]),
	};
	static struct record_scratch scratch;
	struct utsname uts;

	if (uname(&uts) == 0)
		snprintf(host, sizeof(host), "%s", uts.nodename);
	record_boot_id(boot_id, sizeof(boot_id));
	{
		/* as a run has it: its envelope's members encoded once (run_context_init) */
		static struct strbuf members;

		if (sink_jsonl_encode_context(&context, names.run_id, &members))
			return -ENOMEM;
		context.encoded = members.data;
		context.encoded_len = members.len;
		context.encoded_run_id = names.run_id;
	}
	memset(&event, 0, sizeof(event));
	event.hdr.kind = tether_fs_op_kind(TETHER_FS_OPEN_READ);
	event.hdr.size = sizeof(event);
	event.hdr.cgroup_id = 18446;
	event.hdr.pid = 41872;
	event.hdr.tgid = 41870;
	event.hdr.seq = 1;
	event.hdr.ts_ns = mono_now_ns();
	event.op = TETHER_FS_OPEN_READ;
	event.decision = TETHER_DECISION_DENY;
	event.err = -EACCES;
	event.reason = TETHER_REASON_RULE;
	event.rule_id = 2;	/* deny: /etc/shadow */
	event.access = TETHER_ACCESS_READ;
	event.uid = 1000;
	event.ppid = 41790;
	strcpy(event.comm, "python3");
	strcpy(event.path, "/etc/shadow-0");
	strcpy(event.exe, "/usr/bin/python3.11");
	strcpy(event.parent_exe, "/usr/bin/bash");
	if (record_decode(&event, sizeof(event), &names, &scratch, &template_rec))
		return -EBADMSG;
	mono_base = event.hdr.ts_ns;

	paths = calloc(n_records, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	for (uint64_t i = 0; i < n_records; i++)
		snprintf(paths[i], sizeof(paths[i]), "/etc/shadow-%" PRIu64, i + 1);
	return 0;
}

/* Record i (0-based): seq i + 1, its own path, 1 µs after the one before. */
static inline void fill(struct record *rec, uint64_t i)
{
	*rec = template_rec;
	rec->seq = i + 1;
	rec->mono_ns = mono_base + i * 1000;
	rec->fs.path = paths[i];
	rec->fs.path_len = strlen(paths[i]);
}

/* ---- measuring ------------------------------------------------------------- */

struct meter {
	double wall0;
	double cpu0;
};

static double wall_s(void)
{
	return (double)mono_now_ns() / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void meter_start(struct meter *m)
{
	m->cpu0 = cpu_s();
	m->wall0 = wall_s();
}

/* What one destination of one case got. */
struct tally {
	uint64_t generated, delivered, lost;
	uint64_t own_lines;	/* node log: its checkpoints and drop lines */
};

struct result {
	double secs, cpu;
	double write_secs;	/* syslog: until the last write() returned */
	double verify_secs;	/* node log: nodelog_verify(), not timed */
	struct tally t[2];	/* fan-out: [0] records file, [1] node log */
	size_t tallies;
	uint64_t loss_messages, duplicates, write_errors;
};

static void meter_stop(const struct meter *m, struct result *res, double exclude_cpu)
{
	res->secs = wall_s() - m->wall0;
	res->cpu = cpu_s() - m->cpu0 - exclude_cpu;
}

/* ---- temporary directories ------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tree(const char *dir)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_tmpdir(char *dir, size_t size)
{
	const char *base = getenv("TMPDIR");

	snprintf(dir, size, "%s/tether-bench-audit.XXXXXX", base && base[0] ? base : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "sinkbench: mkdtemp %s: %s\n", dir, strerror(errno));
		dir[0] = 0;
		return -errno;
	}
	return 0;
}

/* ---- reading back what arrived ------------------------------------------- */

/*
 * Calls `line` for every line of the file (without its newline); a last
 * line without one counts as a torn line: *torn is incremented.
 */
static int scan_lines(const char *path, void (*line)(void *ctx, const char *p, size_t len),
		      void *ctx, uint64_t *torn)
{
	struct strbuf carry = { 0 };
	size_t size = 1 << 20;
	char *buf = malloc(size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || !buf) {
		int r = fd < 0 ? -errno : -ENOMEM;

		fprintf(stderr, "sinkbench: %s: %s\n", path, strerror(-r));
		free(buf);
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((n = read(fd, buf, size)) > 0) {
		char *p = buf, *end = buf + n, *nl;

		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			if (carry.len) {
				if (sb_printf(&carry, "%.*s", (int)(nl - p), p))
					return -ENOMEM;
				line(ctx, carry.data, carry.len);
				carry.len = 0;
			} else {
				line(ctx, p, (size_t)(nl - p));
			}
			p = nl + 1;
		}
		if (p < end && sb_printf(&carry, "%.*s", (int)(end - p), p))
			return -ENOMEM;
	}
	if (carry.len)
		(*torn)++;
	sb_free(&carry);
	free(buf);
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The number after `key` in the line, 0 when it has none. */
static uint64_t number_after(const char *p, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *at = memmem(p, len, key, kl);
	uint64_t v = 0;

	if (!at)
		return 0;
	for (at += kl; at < p + len && *at >= '0' && *at <= '9'; at++)
		v = v * 10 + (uint64_t)(*at - '0');
	return v;
}

struct line_check {
	const char *seq_key;	/* NULL: count lines, no order check */
	uint64_t lines, next_seq, out_of_order;
	/* node log */
	bool nodelog;
	uint64_t own_lines, write_failed_said, max_bytes_drops, strange;
};

#define RECORD_PREFIX	"{\"schema_version\":3,\"seq\":"

static void check_line(void *ctx, const char *p, size_t len)
{
	struct line_check *c = ctx;
	uint64_t seq;

	if (c->nodelog && (len < sizeof(RECORD_PREFIX) - 1 ||
			   memcmp(p, RECORD_PREFIX, sizeof(RECORD_PREFIX) - 1))) {
		/* the log's own line: a checkpoint or a drop line, never a record */
		c->own_lines++;
		if (memmem(p, len, "\"kind\":\"node_log_dropped\"", 25)) {
			if (memmem(p, len, "\"reason\":\"max_bytes\"", 20))
				c->max_bytes_drops++;
			c->write_failed_said += number_after(p, len, "\"records\":");
		} else if (!memmem(p, len, "\"kind\":\"checkpoint\"", 19)) {
			c->strange++;
		}
		return;
	}
	if (len < 2 || p[0] != '{' || p[len - 1] != '}') {
		c->strange++;
		return;
	}
	c->lines++;
	if (!c->seq_key)
		return;
	seq = number_after(p, len, c->seq_key);
	if (seq != c->next_seq)
		c->out_of_order++;
	c->next_seq = seq + 1;
}

static int check_file(const char *path, struct line_check *c)
{
	uint64_t torn = 0;
	int r = scan_lines(path, check_line, c, &torn);

	c->strange += torn;
	return r;
}

/* ---- the cases ------------------------------------------------------------- */

static const char *tmp;	/* the case's directory */

static int open_file(const char *name, char *path, size_t size)
{
	int fd;

	snprintf(path, size, "%s/%s", tmp, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		fprintf(stderr, "sinkbench: %s: %s\n", path, strerror(errno));
	return fd < 0 ? -errno : fd;
}

static bool file_ok(const char *what, const char *path, struct line_check *c)
{
	if (check_file(path, c))
		return false;
	if (c->out_of_order || c->strange) {
		fprintf(stderr, "sinkbench: %s: %s: %" PRIu64 " lines out of seq order, %" PRIu64
				" not a record\n", what, path, c->out_of_order, c->strange);
		return false;
	}
	return true;
}

static int run_baseline(struct result *res)
{
	size_t ring = n_records < BASELINE_RING ? (size_t)n_records : BASELINE_RING;
	struct strbuf *lines = calloc(ring, sizeof(*lines));
	struct line_check c = { 0 };
	char path[4096];
	struct meter m;
	uint64_t errors = 0;
	int fd, r = 0;

	if (!lines)
		return -ENOMEM;
	/* the bytes the jsonl sink would write for these records, with a "time" fixed now */
	for (size_t i = 0; i < ring; i++) {
		struct record rec;

		fill(&rec, i);
		rec.real_ns = record_real_ns(&rec);
		if (sink_jsonl_encode(&rec, &lines[i]) || sb_printf(&lines[i], "\n")) {
			r = -ENOMEM;
			goto out;
		}
	}
	fd = open_file("baseline.jsonl", path, sizeof(path));
	if (fd < 0) {
		r = fd;
		goto out;
	}
	meter_start(&m);
	for (uint64_t i = 0; i < n_records; i++) {
		const struct strbuf *l = &lines[i % ring];

		if (write(fd, l->data, l->len) != (ssize_t)l->len)
			errors++;
	}
	if (close(fd) < 0)
		errors++;
	meter_stop(&m, res, 0);
	res->tallies = 1;
	res->t[0] = (struct tally){ .generated = n_records, .lost = errors };
	if (!file_ok("baseline", path, &c)) {
		r = -EIO;
		goto out;
	}
	res->t[0].delivered = c.lines;
out:
	for (size_t i = 0; i < ring; i++)
		sb_free(&lines[i]);
	free(lines);
	return r;
}

/* A records file of lines: jsonl or OCSF. */
static int run_lines(struct result *res, const char *name,
		     int (*encode)(const struct record *rec, struct strbuf *out),
		     const char *seq_key)
{
	struct line_check c = { .seq_key = seq_key, .next_seq = 1 };
	struct sink *sink;
	char path[4096];
	struct meter m;
	uint64_t errors = 0;
	int fd = open_file(name, path, sizeof(path));

	if (fd < 0)
		return fd;
	if (sink_lines_open(fd, true, name, encode, &sink)) {
		close(fd);
		return -ENOMEM;
	}
	meter_start(&m);
	for (uint64_t i = 0; i < n_records; i++) {
		struct record rec;

		fill(&rec, i);
		if (sink_write(sink, &rec))
			errors++;
		if ((i + 1) % FLUSH_EVERY == 0)
			sink_flush(sink);
	}
	if (sink_close(sink))
		errors += errors ? 0 : 1;	/* the first error again, or close's own */
	meter_stop(&m, res, 0);
	res->tallies = 1;
	res->t[0] = (struct tally){ .generated = n_records, .lost = errors };
	if (!file_ok(name, path, &c))
		return -EIO;
	res->t[0].delivered = c.lines;
	return 0;
}

static int run_jsonl(struct result *res)
{
	return run_lines(res, "records.jsonl", sink_jsonl_encode, "\"seq\":");
}

static int run_ocsf(struct result *res)
{
	return run_lines(res, "records.ocsf.jsonl", ocsf_encode, "\"sequence\":");
}

static int open_nodelog(struct sink **out, char *dir, size_t dir_size, char *key, size_t key_size)
{
	struct nodelog_options o;
	char why[512] = "";
	int r;

	snprintf(dir, dir_size, "%s/audit", tmp);
	snprintf(key, key_size, "%s/node-log.key", tmp);
	o = (struct nodelog_options){ .dir = dir, .key_path = key, .host = host,
				      .boot_id = boot_id };
	r = sink_nodelog_open(&o, out, why, sizeof(why));
	if (r)
		fprintf(stderr, "sinkbench: node log: %s (%s)\n", why, strerror(-r));
	return r;
}

struct log_file {
	unsigned long long index;	/* node.log.<index>; ULLONG_MAX: node.log, written last */
	char *path;
};

static int cmp_log_files(const void *a, const void *b)
{
	const struct log_file *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/* The node log's files in DIR, oldest first: node.log.1, node.log.2, ..., node.log. */
static int list_nodelog(const char *dir, struct log_file **out, size_t *out_count)
{
	struct log_file *files = NULL;
	size_t count = 0, cap = 0, base = strlen(NODELOG_FILE);
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		unsigned long long index = ~0ull;
		char *end;

		if (strncmp(e->d_name, NODELOG_FILE, base))
			continue;
		if (e->d_name[base]) {
			if (e->d_name[base] != '.' || e->d_name[base + 1] < '1' ||
			    e->d_name[base + 1] > '9')
				continue;
			index = strtoull(e->d_name + base + 1, &end, 10);
			if (*end)
				continue;
		}
		if (count == cap) {
			struct log_file *bigger = realloc(files, (cap = cap * 2 + 16) * sizeof(*files));

			if (!bigger)
				goto oom;
			files = bigger;
		}
		files[count].index = index;
		if (asprintf(&files[count].path, "%s/%s", dir, e->d_name) < 0)
			goto oom;
		count++;
	}
	closedir(d);
	qsort(files, count, sizeof(*files), cmp_log_files);
	*out = files;
	*out_count = count;
	return 0;
oom:
	closedir(d);
	for (size_t i = 0; i < count; i++)
		free(files[i].path);
	free(files);
	return -ENOMEM;
}

/*
 * The node log's files in log order, counted and checked (records in seq
 * order, each once), then verified by nodelog_verify() (timed apart).
 */
static int check_nodelog(const char *dir, const char *key, struct tally *t, double *verify_secs)
{
	struct line_check c = { .seq_key = "\"seq\":", .next_seq = 1, .nodelog = true };
	struct log_file *files = NULL;
	const char **names;
	size_t count = 0;
	FILE *devnull;
	int r = list_nodelog(dir, &files, &count);

	if (r)
		return r;
	names = calloc(count + 1, sizeof(*names));
	if (!names)
		r = -ENOMEM;
	for (size_t i = 0; i < count && !r; i++) {
		names[i] = files[i].path;
		r = check_file(files[i].path, &c);
	}
	if (!r && (c.out_of_order || c.strange || c.max_bytes_drops)) {
		fprintf(stderr, "sinkbench: node log: %" PRIu64 " records out of seq order, %" PRIu64
				" lines neither records nor the log's own, %" PRIu64
				" drops by max_bytes (records removed: run fewer)\n",
			c.out_of_order, c.strange, c.max_bytes_drops);
		r = -EIO;
	}
	if (!r) {
		struct nodelog_verify_options vo = { .key_path = key, .quiet = true };
		double t0 = wall_s();
		int v = -errno;

		devnull = fopen("/dev/null", "we");
		if (devnull) {
			v = nodelog_verify(&vo, names, count, devnull, stderr);
			fclose(devnull);
		}
		*verify_secs = wall_s() - t0;
		if (v != 0) {
			fprintf(stderr, "sinkbench: node log: nodelog_verify says %d, not 0 (verified)\n",
				v);
			r = -EIO;
		}
	}
	t->delivered = c.lines;
	t->own_lines = c.own_lines;
	for (size_t i = 0; i < count; i++)
		free(files[i].path);
	free(files);
	free(names);
	return r;
}

static int run_nodelog(struct result *res)
{
	char dir[4096], key[4096];
	struct sink *sink;
	struct meter m;
	uint64_t lost;
	int r = open_nodelog(&sink, dir, sizeof(dir), key, sizeof(key));

	if (r)
		return r;
	meter_start(&m);
	for (uint64_t i = 0; i < n_records; i++) {
		struct record rec;

		fill(&rec, i);
		sink_write(sink, &rec);
		if ((i + 1) % FLUSH_EVERY == 0)
			sink_flush(sink);
	}
	sink_flush(sink);
	/* close writes the close checkpoint: whatever it loses is counted here first */
	lost = sink_nodelog_lost(sink);
	r = sink_close(sink);
	meter_stop(&m, res, 0);
	if (r)
		fprintf(stderr, "sinkbench: node log: close: %s\n", strerror(-r));
	res->tallies = 1;
	res->t[0] = (struct tally){ .generated = n_records, .lost = lost };
	return check_nodelog(dir, key, &res->t[0], &res->verify_secs) ?: r;
}

/* ---- syslog-unix: the sink and our collector -------------------------------- */

struct range {
	uint64_t first, last;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

static int ranges_add(struct ranges *rs, uint64_t first, uint64_t last)
{
	if (rs->n == rs->cap) {
		struct range *bigger = realloc(rs->v, (rs->cap = rs->cap * 2 + 16) * sizeof(*rs->v));

		if (!bigger)
			return -ENOMEM;
		rs->v = bigger;
	}
	rs->v[rs->n++] = (struct range){ first, last };
	return 0;
}

struct collector {
	int fd;
	pthread_t thread;
	atomic_bool stop;
	/* the thread's own until joined */
	uint64_t records, loss_messages, lost, duplicates, last_id, bad;
	struct ranges gaps, losses;	/* ids never received; ids audit_loss named */
	bool oom;
};

static void collect(struct collector *c, const char *msg, size_t len)
{
	uint64_t id = number_after(msg, len, "[" SYSLOG_SD_ID " id=\"");

	if (!id) {
		c->bad++;
		return;
	}
	if (id <= c->last_id) {
		c->duplicates++;	/* at least once: a resent batch */
		return;
	}
	if (id > c->last_id + 1 && ranges_add(&c->gaps, c->last_id + 1, id - 1))
		c->oom = true;
	c->last_id = id;
	if (memmem(msg, len, " audit_loss [", 13)) {
		c->loss_messages++;
		c->lost += number_after(msg, len, " lost=\"");
		if (ranges_add(&c->losses, number_after(msg, len, "\"first_id\":"),
			       number_after(msg, len, "\"last_id\":")))
			c->oom = true;
	} else if (memmem(msg, len, " fs [", 5)) {
		c->records++;
	} else {
		c->bad++;
	}
}

static void *collector_main(void *arg)
{
	struct collector *c = arg;
	static char buf[SYSLOG_MSG_MAX + 1];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n >= 0) {
			collect(c, buf, (size_t)n);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			c->bad++;
			break;
		}
		/* the queue is empty: done only once the sink has closed */
		if (atomic_load(&c->stop))
			break;
		poll(&(struct pollfd){ .fd = c->fd, .events = POLLIN }, 1, 20);
	}
	return NULL;
}

static int collector_start(struct collector *c, const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int big = 32 << 20;

	if (strlen(path) >= sizeof(un.sun_path))
		return -ENAMETOOLONG;
	strcpy(un.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* as a collector would: a deep queue (SO_RCVBUFFORCE as root, else what is allowed) */
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (bind(c->fd, (struct sockaddr *)&un, sizeof(un)) < 0) {
		int r = -errno;

		close(c->fd);
		return r;
	}
	atomic_store(&c->stop, false);
	if (pthread_create(&c->thread, NULL, collector_main, c)) {
		close(c->fd);
		return -EAGAIN;
	}
	return 0;
}

static double thread_cpu_s(pthread_t t)
{
	clockid_t id;
	struct timespec ts;

	if (pthread_getcpuclockid(t, &id) || clock_gettime(id, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every id the collector never got is one an audit_loss message named, and only those. */
static bool collector_ids_ok(struct collector *c)
{
	bool ok = !c->oom && !c->bad && c->gaps.n == c->losses.n;

	for (size_t i = 0; ok && i < c->gaps.n; i++)
		ok = c->gaps.v[i].first == c->losses.v[i].first &&
		     c->gaps.v[i].last == c->losses.v[i].last;
	if (!ok)
		fprintf(stderr, "sinkbench: syslog: ids: %zu gaps, %zu audit_loss ranges, %" PRIu64
				" malformed datagrams: a gap no loss message names, or the reverse\n",
			c->gaps.n, c->losses.n, c->bad);
	/* every record took an id, and so did every loss message: none is missing at the end */
	if (ok && c->last_id != n_records + c->loss_messages) {
		fprintf(stderr, "sinkbench: syslog: the last id received is %" PRIu64 ", not %" PRIu64
				" (the records and the loss messages)\n",
			c->last_id, n_records + c->loss_messages);
		ok = false;
	}
	return ok;
}

static int run_syslog(struct result *res)
{
	struct collector c = { .fd = -1 };
	char sock[4096], spool[4096];
	struct syslog_options o;
	struct sink *sink;
	struct meter m;
	double collector_cpu0, collector_cpu;
	uint64_t errors = 0;
	int r;

	snprintf(sock, sizeof(sock), "%s/collector.sock", tmp);
	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	r = collector_start(&c, sock);
	if (r) {
		fprintf(stderr, "sinkbench: syslog: collector %s: %s\n", sock, strerror(-r));
		return r;
	}
	o = (struct syslog_options){
		.name = "bench",
		.transport = SYSLOG_UNIX,
		.path = sock,
		.spool_dir = spool,
		.close_ms = SYSLOG_CLOSE_MS,
	};
	r = sink_syslog_open(&o, &sink);
	if (r) {
		fprintf(stderr, "sinkbench: syslog: open: %s\n", strerror(-r));
		goto stop;
	}
	collector_cpu0 = thread_cpu_s(c.thread);
	meter_start(&m);
	for (uint64_t i = 0; i < n_records; i++) {
		struct record rec;

		fill(&rec, i);
		if (sink_write(sink, &rec))
			errors++;
		if ((i + 1) % FLUSH_EVERY == 0)
			sink_flush(sink);
	}
	res->write_secs = wall_s() - m.wall0;
	r = sink_close(sink);
	collector_cpu = thread_cpu_s(c.thread) - collector_cpu0;
	meter_stop(&m, res, collector_cpu);
	if (r)
		fprintf(stderr, "sinkbench: syslog: close: %s\n", strerror(-r));
stop:
	atomic_store(&c.stop, true);
	pthread_join(c.thread, NULL);
	close(c.fd);
	if (r)
		goto out;
	res->tallies = 1;
	/*
	 * A write() error is a record the spool dropped and counted too: an
	 * audit_loss message names it, so it is in c.lost already.
	 */
	res->t[0] = (struct tally){ .generated = n_records, .delivered = c.records, .lost = c.lost };
	res->write_errors = errors;
	res->loss_messages = c.loss_messages;
	res->duplicates = c.duplicates;
	if (!collector_ids_ok(&c))
		r = -EIO;
out:
	free(c.gaps.v);
	free(c.losses.v);
	return r;
}

/* ---- the daemon's shape ------------------------------------------------------ */

static int run_fanout(struct result *res)
{
	struct line_check c = { .seq_key = "\"seq\":", .next_seq = 1 };
	char dir[4096], key[4096], path[4096];
	struct sink *nodelog, *own, *fan;
	struct meter m;
	uint64_t errors = 0, lost;
	int fd, r;

	r = open_nodelog(&nodelog, dir, sizeof(dir), key, sizeof(key));
	if (r)
		return r;
	fd = open_file("records.jsonl", path, sizeof(path));
	if (fd < 0 || sink_jsonl_open(fd, true, &own) ||
	    sink_fanout_open(own, &nodelog, 1, &fan)) {
		fprintf(stderr, "sinkbench: fan-out: cannot open\n");
		return -ENOMEM;
	}
	meter_start(&m);
	for (uint64_t i = 0; i < n_records; i++) {
		struct record rec;

		fill(&rec, i);
		if (sink_write(fan, &rec))
			errors++;
		if ((i + 1) % FLUSH_EVERY == 0)
			sink_flush(fan);
	}
	/* the run ends: its fan-out closes its records file; the node log lives on, then stops */
	if (sink_close(fan))
		errors += errors ? 0 : 1;
	lost = sink_nodelog_lost(nodelog);
	r = sink_close(nodelog);
	meter_stop(&m, res, 0);
	if (r)
		fprintf(stderr, "sinkbench: fan-out: node log close: %s\n", strerror(-r));
	res->tallies = 2;
	res->t[0] = (struct tally){ .generated = n_records, .lost = errors };
	res->t[1] = (struct tally){ .generated = n_records, .lost = lost };
	if (!file_ok("fan-out", path, &c))
		return -EIO;
	res->t[0].delivered = c.lines;
	return check_nodelog(dir, key, &res->t[1], &res->verify_secs) ?: r;
}

/* ---- the driver ------------------------------------------------------------ */

struct bench_case {
	const char *name;
	const char *rows[2];	/* a name per tally */
	int (*run)(struct result *res);
	bool skip;
	struct result res[MAX_REPS];
};

static struct bench_case cases[] = {
	{ .name = "baseline", .rows = { "write(2) of the lines (baseline)" }, .run = run_baseline },
	{ .name = "jsonl", .rows = { "jsonl file" }, .run = run_jsonl },
	{ .name = "ocsf", .rows = { "OCSF file" }, .run = run_ocsf },
	{ .name = "nodelog", .rows = { "node log" }, .run = run_nodelog },
	{ .name = "syslog", .rows = { "syslog-unix (spool + sender)" }, .run = run_syslog },
	{ .name = "fanout", .rows = { "fan-out: records file", "fan-out: node log" },
	  .run = run_fanout },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static double median_of(const struct bench_case *bc, size_t reps, double (*get)(const struct result *))
{
	double v[MAX_REPS];

	for (size_t i = 0; i < reps; i++)
		v[i] = get(&bc->res[i]);
	qsort(v, reps, sizeof(v[0]), bench_cmp_double);
	return v[reps / 2];
}

static double get_secs(const struct result *r) { return r->secs; }
static double get_cpu(const struct result *r) { return r->cpu; }
static double get_write_secs(const struct result *r) { return r->write_secs; }
static double get_verify_secs(const struct result *r) { return r->verify_secs; }

/* The repetition whose time is the median: its counts are the ones shown. */
static const struct result *median_rep(const struct bench_case *bc, size_t reps)
{
	double m = median_of(bc, reps, get_secs);

	for (size_t i = 0; i < reps; i++)
		if (bc->res[i].secs == m)
			return &bc->res[i];
	return &bc->res[0];
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-n RECORDS] [-r REPETITIONS] [-c CASE,...]\n"
			"  RECORDS: per case and repetition (default 1000000)\n"
			"  REPETITIONS: 1..%d (default 5, 3 from 1000000 records on)\n"
			"  CASE: jsonl, ocsf, nodelog, syslog, fanout (default all; the baseline "
			"always runs)\n",
		argv0, MAX_REPS);
}

static void fmt_count(uint64_t v, char *buf, size_t size)
{
	char digits[32];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, v), o = 0;

	for (size_t i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
}

int main(int argc, char **argv)
{
	size_t reps = 0;
	uint64_t unaccounted_total = 0;
	bool failed = false;
	char date[32], nl_rate[32];
	struct utsname uts;
	time_t now = time(NULL);
	double base_secs;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:c:h")) != -1) {
		char *end;

		switch (opt) {
		case 'n':
			errno = 0;
			n_records = strtoull(optarg, &end, 10);
			if (errno || *end || n_records < 1000 || n_records > 100000000) {
				fprintf(stderr, "sinkbench: -n: 1000..100000000 records\n");
				return 2;
			}
			break;
		case 'r':
			reps = strtoul(optarg, &end, 10);
			if (*end || reps < 1 || reps > MAX_REPS) {
				usage(argv[0]);
				return 2;
			}
			break;
		case 'c':
			/* the baseline always runs: every ratio is against it */
			for (size_t k = 1; k < NCASES; k++) {
				size_t len = strlen(cases[k].name);
				const char *at = strstr(optarg, cases[k].name);

				cases[k].skip = !at || (at != optarg && at[-1] != ',') ||
						(at[len] && at[len] != ',');
			}
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (!reps)
		reps = n_records >= 1000000 ? 3 : 5;
	if (geteuid() != 0)
		fprintf(stderr, "sinkbench: not root: the node log refuses a key file that is not "
				"root's, so its cases will fail\n");
	if (make_template()) {
		fprintf(stderr, "sinkbench: cannot build the records\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
	if (uname(&uts) < 0)
		strcpy(uts.release, "?");
	{
		struct strbuf sample = { 0 };
		struct record rec;

		fill(&rec, 0);
		sink_jsonl_encode(&rec, &sample);
		printf("audit stream benchmark: %" PRIu64 " denial records per case, %zu repetitions "
		       "(cases interleaved, every other repetition reversed)\n", n_records, reps);
		printf("  date %s, kernel %s, %ld CPUs online; one producer thread\n", date,
		       uts.release, sysconf(_SC_NPROCESSORS_ONLN));
		printf("  a record's JSON line: %zu bytes (+1 newline), e.g.\n  %s\n", sample.len,
		       sample.data);
		sb_free(&sample);
	}

	for (size_t rep = 0; rep < reps && !failed; rep++) {
		for (size_t k = 0; k < NCASES && !failed; k++) {
			struct bench_case *bc = &cases[rep % 2 ? NCASES - 1 - k : k];
			char dir[4096];
			int r;

			if (bc->skip)
				continue;
			if (make_tmpdir(dir, sizeof(dir))) {
				failed = true;
				break;
			}
			tmp = dir;
			r = bc->run(&bc->res[rep]);
			rm_tree(dir);
			if (r) {
				fprintf(stderr, "sinkbench: %s, repetition %zu: %s\n", bc->name, rep + 1,
					strerror(-r));
				failed = true;
				break;
			}
			for (size_t t = 0; t < bc->res[rep].tallies; t++) {
				const struct tally *ty = &bc->res[rep].t[t];
				uint64_t acc = ty->delivered + ty->lost;
				uint64_t un = ty->generated > acc ? ty->generated - acc : acc - ty->generated;

				if (un) {
					fprintf(stderr, "sinkbench: %s, repetition %zu: generated %" PRIu64
							", delivered %" PRIu64 ", lost %" PRIu64
							": %" PRIu64 " unaccounted\n",
						bc->rows[t], rep + 1, ty->generated, ty->delivered,
						ty->lost, un);
					unaccounted_total += un;
				}
			}
			fprintf(stderr, "  rep %zu %-8s %7.3f s\n", rep + 1, bc->name,
				bc->res[rep].secs);
		}
	}
	if (failed) {
		fprintf(stderr, "sinkbench: could not measure\n");
		return 1;
	}

	base_secs = median_of(&cases[0], reps, get_secs);
	printf("\n| sink | records/s | time × baseline | CPU s / 100k records | generated | "
	       "delivered | lost (counted) | unaccounted |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	nl_rate[0] = 0;
	for (size_t k = 0; k < NCASES; k++) {
		const struct bench_case *bc = &cases[k];
		const struct result *mr = median_rep(bc, reps);
		double secs = median_of(bc, reps, get_secs);

		if (bc->skip)
			continue;
		double cpu = median_of(bc, reps, get_cpu);

		for (size_t t = 0; t < mr->tallies; t++) {
			const struct tally *ty = &mr->t[t];
			uint64_t un = 0;
			char rate[32], g[32], d[32], l[32];

			for (size_t rep = 0; rep < reps; rep++) {
				const struct tally *x = &bc->res[rep].t[t];
				uint64_t acc = x->delivered + x->lost;

				un += x->generated > acc ? x->generated - acc : acc - x->generated;
			}
			fmt_count((uint64_t)((double)ty->delivered / secs + 0.5), rate, sizeof(rate));
			fmt_count(ty->generated, g, sizeof(g));
			fmt_count(ty->delivered, d, sizeof(d));
			fmt_count(ty->lost, l, sizeof(l));
			printf("| %s | %s | %s%.2f | %.3f | %s | %s | %s | %" PRIu64 " |\n", bc->rows[t],
			       rate, t ? "(same run) " : "", secs / base_secs, cpu / (double)n_records * 1e5,
			       g, d, l, un);
			if (!strcmp(bc->name, "nodelog"))
				snprintf(nl_rate, sizeof(nl_rate), "%.0f", (double)ty->delivered / secs);
		}
	}
	printf("\n  records/s: delivered records over the median time of %zu repetitions; CPU: "
	       "median of getrusage(RUSAGE_SELF) user+sys\n  over the timed part (the syslog "
	       "sender thread's included, the collector's excluded); counts: the median "
	       "repetition's;\n  unaccounted: generated - delivered - lost, summed over every "
	       "repetition\n", reps);
	for (size_t k = 0; k < NCASES; k++) {
		const struct bench_case *bc = &cases[k];
		const struct result *mr = median_rep(bc, reps);

		if (bc->skip)
			continue;
		if (!strcmp(bc->name, "syslog"))
			printf("  syslog-unix: write() of every record returned after %.3f s (median; "
			       "%.0f records/s into the spool); %" PRIu64 " audit_loss messages, %"
			       PRIu64 " duplicate datagrams, %" PRIu64 " write() errors\n",
			       median_of(bc, reps, get_write_secs),
			       (double)n_records / median_of(bc, reps, get_write_secs),
			       mr->loss_messages, mr->duplicates, mr->write_errors);
		if (!strcmp(bc->name, "nodelog"))
			printf("  node log: %" PRIu64 " lines of its own (checkpoints); "
			       "nodelog_verify: 0 (verified) in %.3f s (median, not timed)\n",
			       mr->t[0].own_lines, median_of(bc, reps, get_verify_secs));
	}
	if (!cases[3].skip)
		printf("  target: node log at least 500,000 records/s on one core, 0 unaccounted: %s "
		       "(%s records/s)\n",
		       atof(nl_rate) >= TARGET_NODELOG_RATE && !unaccounted_total ? "PASS" : "MISS",
		       nl_rate);
	if (unaccounted_total) {
		fprintf(stderr, "sinkbench: %" PRIu64 " records unaccounted\n", unaccounted_total);
		return 1;
	}
	return 0;
}
