// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len)
{
	const unsigned char *in = data;
	char *out = malloc((len + 2) / 3 * 4 + 1), *p = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		unsigned int v = (unsigned int)in[i] << 16 |
				 (i + 1 < len ? (unsigned int)in[i + 1] << 8 : 0) |
				 (i + 2 < len ? in[i + 2] : 0);

		*p++ = alphabet[v >> 18 & 63];
		*p++ = alphabet[v >> 12 & 63];
		*p++ = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
		*p++ = i + 2 < len ? alphabet[v & 63] : '=';
	}
	*p = 0;
	return out;
}

int base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
	unsigned char *buf;
	size_t n = 0;

	if (len % 4)
		return -EINVAL;
	buf = malloc(len / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += 4) {
		unsigned int v = 0, pad = 0;

		for (int j = 0; j < 4; j++) {
			const char *p;
			char ch = in[i + j];

			/* "xx==" or "xxx=", in the last group only */
			if (ch == '=' && i + 4 == len && j >= 2) {
				pad++;
				v <<= 6;
				continue;
			}
			p = ch ? strchr(alphabet, ch) : NULL;
			if (!p || pad) {
				free(buf);
				return -EINVAL;
			}
			v = v << 6 | (unsigned int)(p - alphabet);
		}
		buf[n++] = (unsigned char)(v >> 16);
		if (pad < 2)
			buf[n++] = (unsigned char)(v >> 8);
		if (pad < 1)
			buf[n++] = (unsigned char)v;
	}
	buf[n] = 0;
	*out = (char *)buf;
	*out_len = n;
	return 0;
}
