// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/dns.h"
#include "runtime/plan/net.h"

/* Adds [lo, hi] to a sorted list of disjoint, non-adjacent ranges; -E2BIG when full. */
static int ranges_add(struct tether_port_range *r, __u16 *count, uint32_t lo, uint32_t hi)
{
	struct tether_port_range out[TETHER_NET_PORT_RANGES + 1];
	size_t n = 0, i = 0;

	/* the ranges wholly before [lo, hi], not touching it */
	while (i < *count && (uint32_t)r[i].hi + 1 < lo)
		out[n++] = r[i++];
	/* those that overlap or touch it join it */
	while (i < *count && r[i].lo <= hi + 1) {
		lo = r[i].lo < lo ? r[i].lo : lo;
		hi = r[i].hi > hi ? r[i].hi : hi;
		i++;
	}
	out[n++] = (struct tether_port_range){ .lo = (__u16)lo, .hi = (__u16)hi };
	while (i < *count)
		out[n++] = r[i++];
	if (n > TETHER_NET_PORT_RANGES)
		return -E2BIG;
	memcpy(r, out, n * sizeof(*out));
	*count = (__u16)n;
	return 0;
}

static int rule_merge(struct tether_net_rule *into, const struct tether_net_rule *from)
{
	int r = 0;

	for (__u16 i = 0; i < from->tcp_count && !r; i++)
		r = ranges_add(into->tcp, &into->tcp_count, from->tcp[i].lo, from->tcp[i].hi);
	for (__u16 i = 0; i < from->udp_count && !r; i++)
		r = ranges_add(into->udp, &into->udp_count, from->udp[i].lo, from->udp[i].hi);
	return r;
}

static int rule_add_ports(struct tether_net_rule *rule, uint8_t protocols, uint16_t lo,
			  uint16_t hi)
{
	int r = 0;

	if (protocols & TP_PROTO_TCP)
		r = ranges_add(rule->tcp, &rule->tcp_count, lo, hi);
	if (!r && (protocols & TP_PROTO_UDP))
		r = ranges_add(rule->udp, &rule->udp_count, lo, hi);
	return r;
}

/* Whether the block contains the address. */
static bool block_contains(const uint8_t *outer, unsigned outer_len, const uint8_t *addr)
{
	return tp_block_contains(outer, outer_len, addr, 128);
}

void net_format_block(const uint8_t addr[16], unsigned prefixlen, char *buf, size_t size)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	char text[INET6_ADDRSTRLEN] = "?";

	if (!memcmp(addr, mapped, 12) && prefixlen >= 96) {
		inet_ntop(AF_INET, addr + 12, text, sizeof(text));
		prefixlen -= 96;
		if (prefixlen == 32)
			snprintf(buf, size, "%s", text);
		else
			snprintf(buf, size, "%s/%u", text, prefixlen);
		return;
	}
	inet_ntop(AF_INET6, addr, text, sizeof(text));
	if (prefixlen == 128)
		snprintf(buf, size, "%s", text);
	else
		snprintf(buf, size, "%s/%u", text, prefixlen);
}

static bool is_special(const struct tl_net_entry *e)
{
	for (size_t i = 0; i < tp_addr_range_count; i++)
		if (tp_addr_class_special(tp_addr_ranges[i].addr_class) &&
		    e->prefixlen == tp_addr_ranges[i].prefixlen &&
		    !memcmp(e->addr, tp_addr_ranges[i].addr, 16))
			return true;
	return false;
}

static int entry_compare(const void *pa, const void *pb)
{
	const struct tl_net_entry *a = pa, *b = pb;
	int r = memcmp(a->addr, b->addr, 16);

	return r ? r : (a->prefixlen > b->prefixlen) - (a->prefixlen < b->prefixlen);
}

