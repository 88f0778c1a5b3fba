// SPDX-License-Identifier: GPL-2.0
//
// What explain.c, diff.c and report.c share: escaped user text, the rule
// index by path, and destination and limit formatting (render_internal.h).
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "policyc/policy.h"
#include "policyc/policyc_internal.h"
#include "policyc/render_internal.h"
#include "policyc/values.h"

_Static_assert(TP_LIMIT_TEXT_MAX >= TP_SIZE_TEXT_MAX && TP_LIMIT_TEXT_MAX >= TP_DURATION_TEXT_MAX,
	       "a limit's text buffer must hold every unit's text");

/* ---- text ------------------------------------------------------------------ */

void tp_write_escaped(FILE *out, const char *text)
{
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if (*c >= 0x20 && *c < 0x7f && *c != '\\')
			fputc(*c, out);
		else
			fprintf(out, "\\x%02x", *c);
	}
}

void tp_write_escaped_list(FILE *out, char *const *list, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (i)
			fputs(", ", out);
		tp_write_escaped(out, list[i]);
	}
}

bool tp_policy_has_gap(const struct tp_policy *policy, const char *field)
{
	for (size_t i = 0; i < policy->gap_count; i++)
		if (strcmp(policy->gaps[i], field) == 0)
			return true;
	return false;
}

/* ---- paths ----------------------------------------------------------------- */

void tp_write_rule_path(FILE *out, const char *path, bool subtree)
{
	tp_write_escaped(out, path);
	if (subtree)
		fputs(strcmp(path, "/") ? "/**" : "**", out);
}

static int order_cmp(const void *a, const void *b, void *data)
{
	const struct tp_path_rule *rules = data;
	const struct tp_path_rule *ra = &rules[*(const size_t *)a];
	const struct tp_path_rule *rb = &rules[*(const size_t *)b];
	int c = strcmp(ra->path, rb->path);

	if (c)
		return c;
	return (ra->kind > rb->kind) - (ra->kind < rb->kind);
}

int tp_rule_index_init(struct tp_rule_index *index, const struct tp_policy *policy)
{
	index->rules = policy->path_rules;
	index->count = policy->path_rule_count;
	index->order = calloc(index->count ? index->count : 1, sizeof(*index->order));
	if (!index->order)
		return -ENOMEM;
	for (size_t i = 0; i < index->count; i++)
		index->order[i] = i;
	qsort_r(index->order, index->count, sizeof(*index->order), order_cmp, (void *)index->rules);
	return 0;
}

void tp_rule_index_free(struct tp_rule_index *index)
{
	free(index->order);
	index->order = NULL;
}

ssize_t tp_rule_index_find(const struct tp_rule_index *index, const char *path, size_t len,
			   uint32_t kind)
{
	size_t lo = 0, hi = index->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tp_path_rule *rule = &index->rules[index->order[mid]];
		int c = strncmp(rule->path, path, len);

		if (c == 0)
			c = rule->path[len] != '\0';
		if (c == 0)
			c = (rule->kind > kind) - (rule->kind < kind);
		if (c == 0)
			return (ssize_t)index->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

ssize_t tp_rule_index_enclosing(const struct tp_rule_index *index, const char *path, size_t len)
{
	for (;;) {
		ssize_t rule = tp_rule_index_find(index, path, len, TP_PATH_SUBTREE);

		if (rule >= 0 || len <= 1)
			return rule;
		len = tp_path_parent_len(path, len);
	}
}

ssize_t tp_rule_index_kernel_match(const struct tp_rule_index *index, const char *path,
				   size_t len)
{
	for (;;) {
		ssize_t rule = tp_rule_index_find(index, path, len, TP_PATH_SUBTREE);

		if (rule < 0)
			rule = tp_rule_index_find(index, path, len, TP_PATH_EXACT);
		if (rule >= 0 || len <= 1)
			return rule;
		len = tp_path_parent_len(path, len);
	}
}

ssize_t tp_rule_index_parent(const struct tp_rule_index *index, size_t i)
{
	const struct tp_path_rule *rule = &index->rules[i];
	size_t len = strlen(rule->path);

	if (rule->kind == TP_PATH_EXACT)
		return tp_rule_index_enclosing(index, rule->path, len);
	if (len <= 1)
		return -1;
	return tp_rule_index_enclosing(index, rule->path, tp_path_parent_len(rule->path, len));
}

/* ---- destinations ---------------------------------------------------------- */

static void write_ports_protocols(FILE *out, uint16_t port_min, uint16_t port_max,
				  uint8_t protocols)
{
	if (port_min != 1 || port_max != 65535) {
		fprintf(out, ":%u", port_min);
		if (port_max != port_min)
			fprintf(out, "-%u", port_max);
	}
	if (protocols == TP_PROTO_TCP)
		fputs(" (tcp only)", out);
	else if (protocols == TP_PROTO_UDP)
		fputs(" (udp only)", out);
}

void tp_write_host_rule(FILE *out, const struct tp_host_rule *host)
{
	tp_write_escaped(out, host->name);
	write_ports_protocols(out, host->port_min, host->port_max, host->protocols);
}

/* Whether the block holds ::ffff:0.0.0.0/96, where IPv4 addresses are stored. */
static bool covers_mapped_ipv4(const struct tp_net_rule *net)
{
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff };

	for (unsigned int bit = 0; bit < net->prefixlen; bit++) {
		unsigned int mask = 0x80u >> (bit % 8);

		if ((net->addr[bit / 8] & mask) != (mapped[bit / 8] & mask))
			return false;
	}
	return true;
}

void tp_write_net_rule(FILE *out, const struct tp_net_rule *net)
{
	char cidr[TP_CIDR_TEXT_MAX];
	bool bracket;

	tp_format_cidr(net->addr, net->prefixlen, cidr);
	/* "[2001:db8::/32]:53": the port's colon must not read as the address's. */
	bracket = strchr(cidr, ':') && (net->port_min != 1 || net->port_max != 65535);
	fprintf(out, bracket ? "[%s]" : "%s", cidr);
	write_ports_protocols(out, net->port_min, net->port_max, net->protocols);
	/* IPv4 is stored as ::ffff:a.b.c.d, so a wide IPv6 block holds every IPv4 address. */
	if (net->prefixlen < 96 && covers_mapped_ipv4(net))
		fputs(" (includes all of IPv4)", out);
}

/* ---- limits ---------------------------------------------------------------- */

void tp_format_limit(enum tp_limit limit, uint64_t value, char text[TP_LIMIT_TEXT_MAX])
{
	if (value == 0) {
		snprintf(text, TP_LIMIT_TEXT_MAX, "unlimited");
		return;
	}
	switch (tp_limits[limit].unit) {
	case TP_UNIT_MILLI_CPU:
		tp_format_cpu(value, text);
		break;
	case TP_UNIT_BYTES:
		tp_format_size(value, text);
		break;
	case TP_UNIT_COUNT:
		snprintf(text, TP_LIMIT_TEXT_MAX, "%" PRIu64, value);
		break;
	case TP_UNIT_MS:
		tp_format_duration(value, text);
		break;
	}
}
