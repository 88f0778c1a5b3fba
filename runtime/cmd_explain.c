// SPDX-License-Identifier: GPL-2.0
/*
 * tether explain: what an envelope grants, in words.
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
#include "runtime/tether.h"

static const char explain_usage[] =
	"usage: tether explain ENVELOPE\n"
	"\n"
	"Summarises what a run under the envelope (or compiled policy) may read,\n"
	"write, execute, reach and consume, what it leaves behind, and what this\n"
	"version does not enforce.  Exits 0, 1 when the input is invalid, 2 on a\n"
	"usage error.\n";

int cmd_explain(int argc, char **argv)
{
	struct tp_policy *policy = NULL;
	int r;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(explain_usage, stdout);
		return TETHER_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fputs(explain_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	if (policy_load(argv[1], &policy) < 0)
		return TETHER_EXIT_INVALID;
	r = tp_explain_write(policy, stdout);
	tp_policy_free(policy);
	return r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}
