// SPDX-License-Identifier: GPL-2.0
/*
 * The node log's keys and cryptography (runtime/sink/nodelog_internal.h):
 * HMAC-SHA-256 for the chain, Ed25519 for checkpoints, SHA-256 for the key
 * id, random keys: all OpenSSL's libcrypto, none of our own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "runtime/sink/nodelog.h"
#include "runtime/sink/nodelog_internal.h"

struct nodelog_mac {
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx;
};

struct nodelog_mac *nodelog_mac_new(const uint8_t key[NODELOG_KEY_LEN])
{
	struct nodelog_mac *m = calloc(1, sizeof(*m));
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};

	if (!m)
		return NULL;
	m->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	m->ctx = m->mac ? EVP_MAC_CTX_new(m->mac) : NULL;
	if (!m->ctx || !EVP_MAC_init(m->ctx, key, NODELOG_KEY_LEN, params)) {
		nodelog_mac_free(m);
		return NULL;
	}
	return m;
}

void nodelog_mac_free(struct nodelog_mac *m)
{
	if (!m)
		return;
	EVP_MAC_CTX_free(m->ctx);
	EVP_MAC_free(m->mac);
	free(m);
}

int nodelog_mac(struct nodelog_mac *m, const uint8_t prev[NODELOG_MAC_LEN], const char *data,
		size_t len, uint8_t out[NODELOG_MAC_LEN])
{
	size_t out_len = 0;

	/* a NULL key keeps the one set: no key schedule per line */
	if (!EVP_MAC_init(m->ctx, NULL, 0, NULL) ||
	    !EVP_MAC_update(m->ctx, prev, NODELOG_MAC_LEN) ||
	    !EVP_MAC_update(m->ctx, (const unsigned char *)data, len) ||
	    !EVP_MAC_final(m->ctx, out, &out_len, NODELOG_MAC_LEN) || out_len != NODELOG_MAC_LEN)
		return -EIO;
	return 0;
}

static int ed25519(const struct nodelog_key *k, const char *data, size_t len, uint8_t *sig,
		   size_t *sig_len, bool verify)
{
	EVP_PKEY *pkey = verify ? EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, k->pub, 32)
				: EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t ctx_len = strlen(NODELOG_SIG_CONTEXT);
	unsigned char *msg = malloc(ctx_len + len);
	int r = -EIO;

	if (!pkey || !md || !msg)
		goto out;
	/* Ed25519 is one-shot: the message whole */
	memcpy(msg, NODELOG_SIG_CONTEXT, ctx_len);
	memcpy(msg + ctx_len, data, len);
	if (verify) {
		if (EVP_DigestVerifyInit(md, NULL, NULL, NULL, pkey) == 1)
			r = EVP_DigestVerify(md, sig, *sig_len, msg, ctx_len + len) == 1;
	} else if (EVP_DigestSignInit(md, NULL, NULL, NULL, pkey) == 1 &&
		   EVP_DigestSign(md, sig, sig_len, msg, ctx_len + len) == 1 && *sig_len == 64) {
		r = 0;
	}
out:
	free(msg);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return r;
}

int nodelog_sign(const struct nodelog_key *k, const char *data, size_t len, uint8_t sig[64])
{
	size_t sig_len = 64;

	return ed25519(k, data, len, sig, &sig_len, false);
}

int nodelog_sig_verify(const struct nodelog_key *k, const char *data, size_t len,
		       const uint8_t *sig, size_t sig_len)
{
	return ed25519(k, data, len, (uint8_t *)sig, &sig_len, true);
}

