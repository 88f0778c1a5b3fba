// SPDX-License-Identifier: GPL-2.0
/*
 * bench-agent driver (see bench/README.md), built statically and run in the
 * test VM beside a `tether daemon` that bench/agent/run-in-vm.sh started.
 *
 *   driver -p PROBE -t TRUE -l SLEEP -T TETHER -e ENVELOPE -a AUDIT_DIR -s SOCKET
 *          -D DAEMON_PID [-n ROUNDS] [-w WARMUP] [-k RUNS] [-j CLIENTS] [-r REPS]
 *          [-m LIVE] [-g CGROUP_ROOT] [-c CONTEXT] [-x NOTE...]
 *
 * The daemon's API is spoken by hand: one HTTP/1.0 request per AF_UNIX
 * connection (the daemon closes it after the reply, so a reply ends at EOF
 * and a followed stream is not chunked), no library.  Every run has the
 * same envelope, ENVELOPE (its text is the request's "envelope"), tenant
 * "default", and a run id the driver picks ("ba-...").
 *
 * Three measurements, in this order (see report() for the table):
 *
 *   latency     create to first instruction: from the driver's
 *               CLOCK_MONOTONIC just before it connects to send POST
 *               /v1/runs (argv [PROBE]), or just before fork() of a `tether
 *               run`, to the CLOCK_MONOTONIC time bench/start/startprobe
 *               reads as the first action of its main() and writes to its
 *               stdout (captured by the daemon and read back with GET
 *               /v1/runs/{id}/stdout?follow=true, or a pipe).  Three
 *               launchers take turns, in an order rotated by one each round:
 *               the API, `tether run` (which hands the run to the daemon and
 *               lends it its stdio) and `tether run --standalone`.  WARMUP
 *               rounds are discarded, then ROUNDS.  For the API also the
 *               reply: connect to the 201 reply read in full.
 *   throughput  RUNS runs of TRUE (/bin/true), from the first request (or
 *               fork) to the last run ended: through the API by one client
 *               creating them back to back (each POST waits for its 201),
 *               and by CLIENTS clients at once (processes, RUNS/CLIENTS
 *               each); `tether run --standalone` one after another, and
 *               CLIENTS at a time.  "Ended" for the API is the daemon's
 *               runs_active (GET /v1/health) back to 0 after every
 *               client's last run was followed to its end; for tether run,
 *               the last waitpid().  REPS repetitions, each of the four in
 *               an order rotated by one; the figure is the median rep.
 *   memory      Rss and Pss of /proc/PID/smaps_rollup: the daemon fresh
 *               (before any run), idle after the warm-up, with LIVE runs
 *               of SLEEP 600 live (each run's cgroup holds its "sleep"),
 *               after they were cancelled (POST /v1/runs/{id}/cancel) and
 *               ended, and at the end; next to LIVE `tether run
 *               --standalone` processes running the same (the sum over
 *               their controllers; the commands are not counted on either
 *               side), ended by SIGTERM.
 *
 * Prints one table, then one raw line per figure for the logs:
 *
 *   bench-agent raw what=WHAT label=L n=N median_ns=X p90_ns=Y p99_ns=Z min_ns=W max_ns=V
 *   bench-agent raw what=rate label=L rep=R runs=N ns=T
 *   bench-agent raw what=mem label=L rss_kb=X pss_kb=Y
 *
 * Exits 0 whatever the figures, 1 when something could not be measured (a
 * request refused, a run that did not succeed, a probe that wrote no time),
 * 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/stats.h"

#define MAX_ROUNDS	10000
#define MAX_WARMUP	1000
#define MAX_RUNS	10000
#define MAX_CLIENTS	64
#define MAX_REPS	99
#define MAX_LIVE	1024
/* A reply bigger than this is an error: a Run object is about 2 KiB. */
#define REPLY_MAX	(1 << 20)
/* No request or run may take longer than this (TCG included). */
#define TIMEOUT_S	120

enum launcher { API, VIA_DAEMON, STANDALONE, LAUNCHERS };

static const char *const launcher_name[LAUNCHERS] = {
	[API] = "api: POST /v1/runs",
	[VIA_DAEMON] = "tether run -> daemon",
	[STANDALONE] = "tether run --standalone",
};
static const char *const launcher_label[LAUNCHERS] = {
	[API] = "api", [VIA_DAEMON] = "tether-run-daemon", [STANDALONE] = "standalone",
};

enum rate_row { RATE_API_1, RATE_API_N, RATE_SA_1, RATE_SA_N, RATE_ROWS };
/* Runs started back to back through the node agent, over standalone tether run (issue 18). */
#define TARGET_API_VS_STANDALONE	3.0

struct opts {
	const char *probe, *true_cmd, *sleep_cmd, *tether, *envelope_path, *audit_dir;
	const char *sock, *cgroup_root, *context;
	const char *notes[16];
	size_t note_count;
	unsigned long rounds, warmup, runs, clients, reps, live;
	pid_t daemon_pid;
	char *envelope_json;	/* the envelope's text as a JSON string, quotes included */
};

