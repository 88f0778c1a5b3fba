// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "runtime/audit.h"
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

int audit_handle_record(void *ctx, void *data, size_t size)
{
	struct audit_stream *st = ctx;
	struct record rec;

	if (record_decode(data, size, &st->names, &st->scratch, &rec)) {
		st->malformed++;
		return 0;
	}
	emit(st, &rec);
	st->records++;
	if (rec.seq > st->max_seq)
		st->max_seq = rec.seq;
	return 0;
}

int audit_write(struct audit_stream *st, struct record *rec)
{
	rec->run_id = st->names.run_id;
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
