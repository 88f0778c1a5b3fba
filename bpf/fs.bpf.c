// SPDX-License-Identifier: GPL-2.0
/*
 * Filesystem confinement (BPF-LSM): what a run may read, write, execute and
 * connect to, and the hooks that keep it from borrowing access it was not
 * given.
 *
 * Every right comes from a path rule (bpf/abi/rules.h gives the matching
 * semantics):
 *   READ     read-only opens, directories included (file_open);
 *   WRITE    other opens, O_TRUNC, creation of any kind, unlink, rmdir,
 *            rename, link, symlink, truncate, chmod, chown, modifying
 *            ioctls; xattrs, ACLs and timestamps by inode identity;
 *   EXEC     every file the kernel executes (file_open of open_exec()) and
 *            every PROT_EXEC file mapping (mmap_file, file_mprotect);
 *   CONNECT  unix sockets of processes outside the run, by path; abstract
 *            names by list.
 * Devices are opened by number (null, zero, tty, the run's own ptys, ...),
 * never by path, and no device node can be created.  Built-in protected
 * paths and /proc of other processes are refused as "protected".  Everything
 * else is denied with EACCES (EPERM for what no rule can grant: mounts, device
 * nodes, TIOCSTI, clone into another cgroup, ptrace of outside processes)
 * and recorded.  In mode: audit, what a rule decided is recorded and let
 * through, except what protects the node (relaxed()).
 *
 * The same boundary needs: no ptrace-class access to processes outside the
 * run (their descriptors carry their access), no clone3 into another
 * cgroup, no bpf() or module loads.  Those hooks live here until the process
 * program they belong to exists.
 *
 * Paths are computed here from the kernel's own objects (the struct mount and
 * dentry chain), never from the name the caller passed, so symlinks, "..",
 * /proc/self/fd/N and /proc/self/root re-opens, chroot and io_uring all reach
 * the same decision as a plain syscall on the resolved object.  A path that
 * cannot be resolved to a name in the caller's mount namespace (a detached
 * mount, another namespace's tree, a disconnected dentry from
 * open_by_handle_at, a path longer than PATH_MAX) is denied.
 */
#include "bpf/common.bpf.h"

#define O_TRUNC			00001000
#define PIPEFS_MAGIC		0x50495045
#define SOCKFS_MAGIC		0x534F434B
#define ANON_INODE_FS_MAGIC	0x09041934
#define PIDFS_MAGIC		0x50494446	/* 6.9+: pidfds are files of their own fs */
#define NSFS_MAGIC		0x6e736673

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

struct walk_ctx {
	struct dentry *dentry;
	struct mount *mnt;
	struct dentry *mnt_root;
	char *buf;		/* the claimed scratch slot's buf: looked up once per walk */
	__u32 slot;
	__u32 pos;		/* the path is buf[pos, WALK_HALF) */
	__u32 leaf_len;		/* length of the first component written */
	__s32 err;
	__u32 done;
	/* inode walks only */
	__u32 run_slot;
	__u32 access;
	__u32 matched;
	__u32 ruled;		/* stopped at a rule that does not grant the access */
	__u32 rule_id;
};

static __always_inline struct mount *real_mount(struct vfsmount *vfsmnt)
{
	return (struct mount *)((void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
}

/* A dentry's parent and name, as one walk step needs them. */
struct dentry_link {
	struct dentry *parent;
	__u32 hash;		/* struct qstr: hash, then len (little endian) */
	__u32 len;
	const unsigned char *name;
};

/*
 * d_parent and d_name are adjacent in struct dentry on every supported
 * kernel: one read instead of three is most of a walk step's cost.  The
 * offsets are CO-RE constants, so the verifier sees only one branch.
 */
static __always_inline int read_link(struct dentry *d, struct dentry_link *l)
{
	__u32 parent_off = bpf_core_field_offset(struct dentry, d_parent);
	__u32 name_off = bpf_core_field_offset(struct dentry, d_name);

	if (name_off == parent_off + 8)
		return bpf_probe_read_kernel(l, sizeof(*l), (void *)d + parent_off);
	l->parent = BPF_CORE_READ(d, d_parent);
	l->len = BPF_CORE_READ(d, d_name.len);
	l->name = BPF_CORE_READ(d, d_name.name);
	return 0;
}

/* Writes "/" and the name in `l` in front of the path built so far. */
static __always_inline int prepend_name(struct walk_ctx *c, const struct dentry_link *l)
{
	const unsigned char *name = l->name;
	__u32 len = l->len, pos;
	char *buf = c->buf;

	if (len > 255 || c->pos < len + 1)
		return -ENAMETOOLONG;
	if (!buf)
		return -ENOENT;
	pos = c->pos - len;
	/* a failed read would leave an earlier walk's bytes in the key: deny instead */
	if (bpf_probe_read_kernel(&buf[BOUNDED(pos, WALK_MASK)], BOUNDED(len, 0xff), name))
		return -ENOENT;
	pos -= 1;
	buf[BOUNDED(pos, WALK_MASK)] = '/';
	c->pos = pos;
	if (c->leaf_len == NAME_UNSET)
		c->leaf_len = len;
	return 0;
}

/* One step of the walk towards the namespace root (the kernel's prepend_path). */
static long walk_step(__u32 index, void *data)
{
	struct walk_ctx *c = data;
	struct dentry *d = c->dentry;
	struct dentry_link link;

	/* Locals, not c->...: CO-RE relocations must see kernel types only. */
	if (d == c->mnt_root) {
		struct mount *mnt = c->mnt;
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (up == mnt) {
			c->done = 1;
			return 1;
		}
		c->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
		c->mnt = up;
		c->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	if (read_link(d, &link) || link.parent == d) {
		/* unreadable, or a root that is not its mount's root: disconnected */
		c->err = -ENOENT;
		return 1;
	}
	c->err = prepend_name(c, &link);
	if (c->err)
		return 1;
	c->dentry = link.parent;
	return 0;
}

/*
 * One step of a walk that has no mount (xattr hooks): stops at the first
 * ancestor that has an inode rule, which decides (the loader enters write
 * rules and the carve-outs below them), or at the filesystem's root.
 */
static long inode_walk_step(__u32 index, void *data)
{
	struct walk_ctx *c = data;
	struct dentry *d = c->dentry;
	struct tether_inode_key key = { .run_slot = c->run_slot };
	struct tether_path_rule *rule;
	struct dentry_link link;
	struct inode *inode;

	inode = BPF_CORE_READ(d, d_inode);
	if (inode) {
		key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(inode, i_ino);
		rule = bpf_map_lookup_elem(&inode_rules, &key);
		if (rule) {
			c->rule_id = rule->rule_id;
			if ((rule->access & c->access) == c->access)
				c->matched = 1;
			else
				c->ruled = 1;
			return 1;
		}
	}
	if (read_link(d, &link)) {
		c->err = -ENOENT;
		return 1;
	}
	if (link.parent == d) {
		c->done = 1;
		return 1;
	}
	c->err = prepend_name(c, &link);
	if (c->err)
		return 1;
	c->dentry = link.parent;
	return 0;
}

/*
 * Writes the absolute path of (vfsmnt, dentry) in the caller's mount namespace
 * into the claimed scratch slot.  0 or a negative errno.
 */
static __always_inline int resolve_path(struct vfsmount *vfsmnt, struct dentry *dentry,
					struct walk_ctx *c)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct walk_scratch *s = bpf_map_lookup_elem(&walk_scratch, &c->slot);
	struct mount *ns_root;

	if (!s)
		return -ENOENT;
	c->buf = s->buf;
	c->dentry = dentry;
	c->mnt = real_mount(vfsmnt);
	c->mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
	c->pos = WALK_HALF;
	c->leaf_len = NAME_UNSET;
	c->err = 0;
	c->done = 0;
	bpf_loop(WALK_MAX_STEPS, walk_step, c, 0);
	if (c->err)
		return c->err;
	if (!c->done)
		return -ENAMETOOLONG;
	/*
	 * The walk stopped at a mount without a parent.  Unless that is the root
	 * of our own namespace, the object lives on a detached mount (open_tree)
	 * or in another namespace (/proc/PID/root), where names prove nothing.
	 */
	ns_root = task->nsproxy->mnt_ns->root;	/* BTF loads: no helper calls */
	if (!ns_root || c->mnt != ns_root)
		return -ENOENT;
	return 0;
}

static __always_inline struct walk_scratch *claim_scratch(__u32 *slot)
{
#pragma unroll
	for (__u32 i = 0; i < SCRATCH_SLOTS; i++) {
		__u32 key = i;
		struct walk_scratch *s = bpf_map_lookup_elem(&walk_scratch, &key);

		if (s && __sync_val_compare_and_swap(&s->busy, 0, 1) == 0) {
			s->index = i;
			*slot = i;
			return s;
		}
	}
	return NULL;
}

static __always_inline void release_scratch(struct walk_scratch *s)
{
	__sync_lock_test_and_set(&s->busy, 0);
}

/* How a path is matched against the rules. */
enum match_kind {
	MATCH_OBJECT,	/* the object itself: "/a/b" is looked up as "/a/b/" */
	MATCH_PARENT,	/* an entry of its parent: "/a/b" is looked up as "/a/" */
};

/*
 * Passed in the `flags` of a record (and stripped from it): a denial that
 * mode: audit must not relax although a rule decided it.
 */
#define FS_HARD_DENY		(1u << 31)

/*
 * mode: audit lets through the reads and execs a path rule would deny, so a
 * policy can be tried on a real agent without it changing anything it could
 * not change under enforce: what no rule can grant (reason forbidden), the
 * protected paths (tether's pins, /proc of other processes) and hard
 * denials (every write and every unix connection: the host's files, other
 * runs' directories, docker.sock) stay denied.
 */
static __always_inline bool relaxed(struct tether_run *run, __u32 reason, __u32 flags)
{
	return run->mode == TETHER_MODE_AUDIT && reason != TETHER_REASON_FORBIDDEN &&
	       reason != TETHER_REASON_PROTECTED && !(flags & FS_HARD_DENY);
}

/*
 * What a denial returns: deny_err, or 0 where mode: audit only records it.
 * deny_err is hidden from the compiler, which would otherwise turn
 * "c ? 0 : -1" into a negation the verifier cannot bound, and LSM programs
 * must provably return a value in [-MAX_ERRNO, 0].
 */
static __always_inline int verdict(struct tether_run *run, __u32 reason, __u32 flags,
				   int deny_err)
{
	asm volatile("" : "+r"(deny_err));
	return relaxed(run, reason, flags) ? 0 : deny_err;
}

/*
 * Writes the path of the current task's executable into `exe`, using the
 * scratch slot `s` (whose walk the caller no longer needs).  Left empty for
 * tasks without one (kernel threads) or whose executable has no name in the
 * caller's namespace.
 */
static __always_inline void fill_exe(char *exe, struct walk_scratch *s)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file *exe_file = BPF_CORE_READ(task, mm, exe_file);
	struct walk_ctx c = {};
	__u32 pos, len;

	if (!exe_file)
		return;
	c.slot = s->index;
	if (resolve_path(BPF_CORE_READ(exe_file, f_path.mnt), BPF_CORE_READ(exe_file, f_path.dentry),
			 &c))
		return;
	pos = c.pos;
	if (pos > WALK_HALF)
		pos = WALK_HALF;
	len = WALK_HALF - pos;
	if (len > TETHER_EVENT_PATH_MAX - 1)
		len = TETHER_EVENT_PATH_MAX - 1;
	if (bpf_probe_read_kernel(exe, TETHER_EVENT_PATH_MAX - 1, &s->buf[BOUNDED(pos, WALK_MASK)]))
		return;
	exe[BOUNDED(len, TETHER_EVENT_PATH_MAX - 1)] = 0;
}

/* Names the executable in a record built without a walk of its own, and submits it. */
static __always_inline void submit_fs_event(struct tether_fs_event *ev)
{
	struct walk_scratch *s;
	__u32 slot;

	s = claim_scratch(&slot);
	if (s) {
		fill_exe(ev->exe, s);
		release_scratch(s);
	}
	bpf_ringbuf_submit(ev, 0);
}

/*
 * Reserves an fs record and fills everything but the path (left empty);
 * the caller may write the path, then submits.  NULL when the ring is full
 * (counted in audit_lost).
 */
static __always_inline struct tether_fs_event *
reserve_fs_event(struct tether_run *run, __u64 run_cgroup_id, __u32 op, __s32 err, __u32 reason,
		 __u32 rule_id, __u32 access, __u32 flags)
{
	struct tether_fs_event *ev;

	ev = audit_reserve(run, sizeof(*ev));
	if (!ev)
		return NULL;
	fill_hdr(&ev->hdr, run, run_cgroup_id, TETHER_EVENT_FS, sizeof(*ev));
	ev->op = op;
	ev->decision = !err ? TETHER_DECISION_ALLOW
		     : relaxed(run, reason, flags) ? TETHER_DECISION_WOULD_DENY
						   : TETHER_DECISION_DENY;
	ev->err = err;
	ev->reason = reason;
	ev->rule_id = rule_id;
	ev->access = access;
	ev->flags = flags & ~FS_HARD_DENY;
	ev->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->path[0] = 0;
	ev->exe[0] = 0;
	return ev;
}

/* A record whose path is the walk in `s` (or empty when s is NULL). */
static __always_inline void emit_fs_event(struct tether_run *run, __u64 run_cgroup_id,
					  __u32 op, __s32 err, __u32 reason,
					  __u32 rule_id, __u32 access,
					  struct walk_scratch *s, __u32 pos, __u32 path_len,
					  __u32 flags)
{
	struct tether_fs_event *ev;
	__u32 n;

	ev = reserve_fs_event(run, run_cgroup_id, op, err, reason, rule_id, access, flags);
	if (!ev)
		return;
	if (s && path_len == 0) {
		ev->path[0] = '/';
		ev->path[1] = 0;
	} else if (s) {
		n = path_len;
		if (n > TETHER_EVENT_PATH_MAX - 1) {
			n = TETHER_EVENT_PATH_MAX - 1;
			ev->flags |= TETHER_FS_PATH_TRUNCATED;
		}
		bpf_probe_read_kernel(ev->path, TETHER_EVENT_PATH_MAX - 1, &s->buf[BOUNDED(pos, WALK_MASK)]);
		ev->path[BOUNDED(n, TETHER_EVENT_PATH_MAX - 1)] = 0;
	}
	/* The path is copied: the walk's scratch can name the executable now. */
	if (!s) {
		submit_fs_event(ev);
		return;
	}
	fill_exe(ev->exe, s);
	bpf_ringbuf_submit(ev, 0);
}

/* Denies an operation no rule can grant, with a record that names no path. */
static __always_inline int deny_forbidden(struct tether_run *run, __u64 run_cgroup_id, __u32 op,
					  __s32 deny_err)
{
	emit_fs_event(run, run_cgroup_id, op, deny_err, TETHER_REASON_FORBIDDEN, 0, 0, NULL, 0, 0,
		      0);
	return deny_err;
}

/* For operations no rule can grant: refused, with a record, when the caller is in a run. */
static __always_inline int deny_in_run(__u32 op, __s32 deny_err)
{
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	return deny_forbidden(run, cgid, op, deny_err);
}

/* Whether `task` is in the run cgroup itself (the run's own processes). */
static __always_inline bool in_same_run(struct task_struct *task, __u64 run_cgroup_id)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id) == run_cgroup_id;
}

