// SPDX-License-Identifier: GPL-2.0
/*
 * The strict schema layer shared by the envelope and the task contract
 * (schema_internal.h): diagnostics at a node, a mapping checked against its
 * table of keys, kind and enum checks, duplicate detection by sorting, and
 * the way from untrusted YAML text to a tree.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policyc/policyc_internal.h"
#include "policyc/schema_internal.h"

int tp_schema_report(struct tp_schema *schema, const struct yt_node *at, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tp_diags_addv(schema->diags, schema->name, at->line, at->column, fmt, ap);
	va_end(ap);
	return r;
}

int tp_schema_report_at(struct tp_schema *schema, struct tp_pos pos, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tp_diags_addv(schema->diags, schema->name, pos.line, pos.column, fmt, ap);
	va_end(ap);
	return r;
}

int tp_schema_check_mapping(struct tp_schema *schema, const char *where,
			    const struct yt_node *owner, const struct yt_node *map,
			    const struct tp_schema_key *keys, size_t key_count)
{
	char excerpt[TP_EXCERPT_MAX];
	char expected[512] = "";
	size_t expected_len = 0;
	int r;

	for (size_t i = 0; i < key_count; i++) {
		expected_len += (size_t)snprintf(expected + expected_len,
						 sizeof(expected) - expected_len, "%s%s",
						 expected_len ? ", " : "", keys[i].name);
		if (expected_len >= sizeof(expected))
			expected_len = sizeof(expected) - 1;
	}

	for (size_t i = 0; i < map->mapping.count; i++) {
		const struct yt_pair *pair = &map->mapping.pairs[i];
		const struct tp_schema_key *key = NULL;

		for (size_t k = 0; k < key_count && !key; k++)
			if (yt_scalar_equals(pair->key, keys[k].name))
				key = &keys[k];

		if (!key) {
			tp_excerpt(excerpt, pair->key->scalar.text, pair->key->scalar.len);
			if (where)
				r = tp_schema_report(schema, pair->key, "unknown key '%s' in '%s' "
						     "(expected one of: %s)",
						     excerpt, where, expected);
			else
				r = tp_schema_report(schema, pair->key,
						     "unknown key '%s' at the top level (expected "
						     "one of: %s)",
						     excerpt, expected);
		} else {
			r = key->check(schema, key, pair);
		}
		if (r < 0)
			return r;
	}

	for (size_t k = 0; k < key_count; k++) {
		if (!keys[k].required || yt_mapping_find(map, keys[k].name))
			continue;
		if (where)
			r = tp_schema_report(schema, owner, "missing required key '%s' in '%s'",
					     keys[k].name, where);
		else
			r = tp_schema_report(schema, owner,
					     "missing required key '%s' at the top level",
					     keys[k].name);
		if (r < 0)
			return r;
	}
	return 0;
}

int tp_schema_check_submapping(struct tp_schema *schema, const struct tp_schema_key *key,
			       const struct yt_pair *pair)
{
	int r = tp_schema_expect_kind(schema, key, pair->value, YT_MAPPING);

	if (r <= 0)
		return r;
	return tp_schema_check_mapping(schema, key->where, pair->key, pair->value, key->sub,
				       key->sub_count);
}

int tp_schema_check_document(struct tp_schema *schema, const struct yt_node *root,
			     const char *empty, const char *shape,
			     const struct tp_schema_key *keys, size_t key_count)
{
	int r;

	if (root && root->kind == YT_MAPPING) {
		r = tp_schema_check_mapping(schema, NULL, root, root, keys, key_count);
		return r < 0 ? r : 1;
	}
	if (!root)
		r = tp_diags_add(schema->diags, schema->name, 1, 1, "%s", empty);
	else if (root->kind == YT_SCALAR && root->scalar.is_null)
		r = tp_schema_report(schema, root, "%s", empty);
	else
		r = tp_schema_report(schema, root, "%s, got %s", shape, yt_node_describe(root));
	return r < 0 ? r : 0;
}

int tp_schema_expect_kind(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_node *value, enum yt_kind kind)
{
	static const char *const kind_names[] = {
		[YT_SCALAR] = "a scalar",
		[YT_MAPPING] = "a mapping",
		[YT_SEQUENCE] = "a sequence",
	};
	int r;

	if (value->kind == kind && !(kind == YT_SCALAR && value->scalar.is_null))
		return 1;
	r = tp_schema_report(schema, value, "'%s' must be %s, got %s", tp_schema_label(key),
			     kind_names[kind], yt_node_describe(value));
	return r < 0 ? r : 0;
}

int tp_schema_expect_text(struct tp_schema *schema, const struct tp_schema_key *key,
			  const struct yt_node *value)
{
	int r = tp_schema_expect_kind(schema, key, value, YT_SCALAR);

	if (r <= 0)
		return r;
	if (memchr(value->scalar.text, '\0', value->scalar.len)) {
		r = tp_schema_report(schema, value, "'%s' contains a NUL byte",
				     tp_schema_label(key));
		return r < 0 ? r : 0;
	}
	return 1;
}

int tp_schema_invalid(struct tp_schema *schema, const struct tp_schema_key *key,
		      const struct yt_node *value, const char *why)
{
	return tp_schema_report(schema, value, "invalid '%s': %s", tp_schema_label(key), why);
}

int tp_schema_check_enum(struct tp_schema *schema, const struct tp_schema_key *key,
			 const struct yt_node *value, const char *const *names, size_t count)
{
	char excerpt[TP_EXCERPT_MAX];
	char list[256] = "";
	size_t used = 0;
	int r;

	r = tp_schema_expect_text(schema, key, value);
	if (r < 0)
		return r - 1;
	if (r == 0)
		return -1;
	for (size_t i = 0; i < count; i++) {
		if (yt_scalar_equals(value, names[i]))
			return (int)i;
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 i ? ", " : "", names[i]);
		if (used >= sizeof(list))
			used = sizeof(list) - 1;
	}
	r = tp_schema_report(schema, value, "'%s' must be one of: %s; got '%s'",
			     tp_schema_label(key), list,
			     tp_excerpt(excerpt, value->scalar.text, value->scalar.len));
	return r < 0 ? r - 1 : -1;
}

struct order_arg {
	const char *base;
	size_t size;
	tp_schema_compare_fn compare;
};

/*
 * Ties go by index, so equal elements stay in file order: the first of a run
 * is the one written first, which duplicate messages point back to.
 */
