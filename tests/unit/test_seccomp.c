// SPDX-License-Identifier: GPL-2.0
/*
 * The run's seccomp filter (runtime/seccomp.c) and the table it is built
 * from (runtime/kernel_surface.h): the generated program, run by a small
 * classic-BPF interpreter for every number on both ABIs; the same program
 * installed in a child on this host's kernel; the table against the kernel
 * headers' numbers; and docs/kernel-surface.md against the table.
 * Runs from the repository root.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/seccomp.h"

#define DOC_PATH "docs/kernel-surface.md"
#define RET_EPERM (SECCOMP_RET_ERRNO | EPERM)
#define RET_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)
#define NR_PERSONALITY_X86_64 135
#define NR_PERSONALITY_I386 136

static struct sock_filter prog[SECCOMP_FILTER_MAX];
static size_t prog_len;

static void build(void)
{
	cr_assert_eq(seccomp_build_filter(prog, SECCOMP_FILTER_MAX, &prog_len), 0);
}

/*
 * Runs the filter on `data` the way the kernel does, for the instructions
 * the generator emits; any other instruction, or a jump out of the program,
 * fails the test.  Returns the action.
 */
static uint32_t run(const struct seccomp_data *data)
{
	uint32_t acc = 0;
	size_t pc = 0;

	for (size_t steps = 0; steps <= prog_len; steps++) {
		const struct sock_filter *in;

		cr_assert_lt(pc, prog_len, "jumped to %zu, past the end (%zu)", pc, prog_len);
		in = &prog[pc];
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			cr_assert_leq(in->k + 4, sizeof(*data), "load at %u", in->k);
			cr_assert_eq(in->k % 4, 0);
			memcpy(&acc, (const char *)data + in->k, 4);
			pc++;
			break;
		case BPF_JMP | BPF_JA:
			pc += 1 + in->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += 1 + (acc == in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += 1 + (acc >= in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += 1 + (acc > in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += 1 + ((acc & in->k) ? in->jt : in->jf);
			break;
		case BPF_RET | BPF_K:
			return in->k;
		default:
			cr_assert_fail("instruction %zu: unexpected code %#x", pc, in->code);
		}
	}
	cr_assert_fail("no return after %zu steps: a loop", prog_len);
	return 0;
}

static uint32_t decide(uint32_t arch, uint32_t nr, uint64_t arg0)
{
	struct seccomp_data data = { .nr = (int)nr, .arch = arch };

	data.args[0] = arg0;
	return run(&data);
}

static bool refused_in_table(bool x86_64, uint32_t nr)
{
	for (size_t i = 0; i < surface_call_count; i++) {
		int n = x86_64 ? surface_calls[i].nr_x86_64 : surface_calls[i].nr_i386;

		if (n != SURFACE_NONE && (uint32_t)n == nr)
			return surface_calls[i].layer == SURFACE_SECCOMP;
	}
	return false;
}

Test(seccomp, builds_within_the_kernels_limits)
{
	struct sock_filter small[16];
	size_t len = 0;

	build();
	cr_assert_gt(prog_len, 10);
	cr_assert_leq(prog_len, BPF_MAXINSNS);
	cr_assert_eq(prog[prog_len - 1].code, BPF_RET | BPF_K, "the last instruction returns");
	/* every jump lands inside the program */
	for (size_t i = 0; i < prog_len; i++) {
		if (BPF_CLASS(prog[i].code) != BPF_JMP)
			continue;
		if (BPF_OP(prog[i].code) == BPF_JA) {
			cr_assert_lt(i + 1 + prog[i].k, prog_len);
			continue;
		}
		cr_assert_lt(i + 1 + prog[i].jt, prog_len, "insn %zu jt", i);
		cr_assert_lt(i + 1 + prog[i].jf, prog_len, "insn %zu jf", i);
	}
	cr_assert_eq(seccomp_build_filter(small, 16, &len), -E2BIG);
	cr_assert_eq(len, 0, "no length on failure");
}

/* Every number of both ABIs, with an argument personality() may not have. */
Test(seccomp, every_number_is_decided_as_the_table_says)
{
	size_t refused[2] = { 0, 0 };

	build();
	for (int abi = 0; abi < 2; abi++) {
		bool x86_64 = abi == 0;
		uint32_t arch = x86_64 ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_I386;
		uint32_t pers = x86_64 ? NR_PERSONALITY_X86_64 : NR_PERSONALITY_I386;

		for (uint32_t nr = 0; nr <= SURFACE_NR_MAX + 64; nr++) {
			uint32_t got = decide(arch, nr, 0x0040000 /* ADDR_NO_RANDOMIZE */), want;

			if (nr > SURFACE_NR_MAX)
				want = RET_ENOSYS;
			else if (nr == pers || refused_in_table(x86_64, nr))
				want = RET_EPERM;
			else
				want = SECCOMP_RET_ALLOW;
			cr_assert_eq(got, want, "%s %u: %#x, want %#x", x86_64 ? "x86-64" : "i386",
				     nr, got, want);
			refused[abi] += got == RET_EPERM;
		}
	}
	/* the table's SURFACE_SECCOMP rows, and personality, on each ABI */
	for (size_t i = 0; i < surface_call_count; i++)
		if (surface_calls[i].layer == SURFACE_SECCOMP) {
			refused[0] -= surface_calls[i].nr_x86_64 != SURFACE_NONE;
			refused[1] -= surface_calls[i].nr_i386 != SURFACE_NONE;
		}
	cr_assert_eq(refused[0], 1);
	cr_assert_eq(refused[1], 1);
}

Test(seccomp, refuses_x32_and_kills_other_abis)
{
	static const uint32_t others[] = { AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, 0, 0xffffffff,
					   AUDIT_ARCH_X86_64 & ~__AUDIT_ARCH_LE };

	build();
	for (uint32_t nr = 0; nr < 600; nr++) {
		cr_assert_eq(decide(AUDIT_ARCH_X86_64, nr | SURFACE_X32_BIT, 0), RET_EPERM,
			     "x32 %u", nr);
		/* bit 30 is the ABI, whatever else is set */
		cr_assert_eq(decide(AUDIT_ARCH_X86_64, nr | 0xc0000000u, 0), RET_EPERM);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		for (uint32_t nr = 0; nr < 500; nr += 7)
			cr_assert_eq(decide(others[i], nr, 0), SECCOMP_RET_KILL_PROCESS,
				     "arch %#x", others[i]);
	/* i386 has no x32: a large number is only newer than the table */
	cr_assert_eq(decide(AUDIT_ARCH_I386, 39 | SURFACE_X32_BIT, 0), RET_ENOSYS);
}

Test(seccomp, personality_is_decided_by_its_low_word)
{
#define VALUE(v) (uint32_t)(v),
	static const uint32_t allowed[] = { SURFACE_PERSONALITY_ALLOWED(VALUE) };
#undef VALUE
	static const uint32_t refused[] = { 0x0040000, 0x0400000, 0x0100000, 0x0040008, 0x0200000,
					    0x8000000, 0x0000001, 0xfffffffe };

	build();
	for (int abi = 0; abi < 2; abi++) {
		uint32_t arch = abi ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
		uint32_t nr = abi ? NR_PERSONALITY_I386 : NR_PERSONALITY_X86_64;

		for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
			cr_assert_eq(decide(arch, nr, allowed[i]), SECCOMP_RET_ALLOW, "%#x",
				     allowed[i]);
			/* the kernel takes an unsigned int: the high word is no flag */
			cr_assert_eq(decide(arch, nr, 0xdead000000000000ull | allowed[i]),
				     SECCOMP_RET_ALLOW);
		}
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			cr_assert_eq(decide(arch, nr, refused[i]), RET_EPERM, "%#x", refused[i]);
	}
	cr_assert_eq(PER_LINUX32, 0x0008);
	cr_assert_eq(UNAME26, 0x20000);
	cr_assert_eq(ADDR_NO_RANDOMIZE, 0x0040000);
}

/* The table itself: unique names and numbers, within the reviewed range. */
Test(seccomp, the_table_is_consistent)
{
	for (size_t i = 0; i < surface_call_count; i++) {
		const struct surface_call *c = &surface_calls[i];

		cr_assert(c->nr_x86_64 != SURFACE_NONE || c->nr_i386 != SURFACE_NONE, "%s", c->name);
		cr_assert_leq(c->nr_x86_64, SURFACE_NR_MAX, "%s", c->name);
		cr_assert_leq(c->nr_i386, SURFACE_NR_MAX, "%s", c->name);
		cr_assert_str_neq(surface_layer_name(c->layer), "?", "%s", c->name);
		for (size_t j = i + 1; j < surface_call_count; j++) {
			const struct surface_call *d = &surface_calls[j];

			cr_assert_str_neq(c->name, d->name);
			cr_assert(c->nr_x86_64 == SURFACE_NONE || c->nr_x86_64 != d->nr_x86_64,
				  "%s and %s", c->name, d->name);
			cr_assert(c->nr_i386 == SURFACE_NONE || c->nr_i386 != d->nr_i386, "%s and %s",
				  c->name, d->name);
		}
		if (i > 0) {
			const char *a = surface_calls[i - 1].name, *b = c->name;

			while (*a == '_')
				a++;
			while (*b == '_')
				b++;
			cr_assert_lt(strcmp(a, b), 0, "sorted: %s before %s", a, b);
		}
	}
}

/* The number of __NR_NAME in HEADER, or SURFACE_NONE. */
static int header_number(const char *header, const char *name)
{
	char line[256], want[96];
	FILE *f = fopen(header, "re");
	int nr = SURFACE_NONE;

	cr_assert_not_null(f, "%s: %s", header, strerror(errno));
	snprintf(want, sizeof(want), "#define __NR_%s ", name);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want))) {
			nr = atoi(line + strlen(want));
			break;
		}
	fclose(f);
	return nr;
}