/* An operation of a run's process on `task`: refused (EPERM, a record) unless `task` is in the run. */
static __always_inline int deny_outside_run(struct task_struct *task, __u32 op)
{
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run || in_same_run(task, cgid))
		return 0;
	return deny_forbidden(run, cgid, op, -EPERM);
}

#define CGROUP2_SUPER_MAGIC	0x63677270
#define CGROUP_SUPER_MAGIC	0x27e0eb
#define BPF_FS_MAGIC		0xcafe4a11
#define SECURITYFS_MAGIC	0x73636673
#define DEBUGFS_MAGIC		0x64626720
#define TRACEFS_MAGIC		0x74726163

/*
 * File systems whose files are the kernel's controls, not data: cgroup
 * files (cgroup.procs, cgroup.kill, subtree_control: leaving the run or
 * killing its controller), bpffs (tether's own pins), securityfs (LSM
 * policy), debugfs and tracefs.  No write to them is ever a run's business,
 * wherever the hierarchy is mounted (a cgroup2 tree can be mounted anywhere,
 * the workspace included), so they are refused by superblock, not by path,
 * even where a rule grants write.
 */
static __always_inline bool kernel_control_fs(unsigned long magic)
{
	return magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC ||
	       magic == BPF_FS_MAGIC || magic == SECURITYFS_MAGIC || magic == DEBUGFS_MAGIC ||
	       magic == TRACEFS_MAGIC;
}

/*
 * The decision for one operation of a run on (vfsmnt, dentry): 0 when a rule
 * grants `access`, else `deny_err` (0 in mode: audit) and an audit record.
 * `access` 0 marks an operation no rule can grant; TETHER_ACCESS_PROTECTED
 * added to the requested bits, one that is refused as protected whatever the
 * rules say (another process's /proc entries).
 */
static __always_inline int decide(struct tether_run *run, __u64 run_cgroup_id, __u32 op,
				  struct vfsmount *vfsmnt, struct dentry *dentry,
				  enum match_kind match, __u32 access, __s32 deny_err)
{
	struct tether_path_rule *rule;
	struct walk_ctx c = {};
	struct walk_scratch *s;
	__u32 path_len, pos, match_len, reason;
	__u32 rule_id = 0;
	bool protected_obj = access & TETHER_ACCESS_PROTECTED;
	bool hard;
	int err;

	access &= TETHER_ACCESS_ALL;
	s = claim_scratch(&c.slot);
	if (!s) {
		reason = access ? TETHER_REASON_UNRESOLVED : TETHER_REASON_FORBIDDEN;
		emit_fs_event(run, run_cgroup_id, op, deny_err, reason, 0, access, NULL, 0, 0,
			      FS_HARD_DENY);
		return verdict(run, reason, FS_HARD_DENY, deny_err);
	}
	err = resolve_path(vfsmnt, dentry, &c);
	pos = c.pos;
	if (pos > WALK_HALF)
		pos = WALK_HALF;
	path_len = WALK_HALF - pos;
	/* First: an operation no rule can grant stays forbidden whatever its path. */
	if (!access) {
		/* the walk only named it for the record */
		reason = TETHER_REASON_FORBIDDEN;
		goto deny;
	}
	if (err || (match == MATCH_PARENT && c.leaf_len == NAME_UNSET)) {
		reason = TETHER_REASON_UNRESOLVED;
		goto deny;
	}
	if (protected_obj) {
		reason = TETHER_REASON_PROTECTED;
		rule_id = TETHER_RULE_NONE;
		goto deny;
	}

