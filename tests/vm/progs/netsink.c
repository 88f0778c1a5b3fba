// SPDX-License-Identifier: GPL-2.0
/*
 * netsink [-d] ADDR PORT [LOG]: a TCP and UDP server on ADDR:PORT (an IPv4
 * or IPv6 literal), the peer that netprobe talks to in the VM tests.
 *
 *   TCP, raw:  reads until EOF, then replies "ok N\n" (N: bytes received).
 *   TCP, HTTP: a request that starts with an HTTP method is read up to the
 *              end of its body (Content-Length, 0 if absent); the reply is
 *              "HTTP/1.1 200 OK" with the body "got N\n".
 *   UDP:       echoes each datagram to its sender.
 *
 * Every connection and datagram appends one line to LOG (default: none):
 *   tcp from=PEER to=LOCAL bytes=N end=eof|http|timeout|ECONNRESET...
 *   udp from=PEER to=LOCAL bytes=N
 * written before the reply, so a client that got its reply finds its line.
 * A test asserts that nothing reached a denied destination by finding its
 * log empty.
 *
 * -d: daemon mode; the parent returns once both sockets are bound and
 * prints the server's pid.  Each TCP connection is served by a child
 * process; a connection idle for IDLE_SEC ends with end=timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define IDLE_SEC 10

static const char *log_path;

static int parse_addr(const char *text, const char *port, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char *end;
	long p = strtol(port, &end, 10);

	if (*end || p <= 0 || p > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)p);
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)p);
		*len = sizeof(*sin6);
	} else {
		return -1;
	}
	return 0;
}

/* "ADDR:PORT", "[ADDR]:PORT" for IPv6. */
static const char *fmt_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char text[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
		snprintf(buf, size, "%s:%u", text, ntohs(sin->sin_port));
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text));
		snprintf(buf, size, "[%s]:%u", text, ntohs(sin6->sin6_port));
	}
	return buf;
}

/* One line, one write(2) on an O_APPEND fd: lines of concurrent children do not mix. */
static void log_line(const char *proto, const struct sockaddr_storage *peer,
		     const struct sockaddr_storage *local, unsigned long long bytes, const char *end)
{
	char line[256], from[64], to[64];
	int fd, n;

	if (!log_path)
		return;
	n = snprintf(line, sizeof(line), "%s from=%s to=%s bytes=%llu%s%s\n", proto,
		     fmt_addr(peer, from, sizeof(from)), fmt_addr(local, to, sizeof(to)), bytes,
		     end ? " end=" : "", end ? end : "");
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		perror("netsink: log");
	close(fd);
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int is_http(const char *buf, size_t len)
{
	static const char *const methods[] = { "GET ", "POST ", "PUT ", "HEAD ", "CONNECT " };

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		size_t l = strlen(methods[i]);

		if (len >= l && !memcmp(buf, methods[i], l))
			return 1;
	}
	return 0;
}

/* The value of Content-Length in the header block (0 when absent). */
static unsigned long long content_length(const char *head)
{
	const char *p = head;

	while ((p = strchr(p, '\n'))) {
		p++;
		if (!strncasecmp(p, "Content-Length:", 15))
			return strtoull(p + 15, NULL, 10);
	}
	return 0;
}

