// SPDX-License-Identifier: GPL-2.0
/*
 * Network egress: cgroup-BPF programs, attached once to the parent of every
 * run cgroup (<cgroup2>/tether), so they cost nothing outside runs.
 *
 *   connect4/6, sendmsg4/6  the destination (address, port, protocol) must
 *                           match an address rule of the run (net_rules); a
 *                           refused client gets EPERM.  DNS (port 53, TCP or
 *                           UDP, any address) goes to the run's DNS proxy.
 *   recvmsg4/6,             replies from the DNS proxy show the address the
 *   getpeername4/6          client asked, which resolvers check.
 *   cgroup_skb/egress       the backstop: every packet of the run is checked
 *                           the same way, whatever sent it (ping sockets,
 *                           io_uring, fast open, already-connected sockets),
 *                           and counted against network_egress.max_bytes.
 *   sock_create             the socket allow list (bpf/lib/socket.h, which
 *                           BPF-LSM socket_create in sock.bpf.c also uses)
 *                           for inet sockets: a kernel without BPF-LSM
 *                           still refuses raw sockets to runs.
 *
 * Which run: the sock_addr and sock_create programs run in the calling
 * task's context (current_run()); cgroup_skb may run in softirq context
 * (retransmits, ACKs), so it uses the socket's cgroup.
 *
 * Network rules do not relax in `mode: audit`: an egress refused is data
 * that never left, and it protects more than the policy under trial.
 */
#include "bpf/lib/run.h"
#include "bpf/lib/socket.h"
#include <bpf/bpf_endian.h>

#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define IPPROTO_HOPOPTS	0
#define IPPROTO_ROUTING	43
#define IPPROTO_FRAGMENT 44
#define IPPROTO_DSTOPTS	60
#define DNS_PORT	53

/*
 * Per socket, so that it lives and dies with the socket: no run can evict
 * another's (a shared LRU map could be flushed by one run's new sockets).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tether_dns_origin);
} dns_origins SEC(".maps");

/*
 * The last destination cgroup_skb/egress allowed for a socket.  A run's
 * rules only grow while it lives (DNS answers add addresses, nothing is
 * taken away before the run ends, and the packet hook does not look at
 * expiry), so an allowed destination stays allowed: a UDP socket's
 * datagrams to one destination skip the trie after the first.
 */
struct egress_seen {
	__u64 addr[2];
	__u16 port;
	__u16 protocol;
	__u32 valid;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egress_seen);
} egress_seen SEC(".maps");

/*
 * Whose a socket is: the run cgroup that bound it, or connected or sent it
 * to a loopback address.  Loopback between a run's own sockets is decided
 * by this, not by port numbers (which a host service or another run could
 * hold by the time the run connects): a connection to a listener, a
 * datagram to a receiver and every packet between them pass when the other
 * end's socket is the run's own.  BPF_F_CLONE: a listener's accepted
 * sockets are its run's too.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, __u64);
} sk_owner SEC(".maps");

/* Ingress drops already recorded: (run cgroup, peer, protocol, port). */
struct ingress_key {
	__u64 cgid;
	__u8 addr[16];
	__u16 protocol, port;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ingress_key);
	__type(value, __u32);
} ingress_seen SEC(".maps");

static __always_inline bool port_in(const struct tether_port_range *r, __u16 count, __u16 port)
{
	for (int i = 0; i < TETHER_NET_PORT_RANGES; i++) {
		if (i >= count)
			break;
		if (port >= r[i].lo && port <= r[i].hi)
			return true;
	}
	return false;
}

/*
 * The decision on one destination: TETHER_REASON_RULE (allowed, *rule_id
 * set) or the reason for refusing.  Only TCP and UDP can be granted.
 * Expiry is checked for new connections and datagrams; the packet backstop
 * keeps passing an address the run was granted until the controller
 * removes it, so established connections outlive a DNS TTL.
 */
