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
	size_t room;
	va_list ap;
	int n;

	/* one pass when it fits (almost always: the buffer is reused), two when it must grow */
	if (sb_grow(sb, 64))
		return -ENOMEM;
	room = sb->cap - sb->len;
	va_start(ap, fmt);
	n = vsnprintf(sb->data + sb->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= room) {
		if (sb_grow(sb, (size_t)n)) {
			sb->data[sb->len] = '\0';
			return -ENOMEM;
		}
		va_start(ap, fmt);
		vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
	return 0;
}

int sb_append(struct strbuf *sb, const char *data, size_t len)
{
	if (sb_grow(sb, len))
		return -ENOMEM;
	memcpy(sb->data + sb->len, data, len);
	sb->len += len;
	sb->data[sb->len] = '\0';
	return 0;
}

int sb_str(struct strbuf *sb, const char *s)
{
	return sb_append(sb, s, strlen(s));
}

int sb_u64(struct strbuf *sb, unsigned long long v)
{
	char buf[20], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return sb_append(sb, p, (size_t)(buf + sizeof(buf) - p));
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
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strnlen(str, max_len), i = 0, n;
	int r = sb_append(sb, "\"", 1);

	while (i < len && !r) {
		unsigned char c = s[i];
		size_t run = i;

		/* printable ASCII but the two that need a backslash: copied as a run */
		while (run < len && s[run] >= 0x20 && s[run] < 0x7f && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			r = sb_append(sb, str + i, run - i);
			i = run;
			continue;
		}
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };

			r = sb_append(sb, esc, 2);
			n = 1;
		} else if (c == '\n') {
			r = sb_append(sb, "\\n", 2);
			n = 1;
		} else if (c == '\t') {
			r = sb_append(sb, "\\t", 2);
			n = 1;
		} else if (c < 0x80 || (n = utf8_seq_len(s + i, len - i)) == 0) {
			/* a control character, DEL, or a byte that is not UTF-8: kept visible */
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

			r = sb_append(sb, esc, 6);
			n = 1;
		} else {
			r = sb_append(sb, str + i, n);
		}
		i += n;
	}
	r = r ?: sb_append(sb, "\"", 1);
	return r ? -ENOMEM : 0;
}
