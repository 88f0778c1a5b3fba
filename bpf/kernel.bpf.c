// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel itself (BPF-LSM and one fexit): capabilities (refused before
 * and recorded after the capability module), bpf(), module, firmware and
 * kexec loads and module autoloads, perf_event_open, syslog(2), setting
 * the clock, userfaultfd and io_uring.  No rule grants any of it: a run
 * that could would be the kernel, or could detach tether.  Records: kind
 * "capability" (path: the capability's number) or "kernel", errno EPERM,
 * reason forbidden.
 */
#include "bpf/lib/decide.h"

/*
 * Writes `value` in decimal where a record's path goes: stores, not
 * bpf_snprintf, whose format string would be a second string in .rodata
 * (which breaks the object's BTF, see tether_socket_create in sock.bpf.c).
 */
static __always_inline void put_decimal(char *dst, long value)
{
	__u64 v = value < 0 ? -(__u64)value : (__u64)value;
	char digits[32];
	__u32 n = 0, pos = 0;

	/* bounded loops: 20 digits hold any 64-bit value */
	for (__u32 i = 0; i < 20; i++) {
		digits[i] = '0' + v % 10;
		v /= 10;
		n = i + 1;
		if (!v)
			break;
	}
	if (value < 0)
		dst[pos++] = '-';
	for (__u32 i = n; i > 0 && i <= 20; i--)
		dst[pos++ & 0x1f] = digits[(i - 1) & 0x1f];
	dst[pos & 0x1f] = 0;
}

/* Capabilities by number (include/uapi/linux/capability.h). */
#define CAP_DAC_OVERRIDE	1
#define CAP_DAC_READ_SEARCH	2
#define CAP_FOWNER		3
#define CAP_FSETID		4
#define CAP_SETGID		6
#define CAP_SETUID		7
#define CAP_SETPCAP		8
#define CAP_SYS_RESOURCE	24
#define CAP_OPT_NOAUDIT		(1u << 1)

/*
 * A capability record: op capability, path the capability's number (the
 * controller writes its name, "cap_sys_admin"), errno EPERM.  Returns -EPERM.
 */
static __always_inline int deny_capability(struct tether_run *run, __u64 cgid, int cap)
{
	struct tether_fs_event *ev;

	ev = reserve_fs_event(run, cgid, TETHER_FS_CAPABILITY, -EPERM, TETHER_REASON_FORBIDDEN, 0,
			      0, 0);
	if (!ev)
		return -EPERM;
	put_decimal(ev->path, cap);
	submit_fs_event(ev);
	return -EPERM;
}

#define PFA_NO_NEW_PRIVS	0	/* bit of task_struct.atomic_flags */

static __always_inline bool current_no_new_privs(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return task->atomic_flags & (1ul << PFA_NO_NEW_PRIVS);
}

/*
 * Whether a capability check is about the caller's own credentials.  The
 * kernel also asks about others: another task's (has_capability()), or
 * credentials it put on for the caller (override_creds(): overlayfs
 * reaching its layers as whoever mounted it, NFS, cachefiles).  Those are
 * the kernel acting for itself, which the run's capabilities do not govern;
 * refusing them would break files on an overlay root.
 */
static __always_inline bool own_credentials(const struct cred *cred)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return (const void *)cred == (const void *)task->real_cred;
}

/*
 * What the first process of a run needs between clone3 and exec, before it
 * sets no_new_privs: changing its uid, gid and groups, dropping the bounding
 * set and locking securebits, lowering rlimits.
 */
static __always_inline bool setup_capability(int cap)
{
	return cap == CAP_SETUID || cap == CAP_SETGID || cap == CAP_SETPCAP ||
	       cap == CAP_SYS_RESOURCE;
}

/*
 * A capability check the capability module allowed.  Every process of a run
 * runs with no_new_privs set and every capability dropped (the controller
 * sets both before exec), so a check that got here from such a process
 * found a capability in a user namespace the run's uid owns outside the
 * run (setns into one of its namespaces), or a root run whose drop failed:
 * refused either way.  Checks of other credentials are the kernel's
 * (own_credentials()).  The one process without no_new_privs is the run's
 * first, while it drops its privileges; it keeps only what that needs.
 * Checks the kernel marks as not to be audited are refused quietly.
 */
SEC("lsm/capable")
int BPF_PROG(tether_capable, const struct cred *cred, void *ns, int cap, unsigned int opts,
	     int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run || !own_credentials(cred))
		return 0;
	if (!current_no_new_privs() && setup_capability(cap))
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return -EPERM;
	return deny_capability(run, cgid, cap);
}

