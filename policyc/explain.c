// SPDX-License-Identifier: GPL-2.0
//
// A short human summary of a compiled policy: what a run may read, write,
// execute, reach and consume, what it leaves behind, and what this version
// does not enforce.  For example:
//
//   mode: audit: the reads and execs a path rule would deny are allowed and recorded
//     (decision would_deny); writes and unix connections outside the rules, the
//     protected paths, the network and what no rule can grant stay denied
//   runs as: uid 65534 (nobody), gid 65534, no supplementary groups, no capabilities
//   environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ and CI when the controller ...
//   may read:
//     /**, except /ws/keys/**
//     never the built-in protected paths (/etc/shadow, /root, /home, ...) unless named
//     audit mode: what these rules deny is read too, and recorded (would_deny)
//   may write:
//     /tmp/run/**
//     /ws/src/**, except /ws/src/vendor/**
//   may execute:
//     /**, except /tmp/run/**, /ws/src/**
//   may reach:
//     api.github.com:443
//     192.0.2.0/24
//     [2001:db8::53]:53 (udp only)
//     nothing else: every other destination is refused, loopback and ...
//     names: only the names above resolve (the run's DNS proxy refuses ...
//   may consume:
//     cpu: 2 (not enforced)
//     memory: unlimited
//     ...
//     network egress: 100MiB
//   leaves behind:
//     workspace /ws (existing directory): kept after the run
//     ...
//   not enforced by this version (acknowledged):
//     resources.cpu: cgroup v2 cpu.max is not set by this version
//
// The first line, and the "audit mode:" lines under "may read" and "may
// execute", appear only in audit mode, which relaxes the read and exec
// decisions of path rules and nothing else (docs/envelope.md, sandbox.mode).
//
// Destinations are written as the envelope writes them (no port: any port).
// Hostnames are reached through the run's DNS proxy: the "names" line says
// which names resolve and for how long an answer's addresses stay reachable.
//
// Paths come from the compiled rules.  Each rule carries its effective access
// (the compiler folds inheritance in), so a right is granted on the region of
// a rule that has it and whose nearest enclosing subtree rule does not; the
// rules beneath that lack it are listed as exceptions of that region.
// Subtree rules print as "/path/**", exact ones as "/path".
// (Line comments: the examples hold "/**", which would open a comment.)
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "policyc/access.h"
#include "policyc/fields.h"
#include "policyc/policy.h"
#include "policyc/policyc_internal.h"
#include "policyc/render_internal.h"
#include "policyc/values.h"

/* "  NOT ENFORCED (acknowledged): WHY" when `field` is one of the policy's gaps. */
static void write_gap_note(FILE *out, const struct tp_policy *policy, const char *field)
{
	const struct tp_field_info *row = tp_field_find(field);

	if (tp_policy_has_gap(policy, field))
		fprintf(out, "  NOT ENFORCED (acknowledged): %s\n", row ? row->mechanism : field);
}

/* ---- path regions ---------------------------------------------------------- */

static bool grants(const struct tp_path_rule *rules, ssize_t i, uint32_t bit)
{
	return i >= 0 && (rules[i].access & bit);
}

/* The top rule of the region that grants `bit` and holds rule `i`. */
static size_t region_top(const ssize_t *parent, const struct tp_path_rule *rules, size_t i,
			 uint32_t bit)
{
	while (grants(rules, parent[i], bit))
		i = (size_t)parent[i];
	return i;
}

/* A rule beneath a granting region that lacks the right, by position in sorted order. */
struct region_exception {
	size_t top_pos;		/* the region's top rule */
	size_t pos;
};

static int region_exception_cmp(const void *a, const void *b)
{
	const struct region_exception *ea = a, *eb = b;

	if (ea->top_pos != eb->top_pos)
		return ea->top_pos < eb->top_pos ? -1 : 1;
	return (ea->pos > eb->pos) - (ea->pos < eb->pos);
}