static __always_inline __u32 decide(const struct tether_run *run, const __u8 *addr, __u16 protocol,
				    __u16 port, bool check_expiry, __u32 *rule_id)
{
	struct tether_net_key key = { .prefixlen = 32 + 128, .run_slot = run->run_slot };
	struct tether_net_rule *rule;
	bool ok, expired = false;

	*rule_id = TETHER_RULE_NONE;
	if (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP)
		return TETHER_REASON_FORBIDDEN;
	__builtin_memcpy(key.addr, addr, 16);
	rule = bpf_map_lookup_elem(&net_rules, &key);
	if (!rule)
		return TETHER_REASON_DEFAULT_DENY;
	if (check_expiry && rule->expires_ns && bpf_ktime_get_boot_ns() > rule->expires_ns) {
		/*
		 * An expired DNS admission is a /128: what the blocks around it
		 * allow on their own still holds.  A lookup one bit shorter
		 * finds the longest of them.
		 */
		key.prefixlen = 32 + 127;
		rule = bpf_map_lookup_elem(&net_rules, &key);
		if (!rule || rule->expires_ns)
			return TETHER_REASON_EXPIRED;
		expired = true;
	}
	if (protocol == IPPROTO_TCP)
		ok = port_in(rule->tcp, rule->tcp_count, port);
	else
		ok = port_in(rule->udp, rule->udp_count, port);
	if (!ok)
		return expired ? TETHER_REASON_EXPIRED : TETHER_REASON_DEFAULT_DENY;
	*rule_id = rule->rule_id;
	return TETHER_REASON_RULE;
}

static __always_inline void mapped4(__u8 *addr, __u32 ip4_be)
{
	__builtin_memset(addr, 0, 10);
	addr[10] = 0xff;
	addr[11] = 0xff;
	__builtin_memcpy(addr + 12, &ip4_be, 4);
}

static __always_inline bool is_mapped(const __u8 *addr)
{
	for (int i = 0; i < 10; i++)
		if (addr[i])
			return false;
	return addr[10] == 0xff && addr[11] == 0xff;
}

static __always_inline bool is_loopback4(const __u8 *addr)
{
	return is_mapped(addr) && addr[12] == 127 && !addr[13] && !addr[14] && addr[15] == 1;
}

static __always_inline bool is_loopback6(const __u8 *addr)
{
	for (int i = 0; i < 15; i++)
		if (addr[i])
			return false;
	return addr[15] == 1;
}

/* 127.0.0.0/8 or ::1: the host's loopback ranges. */
static __always_inline bool in_loopback_range(const __u8 *addr)
{
	return is_loopback6(addr) || (is_mapped(addr) && addr[12] == 127);
}

/* 0.0.0.0 or :: */
static __always_inline bool is_wildcard(const __u8 *addr)
{
	bool zero = true;

	for (int i = 0; i < 16; i++)
		if (addr[i] && !(i >= 10 && i < 12 && addr[i] == 0xff))
			zero = false;
	return zero && (!addr[10] || is_mapped(addr));
}

static __always_inline void own_socket(struct bpf_sock *sk, __u64 cgid)
{
	__u64 *owner = sk ? bpf_sk_storage_get(&sk_owner, sk, 0, BPF_SK_STORAGE_GET_F_CREATE)
			  : NULL;

	if (owner)
		*owner = cgid;
}

/* A lookup tuple: `local` the sending side, `remote` the socket wanted. */
static __always_inline __u32 make_tuple(struct bpf_sock_tuple *t, const __u8 *local,
					__u16 lport, const __u8 *remote, __u16 rport)
{
	if (is_mapped(remote)) {
		__builtin_memcpy(&t->ipv4.saddr, local + 12, 4);
		__builtin_memcpy(&t->ipv4.daddr, remote + 12, 4);
		t->ipv4.sport = bpf_htons(lport);
		t->ipv4.dport = bpf_htons(rport);
		return sizeof(t->ipv4);
	}
	__builtin_memcpy(t->ipv6.saddr, local, 16);
	__builtin_memcpy(t->ipv6.daddr, remote, 16);
	t->ipv6.sport = bpf_htons(lport);
	t->ipv6.dport = bpf_htons(rport);
	return sizeof(t->ipv6);
}

/* Whether the socket a lookup found belongs to the run `cgid`; releases it. */
static __always_inline bool release_owned(struct bpf_sock *sk, __u64 cgid)
{
	__u64 *owner;
	bool mine;

	if (!sk)
		return false;
	owner = bpf_sk_storage_get(&sk_owner, sk, 0, 0);
	mine = owner && *owner == cgid;
	bpf_sk_release(sk);
	return mine;
}

