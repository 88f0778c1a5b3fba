// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/abi/event.h"
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

/* ---- flood control ---------------------------------------------------- */

static size_t flood_kind(const struct record *rec)
{
	if (rec->kind == RECORD_KERNEL_FS)
		for (size_t i = 0; i < RECORD_FLOOD_KINDS - 1; i++)
			if (!strcmp(rec->fs.kind, record_flood_kinds[i]))
				return i;
	return RECORD_FLOOD_KINDS - 1;	/* net, and BPF-LSM socket_create (kind net) */
}

/* What the window counted, as one suppressed record; the window stays open. */
static void flood_summary(struct audit_stream *st)
{
	struct audit_flood *f = &st->flood;
	struct record rec = { .kind = RECORD_RUN, .run.event = RECORD_RUN_SUPPRESSED };

	if (!f->count)
		return;
	rec.run.suppressed = (struct record_run_suppressed){
		.count = f->count,
		.denied = f->denied,
		.rate_limit = st->rate_limit,
		.window_ms = AUDIT_FLOOD_WINDOW_NS / 1000000,
		.seqs = f->seqs,
		.seq_range_count = f->nseqs,
		.seqs_unlisted = f->unlisted,
		.by_kind = f->by_kind,
	};
	st->suppressed += f->count;
	audit_write(st, &rec);	/* before the reset: rec points into the window */
	f->count = f->denied = f->unlisted = 0;
	f->nseqs = 0;
	memset(f->by_kind, 0, sizeof(f->by_kind));
}

/* A kernel record's time: the window it falls in, opening a new one after the last. */
static void flood_window(struct audit_stream *st, uint64_t mono_ns)
{
	struct audit_flood *f = &st->flood;

	if (f->window_start && mono_ns < f->window_start + AUDIT_FLOOD_WINDOW_NS)
		return;
	flood_summary(st);
	f->window_start = mono_ns;
	f->lines = 0;
}

/*
 * A kernel record about to be written in full: true when the window has
 * had its `rate_limit` lines, and the record is counted instead.
 */
static bool flood_suppress(struct audit_stream *st, const struct record *rec)
{
	struct audit_flood *f = &st->flood;
	bool deny;

	if (!st->rate_limit)
		return false;
	flood_window(st, rec->mono_ns);
	if (f->lines < st->rate_limit) {
		f->lines++;
		return false;
	}
	if (f->nseqs && f->seqs[f->nseqs - 1].last + 1 == rec->seq)
		f->seqs[f->nseqs - 1].last = rec->seq;
	else if (f->nseqs < AUDIT_FLOOD_RANGES)
		f->seqs[f->nseqs++] = (struct record_seq_range){ rec->seq, rec->seq };
	else
		f->unlisted++;
	deny = rec->kind == RECORD_KERNEL_FS ? rec->fs.decision == TETHER_DECISION_DENY
					     : rec->net.ev->decision == TETHER_DECISION_DENY;
	f->count++;
	f->denied += deny;
	f->by_kind[flood_kind(rec)]++;
	return true;
}

/*
 * A coalesced record about to be written: past the ceiling, the denials it
 * stands for are counted in the window instead (it takes no seq of its
 * own then); true when so.
 */
static bool flood_absorb(struct audit_stream *st, const struct record *rec,
			 const struct record_coalesced *c, uint64_t mono_ns)
{
	struct audit_flood *f = &st->flood;

	if (!st->rate_limit)
		return false;
	flood_window(st, mono_ns);
	if (f->lines < st->rate_limit) {
		f->lines++;
		return false;
	}
	for (size_t i = 0; i < c->seq_range_count; i++) {
		const struct record_seq_range *r = &c->seqs[i];

		if (f->nseqs && f->seqs[f->nseqs - 1].last + 1 == r->first)
			f->seqs[f->nseqs - 1].last = r->last;
		else if (f->nseqs < AUDIT_FLOOD_RANGES)
			f->seqs[f->nseqs++] = *r;
		else
			f->unlisted += r->last - r->first + 1;
	}
	f->count += c->count;
	f->denied += c->count;	/* only denials are coalesced */
	f->by_kind[flood_kind(rec)] += c->count;
	return true;
}

/* A kernel record written in full, unless flood control counts it instead. */
static void emit_kernel(struct audit_stream *st, const struct record *rec)
{
	if (!flood_suppress(st, rec))
		emit(st, rec);
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
		emit_kernel(st, &rec);
		return;
	}
	if (flood_absorb(st, &rec, summary, mono_ns))
		return;
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
	uint64_t cgroup_id;

	if (st->cgroup_id && size >= sizeof(struct tether_event_hdr)) {
		memcpy(&cgroup_id, (const char *)data + offsetof(struct tether_event_hdr, cgroup_id),
		       sizeof(cgroup_id));
		if (cgroup_id != st->cgroup_id) {
			st->foreign++;
			return 0;
		}
	}
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
		emit_kernel(st, &rec);
	return 0;
}

void audit_expire(struct audit_stream *st, uint64_t now_ns)
{
	coalesce_expire(st->coalesce, now_ns, write_closed, st);
	if (st->flood.count && now_ns >= st->flood.window_start + AUDIT_FLOOD_WINDOW_NS)
		flood_summary(st);
}

bool audit_next_expiry(const struct audit_stream *st, uint64_t *mono_ns)
{
	uint64_t flood_end = st->flood.window_start + AUDIT_FLOOD_WINDOW_NS;
	bool due = coalesce_deadline(st->coalesce, mono_ns);

	if (!st->flood.count)
		return due;
	if (!due || flood_end < *mono_ns)
		*mono_ns = flood_end;
	return true;
}

void audit_flush(struct audit_stream *st)
{
	coalesce_flush(st->coalesce, write_closed, st);
	flood_summary(st);
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
