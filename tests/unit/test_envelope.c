// SPDX-License-Identifier: GPL-2.0
/*
 * Schema v1 end to end: every example compiles, the compiled rules are what
 * docs/envelope.md says, the digest depends on meaning and on nothing else,
 * and the reports match their golden files.
 *
 * Runs from the repository root.  TETHER_UPDATE_GOLDEN=1 rewrites the golden
 * files instead of comparing (review the diff before committing it).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "policyc/fields.h"
#include "policyc/policy.h"
#include "policyc/render_internal.h"

#define GOLDEN_DIR "tests/policyc/golden"

/*
 * Every gap of an earlier version that this one enforces.  An envelope may
 * still acknowledge them; the acknowledgement is dropped.  No default is a gap
 * in this version: BASE alone compiles.
 */
#define FORMER_GAPS                                                                   \
	"  acknowledge_unenforced: [filesystem.exec, filesystem.deny, network_egress.default,\n" \
	"    network_egress.max_bytes]\n"
/* As BASE, with a fresh workspace (which lives for one run); ends in filesystem.workspace too. */
#define FRESH                                 \
	"sandbox:\n"                          \
	"  workspace_lifetime: one_run\n"     \
	"  filesystem:\n"                     \
	"    root: read_only\n"               \
	"    workspace:\n"                    \
	"      mode: fresh\n"                 \
	"      path: /ws\n"
#define BASE                                  \
	"sandbox:\n"                          \
	"  filesystem:\n"                     \
	"    root: read_only\n"               \
	"    workspace:\n"                    \
	"      path: /ws\n"

static struct tp_diags diags;

static void fini(void)
{
	tp_diags_free(&diags);
}

TestSuite(envelope, .fini = fini, .timeout = 30);

static char *diag_text(void)
{
	char *text = NULL;

	if (tp_diags_format(&diags, &text) < 0)
		return strdup("?");
	return text;
}

/* Parses and compiles `text`; fails the test with every diagnostic if it is invalid. */
static struct tp_policy *compile_text(const char *text)
{
	struct tp_envelope *env = NULL;
	struct tp_policy *policy = NULL;
	int r = tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags);

	if (r) {
		char *d = diag_text();

		cr_assert_fail("envelope invalid (%d):\n%s\n---\n%s", r, d, text);
	}
	cr_assert_eq(tp_policy_compile("t.yaml", env, &policy, &diags), 0);
	tp_envelope_free(env);
	return policy;
}

static void digest_of(const char *text, uint8_t out[32])
{
	struct tp_policy *policy = compile_text(text);

	cr_assert_eq(tp_policy_digest(policy, out), 0);
	tp_policy_free(policy);
}

static char *encode_hex(const char *text)
{
	uint8_t digest[32];
	char *hex = malloc(TP_DIGEST_TEXT_MAX);

	digest_of(text, digest);
	tp_digest_text(digest, hex);
	return hex;
}

/* Asserts the first diagnostic of an invalid envelope. */
static void expect_error(const char *text, unsigned int line, unsigned int column,
			 const char *message)
{
	struct tp_envelope *env = NULL;

	cr_assert_eq(tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags), -EINVAL,
		     "accepted:\n%s", text);
	cr_assert_geq(diags.count, 1);
	cr_expect(diags.items[0].line == line && diags.items[0].column == column,
		  "at %u:%u, expected %u:%u (%s)", diags.items[0].line, diags.items[0].column,
		  line, column, diags.items[0].message);
	cr_expect_str_eq(diags.items[0].message, message);
	fini();
}

/* ---- examples ------------------------------------------------------------ */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *data = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&data, &len, '\0', f) < 0) {
		free(data);
		data = strdup("");
	}
	fclose(f);
	return data;
}

static char *capture(int (*fn)(const struct tp_policy *, FILE *), const struct tp_policy *policy)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert_not_null(out);
	cr_assert_eq(fn(policy, out), 0);
	fclose(out);
	return text;
}

static void golden(const char *name, const char *suffix, const char *actual)
{
	char path[512];
	char *expected;

	snprintf(path, sizeof(path), "%s/%s.%s", GOLDEN_DIR, name, suffix);
	if (getenv("TETHER_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "we");

		cr_assert_not_null(f, "%s", path);
		fputs(actual, f);
		fclose(f);
		return;
	}
	expected = read_file(path);
	cr_assert_not_null(expected, "%s is missing (TETHER_UPDATE_GOLDEN=1 writes it)", path);
	cr_expect_str_eq(actual, expected, "%s differs", path);
	free(expected);
}

Test(envelope, every_example_compiles_round_trips_and_matches_its_golden_reports)
{
	DIR *dir = opendir("examples");
	struct dirent *entry;
	size_t checked = 0;

	cr_assert_not_null(dir, "run the tests from the repository root");
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		struct tp_policy *policy = NULL, *decoded = NULL;
		uint8_t *bytes = NULL, *again = NULL;
		size_t n = 0, m = 0;
		char path[512], name[256], why[256];
		char *text;

		if (len < 6 || strcmp(entry->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "examples/%s", entry->d_name);
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), entry->d_name);
		if (tp_compile_file(path, &policy, &diags) != 0) {
			text = diag_text();
			cr_assert_fail("%s does not compile:\n%s", path, text);
		}
		cr_assert_eq(tp_policy_encode(policy, &bytes, &n), 0, "%s", path);
		cr_assert_eq(tp_policy_decode(bytes, n, &decoded, why, sizeof(why)), 0, "%s: %s",
			     path, why);
		cr_assert_eq(tp_policy_encode(decoded, &again, &m), 0);
		cr_expect(n == m && memcmp(bytes, again, n) == 0, "%s: decode(encode) differs", path);
		cr_expect_eq(tp_policy_validate(policy, why, sizeof(why)), 0, "%s: %s", path, why);

		text = capture(tp_explain_write, policy);
		golden(name, "explain", text);
		free(text);
		text = capture(tp_report_write, policy);
		golden(name, "report", text);
		free(text);

		free(bytes);
		free(again);
		tp_policy_free(decoded);
		tp_policy_free(policy);
		checked++;
	}
	closedir(dir);
	cr_expect_geq(checked, 6, "only %zu examples", checked);
}

/* ---- compiled rules -------------------------------------------------------- */

struct rule {
	const char *path;
	uint32_t access;
	uint32_t kind;
};

#define R TETHER_ACCESS_READ
#define C TETHER_ACCESS_CONNECT
#define W TETHER_ACCESS_WRITE
#define X TETHER_ACCESS_EXEC
#define SUB TP_PATH_SUBTREE
#define EXACT TP_PATH_EXACT

/* Whether rule i is one of root: read_only's exec grants (/usr, /bin, ...). */
static bool system_tree_rule(const struct tp_path_rule *rule)
{
	for (size_t i = 0; tp_system_software_trees[i]; i++)
		if (strcmp(rule->path, tp_system_software_trees[i]) == 0)
			return rule->access == (R | X) && rule->kind == SUB;
	return false;
}

