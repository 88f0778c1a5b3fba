// SPDX-License-Identifier: GPL-2.0
/*
 * tether run: one confined run (runtime/run/run.h), driven to its end, and
 * its terminal reason as the exit status.  This verb owns what a run does
 * not: the command line, signals, messages and the exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "policyc/policy.h"
#include "runtime/daemon/client.h"
#include "runtime/run/run.h"
#include "runtime/run_daemon.h"
#include "runtime/runs.h"
#include "runtime/tether.h"

struct run_opts {
	const char *envelope;
	const char *run_id;
	const char *workspace;
	const char *audit_path;
	const char *traceparent;
	uint64_t audit_rate_limit;	/* run_config's: 0 default, UINT64_MAX none */
	bool audit_allowed;
	bool standalone;
	const char *artifacts;	/* --artifacts DIR */
	char **argv;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tether run --envelope FILE [--run-id ID] [--workspace DIR] [--audit FILE]\n"
		"                  [--audit-allowed] [--audit-rate-limit N] [--traceparent TRACEPARENT]\n"
		"                  [--standalone] [--artifacts DIR]\n"
		"                  -- COMMAND [ARGS...]\n"
		"\n"
		"Runs COMMAND in a fresh cgroup confined by the envelope's rules (BPF-LSM).\n"
		"FILE is an envelope or a policy compiled by tether compile (- reads it from\n"
		"standard input, to its end: COMMAND's standard input is then empty).  One JSON audit\n"
		"record per line goes to --audit FILE (default: the envelope's audit.sink,\n"
		"else stderr): every denial, and with --audit-allowed (or the envelope's\n"
		"audit.record_allowed) every allowed write operation too.\n"
		"\n"
		"--workspace DIR gives this run its own workspace in place of the envelope's\n"
		"filesystem.workspace.path (checked as that path is; ${RUN_ID} in that path is\n"
		"this run's id): one reviewed envelope, one digest, a workspace per run.\n"
		"\n"
		"--audit-rate-limit N: flood control's ceiling, the lines of kernel records the\n"
		"run may write per second (default 2000; 0: none); past it records are counted\n"
		"in \"suppressed\" records (docs/audit.md).\n"
		"\n"
		"--artifacts DIR: where the envelope's artifacts go when the run ends (needed\n"
		"when it declares some): the declared regular files, each hashed into the\n"
		"audit stream before it is published; findings of artifacts.scan go to\n"
		"DIR.quarantine (docs/envelope.md, \"Artifacts\").  Runs here (--standalone).\n"
		"\n"
		"--traceparent gives the run a W3C trace context (00-TRACEID-SPANID-FLAGS):\n"
		"every record carries its trace_id and span_id.\n"
		"\n"
		"When a tether daemon answers on $TETHER_SOCKET (default " DAEMON_SOCKET_PATH ")\n"
		"the run is its (journaled, listed by tether ps), with COMMAND's stdin, stdout and\n"
		"stderr lent to it; --standalone runs it in this process all the same.\n"
		"\n"
		"The run's terminal reason is its exit status (and the end record's \"reason\"):\n"
		"  0    succeeded: COMMAND exited 0\n"
		"  N    failed: COMMAND's own non-zero status (128+N if signal N ended it);\n"
		"       126: COMMAND could not be executed, 127: COMMAND was not found\n"
		"  120  refused: this host cannot enforce the envelope (see tether doctor); nothing ran\n"
		"  121  refused: the envelope is invalid; nothing ran\n"
		"  122  usage error; nothing ran\n"
		"  123  setup failed, the run's cleanup could not be verified, or (the command\n"
		"       having succeeded) an artifact could not be exported (the message says which)\n"
		"  124  timed_out: resources.wall_clock or cleanup.lease ran out; the run was killed\n"
		"  125  budget_exhausted: resources.memory_bytes (OOM kill), process_count (forks\n"
		"       refused repeatedly), output_bytes or network_egress.max_bytes\n"
		"  130  cancelled: SIGINT, SIGTERM or SIGHUP to tether, or tether kill RUN\n");
}

