// SPDX-License-Identifier: GPL-2.0
/*
 * The limits (policy.h, struct tp_limit_info): for each, its envelope key,
 * how it is written, its range, what the summary and the start record call
 * it, and what enforces it.  Every other file reads this table, so adding a
 * limit is one entry here, one TP_LIMIT_* value, its schema key (envelope.c)
 * and its enforcement in runtime/.
 */
#include "policyc/policy.h"

/* 30 days: the longest wall clock and lease. */
#define MONTH_MS (30ull * 24 * 3600 * 1000)

/* Every limit this version enforces was a gap of an earlier one (former_gap)... */
#define ENFORCED_LIMIT(key, t, m) { key, TP_TERM_##t, TP_ENFORCED, false, true, m }
/* ...but those that came with their enforcement. */
#define NEW_LIMIT(key, t, m) { key, TP_TERM_##t, TP_ENFORCED, false, false, m }
#define GAP_LIMIT(key, t, m) { key, TP_TERM_##t, TP_NOT_ENFORCED, true, false, m }

const struct tp_limit_info tp_limits[TP_LIMIT_COUNT] = {
	[TP_LIMIT_CPU_MILLI] = {
		ENFORCED_LIMIT("resources.cpu", R,
			       "cgroup v2 cpu.max: the run's threads together get cpu x 100 ms of "
			       "CPU time per 100 ms period, and are throttled past it"),
		"cpu", "cpu_milli", TP_UNIT_MILLI_CPU, 10, 1024000,
	},
	[TP_LIMIT_MEMORY_BYTES] = {
		ENFORCED_LIMIT("resources.memory_bytes", R,
			       "cgroup v2 memory.max, with memory.swap.max 0 and memory.oom.group "
			       "1: past it the kernel reclaims, then OOM-kills the run's processes "
			       "together; the run ends budget_exhausted"),
		"memory", "memory_bytes", TP_UNIT_BYTES, 1ull << 20, 1ull << 50,
	},
	[TP_LIMIT_PROCESS_COUNT] = {
		ENFORCED_LIMIT("resources.process_count", R,
			       "cgroup v2 pids.max (threads count): fork, clone and pthread_create "
			       "fail with EAGAIN at the limit; a run that keeps hitting it ends "
			       "budget_exhausted"),
		"processes", "process_count", TP_UNIT_COUNT, 1, 4194304,
	},
	[TP_LIMIT_DISK_BYTES] = {
		ENFORCED_LIMIT("resources.disk_bytes", R,
			       "the run's own tmpfs, of at most disk_bytes, holds everything it may "
			       "write: a fresh workspace and its /tmp, /var/tmp, /dev/shm and HOME; "
			       "writes past it fail with ENOSPC, and the run ends budget_exhausted"),
		"disk", "disk_bytes", TP_UNIT_BYTES, 1ull << 20, 1ull << 50,
	},
	[TP_LIMIT_OPEN_FILES] = {
		ENFORCED_LIMIT("resources.open_files", R,
			       "RLIMIT_NOFILE, soft and hard, set before exec: opening past it "
			       "fails with EMFILE, and without capabilities the run cannot raise "
			       "it"),
		"open files", "open_files", TP_UNIT_COUNT, 3, 1048576,
	},
	[TP_LIMIT_OUTPUT_BYTES] = {
		ENFORCED_LIMIT("resources.output_bytes", R,
			       "the controller reads the run's stdout and stderr through pipes and "
			       "keeps the first output_bytes of them; past that it records the "
			       "truncation and ends the run (budget_exhausted)"),
		"output", "output_bytes", TP_UNIT_BYTES, 1, 1ull << 40,
	},
	[TP_LIMIT_WALL_CLOCK_MS] = {
		ENFORCED_LIMIT("resources.wall_clock", R,
			       "the controller's timer writes cgroup.kill when it expires, killing "
			       "every process of the run at once; the run ends timed_out"),
		"wall clock", "wall_clock_ms", TP_UNIT_MS, 1000, MONTH_MS,
	},
	[TP_LIMIT_WORKSPACE_BYTES] = {
		ENFORCED_LIMIT("filesystem.workspace.max_bytes", R,
			       "a fresh workspace is a tmpfs of at most max_bytes (shared with the "
			       "private trees when disk_bytes is set too): writes past it fail "
			       "with ENOSPC, and the run ends budget_exhausted"),
		"workspace size", "workspace_bytes", TP_UNIT_BYTES, 1ull << 20, 1ull << 50,
	},
	[TP_LIMIT_EGRESS_BYTES] = {
		ENFORCED_LIMIT("network_egress.max_bytes", N,
			       "cgroup_skb/egress counts the run's packets and drops them past the "
			       "cap; the controller ends the run (budget_exhausted)"),
		"network egress", NULL, TP_UNIT_BYTES, 1, 1ull << 50,
	},
	[TP_LIMIT_LEASE_MS] = {
		ENFORCED_LIMIT("cleanup.lease", T,
			       "the controller's timer, from the run's creation (setup included), "
			       "writes cgroup.kill when the lease ends; the run ends timed_out with "
			       "budget lease.  Through the daemon the end time is journaled: a "
			       "daemon that adopts the run keeps it, and ends a run whose lease "
			       "ended while no daemon ran as soon as it starts"),
		"lease", "lease_ms", TP_UNIT_MS, 1000, MONTH_MS,
	},
	[TP_LIMIT_DISK_INODES] = {
		NEW_LIMIT("resources.disk_inodes", R,
			       "the nr_inodes of the run's own tmpfs (see disk_bytes): creating a "
			       "file, directory, link or socket past it fails with ENOSPC, and the "
			       "run ends budget_exhausted"),
		"disk files", "disk_inodes", TP_UNIT_COUNT, 16, 1ull << 32,
	},
};
