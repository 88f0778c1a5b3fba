/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Audit records written by the BPF programs into a run's ring buffer and
 * decoded by runtime/audit.c.  Every record starts with struct tether_event_hdr;
 * `kind` says which body follows and `size` is the whole record's length.
 *
 * `seq` is per run, handed out by the kernel in reservation order and starting
 * at 1, so a gap in the stream is visible; records that found the ring full
 * are counted in struct tether_run.audit_lost instead.
 */
#ifndef TETHER_ABI_EVENT_H
#define TETHER_ABI_EVENT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "bpf/abi/rules.h"	/* enum tether_access, for the width check below */

#define TETHER_COMM_LEN		16
#define TETHER_EVENT_PATH_MAX	256

/*
 * What a record is about.  The number also says which body follows the
 * header: NET has struct tether_net_event, every other kernel kind has
 * struct tether_fs_event (its `op` an enum tether_fs_op, whatever the
 * kind).  DNS and RUN are the controller's own records and never come from
 * the kernel.  Record version 2: until then every BPF-LSM record was FS;
 * tether_fs_op_kind() gives each operation its kind (docs/audit.md, "Record
 * kinds", has the old -> new mapping).  Numbers are never reused.
 */
enum tether_event_kind {
	TETHER_EVENT_FS		= 1,	/* files, exec, mounts, xattrs, ioctls, devices */
	TETHER_EVENT_NET	= 2,	/* cgroup-BPF egress and sockets (net body) */
	TETHER_EVENT_PROC	= 3,	/* other processes: ptrace, signals, task_*, keys, userns */
	TETHER_EVENT_CAPABILITY	= 4,	/* a refused capability */
	TETHER_EVENT_KERNEL	= 5,	/* bpf(), module/firmware loads, perf, syslog, clock, userfaultfd, io_uring */
	TETHER_EVENT_UNIX	= 6,	/* unix socket peers */
	TETHER_EVENT_NET_SOCKET	= 7,	/* BPF-LSM socket_create: kind "net", fs body */
	TETHER_EVENT_DNS	= 8,	/* controller: the run's DNS proxy */
	TETHER_EVENT_RUN	= 9,	/* controller: run transitions */
};
#define TETHER_RECORD_VERSION	2

enum tether_net_op {
	TETHER_NET_CONNECT   = 1,	/* connect(2), io_uring connect, TCP fast open */
	TETHER_NET_SENDMSG   = 2,	/* a datagram sent with a destination address */
	TETHER_NET_PACKET    = 3,	/* a packet cgroup_skb/egress dropped */
	TETHER_NET_EGRESS_BUDGET = 4,	/* the egress byte cap was reached */
	TETHER_NET_SOCKET_CREATE = 5,	/* cgroup/sock_create refused an inet socket */
	TETHER_NET_BIND      = 6,	/* bind(2) to a fixed port no loopback rule lists */
	TETHER_NET_SETSOCKOPT = 7,	/* a refused socket option; protocol: level, port: name */
	TETHER_NET_INGRESS   = 8,	/* the first packet cgroup_skb/ingress dropped from a peer and port */
};