/* Serves one TCP connection (in a child process). */
static void serve_tcp(int fd, const struct sockaddr_storage *peer)
{
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	struct timeval tv = { .tv_sec = IDLE_SEC };
	char buf[65536], head[8192] = "", reply[256];
	unsigned long long total = 0, body = 0, want = 0;
	size_t hlen = 0;
	int http = -1;	/* unknown until the first bytes */
	const char *end = "eof";

	getsockname(fd, (struct sockaddr *)&local, &llen);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			end = (errno == EAGAIN || errno == EWOULDBLOCK) ? "timeout" : strerrorname_np(errno);
			break;
		}
		if (n == 0)
			break;
		total += (unsigned long long)n;
		if (http < 0)
			http = is_http(buf, (size_t)n);
		if (http && hlen < sizeof(head) - 1 && !strstr(head, "\r\n\r\n")) {
			/* still in the header block: collect it, count what follows */
			size_t take = (size_t)n < sizeof(head) - 1 - hlen ? (size_t)n : sizeof(head) - 1 - hlen;
			char *sep;

			memcpy(head + hlen, buf, take);
			hlen += take;
			head[hlen] = 0;
			sep = strstr(head, "\r\n\r\n");
			if (sep) {
				size_t header_bytes = (size_t)(sep - head) + 4;

				want = content_length(head);
				body = total - header_bytes;
			}
		} else if (http) {
			body += (unsigned long long)n;
		}
		if (http && strstr(head, "\r\n\r\n") && body >= want) {
			end = "http";
			break;
		}
	}
	log_line("tcp", peer, &local, total, end);
	if (!strcmp(end, "http")) {
		char text[64];
		int tl = snprintf(text, sizeof(text), "got %llu\n", body);
		int n = snprintf(reply, sizeof(reply),
				 "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				 tl, text);

		send_all(fd, reply, (size_t)n);
	} else if (!strcmp(end, "eof")) {
		int n = snprintf(reply, sizeof(reply), "ok %llu\n", total);

		send_all(fd, reply, (size_t)n);
	}
	close(fd);
}

static void serve_udp(int fd, const struct sockaddr_storage *local)
{
	char buf[65536];
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&peer, &plen);

	if (n < 0)
		return;
	log_line("udp", &peer, local, (unsigned long long)n, NULL);
	sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&peer, plen);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int daemonize = 0, one = 1, qlen = 16, tcp, udp, ready[2] = { -1, -1 };
	char ok = 1;

	if (argc > 1 && !strcmp(argv[1], "-d")) {
		daemonize = 1;
		argv++;
		argc--;
	}
	if (argc < 3 || argc > 4 || parse_addr(argv[1], argv[2], &ss, &len) < 0) {
		fprintf(stderr, "usage: netsink [-d] ADDR PORT [LOG]\n");
		return 2;
	}
	if (argc == 4)
		log_path = argv[3];
	signal(SIGCHLD, SIG_IGN);	/* no zombies from connection children */
	signal(SIGPIPE, SIG_IGN);

	tcp = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	udp = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tcp < 0 || udp < 0) {
		perror("netsink: socket");
		return 1;
	}
	setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6) {
		setsockopt(tcp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(udp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	/* server side of TCP Fast Open (also needs net.ipv4.tcp_fastopen & 2) */
	setsockopt(tcp, IPPROTO_TCP, TCP_FASTOPEN, &qlen, sizeof(qlen));
	if (bind(tcp, (struct sockaddr *)&ss, len) < 0 || listen(tcp, 64) < 0 ||
	    bind(udp, (struct sockaddr *)&ss, len) < 0) {
		fprintf(stderr, "netsink: bind %s %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}

	if (daemonize) {
		pid_t pid;

		if (pipe(ready) < 0)
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid > 0) {
			/* the child closes its end once it is ready */
			close(ready[1]);
			if (read(ready[0], &ok, 1) != 1)
				ok = 0;
			printf("%d\n", (int)pid);
			return ok ? 0 : 1;
		}
		close(ready[0]);
		setsid();
		int null = open("/dev/null", O_RDWR);

		/*
		 * No inherited stdio: a suite run as "sh suite.sh | tail" must
		 * see EOF although this server outlives it.
		 */
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		if (write(ready[1], &ok, 1) != 1)
			return 1;
		close(ready[1]);
	}

	for (;;) {
		struct pollfd p[2] = { { .fd = tcp, .events = POLLIN }, { .fd = udp, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("netsink: poll");
			return 1;
		}
		if (p[1].revents & POLLIN)
			serve_udp(udp, &ss);
		if (p[0].revents & POLLIN) {
			struct sockaddr_storage peer;
			socklen_t plen = sizeof(peer);
			int c = accept4(tcp, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
			pid_t pid;

			if (c < 0)
				continue;
			pid = fork();
			if (pid == 0) {
				close(tcp);
				close(udp);
				serve_tcp(c, &peer);
				_exit(0);
			}
			close(c);
		}
	}
}
