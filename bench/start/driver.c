// SPDX-License-Identifier: GPL-2.0
/*
 * bench-start driver (see bench/README.md), built statically and run in the
 * test VM and on the build host.
 *
 *   driver -p PROBE -t TRUE [-n ROUNDS] [-w WARMUP] [-b BWRAP]
 *          [-T TETHER -a AUDIT_DIR -e LABEL=ENVELOPE...] [-c CONTEXT] [-x NOTE...]
 *
 * Launchers, one row each:
 *
 *   plain    fork + exec of the command itself: the baseline
 *   bwrap    BWRAP --unshare-all --die-with-parent --new-session --ro-bind / /
 *            --dev /dev --proc /proc --tmpfs /tmp -- COMMAND   (-b)
 *   LABEL    TETHER run --envelope ENVELOPE --run-id ID --audit FILE -- COMMAND
 *            (-e, repeatable; FILE is in AUDIT_DIR, one per run)
 *
 * Two measurements per launcher and round:
 *
 *   start    COMMAND is PROBE (bench/start/startprobe), which writes the
 *            CLOCK_MONOTONIC time of the first action of its main() to
 *            stdout; the start latency is that time minus the driver's
 *            CLOCK_MONOTONIC just before fork() of the launcher
 *   full     COMMAND is TRUE (/bin/true); the time from just before fork()
 *            to just after waitpid() returned: the whole run, the
 *            launcher's teardown included
 *
 * and for tether rows the run setup: the "setup_us" field of the run's
 * "start" audit record (tether's time from its entry to just before clone3
 * of the command), over the start and the full runs of the row.  A tether
 * whose start record has no such field gets "n/a", not an error.
 *
 * WARMUP rounds (default 5) are run and discarded, then ROUNDS (default
 * 200).  Within a round the start runs come first, then the full runs, and
 * the launchers take turns in an order rotated by one each round, so that a
 * drift of the machine's speed, and whatever a launcher leaves behind for
 * the next one, falls on all of them alike.
 *
 * Prints one table: median and p99 (nearest rank) of each measurement in
 * us, the ratios of the medians to plain's and to bwrap's, the setup's
 * median and p99, then MET or MISS for each target (tether's start latency
 * at most half of bwrap's; setup median under 2 ms) and the NOTEs.  Also
 * one line per launcher and measurement for the logs:
 *
 *   bench-start raw label=L what=start|full|setup n=N median_ns=X p90_ns=Y
 *             p99_ns=Z min_ns=W max_ns=V
 *
 * Exits 0 whatever the figures, 1 when a run failed (a launcher's exit
 * status other than 0, a probe that wrote no time), 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/stats.h"

#define MAX_ROUNDS	100000
#define MAX_WARMUP	1000
#define MAX_ROWS	8
/* Targets (issue 6, item 7). */
#define TARGET_START_VS_BWRAP	0.50	/* tether's start latency / bwrap's, medians */
#define TARGET_FULL_VS_BWRAP	0.50	/* tether's whole run / bwrap's, medians (issue 18) */
#define TARGET_SETUP_US		5000.0	/* tether's setup_us, median (issue 18: under TCG) */

enum launcher { PLAIN, BWRAP, TETHER };
enum what { START, FULL };

struct row {
	const char *label;
	enum launcher launcher;
	const char *envelope;	/* TETHER */
	double *start_ns, *full_ns, *setup_ns;	/* ROUNDS, ROUNDS, 2 * ROUNDS samples */
	size_t setup_count;
	bool setup_missing;	/* a start record without setup_us */
	char *unenforced;	/* the first start record's "unenforced" list, as JSON */
	unsigned long denials;	/* audit records with "decision":"deny" */
	char *first_denial;	/* the first of them, for the report */
};

