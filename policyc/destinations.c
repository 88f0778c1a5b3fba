// SPDX-License-Identifier: GPL-2.0
/*
 * Destinations -> canonical address and host rules.
 *
 * Envelopes can say the same thing in many ways: "10.0.0.0/8" next to
 * "10.1.0.0/16", ports 80 and 81 next to 80-81, a tcp and a udp entry next
 * to an "any" one, "a.example.com" next to "*.example.com".  The compiled
 * policy keeps one form for each of these, so that they give equal bytes
 * (sibling blocks that together make a larger one are not joined):
 *
 *   - per target (one address block, or one host name), the allowed ports of
 *     each protocol are a set of disjoint, non-adjacent port ranges;
 *   - what an enclosing target already allows is removed (a block inside a
 *     larger block, a name below a "*." wildcard), and a target left with
 *     nothing is dropped; except across a special range (ranges.h): a block
 *     in loopback, link-local or metadata keeps its ports, since the kernel
 *     side does not let the larger block reach there;
 *   - a range allowed for both protocols is one rule for both, the rest one
 *     rule per protocol.
 *
 * Address blocks nest or are disjoint, so sorted by (address, prefix length)
 * they come in tree order and one stack finds each block's enclosing ones.
 * A name's enclosing wildcards are found by its label suffixes.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <stdio.h>

#include "policyc/policyc_internal.h"

/* Longest host name (values.c), plus "*." */
#define TP_HOST_MAX 255

/* Sorted, disjoint, non-adjacent inclusive port ranges. */
struct ports {
	uint32_t (*v)[2];
	size_t n, cap;
};

static void ports_free(struct ports *p)
{
	free(p->v);
	*p = (struct ports){ 0 };
}

static int ports_push(struct ports *p, uint32_t lo, uint32_t hi)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4;
		uint32_t (*v)[2] = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n][0] = lo;
	p->v[p->n][1] = hi;
	p->n++;
	return 0;
}

static int range_compare(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Sorts and merges overlapping and adjacent ranges in place. */
static void ports_normalize(struct ports *p)
{
	size_t out = 0;

	if (p->n == 0)
		return;
	qsort(p->v, p->n, sizeof(*p->v), range_compare);
	for (size_t i = 0; i < p->n; i++) {
		if (out && p->v[i][0] <= p->v[out - 1][1] + 1) {
			if (p->v[i][1] > p->v[out - 1][1])
				p->v[out - 1][1] = p->v[i][1];
			continue;
		}
		p->v[out][0] = p->v[i][0];
		p->v[out][1] = p->v[i][1];
		out++;
	}
	p->n = out;
}

/* The first range of `b` that ends at or after `port` (binary search). */
static size_t ports_first_ending_after(const struct ports *b, uint32_t port)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->v[mid][1] < port)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * out = a ∪ b, or a ∖ b, or a ∩ b (a and b normalised; out is new and
 * normalised).  Minus and intersect visit, for each range of `a`, only the
 * ranges of `b` that overlap it (found by binary search), so a small set
 * against a large one costs little: an envelope can hold tens of thousands
 * of ranges.
 */
enum ports_op { PORTS_UNION, PORTS_MINUS, PORTS_INTERSECT };

static int ports_combine(const struct ports *a, const struct ports *b, enum ports_op op,
			 struct ports *out)
{
	int r = 0;

