// SPDX-License-Identifier: GPL-2.0
//
// Semantic diff of two compiled policies: every change of authority from
// `old` to `new`, as one line each, widenings first, then narrowings, then
// neutral changes; within each group in a fixed order (mode, identity,
// environment, paths by path bytes, destinations, methods, DNS, limits, gaps, flags,
// workspace, artifacts, inputs, audit, metadata):
//
//   widened: write on /ws/src/** (was: read)
//   widened: may reach api.github.com:443
//   widened: resources.cpu unlimited (was: 2)
//   widened: acknowledged gap: network_egress.methods
//   narrowed: execute on /tmp/run/** (now: read and write)
//   changed: identity.tenant beta (was: acme)
//
// or "no change in authority" (followed by any neutral changes) when nothing
// widened or narrowed.  Policies are compared by meaning, not by bytes:
//
//   paths         the effective access at every rule path of either policy:
//                 the longest rule that matches, on component boundaries; a
//                 subtree rule "/a/**" matches /a and everything beneath, an
//                 exact rule only its own path.  Each path is evaluated on
//                 itself and, when either policy has a subtree rule there, on
//                 what lies beneath it; the access function is constant
//                 between those points, so no change can hide between them.
//                 This version's kernel holds every rule as a subtree
//                 (filesystem.exact_paths): there an exact rule covers what
//                 lies beneath it too, and a carve-out below an exact grant
//                 is what keeps that grant from reaching it.  Each path is
//                 evaluated that way as well, as a subtree (in the kernel's
//                 view access changes only at rule paths); a change that
//                 shows there but not in the model's view at that path is
//                 reported with its own marker:
//
//   widened: read and write on /ws/a/secrets/** (was: nothing) [as enforced
//     by this version: exact rules cover what is beneath them]
//
//                 (one line).  A change in both views is reported once, in
//                 the model's words.
//   destinations  a destination of `new` that no single destination of `old`
//                 covers is a widening (and the reverse a narrowing); covering
//                 means same host, or "*.x" over any name below x, or CIDR
//                 containment, and port range containment and a protocol
//                 subset.  Coverage by a union of several old destinations is
//                 not recognised: that errs towards reporting a widening.
//   limits        unset is unlimited: larger or removed widens.
//   gaps          a newly acknowledged gap widens (the run gets a restriction
//                 it asks for less); a gap that goes away is neutral, because
//                 the field it belonged to may simply be gone.
//   identity      any change of uid or gid widens: a reviewer must look.
//   environment   a variable name added widens (the run gets the controller's
//                 value), one removed narrows.
//   DNS           upstreams and TTL bounds: "changed".  The run's DNS proxy
//                 asks the upstreams, not the run, and admits the answers of
//                 listed names only, so which names, addresses and ports the
//                 run may reach is the destinations' to say; the TTL bounds
//                 only decide how long an answer's addresses stay admitted.
//   metadata      tenant, run_id, runtime_revision, image_digest, workspace
//                 path and source, audit sink: "changed".
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/access.h"
#include "policyc/policy.h"
#include "policyc/policyc_internal.h"
#include "policyc/render_internal.h"
#include "policyc/values.h"

/* ---- output ------------------------------------------------------------------ */

enum change_kind { WIDENED, NARROWED, CHANGED, CHANGE_KIND_COUNT };

static const char *const change_prefix[CHANGE_KIND_COUNT] = {
	[WIDENED] = "widened: ",
	[NARROWED] = "narrowed: ",
	[CHANGED] = "changed: ",
};

/* One memory stream per group, so lines can be produced in one pass and
 * written group by group. */
struct diff {
	FILE *group[CHANGE_KIND_COUNT];
	char *text[CHANGE_KIND_COUNT];
	size_t len[CHANGE_KIND_COUNT];
	size_t lines[CHANGE_KIND_COUNT];
};

/* Starts a line of group `kind`; the caller writes the rest and the '\n'. */
static FILE *line(struct diff *diff, enum change_kind kind)
{
	diff->lines[kind]++;
	fputs(change_prefix[kind], diff->group[kind]);
	return diff->group[kind];
}

