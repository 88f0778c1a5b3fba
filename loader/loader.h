/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader: the only code that touches skeletons.  Loads the BPF programs once
 * per node and pins their maps and links under tl_pin_dir(), so enforcement
 * outlives any one controller; every later run only opens the pinned maps.
 * A run is then nothing but map entries (tl_run_*), keyed by its cgroup id
 * and its run slot.
 *
 * Functions return 0 or a negative errno and, on failure, describe the failed
 * step in `err->msg` (object and operation).  The loader never prints; libbpf's
 * own messages go wherever the caller sent libbpf_set_print().
 */
#ifndef TETHER_LOADER_H
#define TETHER_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/rules.h"

#define TETHER_BPFFS		"/sys/fs/bpf"
#define TETHER_PIN_ROOT		TETHER_BPFFS "/tether"

/*
 * Where this build's programs and maps are pinned: TETHER_PIN_ROOT/<digest of
 * the embedded BPF object>.  A tether with different programs or map layouts
 * pins a set of its own beside the old one, which keeps confining the runs it
 * already holds; no set ever has to be replaced while runs live.
 */
const char *tl_pin_dir(void);

struct tl_error {
	char msg[512];
};

/*
 * Node-wide programs and maps: loaded and pinned by the first user.  The
 * fds are the shared maps of bpf/lib/maps.h (the loader's shared_maps
 * table names them); -1 where a node has none.
 */
struct tl_node {
	int runs_fd;
	int path_rules_fd;
	int inode_rules_fd;
	int audit_rings_fd;	/* per run slot: its audit ring (kept between runs) */
	int run_slots_fd;	/* per run slot: the cgroup id of the run that holds it */
	int ring_ids_fd;	/* per run slot: the map id of its ring in audit_rings */
	int ptys_fd;		/* the ptys runs allocated (written by BPF) */
	int abstract_fd;	/* the abstract unix socket names runs may reach */
	int net_rules_fd;	/* address rules (LPM trie) */
	int run_keys_fd;	/* keys runs allocated: address -> run cgroup id */
	int run_seq_fd;		/* per run slot: the last sequence number handed out */
	int run_exit_fd;	/* per run slot: how the run's main process ended (BPF) */
	/* run_seq mapped (TETHER_RUN_SEQ_ENTRIES counters), shared with the kernel */
	uint64_t *run_seq;
	uint32_t run_cgroup_level;
	bool loaded_now;	/* this call loaded and pinned the programs */
	/* tl_net_open_unpinned only: the skeleton and its links, freed by close */
	void *net_skel;
	void **links;
	size_t link_count;
};

/*
 * Opens the pinned programs' maps, loading, attaching and pinning the
 * programs first when they are not pinned yet.  `run_cgroup_level` is the
 * cgroup2 level of run cgroups; pinned programs built for another level are
 * an error (-ESTALE) with a message saying how to reload.  `parent_cgroup_fd`
 * is the directory (O_RDONLY) holding every run cgroup: the network programs
 * are attached there, and pinned ones attached elsewhere (the directory was
 * removed and made again) are an error.
 */
int tl_node_open(uint32_t run_cgroup_level, int parent_cgroup_fd, struct tl_node *node,
		 struct tl_error *err);
void tl_node_close(struct tl_node *node);

/*
 * Loads and attaches only the cgroup-BPF network programs, with maps of their
 * own and nothing pinned; tl_node_close detaches them.  For the host-tier
 * tests on kernels that refuse BPF-LSM: no BPF-LSM program reads the path,
 * inode, pty and abstract socket maps of a node opened this way, so it
 * confines nothing but the network.  tether run never uses it.
 */
int tl_net_open_unpinned(uint32_t run_cgroup_level, int parent_cgroup_fd, struct tl_node *node,
			 struct tl_error *err);

/*
 * Creates the shared maps (the definitions of bpf/lib/maps.h, read from the
 * embedded objects) without loading any program, nothing pinned: a node for
 * the map layer alone (tl_run_*), which the unit tests drive on kernels
 * that refuse BPF-LSM.  tl_node_close releases it.
 */
int tl_node_create_maps(struct tl_node *node, struct tl_error *err);

/*
 * Loads and attaches the programs without pinning them, then detaches and
 * unloads them: the doctor's proof that this kernel enforces with BPF-LSM.
 */
int tl_probe_lsm(struct tl_error *err);

/*
 * One path rule in kernel form.  The identity fields are the plan's
 * (runtime/plan/paths.h): the loader writes them, it never looks at the host.
 */