int net_plan_build(const struct tp_policy *policy, struct net_plan *plan, char *why,
		   size_t why_len)
{
	/* an upper bound: the ranges that are special get barriers below */
	const size_t nspecial = tp_addr_range_count;
	const struct tp_addr_range *special = tp_addr_ranges;
	const struct tp_net_rule *rules = policy->net_rules;
	size_t *stack = NULL, depth = 0, bad = 0, policy_blocks;
	int r = 0;

	*plan = (struct net_plan){ .policy = policy };
	plan->entries = calloc(policy->net_rule_count + nspecial + 1, sizeof(*plan->entries));
	stack = calloc(policy->net_rule_count + nspecial + 1, sizeof(*stack));
	if (!plan->entries || !stack) {
		r = -ENOMEM;
		goto out;
	}
	/* policy rules come sorted by (address, prefix length): one block's rules are adjacent */
	for (size_t i = 0; i < policy->net_rule_count; i++) {
		struct tl_net_entry *e;

		if (!plan->count || memcmp(plan->entries[plan->count - 1].addr, rules[i].addr, 16) ||
		    plan->entries[plan->count - 1].prefixlen != rules[i].prefixlen) {
			e = &plan->entries[plan->count++];
			memcpy(e->addr, rules[i].addr, 16);
			e->prefixlen = rules[i].prefixlen;
			e->rule.rule_id = (__u32)i;
		}
		e = &plan->entries[plan->count - 1];
		r = rule_add_ports(&e->rule, rules[i].protocols, rules[i].port_min,
				   rules[i].port_max);
		bad = plan->count - 1;
		if (r)
			goto too_many;
	}
	/* a special range inside a broader block gets an entry of its own: a barrier */
	policy_blocks = plan->count;
	for (size_t k = 0; k < nspecial; k++) {
		bool named = false, enclosed = false;

		if (!tp_addr_class_special(special[k].addr_class))
			continue;
		for (size_t i = 0; i < policy_blocks; i++) {
			const struct tl_net_entry *e = &plan->entries[i];

			named |= e->prefixlen == special[k].prefixlen &&
				 !memcmp(e->addr, special[k].addr, 16);
			enclosed |= e->prefixlen < special[k].prefixlen &&
				    block_contains(e->addr, e->prefixlen, special[k].addr);
		}
		if (named || !enclosed)
			continue;
		plan->entries[plan->count] = (struct tl_net_entry){
			.prefixlen = special[k].prefixlen,
			.rule.rule_id = TETHER_RULE_NONE,
		};
		memcpy(plan->entries[plan->count].addr, special[k].addr, 16);
		plan->count++;
	}
	qsort(plan->entries, plan->count, sizeof(*plan->entries), entry_compare);
	{
		bool used[129] = { false };

		for (size_t i = 0; i < plan->count; i++)
			used[plan->entries[i].prefixlen] = true;
		for (int len = 128; len >= 0; len--)
			if (used[len])
				plan->lengths[plan->length_count++] = (uint8_t)len;
	}
	/* blocks nest or are disjoint, so in this order a stack holds the enclosing ones */
	for (size_t i = 0; i < plan->count; i++) {
		struct tl_net_entry *e = &plan->entries[i];

		while (depth && !block_contains(plan->entries[stack[depth - 1]].addr,
						plan->entries[stack[depth - 1]].prefixlen, e->addr))
			depth--;
		if (depth && !is_special(e)) {
			r = rule_merge(&e->rule, &plan->entries[stack[depth - 1]].rule);
			bad = i;
			if (r)
				goto too_many;
		}
		stack[depth++] = i;
	}
	goto out;
too_many:
	{
		char block[64];
		const struct tl_net_entry *e = &plan->entries[bad];

		net_format_block(e->addr, e->prefixlen, block, sizeof(block));
		snprintf(why, why_len, "the destination %s allows more than %d separate port "
			 "ranges per protocol (its own and those of blocks around it); join some",
			 block, TETHER_NET_PORT_RANGES);
	}
out:
	free(stack);
	if (r) {
		net_plan_free(plan);
		plan->policy = policy;
	}
	return r;
}

void net_plan_free(struct net_plan *plan)
{
	free(plan->entries);
	free(plan->admitted);
	*plan = (struct net_plan){ 0 };
}

bool net_name_allowed(const struct net_plan *plan, const char *name)
{
	for (size_t i = 0; i < plan->policy->host_rule_count; i++)
		if (dns_name_matches(plan->policy->host_rules[i].name, name))
			return true;
	return false;
}

/*
 * The longest policy block containing addr, or NULL: one binary search per
 * prefix length in use, longest first (a DNS answer waits for this).
 */
