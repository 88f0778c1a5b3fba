// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/fsutil.h"

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

struct walk {
	unsigned int flags;
	dev_t dev;		/* the tree's filesystem: nothing on another one is touched */
	void (*report)(void *ctx, const char *path, int err);
	void *ctx;
	int first_error;
	char path[PATH_MAX];	/* of the entry at hand, for reports */
};

static void failed(struct walk *w, int err)
{
	if (w->report)
		w->report(w->ctx, w->path, err);
	if (!w->first_error)
		w->first_error = -err;
}

/*
 * Empties the directory open as `fd` (w->path names it).  Depth is bounded
 * by PATH_MAX: a name that does not fit is reported, not followed.
 */
static void empty_dir(struct walk *w, int fd)
{
	size_t base = strlen(w->path);
	struct dirent *de;
	DIR *dir = fdopendir(fd);

	if (!dir) {
		failed(w, errno);
		close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		struct stat st;
		int child;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(w->path + base, sizeof(w->path) - base, "/%s", de->d_name) >=
		    (int)(sizeof(w->path) - base)) {
			w->path[base] = 0;
			failed(w, ENAMETOOLONG);
			continue;
		}
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				failed(w, errno);
		} else if (!S_ISDIR(st.st_mode)) {
			if (!(w->flags & REMOVE_TREE_DIRS_ONLY) &&
			    unlinkat(dirfd(dir), de->d_name, 0) < 0 && errno != ENOENT)
				failed(w, errno);
		} else if (st.st_dev != w->dev) {
			/* a mount point: neither entered nor removed */
			failed(w, EXDEV);
		} else if ((child = openat(dirfd(dir), de->d_name,
					   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			if (errno != ENOENT)
				failed(w, errno);
		} else {
			empty_dir(w, child);
			if (unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
				failed(w, errno);
		}
		w->path[base] = 0;
	}
	closedir(dir);
}

int remove_tree(const char *path, unsigned int flags,
		void (*report)(void *ctx, const char *path, int err), void *ctx)
{
	struct walk w = { .flags = flags, .report = report, .ctx = ctx };
	struct stat st;
	int fd;

	if (snprintf(w.path, sizeof(w.path), "%s", path) >= (int)sizeof(w.path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		failed(&w, errno);
		return w.first_error;
	}
	if (fstat(fd, &st) < 0) {
		failed(&w, errno);
		close(fd);
		return w.first_error;
	}
	w.dev = st.st_dev;
	empty_dir(&w, fd);
	snprintf(w.path, sizeof(w.path), "%s", path);
	if (rmdir(path) < 0 && errno != ENOENT)
		failed(&w, errno);
	return w.first_error;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dir_names_sorted(int fd, char ***names_out, size_t *count_out)
{
	size_t count = 0, cap = 0;
	char **names = NULL;
	struct dirent *de;
	int r = 0, dfd = dup(fd);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!dir) {
		r = -errno;
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	while (!r && (errno = 0, de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (count == cap) {
			char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (!more) {
				r = -ENOMEM;
				break;
			}
			names = more;
		}
		if (!(names[count] = strdup(de->d_name)))
			r = -ENOMEM;
		else
			count++;
	}
	if (!r && errno)
		r = -errno;
	closedir(dir);
	if (r) {
		dir_names_free(names, count);
		return r;
	}
	qsort(names, count, sizeof(*names), name_cmp);
	*names_out = names;
	*count_out = count;
	return 0;
}

void dir_names_free(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}
