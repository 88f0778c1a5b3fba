// SPDX-License-Identifier: GPL-2.0
/*
 * The run's seccomp filter, generated from the table of
 * runtime/kernel_surface.h.  The program it builds:
 *
 *	load arch
 *	x86-64?  jump to the x86-64 block
 *	i386?    jump to the i386 block
 *	kill the process: no other ABI reaches an x86 kernel
 *
 *	x86-64 block: load nr; x32 (bit 30)? EPERM; above SURFACE_NR_MAX? ENOSYS;
 *	              personality? check its argument; else search the tree
 *	i386 block:   load nr; above SURFACE_NR_MAX? ENOSYS; personality? ...; tree
 *
 * A tree over n sorted numbers is a JGE on the middle one between the trees
 * of the two halves; four numbers or fewer are a leaf: one JEQ each, then
 * RET ALLOW, then RET ERRNO(EPERM), which every JEQ of the leaf reaches.
 * Every conditional jump is forward and local (a leaf's, a block's own
 * checks, a tree's JGE over its left half), so no offset comes near the
 * 8-bit limit; the arch dispatch uses BPF_JA, whose offset is 32 bits.
 * The filter depends on the arch and the number alone for every call but
 * personality, so the kernel's seccomp action cache (5.11+) allows the rest
 * without running it.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>

#include "runtime/seccomp.h"

#ifndef __x86_64__
#error "the seccomp filter lists x86 syscall numbers; add this architecture's"
#endif

#define ROW(name, x86_64, i386, layer) { #name, x86_64, i386, layer },
const struct surface_call surface_calls[] = { TETHER_KERNEL_SURFACE(ROW) };
#undef ROW
const size_t surface_call_count = sizeof(surface_calls) / sizeof(surface_calls[0]);

#define NR_PERSONALITY_X86_64	135
#define NR_PERSONALITY_I386	136
#define TREE_LEAF		4
#define MAX_REFUSED		(sizeof(surface_calls) / sizeof(surface_calls[0]))

#define RET_EPERM	(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define RET_ENOSYS	(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))

struct emitter {
	struct sock_filter *prog;
	size_t cap, len;
	bool failed;	/* out of room, or an offset that does not fit */
};

/* Appends one instruction; returns its index. */
static size_t emit(struct emitter *e, uint16_t code, uint32_t k, uint32_t jt, uint32_t jf)
{
	size_t at = e->len;

	if (e->len >= e->cap || jt > 255 || jf > 255) {
		e->failed = true;
		return at;
	}
	e->prog[e->len++] = (struct sock_filter){ code, (uint8_t)jt, (uint8_t)jf, k };
	return at;
}

static void emit_ret(struct emitter *e, uint32_t action)
{
	emit(e, BPF_RET | BPF_K, action, 0, 0);
}

/* Sets the true branch of the jump at `at` to the next instruction to be emitted. */
static void patch_jt_here(struct emitter *e, size_t at)
{
	size_t offset = e->len - at - 1;

	if (e->failed || at >= e->len)
		return;
	if (offset > 255) {
		e->failed = true;
		return;
	}
	e->prog[at].jt = (uint8_t)offset;
}

static void patch_jf_here(struct emitter *e, size_t at)
{
	size_t offset = e->len - at - 1;

	if (e->failed || at >= e->len)
		return;
	if (offset > 255) {
		e->failed = true;
		return;
	}
	e->prog[at].jf = (uint8_t)offset;
}

/* The search over nr[0..n): EPERM for a listed number, ALLOW for any other. */
static void emit_tree(struct emitter *e, const uint32_t *nr, size_t n)
{
	if (n <= TREE_LEAF) {
		for (size_t i = 0; i < n; i++)
			/* past the leaf's remaining JEQs and its RET ALLOW */
			emit(e, BPF_JMP | BPF_JEQ | BPF_K, nr[i], (uint32_t)(n - i), 0);
		emit_ret(e, SECCOMP_RET_ALLOW);
		emit_ret(e, RET_EPERM);
		return;
	}
	size_t mid = n / 2, at = emit(e, BPF_JMP | BPF_JGE | BPF_K, nr[mid], 0, 0);

	emit_tree(e, nr, mid);
	patch_jt_here(e, at);
	emit_tree(e, nr + mid, n - mid);
}