struct opts {
	const char *probe, *true_cmd, *bwrap, *tether, *audit_dir, *context;
	const char *notes[16];
	size_t note_count;
	unsigned long rounds, warmup;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *what_name(enum what what)
{
	return what == START ? "start" : "full";
}

/*
 * The "start" record of a run's audit file: its setup_us (< 0 when absent)
 * and, the first time, its "unenforced" list; denials are counted.
 * Returns 0, or -1 when the file cannot be read or has no start record.
 */
static int read_audit(struct row *row, const char *path, double *setup_us)
{
	char line[8192];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "bench-start: reading the audit file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	*setup_us = -1;
	while (fgets(line, sizeof(line), f)) {
		const char *p;

		if (strstr(line, "\"decision\":\"deny\"")) {
			row->denials++;
			if (!row->first_denial)
				row->first_denial = strndup(line, strcspn(line, "\n"));
		}
		if (found || !strstr(line, "\"event\":\"start\""))
			continue;
		found = true;
		p = strstr(line, "\"setup_us\":");
		if (p) {
			char *end;
			double v = strtod(p + strlen("\"setup_us\":"), &end);

			if (end != p + strlen("\"setup_us\":") && v >= 0)
				*setup_us = v;
		}
		p = strstr(line, "\"unenforced\":[");
		if (p && !row->unenforced) {
			const char *close = strchr(p, ']');

			p += strlen("\"unenforced\":");
			if (close)
				row->unenforced = strndup(p, (size_t)(close - p + 1));
		}
	}
	fclose(f);
	if (!found)
		fprintf(stderr, "bench-start: %s holds no start record\n", path);
	return found ? 0 : -1;
}

/*
 * One run of `row`'s launcher with PROBE (START) or TRUE (FULL).  Stores the
 * start latency or the full run's time in *ns, and for tether the setup in
 * *setup_us (< 0 when not reported).  Returns 0, or -1 with a message.
 */
static int launch(const struct opts *o, struct row *row, enum what what, unsigned long round,
		  bool warm, double *ns, double *setup_us)
{
	const char *cmd = what == START ? o->probe : o->true_cmd;
	char run_id[96], audit[4096], out[64];
	const char *argv[24];
	size_t argc = 0, got = 0;
	int pipefd[2] = { -1, -1 }, status;
	uint64_t t0, t1, probe_ns = 0;
	pid_t pid;

	*setup_us = -1;
	switch (row->launcher) {
	case PLAIN:
		break;
	case BWRAP:
		/*
		 * Comparable isolation, as root (see bench/README.md): new user,
		 * ipc, pid, net, uts and cgroup namespaces, a new mount
		 * namespace with a read-only view of the host's tree, a fresh
		 * /dev, /proc and a private /tmp, a new session, and the sandbox
		 * dies with its parent.
		 */
		for (const char *const *a = (const char *const[]){ o->bwrap, "--unshare-all",
								    "--die-with-parent",
								    "--new-session", "--ro-bind",
								    "/", "/", "--dev", "/dev",
								    "--proc", "/proc", "--tmpfs",
								    "/tmp", "--", NULL };
		     *a; a++)
			argv[argc++] = *a;
		break;
	case TETHER:
		snprintf(run_id, sizeof(run_id), "bs-%s-%s%lu-%s", row->label, warm ? "w" : "",
			 round, what_name(what));
		for (char *c = run_id; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '-' || *c == '.'))
				*c = '_';
		snprintf(audit, sizeof(audit), "%s/%s.audit", o->audit_dir, run_id);
		unlink(audit);
		for (const char *const *a = (const char *const[]){ o->tether, "run", "--envelope",
								    row->envelope, "--run-id",
								    run_id, "--audit", audit,
								    "--", NULL };
		     *a; a++)
			argv[argc++] = *a;
		break;
	}
	argv[argc++] = cmd;
	argv[argc] = NULL;

