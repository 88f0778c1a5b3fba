// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
