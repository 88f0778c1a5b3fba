// SPDX-License-Identifier: GPL-2.0
/*
 * What the documentation lists is what the code holds.  docs/envelope.md's
 * built-in protected set, between its "tp_protected_paths" markers, names
 * every path of tp_protected_paths (policyc/path.c) once, and nothing else:
 * a path added to or removed from the code fails here until the page says
 * so too.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policyc/policy.h"

#define BEGIN_MARK "<!-- tp_protected_paths: begin -->"
#define END_MARK   "<!-- tp_protected_paths: end -->"

/*
 * The file `rel` of the repository: from the working directory (make
 * test-unit runs in the repository's root), else from the directories
 * above this test's binary (build/tests/unit/, build/asan/tests/unit/).
 */
static char *slurp(const char *rel)
{
	char dir[4096], path[8192], *buf, *slash;
	FILE *f = fopen(rel, "r");
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	long len;

	dir[n > 0 ? n : 0] = 0;
	while (!f && (slash = strrchr(dir, '/'))) {
		*slash = 0;
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
		f = fopen(path, "r");
	}
	cr_assert_not_null(f, "cannot find %s", rel);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	cr_assert_gt(len, 0);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

/* The backquoted absolute paths between the markers, into paths[] (malloc'd). */
static size_t doc_protected_paths(const char *doc, char **paths, size_t max)
{
	const char *begin = strstr(doc, BEGIN_MARK), *end = strstr(doc, END_MARK), *p;
	size_t n = 0;

	cr_assert_not_null(begin, "docs/envelope.md has no '%s'", BEGIN_MARK);
	cr_assert_not_null(end, "docs/envelope.md has no '%s'", END_MARK);
	cr_assert_lt(begin, end);
	cr_assert_null(strstr(end + 1, BEGIN_MARK), "a second list");
	for (p = begin + strlen(BEGIN_MARK); (p = strchr(p, '`')) && p < end;) {
		const char *close = strchr(p + 1, '`');

		cr_assert(close && close < end, "an unclosed ` in the list");
		cr_assert_eq(p[1], '/', "not an absolute path in the list: %.*s",
			     (int)(close - p + 1), p);
		cr_assert_lt(n, max);
		paths[n++] = strndup(p + 1, (size_t)(close - p - 1));
		p = close + 1;
	}
	return n;
}

Test(docs, envelope_md_lists_exactly_the_protected_paths)
{
	char *doc = slurp("docs/envelope.md"), *listed[256];
	size_t n = doc_protected_paths(doc, listed, sizeof(listed) / sizeof(listed[0]));
	size_t code = 0;

	for (; tp_protected_paths[code]; code++) {
		size_t seen = 0;

		for (size_t i = 0; i < n; i++)
			seen += strcmp(listed[i], tp_protected_paths[code]) == 0;
		cr_expect_eq(seen, 1,
			     "%s is protected in policyc/path.c, listed %zu times in "
			     "docs/envelope.md",
			     tp_protected_paths[code], seen);
	}
	for (size_t i = 0; i < n; i++) {
		bool in_code = false;

		for (size_t k = 0; tp_protected_paths[k] && !in_code; k++)
			in_code = strcmp(listed[i], tp_protected_paths[k]) == 0;
		cr_expect(in_code,
			  "docs/envelope.md lists %s, which policyc/path.c does not protect",
			  listed[i]);
	}
	cr_expect_eq(n, code, "docs/envelope.md lists %zu paths, the code protects %zu", n, code);
	for (size_t i = 0; i < n; i++)
		free(listed[i]);
	free(doc);
}
