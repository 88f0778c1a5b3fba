// SPDX-License-Identifier: GPL-2.0
/*
 * unixsrv stream|dgram PATH, unixsrv abstract NAME: binds a unix socket and
 * serves forever (accepting and dropping stream connections, reading
 * datagrams), so tests have a peer to connect to.  Prints "ready" once bound.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int dgram, fd, c;
	socklen_t len;
	char buf[256];

	if (argc != 3) {
		fprintf(stderr, "usage: unixsrv stream|dgram PATH | abstract NAME\n");
		return 2;
	}
	dgram = strcmp(argv[1], "dgram") == 0;
	if (strcmp(argv[1], "abstract") == 0) {
		addr.sun_path[0] = 0;
		strncpy(addr.sun_path + 1, argv[2], sizeof(addr.sun_path) - 2);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[2]));
	} else {
		strncpy(addr.sun_path, argv[2], sizeof(addr.sun_path) - 1);
		unlink(argv[2]);
		len = sizeof(addr);
	}
	fd = socket(AF_UNIX, dgram ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, len) < 0 || (!dgram && listen(fd, 8) < 0)) {
		perror("unixsrv");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (dgram) {
			if (recv(fd, buf, sizeof(buf), 0) < 0)
				return 1;
		} else if ((c = accept(fd, NULL, NULL)) >= 0) {
			close(c);
		}
	}
}
