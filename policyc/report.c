// SPDX-License-Identifier: GPL-2.0
/*
 * The guarantee report: for each term of G = K ∧ P ∧ F ∧ N ∧ I ∧ R ∧ T ∧ C,
 * the rows of the enforcement table (fields.c) that this policy makes
 * relevant, what enforces each, and a verdict per term.  The text is stable
 * (golden-tested) and meant for a reviewer who signs off on a run:
 *
 *   guarantee report for policy sha256:<64 hex>
 *
 *   K: kernel and system-call boundary
 *     enforced                     @syscalls: seccomp filter ...
 *     enforced                     @capabilities: every capability dropped ...
 *   ...
 *   N: network egress
 *     enforced                     network_egress.default: cgroup connect4/6 and ...
 *     NOT ENFORCED (acknowledged)  network_egress.methods: HTTP methods need ...
 *   I: workload identity and credentials
 *     enforced                     identity.uid: setresuid() to the uid ...
 *   ...
 *   R: resource control
 *     nothing set by this policy
 *   ...
 *
 *   acknowledged gaps:
 *     network_egress.methods
 *   guarantee holds for: K P F I T C; does not hold for: N; not claimed by this policy: R
 *
 * A term does not hold when any row of it that applies is NOT_ENFORCED,
 * acknowledged or not: acknowledging a gap makes compiling succeed, it does
 * not make the guarantee true.  A term holds when it has an applicable
 * ENFORCED row and no NOT_ENFORCED one.  A term whose applicable rows are
 * all RECORDED (or that has none) is "not claimed": the policy asks nothing
 * of it, and saying it holds would claim a restriction nobody asked for.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "policyc/fields.h"
#include "policyc/policy.h"
#include "policyc/render_internal.h"

#define DNS_TTL_MIN_DEFAULT_S 5u
#define DNS_TTL_MAX_DEFAULT_S 3600u

static bool any_rule_with(const struct tp_policy *policy, uint32_t mask, uint32_t want)
{
	for (size_t i = 0; i < policy->path_rule_count; i++)
		if ((policy->path_rules[i].access & mask) == want)
			return true;
	return false;
}

/*
 * Whether a row of tp_fields is relevant to `policy`:
 *
 *   - built-in rows ('@'): always; they describe every run;
 *   - acknowledgeable gaps (NOT_ENFORCED with restricts): exactly when the
 *     policy lists the field among its gaps.  The compiler records every gap
 *     the envelope triggers and refuses unacknowledged ones, so that list is
 *     the set of restrictions the policy asks for and does not get;
 *   - every other row: when the policy sets the field, or when the field is
 *     required or its default is itself a restriction the run relies on
 *     (filesystem.root, filesystem.workspace.path, filesystem.devices: [],
 *     network_egress.default: deny, identity.uid and identity.gid (65534 by
 *     default), environment (the default allow list),
 *     cleanup.verify_process_tree, mode, audit.sink).  A limit applies when
 *     it is set: an unset one is unlimited.  network_egress.dns also applies when the policy lists a
 *     hostname: the run's DNS proxy is what lets it reach one.
 *
 * A row this function does not know applies: a row too many in the report
 * is harmless, a NOT_ENFORCED row left out would overstate the guarantee.
 */