/* Where this host's headers know a call, the table has its number (and its absence). */
Test(seccomp, the_numbers_are_the_kernels)
{
	static const char *const h64 = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h";
	static const char *const h32 = "/usr/include/x86_64-linux-gnu/asm/unistd_32.h";
	size_t checked = 0;

	for (size_t i = 0; i < surface_call_count; i++) {
		const struct surface_call *c = &surface_calls[i];
		int n64 = header_number(h64, c->name), n32 = header_number(h32, c->name);

		if (n64 != SURFACE_NONE || c->nr_x86_64 <= 450) {
			cr_assert_eq(c->nr_x86_64, n64, "%s on x86-64: table %d, header %d", c->name,
				     c->nr_x86_64, n64);
			checked++;
		}
		if (n32 != SURFACE_NONE || c->nr_i386 <= 450) {
			cr_assert_eq(c->nr_i386, n32, "%s on i386: table %d, header %d", c->name,
				     c->nr_i386, n32);
			checked++;
		}
	}
	cr_assert_gt(checked, 2 * surface_call_count - 40);
}

static bool io_uring_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "re");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 2;
}

/* The filter on this host's kernel, in a child: a few calls of each kind. */
Test(seccomp, the_kernel_applies_it)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int bad = 0;
		unsigned long persona;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_install_run_filter() < 0)
			_exit(100);
		errno = 0;
		if (syscall(SYS_ustat, 0, NULL) >= 0 || errno != EPERM)
			bad |= 1;
		if (syscall(SYS_open_by_handle_at, -1, NULL, 0) >= 0 || errno != EPERM)
			bad |= 2;
		if (syscall(SYS_getpid) != getpid())
			bad |= 4;
		persona = (unsigned long)personality(0xffffffff);
		if (personality(ADDR_NO_RANDOMIZE) != -1 || errno != EPERM)
			bad |= 8;
		if (personality(persona) < 0)
			bad |= 16;
		if (syscall(SURFACE_NR_MAX + 1) >= 0 || errno != ENOSYS)
			bad |= 32;
		if (syscall(39 | SURFACE_X32_BIT) >= 0 || errno != EPERM)
			bad |= 64;
		/* refused by BPF-LSM inside a run, never by the filter (unless this host
		 * turned io_uring off: kernel.io_uring_disabled 2 says EPERM too) */
		if (!io_uring_disabled() &&
		    (syscall(SYS_io_uring_setup, 0, NULL) >= 0 || errno == EPERM))
			bad |= 128;
		_exit(bad);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	cr_assert_eq(WEXITSTATUS(status), 0, "failed checks: %#x", WEXITSTATUS(status));
}

