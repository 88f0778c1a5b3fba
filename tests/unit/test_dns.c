// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/dns.c: the wire format parsers on hand-built messages (well-formed
 * and hostile), TTL capping, replies, name patterns, address classes and the
 * tunnelling heuristic.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/dns.h"

struct msg {
	uint8_t b[8192];
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

static void bytes(struct msg *m, const void *p, size_t n)
{
	cr_assert_leq(m->len + n, sizeof(m->b));
	if (n)
		memcpy(m->b + m->len, p, n);
	m->len += n;
}

/* Uncompressed wire name; labels split at '.', no checks (tests build bad ones on purpose). */
static void name(struct msg *m, const char *text)
{
	const char *s = text;

	while (*s) {
		const char *dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s);

		u8(m, (uint8_t)n);
		bytes(m, s, n);
		s += n + (dot ? 1 : 0);
	}
	u8(m, 0);
}

static void ptr(struct msg *m, uint16_t off)
{
	u16(m, 0xc000 | off);
}

static void header(struct msg *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
		   uint16_t ns, uint16_t ar)
{
	m->len = 0;
	u16(m, id);
	u16(m, flags);
	u16(m, qd);
	u16(m, an);
	u16(m, ns);
	u16(m, ar);
}

static void question(struct msg *m, const char *qname, uint16_t type)
{
	name(m, qname);
	u16(m, type);
	u16(m, DNS_CLASS_IN);
}

/* Record fields after the owner name. */
static void rr_tail(struct msg *m, uint16_t type, uint32_t ttl, const void *rdata, uint16_t rdlen)
{
	u16(m, type);
	u16(m, DNS_CLASS_IN);
	u32(m, ttl);
	u16(m, rdlen);
	bytes(m, rdata, rdlen);
}

static void rr_a(struct msg *m, uint16_t owner_ptr, uint32_t ttl, const char *v4)
{
	uint8_t a[4];

	cr_assert_eq(inet_pton(AF_INET, v4, a), 1);
	ptr(m, owner_ptr);
	rr_tail(m, DNS_TYPE_A, ttl, a, 4);
}

static void rr_aaaa(struct msg *m, uint16_t owner_ptr, uint32_t ttl, const char *v6)
{
	uint8_t a[16];

	cr_assert_eq(inet_pton(AF_INET6, v6, a), 1);
	ptr(m, owner_ptr);
	rr_tail(m, DNS_TYPE_AAAA, ttl, a, 16);
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

static struct dns_question query_for(const char *qname, uint16_t type, uint16_t id)
{
	struct msg m;
	struct dns_question q;

	header(&m, id, DNS_FLAG_RD, 1, 0, 0, 0);
	question(&m, qname, type);
	cr_assert_eq(dns_parse_query(m.b, m.len, &q), 0);
	return q;
}

/* ---- queries ---------------------------------------------------------- */

Test(dns_query, plain_query_is_lower_cased)
{
	struct msg m;
	struct dns_question q;

	header(&m, 0x1234, DNS_FLAG_RD, 1, 0, 0, 0);
	question(&m, "WWW.Example.COM", DNS_TYPE_AAAA);
	cr_assert_eq(dns_parse_query(m.b, m.len, &q), 0);
	cr_expect_eq(q.id, 0x1234);
	cr_expect_eq(q.flags, DNS_FLAG_RD);
	cr_expect_str_eq(q.name, "www.example.com");
	cr_expect_eq(q.qtype, DNS_TYPE_AAAA);
	cr_expect_eq(q.qclass, DNS_CLASS_IN);
	cr_expect_eq(q.end, m.len);
	cr_expect_not(q.edns);
}

Test(dns_query, root_and_service_labels)
{
	struct msg m;
	struct dns_question q;

	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, "", 2);
	cr_assert_eq(dns_parse_query(m.b, m.len, &q), 0);
	cr_expect_str_eq(q.name, "");
	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, "_dmarc.example.com", 16);
	cr_assert_eq(dns_parse_query(m.b, m.len, &q), 0);
	cr_expect_str_eq(q.name, "_dmarc.example.com");
}

