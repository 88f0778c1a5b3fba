// SPDX-License-Identifier: GPL-2.0
/*
 * A run's records to its own sink and to the node's shared ones
 * (sink_fanout_open(), runtime/sink/sink.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/record.h"
#include "runtime/sink/sink.h"

struct fanout {
	struct sink sink;
	struct sink_ops ops;
	struct sink *own;
	size_t count;
	struct sink *shared[];
};

static int fanout_write(struct sink *sink, const struct record *rec)
{
	struct fanout *f = (struct fanout *)sink;
	struct record same = *rec;

	/* one "time" for the record wherever it goes, and one clock read */
	same.real_ns = record_real_ns(rec);
	/* a shared sink counts and reports its own losses: they never fail the run */
	for (size_t i = 0; i < f->count; i++)
		sink_write(f->shared[i], &same);
	return sink_write(f->own, &same);
}

static int fanout_flush(struct sink *sink)
{
	struct fanout *f = (struct fanout *)sink;

	for (size_t i = 0; i < f->count; i++)
		sink_flush(f->shared[i]);
	return sink_flush(f->own);
}

static int fanout_close(struct sink *sink)
{
	struct fanout *f = (struct fanout *)sink;
	int r;

	for (size_t i = 0; i < f->count; i++)
		sink_flush(f->shared[i]);
	r = sink_close(f->own);
	free(f);
	return r;
}

int sink_fanout_open(struct sink *own, struct sink *const *shared, size_t count, struct sink **out)
{
	struct fanout *f = calloc(1, sizeof(*f) + count * sizeof(f->shared[0]));

	if (!f)
		return -ENOMEM;
	f->ops = (struct sink_ops){
		.name = "fanout", .write = fanout_write, .flush = fanout_flush, .close = fanout_close,
	};
	f->sink.ops = &f->ops;
	f->own = own;
	f->count = count;
	if (count)
		memcpy(f->shared, shared, count * sizeof(*shared));
	*out = &f->sink;
	return 0;
}