static void write_text_or(FILE *out, const char *text, const char *none)
{
	if (text)
		tp_write_escaped(out, text);
	else
		fputs(none, out);
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Either way a list of names or patterns is compared: does `outer` cover `inner`? */
typedef bool text_covers_fn(const char *outer, const char *inner);

/* "KIND: WHAT ITEM" for each item that no entry of `by` covers. */
static void diff_uncovered(struct diff *diff, enum change_kind kind, const char *what,
			   char *const *items, size_t count, char *const *by, size_t by_count,
			   text_covers_fn *covers)
{
	for (size_t i = 0; i < count; i++) {
		bool covered = false;
		FILE *out;

		for (size_t j = 0; j < by_count && !covered; j++)
			covered = covers(by[j], items[i]);
		if (covered)
			continue;
		out = line(diff, kind);
		fputs(what, out);
		tp_write_escaped(out, items[i]);
		fputc('\n', out);
	}
}

static bool text_equal(const char *outer, const char *inner)
{
	return strcmp(outer, inner) == 0;
}

/* "changed: KEY NEW (was: OLD)" when the two differ; NULL is written as `none`. */
static void diff_text(struct diff *diff, const char *key, const char *old_text,
		      const char *new_text, const char *none)
{
	FILE *out;

	if (str_eq(old_text, new_text))
		return;
	out = line(diff, CHANGED);
	fprintf(out, "%s ", key);
	write_text_or(out, new_text, none);
	fputs(" (was: ", out);
	write_text_or(out, old_text, none);
	fputs(")\n", out);
}

/* ---- paths -------------------------------------------------------------------- */

/* Access of what lies beneath `path`: the longest subtree rule at `path` or
 * above it, on component boundaries; nothing when no rule matches. */
static uint32_t access_below(const struct tp_rule_index *index, const char *path)
{
	ssize_t rule = tp_rule_index_enclosing(index, path, strlen(path));

	return rule >= 0 ? index->rules[rule].access : 0;
}

/* Access of `path` itself: an exact rule there, else as what lies beneath. */
static uint32_t access_self(const struct tp_rule_index *index, const char *path)
{
	ssize_t rule = tp_rule_index_find(index, path, strlen(path), TP_PATH_EXACT);

	return rule >= 0 ? index->rules[rule].access : access_below(index, path);
}

static void write_access(FILE *out, uint32_t access)
{
	unsigned int count = 0, total = 0;

	for (int i = 0; i < TP_ACCESS_RIGHT_COUNT; i++)
		total += !!(access & tp_access_rights[i].bit);
	if (total == 0) {
		fputs("nothing", out);
		return;
	}
	/* "read", "read and write", "read, write and execute" */
	for (int i = 0; i < TP_ACCESS_RIGHT_COUNT; i++) {
		if (!(access & tp_access_rights[i].bit))
			continue;
		if (count > 0)
			fputs(count + 1 == total ? " and " : ", ", out);
		fputs(tp_access_rights[i].verb, out);
		count++;
	}
}

enum path_scope {
	SCOPE_SUBTREE,	// "on /a/**": the path and all beneath
	SCOPE_SELF,	/* "on /a" */
	SCOPE_BELOW,	/* "below /a": beneath, not the path itself */
};

static void write_scoped_path(FILE *out, const char *path, enum path_scope scope)
{
	fputs(scope == SCOPE_BELOW ? "below " : "on ", out);
	tp_write_rule_path(out, path, scope == SCOPE_SUBTREE);
}

/* Marks a change that only the kernel's view of the rules shows. */
static const char kernel_note[] =
	" [as enforced by this version: exact rules cover what is beneath them]";

/* "KIND: RIGHTS on PATH (WHEN: ACCESS)NOTE", WHEN being "was" or "now", NOTE
 * empty or kernel_note. */
static void access_line(struct diff *diff, enum change_kind kind, uint32_t rights,
			const char *path, enum path_scope scope, const char *when, uint32_t access,
			const char *note)
{
	FILE *out = line(diff, kind);

	write_access(out, rights);
	fputc(' ', out);
	write_scoped_path(out, path, scope);
	fprintf(out, " (%s: ", when);
	write_access(out, access);
	fprintf(out, ")%s\n", note);
}

/* The rights one path's lines have reported added and removed so far. */
struct access_change {
	uint32_t added;
	uint32_t removed;
};

/*
 * Lines for the rights gained and lost from `old_access` to `new_access`,
 * less those already in `reported`, which gains them.  `note` is "" or
 * kernel_note.
 */
static void diff_access(struct diff *diff, const char *path, enum path_scope scope,
			uint32_t old_access, uint32_t new_access, struct access_change *reported,
			const char *note)
{
	uint32_t added = new_access & ~old_access & TETHER_ACCESS_ALL & ~reported->added;
	uint32_t removed = old_access & ~new_access & TETHER_ACCESS_ALL & ~reported->removed;

	if (added)
		access_line(diff, WIDENED, added, path, scope, "was", old_access, note);
	if (removed)
		access_line(diff, NARROWED, removed, path, scope, "now", new_access, note);
	reported->added |= added;
	reported->removed |= removed;
}

/* Access of `path` and what lies beneath it as this version's kernel sees
 * it: the nearest rule of either kind at `path` or above it. */
static uint32_t access_kernel(const struct tp_rule_index *index, const char *path)
{
	ssize_t rule = tp_rule_index_kernel_match(index, path, strlen(path));

	return rule >= 0 ? index->rules[rule].access : 0;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int diff_paths(struct diff *diff, const struct tp_policy *old_policy,
		      const struct tp_policy *new_policy)
{
	struct tp_rule_index old_index = { 0 }, new_index = { 0 };
	_cleanup_free_ const char **paths = NULL;
	size_t path_count = 0, total;
	int r;

	total = old_policy->path_rule_count + new_policy->path_rule_count;
	paths = calloc(total ? total : 1, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	for (size_t i = 0; i < old_policy->path_rule_count; i++)
		paths[path_count++] = old_policy->path_rules[i].path;
	for (size_t i = 0; i < new_policy->path_rule_count; i++)
		paths[path_count++] = new_policy->path_rules[i].path;
	qsort(paths, path_count, sizeof(*paths), path_cmp);

	r = tp_rule_index_init(&old_index, old_policy);
	if (r < 0)
		goto out;
	r = tp_rule_index_init(&new_index, new_policy);
	if (r < 0)
		goto out;

	for (size_t i = 0; i < path_count; i++) {
		const char *path = paths[i];
		size_t len = strlen(path);
		struct access_change reported = { 0 };
		uint32_t old_self, new_self, old_below, new_below;

		if (i > 0 && strcmp(paths[i - 1], path) == 0)
			continue;
		old_self = access_self(&old_index, path);
		new_self = access_self(&new_index, path);
		if (tp_rule_index_find(&old_index, path, len, TP_PATH_SUBTREE) < 0 &&
		    tp_rule_index_find(&new_index, path, len, TP_PATH_SUBTREE) < 0) {
			diff_access(diff, path, SCOPE_SELF, old_self, new_self, &reported, "");
		} else {
			old_below = access_below(&old_index, path);
			new_below = access_below(&new_index, path);
			if (old_self == old_below && new_self == new_below) {
				diff_access(diff, path, SCOPE_SUBTREE, old_self, new_self,
					    &reported, "");
			} else {
				diff_access(diff, path, SCOPE_SELF, old_self, new_self,
					    &reported, "");
				diff_access(diff, path, SCOPE_BELOW, old_below, new_below,
					    &reported, "");
			}
		}
		/*
		 * What the kernel enforces: without exact rules it is the model's
		 * view, and every right it adds or removes here was reported above.
		 */
		diff_access(diff, path, SCOPE_SUBTREE, access_kernel(&old_index, path),
			    access_kernel(&new_index, path), &reported, kernel_note);
	}
	r = 0;
out:
	tp_rule_index_free(&old_index);
	tp_rule_index_free(&new_index);
	return r;
}

/* ---- destinations ------------------------------------------------------------ */

static bool ports_protocols_cover(uint16_t outer_min, uint16_t outer_max, uint8_t outer_protocols,
				  uint16_t inner_min, uint16_t inner_max, uint8_t inner_protocols)
{
	return outer_min <= inner_min && inner_max <= outer_max &&
	       (inner_protocols & ~outer_protocols) == 0;
}

/* "*.x" covers every name below x ("a.x", "*.a.x"), not x itself. */
static bool host_covers(const struct tp_host_rule *outer, const struct tp_host_rule *inner)
{
	if (strcmp(outer->name, inner->name) != 0) {
		size_t outer_len = strlen(outer->name), inner_len = strlen(inner->name);
		const char *suffix = outer->name + 1;	/* ".x" */

		if (strncmp(outer->name, "*.", 2) != 0 || inner_len <= outer_len - 1 ||
		    strcmp(inner->name + inner_len - (outer_len - 1), suffix) != 0)
			return false;
	}
	return ports_protocols_cover(outer->port_min, outer->port_max, outer->protocols,
				     inner->port_min, inner->port_max, inner->protocols);
}

static bool net_covers(const struct tp_net_rule *outer, const struct tp_net_rule *inner)
{
	unsigned int bits = outer->prefixlen, whole = bits / 8, rest = bits % 8;

	if (outer->prefixlen > inner->prefixlen || bits > 128)
		return false;
	if (memcmp(outer->addr, inner->addr, whole) != 0)
		return false;
	if (rest && ((outer->addr[whole] ^ inner->addr[whole]) & (0xff00 >> rest) & 0xff))
		return false;
	return ports_protocols_cover(outer->port_min, outer->port_max, outer->protocols,
				     inner->port_min, inner->port_max, inner->protocols);
}

static bool host_covered(const struct tp_policy *by, const struct tp_host_rule *host)
{
	for (size_t i = 0; i < by->host_rule_count; i++)
		if (host_covers(&by->host_rules[i], host))
			return true;
	return false;
}

static bool net_covered(const struct tp_policy *by, const struct tp_net_rule *net)
{
	for (size_t i = 0; i < by->net_rule_count; i++)
		if (net_covers(&by->net_rules[i], net))
			return true;
	return false;
}

/* "KIND: WHAT DESTINATION" for each destination of `from` that no single
 * destination of `by` covers. */
static void diff_destinations_from(struct diff *diff, enum change_kind kind, const char *what,
				   const struct tp_policy *from, const struct tp_policy *by)
{
	FILE *out;

	for (size_t i = 0; i < from->host_rule_count; i++) {
		if (host_covered(by, &from->host_rules[i]))
			continue;
		out = line(diff, kind);
		fputs(what, out);
		tp_write_host_rule(out, &from->host_rules[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < from->net_rule_count; i++) {
		if (net_covered(by, &from->net_rules[i]))
			continue;
		out = line(diff, kind);
		fputs(what, out);
		tp_write_net_rule(out, &from->net_rules[i]);
		fputc('\n', out);
	}
}

static void diff_destinations(struct diff *diff, const struct tp_policy *old_policy,
			      const struct tp_policy *new_policy)
{
	diff_destinations_from(diff, WIDENED, "may reach ", new_policy, old_policy);
	diff_destinations_from(diff, NARROWED, "may no longer reach ", old_policy, new_policy);
}

static void diff_abstract_sockets(struct diff *diff, const struct tp_policy *old_policy,
				  const struct tp_policy *new_policy)
{
	diff_uncovered(diff, WIDENED, "may connect to abstract unix socket @",
		       new_policy->abstract_sockets, new_policy->abstract_socket_count,
		       old_policy->abstract_sockets, old_policy->abstract_socket_count, text_equal);
	diff_uncovered(diff, NARROWED, "may no longer connect to abstract unix socket @",
		       old_policy->abstract_sockets, old_policy->abstract_socket_count,
		       new_policy->abstract_sockets, new_policy->abstract_socket_count, text_equal);
}

/* No methods listed: any method. */
static void diff_methods(struct diff *diff, const struct tp_policy *old_policy,
			 const struct tp_policy *new_policy)
{
	FILE *out;

	if (old_policy->method_count == 0 && new_policy->method_count == 0)
		return;
	if (old_policy->method_count == 0 || new_policy->method_count == 0) {
		bool widened = new_policy->method_count == 0;
		const struct tp_policy *limited = widened ? old_policy : new_policy;

		out = line(diff, widened ? WIDENED : NARROWED);
		fputs(widened ? "any HTTP method (was: " : "HTTP methods limited to ", out);
		tp_write_escaped_list(out, limited->methods, limited->method_count);
		fputs(widened ? ")\n" : " (was: any)\n", out);
		return;
	}
	diff_uncovered(diff, WIDENED, "may use HTTP method ", new_policy->methods,
		       new_policy->method_count, old_policy->methods, old_policy->method_count,
		       text_equal);
	diff_uncovered(diff, NARROWED, "may no longer use HTTP method ", old_policy->methods,
		       old_policy->method_count, new_policy->methods, new_policy->method_count,
		       text_equal);
}

static void write_endpoints(FILE *out, const struct tp_policy *policy)
{
	if (policy->dns_upstream_count == 0)
		fputs("none", out);
	for (size_t i = 0; i < policy->dns_upstream_count; i++) {
		const struct tp_endpoint *endpoint = &policy->dns_upstreams[i];
		char addr[TP_CIDR_TEXT_MAX];

		tp_format_cidr(endpoint->addr, 128, addr);
		fprintf(out, strchr(addr, ':') ? "%s[%s]:%u" : "%s%s:%u", i ? ", " : "", addr,
			endpoint->port);
	}
}

static bool endpoints_equal(const struct tp_policy *a, const struct tp_policy *b)
{
	if (a->dns_upstream_count != b->dns_upstream_count)
		return false;
	for (size_t i = 0; i < a->dns_upstream_count; i++)
		if (memcmp(a->dns_upstreams[i].addr, b->dns_upstreams[i].addr, 16) != 0 ||
		    a->dns_upstreams[i].port != b->dns_upstreams[i].port)
			return false;
	return true;
}

static void diff_dns(struct diff *diff, const struct tp_policy *old_policy,
		     const struct tp_policy *new_policy)
{
	static const char *const keys[] = { "network_egress.dns.min_ttl",
					    "network_egress.dns.max_ttl" };
	const uint32_t old_ttl[] = { old_policy->dns_ttl_min_s, old_policy->dns_ttl_max_s };
	const uint32_t new_ttl[] = { new_policy->dns_ttl_min_s, new_policy->dns_ttl_max_s };
	FILE *out;

	if (!endpoints_equal(old_policy, new_policy)) {
		out = line(diff, CHANGED);
		fputs("network_egress.dns.upstream ", out);
		write_endpoints(out, new_policy);
		fputs(" (was: ", out);
		write_endpoints(out, old_policy);
		fputs(")\n", out);
	}
	for (int i = 0; i < 2; i++) {
		char old_text[TP_DURATION_TEXT_MAX], new_text[TP_DURATION_TEXT_MAX];

		if (old_ttl[i] == new_ttl[i])
			continue;
		tp_format_duration((uint64_t)old_ttl[i] * 1000, old_text);
		tp_format_duration((uint64_t)new_ttl[i] * 1000, new_text);
		fprintf(line(diff, CHANGED), "%s %s (was: %s)\n", keys[i], new_text, old_text);
	}
}

/* ---- limits -------------------------------------------------------------------- */

static void diff_limits(struct diff *diff, const struct tp_policy *old_policy,
			const struct tp_policy *new_policy)
{
	for (int i = 0; i < TP_LIMIT_COUNT; i++) {
		uint64_t old_value = old_policy->limits[i], new_value = new_policy->limits[i];
		char old_text[TP_LIMIT_TEXT_MAX], new_text[TP_LIMIT_TEXT_MAX];
		bool widened;

		if (old_value == new_value)
			continue;
		/* 0 is unlimited: removing a limit widens. */
		widened = new_value == 0 || (old_value != 0 && new_value > old_value);
		tp_format_limit((enum tp_limit)i, old_value, old_text);
		tp_format_limit((enum tp_limit)i, new_value, new_text);
		fprintf(line(diff, widened ? WIDENED : NARROWED), "%s %s (was: %s)\n",
			tp_limits[i].row.field, new_text, old_text);
	}
}

/* ---- gaps, identity, flags, lifetime -------------------------------------------- */

static void diff_gaps(struct diff *diff, const struct tp_policy *old_policy,
		      const struct tp_policy *new_policy)
{
	diff_uncovered(diff, WIDENED, "acknowledged gap: ", new_policy->gaps, new_policy->gap_count,
		       old_policy->gaps, old_policy->gap_count, text_equal);
	diff_uncovered(diff, CHANGED, "no longer an acknowledged gap: ", old_policy->gaps,
		       old_policy->gap_count, new_policy->gaps, new_policy->gap_count, text_equal);
}

/* Who the run is decides what it can reach outside every rule: any change widens. */
static void diff_identity(struct diff *diff, const struct tp_policy *old_policy,
			  const struct tp_policy *new_policy)
{
	if (old_policy->uid != new_policy->uid)
		fprintf(line(diff, WIDENED), "identity.uid %" PRIu32 " (was: %" PRIu32 ")\n",
			new_policy->uid, old_policy->uid);
	if (old_policy->gid != new_policy->gid)
		fprintf(line(diff, WIDENED), "identity.gid %" PRIu32 " (was: %" PRIu32 ")\n",
			new_policy->gid, old_policy->gid);
}

/* A variable the run gets from the controller is authority it did not have. */
static void diff_environment(struct diff *diff, const struct tp_policy *old_policy,
			     const struct tp_policy *new_policy)
{
	diff_uncovered(diff, WIDENED, "may get environment variable ", new_policy->env_names,
		       new_policy->env_name_count, old_policy->env_names, old_policy->env_name_count,
		       text_equal);
	diff_uncovered(diff, NARROWED, "may no longer get environment variable ",
		       old_policy->env_names, old_policy->env_name_count, new_policy->env_names,
		       new_policy->env_name_count, text_equal);
}

static void diff_flags(struct diff *diff, const struct tp_policy *old_policy,
		       const struct tp_policy *new_policy)
{
	/* Each of these restricts or records when set: clearing it widens. */
	static const struct {
		uint32_t flag;
		const char *key;
	} flags[] = {
		{ TP_POLICY_VERIFY_PROCESS_TREE, "cleanup.verify_process_tree" },
		{ TP_POLICY_REVOKE_CREDENTIALS, "cleanup.revoke_credentials" },
		{ TP_POLICY_ARTIFACTS_SCAN, "artifacts.scan" },
		{ TP_POLICY_ARTIFACTS_HASH, "artifacts.hash" },
		{ TP_POLICY_AUDIT_FAIL_CLOSED, "audit.fail_closed" },
		{ TP_POLICY_AUDIT_RECORD_ALLOWED, "audit.record_allowed" },
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		bool old_set = old_policy->flags & flags[i].flag;
		bool new_set = new_policy->flags & flags[i].flag;

		if (old_set == new_set)
			continue;
		fprintf(line(diff, new_set ? NARROWED : WIDENED), "%s %s (was: %s)\n", flags[i].key,
			new_set ? "true" : "false", old_set ? "true" : "false");
	}
	/* this one grants: setting it widens */
	if ((old_policy->flags ^ new_policy->flags) & TP_POLICY_TMP_EXEC)
		fputs(new_policy->flags & TP_POLICY_TMP_EXEC
		      ? "may execute files in the run's private /tmp and /var/tmp (filesystem.exec @tmp)\n"
		      : "may no longer execute files in the run's private /tmp and /var/tmp "
			"(filesystem.exec @tmp)\n",
		      line(diff, new_policy->flags & TP_POLICY_TMP_EXEC ? WIDENED : NARROWED));
}

/*
 * A setting with named values, one of which (`pivot`) is the widest or the
 * narrowest there is: a change to it is `to_pivot`, a change from it the
 * opposite, any other change neutral.
 */
struct setting {
	const char *key;
	const char *const *names;	/* by value; a value without one is "unknown" */
	size_t name_count;
	uint32_t pivot;
	enum change_kind to_pivot;
};

static const char *const mode_names[] = {
	[TP_MODE_ENFORCE] = "enforce",
	[TP_MODE_AUDIT] = "audit",
};

static const char *const workspace_mode_names[] = {
	[TP_WORKSPACE_EXISTING] = "existing",
	[TP_WORKSPACE_FRESH] = "fresh",
	[TP_WORKSPACE_FRESH_OVERLAY] = "fresh_overlay",
};

static const char *const lifetime_names[] = {
	[TP_LIFETIME_PERSISTENT] = "persistent",
	[TP_LIFETIME_ONE_RUN] = "one_run",
};

/* Anything but enforce denies nothing. */
static const struct setting mode_setting = {
	"mode", mode_names, sizeof(mode_names) / sizeof(mode_names[0]), TP_MODE_ENFORCE, NARROWED,
};

/* An existing directory carries whatever earlier runs left there. */
static const struct setting workspace_mode_setting = {
	"filesystem.workspace.mode", workspace_mode_names,
	sizeof(workspace_mode_names) / sizeof(workspace_mode_names[0]), TP_WORKSPACE_EXISTING,
	WIDENED,
};

/* A persistent workspace carries what this run leaves to the next. */
static const struct setting lifetime_setting = {
	"workspace_lifetime", lifetime_names, sizeof(lifetime_names) / sizeof(lifetime_names[0]),
	TP_LIFETIME_PERSISTENT, WIDENED,
};

static const char *setting_name(const struct setting *setting, uint32_t value)
{
	if (value < setting->name_count && setting->names[value])
		return setting->names[value];
	return "unknown";
}

static void diff_setting(struct diff *diff, const struct setting *setting, uint32_t old_value,
			 uint32_t new_value)
{
	enum change_kind kind = CHANGED;

	if (old_value == new_value)
		return;
	if (new_value == setting->pivot)
		kind = setting->to_pivot;
	else if (old_value == setting->pivot)
		kind = setting->to_pivot == WIDENED ? NARROWED : WIDENED;
	fprintf(line(diff, kind), "%s %s (was: %s)\n", setting->key,
		setting_name(setting, new_value), setting_name(setting, old_value));
}

static void diff_workspace(struct diff *diff, const struct tp_policy *old_policy,
			   const struct tp_policy *new_policy)
{
	diff_setting(diff, &workspace_mode_setting, old_policy->workspace_mode,
		     new_policy->workspace_mode);
	diff_setting(diff, &lifetime_setting, old_policy->lifetime, new_policy->lifetime);
	diff_text(diff, "filesystem.workspace.path", old_policy->workspace, new_policy->workspace,
		  "none");
	diff_text(diff, "filesystem.workspace.source", old_policy->workspace_source,
		  new_policy->workspace_source, "none");
	diff_text(diff, "filesystem.workspace.ref", old_policy->workspace_ref,
		  new_policy->workspace_ref, "none");
}

/* ---- artifacts, inputs, audit, metadata ----------------------------------------- */

// Workspace-relative patterns: "**" covers all, "a/**" covers "a", "a/b", "a/b/**".
static bool artifact_covers(const char *outer, const char *inner)
{
	size_t outer_len = strlen(outer), inner_len = strlen(inner), base;

	if (strcmp(outer, inner) == 0 || strcmp(outer, "**") == 0)
		return true;
	if (outer_len < 3 || strcmp(outer + outer_len - 3, "/**") != 0)
		return false;
	base = outer_len - 3;
	if (inner_len < base || strncmp(outer, inner, base) != 0)
		return false;
	return inner[base] == '\0' || inner[base] == '/';
}

static void diff_artifacts(struct diff *diff, const struct tp_policy *old_policy,
			   const struct tp_policy *new_policy)
{
	diff_uncovered(diff, WIDENED, "artifacts may include ", new_policy->artifacts,
		       new_policy->artifact_count, old_policy->artifacts,
		       old_policy->artifact_count, artifact_covers);
	diff_uncovered(diff, NARROWED, "artifacts no longer include ", old_policy->artifacts,
		       old_policy->artifact_count, new_policy->artifacts,
		       new_policy->artifact_count, artifact_covers);
}

static const struct tp_input *find_input(const struct tp_policy *policy, const char *path)
{
	for (size_t i = 0; i < policy->input_count; i++)
		if (strcmp(policy->inputs[i].path, path) == 0)
			return &policy->inputs[i];
	return NULL;
}

static const char *input_digest_text(const struct tp_input *input, char text[TP_DIGEST_TEXT_MAX])
{
	if (!input)
		return "not an input";
	if (!input->has_digest)
		return "no digest";
	tp_digest_text(input->digest, text);
	return text;
}

/* Inputs' access is in the path rules; what is left is which paths are inputs
 * and their digests. */
static void diff_inputs(struct diff *diff, const struct tp_policy *old_policy,
			const struct tp_policy *new_policy)
{
	const struct tp_policy *sides[] = { new_policy, old_policy };

	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < sides[side]->input_count; i++) {
			const char *path = sides[side]->inputs[i].path;
			const struct tp_input *old_input = find_input(old_policy, path);
			const struct tp_input *new_input = find_input(new_policy, path);
			char old_text[TP_DIGEST_TEXT_MAX], new_text[TP_DIGEST_TEXT_MAX];
			FILE *out;

			/* Inputs in both are handled on the first side. */
			if (side == 1 && new_input)
				continue;
			if (old_input && new_input &&
			    old_input->has_digest == new_input->has_digest &&
			    (!old_input->has_digest ||
			     memcmp(old_input->digest, new_input->digest, 32) == 0))
				continue;
			out = line(diff, CHANGED);
			fputs("filesystem.inputs ", out);
			tp_write_escaped(out, path);
			fprintf(out, ": %s (was: %s)\n", input_digest_text(new_input, new_text),
				input_digest_text(old_input, old_text));
		}
	}
}

/* NULL when the policy names no image. */
static const char *image_digest_text(const struct tp_policy *policy,
				     char text[TP_DIGEST_TEXT_MAX])
{
	if (!(policy->flags & TP_POLICY_IMAGE_DIGEST))
		return NULL;
	tp_digest_text(policy->image_digest, text);
	return text;
}

static void diff_metadata(struct diff *diff, const struct tp_policy *old_policy,
			  const struct tp_policy *new_policy)
{
	char old_digest[TP_DIGEST_TEXT_MAX], new_digest[TP_DIGEST_TEXT_MAX];

	diff_text(diff, "audit.sink", old_policy->audit_sink, new_policy->audit_sink, "stderr");
	diff_text(diff, "identity.tenant", old_policy->tenant, new_policy->tenant, "not set");
	diff_text(diff, "identity.run_id", old_policy->run_id, new_policy->run_id, "not set");
	diff_text(diff, "runtime_revision", old_policy->runtime_revision,
		  new_policy->runtime_revision, "not set");
	/* Hex text: equal exactly when the digests are. */
	diff_text(diff, "image_digest", image_digest_text(old_policy, old_digest),
		  image_digest_text(new_policy, new_digest), "not set");
}

/* ---- entry point ---------------------------------------------------------------- */

/* Every comparison into diff's groups.  0 or -ENOMEM; diff_free() either way. */
static int diff_compute(struct diff *diff, const struct tp_policy *old_policy,
			const struct tp_policy *new_policy)
{
	int r = 0;

	for (int k = 0; k < CHANGE_KIND_COUNT; k++) {
		diff->group[k] = open_memstream(&diff->text[k], &diff->len[k]);
		if (!diff->group[k])
			return -ENOMEM;
	}

	diff_setting(diff, &mode_setting, old_policy->mode, new_policy->mode);
	diff_identity(diff, old_policy, new_policy);
	diff_environment(diff, old_policy, new_policy);
	r = diff_paths(diff, old_policy, new_policy);
	if (r < 0)
		return r;
	diff_destinations(diff, old_policy, new_policy);
	diff_methods(diff, old_policy, new_policy);
	diff_abstract_sockets(diff, old_policy, new_policy);
	diff_dns(diff, old_policy, new_policy);
	diff_limits(diff, old_policy, new_policy);
	diff_gaps(diff, old_policy, new_policy);
	diff_flags(diff, old_policy, new_policy);
	diff_workspace(diff, old_policy, new_policy);
	diff_artifacts(diff, old_policy, new_policy);
	diff_inputs(diff, old_policy, new_policy);
	diff_metadata(diff, old_policy, new_policy);

	/* Memory streams fail only for lack of memory, and say so at close. */
	for (int k = 0; k < CHANGE_KIND_COUNT; k++) {
		bool failed = ferror(diff->group[k]);

		if (fclose(diff->group[k]) != 0 || failed)
			r = -ENOMEM;
		diff->group[k] = NULL;
	}
	return r;
}

static void diff_free(struct diff *diff)
{
	for (int k = 0; k < CHANGE_KIND_COUNT; k++) {
		if (diff->group[k])
			fclose(diff->group[k]);
		free(diff->text[k]);
	}
}

int tp_diff_write(const struct tp_policy *old_policy, const struct tp_policy *new_policy,
		  FILE *out, bool *widened)
{
	struct diff diff = { 0 };
	int r;

	if (!old_policy || !new_policy || !out)
		return -EINVAL;
	r = diff_compute(&diff, old_policy, new_policy);
	if (r < 0)
		goto out;

	if (diff.lines[WIDENED] + diff.lines[NARROWED] == 0)
		fputs("no change in authority\n", out);
	for (int k = 0; k < CHANGE_KIND_COUNT; k++)
		fwrite(diff.text[k], 1, diff.len[k], out);
	/* stdio reports a failed write only through the stream's error flag. */
	if (fflush(out) != 0 || ferror(out)) {
		r = -EIO;
		goto out;
	}
	if (widened)
		*widened = diff.lines[WIDENED] > 0;
out:
	diff_free(&diff);
	return r;
}

void tp_changes_free(struct tp_change *changes, size_t count)
{
	for (size_t i = 0; changes && i < count; i++)
		free(changes[i].text);
	free(changes);
}

_Static_assert((int)TP_CHANGE_WIDENED == WIDENED && (int)TP_CHANGE_NARROWED == NARROWED &&
	       (int)TP_CHANGE_CHANGED == CHANGED, "a group is its change kind");

int tp_diff_changes(const struct tp_policy *old_policy, const struct tp_policy *new_policy,
		    struct tp_change **changes, size_t *count, bool *widened)
{
	struct diff diff = { 0 };
	struct tp_change *list = NULL;
	size_t n = 0, total;
	int r;

	if (!old_policy || !new_policy || !changes || !count)
		return -EINVAL;
	r = diff_compute(&diff, old_policy, new_policy);
	if (r < 0)
		goto out;
	total = diff.lines[WIDENED] + diff.lines[NARROWED] + diff.lines[CHANGED];
	list = calloc(total ? total : 1, sizeof(*list));
	if (!list) {
		r = -ENOMEM;
		goto out;
	}
	/*
	 * Each group is its lines, each "PREFIX" TEXT "\n"; user text in them
	 * is escaped (tp_write_escaped()), so a newline always ends a line.
	 */
	for (int k = 0; k < CHANGE_KIND_COUNT; k++) {
		size_t prefix = strlen(change_prefix[k]);
		const char *p = diff.text[k], *end = diff.text[k] + diff.len[k];

		while (p < end && n < total) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = (nl ? (size_t)(nl - p) : (size_t)(end - p));

			if (len < prefix || memcmp(p, change_prefix[k], prefix) != 0) {
				r = -EINVAL;	/* a line() without its prefix: a bug here */
				goto out;
			}
			list[n].kind = (enum tp_change_kind)k;
			list[n].text = strndup(p + prefix, len - prefix);
			if (!list[n++].text) {
				r = -ENOMEM;
				goto out;
			}
			p += len + 1;
		}
	}
	if (widened)
		*widened = diff.lines[WIDENED] > 0;
	*changes = TAKE_PTR(list);
	*count = n;
out:
	tp_changes_free(list, n);
	diff_free(&diff);
	return r;
}
