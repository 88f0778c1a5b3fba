// SPDX-License-Identifier: GPL-2.0
/*
 * The --json forms of check, explain and diff (policy_json.h).  Every
 * string goes through sb_json_string(), so user text (paths, names) that is
 * not valid UTF-8 or holds control characters is escaped, never passed on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/access.h"
#include "runtime/policy_json.h"

int json_str(struct strbuf *sb, const char *s)
{
	if (!s)
		return sb_printf(sb, "null");
	return sb_json_string(sb, s, strlen(s));
}

static int json_bool(struct strbuf *sb, bool value)
{
	return sb_printf(sb, "%s", value ? "true" : "false");
}

/* ["a","b"] */
static int json_str_list(struct strbuf *sb, char *const *items, size_t count)
{
	int r = sb_printf(sb, "[");

	for (size_t i = 0; i < count && !r; i++) {
		r |= i ? sb_printf(sb, ",") : 0;
		r |= json_str(sb, items[i]);
	}
	r |= sb_printf(sb, "]");
	return r ? -ENOMEM : 0;
}

int json_diags(struct strbuf *sb, const struct tp_diags *diags)
{
	int r = sb_printf(sb, "[");

	for (size_t i = 0; diags && i < diags->count && !r; i++) {
		const struct tp_diag *d = &diags->items[i];

		r |= sb_printf(sb, "%s{\"file\":", i ? "," : "");
		r |= json_str(sb, d->file ? d->file : "<input>");
		r |= sb_printf(sb, ",\"line\":%u,\"column\":%u,\"message\":", d->line, d->column);
		r |= json_str(sb, d->message ? d->message : "");
		r |= sb_printf(sb, "}");
	}
	r |= sb_printf(sb, "]");
	return r ? -ENOMEM : 0;
}

int json_input_members(struct strbuf *sb, const char *name, const struct tp_policy *policy,
		       const struct tp_diags *diags, int error, const struct tp_diags *warnings)
{
	char digest_text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32];
	int r;

	r = sb_printf(sb, "\"file\":");
	r |= json_str(sb, name);
	r |= sb_printf(sb, ",\"ok\":");
	r |= json_bool(sb, policy != NULL);
	r |= sb_printf(sb, ",\"digest\":");
	if (policy && tp_policy_digest(policy, digest) == 0) {
		tp_digest_text(digest, digest_text);
		r |= json_str(sb, digest_text);
	} else {
		r |= sb_printf(sb, "null");
	}
	r |= sb_printf(sb, ",\"errors\":");
	if (!policy && (!diags || diags->count == 0)) {
		/* As policy_print_diags() does on the terminal: the bare error. */
		r |= sb_printf(sb, "[{\"file\":");
		r |= json_str(sb, name);
		r |= sb_printf(sb, ",\"line\":0,\"column\":0,\"message\":");
		r |= json_str(sb, strerror(error < 0 ? -error : EINVAL));
		r |= sb_printf(sb, "}]");
	} else {
		r |= json_diags(sb, policy ? NULL : diags);
	}
	r |= sb_printf(sb, ",\"warnings\":");
	r |= json_diags(sb, warnings);
	return r ? -ENOMEM : 0;
}

/* ---- explain ------------------------------------------------------------------ */

static bool has_gap(const struct tp_policy *policy, const char *field)
{
	for (size_t i = 0; i < policy->gap_count; i++)
		if (strcmp(policy->gaps[i], field) == 0)
			return true;
	return false;
}

/* {"path":"/a","subtree":true} */
static int json_rule(struct strbuf *sb, const struct tp_path_rule *rule)
{
	int r = sb_printf(sb, "{\"path\":");

	r |= json_str(sb, rule->path);
	r |= sb_printf(sb, ",\"subtree\":");
	r |= json_bool(sb, rule->kind == TP_PATH_SUBTREE);
	r |= sb_printf(sb, "}");
	return r ? -ENOMEM : 0;
}

