// SPDX-License-Identifier: GPL-2.0
/*
 * procprobe EXPECT OP ARGS...: one process-tree or resource operation, for
 * the process suite (tests/vm/suite/process.sh).  EXPECT is "ok", an errno
 * name (EPERM, EAGAIN, ...) or "-" for operations that report what they saw
 * instead of checking it (bombs, floods, identity dumps).  Prints
 * "procprobe: OP ARGS: RESULT" on stderr and exits 0 when the result is the
 * expected one, 1 otherwise, 2 on a usage error.
 *
 * A PID argument may be a number or one of: "@ppid" (the parent: for the
 * run's first process, the controller), "@pgid" (the parent's process
 * group), "@self"; a leading "-" negates it (a process group for kill).
 *
 * Processes meant to be found (or not) after a run carry a MARKER argument:
 * the suite looks for it in /proc/PID/cmdline (procprobe - pgrep MARKER).
 *
 * Built statically and run inside the test VM, inside and outside runs.
 */
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/ioprio.h>
#include <linux/kcmp.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ 0, "ok" },	       { EPERM, "EPERM" },   { EACCES, "EACCES" }, { ENOENT, "ENOENT" },
	{ EAGAIN, "EAGAIN" },  { EMFILE, "EMFILE" }, { ENFILE, "ENFILE" }, { ESRCH, "ESRCH" },
	{ EINVAL, "EINVAL" },  { EBADF, "EBADF" },   { EFAULT, "EFAULT" }, { ENOMEM, "ENOMEM" },
	{ EEXIST, "EEXIST" },  { EBUSY, "EBUSY" },   { EOPNOTSUPP, "EOPNOTSUPP" },
	{ ENOSPC, "ENOSPC" },  { EIO, "EIO" },	     { ENOSYS, "ENOSYS" }, { EROFS, "EROFS" },
};

static const char *errname(int e)
{
	static char buf[32];

	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == e)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static int result(long r)
{
	return r < 0 ? errno : 0;
}

static pid_t parse_pid(const char *s)
{
	if (s[0] == '-')
		return -parse_pid(s + 1);
	if (!strcmp(s, "@ppid"))
		return getppid();
	if (!strcmp(s, "@self"))
		return getpid();
	if (!strcmp(s, "@pgid"))
		return getpgid(getppid());
	return (pid_t)strtol(s, NULL, 10);
}

static int parse_sig(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {
		{ "TERM", SIGTERM }, { "KILL", SIGKILL }, { "INT", SIGINT },   { "HUP", SIGHUP },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "STOP", SIGSTOP }, { "CONT", SIGCONT },
		{ "WINCH", SIGWINCH }, { "0", 0 },
	};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(s, sigs[i].name))
			return sigs[i].sig;
	return atoi(s);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void ignore_signals(void)
{
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
}

/* linger MARKER: ignores the catchable signals and waits to be killed (SIGKILL). */
static void linger(void)
{
	ignore_signals();
	for (;;)
		pause();
}

static char self_exe[4096];

static void exec_linger(const char *marker)
{
	execl(self_exe, "procprobe", "-", "linger", marker, (char *)NULL);
	_exit(127);
}

/*
 * A daemon the classic way: fork, setsid, fork again, the grandchild execs
 * "linger MARKER" with every catchable signal ignored.  Returns once the
 * grandchild's exec succeeded (the close-on-exec pipe reads EOF).
 */
static int daemonize(const char *marker)
{
	int p[2], status;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		close(p[0]);
		setsid();
		if (fork() == 0) {
			ignore_signals();
			exec_linger(marker);
		}
		_exit(0);
	}
	close(p[1]);
	waitpid(pid, &status, 0);
	while (read(p[0], &c, 1) > 0)
		;
	close(p[0]);
	return 0;
}

/* forkbomb MARKER: every process forks for ever; prints the first refusal's errno. */
static int forkbomb(void)
{
	bool reported = false;
	unsigned long refused = 0;

	for (;;) {
		pid_t pid = fork();

		if (pid < 0) {
			if (!reported) {
				printf("fork refused: %s\n", errname(errno));
				fflush(stdout);
				reported = true;
			}
			refused++;
			sleep_ms(2);
		}
	}
	return 0;
}

