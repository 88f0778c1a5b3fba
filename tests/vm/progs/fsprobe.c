// SPDX-License-Identifier: GPL-2.0
/*
 * fsprobe EXPECT OP ARGS...: performs one filesystem operation with raw
 * syscalls and checks its result.  EXPECT is "ok" or an errno name (EACCES,
 * EPERM, ...).  Prints "fsprobe: OP ARGS: RESULT" and exits 0 when the result
 * is the expected one, 1 otherwise, 2 on a usage error.
 *
 * Built statically and run inside the test VM, inside and outside runs.
 *
 * The exec operations (exec, execveat-opath, fexecve-memfd) run the program
 * in a forked child and report the child's execve result (through a
 * close-on-exec pipe); once the execve succeeds the new program's own exit
 * status is ignored.  Give it arguments that make it exit at once, e.g.
 * "fsprobe ok exec /opt/tether-tests/bin/fsprobe ok nop".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <sys/mman.h>
#include <stddef.h>
#include <sys/mount.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

extern char **environ;

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ 0, "ok" },	      { EPERM, "EPERM" },   { EACCES, "EACCES" }, { ENOENT, "ENOENT" },
	{ EEXIST, "EEXIST" }, { EXDEV, "EXDEV" },   { EBUSY, "EBUSY" },   { EINVAL, "EINVAL" },
	{ EROFS, "EROFS" },   { ENOTDIR, "ENOTDIR" }, { ELOOP, "ELOOP" },  { EISDIR, "EISDIR" },
	{ ENOEXEC, "ENOEXEC" }, { EAFNOSUPPORT, "EAFNOSUPPORT" }, { ENXIO, "ENXIO" },
	{ ETXTBSY, "ETXTBSY" }, { EOPNOTSUPP, "EOPNOTSUPP" }, { ESTALE, "ESTALE" },
	{ EBADF, "EBADF" },   { EIO, "EIO" },	    { ENODEV, "ENODEV" }, { ENOSPC, "ENOSPC" },
	{ EDQUOT, "EDQUOT" },
};

/*
 * A result that is not the operation's own: a preparatory step failed
 * (mprotect-exec's mmap, exec's fork).  Printed as "STEP:ERRNO", so it never
 * matches an expectation.
 */
#define PREP_FAILED 100000

static const char *errname(int e)
{
	static char buf[64];

	if (e >= PREP_FAILED) {
		int inner = e - PREP_FAILED;
		size_t i;

		for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
			if (errnames[i].err == inner)
				break;
		if (i < sizeof(errnames) / sizeof(errnames[0]))
			snprintf(buf, sizeof(buf), "prep-failed:%s", errnames[i].name);
		else
			snprintf(buf, sizeof(buf), "prep-failed:errno%d", inner);
		return buf;
	}
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

/*
 * Writes 64 KiB blocks into path (created, truncated) until a write fails or
 * 1 GiB is written, and says how many bytes went in before the result line,
 * at once: a run that fills its file system is ended shortly after.
 */
static int fill_file(const char *path)
{
	static char block[65536];
	unsigned long long total = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = 0;

	if (fd < 0)
		return PREP_FAILED + errno;
	memset(block, 'x', sizeof(block));
	while (total < (1ULL << 30)) {
		ssize_t n = write(fd, block, sizeof(block));

		if (n < 0) {
			e = errno;
			break;
		}
		total += (unsigned long long)n;
	}
	printf("fsprobe: fill %s: wrote %llu bytes\n", path, total);
	fflush(stdout);
	close(fd);
	return e;
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

/*
 * openat through io_uring, with raw syscalls (no liburing in the VM image).
 * `async` sets IOSQE_ASYNC so the open runs in an io-wq worker thread, not in
 * the submitting task: the hooks must see the run from there too.
 */
static int uring_open(const char *path, int flags, int async)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	unsigned int *sq_tail, *sq_array, *cq_head, *cq_tail, head;
	void *sq, *cq;
	int ring, res, e = 0;

	memset(&p, 0, sizeof(p));
	ring = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (ring < 0)
		return errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		e = errno;
		close(ring);
		return e;
	}
	sq_tail = (unsigned int *)((char *)sq + p.sq_off.tail);
	sq_array = (unsigned int *)((char *)sq + p.sq_off.array);
	cq_head = (unsigned int *)((char *)cq + p.cq_off.head);
	cq_tail = (unsigned int *)((char *)cq + p.cq_off.tail);

	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (unsigned long)path;
	sqes[0].len = 0644;
	sqes[0].open_flags = (unsigned int)flags;
	sqes[0].flags = async ? IOSQE_ASYNC : 0;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		e = errno;
		close(ring);
		return e;
	}
	head = __atomic_load_n(cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
		close(ring);
		return EIO;
	}
	cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes) + (head & (p.cq_entries - 1));
	res = cqe->res;
	__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
	close(ring);
	if (res < 0)
		return -res;
	close(res);
	return 0;
}