/* Everything the regions of every right are computed from, built once. */
struct region_index {
	struct tp_rule_index rules;
	ssize_t *parent;	/* by rule index: the nearest enclosing subtree rule */
	size_t *pos;		/* by rule index: its position in sorted order */
};

static void region_index_free(struct region_index *ri)
{
	tp_rule_index_free(&ri->rules);
	free(ri->parent);
	free(ri->pos);
}

static int region_index_init(struct region_index *ri, const struct tp_policy *policy)
{
	int r;

	*ri = (struct region_index){ 0 };
	r = tp_rule_index_init(&ri->rules, policy);
	if (r < 0)
		return r;
	ri->parent = calloc(ri->rules.count ? ri->rules.count : 1, sizeof(*ri->parent));
	ri->pos = calloc(ri->rules.count ? ri->rules.count : 1, sizeof(*ri->pos));
	if (!ri->parent || !ri->pos) {
		region_index_free(ri);
		return -ENOMEM;
	}
	for (size_t k = 0; k < ri->rules.count; k++)
		ri->pos[ri->rules.order[k]] = k;
	for (size_t i = 0; i < ri->rules.count; i++)
		ri->parent[i] = tp_rule_index_parent(&ri->rules, i);
	return 0;
}

void tp_grant_regions_free(struct tp_grant_regions *regions)
{
	if (!regions)
		return;
	free(regions->items);
	free(regions->storage);
	*regions = (struct tp_grant_regions){ 0 };
}

/* The regions granting `bit`, in path order, each with its exceptions in path order. */
static int regions_from_index(const struct region_index *ri, uint32_t bit,
			      struct tp_grant_regions *out)
{
	const struct tp_rule_index *index = &ri->rules;
	const struct tp_path_rule *rules = index->rules;
	_cleanup_free_ struct region_exception *exceptions = NULL;
	struct tp_grant_regions regions = { 0 };
	size_t exception_count = 0, cursor = 0;

	exceptions = calloc(index->count ? index->count : 1, sizeof(*exceptions));
	regions.items = calloc(index->count ? index->count : 1, sizeof(*regions.items));
	regions.storage = calloc(index->count ? index->count : 1, sizeof(*regions.storage));
	if (!exceptions || !regions.items || !regions.storage) {
		tp_grant_regions_free(&regions);
		return -ENOMEM;
	}
	for (size_t k = 0; k < index->count; k++) {
		size_t i = index->order[k];

		if (grants(rules, (ssize_t)i, bit) || !grants(rules, ri->parent[i], bit))
			continue;
		exceptions[exception_count].top_pos =
			ri->pos[region_top(ri->parent, rules, (size_t)ri->parent[i], bit)];
		exceptions[exception_count++].pos = k;
	}
	qsort(exceptions, exception_count, sizeof(*exceptions), region_exception_cmp);

	for (size_t k = 0; k < index->count; k++) {
		size_t top = index->order[k];
		struct tp_grant_region *region;

		if (!grants(rules, (ssize_t)top, bit) || grants(rules, ri->parent[top], bit))
			continue;
		region = &regions.items[regions.count++];
		region->top = &rules[top];
		region->except = &regions.storage[cursor];
		for (; cursor < exception_count && exceptions[cursor].top_pos == k; cursor++)
			region->except[region->except_count++] =
				&rules[index->order[exceptions[cursor].pos]];
	}
	*out = regions;
	return 0;
}

int tp_grant_regions(const struct tp_policy *policy, uint32_t right, struct tp_grant_regions *out)
{
	struct region_index ri;
	int r;

	if (!policy || !out || __builtin_popcount(right) != 1 || !(right & TETHER_ACCESS_ALL))
		return -EINVAL;
	r = region_index_init(&ri, policy);
	if (r < 0)
		return r;
	r = regions_from_index(&ri, right, out);
	region_index_free(&ri);
	return r;
}

