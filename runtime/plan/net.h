/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's address rules in kernel form (struct tl_net_entry), and the
 * entries the DNS proxy's answers add.
 *
 * The compiled policy keeps, per address block, only the ports that no
 * enclosing block already allows (policyc/destinations.c).  The kernel
 * decides on the longest match alone, so each entry here carries its own
 * ports and those of every enclosing block.  An address admitted for a
 * hostname is a /128 entry carrying the hostname's ports, those of the
 * policy block around it, and those of earlier admissions of the same
 * address, with an expiry.
 */
#ifndef TETHER_RUNTIME_PLAN_NET_H
#define TETHER_RUNTIME_PLAN_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"
#include "policyc/policy.h"

struct net_plan {
	const struct tp_policy *policy;
	struct tl_net_entry *entries;	/* policy blocks, by (address, prefix length) */
	size_t count;
	uint8_t lengths[129];		/* the prefix lengths entries use, longest first */
	size_t length_count;
	struct tl_net_entry *admitted;	/* DNS admissions, /128 each, by address */
	size_t admitted_count, admitted_cap;
};

/* 0, -ENOMEM, or -E2BIG with `why` naming the block with too many port ranges. */
int net_plan_build(const struct tp_policy *policy, struct net_plan *plan, char *why,
		   size_t why_len);
void net_plan_free(struct net_plan *plan);

/* Does a hostname rule of the policy cover `name` (lower case, no trailing dot)? */
bool net_name_allowed(const struct net_plan *plan, const char *name);

/* Does an address rule of the policy cover `addr` (mapped form), for any port? */
bool net_range_allowed(const struct net_plan *plan, const uint8_t addr[16]);

/* Addresses one run may have admitted: the kernel's trie is shared by every run. */
#define NET_ADMITTED_MAX 4096

/*
 * The entry that admits `addr` for `name` until now_boot_ns + ttl_s:
 * 0 with *out filled (write it, then net_admit_commit() it); 1 when nothing
 * needs writing (a non-public address the policy's block already decides);
 * -ENOENT if no hostname rule covers `name`, -EACCES for a non-public
 * address no block covers, -E2BIG if the merged ports exceed the kernel's
 * ranges, -ENOSPC past NET_ADMITTED_MAX addresses.
 */
int net_admit(struct net_plan *plan, const char *name, const uint8_t addr[16], uint32_t ttl_s,
	      uint64_t now_boot_ns, struct tl_net_entry *out);
/* Remembers an entry written to the kernel, for later admissions of its address. */
int net_admit_commit(struct net_plan *plan, const struct tl_net_entry *entry);

/* "192.0.2.0/24" or "2001:db8::/32" for a mapped address and prefix length. */
void net_format_block(const uint8_t addr[16], unsigned prefixlen, char *buf, size_t size);

#endif
