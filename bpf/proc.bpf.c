// SPDX-License-Identifier: GPL-2.0
/*
 * Other processes (BPF-LSM): a run's processes may act on each other and on
 * nothing outside the run.  ptrace and everything gated like it, signals
 * (and the F_SETOWN owners that receive them without the signal hook),
 * clone3 into another cgroup, the task_* controls (nice, I/O priority,
 * scheduling, memory placement, prlimit), new user namespaces, and the
 * kernel's keys: a run may use the keys its own processes allocated.
 * Records: kind "proc", errno EPERM (EACCES for keys), reason forbidden;
 * none of it is relaxed by mode: audit.
 */
#include "bpf/lib/decide.h"

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
 * Keys.  The kernel's keyrings are reachable by id from anywhere, with
 * permissions by uid (a root run shares root's, a nobody run every other
 * nobody's), and hold credentials: a run may use the keys its own processes
 * allocated and nothing else.  run_keys maps each such key (its address) to
 * the run's cgroup id: cgroup ids are never reused, so a key outliving its
 * run stays nobody's.  Freed keys leave the map (tether_key_free); a key
 * allocated later at the same address is not entered unless a run made it.
 */
#define KEY_ALLOC_UID_KEYRING	0x0010
#define PERSISTENT_PREFIX	"_persistent."	/* the persistent keyring: "_persistent.UID" */

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
	char desc[sizeof(PERSISTENT_PREFIX)] = "";

	if (ret)
		return ret;
	run = current_run(&cgid);
	if (!run || (flags & KEY_ALLOC_UID_KEYRING))
		return 0;
	/*
	 * The uid's persistent keyring (keyctl_get_persistent) outlives the
	 * run by days, linked from the user namespace: a run that made it
	 * would leave keys there that count in the uid's quota, which every
	 * later run reads in /proc/key-users.  No run makes it.
	 */
	if (bpf_probe_read_kernel_str(desc, sizeof(desc), BPF_CORE_READ(key, description)) ==
	    sizeof(desc)) {
		bool persistent = true;

		for (int i = 0; i < (int)sizeof(PERSISTENT_PREFIX) - 1; i++)
			persistent &= desc[i] == PERSISTENT_PREFIX[i];
		if (persistent)
			return deny_key(run, cgid, key);
	}
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

