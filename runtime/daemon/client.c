// SPDX-License-Identifier: GPL-2.0
/* The CLI's side of the daemon's API (runtime/daemon/client.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "runtime/daemon/client.h"
#include "runtime/daemon/daemon.h"

/* A reply's head is at most this big. */
#define HEAD_MAX 16384

const char *client_socket_path(void)
{
	const char *p = getenv("TETHER_SOCKET");

	return p && *p ? p : DAEMON_SOCKET_PATH;
}

static int connect_unix(const char *path, int *out)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int r = -errno;

		if (errno == EINTR)
			continue;
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

bool client_daemon_up(const char *path)
{
	int fd;

	if (connect_unix(path, &fd))
		return false;
	close(fd);
	return true;
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_request(const char *path, const char *method, const char *target,
			const char *body, size_t body_len, int *out)
{
	char head[4096];
	int fd, r, n;

	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n"
		     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
		     method, target, body ? body_len : 0);
	if (n < 0 || (size_t)n >= sizeof(head))
		return -ENAMETOOLONG;
	r = connect_unix(path, &fd);
	if (r)
		return r;
	r = send_all(fd, head, (size_t)n);
	if (!r && body && body_len)
		r = send_all(fd, body, body_len);
	if (r) {
		close(fd);
		return r;
	}
	*out = fd;
	return 0;
}

/*
 * Reads until the end of the reply's head; its status, and whatever body
 * bytes came with it (into *extra, malloc'd).
 */
static int read_head(int fd, int *status, char **extra, size_t *extra_len,
		     void (*on_signal)(void *), void *ctx)
{
	char *buf = malloc(HEAD_MAX + 1), *end;
	size_t len = 0;
	int major, minor;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = recv(fd, buf + len, HEAD_MAX - len, 0);

		if (n < 0 && errno == EINTR) {
			if (on_signal)
				on_signal(ctx);
			continue;
		}
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EPROTO;
		}
		len += (size_t)n;
		buf[len] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (end)
			break;
		if (len == HEAD_MAX) {
			free(buf);
			return -EPROTO;
		}
	}
	if (sscanf(buf, "HTTP/%d.%d %d", &major, &minor, status) != 3) {
		free(buf);
		return -EPROTO;
	}
	end += 4;
	*extra_len = len - (size_t)(end - buf);
	memmove(buf, end, *extra_len);
	buf[*extra_len] = 0;
	*extra = buf;
	return 0;
}

int client_request(const char *path, const char *method, const char *target, const char *body,
		   size_t body_len, int *status, char **body_out, size_t *body_len_out)
{
	char *data = NULL;
	size_t len = 0, cap;
	int fd, r;

	r = send_request(path, method, target, body, body_len, &fd);
	if (r)
		return r;
	r = read_head(fd, status, &data, &len, NULL, NULL);
	if (r) {
		close(fd);
		return r;
	}
	cap = len + 1;
	for (;;) {
		ssize_t n;

		if (len + 4096 >= cap) {
			char *nd = realloc(data, cap = cap * 2 + 8192);

			if (!nd) {
				free(data);
				close(fd);
				return -ENOMEM;
			}
			data = nd;
		}
		n = recv(fd, data + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			free(data);
			close(fd);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	data[len] = 0;
	*body_out = data;
	if (body_len_out)
		*body_len_out = len;
	return 0;
}

int client_stream(const char *path, const char *target,
		  int (*sink)(void *ctx, const char *data, size_t len), void *ctx, int *status,
		  void (*on_signal)(void *ctx))
{
	char *extra = NULL, buf[65536];
	size_t extra_len = 0;
	int fd, r;

	r = send_request(path, "GET", target, NULL, 0, &fd);
	if (r)
		return r;
	r = read_head(fd, status, &extra, &extra_len, on_signal, ctx);
	if (r) {
		close(fd);
		return r;
	}
	if (extra_len)
		r = sink(ctx, extra, extra_len);
	free(extra);
	while (!r) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR) {
			if (on_signal)
				on_signal(ctx);
			continue;
		}
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		r = sink(ctx, buf, (size_t)n);
	}
	close(fd);
	return r;
}

int client_stdio_lease(const char *path, const int fds[3], char token[64], int *conn)
{
	static const char hello[] = "tether-stdio 1\n";
	char spath[4096], reply[128];
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(3 * sizeof(int))];
	} ctl = { 0 };
	struct iovec iov = { .iov_base = (void *)hello, .iov_len = sizeof(hello) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
			      .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	size_t len = 0;
	int fd, r;

	snprintf(spath, sizeof(spath), "%s" DAEMON_STDIO_SUFFIX, path);
	r = connect_unix(spath, &fd);
	if (r)
		return r;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, 3 * sizeof(int));
	while (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0) {
		if (errno == EINTR)
			continue;
		r = -errno;
		close(fd);
		return r;
	}
	while (len < sizeof(reply) - 1 && !memchr(reply, '\n', len)) {
		ssize_t n = recv(fd, reply + len, sizeof(reply) - 1 - len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return n < 0 ? -errno : -EPROTO;
		}
		len += (size_t)n;
	}
	reply[len] = 0;
	reply[strcspn(reply, "\n")] = 0;
	if (strncmp(reply, "error", 5) == 0 || strlen(reply) >= 64 || !reply[0]) {
		close(fd);
		return -EACCES;
	}
	strcpy(token, reply);
	*conn = fd;
	return 0;
}
