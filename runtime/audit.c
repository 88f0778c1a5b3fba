// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "runtime/audit.h"
#include "runtime/coalesce.h"
#include "runtime/record.h"
#include "runtime/sink/sink.h"

static int emit(struct audit_stream *st, const struct record *rec)
{
	int r;

	if (!st->sink)
		return 0;
	r = sink_write(st->sink, rec);
	if (r && !st->write_error)
		st->write_error = r;
	return r;
}

/*
 * A window the coalescer closes: the one record it counted, as the kernel
 * wrote it, or a coalesced record with a number of its own.  Either was
 * counted in st->records when it came from the ring.
 */
static void write_closed(void *ctx, const struct tether_fs_event *ev,
			 const struct record_coalesced *summary, uint64_t mono_ns)
{
	struct audit_stream *st = ctx;
	struct record_scratch scratch;	/* st->scratch may hold the record being handled */
	struct record rec;

	if (record_decode(ev, sizeof(*ev), &st->names, &scratch, &rec))
		return;	/* it was decoded once already: cannot happen */
	if (!summary) {
		emit(st, &rec);
		return;
	}
	rec.seq = 0;
	rec.mono_ns = mono_ns;
	rec.fs.coalesced = summary;
	st->coalesced += summary->count;
	audit_write(st, &rec);
}

int audit_handle_record(void *ctx, void *data, size_t size)
{
	struct audit_stream *st = ctx;
	struct record rec;

	if (record_decode(data, size, &st->names, &st->scratch, &rec)) {
		st->malformed++;
		return 0;
	}
	st->records++;
	if (rec.seq > st->max_seq)
		st->max_seq = rec.seq;
	if (rec.kind == RECORD_KERNEL_FS && rec.fs.decision == TETHER_DECISION_DENY &&
	    !st->coalesce)
		st->coalesce = coalesce_new();	/* NULL: every record in full */
	if (!coalesce_offer(st->coalesce, &rec, data, write_closed, st))
		emit(st, &rec);
	return 0;
}

void audit_expire(struct audit_stream *st, uint64_t now_ns)
{
	coalesce_expire(st->coalesce, now_ns, write_closed, st);
}

bool audit_next_expiry(const struct audit_stream *st, uint64_t *mono_ns)
{
	return coalesce_deadline(st->coalesce, mono_ns);
}

void audit_flush(struct audit_stream *st)
{
	coalesce_flush(st->coalesce, write_closed, st);
}

void audit_stream_release(struct audit_stream *st)
{
	coalesce_free(st->coalesce);
	st->coalesce = NULL;
}

int audit_write(struct audit_stream *st, struct record *rec)
{
	rec->run_id = st->names.run_id;
	rec->ctx = st->names.ctx;
	if (!rec->mono_ns)
		rec->mono_ns = clock_ns(CLOCK_MONOTONIC);
	if (st->seq_next && st->seq_next(st->seq_ctx, &rec->seq))
		rec->seq = 0;
	st->records++;
	return emit(st, rec);
}

int audit_write_dns_event(struct audit_stream *st, const struct dns_event *ev)
{
	struct record rec = { .kind = RECORD_DNS, .dns = ev };

	return audit_write(st, &rec);
}

int audit_format_record(const void *data, size_t size, const struct record_names *names,
			struct strbuf *out)
{
	struct record_scratch scratch;
	struct record rec;
	int r = record_decode(data, size, names, &scratch, &rec);

	return r ?: sink_jsonl_encode(&rec, out);
}