/* The policy's rules, less system software trees' exec grants `rules` leaves out, are `rules`. */
static void expect_rules(const struct tp_policy *policy, const struct rule *rules, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < policy->path_rule_count; i++) {
		bool listed = false;

		for (size_t j = 0; j < n; j++)
			listed |= strcmp(rules[j].path, policy->path_rules[i].path) == 0;
		if (!listed && system_tree_rule(&policy->path_rules[i]))
			continue;
		if (k < n) {
			cr_expect_str_eq(policy->path_rules[i].path, rules[k].path, "rule %zu", k);
			cr_expect_eq(policy->path_rules[i].access, rules[k].access,
				     "rule %zu (%s): access %u", k, policy->path_rules[i].path,
				     policy->path_rules[i].access);
			cr_expect_eq(policy->path_rules[i].kind, rules[k].kind, "rule %zu kind", k);
		}
		k++;
	}
	cr_expect_eq(k, n, "%zu rules, expected %zu", k, n);
}

Test(envelope, minimal_rules_root_readable_workspace_writable_not_executable)
{
	struct tp_policy *p = compile_text(BASE);
	static const struct rule rules[] = {
		{ "/", R, SUB },
		{ "/ws", R | W, SUB },
	};

	expect_rules(p, rules, 2);
	/* without an exec list, exactly the system software trees are executable */
	for (size_t i = 0; tp_system_software_trees[i]; i++) {
		bool found = false;

		for (size_t j = 0; j < p->path_rule_count; j++)
			found |= strcmp(p->path_rules[j].path, tp_system_software_trees[i]) == 0 &&
				 system_tree_rule(&p->path_rules[j]);
		cr_expect(found, "%s", tp_system_software_trees[i]);
	}
	cr_expect_eq(p->path_rule_count, 2 + 8);
	/* no acknowledge_unenforced, and no gap: the defaults are all enforced */
	cr_expect_eq(p->gap_count, 0);
	tp_policy_free(p);
}

Test(envelope, grants_inherit_deny_and_inputs_cut_write_drops_exec)
{
	struct tp_policy *p = compile_text(
		"sandbox:\n"
		"  filesystem:\n"
		"    root: read_only\n"
		"    inputs: [{path: /srv/in}]\n"
		"    workspace:\n"
		"      path: /ws\n"
		"      write: [src/**, build/**, data/**]\n"
		"    read: [/opt/tools/**, src/README]\n"
		"    write: [/tmp/scratch/**]\n"
		"    deny: [src/keys/**]\n"
		"    exec: [/usr/**, build/bin/**]\n"
		"  acknowledge_unenforced: [filesystem.exact_paths]\n");
	static const struct rule rules[] = {
		{ "/", R, SUB },			/* exec given: the root loses exec */
		{ "/tmp/scratch", R | W, SUB },		/* writable: never executable */
		{ "/usr", R | X, SUB },
		{ "/ws/build", R | W, SUB },
		{ "/ws/build/bin", R | W | X, SUB },	/* exec named explicitly: W and X */
		{ "/ws/data", R | W, SUB },
		{ "/ws/src", R | W, SUB },
		{ "/ws/src/keys", 0, SUB },
	};

	/*
	 * /opt/tools, the input /srv/in and the workspace itself (R under the
	 * root's R) and src/README (R under RW) change nothing: dropped.
	 */
	expect_rules(p, rules, sizeof(rules) / sizeof(*rules));
	tp_policy_free(p);
}

Test(envelope, an_input_is_read_only_and_not_executable)
{
	/* inside an executable tree, so that the input's own rule shows */
	struct tp_policy *p = compile_text(BASE
		"    inputs: [{path: /opt/in}]\n");
	static const struct rule rules[] = {
		{ "/", R, SUB },
		{ "/opt/in", R, SUB },
		{ "/ws", R | W, SUB },
	};

	expect_rules(p, rules, 3);
	tp_policy_free(p);
}

Test(envelope, read_only_workspace_and_exact_grants)
{
	struct tp_policy *p = compile_text(BASE
		"      write: [out.json]\n"
		"  acknowledge_unenforced: [filesystem.exact_paths]\n");
	static const struct rule rules[] = {
		{ "/", R, SUB },		/* the workspace, R like the root, is redundant */
		{ "/ws/out.json", R | W, EXACT },
	};

	expect_rules(p, rules, 2);
	tp_policy_free(p);
}

Test(envelope, destinations_limits_and_flags_compile_canonically)
{
	struct tp_policy *p = compile_text(BASE
		"  network_egress:\n"
		"    allowed_destinations:\n"
		"      - API.GitHub.com.:443\n"
		"      - 192.0.2.0/24\n"
		"      - \"[2001:db8::1]:8000-8100\"\n"
		"      - {host: pypi.org, protocol: tcp}\n"
		"    max_bytes: 100MiB\n"
		"  resources: {cpu: 500m, memory_bytes: 4GiB, wall_clock: 1h30m}\n"
		"  acknowledge_unenforced: [resources.cpu, resources.memory_bytes,\n"
		"    resources.wall_clock]\n");

	cr_assert_eq(p->host_rule_count, 2);
	cr_expect_str_eq(p->host_rules[0].name, "api.github.com");
	cr_expect_eq(p->host_rules[0].port_min, 443);
	cr_expect_eq(p->host_rules[0].protocols, TP_PROTO_ANY);
	cr_expect_str_eq(p->host_rules[1].name, "pypi.org");
	cr_expect_eq(p->host_rules[1].protocols, TP_PROTO_TCP);
	cr_expect_eq(p->host_rules[1].port_min, 1);
	cr_expect_eq(p->host_rules[1].port_max, 65535);
	cr_assert_eq(p->net_rule_count, 2);
	/* Sorted by address: ::ffff:192.0.2.0 sorts before 2001:db8::1. */
	cr_expect_eq(p->net_rules[0].prefixlen, 96 + 24);
	cr_expect_eq(p->net_rules[0].addr[10], 0xff);
	cr_expect_eq(p->net_rules[0].addr[12], 192);
	cr_expect_eq(p->net_rules[1].prefixlen, 128);
	cr_expect_eq(p->net_rules[1].port_min, 8000);
	cr_expect_eq(p->net_rules[1].port_max, 8100);
	cr_expect_eq(p->limits[TP_LIMIT_CPU_MILLI], 500);
	cr_expect_eq(p->limits[TP_LIMIT_MEMORY_BYTES], 4ull << 30);
	cr_expect_eq(p->limits[TP_LIMIT_WALL_CLOCK_MS], 5400000);
	cr_expect_eq(p->limits[TP_LIMIT_PROCESS_COUNT], 0);
	cr_expect_eq(p->limits[TP_LIMIT_EGRESS_BYTES], 100ull << 20);
	cr_expect(p->flags & TP_POLICY_VERIFY_PROCESS_TREE);
	/* every limit here is enforced: the acknowledgements (former gaps) are dropped */
	cr_expect_eq(p->gap_count, 0);
	tp_policy_free(p);
}

