// SPDX-License-Identifier: GPL-2.0
/*
 * The task contract (seed 002, "Turn the Request Into a Task Contract") and
 * the check that an envelope grants no more than its contract.
 *
 * A contract is what the requester allowed the task; the envelope is what
 * the sandbox will grant the run.  They are written by different people at
 * different times, so the host checks one against the other before a run
 * starts instead of trusting that whoever wrote the envelope read the
 * contract.  Only three parts of a contract describe authority the sandbox
 * can see: allowed_paths (writes inside the workspace), network.allow
 * (destinations) and max_wall_clock (the run's time).  forbidden,
 * max_tool_calls, max_turns and max_cost restrict what no kernel hook
 * observes: tp_contract_check() says so in its notes instead of pretending
 * the sandbox enforces them.  The rest (task_id, goal, workspace, approvals,
 * verification, deliverable) is workflow for the control plane: validated
 * here, enforced by no one in this library.
 *
 * Parsing is as strict as the envelope's: unknown keys, wrong types, bad
 * values and duplicate entries are all errors, reported in one pass in file
 * order.
 *
 * Coverage is checked entry by entry: an envelope entry must lie within one
 * contract entry.  For paths that is exact (a subtree is never the union of
 * finitely many other entries).  For destinations it is conservative: an
 * envelope entry covered only by the union of several contract entries (two
 * port ranges that meet) is refused, never the other way round.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policyc/policyc_internal.h"
#include "policyc/schema_internal.h"
#include "policyc/values.h"
#include "policyc/yaml_tree_internal.h"

/* A contract is a page of YAML; a megabyte is generous and bounds the tree. */
#define CONTRACT_MAX_BYTES (1u << 20)
#define TASK_ID_MAX 64
/* A relative pattern never gets shorter once resolved against the workspace. */
/* Room for a pattern's reason: up to three escaped excerpts and the words around them. */
/* How many contract entries a diagnostic lists before "and N more". */
#define LISTED_MAX 8

struct string_entry {
	char *text;
	struct tp_pos pos;
};

struct string_list {
	struct string_entry *items;	/* in file order */
	size_t count;
};

struct tp_contract {
	char *name;			/* file name, for references from envelope diagnostics */
	char *task_id;
	char *goal;
	char *repository;
	char *ref;
	/* absent: the task may write nothing */
	bool has_allowed_paths;
	struct tp_pos allowed_paths_pos;
	struct tp_path_list allowed_paths;	/* relative, in file order */
	size_t *allowed_paths_order;	/* indices, by path: for lookups */
	/* absent: the task may reach nothing */
	bool has_network_allow;
	struct tp_pos network_allow_pos;
	struct tp_destination *allow;	/* in file order */
	size_t allow_count;
	size_t *allow_order;		/* indices, by destination_compare(): for lookups */
	struct string_list forbidden;
	struct string_list approvals;
	struct string_list verification;
	char *deliverable;
	/* 0: not set */
	uint64_t max_wall_clock_ms;
	struct tp_pos max_wall_clock_pos;
	uint64_t max_tool_calls;
	uint64_t max_turns;
	char *max_cost;			/* NULL: not set */
};

/* ---- helpers ----------------------------------------------------------- */

static void string_list_free(struct string_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->items[i].text);
	free(list->items);
	*list = (struct string_list){ 0 };
}

static void path_list_free(struct tp_path_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->items[i].path);
	free(list->items);
	*list = (struct tp_path_list){ 0 };
}

void tp_contract_free(struct tp_contract *contract)
{
	if (!contract)
		return;
	free(contract->name);
	free(contract->task_id);
	free(contract->goal);
	free(contract->repository);
	free(contract->ref);
	path_list_free(&contract->allowed_paths);
	free(contract->allowed_paths_order);
	for (size_t i = 0; i < contract->allow_count; i++)
		free(contract->allow[i].host);
	free(contract->allow);
	free(contract->allow_order);
	string_list_free(&contract->forbidden);
	string_list_free(&contract->approvals);
	string_list_free(&contract->verification);
	free(contract->deliverable);
	free(contract->max_cost);
	free(contract);
}

static void tp_contract_freep(struct tp_contract **contract)
{
	tp_contract_free(*contract);
}

/*
 * A path entry as the envelope would write it: a subtree gets "/" and "**"
 * appended ("**" alone for the whole workspace), an exact path is written as
 * is, and the exact workspace itself (relative "") is written ".".
 */
static void format_path(const struct tp_path_entry *entry, char out[TP_EXCERPT_MAX])
{
	_cleanup_free_ char *text = NULL;
	int n;

	if (entry->kind == TP_PATH_SUBTREE) {
		if (entry->path[0] == '\0')
			n = asprintf(&text, "**");
		else if (strcmp(entry->path, "/") == 0)
			n = asprintf(&text, "/**");
		else
			n = asprintf(&text, "%s/**", entry->path);
	} else {
		n = asprintf(&text, "%s", entry->path[0] ? entry->path : ".");
	}
	if (n < 0) {
		/* Only for messages: a cut-off name beats losing the diagnostic. */
		tp_excerpt(out, entry->path, strlen(entry->path));
		return;
	}
	tp_excerpt(out, text, (size_t)n);
}

