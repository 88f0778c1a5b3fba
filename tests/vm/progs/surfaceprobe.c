// SPDX-License-Identifier: GPL-2.0
/*
 * surfaceprobe: calls the system calls of runtime/kernel_surface.h, the
 * table the run's seccomp filter is built from, and checks what they
 * return.  Built statically, run inside the test VM inside and outside runs
 * (tests/vm/suite/surface.sh).
 *
 *   surfaceprobe list                  every row: NAME LAYER X86_64 I386
 *   surfaceprobe seccomp in|out        every seccomp row on each of its ABIs
 *                                      (i386 through int $0x80), all arguments 0:
 *                                      in: each must fail with EPERM; out: none may
 *   surfaceprobe personality in|out    the values the filter allows succeed; the
 *                                      others fail with EPERM (in) or succeed (out)
 *   surfaceprobe abi in|out            x32 calls: EPERM in; a number above the
 *                                      table: ENOSYS; i386 getpid works
 *   surfaceprobe EXPECT CASE ARGS...   one call with arguments that reach the
 *                                      layer deciding it; EXPECT is "ok" or an
 *                                      errno name (cases: see run_case)
 *
 * Prints one line per call, "surfaceprobe: WHAT: RESULT", and exits 0 when
 * every result is the expected one, 1 otherwise, 2 on a usage error.
 * Results are errno names (EPERM), "ok", or "skipped" for calls that would
 * block or change the host outside a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/bpf.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/kernel_surface.h"

/* futex2 flags (6.7 headers; the build host's may be older) */
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32		0x02
#define FUTEX2_PRIVATE		128
#endif

#define ROW(name, x86_64, i386, layer) { #name, x86_64, i386, layer },
static const struct surface_call rows[] = { TETHER_KERNEL_SURFACE(ROW) };
#undef ROW
#define ROW_COUNT (sizeof(rows) / sizeof(rows[0]))

/* Calls whose every-argument-0 form would wait forever outside a run. */
static const char *const blocks_outside[] = { "sigsuspend", NULL };

static int failures;

static const char *errname(int e)
{
	static char buf[32];
	const char *name;

	if (!e)
		return "ok";
	name = strerrorname_np(e);
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static int parse_err(const char *s)
{
	if (!strcmp(s, "ok"))
		return 0;
	for (int e = 1; e < 200; e++) {
		const char *name = strerrorname_np(e);

		if (name && !strcmp(name, s))
			return e;
	}
	return -1;
}

/* A raw system call's result: 0, or the errno. */
static int res(long r)
{
	return r < 0 ? errno : 0;
}

/*
 * An i386 system call through int $0x80, which the kernel (and seccomp, as
 * AUDIT_ARCH_I386) treats as a 32-bit process's; pointers must be below
 * 4 GiB (low_page()).  Returns 0 or the errno.  The kernel clears r8-r11 on
 * the way back.
 */
static int sys32(long nr, long a, long b, long c, long d, long e)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
		     : "memory", "r8", "r9", "r10", "r11");
	return ret < 0 && ret > -4096 ? (int)-ret : 0;
}

/* A page mapped below 4 GiB, for the arguments of i386 calls. */
static void *low_page(void)
{
	static void *page;

	if (!page) {
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			    -1, 0);
		if (page == MAP_FAILED) {
			perror("surfaceprobe: mmap MAP_32BIT");
			exit(2);
		}
	}
	return page;
}