	/* Build the lookup key: the path bytes, then the bit length to match. */
	if (path_len == 0) {
		s->key.path[0] = '/';
		match_len = 1;
	} else {
		if (bpf_probe_read_kernel(s->key.path, TETHER_PATH_KEY_MAX,
					  &s->buf[BOUNDED(pos, WALK_MASK)])) {
			reason = TETHER_REASON_UNRESOLVED;
			goto deny;
		}
		if (match == MATCH_PARENT) {
			/* "/a/b": parent "/a" plus its '/' is everything but the leaf */
			match_len = path_len - c.leaf_len;
		} else {
			match_len = path_len + 1;
			if (path_len < TETHER_PATH_KEY_MAX)
				s->key.path[BOUNDED(path_len, 0xff)] = '/';
		}
	}
	if (match_len > TETHER_PATH_KEY_MAX)
		match_len = TETHER_PATH_KEY_MAX;
	s->key.prefixlen = 32 + 8 * match_len;
	s->key.run_slot = run->run_slot;

	rule = bpf_map_lookup_elem(&path_rules, &s->key);
	/*
	 * A kernel control file system is protected whatever the rules grant;
	 * a built-in protected rule (/sys/fs/bpf) keeps naming itself.  Reads
	 * stay with the rules, so only writes pay for the superblock read.
	 */
	if ((access & TETHER_ACCESS_WRITE) && !(rule && (rule->access & TETHER_ACCESS_PROTECTED)) &&
	    kernel_control_fs(BPF_CORE_READ(vfsmnt, mnt_sb, s_magic))) {
		reason = TETHER_REASON_PROTECTED;
		rule_id = TETHER_RULE_NONE;
		goto deny;
	}
	if (rule && (rule->access & access) == access) {
		/* reads and exec mappings are too many to record; writes and execs are not */
		if ((run->flags & TETHER_RUN_AUDIT_ALLOWED) &&
		    ((access & TETHER_ACCESS_WRITE) || op == TETHER_FS_EXEC))
			emit_fs_event(run, run_cgroup_id, op, 0, TETHER_REASON_RULE,
				      rule->rule_id, access, s, pos, path_len, 0);
		release_scratch(s);
		return 0;
	}
	reason = TETHER_REASON_DEFAULT_DENY;
	if (rule) {
		reason = rule->access & TETHER_ACCESS_PROTECTED ? TETHER_REASON_PROTECTED
								: TETHER_REASON_RULE;
		rule_id = rule->rule_id;
	}
deny:
	/* mode: audit lets reads and exec through, never a change or a connection */
	hard = access & (TETHER_ACCESS_WRITE | TETHER_ACCESS_CONNECT);
	/* An unresolved walk that named nothing must not be recorded as "/". */
	emit_fs_event(run, run_cgroup_id, op, deny_err, reason, rule_id, access,
		      reason == TETHER_REASON_UNRESOLVED && path_len == 0 ? NULL : s, pos,
		      path_len, hard ? FS_HARD_DENY : 0);
	release_scratch(s);
	return verdict(run, reason, hard ? FS_HARD_DENY : 0, deny_err);
}

static __always_inline int check_path(__u32 op, const struct path *path, enum match_kind match)
{
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	return decide(run, cgid, op, BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry),
		      match, TETHER_ACCESS_WRITE, -EACCES);
}

/* An entry `dentry` of the directory `dir` is created, removed or replaced. */
static __always_inline int check_entry(__u32 op, const struct path *dir, struct dentry *dentry)
{
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	return decide(run, cgid, op, BPF_CORE_READ(dir, mnt), dentry, MATCH_PARENT,
		      TETHER_ACCESS_WRITE, -EACCES);
}

#define S_IFMT		00170000
#define S_IFBLK		0060000
#define S_IFCHR		0020000
#define O_ACCMODE	00000003

#define PTY_SLAVE_MAJOR		136	/* devpts: /dev/pts/N is 136:N */
#define PTMX_RDEV		((5u << 20) | 2)

/*
 * A pty slave the run allocated itself (see struct tether_pty_key): its
 * index entered for this run, by the master the slave is linked to now.
 * devpts keeps the slave's tty in the dentry's d_fsdata.
 */
#define DEVPTS_SUPER_MAGIC	0x1cd1

static __always_inline bool own_pty(struct tether_run *run, struct file *file)
{
	struct tether_pty_key key = { .run_slot = run->run_slot };
	struct tty_struct *slave;
	__u64 *master;

	/* only devpts keeps a tty in d_fsdata; a 136:N node elsewhere is no pty of the run's */
	if (BPF_CORE_READ(file, f_path.mnt, mnt_sb, s_magic) != DEVPTS_SUPER_MAGIC)
		return false;
	slave = BPF_CORE_READ(file, f_path.dentry, d_fsdata);
	if (!slave)
		return false;
	key.index = BPF_CORE_READ(slave, index);
	master = bpf_map_lookup_elem(&ptys, &key);
	return master && *master == (__u64)BPF_CORE_READ(slave, link);
}

/*
 * The character devices every program expects to use: null, zero, full,
 * random, urandom (major 1), tty, ptmx (major 5), and the ptys the run
 * allocated.  Decided by device number, never by path: a node with these
 * numbers anywhere is the same device, and a node with other numbers is
 * never one of them.
 */
static __always_inline bool allowed_device(struct tether_run *run, struct file *file,
					   umode_t mode, __u32 rdev)
{
	__u32 major = rdev >> 20, minor = rdev & 0xfffff;

	if ((mode & S_IFMT) != S_IFCHR)
		return false;
	if (major == 1)
		return minor == 3 || minor == 5 || minor == 7 || minor == 8 || minor == 9;
	if (major == 5)
		return minor == 0 || minor == 2;
	return major == PTY_SLAVE_MAJOR && own_pty(run, file);
}

#define PROC_SUPER_MAGIC	0x9fa0
#define __FMODE_EXEC		0x20	/* open_exec()'s open flag */

/*
 * Whether a /proc inode belongs to a process outside the run (/proc/PID/...
 * and /proc/PID/task/TID/...): its command line, environment-adjacent status
 * and maps tell the run about the host's other workloads.  An entry whose
 * process has exited counts as outside.  Entries of no process (meminfo,
 * /proc/sys) are decided by the path rules.
 */
static __always_inline struct pid *proc_pid_of(struct inode *inode)
{
	struct proc_inode *pi =
		(void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);

	return BPF_CORE_READ(pi, pid);
}

/* The pid of the /proc directory above *dentry, which moves up one level. */
static __always_inline struct pid *proc_pid_above(struct dentry **dentry)
{
	struct inode *inode;

	*dentry = BPF_CORE_READ(*dentry, d_parent);
	inode = BPF_CORE_READ(*dentry, d_inode);
	return inode ? proc_pid_of(inode) : NULL;
}

static __always_inline bool proc_of_other_process(struct inode *inode, struct dentry *dentry,
						  __u64 run_cgroup_id)
{
	struct pid *pid = proc_pid_of(inode);
	struct hlist_node *first;
	struct task_struct *task;

	/*
	 * /proc/PID/net/... entries belong to the network namespace, not the
	 * process, and carry no pid of their own: the directory they sit in
	 * (PID/net, PID/task/TID/net, a level or two up) does.
	 */
	if (!pid)
		pid = proc_pid_above(&dentry);
	if (!pid)
		pid = proc_pid_above(&dentry);
	if (!pid)
		pid = proc_pid_above(&dentry);
	if (!pid)
		return false;
	first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);
	if (!first)
		return true;
	task = (void *)first - bpf_core_field_offset(struct task_struct, pid_links[PIDTYPE_PID]);
	return !in_same_run(task, run_cgroup_id);
}

SEC("lsm/file_open")
int BPF_PROG(tether_file_open, struct file *file, int ret)
{
	struct vfsmount *vfsmnt;
	struct dentry *dentry;
	struct tether_run *run;
	struct inode *inode;
	unsigned long magic;
	unsigned int flags;
	__u32 access;
	umode_t mode;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	/*
	 * O_RDONLY reads; anything else writes (access mode 3, "ioctl only",
	 * included), and so does O_TRUNC even on a read-only open: the kernel
	 * truncates after this hook and, from 6.2 on, asks file_truncate rather
	 * than path_truncate.  O_PATH opens never reach this hook and can do
	 * nothing a later open or exec would not be asked about.
	 *
	 * Exec: every file the kernel is about to execute is opened by
	 * open_exec() with __FMODE_EXEC, whatever named it: execve, execveat
	 * on an O_PATH fd, fexecve of a memfd (no name in our namespace:
	 * denied as unresolved), a #! script's interpreter, an ELF binary's
	 * PT_INTERP, binfmt_misc.  Deciding EXEC here covers them all, and
	 * before the point of no return, so execve fails cleanly.
	 */
	/* Direct BTF loads from the hook's own arguments: cheaper than BPF_CORE_READ. */
	flags = file->f_flags;
	if (flags & __FMODE_EXEC)
		access = TETHER_ACCESS_EXEC;
	else if ((flags & O_ACCMODE) == 0)
		access = TETHER_ACCESS_READ;
	else if ((flags & O_ACCMODE) == 1)
		access = TETHER_ACCESS_WRITE;
	else
		access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE;
	if (flags & O_TRUNC)
		access |= TETHER_ACCESS_WRITE;
	inode = file->f_inode;
	vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	dentry = BPF_CORE_READ(file, f_path.dentry);
	mode = inode->i_mode;
	/* A device is what its number says, whatever path names it, for reads too. */
	if ((mode & S_IFMT) == S_IFCHR || (mode & S_IFMT) == S_IFBLK) {
		if (allowed_device(run, file, mode, inode->i_rdev))
			return 0;
		return decide(run, cgid, TETHER_FS_OPEN_DEVICE, vfsmnt, dentry, MATCH_OBJECT, 0,
			      -EACCES);
	}
	/*
	 * Re-opening an anonymous pipe or socket through /proc/PID/fd, making
	 * a pidfd (6.9+ opens it read-write on pidfs) or opening a namespace
	 * file (/proc/self/ns/NAME) touches no file: another process's pipes and
	 * namespaces are out of reach because /proc/PID/fd and /proc/PID/ns of a
	 * process outside the run fail the ptrace check, setns needs
	 * CAP_SYS_ADMIN, which no run holds (tether_capable, tether_cap_refused),
	 * and pidfds of outside processes give nothing ptrace would not.
	 */
	magic = inode->i_sb->s_magic;
	if (magic == PIPEFS_MAGIC || magic == SOCKFS_MAGIC || magic == ANON_INODE_FS_MAGIC ||
	    magic == PIDFS_MAGIC || magic == NSFS_MAGIC)
		return 0;
	if (magic == PROC_SUPER_MAGIC && proc_of_other_process(inode, dentry, cgid))
		access |= TETHER_ACCESS_PROTECTED;
	return decide(run, cgid,
		      access & TETHER_ACCESS_EXEC    ? TETHER_FS_EXEC
		      : access & TETHER_ACCESS_WRITE ? TETHER_FS_OPEN_WRITE
						     : TETHER_FS_OPEN_READ,
		      vfsmnt, dentry, MATCH_OBJECT, access, -EACCES);
}