/* "api.github.com", "*.example.com:443", "192.0.2.0/24:8000-8100", "[2001:db8::1]:53 (udp)". */
static void format_destination(const struct tp_destination *dest, char out[TP_EXCERPT_MAX])
{
	char cidr[TP_CIDR_TEXT_MAX];
	char text[TP_CIDR_TEXT_MAX + 320];
	const char *target = dest->host;
	bool bracket = false;
	size_t n;

	if (!target) {
		tp_format_cidr(dest->addr, dest->prefixlen, cidr);
		target = cidr;
	}
	/* An IPv6 address followed by a port needs brackets, as in the envelope. */
	if (!(dest->port_min == 1 && dest->port_max == 65535))
		bracket = strchr(target, ':') != NULL;
	n = (size_t)snprintf(text, sizeof(text), bracket ? "[%.255s]" : "%.255s", target);
	if (dest->port_min == dest->port_max)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ":%u", dest->port_min);
	else if (!(dest->port_min == 1 && dest->port_max == 65535))
		n += (size_t)snprintf(text + n, sizeof(text) - n, ":%u-%u", dest->port_min,
				      dest->port_max);
	if (dest->protocols == TP_PROTO_TCP)
		snprintf(text + n, sizeof(text) - n, " (tcp)");
	else if (dest->protocols == TP_PROTO_UDP)
		snprintf(text + n, sizeof(text) - n, " (udp)");
	tp_excerpt(out, text, strlen(text));
}

/* ---- the schema -------------------------------------------------------- */

struct contract_ctx {
	struct tp_schema schema;
	struct tp_contract *contract;
	const char *dup_list;	/* the list a duplicate check is on, for messages */
};

static struct contract_ctx *ctx_of(struct tp_schema *schema)
{
	return TP_SCHEMA_CONTAINER(schema, struct contract_ctx);
}

/*
 * Checks that `node` is a non-empty string without NUL bytes; `what` names it
 * in messages.  Returns 1 (and a copy in *out when out is not NULL), 0 after
 * reporting, or -ENOMEM.
 */
static int take_string(struct tp_schema *schema, const char *what, const struct yt_node *node,
		       char **out)
{
	int r;

	if (node->kind != YT_SCALAR || node->scalar.is_null || node->scalar.len == 0) {
		bool empty = node->kind == YT_SCALAR && !node->scalar.is_null;

		r = tp_schema_report(schema, node, "%s must be a non-empty string, got %s", what,
				     empty ? "an empty string" : yt_node_describe(node));
		return r < 0 ? r : 0;
	}
	if (memchr(node->scalar.text, '\0', node->scalar.len)) {
		r = tp_schema_report(schema, node, "%s contains a NUL byte", what);
		return r < 0 ? r : 0;
	}
	if (out) {
		*out = strndup(node->scalar.text, node->scalar.len);
		if (!*out)
			return -ENOMEM;
	}
	return 1;
}

static int check_string(struct tp_schema *schema, const struct tp_schema_key *key,
			const struct yt_pair *pair, char **out)
{
	char what[80];
	int r;

	snprintf(what, sizeof(what), "'%s'", tp_schema_label(key));
	r = take_string(schema, what, pair->value, out);
	return r < 0 ? r : 0;
}

static int check_task_id(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_pair *pair)
{
	struct contract_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	char excerpt[TP_EXCERPT_MAX];
	size_t len;
	int r;

	r = take_string(schema, "'task_id'", value, NULL);
	if (r <= 0)
		return r;
	/* It names records and directories: no separators, no spaces, no escapes. */
	len = value->scalar.len;
	if (len > TASK_ID_MAX ||
	    strspn(value->scalar.text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				       "0123456789._-") != len)
		return tp_schema_report(schema, value,
					"'task_id' must be 1 to %d characters of A-Z, a-z, 0-9, "
					"'.', '_' and '-', got '%s'", TASK_ID_MAX,
					tp_excerpt(excerpt, value->scalar.text, len));
	ctx->contract->task_id = strndup(value->scalar.text, len);
	return ctx->contract->task_id ? 0 : -ENOMEM;
}

static int check_goal(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_pair *pair)
{
	return check_string(schema, key, pair, &ctx_of(schema)->contract->goal);
}

static int check_repository(struct tp_schema *schema, const struct tp_schema_key *key,
			    const struct yt_pair *pair)
{
	return check_string(schema, key, pair, &ctx_of(schema)->contract->repository);
}

static int check_ref(struct tp_schema *schema, const struct tp_schema_key *key,
		     const struct yt_pair *pair)
{
	return check_string(schema, key, pair, &ctx_of(schema)->contract->ref);
}

static int check_deliverable(struct tp_schema *schema, const struct tp_schema_key *key,
			     const struct yt_pair *pair)
{
	return check_string(schema, key, pair, &ctx_of(schema)->contract->deliverable);
}

static int check_max_cost(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_pair *pair)
{
	return check_string(schema, key, pair, &ctx_of(schema)->contract->max_cost);
}

/* ---- string lists: forbidden, approvals, verification ------------------- */

