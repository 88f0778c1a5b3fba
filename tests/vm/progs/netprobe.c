// SPDX-License-Identifier: GPL-2.0
/*
 * netprobe EXPECT OP ARGS...: performs one network operation and checks its
 * result.  EXPECT is "ok", an errno name (EPERM, ECONNREFUSED, ETIMEDOUT,
 * ENETUNREACH, ...), for resolve an EAI_ name (EAI_NONAME, EAI_AGAIN, ...),
 * for dns-query an rcode name (REFUSED, SERVFAIL, NXDOMAIN).  Prints
 * "netprobe: OP ARGS: RESULT" last (details, if any, on lines before it that
 * start with "netprobe:   ") and exits 0 when RESULT is EXPECT, 1 otherwise,
 * 2 on a usage error.
 *
 * Built statically and run inside the test VM, against the servers of
 * tests/vm/suite/netlib.sh (netsink, testdns).  Addresses are numeric
 * literals; an IPv6 literal (including "::ffff:a.b.c.d") uses an AF_INET6
 * socket.  Every wait is bounded (TIMEOUT_MS): a packet that is dropped
 * silently gives ETIMEDOUT, never a hang.
 *
 * A result that is not an errno names what went wrong in lower case
 * ("bad-reply", "bad-echo", "short:N", "prep-failed:socket:EMFILE"), so it
 * never matches an expectation by accident.
 *
 *   tcp-connect ADDR PORT          connect()
 *   tcp-send ADDR PORT BYTES       connect, send, shutdown; netsink's "ok N" must say BYTES
 *   udp-sendto ADDR PORT           unconnected sendto(), then the echo
 *   udp-connect-send ADDR PORT     connect(), send(), then the echo
 *   udp-sendmmsg ADDR PORT         two datagrams in one sendmmsg(), both echoes
 *   tcp-fastopen ADDR PORT         sendto(MSG_FASTOPEN) + the "ok N" check; prints syn-data
 *   ping ADDR                      ICMP(v6) echo on a ping socket (an IPv4-mapped
 *                                  address gives EINVAL: the kernel refuses it)
 *   uring-sendmsg ADDR PORT        IORING_OP_SENDMSG (unconnected UDP), then the echo
 *   uring-connect ADDR PORT        IORING_OP_CONNECT (TCP) with a linked timeout
 *   ip-options-sendto ADDR PORT [VIA]   UDP with an LSRR option through VIA (default ADDR)
 *   ipv6-rthdr-sendto ADDR PORT VIA     UDP with a type 4 (SRH) routing header through VIA
 *   resolve NAME [4|6|any]         getaddrinfo(); prints "address A" lines; EAI_ names
 *   dns-query SERVER PORT NAME TYPE [tcp]   a raw query; prints the rcode and the
 *                                  answers ("NAME. A ADDR ttl=N"); "ok" (or NOERROR),
 *                                  NXDOMAIN, SERVFAIL, REFUSED, ... or an errno
 *   http-upload ADDR PORT BYTES    POST of BYTES bytes; ok on "HTTP/1.1 200"
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/time_types.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 3000

/* ---- results ---------------------------------------------------------- */

static const char *errno_result(int e)
{
	static char buf[32];
	const char *name = e ? strerrorname_np(e) : "ok";

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/*
 * A step before the operation itself failed (socket(), mmap of a ring):
 * named with its step, so that it never matches an expected errno.
 */
static const char *prep_failed(const char *step, int e)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "prep-failed:%s:%s", step, errno_result(e));
	return buf;
}

/* What a send, receive or connect that waited TIMEOUT_MS in vain reports. */
static int timeout_errno(int e)
{
	return (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS) ? ETIMEDOUT : e;
}