	if (what == START && pipe2(pipefd, O_CLOEXEC) < 0) {
		fprintf(stderr, "bench-start: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-start: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    dup2(what == START ? pipefd[1] : null, STDOUT_FILENO) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "bench-start: cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (what == START) {
		ssize_t n;

		close(pipefd[1]);
		/* Until EOF: the launcher and the probe both hold the pipe. */
		while ((n = read(pipefd[0], out + got, sizeof(out) - 1 - got)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				break;
			got += (size_t)n;
			if (got == sizeof(out) - 1)
				got = 0;	/* garbage: keep draining; the parse below fails */
		}
		close(pipefd[0]);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "bench-start: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	t1 = now_ns();
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-start: %s %s round %s%lu: %s %s %d\n", row->label,
			what_name(what), warm ? "(warm-up) " : "", round, argv[0],
			WIFEXITED(status) ? "exited" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		if (row->launcher == TETHER)
			fprintf(stderr, "bench-start: its audit file: %s\n", audit);
		return -1;
	}
	if (what == START) {
		char *end;

		out[got] = 0;
		errno = 0;
		probe_ns = strtoull(out, &end, 10);
		if (errno || end == out || *end != '\n' || end[1] || probe_ns <= t0) {
			fprintf(stderr, "bench-start: %s start round %lu: the probe wrote no "
					"time after the fork ('%s')\n",
				row->label, round, out);
			return -1;
		}
		*ns = (double)(probe_ns - t0);
	} else {
		*ns = (double)(t1 - t0);
	}
	if (row->launcher == TETHER) {
		if (read_audit(row, audit, setup_us))
			return -1;
		unlink(audit);
	}
	return 0;
}

static void sort_samples(double *samples, size_t n)
{
	qsort(samples, n, sizeof(*samples), bench_cmp_double);
}

static double median_of(const double *sorted, size_t n)
{
	return bench_percentile(sorted, n, 50);
}

static void raw_line(const char *label, const char *what, const double *sorted, size_t n)
{
	if (!n)
		return;
	printf("bench-start raw label=%s what=%s n=%zu median_ns=%.0f p90_ns=%.0f p99_ns=%.0f "
	       "min_ns=%.0f max_ns=%.0f\n",
	       label, what, n, bench_percentile(sorted, n, 50), bench_percentile(sorted, n, 90),
	       bench_percentile(sorted, n, 99), sorted[0], sorted[n - 1]);
}

static void print_ratio(double x, bool have)
{
	if (have)
		printf(" %7.2f", x);
	else
		printf(" %7s", "-");
}

static void report(const struct opts *o, struct row *rows, size_t nrows)
{
	struct row *plain = &rows[0], *bwrap = NULL;
	unsigned int met = 0, miss = 0;
	struct utsname u;
	char date[32];
	time_t t = time(NULL);

	for (size_t i = 0; i < nrows; i++) {
		sort_samples(rows[i].start_ns, o->rounds);
		sort_samples(rows[i].full_ns, o->rounds);
		sort_samples(rows[i].setup_ns, rows[i].setup_count);
		if (rows[i].launcher == BWRAP)
			bwrap = &rows[i];
	}
	for (size_t i = 0; i < nrows; i++) {
		raw_line(rows[i].label, "start", rows[i].start_ns, o->rounds);
		raw_line(rows[i].label, "full", rows[i].full_ns, o->rounds);
		raw_line(rows[i].label, "setup", rows[i].setup_ns, rows[i].setup_count);
	}

	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&t));
	printf("bench-start  kernel %s  %s  (%s; %lu rounds after %lu warm-up, launchers "
	       "interleaved)\n",
	       u.release, date, o->context, o->rounds, o->warmup);
	printf("  %-16s %-35s %-35s %s\n", "", "-------- start latency (us) --------",
	       "------ full run of true (us) ------", "-- setup (us) ----");
	printf("  %-16s %9s %9s %7s %7s %9s %9s %7s %7s %8s %8s\n", "launcher", "median", "p99",
	       "x plain", "x bwrap", "median", "p99", "x plain", "x bwrap", "median", "p99");
	for (size_t i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double sm = median_of(r->start_ns, o->rounds), fm = median_of(r->full_ns, o->rounds);

		printf("  %-16s %9.0f %9.0f", r->label, sm / 1000,
		       bench_percentile(r->start_ns, o->rounds, 99) / 1000);
		print_ratio(sm / median_of(plain->start_ns, o->rounds), true);
		print_ratio(bwrap ? sm / median_of(bwrap->start_ns, o->rounds) : 0,
			    bwrap && r != plain);
		printf(" %9.0f %9.0f", fm / 1000, bench_percentile(r->full_ns, o->rounds, 99) / 1000);
		print_ratio(fm / median_of(plain->full_ns, o->rounds), true);
		print_ratio(bwrap ? fm / median_of(bwrap->full_ns, o->rounds) : 0,
			    bwrap && r != plain);
		if (r->launcher != TETHER)
			printf(" %8s %8s\n", "-", "-");
		else if (r->setup_missing || !r->setup_count)
			printf(" %8s %8s\n", "n/a", "n/a");
		else
			printf(" %8.0f %8.0f\n", median_of(r->setup_ns, r->setup_count) / 1000,
			       bench_percentile(r->setup_ns, r->setup_count, 99) / 1000);
	}
	printf("  start: from just before fork() of the launcher to the first clock read in the "
	       "probe's main(); full: fork() of the\n"
	       "    launcher running %s to its waitpid(); setup: tether's setup_us (entry to "
	       "just before clone3 of the command)\n"
	       "    from each run's start audit record, start and full runs; x plain, x bwrap: "
	       "ratio of the medians\n",
	       o->true_cmd);

	for (size_t i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double sm = median_of(r->start_ns, o->rounds), fm;

		if (r->launcher != TETHER)
			continue;
		if (bwrap) {
			double bm = median_of(bwrap->start_ns, o->rounds),
			       pm = median_of(plain->start_ns, o->rounds), ratio = sm / bm;
			bool ok = ratio <= TARGET_START_VS_BWRAP;

			ok ? met++ : miss++;
			printf("  target %-16s start <= %.2f x bwrap's: %.2f (%.0f vs %.0f us; over "
			       "plain: +%.0f vs +%.0f us)  %s\n",
			       r->label, TARGET_START_VS_BWRAP, ratio, sm / 1000, bm / 1000,
			       (sm - pm) / 1000, (bm - pm) / 1000, ok ? "MET" : "MISS");
			fm = median_of(r->full_ns, o->rounds);
			bm = median_of(bwrap->full_ns, o->rounds);
			ok = fm / bm <= TARGET_FULL_VS_BWRAP;
			ok ? met++ : miss++;
			printf("  target %-16s full run <= %.2f x bwrap's: %.2f (%.0f vs %.0f us)  %s\n",
			       r->label, TARGET_FULL_VS_BWRAP, fm / bm, fm / 1000, bm / 1000,
			       ok ? "MET" : "MISS");
		} else {
			printf("  target %-16s start and full run <= %.2f x bwrap's: not measured (no "
			       "bwrap)\n",
			       r->label, TARGET_START_VS_BWRAP);
		}
		if (r->setup_missing || !r->setup_count) {
			printf("  target %-16s setup < %.0f ms: n/a (tether's start record has no "
			       "setup_us)\n",
			       r->label, TARGET_SETUP_US / 1000);
		} else {
			double su = median_of(r->setup_ns, r->setup_count) / 1000;
			bool ok = su < TARGET_SETUP_US;

			ok ? met++ : miss++;
			printf("  target %-16s setup < %.0f ms: median %.2f ms, %.0f %% of the start "
			       "latency  %s\n",
			       r->label, TARGET_SETUP_US / 1000, su / 1000, su * 1000 / sm * 100,
			       ok ? "MET" : "MISS");
		}
	}
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].launcher != TETHER)
			continue;
		printf("  %s: %s, unenforced (acknowledged) in its start record: %s\n",
		       rows[i].label, rows[i].envelope,
		       rows[i].unenforced ? rows[i].unenforced : "?");
		if (rows[i].denials)
			printf("  warning: %s: %lu denial records in its audit files (warm-up "
			       "included), the first:\n    %.600s\n",
			       rows[i].label, rows[i].denials, rows[i].first_denial);
	}
	for (size_t i = 0; i < o->note_count; i++)
		printf("  %s\n", o->notes[i]);
	printf("  %u MET, %u MISS\n", met, miss);
}

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || v > max)
		return -1;
	*out = v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: driver -p PROBE -t TRUE [-n ROUNDS] [-w WARMUP] [-b BWRAP]\n"
			"              [-T TETHER -a AUDIT_DIR -e LABEL=ENVELOPE...] [-c CONTEXT] "
			"[-x NOTE...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .rounds = 200, .warmup = 5, .context = "" };
	struct row rows[MAX_ROWS] = { { .label = "plain", .launcher = PLAIN } };
	size_t nrows = 1;
	int c;

	while ((c = getopt(argc, argv, "p:t:n:w:b:T:a:e:c:x:")) != -1) {
		switch (c) {
		case 'p':
			o.probe = optarg;
			break;
		case 't':
			o.true_cmd = optarg;
			break;
		case 'n':
			if (parse_count(optarg, MAX_ROUNDS, &o.rounds) || !o.rounds)
				usage();
			break;
		case 'w':
			if (parse_count(optarg, MAX_WARMUP, &o.warmup))
				usage();
			break;
		case 'b':
			o.bwrap = optarg;
			break;
		case 'T':
			o.tether = optarg;
			break;
		case 'a':
			o.audit_dir = optarg;
			break;
		case 'e': {
			char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || !eq[1] || nrows + 1 >= MAX_ROWS)
				usage();
			*eq = 0;
			rows[nrows++] = (struct row){ .label = optarg, .launcher = TETHER,
						      .envelope = eq + 1 };
			break;
		}
		case 'c':
			o.context = optarg;
			break;
		case 'x':
			if (o.note_count == sizeof(o.notes) / sizeof(o.notes[0]))
				usage();
			o.notes[o.note_count++] = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !o.probe || !o.true_cmd)
		usage();
	if (nrows > 1 && (!o.tether || !o.audit_dir))
		usage();
	/* bwrap goes second: plain is rows[0], the ratios' reference. */
	if (o.bwrap) {
		memmove(&rows[2], &rows[1], (nrows - 1) * sizeof(rows[0]));
		rows[1] = (struct row){ .label = "bwrap", .launcher = BWRAP };
		nrows++;
	}
	for (size_t i = 0; i < nrows; i++) {
		rows[i].start_ns = calloc(o.rounds, sizeof(double));
		rows[i].full_ns = calloc(o.rounds, sizeof(double));
		rows[i].setup_ns = calloc(2 * o.rounds, sizeof(double));
		if (!rows[i].start_ns || !rows[i].full_ns || !rows[i].setup_ns) {
			fprintf(stderr, "bench-start: out of memory\n");
			return 1;
		}
	}

	for (unsigned long n = 0; n < o.warmup + o.rounds; n++) {
		bool warm = n < o.warmup;
		unsigned long round = warm ? n + 1 : n - o.warmup + 1;

		for (enum what what = START; what <= FULL; what++) {
			for (size_t k = 0; k < nrows; k++) {
				struct row *r = &rows[(k + n) % nrows];
				double ns, setup_us;

				if (launch(&o, r, what, round, warm, &ns, &setup_us))
					return 1;
				if (warm)
					continue;
				(what == START ? r->start_ns : r->full_ns)[round - 1] = ns;
				if (r->launcher != TETHER)
					continue;
				if (setup_us < 0)
					r->setup_missing = true;
				else
					r->setup_ns[r->setup_count++] = setup_us * 1000;
			}
		}
	}
	report(&o, rows, nrows);
	return 0;
}
