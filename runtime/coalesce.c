// SPDX-License-Identifier: GPL-2.0
/*
 * Repeated denials, counted instead of written one by one: runtime/coalesce.h
 * has the key, the window and what closing one writes.
 */
#include <stdlib.h>
#include <string.h>

#include "bpf/abi/event.h"
#include "runtime/coalesce.h"
#include "runtime/record.h"

struct coalesce_path {
	size_t len;
	char text[sizeof(((struct record_scratch *)0)->text)];
};

struct coalesce_slot {
	bool used;
	uint64_t opened_ns;		/* kernel time of the record written in full */
	uint64_t last_ns;		/* latest kernel time of a record counted */
	struct tether_fs_event first;	/* written in full; its fields are the key */
	struct tether_fs_event pending; /* the first record counted: written in full if alone */
	uint64_t count;			/* records counted in this window */
	size_t range_count;
	struct record_seq_range ranges[COALESCE_RANGES];
	size_t path_count;
	uint64_t paths_unlisted; /* records counted whose path is not in paths[] */
	struct coalesce_path paths[COALESCE_PATHS];
};

struct coalesce_table {
	struct coalesce_slot slots[COALESCE_SLOTS];
};

struct coalesce_table *coalesce_new(void)
{
	return calloc(1, sizeof(struct coalesce_table));
}

void coalesce_free(struct coalesce_table *t)
{
	free(t);
}

/* fs and unix records name the object in their path: not part of the key. */
static bool path_is_target(const struct tether_fs_event *ev)
{
	return ev->hdr.kind == TETHER_EVENT_FS || ev->hdr.kind == TETHER_EVENT_UNIX;
}

static bool same_key(const struct tether_fs_event *a, const struct tether_fs_event *b)
{
	if (a->hdr.kind != b->hdr.kind || a->op != b->op || a->hdr.pid != b->hdr.pid ||
	    a->hdr.tgid != b->hdr.tgid || a->hdr.cgroup_id != b->hdr.cgroup_id ||
	    a->decision != b->decision || a->err != b->err || a->reason != b->reason ||
	    a->rule_id != b->rule_id || a->access != b->access || a->flags != b->flags ||
	    a->uid != b->uid)
		return false;
	if (memcmp(a->comm, b->comm, sizeof(a->comm)) || strncmp(a->exe, b->exe, sizeof(a->exe)))
		return false;
	return path_is_target(a) || !strncmp(a->path, b->path, sizeof(a->path));
}

static bool window_open(const struct coalesce_slot *s, uint64_t ts_ns)
{
	/* a record stamped before the window's first (another CPU) is inside it */
	return ts_ns < s->opened_ns + COALESCE_WINDOW_NS;
}

/* Writes what the window holds and frees the slot. */
static void close_slot(struct coalesce_slot *s, coalesce_write_fn write, void *ctx)
{
	struct record_text paths[COALESCE_PATHS];
	struct record_coalesced summary;

	if (s->count == 1) {
		write(ctx, &s->pending, NULL, s->pending.hdr.ts_ns);
	} else if (s->count > 1) {
		for (size_t i = 0; i < s->path_count; i++)
			paths[i] = (struct record_text){s->paths[i].text, s->paths[i].len};
		summary = (struct record_coalesced){
		    .count = s->count,
		    .first_seq = s->first.hdr.seq,
		    .seqs = s->ranges,
		    .seq_range_count = s->range_count,
		    .paths_listed = path_is_target(&s->first),
		    .paths = paths,
		    .path_count = s->path_count,
		    .paths_unlisted = s->paths_unlisted,
		};
		write(ctx, &s->first, &summary, s->last_ns);
	}
	s->used = false;
}

static void open_slot(struct coalesce_slot *s, const struct tether_fs_event *ev)
{
	s->used = true;
	s->opened_ns = ev->hdr.ts_ns;
	s->last_ns = ev->hdr.ts_ns;
	s->first = *ev;
	s->count = 0;
	s->range_count = 0;
	s->path_count = 0;
	s->paths_unlisted = 0;
}

static void note_path(struct coalesce_slot *s, const struct record_fs *fs)
{
	size_t len =
	    fs->path_len < sizeof(s->paths[0].text) ? fs->path_len : sizeof(s->paths[0].text);

	for (size_t i = 0; i < s->path_count; i++)
		if (s->paths[i].len == len && !memcmp(s->paths[i].text, fs->path, len))
			return;
	if (s->path_count == COALESCE_PATHS) {
		s->paths_unlisted++;
		return;
	}
	memcpy(s->paths[s->path_count].text, fs->path, len);
	s->paths[s->path_count].len = len;
	s->path_count++;
}