Test(dns_query, edns_opt_record)
{
	struct msg m;
	struct dns_question q;

	header(&m, 1, DNS_FLAG_RD, 1, 0, 0, 1);
	question(&m, "example.com", DNS_TYPE_A);
	u8(&m, 0);
	u16(&m, DNS_TYPE_OPT);
	u16(&m, 4096);
	u32(&m, 0x8000);	/* DO */
	u16(&m, 4);
	u32(&m, 0x000a0000);	/* an option: skipped */
	cr_assert_eq(dns_parse_query(m.b, m.len, &q), 0);
	cr_expect(q.edns);
	cr_expect(q.edns_do);
	cr_expect_eq(q.edns_size, 4096);
	cr_expect_eq(q.end, 12 + 13 + 4);
}

Test(dns_query, opt_misplaced_or_twice)
{
	struct msg m;
	struct dns_question q;

	/* In the answer section. */
	header(&m, 1, 0, 1, 1, 0, 0);
	question(&m, "example.com", DNS_TYPE_A);
	u8(&m, 0);
	rr_tail(&m, DNS_TYPE_OPT, 0, NULL, 0);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG);
	/* Twice. */
	header(&m, 1, 0, 1, 0, 0, 2);
	question(&m, "example.com", DNS_TYPE_A);
	u8(&m, 0);
	rr_tail(&m, DNS_TYPE_OPT, 0, NULL, 0);
	u8(&m, 0);
	rr_tail(&m, DNS_TYPE_OPT, 0, NULL, 0);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG);
	/* Not owned by the root. */
	header(&m, 1, 0, 1, 0, 0, 1);
	question(&m, "example.com", DNS_TYPE_A);
	ptr(&m, 12);
	rr_tail(&m, DNS_TYPE_OPT, 0, NULL, 0);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG);
}

Test(dns_query, header_checks)
{
	struct msg m;
	struct dns_question q = { .id = 77 };

	header(&m, 1, DNS_FLAG_QR, 1, 0, 0, 0);
	question(&m, "example.com", DNS_TYPE_A);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG, "a response is no query");
	header(&m, 1, 2 << 11, 1, 0, 0, 0);
	question(&m, "example.com", DNS_TYPE_A);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EOPNOTSUPP, "opcode STATUS");
	header(&m, 1, 0, 0, 0, 0, 0);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EOPNOTSUPP, "qdcount 0");
	header(&m, 1, 0, 2, 0, 0, 0);
	question(&m, "example.com", DNS_TYPE_A);
	question(&m, "example.org", DNS_TYPE_A);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EOPNOTSUPP, "qdcount 2");
	cr_expect_eq(dns_parse_query(m.b, 11, &q), -EBADMSG, "short header");
	cr_expect_eq(q.id, 77, "output untouched on error");
}

Test(dns_query, truncated)
{
	struct msg m;
	struct dns_question q;

	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, "example.com", DNS_TYPE_A);
	for (size_t len = 0; len < m.len; len++)
		cr_expect_eq(dns_parse_query(m.b, len, &q), -EBADMSG, "cut at %zu", len);
	/* arcount promises a record that is not there. */
	m.b[11] = 1;
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG);
}

Test(dns_query, labels_and_lengths)
{
	char label63[64], label64[65], big[300];
	struct msg m;
	struct dns_question q;

	memset(label63, 'a', 63);
	label63[63] = '\0';
	memset(label64, 'b', 64);
	label64[64] = '\0';

	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, label63, DNS_TYPE_A);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), 0);
	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, label64, DNS_TYPE_A);	/* 64 = 0x40: a reserved label type */
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG);

	/* 63.63.63.61 = 253 bytes of text: the longest name. */
	snprintf(big, sizeof(big), "%s.%s.%s.%.61s", label63, label63, label63, label63);
	cr_assert_eq(strlen(big), 253);
	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, big, DNS_TYPE_A);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), 0);
	cr_expect_eq(strlen(q.name), 253);
	snprintf(big, sizeof(big), "%s.%s.%s.%.62s", label63, label63, label63, label63);
	header(&m, 1, 0, 1, 0, 0, 0);
	question(&m, big, DNS_TYPE_A);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG, "254 bytes");
}

