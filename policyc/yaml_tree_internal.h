/* SPDX-License-Identifier: GPL-2.0 */
/*
 * yaml_tree: a YAML stream -> one tree of scalars, mappings and sequences,
 * each node with its 1-based position, built from libyaml's event API.
 *
 * It knows nothing about any schema (envelope, contract, daemon
 * configuration); it only enforces what none of them ever needs and what
 * hostile input would abuse:
 *
 *   - anchors and aliases are refused (an alias is where "billion laughs"
 *     expansion starts; an envelope spells out every value);
 *   - tags other than the standard !!str !!int !!float !!bool !!null (on
 *     scalars), !!map and !!seq are refused;
 *   - mapping keys must be scalars and unique (a duplicate is where a
 *     reviewer reads one value and the program uses another);
 *   - at most YT_MAX_DEPTH nested collections and YT_MAX_NODES nodes;
 *   - at most one document.
 *
 * The tree is built without recursion (an explicit stack bounded by
 * YT_MAX_DEPTH), so stack use does not depend on the input; everything that
 * walks it later may recurse, because depth is bounded here.
 *
 * Size limits on the text itself and NUL bytes are the caller's business
 * (tp_schema_load checks both before handing text to libyaml).
 */
#ifndef TETHER_POLICYC_YAML_TREE_INTERNAL_H
#define TETHER_POLICYC_YAML_TREE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "policyc/policy.h"

#define YT_MAX_DEPTH 32
#define YT_MAX_NODES 100000

enum yt_kind {
	YT_SCALAR = 1,
	YT_MAPPING,
	YT_SEQUENCE,
};

struct yt_node;

struct yt_pair {
	struct yt_node *key;	/* a scalar, unique within its mapping */
	struct yt_node *value;
};

struct yt_node {
	enum yt_kind kind;
	unsigned int line;	/* 1-based, of the node's first character (its anchor or tag if any) */
	unsigned int column;	/* 1-based, in characters */
	union {
		struct {
			char *text;	/* NUL-terminated, but may hold NULs ("\0" escapes): use len */
			size_t len;
			bool is_null;	/* plain "", "~", "null", "Null", "NULL", or tagged !!null */
		} scalar;
		struct {
			struct yt_pair *pairs;	/* in file order */
			size_t count;
			size_t capacity;
		} mapping;
		struct {
			struct yt_node **items;	/* in file order */
			size_t count;
			size_t capacity;
		} sequence;
	};
};

/*
 * Parses `data` (`len` bytes, UTF-8) and appends every problem to `diags`
 * with file name `name`; `what` names the document in messages ("envelope",
 * "contract": "an envelope spells out every value"; NULL: "document").
 *
 * Returns 0 when the whole stream was read: *out is the root node, or NULL
 * for a stream that holds no document (empty, or only comments).  Problems
 * that leave the tree meaningful (an anchor, a tag, a duplicate or non-scalar
 * key: the offending pair is dropped) are reported but still return 0, so the
 * caller can check the rest of the file in the same pass; it tells them apart
 * by diags->count.
 *
 * Returns -EINVAL after a problem that ends reading (a YAML syntax error, an
 * alias, a second document, a limit), -ENOMEM, or -EINVAL for bad arguments
 * (then without a diagnostic).  *out is written only on 0.
 */
int yt_parse(const char *name, const char *what, const char *data, size_t len,
	     struct yt_node **out, struct tp_diags *diags);

/* Frees a node and everything below it; accepts NULL. */
void yt_node_free(struct yt_node *node);

/* "a scalar", "a mapping", "a sequence", or "an empty value" for a null scalar. */
const char *yt_node_describe(const struct yt_node *node);

/* The pair whose key is `key` in mapping `map`, or NULL. */
const struct yt_pair *yt_mapping_find(const struct yt_node *map, const char *key);

/* Whether a scalar node holds exactly the C string `text` (NULs included). */
bool yt_scalar_equals(const struct yt_node *node, const char *text);

#endif
