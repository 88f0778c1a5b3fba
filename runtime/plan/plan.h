/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's plan: what the compiled policy and this host become in the
 * kernel, as the one struct tl_run_plan the loader writes.  Everything
 * between the policy and the maps that reads the host or reasons about the
 * policy lives in this folder:
 *
 *   rules.c   the policy's path rules resolved on this host, with the
 *             run's TMPDIR and the protected paths (run_rules_resolve)
 *   net.c     address rules in kernel form with their barrier entries, and
 *             the DNS admissions of a live run (net_plan_build, net_admit)
 *   paths.c   the inode identities of writable rules and the pins above
 *             carve-outs, read right before install (run_plan_build)
 *   plan.c    all of it, with the run's mode and flags (run_plan_make)
 */
#ifndef TETHER_RUNTIME_PLAN_PLAN_H
#define TETHER_RUNTIME_PLAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"
#include "runtime/plan/net.h"
#include "runtime/plan/paths.h"
#include "runtime/plan/rules.h"

struct tp_policy;

struct run_plan_input {
	const struct tp_policy *policy;
	struct tl_path_rule *rules;	/* run_rules_resolve(); their identities are filled in */
	size_t rule_count;
	const struct net_plan *net;	/* net_plan_build() */
	uint16_t dns_port4, dns_port6;	/* the run's DNS proxy; 0: none */
	bool audit_allowed;		/* record allowed writes and execs too */
};

/*
 * The run's whole plan, right before tl_run_install (identities are those
 * of this moment).  0 or a negative errno with `err` saying which path;
 * run_plan_free releases the plan either way.  `plan` points into `in`'s
 * rules, net plan and policy: they outlive it.
 */
int run_plan_make(const struct run_plan_input *in, struct tl_run_plan *plan,
		  struct tl_error *err);

#endif