/* clone3(CLONE_INTO_CGROUP) with a read-only fd on the cgroup directory. */
static int clone_into_cgroup(const char *dir)
{
	struct clone_args args = { 0 };
	int fd = open(dir, O_RDONLY | O_DIRECTORY), status;
	long pid;

	if (fd < 0)
		return errno;
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (unsigned long long)fd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		_exit(0);
	close(fd);
	if (pid < 0)
		return errno;
	waitpid((pid_t)pid, &status, 0);
	return 0;
}

/* ioctl(FS_IOC_SETFLAGS) through a read-only fd (chattr). */
static int setflags(const char *path)
{
	int fd = open(path, O_RDONLY), flags = 0, e;

	if (fd < 0)
		return errno;
	/* set the flags it already has: harmless if it were allowed */
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		flags = 0;
	e = ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* Adds FS_APPEND_FL (chattr +a): for a test's setup, outside any run. */
static int set_append_only(const char *path)
{
	int fd = open(path, O_RDONLY), flags = 0, e;

	if (fd < 0)
		return errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0) {
		e = errno;
		close(fd);
		return e;
	}
	flags |= FS_APPEND_FL;
	e = ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* TIOCSTI on a fresh pty: typing into a terminal. */
static int tiocsti(void)
{
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY), e;
	char c = 'x';

	if (fd < 0)
		return errno;
	e = ioctl(fd, TIOCSTI, &c) < 0 ? errno : 0;
	close(fd);
	return e;
}

/*
 * A pty of its own: "path" opens /dev/pts/N by the name ptsname() gives
 * (TIOCGPTN), "peer" asks the master for it (TIOCGPTPEER, as openpty() does).
 * "hold" (outside any run) makes a pty, prints the slave's path, and keeps
 * the master open until killed.
 */
static int own_pty(const char *how)
{
	int master = open("/dev/ptmx", O_RDWR | O_NOCTTY), slave, e;
	unsigned int n, unlock = 0;
	char path[64];

	if (master < 0 || ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return errno;
	if (!strcmp(how, "peer")) {
		slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
	} else {
		if (ioctl(master, TIOCGPTN, &n) < 0)
			return errno;
		snprintf(path, sizeof(path), "/dev/pts/%u", n);
		if (!strcmp(how, "hold")) {
			printf("%s\n", path);
			fflush(stdout);
			for (;;)
				pause();
		}
		slave = open(path, O_RDWR | O_NOCTTY);
	}
	e = slave < 0 ? errno : 0;
	if (slave >= 0)
		close(slave);
	close(master);
	return e;
}

/* A POSIX ACL granting everyone rwx (system.posix_acl_access). */
static int setacl(const char *path)
{
	struct {
		unsigned int version;
		struct {
			unsigned short tag, perm;
			unsigned int id;
		} e[3];
	} acl = { 2, { { 0x01, 7, ~0u }, { 0x04, 7, ~0u }, { 0x20, 7, ~0u } } };

	return result(setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0));
}

