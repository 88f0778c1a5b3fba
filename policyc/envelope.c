// SPDX-License-Identifier: GPL-2.0
/*
 * The envelope schema (docs/envelope.md): yt_node tree -> struct tp_envelope.
 *
 * Each mapping of the schema is a table of keys, each with the function that
 * checks its value.  Every check keeps going after a problem, so one pass
 * reports every error of a file; tp_envelope_parse() then sorts them into
 * file order.  After the keys, the checks that need the whole envelope run in
 * the same pass: paths resolved against the workspace (length, conflicts),
 * and gaps (fields this version does not enforce) against
 * acknowledge_unenforced.  A parsed envelope therefore always compiles.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policyc/fields.h"
#include "policyc/policyc_internal.h"
#include "policyc/schema_internal.h"
#include "policyc/values.h"
#include "policyc/yaml_tree_internal.h"

/* Longest rule path: the kernel key stores it followed by '/' (bpf/abi/rules.h). */
#define PATH_RULE_MAX_BYTES (TETHER_PATH_KEY_MAX - 1)

struct envelope_ctx {
	struct tp_schema schema;
	struct tp_envelope *env;	/* filled as values pass their checks */
	bool exec_written;		/* sandbox.filesystem.exec given */
	struct tp_pos workspace_pos;	/* the 'workspace' key */
	struct tp_pos workspace_mode_pos, workspace_source_pos, workspace_ref_pos, lifetime_pos;	/* line 0: not written */
	size_t first_diag;		/* diags->count before this envelope */
	struct tp_pos audit_sink_pos;
	const char *dup_list;		/* the list a duplicate check is on, for messages */
	struct tp_pos *artifact_pos;	/* positions of artifacts.allow entries, like env->artifacts */
	struct tp_pos *env_name_pos;	/* positions of environment entries, like env->env_names */
	const struct tp_run_binding *bind;	/* NULL: the envelope as written */
};

static struct envelope_ctx *ctx_of(struct tp_schema *schema)
{
	return TP_SCHEMA_CONTAINER(schema, struct envelope_ctx);
}

static int add_gap(struct tp_envelope *env, const char *field, struct tp_pos pos)
{
	const struct tp_field_info *info = tp_field_find(field);
	struct tp_gap *gaps;

	if (!info || !info->restricts)
		return -EINVAL;	/* a bug: every gap has a restricting row */
	for (size_t i = 0; i < env->gap_count; i++)
		if (strcmp(env->gaps[i].field, field) == 0)
			return 0;
	gaps = realloc(env->gaps, (env->gap_count + 1) * sizeof(*gaps));
	if (!gaps)
		return -ENOMEM;
	env->gaps = gaps;
	gaps[env->gap_count++] = (struct tp_gap){ info->field, info->mechanism, pos };
	return 0;
}

/* A path or other user text for a message: escaped and cut (tp_excerpt). */
static const char *esc(char buf[TP_EXCERPT_MAX], const char *text)
{
	return tp_excerpt(buf, text, strlen(text));
}

/* ---- scalars ----------------------------------------------------------- */

static bool is_identifier(const char *text, size_t len)
{
	if (len == 0 || len > 64)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

/* Copies a scalar's text; returns 0 or -ENOMEM. */
static int dup_text(const struct yt_node *value, char **out)
{
	char *copy = strndup(value->scalar.text, value->scalar.len);

	if (!copy)
		return -ENOMEM;
	free(*out);
	*out = copy;
	return 0;
}

static int check_identifier(struct tp_schema *schema, const struct tp_schema_key *key,
			    const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	char excerpt[TP_EXCERPT_MAX];
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (!is_identifier(value->scalar.text, value->scalar.len))
		return tp_schema_report(schema, value,
					"invalid '%s': '%s' must be 1 to 64 letters, digits, '.', "
					"'_' or '-', starting with a letter or digit", key->name,
					tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
	return dup_text(value, key->arg == 0 ? &ctx->env->tenant : &ctx->env->run_id);
}

static int check_revision(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (value->scalar.len == 0 || value->scalar.len > 128)
		return tp_schema_invalid(schema, key, value, "1 to 128 characters");
	if (value->scalar.text[0] == '<' && value->scalar.text[value->scalar.len - 1] == '>')
		return tp_schema_invalid(schema, key, value,
					 "this is a placeholder: write the actual revision");
	for (size_t i = 0; i < value->scalar.len; i++) {
		unsigned char c = (unsigned char)value->scalar.text[i];

		if (c < 0x20 || c > 0x7e)
			return tp_schema_invalid(schema, key, value,
						 "only printable ASCII characters are allowed");
	}
	return dup_text(value, &ctx->env->runtime_revision);
}

static int check_bool(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_node *value, bool *out)
{
	char why[TP_WHY_MAX];
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (tp_parse_bool(value->scalar.text, value->scalar.len, out, why, sizeof(why)))
		return tp_schema_invalid(schema, key, value, why);
	return 0;
}

static int check_digest(struct tp_schema *schema, const struct tp_schema_key *key,
			const struct yt_node *value, uint8_t digest[32], bool *has)
{
	char why[TP_WHY_MAX];
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (tp_parse_digest(value->scalar.text, value->scalar.len, digest, why, sizeof(why)))
		return tp_schema_invalid(schema, key, value, why);
	*has = true;
	return 0;
}

/* ---- limits ------------------------------------------------------------ */

static int check_limit(struct tp_schema *schema, const struct tp_schema_key *key,
		       const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct tp_limit_info *limit = &tp_limits[key->arg];
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t v = 0;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	switch (limit->unit) {
	case TP_UNIT_BYTES:
		r = tp_parse_size(value->scalar.text, value->scalar.len, limit->min, limit->max, &v,
				  why, sizeof(why));
		break;
	case TP_UNIT_MS:
		r = tp_parse_duration(value->scalar.text, value->scalar.len, limit->min, limit->max,
				      &v, why, sizeof(why));
		break;
	case TP_UNIT_MILLI_CPU:
		r = tp_parse_cpu(value->scalar.text, value->scalar.len, limit->min, limit->max, &v,
				 why, sizeof(why));
		break;
	case TP_UNIT_COUNT:
		r = tp_parse_uint(value->scalar.text, value->scalar.len, limit->min, limit->max, &v,
				  why, sizeof(why));
		break;
	}
	if (r)
		return tp_schema_invalid(schema, key, value, why);
	ctx->env->limits[key->arg] = v;
	ctx->env->limit_pos[key->arg] = tp_node_pos(pair->key);
	if (limit->row.status == TP_ENFORCED)
		return 0;
	return add_gap(ctx->env, limit->row.field, tp_node_pos(pair->key));
}

/* ---- paths ------------------------------------------------------------- */

#define path_within tp_path_within

/*
 * Parses an absolute path value (workspace.path, workspace.source, an
 * input's path, audit.sink): normalised, not too long.  Returns 1 with *out
 * set, 0 when reported, or -ENOMEM.
 */
static int parse_absolute(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_node *value, char **out)
{
	_cleanup_free_ char *normalized = NULL;
	char excerpt[TP_EXCERPT_MAX];
	size_t len;
	int r;

	if (value->kind == YT_SCALAR && value->scalar.is_null) {
		r = tp_schema_report(schema, value,
				     "'%s' must be an absolute path, got an empty value",
				     key->name);
		return r < 0 ? r : 0;
	}
	r = tp_schema_expect_text(schema, key, value);
	if (r <= 0)
		return r;
	if (value->scalar.text[0] != '/') {
		r = tp_schema_report(schema, value,
				     "'%s' must be an absolute path (starting with '/'), got '%s'",
				     key->name,
				     tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
		return r < 0 ? r : 0;
	}
	normalized = tp_path_normalize(value->scalar.text);
	if (!normalized)
		return -errno;
	len = strlen(normalized);
	if (len > PATH_RULE_MAX_BYTES) {
		r = tp_schema_report(schema, value,
				     "'%s' is %zu bytes long after normalisation, over the limit "
				     "of %d: the kernel's path rule key holds at most %d bytes",
				     key->name, len, PATH_RULE_MAX_BYTES, PATH_RULE_MAX_BYTES);
		return r < 0 ? r : 0;
	}
	free(*out);
	*out = TAKE_PTR(normalized);
	return 1;
}

/*
 * One path pattern (tp_parse_path_pattern, shared with task contracts).
 * Returns 1 with *entry filled, 0 when reported, or -ENOMEM.
 */
static int parse_pattern(struct tp_schema *schema, const char *list, const struct yt_node *value,
			 enum tp_pattern_where where, struct tp_path_entry *entry)
{
	char why[TP_PATTERN_WHY_MAX];
	int r;

	if (value->kind != YT_SCALAR || value->scalar.is_null) {
		r = tp_schema_report(schema, value, "entries of '%s' must be paths, got %s", list,
				     yt_node_describe(value));
		return r < 0 ? r : 0;
	}
	r = tp_parse_path_pattern(value->scalar.text, value->scalar.len, where, entry, why,
				  sizeof(why));
	if (r == -EINVAL) {
		r = tp_schema_report(schema, value, "invalid entry in '%s': %s", list, why);
		return r < 0 ? r : 0;
	}
	if (r < 0)
		return r;
	entry->pos = tp_node_pos(value);
	return 1;
}

/*
 * The envelope's path lists, and (after them) the paths that take part in
 * the whole-envelope checks as subtrees without being a list.
 */
enum path_list {
	PL_READ,
	PL_WRITE,
	PL_EXEC,
	PL_DENY,
	PL_CONNECT,
	PL_WORKSPACE_WRITE,
	PL_LISTS,		/* the number of lists above */
	PL_WORKSPACE = PL_LISTS,
	PL_INPUTS,
	PL_ROOT,
	PL_COUNT,
};

static const char *const path_list_names[PL_COUNT] = {
	[PL_READ] = "filesystem.read",
	[PL_WRITE] = "filesystem.write",
	[PL_EXEC] = "filesystem.exec",
	[PL_DENY] = "filesystem.deny",
	[PL_CONNECT] = "filesystem.connect",
	[PL_WORKSPACE_WRITE] = "filesystem.workspace.write",
	[PL_WORKSPACE] = "filesystem.workspace.path",
	[PL_INPUTS] = "filesystem.inputs",
	[PL_ROOT] = "filesystem.root",
};

static struct tp_path_list *path_list_of(struct tp_envelope *env, enum path_list which)
{
	switch (which) {
	case PL_READ: return &env->read;
	case PL_WRITE: return &env->write;
	case PL_EXEC: return &env->exec;
	case PL_DENY: return &env->deny;
	case PL_CONNECT: return &env->connect;
	case PL_WORKSPACE_WRITE: return &env->workspace_write;
	default: abort();	/* not a list */
	}
}

/* Whether list `l` grants writing (a write grant is what the checks below guard). */
static bool grants_write(enum path_list l)
{
	return l == PL_WRITE || l == PL_WORKSPACE_WRITE;
}

static void path_list_clear(struct tp_path_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->items[i].path);
	free(list->items);
	*list = (struct tp_path_list){ 0 };
}

static int path_entry_compare(const void *a, const void *b)
{
	const struct tp_path_entry *x = a, *y = b;

	if (x->relative != y->relative)
		return x->relative ? 1 : -1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int path_entry_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct tp_path_entry *e = later, *f = first;

	char buf[TP_EXCERPT_MAX];

	return tp_schema_report_at(schema, e->pos,
				   "'%s%s%s' is listed twice in '%s' (first at line %u, column %u)",
				   esc(buf, e->path),
				   e->kind == TP_PATH_SUBTREE && e->path[0] ? "/" : "",
				   e->kind == TP_PATH_SUBTREE ? "**" : "", ctx->dup_list,
				   f->pos.line, f->pos.column);
}

/*
 * A keyword in filesystem.exec: @system, the system software trees (an exec
 * list replaces them unless it names them), or @tmp, the run's private /tmp
 * and /var/tmp, whose path differs per run.  A relative path starting with
 * '@' is written "./@name".
 */
static int check_exec_keyword(struct tp_schema *schema, const struct yt_node *item)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const char *text = item->scalar.text;
	size_t len = item->scalar.len;
	struct tp_pos *pos = NULL, prev;
	char buf[TP_EXCERPT_MAX], buf2[TP_EXCERPT_MAX];
	int r;

	if (len == 7 && memcmp(text, "@system", 7) == 0)
		pos = &ctx->env->exec_system;
	else if (len == 4 && memcmp(text, "@tmp", 4) == 0)
		pos = &ctx->env->exec_tmp;
	if (!pos) {
		r = tp_schema_report(schema, item,
				     "unknown keyword '%s' in 'filesystem.exec': the keywords are "
				     "@system (the system software trees) and @tmp (the run's private "
				     "/tmp); write a relative path starting with '@' as './%s'",
				     tp_excerpt(buf, text, len), tp_excerpt(buf2, text, len));
		return r < 0 ? r : 0;
	}
	prev = *pos;
	if (prev.line) {
		r = tp_schema_report(schema, item,
				     "'%s' is listed twice in 'filesystem.exec' (first at line %u, "
				     "column %u)", tp_excerpt(buf, text, len), prev.line, prev.column);
		return r < 0 ? r : 0;
	}
	*pos = tp_node_pos(item);
	return 0;
}

static int check_path_list(struct tp_schema *schema, const struct tp_schema_key *key,
			   const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	struct tp_path_list *list = path_list_of(ctx->env, key->arg);
	const char *name = path_list_names[key->arg];
	const struct yt_node *value = pair->value;
	enum tp_pattern_where where = TP_PATTERN_ANY;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (key->arg == PL_WORKSPACE_WRITE)
		where = TP_PATTERN_RELATIVE;
	path_list_clear(list);	/* workspace.write's default */
	list->items = calloc(value->sequence.count ? value->sequence.count : 1,
			     sizeof(*list->items));
	if (!list->items)
		return -ENOMEM;

	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_path_entry entry;

		if (key->arg == PL_EXEC && item->kind == YT_SCALAR && !item->scalar.is_null &&
		    item->scalar.len > 0 && item->scalar.text[0] == '@') {
			r = check_exec_keyword(schema, item);
			if (r < 0)
				return r;
			continue;
		}
		r = parse_pattern(schema, name, item, where, &entry);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (key->arg == PL_WRITE && entry.relative) {
			char buf[TP_EXCERPT_MAX];

			r = tp_schema_report(schema, item,
					     "'%s' in 'filesystem.write' is relative: write grants "
					     "inside the workspace go under "
					     "'filesystem.workspace.write'",
					     tp_excerpt(buf, item->scalar.text, item->scalar.len));
			free(entry.path);
			if (r < 0)
				return r;
			continue;
		}
		list->items[list->count++] = entry;
	}
	ctx->dup_list = name;
	r = tp_schema_find_duplicates(schema, list->items, list->count, sizeof(*list->items),
				      path_entry_compare, path_entry_duplicate, NULL);
	if (r < 0)
		return r;
	if (key->arg == PL_EXEC) {
		ctx->exec_written = true;
		ctx->env->exec_given = true;
	}
	return 0;
}

