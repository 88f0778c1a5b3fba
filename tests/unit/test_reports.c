// SPDX-License-Identifier: GPL-2.0
/*
 * policyc reports: the guarantee report, explain and the semantic diff, on
 * compiled policies built here in C (the YAML-based golden tests live with
 * the compiler's tests).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policyc/policy.h"

#define R TETHER_ACCESS_READ
#define W TETHER_ACCESS_WRITE
#define X TETHER_ACCESS_EXEC

TestSuite(reports, .timeout = 20);

/* ---- building policies ---------------------------------------------------- */

static void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count, size);

	cr_assert_not_null(p);
	return p;
}

static char *xstrdup(const char *s)
{
	char *copy = strdup(s);

	cr_assert_not_null(copy);
	return copy;
}

/* Grows `*items` by one element at `*count`, keeping what is there. */
static void *grow(void *items, size_t count, size_t size)
{
	void *p = realloc(items, (count + 1) * size);

	cr_assert_not_null(p);
	memset((char *)p + count * size, 0, size);
	return p;
}

/*
 * What every policy the compiler produces has: the workspace, the process
 * tree verified, the default DNS TTLs.  No rules and no gaps: the callers add
 * them (no default is a gap in this version: network_egress.default is
 * enforced).
 */
static struct tp_policy *policy_new(const char *workspace)
{
	struct tp_policy *p = xcalloc(1, sizeof(*p));

	p->flags = TP_POLICY_VERIFY_PROCESS_TREE;
	p->uid = p->gid = TP_DEFAULT_ID;	/* what the compiler writes for no identity */
	p->workspace = xstrdup(workspace);
	p->dns_ttl_min_s = 5;
	p->dns_ttl_max_s = 3600;
	return p;
}

/* Insertion keeps every list sorted bytewise, as policy.h requires. */
static size_t insert_at(char *const *names, size_t stride, size_t count, const char *name)
{
	size_t i = 0;

	while (i < count &&
	       strcmp(*(char *const *)((const char *)names + i * stride), name) < 0)
		i++;
	return i;
}

static void add_rule(struct tp_policy *p, const char *path, uint32_t access, uint32_t kind)
{
	size_t i;

	p->path_rules = grow(p->path_rules, p->path_rule_count, sizeof(*p->path_rules));
	i = insert_at(&p->path_rules[0].path, sizeof(*p->path_rules), p->path_rule_count, path);
	memmove(&p->path_rules[i + 1], &p->path_rules[i],
		(p->path_rule_count - i) * sizeof(*p->path_rules));
	p->path_rules[i] = (struct tp_path_rule){ xstrdup(path), access, kind };
	p->path_rule_count++;
}

static void add_subtree(struct tp_policy *p, const char *path, uint32_t access)
{
	add_rule(p, path, access, TP_PATH_SUBTREE);
}

static void add_strv(char ***list, size_t *count, const char *text)
{
	size_t i;

	*list = grow(*list, *count, sizeof(**list));
	i = insert_at(*list, sizeof(**list), *count, text);
	memmove(&(*list)[i + 1], &(*list)[i], (*count - i) * sizeof(**list));
	(*list)[i] = xstrdup(text);
	(*count)++;
}

static void add_gap(struct tp_policy *p, const char *field)
{
	add_strv(&p->gaps, &p->gap_count, field);
}

/* Hosts are added in sorted order by the tests themselves. */
static void add_host(struct tp_policy *p, const char *name, uint16_t port_min, uint16_t port_max,
		     uint8_t protocols)
{
	p->host_rules = grow(p->host_rules, p->host_rule_count, sizeof(*p->host_rules));
	p->host_rules[p->host_rule_count++] =
		(struct tp_host_rule){ xstrdup(name), protocols, port_min, port_max };
}

/* IPv4 a.b.c.d/n in the mapped form; added in sorted order by the tests. */
static void add_net4(struct tp_policy *p, uint8_t a, uint8_t b, uint8_t c, uint8_t d,
		     uint8_t prefixlen, uint16_t port_min, uint16_t port_max, uint8_t protocols)
{
	struct tp_net_rule *rule;

	p->net_rules = grow(p->net_rules, p->net_rule_count, sizeof(*p->net_rules));
	rule = &p->net_rules[p->net_rule_count++];
	rule->addr[10] = rule->addr[11] = 0xff;
	rule->addr[12] = a;
	rule->addr[13] = b;
	rule->addr[14] = c;
	rule->addr[15] = d;
	rule->prefixlen = 96 + prefixlen;
	rule->protocols = protocols;
	rule->port_min = port_min;
	rule->port_max = port_max;
}

/* IPv6 from 16 bytes; added in sorted order by the tests. */
static void add_net6(struct tp_policy *p, const uint8_t addr[16], uint8_t prefixlen,
		     uint16_t port_min, uint16_t port_max, uint8_t protocols)
{
	struct tp_net_rule *rule;

	p->net_rules = grow(p->net_rules, p->net_rule_count, sizeof(*p->net_rules));
	rule = &p->net_rules[p->net_rule_count++];
	memcpy(rule->addr, addr, 16);
	rule->prefixlen = prefixlen;
	rule->protocols = protocols;
	rule->port_min = port_min;
	rule->port_max = port_max;
}

/* The workspace policy of the brief: /ws readable, one writable subtree. */
static struct tp_policy *workspace_policy(const char *writable)
{
	struct tp_policy *p = policy_new("/ws");

	add_subtree(p, "/", R | X);
	add_subtree(p, "/ws", R);
	add_subtree(p, writable, R | W);
	return p;
}

/* ---- capturing output ------------------------------------------------------- */

struct capture {
	char *text;
	size_t len;
	FILE *out;
};

static void capture_open(struct capture *c)
{
	c->text = NULL;
	c->out = open_memstream(&c->text, &c->len);
	cr_assert_not_null(c->out);
}

static char *capture_close(struct capture *c)
{
	cr_assert_eq(fclose(c->out), 0);
	return c->text;
}

static char *report_text(const struct tp_policy *p)
{
	struct capture c;

	capture_open(&c);
	cr_assert_eq(tp_report_write(p, c.out), 0);
	return capture_close(&c);
}

static char *explain_text(const struct tp_policy *p)
{
	struct capture c;

	capture_open(&c);
	cr_assert_eq(tp_explain_write(p, c.out), 0);
	return capture_close(&c);
}

static char *diff_text(const struct tp_policy *a, const struct tp_policy *b, bool *widened)
{
	struct capture c;

	capture_open(&c);
	cr_assert_eq(tp_diff_write(a, b, c.out, widened), 0);
	return capture_close(&c);
}

static void expect_text(char *actual, const char *expected)
{
	cr_expect_str_eq(actual, expected, "got:\n%s\nexpected:\n%s", actual, expected);
	free(actual);
}

static void expect_diff(const struct tp_policy *a, const struct tp_policy *b, const char *expected,
			bool expect_widened)
{
	bool widened = !expect_widened;

	expect_text(diff_text(a, b, &widened), expected);
	cr_expect_eq(widened, expect_widened);
}

/* ---- the guarantee report ----------------------------------------------------- */

