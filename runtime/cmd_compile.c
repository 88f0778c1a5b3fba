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
#include <sys/stat.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/fsutil.h"
#include "runtime/tether.h"

static const char compile_usage[] =
	"usage: tether compile ENVELOPE -o OUTPUT.tpol\n"
	"\n"
	"Compiles the envelope into the canonical binary policy the loader reads\n"
	"(tether run --envelope accepts either form) and prints its digest: the\n"
	"sha256 of OUTPUT's bytes.  Envelopes with the same meaning compile to the\n"
	"same bytes.  OUTPUT is written whole or not at all (a new file renamed\n"
	"over it), so it must be a regular file or not exist: a device, a FIFO or a\n"
	"directory there is refused.  -o - writes the policy to standard output and\n"
	"the digest to standard error.  ENVELOPE - is standard input.\n"
	"Exits 0 on success, 1 when the envelope is invalid or OUTPUT is not\n"
	"written, 2 on a usage error.\n";

/* What `mode` is, for a refusal: "a character device". */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/*
 * The output is written to a new file and renamed over `path`, which
 * replaces whatever is there.  For a regular file that is the point (a
 * reader never sees half a policy); for anything else it is a mistake with
 * consequences: as root, `-o /dev/null` would leave a regular file where
 * every program expects the null device.  So OUTPUT must be a regular file
 * or not exist, following symlinks (a link to a device is a device).  A
 * dangling symlink is replaced, as rename(2) does.
 */
static int check_output(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "tether compile: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	fprintf(stderr,
		"tether compile: not writing %s: it is %s, not a regular file, and compile "
		"replaces OUTPUT with a new file; give a file's path, or -o - for standard "
		"output\n",
		path, file_kind(st.st_mode));
	return -EEXIST;
}

/* Writes `len` bytes to `path` through a temporary file and rename(2). */
static int write_atomically(const char *path, const uint8_t *data, size_t len)
{
	char tmp[4096];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	/* Again just before the rename: the file may have appeared while we wrote. */
	if (r == 0 && check_output(path) < 0)
		r = -EEXIST;
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
	bool to_stdout;
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
	to_stdout = strcmp(output, "-") == 0;
	/* Before the envelope: a refused OUTPUT is the whole answer, whatever the input. */
	if (!to_stdout && check_output(output) < 0)
		return TETHER_EXIT_INVALID;
	if (policy_load(argv[optind], &policy) < 0)
		return TETHER_EXIT_INVALID;
	r = tp_policy_encode(policy, &bytes, &len);
	if (r < 0) {
		fprintf(stderr, "tether compile: encoding the policy of %s: %s\n", argv[optind],
			strerror(-r));
	} else if (to_stdout) {
		r = write_all(STDOUT_FILENO, bytes, len);
		if (r < 0)
			fprintf(stderr, "tether compile: writing the policy to standard output: %s\n",
				strerror(-r));
		else
			r = policy_print_digest(policy, stderr);
	} else if ((r = write_atomically(output, bytes, len)) < 0) {
		if (r != -EEXIST)	/* check_output() has said why */
			fprintf(stderr, "tether compile: cannot write %s: %s\n", output,
				strerror(-r));
	} else {
		printf("%s: %zu bytes\n", output, len);
		r = policy_print_digest(policy, stdout);
	}
	free(bytes);
	tp_policy_free(policy);
	return r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}
