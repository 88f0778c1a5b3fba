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
#include "runtime/tether.h"

#define TETHER_EXIT_DIFF_INVALID 3

static const char diff_usage[] =
	"usage: tether diff OLD NEW\n"
	"\n"
	"Lists every widening and narrowing of authority from OLD to NEW (envelopes\n"
	"or compiled policies), widenings first, compared by meaning: what a run may\n"
	"read, write, execute, reach and consume, not how the files are written.\n"
	"Exits 0 when nothing widened, 1 when something did (so it can gate a\n"
	"review), 2 on a usage error, 3 when an input is invalid.\n";

int cmd_diff(int argc, char **argv)
{
	struct tp_policy *old_policy = NULL, *new_policy = NULL;
	bool widened = false;
	int r, status;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(diff_usage, stdout);
		return TETHER_EXIT_OK;
	}
	if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-') {
		fputs(diff_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	r = policy_load(argv[1], &old_policy);
	if (policy_load(argv[2], &new_policy) < 0 || r < 0) {
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