static void *thread_wait(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * threadbomb: creates threads (small stacks) until the kernel refuses one,
 * prints how many it created and the errno, then keeps asking.
 */
static int threadbomb(void)
{
	pthread_attr_t attr;
	unsigned long created = 0;
	bool reported = false;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (;;) {
		pthread_t t;
		int r = pthread_create(&t, &attr, thread_wait, NULL);

		if (r == 0) {
			created++;
			continue;
		}
		if (!reported) {
			printf("threads created: %lu, then %s\n", created, errname(r));
			fflush(stdout);
			reported = true;
		}
		sleep_ms(2);
	}
	return 0;
}

/* membomb: touches 1 MiB after 1 MiB until the kernel stops it. */
static int membomb(void)
{
	for (;;) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED)
			return errno;
		memset(p, 0x5a, 1 << 20);
	}
}

/* flood FD BYTES CHAR: writes BYTES (0: for ever) of CHAR to FD. */
static int flood(int fd, unsigned long long bytes, char ch)
{
	char buf[4096];
	unsigned long long done = 0;

	memset(buf, ch, sizeof(buf));
	while (!bytes || done < bytes) {
		size_t n = sizeof(buf);
		ssize_t w;

		if (bytes && bytes - done < n)
			n = (size_t)(bytes - done);
		w = write(fd, buf, n);
		if (w < 0)
			return errno;
		done += (unsigned long long)w;
	}
	return 0;
}

/* nofile: opens /dev/null until refused; prints how many and why. */
static int nofile(void)
{
	unsigned long n = 0;
	int e;

	for (;;) {
		if (open("/dev/null", O_RDONLY) < 0)
			break;
		n++;
		if (n > 1000000)
			return EIO;
	}
	e = errno;
	printf("opened %lu, then %s\n", n, errname(e));
	fflush(stdout);
	return e;
}

static void status_field(const char *name, char *out, size_t size)
{
	char line[512];
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "re");

	snprintf(out, size, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, n) && line[n] == ':') {
			char *v = line + n + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = 0;
			/* tabs between the uid fields: one space each */
			for (char *t = v; *t; t++)
				if (*t == '\t')
					*t = ' ';
			snprintf(out, size, "%s", v);
			break;
		}
	}
	fclose(f);
}

/* The descriptors open now, "0,1,2": the directory stream's own left out. */
static void open_fds(char *out, size_t size)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int fds[256], n = 0;
	size_t len = 0;

	out[0] = 0;
	if (!d)
		return;
	while ((de = readdir(d)) && n < 256) {
		if (de->d_name[0] == '.')
			continue;
		if (atoi(de->d_name) == dirfd(d))
			continue;
		fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	for (int i = 0; i < n; i++)	/* few: insertion sort */
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	for (int i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%d", i ? "," : "", fds[i]);
}

static long session_keyring(void)
{
	return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

/* ids: one line with the identity, capability sets, flags and limits of this process. */
static int ids(void)
{
	static const char *const fields[] = { "Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff",
					      "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp" };
	char v[256], fds[1024];
	struct rlimit core, files;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		status_field(fields[i], v, sizeof(v));
		printf("%s=%s ", fields[i], v);
	}
	getrlimit(RLIMIT_CORE, &core);
	getrlimit(RLIMIT_NOFILE, &files);
	open_fds(fds, sizeof(fds));
	printf("core=%llu/%llu nofile=%llu/%llu fds=%s\n", (unsigned long long)core.rlim_cur,
	       (unsigned long long)core.rlim_max, (unsigned long long)files.rlim_cur,
	       (unsigned long long)files.rlim_max, fds);
	fflush(stdout);
	return 0;
}

/* pgrep MARKER: prints the pids (not ours) whose argv holds MARKER; EEXIST if any. */
static int pgrep(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	if (!d)
		return errno;
	while ((de = readdir(d))) {
		char path[300], buf[4096];
		ssize_t n;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n] = 0;
		if (strstr(buf, marker)) {
			printf("%s: %s\n", de->d_name, buf);
			found++;
		}
	}
	closedir(d);
	fflush(stdout);
	return found ? EEXIST : 0;
}