static const char rows_k[] =
	"K: kernel and system-call boundary\n"
	"  enforced                     @syscalls: every call the Docker and Podman default "
	"seccomp profiles refuse is refused (docs/kernel-surface.md): BPF-LSM "
	"inode_init_security_anon refuses userfaultfd and io_uring instances, recorded; the "
	"dropped capabilities refuse module, kexec, clock, swap, reboot and namespace calls, "
	"recorded; a seccomp filter (x86-64 and i386; x32 refused) fails the rest with EPERM, "
	"unrecorded: open_by_handle_at, request_key, the new mount API, NUMA policy, "
	"fanotify_init, quotactl, personality flags, obsolete calls\n"
	"  enforced                     @kernel_load: BPF-LSM bpf, kernel_load_data, "
	"kernel_read_file, kernel_module_request: no bpf(), module, firmware or kexec image "
	"loads from a run; BPF-LSM perf_event_open, userns_create (no new user namespace), "
	"key_permission (no keyctl on keys outside the run's own session keyring), syslog and "
	"settime; no write to cgroup, bpf, securityfs, debugfs or tracefs files (by superblock)\n"
	"  enforced                     @capabilities: every capability dropped from all five "
	"sets (effective, permitted, inheritable, bounding, ambient) and the securebits locked "
	"before exec, with no_new_privs: no setuid or file-capability binary gives one back; "
	"BPF-LSM capable refuses (and records) any capability check that would still succeed\n"
	"P: process, user, IPC and tenant isolation\n"
	"  enforced                     @process_tree: clone3(CLONE_INTO_CGROUP) places the first "
	"process in the run's cgroup; BPF-LSM task_alloc refuses CLONE_INTO_CGROUP out of it\n"
	"  enforced                     @signals_ptrace: BPF-LSM task_kill, file_fcntl "
	"(F_SETOWN), ptrace_access_check and ptrace_traceme: no signal, SIGIO, ptrace or "
	"/proc/PID/fd access to processes outside the run; task_setnice, task_setioprio, "
	"task_setscheduler, task_prlimit and task_movememory: no changing their priority, "
	"scheduling, limits or memory placement\n"
	"  enforced                     @unix_sockets: BPF-LSM unix_stream_connect and "
	"unix_may_send: no unix socket of a process outside the run unless a rule grants CONNECT "
	"at its path or lists its abstract name\n";

static const char rows_f_min[] =
	"F: filesystem, mount, device and artifact isolation\n"
	"  enforced                     @private_trees: a mount and an IPC namespace per run: "
	"fresh tmpfs at /tmp, /var/tmp, /dev/shm and HOME (/run/tether/home), a fresh /dev/mqueue "
	"and SysV IPC, seen by no other run and gone with the run's last process; the run cannot "
	"mount or unmount\n"
	"  enforced                     filesystem.root: BPF-LSM file_open, path_*, "
	"mmap_file and file_mprotect: the host tree is readable, never "
	"writable, and executable unless exec is given; the built-in protected paths (/etc/shadow, "
	"/root, /home, ...) and other processes' /proc entries are not even readable\n"
	"  enforced                     filesystem.workspace.path: BPF-LSM read and write rule; "
	"the controller creates the directory and refuses one reached through a symlink or below a "
	"directory others can write\n"
	"  enforced                     filesystem.workspace.write: BPF-LSM write rules inside the "
	"workspace (longest prefix on component boundaries)\n"
	"  enforced                     filesystem.write: BPF-LSM write rules (longest prefix on "
	"component boundaries)\n"
	"  enforced                     filesystem.exec: BPF-LSM file_open of every file the "
	"kernel executes (binaries, #! and ELF interpreters), mmap_file and file_mprotect "
	"(PROT_EXEC file mappings): only where a rule grants EXEC; a writable path loses EXEC "
	"unless exec names it (W^X)\n"
	"  enforced                     filesystem.devices: BPF-LSM file_open by device number "
	"(null, zero, full, random, urandom, tty, ptmx, the ptys the run allocated) and path_mknod: "
	"no other device can be opened or created\n";

/* Default-deny egress: a row of every policy. */
#define ROW_N_DEFAULT                                                                            \
	"  enforced                     network_egress.default: cgroup connect4/6 and sendmsg4/6 " \
	"refuse (EPERM) every destination no rule lists, loopback and link-local included, and "   \
	"cgroup_skb/egress drops every other packet of the run (ICMP, IP options, IPv6 routing "   \
	"headers)"

/* N for every policy: the socket families and default-deny egress. */
static const char rows_n_min[] =
	"N: network egress\n"
	"  enforced                     @socket_families: BPF-LSM socket_create and capable: only "
	"unix, TCP, UDP and netlink route sockets, and no CAP_NET_ADMIN (links, routes, qdiscs)\n"
	"  enforced                     @loopback: cgroup connect4/6, sendmsg4/6 and cgroup_skb: on "
	"loopback the run reaches its own sockets (socket storage set when it binds or connects "
	"them) and no other listener without a rule; cgroup_skb/ingress drops other peers' packets "
	"and records the first per peer and port\n"
	ROW_N_DEFAULT "\n";

/* I for every policy: who the run is and what environment it gets. */
static const char rows_i_min[] =
	"I: workload identity and credentials\n"
	"  enforced                     identity.uid: setresuid() to the uid before exec (default "
	"65534, nobody), with every capability dropped: uid 0 owns root's files and nothing more; "
	"a fresh session keyring\n"
	"  enforced                     identity.gid: setresgid() to the gid (default: the uid) and "
	"setgroups() to none before exec: no supplementary groups\n"
	"  enforced                     environment: the run's environment is built from an allow "
	"list before exec: PATH, LANG, LANGUAGE, LC_*, TERM, TZ and the listed names, when the "
	"controller has them; tether sets TMPDIR (the run's private /tmp), and HOME to the run's private home unless HOME is "
	"listed; every other variable is dropped\n";

static const char rows_t_c[] =
	"T: workspace lifetime, cleanup and remanence\n"
	"  enforced                     cleanup.verify_process_tree: cgroup.kill, then "
	"cgroup.events must read populated 0 before the run's cgroup and map entries are "
	"removed; a tree that does not empty is reported\n"
	"C: control plane, audit and configuration\n"
	"  enforced                     mode: enforce: every hook denies what no rule grants; "
	"audit: the reads and execs a path rule would deny are allowed and recorded (decision "
	"would_deny); writes, unix connections, the protected paths and what no rule can grant stay "
	"denied\n"
	"  enforced                     audit.sink: JSON Lines from the run's own BPF ring buffer, "
	"with sequence numbers and a count of lost records\n";

static char *header(const struct tp_policy *p)
{
	char digest_text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32];
	char *text;

	cr_assert_eq(tp_policy_digest(p, digest), 0);
	tp_digest_text(digest, digest_text);
	cr_assert_geq(asprintf(&text, "guarantee report for policy %s\n\n", digest_text), 0);
	return text;
}

static void expect_report(const struct tp_policy *p, const char *body)
{
	char *head = header(p), *expected;

	cr_assert_geq(asprintf(&expected, "%s%s", head, body), 0);
	expect_text(report_text(p), expected);
	free(head);
	free(expected);
}

