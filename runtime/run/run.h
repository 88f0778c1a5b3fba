/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run: one confined command, from compiled policy to cleanup evidence, as
 * an object a process can hold several of and drive from one event loop.
 *
 *   run_create    preflight, workspace, TMPDIR, rules, run cgroup, limits,
 *                 DNS proxy, map entries (enforcement on), audit sink
 *   run_start     the start record, clone3(CLONE_INTO_CGROUP), exec
 *   run_fd        one descriptor to poll (EPOLLIN); when it is readable,
 *   run_dispatch  serves the run: records, output, DNS, limits, wall clock
 *                 (or waits for them itself, for a caller with one run)
 *   run_cancel    ends the run (cancelled), as a signal to the CLI does
 *   run_teardown  kills what is left, drains, removes every trace, writes
 *                 the cleanup and end records, and says how the run ended
 *
 * Enforcement is switched on (the runs map entry) before the child exists,
 * and the child is born inside the run cgroup, so no instruction of the
 * command runs unconfined.  If anything on the way fails, the command does
 * not run.
 *
 * Every function returns 0 or a negative errno and describes a failure in
 * struct run_error; nothing here decides an exit status or prints an error.
 * What happens along the way (an orphan reclaimed, a run ended by a limit)
 * goes to the config's log function.
 */
#ifndef TETHER_RUNTIME_RUN_H
#define TETHER_RUNTIME_RUN_H

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/doctor.h"

struct tp_policy;
struct run;

/* Whether `s` is a W3C traceparent (version 00) with nonzero trace and span ids. */
bool run_traceparent_valid(const char *s);

struct sink;

struct run_config {
	const struct tp_policy *policy;	/* borrowed until run_free */
	const char *policy_path;	/* for messages */
	const char *run_id;		/* run_id_valid(); borrowed */
	/* "sha256:..." of the envelope as written, before a run binding filled in
	 * its workspace (tp_policy_load_bound); NULL: the policy's own digest */
	const char *envelope_digest;
	/* every record's envelope (docs/audit.md): NULL tenant: the envelope's
	 * identity.tenant; attempt 0: 1; traceparent: a W3C trace context
	 * ("00-TRACEID-SPANID-FLAGS", checked by run_traceparent_valid), or NULL */
	const char *tenant;
	unsigned int attempt;
	const char *traceparent;
	/* JSON Lines audit file (appended, 0600); NULL: the policy's audit.sink, else stderr */
	const char *audit_path;
	/* where the envelope's artifacts go at the end (runtime/run/artifacts.c); NULL: none */
	const char *artifacts_dir;
	/* the node's sinks the records go to as well (the daemon's node log and
	 * configured sinks): borrowed, never closed by the run; their failures
	 * are theirs, not the run's */
	struct sink *const *shared_sinks;
	size_t shared_sink_count;
	bool audit_allowed;		/* also record allowed writes (or the policy's audit.record_allowed) */
	/* flood control (runtime/audit.h): kernel lines per second; 0:
	 * AUDIT_RATE_LIMIT_DEFAULT, UINT64_MAX: no ceiling */
	uint64_t audit_rate_limit;
	char **argv;			/* borrowed until run_free */
	char *const *environ;		/* the environment the run's is built from */
	int out_fd[2];			/* where captured stdout and stderr go (resources.output_bytes) */
	/*
	 * With stdio_set, the command's stdin, stdout and stderr (output that
	 * resources.output_bytes captures goes to out_fd instead); without,
	 * the caller's own.  A daemon never lends the command its own.
	 */
	bool stdio_set;
	int stdio_fd[3];
	const char *cwd;		/* where the command starts; NULL: the caller's cwd */
	/* no run file under /run/tether/runs: tether kill asks the supervisor instead */
	bool no_run_file;
	/* a node agent's run (TETHER_DAEMON_RUNS_DIR): while no agent holds it,
	 * other tether runs' sweeps leave it alone, confined, for the next agent */
	bool daemon_owned;
	const sigset_t *child_mask;	/* the command's signal mask */
	uint64_t started_ns;		/* CLOCK_MONOTONIC when the caller began (setup_us) */
	/* logs how long each step of setup and teardown took (tether -v run) */
	bool trace_steps;
	/* Logs one line about the run ("reclaimed run ...").  NULL: stderr. */
	void (*log)(void *log_ctx, const char *fmt, va_list ap);
	void *log_ctx;
};