struct mem {
	const char *label;
	long rss_kb, pss_kb, fds;
	unsigned long runs_held;	/* ended runs the daemon holds (its journal) */
};

static unsigned long runs_created;	/* every run the daemon was asked for */
static bool quiet_connect;	/* while waiting for the daemon's socket */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- the HTTP client --------------------------------------------------- */

struct reply {
	int status;
	char *body;	/* NUL-terminated */
	size_t len;
};

static void reply_free(struct reply *r)
{
	free(r->body);
	r->body = NULL;
}

/*
 * One request on a new connection: METHOD TARGET with BODY (JSON, may be
 * NULL), the whole reply read to EOF.  Returns 0 with *out filled (any
 * status), or -1 with a message.
 */
static int http(const struct opts *o, const char *method, const char *target, const char *body,
		struct reply *out)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = TIMEOUT_S };
	size_t body_len = body ? strlen(body) : 0, cap = 4096, got = 0;
	char head[512], *buf = NULL, *p;
	int fd, n;

	out->body = NULL;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", o->sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (quiet_connect)
			goto fail;
		fprintf(stderr, "bench-agent: %s %s: connecting to %s: %s\n", method, target,
			o->sock, strerror(errno));
		goto fail;
	}
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n",
		     method, target, body_len);
	if (n < 0 || (size_t)n >= sizeof(head) ||
	    send(fd, head, (size_t)n, MSG_NOSIGNAL | (body_len ? MSG_MORE : 0)) != n)
		goto io_error;
	for (size_t off = 0; off < body_len;) {
		ssize_t w = send(fd, body + off, body_len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto io_error;
		off += (size_t)w;
	}
	buf = malloc(cap);
	if (!buf)
		goto io_error;
	for (;;) {
		ssize_t r;

		if (got + 1 == cap) {
			char *bigger = cap >= REPLY_MAX ? NULL : realloc(buf, cap * 2);

			if (!bigger) {
				fprintf(stderr, "bench-agent: %s %s: the reply is over %d bytes\n",
					method, target, REPLY_MAX);
				goto fail;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + got, cap - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto io_error;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = 0;
	close(fd);
	fd = -1;
	p = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.", 7) != 0 || got < 12 || !p) {
		fprintf(stderr, "bench-agent: %s %s: not an HTTP reply: '%.200s'\n", method, target,
			buf);
		goto fail;
	}
	out->status = atoi(buf + 9);
	p += 4;
	out->len = got - (size_t)(p - buf);
	memmove(buf, p, out->len + 1);
	out->body = buf;
	return 0;
io_error:
	fprintf(stderr, "bench-agent: %s %s: %s\n", method, target,
		errno ? strerror(errno) : "short write");
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The request, which must answer `want`; the reply is kept in *out when out is not NULL. */
static int http_expect(const struct opts *o, const char *method, const char *target,
		       const char *body, int want, struct reply *out)
{
	struct reply r;

	if (http(o, method, target, body, &r))
		return -1;
	if (r.status != want) {
		fprintf(stderr, "bench-agent: %s %s: %d, not %d: %.600s\n", method, target,
			r.status, want, r.body);
		reply_free(&r);
		return -1;
	}
	if (out)
		*out = r;
	else
		reply_free(&r);
	return 0;
}

/* The envelope's text as a JSON string. */
static char *json_string_of_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t cap = 0, len = 0;
	int c;

	if (!f) {
		fprintf(stderr, "bench-agent: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len + 8 >= cap) {
			char *bigger = realloc(s, cap = cap ? cap * 2 : 4096);

			if (!bigger) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = bigger;
		}
		if (!len)
			s[len++] = '"';
		c = fgetc(f);
		if (c == EOF)
			break;
		if (c == '"' || c == '\\')
			len += (size_t)sprintf(s + len, "\\%c", c);
		else if (c == '\n')
			len += (size_t)sprintf(s + len, "\\n");
		else if (c < 0x20)
			len += (size_t)sprintf(s + len, "\\u%04x", c);
		else
			s[len++] = (char)c;
	}
	s[len++] = '"';
	s[len] = 0;
	fclose(f);
	return s;
}

/* POST /v1/runs of ARGV (a JSON array) as run ID; 0 on 201. */
static int api_create(const struct opts *o, const char *id, const char *argv_json)
{
	char *body;
	int ret;

	if (asprintf(&body, "{\"envelope\":%s,\"envelope_name\":\"bench-agent.yaml\",\"argv\":%s,"
			    "\"run_id\":\"%s\",\"tenant\":\"default\"}",
		     o->envelope_json, argv_json, id) < 0)
		return -1;
	runs_created++;
	ret = http_expect(o, "POST", "/v1/runs", body, 201, NULL);
	free(body);
	return ret;
}

/*
 * Until run ID has ended (its stdout followed to its end), then checks the
 * reason; its stdout in *out when out is not NULL.
 */
static int api_wait_ended(const struct opts *o, const char *id, const char *reason,
			  struct reply *out)
{
	char target[160];
	struct reply r;

	snprintf(target, sizeof(target), "/v1/runs/%s/stdout?follow=true", id);
	if (http_expect(o, "GET", target, NULL, 200, out))
		return -1;
	if (!reason)
		return 0;
	snprintf(target, sizeof(target), "/v1/runs/%s", id);
	if (http_expect(o, "GET", target, NULL, 200, &r))
		goto fail;
	if (!strstr(r.body, "\"state\":\"ended\"") || !strstr(r.body, reason)) {
		fprintf(stderr, "bench-agent: run %s did not end with %s: %.800s\n", id, reason,
			r.body);
		reply_free(&r);
		goto fail;
	}
	reply_free(&r);
	return 0;
fail:
	if (out)
		reply_free(out);
	return -1;
}

/* The daemon's runs_active, from GET /v1/health; -1 on error. */
static long runs_active(const struct opts *o)
{
	struct reply r;
	const char *p;
	long n = -1;

	if (http_expect(o, "GET", "/v1/health", NULL, 200, &r))
		return -1;
	p = strstr(r.body, "\"runs_active\":");
	if (p)
		n = strtol(p + strlen("\"runs_active\":"), NULL, 10);
	else
		fprintf(stderr, "bench-agent: GET /v1/health: no runs_active: %.400s\n", r.body);
	reply_free(&r);
	return n;
}

/* Until the daemon has no live run; the time it was seen so in *t (may be NULL). */
static int api_wait_idle(const struct opts *o, uint64_t *t)
{
	uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_S * 1000000000ull;
	long n;

	while ((n = runs_active(o)) != 0) {
		if (n < 0)
			return -1;
		if (now_ns() > deadline) {
			fprintf(stderr, "bench-agent: the daemon still has %ld live runs after "
					"%d s\n",
				n, TIMEOUT_S);
			return -1;
		}
		sleep_ms(1);
	}
	if (t)
		*t = now_ns();
	return 0;
}

/* Until the daemon answers GET /v1/health with 200 (at most TIMEOUT_S s). */
static int api_wait_up(const struct opts *o)
{
	uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_S * 1000000000ull;
	struct reply r;

	for (;;) {
		quiet_connect = true;
		if (http(o, "GET", "/v1/health", NULL, &r) == 0) {
			quiet_connect = false;
			reply_free(&r);
			if (r.status == 200)
				return 0;
		}
		quiet_connect = false;
		if (kill(o->daemon_pid, 0) < 0) {
			fprintf(stderr, "bench-agent: the daemon (pid %d) is gone\n",
				(int)o->daemon_pid);
			return -1;
		}
		if (now_ns() > deadline) {
			fprintf(stderr, "bench-agent: the daemon does not answer GET /v1/health on %s "
					"after %d s\n",
				o->sock, TIMEOUT_S);
			return -1;
		}
		sleep_ms(50);
	}
}

/* ---- tether run ---------------------------------------------------------- */

/* A tether run's audit file (SUFFIX "audit") or stderr ("err"), in AUDIT_DIR. */
static void run_file(const struct opts *o, const char *id, const char *suffix, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%s/%s.%s", o->audit_dir, id, suffix);
}

/*
 * Starts `tether run [--standalone] --envelope E --run-id ID --audit FILE --
 * ARGV...`, stdin /dev/null, stdout to `out_fd` (or /dev/null when < 0),
 * stderr to ID.err beside the audit file (shown if the run fails).
 * Returns the pid, or -1.
 */
static pid_t spawn_tether(const struct opts *o, bool standalone, const char *id,
			  const char *const *cmd, int out_fd)
{
	const char *argv[16];
	char audit[4096], err[4096];
	size_t argc = 0;
	pid_t pid;

	run_file(o, id, "audit", audit, sizeof(audit));
	run_file(o, id, "err", err, sizeof(err));
	unlink(audit);
	argv[argc++] = o->tether;
	argv[argc++] = "run";
	if (standalone)
		argv[argc++] = "--standalone";
	for (const char *const *a = (const char *const[]){ "--envelope", o->envelope_path,
							    "--run-id", id, "--audit", audit,
							    "--", NULL };
	     *a; a++)
		argv[argc++] = *a;
	while (*cmd && argc < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[argc++] = *cmd++;
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-agent: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR),
		    err_fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (null < 0 || err_fd < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO) < 0 ||
		    dup2(err_fd, STDERR_FILENO) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "bench-agent: cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* waitpid() of a tether run, which must exit `want`; removes its files, or shows them. */
static int reap_tether(const struct opts *o, pid_t pid, const char *id, int want)
{
	char audit[4096], err[4096], line[1024];
	int status;
	FILE *f;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "bench-agent: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	run_file(o, id, "audit", audit, sizeof(audit));
	run_file(o, id, "err", err, sizeof(err));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != want) {
		fprintf(stderr, "bench-agent: tether run %s %s %d, not %d (its audit file: %s); "
				"its stderr:\n",
			id, WIFEXITED(status) ? "exited" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), want, audit);
		f = fopen(err, "r");
		for (int n = 0; f && n < 20 && fgets(line, sizeof(line), f); n++)
			fprintf(stderr, "  %s", line);
		if (f)
			fclose(f);
		return -1;
	}
	unlink(audit);
	unlink(err);
	return 0;
}

/* ---- latency ------------------------------------------------------------- */

/* The probe's time, from its output; 0 when it wrote none. */
static uint64_t probe_time(const char *out, size_t len)
{
	char *end;
	uint64_t ns;

	if (!len || out[len - 1] != '\n')
		return 0;
	errno = 0;
	ns = strtoull(out, &end, 10);
	return errno || end == out || end != out + len - 1 ? 0 : ns;
}

/*
 * One start of the probe by `l`: the create-to-first-instruction time in
 * *ns and, for the API, the time to the 201 reply in *reply_ns.
 */
static int latency_once(const struct opts *o, enum launcher l, const char *id, double *ns,
			double *reply_ns)
{
	char out[64];
	size_t got = 0;
	uint64_t t0, probe_ns;

	*reply_ns = -1;
	if (l == API) {
		char argv_json[4200];
		struct reply r;

		snprintf(argv_json, sizeof(argv_json), "[\"%s\"]", o->probe);
		t0 = now_ns();
		if (api_create(o, id, argv_json))
			return -1;
		*reply_ns = (double)(now_ns() - t0);
		if (api_wait_ended(o, id, "\"reason\":\"succeeded\"", &r))
			return -1;
		got = r.len < sizeof(out) - 1 ? r.len : 0;
		memcpy(out, r.body, got);
		reply_free(&r);
	} else {
		int pipefd[2];
		ssize_t n;
		pid_t pid;

		if (pipe2(pipefd, O_CLOEXEC) < 0) {
			fprintf(stderr, "bench-agent: pipe: %s\n", strerror(errno));
			return -1;
		}
		if (l == VIA_DAEMON)
			runs_created++;
		t0 = now_ns();
		pid = spawn_tether(o, l == STANDALONE, id, (const char *const[]){ o->probe, NULL },
				   pipefd[1]);
		close(pipefd[1]);
		if (pid < 0) {
			close(pipefd[0]);
			return -1;
		}
		/* To EOF: tether, the probe and (through the daemon) the run hold the pipe. */
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
		if (reap_tether(o, pid, id, 0))
			return -1;
	}
	out[got] = 0;
	probe_ns = probe_time(out, got);
	if (probe_ns <= t0) {
		fprintf(stderr, "bench-agent: %s: run %s: the probe wrote no time after the "
				"request ('%s')\n",
			launcher_name[l], id, out);
		return -1;
	}
	*ns = (double)(probe_ns - t0);
	return 0;
}

/* Interleaved rounds: [rounds * LAUNCHERS] create-to-probe and [rounds] API reply times. */
static int latency(const struct opts *o, const char *tag, unsigned long rounds, double **start,
		   double *reply)
{
	for (unsigned long n = 0; n < rounds; n++) {
		for (size_t k = 0; k < LAUNCHERS; k++) {
			enum launcher l = (enum launcher)((k + n) % LAUNCHERS);
			char id[64];
			double ns, reply_ns;

			snprintf(id, sizeof(id), "ba-%s-%lu-%s", tag, n + 1, launcher_label[l]);
			if (latency_once(o, l, id, &ns, &reply_ns))
				return -1;
			if (start)
				start[l][n] = ns;
			if (reply && l == API)
				reply[n] = reply_ns;
		}
	}
	return 0;
}

/* ---- throughput ----------------------------------------------------------- */

/* Waits for every child in pids[0..n); 0 when all exited 0. */
static int reap_all(const pid_t *pids, size_t n)
{
	int ret = 0, status;

	for (size_t i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		while (waitpid(pids[i], &status, 0) < 0) {
			if (errno != EINTR) {
				ret = -1;
				break;
			}
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			ret = -1;
	}
	return ret;
}

/*
 * Client `c` of `clients`: runs c, c + clients, ... of TAG-N, back to back;
 * through the API, it then follows its last run to its end (no polling).
 */
static int rate_client(const struct opts *o, bool api, const char *tag, unsigned long c,
		       unsigned long clients)
{
	char id[64] = "", argv_json[4200];

	snprintf(argv_json, sizeof(argv_json), "[\"%s\"]", o->true_cmd);
	for (unsigned long i = c; i < o->runs; i += clients) {
		snprintf(id, sizeof(id), "%s-%lu", tag, i + 1);
		if (api) {
			if (api_create(o, id, argv_json))
				return -1;
		} else {
			pid_t pid = spawn_tether(o, true, id,
						 (const char *const[]){ o->true_cmd, NULL }, -1);

			if (pid < 0 || reap_tether(o, pid, id, 0))
				return -1;
		}
	}
	return api ? api_wait_ended(o, id, NULL, NULL) : 0;
}

/*
 * RUNS runs of TRUE by `clients` worker processes (worker i takes runs i,
 * i + clients, ...), through the API or tether run --standalone; the time
 * from the first request to the last run ended in *ns.
 */
static int rate_once(const struct opts *o, bool api, unsigned long clients, unsigned long rep,
		     double *ns)
{
	pid_t pids[MAX_CLIENTS] = { 0 };
	char tag[32];
	uint64_t t0, t1;
	int ret;

	snprintf(tag, sizeof(tag), "ba-rate-%s%lu-r%lu", api ? "api" : "sa", clients, rep);
	fflush(NULL);
	t0 = now_ns();
	for (unsigned long c = 0; c < clients; c++) {
		pids[c] = fork();
		if (pids[c] < 0) {
			fprintf(stderr, "bench-agent: fork: %s\n", strerror(errno));
			reap_all(pids, c);
			return -1;
		}
		if (pids[c] == 0)
			_exit(rate_client(o, api, tag, c, clients) ? 1 : 0);
	}
	ret = reap_all(pids, clients);
	t1 = now_ns();
	if (ret) {
		fprintf(stderr, "bench-agent: %s: a client failed\n", tag);
		return -1;
	}
	if (api) {
		if (api_wait_idle(o, &t1))
			return -1;
		runs_created += o->runs;	/* the clients' counts died with them */
		/* Untimed: every one of them succeeded. */
		for (unsigned long i = 0; i < o->runs; i++) {
			char id[64], target[96];
			struct reply r;

			snprintf(id, sizeof(id), "%s-%lu", tag, i + 1);
			snprintf(target, sizeof(target), "/v1/runs/%s", id);
			if (http_expect(o, "GET", target, NULL, 200, &r))
				return -1;
			if (!strstr(r.body, "\"reason\":\"succeeded\"")) {
				fprintf(stderr, "bench-agent: run %s did not succeed: %.800s\n", id,
					r.body);
				reply_free(&r);
				return -1;
			}
			reply_free(&r);
		}
	}
	*ns = (double)(t1 - t0);
	return 0;
}

/* ---- memory --------------------------------------------------------------- */

/* Rss and Pss of PID in kB, from /proc/PID/smaps_rollup, and its open descriptors. */
static int read_mem(pid_t pid, long *rss_kb, long *pss_kb, long *fds)
{
	char path[64], line[256];
	struct dirent *e;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "bench-agent: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*rss_kb = *pss_kb = -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Rss:", 4) == 0)
			*rss_kb = strtol(line + 4, NULL, 10);
		else if (strncmp(line, "Pss:", 4) == 0)
			*pss_kb = strtol(line + 4, NULL, 10);
	}
	fclose(f);
	if (*rss_kb < 0 || *pss_kb < 0) {
		fprintf(stderr, "bench-agent: %s has no Rss or Pss line\n", path);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "bench-agent: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*fds = 0;
	while ((e = readdir(d)))
		*fds += e->d_name[0] != '.';
	closedir(d);
	return 0;
}

