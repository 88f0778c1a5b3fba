// SPDX-License-Identifier: GPL-2.0
/*
 * The limits the controller watches: resources.wall_clock (a timerfd),
 * memory_bytes and process_count (the kernel enforces both; memory.events
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

int run_start_timer(struct run *run)
{
	uint64_t ms = run->policy->limits[TP_LIMIT_WALL_CLOCK_MS];
	struct itimerspec its = { 0 };

	if (!ms)
		return 0;
	run->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (run->timer_fd < 0)
		return -errno;
	/*
	 * An absolute deadline on CLOCK_MONOTONIC, which every process of the
	 * boot shares: a supervisor that adopts the run keeps it (run_adopt).
	 */
	if (!run->deadline_ns)
		run->deadline_ns = clock_ns(CLOCK_MONOTONIC) + ms * 1000000;
	its.it_value.tv_sec = (time_t)(run->deadline_ns / 1000000000);
	its.it_value.tv_nsec = (long)(run->deadline_ns % 1000000000);
	if (timerfd_settime(run->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return -errno;
	run_epoll_add(run, run->timer_fd, EPOLLIN);
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
}

void run_limits_free(struct run *run)
{
	if (run->timer_fd >= 0)
		close(run->timer_fd);
	if (run->events_fd >= 0)
		close(run->events_fd);
	run->timer_fd = run->events_fd = -1;
}
