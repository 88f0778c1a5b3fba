// SPDX-License-Identifier: GPL-2.0
/*
 * policyc: envelope parsing, diagnostics, path normalisation, compilation.
 *
 * Runs from the repository root (examples/ and tests/policyc/ are read).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "policyc/policy.h"

#define INVALID_DIR "tests/policyc/invalid"
#define EXAMPLES_DIR "examples"

/* The smallest valid envelope: every default is enforced, nothing to acknowledge. */
#define MINIMAL                                 \
	"sandbox:\n"                            \
	"  filesystem:\n"                       \
	"    root: read_only\n"                 \
	"    workspace:\n"                      \
	"      path: /tmp/tether-demo/workspace\n"
/* Six lines, so that what a test appends starts on line 7. */
#define VALID MINIMAL "  network_egress: {default: deny}\n"

/* What unknown-key messages list, per mapping. */
#define SANDBOX_KEYS "mode, image_digest, runtime_revision, identity, environment, filesystem, network_egress, resources, workspace_lifetime, artifacts, cleanup, audit, acknowledge_unenforced"
#define FILESYSTEM_KEYS "root, inputs, workspace, read, write, exec, deny, connect, abstract_sockets, devices"
#define WORKSPACE_KEYS "path, source, ref, mode, max_bytes, write"
#define TOP_KEYS "version, sandbox"

/* Per-test state, released by fini() so every test stays leak-free under ASan. */
static struct tp_diags diags;
static struct tp_envelope *env;

static void fini(void)
{
	tp_diags_free(&diags);
	tp_envelope_free(env);
	env = NULL;
}

TestSuite(policyc, .fini = fini, .timeout = 20);

static int parse_len(const char *text, size_t len)
{
	return tp_envelope_parse("t.yaml", text, len, &env, &diags);
}

static int parse(const char *text)
{
	return parse_len(text, strlen(text));
}

/* Asserts diagnostic `i` is exactly LINE:COLUMN: MESSAGE, with a readable failure. */
static void expect_diag(size_t i, unsigned int line, unsigned int column, const char *message)
{
	cr_assert_lt(i, diags.count, "expected diagnostic #%zu (%u:%u: %s), have only %zu",
		     i, line, column, message, diags.count);
	cr_expect_str_eq(diags.items[i].file, "t.yaml");
	cr_expect(diags.items[i].line == line && diags.items[i].column == column,
		  "diagnostic #%zu at %u:%u, expected %u:%u (%s)", i, diags.items[i].line,
		  diags.items[i].column, line, column, diags.items[i].message);
	cr_expect_str_eq(diags.items[i].message, message);
}

/* Parses `text`, which must fail with exactly one diagnostic. */
static void expect_only_error(const char *text, unsigned int line, unsigned int column,
			      const char *message)
{
	cr_assert_eq(parse(text), -EINVAL);
	cr_assert_null(env);
	expect_diag(0, line, column, message);
	cr_expect_eq(diags.count, 1, "expected one diagnostic, got %zu", diags.count);
}

static char *repeat(const char *unit, size_t times)
{
	size_t unit_len = strlen(unit);
	char *s = malloc(unit_len * times + 1);

	cr_assert_not_null(s);
	for (size_t i = 0; i < times; i++)
		memcpy(s + i * unit_len, unit, unit_len);
	s[unit_len * times] = '\0';
	return s;
}

/* ---- valid envelopes ---------------------------------------------------- */

Test(policyc, minimal_envelope)
{
	cr_assert_eq(parse(MINIMAL), 0);
	cr_assert_eq(diags.count, 0);
	cr_assert_not_null(env);
	cr_expect_str_eq(env->workspace_path, "/tmp/tether-demo/workspace");
	cr_expect_eq(env->gap_count, 0);
	tp_envelope_free(env);
	env = NULL;
	/* default-deny egress, written out, is enforced: no gap either */
	cr_assert_eq(parse(VALID), 0);
	cr_assert_eq(diags.count, 0);
	cr_expect_eq(env->gap_count, 0);
}

Test(policyc, key_order_comments_and_styles_do_not_matter)
{
	static const char *const texts[] = {
		("# leading comment\n"
		 "sandbox:   # trailing comment\n"
		 "  filesystem:\n"
		 "    workspace:\n"
		 "      # comment inside\n"
		 "      path: '/tmp/tether-demo/workspace'\n"
		 "    root: \"read_only\"\n"),
		"{sandbox: {filesystem: {workspace: {path: /tmp/tether-demo/workspace}, root: read_only},"
		" network_egress: {default: deny}}}",
		("%YAML 1.1\n---\n" VALID "...\n"),
		("sandbox:\n  filesystem:\n    root: !!str read_only\n"
		 "    workspace: !!map {path: /tmp/tether-demo/workspace}\n"),
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		cr_assert_eq(parse(texts[i]), 0, "text #%zu: %s", i,
			     diags.count ? diags.items[0].message : "");
		cr_expect_str_eq(env->workspace_path, "/tmp/tether-demo/workspace");
		tp_envelope_free(env);
		env = NULL;
	}
}

Test(policyc, workspace_path_is_normalised)
{
	cr_assert_eq(parse("sandbox:\n  filesystem:\n    root: read_only\n"
			   "    workspace:\n      path: /tmp//ws/./a/../b/\n"), 0);
	cr_expect_str_eq(env->workspace_path, "/tmp/ws/b");
}

Test(policyc, workspace_path_length_limit_applies_after_normalisation)
{
	/* 1 + 250 = 251 bytes: the longest path the kernel's rule key holds. */
	char *longest = repeat("a", 250);
	char *padded = repeat("/.", 200);
	char text[1024];

	snprintf(text, sizeof(text),
		 "sandbox: {filesystem: {root: read_only, workspace: {path: /%s}}}",
		 longest);
	cr_assert_eq(parse(text), 0);
	cr_expect_eq(strlen(env->workspace_path), 251);
	tp_envelope_free(env);
	env = NULL;

	/* 651 bytes as written, 251 after normalisation: accepted. */
	snprintf(text, sizeof(text),
		 "sandbox: {filesystem: {root: read_only, workspace: {path: %s/%s}}}",
		 padded, longest);
	cr_assert_eq(parse(text), 0);
	cr_expect_eq(strlen(env->workspace_path), 251);
	free(longest);
	free(padded);
}

/* ---- schema errors -------------------------------------------------------- */

Test(policyc, unknown_keys_list_what_is_expected)
{
	cr_assert_eq(parse(VALID "  filesytem: {}\nsandboxes: 1\n"), -EINVAL);
	expect_diag(0, 7, 3, "unknown key 'filesytem' in 'sandbox' (expected one of: " SANDBOX_KEYS ")");
	expect_diag(1, 8, 1, "unknown key 'sandboxes' at the top level (expected one of: " TOP_KEYS ")");
	cr_expect_eq(diags.count, 2);
}

