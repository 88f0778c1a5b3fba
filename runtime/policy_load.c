// SPDX-License-Identifier: GPL-2.0
/* What the policy verbs (and tether run) share: loading a policy, printing what is wrong with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/policy.h"
#include "runtime/tether.h"

/* Prints every diagnostic (or the bare error) to stderr. */
void policy_print_diags(const struct tp_diags *diags, const char *path, int error)
{
	char *text = NULL;

	if (diags->count && tp_diags_format(diags, &text) == 0)
		fputs(text, stderr);
	else
		fprintf(stderr, "%s: error: %s\n", path, strerror(-error));
	free(text);
}

int policy_load(const char *path, struct tp_policy **out)
{
	struct tp_diags diags = { 0 };
	int r = tp_policy_load_file(path, out, &diags);

	if (r < 0)
		policy_print_diags(&diags, path, r);
	tp_diags_free(&diags);
	return r;
}

int policy_print_digest(const struct tp_policy *policy, FILE *out)
{
	char text[TP_DIGEST_TEXT_MAX];
	uint8_t digest[32];
	int r = tp_policy_digest(policy, digest);

	if (r < 0)
		return r;
	tp_digest_text(digest, text);
	fprintf(out, "policy %s\n", text);
	return 0;
}
