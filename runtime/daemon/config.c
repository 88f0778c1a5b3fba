// SPDX-License-Identifier: GPL-2.0
/*
 * /etc/tether/daemon.yaml -> struct daemon_config (config.h, docs/daemon.md).
 *
 * The file is read the way envelopes and contracts are: through policyc's
 * schema layer (a size limit, no NUL, no anchors, aliases, custom tags or
 * duplicate keys, tables of keys with one check function each), so its
 * diagnostics read the same and every problem of a file is reported in one
 * pass.  What is particular to this file: user and group names, resolved
 * from the passwd and group files while the tree is checked, and the rules
 * that keep `callers` unambiguous (one selector per entry, one entry per
 * uid or gid, each tenant once).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cleanup.h"
#include "policyc/policyc_internal.h"
#include "policyc/schema_internal.h"
#include "policyc/values.h"
#include "policyc/yaml_tree_internal.h"
#include "runtime/daemon/config.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/spool.h"
#include "runtime/sink/syslog.h"

#define DEFAULT_PASSWD "/etc/passwd"
#define DEFAULT_GROUP "/etc/group"
/* LOGIN_NAME_MAX less the NUL: no account name is longer. */
#define ACCOUNT_NAME_MAX 255
/* A passwd or group line longer than this is not one we resolve names from. */
#define ACCOUNT_LINE_MAX (1u << 20)

/* The passwd or group file, opened when the first name needs it. */
struct account_file {
	const char *path;
	FILE *stream;
	bool failed;	/* it could not be opened; reported once */
};

/* The entry of `callers` being checked. */
struct entry {
	const struct yt_pair *selector;	/* its uid, user, gid or group pair; NULL: none yet */
	enum daemon_caller_kind kind;
	uint32_t id;
	char **tenants;
	size_t tenant_count;
	bool any_tenant;
	char **lists[2];	/* envelopes, workspaces (enum grant_list) */
	size_t list_count[2];
	bool has_list[2];
};

enum grant_list { LIST_ENVELOPES, LIST_WORKSPACES };

/* Who an entry of `callers` names, for the check that no two name the same. */
struct caller_ref {
	enum daemon_caller_kind kind;
	uint32_t id;
	const struct yt_pair *selector;
};

struct config_ctx {
	struct tp_schema schema;
	struct daemon_config *cfg;	/* filled as values pass their checks */
	struct account_file passwd, group;
	struct entry entry;
	/*
	 * Every entry whose one selector is valid, kept or not: a second
	 * entry for the same uid is worth reporting even when the first has
	 * a bad tenant.
	 */
	struct caller_ref *refs;
	size_t ref_count;
	struct daemon_sink *sink;	/* the entry of `sinks` being checked */
};

static struct config_ctx *ctx_of(struct tp_schema *schema)
{
	return TP_SCHEMA_CONTAINER(schema, struct config_ctx);
}

/* tp_schema_report()'s 0-or-negative result as a check's "reported" (0) or -ENOMEM. */
static int reported(int r)
{
	return r < 0 ? r : 0;
}

static void free_strings(char **items, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(items[i]);
	free(items);
}

static void daemon_sinks_free(struct daemon_sink *sinks, size_t count);

void daemon_config_free(struct daemon_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->socket_path);
	free(cfg->state_dir);
	for (size_t i = 0; i < cfg->caller_count; i++) {
		free_strings(cfg->callers[i].tenants, cfg->callers[i].tenant_count);
		free_strings(cfg->callers[i].envelopes, cfg->callers[i].envelope_count);
		free_strings(cfg->callers[i].workspaces, cfg->callers[i].workspace_count);
	}
	free(cfg->callers);
	daemon_sinks_free(cfg->sinks, cfg->sink_count);
	free(cfg->node_log.key_file);
	*cfg = (struct daemon_config){ 0 };
}

static void daemon_config_freep(struct daemon_config *cfg)
{
	daemon_config_free(cfg);
}

/* The scalars' defaults; callers are added when the file has none. */
static int set_scalar_defaults(struct daemon_config *cfg)
{
	cfg->socket_path = strdup(DAEMON_DEFAULT_SOCKET);
	cfg->state_dir = strdup(DAEMON_DEFAULT_STATE_DIR);
	if (!cfg->socket_path || !cfg->state_dir)
		return -ENOMEM;
	cfg->socket_gid = 0;
	cfg->max_runs = DAEMON_DEFAULT_MAX_RUNS;
	cfg->node_log = (struct daemon_node_log){
		.enabled = true,
		.file_bytes = NODELOG_DEFAULT_FILE_BYTES,
		.max_bytes = NODELOG_DEFAULT_MAX_BYTES,
		.checkpoint_records = NODELOG_DEFAULT_CHECKPOINT_RECORDS,
		.checkpoint_ms = NODELOG_DEFAULT_CHECKPOINT_MS,
	};
	return 0;
}

/* Without `callers`, root alone may call, for every tenant. */
static int set_default_callers(struct daemon_config *cfg)
{
	cfg->callers = calloc(1, sizeof(*cfg->callers));
	if (!cfg->callers)
		return -ENOMEM;
	cfg->callers[0] = (struct daemon_caller){
		.kind = DAEMON_CALLER_UID,
		.id = 0,
		.any_tenant = true,
		.any_envelope = true,
	};
	cfg->caller_count = 1;
	return 0;
}

int daemon_config_defaults(struct daemon_config *out)
{
	_cleanup_(daemon_config_freep) struct daemon_config cfg = { 0 };
	int r;

	if (!out)
		return -EINVAL;
	r = set_scalar_defaults(&cfg);
	if (r >= 0)
		r = set_default_callers(&cfg);
	if (r < 0)
		return r;
	*out = cfg;
	cfg = (struct daemon_config){ 0 };
	return 0;
}

/* ---- names and tenants ------------------------------------------------- */