	*out = (struct ports){ 0 };
	if (op == PORTS_UNION) {
		size_t i = 0, j = 0;

		/* A merge of two sorted lists, then one pass to join what touches. */
		while (r == 0 && (i < a->n || j < b->n)) {
			bool from_a = j == b->n || (i < a->n && a->v[i][0] <= b->v[j][0]);
			const uint32_t *v = from_a ? a->v[i++] : b->v[j++];

			if (out->n && v[0] <= out->v[out->n - 1][1] + 1) {
				if (v[1] > out->v[out->n - 1][1])
					out->v[out->n - 1][1] = v[1];
				continue;
			}
			r = ports_push(out, v[0], v[1]);
		}
		if (r)
			ports_free(out);
		return r;
	}
	for (size_t i = 0; r == 0 && i < a->n; i++) {
		uint32_t lo = a->v[i][0], hi = a->v[i][1];

		for (size_t j = ports_first_ending_after(b, lo);
		     r == 0 && j < b->n && b->v[j][0] <= hi && lo <= hi; j++) {
			uint32_t blo = b->v[j][0], bhi = b->v[j][1];

			if (op == PORTS_INTERSECT) {
				r = ports_push(out, blo > lo ? blo : lo, bhi < hi ? bhi : hi);
				continue;
			}
			if (blo > lo)
				r = ports_push(out, lo, blo - 1);
			lo = bhi + 1;	/* bhi <= 65535: no overflow in uint32_t */
		}
		if (r == 0 && op == PORTS_MINUS && lo <= hi)
			r = ports_push(out, lo, hi);
	}
	if (r)
		ports_free(out);	/* output only on success */
	return r;
}

/* One target: an address block or a host name, with the ports of each protocol. */
struct target {
	const struct tp_destination *first;	/* its address, prefix or name */
	struct ports tcp, udp;
	struct ports tcp_all, udp_all;		/* with what enclosing targets allow */
};

static void targets_free(struct target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ports_free(&t[i].tcp);
		ports_free(&t[i].udp);
		ports_free(&t[i].tcp_all);
		ports_free(&t[i].udp_all);
	}
	free(t);
}

static int dest_compare(const void *pa, const void *pb)
{
	const struct tp_destination *a = *(const struct tp_destination *const *)pa;
	const struct tp_destination *b = *(const struct tp_destination *const *)pb;
	int r;

	if (!a->host != !b->host)
		return a->host ? 1 : -1;	/* addresses first */
	if (a->host)
		return strcmp(a->host, b->host);
	r = memcmp(a->addr, b->addr, 16);
	return r ? r : (a->prefixlen < b->prefixlen ? -1 : a->prefixlen > b->prefixlen);
}

static bool same_target(const struct tp_destination *a, const struct tp_destination *b)
{
	if (!a->host != !b->host)
		return false;
	if (a->host)
		return strcmp(a->host, b->host) == 0;
	return a->prefixlen == b->prefixlen && memcmp(a->addr, b->addr, 16) == 0;
}

static bool block_contains(const struct tp_destination *outer, const struct tp_destination *inner)
{
	return tp_block_contains(outer->addr, outer->prefixlen, inner->addr, inner->prefixlen);
}

/* Groups the sorted destinations into targets, with each protocol's ports. */
static int group_targets(const struct tp_destination **sorted, size_t n, struct target **out,
			 size_t *out_count)
{
	struct target *t = calloc(n + 1, sizeof(*t));
	size_t count = 0;
	int r = 0;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct tp_destination *d = sorted[i];
		struct target *cur;

		if (!count || !same_target(t[count - 1].first, d))
			t[count++].first = d;
		cur = &t[count - 1];
		if (d->protocols & TP_PROTO_TCP)
			r = ports_push(&cur->tcp, d->port_min, d->port_max);
		if (r == 0 && (d->protocols & TP_PROTO_UDP))
			r = ports_push(&cur->udp, d->port_min, d->port_max);
	}
	for (size_t i = 0; i < count; i++) {
		ports_normalize(&t[i].tcp);
		ports_normalize(&t[i].udp);
	}
	if (r) {
		targets_free(t, count);
		return r;
	}
	*out = t;
	*out_count = count;
	return 0;
}

/*
 * Emits what `t` allows beyond `tcp_above`/`udp_above` (what enclosing
 * targets allow): one rule per range, for both protocols where both have it.
 */
typedef int (*emit_fn)(void *ctx, const struct tp_destination *target, uint8_t protocols,
		       uint32_t lo, uint32_t hi);