void nodelog_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int nodelog_unhex(const char *in, size_t hex_len, uint8_t *out, size_t len)
{
	if (hex_len != 2 * len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int nodelog_line_parse(const char *line, size_t len, uint64_t *seq, uint8_t mac[NODELOG_MAC_LEN],
		       size_t *body_len)
{
	static const char seq_key[] = NODELOG_SEQ_KEY;
	size_t body, digits_end, i;
	uint64_t v = 0;

	if (len < NODELOG_SUFFIX_LEN + 2 || line[len - 1] != '}' || line[len - 2] != '"')
		return -EINVAL;
	body = len - NODELOG_SUFFIX_LEN;
	if (memcmp(line + body, NODELOG_MAC_KEY, NODELOG_MAC_KEY_LEN) ||
	    nodelog_unhex(line + body + NODELOG_MAC_KEY_LEN, 2 * NODELOG_MAC_LEN, mac,
			  NODELOG_MAC_LEN))
		return -EINVAL;
	/* ,"log_seq":N right before: digits back to the key */
	digits_end = i = body;
	while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9')
		i--;
	if (i == digits_end || digits_end - i > 19 || (line[i] == '0' && digits_end - i > 1) ||
	    i < sizeof(seq_key) - 1 ||
	    memcmp(line + i - (sizeof(seq_key) - 1), seq_key, sizeof(seq_key) - 1))
		return -EINVAL;
	for (size_t j = i; j < digits_end; j++)
		v = v * 10 + (uint64_t)(line[j] - '0');
	if (v == 0)
		return -EINVAL;
	*seq = v;
	*body_len = body;
	return 0;
}

static void key_derive(struct nodelog_key *k)
{
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32);
	size_t pub_len = 32;

	if (!pkey || !EVP_PKEY_get_raw_public_key(pkey, k->pub, &pub_len))
		k->has_seed = false;
	EVP_PKEY_free(pkey);
}

static void key_id(struct nodelog_key *k)
{
	unsigned char digest[32];
	unsigned int dlen = 0;

	if (EVP_Digest(k->pub, 32, digest, &dlen, EVP_sha256(), NULL) && dlen == 32)
		nodelog_hex(digest, 8, k->key_id);
	else
		snprintf(k->key_id, sizeof(k->key_id), "unknown");
}

void nodelog_key_text(const struct nodelog_key *k, char *key_text, size_t key_len,
		      char *pub_text, size_t pub_len)
{
	char hmac[65], seed[65], pub[65];

	nodelog_hex(k->hmac, 32, hmac);
	nodelog_hex(k->seed, 32, seed);
	nodelog_hex(k->pub, 32, pub);
	if (key_text)
		snprintf(key_text, key_len,
			 "# tether node log key (docs/audit.md, \"The node log\"): keep it root's, 0600\n"
			 "hmac-sha256 %s\ned25519 %s\n", hmac, seed);
	if (pub_text)
		snprintf(pub_text, pub_len,
			 "# tether node log public key: checks checkpoint signatures\n"
			 "ed25519 %s\n", pub);
}

int nodelog_key_load(const char *path, bool public_only, bool private_mode,
		     struct nodelog_key *k, char *why, size_t len)
{
	char buf[4096], *line, *save = NULL;
	struct stat st;
	bool have_pub = false;
	ssize_t n;
	int fd, r;

	memset(k, 0, sizeof(*k));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		r = -errno;
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (private_mode && (st.st_uid != 0 || (st.st_mode & 077))) {
		snprintf(why, len,
			 "%s: mode %04o, owner uid %u: a node log key must be root's and 0600 "
			 "(chown root: %s && chmod 600 %s)",
			 path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, path, path);
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		r = -errno;
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return r;
	}
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hex = strchr(line, ' ');
		bool ok;

		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (!hex)
			goto bad;
		*hex++ = '\0';
		if (!public_only && !strcmp(line, "hmac-sha256")) {
			ok = !nodelog_unhex(hex, strlen(hex), k->hmac, 32);
			k->has_hmac = ok;
		} else if (!strcmp(line, "ed25519")) {
			ok = !nodelog_unhex(hex, strlen(hex), public_only ? k->pub : k->seed, 32);
			k->has_seed = ok && !public_only;
			have_pub = ok && public_only;
		} else {
			ok = false;
		}
		if (!ok)
			goto bad;
	}
	if (!public_only && !(k->has_hmac && k->has_seed)) {
		snprintf(why, len, "%s: a node log key file holds an hmac-sha256 and an ed25519 line",
			 path);
		return -EINVAL;
	}
	if (public_only && !have_pub) {
		snprintf(why, len, "%s: no ed25519 public key line", path);
		return -EINVAL;
	}
	if (!public_only)
		key_derive(k);
	key_id(k);
	return 0;
bad:
	explicit_bzero(buf, sizeof(buf));
	snprintf(why, len, "%s: not a node log %s file (lines \"KIND HEX\": %s)", path,
		 public_only ? "public key" : "key",
		 public_only ? "ed25519 with 64 hex digits" : "hmac-sha256 and ed25519, 64 hex digits each");
	memset(k, 0, sizeof(*k));
	return -EINVAL;
}

int nodelog_key_create(const char *path)
{
	struct nodelog_key k = { .has_hmac = true, .has_seed = true };
	char text[512];
	size_t n;
	int fd, r = 0;

	if (RAND_bytes(k.hmac, 32) != 1 || RAND_bytes(k.seed, 32) != 1)
		return -EIO;
	key_derive(&k);
	if (!k.has_seed)
		return -EIO;
	nodelog_key_text(&k, text, sizeof(text), NULL, 0);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	n = strlen(text);
	if (write(fd, text, n) != (ssize_t)n || fsync(fd) < 0)
		r = -EIO;
	if (close(fd) < 0 && !r)
		r = -EIO;
	if (r)
		unlink(path);
	explicit_bzero(text, sizeof(text));
	explicit_bzero(&k, sizeof(k));
	return r;
}
