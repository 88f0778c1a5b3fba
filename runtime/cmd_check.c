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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyc/policy.h"
#include "runtime/inputdigest.h"
#include "runtime/policy_json.h"
#include "runtime/tether.h"

static const char check_usage[] =
	"usage: tether check [--json] [--report] [--contract TASK.yaml] ENVELOPE\n"
	"       tether check --digest PATH...\n"
	"\n"
	"Validates the envelope (or a compiled policy) and prints its policy digest.\n"
	"Every error is printed as FILE:LINE:COLUMN: error: MESSAGE, all of a file at once;\n"
	"what is valid but worth a look as FILE:LINE:COLUMN: warning: MESSAGE (exit 0).\n"
	"ENVELOPE (or TASK) - is standard input, named <stdin> in errors.\n"
	"  --json               print one JSON object instead (docs/envelope.md): the\n"
	"                       errors with file, line, column and message, the digest,\n"
	"                       the acknowledged gaps and the contract's verdict; the\n"
	"                       exit status is the same\n"
	"  --report             also print the guarantee report: which term of the\n"
	"                       sandbox guarantee each field covers and what enforces it\n"
	"  --contract TASK      also check that the envelope grants no more than the task\n"
	"                       contract (allowed_paths, network.allow); free-text\n"
	"                       'forbidden' items are listed as notes\n"
	"  --digest PATH...     print the digest each input should list under\n"
	"                       filesystem.inputs[].digest: sha256 of a file, or the\n"
	"                       canonical tree digest of a directory (docs/envelope.md,\n"
	"                       \"Inputs by digest\"), as DIGEST  PATH lines\n"
	"Exits 0 when valid (and within the contract), 1 when not, 2 on a usage error;\n"
	"with --digest, 1 when a path could not be read or hashed.\n";

/* DIGEST  PATH for each path: what an input's digest key should say. */
static int print_digests(char **paths, int count)
{
	int status = TETHER_EXIT_OK;

	for (int i = 0; i < count; i++) {
		char why[PATH_MAX + 256], text[TP_DIGEST_TEXT_MAX];
		uint8_t d[32];

		if (input_digest(paths[i], NULL, d, why, sizeof(why)) < 0) {
			fprintf(stderr, "tether check: %s\n", why);
			status = TETHER_EXIT_INVALID;
			continue;
		}
		tp_digest_text(d, text);
		printf("%s  %s\n", text, paths[i]);
	}
	return status;
}

/* FILE:LINE:COLUMN: warning: MESSAGE on stderr. */
static void print_warnings(const char *path)
{
	struct tp_diags warnings = { 0 };

	if (policy_warnings(path, &warnings) == 0)
		for (size_t i = 0; i < warnings.count; i++)
			fprintf(stderr, "%s:%u:%u: warning: %s\n", warnings.items[i].file,
				warnings.items[i].line, warnings.items[i].column,
				warnings.items[i].message);
	tp_diags_free(&warnings);
}

/* Appends "notes":[...] from the contract's "note: ..." lines. */
static int json_notes(struct strbuf *sb, const char *text, size_t len)
{
	static const char prefix[] = "note: ";
	const char *p = text, *end = text + len;
	size_t n = 0;
	int r = sb_printf(sb, "\"notes\":[");

	while (p < end && !r) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t line = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t skip = line >= strlen(prefix) && memcmp(p, prefix, strlen(prefix)) == 0
				      ? strlen(prefix) : 0;

		r |= n++ ? sb_printf(sb, ",") : 0;
		r |= sb_json_string(sb, p + skip, line - skip);
		p += line + 1;
	}
	r |= sb_printf(sb, "]");
	return r ? -ENOMEM : 0;
}

/*
 * Checks the envelope against the task contract; with `sb`, appends
 * "contract":{...} instead of printing.  0 within, -EINVAL outside or
 * invalid, -ENOMEM.
 */
static int check_contract(const char *contract_path, const char *envelope_path,
			  struct strbuf *sb)
{
	const char *envelope_name = policy_input_name(envelope_path);
	struct tp_contract *contract = NULL;
	struct tp_envelope *env = NULL;
	struct tp_diags diags = { 0 };
	char *notes = NULL;
	size_t notes_len = 0;
	FILE *notes_out = sb ? open_memstream(&notes, &notes_len) : stdout;
	int r, s = 0;

