// SPDX-License-Identifier: GPL-2.0
/*
 * The node log's writer (runtime/sink/nodelog.h; docs/audit.md, "The node
 * log").  One mutex serialises the runs that share it.  Lines are buffered
 * and written with write(2) on flush, on a full buffer and at every
 * checkpoint; a checkpoint is fdatasync'ed.  What a failed write leaves in
 * the file is cut back to the last whole line that went, so the chain on
 * disk never holds a torn line, and the lost records are counted and said
 * in the next line that can be written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/version.h"
#include "runtime/base64.h"
#include "runtime/fsutil.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/nodelog_internal.h"
#include "runtime/sink/sink.h"

#define BUFFER_BYTES	(64u << 10)	/* write when the buffer holds this much */
#define MAX_ROTATED	4096		/* rotated files kept track of */

struct rotated {
	uint64_t index;		/* node.log.<index> */
	uint64_t first_seq;	/* its first line's log_seq; 0: unknown */
	uint64_t bytes;
};

struct nodelog {
	struct sink sink;
	struct sink_ops ops;
	pthread_mutex_t lock;
	int dirfd, fd;
	char *dir, *host, *boot_id;
	struct nodelog_key key;
	struct nodelog_mac *mac;
	uint64_t file_bytes, max_bytes, cp_records, cp_ms;
	struct sink **export;
	size_t export_count;

	uint64_t file_index;	/* node.log's own index: what it is renamed to */
	uint64_t file_first_seq;	/* node.log's first line's log_seq; 0: not known (not ours) */
	uint64_t seq;		/* the last log_seq written (buffered or not) */
	uint8_t head[NODELOG_MAC_LEN];	/* its mac */
	uint64_t file_size;	/* node.log's bytes, buffered ones included */
	/* what is on disk: where a failed write goes back to */
	uint64_t durable_seq, durable_size;
	uint8_t durable_head[NODELOG_MAC_LEN];
	uint64_t buffered_records;	/* records (not our own lines) in buf */

	struct strbuf buf, line, cp;
	uint64_t since_cp;	/* lines since the last checkpoint */
	uint64_t last_cp_ms;
	uint64_t lost;		/* records never written, all told */
	uint64_t lost_unsaid;	/* of which no node_log_dropped line says so yet */
	int error;		/* the first error */