static int daemon_mem(const struct opts *o, struct mem *m, const char *label)
{
	m->label = label;
	m->runs_held = runs_created;
	return read_mem(o->daemon_pid, &m->rss_kb, &m->pss_kb, &m->fds);
}

/* Whether run ID's cgroup holds its command, a process called "sleep". */
static bool run_sleeping(const struct opts *o, const char *id)
{
	char path[4200], comm[32];
	FILE *f;
	int pid;
	bool found = false;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", o->cgroup_root, id);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fscanf(f, "%d", &pid) == 1) {
		FILE *c;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		c = fopen(path, "r");
		if (c) {
			found = fgets(comm, sizeof(comm), c) && strcmp(comm, "sleep\n") == 0;
			fclose(c);
		}
	}
	fclose(f);
	return found;
}

static int wait_sleeping(const struct opts *o, const char *tag, unsigned long n)
{
	uint64_t deadline = now_ns() + (uint64_t)TIMEOUT_S * 1000000000ull;

	for (unsigned long i = 0; i < n; i++) {
		char id[64];

		snprintf(id, sizeof(id), "%s-%lu", tag, i + 1);
		while (!run_sleeping(o, id)) {
			if (now_ns() > deadline) {
				fprintf(stderr, "bench-agent: run %s: no sleep in %s/%s after "
						"%d s\n",
					id, o->cgroup_root, id, TIMEOUT_S);
				return -1;
			}
			sleep_ms(10);
		}
	}
	/* Let whatever each controller does once the command runs settle. */
	sleep_ms(1000);
	return 0;
}