/* Whether this kernel runs i386 calls (ia32 emulation may be off): a child tries. */
static int have_i386(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(sys32(20 /* getpid */, 0, 0, 0, 0, 0) == 0 ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void report(const char *what, const char *abi, int got, int ok)
{
	printf("surfaceprobe: %s%s%s: %s%s\n", what, abi ? " " : "", abi ? abi : "", errname(got),
	       ok ? "" : " (unexpected)");
	if (!ok)
		failures++;
}

static int blocks(const char *name)
{
	for (size_t i = 0; blocks_outside[i]; i++)
		if (!strcmp(blocks_outside[i], name))
			return 1;
	return 0;
}

/*
 * Every seccomp row, arguments 0: inside a run the filter refuses it before
 * the kernel reads one.  Outside, none may fail with EPERM (the sanity check
 * that EPERM inside comes from the filter): as root in the VM, 0 arguments
 * make these fail with EFAULT, EINVAL or EBADF, or do nothing (ENOSYS for
 * the removed ones).
 */
static void seccomp_rows(int inside)
{
	int i386 = have_i386();

	if (!i386)
		printf("surfaceprobe: SKIP: this kernel has no i386 ABI (ia32 emulation off)\n");
	for (size_t i = 0; i < ROW_COUNT; i++) {
		const struct surface_call *c = &rows[i];
		int got;

		if (c->layer != SURFACE_SECCOMP)
			continue;
		if (!inside && blocks(c->name)) {
			printf("surfaceprobe: %s: skipped (blocks outside a run)\n", c->name);
			continue;
		}
		if (c->nr_x86_64 != SURFACE_NONE) {
			got = res(syscall(c->nr_x86_64, 0, 0, 0, 0, 0, 0));
			report(c->name, "x86-64", got, inside ? got == EPERM : got != EPERM);
		}
		if (c->nr_i386 != SURFACE_NONE && i386) {
			got = sys32(c->nr_i386, 0, 0, 0, 0, 0);
			report(c->name, "i386", got, inside ? got == EPERM : got != EPERM);
		}
	}
}

/* personality(): the allowed values on both ABIs, then values Docker refuses. */
static void personality_values(int inside)
{
#define VALUE(v) (unsigned long)(v),
	static const unsigned long allowed[] = { SURFACE_PERSONALITY_ALLOWED(VALUE) };
#undef VALUE
	/* ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, PER_LINUX32|ADDR_NO_RANDOMIZE */
	static const unsigned long refused[] = { 0x0040000, 0x0400000, 0x0100000, 0x0040008 };
	unsigned long orig = (unsigned long)personality(0xffffffff);
	int i386 = have_i386();
	char what[64];
	int got;

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		snprintf(what, sizeof(what), "personality(%#lx)", allowed[i]);
		got = res(syscall(SYS_personality, allowed[i]));
		report(what, "x86-64", got, got == 0);
		if (i386) {
			got = sys32(136, (long)allowed[i], 0, 0, 0, 0);
			report(what, "i386", got, got == 0);
		}
		personality(orig);
	}
	/* the kernel takes an unsigned int: high bits are not a flag */
	got = res(syscall(SYS_personality, 0x100000000ul | orig));
	report("personality(0x100000000 | current)", "x86-64", got, got == 0);
	personality(orig);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(what, sizeof(what), "personality(%#lx)", refused[i]);
		got = res(syscall(SYS_personality, refused[i]));
		report(what, "x86-64", got, inside ? got == EPERM : got == 0);
		personality(orig);
		if (i386) {
			got = sys32(136, (long)refused[i], 0, 0, 0, 0);
			report(what, "i386", got, inside ? got == EPERM : got == 0);
			personality(orig);
		}
	}
}

/* The ABI checks of the filter's prologue. */
static void abi_checks(int inside)
{
	int got;

	/* x32 getpid (39 | bit 30): refused in a run; Debian kernels boot with x32 off */
	got = res(syscall(39 | SURFACE_X32_BIT));
	report("x32 getpid", NULL, got, inside ? got == EPERM : got != EPERM);
	/* newer than the table: ENOSYS, inside as on a kernel without it */
	got = res(syscall(SURFACE_NR_MAX + 1, 0, 0, 0, 0, 0, 0));
	report("a call above the table (x86-64)", NULL, got, got == ENOSYS);
	if (have_i386()) {
		got = sys32(SURFACE_NR_MAX + 1, 0, 0, 0, 0, 0);
		report("a call above the table (i386)", NULL, got, got == ENOSYS);
		got = sys32(20 /* getpid */, 0, 0, 0, 0, 0);
		report("getpid", "i386", got, got == 0);
	} else {
		printf("surfaceprobe: SKIP: this kernel has no i386 ABI (ia32 emulation off)\n");
	}
}

