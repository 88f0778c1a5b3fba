// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/plan/paths.c: resolved rules + this host -> the identities and pins the
 * loader writes, on a scratch tree under /tmp.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "policyc/policy.h"
#include "runtime/plan/paths.h"
#include "runtime/plan/plan.h"

static char root[64];

static void sub(char *buf, const char *rest)
{
	snprintf(buf, PATH_MAX, "%s%s", root, rest);
}

static void make_tree(void)
{
	char path[PATH_MAX];

	snprintf(root, sizeof(root), "/tmp/tether-test-plan-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	sub(path, "/ws");
	cr_assert_eq(mkdir(path, 0755), 0);
	sub(path, "/ws/in");
	cr_assert_eq(mkdir(path, 0755), 0);
	sub(path, "/ws/in/data");
	cr_assert_eq(mkdir(path, 0755), 0);
	sub(path, "/link");
	cr_assert_eq(symlink("ws", path), 0);
}

static void remove_tree(void)
{
	char path[PATH_MAX];

	sub(path, "/link");
	unlink(path);
	sub(path, "/ws/in/data");
	rmdir(path);
	sub(path, "/ws/in");
	rmdir(path);
	sub(path, "/ws");
	rmdir(path);
	rmdir(root);
}

TestSuite(plan, .init = make_tree, .fini = remove_tree);

static void identity(const char *rest, uint32_t *dev, uint64_t *ino)
{
	char path[PATH_MAX];
	struct stat st;

	sub(path, rest);
	cr_assert_eq(lstat(path, &st), 0);
	*dev = (uint32_t)((major(st.st_dev) << 20) | minor(st.st_dev));
	*ino = st.st_ino;
}

static const struct tl_inode_pin *find_pin(const struct tl_run_plan *plan, uint64_t ino)
{
	for (size_t i = 0; i < plan->pin_count; i++)
		if (plan->pins[i].ino == ino)
			return &plan->pins[i];
	return NULL;
}

Test(plan, writable_rules_and_carve_outs_get_identities_and_pins)
{
	char ws[PATH_MAX], data[PATH_MAX], missing[PATH_MAX], link[PATH_MAX];
	struct tl_path_rule rules[] = {
		{ .path = "/", .access = TETHER_ACCESS_READ },
		{ .path = ws, .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE },
		{ .path = data, .access = TETHER_ACCESS_READ },	/* a carve-out */
		{ .path = missing, .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE },
		{ .path = link, .access = TETHER_ACCESS_READ | TETHER_ACCESS_WRITE },
	};
	struct tl_error err = { { 0 } };
	const struct tl_inode_pin *pin;
	struct tl_run_plan plan;
	uint32_t dev;
	uint64_t ino;

	sub(ws, "/ws");
	sub(data, "/ws/in/data");
	sub(missing, "/ws/not-yet");
	sub(link, "/link");
	cr_assert_eq(run_plan_build(rules, 5, &plan, &err), 0, "%s", err.msg);
	cr_assert_eq(plan.rules, rules);
	cr_assert_eq(plan.rule_count, 5);
	/* "/" grants no write and is below none: no identity */
	cr_assert_not(rules[0].has_inode);
	identity("/ws", &dev, &ino);
	cr_assert(rules[1].has_inode);
	cr_assert_eq(rules[1].dev, dev);
	cr_assert_eq(rules[1].ino, ino);
	identity("/ws/in/data", &dev, &ino);
	cr_assert(rules[2].has_inode);
	cr_assert_eq(rules[2].ino, ino);
	/* a path that does not exist has no identity yet; a symlink is never followed */
	cr_assert_not(rules[3].has_inode);
	cr_assert_not(rules[4].has_inode);

	/* in: covered by the workspace rule */
	identity("/ws/in", &dev, &ino);
	pin = find_pin(&plan, ino);
	cr_assert_not_null(pin);
	cr_assert_eq(pin->dev, dev);
	cr_assert_eq(pin->access, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE);
	cr_assert_eq(pin->rule_id, 1);
	/* the workspace itself: its own inode rule, which only gains the pin */
	identity("/ws", &dev, &ino);
	pin = find_pin(&plan, ino);
	cr_assert_not_null(pin);
	cr_assert_eq(pin->rule_id, 1);
	/* the scratch root and /tmp: covered by "/" */
	identity("", &dev, &ino);
	pin = find_pin(&plan, ino);
	cr_assert_not_null(pin);
	cr_assert_eq(pin->access, TETHER_ACCESS_READ);
	cr_assert_eq(pin->rule_id, 0);
	/* the carve-out itself is not pinned: only the directories above it */
	identity("/ws/in/data", &dev, &ino);
	cr_assert_null(find_pin(&plan, ino));
	run_plan_free(&plan);
	cr_assert_null(plan.pins);
}

Test(plan, no_writable_rule_no_pins)
{
	char ws[PATH_MAX];
	struct tl_path_rule rules[] = {
		{ .path = "/", .access = TETHER_ACCESS_READ },
		{ .path = ws, .access = TETHER_ACCESS_READ | TETHER_ACCESS_EXEC },
	};
	struct tl_run_plan plan;

	sub(ws, "/ws/in");
	cr_assert_eq(run_plan_build(rules, 2, &plan, NULL), 0);
	cr_assert_not(rules[0].has_inode);
	cr_assert_not(rules[1].has_inode);
	cr_assert_eq(plan.pin_count, 0);
	run_plan_free(&plan);
}

Test(plan, an_empty_policy_is_an_empty_plan)
{
	struct tl_run_plan plan;

	cr_assert_eq(run_plan_build(NULL, 0, &plan, NULL), 0);
	cr_assert_eq(plan.rule_count, 0);
	cr_assert_eq(plan.pin_count, 0);
	run_plan_free(&plan);
}

/*
 * audit.fail_closed reaches the run's kernel state, and records what it
 * allows: without those records there is nothing to refuse when the ring
 * is full.
 */
Test(plan, fail_closed_sets_the_run_flag_and_records_allowed_actions)
{
	static const struct {
		uint32_t policy_flags;
		bool audit_allowed;
		uint32_t run_flags;
	} cases[] = {
		{ 0, false, 0 },
		{ 0, true, TETHER_RUN_AUDIT_ALLOWED },
		{ TP_POLICY_AUDIT_FAIL_CLOSED, false,
		  TETHER_RUN_AUDIT_ALLOWED | TETHER_RUN_FAIL_CLOSED },
		{ TP_POLICY_AUDIT_FAIL_CLOSED, true,
		  TETHER_RUN_AUDIT_ALLOWED | TETHER_RUN_FAIL_CLOSED },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct tp_policy policy = { .flags = cases[i].policy_flags };
		struct net_plan net = { .policy = &policy };
		struct run_plan_input in = { .policy = &policy, .net = &net,
					     .audit_allowed = cases[i].audit_allowed };
		struct tl_error err = { { 0 } };
		struct tl_run_plan plan;

		cr_assert_eq(run_plan_make(&in, &plan, &err), 0, "%zu: %s", i, err.msg);
		cr_expect_eq(plan.run_flags, cases[i].run_flags, "%zu: %#x", i, plan.run_flags);
		run_plan_free(&plan);
	}
}
