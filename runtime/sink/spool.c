// SPDX-License-Identifier: GPL-2.0
/*
 * The on-disk spool of a remote sink (spool.h).  Everything is decided
 * under one mutex; what may take long without it is the sender's pread of
 * bytes below a segment's known size (the writer only ever appends past
 * it) and the fdatasync of the state file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "runtime/json.h"
#include "runtime/sink/spool.h"

#define ENTRY_MAGIC	0x31505354u	/* "TSP1" */
#define STATE_MAGIC	0x31535354u	/* "TSS1" */
#define SEGMENT_MAX	(8u << 20)

struct entry_header {
	uint32_t magic;
	uint32_t len;		/* bytes of message after the header */
	uint64_t id;
};
_Static_assert(sizeof(struct entry_header) == 16, "spool entry header layout");

struct spool_state {
	uint32_t magic;
	uint32_t reserved;
	uint64_t acked_id;
	struct spool_loss loss;
};

struct segment {
	uint64_t first_id;	/* its name */
	uint64_t last_id;	/* 0: holds nothing yet */
	uint64_t bytes;		/* of whole entries */
};

struct spool {
	pthread_mutex_t lock;
	pthread_cond_t more;
	int dir_fd, state_fd;
	uint64_t max_bytes, segment_bytes;
	spool_loss_fn loss_format;
	void *loss_ctx;

	struct segment *segs;	/* ascending ids */
	size_t seg_count, seg_cap;
	int write_fd;		/* the last segment's, -1: the next append starts one */
	uint64_t total_bytes;
	uint64_t next_id, acked_id, synced_id;
	uint64_t written_id;	/* the acked id the state file holds, synced or not */
	uint64_t synced_ms;	/* CLOCK_MONOTONIC of the last fdatasync */
	uint64_t pending;	/* entries on disk after acked_id */
	struct spool_loss loss;	/* not yet in a loss message */
	/*
	 * The largest entry dropped since: the loss message goes in only with
	 * room for one more such entry after it, so a full spool does not
	 * alternate loss messages and drops; one loss message per episode.
	 */
	uint64_t loss_room;
	uint64_t dropped, loss_messages;
	struct strbuf scratch;	/* the message being appended */
	bool woken;

	/* the sender's cursor: only the sender thread touches these */
	uint64_t cursor_id;	/* the last id spool_next() returned */
	int read_fd;
	uint64_t read_seg;	/* first_id of the segment read_fd reads */
	uint64_t read_off;
};

static void segment_name(uint64_t first_id, char name[32])
{
	snprintf(name, 32, "%020llu.seg", (unsigned long long)first_id);
}

static bool parse_segment_name(const char *name, uint64_t *first_id)
{
	char *end;

	if (strlen(name) != 24 || strcmp(name + 20, ".seg") != 0)
		return false;
	for (int i = 0; i < 20; i++)
		if (name[i] < '0' || name[i] > '9')
			return false;
	*first_id = strtoull(name, &end, 10);
	return end == name + 20 && *first_id > 0;
}

