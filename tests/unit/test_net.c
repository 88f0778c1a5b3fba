// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/plan/net.c: address rules in kernel form, from envelopes compiled by
 * the real compiler: ports inherited from enclosing blocks, the special
 * ranges broad blocks never reach, the kernel's port-range limit, and DNS
 * admissions.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan/net.h"

static struct tp_policy *compile(const char *dests)
{
	char yaml[8192];
	struct tp_envelope *env = NULL;
	struct tp_diags diags = { 0 };
	struct tp_policy *p = NULL;

	snprintf(yaml, sizeof(yaml),
		 "sandbox:\n  filesystem: {root: read_only, workspace: {path: /w}}\n"
		 "  network_egress:\n    allowed_destinations:\n%s", dests);
	cr_assert_eq(tp_envelope_parse("t.yaml", yaml, strlen(yaml), &env, &diags), 0, "%s",
		     diags.count ? diags.items[0].message : "?");
	cr_assert_eq(tp_policy_compile("t.yaml", env, &p, &diags), 0);
	tp_envelope_free(env);
	tp_diags_free(&diags);
	return p;
}

static void mapped(const char *text, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (strchr(text, ':')) {
		cr_assert_eq(inet_pton(AF_INET6, text, addr), 1);
	} else {
		addr[10] = addr[11] = 0xff;
		cr_assert_eq(inet_pton(AF_INET, text, addr + 12), 1);
	}
}

/* The entry for a block ("10.1.0.0", 16 IPv4 bits), or NULL. */
static const struct tl_net_entry *entry(const struct net_plan *plan, const char *addr,
					unsigned bits)
{
	uint8_t a[16];
	unsigned len = strchr(addr, ':') ? bits : 96 + bits;

	mapped(addr, a);
	for (size_t i = 0; i < plan->count; i++)
		if (plan->entries[i].prefixlen == len && !memcmp(plan->entries[i].addr, a, 16))
			return &plan->entries[i];
	return NULL;
}

static bool tcp_allows(const struct tl_net_entry *e, uint16_t port)
{
	for (unsigned i = 0; i < e->rule.tcp_count; i++)
		if (port >= e->rule.tcp[i].lo && port <= e->rule.tcp[i].hi)
			return true;
	return false;
}

Test(net, inner_blocks_carry_the_ports_of_blocks_around_them)
{
	struct tp_policy *p = compile("      - {cidr: 10.0.0.0/8, ports: '80', protocol: tcp}\n"
				      "      - {cidr: 10.1.0.0/16, ports: '443', protocol: tcp}\n"
				      "      - {cidr: 10.1.2.0/24, ports: '81', protocol: tcp}\n");
	struct net_plan plan;
	char why[256];
	const struct tl_net_entry *e;

	cr_assert_eq(net_plan_build(p, &plan, why, sizeof(why)), 0);
	e = entry(&plan, "10.1.2.0", 24);
	cr_assert_not_null(e);
	/* 80 and 81 join into one range: [80, 81] and 443 */
	cr_expect_eq(e->rule.tcp_count, 2);
	cr_expect(tcp_allows(e, 80) && tcp_allows(e, 81) && tcp_allows(e, 443));
	cr_expect_not(tcp_allows(e, 82));
	cr_expect_eq(e->rule.udp_count, 0);
	e = entry(&plan, "10.0.0.0", 8);
	cr_assert_not_null(e);
	cr_expect(tcp_allows(e, 80) && !tcp_allows(e, 443));
	net_plan_free(&plan);
	tp_policy_free(p);
}