static int string_entry_compare(const void *a, const void *b)
{
	const struct string_entry *x = a, *y = b;

	return strcmp(x->text, y->text);
}

static int string_entry_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct string_entry *l = later, *f = first;
	char excerpt[TP_EXCERPT_MAX];

	return tp_schema_report_at(schema, l->pos, "duplicate entry '%s' in '%s' (first at %u:%u)",
				   tp_excerpt(excerpt, l->text, strlen(l->text)),
				   ctx_of(schema)->dup_list, f->pos.line, f->pos.column);
}

static int check_string_list(struct tp_schema *schema, const struct tp_schema_key *key,
			     const struct yt_pair *pair, struct string_list *out)
{
	const struct yt_node *value = pair->value;
	char what[96];
	size_t n;
	int r;

	r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);
	if (r <= 0)
		return r;
	n = value->sequence.count;
	out->items = calloc(n ? n : 1, sizeof(*out->items));
	if (!out->items)
		return -ENOMEM;

	snprintf(what, sizeof(what), "each entry of '%s'", tp_schema_label(key));
	for (size_t i = 0; i < n; i++) {
		const struct yt_node *item = value->sequence.items[i];
		char *text = NULL;

		r = take_string(schema, what, item, &text);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		out->items[out->count++] = (struct string_entry){ text, tp_node_pos(item) };
	}
	ctx_of(schema)->dup_list = tp_schema_label(key);
	return tp_schema_find_duplicates(schema, out->items, out->count, sizeof(*out->items),
					 string_entry_compare, string_entry_duplicate, NULL);
}

static int check_forbidden(struct tp_schema *schema, const struct tp_schema_key *key,
			   const struct yt_pair *pair)
{
	return check_string_list(schema, key, pair, &ctx_of(schema)->contract->forbidden);
}

static int check_approvals(struct tp_schema *schema, const struct tp_schema_key *key,
			   const struct yt_pair *pair)
{
	return check_string_list(schema, key, pair, &ctx_of(schema)->contract->approvals);
}

static int check_verification(struct tp_schema *schema, const struct tp_schema_key *key,
			      const struct yt_pair *pair)
{
	return check_string_list(schema, key, pair, &ctx_of(schema)->contract->verification);
}

/* ---- allowed_paths ----------------------------------------------------- */

