// SPDX-License-Identifier: GPL-2.0
/*
 * The policy verbs: check, compile, explain, diff.  They read files and
 * print; none of them touches the kernel or needs privileges.
 *
 * Exit statuses (README.md): 0 ok, 1 invalid input (diff: authority widened),
 * 2 usage error; diff uses 3 for an invalid input, since 1 is its verdict.
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

#define TETHER_EXIT_DIFF_INVALID 3

/* Prints every diagnostic (or the bare error) to stderr. */
static void print_diags(const struct tp_diags *diags, const char *path, int error)
{
	char *text = NULL;

	if (diags->count && tp_diags_format(diags, &text) == 0)
		fputs(text, stderr);
	else
		fprintf(stderr, "%s: error: %s\n", path, strerror(-error));
	free(text);
}

int policy_load(const char *path, struct tp_policy **out)
{
	struct tp_diags diags = { 0 };
	int r = tp_policy_load_file(path, out, &diags);

	if (r < 0)
		print_diags(&diags, path, r);
	tp_diags_free(&diags);
	return r;
}

static int print_digest(const struct tp_policy *policy, FILE *out)
{
	char text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32];
	int r = tp_policy_digest(policy, digest);

	if (r < 0)
		return r;
	tp_digest_text(digest, text);
	fprintf(out, "policy %s\n", text);
	return 0;
}

static const char check_usage[] =
	"usage: tether check [--report] [--contract TASK.yaml] ENVELOPE\n"
	"\n"
	"Validates the envelope (or a compiled policy) and prints its policy digest.\n"
	"Every error is printed as FILE:LINE:COLUMN: error: MESSAGE, all of a file at once.\n"
	"  --report             also print the guarantee report: which term of the\n"
	"                       sandbox guarantee each field covers and what enforces it\n"
	"  --contract TASK      also check that the envelope grants no more than the task\n"
	"                       contract (allowed_paths, network.allow); free-text\n"
	"                       'forbidden' items are listed as notes\n"
	"Exits 0 when valid (and within the contract), 1 when not, 2 on a usage error.\n";

/* Whether `path` starts with the compiled policy's magic. */
static bool is_compiled_policy(const char *path)
{
	char magic[4];
	FILE *f = fopen(path, "re");
	bool yes;

	if (!f)
		return false;
	yes = fread(magic, 1, sizeof(magic), f) == sizeof(magic) &&
	      memcmp(magic, TP_FORMAT_MAGIC, sizeof(magic)) == 0;
	fclose(f);
	return yes;
}

static int check_contract(const char *contract_path, const char *envelope_path)
{
	struct tp_contract *contract = NULL;
	struct tp_envelope *env = NULL;
	struct tp_diags diags = { 0 };
	int r;

	r = tp_contract_parse_file(contract_path, &contract, &diags);
	if (r == 0)
		r = tp_envelope_parse_file(envelope_path, &env, &diags);
	if (r == 0)
		r = tp_contract_check(contract, envelope_path, env, &diags, stdout);
	if (r < 0)
		print_diags(&diags, contract ? envelope_path : contract_path, r);
	else
		printf("%s: within the contract %s\n", envelope_path, contract_path);
	tp_diags_free(&diags);
	tp_envelope_free(env);
	tp_contract_free(contract);
	return r;
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "report", no_argument, NULL, 'r' },
		{ "contract", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *contract = NULL;
	struct tp_policy *policy = NULL;
	bool report = false;
	int c, r, status = TETHER_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "rc:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			report = true;
			break;
		case 'c':
			contract = optarg;
			break;
		case 'h':
			fputs(check_usage, stdout);
			return TETHER_EXIT_OK;
		default:
			fputs(check_usage, stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(check_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	if (contract && is_compiled_policy(argv[optind])) {
		fprintf(stderr, "tether check: --contract compares the envelope itself (YAML) with "
				"the contract, not a compiled policy: give %s's source\n",
			argv[optind]);
		return TETHER_EXIT_USAGE;
	}
	if (policy_load(argv[optind], &policy) < 0)
		return TETHER_EXIT_INVALID;
	printf("%s: ok\n", argv[optind]);
	r = print_digest(policy, stdout);
	if (r < 0) {
		fprintf(stderr, "tether check: encoding the policy of %s: %s\n", argv[optind],
			strerror(-r));
		status = TETHER_EXIT_INVALID;
	}
	/* Valid is not the same as enforced: say what the run goes without. */
	if (policy->gap_count) {
		printf("not enforced by this version (acknowledged):");
		for (size_t i = 0; i < policy->gap_count; i++)
			printf(" %s", policy->gaps[i]);
		printf("\n");
	}
	if (report && tp_report_write(policy, stdout) < 0)
		status = TETHER_EXIT_INVALID;
	tp_policy_free(policy);
	if (contract && check_contract(contract, argv[optind]) < 0)
		status = TETHER_EXIT_INVALID;
	return status;
}

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
		r = print_digest(policy, stdout);
	}
	free(bytes);
	tp_policy_free(policy);
	return r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}

static const char explain_usage[] =
	"usage: tether explain ENVELOPE\n"
	"\n"
	"Summarises what a run under the envelope (or compiled policy) may read,\n"
	"write, execute, reach and consume, what it leaves behind, and what this\n"
	"version does not enforce.  Exits 0, 1 when the input is invalid, 2 on a\n"
	"usage error.\n";

int cmd_explain(int argc, char **argv)
{
	struct tp_policy *policy = NULL;
	int r;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(explain_usage, stdout);
		return TETHER_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fputs(explain_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	if (policy_load(argv[1], &policy) < 0)
		return TETHER_EXIT_INVALID;
	r = tp_explain_write(policy, stdout);
	tp_policy_free(policy);
	return r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
}

static const char diff_usage[] =
	"usage: tether diff OLD NEW\n"
	"\n"
	"Lists every widening and narrowing of authority from OLD to NEW (envelopes\n"
	"or compiled policies), widenings first, compared by meaning: what a run may\n"
	"read, write, execute, reach and consume, not how the files are written.\n"
	"Exits 0 when nothing widened, 1 when something did (so it can gate a\n"
	"review), 2 on a usage error, 3 when an input is invalid.\n";

int cmd_diff(int argc, char **argv)
{
	struct tp_policy *old_policy = NULL, *new_policy = NULL;
	bool widened = false;
	int r, status;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(diff_usage, stdout);
		return TETHER_EXIT_OK;
	}
	if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-') {
		fputs(diff_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	r = policy_load(argv[1], &old_policy);
	if (policy_load(argv[2], &new_policy) < 0 || r < 0) {
		tp_policy_free(old_policy);
		tp_policy_free(new_policy);
		return TETHER_EXIT_DIFF_INVALID;
	}
	r = tp_diff_write(old_policy, new_policy, stdout, &widened);
	if (r < 0)
		fprintf(stderr, "tether diff: writing the comparison: %s\n", strerror(-r));
	status = r < 0 ? TETHER_EXIT_DIFF_INVALID : widened ? 1 : TETHER_EXIT_OK;
	tp_policy_free(old_policy);
	tp_policy_free(new_policy);
	return status;
}