	struct rotated *files;	/* oldest first */
	size_t nfiles;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void set_error(struct nodelog *s, int r)
{
	if (r && !s->error)
		s->error = r;
}

/*
 * Appends `obj` (a JSON object, no newline) to the buffer as the next line:
 * its closing brace becomes ,"log_seq":N,"mac":"..."}.
 */
static int append(struct nodelog *s, const char *obj, size_t len, bool is_record)
{
	size_t start = s->buf.len, body;
	uint8_t mac[NODELOG_MAC_LEN];
	char hex[2 * NODELOG_MAC_LEN + 1];
	int r;

	if (len < 2 || obj[0] != '{' || obj[len - 1] != '}')
		return -EINVAL;
	r = sb_printf(&s->buf, "%.*s" NODELOG_SEQ_KEY "%llu", (int)(len - 1), obj,
		      (unsigned long long)(s->seq + 1));
	if (r)
		goto undo;
	body = s->buf.len - start;
	r = nodelog_mac(s->mac, s->head, s->buf.data + start, body, mac);
	nodelog_hex(mac, sizeof(mac), hex);
	r = r ?: sb_printf(&s->buf, NODELOG_MAC_KEY "%s\"}\n", hex);
	if (r)
		goto undo;
	s->seq++;
	memcpy(s->head, mac, sizeof(mac));
	s->file_size += s->buf.len - start;
	s->since_cp++;
	s->buffered_records += is_record;
	return 0;
undo:
	s->buf.len = start;
	return r;
}

/*
 * Writes the buffer.  When it does not all go, the file is cut back to
 * its last whole line on disk and the chain to that line: the buffered
 * records are lost, counted, and said by the next line.
 */
static int flush_buffer(struct nodelog *s)
{
	int r;

	if (!s->buf.len)
		return 0;
	r = write_all(s->fd, s->buf.data, s->buf.len);
	if (!r) {
		s->durable_seq = s->seq;
		s->durable_size = s->file_size;
		memcpy(s->durable_head, s->head, sizeof(s->head));
	} else {
		/* O_APPEND: the next write goes where the cut leaves the end */
		if (ftruncate(s->fd, (off_t)s->durable_size) < 0)
			set_error(s, -errno);
		s->seq = s->durable_seq;
		s->file_size = s->durable_size;
		memcpy(s->head, s->durable_head, sizeof(s->head));
		s->lost += s->buffered_records;
		s->lost_unsaid += s->buffered_records;
		set_error(s, r);
	}
	s->buf.len = 0;
	s->buffered_records = 0;
	return r;
}

/* The envelope of the log's own lines: a record outside any run's stream, with the node's. */
static int begin_own(struct nodelog *s, struct strbuf *out, const char *kind)
{
	char when[64];
	int r;

	record_format_time(0, when, sizeof(when));
	r = sb_printf(out, "{\"schema_version\":%d,\"time\":\"%s\",\"host\":", RECORD_SCHEMA_VERSION,
		      when);
	r |= sb_json_string(out, s->host, 256);
	r |= sb_printf(out, ",\"boot_id\":");
	r |= sb_json_string(out, s->boot_id, 64);
	r |= sb_printf(out, ",\"tether_version\":\"%s\",\"run_id\":\"\",\"kind\":\"%s\"",
		       TETHER_VERSION, kind);
	return r;
}

static void export_line(struct nodelog *s, const char *line, size_t len, const char *kind)
{
	struct record rec = {
		.kind = RECORD_NODE_LINE,
		.line = { .text = line, .len = len },
		.line_kind = kind,
	};

	for (size_t i = 0; i < s->export_count; i++) {
		sink_write(s->export[i], &rec);
		sink_flush(s->export[i]);
	}
}

/*
 * A checkpoint line: it covers every line before it (their count and the
 * chain's head, signed), is written at once and fdatasync'ed, then sent to
 * the export sinks.  `previous` only in an open checkpoint.
 */
static int checkpoint(struct nodelog *s, const char *reason, const char *previous)
{
	char head[2 * NODELOG_MAC_LEN + 1], *b64;
	uint8_t sig[64];
	size_t start, end;
	int r;

	s->cp.len = 0;
	nodelog_hex(s->head, sizeof(s->head), head);
	r = begin_own(s, &s->cp, "checkpoint");
	r |= sb_printf(&s->cp,
		       ",\"checkpoint\":{\"reason\":\"%s\",\"file_index\":%llu,"
		       "\"covers_log_seq\":%llu,\"chain_head\":\"%s\"",
		       reason, (unsigned long long)s->file_index, (unsigned long long)s->seq, head);
	if (previous)
		r |= sb_printf(&s->cp, ",\"previous\":\"%s\"", previous);
	r |= sb_printf(&s->cp, ",\"key_id\":\"%s\"", s->key.key_id);
	if (r)
		return -ENOMEM;
	r = nodelog_sign(&s->key, s->cp.data, s->cp.len, sig);
	if (r)
		return r;
	b64 = base64_encode(sig, sizeof(sig));
	if (!b64)
		return -ENOMEM;
	r = sb_printf(&s->cp, NODELOG_SIG_KEY "%s\"}}", b64);
	free(b64);
	if (r)
		return -ENOMEM;
	start = s->buf.len;
	r = append(s, s->cp.data, s->cp.len, false);
	end = s->buf.len;
	r = r ?: flush_buffer(s);
	if (r)
		return r;
	s->since_cp = 0;
	s->last_cp_ms = now_ms();
	if (fdatasync(s->fd) < 0)
		set_error(s, -errno);
	/*
	 * The line as the log holds it, without its newline, to the export
	 * sinks: flush_buffer() emptied the buffer but left its bytes.
	 */
	export_line(s, s->buf.data + start, end - start - 1, "checkpoint");
	return 0;
}

/* A node_log_dropped line with `fields` (",..." JSON members), written at once. */
static int dropped(struct nodelog *s, const char *fields)
{
	int r;

	s->cp.len = 0;
	r = begin_own(s, &s->cp, "node_log_dropped");
	r |= sb_printf(&s->cp, ",\"node_log_dropped\":{%s}}", fields);
	if (r)
		return -ENOMEM;
	r = append(s, s->cp.data, s->cp.len, false);
	return r ?: flush_buffer(s);
}

/* The lost records no line has said yet, said now (when the disk takes it). */
static void say_lost(struct nodelog *s)
{
	char fields[128];
	uint64_t n = s->lost_unsaid;

	if (!n)
		return;
	snprintf(fields, sizeof(fields), "\"reason\":\"write_failed\",\"records\":%llu",
		 (unsigned long long)n);
	if (!dropped(s, fields))
		s->lost_unsaid -= n;
}

static char *file_name(uint64_t index, char *buf, size_t size)
{
	if (index)
		snprintf(buf, size, NODELOG_FILE ".%llu", (unsigned long long)index);
	else
		snprintf(buf, size, NODELOG_FILE);
	return buf;
}

/* The first line's log_seq of a log file (0: none readable). */
static uint64_t first_seq_of(int dirfd, const char *name)
{
	char buf[65536];
	uint64_t seq = 0;
	uint8_t mac[NODELOG_MAC_LEN];
	size_t body;
	ssize_t n;
	char *nl;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0 && (nl = memchr(buf, '\n', (size_t)n)) &&
	    nodelog_line_parse(buf, (size_t)(nl - buf), &seq, mac, &body))
		seq = 0;
	return seq;
}

