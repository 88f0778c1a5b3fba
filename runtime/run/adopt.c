// SPDX-License-Identifier: GPL-2.0
/*
 * run_adopt (runtime/run/run.h): a run whose supervisor stopped, taken over.
 * Nothing about its confinement changes: its cgroup, map entries and ring
 * stayed pinned the whole time.  What the new supervisor takes is the
 * supervision: the cgroup's lock, the ring's records, the limits and the
 * deadline, the command's end, and the teardown.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "runtime/run/internal.h"
#include "runtime/runs.h"

/*
 * The command is no child of ours: its wait status comes from the kernel,
 * recorded when its thread group died (bpf/proc.bpf.c, sched_process_exit).
 */
void run_adopted_exit(struct run *run)
{
	struct tether_run_exit ex = { 0 };

	run->exited = true;
	run->status = -1;
	if (tl_run_main_exit(&run->node, run->run.run_slot, &ex) == 0 && ex.exited) {
		int st = ex.status;

		run->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	} else {
		run_log(run, "the exit status of run %s's command was not recorded by the kernel",
			run->run_id);
	}
	if (run->pidfd >= 0)
		run_epoll_del(run, run->pidfd);
}

/* A pidfd for the command, if the pid still names the process the journal saw start. */
static int open_command(const struct run_adoption *a)
{
	unsigned long long start = 0;
	int fd;

	if (a->pid <= 0)
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_open, a->pid, 0);
	if (fd < 0)
		return -errno;
	/* checked after the pidfd is held: the pid cannot be reused under it */
	if (proc_start_time(a->pid, &start) || (a->pid_start && start != a->pid_start)) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

static int adopt(struct run *run, const struct run_adoption *a, struct run_error *err)
{
	struct tl_error lerr = { "" };
	struct tl_run_counters c = { 0 };
	char mount_point[PATH_MAX];
	uint64_t before;
	FILE *mi;
	int lock, r;

	r = run_prepare_workspace(run, err);
	/*
	 * Names for its records; no DNS proxy: the stopped supervisor's went
	 * with it, and the run's lookups fail (closed) from then on.
	 */
	r = r ?: run_network_names(run, err);
	if (r)
		return r;
	if (run->policy->host_rule_count)
		run_log(run, "run %s's DNS proxy went with the supervisor that stopped: its "
			     "lookups fail from now on", run->run_id);
	mi = fopen("/proc/self/mountinfo", "re");
	r = mi ? cg_find_mount(mi, mount_point, sizeof(mount_point)) : -errno;
	if (mi)
		fclose(mi);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_CGROUP, -r,
				"finding the cgroup2 mount: %s", strerror(-r));
	lock = cg_parent_lock(mount_point);
	if (lock < 0)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_LOCK, -lock, "locking %s/%s: %s",
				mount_point, TETHER_CGROUP_PARENT, strerror(-lock));
	r = tl_node_open(TETHER_RUN_CGROUP_LEVEL, lock, &run->node, &lerr);
	if (r) {
		close(lock);
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_LOAD, -r, "%s", lerr.msg);
	}
	run->node_open = true;
	r = cg_run_adopt(a->cgroup_path, &run->cg);
	close(lock);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_CGROUP, -r, "taking over %s: %s",
				a->cgroup_path,
				r == -EWOULDBLOCK ? "a live controller holds it" : strerror(-r));
	run->cg_created = true;
	r = tl_run_adopt(&run->node, run->cg.id, &run->run, &lerr);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_INSTALL, -r,
				"taking over the map entries of %s: %s", a->cgroup_path,
				r == -ENOENT ? "none is registered" : lerr.msg);
	run->run_installed = true;
	r = run_open_stream(run, err);
	if (r)
		return r;

	run->started = true;
	run->pidfd = open_command(a);
	if (run->pidfd >= 0) {
		run->child_pid = a->pid;
		run_epoll_add(run, run->pidfd, EPOLLIN);
	} else {
		run->pidfd = -1;
		run_adopted_exit(run);
	}
	run->deadline_ns = a->deadline_ns;
	/* the journal's; one written before leases were journaled: from now */
	if (a->lease_end_ns)
		run->lease_end_ns = a->lease_end_ns;
	/* ours now: its mark goes with its cleanup */
	if (run->cfg.daemon_owned)
		run_set_owner_mark(run);
	r = run_watch_limits(run);
	r = r ?: (run->exited ? 0 : run_start_timer(run));
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_PREPARE, -r,
				"watching run %s's limits: %s", run->run_id, strerror(-r));

	/* what the ring held while nobody read it, then the record of the gap */
	run->audit.records = a->records_before;
	before = run->audit.records;
	run_drain(run);
	tl_run_counters(&run->node, &run->run, &c);
	{
		struct record rec = {
			.kind = RECORD_RUN,
			.run.event = RECORD_RUN_ADOPTED,
			.run.adopted = {
				.gap_ms = a->gap_ms,
				.audit_lost = c.audit_lost,
				.backlog = run->audit.records - before,
				.command_alive = !run->exited,
			},
		};

		audit_write(&run->audit, &rec);
	}
	return 0;
}

int run_adopt(const struct run_config *cfg, const struct run_adoption *a, struct run **out,
	      struct run_error *err)
{
	struct run *run;
	int r = run_init(cfg, &run, err);

	if (r)
		return r;
	run->adopted = true;
	r = adopt(run, a, err);
	if (r) {
		/*
		 * Not ours after all: leave the run as it was (its lock is
		 * released with our descriptors), for the sweep to reclaim.
		 */
		if (run->cg_created)
			cg_run_free(&run->cg);
		run->cg_created = false;
		if (run->run_installed)
			tl_run_free(&run->run);
		run->run_installed = false;
		run->started = false;
		run_cleanup(run, -1, false);
		run->torn_down = true;
		run_free(run);
		return r;
	}
	*out = run;
	return 0;
}

void run_detach(struct run *run)
{
	if (!run)
		return;
	if (!run->torn_down) {
		/* records counted in open windows are written now, numbered as always */
		if (run->ring)
			run_drain(run);
		audit_flush(&run->audit);
		ring_buffer__free(run->ring);
		run->ring = NULL;
		if (run->run_installed)
			tl_run_free(&run->run);
		run->run_installed = false;
		if (run->node_open)
			tl_node_close(&run->node);
		run->node_open = false;
		/* the lock goes with the descriptor: the next supervisor takes it */
		if (run->cg_created)
			cg_run_free(&run->cg);
		run->cg_created = false;
		run->torn_down = true;
	}
	run_free(run);
}
