// SPDX-License-Identifier: GPL-2.0
/*
 * Diagnostics: the list every policyc check appends to, and its text form.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policyc/policyc_internal.h"

int tp_diags_addv(struct tp_diags *diags, const char *file, unsigned int line,
		  unsigned int column, const char *fmt, va_list ap)
{
	_cleanup_free_ char *file_copy = NULL;
	_cleanup_free_ char *message = NULL;
	size_t count;

	if (!diags || !fmt)
		return -EINVAL;

	file_copy = strdup(file ? file : "<input>");
	if (!file_copy)
		return -ENOMEM;
	if (vasprintf(&message, fmt, ap) < 0) {
		message = NULL;	/* indeterminate after a failure */
		return -ENOMEM;
	}

	/*
	 * struct tp_diags has no capacity field (it is API), so the capacity is
	 * implied by the count: storage grows to the next power of two whenever
	 * the count reaches one, which keeps appends amortised O(1) even for a
	 * hostile file that produces one diagnostic per node.
	 */
	count = diags->count;
	if ((count & (count - 1)) == 0) {
		size_t capacity = count ? count * 2 : 1;
		struct tp_diag *items;

		if (capacity > SIZE_MAX / sizeof(*items))
			return -ENOMEM;
		items = realloc(diags->items, capacity * sizeof(*items));
		if (!items)
			return -ENOMEM;
		diags->items = items;
	}

	diags->items[count] = (struct tp_diag){
		.file = TAKE_PTR(file_copy),
		.line = line,
		.column = column,
		.message = TAKE_PTR(message),
	};
	diags->count = count + 1;
	return 0;
}

int tp_diags_add(struct tp_diags *diags, const char *file, unsigned int line,
		 unsigned int column, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tp_diags_addv(diags, file, line, column, fmt, ap);
	va_end(ap);
	return r;
}

void tp_diags_free(struct tp_diags *diags)
{
	if (!diags)
		return;
	for (size_t i = 0; i < diags->count; i++) {
		free(diags->items[i].file);
		free(diags->items[i].message);
	}
	free(diags->items);
	diags->items = NULL;
	diags->count = 0;
}

struct diag_slot {
	struct tp_diag diag;
	size_t seq;	/* position before sorting: the tie-break that makes qsort stable */
};

static int diag_slot_compare(const void *a, const void *b)
{
	const struct diag_slot *x = a, *y = b;

	if (x->diag.line != y->diag.line)
		return x->diag.line < y->diag.line ? -1 : 1;
	if (x->diag.column != y->diag.column)
		return x->diag.column < y->diag.column ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int tp_diags_sort_from(struct tp_diags *diags, size_t first)
{
	_cleanup_free_ struct diag_slot *slots = NULL;
	size_t n;

	if (!diags || first >= diags->count)
		return 0;
	n = diags->count - first;
	if (n < 2)
		return 0;

	/* qsort, not insertion sort: a hostile file can yield ~10^5 diagnostics. */
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		slots[i] = (struct diag_slot){ .diag = diags->items[first + i], .seq = i };
	qsort(slots, n, sizeof(*slots), diag_slot_compare);
	for (size_t i = 0; i < n; i++)
		diags->items[first + i] = slots[i].diag;
	return 0;
}

int tp_diags_format(const struct tp_diags *diags, char **out)
{
	_cleanup_free_ char *text = NULL;
	size_t text_len = 0;
	FILE *stream;
	bool failed = false;

	if (!diags || !out)
		return -EINVAL;

	stream = open_memstream(&text, &text_len);
	if (!stream)
		return -ENOMEM;
	for (size_t i = 0; i < diags->count && !failed; i++) {
		const struct tp_diag *d = &diags->items[i];
		const char *file = d->file ? d->file : "<input>";
		const char *message = d->message ? d->message : "";

		/* Line 0 means "no position" (I/O errors, size limits). */
		if (d->line == 0)
			failed = fprintf(stream, "%s: error: %s\n", file, message) < 0;
		else
			failed = fprintf(stream, "%s:%u:%u: error: %s\n", file,
					 d->line, d->column, message) < 0;
	}
	/* fclose() flushes; only after it are `text` and `text_len` final. */
	if (fclose(stream) != 0 || failed)
		return -ENOMEM;

	*out = TAKE_PTR(text);
	return 0;
}

const char *tp_excerpt(char buf[TP_EXCERPT_MAX], const char *text, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t shown = len > 64 ? 64 : len;
	char *p = buf;

	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f) {
			*p++ = (char)c;
		} else {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 0xf];
		}
	}
	if (shown < len) {
		memcpy(p, "...", 3);
		p += 3;
	}
	*p = '\0';
	return buf;
}

static unsigned int saturate_uint(size_t value)
{
	return value > UINT_MAX ? UINT_MAX : (unsigned int)value;
}

/* Length of the line break at s[i] (0: none), looking no further than s[end - 1]. */
static size_t line_break_len(const unsigned char *s, size_t i, size_t end)
{
	if (s[i] == '\r')
		return (i + 1 < end && s[i + 1] == '\n') ? 2 : 1;
	if (s[i] == '\n')
		return 1;
	if (i + 1 < end && s[i] == 0xc2 && s[i + 1] == 0x85)
		return 2;	/* NEL */
	if (i + 2 < end && s[i] == 0xe2 && s[i + 1] == 0x80 &&
	    (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
		return 3;	/* LS, PS */
	return 0;
}

void tp_text_position(const char *data, size_t offset, unsigned int *line,
		      unsigned int *column)
{
	const unsigned char *s = (const unsigned char *)data;
	size_t line0 = 0, column0 = 0;
	size_t i = 0;

	while (i < offset) {
		size_t break_len = line_break_len(s, i, offset);

		if (break_len) {
			line0++;
			column0 = 0;
			i += break_len;
			continue;
		}
		/* A column is a character: count lead bytes, skip continuations. */
		if ((s[i] & 0xc0) != 0x80)
			column0++;
		i++;
	}
	*line = saturate_uint(line0 + 1);
	*column = saturate_uint(column0 + 1);
}

size_t tp_text_offset(const char *data, size_t len, unsigned int line, unsigned int column)
{
	const unsigned char *s = (const unsigned char *)data;
	unsigned int at_line = 1, at_column = 1;
	size_t i = 0;

	while (i < len && (at_line < line || (at_line == line && at_column < column))) {
		size_t break_len = line_break_len(s, i, len);

		if (break_len) {
			if (at_line == line)
				break;	/* the column is past the end of its line */
			at_line++;
			at_column = 1;
			i += break_len;
			continue;
		}
		/* Past the character's lead byte and its continuation bytes. */
		i++;
		while (i < len && (s[i] & 0xc0) == 0x80)
			i++;
		at_column++;
	}
	return i;
}