static bool row_applies(const struct tp_policy *policy, const struct tp_field_info *row)
{
	const char *f = row->field;

	if (f[0] == '@')
		return true;
	if (row->status == TP_NOT_ENFORCED && row->restricts)
		return tp_policy_has_gap(policy, f);

	if (!strcmp(f, "filesystem.inputs.path") || !strcmp(f, "filesystem.inputs.mode"))
		return policy->input_count > 0;
	/* Read-only rules other than the root, the workspace and the inputs
	 * (which have their own rows).  Read grants inherit what encloses them,
	 * so they survive compilation only where they add READ (below a deny)
	 * or name a path below a protected one. */
	if (!strcmp(f, "filesystem.read")) {
		for (size_t i = 0; i < policy->path_rule_count; i++) {
			const struct tp_path_rule *rule = &policy->path_rules[i];
			bool is_input = false;

			if (rule->access != TETHER_ACCESS_READ)
				continue;
			if (!strcmp(rule->path, "/") ||
			    (policy->workspace && !strcmp(rule->path, policy->workspace)))
				continue;
			for (size_t j = 0; j < policy->input_count; j++)
				if (!strcmp(policy->inputs[j].path, rule->path))
					is_input = true;
			if (!is_input)
				return true;
		}
		return false;
	}
	if (!strcmp(f, "filesystem.write"))
		return any_rule_with(policy, TETHER_ACCESS_WRITE, TETHER_ACCESS_WRITE);
	if (!strcmp(f, "filesystem.abstract_sockets"))
		return policy->abstract_socket_count > 0;
	if (!strcmp(f, "filesystem.connect"))
		return any_rule_with(policy, TETHER_ACCESS_CONNECT | TETHER_ACCESS_WRITE,
				     TETHER_ACCESS_CONNECT);
	if (!strcmp(f, "filesystem.deny")) {
		for (size_t i = 0; i < policy->path_rule_count; i++)
			if (policy->path_rules[i].access == 0)
				return true;
		return false;
	}
	if (!strcmp(f, "network_egress.allowed_destinations"))
		return policy->net_rule_count + policy->host_rule_count > 0;
	if (!strcmp(f, "network_egress.dns"))
		return policy->host_rule_count > 0 || policy->dns_upstream_count > 0 ||
		       policy->dns_ttl_min_s != DNS_TTL_MIN_DEFAULT_S ||
		       policy->dns_ttl_max_s != DNS_TTL_MAX_DEFAULT_S;
	/* A limit that is not set is unlimited: nothing to enforce. */
	for (int i = 0; i < TP_LIMIT_COUNT; i++)
		if (row == &tp_limits[i].row)
			return policy->limits[i] != 0;
	if (!strcmp(f, "workspace_lifetime"))
		return policy->lifetime == TP_LIFETIME_ONE_RUN;
	if (!strcmp(f, "artifacts"))
		return policy->artifact_count != 0;
	/* the rows say what fresh_overlay does; a source needs it (policyc) */
	if (!strcmp(f, "filesystem.workspace.mode") || !strcmp(f, "filesystem.workspace.source"))
		return policy->workspace_mode == TP_WORKSPACE_FRESH_OVERLAY;
	if (!strcmp(f, "filesystem.inputs.digest")) {
		for (size_t i = 0; i < policy->input_count; i++)
			if (policy->inputs[i].has_digest)
				return true;
		return false;
	}
	if (!strcmp(f, "identity.tenant"))
		return policy->tenant != NULL;
	if (!strcmp(f, "identity.run_id"))
		return policy->run_id != NULL;
	if (!strcmp(f, "runtime_revision"))
		return policy->runtime_revision != NULL;
	if (!strcmp(f, "audit.record_allowed"))
		return policy->flags & TP_POLICY_AUDIT_RECORD_ALLOWED;
	if (!strcmp(f, "audit.fail_closed"))
		return policy->flags & TP_POLICY_AUDIT_FAIL_CLOSED;
	return true;
}

/*
 * The row's status for this policy.  Only "mode" depends on the policy: in
 * audit mode the path rules deny nothing.  Network rules do not relax in
 * audit mode (bpf/net.bpf.c), so the network rows keep their status.
 */
static enum tp_status row_status(const struct tp_policy *policy, const struct tp_field_info *row,
				 const char **mechanism)
{
	*mechanism = row->mechanism;
	if (!strcmp(row->field, "mode") && policy->mode != TP_MODE_ENFORCE) {
		*mechanism = "audit: the reads and execs a path rule would deny are allowed and "
			     "recorded (decision would_deny); writes, unix connections, protected "
			     "paths and what no rule can grant stay denied";
		return TP_NOT_ENFORCED;
	}
	/* In audit mode, the reads and execs these rows deny are only recorded. */
	if (policy->mode != TP_MODE_ENFORCE && row->status == TP_ENFORCED &&
	    (!strcmp(row->field, "filesystem.read") || !strcmp(row->field, "filesystem.exec") ||
	     !strcmp(row->field, "filesystem.deny"))) {
		*mechanism = "mode: audit: the reads and execs this would deny are allowed and recorded";
		return TP_NOT_ENFORCED;
	}
	return row->status;
}

