/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --json output of the policy verbs (check, explain, diff), for
 * programs: one JSON object per invocation, on one line.  The shapes are
 * documented in docs/envelope.md ("Output for programs"); they only ever
 * gain members, and a member never changes its meaning.  Each function
 * appends to `sb` and returns 0 or -ENOMEM.
 */
#ifndef TETHER_RUNTIME_POLICY_JSON_H
#define TETHER_RUNTIME_POLICY_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "policyc/policy.h"
#include "runtime/json.h"

/* A JSON string of the whole of `s` ("null" for NULL). */
int json_str(struct strbuf *sb, const char *s);

/* [{"file":..,"line":..,"column":..,"message":..}, ...]: line and column 0 for
 * a problem with the input as a whole. */
int json_diags(struct strbuf *sb, const struct tp_diags *diags);

/*
 * The members every input is described by, without the braces:
 * "file":NAME,"ok":BOOL,"digest":"sha256:..."|null,"errors":[...],"warnings":[...]
 * `policy` is NULL when the input is invalid; `diags` holds its errors (when
 * it has none, a bare `error` is made into one, as on the terminal);
 * `warnings` (NULL: none) what is valid but worth a look.
 */
int json_input_members(struct strbuf *sb, const char *name, const struct tp_policy *policy,
		       const struct tp_diags *diags, int error, const struct tp_diags *warnings);

/* The facts of tp_explain_write() as an object (docs/envelope.md). */
int json_explain(struct strbuf *sb, const struct tp_policy *policy);

/* [{"kind":"widened"|"narrowed"|"changed","change":TEXT}, ...] */
int json_changes(struct strbuf *sb, const struct tp_change *changes, size_t count);

#endif
