// SPDX-License-Identifier: GPL-2.0
/*
 * The envelope schema: yt_node tree -> struct tp_envelope.
 *
 * Each mapping of the schema is a table of keys.  A key is either enforced
 * (checked by its function, maybe required) or "not yet": part of the full
 * envelope but not enforced by this version.  A not-yet key is an error, never
 * skipped: an envelope that asks for a network or resource limit we cannot
 * apply must not run as if it had been granted.  Adding a key means adding a
 * table row and a check function.
 *
 * Every check keeps going after a problem, so one pass reports every error of
 * a file; tp_envelope_parse() then sorts them into file order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "policyc/policyc_internal.h"
#include "policyc/yaml_tree_internal.h"

/* Longest rule path: the key stores it followed by '/' (bpf/abi/rules.h). */
#define PATH_RULE_MAX_BYTES (TETHER_PATH_KEY_MAX - 1)

struct schema_ctx {
	const char *name;
	struct tp_diags *diags;
	struct tp_envelope *env;	/* filled as values pass their checks */
};

struct schema_key;

/* Checks one key's value; returns 0 or -ENOMEM (problems go to diagnostics). */
typedef int (*schema_check_fn)(struct schema_ctx *ctx, const struct schema_key *key,
			       const struct yt_pair *pair);

struct schema_key {
	const char *name;
	schema_check_fn check;	/* NULL: in the full envelope, not enforced by this version */
	bool required;
};