static const struct tl_net_entry *longest_block(const struct net_plan *plan,
						const uint8_t addr[16])
{
	for (size_t i = 0; i < plan->length_count; i++) {
		struct tl_net_entry key = { .prefixlen = plan->lengths[i] };
		unsigned full = key.prefixlen / 8, rest = key.prefixlen % 8;
		const struct tl_net_entry *e;

		memcpy(key.addr, addr, full);
		if (rest)
			key.addr[full] = addr[full] & (uint8_t)(0xff00 >> rest);
		e = bsearch(&key, plan->entries, plan->count, sizeof(*plan->entries),
			    entry_compare);
		if (e)
			return e;
	}
	return NULL;
}

bool net_range_allowed(const struct net_plan *plan, const uint8_t addr[16])
{
	const struct tl_net_entry *e = longest_block(plan, addr);

	return e && (e->rule.tcp_count || e->rule.udp_count);
}

/* Where addr is, or would go, in the admitted list (sorted by address). */
static size_t admitted_index(const struct net_plan *plan, const uint8_t addr[16])
{
	size_t lo = 0, hi = plan->admitted_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memcmp(plan->admitted[mid].addr, addr, 16) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct tl_net_entry *admitted_find(const struct net_plan *plan,
						const uint8_t addr[16])
{
	size_t i = admitted_index(plan, addr);

	return i < plan->admitted_count && !memcmp(plan->admitted[i].addr, addr, 16)
		       ? &plan->admitted[i] : NULL;
}

int net_admit(struct net_plan *plan, const char *name, const uint8_t addr[16], uint32_t ttl_s,
	      uint64_t now_boot_ns, struct tl_net_entry *out)
{
	const struct tl_net_entry *block = longest_block(plan, addr);
	const struct tl_net_entry *prev = admitted_find(plan, addr);
	struct tl_net_entry e = { .prefixlen = 128 };
	bool matched = false;
	int r = 0;

	/*
	 * Loopback, private and other non-public answers pass the proxy only
	 * when a block covers them, and then the block alone says which ports:
	 * whoever controls a listed name's DNS must not open the name's ports
	 * on a host inside that block.
	 */
	if (dns_classify(addr) != TP_ADDR_PUBLIC)
		return block ? 1 : -EACCES;
	if (!prev && plan->admitted_count >= NET_ADMITTED_MAX)
		return -ENOSPC;
	memcpy(e.addr, addr, 16);
	for (size_t i = 0; i < plan->policy->host_rule_count && !r; i++) {
		const struct tp_host_rule *h = &plan->policy->host_rules[i];

		if (!dns_name_matches(h->name, name))
			continue;
		if (!matched)
			e.rule.rule_id = TETHER_NET_RULE_HOST | (__u32)i;
		matched = true;
		r = rule_add_ports(&e.rule, h->protocols, h->port_min, h->port_max);
	}
	if (!matched)
		return -ENOENT;
	if (!r && block)
		r = rule_merge(&e.rule, &block->rule);
	if (!r && prev)
		r = rule_merge(&e.rule, &prev->rule);
	if (r)
		return r;
	/* a policy rule on exactly this address never expires */
	if (block && block->prefixlen == 128) {
		e.rule.expires_ns = 0;
		e.rule.rule_id = block->rule.rule_id;
	} else {
		e.rule.expires_ns = now_boot_ns + (uint64_t)ttl_s * 1000000000ull;
		if (prev && prev->rule.expires_ns > e.rule.expires_ns)
			e.rule.expires_ns = prev->rule.expires_ns;
	}
	*out = e;
	return 0;
}

int net_admit_commit(struct net_plan *plan, const struct tl_net_entry *entry)
{
	struct tl_net_entry *slot = (struct tl_net_entry *)admitted_find(plan, entry->addr);

	if (!slot) {
		size_t at = admitted_index(plan, entry->addr);

		if (plan->admitted_count == plan->admitted_cap) {
			size_t cap = plan->admitted_cap ? 2 * plan->admitted_cap : 16;
			struct tl_net_entry *grown = realloc(plan->admitted, cap * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			plan->admitted = grown;
			plan->admitted_cap = cap;
		}
		memmove(&plan->admitted[at + 1], &plan->admitted[at],
			(plan->admitted_count - at) * sizeof(*plan->admitted));
		plan->admitted_count++;
		slot = &plan->admitted[at];
	}
	*slot = *entry;
	return 0;
}