static void detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void detail(const char *fmt, ...)
{
	va_list ap;

	fputs("netprobe:   ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* ---- addresses and sockets --------------------------------------------- */

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;
};

/* A numeric IPv4 or IPv6 literal (brackets allowed) and a port. */
static int parse_addr(const char *text, const char *port, struct addr *a)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(text);
	char *end;
	long p = port ? strtol(port, &end, 10) : 0;

	if (port && (*end || p < 0 || p > 65535))
		return -1;
	if (text[0] == '[' && n >= 2 && text[n - 1] == ']' && n - 2 < sizeof(buf)) {
		memcpy(buf, text + 1, n - 2);
		buf[n - 2] = 0;
		text = buf;
	}
	memset(a, 0, sizeof(*a));
	struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->ss;

	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)p);
		a->len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)p);
		a->len = sizeof(*sin6);
	} else {
		return -1;
	}
	a->family = a->ss.ss_family;
	return 0;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = TIMEOUT_MS / 1000, .tv_usec = (TIMEOUT_MS % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* socket() with both timeouts set; -errno on failure. */
static int make_socket(int family, int type, int protocol)
{
	int fd = socket(family, type | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		return -errno;
	set_timeouts(fd);
	return fd;
}

/*
 * connect() bounded by TIMEOUT_MS: non-blocking connect, poll, SO_ERROR.
 * The socket is blocking again afterwards.  Returns 0 or an errno.
 */
static int connect_bounded(int fd, const struct addr *a)
{
	int flags = fcntl(fd, F_GETFL), err = 0;
	socklen_t len = sizeof(err);
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0) {
		if (errno != EINPROGRESS) {
			err = errno;
		} else {
			int r = poll(&p, 1, TIMEOUT_MS);

			if (r < 0)
				err = errno;
			else if (r == 0)
				err = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
				err = errno;
		}
	}
	fcntl(fd, F_SETFL, flags);
	return err;
}

/* Sends all of buf (MSG_NOSIGNAL); 0 or an errno (a timeout is ETIMEDOUT). */
static int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return timeout_errno(errno);
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends `count` bytes of a fixed pattern. */
static int send_pattern(int fd, unsigned long long count)
{
	static char chunk[65536];
	int e;

	memset(chunk, 'x', sizeof(chunk));
	while (count) {
		size_t n = count < sizeof(chunk) ? (size_t)count : sizeof(chunk);

		e = send_all(fd, chunk, n);
		if (e)
			return e;
		count -= n;
	}
	return 0;
}

/*
 * Reads until EOF or until buf is full (NUL-terminated); 0 or an errno.
 * EOF with nothing read is fine here: the caller judges the content.
 */
static int read_reply(int fd, char *buf, size_t size, size_t *got)
{
	size_t off = 0;

	while (off + 1 < size) {
		ssize_t n = recv(fd, buf + off, size - 1 - off, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			buf[off] = 0;
			*got = off;
			return timeout_errno(errno);
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = 0;
	*got = off;
	return 0;
}

static int parse_count(const char *text, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(text, &end, 10);
	return (errno || *end || !*text) ? -1 : 0;
}

/* ---- TCP ---------------------------------------------------------------- */

static const char *tcp_connect(const struct addr *a)
{
	int fd = make_socket(a->family, SOCK_STREAM, 0), e;

	if (fd < 0)
		return prep_failed("socket", -fd);
	e = connect_bounded(fd, a);
	close(fd);
	return errno_result(e);
}

/*
 * After the payload: shutdown(SHUT_WR), then the server's "ok N\n" must
 * confirm every byte.
 */
static const char *check_sink_reply(int fd, unsigned long long sent)
{
	static char result[64];
	char reply[128];
	unsigned long long n;
	size_t got;
	int e;

	if (shutdown(fd, SHUT_WR) < 0)
		return errno_result(errno);
	e = read_reply(fd, reply, sizeof(reply), &got);
	if (e)
		return errno_result(e);
	reply[strcspn(reply, "\n")] = 0;
	detail("server: %s", got ? reply : "(nothing)");
	if (!got)
		return "no-reply";
	if (strncmp(reply, "ok ", 3) || parse_count(reply + 3, &n))
		return "bad-reply";
	if (n != sent) {
		snprintf(result, sizeof(result), "short:%llu", n);
		return result;
	}
	return "ok";
}

static const char *tcp_send(const struct addr *a, unsigned long long bytes)
{
	int fd = make_socket(a->family, SOCK_STREAM, 0), e;
	const char *r;

	if (fd < 0)
		return prep_failed("socket", -fd);
	e = connect_bounded(fd, a);
	if (!e)
		e = send_pattern(fd, bytes);
	r = e ? errno_result(e) : check_sink_reply(fd, bytes);
	close(fd);
	return r;
}

/*
 * sendto(MSG_FASTOPEN) on a fresh socket: connect and send in one call.
 * The first connection to a server only fetches a cookie (the data follows
 * the handshake); later ones carry the data in the SYN, which TCP_INFO
 * reports as syn-data.
 */
static const char *tcp_fastopen(const struct addr *a)
{
	static const char payload[] = "netprobe tcp-fastopen\n";
	int fd = make_socket(a->family, SOCK_STREAM, 0);
	struct tcp_info info;
	socklen_t len = sizeof(info);
	const char *r;
	ssize_t n;

	if (fd < 0)
		return prep_failed("socket", -fd);
	n = sendto(fd, payload, sizeof(payload) - 1, MSG_FASTOPEN | MSG_NOSIGNAL,
		   (const struct sockaddr *)&a->ss, a->len);
	if (n < 0) {
		r = errno_result(timeout_errno(errno));
		close(fd);
		return r;
	}
	if (n != (ssize_t)sizeof(payload) - 1) {
		int e = send_all(fd, payload + n, sizeof(payload) - 1 - (size_t)n);

		if (e) {
			close(fd);
			return errno_result(e);
		}
	}
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0)
		detail("syn-data: %s", (info.tcpi_options & TCPI_OPT_SYN_DATA) ? "yes" : "no");
	r = check_sink_reply(fd, sizeof(payload) - 1);
	close(fd);
	return r;
}

/*
 * An HTTP POST of `bytes` bytes; ok only if everything was sent and the
 * answer is a 200.
 */
static const char *http_upload(const struct addr *a, unsigned long long bytes)
{
	char head[128], reply[512];
	int fd = make_socket(a->family, SOCK_STREAM, 0), e;
	size_t got;

	if (fd < 0)
		return prep_failed("socket", -fd);
	snprintf(head, sizeof(head), "POST / HTTP/1.1\r\nContent-Length: %llu\r\n\r\n", bytes);
	e = connect_bounded(fd, a);
	if (!e)
		e = send_all(fd, head, strlen(head));
	if (!e)
		e = send_pattern(fd, bytes);
	if (!e)
		e = read_reply(fd, reply, sizeof(reply), &got);
	close(fd);
	if (e)
		return errno_result(e);
	reply[strcspn(reply, "\r\n")] = 0;
	detail("server: %s", got ? reply : "(nothing)");
	if (!got)
		return "no-reply";
	return strncmp(reply, "HTTP/1.1 200 ", 13) == 0 ? "ok" : "bad-reply";
}

/* ---- UDP ---------------------------------------------------------------- */

/* Waits for the echo of `payload`; 0, an errno or -1 for a wrong echo. */
static int wait_echo(int fd, const char *payload, size_t len)
{
	char buf[2048];
	ssize_t n;

	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return timeout_errno(errno);
	return ((size_t)n == len && memcmp(buf, payload, len) == 0) ? 0 : -1;
}

static const char *echo_result(int e)
{
	return e < 0 ? "bad-echo" : errno_result(e);
}

/* udp-sendto (unconnected) or udp-connect-send (connect, then send). */
static const char *udp_send(const struct addr *a, int connected)
{
	static const char payload[] = "netprobe udp\n";
	int fd = make_socket(a->family, SOCK_DGRAM, 0), e = 0;
	ssize_t n;

	if (fd < 0)
		return prep_failed("socket", -fd);
	if (connected) {
		if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0)
			e = errno;
		n = e ? -1 : send(fd, payload, sizeof(payload) - 1, 0);
	} else {
		n = sendto(fd, payload, sizeof(payload) - 1, 0, (const struct sockaddr *)&a->ss,
			   a->len);
	}
	if (!e && n < 0)
		e = timeout_errno(errno);
	if (!e)
		e = wait_echo(fd, payload, sizeof(payload) - 1);
	close(fd);
	return echo_result(e);
}

/* sendmmsg() of two datagrams to the same destination; both must echo. */
static const char *udp_sendmmsg(const struct addr *a)
{
	static char payload[2][16] = { "netprobe mmsg 0", "netprobe mmsg 1" };
	struct mmsghdr msgs[2];
	struct iovec iov[2];
	int fd = make_socket(a->family, SOCK_DGRAM, 0), e = 0, sent;

	if (fd < 0)
		return prep_failed("socket", -fd);
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < 2; i++) {
		iov[i].iov_base = payload[i];
		iov[i].iov_len = strlen(payload[i]);
		msgs[i].msg_hdr.msg_name = (void *)&a->ss;
		msgs[i].msg_hdr.msg_namelen = a->len;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	sent = sendmmsg(fd, msgs, 2, 0);
	if (sent < 0) {
		e = timeout_errno(errno);
	} else if (sent < 2) {
		/* the error of the first message that did not go out */
		if (sendmmsg(fd, msgs + sent, (unsigned int)(2 - sent), 0) < 0)
			e = timeout_errno(errno);
		detail("sendmmsg sent %d of 2", sent);
	}
	for (int i = 0; !e && i < 2; i++)
		e = wait_echo(fd, payload[i], strlen(payload[i]));
	close(fd);
	return echo_result(e);
}

/*
 * UDP with a loose source route (IP_OPTIONS, LSRR) through `via`: the
 * kernel sends the datagram to the first hop, `via`, and puts the real
 * destination last in the route (ip_options_get strips the first address
 * into faddr; udp_sendmsg routes to it).  The echo comes back only if the
 * receivers accept source routes (net.ipv4.conf.*.accept_source_route).
 */
static const char *ip_options_sendto(const struct addr *a, const struct addr *via)
{
	static const char payload[] = "netprobe lsrr\n";
	unsigned char opt[8] = { IPOPT_NOP, IPOPT_LSRR, 7, 4 };
	int fd, e = 0;

	if (a->family != AF_INET || via->family != AF_INET)
		return "usage:ipv4-only";
	fd = make_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return prep_failed("socket", -fd);
	memcpy(opt + 4, &((const struct sockaddr_in *)&via->ss)->sin_addr, 4);
	if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)) < 0) {
		e = errno;
		detail("setsockopt(IP_OPTIONS): %s", errno_result(e));
	} else if (sendto(fd, payload, sizeof(payload) - 1, 0, (const struct sockaddr *)&a->ss,
			  a->len) < 0) {
		e = timeout_errno(errno);
		detail("sendto: %s", errno_result(e));
	} else {
		detail("sendto: ok");
		e = wait_echo(fd, payload, sizeof(payload) - 1);
	}
	close(fd);
	return echo_result(e);
}