/* ---- sandbox.filesystem ------------------------------------------------ */

static int check_root(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_pair *pair)
{
	const struct yt_node *value = pair->value;
	char excerpt[TP_EXCERPT_MAX];

	if (value->kind != YT_SCALAR)
		return tp_schema_expect_kind(schema, key, value, YT_SCALAR) < 0 ? -ENOMEM : 0;
	if (yt_scalar_equals(value, "read_only"))
		return 0;
	if (value->scalar.is_null)
		return tp_schema_report(schema, value,
					"'root' must be 'read_only' (the only mode this version "
					"enforces), got an empty value");
	return tp_schema_report(schema, value,
				"'root' must be 'read_only' (the only mode this version enforces), "
				"got '%s'",
				tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
}

/*
 * The workspace path a run binding makes of the written one (a copy in
 * *out), or *out NULL when it changes nothing.  0 or -ENOMEM.
 */
static int bind_workspace(const struct tp_run_binding *bind, const struct yt_node *value,
			  char **out)
{
	const size_t ph = strlen(TP_RUN_ID_PLACEHOLDER);
	const char *text, *at;
	size_t n = 0, id_len;
	char *buf;

	*out = NULL;
	if (!bind || value->kind != YT_SCALAR || value->scalar.is_null)
		return 0;
	if (bind->workspace)
		return (*out = strdup(bind->workspace)) ? 0 : -ENOMEM;
	text = value->scalar.text;
	if (!bind->run_id || strlen(text) != value->scalar.len || !strstr(text, TP_RUN_ID_PLACEHOLDER))
		return 0;
	id_len = strlen(bind->run_id);
	for (at = text; (at = strstr(at, TP_RUN_ID_PLACEHOLDER)); at += ph)
		n++;
	buf = malloc(strlen(text) + n * id_len + 1);
	if (!buf)
		return -ENOMEM;
	*out = buf;
	while ((at = strstr(text, TP_RUN_ID_PLACEHOLDER))) {
		memcpy(buf, text, (size_t)(at - text));
		buf += at - text;
		memcpy(buf, bind->run_id, id_len);
		buf += id_len;
		text = at + ph;
	}
	strcpy(buf, text);
	return 0;
}

static int check_workspace_path(struct tp_schema *schema, const struct tp_schema_key *key,
				const struct yt_pair *pair)
{
	const char *tree;
	bool kernel = false;
	struct envelope_ctx *ctx = ctx_of(schema);
	_cleanup_free_ char *bound = NULL;
	struct yt_node value = *pair->value;
	struct tp_schema_key named = *key;
	const char *what = "the workspace";
	char *path = NULL;
	int r = bind_workspace(ctx->bind, pair->value, &bound);

	if (r < 0)
		return r;
	/* a bound path is checked in the written one's place, reported there by its origin */
	if (bound) {
		value.scalar.text = bound;
		value.scalar.len = strlen(bound);
		what = ctx->bind->workspace ? "the run's workspace" :
					      "the workspace with " TP_RUN_ID_PLACEHOLDER " filled in";
		named.name = ctx->bind->workspace ? "the run's workspace" :
						    "path (" TP_RUN_ID_PLACEHOLDER " filled in)";
	}
	r = parse_absolute(schema, &named, &value, &path);
	if (r <= 0)
		return r;
	/* The workspace is writable: at "/" nothing would be read-only any more. */
	if (strcmp(path, "/") == 0) {
		free(path);
		return tp_schema_report(schema, &value,
					"%s must not be '/': that would make the whole "
					"file system writable", what);
	}
	/*
	 * Beneath these, a "file" is a kernel interface (sysctl, sysrq, device
	 * nodes, cgroup control files) or the host's own software: making them
	 * writable is not a workspace.
	 */
	tree = tp_path_protected_tree(path, &kernel);
	if (tree) {
		free(path);
		return tp_schema_report(schema, &value,
					"%s must not be in %s: files there are %s, "
					"not storage", what, tree,
					kernel ? "kernel interfaces" : "the host's system software");
	}
	free(ctx->env->workspace_path);
	ctx->env->workspace_path = path;
	return 0;
}

static int check_workspace_source(struct tp_schema *schema, const struct tp_schema_key *key,
				  const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	int r = parse_absolute(schema, key, pair->value, &ctx->env->workspace_source);

	if (r > 0)
		ctx->workspace_source_pos = tp_node_pos(pair->key);
	return r < 0 ? r : 0;
}

static int check_workspace_mode(struct tp_schema *schema, const struct tp_schema_key *key,
				const struct yt_pair *pair)
{
	static const char *const modes[] = { "existing", "fresh", "fresh_overlay" };
	struct envelope_ctx *ctx = ctx_of(schema);
	int i = tp_schema_check_enum(schema, key, pair->value, modes, ARRAY_SIZE(modes));

	if (i < 0)
		return tp_schema_enum_status(i);
	ctx->env->workspace_mode = (enum tp_workspace_mode)i;
	ctx->workspace_mode_pos = tp_node_pos(pair->key);
	return 0;
}

/* ref: the commit a git source is laid out at; a name could move, so only an id */
static int check_workspace_ref(struct tp_schema *schema, const struct tp_schema_key *key,
			       const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	int r = tp_schema_expect_kind(schema, key, value, YT_SCALAR);
	size_t n;

	if (r <= 0)
		return r;
	n = value->scalar.len;
	if (value->scalar.is_null || (n != 40 && n != 64) ||
	    strspn(value->scalar.text, "0123456789abcdef") != n)
		return tp_schema_report(schema, value,
					"'ref' must be a full commit id, 40 (or, in a SHA-256 "
					"repository, 64) lower-case hexadecimal digits: a branch or "
					"tag name can move; resolve it with `git rev-parse "
					"NAME^{commit}`");
	free(ctx->env->workspace_ref);
	ctx->env->workspace_ref = strndup(value->scalar.text, n);
	if (!ctx->env->workspace_ref)
		return -ENOMEM;
	ctx->workspace_ref_pos = tp_node_pos(pair->key);
	return 0;
}

static const struct tp_schema_key workspace_keys[] = {
	TP_SCHEMA_KEY("path", check_workspace_path, true, 0),
	TP_SCHEMA_KEY("source", check_workspace_source, false, 0),
	TP_SCHEMA_KEY("ref", check_workspace_ref, false, 0),
	TP_SCHEMA_KEY("mode", check_workspace_mode, false, 0),
	TP_SCHEMA_KEY("max_bytes", check_limit, false, TP_LIMIT_WORKSPACE_BYTES),
	TP_SCHEMA_KEY("write", check_path_list, false, PL_WORKSPACE_WRITE),
};

static int check_workspace(struct tp_schema *schema, const struct tp_schema_key *key,
			   const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	int r;

	ctx->workspace_pos = tp_node_pos(pair->key);
	r = tp_schema_check_submapping(schema, key, pair);
	if (r < 0)
		return r;
	if (ctx->env->workspace_mode == TP_WORKSPACE_FRESH_OVERLAY && !ctx->env->workspace_source)
		return tp_schema_report(schema, pair->key,
					"a 'fresh_overlay' workspace needs a 'source'");
	if (ctx->env->workspace_ref && !ctx->env->workspace_source)
		return tp_schema_report_at(schema, ctx->workspace_ref_pos,
					   "'ref' is the commit of a git repository 'source': set "
					   "'source' to the repository");
	if (ctx->env->workspace_mode != TP_WORKSPACE_FRESH_OVERLAY && ctx->env->workspace_source)
		return tp_schema_report_at(schema, ctx->workspace_source_pos,
					   "'source' is the lower layer of a 'fresh_overlay' "
					   "workspace: set 'mode: fresh_overlay', or remove it (a "
					   "'%s' workspace would ignore it)",
					   ctx->env->workspace_mode == TP_WORKSPACE_FRESH ? "fresh"
											 : "existing");
	return 0;
}

/* One input: {path, digest, mode}. */
static int check_input_path(struct tp_schema *schema, const struct tp_schema_key *key,
			    const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	struct tp_input *input = &ctx->env->inputs[ctx->env->input_count];
	int r = parse_absolute(schema, key, pair->value, &input->path);

	if (r > 0)
		input->pos = tp_node_pos(pair->value);
	return r < 0 ? r : 0;
}

static int check_input_digest(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	struct tp_input *input = &ctx->env->inputs[ctx->env->input_count];

	return check_digest(schema, key, pair->value, input->digest, &input->has_digest);
}

static int check_input_mode(struct tp_schema *schema, const struct tp_schema_key *key,
			    const struct yt_pair *pair)
{
	static const char *const modes[] = { "read_only" };
	int i = tp_schema_check_enum(schema, key, pair->value, modes, ARRAY_SIZE(modes));

	return tp_schema_enum_status(i);
}

static const struct tp_schema_key input_keys[] = {
	TP_SCHEMA_KEY("path", check_input_path, true, 0),
	TP_SCHEMA_KEY("digest", check_input_digest, false, 0),
	TP_SCHEMA_KEY("mode", check_input_mode, false, 0),
};

static int input_compare(const void *a, const void *b)
{
	return strcmp(((const struct tp_input *)a)->path, ((const struct tp_input *)b)->path);
}

static int input_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct tp_input *i = later, *f = first;

	char buf[TP_EXCERPT_MAX];

	return tp_schema_report_at(schema, i->pos,
				   "input '%s' is listed twice (first at line %u, column %u)",
				   esc(buf, i->path), f->pos.line, f->pos.column);
}

