/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel surface of a run: every system call that the default seccomp
 * profiles of Docker (moby/profiles, seccomp/default.json) or Podman
 * (containers/common, pkg/seccomp/seccomp.json) refuse to a container
 * without capabilities, and the few others issue 14 names (ptrace,
 * name_to_handle_at, ...), each with the layer of tether that decides it
 * inside a run.  One table for the seccomp filter (runtime/seccomp.c builds it from
 * the SURFACE_SECCOMP rows), for the documentation (docs/kernel-surface.md
 * lists the same rows, with the reasons; tests/unit/test_seccomp.c checks
 * that it does) and for the VM test (tests/vm/progs/surfaceprobe.c calls
 * every row inside a run).
 *
 * A row: X(name, x86-64 number, i386 number, layer).  SURFACE_NONE where
 * the ABI has no such call.  The numbers are the kernel's
 * (arch/x86/entry/syscalls/syscall_{64,32}.tbl); they are spelled out rather
 * than taken from <asm/unistd_*.h> because the build host's headers may be
 * older than the kernels a run meets (cachestat, lsm_*, mseal are 6.5+).
 * x32 calls (the x86-64 numbers with bit 30 set) are refused whatever their
 * number, and numbers above SURFACE_NR_MAX (calls newer than this table)
 * fail with ENOSYS, as on a kernel without them.
 */
#ifndef TETHER_RUNTIME_KERNEL_SURFACE_H
#define TETHER_RUNTIME_KERNEL_SURFACE_H

/* Which part of tether decides a call inside a run. */
enum surface_layer {
	/* the seccomp filter: EPERM, and no record (no hook the kernel asks) */
	SURFACE_SECCOMP = 1,
	/* the seccomp filter, by argument: personality() with a flag Docker refuses */
	SURFACE_SECCOMP_ARGS = 2,
	/* a BPF-LSM hook refuses it in every run, with a record */
	SURFACE_LSM = 3,
	/* the kernel's capability check (a run holds none), recorded as a capability */
	SURFACE_CAPABILITY = 4,
	/* allowed on the run's own processes and keys; BPF-LSM refuses, with a record,
	 * what reaches outside the run */
	SURFACE_CONFINED = 5,
	/* allowed: a profile refuses it, tether does not (docs/kernel-surface.md says why) */
	SURFACE_ALLOWED = 6,
};

#define SURFACE_NONE		(-1)
/*
 * The highest number the table was reviewed against, on both ABIs: mseal,
 * the newest call of Linux 6.12, the newest kernel tether is tested on.
 */
#define SURFACE_NR_MAX		462
#define SURFACE_X32_BIT		0x40000000u

/*
 * personality(2) values a run may set, as Docker allows them: PER_LINUX,
 * PER_LINUX32, UNAME26, PER_LINUX32|UNAME26, and 0xffffffff, which only
 * queries.  The flags it refuses (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC,
 * MMAP_PAGE_ZERO, ...) switch off the exploit mitigations of the caller's
 * next exec.  The kernel takes an unsigned int: only the low 32 bits count.
 */
#define SURFACE_PERSONALITY_ALLOWED(X) X(0x0) X(0x8) X(0x20000) X(0x20008) X(0xffffffff)

