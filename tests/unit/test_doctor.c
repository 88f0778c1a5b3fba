// SPDX-License-Identifier: GPL-2.0
/*
 * Host checks (runtime/doctor.c) that need no privilege: the chroot test's
 * reading of /proc/self/mountinfo, and the --json shape.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "runtime/doctor.h"
#include "runtime/json.h"

static struct strbuf sb;

static void fini(void)
{
	sb_free(&sb);
}

TestSuite(doctor, .fini = fini, .timeout = 10);

Test(doctor, doctor_json_names_every_check_and_leaves_out_skipped_ones)
{
	struct doctor_report rep = { 0 };

	for (int i = 0; i < DOCTOR_NCHECKS; i++) {
		rep.checks[i].ok = true;
		snprintf(rep.checks[i].detail, sizeof(rep.checks[i].detail), "d%d", i);
		/* a fix of a check that passed is not shown */
		snprintf(rep.checks[i].fix, sizeof(rep.checks[i].fix), "f%d", i);
	}
	rep.checks[DOCTOR_LSM].ok = false;
	snprintf(rep.checks[DOCTOR_LSM].detail, sizeof(rep.checks[0].detail), "\"bpf\" is missing");
	rep.checks[DOCTOR_LSM_LOAD].skipped = true;
	cr_assert_eq(doctor_json(&rep, &sb), 0);
	cr_expect_str_eq(sb.data,
			 "{\"ok\":false,\"checks\":["
			 "{\"name\":\"root\",\"ok\":true,\"detail\":\"d0\",\"fix\":null},"
			 "{\"name\":\"bpf_lsm\",\"ok\":false,\"detail\":\"\\\"bpf\\\" is missing\","
			 "\"fix\":\"f1\"},"
			 "{\"name\":\"btf\",\"ok\":true,\"detail\":\"d2\",\"fix\":null},"
			 "{\"name\":\"cgroup2\",\"ok\":true,\"detail\":\"d3\",\"fix\":null},"
			 "{\"name\":\"bpffs\",\"ok\":true,\"detail\":\"d4\",\"fix\":null}]}");
}

/* The mount point mountinfo gives mount `mnt_id`, "" when it lists none. */
static const char *mount_point(const char *mountinfo, uint64_t mnt_id)
{
	static char point[64];
	FILE *f = fmemopen((void *)mountinfo, strlen(mountinfo), "r");

	cr_assert_not_null(f);
	if (doctor_mount_point(f, mnt_id, point, sizeof(point)) < 0)
		point[0] = '\0';
	fclose(f);
	return point;
}

/*
 * /proc/PID/mountinfo as the kernel shows it.  Outside a chroot the root's
 * mount is listed at "/"; in a chroot into a directory it is not listed at
 * all (its root is above the reader's); in a chroot onto a mount point it
 * is listed at "/" in our own and where it is in pid 1's.
 */
Test(doctor, mountinfo_tells_where_the_root_mount_is)
{
	static const char host[] =
		"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
		"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
		"30 27 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
	static const char chroot_dir[] = "42 27 0:39 / /proc rw,relatime - proc proc rw\n";
	static const char container[] =
		"612 590 0:52 /var/lib/machines/x / rw - ext4 /dev/vda rw\n"
		"613 612 0:53 / /proc rw - proc proc rw\n";
	static const char pid1_of_a_bound_chroot[] =
		"27 1 254:0 / / rw - ext4 /dev/vda rw\n"
		"88 27 254:0 /srv/c /srv/c rw - ext4 /dev/vda rw\n"
		"89 88 0:44 / /srv/c/my\\040dir\x1b[2J rw - tmpfs tmpfs rw\n";
	static const char lookalike[] =
		"27 1 254:0 / /x rw - ext4 /dev/vda rw\n"
		"28 1 254:0 /\n"
		"garbage\n";

	cr_expect_str_eq(mount_point(host, 27), "/");
	cr_expect_str_eq(mount_point(host, 0), "/", "without a mount id: any mount at /");
	cr_expect_str_eq(mount_point(host, 22), "/proc");
	cr_expect_str_eq(mount_point(chroot_dir, 27), "");
	cr_expect_str_eq(mount_point(chroot_dir, 0), "");
	cr_expect_str_eq(mount_point(container, 612), "/",
			 "a root below its file system's root is fine");
	cr_expect_str_eq(mount_point(pid1_of_a_bound_chroot, 88), "/srv/c");
	cr_expect_str_eq(mount_point(pid1_of_a_bound_chroot, 89), "/srv/c/my\\040dir?[2J",
			 "control characters are not passed on");
	cr_expect_str_eq(mount_point(lookalike, 27), "/x");
	cr_expect_str_eq(mount_point(lookalike, 28), "", "a line without five fields is not one");
	cr_expect_str_eq(mount_point(lookalike, 0), "");
	cr_expect_str_eq(mount_point("", 0), "");
}
