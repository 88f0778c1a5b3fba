/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this version enforces, field by field: the one table behind the
 * compiler's gap check and the guarantee report.
 *
 * A field's status says whether its meaning holds once a run starts:
 *
 *   ENFORCED      a kernel hook, cgroup limit or runtime step makes it hold
 *   RECORDED      metadata: it grants and restricts nothing; it is part of
 *                 the compiled policy and its digest, and of the run record
 *   NOT_ENFORCED  this version does not make it hold.  When such a field
 *                 restricts the run (restricts = true) and the envelope sets
 *                 it (or its default restricts), compiling fails unless the
 *                 envelope lists the field under acknowledge_unenforced.
 *
 * Changing a row is changing what tether claims: a row moves to ENFORCED in
 * the same commit as the enforcement and its VM test.
 *
 * Not part of the library's API: only policyc/ includes it.
 */
#ifndef TETHER_POLICYC_FIELDS_H
#define TETHER_POLICYC_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include "policyc/policy.h"

/*
 * Every row, NULL-terminated, grouped by term in the order the report lists
 * them.  A limit's row is its entry of tp_limits (policy.h), so a limit's
 * key and enforcement text are written once.  The row types are in policy.h.
 */
extern const struct tp_field_info *const tp_fields[];
extern const char tp_term_letters[TP_TERM_COUNT];	/* "KPFNIRTC" */
extern const char *const tp_term_names[TP_TERM_COUNT];

/* The row of `field` (exact name), or NULL. */
const struct tp_field_info *tp_field_find(const char *field);

struct tp_policy;
/*
 * Whether a compiled policy acknowledges every gap its content needs in this
 * version (a limit it sets, an exact grant, HTTP methods, ...).  A policy compiled here always does; one from elsewhere
 * (another tether version, a hand-made file) that relies on something this
 * version does not enforce is refused: -EINVAL with the gap named in `why`.
 */
int tp_policy_check_gaps(const struct tp_policy *policy, char *why, size_t why_len);

/*
 * The meaning a policy must have before anything uses it (validate.c): its
 * gaps (above) and no gap this version does not have, no write grant on /, in a kernel or system tree or inside an
 * input, no input and no audit sink the run could write.  0, or -EINVAL with
 * the reason in `why`.
 */
int tp_policy_validate(const struct tp_policy *policy, char *why, size_t why_len);

#endif