/* mode: audit compiles, changes the digest, and diff calls it a widening. */
Test(envelope, audit_mode_compiles_and_widens)
{
	struct tp_policy *enforce = compile_text(BASE);
	struct tp_policy *audit = compile_text(BASE "  mode: audit\n");
	char *text = NULL;
	size_t len = 0;
	bool widened = false;
	FILE *out = open_memstream(&text, &len);

	cr_assert_not_null(out);
	cr_expect_eq(enforce->mode, TP_MODE_ENFORCE);
	cr_expect_eq(audit->mode, TP_MODE_AUDIT);
	cr_expect_eq(tp_diff_write(enforce, audit, out, &widened), 0);
	fclose(out);
	cr_expect(widened, "%s", text);
	cr_expect_not_null(strstr(text, "mode audit"), "%s", text);
	free(text);
	tp_policy_free(enforce);
	tp_policy_free(audit);
}

/* connect entries grant CONNECT only; write grants do not; deny cuts it. */
Test(envelope, connect_grants_reach_unix_sockets)
{
	struct tp_policy *p = compile_text(BASE
		"    connect: [/run/dbus/**, sock/**]\n"
		"    deny: [/run/dbus/private/**]\n");
	static const struct rule rules[] = {
		{ "/", R, SUB },
		{ "/run/dbus", R | C, SUB },
		{ "/run/dbus/private", 0, SUB },
		{ "/ws", R | W, SUB },
		{ "/ws/sock", R | W | C, SUB },	/* write does not imply connect */
	};

	expect_rules(p, rules, 5);
	tp_policy_free(p);
}

/* Abstract socket names: sorted, in the digest, diffed as grants. */
Test(envelope, abstract_sockets_compile_and_diff)
{
	struct tp_policy *none = compile_text(BASE);
	struct tp_policy *two =
		compile_text(BASE "    abstract_sockets: [zz, /tmp/.X11-unix/X0]\n");
	struct tp_policy *back = NULL;
	uint8_t *bytes = NULL;
	char *text = NULL;
	size_t len = 0, n = 0;
	bool widened = false;
	FILE *out = open_memstream(&text, &len);

	cr_assert_not_null(out);
	cr_assert_eq(two->abstract_socket_count, 2);
	cr_expect_str_eq(two->abstract_sockets[0], "/tmp/.X11-unix/X0");
	cr_expect_str_eq(two->abstract_sockets[1], "zz");
	cr_assert_eq(tp_policy_encode(two, &bytes, &n), 0);
	cr_assert_eq(tp_policy_decode(bytes, n, &back, NULL, 0), 0);
	cr_expect_eq(back->abstract_socket_count, 2);
	cr_expect_eq(tp_diff_write(none, two, out, &widened), 0);
	fclose(out);
	cr_expect(widened, "%s", text);
	cr_expect_not_null(strstr(text, "widened: may connect to abstract unix socket @zz\n"), "%s",
			   text);
	free(text);
	free(bytes);
	tp_policy_free(back);
	tp_policy_free(none);
	tp_policy_free(two);
}

/*
 * sandbox.environment: sorted, defaults dropped, in the digest, round-tripped,
 * diffed as grants; identity: always set, 65534 by default.
 */
Test(envelope, environment_and_identity_compile_and_diff)
{
	struct tp_policy *none = compile_text(BASE);
	struct tp_policy *two = compile_text(BASE "  identity: {uid: 0}\n"
					     "  environment: [ZZ, LC_ALL, A_B, PATH]\n");
	struct tp_policy *back = NULL;
	uint8_t *bytes = NULL;
	char *text = NULL;
	size_t len = 0, n = 0;
	bool widened = false;
	FILE *out = open_memstream(&text, &len);

	cr_assert_not_null(out);
	cr_expect_eq(none->uid, 65534);
	cr_expect_eq(none->gid, 65534);
	cr_expect_eq(none->env_name_count, 0);
	cr_expect_eq(two->uid, 0);
	cr_expect_eq(two->gid, 0);
	cr_assert_eq(two->env_name_count, 2);
	cr_expect_str_eq(two->env_names[0], "A_B");
	cr_expect_str_eq(two->env_names[1], "ZZ");
	cr_assert_eq(tp_policy_encode(two, &bytes, &n), 0);
	cr_assert_eq(tp_policy_decode(bytes, n, &back, NULL, 0), 0);
	cr_expect_eq(back->env_name_count, 2);
	cr_expect_eq(back->uid, 0);
	cr_expect_eq(tp_diff_write(none, two, out, &widened), 0);
	fclose(out);
	cr_expect(widened, "%s", text);
	cr_expect_str_eq(text, "widened: identity.uid 0 (was: 65534)\n"
			       "widened: identity.gid 0 (was: 65534)\n"
			       "widened: may get environment variable A_B\n"
			       "widened: may get environment variable ZZ\n");
	free(text);
	text = capture(tp_explain_write, two);
	cr_expect_not_null(strstr(text, "runs as: uid 0, gid 0, no supplementary groups, no "
				  "capabilities\n  uid 0: the run owns root's files and may read and "
				  "change them as their owner wherever its rules allow, but it has no "
				  "capabilities\n  gid 0: "), "%s", text);
	cr_expect_not_null(strstr(text, "environment: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, A_B "
				  "and ZZ when the controller has them; TMPDIR set by tether, and "
				  "HOME to the run's private home; nothing else\n"), "%s", text);
	free(text);
	free(bytes);
	tp_policy_free(back);
	tp_policy_free(none);
	tp_policy_free(two);
}

/* A hand-built envelope the parser would refuse does not compile. */
Test(envelope, compile_refuses_an_environment_the_parser_would_refuse)
{
	static const char *const bad[] = { "TMPDIR", "A=B", "", "1X" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct tp_envelope *env = NULL;
		struct tp_policy *p = NULL;
		char *names[] = { strdup(bad[i]) };
		char **saved;

		cr_assert_eq(tp_envelope_parse("t.yaml", BASE, strlen(BASE), &env, &diags), 0);
		saved = env->env_names;
		env->env_names = names;
		env->env_name_count = 1;
		cr_expect_eq(tp_policy_compile("t.yaml", env, &p, &diags), -EINVAL, "%s", bad[i]);
		cr_expect_null(p);
		env->env_names = saved;
		env->env_name_count = 0;
		free(names[0]);
		tp_envelope_free(env);
	}
}

/* Rules below a protected path stay, whatever their parent grants. */
Test(envelope, rules_below_protected_paths_are_kept)
{
	struct tp_policy *p = compile_text(BASE
		"    read: [/etc/shadow, /home/alice/project/**, /etc/ssh/**]\n"
		"  acknowledge_unenforced: [filesystem.exact_paths]\n");
	static const struct rule rules[] = {
		{ "/", R, SUB },
		{ "/etc/shadow", R, EXACT },
		{ "/home/alice/project", R, SUB },
		{ "/ws", R | W, SUB },
	};

	/* /etc/ssh adds nothing to "/": no protected path lies between them */
	expect_rules(p, rules, 4);
	tp_policy_free(p);
}

Test(envelope, acknowledging_a_gap_that_does_not_apply_is_accepted_and_dropped)
{
	struct tp_policy *p = compile_text(BASE "  identity: {uid: 10000}\n"
		"  image_digest: \"sha256:1111111111111111111111111111111111111111111111111111111111111111\"\n"
		"  cleanup: {revoke_credentials: true}\n"
		"  acknowledge_unenforced: [workspace_lifetime, cleanup.lease, filesystem.exec,\n"
		"    identity.uid, network_egress.methods, cleanup.revoke_credentials, identity.gid,\n"
		"    artifacts, image_digest]\n");

	/* cleanup.lease, network_egress.methods: not set; filesystem.exec, identity.uid,
	 * identity.gid, workspace_lifetime and artifacts: enforced now; the two that apply
	 * stay, sorted */
	cr_assert_eq(p->gap_count, 2);
	cr_expect_str_eq(p->gaps[0], "cleanup.revoke_credentials");
	cr_expect_str_eq(p->gaps[1], "image_digest");
	tp_policy_free(p);
}

