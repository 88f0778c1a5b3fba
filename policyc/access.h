/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of a path rule's access rights (bpf/abi/rules.h,
 * enum tether_access), for everything that shows a mask to a person or a
 * SIEM: audit records name them, the semantic diff says them in prose, the
 * summary lists the paths that have each.  The bits that are not rights
 * (PINNED, PROTECTED) have no name: nothing grants them.
 */
#ifndef TETHER_POLICYC_ACCESS_H
#define TETHER_POLICYC_ACCESS_H

#include <stdint.h>

#include "bpf/abi/rules.h"

struct tp_access_right {
	uint32_t bit;		/* one TETHER_ACCESS_* right */
	const char *name;	/* "exec": a record's "access" member (docs/audit.md) */
	const char *verb;	/* "execute": prose ("read, write and execute") */
	const char *heading;	/* "may execute": the summary's list of paths (explain.c) */
};

/* The rights of TETHER_ACCESS_ALL in bit order: read, write, exec, connect. */
#define TP_ACCESS_RIGHT_COUNT 4
extern const struct tp_access_right tp_access_rights[TP_ACCESS_RIGHT_COUNT];

#endif
