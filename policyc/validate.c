// SPDX-License-Identifier: GPL-2.0
/*
 * What a compiled policy must satisfy before anything uses it.
 *
 * A policy compiled here always does: tp_envelope_parse() refuses every
 * envelope that would break a rule below.  A .tpol file can come from
 * elsewhere (another tether version, a hand-made or tampered file); its
 * decoder checks the form, this checks the meaning, in the kernel's view of
 * the rules (each rule covers its path and everything beneath it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policyc/fields.h"
#include "policyc/policyc_internal.h"
#include "policyc/render_internal.h"

static const char *esc_path(char buf[TP_EXCERPT_MAX], const char *path)
{
	return tp_excerpt(buf, path, strlen(path));
}

/* The rule the kernel applies to `path` (render.c's index, as tether diff uses it). */
static const struct tp_path_rule *kernel_rule(const struct tp_rule_index *index, const char *path)
{
	ssize_t i = tp_rule_index_kernel_match(index, path, strlen(path));

	return i < 0 ? NULL : &index->rules[i];
}

static int validate(const struct tp_policy *policy, const struct tp_rule_index *index,
		    char *why, size_t why_len)
{
	char buf[TP_EXCERPT_MAX], buf2[TP_EXCERPT_MAX];
	const struct tp_path_rule *rule;
	bool kernel = false;
	const char *tree;
	int r;

	r = tp_policy_check_gaps(policy, why, why_len);
	if (r)
		return r;
	/* And no more: every gap it lists is one this version has. */
	for (size_t i = 0; i < policy->gap_count; i++) {
		const struct tp_field_info *info = tp_field_find(policy->gaps[i]);

		if (!info || !info->restricts || info->status != TP_NOT_ENFORCED) {
			snprintf(why, why_len, "it acknowledges '%s', which is not a gap of this "
				 "version", esc_path(buf, policy->gaps[i]));
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < policy->path_rule_count; i++) {
		const struct tp_path_rule *w = &policy->path_rules[i];

		if (!(w->access & TETHER_ACCESS_WRITE))
			continue;
		tree = tp_path_protected_tree(w->path, &kernel);
		if (strcmp(w->path, "/") == 0 || tree) {
			snprintf(why, why_len, "it makes '%s' writable, %s", esc_path(buf, w->path),
				 tree ? (kernel ? "a kernel interface" : "the host's system software")
				      : "the whole file system");
			return -EINVAL;
		}
		/* Below an input: an input is read-only all the way down. */
		for (size_t j = 0; j < policy->input_count; j++) {
			if (tp_path_within(w->path, policy->inputs[j].path)) {
				snprintf(why, why_len, "it makes '%s' writable inside the input '%s'",
					 esc_path(buf, w->path), esc_path(buf2, policy->inputs[j].path));
				return -EINVAL;
			}
		}
	}
	for (size_t j = 0; j < policy->input_count; j++) {
		rule = kernel_rule(index, policy->inputs[j].path);
		if (rule && (rule->access & TETHER_ACCESS_WRITE)) {
			snprintf(why, why_len, "its input '%s' is writable through the rule for '%s'",
				 esc_path(buf, policy->inputs[j].path), esc_path(buf2, rule->path));
			return -EINVAL;
		}
	}
	if (policy->audit_sink) {
		tree = tp_path_protected_tree(policy->audit_sink, &kernel);
		rule = kernel_rule(index, policy->audit_sink);
		if ((tree && kernel) || (rule && (rule->access & TETHER_ACCESS_WRITE)) ||
		    tp_path_within(policy->audit_sink, policy->workspace)) {
			snprintf(why, why_len, "its audit sink '%s' is %s",
				 esc_path(buf, policy->audit_sink),
				 tree && kernel ? "not a regular file" : "where the run could rewrite it");
			return -EINVAL;
		}
	}
	return 0;
}

int tp_policy_validate(const struct tp_policy *policy, char *why, size_t why_len)
{
	struct tp_rule_index index;
	int r = tp_rule_index_init(&index, policy);

	if (r < 0)
		return r;
	r = validate(policy, &index, why, why_len);
	tp_rule_index_free(&index);
	return r;
}
