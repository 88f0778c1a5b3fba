/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's kernel path rules: the policy's rules resolved on this host, then
 * the run's private trees, the built-in protected set and the audit file.  Messages go to stderr ("tether run: ...").
 */
#ifndef TETHER_RUNTIME_PLAN_RULES_H
#define TETHER_RUNTIME_PLAN_RULES_H

#include <stddef.h>

#include "loader/loader.h"
#include "policyc/policy.h"

/*
 * Fills *out with *count rules: the policy's, in its order (rule ids match
 * the compiled policy), each resolved through symlinks (a writable one
 * through a symlink is -ELOOP); then each of `extra` (the run's private
 * trees, with their access) and each protected path and `audit_path` (may be
 * NULL or relative, marked TETHER_ACCESS_PROTECTED) whose resolved path no
 * rule has yet.  A
 * path longer than a kernel rule holds is -ENAMETOOLONG.  0 or a negative
 * errno.
 */
int run_rules_resolve(const struct tp_policy *pol, const struct tl_path_rule *extra,
		      size_t extra_count, const char *audit_path, struct tl_path_rule **out,
		      size_t *count);
void run_rules_free(struct tl_path_rule *rules, size_t n);

#endif
