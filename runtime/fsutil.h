/* SPDX-License-Identifier: GPL-2.0 */
/* Directory trees the controller makes and removes (runtime/fsutil.c). */
#ifndef TETHER_RUNTIME_FSUTIL_H
#define TETHER_RUNTIME_FSUTIL_H

#include <sys/types.h>

#include <stddef.h>

/*
 * All of `len` bytes to `fd`: a pipe takes them in pieces, EINTR is retried;
 * a descriptor that takes nothing is -EIO.  Returns 0 or a negative errno.
 */
int write_all(int fd, const void *data, size_t len);

/*
 * The names in the directory open as `fd` (not "." or ".."), in byte order:
 * *names holds *count strings, freed with dir_names_free().  `fd` stays
 * open and its own.  Returns 0 or a negative errno (readdir's included).
 */
int dir_names_sorted(int fd, char ***names, size_t *count);
void dir_names_free(char **names, size_t count);

/* mkdir -p: every missing component with `mode`.  Returns 0 or a negative errno. */
int mkdir_p(const char *path, mode_t mode);

/* remove_tree flags */
#define REMOVE_TREE_DIRS_ONLY	(1u << 0)	/* leave other entries (a cgroup's files go with it) */

/*
 * Removes the directory `path` and everything below it, depth first,
 * without following symbolic links or entering another filesystem (a mount
 * below it is left, and so is the directory above it).  It keeps going past
 * an entry that will not go (chattr +i), so one cannot keep the rest, and
 * calls `report` (may be NULL) with each path that failed.  A `path` that is
 * already gone is success.  Returns 0 or the first negative errno.
 */
int remove_tree(const char *path, unsigned int flags,
		void (*report)(void *ctx, const char *path, int err), void *ctx);

#endif
