// SPDX-License-Identifier: GPL-2.0
/*
 * One envelope, many runs: tp_envelope_parse_bound() and
 * tp_policy_load_bound() (a run's id and workspace filled into an envelope
 * written once, checked as if written so, the written envelope's digest kept).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/cleanup.h"
#include "policyc/policy.h"

#define HEAD                          \
	"sandbox:\n"                  \
	"  filesystem:\n"             \
	"    root: read_only\n"       \
	"    workspace:\n"
/* the path is on line 5, column 13 */
#define TEMPLATE HEAD "      path: /srv/runs/${RUN_ID}\n      write: [\"out/**\"]\n"
#define FIXED HEAD "      path: /srv/agent/ws\n      write: [\"out/**\"]\n"

static struct tp_diags diags;
static struct tp_policy *policy;

static void fini(void)
{
	tp_diags_free(&diags);
	tp_policy_free(policy);
	policy = NULL;
}

TestSuite(binding, .fini = fini, .timeout = 20);

static int load(const char *text, const char *run_id, const char *workspace, uint8_t digest[32])
{
	const struct tp_run_binding bind = { run_id, workspace };

	tp_diags_free(&diags);
	tp_policy_free(policy);
	policy = NULL;
	return tp_policy_load_bound("t.yaml", text, strlen(text), &bind, &policy, digest, &diags);
}

static char *diag_text(void)
{
	char *text = NULL;

	cr_assert_eq(tp_diags_format(&diags, &text), 0);
	return text;
}

static bool has_path(const char *path, uint32_t access)
{
	for (size_t i = 0; i < policy->path_rule_count; i++)
		if (strcmp(policy->path_rules[i].path, path) == 0 &&
		    policy->path_rules[i].access == access)
			return true;
	return false;
}

Test(binding, run_id_fills_the_workspace_and_its_relative_rules)
{
	uint8_t d1[32], d2[32], e1[32], e2[32];

	cr_assert_eq(load(TEMPLATE, "task-1", NULL, d1), 0);
	cr_assert_str_eq(policy->workspace, "/srv/runs/task-1");
	cr_assert(has_path("/srv/runs/task-1/out", TETHER_ACCESS_READ | TETHER_ACCESS_WRITE),
		  "workspace.write resolved against the bound workspace");
	cr_assert_eq(tp_policy_digest(policy, e1), 0);
	cr_assert_eq(load(TEMPLATE, "task-2", NULL, d2), 0);
	cr_assert_str_eq(policy->workspace, "/srv/runs/task-2");
	cr_assert_eq(tp_policy_digest(policy, e2), 0);
	cr_assert_eq(memcmp(d1, d2, 32), 0, "one envelope, one digest");
	cr_assert_neq(memcmp(e1, e2, 32), 0, "the enforced policies differ");
	cr_assert_neq(memcmp(d1, e1, 32), 0, "the written envelope is not what is enforced");
}

Test(binding, unbound_the_placeholder_is_part_of_the_path)
{
	uint8_t d[32], e[32];

	cr_assert_eq(load(TEMPLATE, NULL, NULL, d), 0);
	cr_assert_str_eq(policy->workspace, "/srv/runs/${RUN_ID}");
	cr_assert_eq(tp_policy_digest(policy, e), 0);
	cr_assert_eq(memcmp(d, e, 32), 0);
}

Test(binding, every_placeholder_is_filled)
{
	uint8_t d[32];

	cr_assert_eq(load(HEAD "      path: /srv/${RUN_ID}/ws-${RUN_ID}\n", "r.7", NULL, d), 0);
	cr_assert_str_eq(policy->workspace, "/srv/r.7/ws-r.7");
}

Test(binding, a_workspace_replaces_the_path)
{
	uint8_t d[32], written[32], e[32];

	cr_assert_eq(load(FIXED, NULL, NULL, written), 0);
	cr_assert_eq(load(FIXED, "any", "/srv/other//ws/", d), 0);
	cr_assert_str_eq(policy->workspace, "/srv/other/ws", "normalised like a written path");
	cr_assert(has_path("/srv/other/ws/out", TETHER_ACCESS_READ | TETHER_ACCESS_WRITE));
	cr_assert_not(has_path("/srv/agent/ws/out", TETHER_ACCESS_READ | TETHER_ACCESS_WRITE));
	cr_assert_eq(memcmp(d, written, 32), 0);
	cr_assert_eq(tp_policy_digest(policy, e), 0);
	cr_assert_neq(memcmp(d, e, 32), 0);
	/* it wins over the placeholder too */
	cr_assert_eq(load(TEMPLATE, "task-1", "/srv/given", d), 0);
	cr_assert_str_eq(policy->workspace, "/srv/given");
}