/*
 * Default-deny egress, the destinations, DNS and the egress cap are enforced:
 * an envelope that uses them and nothing else needs no acknowledge_unenforced.
 */
Test(envelope, network_egress_needs_no_acknowledgement)
{
	struct tp_policy *p = compile_text(BASE
		"  network_egress:\n"
		"    default: deny\n"
		"    allowed_destinations: [api.github.com:443, 192.0.2.0/24]\n"
		"    max_bytes: 1GiB\n"
		"    dns: {upstream: [192.0.2.53], min_ttl: 10s, max_ttl: 10m}\n");

	cr_expect_eq(p->gap_count, 0);
	cr_expect_eq(p->limits[TP_LIMIT_EGRESS_BYTES], 1ull << 30);
	cr_expect_eq(p->host_rule_count, 1);
	cr_expect_eq(p->net_rule_count, 1);
	cr_expect_eq(p->dns_ttl_min_s, 10);
	cr_expect_eq(p->dns_ttl_max_s, 600);
	tp_policy_free(p);
}

/*
 * network_egress.default and network_egress.max_bytes were gaps of the
 * previous version: an envelope written for it, which acknowledges them,
 * still compiles, to the same policy as one that does not.
 */
Test(envelope, acknowledging_a_former_gap_is_accepted_and_dropped)
{
	static const char *const texts[][2] = {
		{ BASE FORMER_GAPS, BASE },
		{ BASE "  network_egress: {default: deny, max_bytes: 100MiB}\n"
		  "  acknowledge_unenforced: [network_egress.max_bytes, network_egress.default]\n",
		  BASE "  network_egress: {default: deny, max_bytes: 100MiB}\n" },
		{ BASE "  resources: {cpu: 2}\n"
		  "  acknowledge_unenforced: [network_egress.default, resources.cpu]\n",
		  BASE "  resources: {cpu: 2}\n" },
		/* issue 6: the identity and every resource limit but disk_bytes */
		{ BASE "  identity: {uid: 10000, gid: 10001}\n"
		  "  resources: {cpu: 1.5, memory_bytes: 1GiB, process_count: 64, open_files: 256,\n"
		  "    output_bytes: 1MiB, wall_clock: 5m}\n"
		  "  acknowledge_unenforced: [identity.uid, identity.gid, resources.cpu,\n"
		  "    resources.memory_bytes, resources.process_count, resources.open_files,\n"
		  "    resources.output_bytes, resources.wall_clock]\n",
		  BASE "  identity: {uid: 10000, gid: 10001}\n"
		  "  resources: {cpu: 1.5, memory_bytes: 1GiB, process_count: 64, open_files: 256,\n"
		  "    output_bytes: 1MiB, wall_clock: 5m}\n" },
		/* issue 17: disk_bytes, max_bytes and workspace_lifetime, with a fresh workspace */
		{ FRESH "      max_bytes: 1GiB\n"
		  "  resources: {disk_bytes: 2GiB}\n"
		  "  acknowledge_unenforced: [filesystem.workspace.max_bytes, resources.disk_bytes,\n"
		  "    workspace_lifetime]\n",
		  FRESH "      max_bytes: 1GiB\n"
		  "  resources: {disk_bytes: 2GiB}\n" },
		/* issue 16: audit.fail_closed */
		{ BASE "  audit: {fail_closed: true}\n"
		  "  acknowledge_unenforced: [audit.fail_closed]\n",
		  BASE "  audit: {fail_closed: true}\n" },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		struct tp_policy *p = compile_text(texts[i][0]);
		char *with = encode_hex(texts[i][0]), *without = encode_hex(texts[i][1]);

		cr_expect_eq(p->gap_count, 0, "%zu", i);
		cr_expect_str_eq(with, without, "%zu:\n%s", i, texts[i][0]);
		free(with);
		free(without);
		tp_policy_free(p);
	}
}

/*
 * The schema spells each limit's key once more, as a mapping key: every key
 * of tp_limits must reach its limit, at both ends of its range, written as
 * the renderings write it.
 */
Test(envelope, every_limit_key_of_the_table_is_the_schema_key)
{
	for (int i = 0; i < TP_LIMIT_COUNT; i++) {
		const struct tp_limit_info *limit = &tp_limits[i];
		const char *key = limit->row.field, *name = strrchr(key, '.') + 1;
		const uint64_t ends[2] = { limit->min, limit->max };

		for (int e = 0; e < 2; e++) {
			char value[TP_LIMIT_TEXT_MAX], text[1024];
			struct tp_envelope *env = NULL;
			int n, r;

			tp_format_limit((enum tp_limit)i, ends[e], value);
			/*
			 * FRESH ends inside filesystem.workspace; other sections follow
			 * it.  A fresh workspace: the disk limits need one.
			 */
			if (strncmp(key, "filesystem.workspace.", 21) == 0)
				n = snprintf(text, sizeof(text), FRESH "      %s: %s\n", name,
					     value);
			else
				n = snprintf(text, sizeof(text), FRESH "  %.*s:\n    %s: %s\n",
					     (int)(name - 1 - key), key, name, value);
			cr_assert(n > 0 && (size_t)n < sizeof(text));
			if (limit->row.status == TP_NOT_ENFORCED)
				snprintf(text + n, sizeof(text) - n,
					 "  acknowledge_unenforced: [%s]\n", key);
			r = tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags);
			cr_assert_eq(r, 0, "%s", text);
			cr_expect_eq(env->limits[i], ends[e], "%s: %s", key, value);
			tp_envelope_free(env);
		}
	}
}

/* ---- the digest ----------------------------------------------------------- */

/*
 * Each group: envelopes with one meaning, written differently.  Acknowledging
 * a former gap (FORMER_GAPS) is one more way of writing the same meaning.
 */