/*
 * UDP over IPv6 with a segment routing header (type 4) whose first segment
 * is `via`: the kernel sends the datagram to `via` and puts the real
 * destination in segment 0 (ipv6_push_rthdr4).  The echo comes back only
 * if the receivers process SRHs (net.ipv6.conf.*.seg6_enabled).
 */
static const char *ipv6_rthdr_sendto(const struct addr *a, const struct addr *via)
{
	static const char payload[] = "netprobe srh\n";
	struct {
		unsigned char nexthdr, hdrlen, type, segments_left, first_segment, flags;
		unsigned short tag;
		struct in6_addr segments[2];
	} srh;
	int fd, e = 0;

	_Static_assert(sizeof(srh) == 8 + 2 * 16, "SRH layout");
	if (a->family != AF_INET6 || via->family != AF_INET6)
		return "usage:ipv6-only";
	fd = make_socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd < 0)
		return prep_failed("socket", -fd);
	memset(&srh, 0, sizeof(srh));
	srh.hdrlen = (sizeof(srh) - 8) / 8;
	srh.type = 4;
	srh.segments_left = 1;
	srh.first_segment = 1;
	/* segments[0] is the final destination, filled in by the kernel */
	srh.segments[1] = ((const struct sockaddr_in6 *)&via->ss)->sin6_addr;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, &srh, sizeof(srh)) < 0) {
		e = errno;
		detail("setsockopt(IPV6_RTHDR): %s", errno_result(e));
	} else if (sendto(fd, payload, sizeof(payload) - 1, 0, (const struct sockaddr *)&a->ss,
			  a->len) < 0) {
		e = timeout_errno(errno);
		detail("sendto: %s", errno_result(e));
	} else {
		detail("sendto: ok");
		e = wait_echo(fd, payload, sizeof(payload) - 1);
	}
	close(fd);
	return echo_result(e);
}

