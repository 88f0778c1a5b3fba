// SPDX-License-Identifier: GPL-2.0
/*
 * The run's DNS proxy: see runtime/dnsproxy.h for what it guarantees.
 *
 * Layout.  Everything lives in fixed tables inside struct dns_proxy: the
 * listeners, DNS_PROXY_PENDING_MAX query slots and DNS_PROXY_TCP_CLIENTS_MAX
 * TCP client slots.  Each fd is registered in the proxy's own epoll set with
 * {tag, slot, generation} as its data; a slot's generation changes whenever
 * it is freed, so an event that was already fetched for a slot freed earlier
 * in the same batch is recognised as stale and dropped (no use-after-free, no
 * reply to the wrong client).
 *
 * A query's life.  The client's query is parsed (dns_parse_query) and judged
 * by name and type without contacting anyone.  A forwarded query is rebuilt,
 * not copied: header, the client's question bytes, and an OPT record only if
 * the client sent one; nothing else the client wrote reaches the upstream.
 * Each attempt uses a fresh socket connected to one upstream and a fresh
 * random id, so a reply is accepted only from that address and port, with
 * that id and the same question.  The answer's addresses are checked for
 * rebinding (every A/AAAA in the message, whoever owns it), admitted, the
 * TTLs capped, the client's id restored, and only then is the reply sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "runtime/dnsproxy.h"

#define DEFAULT_TIMEOUT_MS 2000
#define DEFAULT_TTL_MAX 86400
#define UPSTREAM_UDP_SIZE 1232	/* the EDNS size that avoids IP fragmentation (DNS flag day 2020) */
/* Replies a TCP client has not read: more, and it is dropped. */
#define TCP_OUT_MAX (128 * 1024)
#define EVENTS_BATCH 64
/* epoll_wait rounds per dispatch; the rest waits for the next call. */
#define DISPATCH_ROUNDS 8
#define READ_BUDGET 32		/* datagrams or reads per ready fd and round */
#define OPT_RR_LEN 11

enum tag {
	TAG_TIMER = 1,
	TAG_UDP_LISTEN,
	TAG_TCP_LISTEN,
	TAG_TCP_CLIENT,
	TAG_UPSTREAM,
};

struct upstream {
	struct sockaddr_storage sa;
	socklen_t len;
};

struct listener {
	int family;
	int udp, tcp;		/* -1: not bound */
	uint16_t port;
};

struct tcp_client {
	bool used;
	uint32_t gen;
	int fd;
	uint8_t hdr[2];		/* the length prefix being read */
	size_t hdr_have;
	uint8_t *in;		/* the message being read, once its length is known */
	size_t in_len, in_have;
	uint8_t *out;		/* framed replies not yet written */
	size_t out_len, out_cap;
	bool epollout;		/* EPOLLOUT is in the interest set */
	bool eof;		/* the client closed its side: close when done */
	unsigned pending;	/* queries of this client in flight */
	uint64_t idle_deadline;
};

enum upstream_state { UP_NONE, UP_CONNECTING, UP_READING };

/* Where a reply goes. */
struct dest {
	int transport;			/* IPPROTO_UDP or IPPROTO_TCP */
	int listen_fd;			/* UDP */
	struct sockaddr_storage peer;	/* UDP */
	socklen_t peer_len;
	unsigned client;		/* TCP: slot and its generation */
	uint32_t client_gen;
};

struct pending {
	bool used;
	uint32_t gen;			/* changes with every attempt and when freed */
	int transport;
	struct dest dest;
	size_t udp_max;			/* UDP: the largest reply the client takes */
	/* The client's query: q (client id in q.id) and header + question, for replies. */
	struct dns_question q;
	uint8_t query[DNS_QUESTION_MAX];
	/* Upstream query, after a 2-byte length prefix (sent only over TCP). */
	uint8_t upq[2 + DNS_QUESTION_MAX + OPT_RR_LEN];
	size_t upq_len;			/* without the prefix */
	uint16_t up_id;
	/* The current attempt. */
	size_t upstream;		/* index of the upstream asked */
	int fd;
	enum upstream_state state;
	size_t sent;			/* TCP: bytes of prefix + query written */
	uint8_t lenbuf[2];		/* TCP: reply length prefix */
	size_t len_have;
	uint8_t *resp;			/* TCP: reply */
	size_t resp_len, resp_have;
	uint64_t deadline;
};

struct dns_proxy {
	struct dns_proxy_config cfg;
	struct upstream upstreams[DNS_PROXY_UPSTREAMS_MAX];
	size_t upstream_count;
	struct listener listeners[2];	/* AF_INET, AF_INET6 */
	int epfd, timerfd;
	uint64_t timer_armed;		/* deadline the timer is set to; 0 = disarmed */
	struct pending pending[DNS_PROXY_PENDING_MAX];
	struct tcp_client clients[DNS_PROXY_TCP_CLIENTS_MAX];
	uint8_t buf[DNS_MSG_MAX + 1];	/* one datagram; +1 tells a 64 KiB one was cut */
};

static uint64_t now_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000;
}

static uint64_t ep_data(enum tag tag, unsigned slot, uint32_t gen)
{
	return (uint64_t)tag << 56 | (uint64_t)(slot & 0xffffff) << 32 | gen;
}

