// SPDX-License-Identifier: GPL-2.0
/*
 * Artifacts (docs/envelope.md, "Artifacts"): when the run's tree is empty,
 * the files the envelope declares leave the workspace for the directory the
 * caller named (tether run --artifacts DIR), and nothing else does.
 *
 * The controller walks the workspace (a fresh one through the descriptor of
 * the run's own file system, which no path reaches) with descriptors opened
 * without following links.  Only regular files with one link leave: a
 * symbolic link, a hard link (its other names may be anywhere), a device,
 * FIFO or socket, a setuid or setgid file and a directory named exactly are
 * refused with the reason.  Each file is read once: hashed, copied into a
 * staging directory inside DIR (mode 0644: exec, setuid and setgid bits
 * never leave) and, with artifacts.scan, scanned.  A finding sends the file
 * to DIR.quarantine instead.  Every file's record (decision, reason, size,
 * sha256) is written to the audit stream before any file is published
 * (renamed into place, never over an existing one).  Undeclared files are
 * recorded as refused too, the first ARTIFACT_UNDECLARED_LISTED of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "runtime/fsutil.h"
#include "runtime/run/internal.h"

#define ARTIFACT_MAX_BYTES (1ull << 30)		/* all exported files together */
#define ARTIFACT_SCAN_MAX (16u << 20)		/* a larger file cannot be scanned */
#define ARTIFACT_UNDECLARED_LISTED 256
#define ARTIFACT_DEPTH_MAX 64
#define QUARANTINE_SUFFIX ".quarantine"

struct item {
	char *rel;
	const char *decision;
	char reason[160];
	uint64_t size;
	char sha[TP_DIGEST_TEXT_MAX];
	bool staged;			/* kept in the staging directory, to be published */
	bool copied;			/* has a staged name (published or not) */
	bool quarantine;
};

struct exporter {
	struct run *run;
	int stage;			/* DIR/.tether-staging-RUN */
	struct item *items;
	size_t count, cap, staged;
	uint64_t total;
	size_t undeclared;		/* entries not declared, listed or not */
	char rel[PATH_MAX];
	char *buf;			/* the file being scanned */
	size_t buf_len;
	bool failed;
};

/* ---- what the envelope declares ------------------------------------------ */

/* "dir/" + "**" covers dir and below; anything else names one path exactly. */
static bool pattern_covers(const char *pat, const char *rel)
{
	size_t n = strlen(pat);

	if (n >= 2 && strcmp(pat + n - 2, "**") == 0) {
		n -= 2;
		if (n == 0)
			return true;	/* "**": the whole workspace */
		n--;			/* the '/' before ** */
		return strncmp(rel, pat, n) == 0 && (rel[n] == '/' || rel[n] == 0);
	}
	return strcmp(pat, rel) == 0;
}

static bool declared(const struct tp_policy *pol, const char *rel)
{
	for (size_t i = 0; i < pol->artifact_count; i++)
		if (pattern_covers(pol->artifacts[i], rel))
			return true;
	return false;
}

/* ---- the scan ------------------------------------------------------------- */

static bool has_run(const char *p, const char *end, size_t min, const char *set)
{
	size_t n = 0;

	while (p + n < end && p[n] && strchr(set, p[n]))
		n++;
	return n >= min;
}

/*
 * A random-looking value: letters and digits mixed, and at least 12
 * distinct characters in it (a word, a path or a repeated character is not).
 */
static bool random_looking(const char *p, size_t n)
{
	bool seen[256] = { false }, alpha = false, digit = false;
	unsigned int distinct = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		distinct += !seen[c];
		seen[c] = true;
		alpha |= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		digit |= c >= '0' && c <= '9';
	}
	return alpha && digit && distinct >= 12;
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#define UPNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#define B64ISH ALNUM "+/=_.-"

/* A credential name, then [:=] and a random-looking value of 20 or more characters. */
static const char *near_credential(const char *buf, size_t len)
{
	static const char *const names[] = { "password", "passwd", "secret", "token", "api_key",
					     "apikey", "access_key", "private_key", "auth" };
	const char *end = buf + len;

	for (const char *p = buf; p < end; p++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
			size_t n = strlen(names[i]), v = 0;
			const char *q = p + n;

			if ((size_t)(end - p) < n || strncasecmp(p, names[i], n) != 0)
				continue;
			while (q < end && (*q == '"' || *q == '\'' || *q == ' ' || *q == '_' ||
					   (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) &&
			       q - p < (ptrdiff_t)n + 16)
				q++;
			if (q >= end || (*q != '=' && *q != ':'))
				continue;
			q++;
			while (q < end && (*q == ' ' || *q == '"' || *q == '\''))
				q++;
			while (q + v < end && q[v] && strchr(B64ISH, q[v]))
				v++;
			if (v >= 20 && random_looking(q, v))
				return names[i];
		}
	}
	return NULL;
}

