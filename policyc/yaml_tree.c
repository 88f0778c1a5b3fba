// SPDX-License-Identifier: GPL-2.0
/*
 * YAML text -> yt_node tree, on libyaml's event API.
 *
 * Why events and not libyaml's document API: yaml_parser_load() builds its own
 * tree with aliases resolved into shared nodes, has no depth or node limit, and
 * gives us no chance to refuse an alias, an anchor or a duplicate key where it
 * occurs.  With events we see every node once, in file order, and can stop at
 * the first one that makes the rest meaningless.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <yaml.h>

#include "policyc/policyc_internal.h"
#include "policyc/yaml_tree_internal.h"

#define YAML_STD_TAG_PREFIX "tag:yaml.org,2002:"

struct builder {
	const char *name;
	const char *what;	/* the document, for messages: "envelope" */
	const char *data;
	size_t len;
	struct tp_diags *diags;
	struct yt_node *root;
	/* Open collections, innermost last; each is already attached to its parent. */
	struct yt_node *open[YT_MAX_DEPTH];
	size_t depth;
	size_t node_count;
	size_t document_count;
};

/* "an" before "envelope", "a" before "contract": messages name the document. */
static const char *article(const char *what)
{
	return strchr("aeiouAEIOU", what[0]) ? "an" : "a";
}

static unsigned int mark_number(size_t zero_based)
{
	return zero_based >= UINT_MAX ? UINT_MAX : (unsigned int)zero_based + 1;
}

__attribute__((format(printf, 4, 5)))
static int report(struct builder *b, unsigned int line, unsigned int column,
		  const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tp_diags_addv(b->diags, b->name, line, column, fmt, ap);
	va_end(ap);
	return r;
}

void yt_node_free(struct yt_node *node)
{
	if (!node)
		return;
	switch (node->kind) {
	case YT_SCALAR:
		free(node->scalar.text);
		break;
	case YT_MAPPING:
		for (size_t i = 0; i < node->mapping.count; i++) {
			yt_node_free(node->mapping.pairs[i].key);
			yt_node_free(node->mapping.pairs[i].value);
		}
		free(node->mapping.pairs);
		break;
	case YT_SEQUENCE:
		for (size_t i = 0; i < node->sequence.count; i++)
			yt_node_free(node->sequence.items[i]);
		free(node->sequence.items);
		break;
	}
	free(node);
}

const char *yt_node_describe(const struct yt_node *node)
{
	if (!node)
		return "nothing";
	switch (node->kind) {
	case YT_SCALAR:
		return node->scalar.is_null ? "an empty value" : "a scalar";
	case YT_MAPPING:
		return "a mapping";
	case YT_SEQUENCE:
		return "a sequence";
	}
	return "an unknown node";
}

bool yt_scalar_equals(const struct yt_node *node, const char *text)
{
	size_t len = strlen(text);

	return node && node->kind == YT_SCALAR && node->scalar.len == len &&
	       memcmp(node->scalar.text, text, len) == 0;
}

const struct yt_pair *yt_mapping_find(const struct yt_node *map, const char *key)
{
	if (!map || map->kind != YT_MAPPING)
		return NULL;
	for (size_t i = 0; i < map->mapping.count; i++)
		if (yt_scalar_equals(map->mapping.pairs[i].key, key))
			return &map->mapping.pairs[i];
	return NULL;
}