/*
 * With lsm=lockdown,capability,bpf the kernel stops at the first module
 * that refuses, so once a run has dropped its capabilities, tether_capable
 * never sees the checks that matter (init_module, kexec_load, setns,
 * settimeofday, a restricted syslog): this records them after the
 * capability module refused.  The file permission capabilities are left
 * out: every permission check on a file the run does not own asks for them
 * (ls of a 0700 directory), and the file hooks record what they decide.  So
 * are CAP_SETUID and CAP_SETGID: setuid(getuid()) asks for them before it
 * takes the unprivileged way, and privilege-dropping code (every BusyBox
 * applet run by a non-root uid) does that on each start; the run has no
 * capability to gain an id with, and no_new_privs keeps setuid binaries
 * from giving one.
 * The record's errno is the capability's refusal; the system call may
 * return another (perf_event_open: EACCES).
 */
SEC("fexit/cap_capable")
int BPF_PROG(tether_cap_refused, const struct cred *cred, struct user_namespace *targ_ns, int cap,
	     unsigned int opts, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (!ret || (opts & CAP_OPT_NOAUDIT) || cap == CAP_DAC_OVERRIDE ||
	    cap == CAP_DAC_READ_SEARCH || cap == CAP_FOWNER || cap == CAP_FSETID ||
	    cap == CAP_SETGID || cap == CAP_SETUID)
		return 0;
	run = current_run(&cgid);
	if (!run || !own_credentials(cred))
		return 0;
	deny_capability(run, cgid, cap);
	return 0;
}


/*
 * perf_event_open: hardware counters and tracepoints observe the host's
 * other processes and the kernel.  Debian kernels with perf_event_paranoid 3
 * ask for CAP_PERFMON or CAP_SYS_ADMIN first (tether_cap_refused records
 * that).  The hook lost its attr argument in 6.12; the loader keeps the
 * variant matching the kernel's BTF.
 */
static __always_inline int deny_perf_event(void)
{
	return deny_in_run(TETHER_FS_PERF_EVENT, -EPERM);
}

SEC("lsm/perf_event_open")
int BPF_PROG(tether_perf_event_open_attr, void *attr, int type, int ret)
{
	if (ret)
		return ret;
	return deny_perf_event();
}

SEC("lsm/perf_event_open")
int BPF_PROG(tether_perf_event_open, int type, int ret)
{
	if (ret)
		return ret;
	return deny_perf_event();
}

/*
 * syslog(2) reads and clears the kernel log (addresses, other tenants'
 * messages) and sets the console level.  Actions the kernel restricts
 * (dmesg_restrict) need CAP_SYSLOG first and are recorded as that
 * capability; the rest arrive here.  path: the action number.
 */
SEC("lsm/syslog")
int BPF_PROG(tether_syslog, int type, int ret)
{
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	ev = reserve_fs_event(run, cgid, TETHER_FS_SYSLOG, -EPERM, TETHER_REASON_FORBIDDEN, 0, 0,
			      0);
	if (!ev)
		return -EPERM;
	put_decimal(ev->path, type);
	submit_fs_event(ev);
	return -EPERM;
}

/* The system clock is the host's.  Reached only when CAP_SYS_TIME was allowed. */
SEC("lsm/settime")
int BPF_PROG(tether_settime, const struct timespec64 *ts, const struct timezone *tz, int ret)
{
	if (ret)
		return ret;
	return deny_in_run(TETHER_FS_SETTIME, -EPERM);
}

/*
 * bpf(): with it a root run could detach the pinned links or rewrite the
 * runs map, which is the boundary itself.  No process in a run may use it.
 * The hook gained a `kernel` argument after 6.12; the loader keeps the
 * variant matching the kernel's BTF.
 */
static __always_inline int deny_bpf(int cmd)
{
	return deny_in_run(TETHER_FS_BPF, -EPERM);
}

SEC("lsm/bpf")
int BPF_PROG(tether_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	if (ret)
		return ret;
	return deny_bpf(cmd);
}

SEC("lsm/bpf")
int BPF_PROG(tether_bpf_kernel, int cmd, union bpf_attr *attr, unsigned int size, bool kernel,
	     int ret)
{
	if (ret)
		return ret;
	return deny_bpf(cmd);
}

/*
 * Kernel modules, firmware and kexec images: with root in a run, init_module
 * of a module built in the workspace would be the kernel itself.  No run may
 * load anything into the kernel, or ask it to autoload a module (an unusual
 * socket family, a filesystem type) on its behalf.
 */