static bool tenant_valid(const char *text, size_t len)
{
	if (len == 0 || len > DAEMON_TENANT_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		/*
		 * A letter or digit first: a tenant name may end up as a path
		 * component or an argument, where ".", ".." and "-x" mean
		 * something else.  The same rule as identity.tenant.
		 */
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

bool daemon_tenant_valid(const char *tenant)
{
	return tenant && tenant_valid(tenant, strlen(tenant));
}

/*
 * Whether `text` can be an account name in passwd or group: no ':' (the
 * field separator), no spaces or control characters, and no leading '+' or
 * '-', which mark NIS compat lines there ("+" alone parses as uid 0).
 */
static bool account_name_valid(const char *text, size_t len)
{
	if (len == 0 || len > ACCOUNT_NAME_MAX || text[0] == '+' || text[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c <= 0x20 || c == 0x7f || c == ':')
			return false;
	}
	return true;
}

static bool all_digits(const char *text, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (text[i] < '0' || text[i] > '9')
			return false;
	return true;
}

/*
 * Opens the file on first use.  Returns 1 when it is open, 0 when it cannot
 * be (reported at `at` the first time; names after that are left unresolved
 * without more messages: the first says why), or -ENOMEM.
 */
static int account_file_open(struct config_ctx *ctx, struct account_file *file,
			     const struct yt_node *at, const char *what)
{
	char buf[TP_EXCERPT_MAX];
	int error;

	if (file->stream) {
		rewind(file->stream);
		return 1;
	}
	if (file->failed)
		return 0;
	file->stream = fopen(file->path, "re");
	if (file->stream)
		return 1;
	error = errno;
	if (error == ENOMEM)
		return -ENOMEM;
	file->failed = true;
	return reported(tp_schema_report(&ctx->schema, at,
					 "cannot read %s to resolve %s names: %s",
					 tp_excerpt(buf, file->path, strlen(file->path)), what,
					 strerror(error)));
}

/*
 * Looks `name` up in the passwd file (`group` false) or the group file.
 * Returns 1 with *id set, 0 when not found, -ENOMEM, or another negative
 * errno when the file cannot be read to its end.  fgetpwent_r() and
 * fgetgrent_r() parse the files themselves: no NSS, so nothing is loaded
 * at run time into a static binary.  The first matching line wins, as for
 * the files NSS module.
 */
static int account_lookup(FILE *stream, bool group, const char *name, uint32_t *id)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 1024;
	int r;

	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		const char *entry_name;
		uint32_t entry_id;

		if (group) {
			struct group gr, *result = NULL;

			r = fgetgrent_r(stream, &gr, buf, size, &result);
			entry_name = r == 0 ? gr.gr_name : NULL;
			entry_id = r == 0 ? (uint32_t)gr.gr_gid : 0;
		} else {
			struct passwd pw, *result = NULL;

			r = fgetpwent_r(stream, &pw, buf, size, &result);
			entry_name = r == 0 ? pw.pw_name : NULL;
			entry_id = r == 0 ? (uint32_t)pw.pw_uid : 0;
		}
		if (r == ENOENT)
			return 0;
		if (r == ERANGE) {
			/*
			 * A line longer than the buffer (a group with many
			 * members).  Grow and start over: whether the stream
			 * was put back before the line differs between glibc
			 * versions, a fresh pass is right with either.
			 */
			char *grown;

			if (size >= ACCOUNT_LINE_MAX)
				return -EFBIG;
			size *= 2;
			grown = realloc(buf, size);
			if (!grown)
				return -ENOMEM;
			buf = grown;
			rewind(stream);
			continue;
		}
		if (r != 0)
			return -r;
		/* NIS compat lines ("+", "+name", "-name") are not accounts. */
		if (entry_name[0] == '+' || entry_name[0] == '-')
			continue;
		if (strcmp(entry_name, name) == 0) {
			*id = entry_id;
			return 1;
		}
	}
}

/*
 * Resolves the name in scalar `value` (for key `key`, a user or group
 * name).  Returns 1 with *id set, 0 when reported, or -ENOMEM.
 */
static int resolve_name(struct config_ctx *ctx, const struct tp_schema_key *key,
			const struct yt_node *value, bool group, uint32_t *id)
{
	struct account_file *file = group ? &ctx->group : &ctx->passwd;
	const char *what = group ? "group" : "user";
	const char *numeric_key = group ? "gid" : "uid";
	char name[TP_EXCERPT_MAX], path[TP_EXCERPT_MAX];
	uint32_t found = 0;
	int r;

	tp_excerpt(name, value->scalar.text, value->scalar.len);
	if (!account_name_valid(value->scalar.text, value->scalar.len))
		return reported(tp_schema_report(&ctx->schema, value,
						 "invalid '%s': '%s' is not a %s name (1 to %d "
						 "bytes without ':', spaces or control characters, "
						 "not starting with '+' or '-')",
						 key->name, name, what, ACCOUNT_NAME_MAX));
	r = account_file_open(ctx, file, value, what);
	if (r <= 0)
		return r;
	tp_excerpt(path, file->path, strlen(file->path));
	r = account_lookup(file->stream, group, value->scalar.text, &found);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return reported(tp_schema_report(&ctx->schema, value,
						 "cannot read %s to resolve %s '%s': %s", path, what,
						 name, strerror(-r)));
	if (r == 0) {
		if (all_digits(value->scalar.text, value->scalar.len))
			return reported(tp_schema_report(&ctx->schema, value,
							 "unknown %s '%s' (not in %s); for a "
							 "numeric %s write '%s: %s'", what, name,
							 path, numeric_key, numeric_key, name));
		return reported(tp_schema_report(&ctx->schema, value, "unknown %s '%s' (not in %s)",
						 what, name, path));
	}
	if (found > TP_ID_MAX)
		return reported(tp_schema_report(&ctx->schema, value,
						 "%s '%s' has %s %u in %s: that is (%s_t)-1, not "
						 "an id", what, name, numeric_key, found, path,
						 numeric_key));
	*id = found;
	return 1;
}

/*
 * A numeric uid or gid.  0 is an id like any other; (uid_t)-1 is not one:
 * chown() and setresuid() read it as "leave unchanged".  Returns 1 with
 * *id set, 0 when reported, or -ENOMEM.
 */
static int parse_id(struct config_ctx *ctx, const struct tp_schema_key *key,
		    const struct yt_node *value, const char *id_kind, const char *name_key,
		    uint32_t *id)
{
	char why[TP_WHY_MAX], excerpt[TP_EXCERPT_MAX];
	uint64_t v;
	char c = value->scalar.len ? value->scalar.text[0] : '\0';

	if (yt_scalar_equals(value, "4294967295"))
		return reported(tp_schema_report(&ctx->schema, value,
						 "'%s' must not be 4294967295: that is (%s_t)-1, "
						 "which the kernel reads as \"unchanged\", not an id",
						 key->name, id_kind));
	if (tp_parse_uint(value->scalar.text, value->scalar.len, 0, TP_ID_MAX, &v, why,
			  sizeof(why)) == 0) {
		*id = (uint32_t)v;
		return 1;
	}
	/* Not a number at all: most likely a name under the numeric key. */
	if (name_key && c != '\0' && !(c >= '0' && c <= '9') && c != '-' && c != '+')
		return reported(tp_schema_report(&ctx->schema, value,
						 "invalid '%s': '%s' is not a number; for a name "
						 "write '%s: %s'", key->name,
						 tp_excerpt(excerpt, value->scalar.text,
							    value->scalar.len),
						 name_key, excerpt));
	return reported(tp_schema_invalid(&ctx->schema, key, value, why));
}

/* ---- top-level scalars ------------------------------------------------- */

static int check_version(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	if (yt_scalar_equals(pair->value, "1"))
		return 0;
	return tp_schema_report(schema, pair->value,
				"'version' must be 1, the only version of the daemon "
				"configuration this tether reads");
}

enum path_key { PATH_SOCKET, PATH_STATE_DIR };

