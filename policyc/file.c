// SPDX-License-Identifier: GPL-2.0
/*
 * Reading an input file (envelope, contract, compiled policy) whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "policyc/policyc_internal.h"

/* A problem with the file as a whole: a diagnostic without position. */
__attribute__((format(printf, 4, 5)))
static int file_error(struct tp_diags *diags, const char *path, int error, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tp_diags_addv(diags, path, 0, 0, fmt, ap);
	va_end(ap);
	return r < 0 ? r : error;
}

int tp_file_read(const char *path, size_t max, char **out, size_t *out_len,
		 struct tp_diags *diags)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *data = NULL;
	size_t len = 0, capacity;
	struct stat st;
	int error;

	if (!path || !out || !out_len || !diags || max >= SIZE_MAX / 2)
		return -EINVAL;

	/*
	 * O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer; with it the open returns and the type check below refuses it.
	 * It has no effect on regular files.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		error = errno;
		return file_error(diags, path, -error, "cannot open: %s", strerror(error));
	}
	if (fstat(fd, &st) < 0) {
		error = errno;
		return file_error(diags, path, -error, "cannot stat: %s", strerror(error));
	}
	if (S_ISDIR(st.st_mode))
		return file_error(diags, path, -EISDIR, "cannot read: %s", strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return file_error(diags, path, -EINVAL, "not a regular file");
	if ((uintmax_t)st.st_size > max)
		return file_error(diags, path, -EFBIG,
				  "the file is %jd bytes, over the limit of %zu bytes",
				  (intmax_t)st.st_size, max);

	/*
	 * st_size is a hint, not a bound: the file may grow while we read, and
	 * some files report 0.  Read until EOF, never past the limit plus one
	 * byte (which is enough to know the limit was exceeded), and keep one
	 * byte for the terminating NUL.
	 */
	capacity = (size_t)st.st_size + 2;
	data = malloc(capacity);
	if (!data)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == capacity - 1) {
			size_t grown = capacity * 2;
			char *p;

			if (len > max)
				break;
			if (grown > max + 2)
				grown = max + 2;
			p = realloc(data, grown);
			if (!p)
				return -ENOMEM;
			data = p;
			capacity = grown;
		}
		n = read(fd, data + len, capacity - 1 - len);
		if (n < 0) {
			error = errno;
			if (error == EINTR)
				continue;
			return file_error(diags, path, -error, "cannot read: %s", strerror(error));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max)
		return file_error(diags, path, -EFBIG, "the file is over the limit of %zu bytes", max);
	data[len] = '\0';

	*out = TAKE_PTR(data);
	*out_len = len;
	return 0;
}
