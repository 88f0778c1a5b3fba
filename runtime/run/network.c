// SPDX-License-Identifier: GPL-2.0
/*
 * The run's network: its address rules in kernel form, the names records
 * give them, and its DNS proxy, whose listed answers become entries of the
 * run's allow trie before the client sees them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "runtime/dnsproxy.h"
#include "runtime/run/internal.h"

static bool dns_name_allowed(void *p, const char *name)
{
	return net_name_allowed(&((struct run *)p)->net, name);
}

static bool dns_range_allowed(void *p, const uint8_t addr[16])
{
	return net_range_allowed(&((struct run *)p)->net, addr);
}

/* A listed name's answer: into the run's allow trie before the reply is released. */
static int dns_admit(void *p, const char *name, const uint8_t addr[16], uint32_t ttl_s)
{
	struct run *run = p;
	struct tl_error err = { "" };
	struct tl_net_entry entry;
	int r;

	if (!run->run_installed)
		return -EAGAIN;
	/* one second of grace: the client's cache starts counting a little later */
	r = net_admit(&run->net, name, addr, ttl_s + 1, clock_ns(CLOCK_BOOTTIME), &entry);
	if (r == 1)
		return 0;
	if (!r)
		r = tl_run_net_write(&run->node, &run->run, &entry, &err);
	if (!r)
		r = net_admit_commit(&run->net, &entry);
	if (r)
		run_log(run, "admitting an answer for %s: %s", name,
			err.msg[0] ? err.msg : r == -ENOSPC ? "the run has admitted as many addresses "
			"as it may (" STRINGIFY(NET_ADMITTED_MAX) ")" : strerror(-r));
	return r;
}

static void dns_record(void *p, const struct dns_event *ev)
{
	audit_write_dns_event(&((struct run *)p)->audit, ev);
}

static int names_for_records(struct run *run, struct run_error *err)
{
	const struct tp_policy *policy = run->policy;

	run->net_rule_names = calloc(policy->net_rule_count + 1, sizeof(char *));
	run->host_rule_names = calloc(policy->host_rule_count + 1, sizeof(char *));
	if (!run->net_rule_names || !run->host_rule_names)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_NETWORK, ENOMEM, "%s",
				strerror(ENOMEM));
	for (size_t i = 0; i < policy->net_rule_count; i++) {
		char block[64];

		net_format_block(policy->net_rules[i].addr, policy->net_rules[i].prefixlen, block,
				 sizeof(block));
		run->net_rule_names[i] = strdup(block);
		if (!run->net_rule_names[i])
			return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_NETWORK, ENOMEM, "%s",
					strerror(ENOMEM));
	}
	for (size_t i = 0; i < policy->host_rule_count; i++)
		run->host_rule_names[i] = policy->host_rules[i].name;
	run->audit.names.net_rule_names = (const char *const *)run->net_rule_names;
	run->audit.names.net_rule_count = policy->net_rule_count;
	run->audit.names.host_rule_names = run->host_rule_names;
	run->audit.names.host_rule_count = policy->host_rule_count;
	return 0;
}

int run_network_names(struct run *run, struct run_error *err)
{
	char why[256];
	int r = net_plan_build(run->policy, &run->net, why, sizeof(why));

	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_NETWORK, -r, "%s", why);
	return names_for_records(run, err);
}

/*
 * The run's address rules in kernel form, their names for records, and its
 * DNS proxy: before the run is installed, which needs the proxy's ports.
 */
int run_setup_network(struct run *run, struct run_error *err)
{
	const struct tp_policy *policy = run->policy;
	struct dns_proxy_config cfg = {
		.upstreams = policy->dns_upstreams,
		.upstream_count = policy->dns_upstream_count,
		.ttl_min_s = policy->dns_ttl_min_s,
		.ttl_max_s = policy->dns_ttl_max_s,
		/* without hostnames every query is refused: no upstream is needed */
		.upstream_optional = policy->host_rule_count == 0,
		.name_allowed = dns_name_allowed,
		.range_allowed = dns_range_allowed,
		.admit = dns_admit,
		.event = dns_record,
		.ctx = run,
	};
	char why[256];
	int r;

	r = net_plan_build(policy, &run->net, why, sizeof(why));
	if (r == -E2BIG)
		return run_fail(err, RUN_ERROR_INVALID, RUN_STEP_NETWORK, E2BIG,
				"network_egress.allowed_destinations: %s", why);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_NETWORK, -r, "%s", strerror(-r));
	r = names_for_records(run, err);
	if (r)
		return r;
	r = dns_proxy_start(&cfg, &run->dns, why, sizeof(why));
	if (r && policy->host_rule_count && !policy->dns_upstream_count && r == -ENOENT)
		return run_fail(err, RUN_ERROR_REFUSED, RUN_STEP_NETWORK, ENOENT,
				"refusing to run: the envelope lists hostnames, but no DNS upstream "
				"is known (%s); set network_egress.dns.upstream or add a nameserver "
				"to /etc/resolv.conf", why);
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_NETWORK, -r,
				"starting the run's DNS proxy: %s", why);
	return 0;
}

void run_network_free(struct run *run)
{
	for (size_t i = 0; run->net_rule_names && i < run->policy->net_rule_count; i++)
		free(run->net_rule_names[i]);
	free(run->net_rule_names);
	free(run->host_rule_names);
	run->net_rule_names = NULL;
	run->host_rule_names = NULL;
	net_plan_free(&run->net);
	dns_proxy_free(run->dns);
	run->dns = NULL;
}
