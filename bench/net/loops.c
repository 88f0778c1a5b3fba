// SPDX-License-Identifier: GPL-2.0
/*
 * bench-net loop driver (see bench/README.md), built statically and run
 * inside the test VM, inside and outside tether runs.
 *
 *   loops serve TCP_PORT UDP_PORT DNS_PORT NAME
 *   loops [-b BATCHES] [-l LABEL] [-r ROUND] [-t TCP_PORT] [-u UDP_PORT]
 *         [-U UPSTREAM_PORT] [-n NAME] LOOP=N...
 *
 * `serve` is everything the loops talk to, on 127.0.0.1, in one process that
 * stays outside every run: a TCP listener on TCP_PORT, a UDP sink on
 * UDP_PORT and a DNS "upstream" on UDP DNS_PORT (the loops' UPSTREAM_PORT,
 * default 7053) that answers A queries for NAME with 192.0.2.80 (TTL 300),
 * other types of NAME with no data and every other name with NXDOMAIN.  It
 * binds all three, then forks: the parent prints the server's pid and exits
 * 0 (1 when a bind failed), the child serves until killed.
 *
 * The connect and udp loops wake nobody.  The listener is not watched: the
 * server accepts (and closes) what has queued every ACCEPT_MS, far below
 * what fills its backlog.  The sink is never read: once its receive buffer
 * is full, the kernel drops each datagram on arrival.  A wakeup per
 * operation would time the scheduler instead: whether the woken server
 * preempts the loop depends on where the two sit in the cgroup tree, which
 * is not the same for a run and for the baseline, and in trials it moved
 * the UDP figure by a factor of three either way.
 *
 * LOOP is one of
 *
 *   connect  socket + connect to 127.0.0.1:TCP_PORT + close.  The close
 *            resets (SO_LINGER 0): a normal close leaves the client port in
 *            TIME_WAIT for a minute, and 100,000 connections would run out
 *            of ports.
 *   udp      sendto of 64 bytes to 127.0.0.1:UDP_PORT, on one socket: the
 *            whole send path (routing, both hooks, loopback delivery up to
 *            the full queue)
 *   direct   one lookup of NAME (type A) at 127.0.0.1:UPSTREAM_PORT:
 *            socket + connect + send + poll + recv + close, as a stub
 *            resolver does it; the reply must be NOERROR with an answer
 *   dns      the same at 127.0.0.1:53, which only a run can do: its hooks
 *            send it to the run's DNS proxy, which asks the upstream
 *
 * connect and udp run one untimed warm-up batch, then BATCHES (default 11)
 * timed batches of N iterations; a batch's time (CLOCK_MONOTONIC around the
 * whole batch) divided by N is one sample.  direct and dns run 10 untimed
 * lookups, then N timed ones; each lookup's time is one sample.  For each
 * loop it prints one line
 *
 *   bench-net label=LABEL round=ROUND loop=LOOP n=N batches=B median_ns=X p90_ns=Y
 *             p99_ns=Z min_ns=W
 *
 * (percentiles by nearest rank over the samples; batches=0 for lookups; LABEL
 * and ROUND, default "-" and 0, only tag the line).  Exits 0 when every loop
 * ran, 1 when an operation failed (nothing is printed for that loop), 2 on
 * a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/common/stats.h"

#define MAX_BATCHES	1001
#define MAX_LOOKUPS	100000
#define DNS_WARMUP	10
#define DNS_TIMEOUT_MS	5000
#define UDP_PAYLOAD	64
#define ANSWER_ADDR	"192.0.2.80"	/* TEST-NET-1: public to the proxy, never contacted */
#define ANSWER_TTL	300
#define ACCEPT_MS	5

static uint16_t tcp_port = 7000, udp_port = 7001, upstream_port = 7053, dns_port = 53;
static const char *name = "bench.example";
static struct sockaddr_in tcp_dest, udp_dest;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

/* ---- DNS messages: just what one A question and its answer need -------- */

