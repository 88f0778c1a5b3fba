/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OCSF (the Open Cybersecurity Schema Framework, schema.ocsf.io) events for
 * tether's records: File System Activity (1001), Process Activity (1007),
 * Network Activity (4001) and DNS Activity (4003), in OCSF_VERSION.  The
 * mapping of each record kind and op to a class and an activity, and of
 * each field to an attribute, is docs/audit.md's "OCSF" section; what the
 * schema requires of each class is tests/data/ocsf-1.x-required.json
 * (scripts/ocsf-required), which tests/unit/test_ocsf.c checks every
 * event against.  Fields OCSF has no attribute for go under `unmapped`
 * with their docs/audit.md names.
 */
#ifndef TETHER_RUNTIME_SINK_OCSF_H
#define TETHER_RUNTIME_SINK_OCSF_H

#include <stdbool.h>

#define OCSF_VERSION "1.8.0"

struct record;
struct sink;
struct strbuf;

/*
 * Appends one OCSF event for `rec` to `out`: one JSON object, no newline.
 * Returns 0, -ENOMEM, or -EINVAL for a record kind it does not know.
 */
int ocsf_encode(const struct record *rec, struct strbuf *out);

/*
 * OCSF events as JSON Lines: one event per line, each written to fd whole
 * in one write sequence, nothing buffered across records; a line cut short
 * (a full filesystem) is ended before the next, as sink_jsonl_open's are.
 * With `own_fd` the sink closes fd.  Returns 0 or -ENOMEM.
 */
int sink_ocsf_open(int fd, bool own_fd, struct sink **out);

#endif
