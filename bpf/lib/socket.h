/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The socket allow list, once: BPF-LSM socket_create (sock.bpf.c) refuses
 * every other socket a run creates; cgroup/sock_create (net.bpf.c) applies
 * the same list to inet sockets on kernels without BPF-LSM.
 */
#ifndef TETHER_LIB_SOCKET_H
#define TETHER_LIB_SOCKET_H

#include "vmlinux.h"

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

#endif
