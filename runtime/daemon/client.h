/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CLI's side of the daemon's API: tether run (through the daemon), ps,
 * inspect, logs and kill.  Requests are HTTP/1.0 with Connection: close,
 * so a reply ends with its connection and needs no parser for chunks.
 */
#ifndef TETHER_RUNTIME_DAEMON_CLIENT_H
#define TETHER_RUNTIME_DAEMON_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#define DAEMON_SOCKET_PATH "/run/tether/tether.sock"

/* $TETHER_SOCKET, else DAEMON_SOCKET_PATH. */
const char *client_socket_path(void);

/* Whether a daemon answers on `path` (it accepts a connection). */
bool client_daemon_up(const char *path);

/*
 * One request; *body_out is the reply's body (malloc'd, NUL-terminated).
 * Returns 0 with *status, or a negative errno (-ECONNREFUSED, -ENOENT:
 * no daemon; -EPROTO: not an HTTP reply).
 */
int client_request(const char *path, const char *method, const char *target, const char *body,
		   size_t body_len, int *status, char **body_out, size_t *body_len_out);

/*
 * A GET whose reply streams (records, output): each piece of the body goes
 * to `sink` as it comes, until the daemon ends the reply (0) or `sink`
 * returns non-zero (its value).  *status is the reply's.  A signal that
 * interrupts the wait calls `on_signal` (if set), then waits again.
 */
int client_stream(const char *path, const char *target, int (*sink)(void *ctx, const char *data,
			size_t len), void *ctx, int *status, void (*on_signal)(void *ctx));

/*
 * Lends the daemon fds[0..2] for a run (runtime/daemon/stdio.c): the token
 * to give as stdio_token, and the connection that keeps it good (close it
 * once the run was created).
 */
int client_stdio_lease(const char *path, const int fds[3], char token[64], int *conn);

#endif
