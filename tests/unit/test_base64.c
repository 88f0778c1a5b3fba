// SPDX-License-Identifier: GPL-2.0
/*
 * runtime/base64.c: RFC 4648's test vectors both ways, every length round
 * trip with every byte value, and the inputs the API refuses.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base64.h"

static const struct {
	const char *plain, *coded;
} vectors[] = {
	{ "", "" },	     { "f", "Zg==" },	      { "fo", "Zm8=" },
	{ "foo", "Zm9v" },   { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

Test(base64, rfc4648_vectors)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		char *enc = base64_encode(vectors[i].plain, strlen(vectors[i].plain)), *dec = NULL;
		size_t n = 99;

		cr_assert_not_null(enc);
		cr_expect_str_eq(enc, vectors[i].coded);
		cr_assert_eq(base64_decode(vectors[i].coded, strlen(vectors[i].coded), &dec, &n), 0);
		cr_expect_eq(n, strlen(vectors[i].plain));
		cr_expect_eq(memcmp(dec, vectors[i].plain, n), 0);
		cr_expect_eq(dec[n], 0, "NUL-terminated");
		free(enc);
		free(dec);
	}
}

Test(base64, every_length_and_byte_round_trips)
{
	unsigned char in[300];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(in); len++) {
		char *enc = base64_encode(in, len), *dec = NULL;
		size_t n = 0;

		cr_assert_not_null(enc);
		cr_assert_eq(strlen(enc), (len + 2) / 3 * 4);
		cr_assert_eq(base64_decode(enc, strlen(enc), &dec, &n), 0, "len %zu", len);
		cr_assert_eq(n, len);
		cr_assert_eq(memcmp(dec, in, len), 0, "len %zu", len);
		free(enc);
		free(dec);
	}
}

Test(base64, refused)
{
	static const char *const bad[] = {
		"Zg",	      /* unpadded */
		"Zg=",	      /* short padding */
		"Z===",	      /* three pads */
		"Zg==Zm8=",   /* padding before the end */
		"Zm=v",	      /* a pad inside a group */
		"Zm9v\n",     /* whitespace */
		"Zm 9",	      /* a space */
		"Zm-_",	      /* the URL-safe alphabet */
		"Zm9\xc3",    /* not ASCII */
	};
	char *out = (char *)0x1;
	size_t n = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(base64_decode(bad[i], strlen(bad[i]), &out, &n), -EINVAL, "'%s'", bad[i]);
		cr_expect_eq(out, (char *)0x1, "written on failure");
		cr_expect_eq(n, 7);
	}
	/* a NUL inside the text */
	cr_expect_eq(base64_decode("Zm\0v", 4, &out, &n), -EINVAL);
}