static int check_inputs(struct tp_schema *schema, const struct tp_schema_key *key,
			const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	env->inputs = calloc(value->sequence.count + 1, sizeof(*env->inputs));
	if (!env->inputs)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_input *input = &env->inputs[env->input_count];

		if (item->kind != YT_MAPPING) {
			r = tp_schema_report(schema, item,
					     "entries of 'inputs' must be mappings with a 'path', "
					     "got %s", yt_node_describe(item));
			if (r < 0)
				return r;
			continue;
		}
		r = tp_schema_check_mapping(schema, "sandbox.filesystem.inputs", item, item,
					    input_keys, ARRAY_SIZE(input_keys));
		if (r < 0)
			return r;
		if (input->path)
			env->input_count++;
		else
			*input = (struct tp_input){ 0 };
	}
	return tp_schema_find_duplicates(schema, env->inputs, env->input_count,
					 sizeof(*env->inputs), input_compare, input_duplicate,
					 NULL);
}

static int check_devices(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	int r = tp_schema_expect_kind(schema, key, pair->value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (pair->value->sequence.count == 0)
		return 0;
	return tp_schema_report(schema, pair->value->sequence.items[0],
				"'devices' must be [] in this version: runs get /dev/null, zero, "
				"full, random, urandom, tty, ptmx and ptys, and no other "
				"device");
}

/*
 * filesystem.abstract_sockets: names of abstract unix sockets (as `ss` shows
 * them, without the leading '@' and the NUL it stands for) the run may reach.
 */
static int check_abstract_sockets(struct tp_schema *schema, const struct tp_schema_key *key,
				  const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	char buf[TP_EXCERPT_MAX];
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	env->abstract_sockets = calloc(value->sequence.count + 1, sizeof(*env->abstract_sockets));
	if (!env->abstract_sockets)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		bool duplicate = false;

		if (item->kind != YT_SCALAR || item->scalar.is_null) {
			r = tp_schema_report(schema, item, "entries of 'filesystem.abstract_sockets' "
					     "must be names, got %s", yt_node_describe(item));
		} else if (item->scalar.len == 0 || item->scalar.len > TP_ABSTRACT_SOCKET_MAX ||
			   memchr(item->scalar.text, '\0', item->scalar.len)) {
			r = tp_schema_report(schema, item, "'%s' is not an abstract socket name: "
					     "1 to %d bytes, without NUL (and without the '@' "
					     "tools print in front)",
					     tp_excerpt(buf, item->scalar.text, item->scalar.len),
					     TP_ABSTRACT_SOCKET_MAX);
		} else {
			for (size_t j = 0; j < env->abstract_socket_count && !duplicate; j++)
				duplicate = strcmp(env->abstract_sockets[j], item->scalar.text) == 0;
			if (duplicate) {
				r = tp_schema_report(schema, item, "abstract socket '%s' is listed "
						     "twice", tp_excerpt(buf, item->scalar.text,
									 item->scalar.len));
			} else {
				env->abstract_sockets[env->abstract_socket_count] =
					strdup(item->scalar.text);
				if (!env->abstract_sockets[env->abstract_socket_count])
					return -ENOMEM;
				env->abstract_socket_count++;
				continue;
			}
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static const struct tp_schema_key filesystem_keys[] = {
	TP_SCHEMA_KEY("root", check_root, true, 0),
	TP_SCHEMA_KEY("inputs", check_inputs, false, 0),
	TP_SCHEMA_SUBMAPPING("workspace", check_workspace, true, workspace_keys,
			     "sandbox.filesystem.workspace"),
	TP_SCHEMA_KEY("read", check_path_list, false, PL_READ),
	TP_SCHEMA_KEY("write", check_path_list, false, PL_WRITE),
	TP_SCHEMA_KEY("exec", check_path_list, false, PL_EXEC),
	TP_SCHEMA_KEY("deny", check_path_list, false, PL_DENY),
	TP_SCHEMA_KEY("connect", check_path_list, false, PL_CONNECT),
	TP_SCHEMA_KEY("abstract_sockets", check_abstract_sockets, false, 0),
	TP_SCHEMA_KEY("devices", check_devices, false, 0),
};

/* ---- sandbox.network_egress -------------------------------------------- */

static int check_network_default(struct tp_schema *schema, const struct tp_schema_key *key,
				 const struct yt_pair *pair)
{
	static const char *const modes[] = { "deny" };
	int i;

	i = tp_schema_check_enum(schema, key, pair->value, modes, ARRAY_SIZE(modes));
	return tp_schema_enum_status(i);
}

static int destination_compare(const void *pa, const void *pb)
{
	const struct tp_destination *a = pa, *b = pb;
	int r;

	if (!a->host != !b->host)
		return a->host ? -1 : 1;
	r = a->host ? strcmp(a->host, b->host) : memcmp(a->addr, b->addr, 16);
	if (r)
		return r;
	if (!a->host && a->prefixlen != b->prefixlen)
		return a->prefixlen < b->prefixlen ? -1 : 1;
	if (a->protocols != b->protocols)
		return a->protocols < b->protocols ? -1 : 1;
	if (a->port_min != b->port_min)
		return a->port_min < b->port_min ? -1 : 1;
	return a->port_max < b->port_max ? -1 : a->port_max > b->port_max;
}

static int destination_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct tp_destination *d = later, *f = first;

	return tp_schema_report_at(schema, d->pos,
				   "this destination is listed twice (first at line %u, column %u)",
				   f->pos.line, f->pos.column);
}

/* The mapping form {host | cidr, ports, protocol}; returns 1, 0 (reported) or -ENOMEM. */
static int parse_destination_mapping(struct tp_schema *schema, const struct yt_node *item,
				     struct tp_destination *dest)
{
	static const char *const protocols[] = { "tcp", "udp", "any" };
	static const uint8_t protocol_bits[] = { TP_PROTO_TCP, TP_PROTO_UDP, TP_PROTO_ANY };
	char why[TP_WHY_MAX], excerpt[TP_EXCERPT_MAX];
	const struct yt_node *target = NULL;
	bool ok = true;
	int r;

	*dest = (struct tp_destination){ .protocols = TP_PROTO_ANY, .port_min = 1,
					 .port_max = 65535 };
	for (size_t i = 0; i < item->mapping.count; i++) {
		const struct yt_pair *pair = &item->mapping.pairs[i];
		const struct yt_node *v = pair->value;
		bool is_host = yt_scalar_equals(pair->key, "host");

		if (is_host || yt_scalar_equals(pair->key, "cidr")) {
			if (target) {
				r = tp_schema_report(schema, pair->key,
						     "a destination has either 'host' or 'cidr', "
						     "not both");
				ok = false;
			} else if (v->kind != YT_SCALAR || v->scalar.is_null ||
				   memchr(v->scalar.text, '\0', v->scalar.len)) {
				r = tp_schema_report(schema, v, "'%s' must be a %s",
						     is_host ? "host" : "cidr",
						     is_host ? "hostname" : "CIDR block");
				ok = false;
			} else if (is_host) {
				target = v;
				r = 0;
				if (tp_parse_hostname(v->scalar.text, v->scalar.len, &dest->host, why,
						      sizeof(why))) {
					r = tp_schema_report(schema, v, "invalid 'host': %s", why);
					ok = false;
				}
			} else {
				target = v;
				r = 0;
				if (tp_parse_cidr(v->scalar.text, v->scalar.len, dest->addr,
						  &dest->prefixlen, why, sizeof(why))) {
					r = tp_schema_report(schema, v, "invalid 'cidr': %s", why);
					ok = false;
				}
			}
		} else if (yt_scalar_equals(pair->key, "ports")) {
			r = 0;
			if (v->kind != YT_SCALAR || v->scalar.is_null) {
				r = tp_schema_report(schema, v,
						     "'ports' must be a port or a range such as "
						     "'8000-8100', got %s", yt_node_describe(v));
				ok = false;
			} else if (tp_parse_port_range(v->scalar.text, v->scalar.len, &dest->port_min,
						       &dest->port_max, why, sizeof(why))) {
				r = tp_schema_report(schema, v, "invalid 'ports': %s", why);
				ok = false;
			}
		} else if (yt_scalar_equals(pair->key, "protocol")) {
			static const struct tp_schema_key protocol_key =
				TP_SCHEMA_KEY("protocol", NULL, false, 0);
			int p = tp_schema_check_enum(schema, &protocol_key, v, protocols,
						     ARRAY_SIZE(protocols));

			r = tp_schema_enum_status(p);
			if (p < 0)
				ok = false;
			else
				dest->protocols = protocol_bits[p];
		} else {
			tp_excerpt(excerpt, pair->key->scalar.text, pair->key->scalar.len);
			r = tp_schema_report(schema, pair->key, "unknown key '%s' in a destination "
					     "(expected one of: host, cidr, ports, protocol)",
					     excerpt);
			ok = false;
		}
		if (r < 0)
			return r;
	}
	if (!target && ok) {
		r = tp_schema_report(schema, item, "a destination needs a 'host' or a 'cidr'");
		return r < 0 ? r : 0;
	}
	return ok && target;
}

static int check_destinations(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	char why[TP_WHY_MAX];
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	env->destinations = calloc(value->sequence.count + 1, sizeof(*env->destinations));
	if (!env->destinations)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_destination dest = { 0 };
		bool keep = true;

		if (item->kind == YT_MAPPING) {
			r = parse_destination_mapping(schema, item, &dest);
			if (r < 0) {
				free(dest.host);
				return r;
			}
			keep = r == 1;
		} else if (item->kind == YT_SCALAR && !item->scalar.is_null &&
			   !memchr(item->scalar.text, '\0', item->scalar.len)) {
			if (tp_parse_destination(item->scalar.text, item->scalar.len, &dest, why,
						 sizeof(why))) {
				r = tp_schema_report(schema, item, "invalid destination: %s", why);
				if (r < 0)
					return r;
				keep = false;
			}
		} else {
			/* "- [2001:db8::1]" unquoted is a YAML list of one address. */
			r = tp_schema_report(schema, item,
					     "entries of 'allowed_destinations' must be a "
					     "hostname, an address or CIDR (with an optional "
					     "port), or a mapping; got %s%s", yt_node_describe(item),
					     item->kind == YT_SEQUENCE
						     ? " ('[' starts a YAML list: write an IPv6 "
						       "address without brackets, or with a port "
						       "and quoted, \"[2001:db8::1]:443\")"
						     : "");
			if (r < 0)
				return r;
			keep = false;
		}
		dest.pos = tp_node_pos(item);
		if (keep)
			env->destinations[env->destination_count++] = dest;
		else
			free(dest.host);
	}
	return tp_schema_find_duplicates(schema, env->destinations, env->destination_count,
					 sizeof(*env->destinations), destination_compare,
					 destination_duplicate, NULL);
}

static int check_methods(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
					       "OPTIONS", "CONNECT", "TRACE" };
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	env->methods = calloc(value->sequence.count + 1, sizeof(*env->methods));
	if (!env->methods)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		static const struct tp_schema_key method_key =
			TP_SCHEMA_KEY("methods", NULL, false, 0);
		const struct yt_node *item = value->sequence.items[i];
		int m = tp_schema_check_enum(schema, &method_key, item, methods,
					     ARRAY_SIZE(methods));
		bool duplicate = false;

		if (m < 0) {
			r = tp_schema_enum_status(m);
			if (r < 0)
				return r;
			continue;
		}
		for (size_t j = 0; j < env->method_count && !duplicate; j++)
			duplicate = strcmp(env->methods[j], methods[m]) == 0;
		if (duplicate) {
			r = tp_schema_report(schema, item, "method '%s' is listed twice",
					     methods[m]);
			if (r < 0)
				return r;
			continue;
		}
		env->methods[env->method_count] = strdup(methods[m]);
		if (!env->methods[env->method_count])
			return -ENOMEM;
		env->method_count++;
	}
	if (env->method_count == 0)
		return 0;
	return add_gap(env, "network_egress.methods", tp_node_pos(pair->key));
}

