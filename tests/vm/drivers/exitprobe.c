// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's record of how a run's main process ended (bpf/exit.bpf.c,
 * run_exit) against what waitpid() tells its parent, one case per call:
 *
 *   exitprobe CASE
 *
 * Opens the node (tl_node_open, as tether run does), makes a run cgroup and
 * installs a run whose only rule grants "/" everything (nothing here is
 * about rules), spawns the case's process into the run cgroup with
 * clone3(CLONE_INTO_CGROUP), names it the run's main process
 * (tl_run_set_main) before it may run, waits for it and compares
 * tl_run_main_exit with the wait status.  Prints one line,
 * "CASE wait=0x.... recorded=0x.... exited=N ...", and exits 0 when they
 * agree, 1 when they do not, 2 when the case could not be set up.
 *
 * Cases (the wait status each should give on Linux 6.1 and 6.12):
 *   exit0, exit7            _exit(0), _exit(7)                   0x0000, 0x0700
 *   sigkill                 kill(getpid(), SIGKILL)             0x0009
 *   segv_core               SIGSEGV, RLIMIT_CORE unlimited      0x008b (0x000b if no core
 *                                                               could be written)
 *   segv_nocore             SIGSEGV, RLIMIT_CORE 0              0x000b
 *   thread_exit_group       a second thread exit_group(3)s while main pauses    0x0300
 *   main_pthread_exit       main pthread_exit()s, another thread exit(5)s later  0x0500
 *   last_thread_sys_exit    main SYS_exit(1), another thread SYS_exit(6) later: 0x0600
 *                           (the last thread's code: synchronize_group_exit)
 *   grandchild              main double-forks a grandchild that outlives it; main
 *                           exits 4, the grandchild 42 afterwards: 0x0400, unchanged
 *   exec                    main execs this program, which exits 9: 0x0900
 *   thread_exec             a second thread execs this program (the old leader dies
 *                           in de_thread), which exits 9: 0x0900
 *   outside                 a process outside every run, named the main process,
 *                           _exit(7)s: nothing is recorded
 *
 *   exitprobe --exit N      (the program the exec cases run) exits N
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "loader/loader.h"
#include "runtime/cgroup.h"

#define CORE_DIR "/tmp/exitprobe-core"

static char self_exe[PATH_MAX];
/* the grandchild case: the grandchild exits when this pipe's write end closes */
static int release_pipe[2] = { -1, -1 };

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void exec_self_exit(const char *code)
{
	char *argv[] = { "exitprobe", "--exit", (char *)code, NULL };

	execv(self_exe, argv);
	_exit(120);
}

static void *thread_exit_group(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	syscall(SYS_exit_group, 3);
	return NULL;
}

static void *thread_exit5_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	exit(5);
}

static void *thread_sys_exit6_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	syscall(SYS_exit, 6);
	return NULL;
}

static void *thread_exec(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	exec_self_exit("9");
	return NULL;
}

static void start_thread(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL))
		_exit(121);
}

/* The case's main process, in the run cgroup. */
static void __attribute__((noreturn)) child_body(const char *name)
{
	if (!strcmp(name, "exit0"))
		_exit(0);
	if (!strcmp(name, "exit7") || !strcmp(name, "outside"))
		_exit(7);
	if (!strcmp(name, "sigkill")) {
		kill(getpid(), SIGKILL);
		_exit(122);
	}
	if (!strcmp(name, "segv_core") || !strcmp(name, "segv_nocore")) {
		struct rlimit rl;

		getrlimit(RLIMIT_CORE, &rl);
		rl.rlim_cur = !strcmp(name, "segv_core") ? rl.rlim_max : 0;
		setrlimit(RLIMIT_CORE, &rl);
		if (chdir(CORE_DIR) < 0)
			_exit(123);
		/* SIGSEGV's default action, whatever the parent had */
		signal(SIGSEGV, SIG_DFL);
		*(volatile int *)0 = 1;
		_exit(124);
	}
	if (!strcmp(name, "thread_exit_group")) {
		start_thread(thread_exit_group);
		for (;;)
			pause();
	}
	if (!strcmp(name, "main_pthread_exit")) {
		start_thread(thread_exit5_later);
		pthread_exit(NULL);
	}
	if (!strcmp(name, "last_thread_sys_exit")) {
		start_thread(thread_sys_exit6_later);
		syscall(SYS_exit, 1);
		_exit(125);
	}
	if (!strcmp(name, "grandchild")) {
		pid_t c = fork();
		int st;

		if (c == 0) {
			if (fork() == 0) {
				char b;

				close(release_pipe[1]);
				/* outlive main: until the driver has read main's record */
				while (read(release_pipe[0], &b, 1) < 0 && errno == EINTR)
					;
				_exit(42);
			}
			_exit(0);
		}
		waitpid(c, &st, 0);
		_exit(4);
	}
	if (!strcmp(name, "exec"))
		exec_self_exit("9");
	if (!strcmp(name, "thread_exec")) {
		start_thread(thread_exec);
		for (;;)
			pause();
	}
	_exit(126);
}

/* clone3(CLONE_INTO_CGROUP): the child starts in the run, and waits for `go_fd`. */
static pid_t spawn(int cgroup_fd, int go_fd, const char *name)
{
	struct clone_args args = { 0 };
	long pid;

	args.flags = cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)(cgroup_fd >= 0 ? cgroup_fd : 0);
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		char b;
		ssize_t n;

		/* the driver names this process the run's main process first */
		do
			n = read(go_fd, &b, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);
		close(go_fd);
		child_body(name);
	}
	return (pid_t)pid;
}

static int setup_fail(const char *name, const char *what, int r)
{
	printf("%s setup: %s: %s\n", name, what, strerror(r < 0 ? -r : r));
	return 2;
}

