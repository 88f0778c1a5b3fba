// SPDX-License-Identifier: GPL-2.0
/*
 * Filesystem confinement (BPF-LSM): what a run may read, write and execute,
 * and the file hooks that keep it from borrowing access it was not given.
 *
 * Every right comes from a path rule (bpf/abi/rules.h gives the matching
 * semantics):
 *   READ     read-only opens, directories included (file_open);
 *   WRITE    other opens, O_TRUNC, creation of any kind, unlink, rmdir,
 *            rename, link, symlink, truncate, chmod, chown, modifying
 *            ioctls; xattrs, ACLs and timestamps by inode identity;
 *   EXEC     every file the kernel executes (file_open of open_exec()) and
 *            every PROT_EXEC file mapping (mmap_file, file_mprotect).
 * Devices are opened by number (null, zero, tty, the run's own ptys, ...),
 * never by path, and no device node can be created.  Built-in protected
 * paths and /proc of other processes are refused as "protected".  Everything
 * else is denied with EACCES (EPERM for what no rule can grant: mounts, device
 * nodes, TIOCSTI) and recorded.  In mode: audit, what a rule decided is
 * recorded and let through, except what protects the node (relaxed()).
 *
 * The other BPF-LSM concerns are objects of their own: proc.bpf.c (other
 * processes, keys, user namespaces), kernel.bpf.c (capabilities, bpf(),
 * kernel loads, perf, syslog, the clock), sock.bpf.c (socket families, unix
 * peers).  The path walk and the decision are bpf/lib/path.h and decide.h.
 */
#include "bpf/lib/decide.h"

#define O_TRUNC			00001000
#define PIPEFS_MAGIC		0x50495045
#define SOCKFS_MAGIC		0x534F434B
#define ANON_INODE_FS_MAGIC	0x09041934
#define PIDFS_MAGIC		0x50494446	/* 6.9+: pidfds are files of their own fs */
#define NSFS_MAGIC		0x6e736673
#define MQUEUE_MAGIC		0x19800202	/* POSIX message queues */

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

/* include/linux/mount.h: the mount namespace of a kernel-internal mount */
#define MNT_NS_INTERNAL		((void *)-22L)

/*
 * overlayfs's own opens on a fresh_overlay run's layers: copy-up reading the
 * lower file and writing the upper one, readdir of a merged directory and,
 * from 6.6 on, the "backing file" it opens on a layer for each open of an
 * overlay file (6.1 gives that one the overlay path: open_with_fake_path).
 * The layers are on the run's own file system (tether_run.layer_dev),
 * reached only through overlayfs's private clones of their mounts, which no
 * path names and nothing of the run can open; what the run asked for, the
 * open or exec of the overlay file, was decided on the workspace's path
 * before overlayfs acted.  Mappings are not let through here: a mapping of
 * a 6.6+ backing file made executable later (file_mprotect) has no
 * workspace path to decide on and stays refused.
 */
static __always_inline bool overlay_layer_open(const struct tether_run *run, struct inode *inode,
					       struct vfsmount *vfsmnt)
{
	if (!run->layer_dev || inode->i_sb->s_dev != run->layer_dev)
		return false;
	return BPF_CORE_READ(real_mount(vfsmnt), mnt_ns) == MNT_NS_INTERNAL;
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
	if (overlay_layer_open(run, inode, vfsmnt))
		return 0;
	if (magic == PROC_SUPER_MAGIC && proc_of_other_process(inode, dentry, cgid))
		access |= TETHER_ACCESS_PROTECTED;
	/*
	 * mq_open opens its queue on the kernel's own mqueue mount of the
	 * caller's IPC namespace, which no path names.  Every run has an IPC
	 * namespace of its own, so a queue there is the run's own: allowed.
	 */
	if (magic == MQUEUE_MAGIC && !(access & TETHER_ACCESS_EXEC) &&
	    vfsmnt == BPF_CORE_READ(bpf_get_current_task_btf(), nsproxy, ipc_ns, mq_mnt))
		return 0;
	return decide(run, cgid,
		      access & TETHER_ACCESS_EXEC    ? TETHER_FS_EXEC
		      : access & TETHER_ACCESS_WRITE ? TETHER_FS_OPEN_WRITE
						     : TETHER_FS_OPEN_READ,
		      vfsmnt, dentry, MATCH_OBJECT, access, -EACCES);
}