Test(policyc, unknown_key_in_filesystem_and_workspace)
{
	cr_assert_eq(parse("sandbox:\n  filesystem:\n    root: read_only\n    rot: x\n"
			   "    workspace:\n      path: /w\n      paht: /x\n"), -EINVAL);
	expect_diag(0, 4, 5, "unknown key 'rot' in 'sandbox.filesystem' "
			     "(expected one of: " FILESYSTEM_KEYS ")");
	expect_diag(1, 7, 7, "unknown key 'paht' in 'sandbox.filesystem.workspace' "
			     "(expected one of: " WORKSPACE_KEYS ")");
	cr_expect_eq(diags.count, 2);
}

Test(policyc, wrong_types)
{
	expect_only_error("sandbox: [filesystem]\n", 1, 10, "'sandbox' must be a mapping, got a sequence");
	fini();
	expect_only_error("sandbox:\n", 1, 9, "'sandbox' must be a mapping, got an empty value");
	fini();
	expect_only_error("sandbox:\n  filesystem: ro\n", 2, 15,
			  "'filesystem' must be a mapping, got a scalar");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root:\n      - read_only\n"
			  "    workspace: {path: /w}\n",
			  4, 7, "'root' must be a scalar, got a sequence");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: {mode: read_only}\n"
			  "    workspace: {path: /w}\n",
			  3, 11, "'root' must be a scalar, got a mapping");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n    workspace: /w\n",
			  4, 16, "'workspace' must be a mapping, got a scalar");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n    workspace:\n"
			  "      path: [/w]\n",
			  5, 13, "'path' must be a scalar, got a sequence");
}

Test(policyc, root_accepts_only_read_only)
{
	expect_only_error("sandbox:\n  filesystem:\n    root: read_write\n    workspace: {path: /w}\n",
			  3, 11, "'root' must be 'read_only' (the only mode this version enforces), "
				 "got 'read_write'");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root:\n    workspace: {path: /w}\n",
			  3, 10, "'root' must be 'read_only' (the only mode this version enforces), "
				 "got an empty value");
}

Test(policyc, required_keys)
{
	/* Both at 1:1, in the order found: the unknown key, then the missing one. */
	cr_assert_eq(parse("foo: 1\n"), -EINVAL);
	expect_diag(0, 1, 1, "unknown key 'foo' at the top level (expected one of: " TOP_KEYS ")");
	expect_diag(1, 1, 1, "missing required key 'sandbox' at the top level");
	cr_expect_eq(diags.count, 2);
	fini();

	cr_assert_eq(parse("{}\n"), -EINVAL);
	expect_diag(0, 1, 1, "missing required key 'sandbox' at the top level");
	fini();
	expect_only_error("sandbox: {}\n", 1, 1, "missing required key 'filesystem' in 'sandbox'");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    workspace: {path: /w}\n", 2, 3,
			  "missing required key 'root' in 'sandbox.filesystem'");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n", 2, 3,
			  "missing required key 'workspace' in 'sandbox.filesystem'");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n    workspace: {}\n", 4, 5,
			  "missing required key 'path' in 'sandbox.filesystem.workspace'");
}

Test(policyc, workspace_path_checks)
{
	static const char prefix[] = "sandbox:\n  filesystem:\n    root: read_only\n"
				     "    workspace:\n      path: ";
	static const struct {
		const char *value;
		const char *message;
	} cases[] = {
		{ "relative/dir", "'path' must be an absolute path (starting with '/'), got 'relative/dir'" },
		{ "''", "'path' must be an absolute path (starting with '/'), got ''" },
		{ "", "'path' must be an absolute path, got an empty value" },
		{ "\"/tmp/ws\\0/etc\"", "'path' contains a NUL byte" },
		{ "/", "the workspace must not be '/': that would make the whole file system writable" },
		{ "//./", "the workspace must not be '/': that would make the whole file system writable" },
		{ "/tmp/../..", "the workspace must not be '/': that would make the whole file system writable" },
	};
	char text[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		snprintf(text, sizeof(text), "%s%s\n", prefix, cases[i].value);
		/* An empty value sits right after "path:" (libyaml's mark), the others at 5:13. */
		expect_only_error(text, 5, cases[i].value[0] ? 13 : 12, cases[i].message);
		fini();
	}
}

Test(policyc, workspace_path_too_long)
{
	char *name = repeat("a", 251);
	char text[512];

	snprintf(text, sizeof(text),
		 "sandbox:\n  filesystem:\n    root: read_only\n    workspace:\n      path: /%s\n", name);
	expect_only_error(text, 5, 13,
			  "'path' is 252 bytes long after normalisation, over the limit of 251: "
			  "the kernel's path rule key holds at most 251 bytes");
	free(name);
}

Test(policyc, all_errors_are_reported_in_one_pass_in_file_order)
{
	cr_assert_eq(parse("sandbox:\n"
			   "  filesystem:\n"
			   "    root: read_write\n"
			   "    workspace:\n"
			   "      path: relative/ws\n"
			   "  resources:\n"
			   "    cpu: lots\n"), -EINVAL);
	cr_assert_eq(diags.count, 3);
	expect_diag(0, 3, 11, "'root' must be 'read_only' (the only mode this version enforces), "
			      "got 'read_write'");
	expect_diag(1, 5, 13, "'path' must be an absolute path (starting with '/'), got 'relative/ws'");
	expect_diag(2, 7, 10, "invalid 'cpu': 'lots' is not a CPU amount; expected CPUs ('2', "
			      "'0.5') or milli-CPUs ('500m')");
}

Test(policyc, errors_found_at_different_stages_come_out_in_file_order)
{
	/* Missing keys are known only after a mapping's end, duplicates too. */
	cr_assert_eq(parse("sandbox:\n"
			   "  identity: {uid: 4294967295}\n"
			   "  filesystem:\n"
			   "    workspace: {path: /w, path: /v}\n"
			   "  x: !custom 1\n"), -EINVAL);
	expect_diag(0, 2, 19, "'uid' must not be 4294967295: that is (uid_t)-1, which the kernel "
			      "reads as \"unchanged\", not an id");
	expect_diag(1, 3, 3, "missing required key 'root' in 'sandbox.filesystem'");
	expect_diag(2, 4, 27, "duplicate key 'path' (first defined at line 4)");
	expect_diag(3, 5, 3, "unknown key 'x' in 'sandbox' (expected one of: " SANDBOX_KEYS ")");
	expect_diag(4, 5, 6, "tag '!custom' is not supported: an envelope uses only the standard "
			     "tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)");
	cr_expect_eq(diags.count, 5);
}

