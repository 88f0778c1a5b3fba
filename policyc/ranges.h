/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The address ranges tether treats specially, in one table for both of their
 * users: the compiler, which keeps broad blocks out of the host, link-local
 * and metadata ranges (barrier entries, destinations.c and runtime/plan/net.c),
 * and the run's DNS proxy, which refuses answers that point into them or
 * into private and multicast ranges (the rebinding defence, runtime/dns.c).
 *
 * Addresses are in the policy's one form for both families (policy.h,
 * struct tp_destination): IPv4 as IPv4-mapped IPv6 ::ffff:a.b.c.d with
 * prefixlen 96 + n; host bits below the prefix are zero.
 *
 * Self-contained (no libyaml, no other policyc file) so that the DNS fuzzer
 * links it alone.
 */
#ifndef TETHER_POLICYC_RANGES_H
#define TETHER_POLICYC_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tp_addr_class {
	TP_ADDR_PUBLIC,
	TP_ADDR_LOOPBACK,	/* 127/8, ::1 */
	TP_ADDR_PRIVATE,	/* 10/8 172.16/12 192.168/16 100.64/10 fc00::/7 fec0::/10 */
	TP_ADDR_LINK_LOCAL,	/* 169.254/16 fe80::/10 */
	TP_ADDR_METADATA,	/* 169.254.169.254, fd00:ec2::254, 100.100.100.200 */
	TP_ADDR_UNSPECIFIED,	/* 0.0.0.0/8, :: */
	TP_ADDR_MULTICAST,	/* 224/4, 240/4 (broadcast included), ff00::/8 */
};

struct tp_addr_range {
	uint8_t addr[16];
	uint8_t prefixlen;
	enum tp_addr_class addr_class;
};

/* Every range above that is not public; ranges nest only where a more
 * specific one (metadata) overrides the class of the one around it. */
extern const struct tp_addr_range tp_addr_ranges[];
extern const size_t tp_addr_range_count;

/*
 * The class of the most specific range holding `addr`, or TP_ADDR_PUBLIC:
 * metadata wins over link-local and private.  `addr` is taken as it is: an
 * IPv4 address carried some other way inside IPv6 (NAT64, 6to4) is the
 * caller's to unwrap (runtime/dns.c dns_classify).
 */
enum tp_addr_class tp_addr_range_class(const uint8_t addr[16]);

/*
 * Whether no broader block grants a range of this class: the host itself
 * (0.0.0.0/8, 127.0.0.0/8, ::, ::1), link-local (169.254.0.0/16, fe80::/10)
 * and the cloud metadata endpoints (169.254.169.254, 100.100.100.200,
 * fd00:ec2::254).  A destination must name such a range or lie inside it:
 * 0.0.0.0/0 does not reach loopback, and 169.254.0.0/16 does not reach
 * 169.254.169.254.  Private and multicast ranges are reached by any block
 * that holds them.
 */
bool tp_addr_class_special(enum tp_addr_class addr_class);

/* Whether block `outer` contains block `inner` (host bits zero in both). */
bool tp_block_contains(const uint8_t outer[16], unsigned outer_len, const uint8_t inner[16],
		       unsigned inner_len);

/* Whether a special range S lies between two blocks: inner within S, S strictly within outer. */
bool tp_special_range_between(const uint8_t outer[16], unsigned outer_len,
			      const uint8_t inner[16], unsigned inner_len);

#endif
