// SPDX-License-Identifier: GPL-2.0
/*
 * tether kill RUN: cancels a live run.  The run's controller owns its
 * lifecycle, so kill asks it (SIGTERM, as Ctrl-C would): the controller
 * kills the run's cgroup, verifies it empty, removes it and its map entries,
 * writes the cleanup and end records (reason "cancelled") and exits 130.
 * kill waits for that, so when it returns 0 the run is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/daemon/client.h"
#include "runtime/runs.h"
#include "runtime/tether.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* How long kill waits for the controller to end the run (cleanup waits 10 s at most). */
#define KILL_WAIT_MS 30000

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tether kill RUN_ID\n"
		"\n"
		"Cancels the live run RUN_ID: its controller (tether run) kills every process\n"
		"of the run, removes its cgroup and map entries, records the cleanup and ends\n"
		"the run as cancelled (tether run exits 130).  Waits until it has.\n"
		"\n"
		"Exit status: 0 the run was cancelled and its controller has exited;\n"
		"  1  the controller could not be signalled, or did not exit within 30 s;\n"
		"  2  usage error;  3  no live run has that id.\n");
}

int cmd_kill(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned long long start, now;
	char path[256], buf[128];
	const char *id;
	struct pollfd pfd;
	ssize_t n;
	pid_t pid;
	int c, fd, pidfd, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return TETHER_EXIT_OK;
		}
		usage(stderr);
		return TETHER_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return TETHER_EXIT_USAGE;
	}
	id = argv[optind];
	if (!run_id_valid(id)) {
		fprintf(stderr, "tether kill: invalid run id '%s'\n", id);
		return TETHER_EXIT_USAGE;
	}
	/* the daemon's runs first: it ends them and journals why */
	if (client_daemon_up(client_socket_path())) {
		char target[256], *body = NULL;
		int status = 0;

		snprintf(target, sizeof(target), "/v1/runs/%s/cancel", id);
		r = client_request(client_socket_path(), "POST", target, "", 0, &status, &body, NULL);
		free(body);
		if (r == 0 && status == 202)
			return TETHER_EXIT_OK;
		if (r == 0 && status == 409) {
			fprintf(stderr, "tether kill: run '%s' has ended already\n", id);
			return TETHER_EXIT_KILL_NO_RUN;
		}
		if (r == 0 && status == 403) {
			fprintf(stderr, "tether kill: the daemon does not let this user end runs\n");
			return TETHER_EXIT_INVALID;
		}
		/* 404: not the daemon's; a standalone run's file may name it */
	}
	snprintf(path, sizeof(path), TETHER_RUNS_DIR "/%s", id);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT) {
			fprintf(stderr, "tether kill: no live run has the id '%s'\n", id);
			return TETHER_EXIT_KILL_NO_RUN;
		}
		fprintf(stderr, "tether kill: reading %s: %s\n", path, strerror(errno));
		return TETHER_EXIT_INVALID;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (n <= 0 || runs_file_parse(buf, &pid, &start)) {
		fprintf(stderr, "tether kill: %s does not name a controller\n", path);
		return TETHER_EXIT_INVALID;
	}
	/*
	 * The pidfd pins the process; its start time, read after, proves it is
	 * the controller that wrote the file and not a later process with its
	 * pid (a controller that died leaves its file for the next run to reclaim).
	 */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	r = pidfd < 0 ? -errno : proc_start_time(pid, &now);
	if (r == -ESRCH || r == -ENOENT || (!r && now != start)) {
		fprintf(stderr, "tether kill: run '%s' has no live controller (it died); the next "
				"tether run reclaims the run's processes, cgroup and map entries\n", id);
		if (pidfd >= 0)
			close(pidfd);
		return TETHER_EXIT_KILL_NO_RUN;
	}
	if (r || syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0) < 0) {
		fprintf(stderr, "tether kill: signalling the controller of run '%s' (pid %d): %s\n",
			id, (int)pid, strerror(r ? -r : errno));
		close(pidfd);
		return TETHER_EXIT_INVALID;
	}
	pfd = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	do
		r = poll(&pfd, 1, KILL_WAIT_MS);
	while (r < 0 && errno == EINTR);
	close(pidfd);
	if (r <= 0) {
		fprintf(stderr, "tether kill: the controller of run '%s' (pid %d) %s\n", id,
			(int)pid, r == 0 ? "has not exited after 30 s" : strerror(errno));
		return TETHER_EXIT_INVALID;
	}
	fprintf(stderr, "tether kill: run '%s' was cancelled\n", id);
	return TETHER_EXIT_OK;
}