static int ep_add(struct dns_proxy *p, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int ep_mod(struct dns_proxy *p, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(p->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = v >> 8;
	b[1] = v & 0xff;
}

static void emit(struct dns_proxy *p, const struct dns_event *ev)
{
	if (p->cfg.event)
		p->cfg.event(p->cfg.ctx, ev);
}

static void emit_simple(struct dns_proxy *p, enum dns_event_kind kind, const struct dns_question *q,
			int transport, uint8_t rcode)
{
	struct dns_event ev = {
		.kind = kind,
		.name = q ? q->name : NULL,
		.qtype = q ? q->qtype : 0,
		.transport = transport,
		.rcode = rcode,
	};

	emit(p, &ev);
}

/* ---- TCP clients ------------------------------------------------------ */

static uint64_t client_data(const struct dns_proxy *p, const struct tcp_client *c)
{
	return ep_data(TAG_TCP_CLIENT, (unsigned)(c - p->clients), c->gen);
}

static void pending_free(struct dns_proxy *p, struct pending *pq);

static void client_drop(struct dns_proxy *p, struct tcp_client *c)
{
	unsigned slot = (unsigned)(c - p->clients);

	if (!c->used)
		return;
	/* Its queries in flight have nobody to answer: end them now. */
	for (size_t i = 0; i < DNS_PROXY_PENDING_MAX; i++) {
		struct pending *pq = &p->pending[i];

		if (pq->used && pq->transport == IPPROTO_TCP && pq->dest.client == slot &&
		    pq->dest.client_gen == c->gen)
			pending_free(p, pq);
	}
	close(c->fd);	/* also leaves the epoll set */
	free(c->in);
	free(c->out);
	*c = (struct tcp_client){ .gen = c->gen + 1, .fd = -1 };
}

/* A client whose side is closed goes once nothing is left for it. */
static bool client_done(struct dns_proxy *p, struct tcp_client *c)
{
	if (c->eof && c->pending == 0 && c->out_len == 0) {
		client_drop(p, c);
		return true;
	}
	return false;
}

static void client_flush(struct dns_proxy *p, struct tcp_client *c)
{
	bool want_out;

	while (c->out_len) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			client_drop(p, c);
			return;
		}
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
		if (c->out_len == 0)
			c->idle_deadline = now_ms() + DNS_PROXY_TCP_IDLE_MS;
	}
	if (client_done(p, c))
		return;
	want_out = c->out_len > 0;
	if (want_out != c->epollout) {
		/* After EOF, EPOLLIN and EPOLLRDHUP would stay ready for ever: leave them out. */
		uint32_t events = (c->eof ? 0 : EPOLLIN | EPOLLRDHUP) | (want_out ? EPOLLOUT : 0);

		if (ep_mod(p, c->fd, events, client_data(p, c)) < 0) {
			client_drop(p, c);
			return;
		}
		c->epollout = want_out;
	}
}

/* Queues one framed reply; a client that lets TCP_OUT_MAX pile up is dropped. */
static void client_send(struct dns_proxy *p, struct tcp_client *c, const uint8_t *msg, size_t len)
{
	if (len > DNS_MSG_MAX || c->out_len + 2 + len > TCP_OUT_MAX) {
		client_drop(p, c);
		return;
	}
	if (c->out_cap < c->out_len + 2 + len) {
		size_t cap = c->out_len + 2 + len;
		uint8_t *out;

		cap = cap < 4096 ? 4096 : cap;
		out = realloc(c->out, cap);
		if (!out) {
			client_drop(p, c);
			return;
		}
		c->out = out;
		c->out_cap = cap;
	}
	put16(c->out + c->out_len, (uint16_t)len);
	memcpy(c->out + c->out_len + 2, msg, len);
	c->out_len += 2 + len;
	client_flush(p, c);
}

/* ---- replies ---------------------------------------------------------- */

static void udp_send(int fd, const struct sockaddr_storage *peer, socklen_t peer_len,
		     const uint8_t *msg, size_t len)
{
	/* UDP is lossy by design: a full socket buffer drops the reply, the client retries. */
	(void)sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)peer,
		     peer_len);
}

static void dest_reply(struct dns_proxy *p, const struct dest *d, const uint8_t *msg, size_t len)
{
	struct tcp_client *c;

	if (d->transport == IPPROTO_UDP) {
		udp_send(d->listen_fd, &d->peer, d->peer_len, msg, len);
		return;
	}
	c = &p->clients[d->client];
	if (c->used && c->gen == d->client_gen)
		client_send(p, c, msg, len);
}

/*
 * Frees pq, then sends `msg` to its client and emits `ev`.  Freeing comes
 * first: a reply may drop the TCP client, which ends its queries in flight.
 */
static void pending_release(struct dns_proxy *p, struct pending *pq, const uint8_t *msg,
			    size_t len, const struct dns_event *ev)
{
	struct dest d = pq->dest;

	pending_free(p, pq);
	if (len)
		dest_reply(p, &d, msg, len);
	emit(p, ev);
}

/* Header + question with `rcode` to the client of pq, an event, and the slot is freed. */
static void pending_finish(struct dns_proxy *p, struct pending *pq, uint8_t rcode,
			   enum dns_event_kind kind)
{
	uint8_t reply[DNS_QUESTION_MAX];
	size_t len = dns_build_reply(pq->query, &pq->q, rcode, reply, sizeof(reply));
	struct dns_question q = pq->q;
	struct dns_event ev = {
		.kind = kind,
		.name = q.name,
		.qtype = q.qtype,
		.transport = pq->transport,
		.rcode = rcode,
	};

	pending_release(p, pq, reply, len, &ev);
}

/* ---- upstream attempts ------------------------------------------------ */

static void pending_close_attempt(struct dns_proxy *p, struct pending *pq)
{
	if (pq->fd >= 0)
		close(pq->fd);
	pq->fd = -1;
	free(pq->resp);
	pq->resp = NULL;
	pq->resp_len = pq->resp_have = pq->len_have = pq->sent = 0;
	pq->state = UP_NONE;
}

static void pending_free(struct dns_proxy *p, struct pending *pq)
{
	if (!pq->used)
		return;
	pending_close_attempt(p, pq);
	if (pq->transport == IPPROTO_TCP) {
		struct tcp_client *c = &p->clients[pq->dest.client];

		if (c->used && c->gen == pq->dest.client_gen && c->pending)
			c->pending--;
	}
	pq->used = false;
	pq->gen++;
}

