/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounded on-disk spool between a sink and a slow or absent collector
 * (docs/audit.md, "Exporting records: syslog and spools").
 *
 * The writer (the daemon's loop, through a sink's write()) appends whole
 * messages and returns at once: an append is one write(2) into the page
 * cache, never a wait on the network.  A sender (a thread of the sink)
 * reads them back in order, sends them, and acknowledges what went.  Every
 * message offered to the spool takes the next id of the spool's own dense
 * sequence (1, 2, ...), kept or dropped, so a collector can tell a gap: an
 * id that never arrives is one a loss message names.
 *
 * On disk, a directory of its own (0700):
 *   NNNNNNNNNNNNNNNNNNNN.seg  segments named by the first id they hold,
 *                             each a run of entries {magic, len, id, bytes}
 *                             (files 0600); a torn entry at the tail of the
 *                             last segment (a crash mid-append) is cut off
 *                             when the spool is opened again.
 *   state                     the acknowledged id and the loss not yet
 *                             reported, rewritten in place.
 * The acknowledged id is made durable (fdatasync) by spool_sync(), and a
 * segment is removed only once the ids it holds are durably acknowledged;
 * after a reopen the sender starts after that id, so a message acknowledged
 * and synced is never read again, and one not acknowledged is read again.
 *
 * The cap (max_bytes) bounds the segments' total size.  An append that
 * would exceed it is dropped and counted; the spool then writes a loss
 * message (made by opts.loss_format) ahead of the next message that fits
 * with it, or as soon as the sender's acknowledgements free the room.
 *
 * One writer thread and one sender thread may use a spool at once; every
 * function takes the spool's lock only for bookkeeping, never across a
 * network call or an fsync.
 */
#ifndef TETHER_RUNTIME_SPOOL_H
#define TETHER_RUNTIME_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct spool;

/* Messages dropped since the last loss message, ids first_id..last_id. */
struct spool_loss {
	uint64_t count;
	uint64_t first_id, last_id;
	uint64_t first_tag, last_tag;	/* the tags of the first and last dropped */
};

/* Writes message `id` into `out` (empty on entry); 0 or a negative errno. */
typedef int (*spool_format_fn)(void *ctx, uint64_t id, struct strbuf *out);
/* Writes the loss message `id` for `loss`; 0 or a negative errno. */
typedef int (*spool_loss_fn)(void *ctx, uint64_t id, const struct spool_loss *loss,
			     struct strbuf *out);

struct spool_options {
	const char *dir;		/* made 0700 if missing */
	uint64_t max_bytes;		/* the cap on all segments together */
	uint64_t segment_bytes;		/* 0: max_bytes / 8, at least 4096 */
	spool_loss_fn loss_format;	/* required */
	void *loss_ctx;
};

#define SPOOL_MIN_BYTES		(16u * 1024)
/* The largest message a spool keeps (a sink truncates before that). */
#define SPOOL_ENTRY_MAX		(1u << 20)

struct spool_stats {
	uint64_t pending;		/* messages not yet acknowledged */
	uint64_t pending_bytes;		/* bytes of the segments on disk */
	uint64_t acked_id;		/* every id up to this one went */
	uint64_t next_id;
	uint64_t dropped;		/* messages dropped by the cap, since open */
	uint64_t loss_messages;		/* loss messages written, since open */
	struct spool_loss unreported;	/* dropped and not yet in a loss message */
};

/*
 * Opens (or creates) the spool in opts->dir; files there that are no
 * spool's are left alone.  Returns 0, -EINVAL (bad options: max_bytes under
 * SPOOL_MIN_BYTES, no loss_format), -ENOTDIR, -ENOMEM, or the negative
 * errno of the failed mkdir, open or read.
 */
int spool_open(const struct spool_options *opts, struct spool **out);

/*
 * Appends the message `format` writes, as the next id (*id, may be NULL),
 * with `tag` remembered should it be dropped (a record's seq).  Returns 0;
 * -ENOSPC when the cap dropped it (counted, reported by a loss message);
 * -EMSGSIZE over SPOOL_ENTRY_MAX (dropped the same way); or the negative
 * errno of format() or of the write (the message is then dropped and
 * counted too: every id is kept or named by a loss message).
 */
int spool_append(struct spool *sp, uint64_t tag, spool_format_fn format, void *ctx,
		 uint64_t *id);

/*
 * The next message after the read cursor into `out` (replaced), its id in
 * *id.  Returns 0, -EAGAIN when there is none yet, or a negative errno of
 * the read.  The cursor moves past it.
 */
int spool_next(struct spool *sp, struct strbuf *out, uint64_t *id);
/* Moves the read cursor back to the first message not acknowledged. */
void spool_rewind(struct spool *sp);
/*
 * Message `id`, which spool_next() returned, went, and every one before it:
 * called once per message, in order (in memory; spool_sync() makes it
 * durable).
 */
void spool_ack(struct spool *sp, uint64_t id);
/*
 * Makes the acknowledged id durable, then frees the room of what it covers
 * (whole segments are removed) and writes a pending loss message if it
 * fits now.  0 or the negative errno of the write or fdatasync.
 */
int spool_sync(struct spool *sp);
/*
 * spool_sync() at most every `sync_ms` milliseconds: in between, the
 * acknowledged id is written to the state file (the page cache: a crash of
 * the process loses nothing) but not synced, and no room is freed.  A
 * sender under a flood calls this per batch; idle, it calls spool_sync().
 */
int spool_commit(struct spool *sp, unsigned int sync_ms);
/* Waits up to timeout_ms for a message after the cursor: true when there is one. */
bool spool_wait(struct spool *sp, int timeout_ms);
/* Wakes a spool_wait() (closing). */
void spool_wake(struct spool *sp);

void spool_stats(struct spool *sp, struct spool_stats *st);

/* Syncs, closes and frees; what is not acknowledged stays on disk.  NULL-safe. */
int spool_close(struct spool *sp);

#endif
