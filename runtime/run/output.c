// SPDX-License-Identifier: GPL-2.0
/*
 * Captured output (resources.output_bytes).  The run's stdout and stderr are
 * pipes the controller reads and forwards to its targets (run_config.out_fd),
 * counting both together.  At the cap it forwards the bytes that fit,
 * records the truncation, closes the pipes and ends the run
 * (budget_exhausted): a run never blocks on a full pipe nobody reads.
 *
 * Forwarding must not hold up the loop either: whoever reads a target may be
 * slow or stop, and the wall clock, signals, DNS and the audit ring are
 * served by the same loop.  So a stream writes at most PIPE_BUF bytes at a
 * time, and only when poll() says its target has room (a pipe, socket or
 * terminal then takes them without blocking; a regular file always does).
 * While bytes wait, the stream stops reading the run's pipe (the run then
 * waits on its own full pipe, as it would without tether) and the loop
 * watches the target instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/run/internal.h"

#define OUTPUT_CHUNK 65536

static void output_close(struct run *run, int i, bool loop)
{
	struct out_stream *o = &run->out[i];

	if (o->fd >= 0) {
		if (loop)
			run_epoll_del(run, o->fd);
		close(o->fd);
		o->fd = -1;
	}
	if (o->watching_target && loop)
		run_epoll_del(run, o->target);
	o->watching_target = false;
}

/*
 * Writes what stream i holds while its target has room, waiting at most
 * wait_ms for it.  Returns true when nothing is left.  In the loop, a target
 * without room is watched and the run's pipe is not: the loop comes back
 * here when it has room.
 */
static bool output_flush(struct run *run, int i, bool loop, int wait_ms)
{
	struct out_stream *o = &run->out[i];
	struct pollfd pfd = { .fd = o->target, .events = POLLOUT };

	while (o->off < o->len) {
		size_t n = o->len - o->off;
		ssize_t w;

		if (poll(&pfd, 1, o->stalled ? 0 : wait_ms) <= 0 || !(pfd.revents & POLLOUT)) {
			if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
				break;	/* nobody reads the target: drop */
			if (!loop) {
				/* the run is over: what cannot go is dropped, without waiting again */
				o->stalled = true;
				break;
			}
			if (!o->watching_target) {
				struct epoll_event ev = { .events = EPOLLOUT, .data.fd = pfd.fd };

				/* EPERM: a regular file, which poll says always has room */
				o->watching_target = epoll_ctl(run->ep, EPOLL_CTL_ADD, pfd.fd, &ev) == 0;
			}
			if (o->fd >= 0)
				run_epoll_mod(run, o->fd, 0);
			return false;
		}
		w = write(pfd.fd, o->buf + o->off, n < PIPE_BUF ? n : PIPE_BUF);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			break;	/* the target is gone: the bytes are dropped, counted */
		o->off += (size_t)w;
	}
	o->off = o->len = 0;
	if (loop) {
		if (o->watching_target)
			run_epoll_del(run, pfd.fd);
		if (o->fd >= 0)
			run_epoll_mod(run, o->fd, EPOLLIN);
	}
	o->watching_target = false;
	return true;
}

/*
 * Reads what stream i (0 stdout, 1 stderr) has and forwards it: 1 bytes
 * moved on, 0 none now (or waiting for room), -1 closed.
 */
static int output_forward(struct run *run, int i, bool loop, int wait_ms)
{
	struct out_stream *o = &run->out[i];
	uint64_t cap = run->policy->limits[TP_LIMIT_OUTPUT_BYTES];
	ssize_t n;

	if (!output_flush(run, i, loop, wait_ms))
		return 0;
	if (o->fd < 0)
		return -1;
	n = read(o->fd, o->buf, OUTPUT_CHUNK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		output_close(run, i, loop);
		return -1;
	}
	if (run->out_bytes + (uint64_t)n <= cap) {
		o->len = (size_t)n;
		run->out_bytes += (uint64_t)n;
		output_flush(run, i, loop, wait_ms);
		return 1;
	}
	o->len = (size_t)(cap - run->out_bytes);
	run->out_bytes = cap;
	run->out_truncated = true;
	run_record_truncated(run, i, cap);
	output_close(run, 0, loop);
	output_close(run, 1, loop);
	run_end(run, RUN_REASON_BUDGET, "output_bytes", "its output reached resources.output_bytes");
	/* the bytes that fit still go, waiting a little if they must */
	output_flush(run, 0, false, OUTPUT_FINAL_WAIT_MS);
	output_flush(run, 1, false, OUTPUT_FINAL_WAIT_MS);
	return -1;
}

/* An event of the loop on one of the streams' descriptors. */
void run_output_event(struct run *run, int fd)
{
	for (int i = 0; i < 2; i++) {
		struct out_stream *o = &run->out[i];

		if (fd == o->fd) {
			output_forward(run, i, true, 0);
			return;
		}
		/* the target has room again */
		if (fd == o->target && o->watching_target && output_flush(run, i, true, 0))
			output_forward(run, i, true, 0);
	}
}

/*
 * What the pipes hold, without the loop: at teardown, once every writer is
 * gone (until EOF).
 */
void run_output_drain(struct run *run, int wait_ms)
{
	for (int i = 0; i < 2; i++)
		while (output_forward(run, i, false, wait_ms) == 1)
			;
}

/* The pipes the run writes its stdout and stderr to. */
int run_output_capture(struct run *run, int write_fd[2])
{
	for (int i = 0; i < 2; i++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
			close(p[0]);
			close(p[1]);
			return -errno;
		}
		run->out[i].fd = p[0];
		write_fd[i] = p[1];
		run->out[i].buf = malloc(OUTPUT_CHUNK);
		if (!run->out[i].buf)
			return -ENOMEM;
		run_epoll_add(run, p[0], EPOLLIN);
	}
	return 0;
}

void run_output_free(struct run *run)
{
	for (int i = 0; i < 2; i++) {
		if (run->out[i].fd >= 0)
			close(run->out[i].fd);
		run->out[i].fd = -1;
		free(run->out[i].buf);
		run->out[i].buf = NULL;
	}
}