Test(policyc, user_text_in_messages_is_escaped_and_truncated)
{
	char *long_key = repeat("k", 100);
	char text[512];
	char message[512];

	expect_only_error(VALID "  \"\\e[31mred\": 1\n", 7, 3,
			  "unknown key '\\x1b[31mred' in 'sandbox' (expected one of: " SANDBOX_KEYS ")");
	fini();

	snprintf(text, sizeof(text), VALID "  %s: 1\n", long_key);
	long_key[64] = '\0';
	snprintf(message, sizeof(message),
		 "unknown key '%s...' in 'sandbox' (expected one of: " SANDBOX_KEYS ")", long_key);
	expect_only_error(text, 7, 3, message);
	free(long_key);
}

/* ---- YAML structure and hostile input ------------------------------------- */

Test(policyc, duplicate_keys)
{
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n"
			  "    workspace: {path: /w}\n    root: read_only\n",
			  5, 5, "duplicate key 'root' (first defined at line 3)");
	fini();

	/* Quoting does not make a key different; every repeat is reported. */
	cr_assert_eq(parse(VALID "'sandbox': {}\n\"sandbox\": {}\n"), -EINVAL);
	expect_diag(0, 7, 1, "duplicate key 'sandbox' (first defined at line 1)");
	expect_diag(1, 8, 1, "duplicate key 'sandbox' (first defined at line 1)");
	cr_expect_eq(diags.count, 2);
}

/* Quadratic work would run into the suite's timeout (no wall-clock assertion). */
Test(policyc, many_distinct_keys_are_checked_quickly, .timeout = 10)
{
	/* 40000 keys (80003 nodes): a quadratic duplicate check would crawl here. */
	size_t keys = 40000;
	char *text = malloc(keys * 16 + 64);
	size_t len = 0;

	cr_assert_not_null(text);
	len += (size_t)sprintf(text + len, "{");
	for (size_t i = 0; i < keys; i++)
		len += (size_t)sprintf(text + len, "k%zu: 1, ", i);
	len += (size_t)sprintf(text + len, "k0: 2}\n");

	cr_assert_eq(parse_len(text, len), -EINVAL);
	/* One duplicate, 40000 unknown keys and the missing 'sandbox'. */
	cr_expect_eq(diags.count, keys + 2);
	cr_expect_str_eq(diags.items[0].message, "missing required key 'sandbox' at the top level");
	free(text);
}

Test(policyc, non_scalar_keys)
{
	expect_only_error(VALID "[a, b]: 1\n", 7, 1, "mapping keys must be scalars, got a sequence");
	fini();
	expect_only_error(VALID "? {a: b}\n: 1\n", 7, 3, "mapping keys must be scalars, got a mapping");
}

Test(policyc, anchors_are_refused_and_checking_continues)
{
	cr_assert_eq(parse("sandbox:\n  filesystem:\n    root: &mode read_only\n"
			   "    workspace: {path: relative}\n"), -EINVAL);
	expect_diag(0, 3, 11, "anchor '&mode' is not supported: an envelope spells out every value");
	expect_diag(1, 4, 23, "'path' must be an absolute path (starting with '/'), got 'relative'");
	cr_expect_eq(diags.count, 2);
}

Test(policyc, aliases_end_parsing)
{
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n"
			  "    workspace: *ws\n    bogus: 1\n",
			  4, 16, "alias '*ws' is not supported: an envelope spells out every value");
}

Test(policyc, billion_laughs_fails_fast_at_the_first_alias, .timeout = 5)
{
	char text[4096] = "lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";

	/* Nine levels of nine aliases each: 9^9 values if anything expanded them. */
	for (int level = 1; level <= 9; level++) {
		char line[256];
		int n = snprintf(line, sizeof(line), "lol%d: &lol%d [", level, level);

		for (int i = 0; i < 9; i++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s*lol%d", i ? ", " : "",
				      level - 1);
		snprintf(line + n, sizeof(line) - (size_t)n, "]\n");
		strcat(text, line);
	}
	cr_assert_eq(parse(text), -EINVAL);
	expect_diag(0, 1, 7, "anchor '&lol0' is not supported: an envelope spells out every value");
	expect_diag(1, 2, 7, "anchor '&lol1' is not supported: an envelope spells out every value");
	expect_diag(2, 2, 14, "alias '*lol0' is not supported: an envelope spells out every value");
	cr_expect_eq(diags.count, 3, "parsing must stop at the first alias");
}

Test(policyc, tags)
{
	expect_only_error("sandbox:\n  filesystem:\n    root: !custom read_only\n"
			  "    workspace: {path: /w}\n",
			  3, 11, "tag '!custom' is not supported: an envelope uses only the standard tags "
				 "(!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: ! read_only\n"
			  "    workspace: {path: /w}\n",
			  3, 11, "tag '!' is not supported: an envelope uses only the standard tags "
				 "(!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)");
	fini();
	/* The value is still checked: two problems at one position, tag first. */
	cr_assert_eq(parse("sandbox:\n  filesystem:\n    root: !!binary cmVhZF9vbmx5\n"
			   "    workspace: {path: /w}\n"), -EINVAL);
	expect_diag(0, 3, 11, "tag '!!binary' is not supported on a scalar: an envelope uses only "
			      "the standard tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)");
	expect_diag(1, 3, 11, "'root' must be 'read_only' (the only mode this version enforces), "
			      "got 'cmVhZF9vbmx5'");
	cr_expect_eq(diags.count, 2);
	fini();
	cr_assert_eq(parse(VALID "  x: !!seq {}\n"), -EINVAL);
	expect_diag(1, 7, 6, "tag '!!seq' is not supported on a mapping: an envelope uses only "
			     "the standard tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)");
	cr_expect_eq(diags.count, 2);
	fini();
	fini();
	/* A %TAG directive can point "!!" elsewhere; what counts is the resolved tag. */
	cr_assert_eq(parse("%TAG !! tag:example.com,2024:\n---\n" VALID
			   "  x: !!str 1\n"), -EINVAL);
	expect_diag(0, 9, 3, "unknown key 'x' in 'sandbox' (expected one of: " SANDBOX_KEYS ")");
	expect_diag(1, 9, 6, "tag 'tag:example.com,2024:str' is not supported: an envelope uses "
			     "only the standard tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)");
}

Test(policyc, nesting_depth_limit)
{
	/* The top-level mapping is level 1, so 31 sequences reach level 32: allowed. */
	char *open = repeat("[", 32);
	char *close = repeat("]", 32);
	char text[256];

	snprintf(text, sizeof(text), "sandbox: %.*s%.*s\n", 31, open, 31, close);
	expect_only_error(text, 1, 10, "'sandbox' must be a mapping, got a sequence");
	fini();

	/* The 32nd '[' (column 10 + 31) opens level 33. */
	snprintf(text, sizeof(text), "sandbox: %s%s\n", open, close);
	expect_only_error(text, 1, 41, "nesting deeper than 32 levels; refusing to read further");
	free(open);
	free(close);
}

