// SPDX-License-Identifier: GPL-2.0
/*
 * Input digests, and the verified copy a run reads (runtime/inputdigest.h).
 * Every byte is read once, through descriptors opened without following
 * links below the input, hashed and (with a copy) written in the same pass:
 * what the copy holds is what was hashed, whatever the host does to the
 * input meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "runtime/fsutil.h"
#include "runtime/inputdigest.h"

/* deeper trees than this are refused: no input needs them, and the walk recurses */
#define INPUT_DEPTH_MAX 128

struct walk {
	EVP_MD_CTX *tree;	/* the tree digest's */
	const char *root;	/* the input's path, for messages */
	char rel[PATH_MAX];	/* the entry's path below it */
	char *why;
	size_t why_len;
	bool copy;
	bool writable;
	uid_t uid;
	gid_t gid;
};

static int why(struct walk *w, int e, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(w->why, w->why_len, "%s%s%s: ", w->root, w->rel[0] ? "/" : "", w->rel);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < w->why_len)
		vsnprintf(w->why + n, w->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -e;
}

static void hex(const uint8_t d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int tree_put(struct walk *w, const void *p, size_t n)
{
	return EVP_DigestUpdate(w->tree, p, n) ? 0 : -ENOMEM;
}

/* "K " PATH "\0" VALUE [ "\0" ] "\n" */
static int tree_record(struct walk *w, char kind, const char *value, bool nul_after)
{
	char head[2] = { kind, ' ' };
	int r = tree_put(w, head, 2);

	r = r ?: tree_put(w, w->rel, strlen(w->rel) + 1);
	r = r ?: tree_put(w, value, strlen(value) + (nul_after ? 1 : 0));
	return r ?: tree_put(w, "\n", 1);
}

/* The bytes of fd into digest (and into out, unless -1). */
static int hash_file(struct walk *w, int fd, int out, uint8_t digest[32])
{
	static __thread char buf[1 << 16];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int r = 0;

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = why(w, errno, "reading: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			r = -ENOMEM;
			break;
		}
		for (ssize_t off = 0; out >= 0 && off < n;) {
			ssize_t m = write(out, buf + off, (size_t)(n - off));

			if (m < 0 && errno == EINTR)
				continue;
			if (m < 0) {
				r = why(w, errno, "copying: %s", strerror(errno));
				break;
			}
			off += m;
		}
		if (r)
			break;
	}
	if (!r && !EVP_DigestFinal_ex(ctx, digest, NULL))
		r = -ENOMEM;
	EVP_MD_CTX_free(ctx);
	return r;
}

/* A regular file opened as `fd`: its digest; its copy `name` in dst (or -1). */
static int do_file(struct walk *w, int fd, const struct stat *st, int dst, const char *name,
		   uint8_t digest[32])
{
	mode_t mode = (st->st_mode & 0111 ? 0555 : 0444) | (w->writable ? 0200 : 0);
	int out = -1, r;

	if (dst >= 0) {
		out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return why(w, errno, "making the copy: %s", strerror(errno));
	}
	r = hash_file(w, fd, out, digest);
	if (!r && out >= 0 && (fchown(out, w->uid, w->gid) < 0 || fchmod(out, mode) < 0))
		r = why(w, errno, "giving the copy to uid %u: %s", (unsigned)w->uid, strerror(errno));
	if (out >= 0)
		close(out);
	return r;
}

static int do_dir(struct walk *w, int fd, int dst, int depth);

