// SPDX-License-Identifier: GPL-2.0
/*
 * floodprobe DIR DENIED COUNT DENIED_ADDR EXEC ADDR PORT: fills a run's audit
 * ring and tries allowed actions behind it (tests/vm/suite/failclosed.sh).
 *
 * Opens DIR/out and writes "ready" there while the ring has room, waits for
 * DIR/go (the test has stopped the controller by then, so nothing drains the
 * ring), then makes COUNT write-opens of DENIED and COUNT / 4 TCP connects to
 * DENIED_ADDR:PORT (each refused and recorded: the net records are smaller
 * than the fs ones, so after both not even a net record fits), execs EXEC in
 * a forked child and connects to ADDR:PORT (TCP, IPv4).  Every
 * result goes to the descriptor opened first: once the ring is full, a
 * fail_closed run refuses a new write-open too.  Lines of DIR/out:
 *   ready
 *   flood N ERR       N of the COUNT opens failed with ERR (the last error)
 *   netflood N ERR    N of the COUNT / 4 connects failed with ERR
 *   exec RESULT       ok, or the errno name execve failed with
 *   connect RESULT    ok, or the errno name connect failed with
 *   end
 * Exits 0 when it got that far, 2 on a usage or setup error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	static char other[16];

	switch (e) {
	case 0: return "ok";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ECONNREFUSED: return "ECONNREFUSED";
	}
	snprintf(other, sizeof(other), "errno%d", e);
	return other;
}

/* The child's execve errno through a close-on-exec pipe: 0 once it ran. */
static int exec_result(const char *path)
{
	int fds[2], e = 0, status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };

		execv(path, argv);
		e = errno;
		if (write(fds[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	if (read(fds[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return e;
}

/* COUNT connects of one TCP socket to ADDR:PORT; *failed of them failed, the last with the result. */
static int connect_result(const char *addr, int port, long count, long *failed)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, e = 0;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return EINVAL;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return errno;
	*failed = 0;
	for (long i = 0; i < count; i++) {
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
			e = 0;
			break;
		}
		e = errno;
		++*failed;
	}
	close(fd);
	return e;
}

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	char path[4096];
	long count, failed = 0, ignored;
	int out, last = 0, e;
	struct stat st;

	if (argc != 8 || (count = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: floodprobe DIR DENIED COUNT DENIED_ADDR EXEC ADDR PORT\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/out", argv[1]);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		fprintf(stderr, "floodprobe: opening %s: %s\n", path, strerror(errno));
		return 2;
	}
	dprintf(out, "ready\n");
	snprintf(path, sizeof(path), "%s/go", argv[1]);
	/* a test that lost track of the run must not leave it waiting forever */
	for (int i = 0; stat(path, &st); i++) {
		if (i == 12000) {
			dprintf(out, "no go\n");
			return 3;
		}
		nanosleep(&tick, NULL);
	}
	for (long i = 0; i < count; i++) {
		int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);

		if (fd >= 0) {
			close(fd);
			continue;
		}
		failed++;
		last = errno;
	}
	dprintf(out, "flood %ld %s\n", failed, errname(last));
	e = connect_result(argv[4], atoi(argv[7]), count / 4, &failed);
	dprintf(out, "netflood %ld %s\n", failed, errname(e));
	dprintf(out, "exec %s\n", errname(exec_result(argv[5])));
	e = connect_result(argv[6], atoi(argv[7]), 1, &ignored);
	dprintf(out, "connect %s\n", errname(e));
	dprintf(out, "end\n");
	return 0;
}