static int emit_target(struct target *t, const struct ports *tcp_above,
		       const struct ports *udp_above, bool has_children, emit_fn emit, void *ctx)
{
	struct ports tcp = { 0 }, udp = { 0 }, both = { 0 }, tcp_only = { 0 }, udp_only = { 0 };
	int r;

	r = ports_combine(&t->tcp, tcp_above, PORTS_MINUS, &tcp);
	if (r == 0)
		r = ports_combine(&t->udp, udp_above, PORTS_MINUS, &udp);
	if (r == 0)
		r = ports_combine(&tcp, &udp, PORTS_INTERSECT, &both);
	if (r == 0)
		r = ports_combine(&tcp, &udp, PORTS_MINUS, &tcp_only);
	if (r == 0)
		r = ports_combine(&udp, &tcp, PORTS_MINUS, &udp_only);
	for (size_t i = 0; r == 0 && i < both.n; i++)
		r = emit(ctx, t->first, TP_PROTO_ANY, both.v[i][0], both.v[i][1]);
	for (size_t i = 0; r == 0 && i < tcp_only.n; i++)
		r = emit(ctx, t->first, TP_PROTO_TCP, tcp_only.v[i][0], tcp_only.v[i][1]);
	for (size_t i = 0; r == 0 && i < udp_only.n; i++)
		r = emit(ctx, t->first, TP_PROTO_UDP, udp_only.v[i][0], udp_only.v[i][1]);
	/*
	 * What this target and those enclosing it allow, for the targets inside
	 * it; only a target with children needs it, and it is freed when the
	 * walk leaves the target, so at most one per nesting level is held.
	 */
	if (r == 0 && has_children)
		r = ports_combine(&t->tcp, tcp_above, PORTS_UNION, &t->tcp_all);
	if (r == 0 && has_children)
		r = ports_combine(&t->udp, udp_above, PORTS_UNION, &t->udp_all);
	ports_free(&tcp);
	ports_free(&udp);
	ports_free(&both);
	ports_free(&tcp_only);
	ports_free(&udp_only);
	return r;
}

static int emit_blocks(struct target *t, size_t n, emit_fn emit, void *ctx)
{
	_cleanup_free_ size_t *stack = calloc(n + 1, sizeof(*stack));
	const struct ports none = { 0 };
	size_t depth = 0;
	int r = 0;

	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct target *up;
		bool has_children;

		while (depth && !block_contains(t[stack[depth - 1]].first, t[i].first)) {
			ports_free(&t[stack[depth - 1]].tcp_all);
			ports_free(&t[stack[depth - 1]].udp_all);
			depth--;
		}
		up = depth ? &t[stack[depth - 1]] : NULL;
		/* loopback, link-local and metadata take nothing from blocks around them */
		if (up && tp_special_range_between(up->first->addr, up->first->prefixlen,
						   t[i].first->addr, t[i].first->prefixlen))
			up = NULL;
		/* In tree order a target's first child, if any, comes right after it. */
		has_children = i + 1 < n && block_contains(t[i].first, t[i + 1].first);
		r = emit_target(&t[i], up ? &up->tcp_all : &none, up ? &up->udp_all : &none,
				has_children, emit, ctx);
		if (has_children)
			stack[depth++] = i;
	}
	return r;
}

static int target_name_compare(const void *key, const void *elem)
{
	return strcmp(key, ((const struct target *)elem)->first->host);
}

/*
 * Names: what the "*." wildcards above a name allow is removed from it, one
 * wildcard at a time (a name has at most 126 of them), so no union of
 * wildcards is ever built.
 */