/* By path alone: an exact entry and a subtree of one path are adjacent. */
static int path_entry_compare(const void *a, const void *b)
{
	const struct tp_path_entry *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/*
 * Reports duplicates, and a path listed both exact and as a subtree (the
 * envelope refuses that too: one of the two entries says nothing).  Entries
 * of one path are adjacent in `order`, in file order.
 */
static int report_path_duplicates(struct tp_schema *schema, const char *where,
				  const struct tp_path_list *list, const size_t *order)
{
	char excerpt[TP_EXCERPT_MAX], other[TP_EXCERPT_MAX];
	int r;

	for (size_t start = 0, end; start < list->count; start = end) {
		const struct tp_path_entry *first[2] = { NULL, NULL };	/* by kind */

		for (end = start; end < list->count &&
				  strcmp(list->items[order[end]].path,
					 list->items[order[start]].path) == 0;
		     end++) {
			const struct tp_path_entry *entry = &list->items[order[end]];
			const struct tp_path_entry *earlier = first[entry->kind];
			const struct tp_path_entry *opposite = first[!entry->kind];

			format_path(entry, excerpt);
			if (earlier) {
				r = tp_schema_report_at(schema, entry->pos,
							"duplicate entry '%s' in '%s' (first at "
							"%u:%u)", excerpt, where, earlier->pos.line,
							earlier->pos.column);
				if (r < 0)
					return r;
				continue;
			}
			first[entry->kind] = entry;
			if (!opposite)
				continue;
			format_path(opposite, other);
			r = tp_schema_report_at(schema, entry->pos,
						"'%s' in '%s' names the same path as '%s' (at "
						"%u:%u); list either the path or its subtree",
						excerpt, where, other, opposite->pos.line,
						opposite->pos.column);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int check_allowed_paths(struct tp_schema *schema, const struct tp_schema_key *key,
			       const struct yt_pair *pair)
{
	struct contract_ctx *ctx = ctx_of(schema);
	struct tp_contract *contract = ctx->contract;
	const struct yt_node *value = pair->value;
	struct tp_path_list *list = &contract->allowed_paths;
	char why[TP_PATTERN_WHY_MAX];
	size_t n;
	int r;

	r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);
	if (r <= 0)
		return r;
	contract->has_allowed_paths = true;
	contract->allowed_paths_pos = tp_node_pos(pair->key);
	n = value->sequence.count;
	list->items = calloc(n ? n : 1, sizeof(*list->items));
	if (!list->items)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_path_entry *entry = &list->items[list->count];

		if (item->kind != YT_SCALAR || item->scalar.is_null) {
			r = tp_schema_report(schema, item,
					     "each entry of 'allowed_paths' must be a path "
					     "pattern, got %s", yt_node_describe(item));
			if (r < 0)
				return r;
			continue;
		}
		r = tp_parse_path_pattern(item->scalar.text, item->scalar.len,
					  TP_PATTERN_RELATIVE, entry, why, sizeof(why));
		if (r == -EINVAL) {
			r = tp_schema_report(schema, item, "invalid entry in 'allowed_paths': %s",
					     why);
			if (r < 0)
				return r;
			continue;
		}
		if (r < 0)
			return r;
		entry->pos = tp_node_pos(item);
		list->count++;
	}
	contract->allowed_paths_order = tp_schema_sorted_order(list->items, list->count,
							       sizeof(*list->items),
							       path_entry_compare);
	if (!contract->allowed_paths_order)
		return -ENOMEM;
	return report_path_duplicates(schema, "allowed_paths", list, contract->allowed_paths_order);
}

/* ---- network ----------------------------------------------------------- */

/* By what a destination names: address rules (by address, then prefix), then hosts. */
static int destination_key_compare(const struct tp_destination *x, const struct tp_destination *y)
{
	int c;

	if (!x->host != !y->host)
		return x->host ? 1 : -1;
	if (x->host)
		return strcmp(x->host, y->host);
	if ((c = memcmp(x->addr, y->addr, sizeof(x->addr))))
		return c;
	return x->prefixlen < y->prefixlen ? -1 : x->prefixlen > y->prefixlen;
}

/* The key first, so entries naming the same host or block are adjacent. */
static int destination_compare(const void *a, const void *b)
{
	const struct tp_destination *x = a, *y = b;
	int c = destination_key_compare(x, y);

	if (c)
		return c;
	if (x->port_min != y->port_min)
		return x->port_min < y->port_min ? -1 : 1;
	if (x->port_max != y->port_max)
		return x->port_max < y->port_max ? -1 : 1;
	return x->protocols < y->protocols ? -1 : x->protocols > y->protocols;
}

static int destination_duplicate(struct tp_schema *schema, const void *later, const void *first)
{
	const struct tp_destination *l = later, *f = first;
	char excerpt[TP_EXCERPT_MAX];

	format_destination(l, excerpt);
	return tp_schema_report_at(schema, l->pos, "duplicate destination '%s' in 'network.allow' "
				   "(first at %u:%u)", excerpt, f->pos.line, f->pos.column);
}

static int check_allow(struct tp_schema *schema, const struct tp_schema_key *key,
		       const struct yt_pair *pair)
{
	struct contract_ctx *ctx = ctx_of(schema);
	struct tp_contract *contract = ctx->contract;
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	size_t n;
	int r;

	r = tp_schema_expect_kind(schema, key, value, YT_SEQUENCE);
	if (r <= 0)
		return r;
	contract->has_network_allow = true;
	contract->network_allow_pos = tp_node_pos(pair->key);
	n = value->sequence.count;
	contract->allow = calloc(n ? n : 1, sizeof(*contract->allow));
	if (!contract->allow)
		return -ENOMEM;

	for (size_t i = 0; i < n; i++) {
		const struct yt_node *item = value->sequence.items[i];
		struct tp_destination *dest = &contract->allow[contract->allow_count];

		if (item->kind != YT_SCALAR || item->scalar.is_null) {
			r = tp_schema_report(schema, item,
					     "each entry of 'network.allow' must be a destination "
					     "('host', 'host:port', '*.domain', an address or "
					     "CIDR), got %s", yt_node_describe(item));
			if (r < 0)
				return r;
			continue;
		}
		*dest = (struct tp_destination){ 0 };
		r = tp_parse_destination(item->scalar.text, item->scalar.len, dest, why, sizeof(why));
		if (r == -EINVAL) {
			r = tp_schema_report(schema, item,
					     "invalid destination in 'network.allow': %s", why);
			if (r < 0)
				return r;
			continue;
		}
		if (r < 0)
			return r;
		/* A host rule's address is meaningless: keep it out of comparisons. */
		if (dest->host) {
			memset(dest->addr, 0, sizeof(dest->addr));
			dest->prefixlen = 0;
		}
		dest->pos = tp_node_pos(item);
		contract->allow_count++;
	}

	return tp_schema_find_duplicates(schema, contract->allow, contract->allow_count,
					 sizeof(*contract->allow), destination_compare,
					 destination_duplicate, &contract->allow_order);
}

static const struct tp_schema_key network_keys[] = {
	TP_SCHEMA_LABELLED_KEY("allow", "network.allow", check_allow, true),
};

/* ---- workspace --------------------------------------------------------- */

static const struct tp_schema_key workspace_keys[] = {
	TP_SCHEMA_LABELLED_KEY("repository", "workspace.repository", check_repository, true),
	TP_SCHEMA_LABELLED_KEY("ref", "workspace.ref", check_ref, true),
};

/* ---- limits ------------------------------------------------------------ */

static int check_max_wall_clock(struct tp_schema *schema, const struct tp_schema_key *key,
				const struct yt_pair *pair)
{
	struct contract_ctx *ctx = ctx_of(schema);
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	uint64_t ms;
	int r;

	if (value->kind == YT_SCALAR && value->scalar.is_null)
		return tp_schema_report(schema, value,
					"'%s' must be a duration ('10m', '1h30m'), got an empty "
					"value", tp_schema_label(key));
	r = tp_schema_expect_kind(schema, key, value, YT_SCALAR);
	if (r <= 0)
		return r;
	/* The range of the resources.wall_clock it is compared with. */
	r = tp_parse_duration(value->scalar.text, value->scalar.len,
			      tp_limits[TP_LIMIT_WALL_CLOCK_MS].min,
			      tp_limits[TP_LIMIT_WALL_CLOCK_MS].max, &ms, why, sizeof(why));
	if (r == -EINVAL)
		return tp_schema_invalid(schema, key, value, why);
	if (r < 0)
		return r;
	ctx->contract->max_wall_clock_ms = ms;
	ctx->contract->max_wall_clock_pos = tp_node_pos(pair->key);
	return 0;
}

static int check_count(struct tp_schema *schema, const struct tp_schema_key *key,
		       const struct yt_pair *pair, uint64_t *out)
{
	const struct yt_node *value = pair->value;
	char why[TP_WHY_MAX];
	int r;

	if (value->kind == YT_SCALAR && value->scalar.is_null)
		return tp_schema_report(schema, value,
					"'%s' must be a positive integer, got an empty value",
					tp_schema_label(key));
	r = tp_schema_expect_kind(schema, key, value, YT_SCALAR);
	if (r <= 0)
		return r;
	r = tp_parse_uint(value->scalar.text, value->scalar.len, 1, UINT32_MAX, out, why,
			  sizeof(why));
	if (r == -EINVAL)
		return tp_schema_invalid(schema, key, value, why);
	return r;
}

static int check_max_tool_calls(struct tp_schema *schema, const struct tp_schema_key *key,
				const struct yt_pair *pair)
{
	return check_count(schema, key, pair, &ctx_of(schema)->contract->max_tool_calls);
}

static int check_max_turns(struct tp_schema *schema, const struct tp_schema_key *key,
			   const struct yt_pair *pair)
{
	return check_count(schema, key, pair, &ctx_of(schema)->contract->max_turns);
}

/* ---- the contract ------------------------------------------------------ */

static const struct tp_schema_key top_keys[] = {
	TP_SCHEMA_KEY("task_id", check_task_id, true, 0),
	TP_SCHEMA_KEY("goal", check_goal, true, 0),
	TP_SCHEMA_SUBMAPPING("workspace", tp_schema_check_submapping, true, workspace_keys,
			     "workspace"),
	TP_SCHEMA_KEY("allowed_paths", check_allowed_paths, false, 0),
	TP_SCHEMA_SUBMAPPING("network", tp_schema_check_submapping, false, network_keys, "network"),
	TP_SCHEMA_KEY("forbidden", check_forbidden, false, 0),
	TP_SCHEMA_KEY("approvals", check_approvals, false, 0),
	TP_SCHEMA_KEY("verification", check_verification, false, 0),
	TP_SCHEMA_KEY("deliverable", check_deliverable, true, 0),
	TP_SCHEMA_KEY("max_wall_clock", check_max_wall_clock, false, 0),
	TP_SCHEMA_KEY("max_tool_calls", check_max_tool_calls, false, 0),
	TP_SCHEMA_KEY("max_turns", check_max_turns, false, 0),
	TP_SCHEMA_KEY("max_cost", check_max_cost, false, 0),
};

/* A tp_schema_parse_fn: `out` is a struct tp_contract **. */
static int parse_into(const char *name, const char *data, size_t len, void *out,
		      struct tp_diags *diags)
{
	_cleanup_(tp_contract_freep) struct tp_contract *contract = NULL;
	_cleanup_(yt_node_freep) struct yt_node *root = NULL;
	struct contract_ctx ctx;
	size_t first = diags->count;
	int r;

	r = tp_schema_load(name, "contract", data, len, CONTRACT_MAX_BYTES, &root, diags);
	if (r < 0)
		return r;

	contract = calloc(1, sizeof(*contract));
	if (!contract)
		return -ENOMEM;
	contract->name = strdup(name);
	if (!contract->name)
		return -ENOMEM;
	ctx = (struct contract_ctx){ .schema = { name, diags }, .contract = contract };
	r = tp_schema_check_document(&ctx.schema, root,
				     "empty contract: expected a mapping with keys 'task_id', "
				     "'goal', 'workspace' and 'deliverable'",
				     "the contract must be a mapping", top_keys,
				     ARRAY_SIZE(top_keys));
	if (r < 0)
		return r;
	if (diags->count > first)
		return -EINVAL;

	*(struct tp_contract **)out = TAKE_PTR(contract);
	return 0;
}

int tp_contract_parse(const char *name, const char *data, size_t len,
		      struct tp_contract **out, struct tp_diags *diags)
{
	return tp_schema_parse(name, data, len, parse_into, out, diags);
}

int tp_contract_parse_file(const char *path, struct tp_contract **out, struct tp_diags *diags)
{
	return tp_schema_parse_file(path, CONTRACT_MAX_BYTES, parse_into, out, diags);
}

/* ---- the check --------------------------------------------------------- */

struct check_ctx {
	struct tp_schema schema;	/* diagnostics name the envelope */
	const struct tp_contract *contract;
	const struct tp_envelope *env;
	char *allowed_paths_text;	/* "task.yaml:6:1 allows 'README.md', ..." */
	char *network_text;		/* "task.yaml:10:3 allows 'api.github.com'" */
};

/* Where an envelope entry is reported: its own position, or 'sandbox' for a default. */
static struct tp_pos report_pos(const struct check_ctx *ctx, struct tp_pos pos)
{
	return pos.line ? pos : ctx->env->sandbox_pos;
}

/*
 * What the contract allows, for messages: "NAME:L:C allows 'a', 'b'",
 * "NAME:L:C allows none", or `absent` ("NAME has no allowed_paths, ...").
 * Lists LISTED_MAX entries, then "and N more".  Returns a malloc'd string or
 * NULL (ENOMEM).
 */
static char *describe_allowed(const struct tp_contract *contract, bool present, struct tp_pos pos,
			      size_t count, const char *absent,
			      void (*format)(const void *items, size_t i, char out[TP_EXCERPT_MAX]),
			      const void *items)
{
	_cleanup_(fclosep) FILE *stream = NULL;
	_cleanup_free_ char *text = NULL;
	char excerpt[TP_EXCERPT_MAX];
	size_t size = 0;
	int r;

	stream = open_memstream(&text, &size);
	if (!stream)
		return NULL;
	if (!present) {
		fprintf(stream, "%s %s", contract->name, absent);
	} else if (count == 0) {
		fprintf(stream, "%s:%u:%u allows none", contract->name, pos.line, pos.column);
	} else {
		fprintf(stream, "%s:%u:%u allows", contract->name, pos.line, pos.column);
		for (size_t i = 0; i < count && i < LISTED_MAX; i++) {
			format(items, i, excerpt);
			fprintf(stream, "%s '%s'", i ? "," : "", excerpt);
		}
		if (count > LISTED_MAX)
			fprintf(stream, " and %zu more", count - LISTED_MAX);
	}
	r = ferror(stream);
	/* fclose() flushes; only after it is `text` final. */
	if (fclose(TAKE_PTR(stream)) != 0 || r)
		return NULL;
	return TAKE_PTR(text);
}

static void format_path_item(const void *items, size_t i, char out[TP_EXCERPT_MAX])
{
	format_path(&((const struct tp_path_entry *)items)[i], out);
}

static void format_destination_item(const void *items, size_t i, char out[TP_EXCERPT_MAX])
{
	format_destination(&((const struct tp_destination *)items)[i], out);
}

/* Compares an allowed path with the first `len` bytes of `key` (which holds no NUL). */
static int path_prefix_compare(const char *allowed, const char *key, size_t len)
{
	int c = strncmp(allowed, key, len);

	return c ? c : allowed[len] != '\0';
}

/* Whether allowed_paths holds the first `len` bytes of `path` as an entry of `kind`. */
static bool allowed_paths_hold(const struct tp_contract *contract, const char *path, size_t len,
			       enum tp_path_kind kind)
{
	const struct tp_path_entry *items = contract->allowed_paths.items;
	const size_t *order = contract->allowed_paths_order;
	size_t count = contract->allowed_paths.count, low = 0, high = count;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (path_prefix_compare(items[order[mid]].path, path, len) < 0)
			low = mid + 1;
		else
			high = mid;
	}
	/* At most two entries share a path: one exact, one subtree. */
	for (; low < count && path_prefix_compare(items[order[low]].path, path, len) == 0; low++)
		if (items[order[low]].kind == kind)
			return true;
	return false;
}

/*
 * Whether allowed_paths covers the workspace-relative `path` of kind `kind`:
 * a subtree entry covers its own path and everything beneath it ("" is the
 * whole workspace), an exact entry only the same exact path.  Looked up per
 * ancestor, on component boundaries ("src/auth" does not cover "src/authz"),
 * so the check stays O(depth log n) per envelope entry for any list size.
 */
static bool within_allowed_paths(const struct tp_contract *contract, const char *path,
				 enum tp_path_kind kind)
{
	size_t len = strlen(path);

	if (kind == TP_PATH_EXACT && allowed_paths_hold(contract, path, len, TP_PATH_EXACT))
		return true;
	if (allowed_paths_hold(contract, path, 0, TP_PATH_SUBTREE))
		return true;
	for (size_t i = 1; i <= len; i++)
		if ((i == len || path[i] == '/') &&
		    allowed_paths_hold(contract, path, i, TP_PATH_SUBTREE))
			return true;
	return false;
}

/*
 * The workspace-relative form of an absolute write entry that lies inside
 * the workspace ("" for the workspace itself), or NULL when it lies outside
 * (or encloses it: the subtree "/var" grants more than the workspace "/var/ws").
 */
static const char *relative_to_workspace(const struct tp_envelope *env, const char *path)
{
	size_t len;

	if (!env->workspace_path)
		return NULL;
	len = strlen(env->workspace_path);
	if (strncmp(env->workspace_path, path, len) != 0)
		return NULL;
	if (path[len] == '\0')
		return path + len;
	if (path[len] == '/')
		return path + len + 1;
	return NULL;
}

static int check_workspace_write(struct check_ctx *ctx, const struct tp_path_entry *entry)
{
	char excerpt[TP_EXCERPT_MAX];

	if (within_allowed_paths(ctx->contract, entry->path, entry->kind))
		return 0;
	format_path(entry, excerpt);
	if (entry->pos.line)
		return tp_schema_report_at(&ctx->schema, entry->pos,
					   "write grant '%s' is not within the contract's "
					   "allowed_paths (%s)", excerpt, ctx->allowed_paths_text);
	if (entry->kind == TP_PATH_SUBTREE && entry->path[0] == '\0')
		return tp_schema_report_at(&ctx->schema, report_pos(ctx, entry->pos),
					   "'filesystem.workspace.write' is not set, and its "
					   "default '**' grants writes to the whole workspace, "
					   "which is not within the contract's allowed_paths (%s); "
					   "list the paths the task may change under "
					   "'filesystem.workspace.write'", ctx->allowed_paths_text);
	return tp_schema_report_at(&ctx->schema, report_pos(ctx, entry->pos),
				   "the default write grant '%s' is not within the contract's "
				   "allowed_paths (%s)",
				   excerpt, ctx->allowed_paths_text);
}

static int check_absolute_write(struct check_ctx *ctx, const struct tp_path_entry *entry)
{
	char excerpt[TP_EXCERPT_MAX];
	const char *relative;

	/* A relative filesystem.write is an envelope error; treat one like workspace.write. */
	if (entry->relative)
		return check_workspace_write(ctx, entry);

	relative = relative_to_workspace(ctx->env, entry->path);
	if (relative && within_allowed_paths(ctx->contract, relative, entry->kind))
		return 0;
	format_path(entry, excerpt);
	if (relative)
		return tp_schema_report_at(&ctx->schema, report_pos(ctx, entry->pos),
					   "write grant '%s' is not within the contract's "
					   "allowed_paths (%s)", excerpt, ctx->allowed_paths_text);
	return tp_schema_report_at(&ctx->schema, report_pos(ctx, entry->pos),
				   "write grant '%s' is outside the workspace, where the contract "
				   "allows no writes (%s)",
				   excerpt, ctx->allowed_paths_text);
}

/*
 * Whether one of the network.allow entries that name `key` (the same host,
 * or the same address block) lets through every port and protocol of `dest`.
 */
static bool allow_holds(const struct tp_contract *contract, const struct tp_destination *key,
			const struct tp_destination *dest)
{
	const struct tp_destination *items = contract->allow;
	const size_t *order = contract->allow_order;
	size_t count = contract->allow_count, low = 0, high = count;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (destination_key_compare(&items[order[mid]], key) < 0)
			low = mid + 1;
		else
			high = mid;
	}
	for (; low < count && destination_key_compare(&items[order[low]], key) == 0; low++) {
		const struct tp_destination *allowed = &items[order[low]];

		if (dest->port_min >= allowed->port_min && dest->port_max <= allowed->port_max &&
		    !(dest->protocols & ~allowed->protocols))
			return true;
	}
	return false;
}

