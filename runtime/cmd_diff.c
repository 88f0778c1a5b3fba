// SPDX-License-Identifier: GPL-2.0
/*
 * tether diff: what changes from one envelope to another, and whether
 * authority widened.  Exit statuses (README.md): 0 no wider, 1 widened, 2
 * usage error, 3 an invalid input (1 is the verdict).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/policy_json.h"
#include "runtime/tether.h"

#define TETHER_EXIT_DIFF_INVALID 3

static const char diff_usage[] =
	"usage: tether diff [--json] OLD NEW\n"
	"\n"
	"Lists every widening and narrowing of authority from OLD to NEW (envelopes\n"
	"or compiled policies), widenings first, compared by meaning: what a run may\n"
	"read, write, execute, reach and consume, not how the files are written.\n"
	"One of OLD and NEW may be - (standard input).  --json prints one JSON\n"
	"object instead (docs/envelope.md): each input's errors and digest, whether\n"
	"authority widened, and every change.\n"
	"Exits 0 when nothing widened, 1 when something did (so it can gate a\n"
	"review), 2 on a usage error, 3 when an input is invalid.\n";

static int diff_json(const char *old_path, const char *new_path)
{
	struct tp_policy *old_policy = NULL, *new_policy = NULL;
	struct tp_diags old_diags = { 0 }, new_diags = { 0 };
	struct tp_change *changes = NULL;
	struct strbuf sb = { 0 };
	size_t count = 0;
	bool widened = false;
	int r_old, r_new, r = -EINVAL, s, status;

	r_old = policy_load_diags(old_path, &old_policy, &old_diags);
	r_new = policy_load_diags(new_path, &new_policy, &new_diags);
	if (old_policy && new_policy)
		r = tp_diff_changes(old_policy, new_policy, &changes, &count, &widened);
	s = sb_printf(&sb, "{\"old\":{");
	s = s ?: json_input_members(&sb, policy_input_name(old_path), old_policy, &old_diags,
				    r_old, NULL);
	s = s ?: sb_printf(&sb, "},\"new\":{");
	s = s ?: json_input_members(&sb, policy_input_name(new_path), new_policy, &new_diags,
				    r_new, NULL);
	s = s ?: sb_printf(&sb, "},\"widened\":%s,\"changes\":",
			   r < 0 ? "null" : widened ? "true" : "false");
	s = s ?: json_changes(&sb, changes, count);
	s = s ?: sb_printf(&sb, "}\n");
	if (s == 0 && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
		s = -EIO;
	if (s < 0 || (old_policy && new_policy && r < 0))
		fprintf(stderr, "tether diff: %s: %s\n",
			s < 0 ? "writing the JSON answer" : "comparing the policies",
			strerror(s < 0 ? -s : -r));
	status = s < 0 || r < 0 ? TETHER_EXIT_DIFF_INVALID : widened ? 1 : TETHER_EXIT_OK;
	tp_changes_free(changes, count);
	sb_free(&sb);
	tp_diags_free(&old_diags);
	tp_diags_free(&new_diags);
	tp_policy_free(old_policy);
	tp_policy_free(new_policy);
	return status;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct tp_policy *old_policy = NULL, *new_policy = NULL;
	const char *old_path, *new_path;
	bool widened = false, json = false;
	int c, r, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return TETHER_EXIT_OK;
		default:
			fputs(diff_usage, stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		fputs(diff_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	old_path = argv[optind];
	new_path = argv[optind + 1];
	if (policy_path_is_stdin(old_path) && policy_path_is_stdin(new_path)) {
		fprintf(stderr, "tether diff: OLD and NEW cannot both be standard input (-)\n");
		return TETHER_EXIT_USAGE;
	}
	if (json)
		return diff_json(old_path, new_path);
	r = policy_load(old_path, &old_policy);
	if (policy_load(new_path, &new_policy) < 0 || r < 0) {
		tp_policy_free(old_policy);
		tp_policy_free(new_policy);
		return TETHER_EXIT_DIFF_INVALID;
	}
	r = tp_diff_write(old_policy, new_policy, stdout, &widened);
	if (r < 0)
		fprintf(stderr, "tether diff: writing the comparison: %s\n", strerror(-r));
	status = r < 0 ? TETHER_EXIT_DIFF_INVALID : widened ? 1 : TETHER_EXIT_OK;
	tp_policy_free(old_policy);
	tp_policy_free(new_policy);
	return status;
}
