/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TETHER_RUNTIME_SECCOMP_H
#define TETHER_RUNTIME_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>

#include "runtime/kernel_surface.h"

/* The rows of runtime/kernel_surface.h, in its order. */
extern const struct surface_call surface_calls[];
extern const size_t surface_call_count;

/* More than the filter needs: about 4 instructions a refused call and ABI. */
#define SECCOMP_FILTER_MAX	1024

/*
 * Builds the run's seccomp filter into prog[0..cap): EPERM for every
 * SURFACE_SECCOMP call of runtime/kernel_surface.h on its ABIs (x86-64 and
 * i386), for personality() with a value SURFACE_PERSONALITY_ALLOWED does not
 * list, and for every x32 call; ENOSYS for numbers above SURFACE_NR_MAX;
 * SECCOMP_RET_KILL_PROCESS for any other ABI; everything else is allowed.
 * The refused numbers are searched as a balanced tree of comparisons.
 * Pure computation, async-signal-safe.  Returns 0 and sets *len, or
 * -E2BIG when cap is too small or a jump would not fit its 8-bit offset.
 */
int seccomp_build_filter(struct sock_filter *prog, size_t cap, size_t *len);

/*
 * Installs that filter in the calling process (which must have
 * no_new_privs or CAP_SYS_ADMIN).  Calls BPF-LSM decides with a record
 * (userfaultfd, io_uring_setup, mount, bpf, ...) and calls the dropped
 * capabilities refuse (recorded as capability records) are left out of it
 * on purpose: seccomp runs before any LSM, and would refuse them without a
 * record.  docs/kernel-surface.md lists every call and its layer.
 * Async-signal-safe: called in the child between clone3 and exec.
 * Returns 0 or a negative errno (also left in errno, which the child reports).
 */
int seccomp_install_run_filter(void);

#endif
