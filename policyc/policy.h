/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policyc: sandbox envelope (YAML) -> validated model -> compiled rules.
 *
 * A pure library: it reads the envelope file and nothing else, never prints,
 * and reports every problem of a file in one pass as a list of diagnostics,
 * each "FILE:LINE:COLUMN: error: MESSAGE" (lines and columns count from 1).
 *
 * Schema accepted by this version (everything else is an error, never ignored):
 *
 *   sandbox:
 *     filesystem:
 *       root: read_only            # the only accepted value
 *       workspace:
 *         path: /abs/dir           # absolute; the run may change files only below it
 *
 * Functions return 0 or a negative errno; output parameters are written only
 * on success.  -EINVAL means "the envelope is invalid, see diags".
 */
#ifndef TETHER_POLICYC_POLICY_H
#define TETHER_POLICYC_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/rules.h"

struct tp_diag {
	char *file;		/* as given by the caller */
	unsigned int line;	/* 1-based */
	unsigned int column;	/* 1-based */
	char *message;		/* without the "error: " prefix */
};

struct tp_diags {
	struct tp_diag *items;
	size_t count;
};

/* Appends one diagnostic (printf-style); returns 0 or -ENOMEM. */
int tp_diags_add(struct tp_diags *diags, const char *file, unsigned int line,
		 unsigned int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void tp_diags_free(struct tp_diags *diags);
/* Formats every diagnostic as "FILE:LINE:COLUMN: error: MESSAGE\n" ("FILE: error:
 * MESSAGE\n" for line 0: no position, e.g. an I/O error) into one malloc'd
 * string ("" when there are none).  Returns 0, -EINVAL or -ENOMEM. */
int tp_diags_format(const struct tp_diags *diags, char **out);

enum tp_root_mode {
	TP_ROOT_READ_ONLY = 1,
};

struct tp_envelope {
	enum tp_root_mode root;
	char *workspace_path;	/* absolute, lexically normalised: no "//", ".", "..", trailing "/" */
};

/* Parses and validates an envelope held in memory; `name` is used in diagnostics. */
int tp_envelope_parse(const char *name, const char *data, size_t len,
		      struct tp_envelope **out, struct tp_diags *diags);
/* Reads `path` (at most TP_ENVELOPE_MAX_BYTES) and parses it. -ENOENT etc. for I/O errors
 * (a diagnostic at line 0 describes them), -EINVAL for invalid content. */
int tp_envelope_parse_file(const char *path, struct tp_envelope **out,
			   struct tp_diags *diags);
void tp_envelope_free(struct tp_envelope *env);

#define TP_ENVELOPE_MAX_BYTES (4u << 20)

/* One compiled path rule: `path` is absolute and normalised; access is a
 * TETHER_ACCESS_* mask (bpf/abi/rules.h). */
struct tp_path_rule {
	char *path;
	uint32_t access;
};

struct tp_policy {
	struct tp_path_rule *path_rules;
	size_t path_rule_count;
};

/* Envelope -> rules: "/" readable, the workspace readable and writable.  The
 * character devices every program expects to write (/dev/null, ...) are not
 * path rules: the kernel side allows them by device number. */
int tp_policy_compile(const struct tp_envelope *env, struct tp_policy **out);
void tp_policy_free(struct tp_policy *policy);

/* Lexical normalisation of an absolute path: collapses "//" and ".", resolves
 * ".." lexically (never above "/"), strips a trailing "/".  Returns a malloc'd
 * string, or NULL with errno = EINVAL for relative or empty input. */
char *tp_path_normalize(const char *path);

#endif