static const char *status_word(enum tp_status status, bool acknowledged)
{
	switch (status) {
	case TP_ENFORCED:
		return "enforced";
	case TP_RECORDED:
		return "recorded";
	case TP_NOT_ENFORCED:
		break;
	}
	return acknowledged ? "NOT ENFORCED (acknowledged)" : "NOT ENFORCED";
}

enum term_verdict {
	TERM_NOT_CLAIMED,
	TERM_HOLDS,
	TERM_DOES_NOT_HOLD,
};

static void write_term_list(FILE *out, const enum term_verdict verdicts[TP_TERM_COUNT],
			    enum term_verdict want)
{
	bool first = true;

	for (int t = 0; t < TP_TERM_COUNT; t++) {
		if (verdicts[t] != want)
			continue;
		fprintf(out, "%s%c", first ? "" : " ", tp_term_letters[t]);
		first = false;
	}
	if (first)
		fputs("none", out);
}

int tp_report_write(const struct tp_policy *policy, FILE *out)
{
	enum term_verdict verdicts[TP_TERM_COUNT];
	char digest_text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32];
	bool any_other = false, any_unclaimed = false;
	int r;

	if (!policy || !out)
		return -EINVAL;
	r = tp_policy_digest(policy, digest);
	if (r < 0)
		return r;
	tp_digest_text(digest, digest_text);

	fprintf(out, "guarantee report for policy %s\n\n", digest_text);

	for (int t = 0; t < TP_TERM_COUNT; t++) {
		bool any_row = false;

		verdicts[t] = TERM_NOT_CLAIMED;
		fprintf(out, "%c: %s\n", tp_term_letters[t], tp_term_names[t]);
		for (const struct tp_field_info *const *rows = tp_fields; *rows; rows++) {
			const struct tp_field_info *row = *rows;
			const char *mechanism;
			enum tp_status status;
			bool acknowledged;

			if ((int)row->term != t || !row_applies(policy, row))
				continue;
			status = row_status(policy, row, &mechanism);
			acknowledged = row->restricts && tp_policy_has_gap(policy, row->field);
			fprintf(out, "  %-27s  %s: %s\n", status_word(status, acknowledged),
				row->field, mechanism);
			any_row = true;
			if (status == TP_NOT_ENFORCED)
				verdicts[t] = TERM_DOES_NOT_HOLD;
			else if (status == TP_ENFORCED && verdicts[t] == TERM_NOT_CLAIMED)
				verdicts[t] = TERM_HOLDS;
		}
		if (!any_row)
			fputs("  nothing set by this policy\n", out);
	}

	/* Straight from the policy: a gap this version's table no longer knows
	 * (a policy decoded from another version) is still listed. */
	fputs("\nacknowledged gaps:", out);
	if (policy->gap_count == 0)
		fputs(" none", out);
	fputc('\n', out);
	for (size_t i = 0; i < policy->gap_count; i++) {
		fputs("  ", out);
		tp_write_escaped(out, policy->gaps[i]);
		fputc('\n', out);
	}

	for (const struct tp_field_info *const *rows = tp_fields; *rows; rows++) {
		const struct tp_field_info *row = *rows;
		const char *mechanism;

		if (row->restricts || !row_applies(policy, row) ||
		    row_status(policy, row, &mechanism) != TP_NOT_ENFORCED)
			continue;
		if (!any_other)
			fputs("other fields not enforced:\n", out);
		fprintf(out, "  %s\n", row->field);
		any_other = true;
	}

	fputs("guarantee holds for: ", out);
	write_term_list(out, verdicts, TERM_HOLDS);
	fputs("; does not hold for: ", out);
	write_term_list(out, verdicts, TERM_DOES_NOT_HOLD);
	for (int t = 0; t < TP_TERM_COUNT; t++)
		any_unclaimed |= verdicts[t] == TERM_NOT_CLAIMED;
	if (any_unclaimed) {
		fputs("; not claimed by this policy: ", out);
		write_term_list(out, verdicts, TERM_NOT_CLAIMED);
	}
	fputc('\n', out);

	/* stdio reports a failed write only through the stream's error flag. */
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
