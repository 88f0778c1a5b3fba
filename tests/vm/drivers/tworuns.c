// SPDX-License-Identifier: GPL-2.0
/*
 * Two runs with different policies, held by one process and driven by one
 * event loop to their end records: the run object (runtime/run/run.h) as a
 * node agent would use it.
 *
 *   tworuns ENVELOPE_A AUDIT_A COMMAND_A ENVELOPE_B AUDIT_B COMMAND_B
 *
 * Each COMMAND is given to /bin/sh -c.  Both runs are created and started
 * before either is served, so both are live at once.  Prints one line per
 * run, "NAME reason=R exit=N verified=0|1 concurrent=0|1", and exits 0 when
 * both were torn down (whatever their reasons: the suite judges them).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "policyc/policy.h"
#include "runtime/run/run.h"
#include "runtime/tether.h"

struct slot {
	const char *name;
	struct tp_policy *policy;
	char *argv[4];
	struct run *run;
	bool concurrent;	/* the other run was live while this one was */
};

static int create(struct slot *s, const char *envelope, const char *audit, const char *cmd,
		  const sigset_t *mask)
{
	struct run_config cfg = {
		.policy_path = envelope,
		.run_id = s->name,
		.audit_path = audit,
		.argv = s->argv,
		.environ = environ,
		.out_fd = { STDOUT_FILENO, STDERR_FILENO },
		.child_mask = mask,
	};
	struct run_error err;

	cfg.started_ns = clock_ns(CLOCK_MONOTONIC);
	s->argv[0] = "/bin/sh";
	s->argv[1] = "-c";
	s->argv[2] = (char *)cmd;
	s->argv[3] = NULL;
	if (policy_load(envelope, &s->policy) < 0)
		return -EINVAL;
	cfg.policy = s->policy;
	if (run_create(&cfg, &s->run, &err) || run_start(s->run, &err)) {
		fprintf(stderr, "tworuns: %s: %s\n", s->name, err.msg);
		return err.err ? -err.err : -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct slot slots[2] = { { .name = "two-a" }, { .name = "two-b" } };
	sigset_t mask;
	int ep, live = 2, status = 0;

	if (argc != 7) {
		fprintf(stderr, "usage: tworuns ENV_A AUDIT_A CMD_A ENV_B AUDIT_B CMD_B\n");
		return 2;
	}
	sigprocmask(SIG_SETMASK, NULL, &mask);
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		if (create(&slots[i], argv[1 + 3 * i], argv[2 + 3 * i], argv[3 + 3 * i], &mask))
			return 1;
		epoll_ctl(ep, EPOLL_CTL_ADD, run_fd(slots[i].run), &ev);
	}
	/* both are started and neither has been served: both are live now */
	for (int i = 0; i < 2; i++)
		slots[i].concurrent = !run_exited(slots[0].run) && !run_exited(slots[1].run);

	while (live) {
		struct epoll_event got[2];
		int n = epoll_wait(ep, got, 2, -1);

		for (int i = 0; i < n; i++) {
			struct slot *s = &slots[got[i].data.u32];
			struct run_error err;

			if (run_exited(s->run))
				continue;
			if (run_dispatch(s->run, 0, NULL, &err)) {
				fprintf(stderr, "tworuns: %s: %s\n", s->name, err.msg);
				return 1;
			}
			if (run_exited(s->run)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, run_fd(s->run), NULL);
				live--;
			}
		}
		if (n < 0 && errno != EINTR)
			return 1;
	}
	for (int i = 0; i < 2; i++) {
		struct run_result res;
		struct run_error err;

		if (run_teardown(slots[i].run, &res, &err))
			status = 1;
		printf("%s reason=%s exit=%d verified=%d concurrent=%d\n", slots[i].name,
		       run_reason_name(res.reason), res.exit_status, res.cleanup_verified,
		       slots[i].concurrent);
		run_free(slots[i].run);
		tp_policy_free(slots[i].policy);
	}
	close(ep);
	return status;
}
