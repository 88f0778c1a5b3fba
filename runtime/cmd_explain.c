// SPDX-License-Identifier: GPL-2.0
/*
 * tether explain: what an envelope grants, in words (or, with --json, as
 * data for programs).
 * None of the policy verbs touches the kernel or needs privileges.
 * Exit statuses (README.md): 0 ok, 1 invalid input, 2 usage error.
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

static const char explain_usage[] =
	"usage: tether explain [--json] ENVELOPE\n"
	"\n"
	"Summarises what a run under the envelope (or compiled policy) may read,\n"
	"write, execute, reach and consume, what it leaves behind, and what this\n"
	"version does not enforce.  ENVELOPE - is standard input.  --json prints\n"
	"the same facts as one JSON object (docs/envelope.md), errors included.\n"
	"Exits 0, 1 when the input is invalid, 2 on a usage error.\n";

static int explain_json(const char *path)
{
	struct tp_policy *policy = NULL;
	struct tp_diags diags = { 0 };
	struct strbuf sb = { 0 };
	int r, s;

	r = policy_load_diags(path, &policy, &diags);
	s = sb_printf(&sb, "{");
	s = s ?: json_input_members(&sb, policy_input_name(path), policy, &diags, r, NULL);
	s = s ?: sb_printf(&sb, ",\"explain\":");
	s = s ?: (policy ? json_explain(&sb, policy) : sb_printf(&sb, "null"));
	s = s ?: sb_printf(&sb, "}\n");
	if (s == 0 && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
		s = -EIO;
	if (s < 0)
		fprintf(stderr, "tether explain: writing the JSON answer: %s\n", strerror(-s));
	sb_free(&sb);
	tp_diags_free(&diags);
	tp_policy_free(policy);
	return r < 0 || s < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}

int cmd_explain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct tp_policy *policy = NULL;
	bool json = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(explain_usage, stdout);
			return TETHER_EXIT_OK;
		default:
			fputs(explain_usage, stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(explain_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	if (json)
		return explain_json(argv[optind]);
	if (policy_load(argv[optind], &policy) < 0)
		return TETHER_EXIT_INVALID;
	r = tp_explain_write(policy, stdout);
	tp_policy_free(policy);
	return r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}
