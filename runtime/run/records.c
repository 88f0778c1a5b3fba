// SPDX-License-Identifier: GPL-2.0
/*
 * The run's own records, typed (runtime/record.h), written through the same
 * audit stream as the kernel's.
 */
#include <string.h>

#include "runtime/run/internal.h"

/*
 * The run's "start" record: what runs (argv[0] only: arguments may carry
 * secrets), where, under which policy, and what that policy asks for that
 * this version does not enforce; the identity and limits it runs with, and
 * how long setup took (setup_us: from the caller's start to just before
 * clone3).
 */
void run_record_start(struct run *run, uint64_t setup_us)
{
	struct record rec = {
		.kind = RECORD_RUN,
		.run.event = RECORD_RUN_START,
		.run.start = {
			.command = run->cfg.argv[0],
			.tmpdir = run->tmpdir,
			.cgroup_id = run->cg.id,
			.run_slot = run->run.run_slot,
			.audit_mode = run->policy->mode == TP_MODE_AUDIT,
			.rules = run->rule_count,
			.policy_digest = run->digest,
			.envelope_digest = run->envelope_digest,
			.unenforced = run->policy->gaps,
			.unenforced_count = run->policy->gap_count,
			.uid = run->uid,
			.gid = run->gid,
			.limits = run->policy->limits,
			.setup_us = setup_us,
		},
	};

	audit_write(&run->audit, &rec);
}

void run_record_truncated(struct run *run, int stream, uint64_t max)
{
	struct record rec = {
		.kind = RECORD_RUN,
		.run.event = RECORD_RUN_OUTPUT_TRUNCATED,
		.run.truncated = { .stream = stream ? "stderr" : "stdout", .output_bytes_max = max },
	};

	audit_write(&run->audit, &rec);
}

void run_record_cleanup(struct run *run, const struct record_run_cleanup *c)
{
	struct record rec = { .kind = RECORD_RUN, .run.event = RECORD_RUN_CLEANUP };

	rec.run.cleanup = *c;
	audit_write(&run->audit, &rec);
}

void run_record_end(struct run *run, const struct record_run_end *e)
{
	struct record rec = { .kind = RECORD_RUN, .run.event = RECORD_RUN_END };

	rec.run.end = *e;
	audit_write(&run->audit, &rec);
}
