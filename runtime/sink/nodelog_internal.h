/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the node log's writer (nodelog.c) and its verifier (nodelog_verify.c)
 * share: the keys, the MAC and the signature, and how a line ends.
 * Everything cryptographic is OpenSSL's libcrypto.
 */
#ifndef TETHER_RUNTIME_SINK_NODELOG_INTERNAL_H
#define TETHER_RUNTIME_SINK_NODELOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NODELOG_MAC_LEN		32
#define NODELOG_KEY_LEN		32
/* ,"mac":"<64 hex>"} : what ends every line (before its newline) */
#define NODELOG_MAC_KEY		",\"mac\":\""
#define NODELOG_MAC_KEY_LEN	8
#define NODELOG_SUFFIX_LEN	(NODELOG_MAC_KEY_LEN + 2 * NODELOG_MAC_LEN + 2)
#define NODELOG_SEQ_KEY		",\"log_seq\":"
#define NODELOG_SIG_KEY		",\"signature\":\""
/* What a checkpoint's Ed25519 signature covers comes after this. */
#define NODELOG_SIG_CONTEXT	"tether node log checkpoint 1\n"

struct nodelog_key {
	bool has_hmac, has_seed;
	uint8_t hmac[NODELOG_KEY_LEN];
	uint8_t seed[NODELOG_KEY_LEN];	/* Ed25519 private key */
	uint8_t pub[NODELOG_KEY_LEN];	/* Ed25519 public key */
	char key_id[17];		/* the first 16 hex digits of sha256(pub) */
};

/*
 * Reads a key file (lines "hmac-sha256 HEX", "ed25519 HEX" with the seed,
 * "#" comments) or, with `public_only`, a public key file ("ed25519 HEX",
 * the public key).  `private_mode`: refuse a key file that anyone but its
 * owner may read or write, or that root does not own.  Returns 0, or a
 * negative errno with `why` saying what is wrong.
 */
int nodelog_key_load(const char *path, bool public_only, bool private_mode,
		     struct nodelog_key *k, char *why, size_t len);
/* The key file text and the public key file text for `k` (static buffers' size 256). */
void nodelog_key_text(const struct nodelog_key *k, char *key_text, size_t key_len,
		      char *pub_text, size_t pub_len);

struct nodelog_mac;
/* An HMAC-SHA-256 context with the key set; NULL when libcrypto fails. */
struct nodelog_mac *nodelog_mac_new(const uint8_t key[NODELOG_KEY_LEN]);
void nodelog_mac_free(struct nodelog_mac *m);
/* HMAC(key, prev || data); 0 or -EIO. */
int nodelog_mac(struct nodelog_mac *m, const uint8_t prev[NODELOG_MAC_LEN], const char *data,
		size_t len, uint8_t out[NODELOG_MAC_LEN]);

/* Ed25519 over NODELOG_SIG_CONTEXT || data: a 64-byte signature.  0 or -EIO. */
int nodelog_sign(const struct nodelog_key *k, const char *data, size_t len, uint8_t sig[64]);
/* 1 valid, 0 invalid, -EIO. */
int nodelog_sig_verify(const struct nodelog_key *k, const char *data, size_t len,
		       const uint8_t *sig, size_t sig_len);

void nodelog_hex(const uint8_t *in, size_t len, char *out);	/* out: 2*len+1 */
/* Exactly 2*len hex digits (either case) into out; 0 or -EINVAL. */
int nodelog_unhex(const char *in, size_t hex_len, uint8_t *out, size_t len);

/*
 * The log_seq and mac a line holds (`line` without its newline): 0, or
 * -EINVAL when it does not end as a node log line does.  *body_len: the
 * bytes the MAC covers (all before ,"mac").
 */
int nodelog_line_parse(const char *line, size_t len, uint64_t *seq, uint8_t mac[NODELOG_MAC_LEN],
		       size_t *body_len);

#endif
