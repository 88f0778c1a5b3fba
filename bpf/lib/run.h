/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every tether BPF program starts from: the run the current task
 * belongs to, and the header of its records.  Each *.bpf.c includes this
 * header (and through it bpf/lib/maps.h, the shared maps).
 */
#ifndef TETHER_LIB_RUN_H
#define TETHER_LIB_RUN_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/abi/rules.h"
#include "bpf/abi/event.h"
#include "bpf/lib/maps.h"

#define EPERM	1
#define ENOENT	2
#define EACCES	13
#define ENAMETOOLONG 36

char LICENSE[] SEC("license") = "GPL";

/*
 * x & mask, computed in a register the compiler cannot reason about: clang
 * otherwise drops masks it can prove redundant from an earlier branch, and the
 * verifier, which tracks another register, then sees an unbounded index.
 */
#define BOUNDED(x, mask) ({			\
	__u32 __v = (x);			\
	asm volatile("" : "+r"(__v));		\
	__v & (mask);				\
})

/* Level of the run cgroups in the cgroup2 hierarchy, set by the loader. */
const volatile __u32 run_cgroup_level = 0;

/*
 * The run the current task belongs to, or NULL.  One hash lookup for tasks
 * outside every run; tasks in a cgroup nested below their run cgroup still
 * resolve to the run because we look up the ancestor at the run level.
 */
static __always_inline struct tether_run *current_run(__u64 *run_cgroup_id)
{
	__u64 id = bpf_get_current_ancestor_cgroup_id(run_cgroup_level);

	if (!id)
		return NULL;
	*run_cgroup_id = id;
	return bpf_map_lookup_elem(&runs, &id);
}

static __always_inline void *audit_reserve(struct tether_run *run, __u32 size_const)
{
	__u32 slot = run->run_slot;
	void *ring = bpf_map_lookup_elem(&audit_rings, &slot);
	void *rec;

	if (!ring) {
		__sync_fetch_and_add(&run->audit_lost, 1);
		return NULL;
	}
	rec = bpf_ringbuf_reserve(ring, size_const, 0);
	if (!rec)
		__sync_fetch_and_add(&run->audit_lost, 1);
	return rec;
}

/*
 * An action that would be allowed with a record that found the ring full
 * (audit_reserve counted the loss): whether it is refused instead, as it is
 * in a fail_closed run, which counts it.  Every hook that records what it
 * allows asks this before allowing.
 */
static __always_inline bool fail_closed_refuses(struct tether_run *run)
{
	if (!(run->flags & TETHER_RUN_FAIL_CLOSED))
		return false;
	__sync_fetch_and_add(&run->audit_refused, 1);
	return true;
}

/*
 * The run's next sequence number: taken when a record is made, never on the
 * way to a decision.  The slot is always in the array (1..TETHER_MAX_RUNS);
 * 0 would say "no number" if it were not.
 */
static __always_inline __u64 next_seq(struct tether_run *run)
{
	__u32 slot = run->run_slot;
	__u64 *counter = bpf_map_lookup_elem(&run_seq, &slot);

	return counter ? __sync_fetch_and_add(counter, 1) + 1 : 0;
}

static __always_inline void fill_hdr(struct tether_event_hdr *hdr, struct tether_run *run,
				     __u64 run_cgroup_id, __u16 kind, __u16 size)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	hdr->kind = kind;
	hdr->size = size;
	hdr->run_slot = run->run_slot;
	hdr->cgroup_id = run_cgroup_id;
	hdr->pid = (__u32)pid_tgid;
	hdr->tgid = pid_tgid >> 32;
	hdr->ts_ns = bpf_ktime_get_ns();
	hdr->seq = next_seq(run);
}

#endif
