// SPDX-License-Identifier: GPL-2.0
/*
 * The --json forms of check, explain and diff (runtime/policy_json.c):
 * their shapes, byte for byte, and that they say what the text says.  Runs from the repository root; TETHER_UPDATE_GOLDEN=1
 * rewrites tests/policyc/golden/NAME.explain.json instead of comparing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policyc/access.h"
#include "policyc/policy.h"
#include "runtime/json.h"
#include "runtime/policy_json.h"

#define GOLDEN_DIR "tests/policyc/golden"

static struct tp_diags diags;
static struct strbuf sb;

static void fini(void)
{
	tp_diags_free(&diags);
	sb_free(&sb);
}

TestSuite(policy_json, .fini = fini, .timeout = 30);

static struct tp_policy *compile_text(const char *text)
{
	struct tp_policy *policy = NULL;

	cr_assert_eq(tp_policy_load("t.yaml", text, strlen(text), &policy, &diags), 0, "%s",
		     diags.count ? diags.items[0].message : "");
	return policy;
}

static char *read_file(const char *path)
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

static void golden(const char *path, const char *actual)
{
	char *expected;

	if (getenv("TETHER_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "we");

		cr_assert_not_null(f, "%s", path);
		fputs(actual, f);
		fclose(f);
		return;
	}
	expected = read_file(path);
	cr_assert_not_null(expected, "%s is missing (TETHER_UPDATE_GOLDEN=1 writes it)", path);
	cr_expect_str_eq(actual, expected, "%s differs", path);
	free(expected);
}

/* Not inlined: gcc takes the memory stream's buffer for a local that dies here. */
static __attribute__((noinline)) char *explain_text(const struct tp_policy *policy)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cr_assert_not_null(out);
	cr_assert_eq(tp_explain_write(policy, out), 0);
	fclose(out);
	return text;
}

// "  /a/**, except /a/b/**" as explain prints a region.
static void region_line(char *buf, size_t size, const struct tp_grant_region *region)
{
	size_t n = (size_t)snprintf(buf, size, "\n  %s%s", region->top->path,
				    region->top->kind == TP_PATH_SUBTREE
					    ? (strcmp(region->top->path, "/") ? "/**" : "**") : "");

	for (size_t e = 0; e < region->except_count && n < size; e++) {
		const struct tp_path_rule *x = region->except[e];

		n += (size_t)snprintf(buf + n, size - n, "%s%s%s", e ? ", " : ", except ", x->path,
				      x->kind == TP_PATH_SUBTREE ? (strcmp(x->path, "/") ? "/**" : "**")
								 : "");
	}
	if (n < size)
		snprintf(buf + n, size - n, "\n");
}

/*
 * Every example's explain JSON matches its golden file, and each right's
 * regions (what the JSON lists) are the lines the text prints under that
 * right's heading, in the same order: one computation, two renderings.
 */
Test(policy_json, every_example_explains_as_its_golden_json_and_as_its_text)
{
	DIR *dir = opendir("examples");
	struct dirent *entry;
	size_t checked = 0;

	cr_assert_not_null(dir, "run the tests from the repository root");
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		struct tp_policy *policy = NULL;
		char path[512], line[4096];
		char *text;

		if (len < 6 || strcmp(entry->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "examples/%s", entry->d_name);
		cr_assert_eq(tp_policy_load_file(path, &policy, &diags), 0, "%s", path);
		sb_free(&sb);
		cr_assert_eq(json_explain(&sb, policy), 0);
		cr_assert_eq(sb_printf(&sb, "\n"), 0);
		snprintf(path, sizeof(path), "%s/%.*s.explain.json", GOLDEN_DIR, (int)(len - 5),
			 entry->d_name);
		golden(path, sb.data);

		text = explain_text(policy);
		for (size_t b = 0; b < TP_ACCESS_RIGHT_COUNT; b++) {
			struct tp_grant_regions regions;
			char heading[128];
			const char *at;

			cr_assert_eq(tp_grant_regions(policy, tp_access_rights[b].bit, &regions), 0);
			snprintf(heading, sizeof(heading), "\n%s:", tp_access_rights[b].heading);
			at = strstr(text, heading);
			cr_assert_not_null(at, "%s: no '%s' in\n%s", entry->d_name, heading, text);
			at += strlen(heading);
			for (size_t i = 0; i < regions.count; i++) {
				region_line(line, sizeof(line), &regions.items[i]);
				cr_expect_eq(strncmp(at, line, strlen(line)), 0,
					     "%s: region %zu of '%s' is '%s', the text has '%.80s'",
					     entry->d_name, i, heading, line, at);
				at += strlen(line) - 1;
			}
			if (regions.count == 0)
				cr_expect_eq(strncmp(at, "\n  nothing\n", 11), 0, "%s", entry->d_name);
			tp_grant_regions_free(&regions);
		}
		free(text);
		tp_policy_free(policy);
		checked++;
	}
	closedir(dir);
	cr_expect_geq(checked, 5);
}

