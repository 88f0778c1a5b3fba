/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Coalescing repeated denials (docs/audit.md, "Coalesced records").  A
 * process that is refused the same thing over and over (`ps` opening
 * /proc/PID/stat of every process outside the run) would drown the stream
 * in records that differ only in their target.  Nothing is dropped: every
 * kernel record still took its own sequence number and is counted; what
 * changes is how many lines say so.
 *
 * The key.  Two denials are the same when the kernel wrote the same kind,
 * op, decision, errno, reason, rule, access, path flags, thread, process,
 * uid, comm and executable, and, for every kind but fs and unix, the same
 * path (there it is the thing refused: a capability, a module, a key's
 * description).  For fs and unix the path names the object and is not part
 * of the key.  Only denials (`deny`) are coalesced: allowed records never,
 * and `would_deny` never either (audit mode exists to learn every path a
 * policy would have to grant).  Network records are not coalesced.
 *
 * The window.  The first denial of a key is written in full, at once, and
 * opens a window of COALESCE_WINDOW_NS by the kernel's timestamp.  Denials
 * of that key inside the window are counted, with their sequence numbers
 * (in ranges) and their distinct paths (up to COALESCE_PATHS).  The window
 * closes when the key comes again after it, when a later kernel record
 * shows time has passed it, at the run's timer (coalesce_deadline), when its
 * slot is needed for another key, when its ranges are full, or at the end
 * of the run (coalesce_flush).  Closing writes
 *   - nothing, when nothing was counted;
 *   - the one counted record in full, as it came (its own seq and time),
 *     when only one was: a coalesced record would be no shorter;
 *   - else one coalesced record (struct record_coalesced) that takes a new
 *     sequence number and names the count, the seqs it stands for and the
 *     seq of the record written in full.
 * So a key's records are: the first in full, then per window at most one
 * more line, and seq numbers 1..last are each either a line of their own or
 * listed by exactly one coalesced record.
 *
 * Memory and time are fixed: COALESCE_SLOTS keys at once, each with bounded
 * ranges and paths; one record costs a scan of the slots.
 */
#ifndef TETHER_RUNTIME_COALESCE_H
#define TETHER_RUNTIME_COALESCE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi/event.h"
#include "runtime/record.h"

#define COALESCE_WINDOW_NS 1000000000ull /* 1 s of kernel time */
#define COALESCE_SLOTS	   32		 /* keys with an open window at once */
#define COALESCE_RANGES	   32		 /* seq ranges a coalesced record lists */
#define COALESCE_PATHS	   8		 /* distinct paths a coalesced record lists */

struct coalesce_table;

/*
 * How a closing window is written.  `summary` NULL: `ev` in full, as the
 * kernel wrote it (its own seq and time).  Else a coalesced record of the
 * key of `ev` (the window's first record), which takes a new sequence
 * number, at the kernel time `mono_ns` of the last record it stands for.
 */
typedef void (*coalesce_write_fn)(void *ctx, const struct tether_fs_event *ev,
				  const struct record_coalesced *summary, uint64_t mono_ns);

/* NULL when out of memory: the caller then writes every record in full. */
struct coalesce_table *coalesce_new(void);
void coalesce_free(struct coalesce_table *t); /* NULL is fine; writes nothing */

/*
 * One decoded kernel record (`rec`, decoded from `ev`; `ev` is read only for
 * records with the fs body).  Returns true when
 * it was counted in an open window (the caller writes nothing), false when
 * the caller writes it in full now.  Windows it closes are written through
 * `write` first, so a coalesced record comes before the record that
 * reopened its key.
 */
bool coalesce_offer(struct coalesce_table *t, const struct record *rec,
		    const struct tether_fs_event *ev, coalesce_write_fn write, void *ctx);

/* Closes every window that ended at or before `now_ns` (CLOCK_MONOTONIC). */
void coalesce_expire(struct coalesce_table *t, uint64_t now_ns, coalesce_write_fn write, void *ctx);

/*
 * When the first window with something counted ends (CLOCK_MONOTONIC):
 * true and *deadline_ns, or false when no window holds anything.
 */
bool coalesce_deadline(const struct coalesce_table *t, uint64_t *deadline_ns);

/* Closes every window, oldest first: the end of the run. */
void coalesce_flush(struct coalesce_table *t, coalesce_write_fn write, void *ctx);

#endif