/* ---- ICMP --------------------------------------------------------------- */

/*
 * One echo request over an unprivileged ping socket (SOCK_DGRAM,
 * IPPROTO_ICMP/ICMPV6; needs net.ipv4.ping_group_range to cover our gid).
 * The kernel fills in the identifier and the checksum.
 */
static const char *ping(const struct addr *a)
{
	int v6 = a->family == AF_INET6;
	int fd = make_socket(a->family, SOCK_DGRAM, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP), e = 0;
	unsigned char req[16] = { v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO, 0, 0, 0, 0, 0, 0, 1,
				  'n', 'e', 't', 'p', 'r', 'o', 'b', 'e' };
	unsigned char reply[256];
	ssize_t n;

	if (fd < 0)
		return prep_failed("socket", -fd);
	if (sendto(fd, req, sizeof(req), 0, (const struct sockaddr *)&a->ss, a->len) < 0) {
		e = timeout_errno(errno);
	} else {
		do
			n = recv(fd, reply, sizeof(reply), 0);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			e = timeout_errno(errno);
		else if (n < 8 || reply[0] != (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY))
			e = -1;
	}
	close(fd);
	return echo_result(e);
}

/* ---- io_uring ----------------------------------------------------------- */

/* A ring with raw syscalls (no liburing in the VM image). */
struct ring {
	int fd;
	struct io_uring_sqe *sqes;
	unsigned int *sq_tail, *sq_array, *sq_mask, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

static int ring_setup(struct ring *r)
{
	struct io_uring_params p;
	void *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		int e = errno;

		close(r->fd);
		return e;
	}
	r->sq_tail = (unsigned int *)((char *)sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)((char *)sq + p.sq_off.array);
	r->cq_head = (unsigned int *)((char *)cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)((char *)cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)((char *)cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);
	return 0;
}