static int check_dns_upstream(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	char why[TP_WHY_MAX];
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (value->sequence.count > 8)
		return tp_schema_report(schema, value, "at most 8 DNS upstreams, got %zu",
					value->sequence.count);
	env->dns_upstreams = calloc(value->sequence.count + 1, sizeof(*env->dns_upstreams));
	if (!env->dns_upstreams)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_endpoint ep = { 0 };
		bool duplicate = false;

		if (item->kind != YT_SCALAR || item->scalar.is_null ||
		    memchr(item->scalar.text, '\0', item->scalar.len)) {
			r = tp_schema_report(schema, item,
					     "entries of 'upstream' must be addresses, got %s",
					     yt_node_describe(item));
		} else if (tp_parse_endpoint(item->scalar.text, item->scalar.len, 53, &ep, why,
					     sizeof(why))) {
			r = tp_schema_report(schema, item, "invalid 'upstream': %s", why);
		} else {
			for (size_t j = 0; j < env->dns_upstream_count && !duplicate; j++)
				duplicate = memcmp(env->dns_upstreams[j].addr, ep.addr, 16) == 0 &&
					    env->dns_upstreams[j].port == ep.port;
			r = 0;
			if (duplicate)
				r = tp_schema_report(schema, item, "this upstream is listed twice");
			else {
				ep.pos = tp_node_pos(item);
				env->dns_upstreams[env->dns_upstream_count++] = ep;
			}
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_dns_ttl(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const uint64_t max_ms = (key->arg == 0 ? 1ull : 7ull) * 24 * 3600 * 1000;
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t ms;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (tp_parse_duration(value->scalar.text, value->scalar.len, 1000, max_ms, &ms, why,
			      sizeof(why)))
		return tp_schema_invalid(schema, key, value, why);
	if (ms % 1000)
		return tp_schema_invalid(schema, key, value, "DNS TTLs are whole seconds");
	if (key->arg == 0)
		ctx->env->dns_ttl_min_s = (uint32_t)(ms / 1000);
	else
		ctx->env->dns_ttl_max_s = (uint32_t)(ms / 1000);
	return 0;
}

static const struct tp_schema_key dns_keys[] = {
	TP_SCHEMA_KEY("upstream", check_dns_upstream, false, 0),
	TP_SCHEMA_KEY("min_ttl", check_dns_ttl, false, 0),
	TP_SCHEMA_KEY("max_ttl", check_dns_ttl, false, 1),
};

static int check_dns(struct tp_schema *schema, const struct tp_schema_key *key,
		     const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	int r = tp_schema_check_submapping(schema, key, pair);

	if (r < 0)
		return r;
	if (ctx->env->dns_ttl_min_s > ctx->env->dns_ttl_max_s)
		return tp_schema_report(schema, pair->key,
					"'min_ttl' (%us) is above 'max_ttl' (%us)",
					ctx->env->dns_ttl_min_s, ctx->env->dns_ttl_max_s);
	return 0;
}

static const struct tp_schema_key network_keys[] = {
	TP_SCHEMA_KEY("default", check_network_default, false, 0),
	TP_SCHEMA_KEY("allowed_destinations", check_destinations, false, 0),
	TP_SCHEMA_KEY("methods", check_methods, false, 0),
	TP_SCHEMA_KEY("max_bytes", check_limit, false, TP_LIMIT_EGRESS_BYTES),
	TP_SCHEMA_SUBMAPPING("dns", check_dns, false, dns_keys, "sandbox.network_egress.dns"),
};

/* ---- sandbox: identity, resources, lifetime, artifacts, cleanup, audit -- */

/*
 * identity.uid and identity.gid: the ids the run's processes get.  0 is
 * allowed (the run owns root's files, but has no capabilities); (uid_t)-1
 * is not an id: setresuid() and setresgid() read it as "leave unchanged".
 */
static int check_id(struct tp_schema *schema, const struct tp_schema_key *key,
		    const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t id;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (yt_scalar_equals(value, "4294967295"))
		return tp_schema_report(schema, value,
					"'%s' must not be 4294967295: that is (%s_t)-1, which the "
					"kernel reads as \"unchanged\", not an id", key->name,
					key->arg == 0 ? "uid" : "gid");
	if (tp_parse_uint(value->scalar.text, value->scalar.len, 0, TP_ID_MAX, &id, why,
			  sizeof(why)))
		return tp_schema_invalid(schema, key, value, why);
	if (key->arg == 0) {
		ctx->env->has_uid = true;
		ctx->env->uid = (uint32_t)id;
	} else {
		ctx->env->has_gid = true;
		ctx->env->gid = (uint32_t)id;
	}
	return 0;
}

static const struct tp_schema_key identity_keys[] = {
	TP_SCHEMA_KEY("tenant", check_identifier, false, 0),
	TP_SCHEMA_KEY("run_id", check_identifier, false, 1),
	TP_SCHEMA_KEY("uid", check_id, false, 0),
	TP_SCHEMA_KEY("gid", check_id, false, 1),
};

static int env_name_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int env_name_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	size_t l = (size_t)((char *const *)later - ctx->env->env_names);
	size_t f = (size_t)((char *const *)first - ctx->env->env_names);

	return tp_schema_report_at(schema, ctx->env_name_pos[l],
				   "'%s' is listed twice in 'environment' (first at line %u, "
				   "column %u)", ctx->env->env_names[l], ctx->env_name_pos[f].line,
				   ctx->env_name_pos[f].column);
}

/* Why `item` (a scalar) is not a name sandbox.environment accepts, or NULL. */
static const char *env_name_problem(const struct yt_node *item)
{
	const char *text = item->scalar.text;
	size_t len = item->scalar.len;

	if (len == 0)
		return "it is empty";
	if (memchr(text, '=', len))
		return "list the name only: the value comes from the controller's environment";
	if (len > TP_ENV_NAME_MAX)
		return "at most 128 bytes";
	if (memchr(text, '\0', len) || !tp_env_name_valid(text))
		return "only letters, digits and '_', not starting with a digit";
	return NULL;
}

/*
 * sandbox.environment: the controller's environment variables a run gets
 * besides the default set (tp_env_default_names), by name.
 */
static int check_environment(struct tp_schema *schema, const struct tp_schema_key *key,
			     const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	char buf[TP_EXCERPT_MAX];
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (value->sequence.count > TP_ENV_NAMES_MAX) {
		r = tp_schema_report(schema, value, "at most %d environment variable names, got %zu",
				     TP_ENV_NAMES_MAX, value->sequence.count);
		if (r < 0)
			return r;
	}
	env->env_names = calloc(value->sequence.count + 1, sizeof(*env->env_names));
	free(ctx->env_name_pos);
	ctx->env_name_pos = calloc(value->sequence.count + 1, sizeof(*ctx->env_name_pos));
	if (!env->env_names || !ctx->env_name_pos)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		const char *problem;
		bool reserved = false;

		if (item->kind != YT_SCALAR || item->scalar.is_null) {
			r = tp_schema_report(schema, item, "entries of 'environment' must be variable "
					     "names, got %s", yt_node_describe(item));
			if (r < 0)
				return r;
			continue;
		}
		problem = env_name_problem(item);
		if (problem) {
			r = tp_schema_report(schema, item, "'%s' is not an environment variable "
					     "name: %s", tp_excerpt(buf, item->scalar.text,
								     item->scalar.len), problem);
			if (r < 0)
				return r;
			continue;
		}
		for (const char *const *n = tp_env_reserved_names; *n && !reserved; n++)
			reserved = strcmp(*n, item->scalar.text) == 0;
		if (reserved) {
			r = tp_schema_report(schema, item, "'%s' is set by tether for every run (the "
					     "run's private temporary directory); it cannot be passed "
					     "from the controller's environment", item->scalar.text);
			if (r < 0)
				return r;
			continue;
		}
		env->env_names[env->env_name_count] = strndup(item->scalar.text, item->scalar.len);
		if (!env->env_names[env->env_name_count])
			return -ENOMEM;
		ctx->env_name_pos[env->env_name_count++] = tp_node_pos(item);
	}
	return tp_schema_find_duplicates(schema, env->env_names, env->env_name_count,
					 sizeof(*env->env_names), env_name_compare,
					 env_name_duplicate, NULL);
}

