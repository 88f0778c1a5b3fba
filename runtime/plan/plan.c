// SPDX-License-Identifier: GPL-2.0
#include "bpf/abi/rules.h"
#include "policyc/policy.h"
#include "runtime/plan/plan.h"

int run_plan_make(const struct run_plan_input *in, struct tl_run_plan *plan,
		  struct tl_error *err)
{
	const struct tp_policy *policy = in->policy;
	/*
	 * audit.fail_closed records what it allows too: a run whose allowed
	 * execs and connections left no record would have nothing to refuse
	 * when the ring is full, and the stream would not be its account.
	 */
	bool fail_closed = policy->flags & TP_POLICY_AUDIT_FAIL_CLOSED;

	*plan = (struct tl_run_plan){
		/* tp_policy and the kernel number the modes alike (policyc/policy.h) */
		.mode = policy->mode == TP_MODE_AUDIT ? TETHER_MODE_AUDIT : TETHER_MODE_ENFORCE,
		.run_flags = (in->audit_allowed || fail_closed ? TETHER_RUN_AUDIT_ALLOWED : 0) |
			     (fail_closed ? TETHER_RUN_FAIL_CLOSED : 0),
		.abstract_sockets = policy->abstract_sockets,
		.abstract_count = policy->abstract_socket_count,
		.net = {
			.entries = in->net->entries,
			.count = in->net->count,
			.egress_max = policy->limits[TP_LIMIT_EGRESS_BYTES],
			.dns_port4 = in->dns_port4,
			.dns_port6 = in->dns_port6,
		},
	};
	return run_plan_build(in->rules, in->rule_count, plan, err);
}