/* ---- one call each, with arguments that reach the layer that decides it ---- */

static int io_uring_setup_(void)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	return res(syscall(SYS_io_uring_setup, 4, &p));
}

/* bpf(BPF_PROG_LOAD) of a program that returns 0: refused before the verifier. */
static int bpf_prog_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)"GPL";
	return res(syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)));
}

static int perf_open(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.exclude_kernel = 1;
	return res(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

/* clone() with FLAGS; the child exits at once. */
static int clone_flags(unsigned long flags)
{
	int status;
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0, NULL, NULL, 0);

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	waitpid((pid_t)pid, &status, 0);
	return 0;
}

static int clone3_args(struct clone_args *args)
{
	int status;
	long pid;

	args->exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, args, sizeof(*args));
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	waitpid((pid_t)pid, &status, 0);
	return 0;
}

/* A child that waits to be killed, for the calls that act on a process of the run. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* PTRACE_ATTACH to PID, and detach again. */
static int ptrace_attach(pid_t pid)
{
	int status;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
		return errno;
	waitpid(pid, &status, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

static int vm_readv(pid_t pid)
{
	static long word = 42;
	long got = 0;
	struct iovec local = { &got, sizeof(got) }, remote = { &word, sizeof(word) };

	return res(syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0));
}

static int vm_writev(pid_t pid)
{
	static long word = 42;
	long value = 42;
	struct iovec local = { &value, sizeof(value) }, remote = { &word, sizeof(word) };

	return res(syscall(SYS_process_vm_writev, pid, &local, 1, &remote, 1, 0));
}

/* pidfd_getfd of the target's stdin. */
static int pidfd_getfd_(pid_t pid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), fd, e;

	if (pidfd < 0)
		return 100000 + errno;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0);
	e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	close(pidfd);
	return e;
}

/* process_madvise(MADV_COLD) of nothing: reaches the ptrace check and no page. */
static int process_madvise_(pid_t pid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), e;
	struct iovec iov = { NULL, 0 };

	if (pidfd < 0)
		return 100000 + errno;
	e = res(syscall(SYS_process_madvise, pidfd, &iov, 1, 20 /* MADV_COLD */, 0));
	close(pidfd);
	return e;
}

static int key_add_read(void)
{
	char buf[8];
	long id = syscall(SYS_add_key, "user", "tether-surface", "v", 1,
			  KEY_SPEC_SESSION_KEYRING);

	if (id < 0)
		return errno;
	return res(syscall(SYS_keyctl, KEYCTL_READ, id, buf, sizeof(buf), 0));
}

static int futex_waitv_(void)
{
	/* a futex2 wait whose value does not match: EAGAIN at once */
	static uint32_t word = 1;
	struct futex_waitv w = { .val = 0, .uaddr = (uintptr_t)&word,
				 .flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE };
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	return res(syscall(SYS_futex_waitv, &w, 1, 0, &ts, CLOCK_MONOTONIC));
}

static int io_pgetevents_(void)
{
	aio_context_t ctx = 0;
	struct timespec zero = { 0, 0 };
	int e;

	if (syscall(SYS_io_setup, 1, &ctx) < 0)
		return 100000 + errno;
	e = res(syscall(SYS_io_pgetevents, ctx, 0, 1, NULL, &zero, NULL));
	syscall(SYS_io_destroy, ctx);
	return e;
}

static int vmsplice_(void)
{
	static char byte = 'x';
	struct iovec iov = { &byte, 1 };
	int p[2], e;

	if (pipe(p) < 0)
		return 100000 + errno;
	e = res(syscall(SYS_vmsplice, p[1], &iov, 1, 0));
	close(p[0]);
	close(p[1]);
	return e;
}