/* "read":[{"path":..,"subtree":..,"except":[...]}, ...] for one right. */
static int json_regions(struct strbuf *sb, const struct tp_policy *policy,
			const struct tp_access_right *right)
{
	struct tp_grant_regions regions;
	int r;

	r = tp_grant_regions(policy, right->bit, &regions);
	if (r < 0)
		return r;
	r = sb_printf(sb, "\"%s\":[", right->name);
	for (size_t i = 0; i < regions.count && !r; i++) {
		const struct tp_grant_region *region = &regions.items[i];

		r |= sb_printf(sb, "%s{\"path\":", i ? "," : "");
		r |= json_str(sb, region->top->path);
		r |= sb_printf(sb, ",\"subtree\":");
		r |= json_bool(sb, region->top->kind == TP_PATH_SUBTREE);
		r |= sb_printf(sb, ",\"except\":[");
		for (size_t e = 0; e < region->except_count && !r; e++) {
			r |= e ? sb_printf(sb, ",") : 0;
			r |= json_rule(sb, region->except[e]);
		}
		r |= sb_printf(sb, "]}");
	}
	r |= sb_printf(sb, "]");
	tp_grant_regions_free(&regions);
	return r ? -ENOMEM : 0;
}

static int json_filesystem(struct strbuf *sb, const struct tp_policy *policy)
{
	size_t n = 0;
	int r = sb_printf(sb, "\"filesystem\":{");

	for (size_t b = 0; b < TP_ACCESS_RIGHT_COUNT && !r; b++) {
		r |= b ? sb_printf(sb, ",") : 0;
		r = r ?: json_regions(sb, policy, &tp_access_rights[b]);
	}
	while (tp_protected_paths[n])
		n++;
	r |= sb_printf(sb, ",\"protected_paths\":");
	r |= json_str_list(sb, (char *const *)tp_protected_paths, n);
	r |= sb_printf(sb, ",\"abstract_sockets\":");
	r |= json_str_list(sb, policy->abstract_sockets, policy->abstract_socket_count);
	r |= sb_printf(sb, "}");
	return r ? -ENOMEM : 0;
}

static int json_environment(struct strbuf *sb, const struct tp_policy *policy)
{
	bool home_listed = false;
	int r = sb_printf(sb, "\"environment\":{\"passed\":[");
	size_t n = 0;

	for (const char *const *name = tp_env_default_names; *name && !r; name++) {
		r |= n++ ? sb_printf(sb, ",") : 0;
		r |= json_str(sb, *name);
	}
	for (size_t i = 0; i < policy->env_name_count && !r; i++) {
		r |= n++ ? sb_printf(sb, ",") : 0;
		r |= json_str(sb, policy->env_names[i]);
		home_listed |= strcmp(policy->env_names[i], "HOME") == 0;
	}
	r |= sb_printf(sb, "],\"set_by_tether\":[");
	n = 0;
	for (const char *const *name = tp_env_reserved_names; *name && !r; name++) {
		r |= n++ ? sb_printf(sb, ",") : 0;
		r |= json_str(sb, *name);
	}
	/* HOME is the workspace unless listed (then it is the controller's). */
	if (!home_listed)
		r |= sb_printf(sb, "%s\"HOME\"", n ? "," : "");
	r |= sb_printf(sb, "]}");
	return r ? -ENOMEM : 0;
}

static int json_protocols(struct strbuf *sb, uint8_t protocols)
{
	return sb_printf(sb, "[%s%s%s]", protocols & TP_PROTO_TCP ? "\"tcp\"" : "",
			 (protocols & TP_PROTO_TCP) && (protocols & TP_PROTO_UDP) ? "," : "",
			 protocols & TP_PROTO_UDP ? "\"udp\"" : "");
}

