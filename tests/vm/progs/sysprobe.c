// SPDX-License-Identifier: GPL-2.0
/*
 * sysprobe [--drop UID] EXPECT OP ARGS...: tries one way out of the process
 * tree (a namespace, a capability, the kernel's keys, its log, its clock,
 * its modules, a cgroup file, a signal by SIGIO) with raw system calls and
 * checks the result, as fsprobe does: EXPECT is "ok" or an errno name;
 * prints "sysprobe: OP ARGS: RESULT" and exits 0 when the result is the
 * expected one, 1 otherwise, 2 on a usage error, 3 when --drop failed.
 *
 * --drop UID does first what `tether run` does to a run's first process
 * before exec (runtime/launch.c): drop the bounding set, lock securebits,
 * switch to UID (gid the same, no supplementary groups), drop every other
 * capability, join a fresh session keyring, set no_new_privs.  For runtimes
 * that do not do it themselves yet.
 *
 * Built statically and run inside the test VM, inside and outside runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ 0, "ok" },	      { EPERM, "EPERM" },     { EACCES, "EACCES" }, { ENOENT, "ENOENT" },
	{ EEXIST, "EEXIST" }, { EINVAL, "EINVAL" },   { ENOSYS, "ENOSYS" }, { ENODEV, "ENODEV" },
	{ EBADF, "EBADF" },   { ENOKEY, "ENOKEY" },   { EBUSY, "EBUSY" },   { ESRCH, "ESRCH" },
	{ ENOEXEC, "ENOEXEC" }, { EOPNOTSUPP, "EOPNOTSUPP" }, { EAFNOSUPPORT, "EAFNOSUPPORT" },
	{ EDQUOT, "EDQUOT" },
};

/* cap-probe's result when the process holds a capability or lacks no_new_privs */
#define PRIVILEGED 100001

static const char *errname(int e)
{
	static char buf[32];

	if (e == PRIVILEGED)
		return "privileged";
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == e)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static int parse_err(const char *s)
{
	if (!strcmp(s, "privileged"))
		return PRIVILEGED;
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (!strcmp(errnames[i].name, s))
			return errnames[i].err;
	return -1;
}

/* A system call's result as fsprobe reports it: 0, or the errno. */
static int res(long r)
{
	return r < 0 ? errno : 0;
}

static int drop(unsigned int uid)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
				     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
				     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
		return -errno;
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* 0 when no capability is held in any set and no_new_privs is set. */
static int cap_probe(void)
{
	char line[256];
	int clean = 1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10) ||
		    !strncmp(line, "Uid", 3)) {
			fputs(line, stdout);
			if (!strncmp(line, "Cap", 3) && !strstr(line, "0000000000000000"))
				clean = 0;
			if (!strncmp(line, "NoNewPrivs", 10) && !strstr(line, "1"))
				clean = 0;
		}
	}
	fclose(f);
	return clean ? 0 : PRIVILEGED;
}

static long keyctl(int cmd, unsigned long a, unsigned long b, unsigned long c)
{
	return syscall(SYS_keyctl, cmd, a, b, c, 0);
}

static long add_key(const char *type, const char *desc, const char *payload, long ring)
{
	return syscall(SYS_add_key, type, desc, payload, strlen(payload), ring);
}

/* A key of our own in the session keyring, then read back through its id. */
static int key_session(void)
{
	char buf[64] = "";
	long id = add_key("user", "tether-probe", "v", KEY_SPEC_SESSION_KEYRING);

	if (id < 0)
		return errno;
	if (keyctl(KEYCTL_READ, id, (unsigned long)buf, sizeof(buf)) < 0)
		return errno;
	return strcmp(buf, "v") ? EINVAL : 0;
}

/* A key anyone may use (perm 0x3f3f3f3f), linked into `ring`; prints its id. */
static int key_make(long ring)
{
	long id = add_key("user", "tether-outside", "secret", ring);

	if (id < 0 || keyctl(KEYCTL_SETPERM, id, 0x3f3f3f3f, 0) < 0)
		return errno;
	printf("%ld\n", id);
	fflush(stdout);
	return 0;
}