/* LIVE runs of SLEEP 600 through the API: the daemon's memory with them live, then cancelled. */
static int mem_api_live(const struct opts *o, struct mem *live, struct mem *after)
{
	char argv_json[4200];

	snprintf(argv_json, sizeof(argv_json), "[\"%s\",\"600\"]", o->sleep_cmd);
	for (unsigned long i = 0; i < o->live; i++) {
		char id[64];

		snprintf(id, sizeof(id), "ba-live-api-%lu", i + 1);
		if (api_create(o, id, argv_json))
			return -1;
	}
	if (wait_sleeping(o, "ba-live-api", o->live) || daemon_mem(o, live, "daemon, live runs"))
		return -1;
	for (unsigned long i = 0; i < o->live; i++) {
		char target[96];

		snprintf(target, sizeof(target), "/v1/runs/ba-live-api-%lu/cancel", i + 1);
		if (http_expect(o, "POST", target, NULL, 202, NULL))
			return -1;
	}
	if (api_wait_idle(o, NULL))
		return -1;
	for (unsigned long i = 0; i < o->live; i++) {
		char id[64];

		snprintf(id, sizeof(id), "ba-live-api-%lu", i + 1);
		if (api_wait_ended(o, id, "\"reason\":\"cancelled\"", NULL))
			return -1;
	}
	return daemon_mem(o, after, "daemon, after they ended");
}