/* socket and state_dir: absolute, normalised, short enough, not "/". */
static int check_path(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	size_t max = key->arg == PATH_SOCKET ? DAEMON_SOCKET_PATH_MAX : DAEMON_STATE_DIR_MAX;
	_cleanup_free_ char *normalized = NULL;
	char excerpt[TP_EXCERPT_MAX];
	char **out;
	size_t len;
	int r;

	if (value->kind == YT_SCALAR && value->scalar.is_null)
		return tp_schema_report(schema, value,
					"'%s' must be an absolute path, got an empty value",
					key->name);
	r = tp_schema_expect_text(schema, key, value);
	if (r <= 0)
		return r;
	if (value->scalar.text[0] != '/')
		return tp_schema_report(schema, value,
					"'%s' must be an absolute path (starting with '/'), got '%s'",
					key->name,
					tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
	normalized = tp_path_normalize(value->scalar.text);
	if (!normalized)
		return -errno;
	len = strlen(normalized);
	if (strcmp(normalized, "/") == 0)
		return tp_schema_report(schema, value, "'%s' must be a path below '/', not '/' itself",
					key->name);
	if (len > max) {
		if (key->arg == PATH_SOCKET)
			return tp_schema_report(schema, value,
						"'socket' is %zu bytes long after normalisation, "
						"over the limit of %zu: a Unix socket address holds "
						"at most %zu bytes", len, max, max);
		return tp_schema_report(schema, value,
					"'state_dir' is %zu bytes long after normalisation, over "
					"the limit of %zu", len, max);
	}
	out = key->arg == PATH_SOCKET ? &ctx->cfg->socket_path : &ctx->cfg->state_dir;
	free(*out);
	*out = TAKE_PTR(normalized);
	return 0;
}

static int check_socket_group(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	uint32_t gid;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	/* All digits is a gid (leading zeros refused there); anything else a name. */
	if (all_digits(value->scalar.text, value->scalar.len))
		r = parse_id(ctx, key, value, "gid", NULL, &gid);
	else
		r = resolve_name(ctx, key, value, true, &gid);
	if (r > 0)
		ctx->cfg->socket_gid = gid;
	return r < 0 ? r : 0;
}

static int check_max_runs(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t v;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (tp_parse_uint(value->scalar.text, value->scalar.len, 1, DAEMON_MAX_RUNS_LIMIT, &v,
			  why, sizeof(why)))
		return tp_schema_invalid(schema, key, value, why);
	ctx->cfg->max_runs = (uint32_t)v;
	return 0;
}

/* audit_rate_limit: 0 (no ceiling) .. 10^9 lines per second and run */
static int check_audit_rate_limit(struct tp_schema *schema, const struct tp_schema_key *key,
				  const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t v;
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (tp_parse_uint(value->scalar.text, value->scalar.len, 0, 1000000000, &v, why,
			  sizeof(why)))
		return tp_schema_invalid(schema, key, value, why);
	ctx->cfg->audit_rate_limit = v ? v : UINT64_MAX;
	return 0;
}

/* ---- callers ----------------------------------------------------------- */

enum selector { SELECT_UID, SELECT_USER, SELECT_GID, SELECT_GROUP };

/* uid, user, gid, group: exactly one per entry. */
static int check_selector(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	struct entry *entry = &ctx->entry;
	const struct yt_node *value = pair->value;
	bool group = key->arg == SELECT_GID || key->arg == SELECT_GROUP;
	uint32_t id = 0;
	int r;

	if (entry->selector) {
		const struct yt_node *first = entry->selector->key;

		r = tp_schema_report(schema, pair->key,
				     "'%s' and '%.*s' (line %u, column %u) in one entry of 'callers': "
				     "an entry names exactly one of uid, user, gid or group; write "
				     "one entry for each", key->name, (int)first->scalar.len,
				     first->scalar.text, first->line, first->column);
		if (r < 0)
			return r;
		/* The value is still checked, for its own problems. */
	} else {
		entry->selector = pair;
	}
	r = tp_schema_expect_text(schema, key, value);
	if (r <= 0)
		return r;
	switch (key->arg) {
	case SELECT_UID:
		r = parse_id(ctx, key, value, "uid", "user", &id);
		break;
	case SELECT_GID:
		r = parse_id(ctx, key, value, "gid", "group", &id);
		break;
	default:
		r = resolve_name(ctx, key, value, group, &id);
		break;
	}
	if (r <= 0 || entry->selector != pair)
		return r < 0 ? r : 0;
	entry->kind = group ? DAEMON_CALLER_GID : DAEMON_CALLER_UID;
	entry->id = id;
	return 0;
}

struct tenant_ref {
	const char *name;
	const struct yt_node *node;
};

static int tenant_ref_compare(const void *a, const void *b)
{
	return strcmp(((const struct tenant_ref *)a)->name, ((const struct tenant_ref *)b)->name);
}

static int tenant_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct tenant_ref *l = later, *f = first;
	char excerpt[TP_EXCERPT_MAX];

	return tp_schema_report(schema, l->node,
				"tenant '%s' is listed twice (first at line %u, column %u)",
				tp_excerpt(excerpt, l->name, strlen(l->name)), f->node->line,
				f->node->column);
}

static int check_tenants(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	struct entry *entry = &ctx->entry;
	const struct yt_node *value = pair->value;
	const struct yt_node *star = NULL;
	_cleanup_free_ struct tenant_ref *refs = NULL;
	char **names;
	size_t count = 0;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (value->sequence.count == 0)
		return tp_schema_report(schema, value,
					"'tenants' must not be empty: list tenant names, or \"*\" "
					"for every tenant");
	refs = calloc(value->sequence.count, sizeof(*refs));
	names = calloc(value->sequence.count, sizeof(*names));
	if (!refs || !names) {
		free(names);
		return -ENOMEM;
	}
	/* Owned by the entry from here, whatever happens below. */
	entry->tenants = names;

	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		char excerpt[TP_EXCERPT_MAX];

		r = 0;
		if (item->kind != YT_SCALAR) {
			r = tp_schema_report(schema, item,
					     "entries of 'tenants' must be tenant names, got %s",
					     yt_node_describe(item));
		} else if (item->scalar.is_null && item->scalar.len == 0) {
			r = tp_schema_report(schema, item,
					     "entries of 'tenants' must be tenant names, got an "
					     "empty value");
		} else if (item->scalar.is_null) {
			/* "null", "Null", "NULL", "~" unquoted: YAML's null, not a name. */
			r = tp_schema_report(schema, item,
					     "'%s' unquoted is YAML's null, not a tenant name: quote "
					     "it (\"%s\") for a tenant of that name",
					     tp_excerpt(excerpt, item->scalar.text, item->scalar.len),
					     excerpt);
		} else if (yt_scalar_equals(item, "*")) {
			if (star)
				r = tp_schema_report(schema, item,
						     "'*' is listed twice (first at line %u, "
						     "column %u)", star->line, star->column);
			else
				star = item;
		} else if (!tenant_valid(item->scalar.text, item->scalar.len)) {
			r = tp_schema_report(schema, item,
					     "invalid tenant '%s': 1 to %d letters, digits, '.', '_' "
					     "or '-', starting with a letter or digit",
					     tp_excerpt(excerpt, item->scalar.text, item->scalar.len),
					     DAEMON_TENANT_MAX);
		} else {
			names[count] = strndup(item->scalar.text, item->scalar.len);
			if (!names[count])
				return -ENOMEM;
			refs[count] = (struct tenant_ref){ names[count], item };
			entry->tenant_count = ++count;
		}
		if (r < 0)
			return r;
	}
	if (star && count > 0) {
		r = tp_schema_report(schema, star,
				     "'*' means every tenant: list either \"*\" alone or tenant "
				     "names, not both");
		if (r < 0)
			return r;
	}
	entry->any_tenant = star != NULL;
	return tp_schema_find_duplicates(schema, refs, count, sizeof(*refs), tenant_ref_compare,
					 tenant_duplicate, NULL);
}

