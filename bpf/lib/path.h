/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path walk: the name of a (vfsmount, dentry) in the caller's mount
 * namespace, computed from the kernel's own objects (the struct mount and
 * dentry chain), never from the name the caller passed, so symlinks, "..",
 * /proc/self/fd/N and /proc/self/root re-opens, chroot and io_uring all reach
 * the same decision as a plain syscall on the resolved object.  A path that
 * cannot be resolved to a name in the caller's mount namespace (a detached
 * mount, another namespace's tree, a disconnected dentry from
 * open_by_handle_at, a path longer than PATH_MAX) is an error.  Also the
 * inode walk (identity rules) and the per-CPU scratch slots both use.
 */
#ifndef TETHER_LIB_PATH_H
#define TETHER_LIB_PATH_H

#include "bpf/lib/run.h"

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
 * Writes the absolute path of (vfsmnt, dentry) in the caller's mount namespace
 * into the claimed scratch slot.  0 or a negative errno.
 */
static __always_inline int resolve_path_in(struct vfsmount *vfsmnt, struct dentry *dentry,
					   struct walk_ctx *c, const bool own_ns)
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
	 * own_ns: the root of the namespace the mount is in, which must not be
	 * an anonymous one (a detached tree: it has no inode number).
	 */
	if (own_ns) {
		struct mount *top = c->mnt;
		struct mnt_namespace *ns = BPF_CORE_READ(top, mnt_ns);

		if (!ns || !BPF_CORE_READ(ns, ns.inum) || BPF_CORE_READ(ns, root) != top)
			return -ENOENT;
		return 0;
	}
	ns_root = task->nsproxy->mnt_ns->root;	/* BTF loads: no helper calls */
	if (!ns_root || c->mnt != ns_root)
		return -ENOENT;
	return 0;
}

static __always_inline int resolve_path(struct vfsmount *vfsmnt, struct dentry *dentry,
					struct walk_ctx *c)
{
	return resolve_path_in(vfsmnt, dentry, c, false);
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

#endif