/*
 * Whether network.allow covers `dest`: an entry for the same host, or a
 * wildcard "*.x" above it (covering "a.x" and "*.a.x", never "x" itself), or
 * an address block containing dest's block; with dest's ports and protocols
 * inside the entry's.  A host never covers an address or the reverse: which
 * addresses a name resolves to is not known here.  Candidates are looked up
 * (each wildcard above a name, each prefix of a block), never scanned.
 */
static bool within_network_allow(const struct tp_contract *contract,
				 const struct tp_destination *dest)
{
	struct tp_destination key = { 0 };

	if (dest->host) {
		char wildcard[TP_EXCERPT_MAX];

		key.host = dest->host;
		if (allow_holds(contract, &key, dest))
			return true;
		/* "a.b.x" -> "*.b.x", "*.x"; "*.b.x" -> "*.b.x" (itself), "*.x". */
		for (const char *dot = strchr(dest->host, '.'); dot; dot = strchr(dot + 1, '.')) {
			if ((size_t)snprintf(wildcard, sizeof(wildcard), "*%s", dot) >=
			    sizeof(wildcard))
				continue;	/* longer than any hostname: nothing can match */
			key.host = wildcard;
			if (allow_holds(contract, &key, dest))
				return true;
		}
		return false;
	}

	for (unsigned int prefixlen = 0; prefixlen <= dest->prefixlen; prefixlen++) {
		memset(key.addr, 0, sizeof(key.addr));
		for (unsigned int bit = 0; bit < prefixlen; bit += 8) {
			unsigned int bits = prefixlen - bit;

			key.addr[bit / 8] = dest->addr[bit / 8] &
					    (bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits)));
		}
		key.prefixlen = (uint8_t)prefixlen;
		if (allow_holds(contract, &key, dest))
			return true;
	}
	return false;
}