enum tether_fs_op {
	TETHER_FS_OPEN_WRITE = 1,
	TETHER_FS_CREATE     = 2,	/* mknod, including open(O_CREAT) of a new file */
	TETHER_FS_UNLINK     = 3,
	TETHER_FS_MKDIR      = 4,
	TETHER_FS_RMDIR      = 5,
	TETHER_FS_RENAME     = 6,	/* path is the side that was refused */
	TETHER_FS_LINK       = 7,
	TETHER_FS_SYMLINK    = 8,
	TETHER_FS_TRUNCATE   = 9,
	TETHER_FS_CHMOD      = 10,
	TETHER_FS_CHOWN      = 11,
	TETHER_FS_MOUNT      = 12,	/* mount(2), fsmount, bind mounts */
	TETHER_FS_UMOUNT     = 13,
	TETHER_FS_PIVOT_ROOT = 14,
	TETHER_FS_MOVE_MOUNT = 15,
	TETHER_FS_SETXATTR   = 16,
	TETHER_FS_REMOVEXATTR = 17,
	TETHER_FS_UTIMES     = 18,	/* utimes, utimensat, futimens */
	TETHER_FS_SET_ACL    = 19,	/* POSIX ACLs (6.2+: no longer through setxattr) */
	TETHER_FS_REMOVE_ACL = 20,
	TETHER_FS_IOCTL      = 21,	/* an ioctl that changes a file or a filesystem */
	TETHER_FS_TTY_INJECT = 22,	/* TIOCSTI / TIOCLINUX: typing into a terminal */
	TETHER_FS_CLONE_INTO_CGROUP = 23, /* clone3(CLONE_INTO_CGROUP): leaving the run */
	TETHER_FS_MKNOD_DEVICE = 24,	/* mknod of a character or block device */
	TETHER_FS_OPEN_DEVICE = 25,	/* a write-open of a device that is not built in */
	TETHER_FS_PTRACE     = 26,	/* ptrace-class access to a process outside the run */
	TETHER_FS_UNIX_CONNECT = 27,	/* connect to a unix stream socket */
	TETHER_FS_UNIX_SEND  = 28,	/* send to a unix datagram socket */
	TETHER_FS_BPF        = 29,	/* the bpf() syscall */
	TETHER_FS_KERNEL_LOAD = 30,	/* init_module, finit_module, firmware, kexec images */
	TETHER_FS_MODULE_REQUEST = 31,	/* a module autoload; path holds the module name */
	TETHER_FS_SIGNAL     = 32,	/* a signal to a process outside the run */
	TETHER_FS_OPEN_READ  = 33,	/* an open for reading only, directories included */
	TETHER_FS_EXEC       = 34,	/* execve/execveat/fexecve: a binary, a script or its interpreter */
	TETHER_FS_MMAP_EXEC  = 35,	/* mmap of a file with PROT_EXEC (shared libraries) */
	TETHER_FS_MPROTECT_EXEC = 36,	/* mprotect adding PROT_EXEC to a file mapping */
	TETHER_FS_SOCKET_CREATE = 37,	/* a socket of a refused family; path: "FAMILY/TYPE/PROTOCOL" */
	/*
	 * A refused capability.  path: its number in decimal ("12"), which the
	 * controller writes as the name ("cap_net_admin").  Either tether
	 * refused a check the capability module allowed, or (recorded after
	 * the fact) the capability module refused one: the file permission
	 * capabilities (dac_override, dac_read_search, fowner, fsetid) are
	 * not recorded then.
	 */
	TETHER_FS_CAPABILITY = 38,
	TETHER_FS_USERNS     = 39,	/* a new user namespace (unshare, clone) */
	TETHER_FS_PERF_EVENT = 40,	/* perf_event_open(2) */
	TETHER_FS_SYSLOG     = 41,	/* syslog(2); path: the action number in decimal */
	TETHER_FS_SETTIME    = 42,	/* setting the system clock */
	TETHER_FS_KEY        = 43,	/* a key the run did not allocate; path: its description */
	/* scheduling, nice, I/O priority, CPU affinity, resource limits or memory
	 * placement of a process outside the run; path is empty */
	TETHER_FS_TASK_CONTROL = 44,
	/* a userfaultfd or io_uring instance (a secure anonymous inode); path: its
	 * name, "[userfaultfd]" or "[io_uring]" */
	TETHER_FS_ANON_INODE = 45,
};

/*
 * The kind of a record with an fs body, by its operation: one table for the
 * BPF programs (which write it into the header) and the documentation.
 * always_inline: every BPF call site passes a constant, which folds.
 */
static inline __attribute__((always_inline)) __u16 tether_fs_op_kind(__u32 op)
{
	switch (op) {
	case TETHER_FS_CLONE_INTO_CGROUP:
	case TETHER_FS_PTRACE:
	case TETHER_FS_SIGNAL:
	case TETHER_FS_USERNS:
	case TETHER_FS_KEY:
	case TETHER_FS_TASK_CONTROL:
		return TETHER_EVENT_PROC;
	case TETHER_FS_CAPABILITY:
		return TETHER_EVENT_CAPABILITY;
	case TETHER_FS_BPF:
	case TETHER_FS_KERNEL_LOAD:
	case TETHER_FS_MODULE_REQUEST:
	case TETHER_FS_PERF_EVENT:
	case TETHER_FS_SYSLOG:
	case TETHER_FS_SETTIME:
	case TETHER_FS_ANON_INODE:
		return TETHER_EVENT_KERNEL;
	case TETHER_FS_UNIX_CONNECT:
	case TETHER_FS_UNIX_SEND:
		return TETHER_EVENT_UNIX;
	case TETHER_FS_SOCKET_CREATE:
		return TETHER_EVENT_NET_SOCKET;
	default:
		return TETHER_EVENT_FS;
	}
}

enum tether_decision {
	TETHER_DECISION_ALLOW = 0,
	TETHER_DECISION_DENY  = 1,
	TETHER_DECISION_WOULD_DENY = 2,	/* mode: audit: allowed, enforce mode would deny */
};

/* Why the decision was made. */
enum tether_reason {
	TETHER_REASON_RULE         = 0,	/* a rule matched; rule_id names it */
	TETHER_REASON_DEFAULT_DENY = 1,	/* no rule grants the access */
	TETHER_REASON_UNRESOLVED   = 2,	/* the path could not be resolved: denied */
	TETHER_REASON_FORBIDDEN    = 3,	/* no rule can grant the operation (mounts) */
	TETHER_REASON_PROTECTED    = 4,	/* a built-in protected path or another process's /proc */
	TETHER_REASON_EXPIRED      = 5,	/* the DNS answer that admitted the address expired */
	TETHER_REASON_BUDGET       = 6,	/* network_egress.max_bytes is spent */
	TETHER_REASON_DNS_PROXY    = 7,	/* allowed: DNS sent to the run's DNS proxy */
	TETHER_REASON_OWN_SOCKET   = 8,	/* allowed: loopback to a socket of the run's own */
	TETHER_REASON_NO_LISTENER  = 9,	/* allowed: loopback TCP to a port nobody listens on */
	/*
	 * The kernel's own permission check refused an open or an exec before
	 * any tether hook was asked (mode bits, ACLs, noexec, append-only,
	 * immutable): recorded after the fact by fexit/may_open (fs.bpf.c).
	 * err is what the kernel returned (EACCES or EPERM); no rule decided.
	 */
	TETHER_REASON_PERMISSION   = 10,
};