static struct tp_policy *minimal_policy(void)
{
	struct tp_policy *p = policy_new("/ws");

	add_subtree(p, "/", R | X);
	add_subtree(p, "/ws", R | W);
	return p;
}

/* examples/full.yaml, compiled as docs/envelope.md describes (workspace at /ws). */
static struct tp_policy *full_policy(void)
{
	static const char *const gaps[] = {
		"image_digest", "network_egress.methods", "cleanup.lease", "cleanup.revoke_credentials",
	};
	static const uint8_t v6_host[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
	static const uint8_t v6_net[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x53 };
	static const uint8_t v4_dns[16] = { [10] = 0xff, 0xff, 192, 0, 2, 53 };
	static const uint8_t v6_dns[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x53 };
	struct tp_policy *p = policy_new("/ws");

	p->flags |= TP_POLICY_IMAGE_DIGEST |
		    TP_POLICY_ARTIFACTS_SCAN | TP_POLICY_ARTIFACTS_HASH |
		    TP_POLICY_REVOKE_CREDENTIALS | TP_POLICY_AUDIT_RECORD_ALLOWED;
	memset(p->image_digest, 0x5d, sizeof(p->image_digest));
	p->runtime_revision = xstrdup("tether-0.1/host-policy-7");
	p->tenant = xstrdup("acme");
	p->run_id = xstrdup("run_85a");
	p->uid = p->gid = 10000;
	p->workspace_source = xstrdup("/srv/repos/web-app");
	p->workspace_mode = TP_WORKSPACE_FRESH_OVERLAY;
	p->lifetime = TP_LIFETIME_ONE_RUN;

	add_subtree(p, "/", R);
	add_subtree(p, "/srv/inputs/dataset", R);
	add_subtree(p, "/tmp/run_85a", R | W);
	add_subtree(p, "/usr/bin", R | X);
	add_subtree(p, "/usr/lib", R | X);
	add_subtree(p, "/ws", R);
	add_subtree(p, "/ws/node_modules/.bin", R | X);
	add_subtree(p, "/ws/src/auth", R | W);
	add_subtree(p, "/ws/src/auth/keys", 0);
	add_subtree(p, "/ws/tests/auth", R | W);

	p->inputs = xcalloc(1, sizeof(*p->inputs));
	p->inputs[0].path = xstrdup("/srv/inputs/dataset");
	p->inputs[0].has_digest = true;
	memset(p->inputs[0].digest, 0x2c, 32);
	p->input_count = 1;

	add_host(p, "api.github.com", 443, 443, TP_PROTO_ANY);
	add_host(p, "artifact-mirror.internal", 1, 65535, TP_PROTO_ANY);
	add_host(p, "pypi.org", 443, 443, TP_PROTO_TCP);
	add_net4(p, 192, 0, 2, 0, 24, 1, 65535, TP_PROTO_ANY);
	add_net4(p, 198, 51, 100, 7, 32, 8000, 8100, TP_PROTO_ANY);
	add_net6(p, v6_host, 128, 443, 443, TP_PROTO_ANY);
	add_net6(p, v6_net, 48, 53, 53, TP_PROTO_UDP);
	add_strv(&p->methods, &p->method_count, "HEAD");
	add_strv(&p->methods, &p->method_count, "GET");
	p->dns_upstreams = xcalloc(2, sizeof(*p->dns_upstreams));
	memcpy(p->dns_upstreams[0].addr, v4_dns, 16);
	p->dns_upstreams[0].port = 53;
	memcpy(p->dns_upstreams[1].addr, v6_dns, 16);
	p->dns_upstreams[1].port = 53;
	p->dns_upstream_count = 2;

	p->limits[TP_LIMIT_CPU_MILLI] = 2000;
	p->limits[TP_LIMIT_MEMORY_BYTES] = 4ull << 30;
	p->limits[TP_LIMIT_PROCESS_COUNT] = 128;
	p->limits[TP_LIMIT_DISK_BYTES] = 2ull << 30;
	p->limits[TP_LIMIT_OPEN_FILES] = 512;
	p->limits[TP_LIMIT_OUTPUT_BYTES] = 16ull << 20;
	p->limits[TP_LIMIT_WALL_CLOCK_MS] = 10 * 60 * 1000;
	p->limits[TP_LIMIT_WORKSPACE_BYTES] = 2ull << 30;
	p->limits[TP_LIMIT_EGRESS_BYTES] = 100ull << 20;
	p->limits[TP_LIMIT_LEASE_MS] = 15 * 60 * 1000;

	add_strv(&p->artifacts, &p->artifact_count, "result.json");
	add_strv(&p->artifacts, &p->artifact_count, "reports/**");
	p->audit_sink = xstrdup("/var/log/tether/run_85a.jsonl");
	add_strv(&p->env_names, &p->env_name_count, "NODE_ENV");
	add_strv(&p->env_names, &p->env_name_count, "CI");
	add_strv(&p->env_names, &p->env_name_count, "GIT_AUTHOR_NAME");
	add_strv(&p->env_names, &p->env_name_count, "GIT_AUTHOR_EMAIL");
	for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
		add_gap(p, gaps[i]);
	return p;
}

static bool has_line(const char *text, const char *line_text)
{
	size_t len = strlen(line_text);

	for (const char *at = text; (at = strstr(at, line_text)); at++)
		if ((at == text || at[-1] == '\n') && at[len] == '\n')
			return true;
	return false;
}

Test(reports, report_minimal)
{
	struct tp_policy *p = minimal_policy();
	char *body;

	/*
	 * No gap at all: network egress is confined by default, so N holds, and
	 * the default identity and environment make I hold.  No limit is set: R
	 * is not claimed.
	 */
	cr_assert_geq(asprintf(&body,
			       "%s%s%s%s"
			       "R: resource control\n"
			       "  nothing set by this policy\n"
			       "%s\n"
			       "acknowledged gaps: none\n"
			       "guarantee holds for: K P F N I T C; does not hold for: none; "
			       "not claimed by this policy: R\n",
			       rows_k, rows_f_min, rows_n_min, rows_i_min, rows_t_c),
		      0);
	expect_report(p, body);
	free(body);
	tp_policy_free(p);
}

Test(reports, report_full)
{
	struct tp_policy *p = full_policy();
	char *text = report_text(p);

	cr_expect(has_line(text, "  recorded                     identity.tenant: recorded in "
				 "the policy, its digest and the run record"));
	cr_expect(has_line(text, "  enforced                     resources.cpu: cgroup v2 cpu.max: "
				 "the run's threads together get cpu x 100 ms of CPU time per 100 ms "
				 "period, and are throttled past it"), "%s", text);
	cr_expect(has_line(text, "  enforced                     resources.wall_clock: the "
				 "controller's timer writes cgroup.kill when it expires, killing every "
				 "process of the run at once; the run ends timed_out"), "%s", text);
	cr_expect(has_line(text, "  enforced                     resources.disk_bytes: the run's "
				 "own tmpfs, of at most disk_bytes, holds everything it may write: a "
				 "fresh workspace and its /tmp, /var/tmp, /dev/shm and HOME; writes past "
				 "it fail with ENOSPC, and the run ends budget_exhausted"), "%s", text);
	cr_expect(has_line(text, "  enforced                     identity.gid: setresgid() to the "
				 "gid (default: the uid) and setgroups() to none before exec: no "
				 "supplementary groups"), "%s", text);
	/* the network rows: enforced, but for the methods filter (an acknowledged gap) */
	cr_expect(has_line(text, ROW_N_DEFAULT), "%s", text);
	cr_expect(has_line(text, "  enforced                     "
				 "network_egress.allowed_destinations: address blocks and ports "
				 "per protocol in an LPM trie keyed by run, IPv4 as IPv4-mapped "
				 "IPv6; hostnames through the run's DNS proxy"), "%s", text);
	cr_expect(has_line(text, "  enforced                     network_egress.dns: DNS (port "
				 "53) to any address goes to the controller's proxy: listed names "
				 "are asked upstream and their answers allowed until the TTL ends, "
				 "others are REFUSED; answers in loopback or private ranges are "
				 "refused unless an address rule covers them, link-local and "
				 "metadata answers always"), "%s", text);
	cr_expect(has_line(text, "  enforced                     network_egress.max_bytes: "
				 "cgroup_skb/egress counts the run's packets and drops them past "
				 "the cap; the controller ends the run (budget_exhausted)"),
		  "%s", text);
	cr_expect(has_line(text, "  NOT ENFORCED (acknowledged)  network_egress.methods: HTTP "
				 "methods need an HTTP-aware proxy; tether filters addresses and "
				 "ports only"), "%s", text);
	cr_expect(has_line(text, "  enforced                     filesystem.inputs.path: BPF-LSM: "
				 "a rule without write access at the input's path"));
	cr_expect(has_line(text, "  enforced                     audit.record_allowed: records "
				 "allowed write operations and execs as well as denials"));
	/* exec and deny rules are enforced now: rows, not acknowledged gaps */
	cr_expect(has_line(text, "  enforced                     filesystem.exec: BPF-LSM file_open "
				 "of every file the kernel executes (binaries, #! and ELF interpreters), "
				 "mmap_file and file_mprotect (PROT_EXEC file mappings): only where a "
				 "rule grants EXEC; a writable path loses EXEC unless exec names it "
				 "(W^X)"));
	cr_expect(has_line(text, "  enforced                     filesystem.deny: BPF-LSM: a rule "
				 "that grants nothing: no read, write or exec beneath it, and neither "
				 "it nor a directory above it can be renamed or removed"));
	cr_expect(!has_line(text, "  filesystem.exec"));
	cr_expect(!has_line(text, "  filesystem.deny"));
	/* read grants survive compilation only below a deny: none here */
	cr_expect(!strstr(text, "filesystem.read:"));
	cr_expect(!has_line(text, "other fields not enforced:"), "%s", text);
	/* dns is enforced now: not among the other fields, nor an acknowledged gap */
	cr_expect(!has_line(text, "  network_egress.dns"), "%s", text);
	cr_expect(!has_line(text, "  network_egress.default"), "%s", text);
	cr_expect(!has_line(text, "  network_egress.max_bytes"), "%s", text);
	cr_expect(has_line(text, "  network_egress.methods"), "%s", text);
	/* N fails on the methods gap alone, I on revoke_credentials; every limit holds,
	 * and F with the input digests enforced */
	cr_expect(has_line(text, "guarantee holds for: K P F R C; does not hold for: N I T"), "%s",
		  text);
	cr_expect(has_line(text, "  enforced                     filesystem.inputs.digest: before the "
				 "command exists the controller hashes the input as it copies it "
				 "onto a read-only tmpfs and refuses the run when the digest "
				 "differs; the run reads that copy, bound over the input's path"),
		  "%s", text);
	free(text);
	tp_policy_free(p);
}

/*
 * The term letters the verdict line lists after `label` ("guarantee holds
 * for: ", "; does not hold for: ", "; not claimed by this policy: "), up to the
 * next ';' or the end of the line, in `letters`.
 */
static void verdict_terms(const char *text, const char *label, char letters[9])
{
	const char *line = strstr(text, "\nguarantee holds for: "), *at, *end;
	size_t n = 0;

	letters[0] = '\0';
	cr_assert_not_null(line, "%s", text);
	line++;
	end = strchr(line, '\n');
	cr_assert_not_null(end);
	at = strstr(line, label);
	if (!at || at > end)
		return;
	for (at += strlen(label); at < end && *at != ';'; at++)
		if (*at != ' ' && n < 8)
			letters[n++] = *at;
	letters[n] = '\0';
}

/*
 * A policy in audit mode (which this version compiles): the path rules deny
 * nothing, so "mode" is not enforced and C cannot hold.
 */
Test(reports, report_audit_mode)
{
	struct tp_policy *p = minimal_policy();
	char holds[9], fails[9], unclaimed[9];
	char *text;

	p->mode = TP_MODE_AUDIT;
	text = report_text(p);
	cr_expect(has_line(text, "  NOT ENFORCED                 mode: audit: the reads and execs a "
				 "path rule would deny are allowed and recorded (decision would_deny); "
				 "writes, unix connections, protected paths and what no rule can grant "
				 "stay denied"),
		  "%s", text);
	cr_expect(has_line(text, "other fields not enforced:"), "%s", text);
	cr_expect(has_line(text, "  mode"), "%s", text);
	verdict_terms(text, "guarantee holds for: ", holds);
	verdict_terms(text, "; does not hold for: ", fails);
	verdict_terms(text, "; not claimed by this policy: ", unclaimed);
	cr_expect(strchr(holds, 'T'), "%s", text);
	cr_expect(strchr(holds, 'K') && strchr(fails, 'C'), "%s", text);
	/* network rules do not relax in audit mode: N still holds */
	cr_expect(strchr(holds, 'N') && !strchr(fails, 'N'), "%s", text);
	cr_expect(has_line(text, ROW_N_DEFAULT), "%s", text);
	cr_expect(!strchr(holds, 'C'), "%s", text);
	cr_expect_str_eq(unclaimed, "R", "%s", text);
	/* reads and execs only record in audit mode: F does not hold; writes and P still do */
	cr_expect(strchr(fails, 'F') && strchr(holds, 'P'), "%s", text);
	cr_expect(has_line(text, "  NOT ENFORCED                 filesystem.exec: mode: audit: the "
				 "reads and execs this would deny are allowed and recorded"), "%s", text);
	cr_expect(has_line(text, "  enforced                     filesystem.write: BPF-LSM write rules "
				 "(longest prefix on component boundaries)"), "%s", text);
	cr_expect(has_line(text, "  enforced                     filesystem.devices: BPF-LSM "
				 "file_open by device number (null, zero, full, random, urandom, tty, "
				 "ptmx, the ptys the run allocated) and path_mknod: no other device "
				 "can be opened or created"),
		  "%s", text);
	free(text);
	tp_policy_free(p);
}

/*
 * The network rows a policy brings: default-deny always; the destinations
 * row with any destination; the DNS row with a hostname (the proxy is what
 * admits its addresses) or a dns key; the byte cap only when set.  None of
 * them needs a gap, so N holds.
 */
Test(reports, report_network_rows_follow_the_policy)
{
	struct tp_policy *cidr = minimal_policy(), *host = minimal_policy();
	struct tp_policy *ttl = minimal_policy(), *capped = minimal_policy();
	struct tp_policy *methods = minimal_policy();
	char holds[9], fails[9];
	char *text;

	add_net4(cidr, 192, 0, 2, 0, 24, 443, 443, TP_PROTO_TCP);
	text = report_text(cidr);
	cr_expect(has_line(text, ROW_N_DEFAULT), "%s", text);
	cr_expect(strstr(text, "\n  enforced                     "
			       "network_egress.allowed_destinations: "), "%s", text);
	cr_expect(!strstr(text, "network_egress.dns"), "%s", text);
	cr_expect(!strstr(text, "network_egress.max_bytes"), "%s", text);
	cr_expect(has_line(text, "acknowledged gaps: none"), "%s", text);
	verdict_terms(text, "guarantee holds for: ", holds);
	verdict_terms(text, "; does not hold for: ", fails);
	cr_expect(strchr(holds, 'N') && !strchr(fails, 'N'), "%s", text);
	free(text);

	add_host(host, "api.github.com", 443, 443, TP_PROTO_ANY);
	text = report_text(host);
	cr_expect(strstr(text, "\n  enforced                     network_egress.dns: "), "%s",
		  text);
	free(text);

	ttl->dns_ttl_max_s = 60;
	text = report_text(ttl);
	cr_expect(strstr(text, "\n  enforced                     network_egress.dns: "), "%s",
		  text);
	cr_expect(!strstr(text, "network_egress.allowed_destinations"), "%s", text);
	free(text);

	capped->limits[TP_LIMIT_EGRESS_BYTES] = 100ull << 20;
	text = report_text(capped);
	cr_expect(has_line(text, "  enforced                     network_egress.max_bytes: "
				 "cgroup_skb/egress counts the run's packets and drops them past "
				 "the cap; the controller ends the run (budget_exhausted)"),
		  "%s", text);
	cr_expect(has_line(text, "acknowledged gaps: none"), "%s", text);
	verdict_terms(text, "guarantee holds for: ", holds);
	cr_expect(strchr(holds, 'N'), "%s", text);
	free(text);

	/* the one network gap left: N does not hold */
	add_strv(&methods->methods, &methods->method_count, "GET");
	add_gap(methods, "network_egress.methods");
	text = report_text(methods);
	cr_expect(has_line(text, "  NOT ENFORCED (acknowledged)  network_egress.methods: HTTP "
				 "methods need an HTTP-aware proxy; tether filters addresses and "
				 "ports only"), "%s", text);
	verdict_terms(text, "; does not hold for: ", fails);
	cr_expect(strchr(fails, 'N'), "%s", text);
	free(text);

	tp_policy_free(cidr);
	tp_policy_free(host);
	tp_policy_free(ttl);
	tp_policy_free(capped);
	tp_policy_free(methods);
}

/*
 * A limit's row applies when it is set (unset is unlimited: nothing to
 * enforce).  Every limit is enforced: set, they make R hold.
 */
Test(reports, report_resource_rows_follow_the_policy)
{
	struct tp_policy *p = minimal_policy();
	char holds[9];
	char *text;

	p->limits[TP_LIMIT_CPU_MILLI] = 1500;
	p->limits[TP_LIMIT_WALL_CLOCK_MS] = 60000;
	text = report_text(p);
	cr_expect(has_line(text, "  enforced                     resources.cpu: cgroup v2 cpu.max: "
				 "the run's threads together get cpu x 100 ms of CPU time per 100 ms "
				 "period, and are throttled past it"), "%s", text);
	cr_expect(strstr(text, "\n  enforced                     resources.wall_clock: "), "%s",
		  text);
	cr_expect(!strstr(text, "resources.memory_bytes"), "%s", text);
	cr_expect(!strstr(text, "resources.output_bytes"), "%s", text);
	verdict_terms(text, "guarantee holds for: ", holds);
	cr_expect_str_eq(holds, "KPFNIRTC", "%s", text);
	free(text);

	p->limits[TP_LIMIT_DISK_BYTES] = 1ull << 30;
	text = report_text(p);
	cr_expect(strstr(text, "\n  enforced                     resources.disk_bytes: "), "%s",
		  text);
	verdict_terms(text, "guarantee holds for: ", holds);
	cr_expect_str_eq(holds, "KPFNIRTC", "%s", text);
	free(text);
	tp_policy_free(p);
}

/* uid or gid 0 is said plainly; the listed variables follow the defaults. */
Test(reports, explain_identity_and_environment)
{
	static const char root_head[] =
		"runs as: uid 0, gid 100, no supplementary groups, no capabilities\n"
		"  uid 0: the run owns root's files and may read and change them as their owner "
		"wherever its rules allow, but it has no capabilities\n"
		"environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ and CI when the controller has "
		"them; TMPDIR set by tether, and HOME to the run's private home; nothing else\n"
		"may read:\n";
	struct tp_policy *p = minimal_policy();
	char *text;

	p->uid = 0;
	p->gid = 100;
	add_strv(&p->env_names, &p->env_name_count, "CI");
	text = explain_text(p);
	cr_expect(strncmp(text, root_head, strlen(root_head)) == 0, "%s", text);
	free(text);
	p->uid = 1000;
	p->gid = 0;
	add_strv(&p->env_names, &p->env_name_count, "HOME");
	text = explain_text(p);
	/* a listed HOME is the controller's */
	cr_expect(has_line(text, "environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, CI and HOME "
				 "when the controller has them; TMPDIR set by tether; nothing else"),
		  "%s", text);
	cr_expect(has_line(text, "  gid 0: the run has the access of root's group to files "
				 "wherever its rules allow"), "%s", text);
	cr_expect(!strstr(text, "uid 0:"), "%s", text);
	free(text);
	tp_policy_free(p);
}

/* A variable added widens, one removed narrows; a gid change widens. */
Test(reports, diff_environment_and_gid)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_strv(&a->env_names, &a->env_name_count, "CI");
	add_strv(&a->env_names, &a->env_name_count, "OLD");
	add_strv(&b->env_names, &b->env_name_count, "CI");
	add_strv(&b->env_names, &b->env_name_count, "NEW");
	b->gid = 100;
	expect_diff(a, b,
		    "widened: identity.gid 100 (was: 65534)\n"
		    "widened: may get environment variable NEW\n"
		    "narrowed: may no longer get environment variable OLD\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* A policy that is not canonical has no digest, and so no report. */
Test(reports, report_refuses_non_canonical_policy)
{
	struct tp_policy *p = minimal_policy();
	struct capture c;

	p->flags |= 1u << 30;
	capture_open(&c);
	cr_expect_eq(tp_report_write(p, c.out), -EINVAL);
	free(capture_close(&c));
	tp_policy_free(p);
}

Test(reports, write_error_is_eio)
{
	struct tp_policy *a = workspace_policy("/ws/src/auth"), *b = workspace_policy("/ws/src");
	FILE *full = fopen("/dev/full", "w");
	bool widened = false;

	cr_assert_not_null(full);
	setvbuf(full, NULL, _IONBF, 0);
	cr_expect_eq(tp_report_write(a, full), -EIO);
	clearerr(full);
	cr_expect_eq(tp_explain_write(a, full), -EIO);
	clearerr(full);
	cr_expect_eq(tp_diff_write(a, b, full, &widened), -EIO);
	cr_expect(!widened, "output parameters are written only on success");
	fclose(full);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* ---- explain ------------------------------------------------------------------ */

static const char unlimited[] = "may consume:\n"
				"  cpu: unlimited\n"
				"  memory: unlimited\n"
				"  processes: unlimited\n"
				"  disk: unlimited\n"
				"  open files: unlimited\n"
				"  output: unlimited\n"
				"  wall clock: unlimited\n"
				"  workspace size: unlimited\n"
				"  network egress: unlimited\n"
				"  disk files: unlimited\n";

static const char leaves_default[] = "leaves behind:\n"
				     "  workspace /ws: kept after the run\n"
				     "  starts from: the directory as it is\n"
				     "  artifacts: none\n"
				     "  processes: the run's cgroup is killed and verified empty\n"
				     "  credentials: not revoked\n"
				     "  lease: unlimited\n";

/* Who a policy without identity or environment runs as, and what it gets. */
#define WHO_DEFAULT                                                                        \
	"runs as: uid 65534 (nobody), gid 65534, no supplementary groups, no capabilities\n" \
	"environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ when the controller has them; "   \
	"TMPDIR set by tether, and HOME to the run's private home; nothing else\n"

static void expect_explain(const struct tp_policy *p, const char *head, const char *tail)
{
	char *expected;

	cr_assert_geq(asprintf(&expected, "%s%s%s%s%s", WHO_DEFAULT, head, unlimited,
			       leaves_default, tail), 0);
	expect_text(explain_text(p), expected);
	free(expected);
}

Test(reports, explain_minimal)
{
	struct tp_policy *p = minimal_policy();

	expect_explain(p,
		       "may read:\n"
		       "  /**\n"
		       "  never the built-in protected paths (/etc/shadow, /root, /home, ...) unless named\n"
		       "may write:\n"
		       "  /ws/**\n"
		       "may execute:\n"
		       "  /**, except /ws/**\n"
		       "may connect to unix sockets bound in:\n"
		       "  nothing\n"
		       "private to the run (fresh, empty, gone when it ends): /tmp and /var/tmp "
		       "(read, write; never executable), /dev/shm, /dev/mqueue, its home "
		       "/run/tether/home, SysV IPC; the workspace and inputs keep their paths there\n"
		       "may reach:\n"
		       "  nothing: every destination is refused, loopback and link-local "
		       "included, and no ICMP is sent\n"
		       "  names: none resolve: the run's DNS proxy refuses every name\n",
		       "not enforced by this version (acknowledged): nothing\n");
	tp_policy_free(p);
}

Test(reports, explain_full)
{
	struct tp_policy *p = full_policy();
	char *text = explain_text(p);
	char *end = strstr(text, "not enforced by this version (acknowledged):\n");

	cr_assert_not_null(end);
	/* the gap list is the policy's, one "field: why" line each */
	cr_expect(has_line(end, "  image_digest: tether starts the command from the host's file "
				"system; it does not pull or verify images"), "%s", end);
	cr_expect(!strstr(end, "artifacts"), "%s", end);
	cr_expect(!strstr(end, "resources.cpu"), "%s", end);
	cr_expect(!strstr(end, "identity."), "%s", end);
	cr_expect(!strstr(end, "workspace_lifetime"), "%s", end);
	cr_expect(!strstr(end, "disk_bytes"), "%s", end);
	cr_expect(has_line(end, "  network_egress.methods: HTTP methods need an HTTP-aware proxy; "
				"tether filters addresses and ports only"));
	/* enforced now: neither is a gap */
	cr_expect(!strstr(end, "network_egress.default"), "%s", end);
	cr_expect(!strstr(end, "network_egress.max_bytes"), "%s", end);
	*end = '\0';
	expect_text(text,
		    "runs as: uid 10000, gid 10000, no supplementary groups, no capabilities\n"
		    "environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, CI, GIT_AUTHOR_EMAIL, "
		    "GIT_AUTHOR_NAME and NODE_ENV when the controller has them; TMPDIR set by "
		    "tether, and HOME to the run's private home; nothing else\n"
		    "may read:\n"
		    "  /**, except /ws/src/auth/keys/**\n"
		    "  never the built-in protected paths (/etc/shadow, /root, /home, ...) unless named\n"
		       "may write:\n"
		    "  /tmp/run_85a/**\n"
		    "  /ws/src/auth/**, except /ws/src/auth/keys/**\n"
		    "  /ws/tests/auth/**\n"
		    "may execute:\n"
		    "  /usr/bin/**\n"
		    "  /usr/lib/**\n"
		    "  /ws/node_modules/.bin/**\n"
		       "may connect to unix sockets bound in:\n"
		       "  nothing\n"
		       "private to the run (fresh, empty, gone when it ends): /tmp and /var/tmp "
		       "(read, write; never executable), /dev/shm, /dev/mqueue, its home "
		       "/run/tether/home, SysV IPC; the workspace and inputs keep their paths there\n"
		    "may reach:\n"
		    "  api.github.com:443\n"
		    "  artifact-mirror.internal\n"
		    "  pypi.org:443 (tcp only)\n"
		    "  192.0.2.0/24\n"
		    "  198.51.100.7:8000-8100\n"
		    "  [2001:db8::1]:443\n"
		    "  [2001:db8:53::/48]:53 (udp only)\n"
		    "  nothing else: every other destination is refused, loopback and link-local "
		    "included, and no ICMP is sent\n"
		    "  names: only the names above resolve (the run's DNS proxy refuses others); "
		    "an answer's addresses are reachable on that name's ports until its TTL, "
		    "held within 5s..1h, ends\n"
		    "  HTTP methods: GET, HEAD\n"
		    "  NOT ENFORCED (acknowledged): HTTP methods need an HTTP-aware proxy; tether "
		    "filters addresses and ports only\n"
		    "may consume:\n"
		    "  cpu: 2\n"
		    "  memory: 4GiB\n"
		    "  processes: 128\n"
		    "  disk: 2GiB\n"
		    "  open files: 512\n"
		    "  output: 16MiB\n"
		    "  wall clock: 10m\n"
		    "  workspace size: 2GiB\n"
		    "  network egress: 100MiB\n"
		    "  disk files: unlimited\n"
		    "leaves behind:\n"
		    "  workspace /ws: deleted when the run ends\n"
		    "  starts from: an overlay of /srv/repos/web-app\n"
		    "  artifacts: reports/**, result.json, scanned and hashed\n"
		    "  processes: the run's cgroup is killed and verified empty\n"
		    "  credentials: revoked when the run ends (not enforced)\n"
		    "  lease: 15m (not enforced)\n");
	tp_policy_free(p);
}

/*
 * Regions and their exceptions: a deny inside a writable area with a grant
 * again inside the deny, an exact rule, and a sibling whose name shares a
 * prefix but not a component ("/ws-other" is not below "/ws").  Regions come
 * in path byte order ("/ws" < "/ws-other" < "/ws/a").
 */
Test(reports, explain_nested_regions)
{
	struct tp_policy *p = policy_new("/ws");

	add_subtree(p, "/", R);
	add_subtree(p, "/ws", R | W);
	add_subtree(p, "/ws/a", 0);
	add_subtree(p, "/ws/a/b", R | W);
	add_rule(p, "/ws/c", R, TP_PATH_EXACT);
	add_subtree(p, "/ws-other", R | W);
	expect_explain(p,
		       "may read:\n"
		       "  /**, except /ws/a/**\n"
		       "  /ws/a/b/**\n"
		       "  never the built-in protected paths (/etc/shadow, /root, /home, ...) unless named\n"
		       "may write:\n"
		       "  /ws/**, except /ws/a/**, /ws/c\n"
		       "  /ws-other/**\n"
		       "  /ws/a/b/**\n"
		       "may execute:\n"
		       "  nothing\n"
		       "may connect to unix sockets bound in:\n"
		       "  nothing\n"
		       "private to the run (fresh, empty, gone when it ends): /tmp and /var/tmp "
		       "(read, write; never executable), /dev/shm, /dev/mqueue, its home "
		       "/run/tether/home, SysV IPC; the workspace and inputs keep their paths there\n"
		       "may reach:\n"
		       "  nothing: every destination is refused, loopback and link-local "
		       "included, and no ICMP is sent\n"
		       "  names: none resolve: the run's DNS proxy refuses every name\n",
		       "not enforced by this version (acknowledged): nothing\n");
	tp_policy_free(p);
}

/*
 * Addresses alone: no name resolves.  A hostname brings the names line with
 * the policy's own TTL bounds.  A byte cap is enforced: no "(not enforced)".
 */
Test(reports, explain_network)
{
	struct tp_policy *p = minimal_policy();
	char *text;

	add_net4(p, 192, 0, 2, 0, 24, 443, 443, TP_PROTO_TCP);
	p->limits[TP_LIMIT_EGRESS_BYTES] = 100ull << 20;
	text = explain_text(p);
	cr_expect(strstr(text, "may reach:\n"
			       "  192.0.2.0/24:443 (tcp only)\n"
			       "  nothing else: every other destination is refused, loopback and "
			       "link-local included, and no ICMP is sent\n"
			       "  names: none resolve: the run's DNS proxy refuses every name\n"
			       "may consume:\n"), "%s", text);
	cr_expect(has_line(text, "  network egress: 100MiB"), "%s", text);
	free(text);

	add_host(p, "*.example.com", 1, 65535, TP_PROTO_ANY);
	p->dns_ttl_min_s = 30;
	p->dns_ttl_max_s = 600;
	text = explain_text(p);
	cr_expect(strstr(text, "may reach:\n"
			       "  *.example.com\n"
			       "  192.0.2.0/24:443 (tcp only)\n"
			       "  nothing else: every other destination is refused, loopback and "
			       "link-local included, and no ICMP is sent\n"
			       "  names: only the names above resolve (the run's DNS proxy refuses "
			       "others); an answer's addresses are reachable on that name's ports "
			       "until its TTL, held within 30s..10m, ends\n"
			       "may consume:\n"), "%s", text);
	free(text);
	tp_policy_free(p);
}

Test(reports, explain_escapes_paths)
{
	struct tp_policy *p = minimal_policy();
	char *text;

	add_subtree(p, "/ws/x\nmay write:", R);
	text = explain_text(p);
	cr_expect(has_line(text, "  /ws/**, except /ws/x\\x0amay write:/**"), "%s", text);
	free(text);
	tp_policy_free(p);
}

/* ---- diff ------------------------------------------------------------------------ */

Test(reports, diff_widened_write_subtree)
{
	struct tp_policy *a = workspace_policy("/ws/src/auth"), *b = workspace_policy("/ws/src");

	expect_diff(a, b, "widened: write on /ws/src/** (was: read)\n", true);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_narrowed_write_subtree)
{
	struct tp_policy *a = workspace_policy("/ws/src/auth"), *b = workspace_policy("/ws/src");

	expect_diff(b, a, "narrowed: write on /ws/src/** (now: read)\n", false);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_identical)
{
	struct tp_policy *a = full_policy(), *b = full_policy();

	expect_diff(a, b, "no change in authority\n", false);
	expect_diff(a, a, "no change in authority\n", false);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_new_gap_widens)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_gap(b, "filesystem.exact_paths");
	expect_diff(a, b, "widened: acknowledged gap: filesystem.exact_paths\n", true);
	expect_diff(b, a,
		    "no change in authority\n"
		    "changed: no longer an acknowledged gap: filesystem.exact_paths\n",
		    false);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_removed_limit_widens)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	a->limits[TP_LIMIT_DISK_BYTES] = 2ull << 30;
	add_gap(a, "resources.disk_bytes");
	expect_diff(a, b,
		    "widened: resources.disk_bytes unlimited (was: 2GiB)\n"
		    "changed: no longer an acknowledged gap: resources.disk_bytes\n",
		    true);
	/* An enforced limit: no gap to speak of. */
	a->limits[TP_LIMIT_CPU_MILLI] = 500;
	b->limits[TP_LIMIT_CPU_MILLI] = 1500;
	b->limits[TP_LIMIT_DISK_BYTES] = 2ull << 30;
	add_gap(b, "resources.disk_bytes");
	expect_diff(a, b, "widened: resources.cpu 1.5 (was: 0.5)\n", true);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_limits)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	a->limits[TP_LIMIT_MEMORY_BYTES] = 4ull << 30;
	b->limits[TP_LIMIT_MEMORY_BYTES] = 8ull << 30;
	a->limits[TP_LIMIT_WALL_CLOCK_MS] = 3600 * 1000;
	b->limits[TP_LIMIT_WALL_CLOCK_MS] = 600 * 1000;
	b->limits[TP_LIMIT_PROCESS_COUNT] = 64;
	expect_diff(a, b,
		    "widened: resources.memory_bytes 8GiB (was: 4GiB)\n"
		    "narrowed: resources.process_count 64 (was: unlimited)\n"
		    "narrowed: resources.wall_clock 10m (was: 1h)\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* The egress cap is a limit like any other, and no longer a gap: no gap line. */
Test(reports, diff_egress_cap)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	a->limits[TP_LIMIT_EGRESS_BYTES] = 100ull << 20;
	expect_diff(a, b, "widened: network_egress.max_bytes unlimited (was: 100MiB)\n", true);
	expect_diff(b, a, "narrowed: network_egress.max_bytes 100MiB (was: unlimited)\n", false);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* An exact rule becomes a subtree: the path itself keeps its access, what lies
 * beneath it changes. */
Test(reports, diff_exact_to_subtree)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_rule(a, "/etc/app.conf", R | W, TP_PATH_EXACT);
	add_subtree(b, "/etc/app.conf", R | W);
	expect_diff(a, b,
		    "widened: write below /etc/app.conf (was: read and execute)\n"
		    "narrowed: execute below /etc/app.conf (now: read and write)\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* Matching is on component boundaries: a rule at /ws says nothing of /wsx. */
Test(reports, diff_component_boundaries)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_subtree(b, "/wsx", R | W);
	expect_diff(a, b,
		    "widened: write on /wsx/** (was: read and execute)\n"
		    "narrowed: execute on /wsx/** (now: read and write)\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* A deny rule is enforced now: it narrows, and brings no gap with it. */
Test(reports, diff_deny_rule_narrows)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_subtree(b, "/ws/secrets", 0);
	expect_diff(a, b, "narrowed: read and write on /ws/secrets/** (now: nothing)\n", false);
	expect_diff(b, a, "widened: read and write on /ws/secrets/** (was: nothing)\n", true);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_destinations_by_coverage)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_host(a, "*.example.com", 1, 65535, TP_PROTO_ANY);
	add_host(a, "pypi.org", 443, 443, TP_PROTO_TCP);
	add_net4(a, 192, 0, 2, 0, 24, 1, 65535, TP_PROTO_ANY);
	add_net4(a, 198, 51, 100, 0, 24, 53, 53, TP_PROTO_UDP);

	add_host(b, "*.a.example.com", 443, 443, TP_PROTO_ANY);	/* covered */
	add_host(b, "api.example.com", 443, 443, TP_PROTO_TCP);	/* covered */
	add_host(b, "example.com", 443, 443, TP_PROTO_TCP);	/* "*." is not the name */
	add_host(b, "pypi.org", 443, 443, TP_PROTO_ANY);	/* udp too; covers the old one */
	add_net4(b, 192, 0, 2, 7, 32, 443, 443, TP_PROTO_TCP);	/* covered */
	add_net4(b, 192, 0, 3, 0, 24, 1, 65535, TP_PROTO_ANY);	/* outside */
	add_net4(b, 198, 51, 100, 0, 25, 53, 54, TP_PROTO_UDP);	/* wider ports */
	expect_diff(a, b,
		    "widened: may reach example.com:443 (tcp only)\n"
		    "widened: may reach pypi.org:443\n"
		    "widened: may reach 192.0.3.0/24\n"
		    "widened: may reach 198.51.100.0/25:53-54 (udp only)\n"
		    "narrowed: may no longer reach *.example.com\n"
		    "narrowed: may no longer reach 192.0.2.0/24\n"
		    "narrowed: may no longer reach 198.51.100.0/24:53 (udp only)\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_methods)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy(), *any = minimal_policy();

	add_strv(&a->methods, &a->method_count, "GET");
	add_strv(&a->methods, &a->method_count, "HEAD");
	add_strv(&b->methods, &b->method_count, "GET");
	add_strv(&b->methods, &b->method_count, "POST");
	expect_diff(a, b,
		    "widened: may use HTTP method POST\n"
		    "narrowed: may no longer use HTTP method HEAD\n",
		    true);
	expect_diff(a, any, "widened: any HTTP method (was: GET, HEAD)\n", true);
	expect_diff(any, a, "narrowed: HTTP methods limited to GET, HEAD (was: any)\n", false);
	tp_policy_free(a);
	tp_policy_free(b);
	tp_policy_free(any);
}

Test(reports, diff_identity_flags_lifetime_artifacts)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	a->flags |= TP_POLICY_AUDIT_FAIL_CLOSED | TP_POLICY_ARTIFACTS_HASH;
	a->uid = 10000;
	b->uid = 10001;
	a->lifetime = TP_LIFETIME_ONE_RUN;
	add_strv(&a->artifacts, &a->artifact_count, "reports/**");
	add_strv(&b->artifacts, &b->artifact_count, "reports/a/b.json");
	add_strv(&b->artifacts, &b->artifact_count, "result.json");
	expect_diff(a, b,
		    "widened: identity.uid 10001 (was: 10000)\n"
		    "widened: artifacts.hash false (was: true)\n"
		    "widened: audit.fail_closed false (was: true)\n"
		    "widened: workspace_lifetime persistent (was: one_run)\n"
		    "widened: artifacts may include result.json\n"
		    "narrowed: artifacts no longer include reports/**\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_metadata_only)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	a->tenant = xstrdup("acme");
	b->tenant = xstrdup("beta");
	b->runtime_revision = xstrdup("r2");
	expect_diff(a, b,
		    "no change in authority\n"
		    "changed: identity.tenant beta (was: acme)\n"
		    "changed: runtime_revision r2 (was: not set)\n",
		    false);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_escapes_paths)
{
	struct tp_policy *a = minimal_policy(), *b = minimal_policy();

	add_subtree(b, "/ws/x\nno change in authority", R);
	expect_diff(a, b, "narrowed: write on /ws/x\\x0ano change in authority/** (now: read)\n",
		    false);
	tp_policy_free(a);
	tp_policy_free(b);
}

// The kernel's view of exact rules (filesystem.exact_paths): this version
// installs every rule as a subtree, so an exact write grant on /ws/z/a also
// reaches /ws/z/a/secrets unless a rule there carves it out.  As
// `workspace: {path: /ws, write: ["z/a"]}` with `deny: ["z/**"]` and, when
// `carve_out`, "z/a/secrets/**" compile.  (Line comments: the patterns hold
// "/*".)
static struct tp_policy *exact_grant_policy(bool carve_out, uint32_t exact_access)
{
	struct tp_policy *p = policy_new("/ws");

	add_subtree(p, "/", R | X);
	add_subtree(p, "/ws", R);
	add_subtree(p, "/ws/z", 0);
	add_rule(p, "/ws/z/a", exact_access, TP_PATH_EXACT);
	if (carve_out)
		add_subtree(p, "/ws/z/a/secrets", 0);
	add_gap(p, "filesystem.exact_paths");
	return p;
}

// Dropping the carve-out changes nothing in the model (z/** already denies
// what lies beneath z/a) but lets the exact grant reach the secrets.
Test(reports, diff_kernel_view_widened)
{
	struct tp_policy *a = exact_grant_policy(true, R | W), *b = exact_grant_policy(false, R | W);

	expect_diff(a, b,
		    "widened: read and write on /ws/z/a/secrets/** (was: nothing) [as enforced by "
		    "this version: exact rules cover what is beneath them]\n",
		    true);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(reports, diff_kernel_view_narrowed)
{
	struct tp_policy *a = exact_grant_policy(true, R | W), *b = exact_grant_policy(false, R | W);

	expect_diff(b, a,
		    "narrowed: read and write on /ws/z/a/secrets/** (now: nothing) [as enforced by "
		    "this version: exact rules cover what is beneath them]\n",
		    false);
	tp_policy_free(a);
	tp_policy_free(b);
}

/* A change both views show is reported once, in the model's words: the
 * exact rule's own access, and a grant at the carve-out. */
Test(reports, diff_kernel_view_agrees)
{
	struct tp_policy *a = exact_grant_policy(true, R), *b = exact_grant_policy(true, R | W);
	struct tp_policy *c = exact_grant_policy(false, R);

	expect_diff(a, b, "widened: write on /ws/z/a (was: read)\n", true);
	expect_diff(b, a, "narrowed: write on /ws/z/a (now: read)\n", false);
	add_subtree(c, "/ws/z/a/secrets", R);
	expect_diff(a, c, "widened: read on /ws/z/a/secrets/** (was: nothing)\n", true);
	tp_policy_free(a);
	tp_policy_free(b);
	tp_policy_free(c);
}
