/* SPDX-License-Identifier: GPL-2.0 */
/* CLI verbs and the exit statuses they share (documented in README.md). */
#ifndef TETHER_RUNTIME_TETHER_H
#define TETHER_RUNTIME_TETHER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * `tether run` exits with the run's terminal reason: 0 succeeded; the
 * command's own status (128 + N when a signal N ended it) failed; and
 * these, tether's own (the end record's "reason" tells them from a
 * command that exits with the same number).
 */
enum tether_exit {
	TETHER_EXIT_OK = 0,
	TETHER_EXIT_INVALID = 1,	/* check/compile/explain: the input is invalid; diff: widened */
	TETHER_EXIT_USAGE = 2,		/* bad command line (all verbs but run) */
	TETHER_EXIT_REFUSED = 120,	/* run: this host cannot confine the run; nothing ran */
	TETHER_EXIT_RUN_INVALID = 121,	/* run: the envelope is invalid; nothing ran */
	TETHER_EXIT_RUN_USAGE = 122,	/* run: bad command line; nothing ran */
	TETHER_EXIT_RUN_ERROR = 123,	/* run: setup failed, or cleanup could not be verified */
	TETHER_EXIT_TIMED_OUT = 124,	/* run: timed_out (resources.wall_clock); ended */
	TETHER_EXIT_BUDGET = 125,	/* run: budget_exhausted (memory, processes, output, egress) */
	TETHER_EXIT_NOEXEC = 126,	/* run: the command could not be executed */
	TETHER_EXIT_NOTFOUND = 127,	/* run: the command was not found */
	TETHER_EXIT_CANCELLED = 130,	/* run: cancelled (SIGINT, SIGTERM, SIGHUP, tether kill) */
	TETHER_EXIT_KILL_NO_RUN = 3,	/* kill: no live run has that id */
	TETHER_EXIT_DAEMON_RUNNING = 4,	/* daemon: another daemon holds the state directory */
	TETHER_EXIT_NO_DAEMON = 5,	/* ps, inspect, logs: no daemon answers and no journal */
};

extern bool tether_verbose;

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_audit(int argc, char **argv);

struct tp_policy;
struct tp_diags;
struct tp_envelope;
struct tp_contract;
struct tp_run_binding;

/*
 * "-" for an input path is standard input, named POLICY_STDIN_NAME in
 * diagnostics ("<stdin>:3:5: error: ..."); it is read once, to its end,
 * and every later "-" gets the same bytes.
 */
#define POLICY_STDIN_NAME "<stdin>"
bool policy_path_is_stdin(const char *path);
/* The name diagnostics give `path`: POLICY_STDIN_NAME for "-". */
const char *policy_input_name(const char *path);
/* Standard input's bytes (NUL-terminated; at most TP_POLICY_MAX_BYTES), or a
 * negative errno with a line-0 diagnostic. */
int policy_read_stdin(const char **data, size_t *len, struct tp_diags *diags);

/* Loads an envelope or a compiled policy, from a file or "-"; prints every problem to stderr. */
int policy_load(const char *path, struct tp_policy **out);
/* The same for one run (tp_policy_load_bound()): the bound policy, the written one's digest. */
int policy_load_bound(const char *path, const struct tp_run_binding *bind, struct tp_policy **out,
		      uint8_t envelope_digest[32]);
/* The same, with the problems left in `diags` and nothing printed. */
int policy_load_diags(const char *path, struct tp_policy **out, struct tp_diags *diags);
/* Whether `path` (or standard input) starts with the compiled policy's magic. */
bool policy_is_compiled(const char *path);
/* An envelope or a task contract from a file or "-"; problems in `diags`. */
int policy_parse_envelope(const char *path, struct tp_envelope **out, struct tp_diags *diags);
int policy_parse_contract(const char *path, struct tp_contract **out, struct tp_diags *diags);
/*
 * What `tether check` warns about in the envelope at `path` (none for a
 * compiled policy, which has no positions), appended to `warnings`.  0 or
 * -ENOMEM.
 */
int policy_warnings(const char *path, struct tp_diags *warnings);

/* Prints every diagnostic (or, when there is none, the bare error) to stderr. */
void policy_print_diags(const struct tp_diags *diags, const char *path, int error);
/* "policy sha256:..." and a newline to out.  0 or a negative errno. */
int policy_print_digest(const struct tp_policy *policy, FILE *out);

#endif
