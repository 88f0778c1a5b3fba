/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node log (docs/audit.md, "The node log"): one append-only JSON Lines
 * log per node, kept by the daemon, holding every record of every run, with
 * each line linked to the one before it by a keyed chain and signed
 * checkpoints in between.
 *
 * A line is a record's JSON object (sink_jsonl_encode()) with two members
 * appended:
 *
 *   {...,"log_seq":N,"mac":"<64 hex>"}
 *
 * log_seq counts every line of the node's log from 1, across files; mac is
 * HMAC-SHA-256(key, mac of line N-1 (32 bytes) || the line's bytes before
 * ,"mac").  The first line of a log chains to 32 zero bytes.
 *
 * Checkpoints are lines of kind "checkpoint" (`checkpoint`: reason, the
 * file's index, the log_seq and mac of the line before it, and an Ed25519
 * signature over the checkpoint's text before ,"signature").  One opens
 * every file ("open"), one ends it when it is rotated ("rotate") or the
 * daemon stops ("close"), and one is written every `checkpoint_records`
 * lines or `checkpoint_ms` milliseconds ("interval").  Each checkpoint is
 * also written to the `export` sinks, so a copy of the latest one (the
 * anchor) lives off the node: `tether audit verify --anchor` tells a log
 * whose tail was cut from it.
 *
 * Files: DIR/node.log is written; a rotation renames it DIR/node.log.<I>,
 * I the file's index (1, 2, ...: in its open checkpoint too).  When the
 * files together pass `max_bytes`, the oldest rotated ones are removed and
 * a "node_log_dropped" line says which log_seqs went, so the disk use is
 * bounded and the loss is a record.  A line that cannot be written (a full
 * file system) is counted, and the count is the next line written
 * ("node_log_dropped" with reason "write_failed").
 *
 * The key file holds the HMAC key and the Ed25519 seed, as text
 * (nodelog_key_create()); it is created 0600 and must stay root's.  The
 * public key is written beside the log, DIR/node-log.pub.
 */
#ifndef TETHER_RUNTIME_SINK_NODELOG_H
#define TETHER_RUNTIME_SINK_NODELOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sink;

#define NODELOG_FILE			"node.log"
#define NODELOG_PUB_FILE		"node-log.pub"
#define NODELOG_KEY_FILE		"node-log.key"	/* in the state directory */
#define NODELOG_DEFAULT_KEY_PATH	"/var/lib/tether/" NODELOG_KEY_FILE
#define NODELOG_DEFAULT_FILE_BYTES	(64ull << 20)
#define NODELOG_DEFAULT_MAX_BYTES	(1ull << 30)
#define NODELOG_DEFAULT_CHECKPOINT_RECORDS	10000u
#define NODELOG_DEFAULT_CHECKPOINT_MS	60000u
#define NODELOG_MIN_FILE_BYTES		(64ull << 10)

struct nodelog_options {
	const char *dir;		/* the log's directory; created 0700 if missing */
	const char *key_path;		/* the key file; created when missing */
	const char *host;		/* the node's name, in checkpoints */
	const char *boot_id;
	uint64_t file_bytes;		/* rotate past this; 0: the default */
	uint64_t max_bytes;		/* all files together; 0: the default */
	uint64_t checkpoint_records;	/* 0: the default */
	uint64_t checkpoint_ms;		/* 0: the default */
	struct sink *const *export;	/* each checkpoint goes here too (the anchor); not owned */
	size_t export_count;
};

/*
 * Opens (or starts) the log in o->dir.  An existing node.log is continued
 * from its last whole line: it is rotated and the new file's open
 * checkpoint links to it (and says whether it had been closed).  `why`
 * says what failed.  Returns 0 or a negative errno.
 *
 * The sink's write() appends one record (buffered: flush() writes, and so
 * does a full buffer and every checkpoint); flush() also writes an
 * interval checkpoint when one is due by time; close() writes the close
 * checkpoint.  Writes are serialised: runs may share the sink.
 */
int sink_nodelog_open(const struct nodelog_options *o, struct sink **out, char *why, size_t len);

/* Lines this log failed to write (full file system, I/O errors). */
uint64_t sink_nodelog_lost(const struct sink *sink);

/*
 * Creates a key file at `path` (O_EXCL, 0600) with fresh random keys.
 * -EEXIST when it exists.
 */
int nodelog_key_create(const char *path);

/* ---- verification (tether audit verify) ----------------------------------- */

struct nodelog_verify_options {
	const char *key_path;		/* the HMAC key and the public key; NULL: see below */
	const char *public_key_path;	/* node-log.pub: signatures only, no MAC checks */
	const char *anchor_path;	/* a file whose last line is a checkpoint */
	bool quiet;			/* problems only, no summary */
};

/*
 * Checks the log files `paths` (any order: they are put in log_seq order)
 * and prints every problem as "FILE:LINE: error: ..." to `err`, and a
 * summary to `out`.  Returns 0 (verified), 1 (problems found), or a
 * negative errno when the files or keys could not be read (said on err).
 */
int nodelog_verify(const struct nodelog_verify_options *o, const char *const *paths, size_t count,
		   FILE *out, FILE *err);

#endif