/* Connects (stream) or sends (dgram) to a unix socket; '@' starts an abstract name. */
static int unix_peer(const char *name, int type)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_UNIX, type, 0), e = 0;

	if (fd < 0)
		return errno;
	if (name[0] == '@') {
		strncpy(addr.sun_path + 1, name + 1, sizeof(addr.sun_path) - 2);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	} else {
		strncpy(addr.sun_path, name, sizeof(addr.sun_path) - 1);
	}
	if (type == SOCK_STREAM)
		e = connect(fd, (struct sockaddr *)&addr, len) < 0 ? errno : 0;
	else
		e = sendto(fd, "x", 1, 0, (struct sockaddr *)&addr, len) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* open(O_RDONLY | O_DIRECTORY) and one getdents64: listing a directory. */
static int read_dir(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_DIRECTORY), e = 0;

	if (fd < 0)
		return errno;
	if (syscall(SYS_getdents64, fd, buf, sizeof(buf)) < 0)
		e = errno;
	close(fd);
	return e;
}

/*
 * Runs execve(path, args) in a forked child, or execveat(fd, "", args,
 * AT_EMPTY_PATH) when fd >= 0 (fexecve).  Returns the child's execve errno,
 * 0 once it succeeded (the pipe's write end closes on exec); then waits for
 * the program, whatever its exit status.
 */
static int exec_in_child(const char *path, int fd, char **args)
{
	int pipefd[2], status, err = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return PREP_FAILED + errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return PREP_FAILED + err;
	}
	if (pid == 0) {
		close(pipefd[0]);
		if (fd >= 0)
			syscall(SYS_execveat, fd, "", args, environ, AT_EMPTY_PATH);
		else
			execve(path, args, environ);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) != (ssize_t)sizeof(err))
			_exit(126);
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n != (ssize_t)sizeof(err))
		err = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return err;
}

/* execveat(open(path, O_PATH), "", AT_EMPTY_PATH) in a forked child. */
static int exec_opath(const char *path, char **args)
{
	int fd = open(path, O_PATH), e;	/* not O_CLOEXEC: a script could not run */

	if (fd < 0)
		return PREP_FAILED + errno;
	e = exec_in_child(NULL, fd, args);
	close(fd);
	return e;
}

/* Copies src into a memfd and fexecve()s it in a forked child. */
static int fexecve_memfd(const char *src, char **args)
{
	char buf[65536];
	int in = open(src, O_RDONLY), mfd, e;
	ssize_t n;

	if (in < 0)
		return PREP_FAILED + errno;
	mfd = (int)syscall(SYS_memfd_create, "tether", 0);	/* no MFD_CLOEXEC */
	if (mfd < 0) {
		e = errno;
		close(in);
		return PREP_FAILED + e;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(mfd, buf + off, (size_t)(n - off));

			if (w < 0) {
				e = errno;
				close(in);
				close(mfd);
				return PREP_FAILED + e;
			}
			off += w;
		}
	}
	e = n < 0 ? errno : 0;
	close(in);
	if (e) {
		close(mfd);
		return PREP_FAILED + e;
	}
	e = exec_in_child(NULL, mfd, args);
	close(mfd);
	return e;
}

/*
 * mmap(PROT_READ | PROT_EXEC) of a read-only fd on path or, with
 * `mprotect_after`, mmap(PROT_READ) and then mprotect(PROT_READ | PROT_EXEC):
 * the result is the mmap's or the mprotect's.  The open (and the mmap
 * before an mprotect) must succeed: their failure is a PREP_FAILED result.
 */
static int mmap_exec(const char *path, int mprotect_after)
{
	int fd = open(path, O_RDONLY), e = 0;
	void *addr;

	if (fd < 0)
		return PREP_FAILED + errno;
	addr = mmap(NULL, 4096, mprotect_after ? PROT_READ : PROT_READ | PROT_EXEC, MAP_PRIVATE,
		    fd, 0);
	if (addr == MAP_FAILED) {
		e = mprotect_after ? PREP_FAILED + errno : errno;
		close(fd);
		return e;
	}
	if (mprotect_after && mprotect(addr, 4096, PROT_READ | PROT_EXEC) < 0)
		e = errno;
	munmap(addr, 4096);
	close(fd);
	return e;
}

