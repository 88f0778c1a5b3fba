// SPDX-License-Identifier: GPL-2.0
/*
 * bench-start probe (see bench/README.md): the command the launchers start.
 *
 *   startprobe
 *
 * Its first action in main() is to read CLOCK_MONOTONIC; it then writes that
 * time in ns, in decimal and followed by a newline, to stdout and exits 0
 * (1 when the clock or the write failed).  bench/start/driver reads the
 * clock just before it forks the launcher (tether run, bwrap, or nothing),
 * so the difference is the launcher's start latency up to the command's
 * main(): everything the launcher does, the exec of the probe, and the
 * probe's own start-up (static: no dynamic loader; glibc's static start-up
 * before main() is the same for every launcher).
 *
 * Static, so that it runs in the VM's initramfs and the host alike, and so
 * that no launcher pays for a dynamic loader the others do not.  CLOCK_MONOTONIC
 * is shared by every namespace the launchers create (none of them creates a
 * time namespace), so the two readings are comparable.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec now;
	char text[24], *p = text + sizeof(text);
	uint64_t ns;

	/* The very first action: everything after it is not the launcher's. */
	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 1;
	ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	*--p = '\n';
	do {
		*--p = (char)('0' + ns % 10);
		ns /= 10;
	} while (ns);
	return write(STDOUT_FILENO, p, (size_t)(text + sizeof(text) - p)) ==
			       (ssize_t)(text + sizeof(text) - p)
		       ? 0
		       : 1;
}