static const char *find(const char *buf, size_t len, const char *needle)
{
	return memmem(buf, len, needle, strlen(needle));
}

/* What artifacts.scan finds in a file, or NULL: the first finding, in `why`. */
static const char *scan(const char *rel, const char *buf, size_t len, char *why, size_t why_len)
{
	static const struct { const char *magic; size_t n, off; const char *what; } magic[] = {
		{ "\x7f" "ELF", 4, 0, "an ELF executable" },
		{ "MZ", 2, 0, "a PE executable" },
		{ "\xcf\xfa\xed\xfe", 4, 0, "a Mach-O executable" },
		{ "\xce\xfa\xed\xfe", 4, 0, "a Mach-O executable" },
		{ "#!", 2, 0, "a script (#!)" },
		{ "PK\x03\x04", 4, 0, "an archive (zip)" },
		{ "\x1f\x8b", 2, 0, "an archive (gzip)" },
		{ "\xfd" "7zXZ", 5, 0, "an archive (xz)" },
		{ "\x28\xb5\x2f\xfd", 4, 0, "an archive (zstd)" },
		{ "BZh", 3, 0, "an archive (bzip2)" },
		{ "7z\xbc\xaf\x27\x1c", 6, 0, "an archive (7z)" },
		{ "ustar", 5, 257, "an archive (tar)" },
	};
	static const struct { const char *prefix; size_t min; const char *set, *what; } tokens[] = {
		{ "AKIA", 16, UPNUM, "an AWS access key id" },
		{ "ASIA", 16, UPNUM, "an AWS access key id" },
		{ "ghp_", 36, ALNUM, "a GitHub token" },
		{ "gho_", 36, ALNUM, "a GitHub token" },
		{ "ghu_", 36, ALNUM, "a GitHub token" },
		{ "ghs_", 36, ALNUM, "a GitHub token" },
		{ "github_pat_", 22, ALNUM "_", "a GitHub token" },
		{ "xoxb-", 10, ALNUM "-", "a Slack token" },
		{ "xoxp-", 10, ALNUM "-", "a Slack token" },
		{ "AIza", 35, ALNUM "_-", "a Google API key" },
		{ "sk_live_", 24, ALNUM, "a Stripe secret key" },
	};
	const char *p, *name;

	for (const char *c = rel; (c = strstr(c, ".git")); c += 4)
		if ((c == rel || c[-1] == '/') && (c[4] == '/' || c[4] == 0)) {
			snprintf(why, why_len, "a nested repository (.git)");
			return why;
		}
	for (size_t i = 0; i < sizeof(magic) / sizeof(*magic); i++)
		if (len >= magic[i].off + magic[i].n &&
		    memcmp(buf + magic[i].off, magic[i].magic, magic[i].n) == 0) {
			snprintf(why, why_len, "%s", magic[i].what);
			return why;
		}
	for (p = buf; (p = find(p, len - (size_t)(p - buf), "-----BEGIN ")); p++) {
		const char *eol = memchr(p, '\n', len - (size_t)(p - buf));
		size_t n = eol ? (size_t)(eol - p) : len - (size_t)(p - buf);

		if (memmem(p, n, "PRIVATE KEY", 11)) {
			snprintf(why, why_len, "a private key (PEM)");
			return why;
		}
	}
	for (size_t i = 0; i < sizeof(tokens) / sizeof(*tokens); i++)
		for (p = buf; (p = find(p, len - (size_t)(p - buf), tokens[i].prefix)); p++)
			if (has_run(p + strlen(tokens[i].prefix), buf + len, tokens[i].min,
				    tokens[i].set)) {
				snprintf(why, why_len, "%s", tokens[i].what);
				return why;
			}
	name = near_credential(buf, len);
	if (name) {
		snprintf(why, why_len, "a random-looking value after '%s'", name);
		return why;
	}
	return NULL;
}

/* ---- the walk ------------------------------------------------------------- */

static struct item *add(struct exporter *x, const char *decision, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct item *add(struct exporter *x, const char *decision, const char *fmt, ...)
{
	struct item *it;
	va_list ap;

	if (x->count == x->cap) {
		struct item *more = realloc(x->items, (x->cap = x->cap ? 2 * x->cap : 32) *
						      sizeof(*more));

		if (!more)
			return NULL;
		x->items = more;
	}
	it = &x->items[x->count];
	*it = (struct item){ .rel = strdup(x->rel), .decision = decision };
	if (!it->rel)
		return NULL;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(it->reason, sizeof(it->reason), fmt, ap);
		va_end(ap);
	}
	x->count++;
	return it;
}

