/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map layouts shared by the BPF programs (bpf/) and the loader (loader/).
 *
 * A run is one cgroup.  Every run cgroup sits at the same level of the cgroup2
 * hierarchy (the loader sets `run_cgroup_level` before load), so a hook finds
 * its run with one lookup of the current task's ancestor cgroup at that level:
 * a process that creates a nested cgroup below its run cgroup still resolves to
 * the run, and a process outside every run costs a single hash miss.
 *
 *   runs:        u64 run cgroup id -> struct tether_run      (hash)
 *   path_rules:  struct tether_path_key -> struct tether_path_rule (LPM trie)
 *   audit_rings: u32 run_slot -> ring buffer of that run     (hash of maps)
 *   inode_rules: struct tether_inode_key -> struct tether_path_rule (hash)
 *   ptys:        struct tether_pty_key -> u64 master tty (hash, written by BPF)
 *   abstract_sockets: struct tether_abstract_key -> u8 (hash)
 *   net_rules:   struct tether_net_key -> struct tether_net_rule (LPM trie)
 *   dns_origins: socket -> struct tether_dns_origin (socket storage, BPF)
 *   run_seq:     u32 run_slot -> u64 last sequence number handed out (array,
 *                BPF_F_MMAPABLE: the controller takes numbers from the same
 *                counter with an atomic add on its mapping)
 *   run_keys:    u64 key address -> u64 run cgroup id (hash, written by BPF)
 *   run_exit:    u32 run_slot -> struct tether_run_exit (array: the exit
 *                status of the run's main process, written by BPF)
 *
 * Path rules are longest-prefix matches on component boundaries.  Both sides
 * store a directory as its absolute path followed by one '/':
 *
 *   rule "/work/ws"   -> key bytes "/work/ws/"   prefixlen 32 + 8 * 9
 *   rule "/"          -> key bytes "/"           prefixlen 32 + 8 * 1
 *   query "/work/ws/a/b" (the object itself)     -> "/work/ws/a/b/"
 *   query "/work/wsx"                            -> "/work/wsx/"  (no match
 *                                                   for "/work/ws/": good)
 *
 * An operation on a directory entry (create, unlink, rename, link, mkdir,
 * rmdir, symlink, mknod) is decided by the rule covering the *parent*
 * directory, so a rule on a file ("/dev/null") never lets a run unlink or
 * replace that file, and a rule on the workspace never lets a run remove or
 * rename the workspace itself.
 *
 * Keys carry at most TETHER_PATH_KEY_MAX path bytes (the LPM trie's 256-byte
 * data limit less the run slot).  A longer rule is a compile error; a longer
 * query is truncated, which keeps matches exact because no rule is longer.
 */
#ifndef TETHER_ABI_RULES_H
#define TETHER_ABI_RULES_H

#ifdef __bpf__
/* vmlinux.h provides the fixed-width types */
#else
#include <linux/types.h>
#endif

#define TETHER_MAX_RUNS		1024
#define TETHER_PATH_KEY_MAX	252
#define TETHER_AUDIT_RING_BYTES	(1u << 20)

/* Access rights of a path rule: a bit mask. */
enum tether_access {
	TETHER_ACCESS_READ  = 1u << 0,
	TETHER_ACCESS_WRITE = 1u << 1,	/* write-open, truncate, chmod, chown, entry changes */
	TETHER_ACCESS_EXEC  = 1u << 2,	/* execve, execveat, mmap/mprotect with PROT_EXEC */
	/*
	 * Inode rules only: a directory above a carve-out (a rule without
	 * write below a writable one).  It may not be renamed or removed, which
	 * would carry the carve-out out of its rule.
	 */
	TETHER_ACCESS_PINNED = 1u << 3,
	/*
	 * Path rules only: a built-in protected path (/etc/shadow, /root, ...)
	 * that the runtime adds to every run.  It grants nothing; a denial it
	 * decides is recorded with reason "protected" instead of "rule".
	 */
	TETHER_ACCESS_PROTECTED = 1u << 4,
	/*
	 * connect(2) to, or sendmsg(2) to, a unix socket bound at this path by a
	 * process outside the run.  Only filesystem.connect grants it: WRITE does
	 * not, since a host daemon's socket in /tmp (tmux, ssh-agent, X11) is
	 * authority the run never had, wherever it may write.
	 */
	TETHER_ACCESS_CONNECT = 1u << 5,
};
#define TETHER_ACCESS_ALL \
	(TETHER_ACCESS_READ | TETHER_ACCESS_WRITE | TETHER_ACCESS_EXEC | TETHER_ACCESS_CONNECT)
/* Every bit of enum tether_access: the access fields of rules and records hold them all. */
#define TETHER_ACCESS_WIDTH	6
#define TETHER_ACCESS_BITS                                                                  \
	(TETHER_ACCESS_READ | TETHER_ACCESS_WRITE | TETHER_ACCESS_EXEC | TETHER_ACCESS_PINNED | \
	 TETHER_ACCESS_PROTECTED | TETHER_ACCESS_CONNECT)

enum tether_run_mode {
	TETHER_MODE_ENFORCE = 0,
	/*
	 * Allow and record what a path rule would deny (decision "would_deny").
	 * Operations no rule can grant (mounts, bpf(), module loads, device
	 * nodes, ptrace and signals outside the run) stay denied: they protect
	 * the host and tether itself, not the policy under trial.
	 */
	TETHER_MODE_AUDIT   = 1,
};

enum tether_run_flags {
	/* Record allowed write operations and execs too, not only denials. */
	TETHER_RUN_AUDIT_ALLOWED = 1u << 0,
	/*
	 * audit.fail_closed: an action that would be allowed with a record
	 * (an allowed write, exec or connection under TETHER_RUN_AUDIT_ALLOWED,
	 * a would-deny of mode: audit) is denied when its record cannot be
	 * reserved, and counted in audit_refused.  The hooks reserve before
	 * they allow.
	 */
	TETHER_RUN_FAIL_CLOSED = 1u << 1,
};

/* Bits of tether_run.net_state, set by BPF. */
enum tether_net_state {
	TETHER_NET_BUDGET_REPORTED = 1u << 0,	/* the egress cap's record was written */
};

/* Value of `runs`: one per live run, written by the loader, updated by BPF. */
struct tether_run {
	__u32 run_slot;		/* key of the run's rules and ring; 1..TETHER_MAX_RUNS */
	__u32 mode;		/* enum tether_run_mode */
	/*
	 * Actions a TETHER_RUN_FAIL_CLOSED run was refused because their
	 * record found the ring full (atomic; each is in audit_lost too).
	 * Was the sequence counter before record version 2, unused since
	 * (run_seq[run_slot]), so a run installed before reads 0.
	 */
	__u64 audit_refused;
	__u64 audit_lost;	/* records that found the ring full (atomic) */
	__u32 flags;		/* enum tether_run_flags */
	__u32 net_state;	/* enum tether_net_state (atomic) */
	__u64 egress_bytes;	/* bytes of the run's packets that cgroup_skb/egress saw (atomic) */
	__u64 egress_max;	/* network_egress.max_bytes; 0: no cap */
	/*
	 * The controller's DNS proxy for this run, on 127.0.0.1 and ::1 (UDP
	 * and TCP, host byte order).  DNS (port 53) to any address is sent
	 * there instead.  0: no proxy, port 53 is decided like any other.
	 */
	__u16 dns_port4;
	__u16 dns_port6;
	/* packets to the run's sockets from peers no rule lists, dropped (atomic) */
	__u32 ingress_dropped;
	/* of them, the (peer, port) pairs recorded (atomic; at most TETHER_INGRESS_RECORDS) */
	__u32 ingress_recorded;
	/*
	 * A fresh_overlay run's own file system (kernel dev encoding), which
	 * holds the overlay's layers; 0: none.  overlayfs opens files there
	 * through private mounts no path names (copy-up, readdir): file_open
	 * lets those through for reads and writes.  Was reserved (0) before.
	 */
	__u32 layer_dev;
};

/* Ingress drops recorded per run, one per peer address, protocol and port; the rest are counted. */
#define TETHER_INGRESS_RECORDS 64

/*
 * Address rules: longest-prefix matches on one address form for both
 * families, IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d), so "169.254.169.254"
 * and "::ffff:169.254.169.254" are one rule whichever socket asks.
 * prefixlen counts the run slot: 32 + address bits.
 *
 * The value holds every port the address may reach, per protocol, ports
 * of enclosing blocks included (the loader merges them in): the longest
 * match alone decides, so "10.0.0.0/8 port 80" next to "10.1.0.0/16 port
 * 443" gives 10.1.x.x both ports.  Addresses that the DNS proxy admitted
 * for a listed hostname are /128 entries with an expiry.
 */
#define TETHER_NET_PORT_RANGES	16
struct tether_net_key {
	__u32 prefixlen;
	__u32 run_slot;
	__u8 addr[16];
};

struct tether_port_range {
	__u16 lo, hi;		/* inclusive, host byte order */
};

/* rule_id of an entry the DNS proxy admitted: this bit | host rule index. */
#define TETHER_NET_RULE_HOST	0x80000000u

struct tether_net_rule {
	__u32 rule_id;		/* index of the address rule in the compiled policy */
	__u16 tcp_count;	/* ranges used in tcp[] */
	__u16 udp_count;
	__u64 expires_ns;	/* CLOCK_BOOTTIME; 0: never (a policy rule) */
	struct tether_port_range tcp[TETHER_NET_PORT_RANGES];
	struct tether_port_range udp[TETHER_NET_PORT_RANGES];
};

/*
 * Where a run's socket meant to send DNS before it was sent to the proxy:
 * recvmsg and getpeername show this address instead of the proxy's, so
 * resolvers that check who answered (glibc does) accept the reply.
 */
struct tether_dns_origin {
	__u8 addr[16];		/* mapped form */
	__u16 port;		/* network byte order */
	__u16 family;		/* AF_INET or AF_INET6: the socket's */
	__u32 reserved;
};

struct tether_path_key {
	__u32 prefixlen;	/* bits: 32 (run_slot) + 8 * path bytes */
	__u32 run_slot;
	__u8 path[TETHER_PATH_KEY_MAX];
};

/*
 * Some hooks (setxattr, removexattr) get a dentry but no mount, so no path
 * can be computed for them.  For those, each existing path that a rule grants
 * TETHER_ACCESS_WRITE is also entered by identity: an object is writable when
 * it or one of its ancestors on the same filesystem is such a root.  `dev` is
 * the kernel's encoding (major << 20 | minor), as in super_block.s_dev.
 */
struct tether_inode_key {
	__u32 run_slot;
	__u32 dev;
	__u64 ino;
};

/*
 * The ptys a run allocated.  A pty slave (/dev/pts/N) is opened by number,
 * and N may be another session's terminal, whose input a run could read.
 * When a run's process asks the master for its number (TIOCGPTN, as
 * ptsname() does) or for the peer (TIOCGPTPEER, as openpty() does), the BPF
 * side enters (run slot, N) with the master tty's address; opening slave N
 * needs that entry and the same master, and closing the master removes it.
 * The loader removes what is left when the run ends.
 */
struct tether_pty_key {
	__u32 run_slot;
	__u32 index;		/* N of /dev/pts/N: the tty's index */
};

/*
 * An abstract unix socket name a run may reach (filesystem.abstract_sockets):
 * the bytes after the leading NUL of sun_path, `len` of them, the rest zero.
 */
#define TETHER_ABSTRACT_NAME_MAX	107
struct tether_abstract_key {
	__u32 run_slot;
	__u32 len;		/* 1..TETHER_ABSTRACT_NAME_MAX */
	char name[128];		/* 128: lets name[len & 127] pass the verifier */
};

/* rule_id of a decision no rule made (a /proc/PID of another process). */
#define TETHER_RULE_NONE	0xffffffffu

struct tether_path_rule {
	__u32 access;		/* enum tether_access mask */
	__u32 rule_id;		/* index of the rule in the compiled policy, for audit */
};

/* run_seq: one u64 per run slot, slot 0 unused (slots start at 1). */
#define TETHER_RUN_SEQ_ENTRIES	(TETHER_MAX_RUNS + 1)

/*
 * Value of `run_exit`: how the run's main process (the command the
 * controller started) ended, kept by the kernel for a controller that is
 * not its parent any more.  A node agent that was killed and restarted
 * re-adopts its live runs, but cannot waitid() for a process it did not
 * fork; it reads the status here instead.
 *
 * The controller writes `tgid` after spawning the command and before it
 * lets the command run (tl_run_set_main), with everything else zero.  The
 * kernel (exit.bpf.c) writes the rest once, when the last thread of that
 * thread group exits: exit_ns first, with a compare-and-swap from 0 that
 * lets exactly one thread write (two can see the group dead), then status,
 * then exited = 1 with a fully ordered atomic.  A reader checks `exited`
 * first and trusts the other fields only when it is 1.  Nothing changes
 * after that until the controller writes the entry again:
 *
 *   exit(0)                      -> status 0x0000
 *   exit(7), exit_group(7)       -> status 0x0700        (7 << 8)
 *   killed by SIGKILL            -> status 0x0009
 *   SIGSEGV, core dumped         -> status 0x008b        (11 | 0x80)
 *   SIGSEGV, no core (limit 0)   -> status 0x000b
 *   main thread SYS_exit(0), another thread exit(5) later
 *                                -> status 0x0500        (the last one decides)
 *   a grandchild outliving main  -> main's status; the grandchild changes nothing
 *   main execs another program   -> still its tgid; the new program's status
 *
 * which is what waitpid() would have told the parent.  The tgid is the
 * process's number in the initial pid namespace (clone3's answer to a
 * controller running there).
 */
#define TETHER_RUN_EXIT_ENTRIES	(TETHER_MAX_RUNS + 1)	/* slot 0 unused */

struct tether_run_exit {
	/* the run's main process, written by the controller after spawn; 0: none */
	__u32 tgid;
	__u32 exited;		/* 1 once the whole thread group of tgid exited (written last) */
	/*
	 * Wait status as waitpid reports it: exit code << 8, or the signal
	 * number, | 0x80 when a core was dumped.  Only valid when exited is 1.
	 */
	__s32 status;
	__u32 reserved;		/* zero */
	__u64 exit_ns;		/* bpf_ktime_get_boot_ns (CLOCK_BOOTTIME); valid when exited */
};

_Static_assert(sizeof(struct tether_run) == 64, "tether_run layout");
_Static_assert(TETHER_ACCESS_BITS == (1u << TETHER_ACCESS_WIDTH) - 1, "access bits are counted");
_Static_assert(TETHER_ACCESS_WIDTH <= 8 * sizeof(((struct tether_path_rule *)0)->access),
	       "path rule access width");
_Static_assert(sizeof(struct tether_net_key) == 24, "tether_net_key layout");
_Static_assert(sizeof(struct tether_net_rule) == 16 + 8 * TETHER_NET_PORT_RANGES,
	       "tether_net_rule layout");
_Static_assert(sizeof(struct tether_dns_origin) == 24, "tether_dns_origin layout");
_Static_assert(sizeof(struct tether_path_key) == 260, "tether_path_key layout");
_Static_assert(sizeof(struct tether_path_key) - 4 <= 256, "LPM trie data limit");
_Static_assert(sizeof(struct tether_path_rule) == 8, "tether_path_rule layout");
_Static_assert(sizeof(struct tether_inode_key) == 16, "tether_inode_key layout");
_Static_assert(sizeof(struct tether_pty_key) == 8, "tether_pty_key layout");
_Static_assert(sizeof(struct tether_abstract_key) == 136, "tether_abstract_key layout");
_Static_assert(sizeof(struct tether_run_exit) == 24, "tether_run_exit layout");

#endif