/* statmount and listmount of the root mount (LSMT_ROOT, the caller's own namespace). */
struct mnt_id_req_ {
	uint32_t size, spare;
	uint64_t mnt_id, param, mnt_ns_id;
};

static int listmount_(void)
{
	struct mnt_id_req_ req = { .size = 24, .mnt_id = 0xffffffffffffffffull };
	uint64_t ids[4];

	return res(syscall(458, &req, ids, 4, 0));
}

/* statmount of the first mount listmount names (STATMOUNT_SB_BASIC). */
static int statmount_(void)
{
	struct mnt_id_req_ lreq = { .size = 24, .mnt_id = 0xffffffffffffffffull };
	struct mnt_id_req_ req = { .size = 24, .mnt_id = 0xffffffffffffffffull, .param = 1 };
	static char buf[4096];
	uint64_t ids[1];

	/* before 6.8 there is neither: statmount is asked anyway, for its ENOSYS */
	if (syscall(458, &lreq, ids, 1, 0) == 1)
		req.mnt_id = ids[0];
	return res(syscall(457, &req, buf, sizeof(buf), 0));
}

static int name_to_handle(const char *path)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[128];
	} h;
	int mount_id;

	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = 128;
	return res(name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0));
}

static int clock_settime_now(int i386)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (i386) {
		/* clock_settime64 takes a struct __kernel_timespec: 64-bit fields */
		int64_t *ts = low_page();

		ts[0] = now.tv_sec;
		ts[1] = now.tv_nsec;
		return sys32(404, CLOCK_REALTIME, (long)(uintptr_t)ts, 0, 0, 0);
	}
	return res(syscall(SYS_clock_settime, CLOCK_REALTIME, &now));
}