/*
 * setfcap PATH [noeff]: gives PATH every capability as a file capability,
 * permitted and effective (a "legacy" binary: exec fails with EPERM when it
 * cannot have them all), or with noeff permitted only (a capability-aware one).
 */
static int setfcap(const char *path, bool effective)
{
	struct vfs_cap_data cap = { 0 };

	cap.magic_etc = VFS_CAP_REVISION_2 | (effective ? VFS_CAP_FLAGS_EFFECTIVE : 0);
	cap.data[0].permitted = 0xffffffff;
	cap.data[1].permitted = 0xffffffff;
	return result(setxattr(path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0));
}

static int ptrace_target(long req, pid_t pid)
{
	long r = ptrace(req, pid, NULL, NULL);

	if (r < 0)
		return errno;
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

/* ptrace-child: attaches to a child of its own (the run's own processes stay debuggable). */
static int ptrace_child(void)
{
	pid_t pid = fork();
	int e;

	if (pid < 0)
		return errno;
	if (pid == 0) {
		for (;;)
			pause();
	}
	e = result(ptrace(PTRACE_SEIZE, pid, NULL, NULL));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return e;
}

static int vm_rw(pid_t pid, bool write)
{
	char buf[16] = { 0 };
	struct iovec local = { buf, sizeof(buf) };
	/* an address nothing maps: a permission check that passed shows as EFAULT */
	struct iovec remote = { (void *)0x1000, sizeof(buf) };
	ssize_t r;

	r = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
		  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return result(r);
}

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_getfd_(pid_t pid, int fd)
{
	int pidfd = pidfd_open_(pid), got, e;

	if (pidfd < 0)
		return 1000 + errno;
	got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	e = got < 0 ? errno : 0;
	if (got >= 0)
		close(got);
	close(pidfd);
	return e;
}

static int pidfd_kill(pid_t pid, int sig)
{
	int pidfd = pidfd_open_(pid), e;

	if (pidfd < 0)
		return 1000 + errno;
	e = result(syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0));
	close(pidfd);
	return e;
}

/* fsetown PID: a pipe with O_ASYNC whose SIGIO would go to PID. */
static int fsetown(pid_t owner)
{
	int p[2], e;

	if (pipe(p) < 0)
		return errno;
	fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK);
	e = result(fcntl(p[0], F_SETOWN, owner));
	if (!e) {
		/* make it fire: SIGIO (default: terminate) to the owner */
		if (write(p[1], "x", 1) < 0) {
			/* nothing */
		}
	}
	close(p[0]);
	close(p[1]);
	return e;
}

/* clone-parent MARKER: a sibling (CLONE_PARENT: the controller's child) that lingers. */
static int clone_parent(const char *marker)
{
	int p[2];
	char c;
	long pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
	if (pid < 0)
		return errno;
	if (pid == 0)
		exec_linger(marker);
	close(p[1]);
	while (read(p[0], &c, 1) > 0)
		;
	close(p[0]);
	return 0;
}

/* vfork-linger MARKER: a vfork child that execs a lingering process. */
static int vfork_linger(const char *marker)
{
	pid_t pid = vfork();

	if (pid < 0)
		return errno;
	if (pid == 0)
		exec_linger(marker);
	return 0;
}

static int clone_into_cgroup(const char *dir)
{
	struct clone_args args = { 0 };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), status;
	long pid;

	if (fd < 0)
		return 1000 + errno;
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (unsigned long long)fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		_exit(0);
	close(fd);
	if (pid < 0)
		return errno;
	waitpid((pid_t)pid, &status, 0);
	return 0;
}

static int write_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, content, strlen(content)) < 0)
		e = errno;
	close(fd);
	return e;
}

static int read_file(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return errno;
	if (read(fd, buf, sizeof(buf)) < 0)
		e = errno;
	close(fd);
	return e;
}

/* Substitutes @ppid/@pgid in a path ("/proc/@ppid/environ"). */
static const char *subst_path(const char *in)
{
	static char out[4096];
	const char *at = strstr(in, "@ppid");

	if (!at)
		return in;
	snprintf(out, sizeof(out), "%.*s%d%s", (int)(at - in), in, (int)getppid(), at + 5);
	return out;
}

