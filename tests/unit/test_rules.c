// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/plan/rules.c: a run's kernel rules, resolved on a scratch tree made by
 * each test under /tmp (symlinks included).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "runtime/plan/rules.h"

static char root[64];	/* short: every path built from it fits PATH_MAX */

static void make_tree(void)
{
	char path[PATH_MAX];

	snprintf(root, sizeof(root), "/tmp/tether-test-rules-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/ws", root);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/link", root);
	cr_assert_eq(symlink("ws", path), 0);
}

static void remove_tree(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(rules, .init = make_tree, .fini = remove_tree);

/* A policy of `n` rules: "/" READ, then `paths` with `access`. */
static struct tp_policy *policy(const char *const *paths, const uint32_t *access, size_t n)
{
	struct tp_policy *p = calloc(1, sizeof(*p));

	cr_assert_not_null(p);
	p->path_rules = calloc(n + 1, sizeof(*p->path_rules));
	cr_assert_not_null(p->path_rules);
	p->path_rules[0] = (struct tp_path_rule){ strdup("/"), TETHER_ACCESS_READ, 1 };
	for (size_t i = 0; i < n; i++)
		p->path_rules[i + 1] = (struct tp_path_rule){ strdup(paths[i]), access[i], 1 };
	p->path_rule_count = n + 1;
	return p;
}

static size_t protected_count(void)
{
	size_t n = 0;

	while (tp_protected_paths[n])
		n++;
	return n;
}

static const struct tl_path_rule *find(const struct tl_path_rule *rules, size_t n,
				       const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rules[i].path, path) == 0)
			return &rules[i];
	return NULL;
}

Test(rules, policy_first_then_tmpdir_protected_and_audit)
{
	char ws[PATH_MAX], tmp[PATH_MAX], audit[PATH_MAX];
	const char *paths[1] = { ws };
	const uint32_t access[1] = { TETHER_ACCESS_READ | TETHER_ACCESS_WRITE };
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p;
	const struct tl_path_rule *r;
	size_t n = 0, seen = 0;

	snprintf(ws, sizeof(ws), "%s/ws", root);
	snprintf(tmp, sizeof(tmp), "%s/tmpdir", root);
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", root);
	p = policy(paths, access, 1);
	cr_assert_eq(run_rules_resolve(p, &(struct tl_path_rule){ .path = tmp, .access =
		TETHER_ACCESS_READ | TETHER_ACCESS_WRITE | TETHER_ACCESS_CONNECT }, 1, audit,
		&rules, &n), 0);
	/* "/", ws, the private tree, then every protected path at most once, then the audit file */
	cr_expect_str_eq(rules[0].path, "/");
	cr_expect_str_eq(rules[1].path, ws);
	cr_expect_eq(rules[1].access, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE);
	cr_expect_str_eq(rules[2].path, tmp);
	cr_expect_eq(rules[2].access,
		     TETHER_ACCESS_READ | TETHER_ACCESS_WRITE | TETHER_ACCESS_CONNECT);
	r = find(rules, n, audit);
	cr_assert_not_null(r, "the audit file is protected");
	cr_expect_eq(r->access, TETHER_ACCESS_PROTECTED);
	cr_expect_eq(r, &rules[n - 1]);
	for (size_t i = 3; i < n; i++) {
		cr_expect_eq(rules[i].access, TETHER_ACCESS_PROTECTED, "%s", rules[i].path);
		seen++;
	}
	/* /var/run/secrets and /run/secrets may resolve to one path */
	cr_expect(seen <= protected_count() + 1 && seen + 1 >= protected_count(), "%zu", seen);
	r = find(rules, n, "/etc/shadow");
	cr_expect(r && r->access == TETHER_ACCESS_PROTECTED);
	run_rules_free(rules, n);
	tp_policy_free(p);
}

/* A rule on the exact path re-opens a protected one: no protected rule is added there. */
Test(rules, a_policy_rule_on_a_protected_path_replaces_it)
{
	const char *paths[1] = { "/etc/shadow" };
	const uint32_t access[1] = { TETHER_ACCESS_READ };
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p = policy(paths, access, 1);
	size_t n = 0, count = 0;

	cr_assert_eq(run_rules_resolve(p, NULL, 0, NULL, &rules, &n), 0);
	for (size_t i = 0; i < n; i++)
		count += strcmp(rules[i].path, "/etc/shadow") == 0;
	cr_expect_eq(count, 1);
	cr_expect_eq(find(rules, n, "/etc/shadow")->access, TETHER_ACCESS_READ);
	run_rules_free(rules, n);
	tp_policy_free(p);
}