static struct io_uring_sqe *ring_sqe(struct ring *r, unsigned int i)
{
	unsigned int idx = (*r->sq_tail + i) & *r->sq_mask;

	memset(&r->sqes[idx], 0, sizeof(r->sqes[idx]));
	r->sq_array[idx] = idx;
	return &r->sqes[idx];
}

/*
 * Submits `count` prepared sqes and waits for `count` completions; the
 * result of the one with user_data 1 goes to *res.  Returns 0 or an errno.
 */
static int ring_run(struct ring *r, unsigned int count, int *res)
{
	unsigned int done = 0;

	__atomic_store_n(r->sq_tail, *r->sq_tail + count, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, count, count, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return errno;
	while (done < count) {
		unsigned int head = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);

		if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
			if (syscall(SYS_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL,
				    0) < 0 &&
			    errno != EINTR)
				return errno;
			continue;
		}
		struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];

		if (cqe->user_data == 1)
			*res = cqe->res;
		__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
		done++;
	}
	return 0;
}

/* A UDP datagram sent with IORING_OP_SENDMSG (unconnected), then its echo. */
static const char *uring_sendmsg(const struct addr *a)
{
	static char payload[] = "netprobe uring\n";
	struct iovec iov = { payload, sizeof(payload) - 1 };
	struct msghdr msg = { .msg_name = (void *)&a->ss, .msg_namelen = a->len,
			      .msg_iov = &iov, .msg_iovlen = 1 };
	struct ring r;
	int fd = make_socket(a->family, SOCK_DGRAM, 0), e, res = 0;
	struct io_uring_sqe *sqe;

	if (fd < 0)
		return prep_failed("socket", -fd);
	e = ring_setup(&r);
	if (e) {
		close(fd);
		return prep_failed("io_uring_setup", e);
	}
	sqe = ring_sqe(&r, 0);
	sqe->opcode = IORING_OP_SENDMSG;
	sqe->fd = fd;
	sqe->addr = (unsigned long)&msg;
	sqe->len = 1;
	sqe->user_data = 1;
	e = ring_run(&r, 1, &res);
	close(r.fd);
	if (e) {
		close(fd);
		return prep_failed("io_uring_enter", e);
	}
	e = res < 0 ? timeout_errno(-res) : wait_echo(fd, payload, sizeof(payload) - 1);
	close(fd);
	return echo_result(e);
}

/*
 * A TCP connect with IORING_OP_CONNECT, linked to a TIMEOUT_MS
 * IORING_OP_LINK_TIMEOUT: a connect that the timeout cancels (-ECANCELED)
 * is reported as ETIMEDOUT.
 */
static const char *uring_connect(const struct addr *a)
{
	struct __kernel_timespec ts = { .tv_sec = TIMEOUT_MS / 1000,
					.tv_nsec = (TIMEOUT_MS % 1000) * 1000000L };
	struct ring r;
	int fd = make_socket(a->family, SOCK_STREAM, 0), e, res = 0;
	struct io_uring_sqe *sqe;

	if (fd < 0)
		return prep_failed("socket", -fd);
	e = ring_setup(&r);
	if (e) {
		close(fd);
		return prep_failed("io_uring_setup", e);
	}
	sqe = ring_sqe(&r, 0);
	sqe->opcode = IORING_OP_CONNECT;
	sqe->fd = fd;
	sqe->addr = (unsigned long)&a->ss;
	sqe->off = a->len;	/* addr2: the address length */
	sqe->flags = IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = ring_sqe(&r, 1);
	sqe->opcode = IORING_OP_LINK_TIMEOUT;
	sqe->fd = -1;
	sqe->addr = (unsigned long)&ts;
	sqe->len = 1;
	sqe->user_data = 2;
	e = ring_run(&r, 2, &res);
	close(r.fd);
	close(fd);
	if (e)
		return prep_failed("io_uring_enter", e);
	if (res == -ECANCELED)
		res = -ETIMEDOUT;
	return errno_result(res < 0 ? -res : 0);
}

/* ---- DNS ---------------------------------------------------------------- */