/* Writes NAME's question (type A, class IN) after a header into buf; returns the length or 0. */
static size_t dns_query(uint8_t *buf, size_t size, uint16_t id, const char *qname)
{
	size_t n = 12;
	const char *label = qname;

	if (size < 12 + strlen(qname) + 2 + 4)
		return 0;
	memset(buf, 0, 12);
	buf[0] = id >> 8, buf[1] = id & 0xff;
	buf[2] = 0x01;		/* RD */
	buf[5] = 1;		/* QDCOUNT */
	while (*label) {
		const char *dot = strchr(label, '.');
		size_t len = dot ? (size_t)(dot - label) : strlen(label);

		if (len == 0 || len > 63)
			return 0;
		buf[n++] = (uint8_t)len;
		memcpy(buf + n, label, len);
		n += len;
		label += len + (dot ? 1 : 0);
	}
	buf[n++] = 0;
	buf[n++] = 0, buf[n++] = 1;	/* QTYPE A */
	buf[n++] = 0, buf[n++] = 1;	/* QCLASS IN */
	return n;
}

/*
 * The upstream's reply to the query in q (len bytes) into out; returns its
 * length, or 0 to drop the query.  Names compare case-insensitively, as DNS
 * does (the proxy may randomise the case).
 */
static size_t dns_answer(const uint8_t *q, size_t len, uint8_t *out, size_t size, const char *own)
{
	char qname[256];
	size_t n = 12, qlen = 0;
	uint16_t qtype;
	bool ours;

	if (len < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1)
		return 0;
	while (n < len && q[n]) {
		size_t l = q[n];

		if (l > 63 || n + 1 + l >= len || qlen + l + 1 >= sizeof(qname))
			return 0;
		if (qlen)
			qname[qlen++] = '.';
		memcpy(qname + qlen, q + n + 1, l);
		qlen += l;
		n += 1 + l;
	}
	qname[qlen] = '\0';
	if (n + 5 > len)
		return 0;
	n += 5;			/* the root label, QTYPE, QCLASS */
	qtype = (uint16_t)(q[n - 4] << 8 | q[n - 3]);
	if (n + 16 > size)
		return 0;
	ours = strcasecmp(qname, own) == 0;
	memcpy(out, q, n);
	out[2] = 0x84 | (q[2] & 0x01);	/* QR, AA; RD copied */
	out[3] = ours ? 0x80 : 0x83;	/* RA; NXDOMAIN for other names */
	memset(out + 6, 0, 6);
	if (ours && qtype == 1) {
		uint8_t rr[16] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, ANSWER_TTL >> 8, ANSWER_TTL & 0xff,
				   0, 4 };

		inet_pton(AF_INET, ANSWER_ADDR, rr + 12);
		out[7] = 1;	/* ANCOUNT */
		memcpy(out + n, rr, sizeof(rr));
		n += sizeof(rr);
	}
	return n;
}

/* ---- serve --------------------------------------------------------------- */

