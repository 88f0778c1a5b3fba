/* SPDX-License-Identifier: GPL-2.0 */
/* cgroup2: finding the hierarchy, creating, emptying and removing a run's cgroup. */
#ifndef TETHER_RUNTIME_CGROUP_H
#define TETHER_RUNTIME_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Parent of every run cgroup, relative to the cgroup2 mount. */
#define TETHER_CGROUP_PARENT "tether"
/* <mount> is level 0, <mount>/tether level 1, a run level 2. */
#define TETHER_RUN_CGROUP_LEVEL 2

/*
 * Finds the cgroup2 mount in a mountinfo stream (/proc/self/mountinfo):
 * writes its mount point (octal escapes decoded) and returns 0, or -ENOENT.
 * The hierarchy's root must be mounted ("/" in field 4) for levels to be known.
 */
int cg_find_mount(FILE *mountinfo, char *mount_point, size_t size);

struct cg_run {
	char *path;		/* <mount>/tether/<run id> */
	int dir_fd;		/* O_PATH|O_DIRECTORY fd, for clone3(CLONE_INTO_CGROUP) */
	int lock_fd;		/* held flock(LOCK_EX): "a controller owns this run" */
	uint64_t id;		/* cgroup id (what bpf_get_current_cgroup_id returns) */
	uint32_t level;		/* 0 is the hierarchy root */
};

/* Creates <mount>/tether/<run_id> and takes its lock (call under the parent
 * lock); -EEXIST if a run of that id exists. */
int cg_run_create(const char *mount_point, const char *run_id, struct cg_run *cg);

/*
 * Ownership of run cgroups.  A controller holds flock(LOCK_EX) on its run's
 * directory for as long as it lives, and takes the run directory and its
 * lock while holding <mount>/tether exclusively; the sweep for orphans holds
 * that too.  So, under the parent lock, a run directory whose lock can be
 * taken belongs to a controller that died.
 *
 * cg_parent_lock returns an fd holding flock(LOCK_EX) on <mount>/tether
 * (created if missing), or a negative errno; close it to release.
 */
int cg_parent_lock(const char *mount_point);

/* Opens an existing run cgroup directory (for a sweep); lock_fd stays -1. */
int cg_run_open(const char *path, struct cg_run *cg);

/*
 * Opens an existing run cgroup and takes its lock, as its controller now
 * (a supervisor adopting the run); -EWOULDBLOCK when a live controller
 * holds it.  Call under the parent lock.
 */
int cg_run_adopt(const char *path, struct cg_run *cg);

/*
 * Under the parent lock: the run cgroups below <mount>/tether whose lock is
 * free, opened and locked (so the caller may remove them), and the ids of
 * all run cgroups found.  Arrays are malloc'd.
 */
int cg_find_orphans(const char *mount_point, struct cg_run **orphans, size_t *orphan_count,
		    uint64_t **all_ids, size_t *all_count);

/* The controllers the hierarchy root offers ("cpu memory pids ..."), malloc'd. */
char *cg_controllers(const char *mount_point);

/*
 * Kills every process left in the cgroup (cgroup.kill, or SIGKILL to each
 * member on kernels without it) and waits until it is empty, at most
 * timeout_ms.  Returns 0 when verified empty, -ETIMEDOUT otherwise.
 * *killed receives how many processes were still there.
 */
int cg_run_kill_and_wait(struct cg_run *cg, int timeout_ms, unsigned int *killed);

/* The cgroup v2 limits of a run (resources.*); 0: not limited. */
struct cg_limits {
	uint64_t cpu_milli;	/* cpu.max: 1000 is one CPU */
	uint64_t memory_bytes;	/* memory.max, with memory.swap.max 0 and memory.oom.group 1 */
	uint64_t pids;		/* pids.max: tasks, threads included */
};

/* cpu.max's "QUOTA PERIOD" for a share of CPUs (period 100 ms, quota at least 1 ms). */
void cg_format_cpu_max(uint64_t cpu_milli, char *buf, size_t size);

/*
 * The controllers `limits` need that `available` (cgroup.controllers) lacks,
 * space-separated into `out`; "" when none is missing.
 */
void cg_missing_controllers(const char *available, const struct cg_limits *limits, char *out,
			    size_t size);

/*
 * Enables the controllers `limits` need in <mount>/cgroup.subtree_control
 * and <mount>/tether/cgroup.subtree_control (under the parent lock, before
 * the run cgroup is made).  Returns 0 or a negative errno, naming the file
 * in `why`.
 */
int cg_enable_controllers(const char *mount_point, const struct cg_limits *limits, char *why,
			  size_t why_len);

/* Writes the run cgroup's limits (before any process is in it). */
int cg_run_set_limits(struct cg_run *cg, const struct cg_limits *limits, char *why,
		      size_t why_len);

/*
 * Reads KEY's counter from a flat-keyed cgroup file ("oom_kill 2" in
 * memory.events, "max 7" in pids.events) of the run cgroup.  Returns 0, or
 * a negative errno (-ENOENT: no such file or key).
 */
int cg_run_read_counter(struct cg_run *cg, const char *file, const char *key, uint64_t *value);

/* Removes the run cgroup directory and frees the struct. */
int cg_run_destroy(struct cg_run *cg);
void cg_run_free(struct cg_run *cg);

#endif
