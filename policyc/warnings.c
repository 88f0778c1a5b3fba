// SPDX-License-Identifier: GPL-2.0
/*
 * What `tether check` warns about: an envelope that is valid but grants
 * more, or less, than it seems to.  Warnings never make an envelope
 * invalid; each carries the position of the entry it is about.
 *
 *   - a path that is both writable and executable (an exec entry at or
 *     below a writable one, and @tmp): the run can write a program there
 *     and run it;
 *   - an exec entry above a writable path, which W^X keeps from making
 *     that path executable (the entry does not do all it seems to);
 *   - an exec list without @system: the system software trees are no
 *     longer executable, so not even /bin/sh runs unless listed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policyc/policyc_internal.h"

/* Whether an exec entry names `path` itself (then it keeps EXEC though writable). */
static bool exec_names(const struct tp_envelope *env, const char *path)
{
	for (size_t i = 0; i < env->exec.count; i++) {
		_cleanup_free_ char *p = tp_entry_absolute(env->workspace_path, &env->exec.items[i]);

		if (p && strcmp(p, path) == 0)
			return true;
	}
	return false;
}

static int warn_exec_entry(const char *file, const struct tp_envelope *env,
			   const struct tp_path_entry *e, const char *exec_path,
			   struct tp_diags *out)
{
	const struct tp_path_list *lists[] = { &env->write, &env->workspace_write };
	int r = 0;

	for (size_t l = 0; r == 0 && l < sizeof(lists) / sizeof(*lists); l++) {
		for (size_t i = 0; r == 0 && i < lists[l]->count; i++) {
			_cleanup_free_ char *w =
				tp_entry_absolute(env->workspace_path, &lists[l]->items[i]);

			if (!w)
				return -ENOMEM;
			if (tp_path_within(exec_path, w))
				r = tp_diags_add(out, file, e->pos.line, e->pos.column,
						 "'%s' is both writable (by '%s') and executable: the "
						 "run can write a program there and run it; review it",
						 exec_path, w);
			else if (tp_path_within(w, exec_path) && !exec_names(env, w))
				r = tp_diags_add(out, file, e->pos.line, e->pos.column,
						 "'%s' does not make '%s' beneath it executable: a "
						 "writable path loses exec unless an exec entry names "
						 "it (W^X); list '%s' in exec to grant both", exec_path,
						 w, w);
		}
	}
	return r;
}

int tp_envelope_warnings(const char *file, const struct tp_envelope *env, struct tp_diags *out)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < env->exec.count; i++) {
		_cleanup_free_ char *p = tp_entry_absolute(env->workspace_path, &env->exec.items[i]);

		r = p ? warn_exec_entry(file, env, &env->exec.items[i], p, out) : -ENOMEM;
	}
	if (r == 0 && env->exec_tmp.line)
		r = tp_diags_add(out, file, env->exec_tmp.line, env->exec_tmp.column,
				 "@tmp makes the run's private /tmp and /var/tmp both writable and "
				 "executable: the run can write a program there and run it; review "
				 "it");
	if (r == 0 && (env->exec.count || env->exec_tmp.line) && !env->exec_system.line) {
		struct tp_pos at = env->exec.count ? env->exec.items[0].pos : env->exec_tmp;

		r = tp_diags_add(out, file, at.line, at.column,
				 "this exec list replaces the system software trees (/usr, /bin, "
				 "/sbin, /lib, /opt, ...): none of them is executable, not even "
				 "/bin/sh, unless listed; add @system to keep them");
	}
	return r;
}