Test(dns_query, ambiguous_characters_refused)
{
	static const char bad[] = { '.', '\0', ' ', '*', (char)0xc3, '/' };
	struct msg m;
	struct dns_question q;

	for (size_t i = 0; i < sizeof(bad); i++) {
		header(&m, 1, 0, 1, 0, 0, 0);
		/* One label "api<c>github" under "com". */
		u8(&m, 10);
		bytes(&m, "api", 3);
		u8(&m, (uint8_t)bad[i]);
		bytes(&m, "github", 6);
		name(&m, "com");
		u16(&m, 1);
		u16(&m, 1);
		cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG, "byte 0x%02x",
			     (uint8_t)bad[i]);
	}
}

Test(dns_query, no_compression_in_question)
{
	struct msg m;
	struct dns_question q;

	header(&m, 1, 0, 1, 0, 0, 0);
	u8(&m, 3);
	bytes(&m, "www", 3);
	ptr(&m, 12);
	u16(&m, 1);
	u16(&m, 1);
	cr_expect_eq(dns_parse_query(m.b, m.len, &q), -EBADMSG);
}

/* ---- responses -------------------------------------------------------- */

/* A response header and question for q; the question's name is at offset 12. */
static void response_start(struct msg *m, const struct dns_question *q, const char *echo,
			   uint16_t an, uint16_t ns, uint16_t ar)
{
	header(m, q->id, DNS_FLAG_QR | DNS_FLAG_RD | DNS_FLAG_RA, 1, an, ns, ar);
	question(m, echo, q->qtype);
}

Test(dns_response, addresses_collected)
{
	struct dns_question q = query_for("api.example.com", DNS_TYPE_A, 0x4242);
	struct dns_addr addrs[8];
	uint8_t want[16];
	size_t count = 99;
	uint8_t rcode = 99;
	struct msg m;

	response_start(&m, &q, "API.Example.com", 2, 0, 0);	/* echo in other case: 0x20 */
	rr_a(&m, 12, 300, "192.0.2.1");
	rr_aaaa(&m, 12, 0x80000000u, "2001:db8::1");
	cr_assert_eq(dns_parse_response(m.b, m.len, &q, addrs, 8, &count, &rcode), 0);
	cr_assert_eq(count, 2);
	cr_expect_eq(rcode, 0);
	addr16("192.0.2.1", want);
	cr_expect_arr_eq(addrs[0].addr, want, 16);
	cr_expect_eq(addrs[0].ttl, 300);
	addr16("2001:db8::1", want);
	cr_expect_arr_eq(addrs[1].addr, want, 16);
	cr_expect_eq(addrs[1].ttl, 0, "TTL with the top bit set reads as 0");
}

Test(dns_response, not_for_this_question)
{
	struct dns_question q = query_for("api.example.com", DNS_TYPE_A, 7);
	struct dns_addr addrs[4];
	size_t count;
	uint8_t rcode;
	struct msg m;

	response_start(&m, &q, "api.example.com", 1, 0, 0);
	rr_a(&m, 12, 60, "192.0.2.1");
	m.b[1] = 8;	/* id */
	cr_expect_eq(dns_parse_response(m.b, m.len, &q, addrs, 4, &count, &rcode), -ENOMSG);
	m.b[1] = 7;
	m.b[2] &= 0x7f;	/* QR */
	cr_expect_eq(dns_parse_response(m.b, m.len, &q, addrs, 4, &count, &rcode), -ENOMSG);

	response_start(&m, &q, "api.example.org", 1, 0, 0);
	rr_a(&m, 12, 60, "192.0.2.1");
	cr_expect_eq(dns_parse_response(m.b, m.len, &q, addrs, 4, &count, &rcode), -ENOMSG);

	header(&m, 7, DNS_FLAG_QR, 1, 1, 0, 0);
	question(&m, "api.example.com", DNS_TYPE_AAAA);
	rr_a(&m, 12, 60, "192.0.2.1");
	cr_expect_eq(dns_parse_response(m.b, m.len, &q, addrs, 4, &count, &rcode), -ENOMSG);

	header(&m, 7, DNS_FLAG_QR, 0, 0, 0, 0);
	cr_expect_eq(dns_parse_response(m.b, m.len, &q, addrs, 4, &count, &rcode), -ENOMSG);
}