/* Removes the oldest rotated files while all of them pass max_bytes, and says so. */
static void bound_disk(struct nodelog *s)
{
	uint64_t total = s->file_size, bytes = 0, first = 0, last = 0;
	size_t drop = 0;
	char name[64], fields[256];

	for (size_t i = 0; i < s->nfiles; i++)
		total += s->files[i].bytes;
	while (drop < s->nfiles && total > s->max_bytes) {
		const struct rotated *f = &s->files[drop];

		if (unlinkat(s->dirfd, file_name(f->index, name, sizeof(name)), 0) < 0 &&
		    errno != ENOENT) {
			set_error(s, -errno);
			break;
		}
		if (!first)
			first = f->first_seq;
		last = drop + 1 < s->nfiles ? s->files[drop + 1].first_seq - 1 : 0;
		total -= f->bytes;
		bytes += f->bytes;
		drop++;
	}
	if (!drop)
		return;
	/* the newest rotated file went too: it ended before node.log's open checkpoint, the last line */
	if (drop == s->nfiles)
		last = s->seq - 1;
	snprintf(fields, sizeof(fields),
		 "\"reason\":\"max_bytes\",\"files\":%zu,\"first_log_seq\":%llu,"
		 "\"last_log_seq\":%llu,\"bytes\":%llu,\"max_bytes\":%llu",
		 drop, (unsigned long long)first, (unsigned long long)last,
		 (unsigned long long)bytes, (unsigned long long)s->max_bytes);
	memmove(s->files, s->files + drop, (s->nfiles - drop) * sizeof(*s->files));
	s->nfiles -= drop;
	dropped(s, fields);
}

static int open_current(struct nodelog *s)
{
	s->fd = openat(s->dirfd, NODELOG_FILE,
		       O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->fd < 0)
		return -errno;
	s->file_size = s->durable_size = 0;
	s->file_first_seq = s->seq + 1;	/* its open checkpoint, next */
	s->durable_seq = s->seq;
	memcpy(s->durable_head, s->head, sizeof(s->head));
	return 0;
}