	if (!notes_out)
		return -ENOMEM;
	r = policy_parse_contract(contract_path, &contract, &diags);
	if (r == 0)
		r = policy_parse_envelope(envelope_path, &env, &diags);
	if (r == 0)
		r = tp_contract_check(contract, envelope_name, env, &diags, notes_out);
	if (sb) {
		if (fclose(notes_out) != 0)
			s = -ENOMEM;
		s = s ?: sb_printf(sb, ",\"contract\":{\"file\":");
		s = s ?: json_str(sb, policy_input_name(contract_path));
		s = s ?: sb_printf(sb, ",\"ok\":%s,\"errors\":", r == 0 ? "true" : "false");
		s = s ?: json_diags(sb, &diags);
		s = s ?: sb_printf(sb, ",");
		s = s ?: json_notes(sb, notes ? notes : "", notes_len);
		s = s ?: sb_printf(sb, "}");
	} else if (r < 0) {
		policy_print_diags(&diags, contract ? envelope_path : contract_path, r);
	} else {
		printf("%s: within the contract %s\n", envelope_name,
		       policy_input_name(contract_path));
	}
	free(notes);
	tp_diags_free(&diags);
	tp_envelope_free(env);
	tp_contract_free(contract);
	return s ?: r;
}

/* The whole --json answer, one line on stdout. */
static int check_json(const char *path, const char *contract)
{
	struct tp_policy *policy = NULL;
	struct tp_diags diags = { 0 }, warnings = { 0 };
	struct strbuf sb = { 0 };
	int r, s, status;

	r = policy_load_diags(path, &policy, &diags);
	status = r < 0 ? TETHER_EXIT_INVALID : TETHER_EXIT_OK;
	s = r < 0 ? 0 : policy_warnings(path, &warnings);
	s = s ?: sb_printf(&sb, "{");
	s = s ?: json_input_members(&sb, policy_input_name(path), policy, &diags, r, &warnings);
	s = s ?: sb_printf(&sb, ",\"acknowledged_gaps\":[");
	for (size_t i = 0; policy && i < policy->gap_count && !s; i++) {
		s = i ? sb_printf(&sb, ",") : 0;
		s = s ?: json_str(&sb, policy->gaps[i]);
	}
	s = s ?: sb_printf(&sb, "]");
	if (!s && contract && policy) {
		r = check_contract(contract, path, &sb);
		if (r == -ENOMEM)
			s = r;
		else if (r < 0)
			status = TETHER_EXIT_INVALID;
	} else if (!s) {
		s = sb_printf(&sb, ",\"contract\":null");
	}
	s = s ?: sb_printf(&sb, "}\n");
	if (s == 0 && fwrite(sb.data, 1, sb.len, stdout) != sb.len)
		s = -EIO;
	if (s < 0) {
		fprintf(stderr, "tether check: writing the JSON answer: %s\n", strerror(-s));
		status = TETHER_EXIT_INVALID;
	}
	sb_free(&sb);
	tp_diags_free(&warnings);
	tp_diags_free(&diags);
	tp_policy_free(policy);
	return status;
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "report", no_argument, NULL, 'r' },
		{ "contract", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "digest", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *contract = NULL, *path, *name;
	struct tp_policy *policy = NULL;
	bool report = false, json = false, digest = false;
	int c, r, status = TETHER_EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "rc:jdh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			digest = true;
			break;
		case 'r':
			report = true;
			break;
		case 'c':
			contract = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(check_usage, stdout);
			return TETHER_EXIT_OK;
		default:
			fputs(check_usage, stderr);
			return TETHER_EXIT_USAGE;
		}
	}
	if (digest && (report || json || contract || optind == argc)) {
		fprintf(stderr, "tether check: --digest takes one or more paths and no other option\n");
		return TETHER_EXIT_USAGE;
	}
	if (digest)
		return print_digests(argv + optind, argc - optind);
	if (optind != argc - 1) {
		fputs(check_usage, stderr);
		return TETHER_EXIT_USAGE;
	}
	path = argv[optind];
	name = policy_input_name(path);
	if (json && report) {
		fprintf(stderr, "tether check: the guarantee report has no JSON form yet; use "
				"--report without --json\n");
		return TETHER_EXIT_USAGE;
	}
	if (contract && policy_path_is_stdin(contract) && policy_path_is_stdin(path)) {
		fprintf(stderr, "tether check: the contract and the envelope cannot both be "
				"standard input (-)\n");
		return TETHER_EXIT_USAGE;
	}
	if (contract && policy_is_compiled(path)) {
		fprintf(stderr, "tether check: --contract compares the envelope itself (YAML) with "
				"the contract, not a compiled policy: give %s's source\n",
			name);
		return TETHER_EXIT_USAGE;
	}
	if (json)
		return check_json(path, contract);
	if (policy_load(path, &policy) < 0)
		return TETHER_EXIT_INVALID;
	printf("%s: ok\n", name);
	print_warnings(path);
	r = policy_print_digest(policy, stdout);
	if (r < 0) {
		fprintf(stderr, "tether check: encoding the policy of %s: %s\n", name,
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
	if (contract && check_contract(contract, path, NULL) < 0)
		status = TETHER_EXIT_INVALID;
	return status;
}
