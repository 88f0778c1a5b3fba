/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tether daemon: the node agent.  It keeps the BPF programs pinned, serves
 * the API of docs/api.yaml (HTTP/1.1, JSON) on a unix socket, runs each run
 * as an object on its event loop, and journals every run under its state
 * directory (runtime/daemon/journal.h).  Enforcement never depends on it
 * being alive: programs, maps and each run's ring stay pinned.
 */
#ifndef TETHER_RUNTIME_DAEMON_DAEMON_H
#define TETHER_RUNTIME_DAEMON_DAEMON_H

#define DAEMON_CONFIG_PATH "/etc/tether/daemon.yaml"
/* The stdio socket beside the API's: <socket>.stdio (runtime/daemon/stdio.c). */
#define DAEMON_STDIO_SUFFIX ".stdio"

struct daemon_options {
	const char *config_path;	/* NULL: DAEMON_CONFIG_PATH */
	const char *socket_path;	/* overrides the configuration's */
	const char *state_dir;		/* overrides the configuration's */
};

/* Runs the daemon until SIGTERM or SIGINT.  Returns an exit status (runtime/tether.h). */
int daemon_main(const struct daemon_options *opts);

#endif