static const char *eai_name(int code)
{
	static char buf[32];
	static const struct {
		int code;
		const char *name;
	} names[] = {
		{ EAI_ADDRFAMILY, "EAI_ADDRFAMILY" }, { EAI_AGAIN, "EAI_AGAIN" },
		{ EAI_BADFLAGS, "EAI_BADFLAGS" },     { EAI_FAIL, "EAI_FAIL" },
		{ EAI_FAMILY, "EAI_FAMILY" },	      { EAI_MEMORY, "EAI_MEMORY" },
		{ EAI_NODATA, "EAI_NODATA" },	      { EAI_NONAME, "EAI_NONAME" },
		{ EAI_SERVICE, "EAI_SERVICE" },	      { EAI_SOCKTYPE, "EAI_SOCKTYPE" },
		{ EAI_SYSTEM, "EAI_SYSTEM" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == code)
			return names[i].name;
	snprintf(buf, sizeof(buf), "EAI_%d", code);
	return buf;
}

/*
 * getaddrinfo(NAME), as any libc client does it: /etc/nsswitch.conf,
 * /etc/hosts, then the nameserver of /etc/resolv.conf on port 53.  glibc
 * 2.34+ has the files and dns NSS modules built in, so this works in a
 * static binary.  FAMILY: 4, 6 or (default) any.
 */
static const char *resolve(const char *name, const char *family)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char text[INET6_ADDRSTRLEN];
	int r;

	if (!family || !strcmp(family, "any"))
		hints.ai_family = AF_UNSPEC;
	else if (!strcmp(family, "4") || !strcmp(family, "inet"))
		hints.ai_family = AF_INET;
	else if (!strcmp(family, "6") || !strcmp(family, "inet6"))
		hints.ai_family = AF_INET6;
	else
		return "usage:family";
	r = getaddrinfo(name, NULL, &hints, &res);
	if (r == EAI_SYSTEM) {
		detail("errno %s", errno_result(errno));
		return eai_name(r);
	}
	if (r)
		return eai_name(r);
	for (ai = res; ai; ai = ai->ai_next) {
		const void *addr = ai->ai_family == AF_INET
					   ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
					   : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;

		detail("address %s", inet_ntop(ai->ai_family, addr, text, sizeof(text)));
	}
	freeaddrinfo(res);
	return "ok";
}

static const char *rcode_name(int rcode)
{
	static const char *const names[] = { "ok",	  "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP",	  "REFUSED", "YXDOMAIN", "YXRRSET",
					     "NXRRSET",	  "NOTAUTH", "NOTZONE" };
	static char buf[16];

	if (rcode >= 0 && rcode < (int)(sizeof(names) / sizeof(names[0])))
		return names[rcode];
	snprintf(buf, sizeof(buf), "RCODE%d", rcode);
	return buf;
}

static int qtype_of(const char *type)
{
	static const struct {
		const char *name;
		int type;
	} types[] = { { "A", 1 },   { "NS", 2 },   { "CNAME", 5 }, { "SOA", 6 }, { "PTR", 12 },
		      { "MX", 15 }, { "TXT", 16 }, { "AAAA", 28 }, { "SRV", 33 }, { "ANY", 255 } };
	char *end;
	long n;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcasecmp(type, types[i].name))
			return types[i].type;
	n = strtol(type, &end, 10);
	return (*end || n <= 0 || n > 65535) ? -1 : (int)n;
}

/* Writes NAME as DNS labels at p; returns the length or -1. */
static int encode_name(const char *name, unsigned char *p, size_t size)
{
	size_t off = 0;

	while (*name) {
		size_t len = strcspn(name, ".");

		if (len == 0 || len > 63 || off + len + 2 > size)
			return -1;
		p[off++] = (unsigned char)len;
		memcpy(p + off, name, len);
		off += len;
		name += len;
		if (*name == '.')
			name++;
	}
	if (off + 1 > size)
		return -1;
	p[off++] = 0;
	return (int)off;
}

/* Reads a (possibly compressed) name at *pos into out; -1 if malformed. */
static int decode_name(const unsigned char *msg, size_t len, size_t *pos, char *out, size_t size)
{
	size_t p = *pos, o = 0;
	int jumped = 0, hops = 0;

	for (;;) {
		if (p >= len)
			return -1;
		unsigned char l = msg[p];

		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len || ++hops > 16)
				return -1;
			if (!jumped)
				*pos = p + 2;
			jumped = 1;
			p = ((size_t)(l & 0x3f) << 8) | msg[p + 1];
			continue;
		}
		if (l & 0xc0)
			return -1;
		p++;
		if (l == 0)
			break;
		if (p + l > len || o + l + 2 > size)
			return -1;
		memcpy(out + o, msg + p, l);
		o += l;
		out[o++] = '.';
		p += l;
	}
	if (!o)
		out[o++] = '.';
	out[o] = 0;
	if (!jumped)
		*pos = p;
	return 0;
}