static int check_destination(struct check_ctx *ctx, const struct tp_destination *dest)
{
	char excerpt[TP_EXCERPT_MAX];

	if (within_network_allow(ctx->contract, dest))
		return 0;
	format_destination(dest, excerpt);
	return tp_schema_report_at(&ctx->schema, report_pos(ctx, dest->pos),
				   "destination '%s' is not within the contract's network.allow "
				   "(%s)", excerpt, ctx->network_text);
}

static int check_wall_clock(struct check_ctx *ctx)
{
	const struct tp_contract *contract = ctx->contract;
	uint64_t granted = ctx->env->limits[TP_LIMIT_WALL_CLOCK_MS];
	char limit[TP_DURATION_TEXT_MAX], have[TP_DURATION_TEXT_MAX];

	if (!contract->max_wall_clock_ms || (granted && granted <= contract->max_wall_clock_ms))
		return 0;
	tp_format_duration(contract->max_wall_clock_ms, limit);
	if (!granted)
		return tp_schema_report_at(&ctx->schema, ctx->env->sandbox_pos,
					   "'resources.wall_clock' is not set, so the run's time "
					   "is unlimited; the contract allows at most %s "
					   "(%s:%u:%u)", limit, contract->name,
					   contract->max_wall_clock_pos.line,
					   contract->max_wall_clock_pos.column);
	tp_format_duration(granted, have);
	return tp_schema_report_at(&ctx->schema,
				   report_pos(ctx, ctx->env->limit_pos[TP_LIMIT_WALL_CLOCK_MS]),
				   "'resources.wall_clock' %s is longer than the contract allows: "
				   "at most %s (%s:%u:%u)", have, limit, contract->name,
				   contract->max_wall_clock_pos.line,
				   contract->max_wall_clock_pos.column);
}