Test(dns_response, cname_chain_and_foreign_answers)
{
	struct dns_question q = query_for("www.example.com", DNS_TYPE_A, 1);
	struct dns_addr addrs[8];
	uint8_t want[16];
	size_t count, cname1, cname2;
	uint8_t rcode;
	struct msg m;

	response_start(&m, &q, "www.example.com", 6, 0, 0);
	/* An address for another name, before anything: ignored. */
	name(&m, "evil.example.net");
	rr_tail(&m, DNS_TYPE_A, 60, "\x0a\x00\x00\x01", 4);
	/* www -> cdn.example.net. */
	ptr(&m, 12);
	{
		struct msg rd = { .len = 0 };

		name(&rd, "cdn.example.net");
		rr_tail(&m, DNS_TYPE_CNAME, 60, rd.b, (uint16_t)rd.len);
		cname1 = m.len - rd.len;
	}
	/* cdn.example.net -> edge.example.net, its owner a pointer into the previous RDATA. */
	ptr(&m, (uint16_t)cname1);
	{
		struct msg rd = { .len = 0 };

		u8(&rd, 4);
		bytes(&rd, "edge", 4);
		/* "example.net" inside the first CNAME's RDATA: 4 bytes after its start. */
		u16(&rd, 0xc000 | (uint16_t)(cname1 + 4));
		rr_tail(&m, DNS_TYPE_CNAME, 60, rd.b, (uint16_t)rd.len);
		cname2 = m.len - rd.len;
	}
	/* Records for an earlier link are no longer read, as a stub resolver does. */
	rr_a(&m, 12, 60, "198.51.100.9");
	rr_a(&m, (uint16_t)cname2, 120, "203.0.113.5");
	rr_aaaa(&m, (uint16_t)cname2, 120, "2001:db8::5");
	cr_assert_eq(dns_parse_response(m.b, m.len, &q, addrs, 8, &count, &rcode), 0);
	cr_assert_eq(count, 2);
	addr16("203.0.113.5", want);
	cr_expect_arr_eq(addrs[0].addr, want, 16);
	cr_expect_eq(addrs[0].ttl, 120);
	addr16("2001:db8::5", want);
	cr_expect_arr_eq(addrs[1].addr, want, 16);
}

Test(dns_response, cname_chain_bounded)
{
	struct dns_question q = query_for("c0.example.com", DNS_TYPE_A, 1);
	struct dns_addr addrs[4];
	size_t count;
	uint8_t rcode;
	char owner[32], target[32];
	struct msg m;

	for (int chain = DNS_CNAME_CHAIN_MAX; chain <= DNS_CNAME_CHAIN_MAX + 1; chain++) {
		response_start(&m, &q, "c0.example.com", (uint16_t)(chain + 1), 0, 0);
		for (int i = 0; i < chain; i++) {
			struct msg rd = { .len = 0 };

			snprintf(owner, sizeof(owner), "c%d.example.com", i);
			snprintf(target, sizeof(target), "c%d.example.com", i + 1);
			name(&m, owner);
			name(&rd, target);
			rr_tail(&m, DNS_TYPE_CNAME, 60, rd.b, (uint16_t)rd.len);
		}
		name(&m, target);
		rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
		cr_assert_eq(dns_parse_response(m.b, m.len, &q, addrs, 4, &count, &rcode), 0);
		cr_expect_eq(count, chain == DNS_CNAME_CHAIN_MAX ? 1u : 0u, "chain of %d", chain);
	}
}

Test(dns_response, max_addresses)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct dns_addr addrs[2];
	size_t count;
	uint8_t rcode;
	struct msg m;

	response_start(&m, &q, "example.com", 3, 0, 0);
	rr_a(&m, 12, 60, "192.0.2.1");
	rr_a(&m, 12, 60, "192.0.2.2");
	rr_a(&m, 12, 60, "192.0.2.3");
	cr_assert_eq(dns_parse_response(m.b, m.len, &q, addrs, 2, &count, &rcode), 0);
	cr_expect_eq(count, 2);
}