#define PROT_EXEC	0x4

/*
 * Executable file mappings need exec too, or a run would load a shared
 * library it wrote (LD_PRELOAD, dlopen) where it may not exec.  The ELF
 * loader's own mappings of a binary and its interpreter pass here as well.
 * Anonymous executable memory (JITs) is not a file and is not confined.
 */
static __always_inline int check_exec_mapping(__u32 op, struct file *file, unsigned long prot)
{
	struct tether_run *run;
	__u64 cgid;

	if (!file || !(prot & PROT_EXEC))
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	return decide(run, cgid, op, BPF_CORE_READ(file, f_path.mnt),
		      BPF_CORE_READ(file, f_path.dentry), MATCH_OBJECT, TETHER_ACCESS_EXEC, -EACCES);
}

SEC("lsm/mmap_file")
int BPF_PROG(tether_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	if (ret)
		return ret;
	return check_exec_mapping(TETHER_FS_MMAP_EXEC, file, prot);
}

SEC("lsm/file_mprotect")
int BPF_PROG(tether_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot,
	     unsigned long prot, int ret)
{
	if (ret)
		return ret;
	return check_exec_mapping(TETHER_FS_MPROTECT_EXEC, BPF_CORE_READ(vma, vm_file), prot);
}

SEC("lsm/path_mknod")
int BPF_PROG(tether_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	/*
	 * A device node is a name for a kernel object, not a file: one created
	 * in the workspace with the host disk's (or /dev/mem's) numbers would
	 * make every byte behind it writable under a workspace path.  No rule
	 * grants creating one.
	 */
	if ((mode & S_IFMT) == S_IFCHR || (mode & S_IFMT) == S_IFBLK) {
		run = current_run(&cgid);
		if (!run)
			return 0;
		return decide(run, cgid, TETHER_FS_MKNOD_DEVICE, BPF_CORE_READ(dir, mnt), dentry,
			      MATCH_PARENT, 0, -EPERM);
	}
	return check_entry(TETHER_FS_CREATE, dir, dentry);
}

SEC("lsm/path_mkdir")
int BPF_PROG(tether_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode,
	     int ret)
{
	if (ret)
		return ret;
	return check_entry(TETHER_FS_MKDIR, dir, dentry);
}

/*
 * Moving or removing an existing object must not carry a narrower rule's
 * path out of that rule: the object's own rule must grant write (a denied
 * directory or a read-only carve-out stays where it is), and a directory the
 * loader pinned (one above such a rule) can be neither moved nor removed.
 */
static __always_inline int check_move(struct tether_run *run, __u64 cgid, __u32 op,
				      struct vfsmount *vfsmnt, struct dentry *dentry)
{
	struct tether_inode_key key = { .run_slot = run->run_slot };
	struct inode *inode = BPF_CORE_READ(dentry, d_inode);
	struct tether_path_rule *rule;
	int err;

	if (!inode)
		return 0;
	err = decide(run, cgid, op, vfsmnt, dentry, MATCH_OBJECT, TETHER_ACCESS_WRITE, -EACCES);
	if (err)
		return err;
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(inode, i_ino);
	rule = bpf_map_lookup_elem(&inode_rules, &key);
	if (rule && (rule->access & TETHER_ACCESS_PINNED))
		return decide(run, cgid, op, vfsmnt, dentry, MATCH_OBJECT, 0, -EACCES);
	return 0;
}

/* An entry of `dir` removed: the directory's rule, then the object's own. */
static __always_inline int check_removal(__u32 op, const struct path *dir, struct dentry *dentry)
{
	struct vfsmount *vfsmnt = BPF_CORE_READ(dir, mnt);
	struct tether_run *run;
	__u64 cgid;
	int err;

	run = current_run(&cgid);
	if (!run)
		return 0;
	err = decide(run, cgid, op, vfsmnt, dentry, MATCH_PARENT, TETHER_ACCESS_WRITE, -EACCES);
	if (err)
		return err;
	return check_move(run, cgid, op, vfsmnt, dentry);
}

SEC("lsm/path_rmdir")
int BPF_PROG(tether_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
	if (ret)
		return ret;
	return check_removal(TETHER_FS_RMDIR, dir, dentry);
}

SEC("lsm/path_unlink")
int BPF_PROG(tether_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
	if (ret)
		return ret;
	return check_removal(TETHER_FS_UNLINK, dir, dentry);
}

SEC("lsm/path_symlink")
int BPF_PROG(tether_path_symlink, const struct path *dir, struct dentry *dentry,
	     const char *old_name, int ret)
{
	if (ret)
		return ret;
	return check_entry(TETHER_FS_SYMLINK, dir, dentry);
}

SEC("lsm/path_link")
int BPF_PROG(tether_path_link, struct dentry *old_dentry, const struct path *new_dir,
	     struct dentry *new_dentry, int ret)
{
	struct tether_run *run;
	__u64 cgid;
	int err;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	err = decide(run, cgid, TETHER_FS_LINK, BPF_CORE_READ(new_dir, mnt), new_dentry,
		     MATCH_PARENT, TETHER_ACCESS_WRITE, -EACCES);
	if (err)
		return err;
	/*
	 * A hard link gives the target a second name; linking a file the run
	 * may not write (/etc/passwd) into the workspace would make it writable
	 * through the new name.  Links never cross mounts, so the source lives
	 * on new_dir's mount.
	 */
	return decide(run, cgid, TETHER_FS_LINK, BPF_CORE_READ(new_dir, mnt), old_dentry,
		      MATCH_OBJECT, TETHER_ACCESS_WRITE, -EACCES);
}

SEC("lsm/path_rename")
int BPF_PROG(tether_path_rename, const struct path *old_dir, struct dentry *old_dentry,
	     const struct path *new_dir, struct dentry *new_dentry, unsigned int flags, int ret)
{
	struct tether_run *run;
	__u64 cgid;
	int err;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	err = decide(run, cgid, TETHER_FS_RENAME, BPF_CORE_READ(old_dir, mnt), old_dentry,
		     MATCH_PARENT, TETHER_ACCESS_WRITE, -EACCES);
	if (err)
		return err;
	err = decide(run, cgid, TETHER_FS_RENAME, BPF_CORE_READ(new_dir, mnt), new_dentry,
		     MATCH_PARENT, TETHER_ACCESS_WRITE, -EACCES);
	if (err)
		return err;
	/* What moves, and what a rename over an existing name replaces (or exchanges). */
	err = check_move(run, cgid, TETHER_FS_RENAME, BPF_CORE_READ(old_dir, mnt), old_dentry);
	if (err)
		return err;
	return check_move(run, cgid, TETHER_FS_RENAME, BPF_CORE_READ(new_dir, mnt), new_dentry);
}

SEC("lsm/path_truncate")
int BPF_PROG(tether_path_truncate, const struct path *path, int ret)
{
	if (ret)
		return ret;
	return check_path(TETHER_FS_TRUNCATE, path, MATCH_OBJECT);
}

SEC("lsm/path_chmod")
int BPF_PROG(tether_path_chmod, const struct path *path, umode_t mode, int ret)
{
	if (ret)
		return ret;
	return check_path(TETHER_FS_CHMOD, path, MATCH_OBJECT);
}

SEC("lsm/path_chown")
int BPF_PROG(tether_path_chown, const struct path *path, __u64 uid, __u64 gid, int ret)
{
	if (ret)
		return ret;
	return check_path(TETHER_FS_CHOWN, path, MATCH_OBJECT);
}

/* Mounts rename the tree under the rules' feet: none inside a run. */
static __always_inline int deny_mount_op(__u32 op, const struct path *path)
{
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	if (!path)
		return deny_forbidden(run, cgid, op, -EPERM);
	return decide(run, cgid, op, BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry),
		      MATCH_OBJECT, 0, -EPERM);
}

SEC("lsm/sb_mount")
int BPF_PROG(tether_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	if (ret)
		return ret;
	return deny_mount_op(TETHER_FS_MOUNT, path);
}