struct tl_path_rule {
	const char *path;	/* absolute, normalised, at most TETHER_PATH_KEY_MAX - 1 bytes */
	uint32_t access;	/* TETHER_ACCESS_* */
	bool has_inode;		/* also entered in inode_rules by (dev, ino) */
	uint32_t dev;		/* kernel encoding of st_dev (major << 20 | minor) */
	uint64_t ino;
};

/*
 * A directory above a carve-out, entered in inode_rules with
 * TETHER_ACCESS_PINNED added to `access` (see runtime/plan/paths.c).
 */
struct tl_inode_pin {
	uint32_t dev;
	uint64_t ino;
	uint32_t access;	/* without TETHER_ACCESS_PINNED */
	uint32_t rule_id;
};

/* What tl_run_remove needs to delete one rule's entries. */
struct tl_run_rule {
	char *path;
	bool has_inode;		/* also entered in inode_rules */
	uint32_t dev;		/* kernel encoding of st_dev */
	uint64_t ino;
};

/* One address rule in kernel form: a block and everything it allows. */
struct tl_net_entry {
	uint8_t addr[16];	/* IPv4-mapped for IPv4; bits below prefixlen zero */
	uint8_t prefixlen;	/* 0..128 */
	struct tether_net_rule rule;
};

/* A run's network settings (all zero: every destination refused, no proxy). */
struct tl_run_net {
	const struct tl_net_entry *entries;
	size_t count;
	uint64_t egress_max;	/* 0: no cap */
	uint16_t dns_port4, dns_port6;	/* the run's DNS proxy; 0: none */
};

/*
 * Everything tl_run_install writes for one run, in kernel form: the plan
 * runtime/plan/ makes from the compiled policy and this host.  The loader
 * writes it as it is; it never looks at the host.
 */
struct tl_run_plan {
	uint32_t mode;			/* enum tether_run_mode */
	uint32_t run_flags;		/* enum tether_run_flags */
	const struct tl_path_rule *rules;	/* in policy order: a rule's index is its id */
	size_t rule_count;
	const struct tl_inode_pin *pins;	/* directories above carve-outs */
	size_t pin_count;
	char *const *abstract_sockets;	/* abstract unix socket names the run may reach */
	size_t abstract_count;
	struct tl_run_net net;
	uint32_t layer_dev;		/* tether_run.layer_dev: fresh_overlay's file system; 0 */
};

/* A run's map entries.  Filled by tl_run_install, removed by tl_run_remove. */
/* An inode rule pinning a directory above a carve-out, for removal. */
struct tl_run_pin {
	uint32_t dev;
	uint64_t ino;
};

struct tl_run {
	uint64_t cgroup_id;
	uint32_t run_slot;
	int ring_fd;		/* this run's audit ring buffer */
	size_t rule_count;	/* rules written, for removal */
	struct tl_run_rule *rules;
	size_t pin_count;	/* pinned directories written, for removal */
	struct tl_run_pin *pins;
	/*
	 * The address entries written (the plan's and DNS admissions'), for
	 * removal: deleting them by key costs the run its own entries, where a
	 * walk of net_rules would cost every live run's.
	 */
	size_t net_key_count, net_key_cap;
	struct tether_net_key *net_keys;
	bool active;		/* runs[cgroup_id] written */
	bool slot_clean;	/* every entry of the slot is gone: tl_run_release may free it */
};

/*
 * Claims a run slot, creates the run's audit ring, resets the slot's
 * sequence counter and its main process's exit entry, writes the plan's
 * path rules, inode rules and pins, the abstract unix socket names the run
 * may reach and its address rules, and finally the runs[cgroup_id] entry
 * that turns enforcement on.  On failure everything written so far is
 * removed again.
 */
int tl_run_install(struct tl_node *node, uint64_t cgroup_id, const struct tl_run_plan *plan,
		   struct tl_run *run, struct tl_error *err);

/* Writes (adds or replaces) one address entry of a live run: DNS admissions. */
/*
 * Enters (dev, ino) as the inode identity of installed path rule `index`,
 * with `access`, replacing the identity it was installed with: for objects
 * that appeared after tl_run_install at the rule's path, the run's private
 * tmpfs roots, mounted in its own namespace.  Removed with the run's other
 * entries.
 */
int tl_run_inode_rule_add(struct tl_node *node, struct tl_run *run, size_t index, uint32_t dev,
			  uint64_t ino, uint32_t access, struct tl_error *err);
/*
 * Enters (dev, ino) as one more inode identity of installed path rule
 * `index`, keeping the one it has: objects that rule covers by a second
 * name (a fresh_overlay's upper layer and work directory).  Removed with
 * the run's other entries.
 */
int tl_run_inode_identity_add(struct tl_node *node, struct tl_run *run, size_t index,
			      uint32_t dev, uint64_t ino, uint32_t access, struct tl_error *err);