static const char *const same_meaning[][5] = {
	{
		BASE,
		"# comment\n{sandbox: {acknowledge_unenforced: [network_egress.default,\n"
		"  filesystem.exec], filesystem: {workspace: {path: '/ws/'}, root: read_only}}}\n",
		"version: 1\nsandbox:\n  mode: enforce\n  filesystem:\n    root: read_only\n"
		"    devices: []\n    workspace:\n      path: //ws/x/..\n      mode: existing\n"
		"      write: ['**']\n    read: [/opt/**]\n  network_egress: {default: deny}\n"
		"  workspace_lifetime: persistent\n  cleanup: {verify_process_tree: true}\n"
		"  audit: {sink: stderr, fail_closed: false, record_allowed: false}\n" FORMER_GAPS,
		BASE "  acknowledge_unenforced: []\n",
		NULL,
	},
	{
		BASE "  resources:\n    memory_bytes: 4GiB\n    cpu: 0.5\n    wall_clock: 1h30m\n"
		"  acknowledge_unenforced: [resources.memory_bytes, resources.cpu,\n"
		"    resources.wall_clock]\n",
		BASE "  resources:\n    wall_clock: 90m\n    cpu: 500m\n    memory_bytes: 4294967296\n"
		"  acknowledge_unenforced: [resources.wall_clock, resources.cpu, resources.memory_bytes,\n"
		"    network_egress.default, filesystem.exec]\n",
		BASE "  resources: {memory_bytes: 4096MiB, cpu: '0.500', wall_clock: 5400s}\n"
		"  acknowledge_unenforced: [resources.wall_clock, resources.cpu, resources.memory_bytes,\n"
		"    network_egress.default, filesystem.exec, resources.disk_bytes]\n",
		NULL,
	},
	{
		BASE "  network_egress:\n    allowed_destinations: [192.0.2.7, api.github.com:443,"
		" \"2001:db8::/32\"]\n",
		BASE "  network_egress:\n    allowed_destinations:\n      - 2001:DB8::/32\n"
		"      - {host: API.github.com., ports: 443}\n      - ::ffff:192.0.2.7\n"
		FORMER_GAPS,
		BASE "  network_egress:\n    allowed_destinations:\n      - \"2001:db8:0::/32\"\n"
		"      - {cidr: 192.0.2.7/32, protocol: any}\n      - api.github.com:443-443\n",
		NULL,
	},
	{
		/* The egress cap: a size in any unit, acknowledged (as before) or not. */
		BASE "  network_egress:\n    max_bytes: 100MiB\n",
		BASE "  network_egress: {max_bytes: 104857600, default: deny}\n" FORMER_GAPS,
		BASE "  network_egress:\n    max_bytes: 102400KiB\n"
		"  acknowledge_unenforced: [network_egress.max_bytes]\n",
		NULL,
	},
	{
		/* Covered destinations add nothing; ranges and protocols merge. */
		BASE "  network_egress:\n    allowed_destinations: [10.0.0.0/8, '1.2.3.4:80-81',"
		" '*.x.com:443', {host: y.org, protocol: tcp}, {host: y.org, protocol: udp}]\n",
		BASE "  network_egress:\n    allowed_destinations: [10.1.0.0/16, 10.0.0.0/8,"
		" '1.2.3.4:80', '1.2.3.4:81', '*.x.com:443', 'a.x.com:443', y.org,"
		" '*.a.x.com:443']\n",
		BASE "  network_egress:\n    allowed_destinations: ['10.0.0.0/8:1-100',"
		" '10.0.0.0/8:90-65535', {cidr: 10.2.3.4, protocol: udp}, '1.2.3.4:81',"
		" {cidr: 1.2.3.4, ports: 80, protocol: tcp}, {cidr: 1.2.3.4, ports: 80-81,"
		" protocol: udp}, '*.x.com:443', {host: y.org, ports: 1-1000},"
		" 'y.org:999-65535']\n",
		NULL,
	},
	{
		/* gid defaults to the uid; acknowledging the former gaps changes nothing */
		BASE "  identity: {uid: 10000}\n",
		BASE "  identity: {uid: 10000}\n"
		"  acknowledge_unenforced: [identity.uid, identity.gid]\n",
		BASE "  identity: {gid: 10000, uid: 10000}\n"
		"  acknowledge_unenforced: [filesystem.exec, network_egress.default, identity.uid,\n"
		"    identity.gid]\n",
		NULL,
	},
	{
		/* the default identity, 65534:65534, written out or not */
		BASE,
		BASE "  identity: {uid: 65534}\n",
		BASE "  identity: {gid: 65534}\n",
		BASE "  identity: {uid: 65534, gid: 65534}\n"
		"  acknowledge_unenforced: [identity.uid, identity.gid]\n",
		NULL,
	},
	{
		/* the default environment, written out or not */
		BASE,
		BASE "  environment: []\n",
		BASE "  environment: [PATH, LC_ALL, TERM, LANG, LANGUAGE, TZ, LC_CTYPE]\n",
		NULL,
	},
	{
		/* names in any order; defaults among them change nothing */
		BASE "  environment: [CI, GIT_AUTHOR_NAME]\n",
		BASE "  environment: [GIT_AUTHOR_NAME, PATH, CI]\n",
		BASE "  environment:\n    - LC_MESSAGES\n    - \"GIT_AUTHOR_NAME\"\n    - CI\n",
		NULL,
	},
	{
		/* fractions of a CPU, in CPUs or milli-CPUs */
		BASE "  resources: {cpu: 1.5}\n",
		BASE "  resources: {cpu: 1500m}\n",
		BASE "  resources: {cpu: '1.500'}\n  acknowledge_unenforced: [resources.cpu]\n",
		NULL,
	},
};

Test(envelope, equal_meaning_gives_identical_bytes_and_digest)
{
	for (size_t g = 0; g < sizeof(same_meaning) / sizeof(*same_meaning); g++) {
		char *first = encode_hex(same_meaning[g][0]);

		for (size_t i = 1; same_meaning[g][i]; i++) {
			char *other = encode_hex(same_meaning[g][i]);

			cr_expect_str_eq(other, first, "group %zu, text %zu:\n%s", g, i,
					 same_meaning[g][i]);
			free(other);
		}
		free(first);
	}
}

/* One token of examples/full.yaml replaced by another valid value each. */
static const struct {
	const char *from, *to;
} meaning_changes[] = {
	{ "tenant: acme", "tenant: acmf" },
	{ "- NODE_ENV", "- NODE_ENW" },
	{ "- CI\n", "- CJ\n" },
	{ "run_id: run_85a", "run_id: run_85b" },
	{ "uid: 10000", "uid: 10001" },
	{ "gid: 10000", "gid: 10001" },
	{ "host-policy-7", "host-policy-8" },
	{ "5d41402abc4b2a76", "5d41402abc4b2a77" },
	{ "/srv/inputs/dataset", "/srv/inputs/datasef" },
	{ "2c26b46b68ffc68f", "2c26b46b68ffc68e" },
	{ "path: /var/lib/tether/workspaces/run_85a", "path: /var/lib/tether/workspaces/run_85b" },
	{ "source: /srv/repos/web-app", "source: /srv/repos/web-apq" },
	{ "max_bytes: 2GiB", "max_bytes: 1GiB" },
	{ "- src/auth/**", "- src/**" },
	{ "- /tmp/run_85a/**", "- /tmp/run_85b/**" },
	{ "- node_modules/.bin/**", "- node_modules/.bim/**" },
	{ "- src/auth/keys/**", "- src/auth/key/**" },
	{ "- artifact-mirror.internal", "- artifact-mirror.interna1" },
	{ "api.github.com:443", "api.github.com:444" },
	{ "192.0.2.0/24", "192.0.2.0/25" },
	{ "[2001:db8::1]:443", "[2001:db8::2]:443" },
	{ "8000-8100", "8000-8101" },
	{ "protocol: tcp", "protocol: udp" },
	{ "methods: [GET, HEAD]", "methods: [GET]" },
	{ "max_bytes: 100MiB", "max_bytes: 101MiB" },
	{ "192.0.2.53,", "192.0.2.54," },
	{ "min_ttl: 5s", "min_ttl: 6s" },
	{ "max_ttl: 1h", "max_ttl: 2h" },
	{ "cpu: 2", "cpu: 3" },
	{ "memory_bytes: 4GiB", "memory_bytes: 5GiB" },
	{ "process_count: 128", "process_count: 129" },
	{ "disk_bytes: 2GiB", "disk_bytes: 3GiB" },
	{ "open_files: 512", "open_files: 513" },
	{ "output_bytes: 16MiB", "output_bytes: 17MiB" },
	{ "wall_clock: 10m", "wall_clock: 11m" },
	{ "allow: [result.json, reports/**]", "allow: [result.json]" },
	{ "scan: true", "scan: false" },
	{ "hash: true", "hash: false" },
	{ "lease: 15m", "lease: 16m" },
	{ "revoke_credentials: true", "revoke_credentials: false" },
	{ "sink: /var/log/tether/run_85a.jsonl", "sink: stderr" },
	{ "record_allowed: true", "record_allowed: false" },
};