static int random_id(uint16_t *id)
{
	uint16_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		return -EAGAIN;
	*id = v;
	return 0;
}

/* Opens, connects and (UDP) sends one attempt to upstream pq->upstream. */
static int attempt_open(struct dns_proxy *p, struct pending *pq)
{
	const struct upstream *u = &p->upstreams[pq->upstream];
	unsigned slot = (unsigned)(pq - p->pending);
	int type = pq->transport == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
	uint32_t events;
	int fd, r;

	r = random_id(&pq->up_id);
	if (r < 0)
		return r;
	/* A new generation: an event already fetched for the previous attempt's fd is stale. */
	pq->gen++;
	put16(pq->upq + 2, pq->up_id);
	fd = socket(u->sa.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	pq->fd = fd;
	if (connect(fd, (const struct sockaddr *)&u->sa, u->len) < 0 && errno != EINPROGRESS)
		return -errno;
	if (type == SOCK_DGRAM) {
		if (send(fd, pq->upq + 2, pq->upq_len, MSG_NOSIGNAL) < 0)
			return -errno;
		pq->state = UP_READING;
		events = EPOLLIN;
	} else {
		pq->state = UP_CONNECTING;
		events = EPOLLOUT | EPOLLIN | EPOLLRDHUP;
	}
	return ep_add(p, fd, events, ep_data(TAG_UPSTREAM, slot, pq->gen));
}

/* Starts the attempt at pq->upstream or the next one that can be started; none: SERVFAIL. */
static void attempt_start(struct dns_proxy *p, struct pending *pq)
{
	uint64_t timeout = p->cfg.timeout_ms ? p->cfg.timeout_ms : DEFAULT_TIMEOUT_MS;

	for (; pq->upstream < p->upstream_count; pq->upstream++) {
		if (attempt_open(p, pq) == 0) {
			pq->deadline = now_ms() + timeout;
			return;
		}
		pending_close_attempt(p, pq);
	}
	pending_finish(p, pq, DNS_RCODE_SERVFAIL, DNS_EV_UPSTREAM_FAILED);
}

static void attempt_fail(struct dns_proxy *p, struct pending *pq)
{
	pending_close_attempt(p, pq);
	pq->upstream++;
	attempt_start(p, pq);
}

struct rebind_check {
	struct dns_proxy *p;
	uint8_t addr[16];
	enum tp_addr_class cls;
};

static int rebind_check_addr(void *ctx, const uint8_t addr[16], uint32_t ttl)
{
	struct rebind_check *rc = ctx;
	enum tp_addr_class cls = dns_classify(addr);
	const struct dns_proxy_config *cfg = &rc->p->cfg;

	switch (cls) {
	case TP_ADDR_PUBLIC:
		return 0;
	case TP_ADDR_LINK_LOCAL:
	case TP_ADDR_METADATA:
		break;	/* never: metadata is not reached through a name */
	default:
		if (cfg->range_allowed && cfg->range_allowed(cfg->ctx, addr))
			return 0;
		break;
	}
	memcpy(rc->addr, addr, 16);
	rc->cls = cls;
	return 1;
}

static uint32_t ttl_clamp(const struct dns_proxy_config *cfg, uint32_t ttl)
{
	uint32_t max = cfg->ttl_max_s ? cfg->ttl_max_s : DEFAULT_TTL_MAX;
	uint32_t min = cfg->ttl_min_s < max ? cfg->ttl_min_s : max;

	return ttl < min ? min : ttl > max ? max : ttl;
}

/*
 * A response arrived on pq's attempt.  Returns true when it settled the query
 * (pq is freed), false when it was ignored: not a response to this question
 * with this id.  `msg` is modified (TTLs, id).
 */
static bool handle_response(struct dns_proxy *p, struct pending *pq, uint8_t *msg, size_t len)
{
	struct dns_addr addrs[DNS_PROXY_ADDRS_MAX];
	struct dns_question upq = pq->q;
	struct rebind_check rc = { .p = p };
	const struct dns_proxy_config *cfg = &p->cfg;
	size_t count;
	uint8_t rcode;
	int r;

	upq.id = pq->up_id;
	if (dns_parse_response(msg, len, &upq, addrs, DNS_PROXY_ADDRS_MAX, &count, &rcode) < 0)
		return false;
	/* A resolver that cannot answer: the next one may. */
	if (rcode == DNS_RCODE_SERVFAIL || rcode == DNS_RCODE_REFUSED) {
		attempt_fail(p, pq);
		return true;
	}
	/*
	 * No client may cache an answer longer than the longest admission.  Cap
	 * first, then read the message again and judge only that: a compression
	 * pointer may point into a TTL, so the capped message can name other
	 * owners than the original, and what is admitted and checked must be
	 * exactly what the client will read.
	 */
	if (dns_cap_ttls(msg, len, cfg->ttl_max_s ? cfg->ttl_max_s : DEFAULT_TTL_MAX) < 0 ||
	    dns_parse_response(msg, len, &upq, addrs, DNS_PROXY_ADDRS_MAX, &count, &rcode) < 0) {
		pending_finish(p, pq, DNS_RCODE_SERVFAIL, DNS_EV_UPSTREAM_FAILED);
		return true;
	}

	r = dns_for_each_addr(msg, len, rebind_check_addr, &rc);
	if (r != 0) {
		struct dns_event ev = {
			.kind = DNS_EV_REFUSED_ANSWER,
			.name = pq->q.name,
			.qtype = pq->q.qtype,
			.transport = pq->transport,
			.rcode = DNS_RCODE_REFUSED,
			.refused_addr = rc.addr,
			.refused_class = rc.cls,
		};
		uint8_t reply[DNS_QUESTION_MAX];
		size_t rlen = dns_build_reply(pq->query, &pq->q, DNS_RCODE_REFUSED, reply,
					      sizeof(reply));
		struct dns_question q = pq->q;

		ev.name = q.name;
		pending_release(p, pq, reply, rlen, &ev);
		return true;
	}

	/*
	 * Too large for the UDP client (the upstream ignored the size we asked
	 * for): a truncated reply makes it retry over TCP, where the answer is
	 * admitted.  Nothing is admitted for a reply the client never sees.
	 */
	if (pq->transport == IPPROTO_UDP && len > pq->udp_max) {
		uint8_t reply[DNS_QUESTION_MAX];
		size_t rlen = dns_build_reply(pq->query, &pq->q, rcode, reply, sizeof(reply));
		struct dns_event ev = {
			.kind = DNS_EV_ALLOWED,
			.name = pq->q.name,
			.qtype = pq->q.qtype,
			.transport = IPPROTO_UDP,
			.rcode = rcode,
		};
		struct dns_question q = pq->q;

		if (rlen)
			reply[2] |= DNS_FLAG_TC >> 8;
		ev.name = q.name;
		pending_release(p, pq, reply, rlen, &ev);
		return true;
	}

	/* Admit before release: the client must never hold an address the kernel still denies. */
	for (size_t i = 0; i < count; i++) {
		addrs[i].ttl = ttl_clamp(cfg, addrs[i].ttl);
		if (!cfg->admit || cfg->admit(cfg->ctx, pq->q.name, addrs[i].addr, addrs[i].ttl)) {
			pending_finish(p, pq, DNS_RCODE_SERVFAIL, DNS_EV_UPSTREAM_FAILED);
			return true;
		}
	}
	put16(msg, pq->q.id);
	/* the question as the client wrote it (it went upstream in lower case) */
	if (len >= pq->q.end &&
	    !strncasecmp((const char *)msg + DNS_HEADER_LEN, (const char *)pq->query + DNS_HEADER_LEN,
			 pq->q.end - DNS_HEADER_LEN))
		memcpy(msg + DNS_HEADER_LEN, pq->query + DNS_HEADER_LEN, pq->q.end - DNS_HEADER_LEN);

	{
		struct dns_event ev = {
			.kind = DNS_EV_ALLOWED,
			.name = pq->q.name,
			.qtype = pq->q.qtype,
			.transport = pq->transport,
			.addrs = addrs,
			.addr_count = count,
			.rcode = rcode,
		};
		struct dns_question q = pq->q;

		ev.name = q.name;
		pending_release(p, pq, msg, len, &ev);
	}
	return true;
}

static void upstream_udp_ready(struct dns_proxy *p, struct pending *pq)
{
	uint32_t gen = pq->gen;

	for (int i = 0; i < READ_BUDGET && pq->used && pq->gen == gen; i++) {
		ssize_t n = recv(pq->fd, p->buf, sizeof(p->buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				attempt_fail(p, pq);	/* ECONNREFUSED: nobody listens there */
			return;
		}
		if ((size_t)n > DNS_MSG_MAX)
			continue;
		if (handle_response(p, pq, p->buf, (size_t)n))
			return;
	}
}

static void upstream_tcp_ready(struct dns_proxy *p, struct pending *pq, uint32_t events)
{
	unsigned slot = (unsigned)(pq - p->pending);

	if (pq->state == UP_CONNECTING) {
		size_t total = 2 + pq->upq_len;
		ssize_t n;
		int r;

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		n = send(pq->fd, pq->upq + pq->sent, total - pq->sent, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				attempt_fail(p, pq);
			return;
		}
		pq->sent += (size_t)n;
		if (pq->sent < total)
			return;
		pq->state = UP_READING;
		r = ep_mod(p, pq->fd, EPOLLIN | EPOLLRDHUP, ep_data(TAG_UPSTREAM, slot, pq->gen));
		if (r < 0)
			attempt_fail(p, pq);
		return;
	}

	for (int i = 0; i < READ_BUDGET; i++) {
		ssize_t n;

		if (pq->len_have < 2)
			n = recv(pq->fd, pq->lenbuf + pq->len_have, 2 - pq->len_have, MSG_DONTWAIT);
		else
			n = recv(pq->fd, pq->resp + pq->resp_have, pq->resp_len - pq->resp_have,
				 MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			attempt_fail(p, pq);	/* closed or failed before a whole reply */
			return;
		}
		if (pq->len_have < 2) {
			pq->len_have += (size_t)n;
			if (pq->len_have < 2)
				continue;
			pq->resp_len = (size_t)pq->lenbuf[0] << 8 | pq->lenbuf[1];
			pq->resp = pq->resp_len >= DNS_HEADER_LEN ? malloc(pq->resp_len) : NULL;
			if (!pq->resp) {
				attempt_fail(p, pq);
				return;
			}
			continue;
		}
		pq->resp_have += (size_t)n;
		if (pq->resp_have < pq->resp_len)
			continue;
		/* One connection, one question: anything but its answer ends the attempt. */
		{
			uint8_t *resp = pq->resp;
			size_t resp_len = pq->resp_len;

			pq->resp = NULL;
			if (!handle_response(p, pq, resp, resp_len))
				attempt_fail(p, pq);
			free(resp);
		}
		return;
	}
}

/* ---- queries ---------------------------------------------------------- */

struct origin {
	int transport;
	int listen_fd;			/* UDP */
	const struct sockaddr_storage *peer;
	socklen_t peer_len;
	struct tcp_client *client;	/* TCP */
};

static void origin_reply(struct dns_proxy *p, const struct origin *o, const uint8_t *msg,
			 size_t len)
{
	if (o->transport == IPPROTO_UDP)
		udp_send(o->listen_fd, o->peer, o->peer_len, msg, len);
	else
		client_send(p, o->client, msg, len);
}

static struct pending *pending_alloc(struct dns_proxy *p)
{
	for (size_t i = 0; i < DNS_PROXY_PENDING_MAX; i++)
		if (!p->pending[i].used)
			return &p->pending[i];
	return NULL;
}

/* The query as sent upstream: new header, the client's question, OPT only if it had one. */
static void build_upstream_query(struct pending *pq, const uint8_t *msg)
{
	uint8_t *b = pq->upq + 2;
	size_t qlen = pq->q.end - DNS_HEADER_LEN;
	uint16_t flags = pq->q.flags & (DNS_FLAG_RD | DNS_FLAG_CD | DNS_FLAG_AD);

	memset(b, 0, DNS_HEADER_LEN);
	put16(b + 2, flags);
	put16(b + 4, 1);
	memcpy(b + DNS_HEADER_LEN, msg + DNS_HEADER_LEN, qlen);
	/*
	 * The name in lower case: the letters' case is 1 bit each that a run
	 * could send to the zone's servers.  Label lengths are at most 63, below
	 * 'A', so only letters change.  The client gets its own bytes back.
	 */
	for (size_t i = DNS_HEADER_LEN; i + 4 < DNS_HEADER_LEN + qlen; i++)
		if (b[i] >= 'A' && b[i] <= 'Z')
			b[i] = (uint8_t)(b[i] - 'A' + 'a');
	pq->upq_len = DNS_HEADER_LEN + qlen;
	if (pq->q.edns) {
		/* Root owner, type OPT, class = UDP size, TTL = ext-rcode, version, DO; no data. */
		uint8_t *o = b + pq->upq_len;
		uint16_t size = pq->q.edns_size;

		if (pq->transport == IPPROTO_UDP)
			size = (uint16_t)pq->udp_max;
		o[0] = 0;
		put16(o + 1, DNS_TYPE_OPT);
		put16(o + 3, size);
		o[5] = 0;
		o[6] = 0;
		o[7] = pq->q.edns_do ? 0x80 : 0;
		o[8] = 0;
		put16(o + 9, 0);
		pq->upq_len += OPT_RR_LEN;
		put16(b + 10, 1);
	}
	put16(pq->upq, (uint16_t)pq->upq_len);
}

/* A header-only reply to a query that could not be parsed, if it looks like a query at all. */
static void reply_malformed(struct dns_proxy *p, const struct origin *o, const uint8_t *msg,
			    size_t len, int err)
{
	uint8_t rcode = err == -EOPNOTSUPP ? DNS_RCODE_NOTIMP : DNS_RCODE_FORMERR;
	uint8_t reply[DNS_HEADER_LEN] = { 0 };

	if (len >= DNS_HEADER_LEN && !(msg[2] & (DNS_FLAG_QR >> 8))) {
		reply[0] = msg[0];
		reply[1] = msg[1];
		/* QR, the query's opcode and RD; RA; rcode. No question: it could not be read. */
		reply[2] = (uint8_t)((DNS_FLAG_QR >> 8) | (msg[2] & 0x79));
		reply[3] = (uint8_t)((DNS_FLAG_RA & 0xff) | rcode);
		origin_reply(p, o, reply, sizeof(reply));
	}
	emit_simple(p, DNS_EV_MALFORMED, NULL, o->transport, rcode);
}

static void handle_query(struct dns_proxy *p, const struct origin *o, const uint8_t *msg,
			 size_t len)
{
	const struct dns_proxy_config *cfg = &p->cfg;
	struct dns_question q;
	struct pending *pq;
	uint8_t reply[DNS_QUESTION_MAX];
	size_t rlen;
	int r;

	r = dns_parse_query(msg, len, &q);
	if (r < 0) {
		reply_malformed(p, o, msg, len, r);
		return;
	}
	if (!cfg->name_allowed || !cfg->name_allowed(cfg->ctx, q.name)) {
		struct dns_event ev = {
			.kind = DNS_EV_REFUSED_NAME,
			.name = q.name,
			.qtype = q.qtype,
			.transport = o->transport,
			.rcode = DNS_RCODE_REFUSED,
			.suspected_tunnel = dns_suspect_tunnel(q.name),
		};

		rlen = dns_build_reply(msg, &q, DNS_RCODE_REFUSED, reply, sizeof(reply));
		if (rlen)
			origin_reply(p, o, reply, rlen);
		emit(p, &ev);
		return;
	}
	/*
	 * ANY and zone transfers: a listed name is for reaching a host, not
	 * listing a zone.  Classes other than IN (CHAOS, HESIOD) name nothing a
	 * run may reach.
	 */
	if (q.qtype == DNS_TYPE_ANY || q.qtype == DNS_TYPE_AXFR || q.qtype == DNS_TYPE_IXFR ||
	    q.qclass != 1) {
		rlen = dns_build_reply(msg, &q, DNS_RCODE_REFUSED, reply, sizeof(reply));
		if (rlen)
			origin_reply(p, o, reply, rlen);
		emit_simple(p, DNS_EV_REFUSED_TYPE, &q, o->transport, DNS_RCODE_REFUSED);
		return;
	}

	pq = pending_alloc(p);
	if (o->transport == IPPROTO_TCP && o->client->pending >= DNS_PROXY_TCP_PENDING_MAX)
		pq = NULL;
	if (!pq) {
		rlen = dns_build_reply(msg, &q, DNS_RCODE_SERVFAIL, reply, sizeof(reply));
		if (rlen)
			origin_reply(p, o, reply, rlen);
		emit_simple(p, DNS_EV_UPSTREAM_FAILED, &q, o->transport, DNS_RCODE_SERVFAIL);
		return;
	}
	{
		uint32_t gen = pq->gen;

		*pq = (struct pending){ .used = true, .gen = gen, .fd = -1 };
		pq->transport = o->transport;
	}
	pq->dest.transport = o->transport;
	pq->q = q;
	memcpy(pq->query, msg, q.end);
	if (o->transport == IPPROTO_UDP) {
		size_t max = q.edns && q.edns_size > DNS_UDP_MIN ? q.edns_size : DNS_UDP_MIN;

		pq->dest.listen_fd = o->listen_fd;
		memcpy(&pq->dest.peer, o->peer, o->peer_len);
		pq->dest.peer_len = o->peer_len;
		/* Ask the upstream for no more than the client takes, nor than fits whole. */
		pq->udp_max = max < UPSTREAM_UDP_SIZE ? max : UPSTREAM_UDP_SIZE;
	} else {
		pq->dest.client = (unsigned)(o->client - p->clients);
		pq->dest.client_gen = o->client->gen;
		o->client->pending++;
	}
	build_upstream_query(pq, msg);
	attempt_start(p, pq);
}

/* ---- listeners and clients -------------------------------------------- */

static void udp_listen_ready(struct dns_proxy *p, struct listener *l)
{
	for (int i = 0; i < READ_BUDGET; i++) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		struct origin o = { .transport = IPPROTO_UDP, .listen_fd = l->udp, .peer = &peer };
		ssize_t n = recvfrom(l->udp, p->buf, sizeof(p->buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&peer, &peer_len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if ((size_t)n > DNS_MSG_MAX || peer_len > sizeof(peer))
			continue;
		o.peer_len = peer_len;
		handle_query(p, &o, p->buf, (size_t)n);
	}
}

static void tcp_listen_ready(struct dns_proxy *p, struct listener *l)
{
	for (int i = 0; i < READ_BUDGET; i++) {
		struct tcp_client *c = NULL;
		int fd = accept4(l->tcp, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		for (size_t j = 0; j < DNS_PROXY_TCP_CLIENTS_MAX; j++) {
			if (!p->clients[j].used) {
				c = &p->clients[j];
				break;
			}
		}
		/* Full: closing at once keeps the backlog from staying ready forever. */
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct tcp_client){ .used = true, .gen = c->gen, .fd = fd };
		c->idle_deadline = now_ms() + DNS_PROXY_TCP_IDLE_MS;
		if (ep_add(p, fd, EPOLLIN | EPOLLRDHUP, client_data(p, c)) < 0)
			client_drop(p, c);
	}
}

/* Reads what the client sent; complete messages are handled as queries. */
static void tcp_client_read(struct dns_proxy *p, struct tcp_client *c)
{
	uint32_t gen = c->gen;

	for (int i = 0; i < READ_BUDGET && c->used && c->gen == gen; i++) {
		ssize_t n;

		if (c->hdr_have < 2)
			n = recv(c->fd, c->hdr + c->hdr_have, 2 - c->hdr_have, MSG_DONTWAIT);
		else
			n = recv(c->fd, c->in + c->in_have, c->in_len - c->in_have, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			client_drop(p, c);
			return;
		}
		if (n == 0) {
			/* Closed mid-message: nothing to answer.  Between messages: finish. */
			if (c->hdr_have) {
				client_drop(p, c);
				return;
			}
			c->eof = true;
			if (client_done(p, c))
				return;
			/* Stop reading; keep EPOLLOUT if replies are waiting. */
			if (ep_mod(p, c->fd, c->epollout ? EPOLLOUT : 0, client_data(p, c)) < 0)
				client_drop(p, c);
			return;
		}
		if (c->hdr_have < 2) {
			c->hdr_have += (size_t)n;
			if (c->hdr_have < 2)
				continue;
			c->in_len = (size_t)c->hdr[0] << 8 | c->hdr[1];
			/* Shorter than a header is no DNS message: a client that sends it goes. */
			c->in = c->in_len >= DNS_HEADER_LEN ? malloc(c->in_len) : NULL;
			c->in_have = 0;
			if (!c->in) {
				client_drop(p, c);
				return;
			}
			continue;
		}
		c->in_have += (size_t)n;
		if (c->in_have < c->in_len)
			continue;
		{
			struct origin o = { .transport = IPPROTO_TCP, .client = c };
			uint8_t *msg = c->in;
			size_t len = c->in_len;

			c->in = NULL;
			c->hdr_have = c->in_have = c->in_len = 0;
			c->idle_deadline = now_ms() + DNS_PROXY_TCP_IDLE_MS;
			handle_query(p, &o, msg, len);
			free(msg);
		}
	}
}

static void tcp_client_ready(struct dns_proxy *p, struct tcp_client *c, uint32_t events)
{
	uint32_t gen = c->gen;

	if (events & EPOLLERR) {
		client_drop(p, c);
		return;
	}
	if (events & EPOLLOUT) {
		client_flush(p, c);
		if (!c->used || c->gen != gen)
			return;
	}
	if (!c->eof && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)))
		tcp_client_read(p, c);
	/* Both directions closed: no reply can reach it, and HUP would stay ready for ever. */
	if (c->used && c->gen == gen && (events & EPOLLHUP))
		client_drop(p, c);
}

/* ---- timers ----------------------------------------------------------- */

static void expire(struct dns_proxy *p)
{
	uint64_t now = now_ms();

	for (size_t i = 0; i < DNS_PROXY_PENDING_MAX; i++) {
		struct pending *pq = &p->pending[i];

		if (pq->used && pq->fd >= 0 && pq->deadline <= now)
			attempt_fail(p, pq);
	}
	for (size_t i = 0; i < DNS_PROXY_TCP_CLIENTS_MAX; i++) {
		struct tcp_client *c = &p->clients[i];

		/* Waiting on an upstream is not idleness: the attempts' own timeouts bound it. */
		if (c->used && c->pending == 0 && c->idle_deadline <= now)
			client_drop(p, c);
	}
}

static int timer_arm(struct dns_proxy *p)
{
	struct itimerspec its = { 0 };
	uint64_t next = 0;

	for (size_t i = 0; i < DNS_PROXY_PENDING_MAX; i++) {
		const struct pending *pq = &p->pending[i];

		if (pq->used && pq->fd >= 0 && (!next || pq->deadline < next))
			next = pq->deadline;
	}
	for (size_t i = 0; i < DNS_PROXY_TCP_CLIENTS_MAX; i++) {
		const struct tcp_client *c = &p->clients[i];

		if (c->used && c->pending == 0 && (!next || c->idle_deadline < next))
			next = c->idle_deadline;
	}
	if (next == p->timer_armed)
		return 0;
	if (next) {
		/* 0 would disarm: a deadline already past fires after 1 ns. */
		its.it_value.tv_sec = (time_t)(next / 1000);
		its.it_value.tv_nsec = (long)(next % 1000) * 1000000 + 1;
	}
	if (timerfd_settime(p->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	p->timer_armed = next;
	return 0;
}

int dns_proxy_dispatch(struct dns_proxy *p)
{
	struct epoll_event events[EVENTS_BATCH];

	for (int round = 0; round < DISPATCH_ROUNDS; round++) {
		int n = epoll_wait(p->epfd, events, EVENTS_BATCH, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		for (int i = 0; i < n; i++) {
			uint64_t data = events[i].data.u64;
			enum tag tag = (enum tag)(data >> 56);
			unsigned slot = (unsigned)(data >> 32) & 0xffffff;
			uint32_t gen = (uint32_t)data;

			switch (tag) {
			case TAG_TIMER: {
				uint64_t ticks;

				(void)!read(p->timerfd, &ticks, sizeof(ticks));
				p->timer_armed = 0;
				break;
			}
			case TAG_UDP_LISTEN:
				if (slot < 2)
					udp_listen_ready(p, &p->listeners[slot]);
				break;
			case TAG_TCP_LISTEN:
				if (slot < 2)
					tcp_listen_ready(p, &p->listeners[slot]);
				break;
			case TAG_TCP_CLIENT:
				if (slot < DNS_PROXY_TCP_CLIENTS_MAX && p->clients[slot].used &&
				    p->clients[slot].gen == gen)
					tcp_client_ready(p, &p->clients[slot], events[i].events);
				break;
			case TAG_UPSTREAM: {
				struct pending *pq = &p->pending[slot % DNS_PROXY_PENDING_MAX];

				if (slot >= DNS_PROXY_PENDING_MAX || !pq->used || pq->gen != gen ||
				    pq->fd < 0)
					break;
				if (pq->transport == IPPROTO_UDP)
					upstream_udp_ready(p, pq);
				else
					upstream_tcp_ready(p, pq, events[i].events);
				break;
			}
			}
		}
		expire(p);
	}
	expire(p);
	return timer_arm(p);
}

/* ---- setup ------------------------------------------------------------ */

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err && errlen) {
		va_start(ap, fmt);
		n = vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < errlen)
			snprintf(err + n, errlen - (size_t)n, ": %s", strerror(-r));
	}
	return r;
}

static void upstream_set(struct upstream *u, const uint8_t addr[16], uint16_t port,
			 uint32_t scope)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(u, 0, sizeof(*u));
	if (memcmp(addr, mapped, 12) == 0) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&u->sa;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, addr + 12, 4);
		u->len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&u->sa;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, addr, 16);
		sin6->sin6_scope_id = scope;
		u->len = sizeof(*sin6);
	}
}