static void undeclared(struct exporter *x)
{
	if (x->undeclared++ < ARTIFACT_UNDECLARED_LISTED)
		add(x, "refused", "not declared in artifacts.allow");
}

/* A declared regular file, opened: copied into the staging directory as it is hashed. */
static void take_file(struct exporter *x, int fd, const struct stat *st)
{
	static char block[1 << 16];
	const bool scanning = x->run->policy->flags & TP_POLICY_ARTIFACTS_SCAN;
	bool too_big = false, kept = false;
	char name[24], why[160];
	struct item *it = NULL;
	EVP_MD_CTX *ctx = NULL;
	uint64_t size = 0;
	uint8_t d[32];
	int out;

	if (x->total + (uint64_t)st->st_size > ARTIFACT_MAX_BYTES) {
		add(x, "refused", "over the export cap (%llu bytes for all artifacts together)",
		    (unsigned long long)ARTIFACT_MAX_BYTES);
		return;
	}
	snprintf(name, sizeof(name), "%zu", x->staged);
	out = openat(x->stage, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out >= 0)
		ctx = EVP_MD_CTX_new();
	if (out < 0 || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		add(x, "failed", "staging the copy: %s", strerror(out < 0 ? errno : ENOMEM));
		x->failed = true;
		goto done;
	}
	x->buf_len = 0;
	for (;;) {
		ssize_t n = read(fd, block, sizeof(block));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			add(x, "failed", "reading it: %s", strerror(errno));
			x->failed = true;
			goto done;
		}
		if (n == 0)
			break;
		size += (uint64_t)n;
		if (size > ARTIFACT_MAX_BYTES - x->total) {
			add(x, "refused", "over the export cap (it grew while it was read)");
			goto done;
		}
		if (!EVP_DigestUpdate(ctx, block, (size_t)n) || write_all(out, block, (size_t)n)) {
			add(x, "failed", "copying it: %s", strerror(errno ? errno : EIO));
			x->failed = true;
			goto done;
		}
		if (scanning && !too_big && (size_t)n <= ARTIFACT_SCAN_MAX - x->buf_len) {
			memcpy(x->buf + x->buf_len, block, (size_t)n);
			x->buf_len += (size_t)n;
		} else {
			too_big = true;
		}
	}
	if (!EVP_DigestFinal_ex(ctx, d, NULL) || !(it = add(x, "exported", NULL))) {
		x->failed = true;
		goto done;
	}
	it->size = size;
	tp_digest_text(d, it->sha);
	x->total += size;
	it->staged = it->copied = kept = true;
	x->staged++;
	if (scanning) {
		const char *found = too_big ? "too large to scan (over 16 MiB)"
					    : scan(it->rel, x->buf, x->buf_len, why, sizeof(why));

		if (found) {
			it->decision = "quarantined";
			it->quarantine = true;
			snprintf(it->reason, sizeof(it->reason), "%s", found);
		}
	}
done:
	EVP_MD_CTX_free(ctx);
	if (out >= 0) {
		close(out);
		if (!kept)
			unlinkat(x->stage, name, 0);
	}
}

/* Only an exact pattern names the directory rel: it exports nothing of what it holds. */
static bool dir_named_exactly(const struct tp_policy *pol, const char *rel)
{
	bool exact = false;

	for (size_t i = 0; i < pol->artifact_count; i++) {
		if (!pattern_covers(pol->artifacts[i], rel))
			continue;
		if (strcmp(pol->artifacts[i], rel) != 0)
			return false;	/* a subtree pattern at or above it: what it holds is declared */
		exact = true;
	}
	return exact;
}

static void walk(struct exporter *x, int dir, int depth);