static ssize_t pread_all(int fd, void *buf, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* The state as it is now, into the file (page cache); the lock is held. */
static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int state_write_locked(struct spool *sp)
{
	struct spool_state st = {
		.magic = STATE_MAGIC,
		.acked_id = sp->acked_id,
		.loss = sp->loss,
	};
	ssize_t w = pwrite(sp->state_fd, &st, sizeof(st), 0);

	if (w < 0)
		return -errno;
	return w == sizeof(st) ? 0 : -EIO;
}

static int segs_push(struct spool *sp, struct segment seg)
{
	if (sp->seg_count == sp->seg_cap) {
		size_t cap = sp->seg_cap ? 2 * sp->seg_cap : 8;
		struct segment *segs = realloc(sp->segs, cap * sizeof(*segs));

		if (!segs)
			return -ENOMEM;
		sp->segs = segs;
		sp->seg_cap = cap;
	}
	sp->segs[sp->seg_count++] = seg;
	return 0;
}

static int segment_compare(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	return x->first_id < y->first_id ? -1 : x->first_id > y->first_id;
}

/*
 * Reads a segment's entries: its last id and the bytes of whole entries.
 * A torn or foreign tail (a crash mid-append) is cut off.
 */
static int segment_scan(struct spool *sp, struct segment *seg, uint64_t floor_id)
{
	char name[32];
	struct stat st;
	uint64_t off = 0, prev = floor_id;
	int fd, r = 0;

	segment_name(seg->first_id, name);
	fd = openat(sp->dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	while (off + sizeof(struct entry_header) <= (uint64_t)st.st_size) {
		struct entry_header h;
		ssize_t n = pread_all(fd, &h, sizeof(h), (off_t)off);

		if (n < 0) {
			r = (int)n;
			goto out;
		}
		if (n != sizeof(h) || h.magic != ENTRY_MAGIC || h.len > SPOOL_ENTRY_MAX ||
		    h.id <= prev || off + sizeof(h) + h.len > (uint64_t)st.st_size)
			break;
		prev = h.id;
		seg->last_id = h.id;
		if (h.id > sp->acked_id)
			sp->pending++;
		off += sizeof(h) + h.len;
	}
	seg->bytes = off;
	if (off < (uint64_t)st.st_size && ftruncate(fd, (off_t)off) < 0)
		r = -errno;
out:
	close(fd);
	return r;
}

static int load_state(struct spool *sp)
{
	struct spool_state st;
	ssize_t n = pread_all(sp->state_fd, &st, sizeof(st), 0);

	if (n < 0)
		return (int)n;
	if (n == sizeof(st) && st.magic == STATE_MAGIC) {
		sp->acked_id = sp->synced_id = st.acked_id;
		sp->loss = st.loss;
	}
	return 0;
}

static int load_segments(struct spool *sp)
{
	int fd = openat(sp->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	uint64_t prev;
	int r = 0;

	if (!dir) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((de = readdir(dir))) {
		uint64_t first;

		if (parse_segment_name(de->d_name, &first)) {
			r = segs_push(sp, (struct segment){ .first_id = first });
			if (r < 0)
				break;
		}
	}
	closedir(dir);
	if (r < 0)
		return r;
	if (sp->seg_count)
		qsort(sp->segs, sp->seg_count, sizeof(*sp->segs), segment_compare);
	prev = 0;
	for (size_t i = 0; i < sp->seg_count; i++) {
		r = segment_scan(sp, &sp->segs[i], prev);
		if (r < 0)
			return r;
		if (sp->segs[i].last_id)
			prev = sp->segs[i].last_id;
	}
	/* segments that hold nothing (a crash right after one was made) go */
	for (size_t i = 0; i < sp->seg_count;) {
		char name[32];

		if (sp->segs[i].last_id) {
			sp->total_bytes += sp->segs[i].bytes;
			i++;
			continue;
		}
		segment_name(sp->segs[i].first_id, name);
		if (unlinkat(sp->dir_fd, name, 0) < 0 && errno != ENOENT)
			return -errno;
		memmove(&sp->segs[i], &sp->segs[i + 1], (sp->seg_count - i - 1) * sizeof(*sp->segs));
		sp->seg_count--;
	}
	return 0;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

int spool_open(const struct spool_options *opts, struct spool **out)
{
	struct spool *sp;
	struct stat st;
	int r;

	if (!opts || !opts->dir || !opts->loss_format || opts->max_bytes < SPOOL_MIN_BYTES)
		return -EINVAL;
	if (mkdir(opts->dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->more, NULL);
	sp->dir_fd = sp->state_fd = sp->write_fd = sp->read_fd = -1;
	sp->max_bytes = opts->max_bytes;
	sp->segment_bytes = opts->segment_bytes ? opts->segment_bytes : opts->max_bytes / 8;
	if (sp->segment_bytes < 4096)
		sp->segment_bytes = 4096;
	if (sp->segment_bytes > SEGMENT_MAX)
		sp->segment_bytes = SEGMENT_MAX;
	sp->loss_format = opts->loss_format;
	sp->loss_ctx = opts->loss_ctx;
	sp->dir_fd = open(opts->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (sp->dir_fd < 0) {
		r = errno == ELOOP ? -ENOTDIR : -errno;
		goto fail;
	}
	/* the records are the runs' audit: nobody but the owner reads them */
	if (fstat(sp->dir_fd, &st) < 0 || ((st.st_mode & 077) && fchmod(sp->dir_fd, 0700) < 0)) {
		r = -errno;
		goto fail;
	}
	sp->state_fd = openat(sp->dir_fd, "state", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sp->state_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = load_state(sp);
	if (r >= 0)
		r = load_segments(sp);
	if (r < 0)
		goto fail;
	sp->next_id = max3(sp->acked_id, sp->loss.last_id,
			   sp->seg_count ? sp->segs[sp->seg_count - 1].last_id : 0) + 1;
	sp->cursor_id = sp->acked_id;
	*out = sp;
	return 0;
fail:
	spool_close(sp);
	return r;
}

/* Starts segment `first_id` for the next append; the lock is held. */
static int segment_start(struct spool *sp, uint64_t first_id)
{
	char name[32];
	int fd, r;

	segment_name(first_id, name);
	fd = openat(sp->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = segs_push(sp, (struct segment){ .first_id = first_id });
	if (r < 0) {
		close(fd);
		unlinkat(sp->dir_fd, name, 0);
		return r;
	}
	if (sp->write_fd >= 0)
		close(sp->write_fd);
	sp->write_fd = fd;
	return 0;
}

/*
 * Writes sp->scratch as entry `id` when it fits under the cap; the lock is
 * held.  -ENOSPC: it does not fit; another negative errno: the write failed.
 */
static int entry_write_locked(struct spool *sp, uint64_t id, uint64_t room)
{
	struct entry_header h = { ENTRY_MAGIC, (uint32_t)sp->scratch.len, id };
	struct iovec iov[2] = { { &h, sizeof(h) }, { sp->scratch.data, sp->scratch.len } };
	uint64_t size = sizeof(h) + sp->scratch.len;
	struct segment *last;
	ssize_t w;
	int r;

	if (sp->scratch.len > SPOOL_ENTRY_MAX)
		return -EMSGSIZE;
	if (sp->total_bytes + size + room > sp->max_bytes)
		return -ENOSPC;
	last = sp->seg_count ? &sp->segs[sp->seg_count - 1] : NULL;
	if (sp->write_fd < 0 || !last || last->bytes >= sp->segment_bytes) {
		r = segment_start(sp, id);
		if (r < 0)
			return r;
		last = &sp->segs[sp->seg_count - 1];
	}
	do
		w = writev(sp->write_fd, iov, 2);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)size) {
		r = w < 0 ? -errno : -ENOSPC;
		/* a torn entry is cut off now, not left for the sender to trip on */
		if (ftruncate(sp->write_fd, (off_t)last->bytes) < 0) {
			close(sp->write_fd);
			sp->write_fd = -1;
		}
		return r;
	}
	last->last_id = id;
	last->bytes += size;
	sp->total_bytes += size;
	sp->pending++;
	pthread_cond_signal(&sp->more);
	return 0;
}

/* The loss message, when there is one to write and it fits; the lock is held. */
static void loss_flush_locked(struct spool *sp)
{
	uint64_t id = sp->next_id;

	if (!sp->loss.count)
		return;
	sp->scratch.len = 0;
	if (sp->loss_format(sp->loss_ctx, id, &sp->loss, &sp->scratch) < 0)
		return;
	if (entry_write_locked(sp, id, sp->loss_room) < 0)
		return;		/* still pending: the next append or ack tries again */
	sp->next_id++;
	sp->loss_messages++;
	sp->loss = (struct spool_loss){ 0 };
	sp->loss_room = 0;
	state_write_locked(sp);
}

static void drop_locked(struct spool *sp, uint64_t id, uint64_t tag)
{
	uint64_t size = sizeof(struct entry_header) + sp->scratch.len;

	if (size > sp->loss_room && size <= SPOOL_ENTRY_MAX)
		sp->loss_room = size;
	if (!sp->loss.count) {
		sp->loss.first_id = id;
		sp->loss.first_tag = tag;
	}
	sp->loss.count++;
	sp->loss.last_id = id;
	sp->loss.last_tag = tag;
	sp->dropped++;
	/* no fsync: under a flood this runs per record; a crash loses the page cache at worst */
	state_write_locked(sp);
}

int spool_append(struct spool *sp, uint64_t tag, spool_format_fn format, void *ctx,
		 uint64_t *id_out)
{
	uint64_t id;
	int r;

	pthread_mutex_lock(&sp->lock);
	loss_flush_locked(sp);
	id = sp->next_id++;
	sp->scratch.len = 0;
	r = format(ctx, id, &sp->scratch);
	if (r >= 0)
		r = entry_write_locked(sp, id, 0);
	if (r < 0)
		drop_locked(sp, id, tag);
	pthread_mutex_unlock(&sp->lock);
	if (id_out)
		*id_out = id;
	return r < 0 ? r : 0;
}

/* The segment holding the first id after the cursor: its index, or -1. */
static ssize_t segment_after_cursor(const struct spool *sp)
{
	for (size_t i = 0; i < sp->seg_count; i++)
		if (sp->segs[i].last_id > sp->cursor_id)
			return (ssize_t)i;
	return -1;
}

int spool_next(struct spool *sp, struct strbuf *out, uint64_t *id)
{
	for (;;) {
		struct entry_header h;
		struct segment seg;
		ssize_t i, n;

		pthread_mutex_lock(&sp->lock);
		i = segment_after_cursor(sp);
		if (i >= 0)
			seg = sp->segs[i];
		pthread_mutex_unlock(&sp->lock);
		if (i < 0)
			return -EAGAIN;
		if (sp->read_fd < 0 || sp->read_seg != seg.first_id) {
			char name[32];

			if (sp->read_fd >= 0)
				close(sp->read_fd);
			segment_name(seg.first_id, name);
			sp->read_fd = openat(sp->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (sp->read_fd < 0)
				return -errno;
			sp->read_seg = seg.first_id;
			sp->read_off = 0;
		}
		if (sp->read_off + sizeof(h) > seg.bytes)
			return -EIO;	/* the list says there is more: the file disagrees */
		n = pread_all(sp->read_fd, &h, sizeof(h), (off_t)sp->read_off);
		if (n < 0)
			return (int)n;
		if (n != sizeof(h) || h.magic != ENTRY_MAGIC || h.len > SPOOL_ENTRY_MAX ||
		    sp->read_off + sizeof(h) + h.len > seg.bytes)
			return -EIO;
		if (h.id <= sp->cursor_id) {
			/* sent before a rewind or a reopen: skipped by its header */
			sp->read_off += sizeof(h) + h.len;
			continue;
		}
		out->len = 0;
		if (sb_printf(out, "%*s", (int)h.len, "") < 0)
			return -ENOMEM;
		n = pread_all(sp->read_fd, out->data, h.len, (off_t)(sp->read_off + sizeof(h)));
		if (n < 0)
			return (int)n;
		if ((size_t)n != h.len)
			return -EIO;
		sp->read_off += sizeof(h) + h.len;
		sp->cursor_id = h.id;
		*id = h.id;
		return 0;
	}
}

void spool_rewind(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->cursor_id = sp->acked_id;
	pthread_mutex_unlock(&sp->lock);
	/* the segment is read again from its start, skipping what was acknowledged */
	sp->read_off = 0;
}

void spool_ack(struct spool *sp, uint64_t id)
{
	pthread_mutex_lock(&sp->lock);
	if (id > sp->acked_id) {
		sp->acked_id = id;
		if (sp->pending)
			sp->pending--;
	}
	pthread_mutex_unlock(&sp->lock);
}

/* Removes the segments every id of which is durably acknowledged; the lock is held. */
static int segments_release_locked(struct spool *sp)
{
	while (sp->seg_count && sp->segs[0].last_id <= sp->synced_id) {
		char name[32];

		if (sp->seg_count == 1 && sp->write_fd >= 0) {
			close(sp->write_fd);
			sp->write_fd = -1;
		}
		segment_name(sp->segs[0].first_id, name);
		if (unlinkat(sp->dir_fd, name, 0) < 0 && errno != ENOENT)
			return -errno;
		sp->total_bytes -= sp->segs[0].bytes;
		memmove(&sp->segs[0], &sp->segs[1], (sp->seg_count - 1) * sizeof(*sp->segs));
		sp->seg_count--;
	}
	return 0;
}

int spool_sync(struct spool *sp)
{
	uint64_t acked;
	int r;

	pthread_mutex_lock(&sp->lock);
	acked = sp->acked_id;
	r = acked == sp->synced_id ? 1 : state_write_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	if (r == 1)
		return 0;
	if (r == 0 && fdatasync(sp->state_fd) < 0)
		r = -errno;
	if (r < 0)
		return r;
	pthread_mutex_lock(&sp->lock);
	sp->synced_id = acked;
	sp->synced_ms = mono_ms();
	r = segments_release_locked(sp);
	loss_flush_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	return r;
}

int spool_commit(struct spool *sp, unsigned int sync_ms)
{
	int r = 0;

	pthread_mutex_lock(&sp->lock);
	if (mono_ms() - sp->synced_ms >= sync_ms) {
		pthread_mutex_unlock(&sp->lock);
		return spool_sync(sp);
	}
	if (sp->acked_id != sp->written_id) {
		r = state_write_locked(sp);
		if (r == 0)
			sp->written_id = sp->acked_id;
	}
	pthread_mutex_unlock(&sp->lock);
	return r;
}

bool spool_wait(struct spool *sp, int timeout_ms)
{
	struct timespec until;
	bool ready;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&sp->lock);
	while (!(ready = segment_after_cursor(sp) >= 0) && !sp->woken)
		if (pthread_cond_timedwait(&sp->more, &sp->lock, &until) == ETIMEDOUT)
			break;
	sp->woken = false;
	pthread_mutex_unlock(&sp->lock);
	return ready;
}

void spool_wake(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->woken = true;
	pthread_cond_broadcast(&sp->more);
	pthread_mutex_unlock(&sp->lock);
}

void spool_stats(struct spool *sp, struct spool_stats *st)
{
	pthread_mutex_lock(&sp->lock);
	*st = (struct spool_stats){
		.pending = sp->pending,
		.pending_bytes = sp->total_bytes,
		.acked_id = sp->acked_id,
		.next_id = sp->next_id,
		.dropped = sp->dropped,
		.loss_messages = sp->loss_messages,
		.unreported = sp->loss,
	};
	pthread_mutex_unlock(&sp->lock);
}

int spool_close(struct spool *sp)
{
	int r = 0;

	if (!sp)
		return 0;
	if (sp->state_fd >= 0) {
		r = spool_sync(sp);
		close(sp->state_fd);
	}
	if (sp->write_fd >= 0)
		close(sp->write_fd);
	if (sp->read_fd >= 0)
		close(sp->read_fd);
	if (sp->dir_fd >= 0)
		close(sp->dir_fd);
	sb_free(&sp->scratch);
	free(sp->segs);
	pthread_cond_destroy(&sp->more);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
	return r;
}
