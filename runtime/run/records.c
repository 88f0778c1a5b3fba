// SPDX-License-Identifier: GPL-2.0
/*
 * The run's own records, typed (runtime/record.h), written through the same
 * audit stream as the kernel's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/version.h"
#include "runtime/run/internal.h"
#include "runtime/sink/sink.h"

/* W3C trace context: 00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not all zero. */
bool run_traceparent_valid(const char *s)
{
	static const int field[] = { 2, 32, 16, 2 };
	const char *p = s;

	if (strlen(s) != 55)
		return false;
	for (int f = 0; f < 4; f++) {
		bool nonzero = false;

		for (int i = 0; i < field[f]; i++, p++) {
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
				return false;
			nonzero |= *p != '0';
		}
		if ((f == 1 || f == 2) && !nonzero)
			return false;
		if (f < 3 && *p++ != '-')
			return false;
	}
	return strncmp(s, "ff", 2) != 0;
}

/*
 * What every record of the run carries (docs/audit.md, "The record
 * envelope"), filled once at the run's creation; run->digest is set.
 */
void run_context_init(struct run *run)
{
	const struct run_config *cfg = &run->cfg;
	struct utsname u;

	snprintf(run->host, sizeof(run->host), "%s", uname(&u) == 0 ? u.nodename : "");
	record_boot_id(run->boot_id, sizeof(run->boot_id));
	run->ctx = (struct record_context){
		.host = run->host,
		.boot_id = run->boot_id,
		.tether_version = TETHER_VERSION,
		.tenant = cfg->tenant ? cfg->tenant : run->policy->tenant,
		.attempt = cfg->attempt ? cfg->attempt : 1,
		.policy_digest = run->digest,
	};
	if (cfg->traceparent && run_traceparent_valid(cfg->traceparent)) {
		memcpy(run->trace_id, cfg->traceparent + 3, 32);
		run->trace_id[32] = 0;
		memcpy(run->span_id, cfg->traceparent + 36, 16);
		run->span_id[16] = 0;
		run->ctx.trace_id = run->trace_id;
		run->ctx.span_id = run->span_id;
	}
	/* the members every record of the run repeats, encoded once */
	if (sink_jsonl_encode_context(&run->ctx, run->run_id, &run->ctx_json) == 0) {
		run->ctx.encoded = run->ctx_json.data;
		run->ctx.encoded_len = run->ctx_json.len;
		run->ctx.encoded_run_id = run->run_id;
	}
	run->audit.names.ctx = &run->ctx;
}

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
			.source = run->fs_overlay ? run->policy->workspace_source : NULL,
			.source_digest = run->source_digest[0] ? run->source_digest : NULL,
			.source_commit = run->source_commit[0] ? run->source_commit : NULL,
			.source_tree = run->source_tree[0] ? run->source_tree : NULL,
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

void run_record_artifact(struct run *run, const struct record_run_artifact *a)
{
	struct record rec = { .kind = RECORD_RUN, .run.event = RECORD_RUN_ARTIFACT };

	rec.run.artifact = *a;
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