Test(policy_json, grant_regions_refuse_what_is_not_one_right)
{
	struct tp_policy *policy = compile_text("sandbox:\n  filesystem:\n    root: read_only\n"
						"    workspace: {path: /ws}\n");
	struct tp_grant_regions regions;

	cr_expect_eq(tp_grant_regions(policy, TETHER_ACCESS_READ | TETHER_ACCESS_WRITE, &regions),
		     -EINVAL);
	cr_expect_eq(tp_grant_regions(policy, 0, &regions), -EINVAL);
	cr_expect_eq(tp_grant_regions(NULL, TETHER_ACCESS_READ, &regions), -EINVAL);
	tp_policy_free(policy);
}

/* A valid input: its digest, no errors; the members without braces. */
Test(policy_json, input_members_of_a_valid_and_an_invalid_input)
{
	static const char text[] = "sandbox:\n  filesystem:\n    root: read_only\n"
				   "    workspace: {path: /ws}\n";
	struct tp_policy *policy = compile_text(text);
	char digest[TP_DIGEST_TEXT_MAX], expected[512];
	uint8_t raw[32];
	int r;

	cr_assert_eq(tp_policy_digest(policy, raw), 0);
	tp_digest_text(raw, digest);
	cr_assert_eq(json_input_members(&sb, "t.yaml", policy, &diags, 0, NULL), 0);
	snprintf(expected, sizeof(expected),
		 "\"file\":\"t.yaml\",\"ok\":true,\"digest\":\"%s\",\"errors\":[],\"warnings\":[]",
		 digest);
	cr_expect_str_eq(sb.data, expected);
	tp_policy_free(policy);
	sb_free(&sb);

	/* every error with its position, user text escaped */
	policy = NULL;
	r = tp_policy_load("<stdin>", "sandbox:\n  \"a\\\"b\": 1\n", 19, &policy, &diags);
	cr_assert_lt(r, 0);
	cr_assert_eq(json_input_members(&sb, "<stdin>", NULL, &diags, r, NULL), 0);
	cr_expect_str_eq(sb.data,
			 "\"file\":\"<stdin>\",\"ok\":false,\"digest\":null,\"errors\":["
			 "{\"file\":\"<stdin>\",\"line\":1,\"column\":1,\"message\":\"missing "
			 "required key 'filesystem' in 'sandbox'\"},"
			 "{\"file\":\"<stdin>\",\"line\":2,\"column\":3,\"message\":\"unknown key "
			 "'a\\\"b' in 'sandbox' (expected one of: mode, image_digest, "
			 "runtime_revision, identity, environment, filesystem, network_egress, "
			 "resources, workspace_lifetime, artifacts, cleanup, audit, "
			 "acknowledge_unenforced)\"}],\"warnings\":[]");
	sb_free(&sb);
	tp_diags_free(&diags);

	/* a problem with the file as a whole: line and column 0 */
	cr_assert_eq(tp_policy_load_file("/nonexistent/e.yaml", &policy, &diags), -ENOENT);
	cr_assert_eq(json_input_members(&sb, "/nonexistent/e.yaml", NULL, &diags, -ENOENT, NULL), 0);
	cr_expect_str_eq(sb.data,
			 "\"file\":\"/nonexistent/e.yaml\",\"ok\":false,\"digest\":null,\"errors\":["
			 "{\"file\":\"/nonexistent/e.yaml\",\"line\":0,\"column\":0,\"message\":"
			 "\"cannot open: No such file or directory\"}],\"warnings\":[]");
	sb_free(&sb);
	tp_diags_free(&diags);

	/* warnings, when a caller has them, in the errors' form */
	policy = compile_text(text);
	cr_assert_eq(tp_diags_add(&diags, "t.yaml", 4, 7, "worth a look"), 0);
	cr_assert_eq(json_input_members(&sb, "t.yaml", policy, NULL, 0, &diags), 0);
	cr_expect(strstr(sb.data, ",\"errors\":[],\"warnings\":[{\"file\":\"t.yaml\",\"line\":4,"
			  "\"column\":7,\"message\":\"worth a look\"}]") != NULL, "%s", sb.data);
	tp_policy_free(policy);
	sb_free(&sb);
	tp_diags_free(&diags);

	/* no diagnostic at all: the bare error, as on the terminal */
	cr_assert_eq(json_input_members(&sb, "x", NULL, &diags, -ENOMEM, NULL), 0);
	cr_expect_str_eq(sb.data,
			 "\"file\":\"x\",\"ok\":false,\"digest\":null,\"errors\":[{\"file\":\"x\","
			 "\"line\":0,\"column\":0,\"message\":\"Cannot allocate memory\"}],"
			 "\"warnings\":[]");
}