/* The run's DNS proxy: 127.0.0.1 or ::1 at its port. */
static __always_inline bool is_dns_proxy(const struct tether_run *run, const __u8 *addr,
					 __u16 port)
{
	return port && ((port == run->dns_port4 && is_loopback4(addr)) ||
			(port == run->dns_port6 && is_loopback6(addr)));
}

/* The destination of a sock_addr context, in the mapped form. */
static __always_inline void ctx_addr(struct bpf_sock_addr *ctx, bool v6, __u8 *addr)
{
	if (!v6) {
		mapped4(addr, ctx->user_ip4);
	} else {
		__u32 w[4];

		w[0] = ctx->user_ip6[0];
		w[1] = ctx->user_ip6[1];
		w[2] = ctx->user_ip6[2];
		w[3] = ctx->user_ip6[3];
		__builtin_memcpy(addr, w, 16);
	}
}

/* false when the ring was full */
static __always_inline bool record_sock(struct tether_run *run, __u64 cgid, __u32 op, __s32 err,
					__u32 reason, __u32 rule_id, __u16 family, __u16 type,
					__u16 protocol, __u16 port, const __u8 *addr, __u32 flags)
{
	struct tether_net_event *ev = audit_reserve(run, sizeof(*ev));

	if (!ev)
		return false;
	fill_hdr(&ev->hdr, run, cgid, TETHER_EVENT_NET, sizeof(*ev));
	ev->op = op;
	ev->decision = err ? TETHER_DECISION_DENY : TETHER_DECISION_ALLOW;
	ev->err = err;
	ev->reason = reason;
	ev->rule_id = rule_id;
	ev->family = family;
	ev->type = type;
	ev->protocol = protocol;
	ev->port = port;
	if (addr)
		__builtin_memcpy(ev->addr, addr, 16);
	else
		__builtin_memset(ev->addr, 0, 16);
	ev->uid = (__u32)bpf_get_current_uid_gid();
	ev->flags = flags;
	ev->bytes = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	bpf_ringbuf_submit(ev, 0);
	return true;
}

/*
 * Records an allowed connect(2) when the run records what it allows; false
 * when the record found the ring full and the run is fail_closed: the
 * connection is refused (EPERM) instead.
 */
static __always_inline bool record_allowed_sock(struct tether_run *run, __u64 cgid, __u32 op,
						__u32 reason, __u32 rule_id, bool v6, __u16 type,
						__u16 protocol, __u16 port, const __u8 *addr,
						__u32 flags)
{
	/* Datagrams are too many to record one by one; connections are not. */
	if (op != TETHER_NET_CONNECT || !(run->flags & TETHER_RUN_AUDIT_ALLOWED))
		return true;
	if (record_sock(run, cgid, op, 0, reason, rule_id, v6 ? AF_INET6 : AF_INET, type,
			protocol, port, addr, flags))
		return true;
	return !fail_closed_refuses(run);
}

/* Sends DNS to the proxy and remembers where it was meant to go. */
static __always_inline void redirect_dns(struct bpf_sock_addr *ctx, const struct tether_run *run,
					 bool v6, const __u8 *addr)
{
	struct tether_dns_origin *origin;
	struct bpf_sock *sk = ctx->sk;

	origin = sk ? bpf_sk_storage_get(&dns_origins, sk, 0, BPF_SK_STORAGE_GET_F_CREATE) : NULL;
	if (origin) {
		origin->port = (__u16)ctx->user_port;
		origin->family = v6 ? AF_INET6 : AF_INET;
		__builtin_memcpy(origin->addr, addr, 16);
	}
	if (!v6) {
		ctx->user_ip4 = bpf_htonl(0x7f000001);
		ctx->user_port = bpf_htons(run->dns_port4);
	} else if (run->dns_port6 && !is_mapped(addr)) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
		ctx->user_port = bpf_htons(run->dns_port6);
	} else {
		/* ::ffff:127.0.0.1: the socket reaches the IPv4 proxy */
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = bpf_htonl(0xffff);
		ctx->user_ip6[3] = bpf_htonl(0x7f000001);
		ctx->user_port = bpf_htons(run->dns_port4);
	}
}

