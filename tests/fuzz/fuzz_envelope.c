// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for policyc: the whole path from untrusted bytes to a
 * compiled policy, and the binary form read back from untrusted bytes.
 *
 * Envelopes and encoded policies are written by someone other than the
 * operator who runs tether, so every input must end in diagnostics or a
 * policy, never in a crash, a leak, undefined behaviour or a policy whose
 * bytes change when they are read back.  The invariants checked here are the
 * ones policy.h promises:
 *
 *   - an envelope that parses and compiles encodes; its encoding decodes, and
 *     re-encodes to the same bytes (the digest is a function of the policy);
 *     and the policy passes tp_policy_validate() (so the envelope checks and
 *     the checks on loaded .tpol files agree);
 *   - any byte string tp_policy_decode() accepts re-encodes to itself (the
 *     decoder is strict: there is exactly one encoding of each policy);
 *   - the report, explain and diff writers handle every policy the library
 *     can produce or accept, and diff(p, p) widens nothing;
 *   - a task contract (also untrusted: it comes with the request) parses or
 *     fails cleanly, and one that parses can be checked against an envelope.
 *
 * A broken invariant is an abort(), which libFuzzer reports as a crash and
 * saves the input for.  `make fuzz` and `make fuzz-smoke` build and run it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/fields.h"
#include "policyc/policy.h"

#define FUZZ_NAME "fuzz.yaml"

/* Reports go here: opened once, because fopen per input would dominate the run. */
static FILE *devnull;
/* An envelope with every kind of grant, to check fuzzed contracts against. */
static struct tp_envelope *contract_target;

static const char contract_target_yaml[] =
	"sandbox:\n"
	"  filesystem:\n"
	"    root: read_only\n"
	"    workspace: {path: /srv/ws, write: [src/auth/**, README.md]}\n"
	"    write: [/tmp/scratch/**]\n"
	"  network_egress:\n"
	"    allowed_destinations: [api.github.com:443, 192.0.2.0/24, '*.pypi.org',\n"
	"      {cidr: '2001:db8::/32', ports: 53, protocol: udp}]\n"
	"  resources: {wall_clock: 10m}\n"
	"  acknowledge_unenforced: [filesystem.exec, network_egress.default,\n"
	"    filesystem.exact_paths, resources.wall_clock]\n";

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_envelope: invariant broken: %s\n", what);
	abort();
}

/* Every writer on one policy; none may crash, and p against itself widens nothing. */
static void write_reports(const struct tp_policy *policy)
{
	bool widened = false;

	tp_report_write(policy, devnull);
	tp_explain_write(policy, devnull);
	if (tp_diff_write(policy, policy, devnull, &widened) == 0 && widened)
		fail("diff(p, p) reports a widening");
}

/* encode(policy) must succeed, and decode(encode(policy)) must encode to the same bytes. */
static void check_round_trip(const struct tp_policy *policy)
{
	struct tp_policy *decoded = NULL;
	uint8_t *bytes = NULL, *again = NULL;
	size_t len = 0, again_len = 0;
	uint8_t digest[32], decoded_digest[32];
	char why[256] = "";

	if (tp_policy_encode(policy, &bytes, &len) < 0)
		fail("a compiled policy does not encode");
	if (tp_policy_validate(policy, why, sizeof(why)) < 0) {
		fprintf(stderr, "fuzz_envelope: validate: %s\n", why);
		fail("a compiled policy is not valid");
	}
	if (tp_policy_decode(bytes, len, &decoded, why, sizeof(why)) < 0) {
		fprintf(stderr, "fuzz_envelope: decode: %s\n", why);
		fail("the encoding of a compiled policy does not decode");
	}
	if (tp_policy_encode(decoded, &again, &again_len) < 0)
		fail("a decoded policy does not encode");
	if (again_len != len || memcmp(again, bytes, len) != 0)
		fail("encode(decode(encode(p))) differs from encode(p)");
	if (tp_policy_digest(policy, digest) < 0 || tp_policy_digest(decoded, decoded_digest) < 0)
		fail("tp_policy_digest failed");
	if (memcmp(digest, decoded_digest, sizeof(digest)) != 0)
		fail("digest(decode(encode(p))) differs from digest(p)");

	write_reports(decoded);
	free(again);
	free(bytes);
	tp_policy_free(decoded);
}

/* The input as YAML: parse, compile, round-trip, report. */
static void fuzz_envelope(const uint8_t *data, size_t size)
{
	struct tp_diags diags = { 0 };
	struct tp_envelope *env = NULL;
	struct tp_policy *policy = NULL;
	char *text = NULL;

	if (tp_envelope_parse(FUZZ_NAME, (const char *)data, size, &env, &diags) == 0 &&
	    tp_policy_compile(FUZZ_NAME, env, &policy, &diags) == 0) {
		check_round_trip(policy);
		write_reports(policy);
	}
	/* Diagnostics quote user text: formatting them is part of the attack surface. */
	if (tp_diags_format(&diags, &text) == 0)
		free(text);
	tp_policy_free(policy);
	tp_envelope_free(env);
	tp_diags_free(&diags);
}

/* The input as a hostile "tpol": whatever the decoder accepts must be canonical. */
static void fuzz_tpol(const uint8_t *data, size_t size)
{
	struct tp_policy *policy = NULL;
	uint8_t *bytes = NULL;
	size_t len = 0;
	char why[256];

	if (tp_policy_decode(data, size, &policy, why, sizeof(why)) < 0)
		return;
	if (tp_policy_encode(policy, &bytes, &len) < 0)
		fail("a decoded policy does not encode");
	if (len != size || memcmp(bytes, data, size) != 0)
		fail("an accepted tpol does not re-encode to its own bytes");
	write_reports(policy);
	free(bytes);
	tp_policy_free(policy);
}

/* The input as a task contract, checked against a fixed envelope. */
static void fuzz_contract(const uint8_t *data, size_t size)
{
	struct tp_diags diags = { 0 };
	struct tp_contract *contract = NULL;
	char *text = NULL;

	if (tp_contract_parse("task.yaml", (const char *)data, size, &contract, &diags) == 0)
		tp_contract_check(contract, "envelope.yaml", contract_target, &diags, devnull);
	if (tp_diags_format(&diags, &text) == 0)
		free(text);
	tp_contract_free(contract);
	tp_diags_free(&diags);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "we");
	if (!devnull) {
		perror("fuzz_envelope: /dev/null");
		abort();
	}
	if (tp_envelope_parse("envelope.yaml", contract_target_yaml,
			      sizeof(contract_target_yaml) - 1, &contract_target, NULL) != 0)
		fail("the fixed envelope for contracts does not parse");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_envelope(data, size);
	fuzz_tpol(data, size);
	fuzz_contract(data, size);
	return 0;
}