Test(policyc, very_deep_nesting_stops_early, .timeout = 10)
{
	/* A megabyte of '[': must neither recurse nor read past level 33. */
	size_t depth = 1 << 20;
	char *text = repeat("[", depth);

	cr_assert_eq(parse_len(text, depth), -EINVAL);
	expect_diag(0, 1, 33, "nesting deeper than 32 levels; refusing to read further");
	cr_expect_eq(diags.count, 1);
	free(text);
}

Test(policyc, node_count_limit)
{
	/*
	 * Nodes: the top-level mapping, the key "sandbox", the sequence, then
	 * the items "a": item k (1-based) is node k + 3, so item 99998 is node
	 * 100001, the first too many.  Item k starts at column 11 + 2 (k - 1).
	 */
	char *items = repeat("a,", 100000);
	size_t len = strlen("sandbox: [") + strlen(items) + strlen("]\n");
	char *text = malloc(len + 1);

	cr_assert_not_null(text);
	snprintf(text, len + 1, "sandbox: [%s]\n", items);
	cr_assert_eq(parse(text), -EINVAL);
	expect_diag(0, 1, 11 + 2 * (99998 - 1),
		    "the envelope has more than 100000 nodes; refusing to read further");
	cr_expect_eq(diags.count, 1);
	free(items);
	free(text);
}

Test(policyc, input_size_limit)
{
	size_t len = TP_ENVELOPE_MAX_BYTES + 1;
	char *text = malloc(len);
	char message[128];

	cr_assert_not_null(text);
	memset(text, '#', len);
	cr_assert_eq(parse_len(text, len), -EFBIG);
	cr_assert_null(env);
	cr_assert_eq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 0);
	snprintf(message, sizeof(message), "the envelope is %zu bytes, over the limit of %u bytes",
		 len, TP_ENVELOPE_MAX_BYTES);
	cr_expect_str_eq(diags.items[0].message, message);
	fini();

	/* Exactly at the limit is read (and here is all comment: empty). */
	cr_assert_eq(parse_len(text, len - 1), -EINVAL);
	expect_diag(0, 1, 1, "empty envelope: expected a mapping with key 'sandbox'");
	free(text);
}

Test(policyc, file_size_limit)
{
	char path[] = "/tmp/test_policyc_XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, TP_ENVELOPE_MAX_BYTES + 1), 0);
	close(fd);
	cr_expect_eq(tp_envelope_parse_file(path, &env, &diags), -EFBIG);
	cr_expect_null(env);
	cr_assert_eq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 0);
	cr_expect_str_eq(diags.items[0].message,
			 "the file is 4194305 bytes, over the limit of 4194304 bytes");
	unlink(path);
}

Test(policyc, nul_byte)
{
	static const char text[] = "sandbox:\n  file\0system:\n";

	cr_assert_eq(parse_len(text, sizeof(text) - 1), -EINVAL);
	expect_diag(0, 2, 7, "NUL byte in the envelope: YAML text cannot contain one");
	cr_expect_eq(diags.count, 1);
}

Test(policyc, empty_input)
{
	static const char empty[] = "empty envelope: expected a mapping with key 'sandbox'";

	expect_only_error("", 1, 1, empty);
	fini();
	expect_only_error("# only a comment\n\n", 1, 1, empty);
	fini();
	expect_only_error("---\n", 2, 1, empty);
	fini();
	expect_only_error("~\n", 1, 1, empty);
	fini();
	cr_assert_eq(tp_envelope_parse("t.yaml", NULL, 0, &env, &diags), -EINVAL);
	expect_diag(0, 1, 1, empty);
}

Test(policyc, top_level_must_be_a_mapping)
{
	expect_only_error("- sandbox\n", 1, 1,
			  "the envelope must be a mapping with key 'sandbox', got a sequence");
	fini();
	expect_only_error("sandbox\n", 1, 1,
			  "the envelope must be a mapping with key 'sandbox', got a scalar");
}

Test(policyc, multiple_documents)
{
	expect_only_error(VALID "---\n" VALID, 7, 1,
			  "a second document starts here; an envelope is exactly one YAML document");
	fini();
	expect_only_error(VALID "...\n---\n" VALID, 8, 1,
			  "a second document starts here; an envelope is exactly one YAML document");
}

Test(policyc, yaml_syntax_errors_carry_libyaml_problem_and_mark)
{
	expect_only_error("sandbox:\n  filesystem:\n    root: read_only\n   workspace: {}\n", 4, 4,
			  "did not find expected key (while parsing a block mapping at line 2, column 3)");
	fini();
	expect_only_error("sandbox: [a, b\n", 2, 1,
			  "did not find expected ',' or ']' (while parsing a flow sequence at line 1, "
			  "column 10)");
	fini();
	expect_only_error("sandbox:\n  filesystem:\n    root: 'read_only\n", 4, 1,
			  "found unexpected end of stream (while scanning a quoted scalar at line 3, "
			  "column 11)");
	fini();
	/* Reader errors give an offset, not a mark: the position is computed from it. */
	expect_only_error("sandbox:\n  fs: \x1b[31m\n", 2, 7,
			  "control characters are not allowed (0x1b)");
}

#define UTF8_HINT ": an envelope is UTF-8 text; save the file as UTF-8"
#define LATIN1_HINT UTF8_HINT " (from Latin-1: iconv -f LATIN1 -t UTF-8)"

/*
 * Text that is not UTF-8 is reported at the first byte of the broken
 * character, which the message names (libyaml's own message named, for a
 * broken continuation, the byte after it, and the column was one late).
 */
