// SPDX-License-Identifier: GPL-2.0
/*
 * cg_run_kill_and_wait, the first step of every run's teardown, against a
 * real cgroup tree, one case per call:
 *
 *   killwait CASE
 *
 * Makes a run cgroup below <cgroup2 mount>/tether (no BPF: nothing here is
 * about rules), puts the case's processes in it, calls cg_run_kill_and_wait
 * and checks what it returns and counts against what the kernel says:
 * cgroup.events reads "populated 0" and every process it reaped died of
 * SIGKILL.  Prints one line, "CASE ok ..." or "CASE FAIL ...", and exits 0,
 * 1 (a check failed) or 2 (the case could not be set up).
 *
 * Cases:
 *   empty     no process: 0 at once, killed 0
 *   sleepers  8 processes in pause(): 0, killed 8
 *   forker    one process forking without end, each child once more:
 *             0, the tree empty although forks race the kill
 *   nested    4 processes in a child cgroup and 4 in a grandchild, none
 *             in the run cgroup itself: 0 once the subtree is empty
 *   deadline0 one process, timeout 0 (what run_end does): -ETIMEDOUT at
 *             once, then with a timeout, 0
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cgroup.h"

#define WAIT_MS 10000

static const char *name;

static int setup_fail(const char *what, int err)
{
	printf("%s setup: %s: %s\n", name, what, strerror(err < 0 ? -err : err));
	return 2;
}

/* Moves the caller into the cgroup directory dir; 0 or -errno. */
static int join(const char *dir)
{
	char path[PATH_MAX];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "0", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

/*
 * A child in dir, past its move, in pause() (forking without end if
 * forker); its pid, or -errno.  It says it moved through a pipe before the
 * caller goes on.
 */
static pid_t spawn(const char *dir, bool forker)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(ready[0]);
		close(ready[1]);
		return -errno;
	}
	if (pid == 0) {
		close(ready[0]);
		if (join(dir))
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		close(ready[1]);
		/*
		 * Forks without end, and each child once more before it waits
		 * (a double fork): the tree grows linearly, no fork bomb, and
		 * is forking when the kill comes.  Failures do not matter.
		 */
		while (forker) {
			if (fork() == 0) {
				fork();
				pause();
				_exit(0);
			}
		}
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		waitpid(pid, NULL, 0);
		return -EIO;
	}
	close(ready[0]);
	return pid;
}

static bool populated(const char *dir)
{
	char path[PATH_MAX], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	return !strstr(buf, "populated 0");
}

int main(int argc, char **argv)
{
	char mount[PATH_MAX], run_id[64], child[PATH_MAX], grandchild[PATH_MAX];
	pid_t pids[8];
	int npids = 0, parent_lock, r, want_killed = -1, st;
	unsigned int killed = 0;
	bool ok = true;
	struct cg_run cg;
	FILE *mi;

	if (argc != 2) {
		fprintf(stderr, "usage: killwait empty|sleepers|forker|nested|deadline0\n");
		return 2;
	}
	name = argv[1];
	/* the forker's orphans are ours to reap, not the VM's init's */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	mi = fopen("/proc/self/mountinfo", "re");
	if (!mi)
		return setup_fail("opening mountinfo", errno);
	r = cg_find_mount(mi, mount, sizeof(mount));
	fclose(mi);
	if (r)
		return setup_fail("finding the cgroup2 mount", r);
	parent_lock = cg_parent_lock(mount);
	if (parent_lock < 0)
		return setup_fail("locking the run cgroups' parent", parent_lock);
	snprintf(run_id, sizeof(run_id), "killwait-%s-%d", name, (int)getpid());
	r = cg_run_create(mount, run_id, &cg);
	close(parent_lock);
	if (r)
		return setup_fail("creating the run cgroup", r);
	snprintf(child, sizeof(child), "%s/sub", cg.path);
	snprintf(grandchild, sizeof(grandchild), "%s/sub/subsub", cg.path);

	if (!strcmp(name, "empty")) {
		want_killed = 0;
	} else if (!strcmp(name, "sleepers") || !strcmp(name, "deadline0")) {
		int n = !strcmp(name, "sleepers") ? 8 : 1;

		for (; npids < n; npids++)
			if ((pids[npids] = spawn(cg.path, false)) < 0)
				return setup_fail("spawning a process", pids[npids]);
		want_killed = n;
	} else if (!strcmp(name, "forker")) {
		if ((pids[npids] = spawn(cg.path, true)) < 0)
			return setup_fail("spawning the forker", pids[npids]);
		npids++;
		/* let it fork for a while: its tree is what the kill races */
		usleep(200 * 1000);
	} else if (!strcmp(name, "nested")) {
		if (mkdir(child, 0755) < 0 || mkdir(grandchild, 0755) < 0)
			return setup_fail("creating the nested cgroups", errno);
		for (; npids < 8; npids++)
			if ((pids[npids] = spawn(npids < 4 ? child : grandchild, false)) < 0)
				return setup_fail("spawning a process", pids[npids]);
		/* cgroup.procs of the run cgroup itself lists none of them */
		want_killed = 0;
	} else {
		fprintf(stderr, "killwait: unknown case %s\n", name);
		return 2;
	}

	printf("%s", name);
	if (!strcmp(name, "deadline0")) {
		r = cg_run_kill_and_wait(&cg, 0, &killed);
		if (r != -ETIMEDOUT) {
			printf(" timeout-0-returned=%d", r);
			ok = false;
		}
	}
	r = cg_run_kill_and_wait(&cg, WAIT_MS, &killed);
	printf(" returned=%d killed=%u", r, killed);
	if (r != 0)
		ok = false;
	if (want_killed >= 0 && killed != (unsigned int)want_killed && strcmp(name, "deadline0")) {
		printf(" want-killed=%d", want_killed);
		ok = false;
	}
	if (populated(cg.path)) {
		printf(" still-populated");
		ok = false;
	}
	/* the ones we forked: each died of the kill, none exited on its own */
	for (int i = 0; i < npids; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i]) {
			printf(" not-reaped=%d", (int)pids[i]);
			ok = false;
		} else if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
			printf(" pid-%d-status=0x%04x", (int)pids[i], st);
			ok = false;
		}
	}
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	if (!strcmp(name, "nested") && (rmdir(grandchild) < 0 || rmdir(child) < 0)) {
		printf(" rmdir-nested=%s", strerror(errno));
		ok = false;
	}
	r = cg_run_destroy(&cg);
	if (r) {
		printf(" destroy=%s", strerror(-r));
		ok = false;
	}
	printf(" %s\n", ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}