static int usage(void)
{
	fprintf(stderr, "usage: procprobe EXPECT OP ARGS...\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *expect, *op;
	int e;

	if (argc < 3)
		return usage();
	expect = argv[1];
	op = argv[2];
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
		snprintf(self_exe, sizeof(self_exe), "%s", argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);

#define NEED(n)                   \
	do {                      \
		if (argc < (n) + 3) \
			return usage(); \
	} while (0)
	if (!strcmp(op, "linger")) {			/* linger MARKER */
		linger();
	} else if (!strcmp(op, "daemonize")) {		/* daemonize MARKER exit|linger */
		NEED(2);
		e = daemonize(argv[3]);
		if (!e && !strcmp(argv[4], "linger"))
			exec_linger(argv[3]);
	} else if (!strcmp(op, "forkbomb")) {		/* forkbomb MARKER */
		e = forkbomb();
	} else if (!strcmp(op, "threadbomb")) {
		e = threadbomb();
	} else if (!strcmp(op, "membomb")) {
		e = membomb();
	} else if (!strcmp(op, "flood")) {		/* flood FD BYTES CHAR */
		NEED(3);
		e = flood(atoi(argv[3]), strtoull(argv[4], NULL, 10), argv[5][0]);
	} else if (!strcmp(op, "reopen-flood")) {	/* reopen-flood BYTES CHAR: stdout re-opened from stderr */
		NEED(2);
		close(1);
		e = open("/proc/self/fd/2", O_WRONLY);
		if (e != 1)
			e = e < 0 ? errno : EBADF;
		else
			e = flood(1, strtoull(argv[3], NULL, 10), argv[4][0]);
	} else if (!strcmp(op, "nofile")) {
		e = nofile();
	} else if (!strcmp(op, "raise-nofile")) {	/* raise-nofile N: setrlimit(NOFILE, N/N) */
		struct rlimit r;

		NEED(1);
		r.rlim_cur = r.rlim_max = strtoull(argv[3], NULL, 10);
		e = result(setrlimit(RLIMIT_NOFILE, &r));
	} else if (!strcmp(op, "ids")) {
		e = ids();
	} else if (!strcmp(op, "keyring")) {
		long id = session_keyring();

		e = result(id);
		if (!e)
			printf("%ld\n", id);
	} else if (!strcmp(op, "env")) {
		for (char **p = environ; *p; p++)
			printf("%s\n", *p);
		e = 0;
	} else if (!strcmp(op, "pgrep")) {		/* pgrep MARKER */
		NEED(1);
		e = pgrep(argv[3]);
	} else if (!strcmp(op, "setfcap")) {		/* setfcap PATH [noeff] (outside a run) */
		NEED(1);
		e = setfcap(argv[3], !(argc > 4 && !strcmp(argv[4], "noeff")));
	} else if (!strcmp(op, "as")) {			/* as UID GID OP ARGS...: outside a run, as root */
		NEED(3);
		if (setgroups(0, NULL) < 0 || setresgid(atoi(argv[4]), atoi(argv[4]), atoi(argv[4])) < 0 ||
		    setresuid(atoi(argv[3]), atoi(argv[3]), atoi(argv[3])) < 0)
			return 1;
		/* exec: a process that changed its uid is not dumpable until it execs */
		argv[3] = (char *)"procprobe";
		argv[4] = (char *)"-";
		execv(self_exe, argv + 3);
		return 1;
	} else if (!strcmp(op, "setuid")) {		/* setuid UID */
		NEED(1);
		e = result(setuid((uid_t)atoi(argv[3])));
	} else if (!strcmp(op, "kill")) {		/* kill PID SIG */
		NEED(2);
		e = result(kill(parse_pid(argv[3]), parse_sig(argv[4])));
	} else if (!strcmp(op, "tgkill")) {		/* tgkill PID SIG */
		pid_t pid;

		NEED(2);
		pid = parse_pid(argv[3]);
		e = result(syscall(SYS_tgkill, pid, pid, parse_sig(argv[4])));
	} else if (!strcmp(op, "pidfd-kill")) {		/* pidfd-kill PID SIG */
		NEED(2);
		e = pidfd_kill(parse_pid(argv[3]), parse_sig(argv[4]));
	} else if (!strcmp(op, "ptrace-attach")) {
		NEED(1);
		e = ptrace_target(PTRACE_ATTACH, parse_pid(argv[3]));
	} else if (!strcmp(op, "ptrace-seize")) {
		NEED(1);
		e = ptrace_target(PTRACE_SEIZE, parse_pid(argv[3]));
	} else if (!strcmp(op, "ptrace-child")) {
		e = ptrace_child();
	} else if (!strcmp(op, "vm-readv")) {
		NEED(1);
		e = vm_rw(parse_pid(argv[3]), false);
	} else if (!strcmp(op, "vm-writev")) {
		NEED(1);
		e = vm_rw(parse_pid(argv[3]), true);
	} else if (!strcmp(op, "pidfd-getfd")) {	/* pidfd-getfd PID FD */
		NEED(2);
		e = pidfd_getfd_(parse_pid(argv[3]), atoi(argv[4]));
	} else if (!strcmp(op, "kcmp")) {
		NEED(1);
		e = result(syscall(SYS_kcmp, getpid(), parse_pid(argv[3]), KCMP_VM, 0, 0));
	} else if (!strcmp(op, "prlimit")) {		/* prlimit PID: its RLIMIT_CORE to 0 */
		struct rlimit zero = { 0, 0 };

		NEED(1);
		e = result(prlimit(parse_pid(argv[3]), RLIMIT_CORE, &zero, NULL));
	} else if (!strcmp(op, "setpriority")) {	/* setpriority PID: nice 19 */
		NEED(1);
		e = result(setpriority(PRIO_PROCESS, (id_t)parse_pid(argv[3]), 19));
	} else if (!strcmp(op, "ioprio")) {		/* ioprio PID: the idle class */
		NEED(1);
		e = result(syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, parse_pid(argv[3]),
				   IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)));
	} else if (!strcmp(op, "sched-idle")) {		/* sched-idle PID: SCHED_IDLE */
		struct sched_param sp = { 0 };

		NEED(1);
		e = result(sched_setscheduler(parse_pid(argv[3]), SCHED_IDLE, &sp));
	} else if (!strcmp(op, "affinity")) {		/* affinity PID: CPU 0 only */
		cpu_set_t set;

		NEED(1);
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		e = result(sched_setaffinity(parse_pid(argv[3]), sizeof(set), &set));
	} else if (!strcmp(op, "fsetown")) {		/* fsetown PID (negative: a group) */
		NEED(1);
		e = fsetown(parse_pid(argv[3]));
	} else if (!strcmp(op, "clone-parent")) {	/* clone-parent MARKER */
		NEED(1);
		e = clone_parent(argv[3]);
	} else if (!strcmp(op, "vfork-linger")) {	/* vfork-linger MARKER */
		NEED(1);
		e = vfork_linger(argv[3]);
	} else if (!strcmp(op, "subreaper")) {		/* subreaper MARKER: reaper of a daemon, then exits */
		NEED(1);
		e = result(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
		if (!e)
			e = daemonize(argv[3]);
	} else if (!strcmp(op, "clone-into-cgroup")) {	/* clone-into-cgroup DIR */
		NEED(1);
		e = clone_into_cgroup(argv[3]);
	} else if (!strcmp(op, "write")) {		/* write PATH CONTENT */
		NEED(2);
		e = write_file(subst_path(argv[3]), argv[4]);
	} else if (!strcmp(op, "read")) {		/* read PATH */
		NEED(1);
		e = read_file(subst_path(argv[3]));
	} else if (!strcmp(op, "mkdir")) {
		NEED(1);
		e = result(mkdir(argv[3], 0755));
	} else if (!strcmp(op, "unshare-user")) {
		e = result(unshare(CLONE_NEWUSER));
	} else if (!strcmp(op, "unshare-pid")) {
		e = result(unshare(CLONE_NEWPID));
	} else {
		return usage();
	}
#undef NEED

	/* the floods' own streams are counted byte by byte: no line of ours there */
	if (strcmp(op, "flood") && strcmp(op, "reopen-flood")) {
		fprintf(stderr, "procprobe: %s", op);
		for (int i = 3; i < argc; i++)
			fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, ": %s\n", errname(e));
	}
	if (!strcmp(expect, "-"))
		return 0;
	return strcmp(expect, errname(e)) == 0 ? 0 : 1;
}