/* A digest as `tether check` prints it: "sha256:" and 64 lowercase hex digits. */
static bool digest_text_valid(const char *text, size_t len)
{
	if (len != 7 + 64 || memcmp(text, "sha256:", 7) != 0)
		return false;
	for (size_t i = 7; i < len; i++)
		if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
			return false;
	return true;
}

/*
 * envelopes: digests; workspaces: absolute directories (normalised).  Both
 * non-empty, each entry once.
 */
static int check_grant_list(struct tp_schema *schema, const struct tp_schema_key *key,
			    const struct yt_pair *pair)
{
	struct entry *entry = &ctx_of(schema)->entry;
	const struct yt_node *value = pair->value;
	enum grant_list which = (enum grant_list)key->arg;
	char **items;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (value->sequence.count == 0)
		return tp_schema_report(schema, value,
					which == LIST_ENVELOPES ?
					"'envelopes' must not be empty: list the digests `tether "
					"check` prints, or leave the key out for any envelope" :
					"'workspaces' must not be empty: list directories, or leave "
					"the key out (no per-run workspace)");
	items = calloc(value->sequence.count, sizeof(*items));
	if (!items)
		return -ENOMEM;
	/* Owned by the entry from here, whatever happens below. */
	entry->lists[which] = items;
	entry->has_list[which] = true;
	for (size_t i = 0; i < value->sequence.count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		char excerpt[TP_EXCERPT_MAX];
		char *text = NULL;

		r = 0;
		if (item->kind != YT_SCALAR || item->scalar.is_null) {
			r = tp_schema_report(schema, item, "entries of '%s' must be %s, got %s",
					     key->name, which == LIST_ENVELOPES ? "digests" :
					     "absolute paths", item->kind == YT_SCALAR ?
					     "an empty value" : yt_node_describe(item));
		} else if (which == LIST_ENVELOPES) {
			if (!digest_text_valid(item->scalar.text, item->scalar.len))
				r = tp_schema_report(schema, item,
						     "invalid envelope digest '%s': write it as "
						     "`tether check` prints it, 'sha256:' and 64 "
						     "lowercase hex digits",
						     tp_excerpt(excerpt, item->scalar.text,
								item->scalar.len));
			else if (!(text = strndup(item->scalar.text, item->scalar.len)))
				return -ENOMEM;
		} else if (item->scalar.text[0] != '/' || strlen(item->scalar.text) != item->scalar.len) {
			r = tp_schema_report(schema, item,
					     "entries of 'workspaces' must be absolute paths "
					     "(starting with '/'), got '%s'",
					     tp_excerpt(excerpt, item->scalar.text, item->scalar.len));
		} else if (!(text = tp_path_normalize(item->scalar.text))) {
			return -ENOMEM;
		}
		for (size_t j = 0; text && j < entry->list_count[which]; j++) {
			if (strcmp(entry->lists[which][j], text) == 0) {
				/* a digest is checked text and short: whole, as in `tether check` */
				r = tp_schema_report(schema, item, "'%s' is listed twice in '%s'",
						     which == LIST_ENVELOPES ? text :
						     tp_excerpt(excerpt, text, strlen(text)),
						     key->name);
				free(text);
				text = NULL;
			}
		}
		if (text)
			items[entry->list_count[which]++] = text;
		if (r < 0)
			return r;
	}
	return 0;
}

static const struct tp_schema_key caller_keys[] = {
	TP_SCHEMA_KEY("uid", check_selector, false, SELECT_UID),
	TP_SCHEMA_KEY("user", check_selector, false, SELECT_USER),
	TP_SCHEMA_KEY("gid", check_selector, false, SELECT_GID),
	TP_SCHEMA_KEY("group", check_selector, false, SELECT_GROUP),
	TP_SCHEMA_KEY("tenants", check_tenants, true, 0),
	TP_SCHEMA_KEY("envelopes", check_grant_list, false, LIST_ENVELOPES),
	TP_SCHEMA_KEY("workspaces", check_grant_list, false, LIST_WORKSPACES),
};

/* One entry of `callers`: checked, then kept when it had no problem. */
static int check_caller(struct config_ctx *ctx, const struct yt_node *item)
{
	struct tp_schema *schema = &ctx->schema;
	struct daemon_config *cfg = ctx->cfg;
	struct entry *entry = &ctx->entry;
	size_t before = schema->diags->count;
	int r;

	*entry = (struct entry){ 0 };
	if (item->kind != YT_MAPPING)
		return tp_schema_report(schema, item,
					"entries of 'callers' must be mappings with one of 'uid', "
					"'user', 'gid' or 'group', and 'tenants'; got %s",
					yt_node_describe(item));
	r = tp_schema_check_mapping(schema, "callers", item, item, caller_keys,
				    ARRAY_SIZE(caller_keys));
	if (r >= 0 && !entry->selector)
		r = tp_schema_report(schema, item,
				     "an entry of 'callers' needs one of 'uid', 'user', 'gid' or "
				     "'group'");
	/* The arrays have room for every item (check_callers). */
	if (r >= 0 && entry->kind)
		ctx->refs[ctx->ref_count++] = (struct caller_ref){
			entry->kind, entry->id, entry->selector
		};
	if (r >= 0 && schema->diags->count == before) {
		struct daemon_caller *caller = &cfg->callers[cfg->caller_count++];

		*caller = (struct daemon_caller){
			.kind = entry->kind,
			.id = entry->id,
			.any_tenant = entry->any_tenant,
			.line = item->line,
		};
		/* With "*" the list is empty (a name beside it is an error). */
		if (!entry->any_tenant) {
			caller->tenants = TAKE_PTR(entry->tenants);
			caller->tenant_count = entry->tenant_count;
			entry->tenant_count = 0;
		}
		caller->any_envelope = !entry->has_list[LIST_ENVELOPES];
		caller->envelopes = TAKE_PTR(entry->lists[LIST_ENVELOPES]);
		caller->envelope_count = entry->list_count[LIST_ENVELOPES];
		caller->workspaces = TAKE_PTR(entry->lists[LIST_WORKSPACES]);
		caller->workspace_count = entry->list_count[LIST_WORKSPACES];
		entry->list_count[0] = entry->list_count[1] = 0;
	}
	free_strings(entry->tenants, entry->tenant_count);
	for (int i = 0; i < 2; i++)
		free_strings(entry->lists[i], entry->list_count[i]);
	*entry = (struct entry){ 0 };
	return r;
}

