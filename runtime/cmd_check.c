// SPDX-License-Identifier: GPL-2.0
/*
 * tether check: is an envelope (or a compiled policy) valid, its digest, its
 * guarantee report, and whether it fits a task contract.
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

static const char check_usage[] =
	"usage: tether check [--report] [--contract TASK.yaml] ENVELOPE\n"
	"\n"
	"Validates the envelope (or a compiled policy) and prints its policy digest.\n"
	"Every error is printed as FILE:LINE:COLUMN: error: MESSAGE, all of a file at once;\n"
	"what is valid but worth a look as FILE:LINE:COLUMN: warning: MESSAGE (exit 0).\n"
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

/* FILE:LINE:COLUMN: warning: MESSAGE on stderr, for what is valid but worth a look. */
static void print_warnings(const char *path)
{
	struct tp_envelope *env = NULL;
	struct tp_diags diags = { 0 }, warnings = { 0 };

	if (tp_envelope_parse_file(path, &env, &diags) == 0 &&
	    tp_envelope_warnings(path, env, &warnings) == 0) {
		for (size_t i = 0; i < warnings.count; i++)
			fprintf(stderr, "%s:%u:%u: warning: %s\n", warnings.items[i].file,
				warnings.items[i].line, warnings.items[i].column,
				warnings.items[i].message);
	}
	tp_diags_free(&warnings);
	tp_diags_free(&diags);
	tp_envelope_free(env);
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
		policy_print_diags(&diags, contract ? envelope_path : contract_path, r);
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
	if (!is_compiled_policy(argv[optind]))
		print_warnings(argv[optind]);
	r = policy_print_digest(policy, stdout);
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
