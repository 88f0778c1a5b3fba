// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 (FIPS 180-4, section 6.2), one-shot.
 *
 * Our own small implementation so the policy digest does not depend on which
 * crypto library (or which version of it) a host happens to have.  It is not
 * used for secrets, so it makes no constant-time claims.  Everything works on
 * uint32_t and on bytes assembled explicitly in big-endian order, so the
 * result does not depend on the host's byte order or alignment, and no shift
 * is ever by 0 or 32 (both would be undefined or wrong in a rotation).
 */
#include <stdint.h>
#include <string.h>

#include "policyc/values.h"

#define SHA256_BLOCK 64

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* n is always a constant in 1..31 here. */
static inline uint32_t rotr32(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void sha256_block(uint32_t state[8], const uint8_t block[SHA256_BLOCK])
{
	uint32_t w[64];
	uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
	uint32_t e = state[4], f = state[5], g = state[6], h = state[7];

	for (int t = 0; t < 16; t++)
		w[t] = load_be32(block + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr32(w[t - 15], 7) ^ rotr32(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr32(w[t - 2], 17) ^ rotr32(w[t - 2], 19) ^ (w[t - 2] >> 10);

		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}

	for (int t = 0; t < 64; t++) {
		uint32_t sum1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
		uint32_t choose = (e & f) ^ (~e & g);
		uint32_t t1 = h + sum1 + choose + sha256_k[t] + w[t];
		uint32_t sum0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
		uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = sum0 + majority;

		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}

	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
	state[5] += f;
	state[6] += g;
	state[7] += h;
}

void tp_sha256(const void *data, size_t len, uint8_t digest[32])
{
	uint32_t state[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	const uint8_t *p = data;
	uint8_t tail[2 * SHA256_BLOCK] = { 0 };
	size_t rest = len % SHA256_BLOCK;
	size_t tail_len;
	/*
	 * The message length in bits, modulo 2^64 as the standard defines it;
	 * size_t is at most 64 bits on every platform we build for, so only a
	 * message of 2^61 bytes or more would wrap.
	 */
	uint64_t bits = (uint64_t)len << 3;

	for (size_t done = 0; done + SHA256_BLOCK <= len; done += SHA256_BLOCK)
		sha256_block(state, p + done);

	/*
	 * Padding: the last partial block, 0x80, zeros, and the 64-bit big-endian
	 * length, which needs a second block when fewer than 9 bytes are left.
	 */
	if (rest)
		memcpy(tail, p + (len - rest), rest);
	tail[rest] = 0x80;
	tail_len = rest + 1 + 8 <= SHA256_BLOCK ? SHA256_BLOCK : 2 * SHA256_BLOCK;
	for (int i = 0; i < 8; i++)
		tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha256_block(state, tail);
	if (tail_len > SHA256_BLOCK)
		sha256_block(state, tail + SHA256_BLOCK);

	for (int i = 0; i < 8; i++)
		store_be32(digest + 4 * i, state[i]);
}
