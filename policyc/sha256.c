// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 (FIPS 180-4), one-shot, through OpenSSL's libcrypto, which tether
 * links statically: the node log's HMAC and signatures use the same library,
 * so one well-kept implementation does all of tether's hashing.  SHA-256 is
 * a fixed function: the digest of a given policy is the same bytes whatever
 * version of the library computes it (the known-answer tests in
 * tests/unit/test_tpol.c hold it to that).
 *
 * Every `tether run` digests its policy before anything else, so this is on
 * the start path.  The EVP interface sets up OpenSSL 3's library context on
 * its first use (it reads openssl.cnf, builds the provider and its method
 * store): about 1.6 ms of CPU natively and 9-10 ms under TCG, a third of a
 * run's setup, for 100 bytes of hashing.  SHA256_Init/Update/Final are the
 * same implementation (the same assembly, SHA-NI where the CPU has it)
 * without that machinery.  OpenSSL 3 deprecates them; a libcrypto without
 * them (OpenSSL 4) gets EVP, which is correct, only slower to start.
 */
/* before any OpenSSL header: the low-level functions below are deprecated in 3.0 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <stdint.h>

#include <openssl/opensslv.h>

#include "policyc/values.h"

#if OPENSSL_VERSION_MAJOR < 4
#include <openssl/sha.h>

int tp_sha256(const void *data, size_t len, uint8_t digest[32])
{
	SHA256_CTX ctx;

	/* they fail only on a NULL argument */
	if (!SHA256_Init(&ctx) || !SHA256_Update(&ctx, data ? data : "", len) ||
	    !SHA256_Final(digest, &ctx))
		return -ENOMEM;
	return 0;
}
#else
#include <openssl/evp.h>

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
#endif
