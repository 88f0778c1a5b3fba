/*
 * bench-start's per-command benchmark (see bench/README.md), built
 * statically and run in the test VM booted into the Debian root image:
 *
 *   cmdtime -T TETHER -e ENVELOPE -a AUDIT_DIR [-u UID:GID] [-n ROUNDS]
 *           [-w WARMUP] [-c CONTEXT] -- COMMAND...
 *
 * Each COMMAND is one argument, its words separated by single spaces
 * ("git status"), run from the current directory with stdout and stderr on
 * /dev/null.  Each round runs every command twice, unconfined (fork + exec
 * of the command, as UID:GID with -u: the envelope's identity) and as TETHER run --envelope ENVELOPE --run-id ID --audit
 * AUDIT_DIR/ID -- COMMAND, in an order that alternates each round, and
 * times each from just before fork() to just after waitpid() returned.
 * WARMUP rounds (default 2) are run and discarded, then ROUNDS (default 20).
 *
 * Prints one table: each command's median unconfined and confined time,
 * the median over the rounds of each round's own ratio (confined /
 * unconfined), the median difference, and tether's setup_us (the start
 * record's) median; then one raw line per command for the logs.  Exits 0
 * whatever the figures, 1 when a run failed (an exit status other than 0),
 * 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/stats.h"

#define MAX_COMMANDS	16
#define MAX_WORDS	32

struct command {
	const char *text;
	char *argv[MAX_WORDS + 1];
	double *plain_ns, *tether_ns, *ratio, *delta_ns, *setup_us;
	size_t setup_count;
};

static const char *tether_path, *envelope, *audit_dir, *context = "";
static unsigned long rounds = 20, warmup = 2;
static long plain_uid = -1, plain_gid = -1;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void usage(const char *why)
{
	fprintf(stderr, "cmdtime: %s\nusage: cmdtime -T TETHER -e ENVELOPE -a AUDIT_DIR [-u UID:GID] "
			"[-n ROUNDS] [-w WARMUP] [-c CONTEXT] -- COMMAND...\n", why);
	exit(2);
}

/* fork + exec of argv, output on /dev/null; the time to waitpid; -1 if it did not exit 0 */
static double run(char *const argv[], bool as_user)
{
	double t0 = now_ns(), t1;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		if (as_user && plain_uid >= 0 &&
		    (setgroups(0, NULL) || setgid((gid_t)plain_gid) || setuid((uid_t)plain_uid)))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	t1 = now_ns();
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t1 - t0 : -1;
}

/* The start record's setup_us in FILE, or -1. */
static double setup_of(const char *file)
{
	char buf[65536];
	const char *p;
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "\"setup_us\":");
	return p ? strtod(p + strlen("\"setup_us\":"), NULL) : -1;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n ? bench_percentile(v, n, 50) : 0;
}

static int confined(struct command *c, unsigned long round, bool keep, double *out)
{
	static unsigned long seq;
	char id[64], file[4096];
	char *argv[MAX_WORDS + 12];
	size_t k = 0;

	snprintf(id, sizeof(id), "cmdtime-%lu-%lu", round, seq++);
	snprintf(file, sizeof(file), "%s/%s.audit", audit_dir, id);
	argv[k++] = (char *)tether_path;
	argv[k++] = "run";
	argv[k++] = "--envelope";
	argv[k++] = (char *)envelope;
	argv[k++] = "--run-id";
	argv[k++] = id;
	argv[k++] = "--audit";
	argv[k++] = file;
	argv[k++] = "--";
	for (size_t i = 0; c->argv[i]; i++)
		argv[k++] = c->argv[i];
	argv[k] = NULL;
	*out = run(argv, false);
	if (*out < 0) {
		fprintf(stderr, "cmdtime: tether run of '%s' failed (run %s; audit file %s)\n",
			c->text, id, file);
		return -1;
	}
	if (keep) {
		double su = setup_of(file);

		if (su >= 0)
			c->setup_us[c->setup_count++] = su;
	}
	unlink(file);
	return 0;
}

