// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for runtime/dns.c, the wire format code of the run's DNS
 * proxy.  Its input comes from the confined agent (queries) and from the
 * network (responses), so every byte string must be handled without a crash,
 * an out-of-bounds access (ASan), undefined behaviour (UBSan) or a hang (the
 * compression-pointer rules must rule out loops).  The invariants checked:
 *
 *   - a query that parses gets a reply from dns_build_reply() of exactly its
 *     header + question, and that reply is accepted by dns_parse_response()
 *     as an answer to the same question, with no addresses;
 *   - dns_parse_response() never reports more addresses than it was given
 *     room for; it is tried against a question that matches the input's own
 *     (so the answer walk is reached), and against a fixed one;
 *   - dns_cap_ttls() either fails and leaves the message untouched, or
 *     succeeds, after which every TTL the response parse collects is at most
 *     the cap (the parse itself may change: a compression pointer may point
 *     into a TTL, which is why the proxy parses again after capping);
 *   - dns_for_each_addr() visits addresses that classify to a named class.
 *
 * A broken invariant is an abort(), which libFuzzer saves the input for.
 * `make fuzz-dns` and `make fuzz-smoke` build and run it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/dns.h"

#define ADDRS_MAX 8
#define CAP 300

static void check(bool ok)
{
	if (!ok)
		abort();
}

static int visit(void *ctx, const uint8_t addr[16], uint32_t ttl)
{
	enum tp_addr_class c = dns_classify(addr);

	check(dns_addr_class_name(c) != NULL && strcmp(dns_addr_class_name(c), "unknown") != 0);
	(*(size_t *)ctx)++;
	return 0;
}

static void names(const char *name)
{
	(void)dns_suspect_tunnel(name);
	(void)dns_name_matches("*.example.com", name);
	(void)dns_name_matches("api.example.com", name);
	(void)dns_name_matches(name, "a.example.com");
	check(!dns_name_matches("", name));
}

static void query_and_reply(const uint8_t *data, size_t size)
{
	struct dns_question q;
	struct dns_addr addrs[ADDRS_MAX];
	uint8_t reply[DNS_QUESTION_MAX];
	size_t len, count = 0;
	uint8_t rcode = 0;

	if (dns_parse_query(data, size, &q) < 0)
		return;
	check(q.end <= size && q.end <= DNS_QUESTION_MAX && strlen(q.name) <= DNS_NAME_MAX);
	names(q.name);
	(void)dns_type_name(q.qtype);
	len = dns_build_reply(data, &q, DNS_RCODE_REFUSED, reply, sizeof(reply));
	check(len == q.end);
	check(dns_parse_response(reply, len, &q, addrs, ADDRS_MAX, &count, &rcode) == 0);
	check(count == 0 && rcode == DNS_RCODE_REFUSED);
	check(dns_build_reply(data, &q, DNS_RCODE_REFUSED, reply, q.end - 1) == 0);
}

/*
 * The input's own question as a query: the same bytes with QR cleared and
 * only the question counted.  Without it, random bytes would almost never
 * echo a fixed question, and the answer walk would go untested.
 */
static bool own_question(const uint8_t *data, size_t size, struct dns_question *q)
{
	uint8_t *copy;
	int r;

	if (size < DNS_HEADER_LEN)
		return false;
	copy = malloc(size);
	if (!copy)
		return false;
	memcpy(copy, data, size);
	copy[2] &= 0x7f;
	memset(copy + 6, 0, 6);
	r = dns_parse_query(copy, size, q);
	free(copy);
	return r == 0;
}

static void response(const uint8_t *data, size_t size, const struct dns_question *q)
{
	struct dns_addr addrs[ADDRS_MAX], capped_addrs[ADDRS_MAX];
	size_t count = 0, capped_count = 0;
	uint8_t rcode = 0, capped_rcode = 0;
	uint8_t *copy;
	int r, rc;

	r = dns_parse_response(data, size, q, addrs, ADDRS_MAX, &count, &rcode);
	if (r == 0)
		check(count <= ADDRS_MAX && rcode <= 15);
	else
		check(r == -EBADMSG || r == -ENOMSG);

	/* An exact-size heap copy: ASan sees any read or write past its end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	rc = dns_cap_ttls(copy, size, CAP);
	if (rc < 0) {
		check(memcmp(copy, data, size) == 0);
	} else if (dns_parse_response(copy, size, q, capped_addrs, ADDRS_MAX, &capped_count,
				      &capped_rcode) == 0) {
		check(capped_count <= ADDRS_MAX);
		for (size_t i = 0; i < capped_count; i++)
			check(capped_addrs[i].ttl <= CAP);
	}
	if (rc == 0) {
		/* Capping twice changes nothing more: the walk finds the same TTL fields. */
		uint8_t *again = malloc(size ? size : 1);

		if (again) {
			memcpy(again, copy, size);
			(void)dns_cap_ttls(again, size, CAP);
			check(memcmp(again, copy, size) == 0);
			free(again);
		}
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_question q, fixed = { .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN };
	size_t visited = 0;
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);	/* exact size, so ASan catches overreads */

	query_and_reply(copy, size);
	if (own_question(copy, size, &q))
		response(copy, size, &q);
	strcpy(fixed.name, "example.com");
	if (size >= 2)
		fixed.id = (uint16_t)(copy[0] << 8 | copy[1]);
	response(copy, size, &fixed);
	(void)dns_for_each_addr(copy, size, visit, &visited);
	if (size >= 16)
		(void)dns_classify(copy);
	free(copy);
	return 0;
}