int main(int argc, char **argv)
{
	struct tl_run_plan plan = { .mode = TETHER_MODE_ENFORCE };
	struct tl_path_rule all = { .path = "/",
				    .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE |
					      TETHER_ACCESS_EXEC };
	struct tl_error err = { "" };
	struct tether_run_exit rec, after;
	struct tl_node node;
	struct tl_run run;
	struct cg_run cg;
	char mount[PATH_MAX], run_id[64];
	const char *name;
	bool outside, ok, grandchild_seen = false;
	int go[2], parent_lock, r, status = 0, rc;
	uint64_t t0, t1;
	unsigned int killed = 0;
	uint32_t slot;
	FILE *mi;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--exit"))
		_exit(atoi(argv[2]));
	if (argc != 2) {
		fprintf(stderr, "usage: exitprobe CASE | exitprobe --exit N\n");
		return 2;
	}
	name = argv[1];
	outside = !strcmp(name, "outside");
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		return setup_fail(name, "reading /proc/self/exe", errno);
	mkdir(CORE_DIR, 0755);
	/* the kernel opens the core O_EXCL: one left by an earlier case would stop the dump */
	unlink(CORE_DIR "/core");
	/* the grandchild is ours to reap when its parent is gone */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	mi = fopen("/proc/self/mountinfo", "re");
	if (!mi)
		return setup_fail(name, "opening mountinfo", errno);
	r = cg_find_mount(mi, mount, sizeof(mount));
	fclose(mi);
	if (r)
		return setup_fail(name, "finding the cgroup2 mount", r);
	parent_lock = cg_parent_lock(mount);
	if (parent_lock < 0)
		return setup_fail(name, "locking the run cgroups' parent", parent_lock);
	r = tl_node_open(TETHER_RUN_CGROUP_LEVEL, parent_lock, &node, &err);
	if (r) {
		printf("%s setup: %s\n", name, err.msg);
		return 2;
	}
	snprintf(run_id, sizeof(run_id), "exitprobe-%s-%d", name, (int)getpid());
	r = cg_run_create(mount, run_id, &cg);
	close(parent_lock);
	if (r)
		return setup_fail(name, "creating the run cgroup", r);
	plan.rules = &all;
	plan.rule_count = 1;
	r = tl_run_install(&node, cg.id, &plan, &run, &err);
	if (r) {
		printf("%s setup: %s\n", name, err.msg);
		return 2;
	}
	slot = run.run_slot;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(release_pipe, O_CLOEXEC) < 0)
		return setup_fail(name, "pipe2", errno);

	t0 = boot_ns();
	pid = spawn(outside ? -1 : cg.dir_fd, go[0], name);
	if (pid < 0)
		return setup_fail(name, "clone3", errno);
	close(go[0]);
	close(release_pipe[0]);
	r = tl_run_set_main(&node, &run, (uint32_t)pid, &err);
	if (r) {
		printf("%s setup: %s\n", name, err.msg);
		kill(pid, SIGKILL);
		return 2;
	}
	if (write(go[1], "g", 1) != 1)
		return setup_fail(name, "releasing the child", errno);
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid)
		return setup_fail(name, "waitpid", errno);
	t1 = boot_ns();

	r = tl_run_main_exit(&node, slot, &rec);
	if (r)
		return setup_fail(name, "tl_run_main_exit", r);
	printf("%s wait=0x%04x recorded=0x%04x exited=%u tgid=%u main=%d", name, status,
	       rec.status, rec.exited, rec.tgid, (int)pid);
	if (!strncmp(name, "segv", 4))
		printf(" core=%d", WIFSIGNALED(status) && WCOREDUMP(status));
	if (outside)
		ok = rec.exited == 0 && rec.status == 0 && rec.exit_ns == 0 &&
		     rec.tgid == (uint32_t)pid;
	else
		ok = rec.exited == 1 && rec.status == status && rec.tgid == (uint32_t)pid &&
		     rec.exit_ns >= t0 && rec.exit_ns <= t1;
	if (!outside && (rec.exit_ns < t0 || rec.exit_ns > t1))
		printf(" exit_ns=%llu outside [%llu, %llu]", (unsigned long long)rec.exit_ns,
		       (unsigned long long)t0, (unsigned long long)t1);

	/* the grandchild (or anything else left) ends now; nothing may change */
	close(release_pipe[1]);
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, 0);

		if (p < 0 && errno == ECHILD)
			break;
		if (p > 0 && !strcmp(name, "grandchild")) {
			printf(" grandchild=0x%04x", st);
			/* it outlived main and ended its own way: 42 */
			grandchild_seen = st == 42 << 8;
		}
	}
	if (!strcmp(name, "grandchild") && !grandchild_seen) {
		printf(" no-grandchild-exit-42");
		ok = false;
	}
	r = tl_run_main_exit(&node, slot, &after);
	if (r)
		return setup_fail(name, "tl_run_main_exit", r);
	if (memcmp(&after, &rec, sizeof(rec))) {
		printf(" changed-later: exited=%u status=0x%04x", after.exited, after.status);
		ok = false;
	}

	rc = tl_run_remove(&node, &run, &err);
	rc = rc ?: tl_run_release(&node, &run, &err);
	tl_run_free(&run);
	if (!rc && tl_run_main_exit(&node, slot, &after) == 0 && after.tgid != 0) {
		printf(" not-reset-on-remove: tgid=%u", after.tgid);
		ok = false;
	}
	cg_run_kill_and_wait(&cg, 5000, &killed);
	cg_run_destroy(&cg);
	tl_node_close(&node);
	printf("\n");
	if (rc) {
		printf("%s teardown: %s\n", name, err.msg);
		return 2;
	}
	return ok ? 0 : 1;
}