Test(dns_response, rcode_and_empty)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct dns_addr addrs[2];
	size_t count = 9;
	uint8_t rcode;
	struct msg m;

	response_start(&m, &q, "example.com", 0, 0, 0);
	m.b[3] |= DNS_RCODE_NXDOMAIN;
	cr_assert_eq(dns_parse_response(m.b, m.len, &q, addrs, 2, &count, &rcode), 0);
	cr_expect_eq(count, 0);
	cr_expect_eq(rcode, DNS_RCODE_NXDOMAIN);
}

static int parse_resp(const struct msg *m, const struct dns_question *q)
{
	struct dns_addr addrs[4];
	size_t count;
	uint8_t rcode;

	return dns_parse_response(m->b, m->len, q, addrs, 4, &count, &rcode);
}

Test(dns_response, compression_loops_and_bad_pointers)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct msg m;
	size_t at;

	/* A pointer to itself. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	at = m.len;
	ptr(&m, (uint16_t)at);
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);

	/* Forward, out of the message. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	ptr(&m, 0x3fff);
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);

	/* Two names pointing at each other: X = "a" -> Y, Y = "b" -> X. */
	response_start(&m, &q, "example.com", 2, 0, 0);
	at = m.len;
	u8(&m, 1);
	u8(&m, 'a');
	ptr(&m, (uint16_t)(at + 4 + 10 + 4));	/* Y: after this record */
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
	u8(&m, 1);
	u8(&m, 'b');
	ptr(&m, (uint16_t)at);
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);

	/* A pointer into the header. Backwards, legal in form; its labels are garbage. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	ptr(&m, 2);
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);

	/* Half a pointer at the end. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	u8(&m, 0xc0);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);

	/* The question itself compressed against the header: rejected. */
	header(&m, 1, DNS_FLAG_QR, 1, 0, 0, 0);
	ptr(&m, 12);
	u16(&m, 1);
	u16(&m, 1);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);
}

Test(dns_response, name_too_long_through_pointers)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	char label[64];
	struct msg m;
	size_t prev = 12;

	memset(label, 'x', 63);
	label[63] = '\0';
	/*
	 * Four owners, each a 63-byte label and a pointer to the one before:
	 * 77, 141, 205 and then 269 bytes uncompressed, over 255.
	 */
	response_start(&m, &q, "example.com", 4, 0, 0);
	for (int i = 0; i < 4; i++) {
		size_t at = m.len;

		u8(&m, 63);
		bytes(&m, label, 63);
		ptr(&m, (uint16_t)prev);
		prev = at;
		if (i < 3)
			rr_tail(&m, 99, 60, NULL, 0);
		else
			rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01", 4);
	}
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);
	m.b[7] = 3;	/* the first three alone are fine */
	cr_expect_eq(parse_resp(&m, &q), 0);
}

Test(dns_response, truncated_records)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct msg m, full;

	response_start(&full, &q, "example.com", 1, 1, 1);
	rr_a(&full, 12, 60, "192.0.2.1");
	ptr(&full, 12);
	rr_tail(&full, 2, 60, "\x02ns\xc0\x0c", 5);
	ptr(&full, 12);
	rr_tail(&full, 16, 60, "\x03txt", 4);
	cr_assert_eq(parse_resp(&full, &q), 0);
	for (size_t len = DNS_HEADER_LEN; len < full.len; len++) {
		m = full;
		m.len = len;
		cr_expect_eq(parse_resp(&m, &q), -EBADMSG, "cut at %zu of %zu", len, full.len);
	}
	/* RDLENGTH past the end. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	ptr(&m, 12);
	u16(&m, DNS_TYPE_A);
	u16(&m, 1);
	u32(&m, 60);
	u16(&m, 5);
	u32(&m, 0xc0000201);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);
	/* A with 5 bytes of RDATA. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	ptr(&m, 12);
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x01\x00", 5);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);
	/* A CNAME whose name runs past its RDATA. */
	response_start(&m, &q, "example.com", 1, 0, 0);
	ptr(&m, 12);
	rr_tail(&m, DNS_TYPE_CNAME, 60, "\x03" "abc", 4);
	u8(&m, 0);
	cr_expect_eq(parse_resp(&m, &q), -EBADMSG);
}

/* ---- for_each_addr, TTLs, replies ------------------------------------- */

static int count_addr(void *ctx, const uint8_t addr[16], uint32_t ttl)
{
	(*(int *)ctx)++;
	return 0;
}