static int caller_ref_compare(const void *a, const void *b)
{
	const struct caller_ref *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int caller_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct caller_ref *l = later, *f = first;
	const char *id_kind = l->kind == DAEMON_CALLER_UID ? "uid" : "gid";
	const struct yt_node *key = l->selector->key, *value = l->selector->value;
	char excerpt[TP_EXCERPT_MAX];

	/* A name says which id it stands for: that is what the earlier entry has. */
	if (yt_scalar_equals(key, "user") || yt_scalar_equals(key, "group"))
		return tp_schema_report(schema, key,
					"%.*s '%s' (%s %u) has an entry already (at line %u, column "
					"%u): merge their tenants into one entry",
					(int)key->scalar.len, key->scalar.text,
					tp_excerpt(excerpt, value->scalar.text, value->scalar.len),
					id_kind, l->id, f->selector->key->line,
					f->selector->key->column);
	return tp_schema_report(schema, key,
				"%s %u has an entry already (at line %u, column %u): merge their "
				"tenants into one entry", id_kind, l->id,
				f->selector->key->line, f->selector->key->column);
}

static int check_callers(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	struct daemon_config *cfg = ctx->cfg;
	const struct yt_node *value = pair->value;
	size_t count = value->kind == YT_SEQUENCE ? value->sequence.count : 0;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (count == 0)
		return tp_schema_report(schema, value,
					"'callers' must not be empty: nobody could use the daemon; "
					"leave the key out for the default (uid 0, every tenant)");
	cfg->callers = calloc(count, sizeof(*cfg->callers));
	ctx->refs = calloc(count, sizeof(*ctx->refs));
	if (!cfg->callers || !ctx->refs)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		r = check_caller(ctx, value->sequence.items[i]);
		if (r < 0)
			return r;
	}
	return tp_schema_find_duplicates(schema, ctx->refs, ctx->ref_count, sizeof(*ctx->refs),
					 caller_ref_compare, caller_duplicate, NULL);
}


/* ---- sinks -------------------------------------------------------------- */

static const char *const sink_type_names[] = {
	[DAEMON_SINK_SYSLOG_TCP] = "syslog-tcp",   [DAEMON_SINK_SYSLOG_TLS] = "syslog-tls",
	[DAEMON_SINK_SYSLOG_UNIX] = "syslog-unix", [DAEMON_SINK_JSONL_FILE] = "jsonl-file",
	[DAEMON_SINK_JSONL_UNIX] = "jsonl-unix",
};

/* RFC 5424 6.2.1's facilities by name; kern (0) is the kernel's alone. */
static const char *const facility_names[24] = {
	[1] = "user",	  [2] = "mail",	    [3] = "daemon",   [4] = "auth",
	[5] = "syslog",	  [6] = "lpr",	    [7] = "news",     [8] = "uucp",
	[9] = "cron",	  [10] = "authpriv", [11] = "ftp",    [16] = "local0",
	[17] = "local1",  [18] = "local2",  [19] = "local3",  [20] = "local4",
	[21] = "local5",  [22] = "local6",  [23] = "local7",
};

const char *daemon_sink_type_name(enum daemon_sink_type type)
{
	return type >= DAEMON_SINK_SYSLOG_TCP && type <= DAEMON_SINK_JSONL_UNIX ?
		       sink_type_names[type] : "unknown";
}

static void daemon_sink_clear(struct daemon_sink *sink)
{
	free(sink->name);
	free(sink->address);
	free(sink->path);
	free(sink->ca_file);
	free(sink->cert_file);
	free(sink->key_file);
	free(sink->server_name);
	*sink = (struct daemon_sink){ 0 };
}

static void daemon_sinks_free(struct daemon_sink *sinks, size_t count)
{
	for (size_t i = 0; i < count; i++)
		daemon_sink_clear(&sinks[i]);
	free(sinks);
}

const struct daemon_sink *daemon_config_sink(const struct daemon_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->sink_count; i++)
		if (strcmp(cfg->sinks[i].name, name) == 0)
			return &cfg->sinks[i];
	return NULL;
}

static bool sink_name_valid(const char *text, size_t len)
{
	if (len == 0 || len > DAEMON_SINK_NAME_MAX || strlen(text) != len ||
	    !((text[0] >= 'a' && text[0] <= 'z') || (text[0] >= 'A' && text[0] <= 'Z') ||
	      (text[0] >= '0' && text[0] <= '9')))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z') ||
		      (text[i] >= '0' && text[i] <= '9') || text[i] == '.' || text[i] == '_' ||
		      text[i] == '-'))
			return false;
	return true;
}

enum sink_field {
	SINK_NAME, SINK_TYPE, SINK_ADDRESS, SINK_PATH, SINK_CA_FILE, SINK_CERT_FILE,
	SINK_KEY_FILE, SINK_SERVER_NAME, SINK_FACILITY, SINK_FORMAT, SINK_SPOOL_BYTES,
	SINK_DEFAULT,
};