/* One entry `name` of the directory fd (rel already names it). */
static int do_entry(struct walk *w, int dirfd, const char *name, int dst, int depth)
{
	char hexd[65], target[PATH_MAX];
	uint8_t d[32];
	struct stat st;
	int fd, sub = -1, r;
	ssize_t n;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return why(w, errno, "%s", strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dirfd, name, target, sizeof(target));
		if (n < 0 || (size_t)n >= sizeof(target))
			return why(w, n < 0 ? errno : ENAMETOOLONG, "reading the link: %s",
				   strerror(n < 0 ? errno : ENAMETOOLONG));
		target[n] = 0;
		if (w->copy && (symlinkat(target, dst, name) < 0 ||
				fchownat(dst, name, w->uid, w->gid, AT_SYMLINK_NOFOLLOW) < 0))
			return why(w, errno, "making the copy: %s", strerror(errno));
		return tree_record(w, 'l', target, true);
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return why(w, EINVAL, "is a %s: only regular files, directories and symbolic "
			   "links can be verified", S_ISFIFO(st.st_mode) ? "FIFO" :
			   S_ISSOCK(st.st_mode) ? "socket" : "device node");
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
				 (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	/* what was opened decides, not what fstatat saw a moment before */
	if (fd < 0 || fstat(fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
		r = why(w, fd < 0 ? errno : EAGAIN, "%s", fd < 0 ? strerror(errno)
					: "changed while it was read: try again");
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (S_ISREG(st.st_mode)) {
		r = do_file(w, fd, &st, w->copy ? dst : -1, name, d);
		close(fd);
		if (r)
			return r;
		hex(d, hexd);
		return tree_record(w, st.st_mode & 0111 ? 'x' : 'f', hexd, false);
	}
	r = tree_record(w, 'd', "", false);
	if (!r && w->copy) {
		if (mkdirat(dst, name, 0700) < 0 ||
		    (sub = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			r = why(w, errno, "making the copy: %s", strerror(errno));
	}
	r = r ?: do_dir(w, fd, sub, depth + 1);
	if (sub >= 0)
		close(sub);
	close(fd);
	return r;
}

/* The entries of the directory fd, in byte order of their names; copied into dst. */
static int do_dir(struct walk *w, int fd, int dst, int depth)
{
	size_t count = 0, len = strlen(w->rel);
	char **names = NULL;
	int r;

	if (depth > INPUT_DEPTH_MAX)
		return why(w, ELOOP, "more than %d directories deep", INPUT_DEPTH_MAX);
	r = dir_names_sorted(fd, &names, &count);
	if (r == -ENOMEM)
		return r;
	if (r)
		return why(w, -r, "listing: %s", strerror(-r));
	for (size_t i = 0; !r && i < count; i++) {
		if (snprintf(w->rel + len, sizeof(w->rel) - len, "%s%s", len ? "/" : "",
			     names[i]) >= (int)(sizeof(w->rel) - len))
			r = why(w, ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
		else
			r = do_entry(w, fd, names[i], dst, depth);
		w->rel[len] = 0;
	}
	dir_names_free(names, count);
	/* the copy's directory is the run's, read-only unless asked, once it is filled */
	if (!r && w->copy && (fchown(dst, w->uid, w->gid) < 0 ||
			      fchmod(dst, w->writable ? 0755 : 0555) < 0))
		r = why(w, errno, "giving the copy to uid %u: %s", (unsigned)w->uid, strerror(errno));
	return r;
}

int input_digest(const char *path, const struct input_copy *copy, uint8_t digest[32],
		 char *why_buf, size_t why_len)
{
	struct walk w = { .root = path, .why = why_buf, .why_len = why_len, .copy = copy != NULL };
	static const char header[] = "tether-tree-v1\n";
	struct stat st;
	int fd, sub = -1, r;

	if (why_len)
		why_buf[0] = 0;
	if (copy) {
		w.uid = copy->uid;
		w.gid = copy->gid;
		w.writable = copy->writable;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return why(&w, errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		r = why(&w, errno, "%s", strerror(errno));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		close(fd);
		return why(&w, EINVAL, "is neither a regular file nor a directory");
	}
	if (S_ISREG(st.st_mode)) {
		r = do_file(&w, fd, &st, copy ? copy->dir_fd : -1, copy ? copy->name : NULL, digest);
		close(fd);
		return r;
	}
	w.tree = EVP_MD_CTX_new();
	r = w.tree && EVP_DigestInit_ex(w.tree, EVP_sha256(), NULL) ? 0 : -ENOMEM;
	r = r ?: tree_put(&w, header, sizeof(header) - 1);
	if (!r && copy) {
		if (mkdirat(copy->dir_fd, copy->name, 0700) < 0 ||
		    (sub = openat(copy->dir_fd, copy->name,
				  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			r = why(&w, errno, "making the copy: %s", strerror(errno));
	}
	r = r ?: do_dir(&w, fd, sub, 0);
	if (!r && !EVP_DigestFinal_ex(w.tree, digest, NULL))
		r = -ENOMEM;
	if (r == -ENOMEM && why_len && !why_buf[0])
		why(&w, ENOMEM, "%s", strerror(ENOMEM));
	EVP_MD_CTX_free(w.tree);
	if (sub >= 0)
		close(sub);
	close(fd);
	return r;
}