static int stop_at_private(void *ctx, const uint8_t addr[16], uint32_t ttl)
{
	return dns_classify(addr) == TP_ADDR_PRIVATE ? 7 : 0;
}

Test(dns_addrs, every_section_every_owner)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct msg m;
	int n = 0;

	response_start(&m, &q, "example.com", 1, 1, 1);
	rr_a(&m, 12, 60, "192.0.2.1");
	name(&m, "other.example");
	rr_tail(&m, DNS_TYPE_AAAA, 60, "\xfd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	name(&m, "glue.example");
	rr_tail(&m, DNS_TYPE_A, 60, "\x0a\0\0\x01", 4);
	cr_assert_eq(dns_for_each_addr(m.b, m.len, count_addr, &n), 0);
	cr_expect_eq(n, 3);
	cr_expect_eq(dns_for_each_addr(m.b, m.len, stop_at_private, NULL), 7);
	cr_expect_eq(dns_for_each_addr(m.b, m.len - 1, count_addr, &n), -EBADMSG);
}

static uint32_t ttl_at(const struct msg *m, size_t off)
{
	return (uint32_t)m->b[off] << 24 | (uint32_t)m->b[off + 1] << 16 |
	       (uint32_t)m->b[off + 2] << 8 | m->b[off + 3];
}

Test(dns_ttl, capped_in_answers_only)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct msg m, before;
	size_t t1, t2, t3, t4;

	response_start(&m, &q, "example.com", 3, 0, 1);
	rr_a(&m, 12, 100, "192.0.2.1");
	t1 = m.len - 10;
	rr_a(&m, 12, 5000, "192.0.2.2");
	t2 = m.len - 10;
	rr_a(&m, 12, 0x80000001u, "192.0.2.3");
	t3 = m.len - 10;
	rr_a(&m, 12, 9999, "192.0.2.4");	/* additional section: untouched */
	t4 = m.len - 10;
	cr_assert_eq(dns_cap_ttls(m.b, m.len, 3600), 0);
	cr_expect_eq(ttl_at(&m, t1), 100);
	cr_expect_eq(ttl_at(&m, t2), 3600);
	cr_expect_eq(ttl_at(&m, t3), 0);
	cr_expect_eq(ttl_at(&m, t4), 9999);

	/* Malformed: nothing is rewritten. */
	m.b[6] = 0;
	m.b[7] = 5;
	before = m;
	cr_expect_eq(dns_cap_ttls(m.b, m.len, 1), -EBADMSG);
	cr_expect_arr_eq(m.b, before.b, m.len);
}

/*
 * A pointer may target the bytes of a TTL (found by the fuzzer): rewriting
 * that TTL changes the name, so the rewrite must not depend on names, or it
 * could stop half way with the message half rewritten.
 */
Test(dns_ttl, pointer_into_a_ttl)
{
	struct dns_question q = query_for("example.com", DNS_TYPE_A, 1);
	struct msg m;
	size_t t1, t2;

	response_start(&m, &q, "example.com", 2, 0, 0);
	rr_a(&m, 12, 0x00010000, "192.0.2.1");	/* TTL bytes 00 01 00 00 */
	t1 = m.len - 10;
	ptr(&m, (uint16_t)(t1 + 2));	/* owner: "00 00" = the root, until capped */
	rr_tail(&m, DNS_TYPE_A, 60, "\xc0\x00\x02\x02", 4);
	t2 = m.len - 10;
	cr_assert_eq(parse_resp(&m, &q), 0);
	cr_assert_eq(dns_cap_ttls(m.b, m.len, 3600), 0);
	cr_expect_eq(ttl_at(&m, t1), 3600);
	cr_expect_eq(ttl_at(&m, t2), 60);
	/*
	 * 00 00 0e 10: the second owner is now a 14-byte label running into the
	 * records, which is why the proxy parses the message again after capping.
	 * Capping again changes nothing.
	 */
	{
		struct msg again = m;

		(void)dns_cap_ttls(again.b, again.len, 3600);
		cr_expect_arr_eq(again.b, m.b, m.len);
	}
}