/* LIVE tether run --standalone of SLEEP 600: the sum over their controllers, then SIGTERM. */
static int mem_standalone_live(const struct opts *o, struct mem *sum)
{
	pid_t *pids = calloc(o->live, sizeof(pid_t));
	int ret = -1;

	*sum = (struct mem){ .label = "tether run --standalone, live runs (sum)" };
	if (!pids)
		return -1;
	for (unsigned long i = 0; i < o->live; i++) {
		char id[64];

		snprintf(id, sizeof(id), "ba-live-sa-%lu", i + 1);
		pids[i] = spawn_tether(o, true, id,
				       (const char *const[]){ o->sleep_cmd, "600", NULL }, -1);
		if (pids[i] < 0)
			goto out;
	}
	if (wait_sleeping(o, "ba-live-sa", o->live))
		goto out;
	for (unsigned long i = 0; i < o->live; i++) {
		long rss, pss, fds;

		if (read_mem(pids[i], &rss, &pss, &fds))
			goto out;
		sum->rss_kb += rss;
		sum->pss_kb += pss;
		sum->fds += fds;
	}
	ret = 0;
out:
	/* SIGTERM cancels a run (exit 130); every controller started is reaped. */
	for (unsigned long i = 0; i < o->live && pids[i] > 0; i++)
		kill(pids[i], SIGTERM);
	for (unsigned long i = 0; i < o->live && pids[i] > 0; i++) {
		char id[64];

		snprintf(id, sizeof(id), "ba-live-sa-%lu", i + 1);
		if (reap_tether(o, pids[i], id, 130))
			ret = -1;
	}
	free(pids);
	return ret;
}

