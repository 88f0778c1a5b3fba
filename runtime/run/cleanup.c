// SPDX-License-Identifier: GPL-2.0
/*
 * The end of a run and its evidence: every process killed, output and
 * records drained, map entries, cgroup, TMPDIR and run file removed, each
 * seen gone, and the cleanup and end records that say so.
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "runtime/dnsproxy.h"
#include "runtime/run/internal.h"
#include "runtime/sink/sink.h"

/*
 * Tears down in the order that keeps the audit stream complete: kill what is
 * left, drain output and records, read the counters, remove map entries,
 * drain once more, remove the cgroup, then write the cleanup and end
 * records.  run->teardown_ret: 0, or -EUCLEAN (cleanup not verified, or the
 * audit stream could not be written).
 */
void run_cleanup(struct run *run, int status_for_record, bool ran)
{
	uint64_t seq = 0, lost = 0, refused = 0, egress = 0, t0 = clock_ns(CLOCK_MONOTONIC);
	uint32_t ingress_dropped = 0;
	struct tl_error err = { "" };
	unsigned int left = 0;
	bool empty = true, maps_removed = !run->run_installed, cg_removed = !run->cg_created;
	bool verified;
	int ret = 0, r;

	run_trace(run, "until teardown");
	if (run->cg_created) {
		r = cg_run_kill_and_wait(&run->cg, CLEANUP_TIMEOUT_MS, &left);
		/* run_end() already killed them all (the command among them) */
		if (run->killed > left)
			left = run->killed;
		if (r) {
			run_log(run, "processes of run %s survived cgroup.kill for %d ms", run->run_id,
				CLEANUP_TIMEOUT_MS);
			empty = false;
			ret = -EUCLEAN;
		}
		/* an OOM kill that ended the command before the loop saw the event */
		if (ran && run->reason == RUN_REASON_NONE && run_oom_killed(run)) {
			run->reason = RUN_REASON_BUDGET;
			run->budget = "memory_bytes";
		}
	}
	run_trace(run, "kill");
	/* every writer is gone once the tree is empty: what is left is the last output */
	if (empty)
		run_output_drain(run, OUTPUT_FINAL_WAIT_MS);
	if (run->ring)
		run_drain(run);
	if (run->run_installed) {
		struct tl_run_counters c = { 0 };

		tl_run_counters(&run->node, &run->run, &c);
		seq = c.seq;
		lost = c.audit_lost;
		refused = c.audit_refused;
		egress = c.egress_bytes;
		ingress_dropped = c.ingress_dropped;
		/* the cap's record may have found the ring full: the kernel's flag decides */
		if (c.egress_exhausted && run->reason == RUN_REASON_NONE) {
			run->reason = RUN_REASON_BUDGET;
			run->budget = "egress_bytes";
		}
		/* Leave the rules in place while anything of the run may still live. */
		if (empty) {
			/* an adopted run's rules are not listed here: remove its slot's, all of them */
			if (run->adopted
				    ? tl_run_reclaim(&run->node, run->run.cgroup_id, false, &err)
				    : tl_run_remove(&run->node, &run->run, &err)) {
				run_log(run, "%s", err.msg);
				ret = -EUCLEAN;
			} else {
				maps_removed = true;
				run->run.slot_clean = true;
			}
		}
	}
	run_trace(run, "remove maps");
	if (run->ring)
		run_drain(run);
	/*
	 * The node is closed below and the run's slot may be claimed by the
	 * next run: the cleanup and end records take their numbers from here,
	 * after every number the kernel handed out that reached the stream.
	 */
	run->seq_last = seq > run->audit.max_seq ? seq : run->audit.max_seq;
	run->seq_local = true;
	/* the kernel refused a write to its full file system: the run spent that limit */
	if (ran && run->reason == RUN_REASON_NONE && empty && (run->budget = run_storage_full(run)))
		run->reason = RUN_REASON_BUDGET;
	if (run->reason == RUN_REASON_NONE)
		run->reason = status_for_record == 0 ? RUN_REASON_SUCCEEDED : RUN_REASON_FAILED;
	/*
	 * The artifacts leave now: nothing of the run is alive to change them,
	 * and their records come before the cleanup and end records.  An
	 * artifact that could not be exported turns succeeded into failed.
	 */
	if (ran && empty)
		run_artifacts_export(run);
	if (run->audit.foreign)
		run_log(run, "run %s: dropped %llu records of its slot's earlier run", run->run_id,
			(unsigned long long)run->audit.foreign);
	/* lost records never took a sequence number: seq counts those queued (and ours) */
	if (lost)
		run_log(run, "warning: run %s lost %llu audit records to a full ring; %llu of the "
			     "%llu queued were written",
			run->run_id, (unsigned long long)lost,
			(unsigned long long)run->audit.records, (unsigned long long)seq);
	else if (run->audit.records < seq)
		run_log(run, "warning: run %s: %llu of its %llu sequence numbers are in no record "
			     "of its stream (a supervisor stopped before writing them)",
			run->run_id, (unsigned long long)(seq - run->audit.records),
			(unsigned long long)seq);
	if (run->ring)
		run_epoll_del(run, ring_buffer__epoll_fd(run->ring));
	ring_buffer__free(run->ring);
	run->ring = NULL;
	/* the ring is read to its end: the slot, and its ring, may go to the next run */
	if (maps_removed && run->run_installed && tl_run_release(&run->node, &run->run, &err)) {
		run_log(run, "%s", err.msg);
		ret = -EUCLEAN;
	}
	/*
	 * Every kernel record is in: the denials still counted in open windows
	 * are written now, before the cleanup and end records, with numbers
	 * from the sequence's local tail.
	 */
	audit_flush(&run->audit);
	/* the run is gone or its entries are: nothing can ask the proxy any more */
	if (run->dns)
		run_epoll_del(run, dns_proxy_fd(run->dns));
	dns_proxy_free(run->dns);
	run->dns = NULL;
	if (run->run_installed && empty)
		tl_run_free(&run->run);
	if (run->node_open)
		tl_node_close(&run->node);
	run->node_open = false;
	run_trace(run, "close stream");
	if (run->cg_created) {
		if (empty && (r = cg_run_destroy(&run->cg))) {
			run_log(run, "removing cgroup %s: %s", run->cg.path, strerror(-r));
			ret = -EUCLEAN;
		} else if (!empty) {
			run_log(run, "run %s left its cgroup %s and map entries in place because it "
				     "could not be emptied", run->run_id, run->cg.path);
			cg_run_free(&run->cg);
		} else {
			cg_removed = true;
		}
		run->cg_created = false;
	}
	run_trace(run, "remove cgroup");
	/*
	 * The run's private trees are tmpfs mounts of its own mount namespace,
	 * which the kernel frees with its last process: gone once the tree is
	 * seen empty (no helper or controller keeps a reference).
	 */
	run_remove_pidfile(run);
	run_remove_owner_mark(run);
	/*
	 * The run's own file system (a fresh workspace, the trees disk_bytes
	 * bounds): this was the last reference outside its namespace, which
	 * went with its last process.  Only a tree seen empty lets it go.
	 */
	if (empty) {
		run_storage_free(run);
		run_inputs_free(run);
	}
	run_trace(run, "remove storage");

	/*
	 * The evidence: what was killed, how long it took, and whether each part
	 * of the run was seen gone.  A cleanup that was not verified says so,
	 * and the run's result says it (tether exits 123).
	 */
	verified = empty && maps_removed && cg_removed;
	run->result = (struct run_result){
		.reason = run->reason,
		/* budget_exhausted: which limit; timed_out: "lease" for cleanup.lease */
		.budget = run->reason == RUN_REASON_BUDGET || run->reason == RUN_REASON_TIMED_OUT ?
			  run->budget : NULL,
		.exit_status = status_for_record,
		.cleanup_verified = verified,
	};
	if (ran && run->sink) {
		run_record_cleanup(run, &(struct record_run_cleanup){
			.killed = left,
			.duration_us = (clock_ns(CLOCK_MONOTONIC) - t0) / 1000,
			.tree_empty = empty,
			.map_entries_removed = maps_removed,
			.cgroup_removed = cg_removed,
			.tmpdir_removed = empty,
			.verified = verified,
		});
		if (!verified)
			ret = -EUCLEAN;
		run_record_end(run, &(struct record_run_end){
			.exit_status = status_for_record,
			.audit_records = run->audit.records,
			.audit_seq_last = run->seq_last,
			.audit_lost = lost,
			.audit_malformed = run->audit.malformed,
			.audit_coalesced = run->audit.coalesced,
			.audit_suppressed = run->audit.suppressed,
			.fail_closed = run->policy->flags & TP_POLICY_AUDIT_FAIL_CLOSED,
			.audit_refused = refused,
			.egress_bytes = egress,
			.ingress_dropped = ingress_dropped,
			.leftover_processes = left,
			.cleanup_verified = verified,
			.reason = run_reason_name(run->reason),
			.budget = run->result.budget,
			.has_output = run->policy->limits[TP_LIMIT_OUTPUT_BYTES] != 0,
			.output_bytes = run->out_bytes,
			.output_truncated = run->out_truncated,
		});
	}
	if (run->audit.write_error) {
		run_log(run, "writing audit records: %s", strerror(-run->audit.write_error));
		ret = -EUCLEAN;
	}
	run->audit.sink = NULL;
	r = sink_close(run->sink);
	run->sink = NULL;
	if (r && !run->audit.write_error) {
		run_log(run, "closing audit file: %s", strerror(-r));
		ret = -EUCLEAN;
	}
	run_trace(run, "last records");
	run->teardown_ret = ret;
}