static const struct tp_schema_key resource_keys[] = {
	TP_SCHEMA_KEY("cpu", check_limit, false, TP_LIMIT_CPU_MILLI),
	TP_SCHEMA_KEY("memory_bytes", check_limit, false, TP_LIMIT_MEMORY_BYTES),
	TP_SCHEMA_KEY("process_count", check_limit, false, TP_LIMIT_PROCESS_COUNT),
	TP_SCHEMA_KEY("disk_bytes", check_limit, false, TP_LIMIT_DISK_BYTES),
	TP_SCHEMA_KEY("disk_inodes", check_limit, false, TP_LIMIT_DISK_INODES),
	TP_SCHEMA_KEY("open_files", check_limit, false, TP_LIMIT_OPEN_FILES),
	TP_SCHEMA_KEY("output_bytes", check_limit, false, TP_LIMIT_OUTPUT_BYTES),
	TP_SCHEMA_KEY("wall_clock", check_limit, false, TP_LIMIT_WALL_CLOCK_MS),
};

static int check_lifetime(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_pair *pair)
{
	static const char *const lifetimes[] = { "persistent", "one_run" };
	struct envelope_ctx *ctx = ctx_of(schema);
	int i = tp_schema_check_enum(schema, key, pair->value, lifetimes, ARRAY_SIZE(lifetimes));

	if (i < 0)
		return tp_schema_enum_status(i);
	ctx->env->lifetime = (enum tp_lifetime)i;
	ctx->lifetime_pos = tp_node_pos(pair->key);
	return 0;
}

static int artifact_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int artifact_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	size_t l = (size_t)((char *const *)later - ctx->env->artifacts);
	size_t f = (size_t)((char *const *)first - ctx->env->artifacts);
	char buf[TP_EXCERPT_MAX];

	return tp_schema_report_at(schema, ctx->artifact_pos[l],
				   "'%s' is listed twice in 'artifacts.allow' (first at line %u, "
				   "column %u)", esc(buf, ctx->env->artifacts[l]),
				   ctx->artifact_pos[f].line, ctx->artifact_pos[f].column);
}

static int check_artifact_allow(struct tp_schema *schema, const struct tp_schema_key *key,
				const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	env->artifacts = calloc(value->sequence.count + 1, sizeof(*env->artifacts));
	free(ctx->artifact_pos);
	ctx->artifact_pos = calloc(value->sequence.count + 1, sizeof(*ctx->artifact_pos));
	if (!env->artifacts || !ctx->artifact_pos)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_path_entry entry;
		char *text = NULL;

		r = parse_pattern(schema, "artifacts.allow", item, TP_PATTERN_RELATIVE, &entry);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (entry.kind == TP_PATH_SUBTREE)
			r = asprintf(&text, "%s%s**", entry.path, entry.path[0] ? "/" : "");
		else
			r = asprintf(&text, "%s", entry.path);
		free(entry.path);
		if (r < 0)
			return -ENOMEM;
		ctx->artifact_pos[env->artifact_count] = tp_node_pos(item);
		env->artifacts[env->artifact_count++] = text;
	}
	return tp_schema_find_duplicates(schema, env->artifacts, env->artifact_count,
					 sizeof(*env->artifacts), artifact_compare,
					 artifact_duplicate, NULL);
}