/* "TITLE:" and one line per region granting `bit`, with its exceptions. */
static int write_paths(FILE *out, const struct tp_policy *policy, const struct region_index *ri,
		       uint32_t bit, const char *title)
{
	struct tp_grant_regions regions;
	int r;

	r = regions_from_index(ri, bit, &regions);
	if (r < 0)
		return r;
	fprintf(out, "%s:\n", title);
	for (size_t k = 0; k < regions.count; k++) {
		const struct tp_grant_region *region = &regions.items[k];

		fputs("  ", out);
		tp_write_rule_path(out, region->top->path, region->top->kind == TP_PATH_SUBTREE);
		for (size_t e = 0; e < region->except_count; e++) {
			fputs(e == 0 ? ", except " : ", ", out);
			tp_write_rule_path(out, region->except[e]->path,
					   region->except[e]->kind == TP_PATH_SUBTREE);
		}
		fputc('\n', out);
	}
	if (regions.count == 0)
		fputs("  nothing\n", out);
	tp_grant_regions_free(&regions);
	/* The runtime adds these (policyc/path.c); the policy re-opens one only by name. */
	if (bit == TETHER_ACCESS_READ)
		fputs("  never the built-in protected paths (/etc/shadow, /root, /home, ...) unless "
		      "named\n", out);
	/* Audit mode turns these two rights' denials into records, not the others'. */
	if (policy->mode == TP_MODE_AUDIT && bit == TETHER_ACCESS_READ)
		fputs("  audit mode: what these rules deny is read too, and recorded (would_deny)\n",
		      out);
	if (policy->mode == TP_MODE_AUDIT && bit == TETHER_ACCESS_EXEC)
		fputs("  audit mode: what these rules deny is executed too, and recorded "
		      "(would_deny)\n", out);
	return 0;
}

static int write_filesystem(FILE *out, const struct tp_policy *policy)
{
	const struct tp_access_right *rights = tp_access_rights;
	struct region_index ri;
	int r;

	r = region_index_init(&ri, policy);
	if (r < 0)
		return r;
	for (size_t b = 0; b < TP_ACCESS_RIGHT_COUNT; b++) {
		r = write_paths(out, policy, &ri, rights[b].bit, rights[b].heading);
		if (r < 0)
			goto out;
		/* Exact write grants matter most: they also grant beneath. */
		if (rights[b].bit == TETHER_ACCESS_WRITE)
			write_gap_note(out, policy, "filesystem.exact_paths");
	}
	/* runtime/run/scratch.c mounts these in the run's own namespaces */
	fprintf(out, "private to the run (fresh, empty, gone when it ends): /tmp and /var/tmp "
		"(read, write%s), /dev/shm, /dev/mqueue, its home " "/run/tether/home, "
		"SysV IPC; the workspace and inputs keep their paths there\n",
		policy->flags & TP_POLICY_TMP_EXEC ? ", execute: @tmp" : "; never executable");
	if (policy->abstract_socket_count) {
		fputs("may connect to abstract unix sockets:\n", out);
		for (size_t i = 0; i < policy->abstract_socket_count; i++) {
			fputs("  @", out);
			tp_write_escaped(out, policy->abstract_sockets[i]);
			fputc('\n', out);
		}
	}
	r = 0;
out:
	region_index_free(&ri);
	return r;
}

/* ---- identity and environment ---------------------------------------------- */

/*
 * Who the run is.  uid or gid 0 are said plainly: such a run owns root's
 * files (or has root's group), which matters wherever a rule lets it write,
 * even though it has no capability.
 */
static void write_identity(FILE *out, const struct tp_policy *policy)
{
	fprintf(out, "runs as: uid %" PRIu32 "%s, gid %" PRIu32 ", no supplementary groups, "
		"no capabilities\n", policy->uid, policy->uid == TP_DEFAULT_ID ? " (nobody)" : "",
		policy->gid);
	if (policy->uid == 0)
		fputs("  uid 0: the run owns root's files and may read and change them as their "
		      "owner wherever its rules allow, but it has no capabilities\n", out);
	if (policy->gid == 0)
		fputs("  gid 0: the run has the access of root's group to files wherever its rules "
		      "allow\n", out);
}

