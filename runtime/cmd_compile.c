// SPDX-License-Identifier: GPL-2.0
/*
 * tether compile: an envelope to its canonical compiled policy (tpol).
 * None of the policy verbs touches the kernel or needs privileges.
 * Exit statuses (README.md): 0 ok, 1 invalid input, 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/tether.h"

static const char compile_usage[] =
	"usage: tether compile ENVELOPE -o OUTPUT.tpol\n"
	"\n"
	"Compiles the envelope into the canonical binary policy the loader reads\n"
	"(tether run --envelope accepts either form) and prints its digest: the\n"
	"sha256 of OUTPUT's bytes.  Envelopes with the same meaning compile to the\n"
	"same bytes.  Exits 0 on success, 1 when the envelope is invalid or OUTPUT\n"
	"cannot be written, 2 on a usage error.\n";

/* Writes `len` bytes to `path` through a temporary file and rename(2). */
static int write_atomically(const char *path, const uint8_t *data, size_t len)
{
	char tmp[4096];
	size_t done = 0;
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len && r == 0) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n == 0)
			r = -EIO;	/* a regular file never takes nothing */
		else if (n > 0)
			done += (size_t)n;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int cmd_compile(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *output = NULL;
	struct tp_policy *policy = NULL;
	uint8_t *bytes = NULL;
	size_t len = 0;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			fputs(compile_usage, stdout);
			return TETHER_EXIT_OK;
		default:
			fputs(compile_usage, stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !output) {
		fputs(compile_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	if (policy_load(argv[optind], &policy) < 0)
		return TETHER_EXIT_INVALID;
	r = tp_policy_encode(policy, &bytes, &len);
	if (r < 0) {
		fprintf(stderr, "tether compile: encoding the policy of %s: %s\n", argv[optind],
			strerror(-r));
	} else if ((r = write_atomically(output, bytes, len)) < 0) {
		fprintf(stderr, "tether compile: cannot write %s: %s\n", output, strerror(-r));
	} else {
		printf("%s: %zu bytes\n", output, len);
		r = policy_print_digest(policy, stdout);
	}
	free(bytes);
	tp_policy_free(policy);
	return r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}