/* ---- the report ----------------------------------------------------------- */

static void sort_samples(double *samples, size_t n)
{
	qsort(samples, n, sizeof(*samples), bench_cmp_double);
}

static void raw_line(const char *what, const char *label, const double *sorted, size_t n)
{
	printf("bench-agent raw what=%s label=%s n=%zu median_ns=%.0f p90_ns=%.0f p99_ns=%.0f "
	       "min_ns=%.0f max_ns=%.0f\n",
	       what, label, n, bench_percentile(sorted, n, 50), bench_percentile(sorted, n, 90),
	       bench_percentile(sorted, n, 99), sorted[0], sorted[n - 1]);
}

struct results {
	double *start[LAUNCHERS], *reply;
	double rate_ns[RATE_ROWS][MAX_REPS];
	struct mem fresh, idle, live, after, standalone, end;
};

static void mem_line(const struct mem *m, const struct mem *base, unsigned long per,
		     const char *what)
{
	printf("    %-44s %9ld %9ld %6ld", m->label, m->rss_kb, m->pss_kb, m->fds);
	if (base)
		printf(" %+9ld %9.0f  %s\n", m->pss_kb - base->pss_kb,
		       (double)(m->pss_kb - base->pss_kb) / (double)per, what);
	else if (per)
		printf(" %9s %9.0f  %s\n", "", (double)m->pss_kb / (double)per, what);
	else
		printf(" %9s %9s  %s\n", "", "", what);
}

