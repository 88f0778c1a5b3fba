// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/dnsproxy.c end to end on loopback: the proxy, a fake upstream
 * resolver (UDP and TCP, on 127.0.0.1 only) and a client, all driven from one
 * thread by a poll loop, so every ordering below is deterministic.  Nothing
 * here sends a packet to any address but 127.0.0.1 and ::1.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "runtime/dnsproxy.h"

/* ---- message building ------------------------------------------------- */

struct msg {
	uint8_t b[4096];
	size_t len;
};

static void u8(struct msg *m, uint8_t v)
{
	cr_assert_lt(m->len, sizeof(m->b));
	m->b[m->len++] = v;
}

static void u16(struct msg *m, uint16_t v)
{
	u8(m, v >> 8);
	u8(m, v & 0xff);
}

static void u32(struct msg *m, uint32_t v)
{
	u16(m, v >> 16);
	u16(m, v & 0xffff);
}

static void name(struct msg *m, const char *text)
{
	const char *s = text;

	while (*s) {
		const char *dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s);

		u8(m, (uint8_t)n);
		cr_assert_leq(m->len + n, sizeof(m->b));
		memcpy(m->b + m->len, s, n);
		m->len += n;
		s += n + (dot ? 1 : 0);
	}
	u8(m, 0);
}

static struct msg make_query(uint16_t id, const char *qname, uint16_t type)
{
	struct msg m = { .len = 0 };

	u16(&m, id);
	u16(&m, DNS_FLAG_RD);
	u16(&m, 1);
	u16(&m, 0);
	u16(&m, 0);
	u16(&m, 0);
	name(&m, qname);
	u16(&m, type);
	u16(&m, DNS_CLASS_IN);
	return m;
}

static void addr16(const char *text, uint8_t out[16])
{
	if (inet_pton(AF_INET, text, out + 12) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		return;
	}
	cr_assert_eq(inet_pton(AF_INET6, text, out), 1, "bad test address %s", text);
}

static void addr_text(const uint8_t a[16], char *out, size_t size)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(a, mapped, 12) == 0)
		inet_ntop(AF_INET, a + 12, out, (socklen_t)size);
	else
		inet_ntop(AF_INET6, a, out, (socklen_t)size);
}

/* ---- the fake upstream ------------------------------------------------ */

#define MAX_ANSWERS 4
#define MAX_CONNS 8

struct upstream {
	int udp, tcp;
	uint16_t port;
	int conns[MAX_CONNS];
	/* Behaviour. */
	bool silent;		/* reads queries, never answers */
	bool spoof_first;	/* before the answer: one with a wrong id, one from another port */
	bool tc;		/* sets TC */
	const char *answers[MAX_ANSWERS];
	uint32_t ttl;
	/* What it saw. */
	int udp_queries, tcp_queries;
	bool saw_upper;		/* an upper-case letter in a question */
};

