/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's audit stream: its kernel records, decoded (runtime/record.h), and
 * the records the controller and the DNS proxy make, all written through
 * one path to the run's sink (runtime/sink/sink.h).  Record shapes are
 * documented in docs/audit.md.
 */
#ifndef TETHER_RUNTIME_AUDIT_H
#define TETHER_RUNTIME_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/json.h"
#include "runtime/record.h"

struct sink;

struct audit_stream {
	struct sink *sink;		/* borrowed; NULL: records are counted, not written */
	struct record_names names;
	/*
	 * Numbers a record the controller makes (run, DNS) from the run's one
	 * sequence, which the kernel's records draw on too: 0, or a negative
	 * errno and the record goes without.  NULL: no numbers.
	 */
	int (*seq_next)(void *ctx, uint64_t *seq);
	void *seq_ctx;
	uint64_t records;	/* records written, every kind */
	uint64_t max_seq;	/* highest kernel sequence number seen */
	uint64_t malformed;	/* records that could not be decoded */
	int write_error;	/* first negative errno from the sink, 0 if none */
	struct record_scratch scratch;
};

/* libbpf ring_buffer callback: ctx is a struct audit_stream. */
int audit_handle_record(void *ctx, void *data, size_t size);

/*
 * Writes a record the controller made (run, DNS): the stream's run id, the
 * run's next sequence number, and the time now unless `rec` has one.
 */
int audit_write(struct audit_stream *st, struct record *rec);

struct dns_event;
/* A DNS proxy decision as a "dns" record. */
int audit_write_dns_event(struct audit_stream *st, const struct dns_event *ev);

/* One kernel record as its JSON Lines object, without the newline (for tests). */
int audit_format_record(const void *data, size_t size, const struct record_names *names,
			struct strbuf *out);

#endif
