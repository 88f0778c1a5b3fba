// SPDX-License-Identifier: GPL-2.0
/*
 * The limits the controller watches: resources.wall_clock and cleanup.lease
 * (timerfds), memory_bytes and process_count (the kernel enforces both; memory.events
 * and pids.events say when it acted, and inotify says when they change).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "runtime/run/internal.h"

/* More than this many refused forks (pids.events "max") end a run: it is not recovering. */
#define PIDS_MAX_HITS 32

int run_watch_limits(struct run *run)
{
	static const char *const files[] = { "memory.events", "pids.events" };
	char path[PATH_MAX];

	if (!run->limits.memory_bytes && !run->limits.pids)
		return 0;
	run->events_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (run->events_fd < 0)
		return -errno;
	for (size_t i = 0; i < 2; i++) {
		if ((i == 0 && !run->limits.memory_bytes) || (i == 1 && !run->limits.pids))
			continue;
		snprintf(path, sizeof(path), "%s/%s", run->cg.path, files[i]);
		if (inotify_add_watch(run->events_fd, path, IN_MODIFY) < 0)
			return -errno;
	}
	run_epoll_add(run, run->events_fd, EPOLLIN);
	return 0;
}

/*
 * A timerfd in *fd that fires at `at`, an absolute CLOCK_MONOTONIC time,
 * which every process of the boot shares: a supervisor that adopts the run
 * keeps it (run_adopt), and one already past fires at once.
 */
static int arm(struct run *run, int *fd, uint64_t at)
{
	struct itimerspec its = { 0 };

	*fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (*fd < 0)
		return -errno;
	its.it_value.tv_sec = (time_t)(at / 1000000000);
	its.it_value.tv_nsec = (long)(at % 1000000000);
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;	/* zero would disarm it */
	if (timerfd_settime(*fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	run_epoll_add(run, *fd, EPOLLIN);
	return 0;
}

int run_start_timer(struct run *run)
{
	uint64_t ms = run->policy->limits[TP_LIMIT_WALL_CLOCK_MS];
	int r;

	if (ms && !run->deadline_ns)
		run->deadline_ns = clock_ns(CLOCK_MONOTONIC) + ms * 1000000;
	if (run->deadline_ns && (r = arm(run, &run->timer_fd, run->deadline_ns)))
		return r;
	if (run->lease_end_ns && (r = arm(run, &run->lease_fd, run->lease_end_ns)))
		return r;
	return 0;
}

/* Whether the kernel's OOM killer acted in the run (memory.events counts its subtree). */
bool run_oom_killed(struct run *run)
{
	uint64_t n;

	return run->limits.memory_bytes &&
	       cg_run_read_counter(&run->cg, "memory.events", "oom_kill", &n) == 0 && n > 0;
}

static void check_limits(struct run *run)
{
	char buf[4096];
	uint64_t n;

	while (run->events_fd >= 0 && read(run->events_fd, buf, sizeof(buf)) > 0)
		;
	if (run_oom_killed(run))
		run_end(run, RUN_REASON_BUDGET, "memory_bytes",
			"the kernel's OOM killer acted at resources.memory_bytes");
	if (run->limits.pids && cg_run_read_counter(&run->cg, "pids.events", "max", &n) == 0 &&
	    n > PIDS_MAX_HITS)
		run_end(run, RUN_REASON_BUDGET, "process_count",
			"more than " STRINGIFY(PIDS_MAX_HITS) " forks were refused at "
			"resources.process_count");
}

/* An event of the loop on the timer or the limits' watch. */
void run_limits_event(struct run *run, int fd)
{
	uint64_t ticks;

	if (fd == run->events_fd)
		check_limits(run);
	else if (fd == run->timer_fd && read(run->timer_fd, &ticks, sizeof(ticks)) == sizeof(ticks))
		run_end(run, RUN_REASON_TIMED_OUT, NULL, "it ran for resources.wall_clock");
	else if (fd == run->lease_fd && read(run->lease_fd, &ticks, sizeof(ticks)) == sizeof(ticks))
		run_end(run, RUN_REASON_TIMED_OUT, "lease", "its cleanup.lease ended");
}

void run_limits_free(struct run *run)
{
	if (run->timer_fd >= 0)
		close(run->timer_fd);
	if (run->lease_fd >= 0)
		close(run->lease_fd);
	if (run->events_fd >= 0)
		close(run->events_fd);
	run->timer_fd = run->lease_fd = run->events_fd = -1;
}
