/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DNS wire format, as much of it as the run's DNS proxy needs: parse one
 * query, check an upstream's response against it and collect its addresses,
 * cap TTLs, build header-and-question replies, match names against policy
 * patterns, classify answer addresses.  Pure functions: no sockets, no
 * allocation, no global state.
 *
 * Every parser is bounds-checked against `len` and must be safe on any input
 * (tests/fuzz/fuzz_dns.c).  Compression pointers are followed only backwards
 * (RFC 1035 4.1.4: a pointer names a *prior* occurrence), which rules out
 * loops; the number of hops is bounded as well.
 */
#ifndef TETHER_RUNTIME_DNS_H
#define TETHER_RUNTIME_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policyc/ranges.h"

#define DNS_NAME_MAX 253	/* text form, no trailing dot */
#define DNS_HEADER_LEN 12
#define DNS_UDP_MIN 512		/* what a client without EDNS accepts over UDP */
#define DNS_MSG_MAX 65535	/* TCP length prefix */
/* Longest header + question: 12 + 255 (wire name) + 4. */
#define DNS_QUESTION_MAX (DNS_HEADER_LEN + 255 + 4)

/* Header flag bits (second 16-bit word). */
#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_AA 0x0400
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_FLAG_AD 0x0020
#define DNS_FLAG_CD 0x0010
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
#define DNS_RCODE(flags) ((flags) & 0xf)

enum {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

enum {
	DNS_TYPE_A = 1,
	DNS_TYPE_CNAME = 5,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_OPT = 41,
	DNS_TYPE_IXFR = 251,
	DNS_TYPE_AXFR = 252,
	DNS_TYPE_ANY = 255,
};
#define DNS_CLASS_IN 1

/* CNAMEs followed from the question's name before the rest is ignored. */
#define DNS_CNAME_CHAIN_MAX 16

struct dns_question {
	uint16_t id, flags;
	/*
	 * Lower case, no trailing dot; "" is the root.  Labels hold only
	 * [A-Za-z0-9_-] (dns_parse_query refuses anything else), so the text
	 * form is unambiguous: no label can hide a '.' and be matched against a
	 * policy name it is not.
	 */
	char name[DNS_NAME_MAX + 1];
	uint16_t qtype, qclass;
	size_t end;		/* offset just after the question */
	/* The query's EDNS OPT record, if any (RFC 6891). */
	bool edns;
	bool edns_do;		/* DNSSEC OK */
	uint16_t edns_size;	/* advertised UDP payload size, as sent */
};

/*
 * One query: QR=0, opcode QUERY, QDCOUNT=1, the question's name without
 * compression pointers (nothing precedes it to point to), every other record
 * within bounds, at most one OPT record (owner root, in the additional
 * section).  Bytes after the last record are ignored.  Returns 0, -EBADMSG
 * (malformed, or a response), -EOPNOTSUPP (another opcode, or QDCOUNT not 1).
 */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *q);

struct dns_addr {
	uint8_t addr[16];	/* IPv4 as IPv4-mapped IPv6 ::ffff:a.b.c.d */
	uint32_t ttl;		/* a TTL with the top bit set reads as 0 (RFC 2181 8) */
};

/*
 * An upstream's response to q: same id, QR=1, opcode QUERY, QDCOUNT=1 and the
 * question echoed (name compared case-insensitively, type, class).  Collects
 * up to `max` class IN A/AAAA answers whose owner is q->name or a name on its
 * CNAME chain, in answer-section order (as stub resolvers read it), following
 * at most DNS_CNAME_CHAIN_MAX CNAMEs.  Every record of every section must lie
 * within bounds.  *rcode gets the header's RCODE.  Returns 0, -EBADMSG
 * (malformed), -ENOMSG (well-formed enough to tell it does not answer q).
 */
int dns_parse_response(const uint8_t *msg, size_t len, const struct dns_question *q,
		       struct dns_addr *addrs, size_t max, size_t *count, uint8_t *rcode);

/*
 * Calls fn for every class IN A and AAAA record in any section, whatever its
 * owner, and stops at the first nonzero return, which it returns.  Returns
 * 0, that value, or -EBADMSG.  For the rebinding check: a client may use
 * records that dns_parse_response does not collect.
 */
int dns_for_each_addr(const uint8_t *msg, size_t len,
		      int (*fn)(void *ctx, const uint8_t addr[16], uint32_t ttl), void *ctx);

/*
 * Rewrites every answer-section TTL above max_ttl to max_ttl, in place.  A
 * TTL with the top bit set means 0 (RFC 2181 8) and is rewritten to 0, so no
 * client caches longer than what was admitted.  The message is checked
 * first and left untouched on error.  Returns 0 or -EBADMSG.
 */
int dns_cap_ttls(uint8_t *msg, size_t len, uint32_t max_ttl);

/*
 * A reply carrying header + question only, QR=1, RA=1, RD and CD copied from
 * the query, the given rcode.  `query` must be the message q was parsed from.
 * Returns its length, or 0 if it does not fit in `size`.
 */
size_t dns_build_reply(const uint8_t *query, const struct dns_question *q, uint8_t rcode,
		       uint8_t *out, size_t size);

/*
 * Policy name match, as docs/envelope.md "Destinations and endpoints" says:
 * pattern "name" matches that name only; "*.zone" matches any name strictly
 * below zone (any depth), not zone itself.  Names are compared in ASCII
 * lower case; a trailing dot on either side is ignored.
 */
bool dns_name_matches(const char *pattern, const char *name);

/*
 * The class of an answer's address, from the special-range table
 * (policyc/ranges.h): metadata wins over link-local and private.  IPv6
 * forms that carry an IPv4 address a host or gateway may reach it by are
 * classified by that address:
 * IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96 (beyond :: and ::1), the
 * NAT64 well-known prefix 64:ff9b::/96 and 6to4 2002::/16.
 */
enum tp_addr_class dns_classify(const uint8_t addr[16]);
const char *dns_addr_class_name(enum tp_addr_class c);	/* "public", "loopback", ... */

/*
 * A name that looks like data smuggled out through DNS: a label of 40 bytes
 * or more, a name of 150 bytes or more, or a label of 16 bytes or more whose
 * Shannon entropy exceeds DNS_TUNNEL_ENTROPY bits per character (the reason
 * for the figure is at its definition in dns.c).
 */
bool dns_suspect_tunnel(const char *name);

const char *dns_type_name(uint16_t qtype);	/* "A", "AAAA", ... or NULL */

#endif
