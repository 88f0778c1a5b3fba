// SPDX-License-Identifier: GPL-2.0
/* A run's kernel path rules, from its policy and the host's file system. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/abi/rules.h"
#include "runtime/plan/rules.h"

/*
 * Where `path` leads: its realpath if it exists, else the realpath of its
 * deepest existing ancestor followed by the rest of `path`.  Returns 0 or a
 * negative errno.
 */
static int resolve_prefix(const char *path, char out[PATH_MAX])
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	memcpy(prefix, path, len + 1);
	for (;;) {
		if (realpath(prefix, out)) {
			/* "" or "/missing/components"; at "/" the whole path is missing */
			const char *rest = path + (len == 1 && strcmp(path, "/") != 0 ? 0 : len);
			size_t n = strlen(out);

			if (n + strlen(rest) >= PATH_MAX)
				return -ENAMETOOLONG;
			if (*rest)	/* "/" plus "/rest" would give "//rest" */
				memcpy(out + (strcmp(out, "/") == 0 ? 0 : n), rest, strlen(rest) + 1);
			return 0;
		}
		if (errno != ENOENT || len <= 1)
			return -errno;
		while (len > 1 && prefix[len - 1] != '/')
			len--;
		len = len > 1 ? len - 1 : 1;
		prefix[len] = 0;
	}
}

/* Whether a rule of rules[0, n) has exactly `path`. */
static bool rules_have_path(const struct tl_path_rule *rules, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rules[i].path, path) == 0)
			return true;
	return false;
}

/*
 * The kernel side matches the resolved path of each object, so a rule must
 * name the resolved path too: a read or exec rule on /lib (a symlink to
 * /usr/lib on merged-/usr systems) must be installed as /usr/lib.  A rule
 * that grants WRITE is not followed through a symlink but refused: whoever
 * could plant the link (another user in /tmp, an earlier run in its
 * workspace) would choose what root makes writable.  check_workspace()
 * holds the workspace itself to more.
 *
 * The run's private trees (`extra`: /tmp, /dev/shm, its home, resolved
 * already), the built-in protected set (tp_protected_paths) and the audit
 * file follow the policy's rules, each unless a rule already has its
 * resolved path: the policy decides on a path it names, and re-opens a
 * protected path only by naming it.  *count is set to the number of rules
 * written.
 */
int run_rules_resolve(const struct tp_policy *pol, const struct tl_path_rule *extra,
		      size_t extra_count, const char *audit_path, struct tl_path_rule **out,
		      size_t *count)
{
	size_t protected_count = 0, max, n = 0;
	struct tl_path_rule *rules;
	char resolved[PATH_MAX];
	int r = 0;

	while (tp_protected_paths[protected_count])
		protected_count++;
	/* the policy's rules, the private trees, the protected set, the audit file */
	max = pol->path_rule_count + extra_count + protected_count + 1;
	rules = calloc(max, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < max && r == 0; i++) {
		bool from_policy = i < pol->path_rule_count;
		bool is_extra = !from_policy && i < pol->path_rule_count + extra_count;
		size_t k = from_policy ? 0 : i - pol->path_rule_count;
		const char *p = from_policy ? pol->path_rules[i].path
			      : is_extra ? extra[k].path
			      : k - extra_count < protected_count ? tp_protected_paths[k - extra_count]
			      : audit_path;

		char absolute[PATH_MAX];

		if (!p)
			continue;
		if (p[0] != '/') {	/* --audit relative to the working directory */
			if (!getcwd(absolute, sizeof(absolute)))
				r = -errno;
			else if (strlen(absolute) + 1 + strlen(p) >= sizeof(absolute))
				r = -ENAMETOOLONG;
			if (r) {
				fprintf(stderr, "tether run: resolving %s: %s\n", p, strerror(-r));
				break;
			}
			strcat(strcat(absolute, "/"), p);
			p = absolute;
		}
		r = resolve_prefix(p, resolved);
		if (r) {
			fprintf(stderr, "tether run: resolving rule path %s: %s\n", p, strerror(-r));
			break;
		}
		if (from_policy && (pol->path_rules[i].access & TETHER_ACCESS_WRITE) &&
		    strcmp(resolved, p) != 0) {
			fprintf(stderr,
				"tether run: the writable rule path %s leads to %s through a "
				"symbolic link; refusing to make the link's target writable (name "
				"the real path in the envelope, or remove the link)\n", p, resolved);
			r = -ELOOP;
			break;
		}
		if (!from_policy && rules_have_path(rules, n, resolved))
			continue;
		if (strlen(resolved) + 1 > TETHER_PATH_KEY_MAX && !from_policy) {
			/*
			 * Fail closed: queries are cut to the key's length, so
			 * objects there would fall to the rule above.
			 */
			fprintf(stderr,
				"tether run: %s resolves to %s, longer than the %d bytes a kernel path "
				"rule holds, so the run could not be kept from it; choose a shorter "
				"path\n", p, resolved, TETHER_PATH_KEY_MAX - 1);
			r = -ENAMETOOLONG;
			break;
		} else if (strlen(resolved) + 1 > TETHER_PATH_KEY_MAX) {
			fprintf(stderr,
				"tether run: rule path %s resolves to %s, longer than the %d bytes a "
				"kernel path rule holds\n", p, resolved, TETHER_PATH_KEY_MAX - 1);
			r = -ENAMETOOLONG;
			break;
		}
		rules[n].path = strdup(resolved);
		rules[n].access = from_policy ? pol->path_rules[i].access
				: is_extra ? extra[k].access
					   : TETHER_ACCESS_PROTECTED;
		if (!rules[n].path) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	if (r) {
		for (size_t j = 0; j < n; j++)
			free((void *)rules[j].path);
		free(rules);
		return r;
	}
	*out = rules;
	*count = n;
	return 0;
}

void run_rules_free(struct tl_path_rule *rules, size_t n)
{
	if (!rules)
		return;
	for (size_t i = 0; i < n; i++)
		free((void *)rules[i].path);
	free(rules);
}
