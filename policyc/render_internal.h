/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the policy's human renderings share: the summary (explain.c), the
 * semantic diff (diff.c) and the guarantee report (report.c) all print user
 * text, paths, destinations and limits the same way, and look rules up by
 * path the same way.  One definition here keeps their golden outputs
 * consistent with each other.
 *
 * Not part of the library's API: only policyc/ includes it.
 */
#ifndef TETHER_POLICYC_RENDER_INTERNAL_H
#define TETHER_POLICYC_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "policyc/policy.h"
#include "policyc/values.h"

/* ---- text ------------------------------------------------------------------ */

/*
 * Paths, names and gap fields come from the envelope's author (or from a
 * decoded policy) and end up on a reviewer's terminal: bytes that could move
 * the cursor, fake a line of the output (say "no change in authority") or
 * make a later "\xNN" ambiguous are shown as \xNN; the backslash included.
 */
void tp_write_escaped(FILE *out, const char *text);

/* The escaped items of `list`, separated by ", "; nothing for an empty list. */
void tp_write_escaped_list(FILE *out, char *const *list, size_t count);

/* Whether `field` is one of the policy's acknowledged gaps (exact name). */
bool tp_policy_has_gap(const struct tp_policy *policy, const char *field);

/* ---- paths ----------------------------------------------------------------- */

// "/path/**" for a subtree rule ("/**" for the root), "/path" for an exact one.
// (A line comment: "/**" would open a block comment inside one.)
void tp_write_rule_path(FILE *out, const char *path, bool subtree);

/*
 * A policy's path rules sorted by (path, kind), so a rule is found by bsearch
 * whatever order a (decoded) policy holds them in.  `rules` is borrowed from
 * the policy; `order` maps a sorted position to an index into `rules`.
 */
struct tp_rule_index {
	const struct tp_path_rule *rules;
	size_t *order;
	size_t count;
};

/* Returns 0 or -ENOMEM; on success release with tp_rule_index_free(). */
int tp_rule_index_init(struct tp_rule_index *index, const struct tp_policy *policy);
void tp_rule_index_free(struct tp_rule_index *index);

/* The index (into rules) of the rule at exactly (path[0..len), kind), or -1. */
ssize_t tp_rule_index_find(const struct tp_rule_index *index, const char *path, size_t len,
			   uint32_t kind);

/*
 * The nearest subtree rule at path[0..len) or above it, on component
 * boundaries ("/a/b", then "/a", then "/"), or -1: the rule that decides
 * what lies beneath the path.
 */
ssize_t tp_rule_index_enclosing(const struct tp_rule_index *index, const char *path, size_t len);

/*
 * The rule this version's kernel applies at path[0..len) and beneath it, or
 * -1: the kernel holds every rule as a subtree (filesystem.exact_paths), so
 * this is the nearest rule of either kind at the path or above it, on
 * component boundaries.  Where both kinds sit at one path they share one
 * kernel key, and the subtree rule wins: it comes later in a policy's
 * canonical order, so the loader writes it last.
 */
ssize_t tp_rule_index_kernel_match(const struct tp_rule_index *index, const char *path,
				   size_t len);

/*
 * The nearest subtree rule strictly enclosing rule `i`, or -1.  An exact
 * rule is enclosed by a subtree rule at its own path; a subtree rule only by
 * one above it.
 */
ssize_t tp_rule_index_parent(const struct tp_rule_index *index, size_t i);

/* ---- destinations ---------------------------------------------------------- */

/* As in the envelope: "api.github.com:443", "example.org (tcp only)". */
void tp_write_host_rule(FILE *out, const struct tp_host_rule *host);

/* As in the envelope: "192.0.2.0/24", "[2001:db8::/32]:53 (udp only)"; an IPv6
 * CIDR is bracketed only when a port follows it. */
void tp_write_net_rule(FILE *out, const struct tp_net_rule *net);

/* ---- limits ---------------------------------------------------------------- */

/* Large enough for every unit a limit is shown in. */
#define TP_LIMIT_TEXT_MAX TP_DURATION_TEXT_MAX

/* `value` of `limit` in its unit ("2" CPUs, "4GiB", "15m", "100"), or
 * "unlimited" for 0. */
void tp_format_limit(enum tp_limit limit, uint64_t value, char text[TP_LIMIT_TEXT_MAX]);

#endif