/* connect4/6 and sendmsg4/6: 1 allows, 0 refuses with EPERM. */
static __always_inline int check_sock_addr(struct bpf_sock_addr *ctx, bool v6, __u32 op)
{
	__u16 protocol = (__u16)ctx->protocol, type = (__u16)ctx->type;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	struct tether_run *run;
	__u32 reason, rule_id;
	__u8 addr[16];
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 1;
	ctx_addr(ctx, v6, addr);
	if (port == DNS_PORT && run->dns_port4 &&
	    (protocol == IPPROTO_TCP || protocol == IPPROTO_UDP)) {
		if (!record_allowed_sock(run, cgid, op, TETHER_REASON_DNS_PROXY, TETHER_RULE_NONE,
					 v6, type, protocol, port, addr,
					 TETHER_NET_DNS_REDIRECTED))
			return 0;
		redirect_dns(ctx, run, v6, addr);
		return 1;
	}
	reason = decide(run, addr, protocol, port, true, &rule_id);
	if (reason != TETHER_REASON_RULE && in_loopback_range(addr) &&
	    (protocol == IPPROTO_TCP || protocol == IPPROTO_UDP)) {
		/* a listener or receiver of the run's own, wherever it listens */
		struct bpf_sock_tuple t = {};
		__u8 any[16] = {};
		__u32 size = make_tuple(&t, any, 0, addr, port);
		struct bpf_sock *sk;

		sk = protocol == IPPROTO_TCP
			? bpf_sk_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0)
			: bpf_sk_lookup_udp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
		if (release_owned(sk, cgid))
			reason = TETHER_REASON_OWN_SOCKET;
		/*
		 * Nobody listens there yet (a client polling for the server
		 * it started): the kernel answers the SYN with a reset, so the
		 * client sees ECONNREFUSED as on any host.  Every packet is
		 * still judged on its own (loopback_peer_owned): a listener
		 * that appears meanwhile and is not the run's gets nothing.
		 */
		else if (!sk && protocol == IPPROTO_TCP)
			reason = TETHER_REASON_NO_LISTENER;
	}
	if (reason == TETHER_REASON_RULE || reason == TETHER_REASON_OWN_SOCKET ||
	    reason == TETHER_REASON_NO_LISTENER) {
		if (!record_allowed_sock(run, cgid, op, reason, rule_id, v6, type, protocol, port,
					 addr, 0))
			return 0;
		/* the other end of a loopback exchange checks this socket's owner */
		if (in_loopback_range(addr))
			own_socket(ctx->sk, cgid);
		return 1;
	}
	record_sock(run, cgid, op, -EPERM, reason, rule_id, v6 ? AF_INET6 : AF_INET, type,
		    protocol, port, addr, 0);
	return 0;
}

SEC("cgroup/connect4")
int tether_connect4(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, false, TETHER_NET_CONNECT);
}

SEC("cgroup/connect6")
int tether_connect6(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, true, TETHER_NET_CONNECT);
}

SEC("cgroup/sendmsg4")
int tether_sendmsg4(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, false, TETHER_NET_SENDMSG);
}

SEC("cgroup/sendmsg6")
int tether_sendmsg6(struct bpf_sock_addr *ctx)
{
	return check_sock_addr(ctx, true, TETHER_NET_SENDMSG);
}

/*
 * A reply from the DNS proxy, or the peer of a socket connected to it:
 * show the address the client asked for.  Must return 1.
 */