Test(policyc, bytes_that_are_not_utf8_are_named_where_they_are)
{
	expect_only_error("sandbox:\n  fs: caf\xc3\xa9 \xff\n", 2, 12,
			  "byte 0xff is not UTF-8 (no character starts with it)" LATIN1_HINT);
	fini();
	/* Latin-1 "café/": 0xe9 starts a three-byte character, '/' does not continue it */
	expect_only_error("sandbox:\n  fs: /caf\xe9/x\n", 2, 11,
			  "byte 0xe9 is not UTF-8 here (it starts a character that 0x2f does not "
			  "continue)" LATIN1_HINT);
	fini();
	/* the break two bytes in: still the first byte's position */
	expect_only_error("sandbox:\n  fs: \xf0\x9fx\n", 2, 7,
			  "byte 0xf0 is not UTF-8 here (it starts a character that 0x78 does not "
			  "continue)" LATIN1_HINT);
	fini();
	/* cut short by the end of the text, and by a line break before it */
	expect_only_error("sandbox:\n  fs: caf\xe9", 2, 10,
			  "byte 0xe9 is not UTF-8 here (it starts a character, and the text ends "
			  "inside it)" LATIN1_HINT);
	fini();
	expect_only_error("sandbox:\n  fs: caf\xe9\n", 2, 10,
			  "byte 0xe9 is not UTF-8 here (it starts a character that 0x0a does not "
			  "continue)" LATIN1_HINT);
	fini();
	/* characters after a valid multi-byte one count as one column each */
	expect_only_error("sandbox:\n  f\xc3\xa9: \xc0\xaf\n", 2, 7,
			  "bytes 0xc0 0xaf are not UTF-8 (an overlong form: a character in more "
			  "bytes than it needs)" UTF8_HINT);
	fini();
	expect_only_error("sandbox:\n  fs: \xed\xa0\x80\n", 2, 7,
			  "bytes 0xed 0xa0 0x80 are not UTF-8 (they encode U+D800, a UTF-16 "
			  "surrogate, not a character)" UTF8_HINT);
}

Test(policyc, utf16_is_not_guessed)
{
	static const char text[] = "\xff\xfes\0a\0";
	static const char message[] =
		"the envelope is UTF-16 (it starts with a UTF-16 byte order mark): it must be "
		"UTF-8 text; convert it, for example with iconv -f UTF-16 -t UTF-8";

	/* Said before the NUL bytes UTF-16 text is full of. */
	cr_assert_eq(parse_len(text, sizeof(text) - 1), -EINVAL);
	expect_diag(0, 1, 1, message);
	cr_expect_eq(diags.count, 1);
	fini();
	expect_only_error("\xfe\xff", 1, 1, message);
	fini();
	/* a 0xff elsewhere is only a byte that is not UTF-8 */
	expect_only_error("\xff", 1, 1, "byte 0xff is not UTF-8 (no character starts with it)"
			  LATIN1_HINT);
}

/*
 * A UTF-8 byte order mark is skipped: the envelope means what it means
 * without one, and positions are those an editor shows, which does not
 * show the mark.  libyaml, told the text is UTF-8, took the mark for a
 * character of line 1: its columns were one off there, and a top-level
 * key on a later line fell outside the top-level mapping.
 */
Test(policyc, utf8_byte_order_mark_is_skipped)
{
	static const char bom[] = "\xef\xbb\xbf";
	char text[512];

	snprintf(text, sizeof(text), "%s%s", bom, VALID);
	cr_assert_eq(parse(text), 0, "%s", diags.count ? diags.items[0].message : "");
	cr_expect_str_eq(env->workspace_path, "/tmp/tether-demo/workspace");
	fini();
	snprintf(text, sizeof(text), "%s---\n%s", bom, VALID);
	cr_assert_eq(parse(text), 0, "%s", diags.count ? diags.items[0].message : "");
	fini();
	/* positions on line 1 and on later lines, from the tree, libyaml and the reader */
	snprintf(text, sizeof(text), "%ssandbox: 1\n", bom);
	expect_only_error(text, 1, 10, "'sandbox' must be a mapping, got a scalar");
	fini();
	snprintf(text, sizeof(text), "%s%sversion: 1\nfoo: 1\n", bom, VALID);
	cr_assert_eq(parse(text), -EINVAL);
	expect_diag(0, 8, 1, "unknown key 'foo' at the top level (expected one of: " TOP_KEYS ")");
	fini();
	snprintf(text, sizeof(text), "%ssandbox: [\xff]\n", bom);
	expect_only_error(text, 1, 11, "byte 0xff is not UTF-8 (no character starts with it)"
			  LATIN1_HINT);
	fini();
	snprintf(text, sizeof(text), "%ssandbox:\n  fs: \x1b\n", bom);
	expect_only_error(text, 2, 7, "control characters are not allowed (0x1b)");
	fini();
	snprintf(text, sizeof(text), "%ssa\n", bom);
	cr_assert_eq(parse_len(text, strlen(text) + 1), -EINVAL);	/* with the NUL */
	expect_diag(0, 2, 1, "NUL byte in the envelope: YAML text cannot contain one");
}

/*
 * libyaml's messages for three everyday mistakes become what to write
 * instead, at the offending value: a tab, a wildcard hostname read as an
 * alias, an IPv6 address with a port read as a flow sequence.
 */
Test(policyc, yaml_mistakes_get_a_hint)
{
	static const char tab[] = "a tab character: YAML indents with spaces only; replace the "
				  "tab with spaces";

	expect_only_error("sandbox:\n\tfilesystem: {}\n", 2, 1, tab);
	fini();
	expect_only_error("sandbox:\n  filesystem:\n  \troot: read_only\n", 3, 3, tab);
	fini();
	/* a block scalar's indentation: libyaml's other tab message */
	expect_only_error("sandbox:\n  runtime_revision: |\n\tx\n", 3, 1, tab);
	fini();
	expect_only_error(MINIMAL "  network_egress:\n    allowed_destinations:\n"
			  "      - *.example.org:443\n", 8, 9,
			  "a plain value cannot start with '*' (YAML reads an alias): quote it "
			  "(\"*.example.org:443\")");
	fini();
	expect_only_error("x: [a, *.b, c]\n", 1, 8,
			  "a plain value cannot start with '*' (YAML reads an alias): quote it "
			  "(\"*.b\")");
	fini();
	expect_only_error(MINIMAL "  network_egress:\n    allowed_destinations:\n"
			  "      - [2001:db8::1]:443  # the proxy\n", 8, 9,
			  "a plain value cannot start with '[' (YAML reads a flow sequence, which "
			  "ends at the ']'): quote it (\"[2001:db8::1]:443\")");
	fini();
	/* in a flow mapping, the same mistake and the same words */
	expect_only_error(MINIMAL "  network_egress:\n    allowed_destinations:\n"
			  "      - {host: [2001:db8::1]:443}\n", 8, 16,
			  "a plain value cannot start with '[' (YAML reads a flow sequence, which "
			  "ends at the ']'): quote it (\"[2001:db8::1]:443\")");
	fini();
	/* in a flow sequence it reads as a one-pair mapping: the key is a sequence */
	cr_assert_eq(parse(MINIMAL "  network_egress:\n    allowed_destinations: [a.org, "
			   "[2001:db8::1]:443]\n"), -EINVAL);
	expect_diag(0, 7, 35, "a plain value cannot start with '[' (YAML reads a flow sequence, "
		    "and the ':' after it makes that a mapping key): quote it "
		    "(\"[2001:db8::1]:443\")");
	fini();
	/* without a port after the ']', libyaml's words stay */
	expect_only_error("x:\n  - [a]:b\n", 2, 8,
			  "did not find expected '-' indicator (while parsing a block collection at "
			  "line 2, column 3)");
	fini();
	cr_assert_eq(parse("sandbox: {[a]: 1}\n"), -EINVAL);
	expect_diag(1, 1, 11, "mapping keys must be scalars, got a sequence");
}