static int check_flag(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	struct tp_envelope *env = ctx->env;
	bool value = false;
	int r;

	r = check_bool(schema, key, pair->value, &value);
	if (r < 0)
		return r;
	switch (key->arg) {
	case 0:
		env->artifacts_scan = value;
		return 0;
	case 1:
		env->artifacts_hash = value;
		return 0;
	case 2:
		env->revoke_credentials = value;
		return value ? add_gap(env, "cleanup.revoke_credentials", tp_node_pos(pair->key)) : 0;
	case 3:
		if (!value && yt_scalar_equals(pair->value, "false"))
			return tp_schema_report(schema, pair->value,
						"'verify_process_tree' cannot be turned off: every "
						"run's cleanup is verified");
		return 0;
	case 4:
		env->audit_fail_closed = value;
		return 0;
	default:
		env->audit_record_allowed = value;
		return 0;
	}
}

static const struct tp_schema_key artifact_keys[] = {
	TP_SCHEMA_KEY("allow", check_artifact_allow, false, 0),
	TP_SCHEMA_KEY("scan", check_flag, false, 0),
	TP_SCHEMA_KEY("hash", check_flag, false, 1),
};

static int check_artifacts(struct tp_schema *schema, const struct tp_schema_key *key,
			   const struct yt_pair *pair)
{
	int r = tp_schema_check_submapping(schema, key, pair);

	return r < 0 ? r : 0;
}

static const struct tp_schema_key cleanup_keys[] = {
	TP_SCHEMA_KEY("lease", check_limit, false, TP_LIMIT_LEASE_MS),
	TP_SCHEMA_KEY("revoke_credentials", check_flag, false, 2),
	TP_SCHEMA_KEY("verify_process_tree", check_flag, false, 3),
};

static int check_sink(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);

	ctx->audit_sink_pos = tp_node_pos(pair->value);
	if (yt_scalar_equals(pair->value, "stderr")) {
		free(TAKE_PTR(ctx->env->audit_sink));
		return 0;
	}
	if (pair->value->kind == YT_SCALAR && !pair->value->scalar.is_null &&
	    pair->value->scalar.len && pair->value->scalar.text[0] != '/')
		return tp_schema_report(schema, pair->value,
					"'sink' must be 'stderr' or an absolute path to a JSON "
					"Lines file");
	return parse_absolute(schema, key, pair->value, &ctx->env->audit_sink) < 0 ? -ENOMEM : 0;
}

static const struct tp_schema_key audit_keys[] = {
	TP_SCHEMA_KEY("sink", check_sink, false, 0),
	TP_SCHEMA_KEY("fail_closed", check_flag, false, 4),
	TP_SCHEMA_KEY("record_allowed", check_flag, false, 5),
};

static int check_mode(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_pair *pair)
{
	static const char *const modes[] = { "enforce", "audit" };
	int i = tp_schema_check_enum(schema, key, pair->value, modes, ARRAY_SIZE(modes));

	if (i < 0)
		return tp_schema_enum_status(i);
	ctx_of(schema)->env->mode = (enum tp_mode)i;
	return 0;
}

static int check_image_digest(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	struct tp_envelope *env = ctx->env;
	int r = check_digest(schema, key, pair->value, env->image_digest, &env->has_image_digest);

	if (r < 0 || !env->has_image_digest)
		return r;
	return add_gap(env, "image_digest", tp_node_pos(pair->key));
}

static int check_acknowledged(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	struct tp_envelope *env = ctx->env;
	char excerpt[TP_EXCERPT_MAX];
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	env->acknowledged = calloc(value->sequence.count + 1, sizeof(*env->acknowledged));
	env->acknowledged_pos = calloc(value->sequence.count + 1, sizeof(*env->acknowledged_pos));
	if (!env->acknowledged || !env->acknowledged_pos)
		return -ENOMEM;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		const struct tp_field_info *info = NULL;
		bool duplicate = false;

		if (item->kind == YT_SCALAR && !item->scalar.is_null &&
		    !memchr(item->scalar.text, '\0', item->scalar.len))
			info = tp_field_find(item->scalar.text);
		if (info && info->former_gap)
			continue;	/* enforced now: nothing left to acknowledge */
		if (!info || !info->restricts || info->status != TP_NOT_ENFORCED) {
			if (item->kind == YT_SCALAR)
				r = tp_schema_report(schema, item, "'%s' is not a field this "
						     "version leaves unenforced; the names are "
						     "listed in docs/envelope.md",
						     tp_excerpt(excerpt, item->scalar.text,
								item->scalar.len));
			else
				r = tp_schema_report(schema, item,
						     "entries of 'acknowledge_unenforced' must be "
						     "field names, got %s", yt_node_describe(item));
			if (r < 0)
				return r;
			continue;
		}
		for (size_t j = 0; j < env->acknowledged_count && !duplicate; j++)
			duplicate = strcmp(env->acknowledged[j], info->field) == 0;
		if (duplicate) {
			r = tp_schema_report(schema, item, "'%s' is acknowledged twice",
					     info->field);
			if (r < 0)
				return r;
			continue;
		}
		env->acknowledged[env->acknowledged_count] = strdup(info->field);
		if (!env->acknowledged[env->acknowledged_count])
			return -ENOMEM;
		env->acknowledged_pos[env->acknowledged_count++] = tp_node_pos(item);
	}
	return 0;
}

static const struct tp_schema_key sandbox_keys[] = {
	TP_SCHEMA_KEY("mode", check_mode, false, 0),
	TP_SCHEMA_KEY("image_digest", check_image_digest, false, 0),
	TP_SCHEMA_KEY("runtime_revision", check_revision, false, 0),
	TP_SCHEMA_SUBMAPPING("identity", tp_schema_check_submapping, false, identity_keys,
			     "sandbox.identity"),
	TP_SCHEMA_KEY("environment", check_environment, false, 0),
	TP_SCHEMA_SUBMAPPING("filesystem", tp_schema_check_submapping, true, filesystem_keys,
			     "sandbox.filesystem"),
	TP_SCHEMA_SUBMAPPING("network_egress", tp_schema_check_submapping, false, network_keys,
			     "sandbox.network_egress"),
	TP_SCHEMA_SUBMAPPING("resources", tp_schema_check_submapping, false, resource_keys,
			     "sandbox.resources"),
	TP_SCHEMA_KEY("workspace_lifetime", check_lifetime, false, 0),
	TP_SCHEMA_SUBMAPPING("artifacts", check_artifacts, false, artifact_keys,
			     "sandbox.artifacts"),
	TP_SCHEMA_SUBMAPPING("cleanup", tp_schema_check_submapping, false, cleanup_keys,
			     "sandbox.cleanup"),
	TP_SCHEMA_SUBMAPPING("audit", tp_schema_check_submapping, false, audit_keys,
			     "sandbox.audit"),
	TP_SCHEMA_KEY("acknowledge_unenforced", check_acknowledged, false, 0),
};

static int check_sandbox(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	struct envelope_ctx *ctx = ctx_of(schema);

	ctx->env->sandbox_pos = tp_node_pos(pair->key);
	return tp_schema_check_submapping(schema, key, pair);
}

static int check_version(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	if (yt_scalar_equals(pair->value, "1"))
		return 0;
	return tp_schema_report(schema, pair->value,
				"'version' must be 1, the only schema version this tether reads");
}

static const struct tp_schema_key top_keys[] = {
	TP_SCHEMA_KEY("version", check_version, false, 0),
	TP_SCHEMA_SUBMAPPING("sandbox", check_sandbox, true, sandbox_keys, "sandbox"),
};

/* ---- whole-envelope checks --------------------------------------------- */

struct resolved {
	char *path;
	enum tp_path_kind kind;
	enum path_list list;
	const struct tp_path_entry *entry;
};

/* By path, then position (the first written first), so conflicts are reported at the later. */
static int resolved_compare(const void *pa, const void *pb)
{
	const struct resolved *a = pa, *b = pb;
	int r = strcmp(a->path, b->path);

	if (r)
		return r;
	if (a->entry->pos.line != b->entry->pos.line)
		return a->entry->pos.line < b->entry->pos.line ? -1 : 1;
	if (a->entry->pos.column != b->entry->pos.column)
		return a->entry->pos.column < b->entry->pos.column ? -1 : 1;
	return a->list < b->list ? -1 : a->list > b->list;
}

static void resolved_free(struct resolved *items, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(items[i].path);
	free(items);
}

/*
 * Resolves every path entry against the workspace and checks what needs the
 * whole envelope: length after resolution, a path both granted and denied,
 * one path both exact and subtree, exact grants (a gap).
 */
static int string_ptr_compare(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The write grant in `sorted` that is `path` or one of its ancestors, or
 * NULL.  Exact grants count as subtrees here: that is how this version's
 * kernel rules hold them.
 */
static const char *writable_cover(const char **sorted, size_t count, const char *path)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);

	if (!count || len >= sizeof(prefix))
		return NULL;
	memcpy(prefix, path, len + 1);
	do {
		const char *key = prefix;
		const char **hit = bsearch(&key, sorted, count, sizeof(*sorted), string_ptr_compare);

		if (hit)
			return *hit;
	} while (tp_path_parent(prefix, &len));
	return NULL;
}

/*
 * What write grants must not reach: kernel interfaces, the whole tree, a
 * read-only input (the run could also rename an input inside a writable
 * directory out of its rule), and the audit sink (the run could rewrite its
 * own record).
 */