__attribute__((format(printf, 3, 4)))
static int report(struct schema_ctx *ctx, const struct yt_node *at, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tp_diags_addv(ctx->diags, ctx->name, at->line, at->column, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * Checks a mapping against its table: every key known, enforced keys checked
 * in file order, required keys present.  `where` names the mapping in
 * messages ("sandbox.filesystem"; NULL for the top level); `owner` is the key
 * that holds it, where a missing key is reported (the mapping itself at the
 * top level).
 */
static int check_mapping(struct schema_ctx *ctx, const char *where,
			 const struct yt_node *owner, const struct yt_node *map,
			 const struct schema_key *keys, size_t key_count)
{
	char excerpt[TP_EXCERPT_MAX];
	char expected[256] = "";
	size_t expected_len = 0;
	int r;

	for (size_t i = 0; i < key_count; i++) {
		if (!keys[i].check)
			continue;
		expected_len += (size_t)snprintf(expected + expected_len,
						 sizeof(expected) - expected_len, "%s%s",
						 expected_len ? ", " : "", keys[i].name);
		if (expected_len >= sizeof(expected))
			expected_len = sizeof(expected) - 1;
	}

	for (size_t i = 0; i < map->mapping.count; i++) {
		const struct yt_pair *pair = &map->mapping.pairs[i];
		const struct schema_key *key = NULL;

		for (size_t k = 0; k < key_count && !key; k++)
			if (yt_scalar_equals(pair->key, keys[k].name))
				key = &keys[k];

		if (!key) {
			tp_excerpt(excerpt, pair->key->scalar.text, pair->key->scalar.len);
			if (where)
				r = report(ctx, pair->key, "unknown key '%s' in '%s' (expected one of: %s)",
					   excerpt, where, expected);
			else
				r = report(ctx, pair->key,
					   "unknown key '%s' at the top level (expected one of: %s)",
					   excerpt, expected);
		} else if (!key->check) {
			r = report(ctx, pair->key,
				   "'%s' is not supported by this version of tether; "
				   "it is refused rather than ignored", key->name);
		} else {
			r = key->check(ctx, key, pair);
		}
		if (r < 0)
			return r;
	}

	for (size_t k = 0; k < key_count; k++) {
		if (!keys[k].required || yt_mapping_find(map, keys[k].name))
			continue;
		if (where)
			r = report(ctx, owner, "missing required key '%s' in '%s'", keys[k].name, where);
		else
			r = report(ctx, owner, "missing required key '%s' at the top level",
				   keys[k].name);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Returns 1 when `value` is of kind `kind`; otherwise reports it and returns 0
 * (or -ENOMEM).
 */
static int expect_kind(struct schema_ctx *ctx, const struct schema_key *key,
		       const struct yt_node *value, enum yt_kind kind)
{
	static const char *const kind_names[] = {
		[YT_SCALAR] = "a scalar",
		[YT_MAPPING] = "a mapping",
		[YT_SEQUENCE] = "a sequence",
	};
	int r;

	/* An empty value ("key:" with nothing after it) is a null scalar: it passes here. */
	if (value->kind == kind)
		return 1;
	r = report(ctx, value, "'%s' must be %s, got %s", key->name, kind_names[kind],
		   yt_node_describe(value));
	return r < 0 ? r : 0;
}

static int check_root(struct schema_ctx *ctx, const struct schema_key *key,
		      const struct yt_pair *pair)
{
	const struct yt_node *value = pair->value;
	char excerpt[TP_EXCERPT_MAX];
	int r;

	r = expect_kind(ctx, key, value, YT_SCALAR);
	if (r <= 0)
		return r;
	if (yt_scalar_equals(value, "read_only")) {
		ctx->env->root = TP_ROOT_READ_ONLY;
		return 0;
	}
	if (value->scalar.is_null)
		return report(ctx, value,
			      "'root' must be 'read_only' (the only mode this version enforces), "
			      "got an empty value");
	return report(ctx, value,
		      "'root' must be 'read_only' (the only mode this version enforces), got '%s'",
		      tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
}

static const char *const kernel_trees[] = { "/proc", "/sys", "/dev" };

static int check_workspace_path(struct schema_ctx *ctx, const struct schema_key *key,
				const struct yt_pair *pair)
{
	const struct yt_node *value = pair->value;
	_cleanup_free_ char *normalized = NULL;
	char excerpt[TP_EXCERPT_MAX];
	size_t len;
	int r;

	r = expect_kind(ctx, key, value, YT_SCALAR);
	if (r <= 0)
		return r;
	if (value->scalar.is_null)
		return report(ctx, value, "'path' must be an absolute path, got an empty value");
	/* A "\0" escape: C strings would silently cut the path there. */
	if (memchr(value->scalar.text, '\0', value->scalar.len))
		return report(ctx, value, "'path' contains a NUL byte");
	if (value->scalar.text[0] != '/')
		return report(ctx, value, "'path' must be an absolute path (starting with '/'), got '%s'",
			      tp_excerpt(excerpt, value->scalar.text, value->scalar.len));

	normalized = tp_path_normalize(value->scalar.text);
	if (!normalized)
		return -errno;
	len = strlen(normalized);
	if (len > PATH_RULE_MAX_BYTES)
		return report(ctx, value,
			      "'path' is %zu bytes long after normalisation, over the limit of %d: "
			      "the kernel's path rule key holds at most %d bytes",
			      len, PATH_RULE_MAX_BYTES, PATH_RULE_MAX_BYTES);
	/* The workspace is writable: at "/" nothing would be read-only any more. */
	if (strcmp(normalized, "/") == 0)
		return report(ctx, value,
			      "the workspace must not be '/': that would make the whole file "
			      "system writable");

	/*
	 * Beneath these, a "file" is a kernel interface (sysctl, sysrq, device
	 * nodes, cgroup control files): making them writable is not a workspace.
	 */
	for (size_t i = 0; i < sizeof(kernel_trees) / sizeof(kernel_trees[0]); i++) {
		size_t n = strlen(kernel_trees[i]);

		if (strncmp(normalized, kernel_trees[i], n) == 0 &&
		    (normalized[n] == '/' || normalized[n] == 0))
			return report(ctx, value,
				      "the workspace must not be in %s: files there are kernel "
				      "interfaces, not storage",
				      kernel_trees[i]);
	}

	ctx->env->workspace_path = TAKE_PTR(normalized);
	return 0;
}

static const struct schema_key workspace_keys[] = {
	{ "path", check_workspace_path, true },
	{ "mode", NULL, false },
	{ "max_bytes", NULL, false },
};

static int check_workspace(struct schema_ctx *ctx, const struct schema_key *key,
			   const struct yt_pair *pair)
{
	int r = expect_kind(ctx, key, pair->value, YT_MAPPING);

	if (r <= 0)
		return r;
	return check_mapping(ctx, "sandbox.filesystem.workspace", pair->key, pair->value,
			     workspace_keys, sizeof(workspace_keys) / sizeof(*workspace_keys));
}

static const struct schema_key filesystem_keys[] = {
	{ "root", check_root, true },
	{ "workspace", check_workspace, true },
	{ "inputs", NULL, false },
	{ "devices", NULL, false },
};

static int check_filesystem(struct schema_ctx *ctx, const struct schema_key *key,
			    const struct yt_pair *pair)
{
	int r = expect_kind(ctx, key, pair->value, YT_MAPPING);

	if (r <= 0)
		return r;
	return check_mapping(ctx, "sandbox.filesystem", pair->key, pair->value,
			     filesystem_keys, sizeof(filesystem_keys) / sizeof(*filesystem_keys));
}

static const struct schema_key sandbox_keys[] = {
	{ "filesystem", check_filesystem, true },
	{ "image_digest", NULL, false },
	{ "runtime_revision", NULL, false },
	{ "identity", NULL, false },
	{ "network_egress", NULL, false },
	{ "resources", NULL, false },
	{ "workspace_lifetime", NULL, false },
	{ "artifacts", NULL, false },
	{ "cleanup", NULL, false },
};

static int check_sandbox(struct schema_ctx *ctx, const struct schema_key *key,
			 const struct yt_pair *pair)
{
	int r = expect_kind(ctx, key, pair->value, YT_MAPPING);

	if (r <= 0)
		return r;
	return check_mapping(ctx, "sandbox", pair->key, pair->value,
			     sandbox_keys, sizeof(sandbox_keys) / sizeof(*sandbox_keys));
}

static const struct schema_key top_keys[] = {
	{ "sandbox", check_sandbox, true },
};

/* `root` is NULL for a stream without a document. */
static int check_envelope(struct schema_ctx *ctx, const struct yt_node *root)
{
	static const char empty[] = "empty envelope: expected a mapping with key 'sandbox'";

	if (!root)
		return tp_diags_add(ctx->diags, ctx->name, 1, 1, "%s", empty);
	if (root->kind == YT_SCALAR && root->scalar.is_null)
		return report(ctx, root, "%s", empty);
	if (root->kind != YT_MAPPING)
		return report(ctx, root, "the envelope must be a mapping with key 'sandbox', got %s",
			      yt_node_describe(root));
	return check_mapping(ctx, NULL, root, root, top_keys, sizeof(top_keys) / sizeof(*top_keys));
}

void tp_envelope_free(struct tp_envelope *env)
{
	if (!env)
		return;
	free(env->workspace_path);
	free(env);
}

static void tp_envelope_freep(struct tp_envelope **env)
{
	tp_envelope_free(*env);
}

static void yt_node_freep(struct yt_node **node)
{
	yt_node_free(*node);
}

static void tp_diags_freep(struct tp_diags *diags)
{
	tp_diags_free(diags);
}

static int parse_into(const char *name, const char *data, size_t len,
		      struct tp_envelope **out, struct tp_diags *diags)
{
	_cleanup_(tp_envelope_freep) struct tp_envelope *env = NULL;
	_cleanup_(yt_node_freep) struct yt_node *root = NULL;
	struct schema_ctx ctx;
	size_t first = diags->count;
	const char *nul;
	int r;

	if (len > TP_ENVELOPE_MAX_BYTES) {
		r = tp_diags_add(diags, name, 0, 0,
				 "the envelope is %zu bytes, over the limit of %u bytes",
				 len, TP_ENVELOPE_MAX_BYTES);
		return r < 0 ? r : -EFBIG;
	}
	/* libyaml takes NUL for the end of input in places; YAML text never holds one. */
	nul = memchr(data, '\0', len);
	if (nul) {
		unsigned int line, column;

		tp_text_position(data, (size_t)(nul - data), &line, &column);
		r = tp_diags_add(diags, name, line, column,
				 "NUL byte in the envelope: YAML text cannot contain one");
		return r < 0 ? r : -EINVAL;
	}

	r = yt_parse(name, data, len, &root, diags);
	if (r < 0)
		return r;

	env = calloc(1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	ctx = (struct schema_ctx){ .name = name, .diags = diags, .env = env };
	r = check_envelope(&ctx, root);
	if (r < 0)
		return r;
	if (diags->count > first)
		return -EINVAL;

	*out = TAKE_PTR(env);
	return 0;
}

int tp_envelope_parse(const char *name, const char *data, size_t len,
		      struct tp_envelope **out, struct tp_diags *diags)
{
	/* Without a caller's list we still need one to know whether anything failed. */
	_cleanup_(tp_diags_freep) struct tp_diags scratch = { 0 };
	struct tp_diags *list = diags ? diags : &scratch;
	size_t first = list->count;
	int r, s;

	if ((!data && len) || !out)
		return -EINVAL;
	if (!name)
		name = "<input>";

	r = parse_into(name, data ? data : "", len, out, list);
	s = tp_diags_sort_from(list, first);
	return r < 0 ? r : s;
}

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

int tp_envelope_parse_file(const char *path, struct tp_envelope **out,
			   struct tp_diags *diags)
{
	_cleanup_(tp_diags_freep) struct tp_diags scratch = { 0 };
	struct tp_diags *list = diags ? diags : &scratch;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *data = NULL;
	size_t len = 0, capacity;
	struct stat st;
	int error;

	if (!path || !out)
		return -EINVAL;

	/*
	 * O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer; with it the open returns and the type check below refuses it.
	 * It has no effect on regular files.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		error = errno;
		return file_error(list, path, -error, "cannot open: %s", strerror(error));
	}
	if (fstat(fd, &st) < 0) {
		error = errno;
		return file_error(list, path, -error, "cannot stat: %s", strerror(error));
	}
	if (S_ISDIR(st.st_mode))
		return file_error(list, path, -EISDIR, "cannot read: %s", strerror(EISDIR));
	if (!S_ISREG(st.st_mode))
		return file_error(list, path, -EINVAL, "not a regular file");
	if (st.st_size > (off_t)TP_ENVELOPE_MAX_BYTES)
		return file_error(list, path, -EFBIG,
				  "the file is %jd bytes, over the limit of %u bytes",
				  (intmax_t)st.st_size, TP_ENVELOPE_MAX_BYTES);

	/*
	 * st_size is a hint, not a bound: the file may grow while we read, and
	 * some files report 0.  Read until EOF, never past the limit plus one
	 * byte (which is enough to know the limit was exceeded).
	 */
	capacity = (size_t)st.st_size + 1;
	data = malloc(capacity);
	if (!data)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == capacity) {
			size_t grown = capacity * 2;
			char *p;

			if (capacity > TP_ENVELOPE_MAX_BYTES)
				break;
			if (grown > (size_t)TP_ENVELOPE_MAX_BYTES + 1)
				grown = (size_t)TP_ENVELOPE_MAX_BYTES + 1;
			p = realloc(data, grown);
			if (!p)
				return -ENOMEM;
			data = p;
			capacity = grown;
		}
		n = read(fd, data + len, capacity - len);
		if (n < 0) {
			error = errno;
			if (error == EINTR)
				continue;
			return file_error(list, path, -error, "cannot read: %s", strerror(error));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > TP_ENVELOPE_MAX_BYTES)
		return file_error(list, path, -EFBIG, "the file is over the limit of %u bytes",
				  TP_ENVELOPE_MAX_BYTES);

	return tp_envelope_parse(path, data, len, out, list);
}
