/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The digest of an input (docs/envelope.md, "Inputs by digest"): sha256 of a
 * file's bytes, or for a directory the canonical tree digest, sha256 of
 * "tether-tree-v1\n" and one record per entry below it, depth first, each
 * directory's names in byte order:
 *
 *   "d " PATH "\0" "\n"                       a directory
 *   "f " PATH "\0" HEX64 "\n"                 a regular file (HEX64: sha256 of
 *   "x " PATH "\0" HEX64 "\n"                 its bytes), x when any exec bit is set
 *   "l " PATH "\0" TARGET "\0" "\n"           a symbolic link, not followed
 *
 * PATH is relative to the input, components joined by '/'.  Owners, other
 * mode bits and times are not part of it; a device, FIFO or socket makes the
 * input unverifiable.  The input's own path is followed when it is a link.
 */
#ifndef TETHER_INPUTDIGEST_H
#define TETHER_INPUTDIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Where a copy goes: a directory fd, the name to make in it, the owner to
 * give; writable: files 0644 (0755 with an exec bit) and directories 0755,
 * for a tree the run works in (a fresh_overlay's source), not 0444/0555.
 */
struct input_copy {
	int dir_fd;
	const char *name;
	uid_t uid;
	gid_t gid;
	bool writable;
};

/*
 * The digest of the file or directory at `path`; with `copy`, also a copy of
 * exactly what was read and hashed (files 0444, or 0555 with an exec bit;
 * directories 0555; owned by copy->uid:gid).  0, or a negative errno with
 * `why` saying what failed on which path.
 */
int input_digest(const char *path, const struct input_copy *copy, uint8_t digest[32],
		 char *why, size_t why_len);

#endif