/* The envelope as bytes in memory loads like the file, and a compiled policy too. */
Test(policy_json, a_policy_loads_from_memory_as_from_a_file)
{
	struct tp_policy *from_file = NULL, *from_memory = NULL, *decoded = NULL;
	char *text = read_file("examples/full.yaml");
	uint8_t *bytes = NULL, a[32], b[32], c[32];
	size_t n = 0;

	cr_assert_not_null(text);
	cr_assert_eq(tp_policy_load_file("examples/full.yaml", &from_file, &diags), 0);
	cr_assert_eq(tp_policy_load("<stdin>", text, strlen(text), &from_memory, &diags), 0);
	cr_assert_eq(tp_policy_encode(from_file, &bytes, &n), 0);
	cr_assert_eq(tp_policy_load("<stdin>", (const char *)bytes, n, &decoded, &diags), 0);
	cr_assert_eq(tp_policy_digest(from_file, a), 0);
	cr_assert_eq(tp_policy_digest(from_memory, b), 0);
	cr_assert_eq(tp_policy_digest(decoded, c), 0);
	cr_expect(memcmp(a, b, 32) == 0 && memcmp(a, c, 32) == 0);
	/* a truncated compiled policy names the input it came from */
	tp_policy_free(decoded);
	decoded = NULL;
	cr_expect_eq(tp_policy_load("<stdin>", (const char *)bytes, 6, &decoded, &diags), -EINVAL);
	cr_assert_eq(diags.count, 1);
	cr_expect_str_eq(diags.items[0].file, "<stdin>");
	cr_expect_eq(diags.items[0].line, 0);
	cr_expect_eq(strncmp(diags.items[0].message, "not a valid compiled policy: ", 29), 0);
	free(bytes);
	free(text);
	tp_policy_free(from_file);
	tp_policy_free(from_memory);
}

/*
 * tp_diff_changes() is tp_diff_write() as data: for every diff golden,
 * the changes, each written back with its prefix, are the text's lines.
 */
Test(policy_json, diff_changes_are_the_diff_lines)
{
	static const char *const prefix[] = {
		[TP_CHANGE_WIDENED] = "widened: ",
		[TP_CHANGE_NARROWED] = "narrowed: ",
		[TP_CHANGE_CHANGED] = "changed: ",
	};
	DIR *dir = opendir(GOLDEN_DIR "/diff");
	struct dirent *entry;
	size_t checked = 0;

	cr_assert_not_null(dir);
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		struct tp_policy *old_policy = NULL, *new_policy = NULL;
		struct tp_change *changes = NULL;
		char path[512], *text = NULL, *rebuilt = NULL;
		size_t text_len = 0, rebuilt_len = 0, count = 0;
		bool widened = false, widened_text = false;
		FILE *out;

		if (len < 10 || strcmp(entry->d_name + len - 9, ".old.yaml") != 0)
			continue;
		snprintf(path, sizeof(path), GOLDEN_DIR "/diff/%s", entry->d_name);
		cr_assert_eq(tp_policy_load_file(path, &old_policy, &diags), 0, "%s", path);
		memcpy(path + strlen(path) - 8, "new", 3);
		cr_assert_eq(tp_policy_load_file(path, &new_policy, &diags), 0, "%s", path);

		out = open_memstream(&text, &text_len);
		cr_assert_eq(tp_diff_write(old_policy, new_policy, out, &widened_text), 0);
		fclose(out);
		cr_assert_eq(tp_diff_changes(old_policy, new_policy, &changes, &count, &widened), 0);
		cr_expect_eq(widened, widened_text, "%s", entry->d_name);
		cr_expect_gt(count, 0, "%s", entry->d_name);

		out = open_memstream(&rebuilt, &rebuilt_len);
		if (strncmp(text, "no change in authority\n", 23) == 0)
			fputs("no change in authority\n", out);
		for (size_t i = 0; i < count; i++)
			fprintf(out, "%s%s\n", prefix[changes[i].kind], changes[i].text);
		fclose(out);
		cr_expect_str_eq(rebuilt, text, "%s", entry->d_name);

		sb_free(&sb);
		cr_assert_eq(json_changes(&sb, changes, count), 0);
		cr_expect_eq(strncmp(sb.data, "[{\"kind\":\"", 10), 0, "%s", sb.data);

		tp_changes_free(changes, count);
		free(text);
		free(rebuilt);
		tp_policy_free(old_policy);
		tp_policy_free(new_policy);
		checked++;
	}
	closedir(dir);
	cr_expect_geq(checked, 2);
}

Test(policy_json, changes_encode_kind_and_text)
{
	struct tp_change changes[] = {
		{ TP_CHANGE_WIDENED, "write on /ws/** (was: read)" },
		{ TP_CHANGE_NARROWED, "may reach a.org:443" },
		{ TP_CHANGE_CHANGED, "identity.tenant \"b\" (was: a)" },
	};

	cr_assert_eq(json_changes(&sb, changes, 3), 0);
	cr_expect_str_eq(sb.data,
			 "[{\"kind\":\"widened\",\"change\":\"write on /ws/** (was: read)\"},"
			 "{\"kind\":\"narrowed\",\"change\":\"may reach a.org:443\"},"
			 "{\"kind\":\"changed\",\"change\":\"identity.tenant \\\"b\\\" (was: a)\"}]");
	sb_free(&sb);
	cr_assert_eq(json_changes(&sb, NULL, 0), 0);
	cr_expect_str_eq(sb.data, "[]");
}