/* How a failure is to be taken: the CLI turns it into an exit status. */
enum run_error_kind {
	RUN_ERROR_REFUSED = 1,	/* this host cannot confine the run: nothing ran */
	RUN_ERROR_INVALID,	/* the envelope cannot be run as written: nothing ran */
	RUN_ERROR_USAGE,	/* the caller's request is wrong (an unsafe audit file): nothing ran */
	RUN_ERROR_SETUP,	/* setup or cleanup failed */
};

/* The step that failed. */
enum run_step {
	RUN_STEP_PREFLIGHT = 1,
	RUN_STEP_WORKSPACE,
	RUN_STEP_TMPDIR,
	RUN_STEP_RULES,
	RUN_STEP_AUDIT_FILE,
	RUN_STEP_LOCK,
	RUN_STEP_LOAD,
	RUN_STEP_CONTROLLERS,
	RUN_STEP_CGROUP,
	RUN_STEP_LIMITS,
	RUN_STEP_RUN_FILE,
	RUN_STEP_NETWORK,
	RUN_STEP_INSTALL,
	RUN_STEP_RING,
	RUN_STEP_PREPARE,
	RUN_STEP_SPAWN,
	RUN_STEP_WAIT,
	RUN_STEP_CLEANUP,
};

struct run_error {
	enum run_error_kind kind;
	enum run_step step;
	int err;			/* the errno behind it, positive; 0: none */
	/*
	 * The whole sentence, without a "tether run: " prefix: what failed, on
	 * what, and what to do.  Empty when the problems were logged one by
	 * one as they happened (run_teardown).
	 */
	char msg[PATH_MAX + 768];
	bool has_report;		/* a refusal the doctor's checks explain */
	struct doctor_report report;
};

/* The terminal reasons a run that started can end with. */
enum run_reason {
	RUN_REASON_NONE = 0,
	RUN_REASON_SUCCEEDED,
	RUN_REASON_FAILED,
	RUN_REASON_CANCELLED,
	RUN_REASON_TIMED_OUT,
	RUN_REASON_BUDGET,
	RUN_REASON_REFUSED,	/* the child could not shed the controller's authority */
};

const char *run_reason_name(enum run_reason reason);

struct run_result {
	enum run_reason reason;
	const char *budget;	/* reason BUDGET: "output_bytes", ...; else NULL */
	int exit_status;	/* the command's (128+N: signal N); -1: it never ran */
	bool cleanup_verified;	/* every trace of the run was seen gone */
};

/* Sets up everything but the command's process.  On failure nothing is left. */
int run_create(const struct run_config *cfg, struct run **out, struct run_error *err);

/*
 * A run a supervisor that stopped (SIGKILL, an upgrade) left live, taken
 * over: what its journal says of it.
 */
struct run_adoption {
	const char *cgroup_path;	/* the run cgroup */
	int pid;			/* its command; 0: unknown */
	unsigned long long pid_start;	/* the command's start time (proc_start_time) */
	uint64_t deadline_ns;		/* resources.wall_clock's, CLOCK_MONOTONIC; 0: none */
	uint64_t lease_end_ns;		/* cleanup.lease's, CLOCK_MONOTONIC; 0: none (or not journaled) */
	uint64_t gap_ms;		/* how long it went unsupervised, for its record */
	/* the records its stream holds already, as the end record counts them
	 * (a coalesced record and each number in its coalesced_seqs) */
	uint64_t records_before;
};

