// SPDX-License-Identifier: GPL-2.0
/* A growing string buffer and JSON strings: what the JSON Lines sink writes with. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/json.h"

static int sb_grow(struct strbuf *sb, size_t extra)
{
	size_t cap;
	char *p;

	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	p = realloc(sb->data, cap);
	if (!p)
		return -ENOMEM;
	sb->data = p;
	sb->cap = cap;
	return 0;
}

int sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (sb_grow(sb, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->data);
	*sb = (struct strbuf){ 0 };
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

int sb_json_string(struct strbuf *sb, const char *str, size_t max_len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strnlen(str, max_len), i = 0, n;
	int r = 0;

	r |= sb_printf(sb, "\"");
	while (i < len && !r) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			r |= sb_printf(sb, "\\%c", c);
			i++;
		} else if (c == '\n') {
			r |= sb_printf(sb, "\\n");
			i++;
		} else if (c == '\t') {
			r |= sb_printf(sb, "\\t");
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			r |= sb_printf(sb, "\\u%04x", c);
			i++;
		} else if ((n = utf8_seq_len(s + i, len - i)) == 0) {
			/* Keep the byte visible rather than emit invalid JSON. */
			r |= sb_printf(sb, "\\u%04x", c);
			i++;
		} else {
			r |= sb_printf(sb, "%.*s", (int)n, (const char *)s + i);
			i += n;
		}
	}
	r |= sb_printf(sb, "\"");
	return r ? -ENOMEM : 0;
}