/* Prints the rcode and the answers (A, AAAA, CNAME with their TTLs). */
static int print_answers(const unsigned char *msg, size_t len)
{
	unsigned int qd = (unsigned)msg[4] << 8 | msg[5], an = (unsigned)msg[6] << 8 | msg[7];
	size_t pos = 12;
	char name[300], text[INET6_ADDRSTRLEN];

	detail("rcode %s, %u answers%s", (msg[3] & 0xf) ? rcode_name(msg[3] & 0xf) : "NOERROR", an,
	       (msg[2] & 0x02) ? ", truncated" : "");
	for (unsigned int i = 0; i < qd; i++) {
		if (decode_name(msg, len, &pos, name, sizeof(name)) < 0 || pos + 4 > len)
			return -1;
		pos += 4;
	}
	for (unsigned int i = 0; i < an; i++) {
		if (decode_name(msg, len, &pos, name, sizeof(name)) < 0 || pos + 10 > len)
			return -1;
		unsigned int type = (unsigned)msg[pos] << 8 | msg[pos + 1];
		unsigned long ttl = (unsigned long)msg[pos + 4] << 24 | (unsigned long)msg[pos + 5] << 16 |
				    (unsigned long)msg[pos + 6] << 8 | msg[pos + 7];
		size_t rdlen = (size_t)msg[pos + 8] << 8 | msg[pos + 9];

		pos += 10;
		if (pos + rdlen > len)
			return -1;
		if (type == 1 && rdlen == 4) {
			detail("%s A %s ttl=%lu", name, inet_ntop(AF_INET, msg + pos, text, sizeof(text)),
			       ttl);
		} else if (type == 28 && rdlen == 16) {
			detail("%s AAAA %s ttl=%lu", name,
			       inet_ntop(AF_INET6, msg + pos, text, sizeof(text)), ttl);
		} else if (type == 5) {
			char target[300];
			size_t tpos = pos;

			if (decode_name(msg, len, &tpos, target, sizeof(target)) < 0)
				return -1;
			detail("%s CNAME %s ttl=%lu", name, target, ttl);
		} else {
			detail("%s type %u (%zu bytes) ttl=%lu", name, type, rdlen, ttl);
		}
		pos += rdlen;
	}
	return 0;
}

/*
 * One raw query (RD set) to SERVER:PORT over UDP, or over TCP with the
 * two-byte length prefix; the result is the rcode (NOERROR is "ok").
 */