Test(policyc, failure_leaves_output_untouched)
{
	struct tp_envelope *sentinel = (struct tp_envelope *)&diags;
	struct tp_envelope *out = sentinel;

	cr_assert_eq(tp_envelope_parse("t.yaml", "sandbox: 1\n", 11, &out, &diags), -EINVAL);
	cr_expect_eq(out, sentinel);
}

Test(policyc, diags_may_be_null)
{
	cr_expect_eq(tp_envelope_parse("t.yaml", "sandbox: 1\n", 11, &env, NULL), -EINVAL);
	cr_expect_null(env);
	cr_expect_eq(tp_envelope_parse("t.yaml", VALID, strlen(VALID), &env, NULL), 0);
	cr_expect_not_null(env);
	cr_expect_eq(tp_envelope_parse_file("/nonexistent/tether.yaml", &env, NULL), -ENOENT);
}

Test(policyc, bad_arguments)
{
	cr_expect_eq(tp_envelope_parse("t.yaml", NULL, 1, &env, &diags), -EINVAL);
	cr_expect_eq(tp_envelope_parse("t.yaml", VALID, strlen(VALID), NULL, &diags), -EINVAL);
	cr_expect_eq(tp_envelope_parse_file(NULL, &env, &diags), -EINVAL);
	cr_expect_eq(diags.count, 0);
}

/* ---- files ---------------------------------------------------------------- */

Test(policyc, file_io_errors_are_line_zero_diagnostics)
{
	char path[] = "/tmp/test_policyc_XXXXXX";
	char fifo[sizeof(path) + 8];
	char *text = NULL;

	cr_assert_eq(tp_envelope_parse_file("/nonexistent/tether.yaml", &env, &diags), -ENOENT);
	cr_assert_eq(diags.count, 1);
	cr_expect_eq(diags.items[0].line, 0);
	cr_expect_str_eq(diags.items[0].file, "/nonexistent/tether.yaml");
	cr_expect_str_eq(diags.items[0].message, "cannot open: No such file or directory");
	cr_assert_eq(tp_diags_format(&diags, &text), 0);
	cr_expect_str_eq(text, "/nonexistent/tether.yaml: error: cannot open: No such file or directory\n");
	free(text);
	fini();

	cr_expect_eq(tp_envelope_parse_file("/tmp", &env, &diags), -EISDIR);
	cr_expect_str_eq(diags.items[0].message, "cannot read: Is a directory");
	fini();

	/* A FIFO would block a plain open() until someone writes. */
	cr_assert_not_null(mkdtemp(path));
	snprintf(fifo, sizeof(fifo), "%s/fifo", path);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_expect_eq(tp_envelope_parse_file(fifo, &env, &diags), -EINVAL);
	cr_expect_str_eq(diags.items[0].message, "not a regular file");
	unlink(fifo);
	rmdir(path);
}

Test(policyc, parse_file_names_the_file_in_diagnostics)
{
	char *text = NULL;

	cr_assert_eq(tp_envelope_parse_file(INVALID_DIR "/three-problems.yaml", &env, &diags), -EINVAL);
	cr_assert_eq(tp_diags_format(&diags, &text), 0);
	cr_expect_str_eq(text,
		INVALID_DIR "/three-problems.yaml:3:11: error: 'root' must be 'read_only' "
			"(the only mode this version enforces), got 'read_write'\n"
		INVALID_DIR "/three-problems.yaml:5:13: error: 'path' must be an absolute path "
			"(starting with '/'), got 'relative/ws'\n"
		INVALID_DIR "/three-problems.yaml:7:10: error: invalid 'cpu': 'lots' is not a CPU "
			"amount; expected CPUs ('2', '0.5') or milli-CPUs ('500m')\n");
	free(text);
}

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&text, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(text);
		return strdup("");
	}
	return text;
}

/*
 * Every tests/policyc/invalid/NAME.yaml must fail, and the first line of its
 * diagnostics, without the "FILE:" prefix, must equal NAME.expected.
 */
