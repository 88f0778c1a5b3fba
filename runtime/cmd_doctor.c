// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/policy.h"
#include "runtime/doctor.h"
#include "runtime/tether.h"

int cmd_doctor(int argc, char **argv)
{
	struct doctor_report rep;

	if (argc > 1) {
		if (strcmp(argv[1], "--help") == 0) {
			printf("usage: tether doctor\n\nChecks, in order, that BPF-LSM is active, that the "
			       "kernel has BTF, where cgroup2 is\nmounted and which controllers it "
			       "offers, that bpffs is mounted, and that the\nBPF-LSM programs load and "
			       "attach.  Exits 0 when tether can confine runs, 1 if not.\n");
			return TETHER_EXIT_OK;
		}
		fprintf(stderr, "tether doctor: unexpected argument '%s'\n", argv[1]);
		return TETHER_EXIT_USAGE;
	}
	doctor_run(&rep, true);
	doctor_print(&rep, stdout);
	return doctor_ok(&rep) ? TETHER_EXIT_OK : 1;
}

int cmd_check(int argc, char **argv)
{
	struct tp_envelope *env = NULL;
	struct tp_diags diags = { 0 };
	char *text = NULL;
	int r;

	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2 && strcmp(argv[1], "--help") == 0) {
			printf("usage: tether check ENVELOPE.yaml\n\nValidates the envelope and "
			       "prints every error as FILE:LINE:COLUMN: error: MESSAGE.\nExits 0 "
			       "when valid, 1 when invalid, 2 on a usage error.\n");
			return TETHER_EXIT_OK;
		}
		fprintf(stderr, "usage: tether check ENVELOPE.yaml\n");
		return TETHER_EXIT_USAGE;
	}
	r = tp_envelope_parse_file(argv[1], &env, &diags);
	if (r) {
		if (tp_diags_format(&diags, &text) == 0)
			fputs(text, stderr);
		else
			fprintf(stderr, "%s: error: %s\n", argv[1], strerror(-r));
		free(text);
		tp_diags_free(&diags);
		return TETHER_EXIT_INVALID;
	}
	printf("%s: ok\n", argv[1]);
	tp_envelope_free(env);
	tp_diags_free(&diags);
	return TETHER_EXIT_OK;
}