static void report(const struct opts *o, struct results *res)
{
	static const char *const rate_label[RATE_ROWS] = {
		[RATE_API_1] = "api-1", [RATE_API_N] = "api-n", [RATE_SA_1] = "standalone-1",
		[RATE_SA_N] = "standalone-n",
	};
	char rate_name[RATE_ROWS][64];
	double rate_median[RATE_ROWS], sa = 0;
	unsigned long k = o->live;
	struct utsname u;
	char date[32];
	time_t t = time(NULL);

	snprintf(rate_name[RATE_API_1], 64, "api, 1 client");
	snprintf(rate_name[RATE_API_N], 64, "api, %lu clients at once", o->clients);
	snprintf(rate_name[RATE_SA_1], 64, "tether run --standalone, 1 at a time");
	snprintf(rate_name[RATE_SA_N], 64, "tether run --standalone, %lu at a time", o->clients);

	for (size_t l = 0; l < LAUNCHERS; l++) {
		sort_samples(res->start[l], o->rounds);
		raw_line("start", launcher_label[l], res->start[l], o->rounds);
	}
	sort_samples(res->reply, o->rounds);
	raw_line("reply", "api", res->reply, o->rounds);
	for (size_t r = 0; r < RATE_ROWS; r++) {
		double sorted[MAX_REPS];

		for (unsigned long i = 0; i < o->reps; i++)
			printf("bench-agent raw what=rate label=%s rep=%lu runs=%lu ns=%.0f\n",
			       rate_label[r], i + 1, o->runs, res->rate_ns[r][i]);
		memcpy(sorted, res->rate_ns[r], o->reps * sizeof(double));
		sort_samples(sorted, o->reps);
		/* runs/s of the median rep (of an even count, the slower middle one) */
		rate_median[r] = (double)o->runs * 1e9 / bench_percentile(sorted, o->reps, 50);
	}
	for (const struct mem *m = &res->fresh; m <= &res->end; m++)
		printf("bench-agent raw what=mem label=\"%s\" rss_kb=%ld pss_kb=%ld fds=%ld "
		       "runs_held=%lu\n",
		       m->label, m->rss_kb, m->pss_kb, m->fds, m->runs_held);

	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&t));
	printf("bench-agent  kernel %s  %s  (%s)\n", u.release, date, o->context);

	printf("  create to first instruction (us), %lu rounds after %lu warm-up, launchers "
	       "interleaved\n",
	       o->rounds, o->warmup);
	printf("    %-44s %9s %9s %9s %9s %9s\n", "", "median", "p99", "x stand.", "reply",
	       "reply p99");
	for (size_t l = 0; l < LAUNCHERS; l++) {
		double m = bench_percentile(res->start[l], o->rounds, 50);

		printf("    %-44s %9.0f %9.0f %9.2f", launcher_name[l], m / 1000,
		       bench_percentile(res->start[l], o->rounds, 99) / 1000,
		       m / bench_percentile(res->start[STANDALONE], o->rounds, 50));
		if (l == API)
			printf(" %9.0f %9.0f\n", bench_percentile(res->reply, o->rounds, 50) / 1000,
			       bench_percentile(res->reply, o->rounds, 99) / 1000);
		else
			printf(" %9s %9s\n", "-", "-");
	}

	printf("  runs per second, %lu runs of %s, first request to last run ended "
	       "(median of %lu reps)\n",
	       o->runs, o->true_cmd, o->reps);
	printf("    %-44s %9s %9s %9s %9s\n", "", "runs/s", "min", "max", "x stand.");
	sa = rate_median[RATE_SA_1];
	for (size_t r = 0; r < RATE_ROWS; r++) {
		double lo = 1e300, hi = 0;

		for (unsigned long i = 0; i < o->reps; i++) {
			double v = (double)o->runs * 1e9 / res->rate_ns[r][i];

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		printf("    %-44s %9.2f %9.2f %9.2f %9.2f\n", rate_name[r], rate_median[r], lo, hi,
		       rate_median[r] / sa);
	}
	/* issue 18: back to back through the node agent, against standalone runs */
	printf("  target: runs/s through the API (1 client) >= %.1f x standalone 1 at a time: "
	       "%.2f  %s\n", TARGET_API_VS_STANDALONE, rate_median[RATE_API_1] / sa,
	       rate_median[RATE_API_1] / sa >= TARGET_API_VS_STANDALONE ? "MET" : "MISS");

	printf("  memory (KiB, /proc/PID/smaps_rollup), %lu live runs of %s 600\n", k,
	       o->sleep_cmd);
	printf("    %-44s %9s %9s %6s %9s %9s\n", "", "Rss", "Pss", "fds", "Pss +", "per run");
	mem_line(&res->fresh, NULL, 0, "(no run yet)");
	{
		char what[64];

		snprintf(what, sizeof(what), "(%lu runs ended)", res->idle.runs_held);
		mem_line(&res->idle, NULL, 0, what);
	}
	mem_line(&res->live, &res->idle, k, "(over idle)");
	mem_line(&res->after, &res->idle, k, "(over idle)");
	mem_line(&res->standalone, NULL, k, "(their controllers)");
	{
		char what[96];
		unsigned long more = res->end.runs_held - res->after.runs_held;

		snprintf(what, sizeof(what), "(%lu runs ended; per run: the %lu since)",
			 res->end.runs_held, more);
		mem_line(&res->end, &res->after, more ? more : 1, what);
	}
	printf("  x stand.: ratio to tether run --standalone (latency: of the medians; "
	       "runs/s: to 1 at a time)\n"
	       "  reply: connect to the POST's 201 read in full; Pss +: over the line it is "
	       "compared to; fds: open descriptors\n");
	for (size_t i = 0; i < o->note_count; i++)
		printf("  %s\n", o->notes[i]);
}

