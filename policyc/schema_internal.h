/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The strict schema layer under the envelope (envelope.c) and the task
 * contract (contract.c): YAML text in, a tree checked against tables of
 * keys, diagnostics out.
 *
 * Both documents are read the same way, and this is where that way lives:
 * a size limit and no NUL bytes before libyaml sees the text; unknown keys
 * ("expected one of: ..."), missing required keys, wrong kinds and duplicate
 * entries are errors; every check keeps going after a problem, so one pass
 * reports every error of a file, and the diagnostics are sorted into file
 * order at the end.  What the keys mean stays with each document.
 *
 * A document's own context embeds struct tp_schema as its member `schema`;
 * check functions receive the struct tp_schema and get the context back
 * with TP_SCHEMA_CONTAINER(), so every table uses the one function type.
 *
 * Not part of the library's API: only policyc/ includes it, and
 * runtime/daemon/config.c, whose daemon.yaml is a third such document.
 */
#ifndef TETHER_POLICYC_SCHEMA_INTERNAL_H
#define TETHER_POLICYC_SCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "policyc/policy.h"
#include "policyc/yaml_tree_internal.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Where one pass over a document reports its problems. */
struct tp_schema {
	const char *name;	/* the document's file name, for diagnostics */
	struct tp_diags *diags;
};

/* The context of type `type` whose member `schema` is `ptr`. */
#define TP_SCHEMA_CONTAINER(ptr, type)                                 \
	({                                                             \
		struct tp_schema *_schema_ = (ptr);                    \
		(type *)((char *)_schema_ - offsetof(type, schema));   \
	})

struct tp_schema_key;

/* Checks one key's value; returns 0 or -ENOMEM (problems go to diagnostics). */
typedef int (*tp_schema_check_fn)(struct tp_schema *schema, const struct tp_schema_key *key,
				  const struct yt_pair *pair);

struct tp_schema_key {
	const char *name;	/* as written in the mapping */
	const char *label;	/* as named in messages ("workspace.ref"); NULL: name */
	tp_schema_check_fn check;
	bool required;
	int arg;		/* for shared check functions: which field */
	/* A mapping's keys (tp_schema_check_submapping), and its name in messages */
	const struct tp_schema_key *sub;
	size_t sub_count;
	const char *where;
};

/* A key checked by `fn`; `arg` tells shared check functions which field. */
#define TP_SCHEMA_KEY(name, fn, required, arg) { name, NULL, fn, required, arg, NULL, 0, NULL }
/* A key named `label` in messages. */
#define TP_SCHEMA_LABELLED_KEY(name, label, fn, required) \
	{ name, label, fn, required, 0, NULL, 0, NULL }
/* A key whose value is a mapping with the keys `table`, named `where` in messages. */
#define TP_SCHEMA_SUBMAPPING(name, fn, required, table, where) \
	{ name, NULL, fn, required, 0, table, ARRAY_SIZE(table), where }

static inline const char *tp_schema_label(const struct tp_schema_key *key)
{
	return key->label ? key->label : key->name;
}

static inline struct tp_pos tp_node_pos(const struct yt_node *node)
{
	return (struct tp_pos){ node->line, node->column };
}

static inline void yt_node_freep(struct yt_node **node)
{
	yt_node_free(*node);
}

static inline void tp_diags_freep(struct tp_diags *diags)
{
	tp_diags_free(diags);
}

/* A diagnostic at a node, or at a position; 0 or -ENOMEM. */
__attribute__((format(printf, 3, 4)))
int tp_schema_report(struct tp_schema *schema, const struct yt_node *at, const char *fmt, ...);
__attribute__((format(printf, 3, 4)))
int tp_schema_report_at(struct tp_schema *schema, struct tp_pos pos, const char *fmt, ...);

/*
 * Checks a mapping against its table: every key known, every key checked in
 * file order, required keys present.  `where` names the mapping in messages
 * ("sandbox.filesystem"; NULL for the top level); `owner` is the node where a
 * missing key is reported (the key holding the mapping, or the mapping
 * itself at the top level).  Returns 0 or -ENOMEM.
 */
int tp_schema_check_mapping(struct tp_schema *schema, const char *where,
			    const struct yt_node *owner, const struct yt_node *map,
			    const struct tp_schema_key *keys, size_t key_count);