Test(envelope, any_change_of_meaning_changes_the_digest)
{
	char *full = read_file("examples/full.yaml");
	char *base_hex;

	cr_assert_not_null(full);
	base_hex = encode_hex(full);
	for (size_t i = 0; i < sizeof(meaning_changes) / sizeof(*meaning_changes); i++) {
		const char *at = strstr(full, meaning_changes[i].from);
		size_t from_len = strlen(meaning_changes[i].from);
		char *changed, *hex;

		cr_assert_not_null(at, "'%s' not in examples/full.yaml", meaning_changes[i].from);
		cr_assert(asprintf(&changed, "%.*s%s%s", (int)(at - full), full,
				   meaning_changes[i].to, at + from_len) > 0);
		hex = encode_hex(changed);
		cr_expect_str_neq(hex, base_hex, "'%s' -> '%s' kept the digest",
				  meaning_changes[i].from, meaning_changes[i].to);
		free(hex);
		free(changed);
	}
	free(base_hex);
	free(full);
}

/* ---- errors that need the whole envelope ------------------------------------ */

Test(envelope, unacknowledged_gaps_are_errors_at_the_field)
{
	expect_error(BASE "  resources:\n    cpu: 2\n  cleanup: {revoke_credentials: true}\n", 8, 13,
		     "'cleanup.revoke_credentials' is not enforced by this version (tether issues "
		     "no credentials and cannot revoke ones the run obtained); to run without it, "
		     "list 'cleanup.revoke_credentials' under 'acknowledge_unenforced'");
	/* the network's one gap left; acknowledging the former ones does not cover it */
	expect_error(BASE "  network_egress:\n    allowed_destinations: [api.github.com:443]\n"
		     "    methods: [GET]\n    max_bytes: 1GiB\n" FORMER_GAPS, 8, 5,
		     "'network_egress.methods' is not enforced by this version (HTTP methods "
		     "need an HTTP-aware proxy; tether filters addresses and ports only); to run "
		     "without it, list 'network_egress.methods' under 'acknowledge_unenforced'");
}

/*
 * The run's file system (issue 17): a fresh workspace lives for one run,
 * one_run deletes only what tether made, and a size bound holds only where
 * every write the envelope grants lands on the run's own tmpfs.
 */
Test(envelope, disk_limits_need_every_write_on_the_run_file_system)
{
	expect_error(BASE "      max_bytes: 1GiB\n", 6, 7,
		     "'max_bytes' needs 'mode: fresh' or 'fresh_overlay': an existing directory "
		     "is on the host's file system, whose size tether cannot bound");
	expect_error(BASE "      mode: fresh\n", 6, 7,
		     "a 'fresh' workspace is the run's own file system and lives for one run: set "
		     "'workspace_lifetime: one_run' (what must outlive the run leaves it as "
		     "'artifacts')");
	expect_error(BASE "  workspace_lifetime: one_run\n", 6, 3,
		     "'one_run' needs a workspace tether makes ('mode: fresh' or 'fresh_overlay'): "
		     "it never deletes a directory that was there before the run");
	expect_error(BASE "  resources: {disk_inodes: 1000}\n", 6, 15,
		     "'resources.disk_inodes' bounds what the run writes, but the workspace '/ws' "
		     "is a directory on the host's file system: use 'mode: fresh', or make it "
		     "read-only ('write: []')");
	expect_error(FRESH "      max_bytes: 2GiB\n  resources: {disk_bytes: 1GiB}\n", 8, 7,
		     "'max_bytes' (2GiB) is more than 'resources.disk_bytes' (1GiB), which the "
		     "workspace is part of");
	expect_error(FRESH "    write: [/tmp/x/**, /srv/out/**, out/**]\n"
		     "  resources: {disk_bytes: 1GiB}\n", 8, 24,
		     "'/srv/out' in 'write' is on the host's file system, which "
		     "'resources.disk_bytes' cannot bound: write in the workspace (with 'mode: "
		     "fresh') or /tmp, or drop the limit");
}

/* What the disk limits accept: a read-only existing workspace, writes in /tmp and the workspace. */
Test(envelope, disk_limits_with_a_fresh_or_read_only_workspace_compile)
{
	struct tp_policy *p = compile_text(FRESH "      write: [src/**]\n"
					   "    write: [/tmp/x/**, /var/tmp/y/**]\n"
					   "  resources: {disk_bytes: 1GiB, disk_inodes: 4096}\n");

	cr_expect_eq(p->gap_count, 0);
	cr_expect_eq(p->workspace_mode, TP_WORKSPACE_FRESH);
	cr_expect_eq(p->lifetime, TP_LIFETIME_ONE_RUN);
	cr_expect_eq(p->limits[TP_LIMIT_DISK_BYTES], 1ull << 30);
	cr_expect_eq(p->limits[TP_LIMIT_DISK_INODES], 4096);
	tp_policy_free(p);
	p = compile_text(BASE "      write: []\n  resources: {disk_bytes: 1GiB}\n");
	cr_expect_eq(p->gap_count, 0);
	tp_policy_free(p);
}

Test(envelope, gaps_wait_until_the_keys_are_valid)
{
	struct tp_envelope *env = NULL;

	/* One typo: one error, not one per gap the file would have. */
	cr_assert_eq(tp_envelope_parse("t.yaml", BASE "  resource: {cpu: 2}\n",
				       strlen(BASE "  resource: {cpu: 2}\n"), &env, &diags), -EINVAL);
	cr_expect_eq(diags.count, 1);
}

Test(envelope, conflicts_are_reported_at_the_later_entry)
{
	expect_error(BASE "    write: [/data/**]\n    deny: [/data/**]\n"
		     "  acknowledge_unenforced: [filesystem.exec, filesystem.deny]\n",
		     7, 12, "conflicting rules: '/data' is both granted ('filesystem.write') and "
			    "denied ('filesystem.deny')");
	expect_error(BASE "    deny: ['**']\n",
		     6, 12, "conflicting rules: '/ws' is both granted ('filesystem.workspace.write') "
			    "and denied ('filesystem.deny')");
}

