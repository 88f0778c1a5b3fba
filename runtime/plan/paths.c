// SPDX-License-Identifier: GPL-2.0
/* A run's path entries from its resolved rules and this host's file system. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpf/abi/rules.h"
#include "common/cleanup.h"
#include "runtime/plan/paths.h"

static int plan_fail(struct tl_error *err, int code, const char *what, const char *path)
{
	if (err)
		snprintf(err->msg, sizeof(err->msg), "%s %s: %s", what, path, strerror(code));
	return -code;
}

/* The kernel's dev_t encoding (MKDEV) of a userspace st_dev. */
static uint32_t kernel_dev(dev_t dev)
{
	return (uint32_t)((major(dev) << 20) | minor(dev));
}

static int path_compare(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Cuts an absolute path to its parent in place ("/a/b" -> "/a" -> "/"); false at "/". */
static bool path_parent(char *path, size_t *len)
{
	size_t n = *len;

	if (n <= 1)
		return false;
	while (n > 1 && path[n - 1] != '/')
		n--;
	n = n > 1 ? n - 1 : 1;
	path[n] = '\0';
	*len = n;
	return true;
}

/*
 * Whether a proper ancestor of `path` (on component boundaries) is in
 * `writable`, sorted: then `path` is a carve-out below a writable tree.
 */
static bool below_writable(const char *path, const char **writable, size_t count)
{
	char prefix[TETHER_PATH_KEY_MAX + 1];
	size_t len = strlen(path);

	if (!count || len >= sizeof(prefix))
		return false;
	memcpy(prefix, path, len + 1);
	while (path_parent(prefix, &len)) {
		const char *key = prefix;

		if (bsearch(&key, writable, count, sizeof(*writable), path_compare))
			return true;
	}
	return false;
}

/*
 * Hooks without a mount (xattrs, ACLs, timestamps) decide by inode identity:
 * the nearest ancestor entered in inode_rules decides.  Rules that grant
 * write are entered, and so are the rules below them that do not (a denied
 * or read-only subtree inside a writable one), so a carve-out is not
 * writable through these hooks either.
 */
static int rule_identity(struct tl_path_rule *rule, const char **writable, size_t writable_count,
			 struct tl_error *err)
{
	struct stat st;

	rule->has_inode = false;
	if (!(rule->access & TETHER_ACCESS_WRITE) &&
	    !below_writable(rule->path, writable, writable_count))
		return 0;
	/*
	 * A rule for a path that does not exist yet has no identity to enter.
	 * lstat: a symlink swapped in since the path was checked must not move
	 * the rule to the link's target.
	 */
	if (lstat(rule->path, &st) < 0)
		return errno == ENOENT ? 0 : plan_fail(err, errno, "lstat", rule->path);
	if (S_ISLNK(st.st_mode))
		return 0;
	rule->has_inode = true;
	rule->dev = kernel_dev(st.st_dev);
	rule->ino = st.st_ino;
	return 0;
}

struct rule_ref {
	const char *path;
	size_t index;
};

static int rule_ref_compare(const void *a, const void *b)
{
	return strcmp(((const struct rule_ref *)a)->path, ((const struct rule_ref *)b)->path);
}

/*
 * The value inode_rules holds for (dev, ino) once the rules' own entries
 * are written: the last rule with that identity (a later write replaces an
 * earlier one).  false: none.
 */
static bool rule_entry(const struct tl_path_rule *rules, size_t count, uint32_t dev, uint64_t ino,
		       struct tl_inode_pin *pin)
{
	for (size_t i = count; i-- > 0;) {
		if (rules[i].has_inode && rules[i].dev == dev && rules[i].ino == ino) {
			pin->access = rules[i].access;
			pin->rule_id = (uint32_t)i;
			return true;
		}
	}
	return false;
}

static int pin_append(struct tl_inode_pin **pins, size_t *count, const struct tl_inode_pin *pin)
{
	struct tl_inode_pin *grown;

	for (size_t i = 0; i < *count; i++)
		if ((*pins)[i].dev == pin->dev && (*pins)[i].ino == pin->ino)
			return 0;	/* the first entry stays, as the first write would */
	grown = realloc(*pins, (*count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	*pins = grown;
	(*pins)[(*count)++] = *pin;
	return 0;
}

/*
 * A carve-out (a rule without write below a writable one: a denied path, an
 * input) holds only while its path does, and renaming a directory above it
 * would carry it out of its rule.  Every existing directory between a
 * carve-out and "/" gets an inode rule marked TETHER_ACCESS_PINNED, with the
 * access and rule id of the rule that covers it (or of its own inode rule,
 * which only gains the pin), so the decisions made by inode identity
 * (xattrs, timestamps) stay as they were; the rename, unlink and rmdir
 * hooks refuse to move or remove a pinned directory.
 */
static int carve_out_pins(const struct tl_path_rule *rules, size_t rule_count,
			  const char **writable, size_t writable_count,
			  struct tl_inode_pin **pins, size_t *pin_count)
{
	_cleanup_free_ struct rule_ref *refs = calloc(rule_count + 1, sizeof(*refs));
	char prefix[TETHER_PATH_KEY_MAX + 1];
	int r = 0;

	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < rule_count; i++)
		refs[i] = (struct rule_ref){ rules[i].path, i };
	qsort(refs, rule_count, sizeof(*refs), rule_ref_compare);

	for (size_t i = 0; i < rule_count && r == 0; i++) {
		size_t len = strlen(rules[i].path);

		if ((rules[i].access & TETHER_ACCESS_WRITE) || len >= sizeof(prefix) ||
		    !below_writable(rules[i].path, writable, writable_count))
			continue;
		memcpy(prefix, rules[i].path, len + 1);
		while (r == 0 && path_parent(prefix, &len) && len > 1) {
			const struct rule_ref *cover = NULL;
			char up[TETHER_PATH_KEY_MAX + 1];
			size_t up_len = len;
			struct tl_inode_pin pin;
			struct stat st;

			if (lstat(prefix, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			/* The rule the kernel applies here: the longest rule path at or above. */
			memcpy(up, prefix, len + 1);
			do {
				struct rule_ref key = { up, 0 };

				cover = bsearch(&key, refs, rule_count, sizeof(*refs), rule_ref_compare);
			} while (!cover && path_parent(up, &up_len));
			if (!cover)
				continue;
			pin = (struct tl_inode_pin){ .dev = kernel_dev(st.st_dev), .ino = st.st_ino };
			if (!rule_entry(rules, rule_count, pin.dev, pin.ino, &pin)) {
				pin.access = rules[cover->index].access;
				pin.rule_id = (uint32_t)cover->index;
			}
			r = pin_append(pins, pin_count, &pin);
		}
	}
	return r;
}

int run_plan_build(struct tl_path_rule *rules, size_t rule_count, struct tl_run_plan *plan,
		   struct tl_error *err)
{
	_cleanup_free_ const char **writable = calloc(rule_count ? rule_count : 1,
						      sizeof(*writable));
	struct tl_inode_pin *pins = NULL;
	size_t writable_count = 0, pin_count = 0;
	int r;

	/* the plan's path part; the rest is run_plan_make's */
	plan->rules = rules;
	plan->rule_count = rule_count;
	plan->pins = NULL;
	plan->pin_count = 0;
	if (!writable)
		return plan_fail(err, ENOMEM, "planning", "the run's rules");
	for (size_t i = 0; i < rule_count; i++)
		if (rules[i].access & TETHER_ACCESS_WRITE)
			writable[writable_count++] = rules[i].path;
	qsort(writable, writable_count, sizeof(*writable), path_compare);
	for (size_t i = 0; i < rule_count; i++) {
		r = rule_identity(&rules[i], writable, writable_count, err);
		if (r)
			return r;
	}
	r = carve_out_pins(rules, rule_count, writable, writable_count, &pins, &pin_count);
	if (r) {
		free(pins);
		return plan_fail(err, -r, "pinning carve-outs of", "the run's rules");
	}
	plan->pins = pins;
	plan->pin_count = pin_count;
	return 0;
}

void run_plan_free(struct tl_run_plan *plan)
{
	if (!plan)
		return;
	free((void *)plan->pins);
	plan->pins = NULL;
	plan->pin_count = 0;
}