/* What the contract restricts that no sandbox sees: the host must enforce it elsewhere. */
static int write_notes(const struct tp_contract *contract, FILE *notes)
{
	char excerpt[TP_EXCERPT_MAX];
	bool failed = false;

	if (!notes)
		return 0;
	for (size_t i = 0; i < contract->forbidden.count; i++) {
		const char *item = contract->forbidden.items[i].text;

		failed |= fprintf(notes,
				  "note: forbidden action '%s' is outside what a sandbox can "
				  "observe; enforce it in the tool broker\n",
				  tp_excerpt(excerpt, item, strlen(item))) < 0;
	}
	if (contract->max_tool_calls)
		failed |= fprintf(notes,
				  "note: max_tool_calls %llu is outside what a sandbox can observe; "
				  "enforce it in the agent harness\n",
				  (unsigned long long)contract->max_tool_calls) < 0;
	if (contract->max_turns)
		failed |= fprintf(notes,
				  "note: max_turns %llu is outside what a sandbox can observe; "
				  "enforce it in the agent harness\n",
				  (unsigned long long)contract->max_turns) < 0;
	if (contract->max_cost)
		failed |= fprintf(notes,
				  "note: max_cost '%s' is outside what a sandbox can observe; "
				  "enforce it in the agent harness\n",
				  tp_excerpt(excerpt, contract->max_cost,
					     strlen(contract->max_cost))) < 0;
	return failed ? -EIO : 0;
}

