// SPDX-License-Identifier: GPL-2.0
/*
 * asuser UID GID GROUPS COMMAND [ARGS...]: runs COMMAND as UID, with primary
 * group GID and the comma-separated supplementary GROUPS ("-": none); for
 * the daemon's caller checks (busybox's setpriv cannot change ids).
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	gid_t groups[32];
	size_t n = 0;
	char *s, *tok;

	if (argc < 5) {
		fprintf(stderr, "usage: asuser UID GID GROUPS|- COMMAND [ARGS...]\n");
		return 2;
	}
	if (strcmp(argv[3], "-") != 0)
		for (s = argv[3]; n < 32 && (tok = strsep(&s, ",")); )
			groups[n++] = (gid_t)strtoul(tok, NULL, 10);
	if (setgroups(n, groups) < 0 || setgid((gid_t)strtoul(argv[2], NULL, 10)) < 0 ||
	    setuid((uid_t)strtoul(argv[1], NULL, 10)) < 0) {
		perror("asuser");
		return 1;
	}
	execvp(argv[4], argv + 4);
	perror("asuser: exec");
	return 127;
}
