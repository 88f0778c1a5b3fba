/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the policyc sources.  Not part of the library's API:
 * outside policyc/ only runtime/daemon/config.c includes this header (the
 * daemon's configuration is read the way envelopes are: schema_internal.h).
 */
#ifndef TETHER_POLICYC_INTERNAL_H
#define TETHER_POLICYC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "policyc/policy.h"

/* va_list form of tp_diags_add(). */
int tp_diags_addv(struct tp_diags *diags, const char *file, unsigned int line,
		  unsigned int column, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/*
 * Stable sort of diags->items[first..] by (line, column).  Checks run in
 * passes (tree building, then schema), and some report a problem only when
 * they have seen a whole mapping; sorting once at the end is what makes the
 * output come in file order.  Returns 0 or -ENOMEM (items left as they were).
 */
int tp_diags_sort_from(struct tp_diags *diags, size_t first);

/*
 * Size of the buffer tp_excerpt() writes: 64 shown bytes, each at most four
 * characters once escaped, plus "..." and the NUL.
 */
#define TP_EXCERPT_MAX (64 * 4 + 4)

/*
 * Copies user text (a key, a value) into `buf` for use inside a diagnostic:
 * bytes outside printable ASCII become "\xNN" and the text is cut after 64
 * bytes with "...".  Diagnostics end up on terminals and in logs, and an
 * envelope is written by someone else: it must not be able to smuggle escape
 * sequences, bidi overrides or megabytes of text into them.  Returns buf.
 */
const char *tp_excerpt(char buf[TP_EXCERPT_MAX], const char *text, size_t len);

/*
 * 1-based line and column of byte `offset` of `data`, counted the way libyaml
 * counts marks (line breaks: LF, CR LF, CR, NEL, LS, PS; columns in
 * characters), so positions we compute agree with the ones libyaml reports.
 */
void tp_text_position(const char *data, size_t offset, unsigned int *line,
		      unsigned int *column);
/*
 * The inverse: the byte offset in data[0..len) of 1-based `line` and
 * `column` (a position libyaml reported), counted the same way.  A column
 * past the end of its line gives the offset of the line break, a position
 * past the end of the text `len`.
 */
size_t tp_text_offset(const char *data, size_t len, unsigned int line, unsigned int column);

/*
 * The absolute path a path entry names: itself, or joined to `workspace`
 * when relative ("" is the workspace).  malloc'd; NULL when out of memory.
 */
char *tp_entry_absolute(const char *workspace, const struct tp_path_entry *entry);

/*
 * Cuts the absolute, normalised `path` (of length *len) to its parent in
 * place: "/a/b" -> "/a" -> "/".  False, leaving it alone, at "/".
 */
bool tp_path_parent(char *path, size_t *len);
/* The length of path[0..len)'s parent, without writing: "/a/b" -> 2, "/a" -> 1. */
size_t tp_path_parent_len(const char *path, size_t len);

/* Whether `path` is `dir` or below it, on component boundaries ("/" holds all). */
bool tp_path_within(const char *path, const char *dir);

/*
 * The tree a run must never write that holds `path` ("/proc", "/sys" and
 * "/dev": kernel interfaces, *kernel = true; "/etc", "/usr", "/bin", "/sbin",
 * "/lib*", "/boot": the host's system software), or NULL.
 */
const char *tp_path_protected_tree(const char *path, bool *kernel);
/*
 * Whether a protected path (tp_protected_paths) is `path` or encloses it and
 * lies below `parent` (NULL: no enclosing rule): then the runtime's protected
 * rule would decide for `path` unless `path` keeps a rule of its own.
 */
bool tp_path_protected_between(const char *parent, const char *path);

/*
 * Fills policy->net_rules and host_rules (unsorted) from the envelope's
 * destinations in one canonical form (destinations.c).  0, -ENOMEM, or
 * -E2BIG when overlapping port ranges would multiply the rules past a
 * limit no real envelope reaches.
 */
int tp_destinations_compile(const struct tp_destination *dests, size_t count,
			    struct tp_policy *policy);

/*
 * Reads a whole regular file of at most `max` bytes into a malloc'd buffer
 * (NUL-terminated, *len without the NUL).  Refuses directories, FIFOs and
 * devices without blocking on them.  Problems are one diagnostic without
 * position; returns 0 or a negative errno.
 */
int tp_file_read(const char *path, size_t max, char **data, size_t *len,
		 struct tp_diags *diags);

#endif