/* Makes room for one more element in a growing array. */
static int grow(void **items, size_t *capacity, size_t count, size_t size)
{
	size_t new_capacity;
	void *p;

	if (count < *capacity)
		return 0;
	new_capacity = *capacity ? *capacity * 2 : 4;
	if (new_capacity > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*items, new_capacity * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*capacity = new_capacity;
	return 0;
}

/* Hands `node` to the innermost open collection (or makes it the root). */
static int attach(struct builder *b, struct yt_node *node)
{
	struct yt_node *parent;
	int r;

	if (b->depth == 0) {
		/* At most one document (checked at its start), so one root. */
		b->root = node;
		return 0;
	}

	parent = b->open[b->depth - 1];
	if (parent->kind == YT_SEQUENCE) {
		r = grow((void **)&parent->sequence.items, &parent->sequence.capacity,
			 parent->sequence.count, sizeof(*parent->sequence.items));
		if (r < 0)
			return r;
		parent->sequence.items[parent->sequence.count++] = node;
		return 0;
	}

	/* Mapping: events alternate key, value; a pair without value awaits this node. */
	if (parent->mapping.count > 0 &&
	    !parent->mapping.pairs[parent->mapping.count - 1].value) {
		parent->mapping.pairs[parent->mapping.count - 1].value = node;
		return 0;
	}
	r = grow((void **)&parent->mapping.pairs, &parent->mapping.capacity,
		 parent->mapping.count, sizeof(*parent->mapping.pairs));
	if (r < 0)
		return r;
	parent->mapping.pairs[parent->mapping.count++] = (struct yt_pair){ .key = node };
	return 0;
}

static bool same_key(const struct yt_node *a, const struct yt_node *b)
{
	return a->scalar.len == b->scalar.len &&
	       memcmp(a->scalar.text, b->scalar.text, a->scalar.len) == 0;
}

static int pair_key_compare(const void *a, const void *b)
{
	const struct yt_pair *x = *(const struct yt_pair *const *)a;
	const struct yt_pair *y = *(const struct yt_pair *const *)b;
	size_t common = x->key->scalar.len < y->key->scalar.len ?
				x->key->scalar.len : y->key->scalar.len;
	int c = memcmp(x->key->scalar.text, y->key->scalar.text, common);

	if (c)
		return c;
	if (x->key->scalar.len != y->key->scalar.len)
		return x->key->scalar.len < y->key->scalar.len ? -1 : 1;
	/* Same key: file order (the pairs share one array, so addresses compare). */
	return x < y ? -1 : x > y;
}

/* ---- the text around a problem, for the hints below -------------------------- */

/* The offset of `mark` in the text. */
static size_t mark_offset(const struct builder *b, yaml_mark_t mark)
{
	return tp_text_offset(b->data, b->len, mark_number(mark.line), mark_number(mark.column));
}

/* Whether a plain token ends before data[i]. */
static bool token_ends(const struct builder *b, size_t i)
{
	return i >= b->len || strchr(" \t\r\n,]}#", b->data[i]);
}

/*
 * The length of an address in brackets with a port, "[2001:db8::1]:443",
 * that starts at the '[' at data[start] and ends where a plain token
 * would; 0 when the text there is not one ("]:" and a digit on the line).
 */
static size_t bracket_port_len(const struct builder *b, size_t start)
{
	size_t i = start + 1;

	while (i < b->len && b->data[i] != ']' && b->data[i] != '\n' && b->data[i] != '\r')
		i++;
	if (i + 2 >= b->len || b->data[i] != ']' || b->data[i + 1] != ':' ||
	    b->data[i + 2] < '0' || b->data[i + 2] > '9')
		return 0;
	for (i += 2; !token_ends(b, i); i++)
		;
	return i - start;
}

/* The '[' that opens the bracket closing at data[close], on the same line; -1 if none. */
static ssize_t bracket_open(const struct builder *b, size_t close)
{
	for (size_t i = close; i-- > 0;) {
		if (b->data[i] == '\n' || b->data[i] == '\r' || b->data[i] == ']')
			return -1;
		if (b->data[i] == '[')
			return (ssize_t)i;
	}
	return -1;
}

/*
 * "[2001:db8::1]:443" unquoted inside a flow collection is a one-pair
 * mapping whose key is the sequence [2001:db8::1]: say so at the '['.
 */
static int report_key_not_scalar(struct builder *b, const struct yt_node *key)
{
	size_t at = tp_text_offset(b->data, b->len, key->line, key->column), len;
	char excerpt[TP_EXCERPT_MAX];

	if (key->kind == YT_SEQUENCE && at < b->len && b->data[at] == '[' &&
	    (len = bracket_port_len(b, at)))
		return report(b, key->line, key->column,
			      "a plain value cannot start with '[' (YAML reads a flow sequence, "
			      "and the ':' after it makes that a mapping key): quote it (\"%s\")",
			      tp_excerpt(excerpt, b->data + at, len));
	return report(b, key->line, key->column, "mapping keys must be scalars, got %s",
		      yt_node_describe(key));
}

/*
 * Runs when a mapping is complete: refuses non-scalar and duplicate keys and
 * drops their pairs, so that every later reader sees each key at most once.
 * Duplicates are found by sorting (O(n log n)): a mapping may hold tens of
 * thousands of keys, and comparing every pair with every other would let a
 * 4 MiB file keep us busy for minutes.
 */
static int finish_mapping(struct builder *b, struct yt_node *map)
{
	_cleanup_free_ struct yt_pair **sorted = NULL;
	_cleanup_free_ bool *drop = NULL;
	struct yt_pair *pairs = map->mapping.pairs;
	size_t count = map->mapping.count;
	size_t scalar_keys = 0, kept = 0;
	char excerpt[TP_EXCERPT_MAX];
	int r;

	if (count == 0)
		return 0;
	drop = calloc(count, sizeof(*drop));
	sorted = calloc(count, sizeof(*sorted));
	if (!drop || !sorted)
		return -ENOMEM;

	for (size_t i = 0; i < count; i++) {
		const struct yt_node *key = pairs[i].key;

		/* libyaml emits an empty scalar for a missing value; a pair always has one. */
		if (!pairs[i].value)
			return -EINVAL;
		if (key->kind == YT_SCALAR) {
			sorted[scalar_keys++] = &pairs[i];
			continue;
		}
		r = report_key_not_scalar(b, key);
		if (r < 0)
			return r;
		drop[i] = true;
	}

	qsort(sorted, scalar_keys, sizeof(*sorted), pair_key_compare);
	/* Equal keys are now adjacent, the first in file order leading its run. */
	for (size_t i = 0; i < scalar_keys;) {
		const struct yt_node *first = sorted[i]->key;
		size_t next = i + 1;

		for (; next < scalar_keys && same_key(sorted[next]->key, first); next++) {
			const struct yt_node *again = sorted[next]->key;

			r = report(b, again->line, again->column,
				   "duplicate key '%s' (first defined at line %u)",
				   tp_excerpt(excerpt, again->scalar.text, again->scalar.len),
				   first->line);
			if (r < 0)
				return r;
			drop[sorted[next] - pairs] = true;
		}
		i = next;
	}

	for (size_t i = 0; i < count; i++) {
		if (drop[i]) {
			yt_node_free(pairs[i].key);
			yt_node_free(pairs[i].value);
			continue;
		}
		pairs[kept++] = pairs[i];
	}
	map->mapping.count = kept;
	return 0;
}

static const char *const standard_scalar_tags[] = { "str", "int", "float", "bool", "null" };

/* Refuses tags other than the standard ones that fit the node's kind. */
static int check_tag(struct builder *b, const struct yt_node *node, const char *tag)
{
	const size_t prefix_len = strlen(YAML_STD_TAG_PREFIX);
	char excerpt[TP_EXCERPT_MAX];
	const char *name;

	if (!tag)
		return 0;
	if (strncmp(tag, YAML_STD_TAG_PREFIX, prefix_len) != 0)
		return report(b, node->line, node->column,
			      "tag '%s' is not supported: %s %s uses only the standard tags "
			      "(!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)",
			      tp_excerpt(excerpt, tag, strlen(tag)), article(b->what), b->what);

	name = tag + prefix_len;
	switch (node->kind) {
	case YT_SCALAR:
		for (size_t i = 0; i < sizeof(standard_scalar_tags) / sizeof(*standard_scalar_tags); i++)
			if (strcmp(name, standard_scalar_tags[i]) == 0)
				return 0;
		break;
	case YT_MAPPING:
		if (strcmp(name, "map") == 0)
			return 0;
		break;
	case YT_SEQUENCE:
		if (strcmp(name, "seq") == 0)
			return 0;
		break;
	}
	return report(b, node->line, node->column,
		      "tag '!!%s' is not supported on %s: %s %s uses only the standard tags "
		      "(!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)",
		      tp_excerpt(excerpt, name, strlen(name)),
		      node->kind == YT_SCALAR ? "a scalar" : yt_node_describe(node),
		      article(b->what), b->what);
}

static bool scalar_is_null(const yaml_event_t *event)
{
	const char *tag = (const char *)event->data.scalar.tag;
	const char *text = (const char *)event->data.scalar.value;
	size_t len = event->data.scalar.length;

	if (tag)
		return strcmp(tag, YAML_STD_TAG_PREFIX "null") == 0;
	if (event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	/* The YAML 1.2 core schema's null, which is also what YAML 1.1 readers agree on. */
	return len == 0 || (len == 1 && text[0] == '~') ||
	       (len == 4 && (memcmp(text, "null", 4) == 0 || memcmp(text, "Null", 4) == 0 ||
			     memcmp(text, "NULL", 4) == 0));
}

/* A scalar, or the start of a collection. */
static int start_node(struct builder *b, const yaml_event_t *event, enum yt_kind kind)
{
	unsigned int line = mark_number(event->start_mark.line);
	unsigned int column = mark_number(event->start_mark.column);
	const char *anchor, *tag;
	struct yt_node *node;
	char excerpt[TP_EXCERPT_MAX];
	int r;

	switch (kind) {
	case YT_SCALAR:
		anchor = (const char *)event->data.scalar.anchor;
		tag = (const char *)event->data.scalar.tag;
		break;
	case YT_MAPPING:
		anchor = (const char *)event->data.mapping_start.anchor;
		tag = (const char *)event->data.mapping_start.tag;
		break;
	default:
		anchor = (const char *)event->data.sequence_start.anchor;
		tag = (const char *)event->data.sequence_start.tag;
		break;
	}

	/* Limits end reading: past them we would spend memory on a file we refuse anyway. */
	if (++b->node_count > YT_MAX_NODES) {
		r = report(b, line, column,
			   "the %s has more than %d nodes; refusing to read further",
			   b->what, YT_MAX_NODES);
		return r < 0 ? r : -EINVAL;
	}
	if (kind != YT_SCALAR && b->depth == YT_MAX_DEPTH) {
		r = report(b, line, column,
			   "nesting deeper than %d levels; refusing to read further",
			   YT_MAX_DEPTH);
		return r < 0 ? r : -EINVAL;
	}

	node = calloc(1, sizeof(*node));
	if (!node)
		return -ENOMEM;
	node->kind = kind;
	node->line = line;
	node->column = column;
	if (kind == YT_SCALAR) {
		size_t len = event->data.scalar.length;

		node->scalar.text = malloc(len + 1);
		if (!node->scalar.text) {
			free(node);
			return -ENOMEM;
		}
		memcpy(node->scalar.text, event->data.scalar.value, len);
		node->scalar.text[len] = '\0';
		node->scalar.len = len;
		node->scalar.is_null = scalar_is_null(event);
	}
	r = attach(b, node);
	if (r < 0) {
		yt_node_free(node);
		return r;
	}
	if (kind != YT_SCALAR)
		b->open[b->depth++] = node;

	/*
	 * Anchors alone are harmless, but they exist only to be aliased and we
	 * refuse aliases; reporting them here points at the cause.  The node is
	 * kept, so the rest of the file is still checked.
	 */
	if (anchor) {
		r = report(b, line, column,
			   "anchor '&%s' is not supported: %s %s spells out every value",
			   tp_excerpt(excerpt, anchor, strlen(anchor)), article(b->what), b->what);
		if (r < 0)
			return r;
	}
	return check_tag(b, node, tag);
}

static int end_collection(struct builder *b)
{
	struct yt_node *node;

	/* libyaml pairs every start with an end; this only guards our invariant. */
	if (b->depth == 0)
		return -EINVAL;
	node = b->open[--b->depth];
	return node->kind == YT_MAPPING ? finish_mapping(b, node) : 0;
}

static int handle_event(struct builder *b, const yaml_event_t *event)
{
	unsigned int line = mark_number(event->start_mark.line);
	unsigned int column = mark_number(event->start_mark.column);
	char excerpt[TP_EXCERPT_MAX];
	int r;

	switch (event->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->document_count++ == 0)
			return 0;
		r = report(b, line, column,
			   "a second document starts here; %s %s is exactly one YAML document",
			   article(b->what), b->what);
		return r < 0 ? r : -EINVAL;
	case YAML_ALIAS_EVENT:
		/*
		 * Fatal, unlike anchors: an alias stands for a value we refuse to
		 * copy, so nothing after it can be checked meaningfully, and
		 * stopping here is what makes "billion laughs" input cost one pass.
		 */
		r = report(b, line, column,
			   "alias '*%s' is not supported: %s %s spells out every value",
			   tp_excerpt(excerpt, (const char *)event->data.alias.anchor,
				      strlen((const char *)event->data.alias.anchor)),
			   article(b->what), b->what);
		return r < 0 ? r : -EINVAL;
	case YAML_SCALAR_EVENT:
		return start_node(b, event, YT_SCALAR);
	case YAML_SEQUENCE_START_EVENT:
		return start_node(b, event, YT_SEQUENCE);
	case YAML_MAPPING_START_EVENT:
		return start_node(b, event, YT_MAPPING);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return end_collection(b);
	default:
		/* Stream start and end, document end: nothing to record. */
		return 0;
	}
}

/* ---- libyaml's errors, in words a document's author can act on ------------ */

/*
 * libyaml's messages name the YAML rule that broke, not the mistake, and
 * three mistakes account for most of them in envelopes: a tab (YAML
 * indents with spaces only), a plain value that starts with a YAML
 * indicator (a wildcard hostname "*.example.org" is read as an alias, an
 * IPv6 address with a port "[2001:db8::1]:443" as a flow sequence
 * followed by ":443"), and text that is not UTF-8 (libyaml names the byte
 * after the bad one, and we pointed one column past it).  For those the
 * diagnostic says what was found and what to write instead, at the first
 * byte of the offending value; anything else keeps libyaml's own words.
 */

/*
 * "[2001:db8::1]:443" unquoted in a block collection: the flow sequence
 * ends at ']', and the ':' after it is where libyaml gives up.  Each hint_*
 * sets *done and reports when the text at libyaml's mark is its mistake
 * (here ']' then ':' and a port digit, the '[' on the same line), and
 * leaves the error to libyaml's words otherwise.
 */
static int hint_flow_sequence(struct builder *b, const yaml_parser_t *parser, bool *done)
{
	size_t at = mark_offset(b, parser->problem_mark);
	char excerpt[TP_EXCERPT_MAX];
	unsigned int line, column;
	ssize_t open;
	size_t len;

	*done = false;
	if (at == 0 || at >= b->len || b->data[at] != ':' || b->data[at - 1] != ']')
		return 0;
	open = bracket_open(b, at - 1);
	if (open < 0 || !(len = bracket_port_len(b, (size_t)open)))
		return 0;
	*done = true;
	tp_text_position(b->data, (size_t)open, &line, &column);
	return report(b, line, column,
		      "a plain value cannot start with '[' (YAML reads a flow sequence, which "
		      "ends at the ']'): quote it (\"%s\")",
		      tp_excerpt(excerpt, b->data + open, len));
}

/* "*.example.org" unquoted: libyaml reads an alias and finds no name after the '*'. */
static int hint_alias(struct builder *b, const yaml_parser_t *parser, bool *done)
{
	size_t at = mark_offset(b, parser->context_mark), end = at + 1;
	char excerpt[TP_EXCERPT_MAX];

	*done = false;
	if (at >= b->len || b->data[at] != '*')
		return 0;
	while (!token_ends(b, end))
		end++;
	*done = true;
	return report(b, mark_number(parser->context_mark.line),
		      mark_number(parser->context_mark.column),
		      "a plain value cannot start with '*' (YAML reads an alias): quote it "
		      "(\"%s\")", tp_excerpt(excerpt, b->data + at, end - at));
}

/*
 * YAML forbids tabs in indentation, and a tab cannot start a token: libyaml
 * says "found character that cannot start any token", or "found a tab
 * character that violates indentation", with the mark on the tab.
 */
static int hint_tab(struct builder *b, const yaml_parser_t *parser, bool *done)
{
	size_t at = mark_offset(b, parser->problem_mark);

	*done = false;
	if (at >= b->len || b->data[at] != '\t')
		return 0;
	*done = true;
	return report(b, mark_number(parser->problem_mark.line),
		      mark_number(parser->problem_mark.column),
		      "a tab character: YAML indents with spaces only; replace the tab with "
		      "spaces");
}

/*
 * libyaml's reader checks UTF-8 character by character and reports where
 * it stopped: at the character's first byte, or, for "invalid trailing
 * UTF-8 octet", at the byte that does not continue it, naming that byte
 * (so "caf\xe9/" read as Latin-1 named '/', one column late).  Every case
 * is reported at the character's first byte, naming it and, when another
 * byte breaks it, that byte too.  Returns 1 for a reader error that is not
 * about UTF-8 (a control character), for the caller to report.
 */
static int report_utf8_error(struct builder *b, const yaml_parser_t *parser)
{
	char latin1_tail[192], utf8_tail[128];
	const unsigned char *s = (const unsigned char *)b->data;
	const char *problem = parser->problem;
	size_t at = parser->problem_offset < b->len ? parser->problem_offset : b->len;
	/* the text need not end in a NUL: never read s[b->len] */
	bool trailing = strcmp(problem, "invalid trailing UTF-8 octet") == 0 && at < b->len;
	size_t start = at, end;
	unsigned int line, column;
	char bytes[4 * 5 + 1] = "";
	int r;

	/* What a file that is not UTF-8 usually is: Latin-1 from an old editor. */
	snprintf(utf8_tail, sizeof(utf8_tail), ": %s %s is UTF-8 text; save the file as UTF-8",
		 article(b->what), b->what);
	snprintf(latin1_tail, sizeof(latin1_tail), "%s (from Latin-1: iconv -f LATIN1 -t UTF-8)",
		 utf8_tail);

	if (at < b->len && strcmp(problem, "incomplete UTF-8 octet sequence") == 0) {
		/* The text ends before the character would; a byte before that may not continue it. */
		for (size_t i = at + 1; i < b->len && !trailing; i++)
			if ((s[i] & 0xc0) != 0x80) {
				trailing = true;
				at = i;
			}
		if (!trailing) {
			tp_text_position(b->data, start, &line, &column);
			r = report(b, line, column, "byte 0x%02x is not UTF-8 here (it starts a "
				   "character, and the text ends inside it)%s", s[start],
				   latin1_tail);
			return r < 0 ? r : -EINVAL;
		}
	}
	if (trailing && at > 0) {
		/* Back over the valid continuation bytes to the one that started it. */
		start = at - 1;
		while (start > 0 && at - start < 3 && (s[start] & 0xc0) == 0x80)
			start--;
		end = at + 1;
	} else if (at < b->len) {
		unsigned char lead = s[at];

		end = at + ((lead & 0xe0) == 0xc0 ? 2 : (lead & 0xf0) == 0xe0 ? 3
						      : (lead & 0xf8) == 0xf0 ? 4 : 1);
	} else {
		end = at;
	}
	for (size_t i = start; i < end && i < b->len; i++)
		snprintf(bytes + strlen(bytes), sizeof(bytes) - strlen(bytes), "%s0x%02x",
			 i == start ? "" : " ", s[i]);
	tp_text_position(b->data, start, &line, &column);

	if (start >= b->len)
		r = report(b, line, column, "%s%s", problem, utf8_tail);
	else if (trailing)
		r = report(b, line, column, "byte 0x%02x is not UTF-8 here (it starts a "
			   "character that 0x%02x does not continue)%s",
			   s[start], s[at], latin1_tail);
	else if (strcmp(problem, "invalid leading UTF-8 octet") == 0)
		r = report(b, line, column, "byte 0x%02x is not UTF-8 (no character starts with "
			   "it)%s", s[start], latin1_tail);
	else if (strcmp(problem, "invalid length of a UTF-8 sequence") == 0)
		r = report(b, line, column, "bytes %s are not UTF-8 (an overlong form: a "
			   "character in more bytes than it needs)%s", bytes, utf8_tail);
	else if (strcmp(problem, "invalid Unicode character") == 0)
		r = report(b, line, column, "bytes %s are not UTF-8 (they encode U+%04X, %s)%s",
			   bytes, (unsigned int)parser->problem_value,
			   parser->problem_value >= 0xd800 && parser->problem_value <= 0xdfff
				   ? "a UTF-16 surrogate, not a character" : "beyond Unicode",
			   utf8_tail);
	else
		return 1;	/* not an encoding error */
	return r < 0 ? r : -EINVAL;
}

/* Turns libyaml's error state into one diagnostic. */
static int report_parser_error(struct builder *b, const yaml_parser_t *parser)
{
	const char *problem = parser->problem ? parser->problem : "invalid YAML";
	const char *context = parser->context ? parser->context : "";
	unsigned int line, column;
	bool done = false;
	int r;

	if (parser->error == YAML_MEMORY_ERROR)
		return -ENOMEM;

	if (parser->error == YAML_READER_ERROR) {
		/* The reader reports a byte offset, not a mark. */
		size_t offset = parser->problem_offset < b->len ? parser->problem_offset : b->len;

		if (parser->problem && (r = report_utf8_error(b, parser)) <= 0)
			return r;
		tp_text_position(b->data, offset, &line, &column);
		if (parser->problem_value >= 0)
			r = report(b, line, column, "%s (0x%x)", problem,
				   (unsigned int)parser->problem_value);
		else
			r = report(b, line, column, "%s", problem);
		return r < 0 ? r : -EINVAL;
	}

	if (strcmp(context, "while scanning an alias") == 0)
		r = hint_alias(b, parser, &done);
	else if (strcmp(problem, "found character that cannot start any token") == 0 ||
		 strstr(problem, "tab character"))
		r = hint_tab(b, parser, &done);
	else
		r = hint_flow_sequence(b, parser, &done);
	if (done)
		return r < 0 ? r : -EINVAL;

	line = mark_number(parser->problem_mark.line);
	column = mark_number(parser->problem_mark.column);
	if (parser->context)
		r = report(b, line, column, "%s (%s at line %u, column %u)", problem,
			   parser->context, mark_number(parser->context_mark.line),
			   mark_number(parser->context_mark.column));
	else
		r = report(b, line, column, "%s", problem);
	return r < 0 ? r : -EINVAL;
}

int yt_parse(const char *name, const char *what, const char *data, size_t len,
	     struct yt_node **out, struct tp_diags *diags)
{
	struct builder b = {
		.name = name,
		.what = what ? what : "document",
		.data = data,
		.len = len,
		.diags = diags,
	};
	yaml_parser_t parser;
	bool done = false;
	int r = 0;

	if ((!data && len) || !out || !diags)
		return -EINVAL;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	/* No guessing: the text is UTF-8, a UTF-16 byte order mark is an error. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&parser, (const unsigned char *)(data ? data : ""), len);

	while (!done) {
		yaml_event_t event;

		if (!yaml_parser_parse(&parser, &event)) {
			r = report_parser_error(&b, &parser);
			goto out;
		}
		/* Every event but the last consumes input, so this loop ends. */
		done = event.type == YAML_STREAM_END_EVENT || event.type == YAML_NO_EVENT;
		r = handle_event(&b, &event);
		yaml_event_delete(&event);
		if (r < 0)
			goto out;
	}

	*out = TAKE_PTR(b.root);
out:
	yaml_parser_delete(&parser);
	/* Open collections hang below the root, so this frees a partial tree too. */
	yt_node_free(b.root);
	return r;
}
