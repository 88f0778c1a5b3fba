/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decide and record: the decision on a path (decide()), mode: audit's
 * relaxation, and the records with an fs body that every BPF-LSM object
 * writes.  A record's kind follows its operation (tether_fs_op_kind).
 */
#ifndef TETHER_LIB_DECIDE_H
#define TETHER_LIB_DECIDE_H

#include "bpf/lib/path.h"

/* How a path is matched against the rules. */
enum match_kind {
	MATCH_OBJECT,	/* the object itself: "/a/b" is looked up as "/a/b/" */
	MATCH_PARENT,	/* an entry of its parent: "/a/b" is looked up as "/a/" */
	/*
	 * As MATCH_OBJECT, but named in the mount namespace the object's mount
	 * is in (a unix socket bound by a host daemon, seen from a run's own
	 * namespace: its path is the one the daemon bound and the envelope
	 * names).
	 */
	MATCH_PEER,
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
 * What an action allowed with a record that was not written returns: 0, or
 * deny_err in a fail_closed run (fail_closed_refuses).
 */
static __always_inline int unrecorded(struct tether_run *run, int deny_err)
{
	asm volatile("" : "+r"(deny_err));
	return fail_closed_refuses(run) ? deny_err : 0;
}

/*
 * Writes the path of `task`'s executable into `exe`, using the scratch slot
 * `s` (whose walk the caller no longer needs).  Left empty for tasks without
 * one (kernel threads) or whose executable has no name in the caller's
 * namespace.
 */
static __always_inline void fill_task_exe(struct task_struct *task, char *exe,
					  struct walk_scratch *s)
{
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

/* The executables of the current task and of its parent, into the record. */
static __always_inline void fill_exe(struct tether_fs_event *ev, struct walk_scratch *s)
{
	struct task_struct *task = bpf_get_current_task_btf();

	fill_task_exe(task, ev->exe, s);
	fill_task_exe(BPF_CORE_READ(task, real_parent), ev->parent_exe, s);
}

/* Names the executable in a record built without a walk of its own, and submits it. */
static __always_inline void submit_fs_event(struct tether_fs_event *ev)
{
	struct walk_scratch *s;
	__u32 slot;

	s = claim_scratch(&slot);
	if (s) {
		fill_exe(ev, s);
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
	fill_hdr(&ev->hdr, run, run_cgroup_id, tether_fs_op_kind(op), sizeof(*ev));
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
	ev->ppid = BPF_CORE_READ(bpf_get_current_task_btf(), real_parent, tgid);
	ev->reserved = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->path[0] = 0;
	ev->exe[0] = 0;
	ev->parent_exe[0] = 0;
	return ev;
}

/*
 * A record whose path is the walk in `s` (or empty when s is NULL); false
 * when the ring was full.
 */
static __always_inline bool emit_fs_event(struct tether_run *run, __u64 run_cgroup_id,
					  __u32 op, __s32 err, __u32 reason,
					  __u32 rule_id, __u32 access,
					  struct walk_scratch *s, __u32 pos, __u32 path_len,
					  __u32 flags)
{
	struct tether_fs_event *ev;
	__u32 n;

	ev = reserve_fs_event(run, run_cgroup_id, op, err, reason, rule_id, access, flags);
	if (!ev)
		return false;
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
		return true;
	}
	fill_exe(ev, s);
	bpf_ringbuf_submit(ev, 0);
	return true;
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
	bool hard, recorded;
	int err;

	access &= TETHER_ACCESS_ALL;
	s = claim_scratch(&c.slot);
	if (!s) {
		reason = access ? TETHER_REASON_UNRESOLVED : TETHER_REASON_FORBIDDEN;
		emit_fs_event(run, run_cgroup_id, op, deny_err, reason, 0, access, NULL, 0, 0,
			      FS_HARD_DENY);
		return verdict(run, reason, FS_HARD_DENY, deny_err);
	}
	err = resolve_path_in(vfsmnt, dentry, &c, match == MATCH_PEER);
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
		err = 0;
		/* reads and exec mappings are too many to record; writes and execs are not */
		if ((run->flags & TETHER_RUN_AUDIT_ALLOWED) &&
		    ((access & TETHER_ACCESS_WRITE) || op == TETHER_FS_EXEC) &&
		    !emit_fs_event(run, run_cgroup_id, op, 0, TETHER_REASON_RULE,
				   rule->rule_id, access, s, pos, path_len, 0))
			err = unrecorded(run, deny_err);
		release_scratch(s);
		return err;
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
	recorded = emit_fs_event(run, run_cgroup_id, op, deny_err, reason, rule_id, access,
				 reason == TETHER_REASON_UNRESOLVED && path_len == 0 ? NULL : s,
				 pos, path_len, hard ? FS_HARD_DENY : 0);
	release_scratch(s);
	err = verdict(run, reason, hard ? FS_HARD_DENY : 0, deny_err);
	/* a would-deny of mode: audit is allowed for its record */
	if (!err && !recorded)
		err = unrecorded(run, deny_err);
	return err;
}

#endif
