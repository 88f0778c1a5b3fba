/* SPDX-License-Identifier: GPL-2.0 */
/* A growing string buffer and JSON strings (runtime/json.c). */
#ifndef TETHER_RUNTIME_JSON_H
#define TETHER_RUNTIME_JSON_H

#include <stddef.h>

struct strbuf {
	char *data;
	size_t len, cap;
};
int sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `len` bytes of `data`; the text stays NUL-terminated.  0 or -ENOMEM. */
int sb_append(struct strbuf *sb, const char *data, size_t len);
/* A string literal, without a format to parse. */
#define sb_lit(sb, literal) sb_append((sb), "" literal, sizeof(literal) - 1)
/* A NUL-terminated string as it is (no JSON escaping: names of our own). */
int sb_str(struct strbuf *sb, const char *s);
/* `v` in decimal. */
int sb_u64(struct strbuf *sb, unsigned long long v);
/* Appends at most max_len bytes of `s` as a JSON string (quotes included);
 * bytes that are not valid UTF-8 become \u00XX.  Returns 0 or -ENOMEM. */
int sb_json_string(struct strbuf *sb, const char *s, size_t max_len);
void sb_free(struct strbuf *sb);

#endif
