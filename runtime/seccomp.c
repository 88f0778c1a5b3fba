// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

#include "runtime/seccomp.h"

#ifndef __x86_64__
#error "the seccomp filter lists x86 syscall numbers; add this architecture's"
#endif

#define NR_OPEN_TREE		428	/* 428..433: open_tree .. fspick, same on x86-64 and i386 */
#define NR_FSPICK		433
#define NR_MOUNT_SETATTR	442
#define X32_SYSCALL_BIT		0x40000000u

int seccomp_deny_mount_api(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 1, 0),
		/* no other ABI can reach an x86 kernel: anything else is an attack */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* x32 calls carry the same numbers with bit 30 set */
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MOUNT_SETATTR, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, NR_OPEN_TREE, 0, 1),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, NR_FSPICK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}
