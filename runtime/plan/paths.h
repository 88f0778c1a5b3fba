/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's path entries as this host gives them: compiled policy (resolved
 * rules, runtime/plan/rules.h) + this host's file system -> plain data the
 * loader only writes (struct tl_run_plan).  Here, not in loader/, because
 * it reads the host (lstat) and reasons about the policy (carve-outs); the
 * loader must do neither.
 */
#ifndef TETHER_RUNTIME_PLAN_PATHS_H
#define TETHER_RUNTIME_PLAN_PATHS_H

#include <stddef.h>

#include "loader/loader.h"

/*
 * Fills the identity of each rule that needs one (has_inode, dev, ino: a
 * rule granting write, or a rule below one, whose path exists and is not a
 * symlink) and derives the pins above carve-outs; plan->rules is `rules`
 * (the other members of `plan` are left as they are).
 * Call right before tl_run_install: identities are those of this moment.
 * 0 or a negative errno with `err` saying which path; run_plan_free
 * releases the plan either way.
 */
int run_plan_build(struct tl_path_rule *rules, size_t rule_count, struct tl_run_plan *plan,
		   struct tl_error *err);
void run_plan_free(struct tl_run_plan *plan);

#endif