static int emit_hosts(struct target *t, size_t n, emit_fn emit, void *ctx)
{
	const struct ports none = { 0 };
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++) {
		const char *name = t[i].first->host;
		const char *suffix = strncmp(name, "*.", 2) == 0 ? name + 2 : name;
		struct ports tcp = { 0 }, udp = { 0 }, next;
		struct target left;

		r = ports_combine(&t[i].tcp, &none, PORTS_UNION, &tcp);
		if (r == 0)
			r = ports_combine(&t[i].udp, &none, PORTS_UNION, &udp);
		/* Every label suffix S of the name: "*.S" encloses it. */
		for (const char *dot = strchr(suffix, '.'); r == 0 && dot; dot = strchr(dot + 1, '.')) {
			char wildcard[TP_HOST_MAX + 2];
			const struct target *w;

			if (snprintf(wildcard, sizeof(wildcard), "*%s", dot) >= (int)sizeof(wildcard))
				continue;
			w = bsearch(wildcard, t, n, sizeof(*t), target_name_compare);
			if (!w)
				continue;
			r = ports_combine(&tcp, &w->tcp, PORTS_MINUS, &next);
			ports_free(&tcp);
			tcp = next;
			if (r == 0) {
				r = ports_combine(&udp, &w->udp, PORTS_MINUS, &next);
				ports_free(&udp);
				udp = next;
			}
		}
		left = (struct target){ .first = t[i].first, .tcp = tcp, .udp = udp };
		if (r == 0)
			r = emit_target(&left, &none, &none, false, emit, ctx);
		ports_free(&tcp);
		ports_free(&udp);
	}
	return r;
}

/*
 * Removing what an enclosing target allows can split a range around each
 * range above it, so a hostile envelope could make the rules multiply; no
 * real one comes near this.
 */
#define MAX_RULES (1u << 20)

struct emit_ctx {
	struct tp_policy *policy;
	size_t net_cap, host_cap;
};

static int grow(void **items, size_t *cap, size_t count, size_t size)
{
	size_t want = *cap ? *cap * 2 : 16;
	void *p;

	if (count < *cap)
		return 0;
	if (count >= MAX_RULES)
		return -E2BIG;
	p = realloc(*items, want * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = want;
	return 0;
}

static int emit_rule(void *p, const struct tp_destination *target, uint8_t protocols,
		     uint32_t lo, uint32_t hi)
{
	struct emit_ctx *c = p;
	struct tp_policy *policy = c->policy;
	int r;

	if (target->host) {
		struct tp_host_rule *h;

		r = grow((void **)&policy->host_rules, &c->host_cap, policy->host_rule_count,
			 sizeof(*h));
		if (r)
			return r;
		h = &policy->host_rules[policy->host_rule_count];
		*h = (struct tp_host_rule){ .name = strdup(target->host), .protocols = protocols,
					    .port_min = (uint16_t)lo, .port_max = (uint16_t)hi };
		if (!h->name)
			return -ENOMEM;
		policy->host_rule_count++;
		return 0;
	}
	r = grow((void **)&policy->net_rules, &c->net_cap, policy->net_rule_count,
		 sizeof(*policy->net_rules));
	if (r)
		return r;
	policy->net_rules[policy->net_rule_count] = (struct tp_net_rule){
		.prefixlen = target->prefixlen,
		.protocols = protocols,
		.port_min = (uint16_t)lo,
		.port_max = (uint16_t)hi,
	};
	memcpy(policy->net_rules[policy->net_rule_count].addr, target->addr, 16);
	policy->net_rule_count++;
	return 0;
}

int tp_destinations_compile(const struct tp_destination *dests, size_t count,
			    struct tp_policy *policy)
{
	_cleanup_free_ const struct tp_destination **sorted = calloc(count + 1, sizeof(*sorted));
	struct emit_ctx c = { .policy = policy };
	struct target *targets = NULL;
	size_t target_count = 0, first_host;
	int r;

	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		sorted[i] = &dests[i];
	if (count)
		qsort(sorted, count, sizeof(*sorted), dest_compare);
	r = group_targets(sorted, count, &targets, &target_count);
	if (r)
		return r;
	for (first_host = 0; first_host < target_count && !targets[first_host].first->host;
	     first_host++)
		;
	r = emit_blocks(targets, first_host, emit_rule, &c);
	if (r == 0)
		r = emit_hosts(targets + first_host, target_count - first_host, emit_rule, &c);
	targets_free(targets, target_count);
	return r;
}