/* One line: what passes from the controller's environment, and what tether sets. */
static void write_environment(FILE *out, const struct tp_policy *policy)
{
	bool home_listed = false;
	size_t defaults = 0;

	fputs("environment: ", out);
	for (const char *const *n = tp_env_default_names; *n; n++, defaults++)
		fprintf(out, "%s%s", defaults ? ", " : "", *n);
	for (size_t i = 0; i < policy->env_name_count; i++) {
		fputs(i + 1 == policy->env_name_count ? " and " : ", ", out);
		tp_write_escaped(out, policy->env_names[i]);
	}
	fputs(" when the controller has them; ", out);
	for (const char *const *n = tp_env_reserved_names; *n; n++)
		fprintf(out, "%s%s", n == tp_env_reserved_names ? "" : ", ", *n);
	/* HOME is the run's own unless listed (then it is the controller's). */
	for (size_t i = 0; i < policy->env_name_count && !home_listed; i++)
		home_listed = strcmp(policy->env_names[i], "HOME") == 0;
	fputs(home_listed ? " set by tether" : " set by tether, and HOME to the run's private home", out);
	fputs("; nothing else\n", out);
}

/* ---- network -------------------------------------------------------------- */

/*
 * The destinations, then what the default (deny) leaves: the kernel refuses
 * every destination no rule lists, loopback and link-local included, and
 * drops ICMP; DNS goes to the run's proxy, which answers listed names only.
 */