int tl_run_net_write(struct tl_node *node, struct tl_run *run,
		     const struct tl_net_entry *entry, struct tl_error *err);



/* The run's kernel-side counters. */
struct tl_run_counters {
	uint64_t seq;		/* last audit sequence number handed out */
	uint64_t audit_lost;	/* records that found the ring full */
	uint64_t audit_refused;	/* actions a fail_closed run was refused for it */
	uint64_t egress_bytes;	/* bytes of the run's packets cgroup_skb/egress saw */
	bool egress_exhausted;	/* network_egress.max_bytes was reached */
	uint32_t ingress_dropped;	/* packets from peers no rule lists, dropped */
};
int tl_run_counters(struct tl_node *node, const struct tl_run *run, struct tl_run_counters *c);

/*
 * Takes the run's next sequence number for a record the controller writes
 * (run, DNS): from the counter the kernel's records draw on, atomically
 * with them, so the run has one sequence.  Valid while the run is installed
 * (-ENOENT otherwise).
 */
int tl_run_seq_next(struct tl_node *node, const struct tl_run *run, uint64_t *seq);

/*
 * The run's main process: the thread group whose end the kernel records in
 * run_exit[run slot] (bpf/abi/rules.h, struct tether_run_exit), so that a
 * controller that is not its parent (a restarted node agent) still learns
 * its wait status.  Writes tgid and resets the rest (not exited).  Call it
 * once the command is spawned and before it may run (while the child waits
 * for the launch's go signal): an exit before the write is not recorded.
 * `tgid` is the number in the initial pid namespace, as clone3 returns it
 * to a controller there; 0 records nothing.  -ENOENT unless the run is
 * installed.
 */
int tl_run_set_main(struct tl_node *node, const struct tl_run *run, uint32_t tgid,
		    struct tl_error *err);

/*
 * Reads run_exit[run_slot]: `out->exited` is 1 once the main process's
 * whole thread group has exited, with `status` (as waitpid reports it) and
 * `exit_ns` (CLOCK_BOOTTIME); otherwise exited, status and exit_ns are 0
 * and `tgid` says which process is awaited (0: none was set).  By slot,
 * not struct tl_run: a controller re-adopting a run has only the maps
 * (the slot is in the runs entry).  -EINVAL for a slot out of range.
 */
int tl_run_main_exit(struct tl_node *node, uint32_t run_slot, struct tether_run_exit *out);

/* The cgroup id of a cgroup2 directory: its file handle (as systemd reads it). */
int tl_cgroup_id(int dir_fd, uint64_t *id);

/*
 * Removes every map entry of the run (runs entry first, so no new decision
 * uses the run, then rules, then the exit entry, zeroed).  Keeps going
 * after an error and returns the first one.  The run keeps its slot, and
 * with it its ring, until tl_run_release: the controller still reads the
 * ring to its end, and the slot's next run would start by emptying it.
 */
int tl_run_remove(struct tl_node *node, struct tl_run *run, struct tl_error *err);
/*
 * Frees the run's slot (and its ring, for the slot's next run) once
 * tl_run_remove removed every entry of it; a slot whose entries did not
 * all go stays claimed.  Call it after the ring's last read.
 */
int tl_run_release(struct tl_node *node, struct tl_run *run, struct tl_error *err);
void tl_run_free(struct tl_run *run);

/*
 * Removes every map entry of the run registered for `cgroup_id` by a
 * controller that died: its runs entry, every path and inode rule of its
 * slot, its exit entry (zeroed), and, with `release`, the slot itself.
 * An adopter that still reads the slot's ring passes false, then releases
 * the slot with tl_run_release after the last read (after setting
 * slot_clean).  -ENOENT when no run has that cgroup id.
 */
int tl_run_reclaim(struct tl_node *node, uint64_t cgroup_id, bool release,
		   struct tl_error *err);

/*
 * The run registered for `cgroup_id`, taken over from a controller that
 * stopped: its slot and a descriptor of its ring.  No rules are listed in
 * *run (remove it with tl_run_reclaim).  -ENOENT when no run has that id.
 */
int tl_run_adopt(struct tl_node *node, uint64_t cgroup_id, struct tl_run *run,
		 struct tl_error *err);

/* The cgroup ids of every run registered in the runs map (malloc'd array). */
int tl_runs_list(struct tl_node *node, uint64_t **ids, size_t *count);

/* Fills the LPM key for rule `path` of `run_slot` (exposed for tests). */
struct tether_path_key;
int tl_path_key(uint32_t run_slot, const char *path, struct tether_path_key *key);

#endif