/* Counts `ev` in the slot's window: false when its ranges are full. */
static bool absorb(struct coalesce_slot *s, const struct record *rec,
		   const struct tether_fs_event *ev)
{
	struct record_seq_range *last = s->range_count ? &s->ranges[s->range_count - 1] : NULL;

	if (last && ev->hdr.seq == last->last + 1) {
		last->last = ev->hdr.seq;
	} else if (s->range_count < COALESCE_RANGES) {
		s->ranges[s->range_count++] = (struct record_seq_range){ev->hdr.seq, ev->hdr.seq};
	} else {
		return false;
	}
	if (!s->count)
		s->pending = *ev;
	s->count++;
	if (ev->hdr.ts_ns > s->last_ns)
		s->last_ns = ev->hdr.ts_ns;
	if (path_is_target(ev))
		note_path(s, &rec->fs);
	return true;
}

/*
 * The used slot whose window opened first (lowest seq), among those with
 * something counted (`pending_only`) and, with `expired`, whose window
 * ended at or before `now_ns`.
 */
static struct coalesce_slot *oldest(struct coalesce_table *t, bool pending_only, bool expired,
				    uint64_t now_ns)
{
	struct coalesce_slot *best = NULL;

	for (size_t i = 0; i < COALESCE_SLOTS; i++) {
		struct coalesce_slot *s = &t->slots[i];

		if (!s->used || (pending_only && !s->count) || (expired && window_open(s, now_ns)))
			continue;
		if (!best || s->first.hdr.seq < best->first.hdr.seq)
			best = s;
	}
	return best;
}

/* Closes the windows that ended at or before now_ns, in the order they opened. */
static void close_expired(struct coalesce_table *t, bool pending_only, uint64_t now_ns,
			  coalesce_write_fn write, void *ctx)
{
	for (struct coalesce_slot *s; (s = oldest(t, pending_only, true, now_ns));)
		close_slot(s, write, ctx);
}

/*
 * A slot for a new key: a free one, else one that holds nothing to write
 * (its first record is out already), else the oldest, closed now.
 */
static struct coalesce_slot *claim(struct coalesce_table *t, coalesce_write_fn write, void *ctx)
{
	struct coalesce_slot *idle = NULL, *s;

	for (size_t i = 0; i < COALESCE_SLOTS; i++) {
		s = &t->slots[i];
		if (!s->used)
			return s;
		if (!s->count && (!idle || s->opened_ns < idle->opened_ns))
			idle = s;
	}
	if (idle)
		return idle;
	s = oldest(t, true, false, 0);
	close_slot(s, write, ctx);
	return s;
}

bool coalesce_offer(struct coalesce_table *t, const struct record *rec,
		    const struct tether_fs_event *ev, coalesce_write_fn write, void *ctx)
{
	struct coalesce_slot *match = NULL;

	if (!t)
		return false;
	/*
	 * Windows this kernel record's time has passed are over, whatever the
	 * record: what they hold is written now, before it, rather than left
	 * waiting for the timer.  Then the key, for a denial.
	 */
	close_expired(t, true, rec->mono_ns, write, ctx);
	if (rec->kind != RECORD_KERNEL_FS || ev->decision != TETHER_DECISION_DENY)
		return false;
	for (size_t i = 0; i < COALESCE_SLOTS && !match; i++)
		if (t->slots[i].used && same_key(&t->slots[i].first, ev))
			match = &t->slots[i];
	if (match) {
		if (window_open(match, ev->hdr.ts_ns) && absorb(match, rec, ev))
			return true;
		/* after its window, or its ranges are full: this record opens the next */
		close_slot(match, write, ctx);
	} else {
		match = claim(t, write, ctx);
	}
	open_slot(match, ev);
	return false;
}

void coalesce_expire(struct coalesce_table *t, uint64_t now_ns, coalesce_write_fn write, void *ctx)
{
	if (t)
		close_expired(t, false, now_ns, write, ctx);
}

bool coalesce_deadline(const struct coalesce_table *t, uint64_t *deadline_ns)
{
	bool found = false;

	for (size_t i = 0; t && i < COALESCE_SLOTS; i++) {
		const struct coalesce_slot *s = &t->slots[i];
		uint64_t end = s->opened_ns + COALESCE_WINDOW_NS;

		if (s->used && s->count && (!found || end < *deadline_ns)) {
			*deadline_ns = end;
			found = true;
		}
	}
	return found;
}

void coalesce_flush(struct coalesce_table *t, coalesce_write_fn write, void *ctx)
{
	if (!t)
		return;
	for (struct coalesce_slot *s; (s = oldest(t, false, false, 0));)
		close_slot(s, write, ctx);
}