Test(net, broad_blocks_do_not_reach_loopback_the_host_or_metadata)
{
	struct tp_policy *p = compile("      - 0.0.0.0/0\n      - '::/0'\n"
				      "      - {cidr: 127.0.0.1/32, ports: '7000', protocol: tcp}\n"
				      "      - {cidr: 169.254.0.0/16, ports: '80', protocol: tcp}\n");
	struct net_plan plan;
	char why[256];
	const char *const barred[][2] = {
		{ "127.0.0.0", "8" }, { "0.0.0.0", "8" }, { "::1", "128" }, { "::", "128" },
		{ "fe80::", "10" }, { "fd00:ec2::254", "128" }, { "100.100.100.200", "32" },
		{ "169.254.169.254", "32" },
	};
	const struct tl_net_entry *e;
	uint8_t a[16];

	cr_assert_eq(net_plan_build(p, &plan, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(barred) / sizeof(barred[0]); i++) {
		e = entry(&plan, barred[i][0], (unsigned)atoi(barred[i][1]));
		cr_assert_not_null(e, "%s/%s has no entry", barred[i][0], barred[i][1]);
		cr_expect_eq(e->rule.tcp_count + e->rule.udp_count, 0, "%s/%s grants ports",
			     barred[i][0], barred[i][1]);
		cr_expect_eq(e->rule.rule_id, TETHER_RULE_NONE);
	}
	/* named loopback keeps its own port, and only that one */
	e = entry(&plan, "127.0.0.1", 32);
	cr_assert_not_null(e, "the compiler dropped a loopback rule covered by 0.0.0.0/0");
	cr_expect(tcp_allows(e, 7000) && !tcp_allows(e, 80));
	/* link-local named as a block: reachable, but metadata inside it is not */
	e = entry(&plan, "169.254.0.0", 16);
	cr_assert_not_null(e);
	cr_expect(tcp_allows(e, 80) && !tcp_allows(e, 22));
	mapped("127.0.0.2", a);
	cr_expect_not(net_range_allowed(&plan, a));
	mapped("127.0.0.1", a);
	cr_expect(net_range_allowed(&plan, a));
	mapped("10.9.9.9", a);
	cr_expect(net_range_allowed(&plan, a));
	net_plan_free(&plan);
	tp_policy_free(p);
}

Test(net, more_port_ranges_than_the_kernel_holds_is_refused_with_the_block)
{
	char dests[4096] = "";
	struct tp_policy *p;
	struct net_plan plan;
	char why[256];

	for (int i = 0; i <= TETHER_NET_PORT_RANGES; i++)
		snprintf(dests + strlen(dests), sizeof(dests) - strlen(dests),
			 "      - {cidr: 192.0.2.0/24, ports: '%d', protocol: tcp}\n", 1000 + 2 * i);
	p = compile(dests);
	cr_assert_eq(net_plan_build(p, &plan, why, sizeof(why)), -E2BIG);
	cr_expect_not_null(strstr(why, "192.0.2.0/24"), "%s", why);
	net_plan_free(&plan);
	tp_policy_free(p);
}

Test(net, dns_admissions_merge_ports_and_expire)
{
	struct tp_policy *p = compile("      - {cidr: 192.0.2.0/24, ports: '80', protocol: tcp}\n"
				      "      - {host: api.example.com, ports: '443', protocol: tcp}\n"
				      "      - {host: '*.cdn.example', ports: '8443', protocol: tcp}\n");
	struct net_plan plan;
	struct tl_net_entry e;
	char why[256];
	uint8_t a[16];

	cr_assert_eq(net_plan_build(p, &plan, why, sizeof(why)), 0);
	mapped("192.0.2.7", a);
	cr_assert_eq(net_admit(&plan, "api.example.com", a, 60, 1000, &e), 0);
	cr_expect_eq(e.prefixlen, 128);
	cr_expect(tcp_allows(&e, 443) && tcp_allows(&e, 80) && !tcp_allows(&e, 8443));
	cr_expect_eq(e.rule.expires_ns, 1000 + 60ull * 1000000000);
	cr_expect(e.rule.rule_id & TETHER_NET_RULE_HOST);
	cr_assert_eq(net_admit_commit(&plan, &e), 0);
	/* a second name for the same address adds its ports; the later expiry wins */
	cr_assert_eq(net_admit(&plan, "edge.cdn.example", a, 5, 2000, &e), 0);
	cr_expect(tcp_allows(&e, 443) && tcp_allows(&e, 80) && tcp_allows(&e, 8443));
	cr_expect_eq(e.rule.expires_ns, 1000 + 60ull * 1000000000);
	cr_expect(net_name_allowed(&plan, "api.example.com"));
	cr_expect(net_name_allowed(&plan, "x.cdn.example"));
	cr_expect_not(net_name_allowed(&plan, "cdn.example"));
	cr_expect_not(net_name_allowed(&plan, "evil.example.com"));
	cr_expect_eq(net_admit(&plan, "evil.example.com", a, 60, 0, &e), -ENOENT);
	/* a private answer: only a block may decide it, and then with its own ports */
	mapped("10.1.2.3", a);
	cr_expect_eq(net_admit(&plan, "api.example.com", a, 60, 0, &e), -EACCES);
	net_plan_free(&plan);
	tp_policy_free(p);
	p = compile("      - {cidr: 10.0.0.0/8, ports: '5432', protocol: tcp}\n"
		    "      - {host: api.example.com, ports: '8080', protocol: tcp}\n");
	cr_assert_eq(net_plan_build(p, &plan, why, sizeof(why)), 0);
	cr_expect_eq(net_admit(&plan, "api.example.com", a, 60, 0, &e), 1,
		     "a rebinding answer must not open the name's ports inside 10.0.0.0/8");
	net_plan_free(&plan);
	tp_policy_free(p);
}

Test(net, a_run_admits_a_bounded_number_of_addresses)
{
	struct tp_policy *p = compile("      - {host: '*.example.com', ports: '443', protocol: tcp}\n");
	struct net_plan plan;
	struct tl_net_entry e;
	char why[256];
	uint8_t a[16];

	cr_assert_eq(net_plan_build(p, &plan, why, sizeof(why)), 0);
	for (unsigned i = 0; i < NET_ADMITTED_MAX; i++) {
		memset(a, 0, 16);
		a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;	/* 2001:db8::/32 */
		a[14] = (uint8_t)(i >> 8), a[15] = (uint8_t)i;
		cr_assert_eq(net_admit(&plan, "a.example.com", a, 60, 0, &e), 0);
		cr_assert_eq(net_admit_commit(&plan, &e), 0);
	}
	a[13] = 1;
	cr_expect_eq(net_admit(&plan, "a.example.com", a, 60, 0, &e), -ENOSPC);
	/* an address already admitted is renewed, not counted again */
	a[13] = 0;
	cr_expect_eq(net_admit(&plan, "a.example.com", a, 60, 5, &e), 0);
	net_plan_free(&plan);
	tp_policy_free(p);
}
