/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's DNS proxy (docs/architecture.md, decision 5).
 *
 * The cgroup sock_addr hooks send every DNS packet and connection of a run
 * (port 53, whatever resolver it names) to this proxy on loopback.  A name on
 * the allow list is forwarded to the upstream resolver; each address of the
 * answer is handed to admit() (which writes it into the run's allow trie)
 * *before* the reply is released, so the client can never hold an address the
 * kernel would not yet let it reach.  Any other name gets REFUSED.  Answers
 * in loopback, private, link-local, metadata, unspecified or multicast ranges
 * are refused unless range_allowed() says otherwise (link-local and metadata:
 * always): the DNS-rebinding defence.
 *
 * Single-threaded and non-blocking: the controller adds dns_proxy_fd() (an
 * epoll fd) to its own loop and calls dns_proxy_dispatch() when it is
 * readable.  Every resource is bounded: DNS_PROXY_PENDING_MAX queries waiting
 * for an upstream, DNS_PROXY_TCP_CLIENTS_MAX TCP clients, each dropped after
 * DNS_PROXY_TCP_IDLE_MS without a complete query or a sent reply, messages of
 * at most 64 KiB.  A client that misbehaves is dropped; none can block the
 * loop.  Raw payloads are never logged, nor passed to callbacks.
 */
#ifndef TETHER_RUNTIME_DNSPROXY_H
#define TETHER_RUNTIME_DNSPROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policyc/policy.h"
#include "runtime/dns.h"

#define DNS_PROXY_PENDING_MAX 256
#define DNS_PROXY_TCP_CLIENTS_MAX 64
#define DNS_PROXY_TCP_IDLE_MS 10000
#define DNS_PROXY_TCP_PENDING_MAX 16	/* per TCP client, so one cannot take every slot */
#define DNS_PROXY_UPSTREAMS_MAX 8	/* as many as the envelope allows */
#define DNS_PROXY_ADDRS_MAX 64		/* answer addresses admitted per reply; the rest are not */

enum dns_event_kind {
	DNS_EV_ALLOWED,		/* forwarded, answers admitted, reply released */
	DNS_EV_REFUSED_NAME,	/* not on the allow list: REFUSED, nothing sent upstream */
	DNS_EV_REFUSED_ANSWER,	/* an answer in a refused range: REFUSED, nothing admitted */
	DNS_EV_UPSTREAM_FAILED,	/* no upstream answered, admit() failed, no slot: SERVFAIL */
	DNS_EV_MALFORMED,	/* unparsable query: FORMERR or NOTIMP, or dropped */
	DNS_EV_REFUSED_TYPE,	/* ANY, AXFR, IXFR: REFUSED */
};

struct dns_event {
	enum dns_event_kind kind;
	const char *name;	/* the question's name; NULL for MALFORMED */
	uint16_t qtype;
	int transport;		/* IPPROTO_UDP or IPPROTO_TCP */
	const struct dns_addr *addrs;	/* ALLOWED: admitted answers, TTL as admitted */
	size_t addr_count;
	uint8_t rcode;		/* what the client got (MALFORMED: or would, if it had a header) */
	bool suspected_tunnel;	/* REFUSED_NAME only: see dns_suspect_tunnel() */
	const uint8_t *refused_addr;	/* REFUSED_ANSWER: the first offending address */
	enum tp_addr_class refused_class;
};

struct dns_proxy_config {
	const struct tp_endpoint *upstreams;	/* asked in order; port 0 means 53 */
	size_t upstream_count;
	/* When upstream_count is 0: nameservers from this file (NULL: /etc/resolv.conf). */
	const char *resolv_conf;
	/*
	 * No upstream at all (no file, no nameserver in it) is not an error: the
	 * proxy then answers every forwarded query SERVFAIL.  For runs that list
	 * no hostname, whose queries are all refused anyway.
	 */
	bool upstream_optional;
	uint32_t ttl_min_s, ttl_max_s;	/* admitted TTL = clamp(ttl, min, max); max 0 = 86400 */
	unsigned timeout_ms;		/* per upstream attempt; 0 = 2000 */
	/* Is the name (lower case, no trailing dot) on the allow list?  NULL: none is. */
	bool (*name_allowed)(void *ctx, const char *name);
	/*
	 * May an answer in a special range (loopback, private, unspecified,
	 * multicast) be used?  NULL: no.  Link-local and metadata answers are
	 * always refused, whatever this says: metadata is never reached through
	 * a hostname.
	 */
	bool (*range_allowed)(void *ctx, const uint8_t addr[16]);
	/*
	 * Called for each collected answer address (IPv4-mapped for A) with its
	 * clamped TTL, before the reply is released.  Nonzero: the reply is
	 * withheld and the client gets SERVFAIL.  NULL: admits nothing, and every
	 * reply with addresses fails (fail closed).
	 */
	int (*admit)(void *ctx, const char *name, const uint8_t addr[16], uint32_t ttl_s);
	void (*event)(void *ctx, const struct dns_event *ev);	/* may be NULL */
	void *ctx;
};

struct dns_proxy;

/*
 * Binds UDP and TCP on 127.0.0.1 (one ephemeral port number for both) and, if
 * the host has IPv6 loopback, on ::1 (the same number if free).  With no
 * upstream in cfg, reads the nameservers of resolv_conf; none is an error
 * unless cfg->upstream_optional.
 * Returns 0 or -errno with "what failed on what" in err.
 */
int dns_proxy_start(const struct dns_proxy_config *cfg, struct dns_proxy **out, char *err,
		    size_t errlen);
int dns_proxy_fd(const struct dns_proxy *p);	/* epoll fd for the controller's own loop */
/* The port bound for AF_INET or AF_INET6 (UDP and TCP alike); 0 = none. */
uint16_t dns_proxy_port(const struct dns_proxy *p, int family);
/*
 * Handles what is ready, never blocks; timeouts come from a timerfd inside
 * the epoll set.  Does a bounded amount of work per call: when more is ready,
 * the fd stays readable (level-triggered) and the next call continues.
 * Returns 0, or -errno when epoll itself fails.
 */
int dns_proxy_dispatch(struct dns_proxy *p);
void dns_proxy_free(struct dns_proxy *p);	/* NULL is fine */

#endif
