/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps and helpers shared by every tether BPF program.  Each *.bpf.c includes
 * this header; the loader makes all objects share one instance of each map
 * (bpf_map__reuse_fd), so a run is described once whatever hook fires.
 */
#ifndef TETHER_COMMON_BPF_H
#define TETHER_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/abi/rules.h"
#include "bpf/abi/event.h"

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TETHER_MAX_RUNS);
	__type(key, __u64);
	__type(value, struct tether_run);
} runs SEC(".maps");

struct audit_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TETHER_AUDIT_RING_BYTES);
};

/*
 * One ring per run: a run that floods its own audit stream can fill only its
 * own ring, and each controller consumes exactly its run's records (ring
 * buffer consumption is destructive, so a shared ring cannot have one
 * consumer per run).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, TETHER_MAX_RUNS);
	__type(key, __u32);
	__array(values, struct audit_ring);
} audit_rings SEC(".maps");

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
	hdr->seq = __sync_fetch_and_add(&run->seq, 1) + 1;
}

#endif