/* An absolute path, normalised, into *out. */
static int sink_path(struct tp_schema *schema, const struct tp_schema_key *key,
		     const struct yt_node *value, char **out)
{
	char excerpt[TP_EXCERPT_MAX];
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	if (value->scalar.text[0] != '/')
		return tp_schema_report(schema, value,
					"'%s' must be an absolute path (starting with '/'), got '%s'",
					key->name,
					tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
	free(*out);
	*out = tp_path_normalize(value->scalar.text);
	return *out ? 0 : -ENOMEM;
}

static int check_sink_field(struct tp_schema *schema, const struct tp_schema_key *key,
			    const struct yt_pair *pair)
{
	struct daemon_sink *sink = ctx_of(schema)->sink;
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX], excerpt[TP_EXCERPT_MAX];
	struct sockaddr_storage addr;
	socklen_t addr_len;
	uint64_t v;
	bool flag;
	int r, i;

	switch ((enum sink_field)key->arg) {
	case SINK_NAME:
		r = tp_schema_expect_text(schema, key, value);
		if (r <= 0)
			return r;
		if (!sink_name_valid(value->scalar.text, value->scalar.len))
			return tp_schema_report(schema, value,
						"invalid sink name '%s': 1 to %d letters, digits, "
						"'.', '_' or '-', starting with a letter or digit",
						tp_excerpt(excerpt, value->scalar.text,
							   value->scalar.len),
						DAEMON_SINK_NAME_MAX);
		sink->name = strndup(value->scalar.text, value->scalar.len);
		return sink->name ? 0 : -ENOMEM;
	case SINK_TYPE:
		i = tp_schema_check_enum(schema, key, value, sink_type_names + 1,
					 ARRAY_SIZE(sink_type_names) - 1);
		if (i >= 0)
			sink->type = (enum daemon_sink_type)(i + 1);
		return tp_schema_enum_status(i);
	case SINK_ADDRESS:
		r = tp_schema_expect_text(schema, key, value);
		if (r <= 0)
			return r;
		r = syslog_address_parse(value->scalar.text, &addr, &addr_len, NULL);
		if (r == -EINVAL)
			return tp_schema_report(schema, value,
						"invalid 'address' '%s': write an IPv4 address and "
						"port (192.0.2.10:6514) or an IPv6 one in brackets "
						"([2001:db8::10]:6514); names are not resolved (give "
						"the name to check as 'server_name')",
						tp_excerpt(excerpt, value->scalar.text,
							   value->scalar.len));
		if (r < 0)
			return r;
		sink->address = strndup(value->scalar.text, value->scalar.len);
		return sink->address ? 0 : -ENOMEM;
	case SINK_PATH:
		return sink_path(schema, key, value, &sink->path);
	case SINK_CA_FILE:
		return sink_path(schema, key, value, &sink->ca_file);
	case SINK_CERT_FILE:
		return sink_path(schema, key, value, &sink->cert_file);
	case SINK_KEY_FILE:
		return sink_path(schema, key, value, &sink->key_file);
	case SINK_SERVER_NAME:
		r = tp_schema_expect_text(schema, key, value);
		if (r <= 0)
			return r;
		if (tp_parse_hostname(value->scalar.text, value->scalar.len, &sink->server_name,
				      why, sizeof(why)) < 0)
			return tp_schema_invalid(schema, key, value, why);
		return 0;
	case SINK_FACILITY:	/* check_sink_facility */
		return 0;
	case SINK_FORMAT:
		if (yt_scalar_equals(value, "json") || yt_scalar_equals(value, "ocsf")) {
			sink->ocsf = yt_scalar_equals(value, "ocsf");
			return 0;
		}
		return tp_schema_report(schema, value,
					"'format' must be \"json\" (the record's JSON object, as "
					"the records file has it) or \"ocsf\" (an OCSF 1.x event: "
					"docs/audit.md, \"OCSF\")");
	case SINK_SPOOL_BYTES:
		r = tp_schema_expect_text(schema, key, value);
		if (r <= 0)
			return r;
		if (tp_parse_size(value->scalar.text, value->scalar.len, SPOOL_MIN_BYTES,
				  1ull << 40, &v, why, sizeof(why)) < 0)
			return tp_schema_invalid(schema, key, value, why);
		sink->spool_bytes = v;
		return 0;
	case SINK_DEFAULT:
		r = tp_schema_expect_text(schema, key, value);
		if (r <= 0)
			return r;
		if (tp_parse_bool(value->scalar.text, value->scalar.len, &flag, why, sizeof(why)) < 0)
			return tp_schema_invalid(schema, key, value, why);
		sink->is_default = flag;
		return 0;
	}
	return 0;
}

/* A facility by its name (RFC 5424 6.2.1); kern is the kernel's alone. */
static int check_sink_facility(struct tp_schema *schema, const struct tp_schema_key *key,
			       const struct yt_pair *pair)
{
	struct daemon_sink *sink = ctx_of(schema)->sink;
	const struct yt_node *value = pair->value;
	char excerpt[TP_EXCERPT_MAX];
	int r = tp_schema_expect_text(schema, key, value);

	if (r <= 0)
		return r;
	for (unsigned int f = 1; f < ARRAY_SIZE(facility_names); f++) {
		if (facility_names[f] && yt_scalar_equals(value, facility_names[f])) {
			sink->facility = f;
			return 0;
		}
	}
	return tp_schema_report(schema, value,
				"invalid 'facility' '%s': a syslog facility name (local0 to "
				"local7, authpriv, auth, daemon, user, ...; not kern)",
				tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
}

static const struct tp_schema_key sink_keys[] = {
	TP_SCHEMA_KEY("name", check_sink_field, true, SINK_NAME),
	TP_SCHEMA_KEY("type", check_sink_field, true, SINK_TYPE),
	TP_SCHEMA_KEY("address", check_sink_field, false, SINK_ADDRESS),
	TP_SCHEMA_KEY("path", check_sink_field, false, SINK_PATH),
	TP_SCHEMA_KEY("ca_file", check_sink_field, false, SINK_CA_FILE),
	TP_SCHEMA_KEY("cert_file", check_sink_field, false, SINK_CERT_FILE),
	TP_SCHEMA_KEY("key_file", check_sink_field, false, SINK_KEY_FILE),
	TP_SCHEMA_KEY("server_name", check_sink_field, false, SINK_SERVER_NAME),
	TP_SCHEMA_KEY("facility", check_sink_facility, false, SINK_FACILITY),
	TP_SCHEMA_KEY("format", check_sink_field, false, SINK_FORMAT),
	TP_SCHEMA_KEY("spool_bytes", check_sink_field, false, SINK_SPOOL_BYTES),
	TP_SCHEMA_KEY("default", check_sink_field, false, SINK_DEFAULT),
};

/* Which keys a type needs and allows: reported at the entry. */
static int check_sink_keys(struct tp_schema *schema, const struct yt_node *item,
			   const struct daemon_sink *sink)
{
	bool syslog = sink->type <= DAEMON_SINK_SYSLOG_UNIX;
	bool net = sink->type == DAEMON_SINK_SYSLOG_TCP || sink->type == DAEMON_SINK_SYSLOG_TLS;
	bool tls = sink->type == DAEMON_SINK_SYSLOG_TLS;
	const char *type = daemon_sink_type_name(sink->type);
	static const struct {
		const char *key;
		int needs;	/* 0 syslog-*, 1 syslog-tcp/tls, 2 syslog-tls, 3 not syslog-tcp/tls,
				 * 4 spooled (syslog-*, jsonl-unix) */
	} scoped[] = {
		{ "address", 1 }, { "path", 3 }, { "ca_file", 2 }, { "cert_file", 2 },
		{ "key_file", 2 }, { "server_name", 2 }, { "facility", 0 },
		{ "spool_bytes", 4 },
	};
	int r = 0;

	for (size_t i = 0; i < item->mapping.count && r >= 0; i++) {
		const struct yt_pair *pair = &item->mapping.pairs[i];

		for (size_t k = 0; k < ARRAY_SIZE(scoped); k++) {
			int needs = scoped[k].needs;
			bool allowed = needs == 0 ? syslog : needs == 1 ? net : needs == 2 ? tls :
				       needs == 3 ? !net : sink->type != DAEMON_SINK_JSONL_FILE;

			if (yt_scalar_equals(pair->key, scoped[k].key) && !allowed)
				r = tp_schema_report(schema, pair->key,
						     "'%s' does not apply to a sink of type '%s'",
						     scoped[k].key, type);
		}
	}
	if (r >= 0 && net && !sink->address)
		r = tp_schema_report(schema, item, "a sink of type '%s' needs 'address' "
					       "(IPv4:port or [IPv6]:port)", type);
	if (r >= 0 && !net && !sink->path)
		r = tp_schema_report(schema, item, "a sink of type '%s' needs 'path' (%s)", type,
				     sink->type == DAEMON_SINK_SYSLOG_UNIX ? "a datagram socket, "
				     "e.g. /dev/log" : sink->type == DAEMON_SINK_JSONL_FILE ?
				     "the file records are appended to" : "a stream socket");
	if (r >= 0 && tls && !sink->ca_file)
		r = tp_schema_report(schema, item, "a sink of type 'syslog-tls' needs 'ca_file': "
					       "the collector's certificate is always checked");
	if (r >= 0 && tls && !sink->cert_file != !sink->key_file)
		r = tp_schema_report(schema, item, "'cert_file' and 'key_file' go together (a "
					       "client certificate and its key)");
	return r;
}

/* By name; entries whose name was invalid (NULL) first, never duplicates. */
static int sink_ref_compare(const void *a, const void *b)
{
	const char *x = ((const struct daemon_sink *)a)->name;
	const char *y = ((const struct daemon_sink *)b)->name;

	if (!x || !y)
		return !y - !x;
	return strcmp(x, y);
}

static int sink_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct daemon_sink *l = later, *f = first;

	if (!l->name)
		return 0;
	return tp_schema_report_at(schema, (struct tp_pos){ l->line, l->column },
				   "sink name '%s' is used already (at line %u, column %u): names "
				   "are unique", l->name, f->line, f->column);
}

