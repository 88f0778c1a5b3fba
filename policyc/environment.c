// SPDX-License-Identifier: GPL-2.0
/*
 * sandbox.environment: which of the controller's environment variables a run
 * gets.  One definition of the default set, shared by the compiler (which
 * drops listed names the set covers, so they do not change the digest), the
 * explain text and the runtime (which builds the run's environment from it).
 */
#include <stdbool.h>
#include <string.h>

#include "policyc/policy.h"

/*
 * What programs need to find commands and print text as the user expects.
 * None of them carries a secret by convention.
 */
const char *const tp_env_default_names[] = {
	"PATH", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", NULL,
};

/*
 * tether sets these for every run (TMPDIR: the run's private temporary
 * directory), whatever the controller's environment holds: listing one is an
 * error.  HOME is not among them: tether sets it to the workspace unless the
 * policy lists HOME, which then passes like any listed name.
 */
const char *const tp_env_reserved_names[] = { "TMPDIR", NULL };

bool tp_env_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > TP_ENV_NAME_MAX || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

bool tp_env_name_is_default(const char *name)
{
	for (const char *const *d = tp_env_default_names; *d; d++) {
		size_t len = strlen(*d);

		if ((*d)[len - 1] == '*' ? strncmp(name, *d, len - 1) == 0 : strcmp(name, *d) == 0)
			return true;
	}
	return false;
}
