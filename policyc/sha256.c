// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 (FIPS 180-4), one-shot, through OpenSSL's libcrypto (EVP), which
 * tether links statically: the node log's HMAC and signatures use the same
 * library, so one well-kept implementation does all of tether's hashing.
 * SHA-256 is a fixed function: the digest of a given policy is the same
 * bytes whatever version of the library computes it (the known-answer tests
 * in tests/unit/test_tpol.c hold it to that).
 */
#include <errno.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "policyc/values.h"

int tp_sha256(const void *data, size_t len, uint8_t digest[32])
{
	unsigned int digest_len = 0;

	/*
	 * EVP_Digest fails only when it cannot allocate its context (or, in a
	 * broken build, find the default provider's SHA-256): both are a
	 * resource failure to the caller, never a digest of something else.
	 */
	if (!EVP_Digest(data, len, digest, &digest_len, EVP_sha256(), NULL) || digest_len != 32)
		return -ENOMEM;
	return 0;
}