static void write_network(FILE *out, const struct tp_policy *policy)
{
	bool any = policy->host_rule_count + policy->net_rule_count > 0;
	char ttl_min[TP_DURATION_TEXT_MAX], ttl_max[TP_DURATION_TEXT_MAX];

	fputs("may reach:\n", out);
	for (size_t i = 0; i < policy->host_rule_count; i++) {
		fputs("  ", out);
		tp_write_host_rule(out, &policy->host_rules[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < policy->net_rule_count; i++) {
		fputs("  ", out);
		tp_write_net_rule(out, &policy->net_rules[i]);
		fputc('\n', out);
	}
	fprintf(out, "  %s: every %sdestination is refused, loopback and link-local included, "
		"and no ICMP is sent\n", any ? "nothing else" : "nothing", any ? "other " : "");
	if (policy->host_rule_count) {
		tp_format_duration((uint64_t)policy->dns_ttl_min_s * 1000, ttl_min);
		tp_format_duration((uint64_t)policy->dns_ttl_max_s * 1000, ttl_max);
		fprintf(out, "  names: only the names above resolve (the run's DNS proxy refuses "
			"others); an answer's addresses are reachable on that name's ports until "
			"its TTL, held within %s..%s, ends\n", ttl_min, ttl_max);
	} else {
		fputs("  names: none resolve: the run's DNS proxy refuses every name\n", out);
	}
	if (policy->method_count) {
		fputs("  HTTP methods: ", out);
		tp_write_escaped_list(out, policy->methods, policy->method_count);
		fputc('\n', out);
		write_gap_note(out, policy, "network_egress.methods");
	}
}

/* ---- limits ----------------------------------------------------------------- */

/* "lease: 15m (not enforced)", "memory: unlimited". */
static void write_limit(FILE *out, const struct tp_policy *policy, enum tp_limit limit)
{
	uint64_t value = policy->limits[limit];
	char text[TP_LIMIT_TEXT_MAX];

	tp_format_limit(limit, value, text);
	fprintf(out, "  %s: %s%s\n", tp_limits[limit].label, text,
		value && tp_policy_has_gap(policy, tp_limits[limit].row.field) ? " (not enforced)"
									       : "");
}

/* ---- lifetime ---------------------------------------------------------------- */

static const char *not_enforced(const struct tp_policy *policy, const char *field)
{
	return tp_policy_has_gap(policy, field) ? " (not enforced)" : "";
}

static void write_leaves_behind(FILE *out, const struct tp_policy *policy)
{
	uint32_t flags = policy->flags;

	fputs("leaves behind:\n", out);
	fputs("  workspace ", out);
	tp_write_escaped(out, policy->workspace ? policy->workspace : "(none)");
	fprintf(out, ": %s%s\n",
		policy->lifetime == TP_LIFETIME_ONE_RUN ? "deleted when the run ends"
							 : "kept after the run",
		not_enforced(policy, "workspace_lifetime"));

	/* Where the workspace starts decides what earlier runs left in it. */
	fputs("  starts from: ", out);
	switch (policy->workspace_mode) {
	case TP_WORKSPACE_EXISTING:
		fputs("the directory as it is", out);
		break;
	case TP_WORKSPACE_FRESH:
		fputs("an empty directory", out);
		break;
	case TP_WORKSPACE_FRESH_OVERLAY:
		fputs("an overlay of ", out);
		tp_write_escaped(out,
				 policy->workspace_source ? policy->workspace_source : "(none)");
		if (policy->workspace_ref)
			fprintf(out, " at commit %s", policy->workspace_ref);
		break;
	default:
		fprintf(out, "unknown mode %" PRIu32, policy->workspace_mode);
		break;
	}
	fputc('\n', out);

	fputs("  artifacts: ", out);
	if (policy->artifact_count == 0)
		fputs("none", out);
	tp_write_escaped_list(out, policy->artifacts, policy->artifact_count);
	if ((flags & TP_POLICY_ARTIFACTS_SCAN) && (flags & TP_POLICY_ARTIFACTS_HASH))
		fputs(", scanned and hashed", out);
	else if (flags & (TP_POLICY_ARTIFACTS_SCAN | TP_POLICY_ARTIFACTS_HASH))
		fputs(flags & TP_POLICY_ARTIFACTS_SCAN ? ", scanned" : ", hashed", out);
	fprintf(out, "%s\n", not_enforced(policy, "artifacts"));

	fprintf(out, "  processes: %s\n",
		flags & TP_POLICY_VERIFY_PROCESS_TREE
			? "the run's cgroup is killed and verified empty"
			: "the run's cgroup is killed, not verified empty");
	fprintf(out, "  credentials: %s%s\n",
		flags & TP_POLICY_REVOKE_CREDENTIALS ? "revoked when the run ends" : "not revoked",
		not_enforced(policy, "cleanup.revoke_credentials"));
	write_limit(out, policy, TP_LIMIT_LEASE_MS);
}

int tp_explain_write(const struct tp_policy *policy, FILE *out)
{
	int r;

	if (!policy || !out)
		return -EINVAL;

	/* What audit mode relaxes, and what it does not: the envelope's author must know both. */
	if (policy->mode == TP_MODE_AUDIT)
		fputs("mode: audit: the reads and execs a path rule would deny are allowed and "
		      "recorded (decision would_deny); writes and unix connections outside the "
		      "rules, the protected paths, the network and what no rule can grant stay "
		      "denied\n", out);
	write_identity(out, policy);
	write_environment(out, policy);
	r = write_filesystem(out, policy);
	if (r < 0)
		return r;
	write_network(out, policy);

	fputs("may consume:\n", out);
	for (int i = 0; i < TP_LIMIT_COUNT; i++)
		if (i != TP_LIMIT_LEASE_MS)
			write_limit(out, policy, (enum tp_limit)i);

	write_leaves_behind(out, policy);

	fputs("not enforced by this version (acknowledged):", out);
	if (policy->gap_count == 0)
		fputs(" nothing", out);
	fputc('\n', out);
	for (size_t i = 0; i < policy->gap_count; i++) {
		const struct tp_field_info *row = tp_field_find(policy->gaps[i]);

		fputs("  ", out);
		tp_write_escaped(out, policy->gaps[i]);
		fprintf(out, ": %s\n", row ? row->mechanism : "not a field of this version");
	}

	/* stdio reports a failed write only through the stream's error flag. */
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