static int check_into(struct check_ctx *ctx)
{
	const struct tp_contract *contract = ctx->contract;
	const struct tp_envelope *env = ctx->env;
	int r;

	ctx->allowed_paths_text =
		describe_allowed(contract, contract->has_allowed_paths,
				 contract->allowed_paths_pos, contract->allowed_paths.count,
				 "has no allowed_paths, so it allows no writes", format_path_item,
				 contract->allowed_paths.items);
	ctx->network_text =
		describe_allowed(contract, contract->has_network_allow,
				 contract->network_allow_pos, contract->allow_count,
				 "has no network.allow, so it allows no destinations",
				 format_destination_item, contract->allow);
	if (!ctx->allowed_paths_text || !ctx->network_text)
		return -ENOMEM;

	for (size_t i = 0; i < env->workspace_write.count; i++) {
		r = check_workspace_write(ctx, &env->workspace_write.items[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < env->write.count; i++) {
		r = check_absolute_write(ctx, &env->write.items[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < env->destination_count; i++) {
		r = check_destination(ctx, &env->destinations[i]);
		if (r < 0)
			return r;
	}
	return check_wall_clock(ctx);
}

int tp_contract_check(const struct tp_contract *contract, const char *env_name,
		      const struct tp_envelope *env, struct tp_diags *diags, FILE *notes)
{
	_cleanup_(tp_diags_freep) struct tp_diags scratch = { 0 };
	struct tp_diags *list = diags ? diags : &scratch;
	struct check_ctx ctx;
	size_t first = list->count;
	int r, s, n;

	if (!contract || !env)
		return -EINVAL;

	ctx = (struct check_ctx){
		.schema = { env_name ? env_name : "<input>", list },
		.contract = contract,
		.env = env,
	};
	r = check_into(&ctx);
	free(ctx.allowed_paths_text);
	free(ctx.network_text);
	/* Notes go out either way: they hold whether or not the envelope fits. */
	n = write_notes(contract, notes);
	s = tp_diags_sort_from(list, first);
	if (r < 0)
		return r;
	if (s < 0)
		return s;
	if (n < 0)
		return n;
	return list->count > first ? -EINVAL : 0;
}