Test(envelope, all_errors_of_a_file_in_one_pass)
{
	struct tp_envelope *env = NULL;
	const char *text =
		"sandbox:\n"
		"  identity: {uid: 4294967295}\n"
		"  filesystem:\n"
		"    root: read_only\n"
		"    workspace: {path: /ws, write: [src/*.c]}\n"
		"  network_egress:\n"
		"    allowed_destinations: [192.0.2.1/24, 'api.github.com:0']\n"
		"  resources: {memory_bytes: 2gib, wall_clock: 10, cpu: 2}\n";

	cr_assert_eq(tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags), -EINVAL);
	cr_expect_eq(diags.count, 6, "%s", diag_text());
	cr_expect_eq(diags.items[0].line, 2);
	cr_expect_eq(diags.items[1].line, 5);
	cr_expect_eq(diags.items[2].line, 7);
	cr_expect_eq(diags.items[3].line, 7);
	cr_expect_eq(diags.items[4].line, 8);
	cr_expect_eq(diags.items[5].line, 8);
}

/* Hostile sizes: duplicate detection must not be quadratic (criterion's timeout). */
Test(envelope, fifty_thousand_entries_are_checked_quickly, .timeout = 20)
{
	size_t n = 50000, cap = n * 32 + 4096, len = 0;
	char *text = malloc(cap);
	struct tp_envelope *env = NULL;

	len += (size_t)snprintf(text + len, cap - len, BASE "    read:\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "      - /opt/d%zu/**\n", i % (n - 1));
	cr_assert_eq(tp_envelope_parse("t.yaml", text, len, &env, &diags), -EINVAL);
	cr_expect_eq(diags.count, 1);
	cr_expect(strstr(diags.items[0].message, "listed twice"), "%s", diags.items[0].message);
	free(text);
}

/* Encodes `p` into a temporary file and loads it back as `tether` would. */
static int load_through_file(const struct tp_policy *p, struct tp_policy **loaded)
{
	char path[] = "/tmp/tether-test-XXXXXX";
	uint8_t *bytes = NULL;
	size_t n = 0;
	int fd, r;

	cr_assert_eq(tp_policy_encode(p, &bytes, &n), 0);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, bytes, n), (ssize_t)n);
	close(fd);
	r = tp_policy_load_file(path, loaded, &diags);
	unlink(path);
	free(bytes);
	return r;
}

/* A compiled policy that drops a gap it needs (hand-made, or another version's) is refused. */
Test(envelope, a_compiled_policy_without_a_needed_gap_is_refused)
{
	struct tp_policy *p = compile_text(BASE "  network_egress: {methods: [GET]}\n"
		"  resources: {cpu: 2}\n  cleanup: {revoke_credentials: true}\n"
		"  acknowledge_unenforced: [cleanup.revoke_credentials, network_egress.methods]\n");
	struct tp_policy *loaded = NULL;

	/* gaps are sorted: [cleanup.revoke_credentials, network_egress.methods]; cpu needs none */
	cr_assert_eq(p->gap_count, 2);
	cr_assert_str_eq(p->gaps[0], "cleanup.revoke_credentials");
	free(p->gaps[1]);
	p->gap_count = 1;
	cr_expect_eq(load_through_file(p, &loaded), -EINVAL);
	cr_expect_null(loaded);
	cr_assert_eq(diags.count, 1);
	cr_expect_str_eq(diags.items[0].message,
			 "not a valid compiled policy: it relies on 'network_egress.methods', which "
			 "this version does not enforce (HTTP methods need an HTTP-aware proxy; tether "
			 "filters addresses and ports only), without acknowledging it");
	tp_policy_free(p);
}

/*
 * tests/policyc/golden/diff/NAME.old.yaml and NAME.new.yaml: `tether diff`'s
 * output is NAME.diff, followed by the verdict line.
 */
Test(envelope, diff_goldens)
{
	DIR *dir = opendir(GOLDEN_DIR "/diff");
	struct dirent *entry;
	size_t checked = 0;

	cr_assert_not_null(dir);
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		struct tp_policy *old_policy = NULL, *new_policy = NULL;
		char path[512], name[300];
		char *text = NULL;
		size_t text_len = 0;
		bool widened = false;
		FILE *out;

		if (len < 10 || strcmp(entry->d_name + len - 9, ".old.yaml") != 0)
			continue;
		snprintf(name, sizeof(name), "diff/%.*s", (int)(len - 9), entry->d_name);
		snprintf(path, sizeof(path), "%s/%s.old.yaml", GOLDEN_DIR, name);
		cr_assert_eq(tp_compile_file(path, &old_policy, &diags), 0, "%s", path);
		snprintf(path, sizeof(path), "%s/%s.new.yaml", GOLDEN_DIR, name);
		cr_assert_eq(tp_compile_file(path, &new_policy, &diags), 0, "%s", path);
		out = open_memstream(&text, &text_len);
		cr_assert_eq(tp_diff_write(old_policy, new_policy, out, &widened), 0);
		fprintf(out, "=> %s\n", widened ? "widened (exit 1)" : "not widened (exit 0)");
		fclose(out);
		golden(name, "diff", text);
		free(text);
		tp_policy_free(old_policy);
		tp_policy_free(new_policy);
		checked++;
	}
	closedir(dir);
	cr_expect_geq(checked, 2);
}

/* A .tpol is held to the envelope's rules when loaded: a tampered rule is refused. */
Test(envelope, a_compiled_policy_that_writes_a_kernel_tree_is_refused)
{
	struct tp_policy *p = compile_text(BASE);
	struct tp_policy *loaded = NULL;

	/* "/", /bin ... /opt, /sbin, /usr, /ws: "/sys/fs/cgroup" sorts where "/sbin" is */
	cr_assert_eq(p->path_rule_count, 2 + 8);
	cr_assert_str_eq(p->path_rules[7].path, "/sbin");
	free(p->path_rules[7].path);
	p->path_rules[7].path = strdup("/sys/fs/cgroup");
	p->path_rules[7].access = R | W;
	cr_expect_eq(load_through_file(p, &loaded), -EINVAL);
	cr_assert_eq(diags.count, 1);
	cr_expect_str_eq(diags.items[0].message, "not a valid compiled policy: it makes "
			 "'/sys/fs/cgroup' writable, a kernel interface");
	tp_policy_free(p);
}

/* ... and so is one that lists a gap this version does not have. */
Test(envelope, a_compiled_policy_with_an_unknown_gap_is_refused)
{
	struct tp_policy *p = compile_text(BASE);
	struct tp_policy *loaded = NULL;
	char **gaps;

	gaps = realloc(p->gaps, (p->gap_count + 1) * sizeof(*gaps));
	cr_assert_not_null(gaps);
	p->gaps = gaps;
	p->gaps[p->gap_count++] = strdup("zz.not_a_field");	/* sorts last */
	cr_expect_eq(load_through_file(p, &loaded), -EINVAL);
	cr_assert_eq(diags.count, 1);
	cr_expect_str_eq(diags.items[0].message, "not a valid compiled policy: it acknowledges "
			 "'zz.not_a_field', which is not a gap of this version");
	tp_policy_free(p);
}

/*
 * ... and so is one that acknowledges a former gap: the previous version's
 * policies all listed network_egress.default.  Recompiling the envelope drops
 * it.
 */
