// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the policyc benchmark's envelope to stdout: PATHS path entries
 * (filesystem.read, exec and deny) and CIDRS address rules
 * (network_egress.allowed_destinations), 10,000 of each by default.
 *
 *   gen [PATHS [CIDRS]] > envelope.yaml
 *
 * The output is a function of the arguments alone (no randomness), so every
 * run of the benchmark compiles the same file.  It must compile: every entry
 * is absolute, distinct, at most 251 bytes, no path is both granted and
 * denied or both exact and a subtree, no address block has host bits set, and
 * every gap the file triggers is acknowledged.
 *
 * Entries come in groups of four below one project directory, so half of
 * the rules nest inside another rule of the file (a deny inside a read
 * grant, an exec grant inside a read grant), as real policies do.  With
 * DIR = /srv/datasets/<team>/<project> and "DIR/ **" for the subtree (the
 * space only keeps this comment open):
 *
 *   read  DIR/ **                                    subtree
 *   deny  DIR/private/ **                            nested
 *   exec  DIR/tools/<tool>/bin/ **                   nested
 *   read  /etc/<vendor>/<team>/<project>.conf        exact
 *         (odd groups: exec /opt/toolchains/<tool>-<version>/bin/ ** instead)
 *
 * Address rules alternate IPv4 and IPv6 in the scalar forms of the schema
 * (block, address, block:port, [v6]:port, port ranges), with one in eight in
 * the mapping form with a protocol.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const teams[] = {
	"platform", "ml-research", "payments", "search-infra", "mobile", "security",
	"data-eng", "observability", "web-frontend", "developer-productivity",
};
static const char *const tools[] = {
	"gcc", "clang", "rustc", "go", "node", "python3", "openjdk", "protoc", "bazel", "cmake",
};
static const char *const vendors[] = { "acme", "tether", "ssl", "ci-runner" };
static const char *const words[] = {
	"ingest", "feature-store", "embeddings", "ledger", "checkout", "ranking", "crawler",
	"telemetry", "auth-gateway", "billing-reconciliation",
};

#define MAX_PATHS 1000000ul
#define MAX_CIDRS 131072ul

static unsigned long parse_count(const char *arg, unsigned long max)
{
	char *end;
	unsigned long value = strtoul(arg, &end, 10);

	if (*arg < '0' || *arg > '9' || *end != '\0' || value > max) {
		fprintf(stderr, "gen: '%s' is not a count from 0 to %lu\n", arg, max);
		exit(2);
	}
	return value;
}

/* One project directory per group; deeper and longer for some groups. */
static void project_dir(char *buf, size_t size, unsigned long group)
{
	const char *team = teams[group % 10];
	const char *word = words[(group / 10) % 10];

	if (group % 7 == 0)
		snprintf(buf, size, "/srv/datasets/%s/archive/%04lu/quarterly-snapshots/%s-%05lu",
			 team, 2000 + group % 25, word, group);
	else
		snprintf(buf, size, "/srv/datasets/%s/%s-%05lu", team, word, group);
}

/* Path entry `i` of `count`, and the list it belongs to. */
static void path_entry(unsigned long i, char *buf, size_t size, const char **list)
{
	unsigned long group = i / 4;
	char dir[160];

	project_dir(dir, sizeof(dir), group);
	switch (i % 4) {
	case 0:
		*list = "read";
		snprintf(buf, size, "%s/**", dir);
		break;
	case 1:
		*list = "deny";
		snprintf(buf, size, "%s/private/**", dir);
		break;
	case 2:
		*list = "exec";
		snprintf(buf, size, "%s/tools/%s/bin/**", dir, tools[group % 10]);
		break;
	default:
		if (group % 2) {
			*list = "exec";
			snprintf(buf, size, "/opt/toolchains/%s-%lu.%lu.%lu/bin/**",
				 tools[group % 10], group / 100, (group / 10) % 10, group % 10);
		} else {
			*list = "read";
			snprintf(buf, size, "/etc/%s/%s/%s-%05lu.conf", vendors[group % 4],
				 teams[group % 10], words[(group / 10) % 10], group);
		}
		break;
	}
}

/* Prints one list, or nothing when it would be empty (an empty exec list means "exec nowhere"). */
static void print_list(const char *name, unsigned long paths)
{
	char path[256];
	const char *list;
	bool header = false;

	for (unsigned long i = 0; i < paths; i++) {
		path_entry(i, path, sizeof(path), &list);
		if (list != name)
			continue;
		if (!header)
			printf("    %s:\n", name);
		header = true;
		printf("      - %s\n", path);
	}
}

/*
 * Address rule `i`.  Rules 2n and 2n+1 share n, which sets the network bits:
 * even i is IPv4, odd i IPv6, and each form has its own first octet or
 * group, so no two rules are equal (n < 65536, hence MAX_CIDRS).
 */
static void cidr_entry(unsigned long i)
{
	unsigned long n = i / 2;
	unsigned int hi = (n >> 8) & 0xff, lo = n & 0xff;

	if (i % 16 == 7) {
		printf("      - {cidr: 203.%u.%u.0/24, ports: 53, protocol: udp}\n", hi, lo);
		return;
	}
	if (i % 16 == 15) {
		printf("      - {cidr: \"2001:db8:%lx::/48\", ports: 8000-8100, protocol: tcp}\n",
		       n);
		return;
	}
	if (i % 2 == 0) {
		switch (n % 3) {
		case 0:
			printf("      - 10.%u.%u.0/24\n", hi, lo);
			break;
		case 1:
			printf("      - 100.%u.%u.16/28:443\n", hi, lo);
			break;
		default:
			printf("      - 198.%u.%u.7\n", hi, lo);
			break;
		}
		return;
	}
	switch (n % 3) {
	case 0:
		printf("      - \"2001:db8:%lx::/48\"\n", n);
		break;
	case 1:
		printf("      - \"[2001:db8:ffff:%lx::/64]:443\"\n", n);
		break;
	default:
		printf("      - \"[2001:db8:fffe:%lx::1]:8443-8444\"\n", n);
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned long paths = 10000, cidrs = 10000;

	if (argc > 3) {
		fprintf(stderr, "usage: gen [PATHS [CIDRS]] > envelope.yaml\n");
		return 2;
	}
	if (argc > 1)
		paths = parse_count(argv[1], MAX_PATHS);
	if (argc > 2)
		cidrs = parse_count(argv[2], MAX_CIDRS);

	printf("# policyc benchmark envelope: %lu path entries, %lu address rules.\n"
	       "# Generated by bench/policyc/gen; do not edit.\n"
	       "version: 1\n"
	       "sandbox:\n"
	       "  identity:\n"
	       "    tenant: bench\n"
	       "    run_id: policyc-bench\n"
	       "  filesystem:\n"
	       "    root: read_only\n"
	       "    workspace:\n"
	       "      path: /var/lib/tether/workspaces/policyc-bench\n",
	       paths, cidrs);
	print_list("read", paths);
	print_list("exec", paths);
	print_list("deny", paths);
	printf("    devices: []\n"
	       "  network_egress:\n"
	       "    default: deny\n");
	if (cidrs)
		printf("    allowed_destinations:\n");
	for (unsigned long i = 0; i < cidrs; i++)
		cidr_entry(i);
	/* Every gap the file triggers (policyc/fields.c rows with restricts=true), and two
	 * gaps of an earlier version, which are accepted and dropped. */
	printf("  acknowledge_unenforced:\n"
	       "    - filesystem.exact_paths\n"
	       "    - filesystem.exec\n"
	       "    - filesystem.deny\n");
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