static __always_inline int restore_origin(struct bpf_sock_addr *ctx, bool v6)
{
	struct tether_dns_origin *origin;
	struct tether_run *run;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	struct bpf_sock *sk = ctx->sk;
	__u8 addr[16];
	__u64 cgid;

	run = current_run(&cgid);
	if (!run || !run->dns_port4)
		return 1;
	ctx_addr(ctx, v6, addr);
	if (!is_dns_proxy(run, addr, port))
		return 1;
	origin = sk ? bpf_sk_storage_get(&dns_origins, sk, 0, 0) : NULL;
	if (!origin)
		return 1;
	if (!v6) {
		__u32 ip4;

		if (origin->family != AF_INET)
			return 1;
		__builtin_memcpy(&ip4, origin->addr + 12, 4);
		ctx->user_ip4 = ip4;
	} else {
		__u32 w[4];

		__builtin_memcpy(w, origin->addr, 16);
		ctx->user_ip6[0] = w[0];
		ctx->user_ip6[1] = w[1];
		ctx->user_ip6[2] = w[2];
		ctx->user_ip6[3] = w[3];
	}
	ctx->user_port = origin->port;
	return 1;
}

SEC("cgroup/recvmsg4")
int tether_recvmsg4(struct bpf_sock_addr *ctx)
{
	return restore_origin(ctx, false);
}

SEC("cgroup/recvmsg6")
int tether_recvmsg6(struct bpf_sock_addr *ctx)
{
	return restore_origin(ctx, true);
}

SEC("cgroup/getpeername4")
int tether_getpeername4(struct bpf_sock_addr *ctx)
{
	return restore_origin(ctx, false);
}

SEC("cgroup/getpeername6")
int tether_getpeername6(struct bpf_sock_addr *ctx)
{
	return restore_origin(ctx, true);
}

/*
 * The socket allow list for inet sockets (the only ones this hook sees).
 * The kernel has resolved protocol 0 by now (SOCK_STREAM is TCP, SOCK_DGRAM
 * UDP), so the list's "0 or TCP" is TCP here.
 */
SEC("cgroup/sock_create")
int tether_sock_create(struct bpf_sock *sk)
{
	__u32 family = sk->family, type = sk->type, protocol = sk->protocol;
	struct tether_run *run;
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 1;
	if (allowed_socket(family, type, protocol))
		return 1;
	record_sock(run, cgid, TETHER_NET_SOCKET_CREATE, -EPERM, TETHER_REASON_FORBIDDEN,
		    TETHER_RULE_NONE, (__u16)family, (__u16)type, (__u16)protocol, 0, NULL, 0);
	return 0;
}

/* A packet record: no task (see struct tether_net_event). */
static __always_inline void record_packet(struct tether_run *run, __u64 cgid, __u32 op,
					  __u32 reason, __u16 family, __u16 protocol, __u16 port,
					  const __u8 *addr, __u64 bytes)
{
	struct tether_net_event *ev = audit_reserve(run, sizeof(*ev));

	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->hdr.kind = TETHER_EVENT_NET;
	ev->hdr.size = sizeof(*ev);
	ev->hdr.run_slot = run->run_slot;
	ev->hdr.cgroup_id = cgid;
	ev->hdr.ts_ns = bpf_ktime_get_ns();
	ev->hdr.seq = next_seq(run);
	ev->op = op;
	ev->decision = TETHER_DECISION_DENY;
	ev->err = -EPERM;
	ev->reason = reason;
	ev->rule_id = TETHER_RULE_NONE;
	ev->family = family;
	ev->protocol = protocol;
	ev->port = port;
	__builtin_memcpy(ev->addr, addr, 16);
	ev->bytes = bytes;
	bpf_ringbuf_submit(ev, 0);
}

struct ip4_hdr {
	__u8 ver_ihl, tos;
	__u16 tot_len, id, frag_off;
	__u8 ttl, protocol;
	__u16 check;
	__u32 saddr, daddr;
};

struct ip6_hdr {
	__u32 ver_tc_flow;
	__u16 payload_len;
	__u8 nexthdr, hop_limit;
	__u8 saddr[16], daddr[16];
};

/* The other end of a packet: who it goes to (egress) or comes from (ingress). */
struct peer {
	__u8 addr[16];
	__u16 family, protocol, port;
	__u16 local_port;
	__u8 local[16];		/* the run's end */
};

/*
 * Reads a packet's peer; 0, or the reason to drop it.  IPv4 options
 * (source routing) and IPv6 routing headers name other next hops than the
 * address checked, and fragments hide their ports: all three are refused.
 * A run's own sockets never send them otherwise (the kernel fragments after
 * the egress hook, and reassembles before the ingress one).
 */