/* ---- main ----------------------------------------------------------------- */

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
	fprintf(stderr,
		"usage: driver -p PROBE -t TRUE -l SLEEP -T TETHER -e ENVELOPE -a AUDIT_DIR\n"
		"              -s SOCKET -D DAEMON_PID [-n ROUNDS] [-w WARMUP] [-k RUNS]\n"
		"              [-j CLIENTS] [-r REPS] [-m LIVE] [-g CGROUP_ROOT] [-c CONTEXT]\n"
		"              [-x NOTE...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .rounds = 100, .warmup = 5, .runs = 100, .clients = 4, .reps = 3,
			  .live = 64, .cgroup_root = "/sys/fs/cgroup/tether", .context = "" };
	struct results res = { 0 };
	unsigned long pid = 0;
	int c;

	while ((c = getopt(argc, argv, "p:t:l:T:e:a:s:D:n:w:k:j:r:m:g:c:x:")) != -1) {
		switch (c) {
		case 'p':
			o.probe = optarg;
			break;
		case 't':
			o.true_cmd = optarg;
			break;
		case 'l':
			o.sleep_cmd = optarg;
			break;
		case 'T':
			o.tether = optarg;
			break;
		case 'e':
			o.envelope_path = optarg;
			break;
		case 'a':
			o.audit_dir = optarg;
			break;
		case 's':
			o.sock = optarg;
			break;
		case 'g':
			o.cgroup_root = optarg;
			break;
		case 'c':
			o.context = optarg;
			break;
		case 'D':
			if (parse_count(optarg, 4194304, &pid) || pid < 2)
				usage();
			o.daemon_pid = (pid_t)pid;
			break;
		case 'n':
			if (parse_count(optarg, MAX_ROUNDS, &o.rounds) || !o.rounds)
				usage();
			break;
		case 'w':
			if (parse_count(optarg, MAX_WARMUP, &o.warmup))
				usage();
			break;
		case 'k':
			if (parse_count(optarg, MAX_RUNS, &o.runs) || !o.runs)
				usage();
			break;
		case 'j':
			if (parse_count(optarg, MAX_CLIENTS, &o.clients) || o.clients < 2)
				usage();
			break;
		case 'r':
			if (parse_count(optarg, MAX_REPS, &o.reps) || !o.reps)
				usage();
			break;
		case 'm':
			if (parse_count(optarg, MAX_LIVE, &o.live) || !o.live)
				usage();
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
	if (optind != argc || !o.probe || !o.true_cmd || !o.sleep_cmd || !o.tether ||
	    !o.envelope_path || !o.audit_dir || !o.sock || !o.daemon_pid ||
	    strlen(o.sock) >= sizeof(((struct sockaddr_un *)0)->sun_path) || o.runs < o.clients)
		usage();
	o.envelope_json = json_string_of_file(o.envelope_path);
	for (size_t l = 0; l < LAUNCHERS; l++)
		res.start[l] = calloc(o.rounds, sizeof(double));
	res.reply = calloc(o.rounds, sizeof(double));
	if (!o.envelope_json || !res.start[API] || !res.start[VIA_DAEMON] ||
	    !res.start[STANDALONE] || !res.reply) {
		fprintf(stderr, "bench-agent: out of memory\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* The daemon was just started (run-in-vm.sh) and has no run yet. */
	if (api_wait_up(&o) || api_wait_idle(&o, NULL) || daemon_mem(&o, &res.fresh, "daemon, fresh"))
		return 1;
	fprintf(stderr, "bench-agent: warm-up: %lu rounds\n", o.warmup);
	if (latency(&o, "warm", o.warmup, NULL, NULL) ||
	    daemon_mem(&o, &res.idle, "daemon, idle"))
		return 1;
	fprintf(stderr, "bench-agent: memory: %lu live runs through the API\n", o.live);
	if (mem_api_live(&o, &res.live, &res.after))
		return 1;
	fprintf(stderr, "bench-agent: memory: %lu live tether run --standalone\n", o.live);
	if (mem_standalone_live(&o, &res.standalone))
		return 1;
	fprintf(stderr, "bench-agent: latency: %lu rounds\n", o.rounds);
	if (latency(&o, "lat", o.rounds, res.start, res.reply))
		return 1;
	for (unsigned long rep = 0; rep < o.reps; rep++) {
		fprintf(stderr, "bench-agent: runs per second: rep %lu of %lu\n", rep + 1, o.reps);
		for (size_t k = 0; k < RATE_ROWS; k++) {
			enum rate_row r = (enum rate_row)((k + rep) % RATE_ROWS);
			bool api = r == RATE_API_1 || r == RATE_API_N;
			unsigned long clients = r == RATE_API_1 || r == RATE_SA_1 ? 1 : o.clients;

			if (rate_once(&o, api, clients, rep + 1, &res.rate_ns[r][rep]))
				return 1;
		}
	}
	if (daemon_mem(&o, &res.end, "daemon, at the end"))
		return 1;
	report(&o, &res);
	return 0;
}
