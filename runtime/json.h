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
/* Appends at most max_len bytes of `s` as a JSON string (quotes included);
 * bytes that are not valid UTF-8 become \u00XX.  Returns 0 or -ENOMEM. */
int sb_json_string(struct strbuf *sb, const char *s, size_t max_len);
void sb_free(struct strbuf *sb);

#endif