static __always_inline __u32 parse_packet(struct __sk_buff *skb, bool ingress, struct peer *p)
{
	__u32 l4;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct ip4_hdr ip;

		p->family = AF_INET;
		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)))
			return TETHER_REASON_UNRESOLVED;
		mapped4(p->addr, ingress ? ip.saddr : ip.daddr);
		mapped4(p->local, ingress ? ip.daddr : ip.saddr);
		p->protocol = ip.protocol;
		if (ip.ver_ihl != 0x45 || (ip.frag_off & bpf_htons(0x3fff)))
			return TETHER_REASON_FORBIDDEN;
		l4 = sizeof(ip);
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ip6_hdr ip6;
		__u8 next;

		p->family = AF_INET6;
		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)))
			return TETHER_REASON_UNRESOLVED;
		__builtin_memcpy(p->addr, ingress ? ip6.saddr : ip6.daddr, 16);
		__builtin_memcpy(p->local, ingress ? ip6.daddr : ip6.saddr, 16);
		next = ip6.nexthdr;
		l4 = sizeof(ip6);
		/* hop-by-hop and destination options change nothing; skip a few */
		for (int i = 0; i < 4; i++) {
			__u8 ext[2];

			if (next != IPPROTO_HOPOPTS && next != IPPROTO_DSTOPTS)
				break;
			if (bpf_skb_load_bytes(skb, l4 & 0xffff, ext, 2)) {
				p->protocol = next;
				return TETHER_REASON_UNRESOLVED;
			}
			next = ext[0];
			l4 += (ext[1] + 1) * 8;
		}
		p->protocol = next;
	} else {
		return TETHER_REASON_FORBIDDEN;
	}
	if (p->protocol != IPPROTO_TCP && p->protocol != IPPROTO_UDP)
		return TETHER_REASON_FORBIDDEN;
	{
		__u16 ports[2];

		if (bpf_skb_load_bytes(skb, l4 & 0xffff, ports, sizeof(ports)))
			return TETHER_REASON_UNRESOLVED;
		p->port = bpf_ntohs(ports[ingress ? 0 : 1]);
		p->local_port = bpf_ntohs(ports[ingress ? 1 : 0]);
	}
	return 0;
}

#define LOOPBACK_IFINDEX 1	/* lo is the first device of every network namespace */

/*
 * Whether the other end of a loopback packet is a socket of the run's own
 * (sk_owner).  A connection's last packets (FIN, ACK) may reach a peer in
 * TIME_WAIT, which has no owner to read but takes no data either: they
 * pass; so do TCP packets to and from a port with no socket at all (a SYN
 * nobody will take, and the kernel's reset that refuses it).  Not inlined: its lookups would not fit the callers' stack.
 */
static __noinline bool loopback_peer_owned(struct __sk_buff *skb, const struct peer *p,
					   __u64 cgid)
{
	struct bpf_sock_tuple t = {};
	__u32 size;
	struct bpf_sock *other;

	if (!skb || !p)
		return false;
	size = make_tuple(&t, p->local, p->local_port, p->addr, p->port);
	other = p->protocol == IPPROTO_TCP
		? bpf_sk_lookup_tcp(skb, &t, size, BPF_F_CURRENT_NETNS, 0)
		: bpf_sk_lookup_udp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (other)
		return release_owned(other, cgid);
	if (p->protocol != IPPROTO_TCP)
		return false;
	other = bpf_skc_lookup_tcp(skb, &t, size, BPF_F_CURRENT_NETNS, 0);
	/* no socket at all: a SYN to a port nobody listens on, or the kernel's reset for it */
	if (!other)
		return true;
	if (other->state == BPF_TCP_TIME_WAIT) {
		bpf_sk_release(other);
		return true;
	}
	bpf_sk_release(other);
	return false;
}

/*
 * Whether the run may exchange packets with this peer: the DNS proxy, or
 * an address rule (expiry aside: see decide()).  A UDP socket remembers the
 * last peer it was allowed, so its datagrams to one peer, and the replies,
 * skip the trie after the first.  0 or the reason to refuse.
 */