Test(policyc, invalid_examples_match_expected_first_diagnostic)
{
	DIR *dir = opendir(INVALID_DIR);
	struct dirent *entry;
	size_t checked = 0;

	cr_assert_not_null(dir, "run the tests from the repository root");
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		char yaml_path[512], expected_path[512];
		struct tp_diags file_diags = { 0 };
		struct tp_envelope *file_env = NULL;
		char *expected, *text = NULL, *first, *newline;
		int r;

		if (len > 9 && strcmp(entry->d_name + len - 9, ".expected") == 0) {
			/* The other direction: no orphaned expectation. */
			snprintf(yaml_path, sizeof(yaml_path), "%s/%.*s.yaml", INVALID_DIR,
				 (int)(len - 9), entry->d_name);
			cr_expect_eq(access(yaml_path, F_OK), 0, "%s has no .yaml", entry->d_name);
			continue;
		}
		if (len < 5 || strcmp(entry->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(yaml_path, sizeof(yaml_path), "%s/%s", INVALID_DIR, entry->d_name);
		snprintf(expected_path, sizeof(expected_path), "%s/%.*s.expected", INVALID_DIR,
			 (int)(len - 5), entry->d_name);

		expected = read_text_file(expected_path);
		cr_expect_not_null(expected, "%s is missing", expected_path);
		r = tp_envelope_parse_file(yaml_path, &file_env, &file_diags);
		cr_expect_lt(r, 0, "%s parsed without error", yaml_path);
		cr_expect_null(file_env);
		cr_expect_gt(file_diags.count, 0, "%s: no diagnostic", yaml_path);
		cr_assert_eq(tp_diags_format(&file_diags, &text), 0);

		/* "FILE:3:5: error: ..." -> "3:5: error: ..."; "FILE: error: ..." -> "error: ..." */
		first = text;
		if (strncmp(first, yaml_path, strlen(yaml_path)) == 0 && first[strlen(yaml_path)] == ':')
			first += strlen(yaml_path) + 1;
		if (*first == ' ')
			first++;
		newline = strchr(first, '\n');
		if (newline)
			*newline = '\0';
		if (expected) {
			newline = strchr(expected, '\n');
			if (newline)
				*newline = '\0';
			cr_expect_str_eq(first, expected, "%s", yaml_path);
		}

		free(text);
		free(expected);
		tp_envelope_free(file_env);
		tp_diags_free(&file_diags);
		checked++;
	}
	closedir(dir);
	cr_expect_geq(checked, 20, "only %zu invalid examples found", checked);
}

/* ---- identity and environment ------------------------------------------------ */

/* Absent ids are 65534 ("nobody"); gid follows a written uid; 0 is an id like any other. */
Test(policyc, identity_defaults_and_range)
{
	cr_assert_eq(parse(VALID), 0);
	cr_expect(!env->has_uid && !env->has_gid);
	cr_expect_eq(env->uid, 65534);
	cr_expect_eq(env->gid, 65534);
	fini();
	cr_assert_eq(parse(VALID "  identity: {uid: 1000}\n"), 0, "%s",
		     diags.count ? diags.items[0].message : "");
	cr_expect_eq(env->uid, 1000);
	cr_expect_eq(env->gid, 1000);
	fini();
	cr_assert_eq(parse(VALID "  identity: {gid: 50}\n"), 0);
	cr_expect_eq(env->uid, 65534);
	cr_expect_eq(env->gid, 50);
	fini();
	/* root's ids: allowed (no capabilities, no gap to acknowledge) */
	cr_assert_eq(parse(VALID "  identity: {uid: 0, gid: 0}\n"), 0);
	cr_expect_eq(env->uid, 0);
	cr_expect_eq(env->gid, 0);
	cr_expect_eq(env->gap_count, 0);
	fini();
	cr_assert_eq(parse(VALID "  identity: {uid: 4294967294, gid: 4294967294}\n"), 0);
	cr_expect_eq(env->uid, 4294967294u);
	fini();
	expect_only_error(VALID "  identity: {uid: 4294967296}\n", 7, 19,
			  "invalid 'uid': '4294967296' is too large; the maximum is 4294967294");
	fini();
	expect_only_error(VALID "  identity: {gid: 4294967295}\n", 7, 19,
			  "'gid' must not be 4294967295: that is (gid_t)-1, which the kernel reads as "
			  "\"unchanged\", not an id");
}

Test(policyc, environment_names)
{
	/* HOME may be listed: the run then gets the controller's HOME, not the workspace */
	cr_assert_eq(parse(VALID "  environment: [CI, _x, lower_case, A1, PATH, HOME]\n"), 0, "%s",
		     diags.count ? diags.items[0].message : "");
	cr_assert_eq(env->env_name_count, 6);
	cr_expect_str_eq(env->env_names[0], "CI");
	cr_expect_str_eq(env->env_names[4], "PATH");
	cr_expect_str_eq(env->env_names[5], "HOME");
	cr_expect_eq(env->gap_count, 0);
}

/* Every problem of the list, each at its entry, in one pass. */
Test(policyc, environment_errors_are_all_reported)
{
	cr_assert_eq(parse(VALID "  environment:\n"
			   "    - \"\"\n"
			   "    - A=1\n"
			   "    - TMPDIR\n"
			   "    - CI\n"
			   "    - 0X\n"
			   "    - CI\n"
			   "    - [x]\n"
			   "    - A.B\n"
			   "    - MY-VAR\n"), -EINVAL);
	expect_diag(0, 8, 7, "'' is not an environment variable name: it is empty");
	expect_diag(1, 9, 7, "'A=1' is not an environment variable name: list the name only: the "
			     "value comes from the controller's environment");
	expect_diag(2, 10, 7, "'TMPDIR' is set by tether for every run (the run's private "
			      "temporary directory); it cannot be passed from the controller's "
			      "environment");
	expect_diag(3, 12, 7, "'0X' is not an environment variable name: only letters, digits and "
			      "'_', not starting with a digit");
	expect_diag(4, 13, 7, "'CI' is listed twice in 'environment' (first at line 11, column 7)");
	expect_diag(5, 14, 7, "entries of 'environment' must be variable names, got a sequence");
	expect_diag(6, 15, 7, "'A.B' is not an environment variable name: only letters, digits "
			      "and '_', not starting with a digit");
	expect_diag(7, 16, 7, "'MY-VAR' is not an environment variable name: only letters, digits "
			      "and '_', not starting with a digit");
	cr_expect_eq(diags.count, 8);
}

/* 256 names are fine, 257 are not; 128 bytes are fine, 129 are not. */
Test(policyc, environment_limits)
{
	char *text, *names = NULL, *long_name = repeat("N", 129);
	size_t len = 0;
	FILE *out = open_memstream(&names, &len);

	cr_assert_not_null(out);
	for (int i = 0; i < 256; i++)
		fprintf(out, "%sV%d", i ? ", " : "", i);
	fclose(out);
	cr_assert_geq(asprintf(&text, VALID "  environment: [%s]\n", names), 0);
	cr_expect_eq(parse(text), 0);
	cr_expect_eq(env->env_name_count, 256);
	free(text);
	fini();
	cr_assert_geq(asprintf(&text, VALID "  environment: [%s, V256]\n", names), 0);
	cr_expect_eq(parse(text), -EINVAL);
	expect_diag(0, 7, 16, "at most 256 environment variable names, got 257");
	free(text);
	fini();
	long_name[128] = '\0';
	cr_assert_geq(asprintf(&text, VALID "  environment: [%s]\n", long_name), 0);
	cr_expect_eq(parse(text), 0);
	free(text);
	fini();
	long_name[128] = 'N';
	cr_assert_geq(asprintf(&text, VALID "  environment: [%s]\n", long_name), 0);
	cr_expect_eq(parse(text), -EINVAL);
	cr_expect(strstr(diags.items[0].message, "is not an environment variable name: at most "
				"128 bytes"), "%s", diags.items[0].message);
	free(text);
	free(long_name);
	free(names);
}

/* The resource limits' ranges (docs/envelope.md). */
Test(policyc, resource_limit_ranges)
{
	static const struct {
		const char *text;
		int r;
	} cases[] = {
		{ "cpu: 0.5", 0 },	{ "cpu: 1.5", 0 },	  { "cpu: 10m", 0 },
		{ "cpu: 1024", 0 },	{ "cpu: 0", -EINVAL },	  { "cpu: -1", -EINVAL },
		{ "cpu: 0.009", -EINVAL }, { "cpu: 1025", -EINVAL },
		{ "open_files: 3", 0 },	{ "open_files: 1048576", 0 },
		{ "open_files: 2", -EINVAL }, { "open_files: 1048577", -EINVAL },
		{ "process_count: 1", 0 }, { "process_count: 0", -EINVAL },
		{ "wall_clock: 1s", 0 },	{ "wall_clock: 1500ms", 0 },
		{ "wall_clock: 999ms", -EINVAL }, { "wall_clock: 30d", 0 },
		{ "wall_clock: 31d", -EINVAL },
		{ "output_bytes: 1B", 0 }, { "output_bytes: 0", -EINVAL },
		{ "memory_bytes: 1MiB", 0 }, { "memory_bytes: 1048575", -EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *text;

		cr_assert_geq(asprintf(&text, VALID "  resources: {%s}\n", cases[i].text), 0);
		cr_expect_eq(parse(text), cases[i].r, "%s: %s", cases[i].text,
			     diags.count ? diags.items[0].message : "accepted");
		/* enforced now: a set limit needs no acknowledgement */
		if (cases[i].r == 0)
			cr_expect_eq(env->gap_count, 0, "%s", cases[i].text);
		free(text);
		fini();
	}
}

/* ---- diagnostics API ------------------------------------------------------- */

Test(policyc, diags_format)
{
	char *text = NULL;

	cr_assert_eq(tp_diags_format(&diags, &text), 0);
	cr_expect_str_eq(text, "");
	free(text);

	cr_assert_eq(tp_diags_add(&diags, "a.yaml", 3, 5, "bad %s", "thing"), 0);
	cr_assert_eq(tp_diags_add(&diags, "a.yaml", 0, 0, "cannot open: %s", "denied"), 0);
	cr_assert_eq(tp_diags_add(&diags, NULL, 1, 1, "x"), 0);
	cr_assert_eq(tp_diags_format(&diags, &text), 0);
	cr_expect_str_eq(text, "a.yaml:3:5: error: bad thing\n"
			       "a.yaml: error: cannot open: denied\n"
			       "<input>:1:1: error: x\n");
	free(text);
	cr_expect_eq(tp_diags_format(NULL, &text), -EINVAL);
	cr_expect_eq(tp_diags_format(&diags, NULL), -EINVAL);
}

Test(policyc, diags_grow_and_free)
{
	for (unsigned int i = 0; i < 1000; i++)
		cr_assert_eq(tp_diags_add(&diags, "f", i + 1, 1, "%u", i), 0);
	cr_assert_eq(diags.count, 1000);
	cr_expect_str_eq(diags.items[999].message, "999");
	tp_diags_free(&diags);
	cr_expect_null(diags.items);
	cr_expect_eq(diags.count, 0);
	tp_diags_free(&diags);	/* twice is fine */
	tp_diags_free(NULL);
	tp_envelope_free(NULL);
	tp_policy_free(NULL);
	cr_expect_eq(tp_diags_add(NULL, "f", 1, 1, "x"), -EINVAL);
}

/* ---- path normalisation ---------------------------------------------------- */

Test(policyc, path_normalize)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/", "/" },
		{ "//", "/" },
		{ "/.", "/" },
		{ "/..", "/" },
		{ "/../..", "/" },
		{ "/a", "/a" },
		{ "/a/", "/a" },
		{ "/a//b/./c/../d/", "/a/b/d" },
		{ "/a/b/../../..", "/" },
		{ "/../a", "/a" },
		{ "/a/./././b", "/a/b" },
		{ "/a/..b/.c/...", "/a/..b/.c/..." },
		{ "///a///b///", "/a/b" },
		{ "/tmp/tether-demo/workspace", "/tmp/tether-demo/workspace" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *out = tp_path_normalize(cases[i].in);

		cr_assert_not_null(out, "%s", cases[i].in);
		cr_expect_str_eq(out, cases[i].out, "normalising %s", cases[i].in);
		free(out);
	}
}

Test(policyc, path_normalize_rejects_relative_and_empty)
{
	static const char *const bad[] = { "", "a", "a/b", "./a", "../a", " /a" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		errno = 0;
		cr_expect_null(tp_path_normalize(bad[i]), "'%s'", bad[i]);
		cr_expect_eq(errno, EINVAL, "'%s'", bad[i]);
	}
	errno = 0;
	cr_expect_null(tp_path_normalize(NULL));
	cr_expect_eq(errno, EINVAL);
}

/* ---- compilation ----------------------------------------------------------- */

Test(policyc, compile_refuses_an_unchecked_envelope)
{
	static const char *const bad_paths[] = { NULL, "", "/", "relative", "/a//b", "/a/" };
	struct tp_envelope hand = { 0 };
	struct tp_policy *policy = (struct tp_policy *)&hand;
	char *long_path = repeat("/a", 126);	/* 252 bytes */

	for (size_t i = 0; i < sizeof(bad_paths) / sizeof(*bad_paths); i++) {
		hand.workspace_path = (char *)bad_paths[i];
		cr_expect_eq(tp_policy_compile("h", &hand, &policy, &diags), -EINVAL, "'%s'",
			     bad_paths[i] ? bad_paths[i] : "(null)");
	}
	hand.workspace_path = long_path;
	cr_expect_eq(tp_policy_compile("h", &hand, &policy, &diags), -EINVAL);
	hand.workspace_path = "/w";
	hand.mode = (enum tp_mode)7;	/* no such mode */
	cr_expect_eq(tp_policy_compile("h", &hand, &policy, &diags), -EINVAL);
	cr_expect_eq(tp_policy_compile("h", NULL, &policy, &diags), -EINVAL);
	cr_expect_eq(policy, (struct tp_policy *)&hand, "output written on failure");
	free(long_path);
}

/*
 * The ranges no broader block grants (policyc/ranges.h) are exactly the host
 * itself, link-local and the metadata endpoints: the barriers the compiler
 * and the network plan add, and what the DNS proxy always refuses or refuses
 * without a covering rule.
 */
Test(policyc, special_ranges_are_the_host_link_local_and_metadata)
{
	static const struct {
		const char *addr;	/* IPv6 text; IPv4 as ::ffff:a.b.c.d */
		unsigned prefixlen;
	} expected[] = {
		{ "::ffff:0.0.0.0", 96 + 8 },		{ "::ffff:127.0.0.0", 96 + 8 },
		{ "::ffff:169.254.0.0", 96 + 16 },	{ "::ffff:169.254.169.254", 128 },
		{ "::ffff:100.100.100.200", 128 },	{ "::", 128 },
		{ "::1", 128 },				{ "fe80::", 10 },
		{ "fd00:ec2::254", 128 },
	};
	size_t special = 0;

	for (size_t i = 0; i < tp_addr_range_count; i++) {
		const struct tp_addr_range *range = &tp_addr_ranges[i];
		bool listed = false;

		for (size_t j = 0; j < sizeof(expected) / sizeof(expected[0]); j++) {
			uint8_t addr[16];

			cr_assert_eq(inet_pton(AF_INET6, expected[j].addr, addr), 1);
			listed |= range->prefixlen == expected[j].prefixlen &&
				  memcmp(range->addr, addr, 16) == 0;
		}
		cr_expect_eq(tp_addr_class_special(range->addr_class), listed, "range %zu", i);
		special += listed;
	}
	cr_expect_eq(special, sizeof(expected) / sizeof(expected[0]));
}