/*
 * docs/kernel-surface.md has the table between its markers, a row per call:
 * | `name` | x86-64 | i386 | layer | ... with "-" for no number.  The same
 * rows as the C table, with the same numbers and layers.
 */
static int doc_number(const char *cell)
{
	while (*cell == ' ')
		cell++;
	return !strncmp(cell, "-", 1) ? SURFACE_NONE : atoi(cell);
}

Test(seccomp, the_documentation_lists_the_table)
{
	FILE *f = fopen(DOC_PATH, "re");
	char line[2048];
	bool in = false, seen_end = false;
	size_t rows = 0;
	bool *found = calloc(surface_call_count, sizeof(bool));

	cr_assert_not_null(f, "%s: %s", DOC_PATH, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char name[64], layer[32];
		char *cells[5], *p = line;
		size_t i;

		if (strstr(line, "<!-- kernel-surface-table begin -->")) {
			in = true;
			continue;
		}
		if (strstr(line, "<!-- kernel-surface-table end -->")) {
			seen_end = true;
			break;
		}
		if (!in || strncmp(line, "| `", 3))
			continue;
		/* the first five cells: "", name, x86-64, i386, layer */
		for (i = 0; i < 5 && p; i++) {
			cells[i] = p;
			p = strchr(p, '|');
			if (p)
				*p++ = 0;
		}
		cr_assert(p, "a short row: %s", line);
		cr_assert_eq(sscanf(cells[1], " `%63[^`]`", name), 1, "%s", cells[1]);
		cr_assert_eq(sscanf(cells[4], " %31s", layer), 1);
		for (i = 0; i < surface_call_count; i++)
			if (!strcmp(surface_calls[i].name, name))
				break;
		cr_assert_lt(i, surface_call_count, "%s: %s is not in the table", DOC_PATH, name);
		cr_assert_not(found[i], "%s is listed twice", name);
		found[i] = true;
		cr_assert_eq(doc_number(cells[2]), surface_calls[i].nr_x86_64, "%s x86-64", name);
		cr_assert_eq(doc_number(cells[3]), surface_calls[i].nr_i386, "%s i386", name);
		cr_assert_str_eq(layer, surface_layer_name(surface_calls[i].layer), "%s", name);
		rows++;
	}
	fclose(f);
	cr_assert(seen_end, "%s: no table markers", DOC_PATH);
	for (size_t i = 0; i < surface_call_count; i++)
		cr_assert(found[i], "%s does not list %s", DOC_PATH, surface_calls[i].name);
	cr_assert_eq(rows, surface_call_count);
	free(found);
}