static int bind_loopback(int type, uint16_t port)
{
	struct sockaddr_in sin = loopback(port);
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 4096) < 0)) {
		fprintf(stderr, "loops serve: 127.0.0.1:%u: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The DNS upstream answers at once; the listener is emptied every ACCEPT_MS; the sink, never. */
static void serve_forever(int tcp, int dns, const char *own)
{
	struct pollfd pfd = { .fd = dns, .events = POLLIN };

	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		uint8_t query[2048], out[2048];
		ssize_t got;
		size_t len;
		int c;

		poll(&pfd, 1, ACCEPT_MS);
		while ((got = recvfrom(dns, query, sizeof(query), MSG_DONTWAIT,
				       (struct sockaddr *)&from, &flen)) >= 0) {
			len = dns_answer(query, (size_t)got, out, sizeof(out), own);
			if (len)
				sendto(dns, out, len, 0, (struct sockaddr *)&from, flen);
			flen = sizeof(from);
		}
		while ((c = accept4(tcp, NULL, NULL, SOCK_CLOEXEC)) >= 0)
			close(c);
	}
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int serve(int argc, char **argv)
{
	uint16_t tp, up, dp;
	int tcp, udp, dns, null;
	pid_t pid;

	if (argc != 5 || parse_port(argv[1], &tp) || parse_port(argv[2], &up) ||
	    parse_port(argv[3], &dp) || !*argv[4]) {
		fprintf(stderr, "usage: loops serve TCP_PORT UDP_PORT DNS_PORT NAME\n");
		return 2;
	}
	tcp = bind_loopback(SOCK_STREAM, tp);
	udp = bind_loopback(SOCK_DGRAM, up);
	dns = bind_loopback(SOCK_DGRAM, dp);
	if (tcp < 0 || udp < 0 || dns < 0)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "loops serve: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid > 0) {
		printf("%d\n", (int)pid);
		return 0;
	}
	/* Detached, so that "$(loops serve ...)" returns at once. */
	setsid();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	(void)udp;	/* held open, never read */
	serve_forever(tcp, dns, argv[4]);
	return 0;
}

/* ---- the timed loops ------------------------------------------------------ */

static int loop_connect(unsigned long n)
{
	struct linger reset = { .l_onoff = 1, .l_linger = 0 };

	for (unsigned long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			fprintf(stderr, "loops: socket: %s\n", strerror(errno));
			return -1;
		}
		if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)) < 0 ||
		    connect(fd, (struct sockaddr *)&tcp_dest, sizeof(tcp_dest)) < 0) {
			fprintf(stderr, "loops: connect 127.0.0.1:%u: %s\n", tcp_port,
				strerror(errno));
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

static int udp_fd = -1;

static int loop_udp(unsigned long n)
{
	static const char payload[UDP_PAYLOAD];

	for (unsigned long i = 0; i < n; i++) {
		if (sendto(udp_fd, payload, sizeof(payload), 0, (struct sockaddr *)&udp_dest,
			   sizeof(udp_dest)) != (ssize_t)sizeof(payload)) {
			fprintf(stderr, "loops: sendto 127.0.0.1:%u: %s\n", udp_port,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* One lookup of `name` at 127.0.0.1:port, as a stub resolver makes it: 0, or -1 with a message. */
static int lookup(uint16_t port, uint16_t id)
{
	struct sockaddr_in dest = loopback(port);
	uint8_t query[512], reply[2048];
	struct pollfd pfd;
	ssize_t got;
	size_t len = dns_query(query, sizeof(query), id, name);
	int fd;

	if (!len) {
		fprintf(stderr, "loops: '%s' is not a name\n", name);
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "loops: socket: %s\n", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&dest, sizeof(dest)) < 0 ||
	    send(fd, query, len, 0) != (ssize_t)len) {
		fprintf(stderr, "loops: DNS query to 127.0.0.1:%u: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (;;) {
		int r = poll(&pfd, 1, DNS_TIMEOUT_MS);

		if (r <= 0) {
			fprintf(stderr, "loops: no DNS reply from 127.0.0.1:%u in %d ms%s%s\n",
				port, DNS_TIMEOUT_MS, r < 0 ? ": " : "",
				r < 0 ? strerror(errno) : "");
			close(fd);
			return -1;
		}
		got = recv(fd, reply, sizeof(reply), 0);
		if (got < 0) {
			fprintf(stderr, "loops: DNS reply from 127.0.0.1:%u: %s\n", port,
				strerror(errno));
			close(fd);
			return -1;
		}
		/* a stray reply to an earlier query: keep waiting for ours */
		if (got >= 12 && reply[0] == (id >> 8) && reply[1] == (id & 0xff))
			break;
	}
	close(fd);
	if (!(reply[2] & 0x80) || (reply[3] & 0x0f) != 0 || (reply[6] == 0 && reply[7] == 0)) {
		fprintf(stderr, "loops: DNS lookup of %s: rcode %u, %u answers\n", name,
			reply[3] & 0x0f, reply[6] << 8 | reply[7]);
		return -1;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*run)(unsigned long n);	/* NULL: lookups, timed one by one */
	uint16_t *port;			/* lookups: where */
} loops[] = {
	{ "connect", loop_connect, NULL },
	{ "udp", loop_udp, NULL },
	{ "direct", NULL, &upstream_port },
	{ "dns", NULL, &dns_port },
};

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long value;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	value = strtoul(s, &end, 10);
	if (errno || *end || value < 1 || value > max)
		return -1;
	*out = value;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: loops [-b BATCHES] [-l LABEL] [-r ROUND] [-t TCP_PORT]\n"
			"             [-u UDP_PORT] [-U UPSTREAM_PORT] [-n NAME] LOOP=N...\n"
			"             (LOOP: connect, udp, direct, dns)\n"
			"       loops serve TCP_PORT UDP_PORT DNS_PORT NAME\n");
	return 2;
}

static void report(const char *label, unsigned long round, const char *loop, unsigned long n,
		   unsigned long batches, double *samples, size_t count)
{
	qsort(samples, count, sizeof(samples[0]), bench_cmp_double);
	printf("bench-net label=%s round=%lu loop=%s n=%lu batches=%lu median_ns=%.1f p90_ns=%.1f "
	       "p99_ns=%.1f min_ns=%.1f\n",
	       label, round, loop, n, batches, bench_percentile(samples, count, 50),
	       bench_percentile(samples, count, 90), bench_percentile(samples, count, 99),
	       samples[0]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static double samples[MAX_LOOKUPS];
	unsigned long batches = 11, round = 0;
	const char *label = "-";
	int opt;

	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return serve(argc - 1, argv + 1);

	while ((opt = getopt(argc, argv, "b:l:n:r:t:u:U:")) != -1) {
		switch (opt) {
		case 'b':
			if (parse_count(optarg, MAX_BATCHES, &batches) < 0) {
				fprintf(stderr, "loops: BATCHES must be 1..%d\n", MAX_BATCHES);
				return 2;
			}
			break;
		case 'U':
		case 't':
		case 'u':
			if (parse_port(optarg, opt == 'U' ? &upstream_port : opt == 't' ? &tcp_port
										    : &udp_port)) {
				fprintf(stderr, "loops: -%c: a port is 1..65535\n", opt);
				return 2;
			}
			break;
		case 'l':
			label = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "0") != 0 && parse_count(optarg, 1000, &round) < 0) {
				fprintf(stderr, "loops: ROUND must be 0..1000\n");
				return 2;
			}
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	tcp_dest = loopback(tcp_port);
	udp_dest = loopback(udp_port);

	for (int a = optind; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		unsigned long n;
		size_t which;

		for (which = 0; which < sizeof(loops) / sizeof(loops[0]); which++) {
			if (eq && strlen(loops[which].name) == (size_t)(eq - argv[a]) &&
			    strncmp(loops[which].name, argv[a], eq - argv[a]) == 0)
				break;
		}
		if (which == sizeof(loops) / sizeof(loops[0]) ||
		    parse_count(eq + 1, loops[which].run ? 100000000 : MAX_LOOKUPS, &n) < 0) {
			fprintf(stderr, "loops: %s: expected connect=N, udp=N, direct=N or dns=N "
					"(lookups at most %d)\n", argv[a], MAX_LOOKUPS);
			return 2;
		}
		if (loops[which].run == loop_udp && udp_fd < 0) {
			udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (udp_fd < 0) {
				fprintf(stderr, "loops: socket: %s\n", strerror(errno));
				return 1;
			}
		}

		if (!loops[which].run) {
			/* Warm-up: the proxy's first admission, caches, the upstream's pages. */
			for (unsigned long i = 0; i < DNS_WARMUP; i++)
				if (lookup(*loops[which].port, (uint16_t)(0x8000 | i)) < 0)
					return 1;
			for (unsigned long i = 0; i < n; i++) {
				double start = now_ns();

				if (lookup(*loops[which].port, (uint16_t)(i & 0x7fff)) < 0)
					return 1;
				samples[i] = now_ns() - start;
			}
			report(label, round, loops[which].name, n, 0, samples, n);
			continue;
		}
		/* Warm-up: caches, the listener's accept queue, the socket's route. */
		if (loops[which].run(n) < 0)
			return 1;
		for (unsigned long b = 0; b < batches; b++) {
			double start = now_ns();

			if (loops[which].run(n) < 0)
				return 1;
			samples[b] = (now_ns() - start) / n;
		}
		report(label, round, loops[which].name, n, batches, samples, batches);
	}
	return 0;
}