/* adjtimex-class calls: MODES 0 reads, ADJ_FREQUENCY changes (what the kernel gates). */
static int adjtimex_(int which, unsigned int modes)
{
	struct timex tx;

	memset(&tx, 0, sizeof(tx));
	if (modes) {
		struct timex cur;

		memset(&cur, 0, sizeof(cur));
		if (syscall(SYS_adjtimex, &cur) < 0)
			return 100000 + errno;
		tx.freq = cur.freq;	/* the same frequency: a change in form only */
	}
	tx.modes = modes;
	if (which == 0)
		return res(syscall(SYS_adjtimex, &tx));
	if (which == 1)
		return res(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
	/* clock_adjtime64 (i386): struct __kernel_timex has the x86-64 layout */
	memcpy(low_page(), &tx, sizeof(tx));
	return sys32(405, CLOCK_REALTIME, (long)(uintptr_t)low_page(), 0, 0, 0);
}

static pid_t target_pid(const char *arg)
{
	if (!strcmp(arg, "@ppid"))
		return getppid();
	if (!strcmp(arg, "self"))
		return getpid();
	return (pid_t)atoi(arg);
}

/*
 * One case.  Returns 0 or an errno; 100000 + errno when a preparatory step
 * failed (never an expected result); -1 for an unknown case.
 */
static int run_case(const char *op, int argc, char **argv)
{
	const char *arg = argc > 0 ? argv[0] : NULL;
	struct clone_args ca;
	pid_t child;
	int e;

	/* BPF-LSM decides: userfaultfd, io_uring, mount, bpf, perf, syslog */
	if (!strcmp(op, "userfaultfd-user"))
		return res(syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC));
	if (!strcmp(op, "userfaultfd"))
		return res(syscall(SYS_userfaultfd, O_CLOEXEC));
	if (!strcmp(op, "userfaultfd-dev"))
		return res(open("/dev/userfaultfd", O_RDWR | O_CLOEXEC));
	if (!strcmp(op, "userfaultfd-ioctl") && arg)	/* an fd of /dev/userfaultfd */
		return res(ioctl(atoi(arg), USERFAULTFD_IOC_NEW, O_CLOEXEC));
	if (!strcmp(op, "io_uring_setup"))
		return io_uring_setup_();
	if (!strcmp(op, "mount") && arg)
		return res(mount("none", arg, "tmpfs", 0, NULL));
	if (!strcmp(op, "bpf"))
		return bpf_prog_load();
	if (!strcmp(op, "perf_event_open"))
		return perf_open();
	if (!strcmp(op, "syslog"))	/* SYSLOG_ACTION_SIZE_BUFFER */
		return res(syscall(SYS_syslog, 10, NULL, 0));

	/* the capability check decides */
	if (!strcmp(op, "acct"))
		return res(syscall(SYS_acct, NULL));
	if (!strcmp(op, "chroot"))
		return res(chroot("/"));
	if (!strcmp(op, "clock_settime"))
		return clock_settime_now(0);
	if (!strcmp(op, "clock_settime64"))
		return clock_settime_now(1);
	if (!strcmp(op, "adjtimex-read"))
		return adjtimex_(0, 0);
	if (!strcmp(op, "adjtimex"))
		return adjtimex_(0, ADJ_FREQUENCY);
	if (!strcmp(op, "clock_adjtime"))
		return adjtimex_(1, ADJ_FREQUENCY);
	if (!strcmp(op, "clock_adjtime64"))
		return adjtimex_(2, ADJ_FREQUENCY);
	if (!strcmp(op, "delete_module"))
		return res(syscall(SYS_delete_module, "tether_no_such_module", O_NONBLOCK));
	if (!strcmp(op, "init_module"))	/* a junk image: the refusal comes first */
		return res(syscall(SYS_init_module, "junk-not-elf", 12, ""));
	if (!strcmp(op, "finit_module") && arg) {
		int fd = open(arg, O_RDONLY | O_CLOEXEC);

		return fd < 0 ? 100000 + errno : res(syscall(SYS_finit_module, fd, "", 0));
	}
	if (!strcmp(op, "kexec_load"))
		return res(syscall(SYS_kexec_load, 0, 0, NULL, KEXEC_ARCH_DEFAULT));
	if (!strcmp(op, "kexec_file_load"))
		return res(syscall(SYS_kexec_file_load, -1, -1, 0, "", KEXEC_FILE_UNLOAD));
	if (!strcmp(op, "reboot"))	/* ctrl-alt-del off: nothing, were it allowed */
		return res(syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
				   LINUX_REBOOT_CMD_CAD_OFF, NULL));
	if (!strcmp(op, "swapon"))
		return res(syscall(SYS_swapon, "/nonexistent-swap", 0));
	if (!strcmp(op, "swapoff"))
		return res(syscall(SYS_swapoff, "/nonexistent-swap"));
	if (!strcmp(op, "sethostname") || !strcmp(op, "setdomainname")) {
		/* the name it already has: no change, were it allowed */
		char name[65] = "";
		int host = !strcmp(op, "sethostname");

		if ((host ? gethostname(name, sizeof(name) - 1)
			  : getdomainname(name, sizeof(name) - 1)) < 0)
			return 100000 + errno;
		return res(syscall(host ? SYS_sethostname : SYS_setdomainname, name, strlen(name)));
	}
	if (!strcmp(op, "vhangup"))
		return res(syscall(SYS_vhangup));
	if (!strcmp(op, "iopl"))
		return res(syscall(SYS_iopl, 3));
	if (!strcmp(op, "ioperm"))	/* port 0x80, the POST port */
		return res(syscall(SYS_ioperm, 0x80, 1, 1));
	if (!strcmp(op, "settimeofday")) {
		struct timeval tv;

		gettimeofday(&tv, NULL);
		return res(syscall(SYS_settimeofday, &tv, NULL));
	}
	if (!strcmp(op, "umount2"))
		return res(umount2("/", MNT_DETACH));
	if (!strcmp(op, "pivot_root"))
		return res(syscall(SYS_pivot_root, ".", "."));
	if (!strcmp(op, "setns") && arg) {	/* setns NS-FILE */
		int fd = open(arg, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return 100000 + errno;
		e = res(setns(fd, 0));
		close(fd);
		return e;
	}
	if (!strcmp(op, "unshare-net"))
		return res(unshare(CLONE_NEWNET));
	if (!strcmp(op, "unshare-user"))
		return res(unshare(CLONE_NEWUSER));
	if (!strcmp(op, "unshare-files"))	/* no namespace: allowed */
		return res(unshare(CLONE_FILES | CLONE_FS | CLONE_SYSVSEM));

	/* confined: the run's own processes and keys, nothing outside */
	if (!strcmp(op, "clone"))
		return clone_flags(0);
	if (!strcmp(op, "clone-newns"))
		return clone_flags(CLONE_NEWNS);
	if (!strcmp(op, "clone-newuser"))
		return clone_flags(CLONE_NEWUSER);
	if (!strcmp(op, "clone3")) {
		memset(&ca, 0, sizeof(ca));
		return clone3_args(&ca);
	}
	if (!strcmp(op, "clone3-newns")) {
		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_NEWNS;
		return clone3_args(&ca);
	}
	if (!strcmp(op, "clone3-into-cgroup") && arg) {	/* a cgroup directory */
		int fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return 100000 + errno;
		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)fd;
		e = clone3_args(&ca);
		close(fd);
		return e;
	}
	if (!strcmp(op, "socket-vsock"))
		return res(socket(40 /* AF_VSOCK */, SOCK_STREAM | SOCK_CLOEXEC, 0));
	if (!strcmp(op, "socket-tcp")) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	if (!strcmp(op, "key-add-read"))
		return key_add_read();
	if (!strcmp(op, "key-show-user")) {
		char buf[64];

		return res(syscall(SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_USER_KEYRING, buf,
				   sizeof(buf), 0));
	}
	/* the calls on a process: TARGET is a pid, "self", "@ppid" (the controller) or "child" */
	if (arg && (!strcmp(op, "ptrace") || !strcmp(op, "process_vm_readv") ||
		    !strcmp(op, "process_vm_writev") || !strcmp(op, "kcmp") ||
		    !strcmp(op, "pidfd_getfd") || !strcmp(op, "process_madvise"))) {
		pid_t pid;

		child = 0;
		if (!strcmp(arg, "child")) {
			child = sleeper();
			if (child < 0)
				return 100000 + errno;
			pid = child;
		} else {
			pid = target_pid(arg);
		}
		if (!strcmp(op, "ptrace"))
			e = ptrace_attach(pid);
		else if (!strcmp(op, "process_vm_readv"))
			e = vm_readv(pid);
		else if (!strcmp(op, "process_vm_writev"))
			e = vm_writev(pid);
		else if (!strcmp(op, "kcmp"))
			e = res(syscall(SYS_kcmp, getpid(), pid, 1 /* KCMP_VM */, 0, 0));
		else if (!strcmp(op, "pidfd_getfd"))
			e = pidfd_getfd_(pid);
		else
			e = process_madvise_(pid);
		if (child > 0)
			reap(child);
		return e;
	}

	/* allowed, where a profile refuses them */
	if (!strcmp(op, "name_to_handle_at") && arg)
		return name_to_handle(arg);
	if (!strcmp(op, "arch_prctl")) {	/* ARCH_GET_FS */
		unsigned long fs;

		return res(syscall(SYS_arch_prctl, 0x1003, &fs));
	}
	if (!strcmp(op, "arch_prctl-i386"))	/* ARCH_GET_CPUID */
		return sys32(384, 0x1011, 0, 0, 0, 0);
	if (!strcmp(op, "futex_waitv")) {
		e = futex_waitv_();
		return e == EAGAIN ? 0 : e;	/* the value did not match: it ran */
	}
	if (!strcmp(op, "futex_wake")) {	/* wake nobody (6.7+) */
		static uint32_t word;

		return res(syscall(454, &word, 0xfffffffful, 1, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE));
	}
	if (!strcmp(op, "futex_wait")) {	/* value differs: EAGAIN at once (6.7+) */
		static uint32_t word = 1;

		e = res(syscall(455, &word, 0, 0xfffffffful, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, NULL,
				CLOCK_MONOTONIC));
		return e == EAGAIN ? 0 : e;
	}
	if (!strcmp(op, "futex_requeue")) {	/* requeue nobody (6.7+) */
		static uint32_t words[2];
		struct futex_waitv w[2] = {
			{ .uaddr = (uintptr_t)&words[0], .flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE },
			{ .uaddr = (uintptr_t)&words[1], .flags = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE },
		};

		return res(syscall(456, w, 0, 1, 1));
	}
	if (!strcmp(op, "io_pgetevents"))
		return io_pgetevents_();
	if (!strcmp(op, "io_pgetevents_time64")) {	/* i386; io_setup is 245 there */
		uint32_t *ctx = low_page();
		int64_t *zero = (int64_t *)((char *)low_page() + 64);

		ctx[0] = 0;
		zero[0] = zero[1] = 0;
		e = sys32(245, 1, (long)(uintptr_t)ctx, 0, 0, 0);
		if (e)
			return 100000 + e;
		e = sys32(416, ctx[0], 0, 1, 0, (long)(uintptr_t)zero);
		sys32(246 /* io_destroy */, ctx[0], 0, 0, 0, 0);
		return e;
	}
	if (!strcmp(op, "vmsplice"))
		return vmsplice_();
	if (!strcmp(op, "map_shadow_stack")) {
		/* without user shadow stacks (a CET CPU, glibc asking) the kernel says EOPNOTSUPP */
		long r = syscall(453, 0, 4096, 0);

		if (r >= 0)
			munmap((void *)r, 4096);
		return res(r);
	}
	if (!strcmp(op, "mseal")) {	/* seal a page of our own (6.10+) */
		void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 100000 + errno;
		return res(syscall(462, p, 4096, 0));
	}
	if (!strcmp(op, "listmount"))
		return listmount_();
	if (!strcmp(op, "statmount"))
		return statmount_();
	return -1;
}