/* A tp_schema_check_fn: a mapping value checked against key->sub. */
int tp_schema_check_submapping(struct tp_schema *schema, const struct tp_schema_key *key,
			       const struct yt_pair *pair);

/*
 * A whole document: `root` (NULL for a stream without one) must be a
 * mapping with the keys `keys`.  An empty document is reported with
 * `empty`, any other root with "`shape`, got KIND".  Returns 1 when the
 * keys were checked, 0 when the root was reported, or -ENOMEM.
 */
int tp_schema_check_document(struct tp_schema *schema, const struct yt_node *root,
			     const char *empty, const char *shape,
			     const struct tp_schema_key *keys, size_t key_count);

/*
 * Returns 1 when `value` is of kind `kind` (a scalar must also not be
 * empty); otherwise reports it and returns 0 (or -ENOMEM).
 */
int tp_schema_expect_kind(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_node *value, enum yt_kind kind);

/* A non-empty scalar without NUL bytes: 1, 0 when reported, or -ENOMEM. */
int tp_schema_expect_text(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_node *value);

/* Reports a value parser's failure: "invalid 'KEY': WHY". */
int tp_schema_invalid(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_node *value, const char *why);

/* Matches a scalar against `names`; returns the index, -1 (reported) or -ENOMEM - 1. */
int tp_schema_check_enum(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_node *value, const char *const *names, size_t count);

/* tp_schema_check_enum()'s result -> 0 or -ENOMEM for the caller's return. */
static inline int tp_schema_enum_status(int index)
{
	return index < -1 ? index + 1 : 0;
}

typedef int (*tp_schema_compare_fn)(const void *a, const void *b);

/*
 * Indices 0..count-1 of the `count` elements of `size` bytes at `base`,
 * ordered by `compare`, equal elements in index (file) order.  malloc'd
 * (never empty); NULL when out of memory.
 */
size_t *tp_schema_sorted_order(const void *base, size_t count, size_t size,
			       tp_schema_compare_fn compare);

/* Reports `later`, equal to the earlier `first`; returns 0 or -ENOMEM. */
typedef int (*tp_schema_dup_fn)(struct tp_schema *schema, const void *later, const void *first);

/*
 * Duplicate detection by sorting, so a list of 10^5 entries costs
 * O(n log n), not O(n^2): calls on_dup(later, first) for every element
 * equal (by `compare`) to one before it in the list, with `first` the
 * earliest of them.  When `order` is not NULL, it receives the sorted
 * order (tp_schema_sorted_order()) for later lookups.  0 or -ENOMEM.
 */
int tp_schema_find_duplicates(struct tp_schema *schema, const void *base, size_t count,
			      size_t size, tp_schema_compare_fn compare, tp_schema_dup_fn on_dup,
			      size_t **order);

/*
 * YAML text -> tree, with what libyaml must not see refused first: text over
 * `max_bytes`, a UTF-16 byte order mark, and NUL bytes.  A UTF-8 byte order
 * mark is skipped, and positions count from the byte after it (an editor
 * does not show it).  `what` names the document in those messages and in
 * yt_parse()'s ("envelope").  Returns 0 with *root set (NULL for a stream without a
 * document), or a negative errno with the problem in `diags`.
 */
int tp_schema_load(const char *name, const char *what, const char *data, size_t len,
		   size_t max_bytes, struct yt_node **root, struct tp_diags *diags);

/*
 * Parses a document into *out (a struct tp_envelope ** or the like): 0 or a
 * negative errno, with every problem in `diags`.
 */
typedef int (*tp_schema_parse_fn)(const char *name, const char *data, size_t len, void *out,
				  struct tp_diags *diags);

/*
 * The public parse entry points: argument checks, a scratch list when the
 * caller passes no `diags` (whether anything failed is still needed), the
 * name "<input>" by default, and the diagnostics sorted into file order.
 */
int tp_schema_parse(const char *name, const char *data, size_t len, tp_schema_parse_fn parse,
		    void *out, struct tp_diags *diags);
/* The same for a file of at most `max_bytes` (tp_file_read()). */
int tp_schema_parse_file(const char *path, size_t max_bytes, tp_schema_parse_fn parse, void *out,
			 struct tp_diags *diags);

#endif
