// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcement table (see fields.h).  Mechanisms name the hook, limit or
 * step; a NOT_ENFORCED row says what is missing, in words a reviewer can act on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policyc/policy.h"

#include "policyc/fields.h"

const char tp_term_letters[TP_TERM_COUNT] = { 'K', 'P', 'F', 'N', 'I', 'R', 'T', 'C' };

const char *const tp_term_names[TP_TERM_COUNT] = {
	[TP_TERM_K] = "kernel and system-call boundary",
	[TP_TERM_P] = "process, user, IPC and tenant isolation",
	[TP_TERM_F] = "filesystem, mount, device and artifact isolation",
	[TP_TERM_N] = "network egress",
	[TP_TERM_I] = "workload identity and credentials",
	[TP_TERM_R] = "resource control",
	[TP_TERM_T] = "workspace lifetime, cleanup and remanence",
	[TP_TERM_C] = "control plane, audit and configuration",
};

#define ROW(f, t, status, restricts, former_gap, m) \
	(&(const struct tp_field_info){ f, TP_TERM_##t, status, restricts, former_gap, m })
#define ENFORCED(f, t, m) ROW(f, t, TP_ENFORCED, false, false, m)
/* Enforced now, a gap of an earlier version (tp_field_info.former_gap). */
#define NOW_ENFORCED(f, t, m) ROW(f, t, TP_ENFORCED, false, true, m)
#define RECORDED(f, t, m) ROW(f, t, TP_RECORDED, false, false, m)
#define GAP(f, t, m) ROW(f, t, TP_NOT_ENFORCED, true, false, m)
#define NOT_ENFORCED(f, t, m) ROW(f, t, TP_NOT_ENFORCED, false, false, m)
/* A limit's row lives with the rest of what tether knows about it (limits.c). */
#define LIMIT(l) (&tp_limits[TP_LIMIT_##l].row)

const struct tp_field_info *const tp_fields[] = {
	/* K */
	ENFORCED("@syscalls", K,
		 "every call the Docker and Podman default seccomp profiles refuse is refused "
		 "(docs/kernel-surface.md): BPF-LSM inode_init_security_anon refuses userfaultfd "
		 "and io_uring instances, recorded; the dropped capabilities refuse module, kexec, "
		 "clock, swap, reboot and namespace calls, recorded; a seccomp filter (x86-64 and "
		 "i386; x32 refused) fails the rest with EPERM, unrecorded: open_by_handle_at, "
		 "request_key, the new mount API, NUMA policy, fanotify_init, quotactl, "
		 "personality flags, obsolete calls"),
	ENFORCED("@kernel_load", K,
		 "BPF-LSM bpf, kernel_load_data, kernel_read_file, kernel_module_request: no bpf(), "
		 "module, firmware or kexec image loads from a run; BPF-LSM perf_event_open, "
		 "userns_create (no new user namespace), key_permission (no keyctl on keys outside "
		 "the run's own session keyring), syslog and settime; no write to cgroup, bpf, "
		 "securityfs, debugfs or tracefs files (by superblock)"),
	ENFORCED("@capabilities", K,
		 "every capability dropped from all five sets (effective, permitted, inheritable, "
		 "bounding, ambient) and the securebits locked before exec, with no_new_privs: "
		 "no setuid or file-capability binary gives one back; BPF-LSM capable refuses "
		 "(and records) any capability check that would still succeed"),
	/* P */
	ENFORCED("@process_tree", P,
		 "clone3(CLONE_INTO_CGROUP) places the first process in the run's cgroup; "
		 "BPF-LSM task_alloc refuses CLONE_INTO_CGROUP out of it"),
	ENFORCED("@signals_ptrace", P,
		 "BPF-LSM task_kill, file_fcntl (F_SETOWN), ptrace_access_check and "
		 "ptrace_traceme: no signal, SIGIO, ptrace or /proc/PID/fd access to processes "
		 "outside the run; task_setnice, task_setioprio, task_setscheduler, "
		 "task_prlimit and task_movememory: no changing their priority, scheduling, "
		 "limits or memory placement"),
	ENFORCED("@unix_sockets", P,
		 "BPF-LSM unix_stream_connect and unix_may_send: no unix socket of a process outside "
		 "the run unless a rule grants CONNECT at its path or lists its abstract name"),
	/* F */
	ENFORCED("@private_trees", F,
		 "a mount and an IPC namespace per run: fresh tmpfs at /tmp, /var/tmp, /dev/shm "
		 "and HOME (/run/tether/home), a fresh /dev/mqueue and SysV IPC, seen by no other "
		 "run and gone with the run's last process; the run cannot mount or unmount"),
	ENFORCED("filesystem.root", F,
		 "BPF-LSM file_open, path_*, mmap_file and file_mprotect: "
		 "the host tree is readable, never writable, and executable unless exec is given; "
		 "the built-in protected paths (/etc/shadow, /root, /home, ...) and other "
		 "processes' /proc entries are not even readable"),
	ENFORCED("filesystem.inputs.path", F,
		 "BPF-LSM: a rule without write access at the input's path"),
	ENFORCED("filesystem.inputs.mode", F, "read_only: as filesystem.inputs.path"),
	NOW_ENFORCED("filesystem.inputs.digest", F,
		     "before the command exists the controller hashes the input as it copies it "
		     "onto a read-only tmpfs and refuses the run when the digest differs; the run "
		     "reads that copy, bound over the input's path"),
	ENFORCED("filesystem.workspace.path", F,
		 "BPF-LSM read and write rule; the controller creates the directory and refuses "
		 "one reached through a symlink or below a directory others can write"),
	ENFORCED("filesystem.read", F,
		 "BPF-LSM file_open: a read-only open (directories included) needs a rule that "
		 "grants READ"),
	ENFORCED("filesystem.workspace.write", F,
		 "BPF-LSM write rules inside the workspace (longest prefix on component boundaries)"),
	ENFORCED("filesystem.write", F, "BPF-LSM write rules (longest prefix on component boundaries)"),
	GAP("filesystem.exact_paths", F,
	    "kernel path rules in this version cover a path and everything beneath it, so an "
	    "exact grant also grants what is created beneath that path"),
	NOW_ENFORCED("filesystem.exec", F,
		     "BPF-LSM file_open of every file the kernel executes (binaries, #! and ELF "
		     "interpreters), mmap_file and file_mprotect (PROT_EXEC file mappings): only "
		     "where a rule grants EXEC; a writable path loses EXEC unless exec names it "
		     "(W^X)"),
	NOW_ENFORCED("filesystem.deny", F,
		     "BPF-LSM: a rule that grants nothing: no read, write or exec beneath it, and "
		     "neither it nor a directory above it can be renamed or removed"),
	ENFORCED("filesystem.connect", F,
		 "BPF-LSM unix_stream_connect and unix_may_send: a unix socket of a process outside "
		 "the run is reachable only at a path a connect entry grants, wherever the run may "
		 "write"),
	ENFORCED("filesystem.abstract_sockets", F,
		 "BPF-LSM unix_stream_connect and unix_may_send: an abstract unix socket of a process "
		 "outside the run is reachable only by a name listed here"),
	ENFORCED("filesystem.devices", F,
		 "BPF-LSM file_open by device number (null, zero, full, random, urandom, tty, ptmx, "
		 "the ptys the run allocated) and path_mknod: no other device can be opened or "
		 "created"),
	/* N */
	ENFORCED("@socket_families", N,
		 "BPF-LSM socket_create and capable: only unix, TCP, UDP and netlink route sockets, "
		 "and no CAP_NET_ADMIN (links, routes, qdiscs)"),
	ENFORCED("@loopback", N,
		 "cgroup connect4/6, sendmsg4/6 and cgroup_skb: on loopback the run reaches its own "
		 "sockets (socket storage set when it binds or connects them) and no other "
		 "listener without a rule; cgroup_skb/ingress drops other peers' packets and "
		 "records the first per peer and port"),
	NOW_ENFORCED("network_egress.default", N,
		     "cgroup connect4/6 and sendmsg4/6 refuse (EPERM) every destination no rule "
		     "lists, loopback and link-local included, and cgroup_skb/egress drops every "
		     "other packet of the run (ICMP, IP options, IPv6 routing headers)"),
	ENFORCED("network_egress.allowed_destinations", N,
		 "address blocks and ports per protocol in an LPM trie keyed by run, IPv4 as "
		 "IPv4-mapped IPv6; hostnames through the run's DNS proxy"),
	ENFORCED("network_egress.dns", N,
		 "DNS (port 53) to any address goes to the controller's proxy: listed names are "
		 "asked upstream and their answers allowed until the TTL ends, others are REFUSED; "
		 "answers in loopback or private ranges are refused unless an address rule covers "
		 "them, link-local and metadata answers always"),
	GAP("network_egress.methods", N,
	    "HTTP methods need an HTTP-aware proxy; tether filters addresses and ports only"),
	LIMIT(EGRESS_BYTES),
	/* I */
	RECORDED("identity.tenant", I, "recorded in the policy, its digest and the run record"),
	RECORDED("identity.run_id", I, "recorded in the policy, its digest and the run record"),
	NOW_ENFORCED("identity.uid", I,
		     "setresuid() to the uid before exec (default 65534, nobody), with every "
		     "capability dropped: uid 0 owns root's files and nothing more; a fresh "
		     "session keyring"),
	NOW_ENFORCED("identity.gid", I,
		     "setresgid() to the gid (default: the uid) and setgroups() to none before "
		     "exec: no supplementary groups"),
	ENFORCED("environment", I,
		 "the run's environment is built from an allow list before exec: PATH, LANG, "
		 "LANGUAGE, LC_*, TERM, TZ and the listed names, when the controller has them; "
		 "tether sets TMPDIR (the run's private /tmp), and HOME to the run's private "
		 "home unless HOME is listed; every other variable is dropped"),
	GAP("cleanup.revoke_credentials", I,
	    "tether issues no credentials and cannot revoke ones the run obtained"),
	/* R */
	LIMIT(CPU_MILLI),
	LIMIT(MEMORY_BYTES),
	LIMIT(PROCESS_COUNT),
	LIMIT(DISK_BYTES),
	LIMIT(OPEN_FILES),
	LIMIT(OUTPUT_BYTES),
	LIMIT(WALL_CLOCK_MS),
	LIMIT(WORKSPACE_BYTES),
	/* T */
	ENFORCED("cleanup.verify_process_tree", T,
		 "cgroup.kill, then cgroup.events must read populated 0 before the run's cgroup "
		 "and map entries are removed; a tree that does not empty is reported"),
	LIMIT(LEASE_MS),
	NOW_ENFORCED("filesystem.workspace.mode", T,
		     "fresh_overlay: the controller copies the source onto the run's own file "
		     "system and mounts an overlay of it at the workspace, in the run's mount "
		     "namespace only; the run's writes go to the upper layer, the source is never "
		     "written"),
	NOW_ENFORCED("filesystem.workspace.source", T,
		     "the lower layer of a fresh_overlay workspace: a copy, owned by the run's uid, "
		     "made before the command exists; its tree digest is in the start record"),
	NOW_ENFORCED("workspace_lifetime", T,
		     "one_run (needs a fresh workspace): the workspace is a tmpfs of the run's own, "
		     "mounted in its mount namespace only and gone when the run ends; nothing of it "
		     "is on the host's disk"),
	NOW_ENFORCED("artifacts", T,
		     "when the tree is empty the controller copies each declared regular file (one "
		     "link, no setuid or setgid; mode 0644) to tether run --artifacts DIR, its size "
		     "and sha256 recorded before it is published; links, devices, FIFOs, sockets and "
		     "undeclared files are refused with a record; scan: findings go to "
		     "DIR.quarantine"),
	GAP("image_digest", T,
	    "tether starts the command from the host's file system; it does not pull or verify images"),
	/* C */
	ENFORCED("mode", C,
		 "enforce: every hook denies what no rule grants; audit: the reads and execs a path "
		 "rule would deny are allowed and recorded (decision would_deny); writes, unix "
		 "connections, the protected paths and what no rule can grant stay denied"),
	RECORDED("runtime_revision", C, "recorded in the policy, its digest and the run record"),
	ENFORCED("audit.sink", C,
		 "JSON Lines from the run's own BPF ring buffer, with sequence numbers and a "
		 "count of lost records"),
	ENFORCED("audit.record_allowed", C,
		 "records allowed write operations and execs as well as denials"),
	NOW_ENFORCED("audit.fail_closed", C,
		     "allowed writes, execs and connections are recorded (as with record_allowed); "
		     "an action allowed with a record (those, and mode: audit's would-deny) whose "
		     "record cannot be reserved in the run's ring is denied (EACCES for files and "
		     "exec, EPERM for network) and counted in the end record's audit_refused"),
	NULL,
};

const struct tp_field_info *tp_field_find(const char *field)
{
	for (const struct tp_field_info *const *row = tp_fields; *row; row++)
		if (strcmp((*row)->field, field) == 0)
			return *row;
	return NULL;
}

const char *tp_field_mechanism(const char *field)
{
	const struct tp_field_info *row = field ? tp_field_find(field) : NULL;

	return row ? row->mechanism : NULL;
}

static bool policy_has_gap(const struct tp_policy *policy, const char *field)
{
	for (size_t i = 0; i < policy->gap_count; i++)
		if (strcmp(policy->gaps[i], field) == 0)
			return true;
	return false;
}

int tp_policy_check_gaps(const struct tp_policy *policy, char *why, size_t why_len)
{
	const char *needed[TP_LIMIT_COUNT + 24];
	size_t n = 0;
	bool exact = false;

	if (policy->mode > TP_MODE_AUDIT) {
		snprintf(why, why_len, "its mode %u is unknown", policy->mode);
		return -EINVAL;
	}
	for (size_t i = 0; i < policy->path_rule_count; i++) {
		exact |= policy->path_rules[i].kind == TP_PATH_EXACT &&
			 policy->path_rules[i].access != 0;
	}
	if (exact)
		needed[n++] = "filesystem.exact_paths";
	if (policy->flags & TP_POLICY_IMAGE_DIGEST)
		needed[n++] = "image_digest";
	if (policy->method_count)
		needed[n++] = "network_egress.methods";
	if (policy->flags & TP_POLICY_REVOKE_CREDENTIALS)
		needed[n++] = "cleanup.revoke_credentials";
	/* Limits; those this version enforces pass below. */
	for (size_t i = 0; i < TP_LIMIT_COUNT; i++)
		if (policy->limits[i])
			needed[n++] = tp_limits[i].row.field;

	for (size_t i = 0; i < n; i++) {
		const struct tp_field_info *info = tp_field_find(needed[i]);

		if (info && info->status == TP_NOT_ENFORCED && !policy_has_gap(policy, needed[i])) {
			snprintf(why, why_len, "it relies on '%s', which this version does not enforce "
				 "(%s), without acknowledging it", needed[i], info->mechanism);
			return -EINVAL;
		}
	}
	return 0;
}
