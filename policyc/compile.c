// SPDX-License-Identifier: GPL-2.0
/*
 * Envelope -> path rules.
 *
 * The order of the rules is part of the output: a rule's index is its
 * rule_id in the kernel map and in audit records, so the same envelope must
 * always compile to the same list.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "policyc/policyc_internal.h"

/*
 * Appends a rule, or widens an existing rule for the same path: the kernel
 * map holds one entry per path, so two rules with one key would silently
 * leave only the last one written.
 */
static int add_rule(struct tp_policy *policy, const char *path, uint32_t access)
{
	char *copy;

	for (size_t i = 0; i < policy->path_rule_count; i++) {
		if (strcmp(policy->path_rules[i].path, path) == 0) {
			policy->path_rules[i].access |= access;
			return 0;
		}
	}
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	policy->path_rules[policy->path_rule_count++] = (struct tp_path_rule){
		.path = copy,
		.access = access,
	};
	return 0;
}

/*
 * The envelope normally comes from tp_envelope_parse(), which already checked
 * all of this; a hand-built one must not reach the kernel map unchecked.
 */
static bool workspace_path_valid(const char *path)
{
	_cleanup_free_ char *normalized = NULL;

	if (!path)
		return false;
	normalized = tp_path_normalize(path);
	return normalized && strcmp(normalized, path) == 0 && strcmp(path, "/") != 0 &&
	       strlen(path) <= TETHER_PATH_KEY_MAX - 1;
}

void tp_policy_free(struct tp_policy *policy)
{
	if (!policy)
		return;
	for (size_t i = 0; i < policy->path_rule_count; i++)
		free(policy->path_rules[i].path);
	free(policy->path_rules);
	free(policy);
}

static void tp_policy_freep(struct tp_policy **policy)
{
	tp_policy_free(*policy);
}

int tp_policy_compile(const struct tp_envelope *env, struct tp_policy **out)
{
	_cleanup_(tp_policy_freep) struct tp_policy *policy = NULL;
	int r;

	if (!env || !out)
		return -EINVAL;
	if (env->root != TP_ROOT_READ_ONLY || !workspace_path_valid(env->workspace_path))
		return -EINVAL;

	policy = calloc(1, sizeof(*policy));
	if (!policy)
		return -ENOMEM;
	policy->path_rules = calloc(2, sizeof(*policy->path_rules));
	if (!policy->path_rules)
		return -ENOMEM;

	/* Exec stays allowed where reading is: exec confinement is a later rule set. */
	r = add_rule(policy, "/", TETHER_ACCESS_READ | TETHER_ACCESS_EXEC);
	if (r < 0)
		return r;
	r = add_rule(policy, env->workspace_path,
		     TETHER_ACCESS_READ | TETHER_ACCESS_WRITE | TETHER_ACCESS_EXEC);
	if (r < 0)
		return r;
	/*
	 * No path rules for /dev/null and friends: the BPF side lets the run
	 * write-open those devices by device number (a rule on their path would
	 * also let it chmod, chown or replace the host's /dev/null).
	 */

	*out = TAKE_PTR(policy);
	return 0;
}