Test(envelope, a_compiled_policy_with_a_former_gap_is_refused)
{
	static const char *const former[] = { "network_egress.default", "network_egress.max_bytes",
					      "identity.uid", "identity.gid", "resources.cpu",
					      "resources.wall_clock" };

	for (size_t i = 0; i < sizeof(former) / sizeof(*former); i++) {
		struct tp_policy *p = compile_text(BASE "  network_egress: {max_bytes: 1GiB}\n");
		struct tp_policy *loaded = NULL;
		char **gaps;

		cr_assert_eq(p->gap_count, 0);
		/* as compiled here, it loads */
		cr_assert_eq(load_through_file(p, &loaded), 0, "%s",
			     diags.count ? diags.items[0].message : "");
		cr_expect_eq(loaded->limits[TP_LIMIT_EGRESS_BYTES], 1ull << 30);
		tp_policy_free(loaded);
		loaded = NULL;
		gaps = realloc(p->gaps, sizeof(*gaps));
		cr_assert_not_null(gaps);
		p->gaps = gaps;
		p->gaps[p->gap_count++] = strdup(former[i]);
		cr_expect_eq(load_through_file(p, &loaded), -EINVAL);
		cr_expect_null(loaded);
		cr_assert_eq(diags.count, 1);
		cr_expect(strstr(diags.items[0].message, "not a valid compiled policy: it "
				 "acknowledges '") &&
			  strstr(diags.items[0].message, former[i]) &&
			  strstr(diags.items[0].message, "', which is not a gap of this version"),
			  "%s", diags.items[0].message);
		tp_diags_free(&diags);
		tp_policy_free(p);
	}
}

/* Every unacknowledged gap of a file is reported, not only the first. */
Test(envelope, every_unacknowledged_gap_is_reported)
{
	const char *text = BASE "  network_egress: {methods: [GET], max_bytes: 1GiB}\n"
		"  resources: {cpu: 2, memory_bytes: 1GiB}\n"
		"  image_digest: \"sha256:1111111111111111111111111111111111111111111111111111111111111111\"\n"
		"  cleanup: {lease: 1h, revoke_credentials: true}\n";
	struct tp_envelope *env = NULL;

	cr_assert_eq(tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags), -EINVAL);
	/* max_bytes, cpu, memory_bytes and lease are enforced: no diagnostic for them */
	cr_assert_eq(diags.count, 3, "%s", diag_text());
	cr_expect(strstr(diags.items[0].message, "'network_egress.methods'"));
	cr_expect(strstr(diags.items[1].message, "'image_digest'"));
	cr_expect(strstr(diags.items[2].message, "'cleanup.revoke_credentials'"));
}

/* ---- filesystem.exec keywords and check's warnings ------------------------------ */

#define FS_HEAD "sandbox:\n  filesystem:\n    root: read_only\n    workspace: {path: /ws}\n"

Test(envelope, exec_at_system_compiles_like_no_exec_list)
{
	uint8_t none[32], sys[32], extra[32], replaced[32];

	digest_of(FS_HEAD, none);
	digest_of(FS_HEAD "    exec: [\"@system\"]\n", sys);
	cr_expect_eq(memcmp(none, sys, 32), 0, "@system alone is the default");
	digest_of(FS_HEAD "    exec: [\"@system\", \"/srv/tools/**\"]\n", extra);
	digest_of(FS_HEAD "    exec: [\"/srv/tools/**\"]\n", replaced);
	cr_expect_neq(memcmp(extra, replaced, 32), 0);
}

Test(envelope, exec_at_system_keeps_the_system_trees_and_adds)
{
	struct tp_policy *p = compile_text(FS_HEAD "    exec: [\"@system\", \"/srv/tools/**\"]\n");
	bool usr = false, tools = false;

	for (size_t i = 0; i < p->path_rule_count; i++) {
		usr |= strcmp(p->path_rules[i].path, "/usr") == 0 &&
		       (p->path_rules[i].access & TETHER_ACCESS_EXEC);
		tools |= strcmp(p->path_rules[i].path, "/srv/tools") == 0 &&
			 (p->path_rules[i].access & TETHER_ACCESS_EXEC);
	}
	cr_expect(usr && tools);
	cr_expect_eq(p->flags & TP_POLICY_TMP_EXEC, 0);
	tp_policy_free(p);
}

Test(envelope, exec_at_tmp_sets_the_flag_and_alone_drops_the_system_trees)
{
	struct tp_policy *p = compile_text(FS_HEAD "    exec: [\"@tmp\"]\n");

	cr_expect(p->flags & TP_POLICY_TMP_EXEC);
	for (size_t i = 0; i < p->path_rule_count; i++)
		cr_expect_eq(p->path_rules[i].access & TETHER_ACCESS_EXEC, 0, "%s",
			     p->path_rules[i].path);
	tp_policy_free(p);
}

Test(envelope, unknown_and_repeated_exec_keywords_are_errors)
{
	const char *text = FS_HEAD "    exec: [\"@bin\", \"@tmp\", \"@tmp\"]\n";
	struct tp_envelope *env = NULL;
	char *d;

	cr_assert_eq(tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags), -EINVAL);
	d = diag_text();
	cr_expect_not_null(strstr(d, "t.yaml:5:12: error: unknown keyword '@bin' in "
				  "'filesystem.exec': the keywords are @system"), "%s", d);
	cr_expect_not_null(strstr(d, "t.yaml:5:28: error: '@tmp' is listed twice in "
				  "'filesystem.exec' (first at line 5, column 20)"), "%s", d);
	free(d);
}

static char *warnings_of(const char *text)
{
	struct tp_envelope *env = NULL;
	struct tp_diags w = { 0 };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert_eq(tp_envelope_parse("t.yaml", text, strlen(text), &env, &diags), 0);
	cr_assert_eq(tp_envelope_warnings("t.yaml", env, &w), 0);
	for (size_t i = 0; i < w.count; i++)
		fprintf(f, "%u:%u: %s\n", w.items[i].line, w.items[i].column, w.items[i].message);
	fclose(f);
	tp_diags_free(&w);
	tp_envelope_free(env);
	return out;
}

Test(envelope, check_warns_about_writable_executable_paths_and_lost_system_trees)
{
	char *w = warnings_of(FS_HEAD "    exec: [\"@tmp\", \"/srv/**\"]\n"
				      "    write: [/srv/data/**, /srv/bin/**]\n");

	cr_expect_not_null(strstr(w, "5:12: @tmp makes the run's private /tmp and /var/tmp both "
				  "writable and executable"), "%s", w);
	cr_expect_not_null(strstr(w, "'/srv' does not make '/srv/data' beneath it executable"),
			   "%s", w);
	cr_expect_not_null(strstr(w, "this exec list replaces the system software trees"), "%s",
			   w);
	free(w);
	w = warnings_of(FS_HEAD "    exec: [\"@system\", \"/srv/bin/**\"]\n"
				"    write: [/srv/bin/**]\n");
	cr_expect_str_eq(w, "5:23: '/srv/bin' is both writable (by '/srv/bin') and executable: "
			    "the run can write a program there and run it; review it\n");
	free(w);
	w = warnings_of(FS_HEAD);
	cr_expect_str_eq(w, "");
	free(w);
}