SEC("lsm/sb_umount")
int BPF_PROG(tether_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	return deny_mount_op(TETHER_FS_UMOUNT, NULL);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(tether_sb_pivotroot, const struct path *old_path, const struct path *new_path,
	     int ret)
{
	if (ret)
		return ret;
	return deny_mount_op(TETHER_FS_PIVOT_ROOT, new_path);
}

SEC("lsm/move_mount")
int BPF_PROG(tether_move_mount, const struct path *from_path, const struct path *to_path,
	     int ret)
{
	if (ret)
		return ret;
	return deny_mount_op(TETHER_FS_MOVE_MOUNT, to_path);
}

/*
 * Extended attributes and timestamps.  security.capability on a host binary
 * would hand capabilities to whoever runs it outside the sandbox; utimes
 * rewrites the history a forensic timeline relies on.  These hooks get no
 * mount, so the decision walks the dentry's ancestors looking for a writable
 * root by identity (inode_rules) instead of by path.
 */
static __always_inline int check_by_identity(__u32 op, struct dentry *dentry)
{
	struct tether_run *run;
	struct walk_ctx c = {};
	struct walk_scratch *s;
	__u32 pos, path_len;
	bool control_fs;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	s = claim_scratch(&c.slot);
	if (!s) {
		emit_fs_event(run, cgid, op, -EACCES, TETHER_REASON_UNRESOLVED, 0,
			      TETHER_ACCESS_WRITE, NULL, 0, 0, FS_HARD_DENY);
		return verdict(run, TETHER_REASON_UNRESOLVED, FS_HARD_DENY, -EACCES);
	}
	/* see kernel_control_fs(): protected whatever the inode rules say */
	control_fs = kernel_control_fs(BPF_CORE_READ(dentry, d_sb, s_magic));
	c.dentry = dentry;
	c.buf = s->buf;
	c.pos = WALK_HALF;
	c.leaf_len = NAME_UNSET;
	/* slot 0 is no run's: on a control fs the walk only names the object */
	c.run_slot = control_fs ? 0 : run->run_slot;
	c.access = TETHER_ACCESS_WRITE;
	bpf_loop(WALK_MAX_STEPS, inode_walk_step, &c, 0);
	pos = c.pos;
	if (pos > WALK_HALF)
		pos = WALK_HALF;
	path_len = WALK_HALF - pos;
	if (control_fs) {
		emit_fs_event(run, cgid, op, -EACCES, TETHER_REASON_PROTECTED, TETHER_RULE_NONE,
			      TETHER_ACCESS_WRITE, s, pos, path_len,
			      TETHER_FS_PATH_FS_RELATIVE | FS_HARD_DENY);
		release_scratch(s);
		return -EACCES;
	}
	if (c.matched) {
		/* the walk stopped at the writable root: the path names only the part below it */
		if (run->flags & TETHER_RUN_AUDIT_ALLOWED)
			emit_fs_event(run, cgid, op, 0, TETHER_REASON_RULE, c.rule_id,
				      TETHER_ACCESS_WRITE, s, pos, path_len,
				      TETHER_FS_PATH_BELOW_RULE);
		release_scratch(s);
		return 0;
	}
	if (c.ruled) {
		emit_fs_event(run, cgid, op, -EACCES, TETHER_REASON_RULE, c.rule_id,
			      TETHER_ACCESS_WRITE, s, pos, path_len,
			      TETHER_FS_PATH_BELOW_RULE | FS_HARD_DENY);
		release_scratch(s);
		return verdict(run, TETHER_REASON_RULE, FS_HARD_DENY, -EACCES);
	}
	if (c.err || !c.done) {
		emit_fs_event(run, cgid, op, -EACCES, TETHER_REASON_UNRESOLVED, 0,
			      TETHER_ACCESS_WRITE, s, pos, path_len,
			      TETHER_FS_PATH_FS_RELATIVE | FS_HARD_DENY);
		release_scratch(s);
		return verdict(run, TETHER_REASON_UNRESOLVED, FS_HARD_DENY, -EACCES);
	}
	emit_fs_event(run, cgid, op, -EACCES, TETHER_REASON_DEFAULT_DENY, 0, TETHER_ACCESS_WRITE,
		      s, pos, path_len, TETHER_FS_PATH_FS_RELATIVE | FS_HARD_DENY);
	release_scratch(s);
	return verdict(run, TETHER_REASON_DEFAULT_DENY, FS_HARD_DENY, -EACCES);
}

SEC("lsm/inode_setxattr")
int BPF_PROG(tether_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, size_t size, int flags, int ret)
{
	if (ret)
		return ret;
	return check_by_identity(TETHER_FS_SETXATTR, dentry);
}

SEC("lsm/inode_removexattr")
int BPF_PROG(tether_inode_removexattr, void *idmap, struct dentry *dentry, const char *name,
	     int ret)
{
	if (ret)
		return ret;
	return check_by_identity(TETHER_FS_REMOVEXATTR, dentry);
}

#define ATTR_MODE	(1u << 0)
#define ATTR_UID	(1u << 1)
#define ATTR_GID	(1u << 2)
#define ATTR_SIZE	(1u << 3)
#define ATTR_ATIME	(1u << 4)
#define ATTR_MTIME	(1u << 5)

/*
 * Only timestamp changes are decided here: mode, owner and size changes have
 * path hooks (path_chmod, path_chown, path_truncate) that already allowed or
 * denied them by path, and deciding them again by identity would refuse
 * legitimate changes below a mount inside the workspace.
 */
static __always_inline int check_setattr(struct dentry *dentry, struct iattr *attr)
{
	unsigned int valid = BPF_CORE_READ(attr, ia_valid);

	if (valid & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE))
		return 0;
	if (!(valid & (ATTR_ATIME | ATTR_MTIME)))
		return 0;
	return check_by_identity(TETHER_FS_UTIMES, dentry);
}

/*
 * inode_setattr gained a leading idmap argument in 6.3.  The loader keeps the
 * variant matching the running kernel's BTF and disables the other.
 */
SEC("lsm/inode_setattr")
int BPF_PROG(tether_inode_setattr_idmap, void *idmap, struct dentry *dentry, struct iattr *attr,
	     int ret)
{
	if (ret)
		return ret;
	return check_setattr(dentry, attr);
}

SEC("lsm/inode_setattr")
int BPF_PROG(tether_inode_setattr_legacy, struct dentry *dentry, struct iattr *attr, int ret)
{
	if (ret)
		return ret;
	return check_setattr(dentry, attr);
}

/* POSIX ACLs change permissions; from 6.2 on they bypass inode_setxattr. The
 * loader attaches these only where the kernel has the hooks. */
SEC("lsm/inode_set_acl")
int BPF_PROG(tether_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     void *kacl, int ret)
{
	if (ret)
		return ret;
	return check_by_identity(TETHER_FS_SET_ACL, dentry);
}

SEC("lsm/inode_remove_acl")
int BPF_PROG(tether_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name,
	     int ret)
{
	if (ret)
		return ret;
	return check_by_identity(TETHER_FS_REMOVE_ACL, dentry);
}

#define TIOCSTI			0x5412
#define TIOCLINUX		0x541C
#define BTRFS_IOCTL_MAGIC	0x94

/*
 * ioctls that change a file or its filesystem although the caller may hold
 * only a read-only fd (chattr +i, fs-verity, ext4 resizing and shutdown, btrfs
 * snapshots, freezing the filesystem).  Everything else keeps working on
 * read-only fds.
 */
static __always_inline bool modifying_file_ioctl(unsigned int cmd)
{
	switch (cmd) {
	case 0x40086602: /* FS_IOC_SETFLAGS */
	case 0x40046602: /* FS_IOC32_SETFLAGS */
	case 0x401c5820: /* FS_IOC_FSSETXATTR */
	case 0x40087602: /* FS_IOC_SETVERSION */
	case 0x40047602: /* FS_IOC32_SETVERSION */
	case 0x40806685: /* FS_IOC_ENABLE_VERITY */
	case 0x800c6613: /* FS_IOC_SET_ENCRYPTION_POLICY */
	case 0x40086604: /* EXT4_IOC_SETVERSION */
	case 0x40046604: /* EXT4_IOC32_SETVERSION */
	case 0x4008662c: /* EXT4_IOC_SETFSUUID */
	case 0x40086607: /* EXT4_IOC_GROUP_EXTEND */
	case 0x40286608: /* EXT4_IOC_GROUP_ADD */
	case 0x40086610: /* EXT4_IOC_RESIZE_FS */
	case 0x00006609: /* EXT4_IOC_MIGRATE */
	case 0x8004587d: /* EXT4_IOC_SHUTDOWN, XFS_IOC_GOINGDOWN */
		return true;
	}
	/*
	 * btrfs (0x94) and XFS/generic (0x58: FIFREEZE, FITHAW, XFS set and
	 * by-handle calls): every ioctl that passes data in is decided by path;
	 * only their pure getters stay free on read-only fds.
	 */
	if (((cmd >> 8) & 0xff) == BTRFS_IOCTL_MAGIC || ((cmd >> 8) & 0xff) == 0x58)
		return (cmd >> 30) & 1;
	return false;
}

#define TIOCGPTN		0x80045430	/* _IOR('T', 0x30, unsigned int) */
#define TIOCGPTPEER		0x5441		/* _IO('T', 0x41) */

/* The pty master behind a ptmx file, or NULL for any other file. */
static __always_inline struct tty_struct *ptmx_master(struct file *file)
{
	struct tty_file_private *priv;

	if (BPF_CORE_READ(file, f_inode, i_rdev) != PTMX_RDEV ||
	    (BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) != S_IFCHR)
		return NULL;
	priv = BPF_CORE_READ(file, private_data);
	return priv ? BPF_CORE_READ(priv, tty) : NULL;
}

/*
 * A run's process asks a master it opened for its slave: the slave becomes
 * the run's (see struct tether_pty_key).  A full map leaves it unentered,
 * and the slave's open is then denied.
 */
static __always_inline void enter_pty(struct tether_run *run, struct file *file)
{
	struct tty_struct *master = ptmx_master(file);
	struct tether_pty_key key = { .run_slot = run->run_slot };
	__u64 value = (__u64)master;

	if (!master)
		return;
	key.index = BPF_CORE_READ(master, index);
	bpf_map_update_elem(&ptys, &key, &value, BPF_ANY);
}

#define FIOSETOWN		0x8901
#define SIOCSPGRP		0x8902