/* "192.0.2.0/24", "2001:db8::/32": IPv4 is held as ::ffff:a.b.c.d/96+n. */
static void format_cidr(const struct tp_net_rule *net, char *buf, size_t size)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = net->prefixlen >= 96 && memcmp(net->addr, mapped, 12) == 0;
	char addr[INET6_ADDRSTRLEN];

	if (!inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? net->addr + 12 : net->addr, addr,
		       sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	snprintf(buf, size, "%s/%u", addr, v4 ? net->prefixlen - 96u : net->prefixlen);
}

static int json_network(struct strbuf *sb, const struct tp_policy *policy)
{
	char cidr[INET6_ADDRSTRLEN + 8];
	size_t n = 0;
	int r = sb_printf(sb, "\"network\":{\"destinations\":[");

	for (size_t i = 0; i < policy->host_rule_count && !r; i++) {
		const struct tp_host_rule *host = &policy->host_rules[i];

		r |= sb_printf(sb, "%s{\"host\":", n++ ? "," : "");
		r |= json_str(sb, host->name);
		r |= sb_printf(sb, ",\"cidr\":null,\"port_min\":%u,\"port_max\":%u,\"protocols\":",
			       host->port_min, host->port_max);
		r |= json_protocols(sb, host->protocols);
		r |= sb_printf(sb, "}");
	}
	for (size_t i = 0; i < policy->net_rule_count && !r; i++) {
		const struct tp_net_rule *net = &policy->net_rules[i];

		format_cidr(net, cidr, sizeof(cidr));
		r |= sb_printf(sb, "%s{\"host\":null,\"cidr\":\"%s\",\"port_min\":%u,"
			       "\"port_max\":%u,\"protocols\":", n++ ? "," : "", cidr,
			       net->port_min, net->port_max);
		r |= json_protocols(sb, net->protocols);
		r |= sb_printf(sb, "}");
	}
	r |= sb_printf(sb, "],\"dns\":{\"ttl_min_s\":%" PRIu32 ",\"ttl_max_s\":%" PRIu32
		       "},\"http_methods\":", policy->dns_ttl_min_s, policy->dns_ttl_max_s);
	r |= json_str_list(sb, policy->methods, policy->method_count);
	r |= sb_printf(sb, "}");
	return r ? -ENOMEM : 0;
}

static const char *const unit_names[] = {
	[TP_UNIT_BYTES] = "bytes",
	[TP_UNIT_MILLI_CPU] = "milli_cpu",
	[TP_UNIT_COUNT] = "count",
	[TP_UNIT_MS] = "ms",
};

static int json_limits(struct strbuf *sb, const struct tp_policy *policy)
{
	int r = sb_printf(sb, "\"limits\":[");

	for (int i = 0; i < TP_LIMIT_COUNT && !r; i++) {
		const struct tp_limit_info *limit = &tp_limits[i];

		r |= sb_printf(sb, "%s{\"field\":", i ? "," : "");
		r |= json_str(sb, limit->row.field);
		r |= sb_printf(sb, ",\"label\":");
		r |= json_str(sb, limit->label);
		r |= sb_printf(sb, ",\"unit\":\"%s\",\"value\":", unit_names[limit->unit]);
		r |= policy->limits[i] ? sb_printf(sb, "%" PRIu64, policy->limits[i])
				       : sb_printf(sb, "null");
		r |= sb_printf(sb, ",\"enforced\":");
		r |= json_bool(sb, !has_gap(policy, limit->row.field));
		r |= sb_printf(sb, "}");
	}
	r |= sb_printf(sb, "]");
	return r ? -ENOMEM : 0;
}