static int check_writable(struct envelope_ctx *ctx, const struct resolved *items, size_t count)
{
	struct tp_schema *schema = &ctx->schema;
	const struct tp_envelope *env = ctx->env;
	_cleanup_free_ const char **writable = calloc(count + 1, sizeof(*writable));
	_cleanup_free_ const char **inputs = calloc(count + 1, sizeof(*inputs));
	char buf[TP_EXCERPT_MAX], buf2[TP_EXCERPT_MAX];
	size_t n = 0, input_count = 0;
	const char *tree;
	bool kernel = false;
	int r = 0;

	if (!writable || !inputs)
		return -ENOMEM;
	for (size_t i = 0; i < count && r >= 0; i++) {
		const struct resolved *it = &items[i];

		if (!grants_write(it->list))
			continue;
		writable[n++] = it->path;
		if (strcmp(it->path, "/") == 0)
			r = tp_schema_report_at(schema, it->entry->pos,
						"'%s' in '%s' would make the whole file system "
						"writable", esc(buf, it->entry->path),
						path_list_names[it->list]);
		tree = r >= 0 ? tp_path_protected_tree(it->path, &kernel) : NULL;
		if (tree)
			r = tp_schema_report_at(schema, it->entry->pos,
						"'%s' in '%s' is in %s: files there are %s, never "
						"writable by a run", esc(buf, it->path),
						path_list_names[it->list], tree,
						kernel ? "kernel interfaces (sysctls, cgroups, devices)"
						       : "the host's system software");
	}
	qsort(writable, n, sizeof(*writable), string_ptr_compare);
	for (size_t i = 0; i < count; i++)
		if (items[i].list == PL_INPUTS)
			inputs[input_count++] = items[i].path;
	qsort(inputs, input_count, sizeof(*inputs), string_ptr_compare);
	/* A write grant below an input: an input is read-only all the way down. */
	for (size_t i = 0; i < count && r >= 0; i++) {
		const char *input;

		/* The default entry is the workspace: an input above it has its own message. */
		if (!grants_write(items[i].list) || !items[i].entry->pos.line)
			continue;
		input = writable_cover(inputs, input_count, items[i].path);
		if (input && strcmp(input, items[i].path) != 0)
			r = tp_schema_report_at(schema, items[i].entry->pos,
						"'%s' in '%s' is inside the input '%s', which is "
						"read-only", esc(buf, items[i].path),
						path_list_names[items[i].list], esc(buf2, input));
	}
	for (size_t i = 0; i < count && r >= 0; i++) {
		const char *cover;

		if (items[i].list != PL_INPUTS)
			continue;
		cover = writable_cover(writable, n, items[i].path);
		if (cover && strcmp(cover, items[i].path) == 0)
			r = tp_schema_report_at(schema, items[i].entry->pos,
						"conflicting rules: input '%s' is read-only, but a "
						"write grant names it too",
						esc(buf, items[i].path));
		else if (cover)
			r = tp_schema_report_at(schema, items[i].entry->pos,
						"input '%s' is inside '%s', which the run may "
						"write: an input is read-only, and the run could "
						"rename it out of its rule; keep inputs outside "
						"writable paths", esc(buf, items[i].path),
						esc(buf2, cover));
	}
	if (r >= 0 && env->audit_sink) {
		const char *cover = writable_cover(writable, n, env->audit_sink);

		kernel = false;
		tp_path_protected_tree(env->audit_sink, &kernel);
		if (path_within(env->audit_sink, env->workspace_path))
			r = tp_schema_report_at(schema, ctx->audit_sink_pos,
						"the audit sink '%s' is inside the workspace, "
						"where the run could rewrite its own record",
						esc(buf, env->audit_sink));
		else if (cover)
			r = tp_schema_report_at(schema, ctx->audit_sink_pos,
						"the audit sink '%s' is inside '%s', which the run "
						"may write: it could rewrite its own record",
						esc(buf, env->audit_sink), esc(buf2, cover));
		else if (kernel)
			r = tp_schema_report_at(schema, ctx->audit_sink_pos,
						"the audit sink '%s' is not a file: write the "
						"record to a regular file (or stderr)",
						esc(buf, env->audit_sink));
	}
	return r;
}

static int check_paths(struct envelope_ctx *ctx)
{
	struct tp_schema *schema = &ctx->schema;
	struct tp_envelope *env = ctx->env;
	_cleanup_free_ struct tp_path_entry *builtin = NULL;
	char buf[TP_EXCERPT_MAX];
	struct resolved *items;
	size_t count = 0, total = 0;
	int r = 0;

	for (enum path_list l = 0; l < PL_LISTS; l++)
		total += path_list_of(env, l)->count;
	/* The workspace, the inputs and the root take part as subtrees. */
	builtin = calloc(env->input_count + 2, sizeof(*builtin));
	items = calloc(total + env->input_count + 3, sizeof(*items));
	if (!items || !builtin) {
		free(items);
		return -ENOMEM;
	}
	builtin[0] = (struct tp_path_entry){ env->workspace_path, false, TP_PATH_SUBTREE,
					     ctx->workspace_pos };
	builtin[1] = (struct tp_path_entry){ (char *)"/", false, TP_PATH_SUBTREE, env->sandbox_pos };
	for (size_t i = 0; i < env->input_count; i++)
		builtin[2 + i] = (struct tp_path_entry){ env->inputs[i].path, false, TP_PATH_SUBTREE,
							 env->inputs[i].pos };
	for (size_t i = 0; i < env->input_count + 2; i++) {
		char *copy = strdup(builtin[i].path);

		if (!copy) {
			resolved_free(items, count);
			return -ENOMEM;
		}
		items[count++] = (struct resolved){ copy, TP_PATH_SUBTREE, i == 0 ? PL_WORKSPACE :
						    i == 1 ? PL_ROOT : PL_INPUTS,
						    &builtin[i] };
	}

	for (enum path_list l = 0; l < PL_LISTS && r >= 0; l++) {
		const struct tp_path_list *list = path_list_of(env, l);

		for (size_t i = 0; i < list->count && r >= 0; i++) {
			const struct tp_path_entry *e = &list->items[i];
			char *abs = tp_entry_absolute(env->workspace_path, e);

			if (!abs) {
				r = -ENOMEM;
				break;
			}
			if (strlen(abs) > PATH_RULE_MAX_BYTES) {
				r = tp_schema_report_at(schema, e->pos,
							"'%s' in '%s' is %zu bytes long once "
							"joined to the workspace, over the %d "
							"bytes a kernel path rule holds",
							esc(buf, e->path), path_list_names[l],
							strlen(abs), PATH_RULE_MAX_BYTES);
				free(abs);
				continue;
			}
			if (e->kind == TP_PATH_EXACT && l != PL_DENY && e->pos.line)
				r = add_gap(env, "filesystem.exact_paths", e->pos);
			items[count++] = (struct resolved){ abs, e->kind, l, e };
		}
	}

	/* Equal paths end up next to each other; within a run, compare each with the first. */
	qsort(items, count, sizeof(*items), resolved_compare);
	for (size_t i = 1, first = 0; i < count && r >= 0; i++) {
		const struct resolved *a = &items[first], *b = &items[i];
		bool a_deny = a->list == PL_DENY, b_deny = b->list == PL_DENY;

		if (strcmp(a->path, b->path) != 0) {
			first = i;
			continue;
		}
		if (a->kind != b->kind)
			r = tp_schema_report_at(schema, b->entry->pos,
						"'%s' is given both as an exact path and as a "
						"subtree ('%s' and '%s'); this version cannot tell "
						"them apart", esc(buf, a->path),
						path_list_names[a->list], path_list_names[b->list]);
		else if (a_deny != b_deny)
			r = tp_schema_report_at(schema, b->entry->pos,
						"conflicting rules: '%s' is both granted ('%s') "
						"and denied ('filesystem.deny')", esc(buf, a->path),
						path_list_names[a_deny ? b->list : a->list]);
	}
	if (r >= 0)
		r = check_writable(ctx, items, count);
	resolved_free(items, count);
	return r < 0 ? r : 0;
}

/* Where the run's writes are the run's own file system, not the host's disk. */
static bool on_run_storage(const struct tp_envelope *env, const char *path)
{
	/* the private trees a write grant can name (/dev/shm is in /dev, never granted) */
	static const char *const own[] = { "/tmp", "/var/tmp" };

	if (env->workspace_mode != TP_WORKSPACE_EXISTING &&
	    tp_path_within(path, env->workspace_path))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (tp_path_within(path, own[i]))
			return true;
	return false;
}

/*
 * A fresh workspace, workspace_lifetime, max_bytes, disk_bytes and
 * disk_inodes together (docs/envelope.md, "The run's file system"): a fresh
 * workspace lives for one run, one_run deletes only what tether made, and
 * a size bound holds only where every write the envelope grants lands on
 * the run's own tmpfs.
 */