int main(int argc, char **argv)
{
	int expect, got;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < ROW_COUNT; i++)
			printf("%s %s %d %d\n", rows[i].name, surface_layer_name(rows[i].layer),
			       rows[i].nr_x86_64, rows[i].nr_i386);
		return 0;
	}
	if (argc == 3 && (!strcmp(argv[2], "in") || !strcmp(argv[2], "out"))) {
		int inside = !strcmp(argv[2], "in");

		if (!strcmp(argv[1], "seccomp"))
			seccomp_rows(inside);
		else if (!strcmp(argv[1], "personality"))
			personality_values(inside);
		else if (!strcmp(argv[1], "abi"))
			abi_checks(inside);
		else
			goto usage;
		return failures ? 1 : 0;
	}
	if (argc < 3)
		goto usage;
	expect = parse_err(argv[1]);
	if (expect < 0) {
		fprintf(stderr, "surfaceprobe: unknown expectation %s\n", argv[1]);
		return 2;
	}
	got = run_case(argv[2], argc - 3, argv + 3);
	if (got < 0) {
		fprintf(stderr, "surfaceprobe: unknown case %s\n", argv[2]);
		return 2;
	}
	printf("surfaceprobe: %s%s%s: %s%s\n", argv[2], argc > 3 ? " " : "", argc > 3 ? argv[3] : "",
	       got >= 100000 ? "prep-failed:" : "", errname(got >= 100000 ? got - 100000 : got));
	return got == expect ? 0 : 1;
usage:
	fprintf(stderr, "usage: surfaceprobe list | {seccomp|personality|abi} {in|out} |"
			" EXPECT CASE [ARGS...]\n");
	return 2;
}