static int json_leaves_behind(struct strbuf *sb, const struct tp_policy *policy)
{
	static const char *const modes[] = {
		[TP_WORKSPACE_EXISTING] = "existing",
		[TP_WORKSPACE_FRESH] = "fresh",
		[TP_WORKSPACE_FRESH_OVERLAY] = "fresh_overlay",
	};
	uint32_t flags = policy->flags;
	int r = sb_printf(sb, "\"leaves_behind\":{\"workspace\":");

	r |= json_str(sb, policy->workspace);
	r |= sb_printf(sb, ",\"lifetime\":\"%s\",\"starts_from\":",
		       policy->lifetime == TP_LIFETIME_ONE_RUN ? "one_run" : "persistent");
	r |= json_str(sb, policy->workspace_mode < sizeof(modes) / sizeof(*modes)
				  ? modes[policy->workspace_mode] : NULL);
	r |= sb_printf(sb, ",\"source\":");
	r |= json_str(sb, policy->workspace_source);
	r |= sb_printf(sb, ",\"ref\":");
	r |= json_str(sb, policy->workspace_ref);
	r |= sb_printf(sb, ",\"artifacts\":");
	r |= json_str_list(sb, policy->artifacts, policy->artifact_count);
	r |= sb_printf(sb, ",\"artifacts_scanned\":");
	r |= json_bool(sb, flags & TP_POLICY_ARTIFACTS_SCAN);
	r |= sb_printf(sb, ",\"artifacts_hashed\":");
	r |= json_bool(sb, flags & TP_POLICY_ARTIFACTS_HASH);
	r |= sb_printf(sb, ",\"process_tree_verified\":");
	r |= json_bool(sb, flags & TP_POLICY_VERIFY_PROCESS_TREE);
	r |= sb_printf(sb, ",\"credentials_revoked\":");
	r |= json_bool(sb, flags & TP_POLICY_REVOKE_CREDENTIALS);
	r |= sb_printf(sb, "}");
	return r ? -ENOMEM : 0;
}

static int json_gaps(struct strbuf *sb, const struct tp_policy *policy)
{
	int r = sb_printf(sb, "\"gaps\":[");

	for (size_t i = 0; i < policy->gap_count && !r; i++) {
		const char *why = tp_field_mechanism(policy->gaps[i]);

		r |= sb_printf(sb, "%s{\"field\":", i ? "," : "");
		r |= json_str(sb, policy->gaps[i]);
		r |= sb_printf(sb, ",\"why\":");
		r |= json_str(sb, why ? why : "not a field of this version");
		r |= sb_printf(sb, "}");
	}
	r |= sb_printf(sb, "]");
	return r ? -ENOMEM : 0;
}

int json_explain(struct strbuf *sb, const struct tp_policy *policy)
{
	int r;

	r = sb_printf(sb, "{\"mode\":\"%s\",\"identity\":{\"uid\":%" PRIu32 ",\"gid\":%" PRIu32
		      "},", policy->mode == TP_MODE_AUDIT ? "audit" : "enforce", policy->uid,
		      policy->gid);
	r = r ?: json_environment(sb, policy);
	r = r ?: sb_printf(sb, ",");
	r = r ?: json_filesystem(sb, policy);
	r = r ?: sb_printf(sb, ",");
	r = r ?: json_network(sb, policy);
	r = r ?: sb_printf(sb, ",");
	r = r ?: json_limits(sb, policy);
	r = r ?: sb_printf(sb, ",");
	r = r ?: json_leaves_behind(sb, policy);
	r = r ?: sb_printf(sb, ",");
	r = r ?: json_gaps(sb, policy);
	r = r ?: sb_printf(sb, "}");
	return r;
}

/* ---- diff ---------------------------------------------------------------------- */

int json_changes(struct strbuf *sb, const struct tp_change *changes, size_t count)
{
	static const char *const kinds[] = {
		[TP_CHANGE_WIDENED] = "widened",
		[TP_CHANGE_NARROWED] = "narrowed",
		[TP_CHANGE_CHANGED] = "changed",
	};
	int r = sb_printf(sb, "[");

	for (size_t i = 0; i < count && !r; i++) {
		r |= sb_printf(sb, "%s{\"kind\":\"%s\",\"change\":", i ? "," : "",
			       kinds[changes[i].kind]);
		r |= json_str(sb, changes[i].text);
		r |= sb_printf(sb, "}");
	}
	r |= sb_printf(sb, "]");
	return r ? -ENOMEM : 0;
}