static __always_inline int check_ioctl(struct file *file, unsigned int cmd)
{
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	/*
	 * A socket's owner, as F_SETOWN sets it (see tether_file_fcntl), but
	 * passed by pointer: the kernel reads it after this hook, so another
	 * thread could change what the hook read.  Programs use fcntl; refused.
	 */
	if (cmd == FIOSETOWN || cmd == SIOCSPGRP)
		return deny_forbidden(run, cgid, TETHER_FS_SIGNAL, -EPERM);
	if (cmd == TIOCGPTN || cmd == TIOCGPTPEER) {
		enter_pty(run, file);
		return 0;
	}
	/* Typing into a terminal the run shares with a host shell runs commands outside it. */
	if (cmd == TIOCSTI || cmd == TIOCLINUX)
		return decide(run, cgid, TETHER_FS_TTY_INJECT, BPF_CORE_READ(file, f_path.mnt),
			      BPF_CORE_READ(file, f_path.dentry), MATCH_OBJECT, 0, -EPERM);
	if (!modifying_file_ioctl(cmd))
		return 0;
	return decide(run, cgid, TETHER_FS_IOCTL, BPF_CORE_READ(file, f_path.mnt),
		      BPF_CORE_READ(file, f_path.dentry), MATCH_OBJECT, TETHER_ACCESS_WRITE,
		      -EACCES);
}

SEC("lsm/file_ioctl")
int BPF_PROG(tether_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret)
		return ret;
	return check_ioctl(file, cmd);
}

SEC("lsm/file_ioctl_compat")
int BPF_PROG(tether_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg,
	     int ret)
{
	if (ret)
		return ret;
	return check_ioctl(file, cmd);
}

/*
 * Closing the master ends the pty: its number may go to another session
 * next, so the run's entry goes with it.  Called for every file's last close
 * on the host, before the file is released (its tty still attached);
 * anything but a ptmx file of a run returns at once.  The hook exists from
 * 6.9 on (the loader attaches it where it does); before, an entry stays
 * until the run ends.
 */
SEC("lsm/file_release")
int BPF_PROG(tether_file_release, struct file *file)
{
	struct tether_pty_key key;
	struct tty_struct *master;
	struct tether_run *run;
	__u64 *entered, cgid;

	master = ptmx_master(file);
	if (!master)
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	key.run_slot = run->run_slot;
	key.index = BPF_CORE_READ(master, index);
	entered = bpf_map_lookup_elem(&ptys, &key);
	if (entered && *entered == (__u64)master)
		bpf_map_delete_elem(&ptys, &key);
	return 0;
}

#define AF_UNIX			1
#define AF_INET			2
#define AF_INET6		10
#define AF_NETLINK		16
#define SOCK_TYPE_MASK		0xf
#define SOCK_STREAM		1
#define SOCK_DGRAM		2
#define IPPROTO_ICMP		1
#define IPPROTO_TCP		6
#define IPPROTO_UDP		17
#define IPPROTO_ICMPV6		58
#define NETLINK_ROUTE		0

/*
 * Socket families a run may create: unix, TCP/UDP (and ping) over IPv4 and
 * IPv6, and netlink's route family, which libc needs (getifaddrs,
 * if_nametoindex; changing routes or links needs CAP_NET_ADMIN, which runs
 * do not get: tether_capable).  Everything else is refused: packet and raw sockets see
 * and forge any traffic, vsock reaches the hypervisor, SCTP and DCCP bring
 * whole protocol stacks (and their bugs) within reach, other netlink
 * families configure the kernel, and an unknown family is refused rather
 * than allowed, so a protocol added later starts out denied.  Kernel
 * sockets (kern) are the kernel's own.
 */
static __always_inline bool allowed_socket(int family, int type, int protocol)
{
	type &= SOCK_TYPE_MASK;
	switch (family) {
	case AF_UNIX:
		return true;
	case AF_INET:
	case AF_INET6:
		/*
		 * An allow list, not a block list: protocol 0 with SOCK_SEQPACKET
		 * is SCTP, and L2TP, SMC, MPTCP, UDP-Lite come by number.
		 */
		if (type == SOCK_STREAM)
			return protocol == 0 || protocol == IPPROTO_TCP;
		if (type == SOCK_DGRAM)
			return protocol == 0 || protocol == IPPROTO_UDP ||
			       protocol == (family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
		return false;
	case AF_NETLINK:
		return protocol == NETLINK_ROUTE;
	default:
		return false;
	}
}

SEC("lsm/socket_create")
int BPF_PROG(tether_socket_create, int family, int type, int protocol, int kern, int ret)
{
	static const char fmt[] = "%d/%d/%d";
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 args[3], cgid;

	if (ret)
		return ret;
	if (kern || allowed_socket(family, type, protocol))
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	ev = reserve_fs_event(run, cgid, TETHER_FS_SOCKET_CREATE, -EPERM, TETHER_REASON_FORBIDDEN,
			      0, 0, 0);
	if (!ev)
		return -EPERM;
	args[0] = family;
	args[1] = type;
	args[2] = protocol;
	bpf_snprintf(ev->path, sizeof(ev->path), fmt, args, sizeof(args));
	submit_fs_event(ev);
	return -EPERM;
}

/*
 * Writes `value` in decimal where a record's path goes: stores, not
 * bpf_snprintf, whose format string would be a second string in .rodata
 * (which breaks the object's BTF, see tether_socket_create).
 */
static __always_inline void put_decimal(char *dst, long value)
{
	__u64 v = value < 0 ? -(__u64)value : (__u64)value;
	char digits[32];
	__u32 n = 0, pos = 0;

	/* bounded loops: 20 digits hold any 64-bit value */
	for (__u32 i = 0; i < 20; i++) {
		digits[i] = '0' + v % 10;
		v /= 10;
		n = i + 1;
		if (!v)
			break;
	}
	if (value < 0)
		dst[pos++] = '-';
	for (__u32 i = n; i > 0 && i <= 20; i--)
		dst[pos++ & 0x1f] = digits[(i - 1) & 0x1f];
	dst[pos & 0x1f] = 0;
}

/* Capabilities by number (include/uapi/linux/capability.h). */
#define CAP_DAC_OVERRIDE	1
#define CAP_DAC_READ_SEARCH	2
#define CAP_FOWNER		3
#define CAP_FSETID		4
#define CAP_SETGID		6
#define CAP_SETUID		7
#define CAP_SETPCAP		8
#define CAP_SYS_RESOURCE	24
#define CAP_OPT_NOAUDIT		(1u << 1)

/*
 * A capability record: op capability, path the capability's number (the
 * controller writes its name, "cap_sys_admin"), errno EPERM.  Returns -EPERM.
 */
static __always_inline int deny_capability(struct tether_run *run, __u64 cgid, int cap)
{
	struct tether_fs_event *ev;

	ev = reserve_fs_event(run, cgid, TETHER_FS_CAPABILITY, -EPERM, TETHER_REASON_FORBIDDEN, 0,
			      0, 0);
	if (!ev)
		return -EPERM;
	put_decimal(ev->path, cap);
	submit_fs_event(ev);
	return -EPERM;
}

#define PFA_NO_NEW_PRIVS	0	/* bit of task_struct.atomic_flags */

static __always_inline bool current_no_new_privs(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return task->atomic_flags & (1ul << PFA_NO_NEW_PRIVS);
}

/*
 * Whether a capability check is about the caller's own credentials.  The
 * kernel also asks about others: another task's (has_capability()), or
 * credentials it put on for the caller (override_creds(): overlayfs
 * reaching its layers as whoever mounted it, NFS, cachefiles).  Those are
 * the kernel acting for itself, which the run's capabilities do not govern;
 * refusing them would break files on an overlay root.
 */
static __always_inline bool own_credentials(const struct cred *cred)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return (const void *)cred == (const void *)task->real_cred;
}

/*
 * What the first process of a run needs between clone3 and exec, before it
 * sets no_new_privs: changing its uid, gid and groups, dropping the bounding
 * set and locking securebits, lowering rlimits.
 */
static __always_inline bool setup_capability(int cap)
{
	return cap == CAP_SETUID || cap == CAP_SETGID || cap == CAP_SETPCAP ||
	       cap == CAP_SYS_RESOURCE;
}

/*
 * A capability check the capability module allowed.  Every process of a run
 * runs with no_new_privs set and every capability dropped (the controller
 * sets both before exec), so a check that got here from such a process
 * found a capability in a user namespace the run's uid owns outside the
 * run (setns into one of its namespaces), or a root run whose drop failed:
 * refused either way.  Checks of other credentials are the kernel's
 * (own_credentials()).  The one process without no_new_privs is the run's
 * first, while it drops its privileges; it keeps only what that needs.
 * Checks the kernel marks as not to be audited are refused quietly.
 */
SEC("lsm/capable")
int BPF_PROG(tether_capable, const struct cred *cred, void *ns, int cap, unsigned int opts,
	     int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run || !own_credentials(cred))
		return 0;
	if (!current_no_new_privs() && setup_capability(cap))
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return -EPERM;
	return deny_capability(run, cgid, cap);
}

/*
 * With lsm=lockdown,capability,bpf the kernel stops at the first module
 * that refuses, so once a run has dropped its capabilities, tether_capable
 * never sees the checks that matter (init_module, kexec_load, setns,
 * settimeofday, a restricted syslog): this records them after the
 * capability module refused.  The file permission capabilities are left
 * out: every permission check on a file the run does not own asks for them
 * (ls of a 0700 directory), and the file hooks record what they decide.  So
 * are CAP_SETUID and CAP_SETGID: setuid(getuid()) asks for them before it
 * takes the unprivileged way, and privilege-dropping code (every BusyBox
 * applet run by a non-root uid) does that on each start; the run has no
 * capability to gain an id with, and no_new_privs keeps setuid binaries
 * from giving one.
 * The record's errno is the capability's refusal; the system call may
 * return another (perf_event_open: EACCES).
 */