/* personality(): allowed for the values Docker allows, EPERM for the rest. */
static void emit_personality(struct emitter *e)
{
#define PERSONALITY_VALUE(v) (uint32_t)(v),
	static const uint32_t allowed[] = { SURFACE_PERSONALITY_ALLOWED(PERSONALITY_VALUE) };
#undef PERSONALITY_VALUE
	size_t n = sizeof(allowed) / sizeof(allowed[0]);

	/* the low word of args[0] (little-endian): the kernel takes an unsigned int */
	emit(e, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]), 0, 0);
	for (size_t i = 0; i < n; i++)
		/* past the remaining JEQs and the RET EPERM */
		emit(e, BPF_JMP | BPF_JEQ | BPF_K, allowed[i], (uint32_t)(n - i), 0);
	emit_ret(e, RET_EPERM);
	emit_ret(e, SECCOMP_RET_ALLOW);
}

/* Sorts the refused numbers of one ABI; returns how many. */
static size_t refused_numbers(bool x86_64, uint32_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < surface_call_count; i++) {
		int nr = x86_64 ? surface_calls[i].nr_x86_64 : surface_calls[i].nr_i386;

		if (surface_calls[i].layer != SURFACE_SECCOMP || nr == SURFACE_NONE)
			continue;
		/* insertion sort: a hundred numbers, and no allocation after clone3 */
		size_t j = n++;

		for (; j > 0 && out[j - 1] > (uint32_t)nr; j--)
			out[j] = out[j - 1];
		out[j] = (uint32_t)nr;
	}
	return n;
}

static void emit_abi(struct emitter *e, bool x86_64)
{
	uint32_t nr[MAX_REFUSED];
	size_t n = refused_numbers(x86_64, nr), at;

	emit(e, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	if (x86_64) {
		/* x32 calls carry the x86-64 numbers with bit 30 set: no run needs the ABI */
		emit(e, BPF_JMP | BPF_JSET | BPF_K, SURFACE_X32_BIT, 0, 1);
		emit_ret(e, RET_EPERM);
	}
	/* newer than the table: refused as a kernel without it would, so libraries fall back */
	emit(e, BPF_JMP | BPF_JGT | BPF_K, SURFACE_NR_MAX, 0, 1);
	emit_ret(e, RET_ENOSYS);
	at = emit(e, BPF_JMP | BPF_JEQ | BPF_K,
		  x86_64 ? NR_PERSONALITY_X86_64 : NR_PERSONALITY_I386, 0, 0);
	emit_personality(e);
	patch_jf_here(e, at);
	emit_tree(e, nr, n);
}

int seccomp_build_filter(struct sock_filter *prog, size_t cap, size_t *len)
{
	struct emitter e = { .prog = prog, .cap = cap };
	size_t ja_x86_64, ja_i386;

	emit(&e, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	emit(&e, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 1);
	ja_x86_64 = emit(&e, BPF_JMP | BPF_JA, 0, 0, 0);
	emit(&e, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 1);
	ja_i386 = emit(&e, BPF_JMP | BPF_JA, 0, 0, 0);
	/* no other ABI can reach an x86 kernel: anything else is an attack */
	emit_ret(&e, SECCOMP_RET_KILL_PROCESS);
	if (!e.failed)
		prog[ja_x86_64].k = (uint32_t)(e.len - ja_x86_64 - 1);
	emit_abi(&e, true);
	if (!e.failed)
		prog[ja_i386].k = (uint32_t)(e.len - ja_i386 - 1);
	emit_abi(&e, false);
	if (e.failed)
		return -E2BIG;
	*len = e.len;
	return 0;
}

int seccomp_install_run_filter(void)
{
	struct sock_filter filter[SECCOMP_FILTER_MAX];
	struct sock_fprog prog = { .filter = filter };
	size_t len;
	int r;

	r = seccomp_build_filter(filter, SECCOMP_FILTER_MAX, &len);
	if (r < 0) {
		errno = -r;	/* what the child reports */
		return r;
	}
	prog.len = (unsigned short)len;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}