/* "nameserver ADDR" lines, as glibc reads them (it uses the first 3; we take up to 8). */
static int read_resolv_conf(struct dns_proxy *p, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return fail(err, errlen, -errno, "open(%s)", path);
	while (fgets(line, sizeof(line), f) && p->upstream_count < DNS_PROXY_UPSTREAMS_MAX) {
		char *save = NULL, *key = strtok_r(line, " \t\r\n", &save);
		char *val = key ? strtok_r(NULL, " \t\r\n", &save) : NULL;
		uint8_t addr[16] = { [10] = 0xff, [11] = 0xff };
		uint32_t scope = 0;
		char *pct;

		if (!key || !val || strcmp(key, "nameserver") != 0)
			continue;
		pct = strchr(val, '%');
		if (pct) {
			*pct = '\0';
			scope = if_nametoindex(pct + 1);
			if (!scope)
				continue;
		}
		if (inet_pton(AF_INET, val, addr + 12) != 1 && inet_pton(AF_INET6, val, addr) != 1)
			continue;
		upstream_set(&p->upstreams[p->upstream_count++], addr, 53, scope);
	}
	fclose(f);
	if (p->upstream_count == 0)
		return fail(err, errlen, -ENOENT, "no usable nameserver in %s", path);
	return 0;
}