static int check_sinks(struct tp_schema *schema, const struct tp_schema_key *key,
		       const struct yt_pair *pair)
{
	struct config_ctx *ctx = ctx_of(schema);
	struct daemon_config *cfg = ctx->cfg;
	const struct yt_node *value = pair->value;
	size_t count = value->kind == YT_SEQUENCE ? value->sequence.count : 0;
	int r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);

	if (r <= 0)
		return r;
	if (count == 0)
		return tp_schema_report(schema, value, "'sinks' must not be empty: leave the key "
						       "out for none");
	cfg->sinks = calloc(count, sizeof(*cfg->sinks));
	if (!cfg->sinks)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct daemon_sink *sink = &cfg->sinks[cfg->sink_count];
		size_t before = schema->diags->count;

		if (item->kind != YT_MAPPING) {
			r = tp_schema_report(schema, item, "entries of 'sinks' must be mappings with "
							   "'name' and 'type'; got %s",
					     yt_node_describe(item));
			if (r < 0)
				return r;
			continue;
		}
		*sink = (struct daemon_sink){ .line = item->line, .column = item->column,
					      .spool_bytes = SYSLOG_DEFAULT_SPOOL_BYTES };
		ctx->sink = sink;
		r = tp_schema_check_mapping(schema, "sinks", item, item, sink_keys,
					    ARRAY_SIZE(sink_keys));
		if (r >= 0 && schema->diags->count == before)
			r = check_sink_keys(schema, item, sink);
		ctx->sink = NULL;
		/* kept with its problems too: a later entry may repeat its name */
		cfg->sink_count++;
		if (r < 0)
			return r;
	}
	return tp_schema_find_duplicates(schema, cfg->sinks, cfg->sink_count, sizeof(*cfg->sinks),
					 sink_ref_compare, sink_duplicate, NULL);
}

/* ---- node_log ---------------------------------------------------------- */

enum node_log_field {
	NODE_LOG_ENABLED,
	NODE_LOG_KEY_FILE,
	NODE_LOG_FILE_BYTES,
	NODE_LOG_MAX_BYTES,
	NODE_LOG_CHECKPOINT_RECORDS,
	NODE_LOG_CHECKPOINT_SECONDS,
};

static int check_node_log_field(struct tp_schema *schema, const struct tp_schema_key *key,
				const struct yt_pair *pair)
{
	struct daemon_node_log *nl = &ctx_of(schema)->cfg->node_log;
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t v;
	bool flag;
	int r;

	if (key->arg == NODE_LOG_KEY_FILE)
		return sink_path(schema, key, value, &nl->key_file);
	r = tp_schema_expect_text(schema, key, value);
	if (r <= 0)
		return r;
	switch ((enum node_log_field)key->arg) {
	case NODE_LOG_ENABLED:
		r = tp_parse_bool(value->scalar.text, value->scalar.len, &flag, why, sizeof(why));
		nl->enabled = flag;
		break;
	case NODE_LOG_FILE_BYTES:
	case NODE_LOG_MAX_BYTES:
		r = tp_parse_size(value->scalar.text, value->scalar.len, NODELOG_MIN_FILE_BYTES,
				  1ull << 40, &v, why, sizeof(why));
		*(key->arg == NODE_LOG_FILE_BYTES ? &nl->file_bytes : &nl->max_bytes) = v;
		break;
	case NODE_LOG_CHECKPOINT_RECORDS:
		r = tp_parse_uint(value->scalar.text, value->scalar.len, 1, 1000000000, &v, why,
				  sizeof(why));
		nl->checkpoint_records = v;
		break;
	case NODE_LOG_CHECKPOINT_SECONDS:
		r = tp_parse_uint(value->scalar.text, value->scalar.len, 1, 86400, &v, why,
				  sizeof(why));
		nl->checkpoint_ms = v * 1000;
		break;
	case NODE_LOG_KEY_FILE:
		break;
	}
	return r < 0 ? tp_schema_invalid(schema, key, value, why) : 0;
}

static const struct tp_schema_key node_log_keys[] = {
	TP_SCHEMA_KEY("enabled", check_node_log_field, false, NODE_LOG_ENABLED),
	TP_SCHEMA_KEY("key_file", check_node_log_field, false, NODE_LOG_KEY_FILE),
	TP_SCHEMA_KEY("file_bytes", check_node_log_field, false, NODE_LOG_FILE_BYTES),
	TP_SCHEMA_KEY("max_bytes", check_node_log_field, false, NODE_LOG_MAX_BYTES),
	TP_SCHEMA_KEY("checkpoint_records", check_node_log_field, false,
		      NODE_LOG_CHECKPOINT_RECORDS),
	TP_SCHEMA_KEY("checkpoint_seconds", check_node_log_field, false,
		      NODE_LOG_CHECKPOINT_SECONDS),
};

static int check_node_log(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_pair *pair)
{
	const struct daemon_node_log *nl = &ctx_of(schema)->cfg->node_log;
	size_t before = schema->diags->count;
	int r = tp_schema_expect_kind(schema, key, pair->value, YT_MAPPING);

	if (r <= 0)
		return r;
	r = tp_schema_check_mapping(schema, "node_log", pair->key, pair->value, node_log_keys,
				    ARRAY_SIZE(node_log_keys));
	if (r >= 0 && schema->diags->count == before && nl->max_bytes < 2 * nl->file_bytes)
		r = tp_schema_report(schema, pair->value,
				     "'node_log.max_bytes' (%llu) must be at least twice "
				     "'file_bytes' (%llu): the file being written and one rotated",
				     (unsigned long long)nl->max_bytes,
				     (unsigned long long)nl->file_bytes);
	return r < 0 ? r : 0;
}

