// SPDX-License-Identifier: GPL-2.0
/*
 * fsprobe EXPECT OP ARGS...: performs one filesystem operation with raw
 * syscalls and checks its result.  EXPECT is "ok" or an errno name (EACCES,
 * EPERM, ...).  Prints "fsprobe: OP ARGS: RESULT" and exits 0 when the result
 * is the expected one, 1 otherwise, 2 on a usage error.
 *
 * Built statically and run inside the test VM, inside and outside runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ 0, "ok" },	      { EPERM, "EPERM" },   { EACCES, "EACCES" }, { ENOENT, "ENOENT" },
	{ EEXIST, "EEXIST" }, { EXDEV, "EXDEV" },   { EBUSY, "EBUSY" },   { EINVAL, "EINVAL" },
	{ EROFS, "EROFS" },   { ENOTDIR, "ENOTDIR" }, { ELOOP, "ELOOP" },  { EISDIR, "EISDIR" },
};

static const char *errname(int e)
{
	static char buf[32];

	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == e)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static int result(int r)
{
	return r < 0 ? errno : 0;
}

static int write_file(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0)
		return errno;
	if (write(fd, "tether\n", 7) != 7) {
		int e = errno;

		close(fd);
		return e;
	}
	close(fd);
	return 0;
}

/* Opens path O_PATH, then re-opens it for writing through /proc/self/fd. */
static int reopen_write(const char *path)
{
	char proc[64];
	int fd = open(path, O_PATH), e;

	if (fd < 0)
		return errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	e = write_file(proc, O_WRONLY);
	close(fd);
	return e;
}

int main(int argc, char **argv)
{
	const char *want, *op;
	int got;

	if (argc < 4) {
		fprintf(stderr, "usage: fsprobe EXPECT OP ARGS...\n");
		return 2;
	}
	want = argv[1];
	op = argv[2];
	if (!strcmp(op, "write"))
		got = write_file(argv[3], O_WRONLY | O_CREAT | O_TRUNC);
	else if (!strcmp(op, "append"))
		got = write_file(argv[3], O_WRONLY | O_APPEND);
	else if (!strcmp(op, "read"))
		got = result(open(argv[3], O_RDONLY));
	else if (!strcmp(op, "create-rdonly"))
		got = result(open(argv[3], O_RDONLY | O_CREAT, 0644));
	else if (!strcmp(op, "trunc-rdonly"))
		got = result(open(argv[3], O_RDONLY | O_TRUNC));
	else if (!strcmp(op, "reopen-write"))
		got = reopen_write(argv[3]);
	else if (!strcmp(op, "mkdir"))
		got = result(mkdir(argv[3], 0755));
	else if (!strcmp(op, "rmdir"))
		got = result(rmdir(argv[3]));
	else if (!strcmp(op, "unlink"))
		got = result(unlink(argv[3]));
	else if (!strcmp(op, "truncate"))
		got = result(truncate(argv[3], 0));
	else if (!strcmp(op, "chmod"))
		got = result(chmod(argv[3], 0600));
	else if (!strcmp(op, "chown"))
		got = result(chown(argv[3], 0, 0));
	else if (!strcmp(op, "mknod-fifo"))
		got = result(mknod(argv[3], S_IFIFO | 0600, 0));
	else if (!strcmp(op, "rename") && argc > 4)
		got = result(rename(argv[3], argv[4]));
	else if (!strcmp(op, "exchange") && argc > 4)
		got = result((int)syscall(SYS_renameat2, AT_FDCWD, argv[3], AT_FDCWD, argv[4],
					  2 /* RENAME_EXCHANGE */));
	else if (!strcmp(op, "link") && argc > 4)
		got = result(link(argv[3], argv[4]));
	else if (!strcmp(op, "symlink") && argc > 4)
		got = result(symlink(argv[3], argv[4]));
	else if (!strcmp(op, "bind-mount") && argc > 4)
		got = result(mount(argv[3], argv[4], NULL, MS_BIND, NULL));
	else if (!strcmp(op, "umount"))
		got = result(umount2(argv[3], MNT_DETACH));
	else {
		fprintf(stderr, "fsprobe: unknown operation %s\n", op);
		return 2;
	}
	printf("fsprobe: %s %s: %s\n", op, argv[3], errname(got));
	return strcmp(errname(got), want) == 0 ? 0 : 1;
}
