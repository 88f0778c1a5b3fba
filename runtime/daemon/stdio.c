// SPDX-License-Identifier: GPL-2.0
/*
 * The stdio socket (<socket>.stdio): how a client lends a run its own
 * stdin, stdout and stderr, so an interactive program or an MCP stdio
 * server talks to it directly, with no copy through the daemon.  HTTP
 * cannot carry descriptors, so they come first, here:
 *
 *   client: connect; sendmsg("tether-stdio 1\n", SCM_RIGHTS [in, out, err])
 *   daemon: "<token>\n"  (or "error: ...\n" and the connection closes)
 *   client: POST /v1/runs {..., "stdio": "passed", "stdio_token": "<token>"}
 *
 * The token is good for the uid that passed the descriptors, and for as
 * long as that connection stays open; a run claims them once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/daemon/internal.h"

#define STDIO_HELLO "tether-stdio 1\n"
#define STDIO_MAX_LEASES 256

/* A client that connected says hello within this, or is dropped. */
static const struct timeval hello_timeout = { 10, 0 };

static void on_hello(evutil_socket_t fd, short what, void *arg);

static void lease_free(struct daemon *d, struct stdio_lease *l)
{
	for (struct stdio_lease **p = &d->leases; *p; p = &(*p)->next) {
		if (*p == l) {
			*p = l->next;
			break;
		}
	}
	for (int i = 0; i < 3; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	if (l->ev)
		event_free(l->ev);
	close(l->conn);
	free(l);
}

/* The client's end closed (or sent more): the lease ends. */
static void on_lease_conn(evutil_socket_t fd, short what, void *arg)
{
	struct stdio_lease *l = arg;
	char buf[64];

	if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == -1 && errno == EAGAIN)
		return;
	lease_free(l->d, l);
}

static void reply(int fd, const char *text)
{
	ssize_t n = send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);

	(void)n;
}

static bool is_fd_ok(int fd)
{
	struct stat st;

	/* a directory or an O_PATH descriptor is no stdio: refuse it */
	return fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode) &&
	       (fcntl(fd, F_GETFL) & O_PATH) == 0;
}

/* The hello and its descriptors, once they came. */
static void on_hello(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	char buf[sizeof(STDIO_HELLO)] = "";
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int fds[3] = { -1, -1, -1 }, nfds = 0;
	struct stdio_lease *l = NULL;
	unsigned char rnd[16];
	struct caller c;
	size_t count = 0;
	ssize_t n;

	if (what & EV_TIMEOUT)
		goto drop;
	n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	for (cm = CMSG_FIRSTHDR(&msg); n >= 0 && cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (int i = 0; i < k; i++) {
				int got;

				memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (nfds < 3)
					fds[nfds++] = got;
				else
					close(got);
			}
		}
	}
	if (n < 0 && errno == EAGAIN) {
		/* not yet (a spurious wakeup): wait again */
		if (event_base_once(d->base, fd, EV_READ, on_hello, d, &hello_timeout))
			close(fd);
		return;
	}
	if (caller_of(fd, &c) || !daemon_config_allows(&d->cfg, c.uid, c.gids, c.gid_count, NULL)) {
		reply(fd, "error: this caller may not call the daemon\n");
		goto drop;
	}
	if (n != (ssize_t)strlen(STDIO_HELLO) || memcmp(buf, STDIO_HELLO, (size_t)n) != 0 ||
	    (msg.msg_flags & MSG_CTRUNC) || nfds != 3) {
		reply(fd, "error: expected \"tether-stdio 1\\n\" with three descriptors "
			  "(stdin, stdout, stderr) in one SCM_RIGHTS message\n");
		goto drop;
	}
	for (int i = 0; i < 3; i++) {
		if (!is_fd_ok(fds[i])) {
			reply(fd, "error: a descriptor passed is a directory or O_PATH\n");
			goto drop;
		}
	}
	for (struct stdio_lease *p = d->leases; p; p = p->next)
		count++;
	if (count >= STDIO_MAX_LEASES || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		reply(fd, "error: too many descriptors wait for runs\n");
		goto drop;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		goto drop;
	for (int i = 0; i < 16; i++)
		snprintf(l->token + 2 * i, 3, "%02x", rnd[i]);
	l->d = d;
	l->uid = c.uid;
	memcpy(l->fds, fds, sizeof(fds));
	l->conn = fd;
	l->ev = event_new(d->base, fd, EV_READ | EV_PERSIST, on_lease_conn, l);
	if (!l->ev || event_add(l->ev, NULL)) {
		if (l->ev)
			event_free(l->ev);
		free(l);
		goto drop;
	}
	l->next = d->leases;
	d->leases = l;
	{
		char line[48];

		snprintf(line, sizeof(line), "%s\n", l->token);
		reply(fd, line);
	}
	return;
drop:
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(fd);
}

static void on_stdio_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct daemon *d = arg;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd >= 0 && event_base_once(d->base, fd, EV_READ, on_hello, d, &hello_timeout))
		close(fd);
}

int stdio_init(struct daemon *d)
{
	d->stdio_ev = event_new(d->base, d->stdio_fd, EV_READ | EV_PERSIST, on_stdio_accept, d);
	return d->stdio_ev && event_add(d->stdio_ev, NULL) == 0 ? 0 : -ENOMEM;
}

int stdio_claim(struct daemon *d, const char *token, uint32_t uid, int fds[3])
{
	for (struct stdio_lease *l = d->leases; l; l = l->next) {
		if (strcmp(l->token, token) == 0 && l->uid == uid) {
			memcpy(fds, l->fds, sizeof(l->fds));
			l->fds[0] = l->fds[1] = l->fds[2] = -1;
			/* the client learns the run's fate through the API; this connection is done */
			lease_free(d, l);
			return 0;
		}
	}
	return -ENOENT;
}

void stdio_free_all(struct daemon *d)
{
	while (d->leases)
		lease_free(d, d->leases);
	if (d->stdio_ev)
		event_free(d->stdio_ev);
}
