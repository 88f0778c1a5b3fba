// SPDX-License-Identifier: GPL-2.0
/*
 * How each run's main process ended (a tracepoint, no decision): the wait
 * status waitpid() would give its parent, kept in run_exit[run slot] for a
 * controller that is no longer that parent (a node agent restarted after a
 * crash re-adopts runs it did not fork).  bpf/abi/rules.h, struct
 * tether_run_exit, describes the entry and who writes which field.
 */
#include "bpf/lib/run.h"

/* include/linux/sched/signal.h (the same in 6.1 and 6.12); a define, not in BTF */
#define SIGNAL_GROUP_EXIT	0x00000004

/*
 * sched_process_exit fires in do_exit() for every exiting thread, in the
 * thread itself (tsk == current).  In 6.1 and 6.12 alike (kernel/exit.c)
 * the order there is:
 *
 *   synchronize_group_exit()   the last thread to start exiting sets
 *                              SIGNAL_GROUP_EXIT and group_exit_code = its
 *                              code, unless a group exit already did
 *   atomic_dec_and_test(&signal->live)
 *   tsk->exit_code = code; exit_mm()
 *   trace_sched_process_exit(tsk)        <- here
 *   ... cgroup_exit(tsk) ... exit_notify()
 *
 * so the task is still in its cgroup (current_run() finds the run), and
 * once live is 0 every thread has passed synchronize_group_exit(): the
 * group's status is final, and it is what wait_task_zombie() reports,
 * SIGNAL_GROUP_EXIT ? group_exit_code : the leader's exit_code.  Exit
 * codes are already in wait-status form there (do_exit gets
 * (code & 0xff) << 8 from exit and exit_group, the signal from a fatal
 * signal, with 0x80 or'd in by coredump_finish() after a dump).
 *
 * Without SIGNAL_GROUP_EXIT (not reachable with a dead group on these
 * kernels) the exiting task's own exit_code stands in for the leader's.
 *
 * A thread that decremented live earlier can reach this point after the
 * last one and see 0 too: the compare-and-swap on exit_ns lets one of
 * them write.  An exec does not end the group (the exec'ing thread lives
 * on as the leader, with the same tgid), so neither the exec nor the
 * threads de_thread() kills are recorded.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tether_sched_process_exit, struct task_struct *task)
{
	struct tether_run_exit *entry;
	struct signal_struct *signal;
	struct tether_run *run;
	__u32 slot, tgid, flags;
	__s32 status;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 0;
	slot = run->run_slot;
	entry = bpf_map_lookup_elem(&run_exit, &slot);
	if (!entry)
		return 0;
	/* the controller writes tgid from userspace: read it once */
	tgid = *(volatile __u32 *)&entry->tgid;
	if (!tgid || tgid != (__u32)(bpf_get_current_pid_tgid() >> 32))
		return 0;
	signal = BPF_CORE_READ(task, signal);
	if (BPF_CORE_READ(signal, live.counter) != 0)
		return 0;
	/* the claim: 0 until the first writer; bpf_ktime_get_boot_ns() is never 0 */
	if (__sync_val_compare_and_swap(&entry->exit_ns, 0, bpf_ktime_get_boot_ns()) != 0)
		return 0;
	flags = BPF_CORE_READ(signal, flags);
	if (flags & SIGNAL_GROUP_EXIT)
		status = BPF_CORE_READ(signal, group_exit_code);
	else
		status = BPF_CORE_READ(task, exit_code);
	*(volatile __s32 *)&entry->status = status;
	/* fully ordered: a reader that sees exited == 1 sees status and exit_ns */
	__sync_val_compare_and_swap(&entry->exited, 0, 1);
	return 0;
}