/*
 * Takes the run over: its cgroup (and lock), its pinned map entries and
 * ring, its limits and deadline; reads what its ring held meanwhile and
 * writes an "adopted" record.  The command, no child of this process, is
 * watched through a pidfd; its exit status comes from the kernel
 * (tl_run_main_exit).  The run is then served and torn down as any other.
 * cfg is as for run_create (argv is only named in messages; out_fd and
 * stdio are not used: a stopped supervisor's pipes are gone).
 */
int run_adopt(const struct run_config *cfg, const struct run_adoption *a, struct run **out,
	      struct run_error *err);

/*
 * Writes the start record and starts the command.  On failure the run must
 * still be torn down (run_teardown writes its cleanup and end records).
 */
int run_start(struct run *run, struct run_error *err);

/* The descriptor to poll for EPOLLIN; valid from run_create to run_free. */
int run_fd(const struct run *run);

/*
 * Serves what is ready, waiting up to timeout_ms for something to be (0:
 * not at all, for a loop that polled run_fd itself; -1: until something
 * happens).  While it waits the signal mask is `sigmask` (NULL: as it is),
 * as with epoll_pwait: a caller that blocks the signals it handles takes
 * them here, and a signal ends the wait.  Returns 0, also after a signal,
 * or a negative errno when the run cannot be supervised any more (tear it
 * down).
 */
int run_dispatch(struct run *run, int timeout_ms, const sigset_t *sigmask,
		 struct run_error *err);

/* The command has exited: the run is ready for run_teardown. */
bool run_exited(const struct run *run);

/* Ends the run for `reason` (the first cause is the one reported); `why` is logged. */
void run_end(struct run *run, enum run_reason reason, const char *budget, const char *why);

/* run_end(RUN_REASON_CANCELLED): a signal, tether kill, a caller's request. */
void run_cancel(struct run *run, const char *why);

/*
 * Kills what is left, drains output and records, removes the run's map
 * entries, cgroup, TMPDIR and run file, and writes the cleanup and end
 * records.  `res` is filled in any case.  Returns -EUCLEAN when the cleanup
 * could not be verified or the audit stream could not be written.
 */
int run_teardown(struct run *run, struct run_result *res, struct run_error *err);

/*
 * Reclaims every run on the node whose controller died (the sweep
 * run_create makes under the parent lock): kills what is left, removes
 * its map entries and cgroup.  What it does goes to `log`.
 */
int run_reclaim_node(void (*log)(void *ctx, const char *fmt, va_list ap), void *ctx);

/* What a supervisor journals and reports of a run (borrowed from it). */
struct run_info {
	const char *run_id;
	const char *policy_digest;	/* "sha256:..." */
	const char *cgroup_path;	/* "" before the cgroup exists */
	uint64_t cgroup_id;
	uint32_t run_slot;
	int pid;			/* the command; 0 before run_start */
	unsigned long long pid_start;	/* its start time (proc_start_time) */
	uint64_t deadline_ns;		/* resources.wall_clock's, CLOCK_MONOTONIC; 0: none */
	uint64_t lease_end_ns;		/* cleanup.lease's, CLOCK_MONOTONIC; 0: none */
	bool started, exited;
	/* audit stream */
	uint64_t records, coalesced, malformed;
	uint64_t seq_last;		/* highest sequence number seen */
	uint64_t audit_lost;		/* kernel records that found the ring full */
	uint64_t egress_bytes;
	uint64_t output_bytes;		/* captured bytes forwarded */
};
void run_get_info(struct run *run, struct run_info *info);

/*
 * Lets go of a live run without ending it, for another supervisor to adopt
 * (run_adopt): nothing is killed or removed, its enforcement goes on; the
 * command's captured output pipes close with this process.  Frees `run`.
 */
void run_detach(struct run *run);

/* NULL is fine.  A run not torn down is torn down first. */
void run_free(struct run *run);

#endif