SEC("fexit/cap_capable")
int BPF_PROG(tether_cap_refused, const struct cred *cred, struct user_namespace *targ_ns, int cap,
	     unsigned int opts, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (!ret || (opts & CAP_OPT_NOAUDIT) || cap == CAP_DAC_OVERRIDE ||
	    cap == CAP_DAC_READ_SEARCH || cap == CAP_FOWNER || cap == CAP_FSETID ||
	    cap == CAP_SETGID || cap == CAP_SETUID)
		return 0;
	run = current_run(&cgid);
	if (!run || !own_credentials(cred))
		return 0;
	deny_capability(run, cgid, cap);
	return 0;
}

/*
 * A new user namespace gives its creator every capability inside it, and
 * with them the kernel's whole namespaced attack surface (mounts of
 * unprivileged file systems, netfilter, ...).  6.1+.
 */
SEC("lsm/userns_create")
int BPF_PROG(tether_userns_create, const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	return deny_in_run(TETHER_FS_USERNS, -EPERM);
}

/*
 * perf_event_open: hardware counters and tracepoints observe the host's
 * other processes and the kernel.  Debian kernels with perf_event_paranoid 3
 * ask for CAP_PERFMON or CAP_SYS_ADMIN first (tether_cap_refused records
 * that).  The hook lost its attr argument in 6.12; the loader keeps the
 * variant matching the kernel's BTF.
 */
static __always_inline int deny_perf_event(void)
{
	return deny_in_run(TETHER_FS_PERF_EVENT, -EPERM);
}

SEC("lsm/perf_event_open")
int BPF_PROG(tether_perf_event_open_attr, void *attr, int type, int ret)
{
	if (ret)
		return ret;
	return deny_perf_event();
}

SEC("lsm/perf_event_open")
int BPF_PROG(tether_perf_event_open, int type, int ret)
{
	if (ret)
		return ret;
	return deny_perf_event();
}

/*
 * syslog(2) reads and clears the kernel log (addresses, other tenants'
 * messages) and sets the console level.  Actions the kernel restricts
 * (dmesg_restrict) need CAP_SYSLOG first and are recorded as that
 * capability; the rest arrive here.  path: the action number.
 */
SEC("lsm/syslog")
int BPF_PROG(tether_syslog, int type, int ret)
{
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	ev = reserve_fs_event(run, cgid, TETHER_FS_SYSLOG, -EPERM, TETHER_REASON_FORBIDDEN, 0, 0,
			      0);
	if (!ev)
		return -EPERM;
	put_decimal(ev->path, type);
	submit_fs_event(ev);
	return -EPERM;
}

/* The system clock is the host's.  Reached only when CAP_SYS_TIME was allowed. */
SEC("lsm/settime")
int BPF_PROG(tether_settime, const struct timespec64 *ts, const struct timezone *tz, int ret)
{
	if (ret)
		return ret;
	return deny_in_run(TETHER_FS_SETTIME, -EPERM);
}

/*
 * Keys.  The kernel's keyrings are reachable by id from anywhere, with
 * permissions by uid (a root run shares root's, a nobody run every other
 * nobody's), and hold credentials: a run may use the keys its own processes
 * allocated and nothing else.  run_keys maps each such key (its address) to
 * the run's cgroup id: cgroup ids are never reused, so a key outliving its
 * run stays nobody's.  Freed keys leave the map (tether_key_free); a key
 * allocated later at the same address is not entered unless a run made it.
 */
#define KEY_ALLOC_UID_KEYRING	0x0010

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} run_keys SEC(".maps");

/* A key record: op keyctl, path the key's description. */
static __always_inline int deny_key(struct tether_run *run, __u64 cgid, struct key *key)
{
	struct tether_fs_event *ev;

	ev = reserve_fs_event(run, cgid, TETHER_FS_KEY, -EACCES, TETHER_REASON_FORBIDDEN, 0, 0, 0);
	if (!ev)
		return -EACCES;
	bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), BPF_CORE_READ(key, description));
	submit_fs_event(ev);
	return -EACCES;
}

/*
 * A run's process allocates a key: the run's session keyring (joined by its
 * first process while it drops its privileges) and whatever is added to it.
 * A per-uid keyring (_uid.N, _uid_ses.N), which the kernel makes on first
 * use by whoever asks, is shared with every process of that uid and is
 * never a run's own.  A full map refuses the key rather than lose track.
 */
SEC("lsm/key_alloc")
int BPF_PROG(tether_key_alloc, struct key *key, const struct cred *cred, unsigned long flags,
	     int ret)
{
	struct tether_run *run;
	__u64 cgid, addr = (__u64)key;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run || (flags & KEY_ALLOC_UID_KEYRING))
		return 0;
	if (bpf_map_update_elem(&run_keys, &addr, &cgid, BPF_ANY))
		return deny_key(run, cgid, key);
	return 0;
}

/* Every key's end, run's or not (6.12 has no key_free LSM hook for BPF). */
SEC("fentry/security_key_free")
int BPF_PROG(tether_key_free, struct key *key)
{
	__u64 addr = (__u64)key;

	bpf_map_delete_elem(&run_keys, &addr);
	return 0;
}

#define KEY_REF_POSSESSED	1ul	/* low bit of a key_ref_t */

/*
 * key_ref_t points to a type the kernel never defines, and the verifier
 * refuses to load such an argument from the context ("arg0 type FWD is not
 * a struct"): it is read through the trampoline instead (bpf_get_func_arg).
 * ctx[3] is the hook's return value so far.
 */
SEC("lsm/key_permission")
int tether_key_permission(unsigned long long *ctx)
{
	struct tether_run *run;
	__u64 cgid, key_ref = 0, addr, *owner;
	int ret = (int)ctx[3];

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	if (bpf_get_func_arg(ctx, 0, &key_ref))
		return -EACCES;
	addr = key_ref & ~KEY_REF_POSSESSED;
	owner = bpf_map_lookup_elem(&run_keys, &addr);
	if (owner && *owner == cgid)
		return 0;
	return deny_key(run, cgid, (struct key *)addr);
}

/*
 * PTRACE_TRACEME makes the parent the tracer.  The parent of a run's first
 * process is the controller, and an orphan's may be a subreaper outside the
 * run: they would receive ptrace stops they never asked for in waitpid(),
 * which stalls or misreports the run's end.  Only a parent in the run.
 */
SEC("lsm/ptrace_traceme")
int BPF_PROG(tether_ptrace_traceme, struct task_struct *parent, int ret)
{
	if (ret)
		return ret;
	return deny_outside_run(parent, TETHER_FS_PTRACE);
}

#define F_SETOWN		8
#define F_SETOWN_EX		15
#define PIDTYPE_PGID_INDEX	2	/* enum pid_type: PID, TGID, PGID, SID */

/* The number of `pid` in the pid namespace at `level`, or 0 if it has none there. */
static __always_inline int pid_nr_at(struct pid *pid, __u32 level)
{
	struct upid upid;

	if (!pid || BPF_CORE_READ(pid, level) != level)
		return 0;
	if (bpf_probe_read_kernel(&upid, sizeof(upid),
				  (void *)pid + bpf_core_field_offset(struct pid, numbers) +
					  level * sizeof(struct upid)))
		return 0;
	return upid.nr;
}

/*
 * Whether an owner (F_SETOWN's argument: a pid, or minus a process group)
 * names only the caller: none, its own process, or its own process group.
 * The run's first process starts a session of its own (setsid), so its
 * process groups hold run processes only.
 */
static __always_inline bool own_owner(int owner)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pid *self = BPF_CORE_READ(task, group_leader, thread_pid);
	__u32 level = BPF_CORE_READ(self, level);
	int pgid;

	if (owner == 0)
		return true;
	if (owner > 0)
		return owner == pid_nr_at(self, level);
	pgid = pid_nr_at(BPF_CORE_READ(task, signal, pids[PIDTYPE_PGID_INDEX]), level);
	return pgid && owner == -pgid;
}

/*
 * F_SETOWN with O_ASYNC makes the kernel send SIGIO (or F_SETSIG's signal)
 * and SIGURG to the owner whenever the file is ready, without task_kill:
 * sigio_perm checks only uids, which a root run shares with the
 * controller.  An owner is allowed when it is the caller itself.
 */
static __always_inline int check_owner(struct tether_run *run, __u64 cgid, int owner)
{
	if (own_owner(owner))
		return 0;
	return deny_forbidden(run, cgid, TETHER_FS_SIGNAL, -EPERM);
}

SEC("lsm/file_fcntl")
int BPF_PROG(tether_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	if (cmd != F_SETOWN && cmd != F_SETOWN_EX)
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	/* F_SETOWN_EX names threads and groups by type: no program needs it confined */
	if (cmd == F_SETOWN_EX)
		return deny_forbidden(run, cgid, TETHER_FS_SIGNAL, -EPERM);
	return check_owner(run, cgid, (int)arg);
}

#define CLONE_INTO_CGROUP	0x200000000ULL

/*
 * clone3(CLONE_INTO_CGROUP) needs only a read-only fd on a cgroup directory
 * (the kernel checks inode_permission, never file_open), and would start a
 * child outside the run: no process in a run may use it.  task_alloc runs
 * in the parent, before cgroup_can_fork() places the child.
 */
SEC("lsm/task_alloc")
int BPF_PROG(tether_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	if (!(clone_flags & CLONE_INTO_CGROUP))
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	return deny_forbidden(run, cgid, TETHER_FS_CLONE_INTO_CGROUP, -EPERM);
}