static __always_inline int deny_kernel_load(__u32 op, struct file *file, const char *name)
{
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	if (file)
		return decide(run, cgid, op, BPF_CORE_READ(file, f_path.mnt),
			      BPF_CORE_READ(file, f_path.dentry), MATCH_OBJECT, 0, -EPERM);
	ev = reserve_fs_event(run, cgid, op, -EPERM, TETHER_REASON_FORBIDDEN, 0, 0, 0);
	if (!ev)
		return -EPERM;
	/* the module name goes where a path would: it says what was asked for */
	if (name)
		bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), name);
	submit_fs_event(ev);
	return -EPERM;
}

SEC("lsm/kernel_load_data")
int BPF_PROG(tether_kernel_load_data, int id, bool contents, int ret)
{
	if (ret)
		return ret;
	return deny_kernel_load(TETHER_FS_KERNEL_LOAD, NULL, NULL);
}

SEC("lsm/kernel_read_file")
int BPF_PROG(tether_kernel_read_file, struct file *file, int id, bool contents, int ret)
{
	if (ret)
		return ret;
	return deny_kernel_load(TETHER_FS_KERNEL_LOAD, file, NULL);
}

SEC("lsm/kernel_module_request")
int BPF_PROG(tether_kernel_module_request, char *kmod_name, int ret)
{
	if (ret)
		return ret;
	return deny_kernel_load(TETHER_FS_MODULE_REQUEST, NULL, kmod_name);
}

/*
 * userfaultfd and io_uring.  A userfaultfd lets its owner stall the kernel
 * in the middle of a copy from user memory, for as long as it likes: the
 * primitive that turns a race in the kernel into a reliable exploit, and
 * UFFD_USER_MODE_ONLY (5.11+) needs no capability.  io_uring reaches much of
 * the kernel through a second system call interface of its own, and has had
 * more exploitable bugs than any other part of it.  No agent tool needs
 * either (libuv and liburing users fall back when io_uring_setup fails).
 * Both make their file with a secure anonymous inode (anon_inode_getfd_secure
 * and friends), which asks this hook first: the userfaultfd(2) system call,
 * the USERFAULTFD_IOC_NEW ioctl of /dev/userfaultfd (6.1+) and
 * io_uring_setup(2) alike, on 6.1 and 6.12.  Seccomp runs before any LSM
 * and would refuse without a record, so these calls are kept out of the
 * seccomp filter (runtime/kernel_surface.h) and refused here.  Other users
 * of secure anonymous inodes (memfd_secret and KVM's guest memory on newer
 * kernels) are matched by name and left alone.  path: the inode's name.
 */
#define ANON_NAME_MAX	16

/* Eight bytes of a name as the little-endian word they load as. */
#define NAME_WORD(a, b, c, d, e, f, g, h)                                                   \
	((__u64)(a) | (__u64)(b) << 8 | (__u64)(c) << 16 | (__u64)(d) << 24 |               \
	 (__u64)(e) << 32 | (__u64)(f) << 40 | (__u64)(g) << 48 | (__u64)(h) << 56)

/* Whether `name` (NUL-padded) is one of the inodes a run may not make. */
static __always_inline bool refused_anon_inode(const __u64 name[2])
{
	/* "[userfaultfd]" */
	if (name[0] == NAME_WORD('[', 'u', 's', 'e', 'r', 'f', 'a', 'u') &&
	    name[1] == NAME_WORD('l', 't', 'f', 'd', ']', 0, 0, 0))
		return true;
	/* "[io_uring]" */
	return name[0] == NAME_WORD('[', 'i', 'o', '_', 'u', 'r', 'i', 'n') &&
	       name[1] == NAME_WORD('g', ']', 0, 0, 0, 0, 0, 0);
}

SEC("lsm/inode_init_security_anon")
int BPF_PROG(tether_inode_init_security_anon, struct inode *inode, const struct qstr *name,
	     const struct inode *context_inode, int ret)
{
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 cgid, words[ANON_NAME_MAX / 8] = {};

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run || !name)
		return 0;
	/* the string stays in words[]: a literal would be a second string in .rodata */
	if (bpf_probe_read_kernel_str(words, sizeof(words), BPF_CORE_READ(name, name)) < 0)
		return 0;
	if (!refused_anon_inode(words))
		return 0;
	ev = reserve_fs_event(run, cgid, TETHER_FS_ANON_INODE, -EPERM, TETHER_REASON_FORBIDDEN, 0,
			      0, 0);
	if (!ev)
		return -EPERM;
	__builtin_memcpy(ev->path, words, sizeof(words));
	ev->path[ANON_NAME_MAX - 1] = 0;
	submit_fs_event(ev);
	return -EPERM;
}