static void entry(struct exporter *x, int dir, const char *name, int depth)
{
	const struct tp_policy *pol = x->run->policy;
	bool want = declared(pol, x->rel);
	struct stat st;
	int fd;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (want)
			add(x, "failed", "%s", strerror(errno));
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (dir_named_exactly(pol, x->rel))
			add(x, "refused", "a directory: declare '%s/**' to export what it holds",
			    x->rel);
		if (depth >= ARTIFACT_DEPTH_MAX) {
			add(x, want ? "failed" : "refused", "more than %d directories deep",
			    ARTIFACT_DEPTH_MAX);
			return;
		}
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			walk(x, fd, depth + 1);
			close(fd);
		}
		return;
	}
	if (!want) {
		undeclared(x);
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		add(x, "refused", "a symbolic link");
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		add(x, "refused", "%s", S_ISFIFO(st.st_mode) ? "a FIFO" :
		    S_ISSOCK(st.st_mode) ? "a socket" : "a device node");
		return;
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		add(x, "refused", "%s", st.st_mode & S_ISUID ? "setuid" : "setgid");
		return;
	}
	if (st.st_nlink > 1) {
		add(x, "refused", "a hard link (%llu names): the others may be outside the "
		    "workspace", (unsigned long long)st.st_nlink);
		return;
	}
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	/* what was opened decides: the same file, still regular, one name */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
		add(x, "failed", "it changed while it was read");
		x->failed = true;
	} else {
		take_file(x, fd, &st);
	}
	if (fd >= 0)
		close(fd);
}

static void walk(struct exporter *x, int dir, int depth)
{
	size_t len = strlen(x->rel), count = 0;
	char **names = NULL;
	int r = dir_names_sorted(dir, &names, &count);

	if (r) {
		add(x, "failed", "listing it: %s", strerror(-r));
		x->failed = true;
		return;
	}
	for (size_t i = 0; i < count; i++) {
		if (snprintf(x->rel + len, sizeof(x->rel) - len, "%s%s", len ? "/" : "", names[i]) <
		    (int)(sizeof(x->rel) - len))
			entry(x, dir, names[i], depth);
		x->rel[len] = 0;
	}
	dir_names_free(names, count);
}

/* ---- publishing ----------------------------------------------------------- */