static int check_storage(struct envelope_ctx *ctx)
{
	struct tp_schema *schema = &ctx->schema;
	struct tp_envelope *env = ctx->env;
	const uint64_t *lim = env->limits;
	bool fresh = env->workspace_mode != TP_WORKSPACE_EXISTING;
	int disk = lim[TP_LIMIT_DISK_BYTES] ? TP_LIMIT_DISK_BYTES : TP_LIMIT_DISK_INODES;
	char buf[TP_EXCERPT_MAX], a[TP_SIZE_TEXT_MAX], b[TP_SIZE_TEXT_MAX];
	int r = 0;

	if (fresh && env->lifetime != TP_LIFETIME_ONE_RUN)
		r = tp_schema_report_at(schema, ctx->workspace_mode_pos,
					"a '%s' workspace is the run's own file system and lives for "
					"one run: set 'workspace_lifetime: one_run' (what must outlive "
					"the run leaves it as 'artifacts')",
					env->workspace_mode == TP_WORKSPACE_FRESH ? "fresh"
										  : "fresh_overlay");
	if (r >= 0 && !fresh && env->lifetime == TP_LIFETIME_ONE_RUN)
		r = tp_schema_report_at(schema, ctx->lifetime_pos,
					"'one_run' needs a workspace tether makes ('mode: fresh' or "
					"'fresh_overlay'): it never deletes a directory that was there "
					"before the run");
	if (r >= 0 && !fresh && lim[TP_LIMIT_WORKSPACE_BYTES])
		r = tp_schema_report_at(schema, env->limit_pos[TP_LIMIT_WORKSPACE_BYTES],
					"'max_bytes' needs 'mode: fresh' or 'fresh_overlay': an existing "
					"directory is on the host's file system, whose size tether "
					"cannot bound");
	if (r >= 0 && lim[TP_LIMIT_WORKSPACE_BYTES] && lim[TP_LIMIT_DISK_BYTES] &&
	    lim[TP_LIMIT_WORKSPACE_BYTES] > lim[TP_LIMIT_DISK_BYTES]) {
		tp_format_size(lim[TP_LIMIT_WORKSPACE_BYTES], a);
		tp_format_size(lim[TP_LIMIT_DISK_BYTES], b);
		r = tp_schema_report_at(schema, env->limit_pos[TP_LIMIT_WORKSPACE_BYTES],
					"'max_bytes' (%s) is more than 'resources.disk_bytes' (%s), "
					"which the workspace is part of", a, b);
	}
	if (r < 0 || (!lim[TP_LIMIT_DISK_BYTES] && !lim[TP_LIMIT_DISK_INODES]))
		return r;
	if (!fresh && env->workspace_write.count)
		r = tp_schema_report_at(schema, env->limit_pos[disk],
					"'%s' bounds what the run writes, but the workspace '%s' is a "
					"directory on the host's file system: use 'mode: fresh', or "
					"make it read-only ('write: []')", tp_limits[disk].row.field,
					esc(buf, env->workspace_path));
	for (size_t i = 0; r >= 0 && i < env->write.count; i++) {
		const struct tp_path_entry *e = &env->write.items[i];
		_cleanup_free_ char *abs = tp_entry_absolute(env->workspace_path, e);

		if (!abs)
			return -ENOMEM;
		if (!on_run_storage(env, abs))
			r = tp_schema_report_at(schema, e->pos,
						"'%s' in 'write' is on the host's file system, which "
						"'%s' cannot bound: write in the workspace (with 'mode: "
						"fresh') or /tmp, or drop the limit",
						esc(buf, e->path), tp_limits[disk].row.field);
	}
	return r;
}

static int check_whole(struct envelope_ctx *ctx)
{
	struct tp_schema *schema = &ctx->schema;
	struct tp_envelope *env = ctx->env;
	char buf[TP_EXCERPT_MAX];
	int r;

	if (!env->workspace_path)
		return 0;	/* reported already; the checks below need it */

	r = check_paths(ctx);
	if (r >= 0)
		r = check_storage(ctx);
	if (r < 0)
		return r;
	for (size_t i = 0; i < env->input_count; i++) {
		if (path_within(env->workspace_path, env->inputs[i].path)) {
			r = tp_schema_report_at(schema, env->inputs[i].pos,
						"input '%s' contains the workspace: the workspace "
						"would be read-only",
						esc(buf, env->inputs[i].path));
			if (r < 0)
				return r;
		}
	}

	/*
	 * Gaps are reported only for envelopes without other errors: an envelope
	 * with a typo would otherwise also list every gap of the keys that were
	 * lost to it, burying the real error.
	 */
	if (schema->diags->count > ctx->first_diag)
		return 0;
	for (size_t i = 0; i < env->gap_count; i++) {
		const struct tp_gap *gap = &env->gaps[i];
		bool acknowledged = false;

		for (size_t j = 0; j < env->acknowledged_count && !acknowledged; j++)
			acknowledged = strcmp(env->acknowledged[j], gap->field) == 0;
		if (acknowledged)
			continue;
		r = tp_schema_report_at(schema, gap->pos,
					"'%s' is not enforced by this version (%s); to run without "
					"it, list '%s' under 'acknowledge_unenforced'", gap->field,
					gap->why, gap->field);
		if (r < 0)
			return r;
	}
	return 0;
}

/* `root` is NULL for a stream without a document. */
static int check_envelope(struct envelope_ctx *ctx, const struct yt_node *root)
{
	int r = tp_schema_check_document(&ctx->schema, root,
					 "empty envelope: expected a mapping with key 'sandbox'",
					 "the envelope must be a mapping with key 'sandbox'",
					 top_keys, ARRAY_SIZE(top_keys));

	if (r <= 0)
		return r;
	return check_whole(ctx);
}

void tp_envelope_free(struct tp_envelope *env)
{
	if (!env)
		return;
	free(env->runtime_revision);
	free(env->tenant);
	free(env->run_id);
	for (size_t i = 0; i < env->input_count; i++)
		free(env->inputs[i].path);
	free(env->inputs);
	free(env->workspace_path);
	free(env->workspace_source);
	free(env->workspace_ref);
	for (enum path_list l = 0; l < PL_LISTS; l++)
		path_list_clear(path_list_of(env, l));
	for (size_t i = 0; i < env->destination_count; i++)
		free(env->destinations[i].host);
	free(env->destinations);
	for (size_t i = 0; i < env->method_count; i++)
		free(env->methods[i]);
	free(env->methods);
	free(env->dns_upstreams);
	for (size_t i = 0; i < env->artifact_count; i++)
		free(env->artifacts[i]);
	free(env->artifacts);
	for (size_t i = 0; i < env->abstract_socket_count; i++)
		free(env->abstract_sockets[i]);
	free(env->abstract_sockets);
	for (size_t i = 0; i < env->env_name_count; i++)
		free(env->env_names[i]);
	free(env->env_names);
	free(env->audit_sink);
	free(env->gaps);
	for (size_t i = 0; i < env->acknowledged_count; i++)
		free(env->acknowledged[i]);
	free(env->acknowledged);
	free(env->acknowledged_pos);
	free(env);
}

static void tp_envelope_freep(struct tp_envelope **env)
{
	tp_envelope_free(*env);
}

/* The defaults of every optional key (docs/envelope.md). */
static int envelope_defaults(struct tp_envelope *env)
{
	env->mode = TP_MODE_ENFORCE;
	env->workspace_mode = TP_WORKSPACE_EXISTING;
	env->lifetime = TP_LIFETIME_PERSISTENT;
	env->verify_process_tree = true;
	env->dns_ttl_min_s = 5;
	env->dns_ttl_max_s = 3600;
	env->uid = TP_DEFAULT_ID;
	env->gid = TP_DEFAULT_ID;
	env->workspace_write.items = calloc(1, sizeof(*env->workspace_write.items));
	if (!env->workspace_write.items)
		return -ENOMEM;
	env->workspace_write.items[0] = (struct tp_path_entry){
		.path = strdup(""),
		.relative = true,
		.kind = TP_PATH_SUBTREE,
	};
	if (!env->workspace_write.items[0].path)
		return -ENOMEM;
	env->workspace_write.count = 1;
	return 0;
}

/* What parse_into() fills, and the binding it applies. */
struct parse_target {
	struct tp_envelope **env;
	const struct tp_run_binding *bind;
};

/* A tp_schema_parse_fn: `out` is a struct parse_target *. */
static int parse_into(const char *name, const char *data, size_t len, void *out,
		      struct tp_diags *diags)
{
	const struct parse_target *target = out;
	_cleanup_(tp_envelope_freep) struct tp_envelope *env = NULL;
	_cleanup_(yt_node_freep) struct yt_node *root = NULL;
	struct envelope_ctx ctx;
	size_t first = diags->count;
	int r;

	r = tp_schema_load(name, "envelope", data, len, TP_ENVELOPE_MAX_BYTES, &root, diags);
	if (r < 0)
		return r;

	env = calloc(1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	r = envelope_defaults(env);
	if (r < 0)
		return r;
	ctx = (struct envelope_ctx){ .schema = { name, diags }, .env = env, .first_diag = first,
				     .bind = target->bind };
	r = check_envelope(&ctx, root);
	free(TAKE_PTR(ctx.artifact_pos));
	free(TAKE_PTR(ctx.env_name_pos));
	if (r < 0)
		return r;
	if (diags->count > first)
		return -EINVAL;
	/* gid defaults to the uid: written out or not, the same ids. */
	if (env->has_uid && !env->has_gid)
		env->gid = env->uid;

	*target->env = TAKE_PTR(env);
	return 0;
}

int tp_envelope_parse_bound(const char *name, const char *data, size_t len,
			    const struct tp_run_binding *bind, struct tp_envelope **out,
			    struct tp_diags *diags)
{
	struct parse_target target = { out, bind };

	if (!out)
		return -EINVAL;
	return tp_schema_parse(name, data, len, parse_into, &target, diags);
}

int tp_envelope_parse(const char *name, const char *data, size_t len,
		      struct tp_envelope **out, struct tp_diags *diags)
{
	return tp_envelope_parse_bound(name, data, len, NULL, out, diags);
}

int tp_envelope_parse_file(const char *path, struct tp_envelope **out,
			   struct tp_diags *diags)
{
	struct parse_target target = { out, NULL };

	if (!out)
		return -EINVAL;
	return tp_schema_parse_file(path, TP_ENVELOPE_MAX_BYTES, parse_into, &target, diags);
}