/* key-hold FILE: makes a key in the session keyring, writes its id to FILE, waits. */
static int key_hold(const char *file)
{
	long id = add_key("user", "tether-held", "secret", KEY_SPEC_SESSION_KEYRING);
	FILE *f;

	if (id < 0 || keyctl(KEYCTL_SETPERM, id, 0x3f3f3f3f, 0) < 0)
		return errno;
	f = fopen(file, "w");
	if (!f)
		return errno;
	fprintf(f, "%ld\n", id);
	fclose(f);
	for (int i = 0; i < 300 && access(file, F_OK) == 0; i++)
		usleep(100000);
	return 0;
}

static int bpf_prog_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr = {
		.prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
		.insns = (unsigned long)insns,
		.insn_cnt = 2,
		.license = (unsigned long)"GPL",
	};
	long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));

	return res(fd);
}

static int perf_open(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return res(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

static int clone_newuser(void)
{
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	waitpid(pid, NULL, 0);
	return 0;
}

static int open_setns(const char *path, int nstype)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;	/* /proc/PID/ns of another process: the open is the refusal */
	return res(setns(fd, nstype));
}

static int pidfd_setns(int pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return 100000 + errno;
	return res(setns(fd, CLONE_NEWNET));
}

/* write-file PATH: open for writing and write our pid (cgroup.procs takes it). */
static int write_file(const char *path)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	return res(write(fd, buf, strlen(buf)));
}

static int setown(int cmd, int owner)
{
	int p[2];

	if (pipe(p) < 0)
		return 100000 + errno;
	if (cmd == F_SETOWN_EX) {
		struct f_owner_ex ex = { .type = F_OWNER_PID, .pid = owner };

		return res(fcntl(p[0], F_SETOWN_EX, &ex));
	}
	return res(fcntl(p[0], F_SETOWN, owner));
}

static int fiosetown(int owner)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		return 100000 + errno;
	return res(ioctl(fd, FIOSETOWN, &owner));
}

/* A version 2 security.capability granting cap_sys_admin, permitted and effective. */
static int set_filecap(const char *path)
{
	struct vfs_cap_data cap = {
		.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1u << CAP_SYS_ADMIN } },
	};

	return res(setxattr(path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0));
}

static int settime(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return res(settimeofday(&tv, NULL));
}

