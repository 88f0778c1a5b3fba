// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cgroup.h"

static int find(const char *mountinfo, char *out, size_t size)
{
	FILE *f = fmemopen((void *)mountinfo, strlen(mountinfo), "r");
	int r;

	cr_assert_not_null(f);
	r = cg_find_mount(f, out, size);
	fclose(f);
	return r;
}

Test(cgroup, finds_hybrid_unified_mount)
{
	char mp[256];
	const char *mi =
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";

	cr_assert_eq(find(mi, mp, sizeof(mp)), 0);
	cr_assert_str_eq(mp, "/sys/fs/cgroup/unified");
}

Test(cgroup, decodes_octal_escapes)
{
	char mp[256];
	const char *mi = "41 31 0:38 / /mnt/with\\040space rw - cgroup2 none rw\n";

	cr_assert_eq(find(mi, mp, sizeof(mp)), 0);
	cr_assert_str_eq(mp, "/mnt/with space");
}

Test(cgroup, skips_subtree_mounts_and_other_types)
{
	char mp[256];
	const char *mi = "41 31 0:38 /sub /mnt/sub rw - cgroup2 none rw\n"
			 "42 31 0:39 / /mnt/fake rw - tmpfs cgroup2 rw\n"
			 "43 31 0:38 / /sys/fs/cgroup rw - cgroup2 none rw\n";

	cr_assert_eq(find(mi, mp, sizeof(mp)), 0);
	cr_assert_str_eq(mp, "/sys/fs/cgroup");
}

Test(cgroup, none_found)
{
	char mp[256];

	cr_assert_eq(find("1 0 0:1 / / rw - ext4 /dev/vda rw\n", mp, sizeof(mp)), -ENOENT);
	cr_assert_eq(find("", mp, sizeof(mp)), -ENOENT);
	cr_assert_eq(find("garbage without separator\n", mp, sizeof(mp)), -ENOENT);
}

Test(cgroup, too_long_for_buffer)
{
	char mp[8];

	cr_assert_eq(find("43 31 0:38 / /sys/fs/cgroup rw - cgroup2 none rw\n", mp, sizeof(mp)),
		     -ENAMETOOLONG);
}

Test(cgroup, cpu_max_from_cpus)
{
	char buf[64];

	cg_format_cpu_max(1000, buf, sizeof(buf));
	cr_assert_str_eq(buf, "100000 100000");
	cg_format_cpu_max(2000, buf, sizeof(buf));
	cr_assert_str_eq(buf, "200000 100000");
	cg_format_cpu_max(500, buf, sizeof(buf));
	cr_assert_str_eq(buf, "50000 100000");
	/* the kernel's smallest quota is 1 ms: a tiny share gets that, not an error */
	cg_format_cpu_max(1, buf, sizeof(buf));
	cr_assert_str_eq(buf, "1000 100000");
}

Test(cgroup, missing_controllers)
{
	struct cg_limits all = { .cpu_milli = 500, .memory_bytes = 1 << 20, .pids = 8 };
	struct cg_limits mem = { .memory_bytes = 1 << 20 };
	struct cg_limits none = { 0 };
	char out[64];

	cg_missing_controllers("cpuset cpu io memory hugetlb pids rdma misc", &all, out,
			       sizeof(out));
	cr_assert_str_eq(out, "");
	cg_missing_controllers("", &all, out, sizeof(out));
	cr_assert_str_eq(out, "cpu memory pids");
	cg_missing_controllers(NULL, &mem, out, sizeof(out));
	cr_assert_str_eq(out, "memory");
	/* names match whole words: "cpuset" is not "cpu", "misc" not "memory" */
	cg_missing_controllers("cpuset misc pids", &all, out, sizeof(out));
	cr_assert_str_eq(out, "cpu memory");
	cg_missing_controllers("", &none, out, sizeof(out));
	cr_assert_str_eq(out, "");
}