/* The directory for rel's parent below root (made as needed, no link followed). */
static int parent_of(int root, const char *rel, const char **base)
{
	char path[PATH_MAX], *p, *slash;
	int fd = dup(root);

	snprintf(path, sizeof(path), "%s", rel);
	for (p = path; fd >= 0 && (slash = strchr(p, '/')); p = slash + 1) {
		int next;

		*slash = 0;
		if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	*base = rel + (p - path);
	return fd;
}

static int open_quarantine(const char *dir)
{
	char q[PATH_MAX];

	if (snprintf(q, sizeof(q), "%s" QUARANTINE_SUFFIX, dir) >= (int)sizeof(q))
		return -1;
	if (mkdir(q, 0700) < 0 && errno != EEXIST)
		return -1;
	return open(q, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Every decision into the audit stream, then each kept file renamed from the
 * staging directory into DIR or DIR.quarantine (never over an existing file).
 */
static void publish(struct exporter *x, int out, int quarantine)
{
	size_t staged = 0;

	for (size_t i = 0; i < x->count; i++) {
		struct item *it = &x->items[i];

		if (it->staged) {
			int dst = it->quarantine ? quarantine : out, pfd = -1;
			const char *base;

			if (dst < 0 || (pfd = parent_of(dst, it->rel, &base)) < 0 ||
			    faccessat(pfd, base, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
				int e = dst < 0 || pfd < 0 ? errno : EEXIST;

				it->decision = "failed";
				snprintf(it->reason, sizeof(it->reason), "%s %s: %s",
					 it->quarantine ? "quarantining" : "exporting", it->rel,
					 e == EEXIST ? "it exists there already" : strerror(e));
				it->staged = false;
				it->sha[0] = 0;	/* nothing of it left */
				it->size = 0;
				x->failed = true;
			}
			if (pfd >= 0)
				close(pfd);
		}
		run_record_artifact(x->run, &(struct record_run_artifact){
			.path = it->rel,
			.decision = it->decision,
			.reason = it->reason[0] ? it->reason : NULL,
			.size = it->size,
			.sha256 = it->sha[0] ? it->sha : NULL,
		});
	}
	for (size_t i = 0; i < x->count; i++) {
		struct item *it = &x->items[i];
		char name[24];
		const char *base;
		int pfd;

		if (!it->copied)
			continue;
		snprintf(name, sizeof(name), "%zu", staged++);
		if (!it->staged) {
			unlinkat(x->stage, name, 0);
			continue;
		}
		pfd = parent_of(it->quarantine ? quarantine : out, it->rel, &base);
		if (pfd < 0 || fchmodat(x->stage, name, 0644, 0) < 0 ||
		    renameat2(x->stage, name, pfd, base, RENAME_NOREPLACE) < 0) {
			run_log(x->run, "publishing artifact %s of run %s: %s", it->rel,
				x->run->run_id, strerror(errno));
			unlinkat(x->stage, name, 0);
			x->failed = true;
		}
		if (pfd >= 0)
			close(pfd);
	}
}

int run_artifacts_check(struct run *run, struct run_error *err)
{
	const char *dir = run->cfg.artifacts_dir;
	char real[PATH_MAX];
	int r;

	if (!dir || !run->policy->artifact_count)
		return 0;
	if (dir[0] != '/')
		return run_fail(err, RUN_ERROR_USAGE, RUN_STEP_WORKSPACE, EINVAL,
				"--artifacts %s: give an absolute path", dir);
	/* the run must not be able to plant anything there (checked before it is made) */
	for (size_t i = 0; i < run->rule_count; i++) {
		const char *p = run->rules[i].path;
		size_t n = strlen(p);

		if ((run->rules[i].access & TETHER_ACCESS_WRITE) && strncmp(dir, p, n) == 0 &&
		    (dir[n] == '/' || dir[n] == 0 || n == 1))
			return run_fail(err, RUN_ERROR_INVALID, RUN_STEP_WORKSPACE, EPERM,
					"--artifacts %s is in %s, which the run may write: name a "
					"directory outside it", dir, p);
	}
	r = mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
	r = r ?: run_check_root_dir(dir);
	if (!r && (!realpath(dir, real) || strcmp(real, dir) != 0))
		r = -ELOOP;
	if (r)
		return run_fail(err, RUN_ERROR_SETUP, RUN_STEP_WORKSPACE, -r,
				"--artifacts %s must be a directory of root's that only root may "
				"write, reached through no symbolic link: %s", dir,
				r == -ELOOP ? "its path is not its real path" : strerror(-r));
	return 0;
}

void run_artifacts_export(struct run *run)
{
	const struct tp_policy *pol = run->policy;
	struct exporter x = { .run = run, .stage = -1 };
	char stage[96];
	int src, out = -1, quarantine = -1;

	if (!run->cfg.artifacts_dir || !pol->artifact_count)
		return;
	src = run->fs_workspace && run->fs_fd >= 0
		      ? openat(run->fs_fd, "ws", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		      : open(pol->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	out = open(run->cfg.artifacts_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	snprintf(stage, sizeof(stage), ".tether-staging-%s", run->run_id);
	if (out >= 0 && (mkdirat(out, stage, 0700) == 0 || errno == EEXIST))
		x.stage = openat(out, stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	x.buf = (pol->flags & TP_POLICY_ARTIFACTS_SCAN) ? malloc(ARTIFACT_SCAN_MAX) : NULL;
	if (src < 0 || x.stage < 0 || ((pol->flags & TP_POLICY_ARTIFACTS_SCAN) && !x.buf)) {
		snprintf(x.rel, sizeof(x.rel), ".");
		add(&x, "failed", "%s: %s", src < 0 ? "opening the workspace" :
		    "opening the export directory", strerror(errno));
		x.failed = true;
	} else {
		walk(&x, src, 0);
		/* an exact path that was never seen */
		for (size_t i = 0; i < pol->artifact_count; i++) {
			const char *p = pol->artifacts[i];
			bool seen = false;

			for (size_t j = 0; j < x.count && !seen; j++)
				seen = pattern_covers(p, x.items[j].rel);
			if (!seen && !strstr(p, "**")) {
				snprintf(x.rel, sizeof(x.rel), "%s", p);
				add(&x, "missing", "declared, but the workspace has no such file");
			}
		}
		if (x.undeclared > ARTIFACT_UNDECLARED_LISTED) {
			snprintf(x.rel, sizeof(x.rel), ".");
			add(&x, "refused", "not declared: %zu more undeclared entries, not listed",
			    x.undeclared - ARTIFACT_UNDECLARED_LISTED);
		}
		for (size_t i = 0; i < x.count && quarantine < 0; i++)
			if (x.items[i].quarantine)
				quarantine = open_quarantine(run->cfg.artifacts_dir);
	}
	publish(&x, out, quarantine);
	if (x.stage >= 0) {
		close(x.stage);
		unlinkat(out, stage, AT_REMOVEDIR);
	}
	if (x.failed && run->reason == RUN_REASON_SUCCEEDED) {
		run->reason = RUN_REASON_FAILED;
		run_log(run, "run %s: an artifact could not be exported (its record says why)",
			run->run_id);
	}
	for (size_t i = 0; i < x.count; i++)
		free(x.items[i].rel);
	free(x.items);
	free(x.buf);
	if (src >= 0)
		close(src);
	if (out >= 0)
		close(out);
	if (quarantine >= 0)
		close(quarantine);
}