/* node.log becomes node.log.<file_index> (known to bound_disk) and a new one opens. */
static int rotate(struct nodelog *s, const char *previous)
{
	char name[64];
	int r;

	if (s->nfiles == MAX_ROTATED) {
		/* more files than tracked: the oldest one is forgotten, not removed */
		memmove(s->files, s->files + 1, (s->nfiles - 1) * sizeof(*s->files));
		s->nfiles--;
	}
	if (renameat(s->dirfd, NODELOG_FILE, s->dirfd, file_name(s->file_index, name, sizeof(name))) < 0) {
		r = -errno;
		/* node.log grows on rather than the log stopping */
		if (s->fd < 0)
			s->fd = openat(s->dirfd, NODELOG_FILE, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
		return r;
	}
	s->files[s->nfiles++] = (struct rotated){
		.index = s->file_index,
		/* a file a daemon before us wrote is read for it */
		.first_seq = s->file_first_seq ? s->file_first_seq : first_seq_of(s->dirfd, name),
		.bytes = s->file_size,
	};
	fsync(s->dirfd);
	s->file_index++;
	r = open_current(s);
	r = r ?: checkpoint(s, "open", previous);
	if (!r)
		bound_disk(s);
	return r;
}

static int rotate_now(struct nodelog *s)
{
	int r = checkpoint(s, "rotate", NULL);

	if (r)
		return r;
	close(s->fd);
	s->fd = -1;
	return rotate(s, "closed");
}

/* After each line: what the counts and the file's size call for. */
static int after_line(struct nodelog *s)
{
	int r = 0;

	if (s->buf.len >= BUFFER_BYTES)
		r = flush_buffer(s);
	if (s->since_cp >= s->cp_records)
		r = checkpoint(s, "interval", NULL) ?: r;
	if (s->file_size >= s->file_bytes)
		r = rotate_now(s) ?: r;
	return r;
}

static int nodelog_write(struct sink *sink, const struct record *rec)
{
	struct nodelog *s = (struct nodelog *)sink;
	int r;

	pthread_mutex_lock(&s->lock);
	if (s->fd < 0) {
		s->lost++;
		pthread_mutex_unlock(&s->lock);
		return -EBADF;
	}
	say_lost(s);
	s->line.len = 0;
	r = sink_jsonl_encode(rec, &s->line);
	if (r == 0)
		r = append(s, s->line.data, s->line.len, true);
	if (r) {
		s->lost++;
		s->lost_unsaid++;
		set_error(s, r);
	} else {
		r = after_line(s);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int nodelog_flush(struct sink *sink)
{
	struct nodelog *s = (struct nodelog *)sink;
	int r;

	pthread_mutex_lock(&s->lock);
	if (s->fd < 0) {
		pthread_mutex_unlock(&s->lock);
		return s->error ?: -EBADF;
	}
	say_lost(s);
	if (s->since_cp && now_ms() - s->last_cp_ms >= s->cp_ms)
		r = checkpoint(s, "interval", NULL);
	else
		r = flush_buffer(s);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static void nodelog_free(struct nodelog *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	nodelog_mac_free(s->mac);
	explicit_bzero(&s->key, sizeof(s->key));
	sb_free(&s->buf);
	sb_free(&s->line);
	sb_free(&s->cp);
	pthread_mutex_destroy(&s->lock);
	free(s->files);
	free(s->export);
	free(s->dir);
	free(s->host);
	free(s->boot_id);
	free(s);
}

static int nodelog_close(struct sink *sink)
{
	struct nodelog *s = (struct nodelog *)sink;
	int r = 0;

	if (s->fd >= 0) {
		say_lost(s);
		r = checkpoint(s, "close", NULL);
		if (fsync(s->fd) < 0 && !r)
			r = -errno;
	}
	r = s->error ?: r;
	nodelog_free(s);
	return r;
}

uint64_t sink_nodelog_lost(const struct sink *sink)
{
	struct nodelog *s = (struct nodelog *)sink;
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->lost;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static int cmp_rotated(const void *a, const void *b)
{
	const struct rotated *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/* The rotated files node.log.<N> in the directory, oldest first. */
static int scan_rotated(struct nodelog *s)
{
	int fd = dup(s->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((e = readdir(d))) {
		const char *p = e->d_name;
		char *end;
		unsigned long long index;
		struct stat st;

		if (strncmp(p, NODELOG_FILE ".", sizeof(NODELOG_FILE)))
			continue;
		p += sizeof(NODELOG_FILE);
		if (*p < '1' || *p > '9')
			continue;
		errno = 0;
		index = strtoull(p, &end, 10);
		if (*end || errno || fstatat(s->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (s->nfiles == MAX_ROTATED)
			break;
		s->files[s->nfiles++] = (struct rotated){
			.index = index,
			.first_seq = first_seq_of(s->dirfd, e->d_name),
			.bytes = (uint64_t)st.st_size,
		};
	}
	closedir(d);
	qsort(s->files, s->nfiles, sizeof(*s->files), cmp_rotated);
	return 0;
}

/*
 * The last whole line of the file `name`: its log_seq and mac become the
 * chain's.  A partial line after it (a crash mid-write) is cut off, *cut
 * bytes of it.  *closed: the line is a close checkpoint.  Returns 1 when
 * the file has a line, 0 when it has none, or a negative errno with `why`.
 */
static int continue_from(struct nodelog *s, const char *name, uint64_t *cut, bool *closed,
			 char *why, size_t len)
{
	int fd = openat(s->dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *tail = NULL;
	off_t from, end_of_line;
	size_t n, body, start;
	ssize_t got;
	int r = 0;

	*cut = 0;
	*closed = false;
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, len, "%s/%s: %s", s->dir, name, strerror(errno));
		goto out;
	}
	if (st.st_size == 0)
		goto out;
	/* the last 1 MiB holds the last line: lines are far shorter */
	from = st.st_size > (1 << 20) ? st.st_size - (1 << 20) : 0;
	n = (size_t)(st.st_size - from);
	tail = malloc(n);
	if (!tail) {
		r = -ENOMEM;
		goto out;
	}
	got = pread(fd, tail, n, from);
	if (got != (ssize_t)n) {
		r = got < 0 ? -errno : -EIO;
		snprintf(why, len, "%s/%s: cannot read its end", s->dir, name);
		goto out;
	}
	end_of_line = (off_t)n;
	while (end_of_line > 0 && tail[end_of_line - 1] != '\n')
		end_of_line--;
	if ((size_t)end_of_line != n) {
		*cut = n - (size_t)end_of_line;
		if (ftruncate(fd, from + end_of_line) < 0) {
			r = -errno;
			snprintf(why, len, "%s/%s: cannot cut its partial last line: %s", s->dir, name,
				 strerror(errno));
			goto out;
		}
	}
	if (end_of_line == 0) {
		if (from == 0)
			goto out;	/* nothing but a partial line: no line */
		r = -EINVAL;
	} else {
		start = (size_t)end_of_line - 1;
		while (start > 0 && tail[start - 1] != '\n')
			start--;
		if (start == 0 && from > 0)
			r = -EINVAL;
		else
			r = nodelog_line_parse(tail + start, (size_t)end_of_line - 1 - start, &s->seq,
					       s->head, &body);
		if (!r) {
			static const char close_cp[] = "\"checkpoint\":{\"reason\":\"close\"";

			*closed = memmem(tail + start, body, close_cp, sizeof(close_cp) - 1) != NULL;
			r = 1;
		}
	}
	if (r < 0)
		snprintf(why, len,
			 "%s/%s: its last line is not a node log line: the log was edited; "
			 "move the directory's node.log* aside (tether audit verify tells what "
			 "changed) and start again",
			 s->dir, name);
out:
	free(tail);
	if (fd >= 0)
		close(fd);
	return r;
}

static int setup(struct nodelog *s, const struct nodelog_options *o, char *why, size_t len)
{
	char name[64], pub_text[256], path[4096];
	const char *previous = "none";
	uint64_t cut = 0;
	bool closed = false, have_current;
	struct stat st;
	int r, fd;

	if (mkdir(o->dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(why, len, "node log directory %s: %s", o->dir, strerror(errno));
		return r;
	}
	s->dirfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (s->dirfd < 0 || fstat(s->dirfd, &st) < 0) {
		r = -errno;
		snprintf(why, len, "node log directory %s: %s", o->dir, strerror(errno));
		return r;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, len,
			 "node log directory %s: owner uid %u, mode %04o: it must be ours and "
			 "writable by nobody else (chmod 700 %s)",
			 o->dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), o->dir);
		return -EPERM;
	}
	r = nodelog_key_load(o->key_path, false, true, &s->key, why, len);
	if (r == -ENOENT) {
		r = nodelog_key_create(o->key_path);
		if (r) {
			snprintf(why, len, "node log key %s: cannot create it: %s", o->key_path,
				 strerror(-r));
			return r;
		}
		r = nodelog_key_load(o->key_path, false, true, &s->key, why, len);
	}
	if (r)
		return r;
	s->mac = nodelog_mac_new(s->key.hmac);
	if (!s->mac) {
		snprintf(why, len, "libcrypto: no HMAC-SHA-256");
		return -EIO;
	}
	/* the public key beside the log: written new each start, atomically */
	nodelog_key_text(&s->key, NULL, 0, pub_text, sizeof(pub_text));
	snprintf(path, sizeof(path), "%s.tmp", NODELOG_PUB_FILE);
	fd = openat(s->dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write_all(fd, pub_text, strlen(pub_text)) || fsync(fd) < 0 ||
	    renameat(s->dirfd, path, s->dirfd, NODELOG_PUB_FILE) < 0) {
		r = -errno ?: -EIO;
		snprintf(why, len, "%s/%s: cannot write it: %s", o->dir, NODELOG_PUB_FILE,
			 strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	close(fd);

	s->files = calloc(MAX_ROTATED, sizeof(*s->files));
	if (!s->files)
		return -ENOMEM;
	r = scan_rotated(s);
	if (r) {
		snprintf(why, len, "node log directory %s: %s", o->dir, strerror(-r));
		return r;
	}
	have_current = fstatat(s->dirfd, NODELOG_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (have_current && !S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s/%s: not a regular file", o->dir, NODELOG_FILE);
		return -EINVAL;
	}
	s->file_index = s->nfiles ? s->files[s->nfiles - 1].index + 1 : 1;
	r = 0;
	if (have_current)
		r = continue_from(s, NODELOG_FILE, &cut, &closed, why, len);
	if (r == 0 && s->nfiles) {
		uint64_t ignored;

		/* no line in node.log: the chain goes on from the newest rotated file */
		r = continue_from(s, file_name(s->files[s->nfiles - 1].index, name, sizeof(name)),
				  &ignored, &closed, why, len);
	}
	if (r < 0)
		return r;
	if (r > 0)
		previous = closed ? "closed" : "unclosed";
	if (have_current) {
		if (fstatat(s->dirfd, NODELOG_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size == 0) {
			unlinkat(s->dirfd, NODELOG_FILE, 0);
		} else {
			s->file_size = (uint64_t)st.st_size;
			s->fd = -1;
			r = rotate(s, previous);
			goto opened;
		}
	}
	r = open_current(s);
	r = r ?: checkpoint(s, "open", previous);
opened:
	if (r) {
		snprintf(why, len, "node log %s/%s: %s", o->dir, NODELOG_FILE, strerror(-r));
		return r;
	}
	if (cut) {
		char fields[128];

		snprintf(fields, sizeof(fields), "\"reason\":\"cut_by_crash\",\"bytes\":%llu",
			 (unsigned long long)cut);
		dropped(s, fields);
	}
	return 0;
}

int sink_nodelog_open(const struct nodelog_options *o, struct sink **out, char *why, size_t len)
{
	struct nodelog *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->dirfd = s->fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->ops = (struct sink_ops){
		.name = "node_log", .write = nodelog_write, .flush = nodelog_flush,
		.close = nodelog_close,
	};
	s->sink.ops = &s->ops;
	s->file_bytes = o->file_bytes ?: NODELOG_DEFAULT_FILE_BYTES;
	s->max_bytes = o->max_bytes ?: NODELOG_DEFAULT_MAX_BYTES;
	s->cp_records = o->checkpoint_records ?: NODELOG_DEFAULT_CHECKPOINT_RECORDS;
	s->cp_ms = o->checkpoint_ms ?: NODELOG_DEFAULT_CHECKPOINT_MS;
	s->dir = strdup(o->dir);
	s->host = strdup(o->host ? o->host : "");
	s->boot_id = strdup(o->boot_id ? o->boot_id : "");
	if (o->export_count) {
		s->export = calloc(o->export_count, sizeof(*s->export));
		if (s->export) {
			memcpy(s->export, o->export, o->export_count * sizeof(*s->export));
			s->export_count = o->export_count;
		}
	}
	if (!s->dir || !s->host || !s->boot_id || (o->export_count && !s->export)) {
		nodelog_free(s);
		return -ENOMEM;
	}
	r = setup(s, o, why, len);
	if (r) {
		nodelog_free(s);
		return r;
	}
	*out = &s->sink;
	return 0;
}