#define TETHER_FS_PATH_TRUNCATED	(1u << 0)
/* The path starts at the root of the object's filesystem, not of the mount
 * namespace: the hook had no mount to walk through (setxattr, removexattr). */
#define TETHER_FS_PATH_FS_RELATIVE	(1u << 1)
/* The path is relative to the deciding rule's path (allowed xattr changes:
 * the identity walk stops at the writable root it found). */
#define TETHER_FS_PATH_BELOW_RULE	(1u << 2)

struct tether_event_hdr {
	__u16 kind;		/* enum tether_event_kind */
	__u16 size;		/* bytes of the whole record */
	__u32 run_slot;
	__u64 cgroup_id;	/* the run's cgroup */
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id */
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 seq;
};

struct tether_fs_event {
	struct tether_event_hdr hdr;
	__u32 op;		/* enum tether_fs_op */
	__u32 decision;		/* enum tether_decision */
	__s32 err;		/* negative errno returned to the caller, 0 if allowed */
	__u32 reason;		/* enum tether_reason */
	__u32 rule_id;		/* reason RULE or PROTECTED; TETHER_RULE_NONE: no rule */
	__u32 access;		/* requested enum tether_access bits */
	__u32 flags;		/* TETHER_FS_PATH_TRUNCATED */
	__u32 uid;
	__u32 ppid;		/* the asking process's parent (real_parent's tgid) */
	__u32 reserved;
	char comm[TETHER_COMM_LEN];
	char path[TETHER_EVENT_PATH_MAX];	/* NUL-terminated */
	/* the executable of the process that asked, resolved like path; "" if unknown */
	char exe[TETHER_EVENT_PATH_MAX];
	/* the executable of its parent, the same way */
	char parent_exe[TETHER_EVENT_PATH_MAX];
};

/*
 * A network decision.  Addresses in the mapped form of rules.h.  Packet
 * records (op PACKET, EGRESS_BUDGET) have pid, tgid and uid 0 and an empty
 * comm: a packet may leave from interrupt context (retransmits, ACKs),
 * where the current task is not the sender.
 */
#define TETHER_NET_DNS_REDIRECTED	(1u << 0)	/* sent to the DNS proxy instead */
struct tether_net_event {
	struct tether_event_hdr hdr;
	__u32 op;		/* enum tether_net_op */
	__u32 decision;		/* enum tether_decision */
	__s32 err;		/* negative errno, 0 if allowed */
	__u32 reason;		/* enum tether_reason */
	__u32 rule_id;		/* TETHER_RULE_NONE, a rule index, or TETHER_NET_RULE_HOST | index */
	__u16 family;		/* AF_INET / AF_INET6: of the socket, or of the packet */
	__u16 type;		/* SOCK_STREAM, SOCK_DGRAM, ...; 0 for packets */
	__u16 protocol;		/* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, ... */
	__u16 port;		/* destination port, host byte order */
	__u8 addr[16];		/* destination */
	__u32 uid;
	__u32 flags;		/* TETHER_NET_DNS_REDIRECTED */
	__u64 bytes;		/* EGRESS_BUDGET: the cap; PACKET: the packet's length */
	char comm[TETHER_COMM_LEN];
};

_Static_assert(sizeof(struct tether_net_event) == 40 + 24 + 8 + 16 + 16 + 16, "net event layout");
_Static_assert(sizeof(struct tether_event_hdr) == 40, "event header layout");
_Static_assert(sizeof(struct tether_fs_event) == 40 + 40 + 16 + 3 * 256, "fs event layout");
/* tether_event_hdr.kind is a __u16; tether_fs_event.access holds every enum tether_access bit */
_Static_assert(TETHER_EVENT_RUN <= 0xffff, "event kinds fit the header's kind field");
_Static_assert(TETHER_ACCESS_WIDTH <= 8 * sizeof(((struct tether_fs_event *)0)->access),
	       "fs event access width");
/* the record's path flags stay clear of bit 31, which the BPF side uses in passing (FS_HARD_DENY) */
_Static_assert((TETHER_FS_PATH_TRUNCATED | TETHER_FS_PATH_FS_RELATIVE | TETHER_FS_PATH_BELOW_RULE) <
		       (1u << 31),
	       "fs event flags width");

#endif
