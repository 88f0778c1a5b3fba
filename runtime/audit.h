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
struct coalesce_table;

/*
 * Flood control: a run may write at most `rate_limit` lines of kernel
 * records per second of kernel time (full records and coalesced ones).
 * Past it, a record that would be written in full is counted instead, with
 * its seq, and the window's count is one "suppressed" run record when the
 * window ends (or its ranges fill): never dropped without a count.
 */
#define AUDIT_FLOOD_WINDOW_NS	1000000000ull
#define AUDIT_FLOOD_RANGES	32
#define AUDIT_RATE_LIMIT_DEFAULT 2000	/* lines per second and run */
struct audit_flood {
	uint64_t window_start;		/* kernel time; 0: no window open */
	uint64_t lines;			/* kernel lines written in the window */
	uint64_t count, denied;		/* counted, not written */
	uint64_t unlisted;		/* of count, seqs past the ranges */
	uint64_t by_kind[RECORD_FLOOD_KINDS];
	struct record_seq_range seqs[AUDIT_FLOOD_RANGES];
	size_t nseqs;
};

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
	/*
	 * Every record of the run, each kind: those written on a line of their
	 * own and those counted in a coalesced record (runtime/coalesce.h).
	 */
	uint64_t records;
	uint64_t coalesced;	/* of `records`, those counted in coalesced records written */
	uint64_t rate_limit;	/* flood control's ceiling; 0: none */
	uint64_t suppressed;	/* of `records`, those counted in suppressed records written */
	struct audit_flood flood;
	uint64_t max_seq;	/* highest kernel sequence number seen */
	uint64_t malformed;	/* records that could not be decoded */
	/*
	 * The run's cgroup id; a record that names another was made by a
	 * program of the slot's earlier run (loader/loader.c, ring_skip_unread)
	 * and is dropped, counted in `foreign`.  0: every record is the run's.
	 */
	uint64_t cgroup_id;
	uint64_t foreign;
	int write_error;	/* first negative errno from the sink, 0 if none */
	struct record_scratch scratch;
	/* repeated denials: made at the first one; NULL: none yet, or no memory */
	struct coalesce_table *coalesce;
};

/*
 * libbpf ring_buffer callback: ctx is a struct audit_stream.  A repeated
 * denial may be counted instead of written (runtime/coalesce.h); the
 * stream writes what it counted by audit_expire() and audit_flush().
 */
int audit_handle_record(void *ctx, void *data, size_t size);

/* Writes the coalesced records whose windows ended by `now_ns` (CLOCK_MONOTONIC). */
void audit_expire(struct audit_stream *st, uint64_t now_ns);
/* When audit_expire() next has something to write: false when never. */
bool audit_next_expiry(const struct audit_stream *st, uint64_t *mono_ns);
/* Writes everything counted and not yet written: before the run's last records. */
void audit_flush(struct audit_stream *st);
/* Frees what the stream holds (not its sink); whatever was not flushed is lost. */
void audit_stream_release(struct audit_stream *st);

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
