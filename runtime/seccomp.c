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
#define NR_MOUNT_SETATTR	442	/* same on x86-64 and i386 */
#define X32_SYSCALL_BIT		0x40000000u

int seccomp_deny_mount_api(void)
{
	/*
	 * Jump offsets count instructions after the jump; the comments number
	 * the instructions so each target can be checked by eye.  The new
	 * mount API has the same numbers on both ABIs.
	 */
	struct sock_filter filter[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 2, 0),	/* -> 4 */
		/* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 1, 0),	/* -> 4 */
		/* no other ABI can reach an x86 kernel: anything else is an attack */
		/* 3 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* x32 calls carry the x86-64 numbers with bit 30 set */
		/* 5 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MOUNT_SETATTR, 3, 0),	/* -> 10 */
		/* 7 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, NR_OPEN_TREE, 0, 1),	/* no -> 9 */
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, NR_FSPICK, 0, 1),	/* no -> 10 */
		/* 9 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}