static int run_op(const char *op, int argc, char **argv)
{
	const char *arg = argc > 0 ? argv[0] : NULL;
	char buf[64];

	if (!strcmp(op, "cap-probe"))
		return cap_probe();
	if (!strcmp(op, "bpf-prog-load"))
		return bpf_prog_load();
	if (!strcmp(op, "perf-open"))
		return perf_open();
	if (!strcmp(op, "unshare-user"))
		return res(unshare(CLONE_NEWUSER));
	if (!strcmp(op, "clone-newuser"))
		return clone_newuser();
	if (!strcmp(op, "unshare-net"))
		return res(unshare(CLONE_NEWNET));
	if (!strcmp(op, "init-module"))	/* a junk image: the refusal comes first */
		return res(syscall(SYS_init_module, "junk-not-elf", 12, ""));
	if (!strcmp(op, "finit-module") && arg) {
		int fd = open(arg, O_RDONLY | O_CLOEXEC);

		return fd < 0 ? 100000 + errno : res(syscall(SYS_finit_module, fd, "", 0));
	}
	if (!strcmp(op, "module-autoload"))	/* a key type that is not loaded */
		return res(add_key("tether_no_such_type", "x", "v", KEY_SPEC_PROCESS_KEYRING));
	if (!strcmp(op, "kexec-load"))
		return res(syscall(SYS_kexec_load, 0, 0, NULL, 0));
	if (!strcmp(op, "kexec-file-load"))
		return res(syscall(SYS_kexec_file_load, -1, -1, 0, "", 0));
	if (!strcmp(op, "settime"))
		return settime();
	if (!strcmp(op, "syslog-read"))	/* SYSLOG_ACTION_READ_ALL */
		return res(klogctl(3, buf, sizeof(buf)));
	if (!strcmp(op, "syslog-size"))	/* SYSLOG_ACTION_SIZE_BUFFER */
		return res(klogctl(10, NULL, 0));
	if (!strcmp(op, "key-session"))
		return key_session();
	if (!strcmp(op, "key-show-user"))
		return res(keyctl(KEYCTL_DESCRIBE, KEY_SPEC_USER_KEYRING, (unsigned long)buf,
				  sizeof(buf)));
	if (!strcmp(op, "key-read") && arg)
		return res(keyctl(KEYCTL_READ, strtol(arg, NULL, 10), (unsigned long)buf,
				  sizeof(buf)));
	if (!strcmp(op, "key-link") && arg)	/* into our session keyring */
		return res(keyctl(KEYCTL_LINK, strtol(arg, NULL, 10), KEY_SPEC_SESSION_KEYRING, 0));
	if (!strcmp(op, "key-make-user"))
		return key_make(KEY_SPEC_USER_KEYRING);
	if (!strcmp(op, "key-hold") && arg)
		return key_hold(arg);
	if (!strcmp(op, "setns-path") && arg)	/* setns-path /proc/1/ns/net */
		return open_setns(arg, 0);
	if (!strcmp(op, "setns-pidfd") && arg)
		return pidfd_setns(atoi(arg));
	if (!strcmp(op, "mount") && arg)	/* mount-tmpfs on ARG */
		return res(mount("none", arg, "tmpfs", 0, NULL));
	if (!strcmp(op, "mount-cgroup2") && arg)
		return res(mount("none", arg, "cgroup2", 0, NULL));
	if (!strcmp(op, "write-file") && arg)
		return write_file(arg);
	if (!strcmp(op, "mkdir") && arg)
		return res(mkdir(arg, 0755));
	if (!strcmp(op, "rmdir") && arg)
		return res(rmdir(arg));
	if (!strcmp(op, "chmod") && arg)
		return res(chmod(arg, 0666));
	if (!strcmp(op, "setxattr") && arg)
		return res(setxattr(arg, "user.tether", "1", 1, 0));
	if (!strcmp(op, "set-filecap") && arg)
		return set_filecap(arg);
	if (!strcmp(op, "ptrace-traceme"))
		return res(syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0));
	if (!strcmp(op, "setown") && arg)	/* setown PID (negative: a process group) */
		return setown(F_SETOWN, atoi(arg));
	if (!strcmp(op, "setown-self"))
		return setown(F_SETOWN, getpid());
	if (!strcmp(op, "setown-pgrp"))
		return setown(F_SETOWN, -getpgrp());
	if (!strcmp(op, "setown-ex") && arg)
		return setown(F_SETOWN_EX, atoi(arg));
	if (!strcmp(op, "fiosetown") && arg)
		return fiosetown(atoi(arg));
	if (!strcmp(op, "exec") && arg) {	/* exec PATH ARGS...: replaces this process */
		execv(arg, argv);
		return errno;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int expect, got, i = 1;

	if (argc > 2 && !strcmp(argv[1], "--drop")) {
		int r = drop((unsigned int)strtoul(argv[2], NULL, 10));

		if (r) {
			fprintf(stderr, "sysprobe: --drop %s: %s\n", argv[2], strerror(-r));
			return 3;
		}
		i = 3;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: sysprobe [--drop UID] EXPECT OP [ARGS...]\n");
		return 2;
	}
	expect = parse_err(argv[i]);
	if (expect < 0) {
		fprintf(stderr, "sysprobe: unknown expectation %s\n", argv[i]);
		return 2;
	}
	got = run_op(argv[i + 1], argc - i - 2, argv + i + 2);
	if (got < 0) {
		fprintf(stderr, "sysprobe: unknown operation %s\n", argv[i + 1]);
		return 2;
	}
	printf("sysprobe: %s%s%s: %s%s\n", argv[i + 1], argc - i > 2 ? " " : "",
	       argc - i > 2 ? argv[i + 2] : "", got >= 100000 && got != PRIVILEGED ? "prep-failed:" : "",
	       errname(got >= 100000 && got != PRIVILEGED ? got - 100000 : got));
	return got == expect ? 0 : 1;
}