static const char *dns_query(const struct addr *server, const char *name, const char *type,
			     int tcp)
{
	unsigned char q[512 + 2], reply[65536 + 2];
	unsigned char *msg = q + 2;
	int qtype = qtype_of(type), fd, e, n;
	unsigned short id;
	size_t len, got = 0;

	if (qtype < 0)
		return "usage:type";
	srand((unsigned int)(time(NULL) ^ getpid()));
	id = (unsigned short)rand();
	memset(q, 0, sizeof(q));
	msg[0] = (unsigned char)(id >> 8);
	msg[1] = (unsigned char)id;
	msg[2] = 0x01;	/* RD */
	msg[5] = 1;	/* QDCOUNT */
	n = encode_name(name, msg + 12, sizeof(q) - 2 - 12 - 4);
	if (n < 0)
		return "usage:name";
	len = 12 + (size_t)n;
	msg[len++] = (unsigned char)(qtype >> 8);
	msg[len++] = (unsigned char)qtype;
	msg[len++] = 0;
	msg[len++] = 1;	/* IN */
	q[0] = (unsigned char)(len >> 8);
	q[1] = (unsigned char)len;

	fd = make_socket(server->family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return prep_failed("socket", -fd);
	if (tcp) {
		e = connect_bounded(fd, server);
		if (!e)
			e = send_all(fd, q, len + 2);
		if (!e) {
			/* the length prefix, then that many bytes */
			size_t want = 2;

			while (!e && got < want) {
				ssize_t r = recv(fd, reply + got, want - got, 0);

				if (r < 0 && errno == EINTR)
					continue;
				if (r < 0)
					e = timeout_errno(errno);
				else if (r == 0)
					e = ECONNRESET;
				else
					got += (size_t)r;
				if (!e && got == 2 && want == 2)
					want = 2 + ((size_t)reply[0] << 8 | reply[1]);
			}
		}
		if (!e) {
			memmove(reply, reply + 2, got - 2);
			got -= 2;
		}
	} else {
		ssize_t r;

		e = connect(fd, (const struct sockaddr *)&server->ss, server->len) < 0 ? errno : 0;
		if (!e && send(fd, msg, len, 0) < 0)
			e = timeout_errno(errno);
		while (!e) {
			r = recv(fd, reply, sizeof(reply), 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				e = timeout_errno(errno);
			else if (r >= 2 && reply[0] == msg[0] && reply[1] == msg[1]) {
				got = (size_t)r;
				break;
			}
			/* a datagram with another id: keep waiting, as a resolver does */
		}
	}
	close(fd);
	if (e)
		return errno_result(e);
	if (got < 12 || reply[0] != msg[0] || reply[1] != msg[1] || !(reply[2] & 0x80))
		return "bad-reply";
	if (print_answers(reply, got) < 0)
		return "bad-reply";
	return rcode_name(reply[3] & 0xf);
}

/* ---- main --------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr,
		"usage: netprobe EXPECT OP ARGS...\n"
		"  tcp-connect ADDR PORT       tcp-send ADDR PORT BYTES\n"
		"  udp-sendto ADDR PORT        udp-connect-send ADDR PORT\n"
		"  udp-sendmmsg ADDR PORT      tcp-fastopen ADDR PORT\n"
		"  ping ADDR                   uring-sendmsg ADDR PORT\n"
		"  uring-connect ADDR PORT     ip-options-sendto ADDR PORT [VIA]\n"
		"  ipv6-rthdr-sendto ADDR PORT VIA\n"
		"  resolve NAME [4|6|any]      dns-query SERVER PORT NAME TYPE [tcp]\n"
		"  http-upload ADDR PORT BYTES\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *want, *op, *got;
	struct addr a, via;
	unsigned long long bytes = 0;
	int nargs = argc - 3;
	char args[1024] = "";

	if (argc < 4)
		return usage();
	want = argv[1];
	op = argv[2];
	for (int i = 3; i < argc; i++) {
		size_t l = strlen(args);

		snprintf(args + l, sizeof(args) - l, "%s%s", i > 3 ? " " : "", argv[i]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* every op but resolve starts with an address (and most with a port) */
	if (strcmp(op, "resolve")) {
		const char *port = strcmp(op, "ping") ? (nargs > 1 ? argv[4] : NULL) : NULL;

		if ((strcmp(op, "ping") && !port) || parse_addr(argv[3], port, &a) < 0) {
			fprintf(stderr, "netprobe: bad address or port: %s\n", args);
			return 2;
		}
	}
	if (!strcmp(op, "tcp-connect") && nargs == 2)
		got = tcp_connect(&a);
	else if ((!strcmp(op, "tcp-send") || !strcmp(op, "http-upload")) && nargs == 3) {
		if (parse_count(argv[5], &bytes) < 0)
			return usage();
		got = op[0] == 't' ? tcp_send(&a, bytes) : http_upload(&a, bytes);
	} else if (!strcmp(op, "udp-sendto") && nargs == 2)
		got = udp_send(&a, 0);
	else if (!strcmp(op, "udp-connect-send") && nargs == 2)
		got = udp_send(&a, 1);
	else if (!strcmp(op, "udp-sendmmsg") && nargs == 2)
		got = udp_sendmmsg(&a);
	else if (!strcmp(op, "tcp-fastopen") && nargs == 2)
		got = tcp_fastopen(&a);
	else if (!strcmp(op, "ping") && nargs == 1)
		got = ping(&a);
	else if (!strcmp(op, "uring-sendmsg") && nargs == 2)
		got = uring_sendmsg(&a);
	else if (!strcmp(op, "uring-connect") && nargs == 2)
		got = uring_connect(&a);
	else if (!strcmp(op, "ip-options-sendto") && (nargs == 2 || nargs == 3)) {
		if (parse_addr(nargs == 3 ? argv[5] : argv[3], "0", &via) < 0)
			return usage();
		got = ip_options_sendto(&a, &via);
	} else if (!strcmp(op, "ipv6-rthdr-sendto") && nargs == 3) {
		if (parse_addr(argv[5], "0", &via) < 0)
			return usage();
		got = ipv6_rthdr_sendto(&a, &via);
	} else if (!strcmp(op, "resolve") && (nargs == 1 || nargs == 2))
		got = resolve(argv[3], nargs == 2 ? argv[4] : NULL);
	else if (!strcmp(op, "dns-query") && (nargs == 4 || nargs == 5)) {
		if (nargs == 5 && strcmp(argv[7], "tcp") && strcmp(argv[7], "udp"))
			return usage();
		got = dns_query(&a, argv[5], argv[6], nargs == 5 && !strcmp(argv[7], "tcp"));
	} else
		return usage();
	if (!strncmp(got, "usage:", 6))
		return usage();
	printf("netprobe: %s %s: %s\n", op, args, got);
	/* "NOERROR" is accepted for a dns-query's "ok" */
	if (!strcmp(want, "NOERROR") && !strcmp(op, "dns-query"))
		want = "ok";
	return strcmp(got, want) == 0 ? 0 : 1;
}
