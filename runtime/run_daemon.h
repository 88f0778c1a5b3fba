/* SPDX-License-Identifier: GPL-2.0 */
/* tether run through the daemon (runtime/cmd_run_daemon.c). */
#ifndef TETHER_RUNTIME_RUN_DAEMON_H
#define TETHER_RUNTIME_RUN_DAEMON_H

#include <stdbool.h>
#include <stddef.h>

struct tp_policy;

struct run_daemon_request {
	const char *envelope;		/* the path given (or "-") */
	const char *envelope_name;	/* as diagnostics name it */
	const struct tp_policy *policy;	/* compiled here too: env names, audit.sink */
	char **argv;
	const char *run_id;
	const char *workspace;		/* --workspace; NULL: the envelope's */
	const char *traceparent;	/* --traceparent; NULL: none */
	const char *audit_path;
	bool audit_allowed;
};

/* The run, through the daemon on `socket`; tether run's exit status. */
int run_via_daemon(const char *socket, const struct run_daemon_request *q);

/*
 * The bytes policy_load read for `path` when it was "-" (standard input is
 * read once); -ENOSYS for a file path (read it again).
 */
int tether_policy_bytes(const char *path, char **data, size_t *len);

#endif