/*
 * name_to_handle_at(path), then open_by_handle_at(fd of "/", O_RDONLY): an
 * open that names no path.  The handle and the mount fd are preparation.
 */
static int by_handle_read(const char *path)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h;
	int mount_id, mfd, fd;

	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return PREP_FAILED + errno;
	mfd = open("/", O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return PREP_FAILED + errno;
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY);
	close(mfd);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *want, *op;
	int got;

	if (argc < 4 && !(argc == 3 && !strcmp(argv[2], "nop"))) {
		fprintf(stderr, "usage: fsprobe EXPECT OP ARGS...\n");
		return 2;
	}
	want = argv[1];
	op = argv[2];
	if (!strcmp(op, "nop"))	/* ARG optional and ignored: a program that exits at once */
		got = 0;
	else if (!strcmp(op, "write"))
		got = write_file(argv[3], O_WRONLY | O_CREAT | O_TRUNC);
	else if (!strcmp(op, "fill"))	/* fill PATH: write until ENOSPC (or 1 GiB) */
		got = fill_file(argv[3]);
	else if (!strcmp(op, "append"))
		got = write_file(argv[3], O_WRONLY | O_APPEND);
	else if (!strcmp(op, "read"))
		got = result(open(argv[3], O_RDONLY));
	else if (!strcmp(op, "readdir"))
		got = read_dir(argv[3]);
	else if (!strcmp(op, "uring-read"))
		got = uring_open(argv[3], O_RDONLY, 0);
	else if (!strcmp(op, "exec"))	/* exec PATH [ARGS...]: argv is PATH ARGS... */
		got = exec_in_child(argv[3], -1, argv + 3);
	else if (!strcmp(op, "execveat-opath"))	/* execveat-opath PATH [ARGS...] */
		got = exec_opath(argv[3], argv + 3);
	else if (!strcmp(op, "fexecve-memfd"))	/* fexecve-memfd SRC [ARGS...] */
		got = fexecve_memfd(argv[3], argv + 3);
	else if (!strcmp(op, "mmap-exec"))
		got = mmap_exec(argv[3], 0);
	else if (!strcmp(op, "mprotect-exec"))
		got = mmap_exec(argv[3], 1);
	else if (!strcmp(op, "by-handle-read"))
		got = by_handle_read(argv[3]);
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
	else if (!strcmp(op, "mknod-chr") && argc > 5)
		got = result(mknod(argv[3], S_IFCHR | 0600,
				   makedev((unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]))));
	else if (!strcmp(op, "mknod-blk") && argc > 5)
		got = result(mknod(argv[3], S_IFBLK | 0600,
				   makedev((unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]))));
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
	else if (!strcmp(op, "tmpfile")) {
		int fd = open(argv[3], O_TMPFILE | O_WRONLY, 0600);

		got = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "uring-write"))
		got = uring_open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0);
	else if (!strcmp(op, "uring-async-write"))
		got = uring_open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 1);
	else if (!strcmp(op, "setxattr"))
		got = result(setxattr(argv[3], "user.tether", "x", 1, 0));
	else if (!strcmp(op, "removexattr"))
		got = result(removexattr(argv[3], "user.tether"));
	else if (!strcmp(op, "utimes"))
		got = result(utimensat(AT_FDCWD, argv[3], NULL, 0));
	else if (!strcmp(op, "clone-into-cgroup"))
		got = clone_into_cgroup(argv[3]);
	else if (!strcmp(op, "setflags"))
		got = setflags(argv[3]);
	else if (!strcmp(op, "set-append-only"))
		got = set_append_only(argv[3]);
	else if (!strcmp(op, "tiocsti"))	/* ARG is ignored: always a fresh pty */
		got = tiocsti();
	else if (!strcmp(op, "own-pty"))	/* own-pty path|peer|hold */
		got = own_pty(argv[3]);
	else if (!strcmp(op, "open-rw"))	/* open(ARG, O_RDWR | O_NOCTTY) */
		got = result(open(argv[3], O_RDWR | O_NOCTTY));
	else if (!strcmp(op, "setacl"))
		got = setacl(argv[3]);
	else if (!strcmp(op, "mount-setattr")) {
		struct {
			unsigned long long set, clr, propagation, userns;
		} attr = { .clr = 0x2 /* MOUNT_ATTR_NOSUID */ };

		got = result((int)syscall(442 /* mount_setattr */, AT_FDCWD, argv[3], 0, &attr,
					  sizeof(attr)));
	} else if (!strcmp(op, "fspick"))
		got = result((int)syscall(433 /* fspick */, AT_FDCWD, argv[3], 0));
	else if (!strcmp(op, "open-mode3"))	/* O_ACCMODE 3: "ioctl only" */
		got = result(open(argv[3], 3));
	else if (!strcmp(op, "setns")) {
		int fd = open(argv[3], O_RDONLY);

		got = fd < 0 ? errno : result(setns(fd, CLONE_NEWNS));
	} else if (!strcmp(op, "ftruncate-stdout"))	/* ARG ignored */
		got = result(ftruncate(1, 0));
	else if (!strcmp(op, "unix-connect"))
		got = unix_peer(argv[3], SOCK_STREAM);
	else if (!strcmp(op, "unix-send"))
		got = unix_peer(argv[3], SOCK_DGRAM);
	else if (!strcmp(op, "pidfd-self")) {	/* ARG ignored */
		int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

		got = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "bpf-map-create")) {	/* ARG ignored */
		union {
			struct {
				unsigned int map_type, key_size, value_size, max_entries;
			} create;
			char pad[128];
		} attr;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.create.map_type = 2;	/* BPF_MAP_TYPE_ARRAY */
		attr.create.key_size = 4;
		attr.create.value_size = 4;
		attr.create.max_entries = 1;
		fd = (int)syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, &attr, sizeof(attr));
		got = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "finit-module")) {
		int fd = open(argv[3], O_RDONLY);

		got = fd < 0 ? errno : result((int)syscall(SYS_finit_module, fd, "", 0));
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "init-module")) {	/* ARG ignored: a junk image */
		static const char image[64] = "\177ELF";

		got = result((int)syscall(SYS_init_module, image, sizeof(image), ""));
	} else if (!strcmp(op, "socket") && argc > 5) {	/* socket FAMILY TYPE PROTOCOL */
		int fd = socket(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));

		got = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "tcp-congestion")) {	/* setsockopt(TCP_CONGESTION, ARG) */
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		got = fd < 0 ? errno
			     : result(setsockopt(fd, IPPROTO_TCP, 13 /* TCP_CONGESTION */, argv[3],
						 (socklen_t)strlen(argv[3])));
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "set-mtu") && argc > 4) {	/* set-mtu IFNAME MTU: SIOCSIFMTU */
		struct ifreq ifr = { 0 };
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[3]);
		ifr.ifr_mtu = atoi(argv[4]);
		got = fd < 0 ? errno : result(ioctl(fd, SIOCSIFMTU, &ifr));
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "pty-ldisc")) {	/* TIOCSETD ARG on a pty of its own */
		int master = open("/dev/ptmx", O_RDWR | O_NOCTTY), ldisc = atoi(argv[3]);

		got = master < 0 ? errno : result(ioctl(master, TIOCSETD, &ldisc));
		if (master >= 0)
			close(master);
	} else if (!strcmp(op, "socket-family")) {	/* socket(ARG, SOCK_STREAM, 0) */
		int fd = socket(atoi(argv[3]), SOCK_STREAM, 0);

		got = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(op, "umount"))
		got = result(umount2(argv[3], MNT_DETACH));
	else {
		fprintf(stderr, "fsprobe: unknown operation %s\n", op);
		return 2;
	}
	printf("fsprobe: %s %s: %s\n", op, argc > 3 ? argv[3] : "", errname(got));
	return strcmp(errname(got), want) == 0 ? 0 : 1;
}