static void upstream_open(struct upstream *u)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int one = 1;

	memset(u, 0, sizeof(*u));
	for (int i = 0; i < MAX_CONNS; i++)
		u->conns[i] = -1;
	u->ttl = 300;
	/* One port for UDP and TCP (an endpoint has one): the TCP one may be taken, so retry. */
	for (int attempt = 0;; attempt++) {
		sin.sin_port = 0;
		u->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		cr_assert_geq(u->udp, 0);
		cr_assert_eq(bind(u->udp, (struct sockaddr *)&sin, sizeof(sin)), 0);
		len = sizeof(sin);
		cr_assert_eq(getsockname(u->udp, (struct sockaddr *)&sin, &len), 0);
		u->port = ntohs(sin.sin_port);
		u->tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert_geq(u->tcp, 0);
		setsockopt(u->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(u->tcp, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			break;
		cr_assert_lt(attempt, 32, "no port free for both UDP and TCP");
		close(u->udp);
		close(u->tcp);
	}
	cr_assert_eq(listen(u->tcp, 16), 0);
}

static void upstream_close(struct upstream *u)
{
	close(u->udp);
	close(u->tcp);
	for (int i = 0; i < MAX_CONNS; i++)
		if (u->conns[i] >= 0)
			close(u->conns[i]);
}

static struct tp_endpoint endpoint(const struct upstream *u)
{
	struct tp_endpoint e = { .port = u->port };

	addr16("127.0.0.1", e.addr);
	return e;
}

/* The answer to `query` as this upstream is told to give it, with response id `id`. */
static struct msg upstream_answer(const struct upstream *u, const uint8_t *query, size_t len,
				  uint16_t id, const char *override)
{
	struct dns_question q;
	struct msg m = { .len = 0 };
	uint16_t an = 0;

	cr_assert_eq(dns_parse_query(query, len, &q), 0, "the proxy sent a bad query");
	cr_assert_not(q.edns, "no OPT upstream when the client sent none");
	memcpy(m.b, query, q.end);
	m.len = q.end;
	m.b[0] = id >> 8;
	m.b[1] = id & 0xff;
	m.b[2] = (uint8_t)((DNS_FLAG_QR | DNS_FLAG_RD | (u->tc ? DNS_FLAG_TC : 0)) >> 8);
	m.b[3] = DNS_FLAG_RA & 0xff;
	memset(m.b + 6, 0, 6);
	for (int i = 0; i < MAX_ANSWERS && (override ? i < 1 : u->answers[i] != NULL); i++) {
		const char *text = override ? override : u->answers[i];
		uint8_t a[16];
		bool v4;

		addr16(text, a);
		v4 = strchr(text, ':') == NULL;
		if (v4 != (q.qtype == DNS_TYPE_A))
			continue;
		u16(&m, 0xc00c);
		u16(&m, v4 ? DNS_TYPE_A : DNS_TYPE_AAAA);
		u16(&m, DNS_CLASS_IN);
		u32(&m, u->ttl);
		u16(&m, v4 ? 4 : 16);
		memcpy(m.b + m.len, v4 ? a + 12 : a, v4 ? 4 : 16);
		m.len += v4 ? 4 : 16;
		an++;
	}
	m.b[6] = an >> 8;
	m.b[7] = an & 0xff;
	return m;
}

static uint16_t msg_id(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static void upstream_udp(struct upstream *u)
{
	uint8_t buf[4096];
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	struct msg m;
	ssize_t n;

	n = recvfrom(u->udp, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&peer, &plen);
	if (n <= 0)
		return;
	u->udp_queries++;
	for (ssize_t i = 12; i < n; i++)
		u->saw_upper |= buf[i] >= 'A' && buf[i] <= 'Z';
	if (u->silent)
		return;
	if (u->spoof_first) {
		struct sockaddr_in other = { .sin_family = AF_INET,
					     .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		m = upstream_answer(u, buf, (size_t)n, msg_id(buf) + 1, "6.6.6.6");
		cr_assert_eq(sendto(u->udp, m.b, m.len, 0, (struct sockaddr *)&peer, plen),
			     (ssize_t)m.len);
		/* Right id, wrong source port: the connected socket must never see it. */
		cr_assert_geq(s, 0);
		cr_assert_eq(bind(s, (struct sockaddr *)&other, sizeof(other)), 0);
		m = upstream_answer(u, buf, (size_t)n, msg_id(buf), "6.6.6.7");
		cr_assert_eq(sendto(s, m.b, m.len, 0, (struct sockaddr *)&peer, plen),
			     (ssize_t)m.len);
		close(s);
	}
	m = upstream_answer(u, buf, (size_t)n, msg_id(buf), NULL);
	cr_assert_eq(sendto(u->udp, m.b, m.len, 0, (struct sockaddr *)&peer, plen), (ssize_t)m.len);
}

static void upstream_accept(struct upstream *u)
{
	int fd = accept4(u->tcp, NULL, NULL, SOCK_CLOEXEC);

	cr_assert_geq(fd, 0);
	for (int i = 0; i < MAX_CONNS; i++) {
		if (u->conns[i] < 0) {
			u->conns[i] = fd;
			return;
		}
	}
	cr_assert_fail("fake upstream: too many connections");
}

/* One framed query on connection i (the proxy writes each query whole). */
static void upstream_conn(struct upstream *u, int i)
{
	uint8_t hdr[2], buf[4096];
	ssize_t n = recv(u->conns[i], hdr, 2, MSG_WAITALL);
	size_t len;
	struct msg m;

	if (n != 2) {
		close(u->conns[i]);
		u->conns[i] = -1;
		return;
	}
	len = (size_t)hdr[0] << 8 | hdr[1];
	cr_assert_leq(len, sizeof(buf));
	cr_assert_eq(recv(u->conns[i], buf, len, MSG_WAITALL), (ssize_t)len);
	u->tcp_queries++;
	if (u->silent)
		return;
	m = upstream_answer(u, buf, len, msg_id(buf), NULL);
	hdr[0] = (uint8_t)(m.len >> 8);
	hdr[1] = m.len & 0xff;
	cr_assert_eq(send(u->conns[i], hdr, 2, MSG_NOSIGNAL), 2);
	cr_assert_eq(send(u->conns[i], m.b, m.len, MSG_NOSIGNAL), (ssize_t)m.len);
}

/* ---- the proxy's callbacks -------------------------------------------- */

#define MAX_LOG 64

struct recorded_event {
	struct dns_event ev;
	char name[DNS_NAME_MAX + 1];
	struct dns_addr addrs[8];
	uint8_t refused[16];
};

struct test {
	struct dns_proxy *proxy;
	struct upstream ups[2];
	int n_ups;
	int client;		/* the client socket whose queue admit() inspects */
	bool client_tcp;
	const char *allow[4];
	bool ranges_ok;
	int admit_ret;
	char log[MAX_LOG][96];
	int n_log;
	struct recorded_event events[MAX_LOG];
	int n_events;
	int admitted_early;	/* admit() calls that found a reply for the name already queued */
};

static struct test T;

static void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void record(const char *fmt, ...)
{
	va_list ap;

	cr_assert_lt(T.n_log, MAX_LOG);
	va_start(ap, fmt);
	vsnprintf(T.log[T.n_log++], sizeof(T.log[0]), fmt, ap);
	va_end(ap);
}

static bool cb_name_allowed(void *ctx, const char *n)
{
	for (int i = 0; i < 4 && T.allow[i]; i++)
		if (dns_name_matches(T.allow[i], n))
			return true;
	return false;
}

static bool cb_range_allowed(void *ctx, const uint8_t addr[16])
{
	return T.ranges_ok;
}

/* Whether a message answering `qname` waits in the client's receive queue. */
static bool reply_queued(const char *qname)
{
	uint8_t buf[8192];
	struct msg want = { .len = 0 };
	ssize_t n = recv(T.client, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	size_t off = 0;

	if (n <= 0)
		return false;
	name(&want, qname);
	if (!T.client_tcp)
		return (size_t)n >= 12 + want.len && memcmp(buf + 12, want.b, want.len) == 0;
	while (off + 2 <= (size_t)n) {
		size_t len = (size_t)buf[off] << 8 | buf[off + 1];

		if (off + 2 + 12 + want.len <= (size_t)n &&
		    strncasecmp((char *)buf + off + 2 + 12, (char *)want.b, want.len) == 0)
			return true;
		off += 2 + len;
	}
	return false;
}

static int cb_admit(void *ctx, const char *n, const uint8_t addr[16], uint32_t ttl)
{
	char text[64];

	addr_text(addr, text, sizeof(text));
	record("admit %s %s %u", n, text, ttl);
	if (T.client >= 0 && reply_queued(n))
		T.admitted_early++;
	return T.admit_ret;
}

static const char *kind_name(enum dns_event_kind k)
{
	static const char *const names[] = { "ALLOWED", "REFUSED_NAME", "REFUSED_ANSWER",
					     "UPSTREAM_FAILED", "MALFORMED", "REFUSED_TYPE" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void cb_event(void *ctx, const struct dns_event *ev)
{
	struct recorded_event *r;

	cr_assert_lt(T.n_events, MAX_LOG);
	r = &T.events[T.n_events++];
	r->ev = *ev;
	if (ev->name) {
		snprintf(r->name, sizeof(r->name), "%s", ev->name);
		r->ev.name = r->name;
	}
	cr_assert_leq(ev->addr_count, 8);
	if (ev->addr_count)
		memcpy(r->addrs, ev->addrs, ev->addr_count * sizeof(*ev->addrs));
	r->ev.addrs = r->addrs;
	if (ev->refused_addr) {
		memcpy(r->refused, ev->refused_addr, 16);
		r->ev.refused_addr = r->refused;
	}
	record("event %s %s", kind_name(ev->kind), ev->name ? ev->name : "-");
}

static void setup(void)
{
	memset(&T, 0, sizeof(T));
	T.client = -1;
}

static void teardown(void)
{
	dns_proxy_free(T.proxy);
	for (int i = 0; i < T.n_ups; i++)
		upstream_close(&T.ups[i]);
	if (T.client >= 0)
		close(T.client);
}

TestSuite(dnsproxy, .init = setup, .fini = teardown, .timeout = 30);

/* Starts n fake upstreams and the proxy pointed at them, in that order. */
static void start(int n_ups, uint32_t ttl_min, uint32_t ttl_max, unsigned timeout_ms)
{
	struct tp_endpoint eps[2];
	struct dns_proxy_config cfg = {
		.upstreams = eps,
		.upstream_count = (size_t)n_ups,
		.ttl_min_s = ttl_min,
		.ttl_max_s = ttl_max,
		.timeout_ms = timeout_ms,
		.name_allowed = cb_name_allowed,
		.range_allowed = cb_range_allowed,
		.admit = cb_admit,
		.event = cb_event,
	};
	char err[256] = "";

	T.n_ups = n_ups;
	for (int i = 0; i < n_ups; i++) {
		upstream_open(&T.ups[i]);
		eps[i] = endpoint(&T.ups[i]);
	}
	cr_assert_eq(dns_proxy_start(&cfg, &T.proxy, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(dns_proxy_port(T.proxy, AF_INET), 0);
}

/* Runs proxy and upstreams until `events` events have been seen or `ms` passed. */
static void pump(int events, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (T.n_events < events) {
		struct pollfd fds[1 + 2 * (2 + MAX_CONNS)];
		int owner[sizeof(fds) / sizeof(fds[0])], conn[sizeof(fds) / sizeof(fds[0])];
		nfds_t n = 0;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			break;
		fds[n++] = (struct pollfd){ .fd = dns_proxy_fd(T.proxy), .events = POLLIN };
		for (int i = 0; i < T.n_ups; i++) {
			owner[n] = i;
			conn[n] = -2;
			fds[n++] = (struct pollfd){ .fd = T.ups[i].udp, .events = POLLIN };
			owner[n] = i;
			conn[n] = -1;
			fds[n++] = (struct pollfd){ .fd = T.ups[i].tcp, .events = POLLIN };
			for (int j = 0; j < MAX_CONNS; j++) {
				if (T.ups[i].conns[j] < 0)
					continue;
				owner[n] = i;
				conn[n] = j;
				fds[n].fd = T.ups[i].conns[j];
				fds[n++].events = POLLIN;
			}
		}
		cr_assert_geq(poll(fds, n, 20), 0);
		if (fds[0].revents)
			cr_assert_eq(dns_proxy_dispatch(T.proxy), 0);
		for (nfds_t i = 1; i < n; i++) {
			struct upstream *u = &T.ups[owner[i]];

			if (!fds[i].revents)
				continue;
			if (conn[i] == -2)
				upstream_udp(u);
			else if (conn[i] == -1)
				upstream_accept(u);
			else if (u->conns[conn[i]] == fds[i].fd)
				upstream_conn(u, conn[i]);
		}
	}
}

static int client_udp(int family)
{
	struct sockaddr_storage sa = { 0 };
	socklen_t len;
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&sa;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(dns_proxy_port(T.proxy, AF_INET));
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&sa;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		sin6->sin6_port = htons(dns_proxy_port(T.proxy, AF_INET6));
		len = sizeof(*sin6);
	}
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, len), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int client_tcp(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				   .sin_port = htons(dns_proxy_port(T.proxy, AF_INET)) };
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	/* Loopback: the kernel completes the handshake from the backlog, no dispatch needed. */
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Sends one query over UDP from a fresh client and runs until its event. */
static struct msg ask_udp(uint16_t id, const char *qname, uint16_t type, int ms)
{
	struct msg q = make_query(id, qname, type), r = { .len = 0 };
	int want = T.n_events + 1;
	ssize_t n;

	if (T.client >= 0)
		close(T.client);
	T.client = client_udp(AF_INET);
	T.client_tcp = false;
	cr_assert_eq(send(T.client, q.b, q.len, 0), (ssize_t)q.len);
	pump(want, ms);
	cr_assert_eq(T.n_events, want, "no event for %s", qname);
	n = recv(T.client, r.b, sizeof(r.b), MSG_DONTWAIT);
	if (n > 0)
		r.len = (size_t)n;
	record("reply %s", qname);
	return r;
}

static uint8_t rcode_of(const struct msg *r)
{
	cr_assert_geq(r->len, 12);
	return r->b[3] & 0xf;
}

/* The client's view of a reply: addresses and TTLs. */
static size_t reply_addrs(const struct msg *r, uint16_t id, const char *qname, uint16_t type,
			  struct dns_addr *addrs, size_t max)
{
	struct msg qm = make_query(id, qname, type);
	struct dns_question q;
	size_t count;
	uint8_t rcode;

	cr_assert_eq(dns_parse_query(qm.b, qm.len, &q), 0);
	cr_assert_eq(dns_parse_response(r->b, r->len, &q, addrs, max, &count, &rcode), 0,
		     "the reply does not answer the client's query");
	return count;
}

static bool log_has(const char *line)
{
	for (int i = 0; i < T.n_log; i++)
		if (strcmp(T.log[i], line) == 0)
			return true;
	return false;
}

static int log_last(const char *line)
{
	for (int i = T.n_log - 1; i >= 0; i--)
		if (strcmp(T.log[i], line) == 0)
			return i;
	return -1;
}

static int admit_count(void)
{
	int n = 0;

	for (int i = 0; i < T.n_log; i++)
		n += strncmp(T.log[i], "admit ", 6) == 0;
	return n;
}

/* ---- tests ------------------------------------------------------------ */

Test(dnsproxy, answer_released_only_after_admit)
{
	struct dns_addr addrs[4];
	struct msg r;
	char text[64];

	start(1, 5, 3600, 1000);
	T.allow[0] = "api.example.com";
	T.ups[0].answers[0] = "192.0.2.10";
	T.ups[0].answers[1] = "192.0.2.11";

	r = ask_udp(0x1111, "API.example.com", DNS_TYPE_A, 2000);
	cr_assert_eq(rcode_of(&r), DNS_RCODE_NOERROR);
	cr_expect_eq(msg_id(r.b), 0x1111, "the client's id is restored");
	cr_assert_eq(reply_addrs(&r, 0x1111, "api.example.com", DNS_TYPE_A, addrs, 4), 2);
	addr_text(addrs[0].addr, text, sizeof(text));
	cr_expect_str_eq(text, "192.0.2.10");

	cr_assert_eq(T.n_log, 4);
	cr_expect_str_eq(T.log[0], "admit api.example.com 192.0.2.10 300");
	cr_expect_str_eq(T.log[1], "admit api.example.com 192.0.2.11 300");
	cr_expect_str_eq(T.log[2], "event ALLOWED api.example.com");
	cr_expect_str_eq(T.log[3], "reply API.example.com");
	cr_expect_eq(T.admitted_early, 0, "a reply reached the client before its admission");
	cr_expect_not(T.ups[0].saw_upper, "the name went upstream in its client's case");
	cr_expect_eq(memcmp(r.b + 13, "API", 3), 0, "the client gets its own case back");
	cr_expect_eq(T.events[0].ev.addr_count, 2);
	cr_expect_eq(T.events[0].ev.transport, IPPROTO_UDP);
	cr_expect_eq(T.events[0].ev.qtype, DNS_TYPE_A);
	cr_expect_eq(T.ups[0].udp_queries, 1);

	/* AAAA: the same, the address as is. */
	T.ups[0].answers[2] = "2001:db8::10";
	r = ask_udp(0x2222, "api.example.com", DNS_TYPE_AAAA, 2000);
	cr_assert_eq(reply_addrs(&r, 0x2222, "api.example.com", DNS_TYPE_AAAA, addrs, 4), 1);
	cr_expect(log_has("admit api.example.com 2001:db8::10 300"));
	cr_expect_lt(log_last("admit api.example.com 2001:db8::10 300"),
		     log_last("event ALLOWED api.example.com"));
	cr_expect_eq(T.admitted_early, 0);
}

Test(dnsproxy, unlisted_name_refused_without_upstream)
{
	struct msg r;

	start(1, 5, 3600, 1000);
	T.allow[0] = "*.example.com";
	T.ups[0].answers[0] = "192.0.2.10";

	r = ask_udp(7, "example.com", DNS_TYPE_A, 2000);	/* the zone itself: not below it */
	cr_expect_eq(rcode_of(&r), DNS_RCODE_REFUSED);
	cr_expect_eq(msg_id(r.b), 7);
	cr_expect_eq(r.b[5], 1, "the question is echoed");
	cr_expect_eq(T.events[0].ev.kind, DNS_EV_REFUSED_NAME);
	cr_expect_str_eq(T.events[0].name, "example.com");
	cr_expect_not(T.events[0].ev.suspected_tunnel);

	r = ask_udp(8, "k5sxgzlsnfxgolbaorugk4tf.exfil.example.org", 16 /* TXT */, 2000);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_REFUSED);
	cr_expect_eq(T.events[1].ev.kind, DNS_EV_REFUSED_NAME);
	cr_expect(T.events[1].ev.suspected_tunnel);

	cr_expect_eq(T.ups[0].udp_queries + T.ups[0].tcp_queries, 0, "nothing went upstream");
	cr_expect_eq(admit_count(), 0);
}

Test(dnsproxy, classes_other_than_in_refused)
{
	struct msg q, r = { .len = 0 };
	ssize_t n;

	start(1, 5, 3600, 1000);
	T.allow[0] = "example.com";
	q = make_query(10, "example.com", DNS_TYPE_A);
	q.b[q.len - 1] = 3;	/* CHAOS */
	T.client = client_udp(AF_INET);
	cr_assert_eq(send(T.client, q.b, q.len, 0), (ssize_t)q.len);
	pump(1, 2000);
	n = recv(T.client, r.b, sizeof(r.b), MSG_DONTWAIT);
	cr_assert_gt(n, 0);
	r.len = (size_t)n;
	cr_expect_eq(rcode_of(&r), DNS_RCODE_REFUSED);
	cr_expect_eq(T.events[0].ev.kind, DNS_EV_REFUSED_TYPE);
	cr_expect_eq(T.ups[0].udp_queries, 0);
}

Test(dnsproxy, any_and_zone_transfer_refused)
{
	static const uint16_t types[] = { DNS_TYPE_ANY, DNS_TYPE_AXFR, DNS_TYPE_IXFR };
	struct msg r;

	start(1, 5, 3600, 1000);
	T.allow[0] = "example.com";
	for (size_t i = 0; i < 3; i++) {
		r = ask_udp(9, "example.com", types[i], 2000);
		cr_expect_eq(rcode_of(&r), DNS_RCODE_REFUSED);
		cr_expect_eq(T.events[i].ev.kind, DNS_EV_REFUSED_TYPE);
		cr_expect_eq(T.events[i].ev.qtype, types[i]);
	}
	cr_expect_eq(T.ups[0].udp_queries, 0);
}

Test(dnsproxy, rebinding_answers_refused)
{
	static const struct {
		const char *answer;
		bool ranges_ok;
		enum tp_addr_class cls;
	} cases[] = {
		{ "127.0.0.1", false, TP_ADDR_LOOPBACK },
		{ "10.0.0.1", false, TP_ADDR_PRIVATE },
		{ "::ffff:192.168.1.1", false, TP_ADDR_PRIVATE },
		{ "0.0.0.0", false, TP_ADDR_UNSPECIFIED },
		{ "169.254.169.254", true, TP_ADDR_METADATA },
		{ "169.254.10.10", true, TP_ADDR_LINK_LOCAL },
		{ "fd00:ec2::254", true, TP_ADDR_METADATA },
		{ "fe80::1", true, TP_ADDR_LINK_LOCAL },
	};
	struct msg r;

	start(1, 5, 3600, 1000);
	T.allow[0] = "rebind.example.com";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool v4 = strchr(cases[i].answer, ':') == NULL;
		struct recorded_event *ev;
		uint8_t want[16];

		/* A good address first: one bad answer spoils the whole reply. */
		T.ups[0].answers[0] = v4 ? "192.0.2.1" : "2001:db8::1";
		T.ups[0].answers[1] = cases[i].answer;
		T.ranges_ok = cases[i].ranges_ok;
		r = ask_udp((uint16_t)(100 + i), "rebind.example.com",
			    v4 ? DNS_TYPE_A : DNS_TYPE_AAAA, 2000);
		ev = &T.events[T.n_events - 1];
		cr_expect_eq(rcode_of(&r), DNS_RCODE_REFUSED, "%s", cases[i].answer);
		cr_expect_eq(r.b[7], 0, "no answers reach the client");
		cr_expect_eq(ev->ev.kind, DNS_EV_REFUSED_ANSWER, "%s", cases[i].answer);
		cr_expect_eq(ev->ev.refused_class, cases[i].cls, "%s", cases[i].answer);
		addr16(cases[i].answer, want);
		cr_expect_arr_eq(ev->refused, want, 16);
	}
	cr_expect_eq(admit_count(), 0, "nothing admitted");

	/* The same private answer is used when the policy allows its range. */
	T.ups[0].answers[1] = "10.0.0.1";
	T.ranges_ok = true;
	r = ask_udp(200, "rebind.example.com", DNS_TYPE_A, 2000);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_NOERROR);
	cr_expect(log_has("admit rebind.example.com 10.0.0.1 300"));
}

Test(dnsproxy, ttl_clamped_and_capped)
{
	struct dns_addr addrs[2];
	struct msg r;

	start(1, 30, 600, 1000);
	T.allow[0] = "ttl.example.com";
	T.ups[0].answers[0] = "192.0.2.20";

	T.ups[0].ttl = 5;
	r = ask_udp(1, "ttl.example.com", DNS_TYPE_A, 2000);
	cr_expect(log_has("admit ttl.example.com 192.0.2.20 30"), "raised to the minimum");
	cr_assert_eq(reply_addrs(&r, 1, "ttl.example.com", DNS_TYPE_A, addrs, 2), 1);
	cr_expect_eq(addrs[0].ttl, 5, "the client may cache less than admitted");
	cr_expect_eq(T.events[0].addrs[0].ttl, 30, "the event says what was admitted");

	T.ups[0].ttl = 5000;
	r = ask_udp(2, "ttl.example.com", DNS_TYPE_A, 2000);
	cr_expect(log_has("admit ttl.example.com 192.0.2.20 600"), "cut to the maximum");
	cr_assert_eq(reply_addrs(&r, 2, "ttl.example.com", DNS_TYPE_A, addrs, 2), 1);
	cr_expect_eq(addrs[0].ttl, 600, "never cached longer than admitted");

	T.ups[0].ttl = 0x80000005u;	/* reads as 0 */
	r = ask_udp(3, "ttl.example.com", DNS_TYPE_A, 2000);
	cr_assert_eq(reply_addrs(&r, 3, "ttl.example.com", DNS_TYPE_A, addrs, 2), 1);
	cr_expect_eq(addrs[0].ttl, 0);
	cr_expect_eq(T.events[2].addrs[0].ttl, 30);
}

Test(dnsproxy, upstream_timeout_servfail)
{
	struct msg r;

	start(1, 5, 3600, 200);
	T.allow[0] = "slow.example.com";
	T.ups[0].silent = true;
	r = ask_udp(5, "slow.example.com", DNS_TYPE_A, 3000);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_SERVFAIL);
	cr_expect_eq(msg_id(r.b), 5);
	cr_expect_eq(T.events[0].ev.kind, DNS_EV_UPSTREAM_FAILED);
	cr_expect_eq(T.ups[0].udp_queries, 1);
}

Test(dnsproxy, second_upstream_after_timeout)
{
	struct dns_addr addrs[2];
	struct msg r;

	start(2, 5, 3600, 200);
	T.allow[0] = "two.example.com";
	T.ups[0].silent = true;
	T.ups[1].answers[0] = "192.0.2.30";
	r = ask_udp(6, "two.example.com", DNS_TYPE_A, 3000);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_NOERROR);
	cr_expect_eq(reply_addrs(&r, 6, "two.example.com", DNS_TYPE_A, addrs, 2), 1);
	cr_expect_eq(T.ups[0].udp_queries, 1);
	cr_expect_eq(T.ups[1].udp_queries, 1);
	cr_expect_eq(T.events[0].ev.kind, DNS_EV_ALLOWED);
	cr_expect_eq(T.admitted_early, 0);
}

Test(dnsproxy, spoofed_replies_ignored)
{
	struct dns_addr addrs[2];
	struct msg r;
	char text[64];

	start(1, 5, 3600, 1000);
	T.allow[0] = "spoof.example.com";
	T.ups[0].spoof_first = true;
	T.ups[0].answers[0] = "192.0.2.40";
	r = ask_udp(0x5151, "spoof.example.com", DNS_TYPE_A, 2000);
	cr_assert_eq(reply_addrs(&r, 0x5151, "spoof.example.com", DNS_TYPE_A, addrs, 2), 1);
	addr_text(addrs[0].addr, text, sizeof(text));
	cr_expect_str_eq(text, "192.0.2.40");
	cr_expect_eq(admit_count(), 1);
	cr_expect(log_has("admit spoof.example.com 192.0.2.40 300"));
}

Test(dnsproxy, admit_failure_servfail)
{
	struct msg r;

	start(1, 5, 3600, 1000);
	T.allow[0] = "full.example.com";
	T.ups[0].answers[0] = "192.0.2.50";
	T.admit_ret = -ENOSPC;
	r = ask_udp(11, "full.example.com", DNS_TYPE_A, 2000);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_SERVFAIL);
	cr_expect_eq(r.b[7], 0, "the answer is withheld");
	cr_expect_eq(T.events[0].ev.kind, DNS_EV_UPSTREAM_FAILED);
}

Test(dnsproxy, truncated_reply_passed_on)
{
	struct msg r;

	start(1, 5, 3600, 1000);
	T.allow[0] = "big.example.com";
	T.ups[0].tc = true;
	r = ask_udp(12, "big.example.com", DNS_TYPE_A, 2000);
	cr_expect(r.b[2] & (DNS_FLAG_TC >> 8), "TC reaches the client");
}

Test(dnsproxy, malformed_query)
{
	struct msg q = make_query(13, "x.example.com", DNS_TYPE_A), r = { .len = 0 };
	ssize_t n;

	start(1, 5, 3600, 1000);
	T.client = client_udp(AF_INET);
	q.b[5] = 2;	/* qdcount 2 */
	cr_assert_eq(send(T.client, q.b, q.len, 0), (ssize_t)q.len);
	cr_assert_eq(send(T.client, "\x01\x02\x03", 3, 0), 3);	/* no header: no reply */
	pump(2, 2000);
	cr_assert_eq(T.n_events, 2);
	cr_expect_eq(T.events[0].ev.kind, DNS_EV_MALFORMED);
	cr_expect_null(T.events[0].ev.name);
	cr_expect_eq(T.events[1].ev.kind, DNS_EV_MALFORMED);
	n = recv(T.client, r.b, sizeof(r.b), MSG_DONTWAIT);
	cr_assert_eq(n, 12);
	r.len = 12;
	cr_expect_eq(rcode_of(&r), DNS_RCODE_NOTIMP);
	cr_expect_eq(recv(T.client, r.b, sizeof(r.b), MSG_DONTWAIT), -1);
}

static void tcp_send_query(int fd, uint16_t id, const char *qname, uint16_t type)
{
	struct msg q = make_query(id, qname, type);
	uint8_t hdr[2] = { (uint8_t)(q.len >> 8), q.len & 0xff };

	cr_assert_eq(send(fd, hdr, 2, MSG_NOSIGNAL), 2);
	cr_assert_eq(send(fd, q.b, q.len, MSG_NOSIGNAL), (ssize_t)q.len);
}

static struct msg tcp_read_reply(int fd)
{
	struct msg r = { .len = 0 };
	uint8_t hdr[2];

	cr_assert_eq(recv(fd, hdr, 2, MSG_WAITALL), 2, "no reply over TCP");
	r.len = (size_t)hdr[0] << 8 | hdr[1];
	cr_assert_leq(r.len, sizeof(r.b));
	cr_assert_eq(recv(fd, r.b, r.len, MSG_WAITALL), (ssize_t)r.len);
	return r;
}

Test(dnsproxy, tcp_two_queries_one_connection)
{
	struct dns_addr addrs[2];
	struct msg r1, r2;

	start(1, 5, 3600, 1000);
	T.allow[0] = "*.example.com";
	T.ups[0].answers[0] = "192.0.2.60";
	T.ups[0].answers[1] = "2001:db8::60";
	T.client = client_tcp();
	T.client_tcp = true;
	tcp_send_query(T.client, 21, "one.example.com", DNS_TYPE_A);
	tcp_send_query(T.client, 22, "two.example.com", DNS_TYPE_AAAA);
	pump(2, 3000);
	cr_assert_eq(T.n_events, 2);
	r1 = tcp_read_reply(T.client);
	r2 = tcp_read_reply(T.client);
	/* Replies may come in either order (RFC 7766 6.2.1.1); these come in query order here. */
	if (msg_id(r1.b) == 22) {
		struct msg t = r1;

		r1 = r2;
		r2 = t;
	}
	cr_expect_eq(reply_addrs(&r1, 21, "one.example.com", DNS_TYPE_A, addrs, 2), 1);
	cr_expect_eq(reply_addrs(&r2, 22, "two.example.com", DNS_TYPE_AAAA, addrs, 2), 1);
	cr_expect_eq(T.ups[0].tcp_queries, 2, "forwarded over TCP");
	cr_expect_eq(T.ups[0].udp_queries, 0);
	cr_expect_eq(T.events[0].ev.transport, IPPROTO_TCP);
	cr_expect(log_has("admit one.example.com 192.0.2.60 300"));
	cr_expect(log_has("admit two.example.com 2001:db8::60 300"));
	cr_expect_eq(T.admitted_early, 0);

	/* Refusals over TCP too, on the same connection. */
	tcp_send_query(T.client, 23, "example.org", DNS_TYPE_A);
	pump(3, 2000);
	r1 = tcp_read_reply(T.client);
	cr_expect_eq(msg_id(r1.b), 23);
	cr_expect_eq(rcode_of(&r1), DNS_RCODE_REFUSED);
}

Test(dnsproxy, tcp_client_with_bad_frame_dropped)
{
	uint8_t junk[4] = { 0, 2, 0xab, 0xcd };	/* a 2-byte "message" */
	ssize_t n;
	char c;

	start(1, 5, 3600, 1000);
	T.client = client_tcp();
	cr_assert_eq(send(T.client, junk, sizeof(junk), MSG_NOSIGNAL), 4);
	pump(1, 300);	/* no event comes: it just goes */
	/* Closed with the junk unread: the kernel answers with a reset. */
	errno = 0;
	n = recv(T.client, &c, 1, 0);
	cr_expect(n == 0 || (n < 0 && errno == ECONNRESET), "the proxy did not close it (%s)",
		  strerror(errno));
}

Test(dnsproxy, ipv6_loopback)
{
	struct msg q = make_query(31, "v6.example.com", DNS_TYPE_A), r;
	ssize_t n;

	start(1, 5, 3600, 1000);
	if (dns_proxy_port(T.proxy, AF_INET6) == 0) {
		cr_log_warn("SKIP: no IPv6 loopback on this host");
		cr_skip_test("no ::1");
	}
	T.allow[0] = "v6.example.com";
	T.ups[0].answers[0] = "192.0.2.70";
	T.client = client_udp(AF_INET6);
	cr_assert_eq(send(T.client, q.b, q.len, 0), (ssize_t)q.len);
	pump(1, 2000);
	n = recv(T.client, r.b, sizeof(r.b), MSG_DONTWAIT);
	cr_assert_gt(n, 12);
	r.len = (size_t)n;
	cr_expect_eq(rcode_of(&r), DNS_RCODE_NOERROR);
	cr_expect(log_has("admit v6.example.com 192.0.2.70 300"));
}

Test(dnsproxy, resolv_conf_upstreams)
{
	char path[] = "/tmp/tether-test-resolv-XXXXXX";
	struct dns_proxy_config cfg = { .resolv_conf = path };
	char err[256] = "";
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	fputs("# comment\nsearch example.com\noptions ndots:2\n", f);
	fflush(f);
	cr_expect_eq(dns_proxy_start(&cfg, &T.proxy, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "no usable nameserver in /tmp/tether-test-resolv-") != NULL, "%s",
		  err);
	cr_expect_null(T.proxy);
	fputs("nameserver 127.0.0.53\nnameserver ::1\n", f);
	fclose(f);
	cr_expect_eq(dns_proxy_start(&cfg, &T.proxy, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	cfg.resolv_conf = "/nonexistent/resolv.conf";
	{
		struct dns_proxy *p = NULL;

		cr_expect_eq(dns_proxy_start(&cfg, &p, err, sizeof(err)), -ENOENT);
		cr_expect(strstr(err, "open(/nonexistent/resolv.conf)") != NULL, "%s", err);
		/* a run that lists no hostname needs no upstream */
		cfg.upstream_optional = true;
		cr_expect_eq(dns_proxy_start(&cfg, &p, err, sizeof(err)), 0, "%s", err);
		cr_expect_not_null(p);
		dns_proxy_free(p);
	}
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

Test(dnsproxy, tcp_clients_bounded_and_nothing_leaks)
{
	int clients[DNS_PROXY_TCP_CLIENTS_MAX + 6];
	int before, proxy_fds, refused = 0;
	struct msg r;

	start(1, 5, 3600, 200);
	before = open_fds();
	/* UDP and TCP listeners per family, the epoll fd, the timerfd. */
	proxy_fds = 2 + (dns_proxy_port(T.proxy, AF_INET6) ? 4 : 2);
	T.allow[0] = "*.example.com";
	T.ups[0].answers[0] = "192.0.2.80";
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		clients[i] = client_tcp();
		pump(1, 5);	/* accept as they come: the backlog is short */
	}
	pump(1, 100);
	/* The ones over the limit were accepted and closed at once. */
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		char c;
		ssize_t n = recv(clients[i], &c, 1, MSG_DONTWAIT);

		refused += n == 0;
	}
	cr_expect_eq(refused, 6);
	/* The first still works, for a query and an upstream that times out alike. */
	T.client = clients[0];
	T.client_tcp = true;
	tcp_send_query(T.client, 41, "a.example.com", DNS_TYPE_A);
	pump(1, 2000);
	r = tcp_read_reply(T.client);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_NOERROR);
	T.ups[0].silent = true;
	tcp_send_query(T.client, 42, "b.example.com", DNS_TYPE_A);
	pump(2, 2000);
	r = tcp_read_reply(T.client);
	cr_expect_eq(rcode_of(&r), DNS_RCODE_SERVFAIL);
	/* A query left in flight when the client goes, then the proxy itself. */
	tcp_send_query(clients[1], 43, "c.example.com", DNS_TYPE_A);
	pump(3, 50);
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++)
		close(clients[i]);
	T.client = -1;
	pump(3, 100);
	dns_proxy_free(T.proxy);
	T.proxy = NULL;
	for (int i = 0; i < MAX_CONNS; i++) {
		if (T.ups[0].conns[i] >= 0) {
			close(T.ups[0].conns[i]);
			T.ups[0].conns[i] = -1;
		}
	}
	/* Everything the proxy opened is closed: before counted the proxy's own fds too. */
	cr_expect_eq(open_fds(), before - proxy_fds, "fds left open");
}
