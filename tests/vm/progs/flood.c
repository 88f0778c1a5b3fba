// SPDX-License-Identifier: GPL-2.0
/*
 * flood TOTAL PROCS DIR: floods the audit stream with TOTAL denials from
 * PROCS processes at once (each its own coalescing key, so coalescing alone
 * cannot fold them): each child opens DIR/<pid>-<i> with O_CREAT, which the
 * run's envelope denies.  Prints "attempts N denied N other N" (the sum
 * over the children, from their exit statuses' pipe) and exits 0 when every
 * attempt was refused with EACCES.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(long n, const char *dir, int out)
{
	long denied = 0, other = 0;
	char path[4096], line[64];
	int len;

	for (long i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%d-%ld", dir, (int)getpid(), i);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			other++;
		} else if (errno == EACCES) {
			denied++;
		} else {
			other++;
		}
	}
	len = snprintf(line, sizeof(line), "%ld %ld\n", denied, other);
	if (write(out, line, (size_t)len) != len)
		_exit(2);
	_exit(0);
}

int main(int argc, char **argv)
{
	long total, procs, per, denied = 0, other = 0, d, o;
	int pipefd[2];
	FILE *in;

	if (argc != 4 || (total = atol(argv[1])) <= 0 || (procs = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: flood TOTAL PROCS DIR\n");
		return 2;
	}
	per = total / procs;
	if (pipe(pipefd) < 0) {
		perror("flood: pipe");
		return 2;
	}
	for (long p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("flood: fork");
			return 2;
		}
		if (pid == 0) {
			close(pipefd[0]);
			child(per + (p < total % procs), argv[3], pipefd[1]);
		}
	}
	close(pipefd[1]);
	in = fdopen(pipefd[0], "r");
	while (in && fscanf(in, "%ld %ld", &d, &o) == 2) {
		denied += d;
		other += o;
	}
	while (wait(NULL) > 0)
		;
	printf("attempts %ld denied %ld other %ld\n", denied + other, denied, other);
	return denied == total && other == 0 ? 0 : 1;
}