Test(dns_reply, header_and_question)
{
	struct msg m;
	struct dns_question q;
	uint8_t out[512];
	size_t n;

	header(&m, 0xbeef, DNS_FLAG_RD | DNS_FLAG_CD | DNS_FLAG_AD, 1, 0, 0, 1);
	question(&m, "Example.com", DNS_TYPE_A);
	u8(&m, 0);
	rr_tail(&m, DNS_TYPE_OPT, 0, NULL, 0);
	cr_assert_eq(dns_parse_query(m.b, m.len, &q), 0);
	n = dns_build_reply(m.b, &q, DNS_RCODE_REFUSED, out, sizeof(out));
	cr_assert_eq(n, q.end);
	cr_expect_eq(out[0], 0xbe);
	cr_expect_eq(out[1], 0xef);
	cr_expect_eq(out[2], 0x81, "QR, RD");
	cr_expect_eq(out[3], 0x95, "RA, CD, REFUSED");
	cr_expect_arr_eq(out + 4, "\0\1\0\0\0\0\0\0", 8);
	cr_expect_arr_eq(out + 12, m.b + 12, q.end - 12, "question kept as sent (case too)");
	cr_expect_eq(dns_build_reply(m.b, &q, 5, out, q.end - 1), 0);
}

/* ---- names, classes, tunnels ------------------------------------------ */