static const struct tp_schema_key top_keys[] = {
	TP_SCHEMA_KEY("version", check_version, true, 0),
	TP_SCHEMA_KEY("socket", check_path, false, PATH_SOCKET),
	TP_SCHEMA_KEY("socket_group", check_socket_group, false, 0),
	TP_SCHEMA_KEY("state_dir", check_path, false, PATH_STATE_DIR),
	TP_SCHEMA_KEY("max_runs", check_max_runs, false, 0),
	TP_SCHEMA_KEY("audit_rate_limit", check_audit_rate_limit, false, 0),
	TP_SCHEMA_KEY("callers", check_callers, false, 0),
	TP_SCHEMA_KEY("sinks", check_sinks, false, 0),
	TP_SCHEMA_KEY("node_log", check_node_log, false, 0),
};

/* ---- entry points ------------------------------------------------------ */

struct parse_request {
	const struct daemon_config_files *files;
	struct daemon_config *out;
};

static void account_file_close(struct account_file *file)
{
	if (file->stream)
		fclose(file->stream);
	file->stream = NULL;
}

/* A tp_schema_parse_fn: `out` is a struct parse_request. */
static int parse_into(const char *name, const char *data, size_t len, void *out,
		      struct tp_diags *diags)
{
	const struct parse_request *req = out;
	_cleanup_(daemon_config_freep) struct daemon_config cfg = { 0 };
	_cleanup_(yt_node_freep) struct yt_node *root = NULL;
	struct config_ctx ctx = {
		.schema = { .name = name, .diags = diags },
		.cfg = &cfg,
		.passwd.path = req->files && req->files->passwd ? req->files->passwd
								: DEFAULT_PASSWD,
		.group.path = req->files && req->files->group ? req->files->group
							      : DEFAULT_GROUP,
	};
	size_t first = diags->count;
	int r;

	r = tp_schema_load(name, "daemon configuration", data, len, DAEMON_CONFIG_MAX_BYTES,
			   &root, diags);
	if (r < 0)
		return r == -EFBIG ? -EINVAL : r;
	r = set_scalar_defaults(&cfg);
	if (r >= 0)
		r = tp_schema_check_document(&ctx.schema, root,
					     "the daemon configuration is empty: it needs at least "
					     "'version: 1' (without the file the daemon uses its "
					     "defaults)",
					     "the daemon configuration must be a mapping of keys",
					     top_keys, ARRAY_SIZE(top_keys));
	account_file_close(&ctx.passwd);
	account_file_close(&ctx.group);
	free(ctx.refs);
	free_strings(ctx.entry.tenants, ctx.entry.tenant_count);
	for (int i = 0; i < 2; i++)
		free_strings(ctx.entry.lists[i], ctx.entry.list_count[i]);
	if (r < 0)
		return r;
	if (diags->count > first)
		return -EINVAL;
	if (!cfg.callers) {
		r = set_default_callers(&cfg);
		if (r < 0)
			return r;
	}
	*req->out = cfg;
	cfg = (struct daemon_config){ 0 };
	return 0;
}

int daemon_config_parse(const char *name, const char *text, size_t len,
			const struct daemon_config_files *files, struct daemon_config *cfg,
			struct tp_diags *diags)
{
	struct parse_request req = { files, cfg };

	if (!cfg)
		return -EINVAL;
	return tp_schema_parse(name, text, len, parse_into, &req, diags);
}

/* Drops the diagnostics from index `first` on. */
static void diags_truncate(struct tp_diags *diags, size_t first)
{
	for (size_t i = first; i < diags->count; i++) {
		free(diags->items[i].file);
		free(diags->items[i].message);
	}
	if (first < diags->count)
		diags->count = first;
}

int daemon_config_load(const char *path, const struct daemon_config_files *files,
		       struct daemon_config *cfg, struct tp_diags *diags)
{
	_cleanup_(tp_diags_freep) struct tp_diags scratch = { 0 };
	struct tp_diags *list = diags ? diags : &scratch;
	_cleanup_free_ char *data = NULL;
	size_t first = list->count, len = 0;
	int r;

	if (!cfg)
		return -EINVAL;
	if (!path)
		path = DAEMON_CONFIG_PATH;
	r = tp_file_read(path, DAEMON_CONFIG_MAX_BYTES, &data, &len, list);
	if (r == -ENOENT) {
		/* No file is not an error: the caller gets the defaults, and decides. */
		diags_truncate(list, first);
		r = daemon_config_defaults(cfg);
		return r < 0 ? r : -ENOENT;
	}
	if (r < 0)
		return r;
	return daemon_config_parse(path, data, len, files, cfg, list);
}

/* ---- who may call ------------------------------------------------------ */

static bool caller_matches(const struct daemon_caller *caller, uint32_t uid,
			   const uint32_t *gids, size_t gid_count)
{
	if (caller->kind == DAEMON_CALLER_UID)
		return caller->id == uid;
	for (size_t i = 0; i < gid_count; i++)
		if (gids[i] == caller->id)
			return true;
	return false;
}

static bool caller_has_tenant(const struct daemon_caller *caller, const char *tenant)
{
	if (caller->any_tenant)
		return true;
	for (size_t i = 0; i < caller->tenant_count; i++)
		if (strcmp(caller->tenants[i], tenant) == 0)
			return true;
	return false;
}

bool daemon_config_allows(const struct daemon_config *cfg, uint32_t uid, const uint32_t *gids,
			  size_t gid_count, const char *tenant)
{
	if (!cfg || (!gids && gid_count))
		return false;
	/* A name no entry can hold ("*" included) is refused before any entry is asked. */
	if (tenant && !daemon_tenant_valid(tenant))
		return false;
	for (size_t i = 0; i < cfg->caller_count; i++) {
		const struct daemon_caller *caller = &cfg->callers[i];

		if (!caller_matches(caller, uid, gids, gid_count))
			continue;
		if (!tenant || caller_has_tenant(caller, tenant))
			return true;
	}
	return false;
}

bool daemon_config_allows_envelope(const struct daemon_config *cfg, uint32_t uid,
				   const uint32_t *gids, size_t gid_count, const char *digest)
{
	if (!cfg || !digest || (!gids && gid_count))
		return false;
	for (size_t i = 0; i < cfg->caller_count; i++) {
		const struct daemon_caller *caller = &cfg->callers[i];

		if (!caller_matches(caller, uid, gids, gid_count))
			continue;
		if (caller->any_envelope)
			return true;
		for (size_t j = 0; j < caller->envelope_count; j++)
			if (strcmp(caller->envelopes[j], digest) == 0)
				return true;
	}
	return false;
}

bool daemon_config_allows_workspace(const struct daemon_config *cfg, uint32_t uid,
				    const uint32_t *gids, size_t gid_count, const char *path)
{
	if (!cfg || !path || path[0] != '/' || (!gids && gid_count))
		return false;
	if (uid == 0)
		return daemon_config_allows(cfg, uid, gids, gid_count, NULL);
	for (size_t i = 0; i < cfg->caller_count; i++) {
		const struct daemon_caller *caller = &cfg->callers[i];

		if (!caller_matches(caller, uid, gids, gid_count))
			continue;
		for (size_t j = 0; j < caller->workspace_count; j++)
			if (tp_path_within(path, caller->workspaces[j]))
				return true;
	}
	return false;
}