Test(binding, nothing_to_bind_is_the_written_policy)
{
	uint8_t d[32], e[32];

	cr_assert_eq(load(FIXED, "task-1", NULL, d), 0);
	cr_assert_str_eq(policy->workspace, "/srv/agent/ws");
	cr_assert_eq(tp_policy_digest(policy, e), 0);
	cr_assert_eq(memcmp(d, e, 32), 0);
}

/* A bound path meets every check a written one does, reported at the path. */
Test(binding, a_bad_bound_workspace_is_an_error_at_the_path)
{
	static const struct {
		const char *workspace, *message;
	} cases[] = {
		{ "/", "t.yaml:5:13: error: the run's workspace must not be '/': that would make the whole file system writable\n" },
		{ "/proc/self", "t.yaml:5:13: error: the run's workspace must not be in /proc: files there are kernel interfaces, not storage\n" },
		{ "relative/ws", "t.yaml:5:13: error: 'the run's workspace' must be an absolute path (starting with '/'), got 'relative/ws'\n" },
	};
	uint8_t d[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *text = NULL;

		cr_assert_eq(load(TEMPLATE, "task-1", cases[i].workspace, d), -EINVAL, "%s",
			     cases[i].workspace);
		cr_assert_null(policy);
		text = diag_text();
		cr_assert_str_eq(text, cases[i].message);
	}
}

Test(binding, a_long_run_id_can_overflow_the_rule_key)
{
	char path[300], text[512];
	uint8_t d[32];

	/* 240 bytes before the placeholder: fine written, over 251 bytes bound to 64 */
	memset(path, 'a', 240);
	path[0] = '/';
	strcpy(path + 240, "${RUN_ID}");
	snprintf(text, sizeof(text), HEAD "      path: %s\n", path);
	cr_assert_eq(load(text, NULL, NULL, d), 0);
	cr_assert_eq(load(text, "0123456789012345678901234567890123456789012345678901234567890123",
			  NULL, d), -EINVAL);
	_cleanup_free_ char *msg = diag_text();
	cr_assert(strstr(msg, "t.yaml:5:13: error: 'path (${RUN_ID} filled in)' is 304 bytes long after normalisation"),
		  "%s", msg);
}

Test(binding, rules_are_checked_again_against_the_bound_workspace)
{
	const char *text = HEAD "      path: /srv/a\n      write: [\"out/**\"]\n"
			   "    deny: [/srv/b/out/**]\n";
	uint8_t d[32];

	cr_assert_eq(load(text, NULL, NULL, d), 0);
	cr_assert_eq(load(text, NULL, "/srv/b", d), -EINVAL);
	_cleanup_free_ char *msg = diag_text();
	cr_assert(strstr(msg, "conflicting rules: '/srv/b/out' is both granted"), "%s", msg);
}

Test(binding, a_compiled_policy_cannot_be_bound)
{
	uint8_t *bytes = NULL, d[32];
	size_t len = 0;

	cr_assert_eq(load(TEMPLATE, NULL, NULL, d), 0);
	cr_assert_eq(tp_policy_encode(policy, &bytes, &len), 0);
	const struct tp_run_binding by_id = { "task-1", NULL }, by_ws = { NULL, "/srv/x" },
				    none = { 0 };
	struct tp_policy *p = NULL;

	cr_assert_eq(tp_policy_load_bound("p.tpol", (const char *)bytes, len, &by_id, &p, d,
					  &diags), -EINVAL);
	_cleanup_free_ char *m1 = diag_text();
	cr_assert_str_eq(m1, "p.tpol: error: the workspace '/srv/runs/${RUN_ID}' holds ${RUN_ID}, "
			     "which only an envelope can fill in: run the envelope this policy was "
			     "compiled from\n");
	tp_diags_free(&diags);
	cr_assert_eq(tp_policy_load_bound("p.tpol", (const char *)bytes, len, &by_ws, &p, d,
					  &diags), -EINVAL);
	_cleanup_free_ char *m2 = diag_text();
	cr_assert_str_eq(m2, "p.tpol: error: a compiled policy cannot take a per-run workspace: "
			     "run the envelope it was compiled from\n");
	tp_diags_free(&diags);
	cr_assert_eq(tp_policy_load_bound("p.tpol", (const char *)bytes, len, &none, &p, d,
					  &diags), 0);
	cr_assert_str_eq(p->workspace, "/srv/runs/${RUN_ID}");
	tp_policy_free(p);
	free(bytes);
}
