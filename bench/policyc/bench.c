// SPDX-License-Identifier: GPL-2.0
/*
 * policyc benchmark driver (see bench/README.md).
 *
 *   bench ENVELOPE [ITERATIONS]
 *
 * Times, over ITERATIONS runs (default 31) of the same bytes held in memory:
 *
 *   (a) baseline   libyaml event parsing alone: the floor any YAML-based
 *                  compiler pays, so (c)/(a) is the cost policyc adds
 *   (b) parse      tp_envelope_parse()
 *   (c) compile    tp_envelope_parse() + tp_policy_compile() + tp_policy_encode()
 *
 * and the peak memory of (c): one run in a forked child, its ru_maxrss less
 * that of a child that only reads the file.  Releasing the results is not
 * timed.  It reports against the targets (compile under 50 ms, peak under
 * 64 MiB) and exits 0 on a miss: a benchmark informs, it does not gate.  It
 * exits 1 only when it cannot measure (unreadable file, an envelope that
 * does not compile).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yaml.h>

#include "bench/common/stats.h"

#include "policyc/policy.h"

#define TARGET_COMPILE_MS 50.0
#define TARGET_PEAK_MIB   64.0

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int read_file(const char *path, char **out, size_t *out_len)
{
	FILE *f = fopen(path, "re");
	char *data = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return -errno;
	do {
		if (cap - len < 65536) {
			char *bigger = realloc(data, cap = cap * 2 + 65536);

			if (!bigger) {
				free(data);
				fclose(f);
				return -ENOMEM;
			}
			data = bigger;
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		free(data);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*out = data;
	*out_len = len;
	return 0;
}

/* (a): every event of the document, as a YAML-based parser must at least see them. */
static int run_baseline(const char *data, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t event;
	bool done = false;
	int r = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &event)) {
			r = -EINVAL;
			break;
		}
		done = event.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	return r;
}

static void print_diags(struct tp_diags *diags)
{
	char *text = NULL;

	if (tp_diags_format(diags, &text) == 0) {
		fputs(text, stderr);
		free(text);
	}
}

/* (b): parse only.  *elapsed_ms covers the library call, not the release. */
static int run_parse(const char *name, const char *data, size_t len, double *elapsed_ms)
{
	struct tp_diags diags = { 0 };
	struct tp_envelope *env = NULL;
	double start = now_ms();
	int r = tp_envelope_parse(name, data, len, &env, &diags);

	*elapsed_ms = now_ms() - start;
	if (r < 0)
		print_diags(&diags);
	tp_envelope_free(env);
	tp_diags_free(&diags);
	return r;
}

struct compiled {
	size_t path_rules, net_rules, host_rules, encoded_bytes;
};

/* (c): parse, compile, encode. */
static int run_compile(const char *name, const char *data, size_t len, double *elapsed_ms,
		       struct compiled *counts)
{
	struct tp_diags diags = { 0 };
	struct tp_envelope *env = NULL;
	struct tp_policy *policy = NULL;
	uint8_t *bytes = NULL;
	size_t bytes_len = 0;
	double start = now_ms();
	int r;

	r = tp_envelope_parse(name, data, len, &env, &diags);
	if (r == 0)
		r = tp_policy_compile(name, env, &policy, &diags);
	if (r == 0)
		r = tp_policy_encode(policy, &bytes, &bytes_len);
	*elapsed_ms = now_ms() - start;

	if (r < 0)
		print_diags(&diags);
	if (r == 0 && counts)
		*counts = (struct compiled){
			.path_rules = policy->path_rule_count,
			.net_rules = policy->net_rule_count,
			.host_rules = policy->host_rule_count,
			.encoded_bytes = bytes_len,
		};
	free(bytes);
	tp_policy_free(policy);
	tp_envelope_free(env);
	tp_diags_free(&diags);
	return r;
}

/*
 * ru_maxrss of RUSAGE_CHILDREN is the largest of all waited-for children, so
 * the baseline child runs first and the compile child's figure is read after
 * it.  Both run before the timed loops, while this process is still small:
 * a forked child starts with its parent's resident pages counted.
 */
static long child_maxrss_kib(const char *path, bool compile)
{
	struct rusage usage;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char *data;
		size_t len;
		double ms;

		if (read_file(path, &data, &len) < 0)
			_exit(1);
		if (compile && run_compile(path, data, len, &ms, NULL) < 0)
			_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	if (getrusage(RUSAGE_CHILDREN, &usage) < 0)
		return -errno;
	return usage.ru_maxrss;
}