Test(dns_names, exact_and_wildcard)
{
	static const struct {
		const char *pattern, *name;
		bool match;
	} cases[] = {
		{ "api.github.com", "api.github.com", true },
		{ "api.github.com", "API.GitHub.com", true },
		{ "api.github.com", "api.github.com.", true },
		{ "api.github.com", "x.api.github.com", false },
		{ "api.github.com", "github.com", false },
		{ "api.github.com", "api.github.co", false },
		{ "api.github.com", "api.github.com.evil", false },
		{ "*.example.com", "a.example.com", true },
		{ "*.example.com", "a.b.example.com", true },
		{ "*.example.com", "example.com", false },
		{ "*.example.com", "badexample.com", false },
		{ "*.example.com", ".example.com", false },	/* an empty label is no name */
		{ "*.example.com", "a.example.com.evil", false },
		{ "*.example.com", "A.EXAMPLE.COM", true },
		{ "*.example.com", "", false },
		{ "", "", false },
		{ "*.", "a.", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(dns_name_matches(cases[i].pattern, cases[i].name), cases[i].match,
			     "%s vs %s", cases[i].pattern, cases[i].name);
}

Test(dns_classes, table)
{
	static const struct {
		const char *addr;
		enum tp_addr_class cls;
	} cases[] = {
		{ "192.0.2.1", TP_ADDR_PUBLIC },
		{ "8.8.8.8", TP_ADDR_PUBLIC },
		{ "127.0.0.1", TP_ADDR_LOOPBACK },
		{ "127.255.0.9", TP_ADDR_LOOPBACK },
		{ "::1", TP_ADDR_LOOPBACK },
		{ "::ffff:127.0.0.1", TP_ADDR_LOOPBACK },
		{ "10.0.0.1", TP_ADDR_PRIVATE },
		{ "172.16.0.1", TP_ADDR_PRIVATE },
		{ "172.31.255.255", TP_ADDR_PRIVATE },
		{ "172.32.0.1", TP_ADDR_PUBLIC },
		{ "192.168.1.1", TP_ADDR_PRIVATE },
		{ "100.64.0.1", TP_ADDR_PRIVATE },
		{ "100.127.255.255", TP_ADDR_PRIVATE },
		{ "100.128.0.1", TP_ADDR_PUBLIC },
		{ "fc00::1", TP_ADDR_PRIVATE },
		{ "fdff::1", TP_ADDR_PRIVATE },
		{ "fec0::1", TP_ADDR_PRIVATE },
		{ "::ffff:10.1.2.3", TP_ADDR_PRIVATE },
		{ "169.254.1.1", TP_ADDR_LINK_LOCAL },
		{ "fe80::1", TP_ADDR_LINK_LOCAL },
		{ "febf::1", TP_ADDR_LINK_LOCAL },
		{ "169.254.169.254", TP_ADDR_METADATA },
		{ "::ffff:169.254.169.254", TP_ADDR_METADATA },
		{ "fd00:ec2::254", TP_ADDR_METADATA },
		{ "100.100.100.200", TP_ADDR_METADATA },
		{ "::ffff:100.100.100.200", TP_ADDR_METADATA },
		{ "0.0.0.0", TP_ADDR_UNSPECIFIED },
		{ "0.1.2.3", TP_ADDR_UNSPECIFIED },
		{ "::", TP_ADDR_UNSPECIFIED },
		{ "::ffff:0.0.0.0", TP_ADDR_UNSPECIFIED },
		{ "224.0.0.1", TP_ADDR_MULTICAST },
		{ "239.255.255.250", TP_ADDR_MULTICAST },
		{ "240.0.0.1", TP_ADDR_MULTICAST },
		{ "255.255.255.255", TP_ADDR_MULTICAST },
		{ "ff02::1", TP_ADDR_MULTICAST },
		{ "2001:db8::1", TP_ADDR_PUBLIC },
		/* IPv6 forms that carry an IPv4 address. */
		{ "::127.0.0.1", TP_ADDR_LOOPBACK },
		{ "::169.254.169.254", TP_ADDR_METADATA },
		{ "64:ff9b::10.0.0.1", TP_ADDR_PRIVATE },
		{ "64:ff9b::169.254.169.254", TP_ADDR_METADATA },
		{ "64:ff9b::192.0.2.1", TP_ADDR_PUBLIC },
		{ "2002:7f00:1::", TP_ADDR_LOOPBACK },
		{ "2002:a9fe:a9fe::1", TP_ADDR_METADATA },
		{ "2002:c000:201::1", TP_ADDR_PUBLIC },
	};
	uint8_t a[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		addr16(cases[i].addr, a);
		cr_expect_eq(dns_classify(a), cases[i].cls, "%s: %s, want %s", cases[i].addr,
			     dns_addr_class_name(dns_classify(a)),
			     dns_addr_class_name(cases[i].cls));
	}
	cr_expect_str_eq(dns_addr_class_name(TP_ADDR_METADATA), "metadata");
	cr_expect_str_eq(dns_addr_class_name(TP_ADDR_LINK_LOCAL), "link-local");
}

Test(dns_tunnel, both_ways)
{
	static const char *const innocent[] = {
		"api.github.com",
		"productionservice.example.com",
		"cloudfront-distribution.example.net",
		"production-eu-west-2.internal.example",
		"dualstack-apiserver.example.com",
		"login-microsoftonline.example.com",
		"objects.githubusercontent.com",
		"",
	};
	static const char *const suspect[] = {
		/* random base32 or base36 payloads of 20 to 32 characters (H 3.84 to 4.32) */
		"k5sxgzlsnfxgolbaorugk4tf.t.example.com",
		"onxw2zjanfzsaylhmvzxi2lomvzxi2lo.example.com",
		"xxf4gkzx7b6ctzkkoamozww5rayi.example.com",
		"a.x7q2m9vk3bz8w4rtyp6j.example.com",
		/* a label of 40 */
		"0123456789abcdef0123456789abcdef01234567.example.com",
	};
	char longname[200];

	for (size_t i = 0; i < sizeof(innocent) / sizeof(innocent[0]); i++)
		cr_expect_not(dns_suspect_tunnel(innocent[i]), "%s", innocent[i]);
	for (size_t i = 0; i < sizeof(suspect) / sizeof(suspect[0]); i++)
		cr_expect(dns_suspect_tunnel(suspect[i]), "%s", suspect[i]);
	/* 150 bytes of short, innocent labels. */
	memset(longname, 0, sizeof(longname));
	for (size_t i = 0; i < 150; i += 4)
		memcpy(longname + i, "abc.", 4);
	longname[150] = '\0';
	longname[149] = 'x';
	cr_expect(dns_suspect_tunnel(longname));
	longname[149] = '\0';
	longname[148] = 'x';
	cr_expect_not(dns_suspect_tunnel(longname), "149 bytes");
}

Test(dns_types, names)
{
	cr_expect_str_eq(dns_type_name(1), "A");
	cr_expect_str_eq(dns_type_name(28), "AAAA");
	cr_expect_str_eq(dns_type_name(65), "HTTPS");
	cr_expect_str_eq(dns_type_name(255), "ANY");
	cr_expect_null(dns_type_name(12345));
}