static __always_inline __u32 peer_allowed(struct __sk_buff *skb, struct tether_run *run,
					  __u64 cgid, const struct peer *p)
{
	struct egress_seen *seen = NULL;
	struct bpf_sock *sk = skb->sk;
	__u32 reason, rule_id;
	__u64 a[2];

	if (is_dns_proxy(run, p->addr, p->port))
		return 0;
	__builtin_memcpy(a, p->addr, 16);
	if (sk)
		sk = bpf_sk_fullsock(sk);
	/* datagrams only: a storage per TCP connection costs more than it saves */
	if (sk && p->protocol == IPPROTO_UDP)
		seen = bpf_sk_storage_get(&egress_seen, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (seen && seen->valid && seen->port == p->port && seen->protocol == p->protocol &&
	    seen->addr[0] == a[0] && seen->addr[1] == a[1])
		return 0;
	reason = decide(run, p->addr, p->protocol, p->port, false, &rule_id);
	if (reason != TETHER_REASON_RULE && in_loopback_range(p->addr) &&
	    skb->ifindex == LOOPBACK_IFINDEX && loopback_peer_owned(skb, p, cgid))
		reason = TETHER_REASON_RULE;
	if (reason != TETHER_REASON_RULE)
		return reason;
	if (seen) {
		seen->addr[0] = a[0];
		seen->addr[1] = a[1];
		seen->port = p->port;
		seen->protocol = p->protocol;
		seen->valid = 1;
	}
	return 0;
}


/*
 * The backstop: 1 passes the packet, 0 drops it (the sender sees EPERM
 * where the stack reports it, a timeout otherwise).  Packets the socket
 * hooks never saw still reach here: ICMP, io_uring sends, fast open,
 * connected UDP.
 */
SEC("cgroup_skb/egress")
int tether_egress(struct __sk_buff *skb)
{
	__u64 cgid = bpf_skb_ancestor_cgroup_id(skb, run_cgroup_level);
	struct peer p = {};
	struct tether_run *run;
	__u32 reason;
	__u64 total;

	if (!cgid)
		return 1;
	run = bpf_map_lookup_elem(&runs, &cgid);
	if (!run)
		return 1;
	reason = parse_packet(skb, false, &p);
	/*
	 * Through lo to an address that is not loopback: one of the host's own
	 * addresses, whose services a broad block (0.0.0.0/0) would otherwise
	 * reach.  The host is reached through loopback rules or not at all.
	 */
	if (!reason && skb->ifindex == LOOPBACK_IFINDEX && !in_loopback_range(p.addr))
		reason = TETHER_REASON_DEFAULT_DENY;
	if (!reason)
		reason = peer_allowed(skb, run, cgid, &p);
	if (reason) {
		record_packet(run, cgid, TETHER_NET_PACKET, reason, p.family, p.protocol, p.port,
			      p.addr, skb->len);
		return 0;
	}
	total = __sync_fetch_and_add(&run->egress_bytes, skb->len) + skb->len;
	if (run->egress_max && total > run->egress_max) {
		if (!(__sync_fetch_and_or(&run->net_state, TETHER_NET_BUDGET_REPORTED) &
		      TETHER_NET_BUDGET_REPORTED))
			record_packet(run, cgid, TETHER_NET_EGRESS_BUDGET, TETHER_REASON_BUDGET,
				      p.family, p.protocol, p.port, p.addr, run->egress_max);
		return 0;
	}
	return 1;
}

/*
 * Packets to the run's sockets come only from peers the run may reach
 * (replies, or the DNS proxy's answers): a host no rule lists cannot send
 * data in, nor connect to a listener (the SYN is dropped here, before any
 * SYN-ACK, SYN cookies included).  Counted, and recorded once per peer.
 */
SEC("cgroup_skb/ingress")
int tether_ingress(struct __sk_buff *skb)
{
	__u64 cgid = bpf_skb_ancestor_cgroup_id(skb, run_cgroup_level);
	struct peer p = {};
	struct tether_run *run;
	__u32 reason;

	if (!cgid)
		return 1;
	run = bpf_map_lookup_elem(&runs, &cgid);
	if (!run)
		return 1;
	reason = parse_packet(skb, true, &p);
	if (!reason)
		reason = peer_allowed(skb, run, cgid, &p);
	if (!reason)
		return 1;
	__sync_fetch_and_add(&run->ingress_dropped, 1);
	/*
	 * Say why a connection times out: the first drop from each peer
	 * address, protocol and port is recorded, up to TETHER_INGRESS_RECORDS
	 * per run (outsiders choose how many distinct peers there are); the
	 * end record counts them all.
	 */
	{
		struct ingress_key key = { .cgid = cgid, .protocol = p.protocol, .port = p.port };
		__u32 one = 1;

		__builtin_memcpy(key.addr, p.addr, 16);
		if (bpf_map_lookup_elem(&ingress_seen, &key))
			return 0;
		if (__sync_fetch_and_add(&run->ingress_recorded, 1) >= TETHER_INGRESS_RECORDS)
			return 0;
		bpf_map_update_elem(&ingress_seen, &key, &one, BPF_ANY);
		record_packet(run, cgid, TETHER_NET_INGRESS, reason, p.family, p.protocol, p.port,
			      p.addr, skb->len);
	}
	return 0;
}

/*
 * bind(2).  On a loopback address, or on every address (which includes
 * loopback: what dev servers do by default), the socket becomes the run's
 * own (sk_owner): the run's sockets reach it, nothing else does unless a
 * rule lists its peer (cgroup_skb/ingress drops the rest, with a record).
 * A fixed port on any other address would make a listener the outside could
 * probe (open and closed ports answer differently before any hook sees a
 * packet), so it is refused; port 0 (the kernel picks) stays free.  A run
 * can still hold a loopback port a host service wants: that is a denial of
 * service to that service, not a way in (docs/envelope.md).
 */
static __always_inline int check_bind(struct bpf_sock_addr *ctx, bool v6)
{
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	struct tether_run *run;
	__u8 addr[16];
	__u64 cgid;

	run = current_run(&cgid);
	if (!run)
		return 1;
	ctx_addr(ctx, v6, addr);
	/*
	 * The run's own listeners on loopback (or on every address, which
	 * includes loopback): reachable by its own sockets (sk_owner), by
	 * nobody else unless a rule lists them (cgroup_skb/ingress).
	 */
	if (in_loopback_range(addr) || is_wildcard(addr)) {
		own_socket(ctx->sk, cgid);
		return 1;
	}
	if (!port)
		return 1;
	record_sock(run, cgid, TETHER_NET_BIND, -EPERM, TETHER_REASON_FORBIDDEN, TETHER_RULE_NONE,
		    v6 ? AF_INET6 : AF_INET, (__u16)ctx->type, (__u16)ctx->protocol, port, addr,
		    0);
	return 0;
}

SEC("cgroup/bind4")
int tether_bind4(struct bpf_sock_addr *ctx)
{
	return check_bind(ctx, false);
}

SEC("cgroup/bind6")
int tether_bind6(struct bpf_sock_addr *ctx)
{
	return check_bind(ctx, true);
}

#define SOL_IP			0
#define SOL_IPV6		41
#define IP_TRANSPARENT		19
#define IP_FREEBIND		15
#define IPV6_TRANSPARENT	75
#define IPV6_FREEBIND		78

/*
 * Options that let a socket send from an address that is not the host's
 * (spoofing: the replies of an allowed server go to whoever the run names).
 * Everything else passes untouched, values over a page included.
 */
SEC("cgroup/setsockopt")
int tether_setsockopt(struct bpf_sockopt *ctx)
{
	int level = ctx->level, name = ctx->optname;
	struct tether_run *run;
	__u64 cgid;

	if (ctx->optlen > 4096)
		ctx->optlen = 0;	/* the kernel reads the caller's buffer itself */
	if (!((level == SOL_IP && (name == IP_TRANSPARENT || name == IP_FREEBIND)) ||
	      (level == SOL_IPV6 && (name == IPV6_TRANSPARENT || name == IPV6_FREEBIND))))
		return 1;
	run = current_run(&cgid);
	if (!run)
		return 1;
	record_sock(run, cgid, TETHER_NET_SETSOCKOPT, -EPERM, TETHER_REASON_FORBIDDEN,
		    TETHER_RULE_NONE, 0, 0, (__u16)level, (__u16)name, NULL, 0);
	return 0;
}
