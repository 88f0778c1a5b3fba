// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/fsutil.c: remove_tree removes what a run left in its TMPDIR, as
 * root, in a directory the run could write.  What the run leaves there is
 * the attacker's: links out of the tree must not be followed, nothing on
 * another filesystem touched, and one entry that will not go must not keep
 * the rest.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/fsutil.h"

/* short, so every path below it fits PATH_MAX with room to spare */
static char top[64];

static void setup(void)
{
	snprintf(top, sizeof(top), "/tmp/tether-test-fsutil-XXXXXX");
	cr_assert_not_null(mkdtemp(top));
}

static void teardown(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(fsutil, .init = setup, .fini = teardown);

static void path(char *buf, const char *rel)
{
	cr_assert_lt(strlen(top) + 1 + strlen(rel), PATH_MAX);
	strcpy(buf, top);
	strcat(buf, "/");
	strcat(buf, rel);
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	int fd;

	path(p, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0, "%s: %s", p, strerror(errno));
	close(fd);
}

static void dir(const char *rel)
{
	char p[PATH_MAX];

	path(p, rel);
	cr_assert_eq(mkdir(p, 0700), 0, "%s: %s", p, strerror(errno));
}

static bool exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	path(p, rel);
	return lstat(p, &st) == 0;
}

static unsigned int reports;

static void count(void *ctx, const char *p, int err)
{
	(void)ctx;
	(void)p;
	(void)err;
	reports++;
}

Test(fsutil, mkdir_p_makes_every_component)
{
	char p[PATH_MAX];

	path(p, "a/b/c");
	cr_assert_eq(mkdir_p(p, 0700), 0);
	cr_assert(exists("a/b/c"));
	cr_assert_eq(mkdir_p(p, 0700), 0, "an existing path is success");
}

Test(fsutil, removes_a_deep_tree)
{
	char p[PATH_MAX];

	dir("t");
	dir("t/a");
	dir("t/a/b");
	touch("t/f");
	touch("t/a/b/g");
	cr_assert_eq(mkfifo((path(p, "t/a/fifo"), p), 0600), 0);
	path(p, "t");
	cr_assert_eq(remove_tree(p, 0, NULL, NULL), 0);
	cr_assert_not(exists("t"));
}

Test(fsutil, a_missing_tree_is_success)
{
	char p[PATH_MAX];

	path(p, "never");
	cr_assert_eq(remove_tree(p, 0, NULL, NULL), 0);
}

/* A run plants links to what it wants root to delete. */
Test(fsutil, links_out_of_the_tree_are_removed_not_followed)
{
	char p[PATH_MAX], target[PATH_MAX];

	dir("victim");
	touch("victim/keep");
	dir("t");
	path(target, "victim");
	path(p, "t/link-to-dir");
	cr_assert_eq(symlink(target, p), 0);
	path(target, "victim/keep");
	path(p, "t/link-to-file");
	cr_assert_eq(symlink(target, p), 0);
	path(p, "t");
	cr_assert_eq(remove_tree(p, 0, NULL, NULL), 0);
	cr_assert_not(exists("t"));
	cr_assert(exists("victim/keep"), "the link's target was removed");
}

/* The tree itself given as a link: not followed, not removed. */
Test(fsutil, a_tree_that_is_a_link_is_refused)
{
	char p[PATH_MAX], target[PATH_MAX];

	dir("victim");
	touch("victim/keep");
	path(target, "victim");
	path(p, "t");
	cr_assert_eq(symlink(target, p), 0);
	cr_assert_eq(remove_tree(p, 0, NULL, NULL), -ENOTDIR);
	cr_assert(exists("victim/keep"));
}

/* One entry that will not go does not keep the rest, and is reported. */
Test(fsutil, keeps_going_past_an_entry_that_will_not_go)
{
	char p[PATH_MAX], q[PATH_MAX];

	if (geteuid() == 0)
		cr_skip_test("root removes entries of a read-only directory anyway");
	dir("t");
	dir("t/locked");
	touch("t/locked/f");
	touch("t/other");
	path(p, "t/locked");
	cr_assert_eq(chmod(p, 0500), 0);
	reports = 0;
	path(q, "t");
	cr_assert_eq(remove_tree(q, 0, count, NULL), -EACCES);
	cr_assert_not(exists("t/other"), "the rest of the tree stayed");
	cr_assert_geq(reports, 1);
	chmod(p, 0700);
}

/*
 * A mount inside the tree (a run cannot mount, but a tree may hold one):
 * nothing on it is touched, the mount point stays, the rest goes.  As
 * root, for whom a mount is also the one entry that will not go.
 */
Test(fsutil, another_filesystem_is_not_entered)
{
	char p[PATH_MAX], q[PATH_MAX];
	int r;

	if (geteuid() != 0)
		cr_skip_test("mounting a tmpfs needs root");
	dir("t");
	dir("t/mnt");
	touch("t/other");
	path(p, "t/mnt");
	cr_assert_eq(mount("tmpfs", p, "tmpfs", 0, "size=1m"), 0, "%s", strerror(errno));
	touch("t/mnt/on-the-mount");
	reports = 0;
	path(q, "t");
	r = remove_tree(q, 0, count, NULL);
	cr_expect(exists("t/mnt/on-the-mount"), "a file on another filesystem was removed");
	cr_expect_not(exists("t/other"), "the rest of the tree stayed");
	cr_expect_eq(r, -EXDEV);
	cr_expect_geq(reports, 1);
	cr_assert_eq(umount(p), 0);
}

/* What cgroupfs needs: directories go, other entries are left to go with them. */
Test(fsutil, dirs_only_leaves_files)
{
	char p[PATH_MAX];

	dir("t");
	dir("t/child");
	dir("t/child/grandchild");
	touch("t/child/file");
	path(p, "t");
	cr_assert_eq(remove_tree(p, REMOVE_TREE_DIRS_ONLY, NULL, NULL), -ENOTEMPTY);
	cr_assert(exists("t/child/file"));
	cr_assert_not(exists("t/child/grandchild"));
}