int main(int argc, char **argv)
{
	struct command cmds[MAX_COMMANDS];
	size_t ncmd = 0;
	int opt;

	while ((opt = getopt(argc, argv, "T:e:a:u:n:w:c:")) != -1) {
		switch (opt) {
		case 'T': tether_path = optarg; break;
		case 'e': envelope = optarg; break;
		case 'a': audit_dir = optarg; break;
		case 'n': rounds = strtoul(optarg, NULL, 10); break;
		case 'w': warmup = strtoul(optarg, NULL, 10); break;
		case 'c': context = optarg; break;
		case 'u':
			if (sscanf(optarg, "%ld:%ld", &plain_uid, &plain_gid) != 2 || plain_uid < 0 ||
			    plain_gid < 0)
				usage("-u takes UID:GID");
			break;
		default: usage("unknown option");
		}
	}
	if (!tether_path || !envelope || !audit_dir)
		usage("-T, -e and -a are required");
	if (rounds < 1 || rounds > 10000 || warmup > 1000)
		usage("ROUNDS must be 1..10000 and WARMUP 0..1000");
	if (optind >= argc || argc - optind > MAX_COMMANDS)
		usage("give 1 to 16 commands");
	for (int i = optind; i < argc; i++) {
		struct command *c = &cmds[ncmd++];
		char *words = strdup(argv[i]), *save = NULL, *w;
		size_t n = 0;

		*c = (struct command){ .text = argv[i] };
		for (w = strtok_r(words, " ", &save); w && n < MAX_WORDS; w = strtok_r(NULL, " ", &save))
			c->argv[n++] = w;
		if (!n)
			usage("an empty command");
		c->argv[n] = NULL;
		c->plain_ns = calloc(rounds, sizeof(double));
		c->tether_ns = calloc(rounds, sizeof(double));
		c->ratio = calloc(rounds, sizeof(double));
		c->delta_ns = calloc(rounds, sizeof(double));
		c->setup_us = calloc(rounds, sizeof(double));
		if (!c->plain_ns || !c->tether_ns || !c->ratio || !c->delta_ns || !c->setup_us) {
			perror("cmdtime");
			return 1;
		}
	}
	for (unsigned long r = 0; r < warmup + rounds; r++) {
		bool keep = r >= warmup;
		size_t at = keep ? r - warmup : 0;

		for (size_t i = 0; i < ncmd; i++) {
			struct command *c = &cmds[(i + r) % ncmd];
			double p = 0, t = 0;

			for (int half = 0; half < 2; half++) {
				if ((half == 0) == (r % 2 == 0)) {
					p = run(c->argv, true);
					if (p < 0) {
						fprintf(stderr, "cmdtime: '%s' failed unconfined\n", c->text);
						return 1;
					}
				} else if (confined(c, r, keep, &t)) {
					return 1;
				}
			}
			if (keep) {
				c->plain_ns[at] = p;
				c->tether_ns[at] = t;
				c->ratio[at] = t / p;
				c->delta_ns[at] = t - p;
			}
		}
	}
	printf("per-command: %s; %lu rounds (after %lu discarded), each command unconfined and "
	       "under tether run in alternating order; medians\n", context, rounds, warmup);
	printf("| command | unconfined (ms) | tether run (ms) | ratio | added (ms) | setup (ms) |\n");
	printf("|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < ncmd; i++) {
		struct command *c = &cmds[i];
		double setup = c->setup_count ? median(c->setup_us, c->setup_count) / 1000 : -1;

		printf("| `%s` | %.1f | %.1f | %.2f | %+.1f | ", c->text,
		       median(c->plain_ns, rounds) / 1e6, median(c->tether_ns, rounds) / 1e6,
		       median(c->ratio, rounds), median(c->delta_ns, rounds) / 1e6);
		if (setup >= 0)
			printf("%.1f |\n", setup);
		else
			printf("n/a |\n");
	}
	for (size_t i = 0; i < ncmd; i++)
		printf("cmdtime raw command=\"%s\" n=%lu plain_p90_ms=%.1f tether_p90_ms=%.1f\n",
		       cmds[i].text, rounds, bench_percentile(cmds[i].plain_ns, rounds, 90) / 1e6,
		       bench_percentile(cmds[i].tether_ns, rounds, 90) / 1e6);
	return 0;
}