static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "envelope", required_argument, NULL, 'e' },
		{ "run-id", required_argument, NULL, 'i' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "audit", required_argument, NULL, 'a' },
		{ "audit-allowed", no_argument, NULL, 'A' },
		{ "traceparent", required_argument, NULL, 'T' },
		{ "audit-rate-limit", required_argument, NULL, 'R' },
		{ "standalone", no_argument, NULL, 'S' },
		{ "artifacts", required_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:i:w:a:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->envelope = optarg;
			break;
		case 'i':
			o->run_id = optarg;
			break;
		case 'w':
			o->workspace = optarg;
			break;
		case 'a':
			o->audit_path = optarg;
			break;
		case 'A':
			o->audit_allowed = true;
			break;
		case 'R': {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || v > 1000000000) {
				fprintf(stderr, "tether run: --audit-rate-limit '%s': not a number "
					"of lines per second from 0 (no ceiling) to 1000000000\n",
					optarg);
				return -EINVAL;
			}
			o->audit_rate_limit = v ? v : UINT64_MAX;
			break;
		}
		case 'T':
			if (!run_traceparent_valid(optarg)) {
				fprintf(stderr, "tether run: --traceparent '%s': not a W3C trace "
					"context (00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not "
					"all zero)\n", optarg);
				return -EINVAL;
			}
			o->traceparent = optarg;
			break;
		case 'X':
			o->artifacts = optarg;
			o->standalone = true;	/* DIR is the caller's: the run is this process's */
			break;
		case 'S':
			o->standalone = true;
			break;
		case 'h':
			usage(stdout);
			exit(TETHER_EXIT_OK);
		default:
			return -EINVAL;
		}
	}
	if (!o->envelope) {
		fprintf(stderr, "tether run: --envelope FILE is required\n");
		return -EINVAL;
	}
	if (optind >= argc) {
		fprintf(stderr, "tether run: no command given (tether run --envelope FILE -- COMMAND)\n");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

/* A failure as a message and tether's exit status (documented in usage() and the README). */
static int report(const struct run_error *err)
{
	static const int status[] = {
		[RUN_ERROR_REFUSED] = TETHER_EXIT_REFUSED,
		[RUN_ERROR_INVALID] = TETHER_EXIT_RUN_INVALID,
		[RUN_ERROR_USAGE] = TETHER_EXIT_RUN_USAGE,
		[RUN_ERROR_SETUP] = TETHER_EXIT_RUN_ERROR,
	};

	if (err->msg[0])
		fprintf(stderr, "tether run: %s\n", err->msg);
	if (err->has_report)
		doctor_print(&err->report, stderr);
	return err->kind ? status[err->kind] : TETHER_EXIT_RUN_ERROR;
}

static int exit_status(const struct run_result *res)
{
	switch (res->reason) {
	case RUN_REASON_SUCCEEDED:
		return TETHER_EXIT_OK;
	case RUN_REASON_CANCELLED:
		return TETHER_EXIT_CANCELLED;
	case RUN_REASON_TIMED_OUT:
		return TETHER_EXIT_TIMED_OUT;
	case RUN_REASON_BUDGET:
		return TETHER_EXIT_BUDGET;
	case RUN_REASON_REFUSED:
		return TETHER_EXIT_REFUSED;
	default:
		/* failed although the command exited 0: an artifact could not be exported */
		return res->exit_status ? res->exit_status : TETHER_EXIT_RUN_ERROR;
	}
}

static const int cancel_signals[3] = { SIGINT, SIGTERM, SIGHUP };
/* The signal that asked to cancel the run; 0: none (yet). */
static volatile sig_atomic_t cancel_signal;

static void on_cancel_signal(int sig)
{
	cancel_signal = sig;
}

/*
 * Serves the run until its command exits.  SIGINT, SIGTERM and SIGHUP stay
 * blocked but while the run waits for its events (`waiting`: the caller's
 * mask without them), so they cancel it at once and never in the middle of
 * serving it.
 */
static int drive(struct run *run, const sigset_t *waiting, struct run_error *err)
{
	int r = 0;

	while (!r && !run_exited(run)) {
		r = run_dispatch(run, -1, waiting, err);
		if (cancel_signal) {
			char why[64];

			snprintf(why, sizeof(why), "signal %d (%s)", (int)cancel_signal,
				 strsignal((int)cancel_signal));
			cancel_signal = 0;
			run_cancel(run, why);
		}
	}
	return r;
}

int cmd_run(int argc, char **argv)
{
	struct run_config cfg = { .out_fd = { STDOUT_FILENO, STDERR_FILENO }, .environ = environ };
	struct run_opts opts = { 0 };
	struct tp_policy *policy = NULL;
	struct run_error err;
	struct run_result res;
	struct run *run = NULL;
	char run_id[80], envelope_digest[TP_DIGEST_TEXT_MAX];
	struct tp_run_binding bind;
	uint8_t digest[32];
	struct sigaction sa = { .sa_handler = on_cancel_signal };
	sigset_t block, old, waiting;
	int ret, r;

	cfg.started_ns = clock_ns(CLOCK_MONOTONIC);
	cfg.trace_steps = tether_verbose;
	/*
	 * A closed stdin, stdout or stderr would be reused by the next open
	 * (the audit file, a map): the run would write there.  /dev/null
	 * fills the hole.
	 */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return TETHER_EXIT_RUN_ERROR;
	if (parse_opts(argc, argv, &opts)) {
		usage(stderr);
		return TETHER_EXIT_RUN_USAGE;
	}
	/* a given --run-id is checked by run_create, like any other caller's */
	if (opts.run_id) {
		snprintf(run_id, sizeof(run_id), "%s", opts.run_id);
	} else if ((r = run_id_generate(run_id, sizeof(run_id)))) {
		fprintf(stderr, "tether run: generating a run id: %s\n", strerror(-r));
		return TETHER_EXIT_RUN_ERROR;
	}
	/* an invalid id would be filled into the workspace path: run_create's check comes too late */
	if (!run_id_valid(run_id)) {
		fprintf(stderr, "tether run: invalid run id '%s': use 1 to 64 of [A-Za-z0-9._-], "
			"not '.' or '..'\n", run_id);
		return TETHER_EXIT_RUN_USAGE;
	}
	bind = (struct tp_run_binding){ run_id, opts.workspace };
	if (policy_load_bound(opts.envelope, &bind, &policy, digest) < 0)
		return TETHER_EXIT_RUN_INVALID;
	tp_digest_text(digest, envelope_digest);
	if (policy->artifact_count && !opts.artifacts) {
		fprintf(stderr, "tether run: %s declares artifacts: name the directory they go to "
			"with --artifacts DIR. Nothing ran.\n", policy_input_name(opts.envelope));
		tp_policy_free(policy);
		return TETHER_EXIT_RUN_USAGE;
	}
	if (!policy->artifact_count && opts.artifacts) {
		fprintf(stderr, "tether run: --artifacts %s: %s declares no artifacts "
			"(artifacts.allow), so nothing would leave the workspace; drop the "
			"option or declare them. Nothing ran.\n", opts.artifacts,
			policy_input_name(opts.envelope));
		tp_policy_free(policy);
		return TETHER_EXIT_RUN_USAGE;
	}
	if (!opts.standalone && client_daemon_up(client_socket_path())) {
		if (opts.audit_rate_limit) {
			fprintf(stderr, "tether run: --audit-rate-limit: the node agent on %s runs "
				"this run, and its audit_rate_limit (daemon.yaml) applies; add "
				"--standalone to run it here with yours. Nothing ran.\n",
				client_socket_path());
			tp_policy_free(policy);
			return TETHER_EXIT_RUN_USAGE;
		}
		const struct run_daemon_request q = {
			.envelope = opts.envelope,
			.envelope_name = policy_input_name(opts.envelope),
			.policy = policy,
			.argv = opts.argv,
			.run_id = run_id,
			.workspace = opts.workspace,
			.traceparent = opts.traceparent,
			.audit_path = opts.audit_path,
			.audit_allowed = opts.audit_allowed,
		};

		signal(SIGPIPE, SIG_IGN);
		ret = run_via_daemon(client_socket_path(), &q);
		tp_policy_free(policy);
		return ret;
	}

	/* A closed audit pipe is an error to report (EPIPE), not a reason to die mid-run. */
	signal(SIGPIPE, SIG_IGN);
	/* SIGINT/SIGTERM/SIGHUP cancel the run through the loop, never leave it unsupervised. */
	sigemptyset(&block);
	for (size_t i = 0; i < 3; i++)
		sigaddset(&block, cancel_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	waiting = old;
	for (size_t i = 0; i < 3; i++) {
		sigaction(cancel_signals[i], &sa, NULL);
		sigdelset(&waiting, cancel_signals[i]);
	}
	cfg.policy = policy;
	cfg.policy_path = opts.envelope;
	cfg.run_id = run_id;
	cfg.envelope_digest = envelope_digest;
	cfg.audit_path = opts.audit_path;
	cfg.audit_allowed = opts.audit_allowed;
	cfg.traceparent = opts.traceparent;
	cfg.audit_rate_limit = opts.audit_rate_limit;
	cfg.artifacts_dir = opts.artifacts;
	cfg.argv = opts.argv;
	cfg.child_mask = &old;
	if (run_create(&cfg, &run, &err)) {
		ret = report(&err);
		goto out;
	}
	r = run_start(run, &err);
	if (!r && (r = drive(run, &waiting, &err)) && !err.msg[0])
		snprintf(err.msg, sizeof(err.msg), "waiting for %s: %s", opts.argv[0], strerror(-r));
	/* a run that could not start or be supervised is torn down all the same */
	ret = r ? report(&err) : 0;
	if (run_teardown(run, &res, &err))
		ret = report(&err);
	else if (!r)
		ret = exit_status(&res);
out:
	run_free(run);
	sigprocmask(SIG_SETMASK, &old, NULL);
	tp_policy_free(policy);
	return ret;
}