struct series {
	const char *name;
	double *ms;
	double median, p90;
};

static void summarise(struct series *s, size_t n)
{
	qsort(s->ms, n, sizeof(*s->ms), bench_cmp_double);
	s->median = bench_percentile(s->ms, n, 50);
	s->p90 = bench_percentile(s->ms, n, 90);
	printf("  %-36s median %8.2f ms   p90 %8.2f ms\n", s->name, s->median, s->p90);
}

int main(int argc, char **argv)
{
	const char *path;
	char *data = NULL, *end;
	size_t len = 0, iterations = 31;
	struct compiled counts = { 0 };
	struct series baseline = { .name = "(a) libyaml events (baseline)" };
	struct series parse = { .name = "(b) tp_envelope_parse" };
	struct series compile = { .name = "(c) parse + compile + encode" };
	long base_kib, peak_kib;
	double peak_mib, ms;
	struct utsname uts;
	char date[64];
	time_t t = time(NULL);
	int r;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s ENVELOPE [ITERATIONS]\n", argv[0]);
		return 2;
	}
	path = argv[1];
	if (argc == 3) {
		unsigned long value = strtoul(argv[2], &end, 10);

		if (argv[2][0] < '0' || argv[2][0] > '9' || *end || value < 1 || value > 100000) {
			fprintf(stderr, "bench: ITERATIONS must be 1..100000\n");
			return 2;
		}
		iterations = value;
	}

	base_kib = child_maxrss_kib(path, false);
	peak_kib = child_maxrss_kib(path, true);
	if (base_kib < 0 || peak_kib < 0) {
		fprintf(stderr, "bench: %s: the measuring child failed (%s)\n", path,
			strerror((int)-(base_kib < 0 ? base_kib : peak_kib)));
		return 1;
	}
	peak_mib = (peak_kib > base_kib ? peak_kib - base_kib : 0) / 1024.0;

	r = read_file(path, &data, &len);
	if (r < 0) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(-r));
		return 1;
	}
	baseline.ms = calloc(iterations, sizeof(double));
	parse.ms = calloc(iterations, sizeof(double));
	compile.ms = calloc(iterations, sizeof(double));
	if (!baseline.ms || !parse.ms || !compile.ms) {
		fprintf(stderr, "bench: out of memory\n");
		return 1;
	}

	/* One untimed warm-up of each, which also checks the file compiles. */
	if (run_baseline(data, len) < 0) {
		fprintf(stderr, "bench: %s: libyaml rejects the file\n", path);
		return 1;
	}
	if (run_compile(path, data, len, &ms, &counts) < 0) {
		fprintf(stderr, "bench: %s does not compile (diagnostics above)\n", path);
		return 1;
	}
	for (size_t i = 0; i < iterations; i++) {
		double start = now_ms();

		run_baseline(data, len);
		baseline.ms[i] = now_ms() - start;
		if (run_parse(path, data, len, &parse.ms[i]) < 0 ||
		    run_compile(path, data, len, &compile.ms[i], NULL) < 0) {
			fprintf(stderr, "bench: iteration %zu failed\n", i);
			return 1;
		}
	}

	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	if (uname(&uts) < 0)
		strcpy(uts.release, "?");
	printf("policyc benchmark: %s (%zu bytes)\n", path, len);
	printf("  date %s, kernel %s, %zu iterations\n", date, uts.release, iterations);
	printf("  compiled: %zu path rules, %zu address rules, %zu host rules, tpol %zu bytes\n",
	       counts.path_rules, counts.net_rules, counts.host_rules, counts.encoded_bytes);
	summarise(&baseline, iterations);
	summarise(&parse, iterations);
	summarise(&compile, iterations);
	printf("  %-36s %.2f\n", "ratio (c)/(a), medians",
	       baseline.median > 0 ? compile.median / baseline.median : 0.0);
	printf("  %-36s %.1f MiB (child %ld KiB - baseline %ld KiB)\n", "peak memory of (c)",
	       peak_mib, peak_kib, base_kib);
	printf("  %-36s %s\n", "target: (c) median under 50 ms",
	       compile.median < TARGET_COMPILE_MS ? "PASS" : "MISS");
	printf("  %-36s %s\n", "target: peak memory under 64 MiB",
	       peak_mib < TARGET_PEAK_MIB ? "PASS" : "MISS");

	free(baseline.ms);
	free(parse.ms);
	free(compile.ms);
	free(data);
	return 0;
}
