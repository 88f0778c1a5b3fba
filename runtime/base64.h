/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Standard base64 (RFC 4648 section 4, the "+/" alphabet, padded): how the
 * API carries a compiled policy in JSON (docs/api.yaml, RunRequest.policy).
 */
#ifndef TETHER_RUNTIME_BASE64_H
#define TETHER_RUNTIME_BASE64_H

#include <stddef.h>

/* `len` bytes as a NUL-terminated, padded text (malloc'd), or NULL (ENOMEM). */
char *base64_encode(const void *in, size_t len);
/*
 * The bytes `len` characters of base64 stand for (malloc'd, *out_len of
 * them, NUL after).  Padding is required and only at the end; anything
 * outside the alphabet (whitespace, NUL, the URL-safe "-_") is -EINVAL;
 * -ENOMEM.  *out is written only on success.
 */
int base64_decode(const char *in, size_t len, char **out, size_t *out_len);

#endif
