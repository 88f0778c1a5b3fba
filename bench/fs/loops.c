// SPDX-License-Identifier: GPL-2.0
/*
 * bench-fs loop driver (see bench/README.md), built statically and run inside
 * the test VM, inside and outside tether runs.
 *
 *   loops [-b BATCHES] [-f FILE] [-l LABEL] [-r ROUND] LOOP=N...
 *   loops nop                  exits 0 at once (the program fork+exec runs)
 *
 * LOOP is one of
 *
 *   open       open(FILE, O_RDONLY) + close
 *   stat       stat(FILE)
 *   forkexec   fork + execve of this program with "nop" + waitpid
 *
 * Each loop runs one untimed warm-up batch, then BATCHES (default 11) timed
 * batches of N iterations; a batch's time (CLOCK_MONOTONIC around the whole
 * batch) divided by N is one sample.  For each loop it prints one line
 *
 *   bench-fs label=LABEL round=ROUND loop=LOOP n=N batches=B median_ns=X p90_ns=Y min_ns=Z
 *
 * (median and p90 by nearest rank over the samples; LABEL and ROUND, default
 * "-" and 0, only tag the line).  Exits 0 when every
 * loop ran, 1 when an operation failed (nothing is printed for that loop),
 * 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/stats.h"

#define DEFAULT_FILE	"/srv/bench/a/b/c/d/file"
#define MAX_BATCHES	1001

extern char **environ;

static const char *file = DEFAULT_FILE;
static char self[PATH_MAX];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int loop_open(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		int fd = open(file, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fprintf(stderr, "loops: open %s: %s\n", file, strerror(errno));
			return -1;
		}
		close(fd);
	}
	return 0;
}

static int loop_stat(unsigned long n)
{
	struct stat st;

	for (unsigned long i = 0; i < n; i++) {
		if (stat(file, &st) < 0) {
			fprintf(stderr, "loops: stat %s: %s\n", file, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int loop_forkexec(unsigned long n)
{
	char *argv[] = { "loops", "nop", NULL };

	for (unsigned long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "loops: fork: %s\n", strerror(errno));
			return -1;
		}
		if (pid == 0) {
			execve(self, argv, environ);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0) {
			fprintf(stderr, "loops: waitpid: %s\n", strerror(errno));
			return -1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "loops: exec of %s failed (status %#x)\n", self, status);
			return -1;
		}
	}
	return 0;
}

static const struct {
	const char *name;
	int (*run)(unsigned long n);
} loops[] = {
	{ "open", loop_open },
	{ "stat", loop_stat },
	{ "forkexec", loop_forkexec },
};

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long value;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	value = strtoul(s, &end, 10);
	if (errno || *end || value < 1 || value > max)
		return -1;
	*out = value;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: loops [-b BATCHES] [-f FILE] [-l LABEL] [-r ROUND] LOOP=N...\n"
			"       (LOOP: open, stat, forkexec)\n"
			"       loops nop\n");
	return 2;
}

int main(int argc, char **argv)
{
	static double samples[MAX_BATCHES];
	unsigned long batches = 11, round = 0;
	const char *label = "-";
	ssize_t len;
	int opt;

	if (argc == 2 && strcmp(argv[1], "nop") == 0)
		_exit(0);

	while ((opt = getopt(argc, argv, "b:f:l:r:")) != -1) {
		switch (opt) {
		case 'b':
			if (parse_count(optarg, MAX_BATCHES, &batches) < 0) {
				fprintf(stderr, "loops: BATCHES must be 1..%d\n", MAX_BATCHES);
				return 2;
			}
			break;
		case 'f':
			file = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "0") != 0 && parse_count(optarg, 1000, &round) < 0) {
				fprintf(stderr, "loops: ROUND must be 0..1000\n");
				return 2;
			}
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		fprintf(stderr, "loops: /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	self[len] = '\0';

	for (int a = optind; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		unsigned long n;
		size_t which;

		for (which = 0; which < sizeof(loops) / sizeof(loops[0]); which++) {
			if (eq && strlen(loops[which].name) == (size_t)(eq - argv[a]) &&
			    strncmp(loops[which].name, argv[a], eq - argv[a]) == 0)
				break;
		}
		if (which == sizeof(loops) / sizeof(loops[0]) || parse_count(eq + 1, 100000000, &n) < 0) {
			fprintf(stderr, "loops: %s: expected open=N, stat=N or forkexec=N\n", argv[a]);
			return 2;
		}

		/* Warm-up: caches, page tables, the binary's pages for exec. */
		if (loops[which].run(n) < 0)
			return 1;
		for (unsigned long b = 0; b < batches; b++) {
			double start = now_ns();

			if (loops[which].run(n) < 0)
				return 1;
			samples[b] = (now_ns() - start) / n;
		}
		qsort(samples, batches, sizeof(samples[0]), bench_cmp_double);
		printf("bench-fs label=%s round=%lu loop=%s n=%lu batches=%lu median_ns=%.1f p90_ns=%.1f min_ns=%.1f\n",
		       label, round, loops[which].name, n, batches,
		       bench_percentile(samples, batches, 50), bench_percentile(samples, batches, 90),
		       samples[0]);
		fflush(stdout);
	}
	return 0;
}