/* Sorted by name, leading underscores aside (docs/kernel-surface.md is too). */
#define TETHER_KERNEL_SURFACE(X) \
	X(acct, 163, 51, SURFACE_CAPABILITY) \
	X(add_key, 248, 286, SURFACE_CONFINED) \
	X(adjtimex, 159, 124, SURFACE_CAPABILITY) \
	X(afs_syscall, 183, 137, SURFACE_SECCOMP) \
	X(arch_prctl, 158, 384, SURFACE_ALLOWED) \
	X(bdflush, SURFACE_NONE, 134, SURFACE_SECCOMP) \
	X(bpf, 321, 357, SURFACE_LSM) \
	X(break, SURFACE_NONE, 17, SURFACE_SECCOMP) \
	X(cachestat, 451, 451, SURFACE_SECCOMP) \
	X(chroot, 161, 61, SURFACE_CAPABILITY) \
	X(clock_adjtime, 305, 343, SURFACE_CAPABILITY) \
	X(clock_adjtime64, SURFACE_NONE, 405, SURFACE_CAPABILITY) \
	X(clock_settime, 227, 264, SURFACE_CAPABILITY) \
	X(clock_settime64, SURFACE_NONE, 404, SURFACE_CAPABILITY) \
	X(clone, 56, 120, SURFACE_CONFINED) \
	X(clone3, 435, 435, SURFACE_CONFINED) \
	X(create_module, 174, 127, SURFACE_SECCOMP) \
	X(delete_module, 176, 129, SURFACE_CAPABILITY) \
	X(fanotify_init, 300, 338, SURFACE_SECCOMP) \
	X(finit_module, 313, 350, SURFACE_CAPABILITY) \
	X(fsconfig, 431, 431, SURFACE_SECCOMP) \
	X(fsmount, 432, 432, SURFACE_SECCOMP) \
	X(fsopen, 430, 430, SURFACE_SECCOMP) \
	X(fspick, 433, 433, SURFACE_SECCOMP) \
	X(ftime, SURFACE_NONE, 35, SURFACE_SECCOMP) \
	X(futex_requeue, 456, 456, SURFACE_ALLOWED) \
	X(futex_wait, 455, 455, SURFACE_ALLOWED) \
	X(futex_waitv, 449, 449, SURFACE_ALLOWED) \
	X(futex_wake, 454, 454, SURFACE_ALLOWED) \
	X(get_kernel_syms, 177, 130, SURFACE_SECCOMP) \
	X(get_mempolicy, 239, 275, SURFACE_SECCOMP) \
	X(getpmsg, 181, 188, SURFACE_SECCOMP) \
	X(gtty, SURFACE_NONE, 32, SURFACE_SECCOMP) \
	X(idle, SURFACE_NONE, 112, SURFACE_SECCOMP) \
	X(init_module, 175, 128, SURFACE_CAPABILITY) \
	X(io_pgetevents, 333, 385, SURFACE_ALLOWED) \
	X(io_pgetevents_time64, SURFACE_NONE, 416, SURFACE_ALLOWED) \
	X(io_uring_enter, 426, 426, SURFACE_SECCOMP) \
	X(io_uring_register, 427, 427, SURFACE_SECCOMP) \
	X(io_uring_setup, 425, 425, SURFACE_LSM) \
	X(ioperm, 173, 101, SURFACE_CAPABILITY) \
	X(iopl, 172, 110, SURFACE_CAPABILITY) \
	X(kcmp, 312, 349, SURFACE_CONFINED) \
	X(kexec_file_load, 320, SURFACE_NONE, SURFACE_CAPABILITY) \
	X(kexec_load, 246, 283, SURFACE_CAPABILITY) \
	X(keyctl, 250, 288, SURFACE_CONFINED) \
	X(listmount, 458, 458, SURFACE_ALLOWED) \
	X(lock, SURFACE_NONE, 53, SURFACE_SECCOMP) \
	X(lookup_dcookie, 212, 253, SURFACE_SECCOMP) \
	X(lsm_get_self_attr, 459, 459, SURFACE_SECCOMP) \
	X(lsm_list_modules, 461, 461, SURFACE_SECCOMP) \
	X(lsm_set_self_attr, 460, 460, SURFACE_SECCOMP) \
	X(map_shadow_stack, 453, SURFACE_NONE, SURFACE_ALLOWED) \
	X(mbind, 237, 274, SURFACE_SECCOMP) \
	X(migrate_pages, 256, 294, SURFACE_SECCOMP) \
	X(mount, 165, 21, SURFACE_LSM) \
	X(mount_setattr, 442, 442, SURFACE_SECCOMP) \
	X(move_mount, 429, 429, SURFACE_SECCOMP) \
	X(move_pages, 279, 317, SURFACE_SECCOMP) \
	X(mpx, SURFACE_NONE, 56, SURFACE_SECCOMP) \
	X(mseal, 462, 462, SURFACE_ALLOWED) \
	X(name_to_handle_at, 303, 341, SURFACE_ALLOWED) \
	X(nfsservctl, 180, 169, SURFACE_SECCOMP) \
	X(nice, SURFACE_NONE, 34, SURFACE_SECCOMP) \
	X(oldfstat, SURFACE_NONE, 28, SURFACE_SECCOMP) \
	X(oldlstat, SURFACE_NONE, 84, SURFACE_SECCOMP) \
	X(oldolduname, SURFACE_NONE, 59, SURFACE_SECCOMP) \
	X(oldstat, SURFACE_NONE, 18, SURFACE_SECCOMP) \
	X(olduname, SURFACE_NONE, 109, SURFACE_SECCOMP) \
	X(open_by_handle_at, 304, 342, SURFACE_SECCOMP) \
	X(open_tree, 428, 428, SURFACE_SECCOMP) \
	X(perf_event_open, 298, 336, SURFACE_LSM) \
	X(personality, 135, 136, SURFACE_SECCOMP_ARGS) \
	X(pidfd_getfd, 438, 438, SURFACE_CONFINED) \
	X(pivot_root, 155, 217, SURFACE_CAPABILITY) \
	X(process_madvise, 440, 440, SURFACE_CONFINED) \
	X(process_vm_readv, 310, 347, SURFACE_CONFINED) \
	X(process_vm_writev, 311, 348, SURFACE_CONFINED) \
	X(prof, SURFACE_NONE, 44, SURFACE_SECCOMP) \
	X(profil, SURFACE_NONE, 98, SURFACE_SECCOMP) \
	X(ptrace, 101, 26, SURFACE_CONFINED) \
	X(putpmsg, 182, 189, SURFACE_SECCOMP) \
	X(query_module, 178, 167, SURFACE_SECCOMP) \
	X(quotactl, 179, 131, SURFACE_SECCOMP) \
	X(quotactl_fd, 443, 443, SURFACE_SECCOMP) \
	X(readdir, SURFACE_NONE, 89, SURFACE_SECCOMP) \
	X(reboot, 169, 88, SURFACE_CAPABILITY) \
	X(request_key, 249, 287, SURFACE_SECCOMP) \
	X(security, 185, SURFACE_NONE, SURFACE_SECCOMP) \
	X(set_mempolicy, 238, 276, SURFACE_SECCOMP) \
	X(set_mempolicy_home_node, 450, 450, SURFACE_SECCOMP) \
	X(setdomainname, 171, 121, SURFACE_CAPABILITY) \
	X(sethostname, 170, 74, SURFACE_CAPABILITY) \
	X(setns, 308, 346, SURFACE_CAPABILITY) \
	X(settimeofday, 164, 79, SURFACE_CAPABILITY) \
	X(sgetmask, SURFACE_NONE, 68, SURFACE_SECCOMP) \
	X(sigaction, SURFACE_NONE, 67, SURFACE_SECCOMP) \
	X(signal, SURFACE_NONE, 48, SURFACE_SECCOMP) \
	X(sigpending, SURFACE_NONE, 73, SURFACE_SECCOMP) \
	X(sigsuspend, SURFACE_NONE, 72, SURFACE_SECCOMP) \
	X(socket, 41, 359, SURFACE_CONFINED) \
	X(ssetmask, SURFACE_NONE, 69, SURFACE_SECCOMP) \
	X(statmount, 457, 457, SURFACE_ALLOWED) \
	X(stime, SURFACE_NONE, 25, SURFACE_SECCOMP) \
	X(stty, SURFACE_NONE, 31, SURFACE_SECCOMP) \
	X(swapoff, 168, 115, SURFACE_CAPABILITY) \
	X(swapon, 167, 87, SURFACE_CAPABILITY) \
	X(_sysctl, 156, 149, SURFACE_SECCOMP) \
	X(sysfs, 139, 135, SURFACE_SECCOMP) \
	X(syslog, 103, 103, SURFACE_LSM) \
	X(tuxcall, 184, SURFACE_NONE, SURFACE_SECCOMP) \
	X(ulimit, SURFACE_NONE, 58, SURFACE_SECCOMP) \
	X(umount, SURFACE_NONE, 22, SURFACE_SECCOMP) \
	X(umount2, 166, 52, SURFACE_CAPABILITY) \
	X(unshare, 272, 310, SURFACE_CAPABILITY) \
	X(uselib, 134, 86, SURFACE_SECCOMP) \
	X(userfaultfd, 323, 374, SURFACE_LSM) \
	X(ustat, 136, 62, SURFACE_SECCOMP) \
	X(vhangup, 153, 111, SURFACE_CAPABILITY) \
	X(vm86, SURFACE_NONE, 166, SURFACE_SECCOMP) \
	X(vm86old, SURFACE_NONE, 113, SURFACE_SECCOMP) \
	X(vmsplice, 278, 316, SURFACE_ALLOWED) \
	X(vserver, 236, 273, SURFACE_SECCOMP)

struct surface_call {
	const char *name;
	int nr_x86_64;		/* SURFACE_NONE: no such call on x86-64 */
	int nr_i386;		/* SURFACE_NONE: no such call on i386 */
	enum surface_layer layer;
};

/* The layer's name in docs/kernel-surface.md's table. */
static inline const char *surface_layer_name(enum surface_layer layer)
{
	switch (layer) {
	case SURFACE_SECCOMP:
		return "seccomp";
	case SURFACE_SECCOMP_ARGS:
		return "seccomp-args";
	case SURFACE_LSM:
		return "lsm";
	case SURFACE_CAPABILITY:
		return "capability";
	case SURFACE_CONFINED:
		return "confined";
	case SURFACE_ALLOWED:
		return "allowed";
	}
	return "?";
}

#endif