Test(rules, a_writable_rule_through_a_symlink_is_refused)
{
	char link[PATH_MAX];
	const char *paths[1] = { link };
	const uint32_t access[1] = { TETHER_ACCESS_READ | TETHER_ACCESS_WRITE };
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p;
	size_t n = 0;

	snprintf(link, sizeof(link), "%s/link", root);
	p = policy(paths, access, 1);
	cr_expect_eq(run_rules_resolve(p, NULL, 0, NULL, &rules, &n), -ELOOP);
	cr_expect_null(rules);
	tp_policy_free(p);
}

/* A read rule follows the link: the kernel sees resolved paths. */
Test(rules, a_read_rule_follows_a_symlink_and_missing_parts_are_kept)
{
	char link[PATH_MAX], want[PATH_MAX];
	const char *paths[1] = { link };
	const uint32_t access[1] = { TETHER_ACCESS_READ | TETHER_ACCESS_EXEC };
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p;
	size_t n = 0;

	snprintf(link, sizeof(link), "%s/link/not/yet", root);
	snprintf(want, sizeof(want), "%s/ws/not/yet", root);
	p = policy(paths, access, 1);
	cr_assert_eq(run_rules_resolve(p, NULL, 0, NULL, &rules, &n), 0);
	cr_expect_str_eq(rules[1].path, want);
	run_rules_free(rules, n);
	tp_policy_free(p);
}

/* An audit file too long for a kernel rule cannot be protected: the run is refused. */
Test(rules, an_audit_path_too_long_to_protect_is_refused)
{
	char audit[PATH_MAX];
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p = policy(NULL, NULL, 0);
	size_t n = 0, len;

	len = (size_t)snprintf(audit, sizeof(audit), "%s/", root);
	memset(audit + len, 'a', TETHER_PATH_KEY_MAX);
	audit[len + TETHER_PATH_KEY_MAX] = '\0';
	cr_expect_eq(run_rules_resolve(p, NULL, 0, audit, &rules, &n), -ENAMETOOLONG);
	cr_expect_null(rules);
	tp_policy_free(p);
}

/* A relative audit path is taken from the working directory. */
Test(rules, a_relative_audit_path_is_made_absolute)
{
	char want[PATH_MAX], cwd[PATH_MAX];
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p = policy(NULL, NULL, 0);
	size_t n = 0;

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(root), 0);
	snprintf(want, sizeof(want), "%s/rel.jsonl", root);
	cr_assert_eq(run_rules_resolve(p, NULL, 0, "rel.jsonl", &rules, &n), 0);
	cr_expect_str_eq(rules[n - 1].path, want);
	cr_expect_eq(rules[n - 1].access, TETHER_ACCESS_PROTECTED);
	cr_assert_eq(chdir(cwd), 0);
	run_rules_free(rules, n);
	tp_policy_free(p);
}

/*
 * The run's private trees come after the policy's rules; a policy rule on
 * the same path decides there, and a protected path the tree covers (the
 * run's own /dev/shm) gives way to it.
 */
Test(rules, private_trees_follow_the_policy_and_replace_a_protected_path)
{
	const char *paths[1] = { "/dev/shm" };
	const uint32_t access[1] = { TETHER_ACCESS_READ };
	const struct tl_path_rule extra[2] = {
		{ .path = "/dev/shm", .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE },
		{ .path = "/dev/mqueue", .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE },
	};
	struct tl_path_rule *rules = NULL;
	struct tp_policy *p = policy(paths, access, 1);
	size_t n = 0, shm = 0, mq = 0;

	cr_assert_eq(run_rules_resolve(p, extra, 2, NULL, &rules, &n), 0);
	for (size_t i = 0; i < n; i++) {
		shm += strcmp(rules[i].path, "/dev/shm") == 0;
		mq += strcmp(rules[i].path, "/dev/mqueue") == 0;
	}
	cr_expect_eq(shm, 1);
	cr_expect_eq(mq, 1);
	cr_expect_eq(find(rules, n, "/dev/shm")->access, TETHER_ACCESS_READ, "the policy decides");
	cr_expect_eq(find(rules, n, "/dev/mqueue")->access,
		     TETHER_ACCESS_READ | TETHER_ACCESS_WRITE, "not the protected rule");
	run_rules_free(rules, n);
	tp_policy_free(p);
}
