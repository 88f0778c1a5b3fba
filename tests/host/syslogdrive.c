// SPDX-License-Identifier: GPL-2.0
/*
 * Feeds synthetic records through the real syslog sink (runtime/sink/syslog.c)
 * for tests/host/syslog-export, which runs a real rsyslogd on loopback.
 *
 *   syslogdrive --transport tcp|tls|unix|jsonl-unix (--address A | --path P) --spool DIR
 *               [--spool-bytes N] [--ca F --server-name N [--cert F --key F]]
 *               [--start S] [--count N] [--pause FILE] [--wait SECONDS]
 *               [--close-ms MS]
 *
 * Writes records with seq S..S+N-1 (run "output_truncated" records of run
 * "syslog-test", with a context naming the host "tether-test-node").  With
 * --pause, after the first half it waits until every record is sent,
 * creates FILE.ready, waits for FILE.go, then writes the second half.  With
 * --wait it waits (at most SECONDS) until the spool is empty and no loss is
 * unreported before it closes the sink.  Prints the sink's counters as
 * "written=N sent=N dropped=N loss_records=N pending=N truncated=N".
 * Exit 0, or 1 when the wait ran out, 2 on a usage or setup error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/record.h"
#include "runtime/sink/sink.h"
#include "runtime/sink/syslog.h"

static int usage(void)
{
	fprintf(stderr, "usage: syslogdrive --transport tcp|tls|unix|jsonl-unix (--address A | --path P) "
			"--spool DIR [--spool-bytes N] [--ca F] [--server-name N] [--cert F "
			"--key F] [--start S] [--count N] [--pause FILE] [--wait SECONDS] "
			"[--close-ms MS]\n");
	return 2;
}

/* Until the spool is empty and every drop is reported: true, or false at the deadline. */
static bool wait_drained(struct sink *sink, double seconds)
{
	for (double waited = 0; waited < seconds; waited += 0.02) {
		struct syslog_stats st;

		sink_syslog_stats(sink, &st);
		if (st.pending == 0 && st.unreported == 0)
			return true;
		usleep(20000);
	}
	return false;
}

static bool wait_file(const char *path, double seconds)
{
	struct stat st;

	for (double waited = 0; waited < seconds; waited += 0.02) {
		if (stat(path, &st) == 0)
			return true;
		usleep(20000);
	}
	return false;
}

static int write_records(struct sink *sink, uint64_t first, uint64_t count)
{
	static const struct record_context ctx = {
		.host = "tether-test-node",
		.tether_version = "test",
		.attempt = 1,
	};
	struct timespec now;

	for (uint64_t seq = first; seq < first + count; seq++) {
		struct record rec = { .kind = RECORD_RUN, .seq = seq, .run_id = "syslog-test",
				      .ctx = &ctx };
		int r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		rec.mono_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		rec.run.event = RECORD_RUN_OUTPUT_TRUNCATED;
		rec.run.truncated = (struct record_run_truncated){ .stream = "stdout",
								    .output_bytes_max = seq };
		r = sink_write(sink, &rec);
		if (r < 0) {
			fprintf(stderr, "syslogdrive: writing record %llu: %s\n",
				(unsigned long long)seq, strerror(-r));
			return r;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "transport", 1, NULL, 't' }, { "address", 1, NULL, 'a' },
		{ "path", 1, NULL, 'p' },      { "spool", 1, NULL, 's' },
		{ "spool-bytes", 1, NULL, 'b' }, { "ca", 1, NULL, 'C' },
		{ "server-name", 1, NULL, 'n' }, { "cert", 1, NULL, 'c' },
		{ "key", 1, NULL, 'k' },       { "start", 1, NULL, 'S' },
		{ "count", 1, NULL, 'N' },     { "pause", 1, NULL, 'P' },
		{ "wait", 1, NULL, 'w' },      { "close-ms", 1, NULL, 'm' },
		{ 0 },
	};
	struct syslog_options o = { .name = "test", .quiet = false };
	uint64_t start = 1, count = 0;
	const char *pause = NULL;
	double wait = 0;
	struct syslog_stats st;
	struct sink *sink;
	char path[4096];
	int c, r, status = 0;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			o.transport = !strcmp(optarg, "tcp") ? SYSLOG_TCP :
				      !strcmp(optarg, "tls") ? SYSLOG_TLS :
				      !strcmp(optarg, "unix") ? SYSLOG_UNIX :
				      !strcmp(optarg, "jsonl-unix") ? SYSLOG_JSONL_UNIX : 0;
			break;
		case 'a': o.address = optarg; break;
		case 'p': o.path = optarg; break;
		case 's': o.spool_dir = optarg; break;
		case 'b': o.spool_bytes = strtoull(optarg, NULL, 10); break;
		case 'C': o.ca_file = optarg; break;
		case 'n': o.server_name = optarg; break;
		case 'c': o.cert_file = optarg; break;
		case 'k': o.key_file = optarg; break;
		case 'S': start = strtoull(optarg, NULL, 10); break;
		case 'N': count = strtoull(optarg, NULL, 10); break;
		case 'P': pause = optarg; break;
		case 'w': wait = strtod(optarg, NULL); break;
		case 'm': o.close_ms = (unsigned int)strtoul(optarg, NULL, 10); break;
		default: return usage();
		}
	}
	if (!o.transport || !o.spool_dir || optind != argc)
		return usage();
	r = sink_syslog_open(&o, &sink);
	if (r < 0) {
		fprintf(stderr, "syslogdrive: cannot open the sink: %s\n", strerror(-r));
		return 2;
	}
	if (pause) {
		uint64_t half = count / 2;

		r = write_records(sink, start, half);
		if (r == 0 && !wait_drained(sink, 30)) {
			fprintf(stderr, "syslogdrive: the first half was not sent in 30 s\n");
			status = 1;
		}
		snprintf(path, sizeof(path), "%s.ready", pause);
		if (r == 0 && status == 0 && fclose(fopen(path, "w")) == 0) {
			snprintf(path, sizeof(path), "%s.go", pause);
			if (!wait_file(path, 60))
				status = 1;
		}
		start += half;
		count -= half;
	}
	if (status == 0)
		r = write_records(sink, start, count);
	if (r < 0)
		status = 2;
	if (status == 0 && wait > 0 && !wait_drained(sink, wait)) {
		fprintf(stderr, "syslogdrive: the spool did not drain in %.0f s\n", wait);
		status = 1;
	}
	sink_syslog_stats(sink, &st);
	printf("written=%llu sent=%llu dropped=%llu loss_records=%llu pending=%llu truncated=%llu\n",
	       (unsigned long long)st.written, (unsigned long long)st.sent,
	       (unsigned long long)st.dropped, (unsigned long long)st.loss_records,
	       (unsigned long long)st.pending, (unsigned long long)st.truncated);
	if (st.last_error[0])
		printf("last_error: %s\n", st.last_error);
	r = sink_close(sink);
	if (r < 0) {
		fprintf(stderr, "syslogdrive: closing the sink: %s\n", strerror(-r));
		status = status ?: 2;
	}
	return status;
}