/* 6.2+: ftruncate asks this hook, not path_truncate (optional, see the loader). */
SEC("lsm/file_truncate")
int BPF_PROG(tether_file_truncate, struct file *file, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	return decide(run, cgid, TETHER_FS_TRUNCATE, BPF_CORE_READ(file, f_path.mnt),
		      BPF_CORE_READ(file, f_path.dentry), MATCH_OBJECT, TETHER_ACCESS_WRITE,
		      -EACCES);
}

#define PTRACE_MODE_NOAUDIT	0x04

/*
 * ptrace and everything gated like it: /proc/PID/fd, root, cwd and mem,
 * pidfd_getfd, process_vm_writev, kcmp.  Through another process's
 * descriptors a run would write what that process may write (the
 * controller's audit file, a host shell's pipe).  Processes of the same run
 * cgroup stay reachable, so debuggers and ps work inside the run.
 */
SEC("lsm/ptrace_access_check")
int BPF_PROG(tether_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	if (in_same_run(child, cgid))
		return 0;
	/* NOAUDIT probes (e.g. /proc/PID/stat fields) are denied quietly */
	if (mode & PTRACE_MODE_NOAUDIT)
		return -EPERM;
	return deny_forbidden(run, cgid, TETHER_FS_PTRACE, -EPERM);
}

/*
 * Unix sockets.  A connection is authority borrowed from whoever listens: a
 * host daemon (dbus, systemd, docker) would act for the run outside it.  A
 * run may reach the sockets its own processes created, and sockets bound
 * where a rule grants CONNECT (filesystem.connect only: a daemon's socket in
 * a writable /tmp is still the daemon's), and abstract names it lists
 * (filesystem.abstract_sockets).
 */
#define SUN_FAMILY_BYTES	2

/*
 * An abstract name (sun_path starting with NUL) is reachable when the run
 * lists it.  The record names it as tools do: "@" and the name.
 */
static __always_inline int check_abstract_peer(struct tether_run *run, __u64 cgid, __u32 op,
					       struct unix_sock *peer)
{
	struct unix_address *addr = BPF_CORE_READ(peer, addr);
	struct tether_abstract_key key = { .run_slot = run->run_slot };
	struct tether_fs_event *ev;
	const char *name;
	__u32 len;

	if (!addr)
		return deny_forbidden(run, cgid, op, -EACCES);	/* unnamed: nothing to list */
	/* sun_family, then the leading NUL, then the name */
	len = BPF_CORE_READ(addr, len) - SUN_FAMILY_BYTES - 1;
	if (len == 0 || len > TETHER_ABSTRACT_NAME_MAX)
		return deny_forbidden(run, cgid, op, -EACCES);
	name = (const char *)addr + bpf_core_field_offset(struct unix_address, name) +
	       SUN_FAMILY_BYTES + 1;
	key.len = len;
	if (bpf_probe_read_kernel(key.name, BOUNDED(len, 0x7f), name))
		return deny_forbidden(run, cgid, op, -EACCES);
	if (bpf_map_lookup_elem(&abstract_sockets, &key))
		return 0;
	ev = reserve_fs_event(run, cgid, op, -EACCES, TETHER_REASON_DEFAULT_DENY, 0,
			      TETHER_ACCESS_CONNECT, FS_HARD_DENY);
	if (ev) {
		ev->path[0] = '@';
		bpf_probe_read_kernel(&ev->path[1], BOUNDED(len, 0x7f), key.name);
		ev->path[BOUNDED(len + 1, 0xff)] = 0;
		submit_fs_event(ev);
	}
	return verdict(run, TETHER_REASON_DEFAULT_DENY, FS_HARD_DENY, -EACCES);
}

static __always_inline int check_unix_peer(__u32 op, struct sock *other)
{
	struct unix_sock *peer = (struct unix_sock *)other;
	struct tether_run *run;
	struct dentry *dentry;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run || !other)
		return 0;
	if (BPF_CORE_READ(other, sk_cgrp_data.cgroup, kn, id) == cgid)
		return 0;
	dentry = BPF_CORE_READ(peer, path.dentry);
	if (!dentry)
		return check_abstract_peer(run, cgid, op, peer);
	return decide(run, cgid, op, BPF_CORE_READ(peer, path.mnt), dentry, MATCH_OBJECT,
		      TETHER_ACCESS_CONNECT, -EACCES);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(tether_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	if (ret)
		return ret;
	return check_unix_peer(TETHER_FS_UNIX_CONNECT, other);
}

SEC("lsm/unix_may_send")
int BPF_PROG(tether_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return check_unix_peer(TETHER_FS_UNIX_SEND, BPF_CORE_READ(other, sk));
}

/*
 * bpf(): with it a root run could detach the pinned links or rewrite the
 * runs map, which is the boundary itself.  No process in a run may use it.
 * The hook gained a `kernel` argument after 6.12; the loader keeps the
 * variant matching the kernel's BTF.
 */
static __always_inline int deny_bpf(int cmd)
{
	return deny_in_run(TETHER_FS_BPF, -EPERM);
}

SEC("lsm/bpf")
int BPF_PROG(tether_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	if (ret)
		return ret;
	return deny_bpf(cmd);
}

SEC("lsm/bpf")
int BPF_PROG(tether_bpf_kernel, int cmd, union bpf_attr *attr, unsigned int size, bool kernel,
	     int ret)
{
	if (ret)
		return ret;
	return deny_bpf(cmd);
}

/*
 * Kernel modules, firmware and kexec images: with root in a run, init_module
 * of a module built in the workspace would be the kernel itself.  No run may
 * load anything into the kernel, or ask it to autoload a module (an unusual
 * socket family, a filesystem type) on its behalf.
 */
static __always_inline int deny_kernel_load(__u32 op, struct file *file, const char *name)
{
	struct tether_fs_event *ev;
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	if (file)
		return decide(run, cgid, op, BPF_CORE_READ(file, f_path.mnt),
			      BPF_CORE_READ(file, f_path.dentry), MATCH_OBJECT, 0, -EPERM);
	ev = reserve_fs_event(run, cgid, op, -EPERM, TETHER_REASON_FORBIDDEN, 0, 0, 0);
	if (!ev)
		return -EPERM;
	/* the module name goes where a path would: it says what was asked for */
	if (name)
		bpf_probe_read_kernel_str(ev->path, sizeof(ev->path), name);
	submit_fs_event(ev);
	return -EPERM;
}

SEC("lsm/kernel_load_data")
int BPF_PROG(tether_kernel_load_data, int id, bool contents, int ret)
{
	if (ret)
		return ret;
	return deny_kernel_load(TETHER_FS_KERNEL_LOAD, NULL, NULL);
}

SEC("lsm/kernel_read_file")
int BPF_PROG(tether_kernel_read_file, struct file *file, int id, bool contents, int ret)
{
	if (ret)
		return ret;
	return deny_kernel_load(TETHER_FS_KERNEL_LOAD, file, NULL);
}

SEC("lsm/kernel_module_request")
int BPF_PROG(tether_kernel_module_request, char *kmod_name, int ret)
{
	if (ret)
		return ret;
	return deny_kernel_load(TETHER_FS_MODULE_REQUEST, NULL, kmod_name);
}

/*
 * Signals to processes outside the run: killing the controller would end
 * the run's audit stream (the run stays confined, and the next run reclaims
 * it, but its records stop).  Signal 0 only probes for existence and is
 * denied quietly.  Signals the kernel sends (SIGCHLD to the controller)
 * do not pass this hook.
 */
SEC("lsm/task_kill")
int BPF_PROG(tether_task_kill, struct task_struct *p, void *info, int sig, void *cred, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run)
		return 0;
	if (in_same_run(p, cgid))
		return 0;
	if (!sig)
		return -EPERM;
	return deny_forbidden(run, cgid, TETHER_FS_SIGNAL, -EPERM);
}

/*
 * The kernel lets a process change another of the same uid: its nice value,
 * I/O priority, scheduling policy and CPU affinity, its memory placement.
 * Every run of the default identity has uid 65534, so without these one run
 * could starve another's processes (or a uid-0 run the controller).  Only
 * the run's own processes are its business.
 */
static __always_inline int deny_task_control(struct task_struct *p)
{
	return deny_outside_run(p, TETHER_FS_TASK_CONTROL);
}

SEC("lsm/task_setnice")
int BPF_PROG(tether_task_setnice, struct task_struct *p, int nice, int ret)
{
	if (ret)
		return ret;
	return deny_task_control(p);
}

SEC("lsm/task_setioprio")
int BPF_PROG(tether_task_setioprio, struct task_struct *p, int ioprio, int ret)
{
	if (ret)
		return ret;
	return deny_task_control(p);
}

/* sched_setscheduler, sched_setparam, sched_setattr and sched_setaffinity */
SEC("lsm/task_setscheduler")
int BPF_PROG(tether_task_setscheduler, struct task_struct *p, int ret)
{
	if (ret)
		return ret;
	return deny_task_control(p);
}

/* migrate_pages, move_pages */
SEC("lsm/task_movememory")
int BPF_PROG(tether_task_movememory, struct task_struct *p, int ret)
{
	if (ret)
		return ret;
	return deny_task_control(p);
}

/*
 * prlimit(2) on another process (on itself the kernel asks no hook).  The
 * hook names the target only by its credentials: a run may act on the
 * threads that share its own and on nothing else.  Lowering the
 * controller's RLIMIT_NOFILE or setting its RLIMIT_CPU would break the
 * run's cleanup; reading another run's limits is none of its business.
 */
SEC("lsm/task_prlimit")
int BPF_PROG(tether_task_prlimit, const struct cred *cred, const struct cred *tcred,
	     unsigned int flags, int ret)
{
	struct tether_run *run;
	__u64 cgid;

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run || tcred == cred)
		return 0;
	return deny_forbidden(run, cgid, TETHER_FS_TASK_CONTROL, -EPERM);
}
