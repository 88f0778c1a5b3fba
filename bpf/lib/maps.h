/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every map more than one BPF object uses, declared once.  Each object that
 * includes this header gets a definition of each map; the loader creates
 * them with the first object it loads and hands the same fds to every other
 * (bpf_map__reuse_fd before load), then pins them, so a run is described
 * once whichever object's hook fires.  Layouts: bpf/abi/rules.h.  Maps only
 * one object uses (net.bpf.c's socket storage) stay in that object.
 */
#ifndef TETHER_LIB_MAPS_H
#define TETHER_LIB_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bpf/abi/rules.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TETHER_MAX_RUNS);
	__type(key, __u64);
	__type(value, struct tether_run);
} runs SEC(".maps");

/*
 * The sequence numbers of each run's records, by run slot.  Mmapable, so
 * that the controller takes the numbers of its own records (run, DNS) from
 * the same counter with an atomic add: one sequence per run, whoever writes
 * the record.  The loader resets a slot's counter before the run's entry in
 * `runs` turns enforcement on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TETHER_RUN_SEQ_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} run_seq SEC(".maps");

/*
 * How each run's main process ended, by run slot (bpf/abi/rules.h says
 * who writes which field when).  Only exit.bpf.c writes it; every object
 * declares it so that the loader's table of shared maps stays one list.
 * The loader zeroes a slot's entry when a run claims it and when the run
 * is removed, so no run sees another's exit.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TETHER_RUN_EXIT_ENTRIES);
	__type(key, __u32);
	__type(value, struct tether_run_exit);
} run_exit SEC(".maps");

struct audit_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TETHER_AUDIT_RING_BYTES);
};

/*
 * One ring per run slot: a run that floods its own audit stream can fill
 * only its own ring, and each controller consumes exactly its run's records
 * (ring buffer consumption is destructive, so a shared ring cannot have one
 * consumer per run).  A slot's ring is created by the first run that claims
 * the slot and stays for the runs after it: updating a map of maps waits for
 * an RCU grace period (about 10 ms under TCG), which a run would otherwise
 * pay once at setup and once at teardown.  Who holds a slot is run_slots'.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, TETHER_MAX_RUNS);
	__type(key, __u32);
	__array(values, struct audit_ring);
} audit_rings SEC(".maps");

/*
 * Which run holds each slot (slot -> run cgroup id), written by userspace
 * only: a claim is an insert with BPF_NOEXIST, atomic between controllers,
 * and a plain hash map's update does not wait for readers.  No program reads
 * it; it is here so that every object's pinned set has it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TETHER_MAX_RUNS);
	__type(key, __u32);
	__type(value, __u64);
} run_slots SEC(".maps");

/*
 * The map id of each slot's ring in audit_rings (0: none yet), written by
 * userspace only, next to the ring's registration.  A lookup in a map of
 * maps from userspace waits for an RCU grace period on kernels before 6.8
 * (about 10 ms under TCG; bpf_map_copy_value calls maybe_wait_bpf_programs),
 * a lookup here does not.  No program reads it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TETHER_RUN_SEQ_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
} ring_ids SEC(".maps");

/*
 * The walk writes the path backwards into the first half of a 2 * PATH_MAX
 * buffer; masking every offset with WALK_MASK keeps each access provably
 * inside the buffer for the verifier, whatever the component lengths.
 */
#define WALK_HALF		4096
#define WALK_MASK		(WALK_HALF - 1)
#define WALK_MAX_STEPS		(WALK_HALF / 2)
#define NAME_UNSET		0xffffffffu

/*
 * Scratch space is per CPU, but BPF-LSM programs run with migration disabled,
 * not preemption (Debian's kernels are PREEMPT_DYNAMIC and may run with
 * preempt=full), so two tasks can interleave on one CPU.  Each user claims a
 * slot with a compare-and-swap; running out of slots denies (fail closed).
 */
#define SCRATCH_SLOTS		8

struct walk_scratch {
	__u32 busy;
	__u32 index;		/* this slot's key in walk_scratch */
	char buf[2 * WALK_HALF];
	struct tether_path_key key;
	char key_slack[4];	/* lets key.path[i & 0xff] pass the verifier */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct walk_scratch);
} walk_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct tether_path_key);
	__type(value, struct tether_path_rule);
} path_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct tether_inode_key);
	__type(value, struct tether_path_rule);
} inode_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct tether_pty_key);
	__type(value, __u64);
} ptys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct tether_abstract_key);
	__type(value, __u8);
} abstract_sockets SEC(".maps");

/* Keys the run's own processes allocated: key address -> run cgroup id (proc.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} run_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct tether_net_key);
	__type(value, struct tether_net_rule);
} net_rules SEC(".maps");

#endif
