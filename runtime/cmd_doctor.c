// SPDX-License-Identifier: GPL-2.0
/* tether doctor: can this host confine runs, and what to fix.  Exit statuses (README.md): 0 can, 1 cannot, 2 usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/doctor.h"
#include "runtime/json.h"
#include "runtime/tether.h"

static const char doctor_usage[] =
	"usage: tether doctor [--json]\n"
	"\n"
	"Checks, in order, that / is the root of tether's mount namespace (not a\n"
	"chroot), that BPF-LSM is active, that the kernel has BTF, where cgroup2 is\n"
	"mounted and which controllers it offers, that bpffs is mounted, and that the\n"
	"BPF-LSM programs load and attach.  --json prints one JSON object instead:\n"
	"each check's name, ok, detail and fix (docs/envelope.md).  Exits 0 when\n"
	"tether can confine runs, 1 if not, 2 on a usage error.\n";

int cmd_doctor(int argc, char **argv)
{
	struct doctor_report rep;
	struct strbuf sb = { 0 };
	bool json = false;
	int r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			fputs(doctor_usage, stdout);
			return TETHER_EXIT_OK;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else {
			fprintf(stderr, "tether doctor: unexpected argument '%s'\n", argv[i]);
			fputs(doctor_usage, stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	doctor_run(&rep, true);
	if (!json) {
		doctor_print(&rep, stdout);
		return doctor_ok(&rep) ? TETHER_EXIT_OK : 1;
	}
	r = doctor_json(&rep, &sb);
	r = r ?: sb_printf(&sb, "\n");
	if (r == 0 && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
		r = -EIO;
	sb_free(&sb);
	if (r < 0) {
		fprintf(stderr, "tether doctor: writing the JSON answer: %s\n", strerror(-r));
		return 1;
	}
	return doctor_ok(&rep) ? TETHER_EXIT_OK : 1;
}
