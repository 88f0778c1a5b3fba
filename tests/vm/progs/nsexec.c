// SPDX-License-Identifier: GPL-2.0
/*
 * nsexec cgroup COMMAND [ARGS...]: runs COMMAND in a new cgroup namespace
 * (busybox's unshare has no -C).  Exits 2 on a usage error, 1 if the
 * namespace cannot be made.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "cgroup") != 0) {
		fprintf(stderr, "usage: nsexec cgroup COMMAND [ARGS...]\n");
		return 2;
	}
	if (unshare(CLONE_NEWCGROUP) < 0) {
		perror("nsexec: unshare(CLONE_NEWCGROUP)");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("nsexec: exec");
	return 127;
}