static void loopback(int family, uint16_t port, struct sockaddr_storage *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)sa;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)sa;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_loopback;
		*len = sizeof(*sin6);
	}
}

static const char *family_addr(int family)
{
	return family == AF_INET ? "127.0.0.1" : "[::1]";
}

/* One attempt at a UDP + TCP pair on loopback at `want` (0: ephemeral). */
static int bind_pair(struct listener *l, uint16_t want, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int one = 1, r;
	int udp = -1, tcp = -1;
	uint16_t port;

	udp = socket(l->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (udp < 0)
		return fail(err, errlen, -errno, "socket(%s, udp)", family_addr(l->family));
	if (l->family == AF_INET6)
		(void)setsockopt(udp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	loopback(l->family, want, &sa, &len);
	if (bind(udp, (struct sockaddr *)&sa, len) < 0) {
		r = fail(err, errlen, -errno, "bind(%s:%u/udp)", family_addr(l->family), want);
		goto out;
	}
	len = sizeof(sa);
	if (getsockname(udp, (struct sockaddr *)&sa, &len) < 0) {
		r = fail(err, errlen, -errno, "getsockname(%s/udp)", family_addr(l->family));
		goto out;
	}
	port = ntohs(l->family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port
					  : ((struct sockaddr_in6 *)&sa)->sin6_port);

	tcp = socket(l->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (tcp < 0) {
		r = fail(err, errlen, -errno, "socket(%s, tcp)", family_addr(l->family));
		goto out;
	}
	(void)setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->family == AF_INET6)
		(void)setsockopt(tcp, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	loopback(l->family, port, &sa, &len);
	if (bind(tcp, (struct sockaddr *)&sa, len) < 0) {
		r = fail(err, errlen, -errno, "bind(%s:%u/tcp)", family_addr(l->family), port);
		goto out;
	}
	if (listen(tcp, 64) < 0) {
		r = fail(err, errlen, -errno, "listen(%s:%u/tcp)", family_addr(l->family), port);
		goto out;
	}
	l->udp = udp;
	l->tcp = tcp;
	l->port = port;
	return 0;
out:
	if (udp >= 0)
		close(udp);
	if (tcp >= 0)
		close(tcp);
	return r;
}

/* The UDP port is free, the TCP one with the same number may not be: try a few. */
static int bind_listener(struct listener *l, uint16_t want, char *err, size_t errlen)
{
	int r = -EADDRINUSE;

	if (want) {
		r = bind_pair(l, want, err, errlen);
		if (r != -EADDRINUSE)
			return r;
	}
	for (int i = 0; i < 32; i++) {
		r = bind_pair(l, 0, err, errlen);
		if (r != -EADDRINUSE)
			return r;
	}
	return r;
}

int dns_proxy_start(const struct dns_proxy_config *cfg, struct dns_proxy **out, char *err,
		    size_t errlen)
{
	struct dns_proxy *p;
	int r;

	if (cfg->upstream_count > DNS_PROXY_UPSTREAMS_MAX)
		return fail(err, errlen, -EINVAL, "%zu DNS upstreams (at most %d)",
			    cfg->upstream_count, DNS_PROXY_UPSTREAMS_MAX);
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail(err, errlen, -ENOMEM, "allocating the DNS proxy");
	p->cfg = *cfg;
	p->epfd = p->timerfd = -1;
	for (int i = 0; i < 2; i++)
		p->listeners[i] = (struct listener){ .family = i ? AF_INET6 : AF_INET,
						     .udp = -1, .tcp = -1 };
	for (size_t i = 0; i < DNS_PROXY_PENDING_MAX; i++)
		p->pending[i].fd = -1;
	for (size_t i = 0; i < DNS_PROXY_TCP_CLIENTS_MAX; i++)
		p->clients[i].fd = -1;

	for (size_t i = 0; i < cfg->upstream_count; i++)
		upstream_set(&p->upstreams[i], cfg->upstreams[i].addr,
			     cfg->upstreams[i].port ? cfg->upstreams[i].port : 53, 0);
	p->upstream_count = cfg->upstream_count;
	if (p->upstream_count == 0) {
		r = read_resolv_conf(p, cfg->resolv_conf ? cfg->resolv_conf : "/etc/resolv.conf",
				     err, errlen);
		if (r < 0 && !cfg->upstream_optional)
			goto fail;
		if (r < 0)
			err[0] = '\0';
	}

	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		r = fail(err, errlen, -errno, "epoll_create1 for the DNS proxy");
		goto fail;
	}
	p->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->timerfd < 0) {
		r = fail(err, errlen, -errno, "timerfd_create for the DNS proxy");
		goto fail;
	}
	r = ep_add(p, p->timerfd, EPOLLIN, ep_data(TAG_TIMER, 0, 0));
	if (r < 0) {
		fail(err, errlen, r, "epoll_ctl(timerfd)");
		goto fail;
	}

	r = bind_listener(&p->listeners[0], 0, err, errlen);
	if (r < 0)
		goto fail;
	/* IPv6 loopback is optional (a host may have none); IPv4 is what the hooks need. */
	if (bind_listener(&p->listeners[1], p->listeners[0].port, NULL, 0) < 0)
		p->listeners[1].port = 0;

	for (int i = 0; i < 2; i++) {
		struct listener *l = &p->listeners[i];

		if (l->udp < 0)
			continue;
		r = ep_add(p, l->udp, EPOLLIN, ep_data(TAG_UDP_LISTEN, (unsigned)i, 0));
		if (r == 0)
			r = ep_add(p, l->tcp, EPOLLIN, ep_data(TAG_TCP_LISTEN, (unsigned)i, 0));
		if (r < 0) {
			fail(err, errlen, r, "epoll_ctl(%s:%u)", family_addr(l->family), l->port);
			goto fail;
		}
	}
	*out = p;
	return 0;
fail:
	dns_proxy_free(p);
	return r;
}

int dns_proxy_fd(const struct dns_proxy *p)
{
	return p ? p->epfd : -1;
}

uint16_t dns_proxy_port(const struct dns_proxy *p, int family)
{
	if (family == AF_INET)
		return p->listeners[0].port;
	if (family == AF_INET6)
		return p->listeners[1].port;
	return 0;
}

void dns_proxy_free(struct dns_proxy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < DNS_PROXY_PENDING_MAX; i++)
		pending_free(p, &p->pending[i]);
	for (size_t i = 0; i < DNS_PROXY_TCP_CLIENTS_MAX; i++)
		client_drop(p, &p->clients[i]);
	for (int i = 0; i < 2; i++) {
		if (p->listeners[i].udp >= 0)
			close(p->listeners[i].udp);
		if (p->listeners[i].tcp >= 0)
			close(p->listeners[i].tcp);
	}
	if (p->timerfd >= 0)
		close(p->timerfd);
	if (p->epfd >= 0)
		close(p->epfd);
	free(p);
}