static int order_compare(const void *a, const void *b, void *arg)
{
	const size_t *x = a, *y = b;
	const struct order_arg *o = arg;
	int r = o->compare(o->base + *x * o->size, o->base + *y * o->size);

	if (r)
		return r;
	return *x < *y ? -1 : *x > *y;
}

size_t *tp_schema_sorted_order(const void *base, size_t count, size_t size,
			       tp_schema_compare_fn compare)
{
	struct order_arg arg = { base, size, compare };
	size_t *order = calloc(count ? count : 1, sizeof(*order));

	if (!order)
		return NULL;
	for (size_t i = 0; i < count; i++)
		order[i] = i;
	qsort_r(order, count, sizeof(*order), order_compare, &arg);
	return order;
}

int tp_schema_find_duplicates(struct tp_schema *schema, const void *base, size_t count,
			      size_t size, tp_schema_compare_fn compare, tp_schema_dup_fn on_dup,
			      size_t **order)
{
	_cleanup_free_ size_t *sorted = tp_schema_sorted_order(base, count, size, compare);
	const char *items = base;
	int r;

	if (!sorted)
		return -ENOMEM;
	/* Equal elements are adjacent; within a run, compare each with the first. */
	for (size_t i = 1, first = 0; i < count; i++) {
		const void *earliest = items + sorted[first] * size;
		const void *later = items + sorted[i] * size;

		if (compare(earliest, later) != 0) {
			first = i;
			continue;
		}
		r = on_dup(schema, later, earliest);
		if (r < 0)
			return r;
	}
	if (order)
		*order = TAKE_PTR(sorted);
	return 0;
}

int tp_schema_load(const char *name, const char *what, const char *data, size_t len,
		   size_t max_bytes, struct yt_node **root, struct tp_diags *diags)
{
	const char *nul;
	int r;

	if (len > max_bytes) {
		r = tp_diags_add(diags, name, 0, 0,
				 "the %s is %zu bytes, over the limit of %zu bytes", what, len,
				 max_bytes);
		return r < 0 ? r : -EFBIG;
	}
	/*
	 * Editors on some systems start UTF-8 files with a byte order mark.
	 * libyaml skips one only when it guesses the encoding, which we do not
	 * let it do (see yt_parse()): forced to UTF-8, it takes the mark for a
	 * character of line 1, so every later column of that line is one off
	 * and a top-level key on line 2 falls outside the mapping ("did not
	 * find expected <document start>").  The mark carries no text: drop it
	 * here, so libyaml's marks and ours count from what the author sees.
	 */
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	/* Without this, UTF-16 fails as a NUL byte or an invalid byte, which says nothing. */
	if (len >= 2 && (memcmp(data, "\xff\xfe", 2) == 0 || memcmp(data, "\xfe\xff", 2) == 0)) {
		r = tp_diags_add(diags, name, 1, 1,
				 "the %s is UTF-16 (it starts with a UTF-16 byte order mark): it must "
				 "be UTF-8 text; convert it, for example with iconv -f UTF-16 -t UTF-8",
				 what);
		return r < 0 ? r : -EINVAL;
	}
	/* libyaml takes NUL for the end of input in places; YAML text never holds one. */
	nul = memchr(data, '\0', len);
	if (nul) {
		unsigned int line, column;

		tp_text_position(data, (size_t)(nul - data), &line, &column);
		r = tp_diags_add(diags, name, line, column,
				 "NUL byte in the %s: YAML text cannot contain one", what);
		return r < 0 ? r : -EINVAL;
	}
	return yt_parse(name, what, data, len, root, diags);
}

int tp_schema_parse(const char *name, const char *data, size_t len, tp_schema_parse_fn parse,
		    void *out, struct tp_diags *diags)
{
	_cleanup_(tp_diags_freep) struct tp_diags scratch = { 0 };
	struct tp_diags *list = diags ? diags : &scratch;
	size_t first = list->count;
	int r, s;

	if ((!data && len) || !out)
		return -EINVAL;
	if (!name)
		name = "<input>";

	r = parse(name, data ? data : "", len, out, list);
	s = tp_diags_sort_from(list, first);
	return r < 0 ? r : s;
}

int tp_schema_parse_file(const char *path, size_t max_bytes, tp_schema_parse_fn parse, void *out,
			 struct tp_diags *diags)
{
	_cleanup_(tp_diags_freep) struct tp_diags scratch = { 0 };
	struct tp_diags *list = diags ? diags : &scratch;
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r;

	if (!path || !out)
		return -EINVAL;
	r = tp_file_read(path, max_bytes, &data, &len, list);
	if (r < 0)
		return r;
	return tp_schema_parse(path, data, len, parse, out, list);
}
