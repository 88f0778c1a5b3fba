// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for tether audit verify (runtime/sink/nodelog_verify.c):
 * the files it reads are exactly what an attacker may have changed, so every
 * byte string must be handled without a crash, an out-of-bounds access
 * (ASan), undefined behaviour (UBSan), a leak or a hang.  The input is one
 * log file; it is verified as it is, then again with every line that ends as
 * a node log line given the MAC the chain calls for under the target's fixed
 * key (so the checks past the MAC, checkpoints and their signatures, the
 * order and the gaps, are reached), with the input's first line as an
 * anchor too.  Invariants: the result is 0 or 1 (never an error: the files
 * can be read), and an empty log verifies.
 *
 * `make fuzz-nodelog` and `make fuzz-smoke` build and run it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/sink/nodelog.h"
#include "runtime/sink/nodelog_internal.h"

static char key_path[64];
static struct nodelog_key key;
static struct nodelog_mac *mac;
static FILE *devnull;

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void remove_key(void)
{
	unlink(key_path);
}

static void init(void)
{
	static const char text[] =
		"hmac-sha256 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
		"ed25519 202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f\n";
	char why[256];
	int fd;

	/* a real file: keys are opened O_NOFOLLOW, and /proc/self/fd/N is a link */
	snprintf(key_path, sizeof(key_path), "/tmp/tether-fuzz-nodelog-key-XXXXXX");
	fd = mkstemp(key_path);
	check(fd >= 0 && write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
	close(fd);
	atexit(remove_key);
	check(nodelog_key_load(key_path, false, false, &key, why, sizeof(why)) == 0);
	mac = nodelog_mac_new(key.hmac);
	devnull = fopen("/dev/null", "w");
	check(mac && devnull);
}

/* `data` as a file: a memfd, named by its /proc/self/fd path in `path`. */
static int as_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("nodelog", 0);

	check(fd >= 0);
	check(size == 0 || write(fd, data, size) == (ssize_t)size);
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* Every line that parses gets the MAC its predecessor's chain calls for. */
static uint8_t *rechain(const uint8_t *data, size_t size)
{
	uint8_t *out = malloc(size ? size : 1), prev[NODELOG_MAC_LEN] = { 0 };
	size_t pos = 0;

	check(out != NULL);
	memcpy(out, data, size);
	while (pos < size) {
		uint8_t *nl = memchr(out + pos, '\n', size - pos), m[NODELOG_MAC_LEN], old[32];
		size_t end = nl ? (size_t)(nl - out) : size, body;
		uint64_t seq;
		char hex[2 * NODELOG_MAC_LEN + 1];

		if (!nodelog_line_parse((char *)out + pos, end - pos, &seq, old, &body)) {
			check(nodelog_mac(mac, prev, (char *)out + pos, body, m) == 0);
			nodelog_hex(m, sizeof(m), hex);
			memcpy(out + pos + body + NODELOG_MAC_KEY_LEN, hex, 64);
			memcpy(prev, m, sizeof(prev));
		}
		pos = end + 1;
	}
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nodelog_verify_options o = { .key_path = NULL, .quiet = true };
	char path[64], anchor[64];
	const char *paths[1] = { path };
	uint8_t *chained;
	int fd, afd, r;

	if (!mac)
		init();
	o.key_path = key_path;
	fd = as_file(data, size, path, sizeof(path));
	r = nodelog_verify(&o, paths, 1, devnull, devnull);
	check(r == 0 || r == 1);
	check(size != 0 || r == 0);
	close(fd);

	chained = rechain(data, size);
	fd = as_file(chained, size, path, sizeof(path));
	r = nodelog_verify(&o, paths, 1, devnull, devnull);
	check(r == 0 || r == 1);
	/* the first line as the anchor: an error of its own (-EINVAL) when it is no checkpoint */
	afd = as_file(chained, size, anchor, sizeof(anchor));
	o.anchor_path = anchor;
	r = nodelog_verify(&o, paths, 1, devnull, devnull);
	check(r == 0 || r == 1 || r == -EINVAL);
	close(afd);
	close(fd);
	free(chained);
	return 0;
}