/* include/linux/fs.h: the rights an open asks the kernel's permission check for */
#define MAY_EXEC		0x00000001
#define MAY_WRITE		0x00000002
#define MAY_READ		0x00000004
#define MAY_APPEND		0x00000008

/*
 * The kernel's own refusal of an open or an exec, recorded after the fact
 * (reason "permission").  Opens and execs meet the kernel's permission
 * check in may_open() (fs/namei.c, do_open()): the mode bits and ACLs
 * (inode_permission), a noexec mount, exec of what is not a regular file,
 * append-only and immutable files, O_NOATIME on another's file.  That check
 * runs before vfs_open() and so before file_open above: a refusal there never
 * reaches tether's hooks, and without this a non-root run's "permission
 * denied" would leave no record.  Exactly one of the two can refuse an open:
 * may_open() fails and file_open is never asked, or it succeeds (ret 0, not
 * recorded here) and file_open decides and records as always.  That holds
 * as long as tether has no inode_permission hook, which may_open() would
 * ask: a denial of such a hook would be recorded twice.
 *
 * may_open() is static but has a symbol and BTF on every supported kernel
 * (6.1, 6.12); its first argument changed type in 6.3 (user_namespace ->
 * mnt_idmap), which this program never reads.  Outsiders pay the
 * trampoline and one compare: only EACCES and EPERM go on to the run
 * lookup.  The record: the open's op and access (as file_open would name
 * them), the resolved path (the object the kernel refused, symlinks
 * followed; empty when it has no name in the caller's namespace), errno the
 * kernel's, decision deny in every mode (mode: audit relaxes tether's own
 * rules, not the kernel's).  Checks this does not see: docs/audit.md,
 * "Refusals by the kernel's own permission checks".
 */
SEC("fexit/may_open")
int BPF_PROG(tether_open_refused, void *idmap, const struct path *path, int acc_mode, int flag,
	     int ret)
{
	struct tether_run *run;
	struct walk_scratch *s;
	struct walk_ctx c = {};
	__u32 access = 0, op, pos = 0, path_len = 0;
	__u64 cgid;

	if (ret != -EACCES && ret != -EPERM)
		return 0;
	run = current_run(&cgid);
	if (!run)
		return 0;
	if (acc_mode & MAY_READ)
		access |= TETHER_ACCESS_READ;
	if (acc_mode & (MAY_WRITE | MAY_APPEND))
		access |= TETHER_ACCESS_WRITE;
	if (acc_mode & MAY_EXEC)
		access |= TETHER_ACCESS_EXEC;
	op = access & TETHER_ACCESS_EXEC    ? TETHER_FS_EXEC
	     : access & TETHER_ACCESS_WRITE ? TETHER_FS_OPEN_WRITE
					    : TETHER_FS_OPEN_READ;
	s = claim_scratch(&c.slot);
	if (s && resolve_path(BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry), &c)) {
		release_scratch(s);
		s = NULL;
	}
	if (s) {
		pos = c.pos;
		if (pos > WALK_HALF)
			pos = WALK_HALF;
		path_len = WALK_HALF - pos;
	}
	/* FS_HARD_DENY: "deny" in mode: audit too; the kernel refused it either way */
	emit_fs_event(run, cgid, op, ret, TETHER_REASON_PERMISSION, TETHER_RULE_NONE, access, s,
		      pos, path_len, FS_HARD_DENY);
	if (s)
		release_scratch(s);
	return 0;
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
		int err = 0;

		/* the walk stopped at the writable root: the path names only the part below it */
		if ((run->flags & TETHER_RUN_AUDIT_ALLOWED) &&
		    !emit_fs_event(run, cgid, op, 0, TETHER_REASON_RULE, c.rule_id,
				   TETHER_ACCESS_WRITE, s, pos, path_len,
				   TETHER_FS_PATH_BELOW_RULE))
			err = unrecorded(run, -EACCES);
		release_scratch(s);
		return err;
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
