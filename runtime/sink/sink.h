/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where records go.  A sink encodes typed records (runtime/record.h) and
 * writes them somewhere: JSON Lines is the one sink today; syslog and OCSF
 * are sinks to come.  Each kind of sink has its own constructor (its open)
 * and fills struct sink_ops.
 *
 * A sink's state never steers a run: write() and close() report what went
 * wrong as a negative errno, which the run counts towards its result (an
 * audit stream that could not be written is an unverified run), and that is
 * all.  Nothing a run decides is read from a sink.
 */
#ifndef TETHER_RUNTIME_SINK_H
#define TETHER_RUNTIME_SINK_H

#include <stdbool.h>

struct record;
struct sink;

struct sink_ops {
	const char *name;
	/* One record; returns 0 or a negative errno.  The record is borrowed. */
	int (*write)(struct sink *sink, const struct record *rec);
	/* What write() may have buffered; returns 0 or a negative errno. */
	int (*flush)(struct sink *sink);
	/* Flushes, releases and frees the sink; returns the first error seen. */
	int (*close)(struct sink *sink);
};

struct sink {
	const struct sink_ops *ops;
};

static inline int sink_write(struct sink *sink, const struct record *rec)
{
	return sink->ops->write(sink, rec);
}

static inline int sink_flush(struct sink *sink)
{
	return sink->ops->flush(sink);
}

/* NULL is fine. */
static inline int sink_close(struct sink *sink)
{
	return sink ? sink->ops->close(sink) : 0;
}

/*
 * JSON Lines (docs/audit.md): one object per record, one line per object,
 * written to `fd` whole, with nothing buffered across records.  A line cut
 * short (a full filesystem), now or by an earlier writer of the same file,
 * is ended before the next one, so no record is ever glued to another (an
 * earlier writer's only when fd is open for reading too).
 * With `own_fd` the sink closes fd.  Returns 0 or -ENOMEM.
 */
int sink_jsonl_open(int fd, bool own_fd, struct sink **out);

struct strbuf;
/*
 * The line writer under sink_jsonl and sink_ocsf: each record as one line of
 * what `encode` makes of it (without the newline), with sink_jsonl_open's
 * guarantees (written whole; a line cut short is ended before the next).
 * Returns 0 or -ENOMEM.
 */
int sink_lines_open(int fd, bool own_fd, const char *name,
		    int (*encode)(const struct record *rec, struct strbuf *out), struct sink **out);

/*
 * A run's records to `own` (its records file: write() and flush() return
 * its result, close() closes it) and to each of the `count` sinks `shared`
 * (the node's: written and flushed, never closed, their errors their own,
 * for they count their losses themselves).  0 or -ENOMEM (own not closed).
 */
int sink_fanout_open(struct sink *own, struct sink *const *shared, size_t count,
		     struct sink **out);

/*
 * The record envelope's members from ,"host" to "policy_digest" for a run
 * (record_context.encoded): what every record of the run repeats.
 */
struct record_context;
int sink_jsonl_encode_context(const struct record_context *ctx, const char *run_id,
			      struct strbuf *out);

/* The JSON object sink_jsonl writes for `rec`, without the newline. */
int sink_jsonl_encode(const struct record *rec, struct strbuf *out);

#endif
