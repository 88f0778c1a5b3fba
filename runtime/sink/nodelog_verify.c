// SPDX-License-Identifier: GPL-2.0
/*
 * tether audit verify: checks node log files (runtime/sink/nodelog.h) and
 * names every line that was edited, removed, reordered or cut off.
 *
 * Every line is indexed first (file, line, log_seq, mac, where its MAC'd
 * bytes end); then:
 *   - a line that does not end as a node log line does was edited (or
 *     inserted);
 *   - a log_seq no line has, between the first and the last, was removed
 *     (unless a node_log_dropped line of the disk bound says it went);
 *   - a line whose log_seq is below one before it was moved (reordered);
 *   - each line's MAC is checked against its predecessor by log_seq (so a
 *     moved line is "reordered", not also "edited"); the first line of
 *     the log (an open checkpoint) chains to its signed chain_head;
 *   - each checkpoint's signature, its covers_log_seq and chain_head;
 *   - the tail: the anchor (the last checkpoint exported off the node)
 *     must be in the log byte for byte, and nothing it covers missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <limits.h>

#include "runtime/base64.h"
#include "runtime/sink/nodelog.h"
#include "runtime/sink/nodelog_internal.h"

/* How the log's own lines begin their kind (nodelog.c's begin_own()). */
#define CP_MARK		"\"run_id\":\"\",\"kind\":\"checkpoint\",\"checkpoint\":{"
#define DROP_MARK	"\"run_id\":\"\",\"kind\":\"node_log_dropped\","

enum line_type { LINE_BAD, LINE_RECORD, LINE_CHECKPOINT, LINE_DROPPED };

struct line {
	unsigned int file;
	uint64_t lineno;
	const char *text;	/* no newline */
	size_t len, body;
	uint64_t seq;
	uint8_t mac[NODELOG_MAC_LEN];
	enum line_type type;
	bool cut;		/* no newline after it: the file ends inside it */
};

struct logfile {
	const char *path;
	char *map;
	size_t size;
	size_t first_line, nlines;	/* its lines in v->lines */
	uint64_t first_seq;		/* its first good line's; UINT64_MAX: none */
};

struct verify {
	const struct nodelog_verify_options *o;
	FILE *out, *err;
	struct nodelog_key key;
	struct nodelog_mac *mac;	/* NULL: no HMAC key, MACs not checked */
	bool have_pub;
	struct logfile *files;
	size_t nfiles;
	struct line *lines;
	size_t nlines, cap;
	struct line **by_seq;		/* good lines, log_seq order */
	size_t nseq;
	unsigned long errors, notes, lost_said;
	struct said *said;
	size_t nsaid;
	const struct said *first_error;
	/* log_seq ranges a node_log_dropped line says the disk bound removed */
	struct { uint64_t first, last; } *bound;
	size_t nbound;
};

static const char *file_of(const struct verify *v, const struct line *l)
{
	return v->files[l->file].path;
}

/* What verify says, kept until the end to be said in file and line order. */
struct said {
	unsigned int file;	/* UINT_MAX: about no line */
	uint64_t lineno;
	bool error;
	char *text;
	size_t order;
};

static void vsay(struct verify *v, const struct line *l, bool error, const char *fmt, va_list ap)
{
	struct said *n = realloc(v->said, (v->nsaid + 1) * sizeof(*n));

	if (!n || vasprintf(&n[v->nsaid].text, fmt, ap) < 0) {
		if (n)
			v->said = n;
		v->lost_said++;
		return;
	}
	v->said = n;
	n[v->nsaid].file = l ? l->file : UINT_MAX;
	n[v->nsaid].lineno = l ? l->lineno : 0;
	n[v->nsaid].error = error;
	n[v->nsaid].order = v->nsaid;
	v->nsaid++;
}

static void __attribute__((format(printf, 3, 4)))
problem(struct verify *v, const struct line *l, const char *fmt, ...)
{
	va_list ap;

	v->errors++;
	va_start(ap, fmt);
	vsay(v, l, true, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 3, 4)))
note(struct verify *v, const struct line *l, const char *fmt, ...)
{
	va_list ap;

	v->notes++;
	va_start(ap, fmt);
	vsay(v, l, false, fmt, ap);
	va_end(ap);
}

static int cmp_said(const void *a, const void *b)
{
	const struct said *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->lineno != y->lineno)
		return x->lineno < y->lineno ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Everything said, in the order of the files (as put in log order) and their lines. */
static void print_said(struct verify *v)
{
	const struct said *first = NULL;

	if (v->nsaid)
		qsort(v->said, v->nsaid, sizeof(*v->said), cmp_said);
	for (size_t i = 0; i < v->nsaid; i++) {
		const struct said *s = &v->said[i];

		if (s->file == UINT_MAX)
			fprintf(v->err, "%s: %s\n", s->error ? "error" : "note", s->text);
		else
			fprintf(v->err, "%s:%llu: %s: %s\n", v->files[s->file].path,
				(unsigned long long)s->lineno, s->error ? "error" : "note", s->text);
		if (s->error && !first && s->file != UINT_MAX)
			first = s;
	}
	if (v->lost_said)
		fprintf(v->err, "error: %lu more problems (out of memory to say them)\n",
			v->lost_said);
	v->first_error = first;
}

static int add_line(struct verify *v, unsigned int file, uint64_t lineno, const char *text,
		    size_t len, bool cut)
{
	struct line *l;

	if (v->nlines == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 4096;
		struct line *n = realloc(v->lines, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->lines = n;
		v->cap = cap;
	}
	l = &v->lines[v->nlines++];
	*l = (struct line){ .file = file, .lineno = lineno, .text = text, .len = len, .cut = cut };
	if (cut || nodelog_line_parse(text, len, &l->seq, l->mac, &l->body)) {
		l->type = LINE_BAD;
		return 0;
	}
	/* the log's own lines: their top-level "kind" comes right after the envelope */
	if (memmem(text, l->body, CP_MARK, sizeof(CP_MARK) - 1))
		l->type = LINE_CHECKPOINT;
	else if (memmem(text, l->body, DROP_MARK, sizeof(DROP_MARK) - 1))
		l->type = LINE_DROPPED;
	else
		l->type = LINE_RECORD;
	return 0;
}

static int load_file(struct verify *v, unsigned int i)
{
	struct logfile *f = &v->files[i];
	struct stat st;
	uint64_t lineno = 0;
	size_t pos = 0;
	int fd, r = 0;

	f->first_line = v->nlines;
	f->first_seq = UINT64_MAX;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		fprintf(v->err, "tether audit verify: %s: %s\n", f->path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(v->err, "tether audit verify: %s: not a regular file\n", f->path);
		r = -EINVAL;
		goto out;
	}
	f->size = (size_t)st.st_size;
	if (f->size) {
		f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			r = -errno;
			fprintf(v->err, "tether audit verify: %s: %s\n", f->path, strerror(errno));
			goto out;
		}
	}
	while (pos < f->size && !r) {
		const char *nl = memchr(f->map + pos, '\n', f->size - pos);
		size_t end = nl ? (size_t)(nl - f->map) : f->size;

		r = add_line(v, i, ++lineno, f->map + pos, end - pos, !nl);
		pos = end + 1;
	}
	f->nlines = v->nlines - f->first_line;
	for (size_t j = f->first_line; j < v->nlines; j++)
		if (v->lines[j].type != LINE_BAD) {
			f->first_seq = v->lines[j].seq;
			break;
		}
out:
	if (fd >= 0)
		close(fd);
	return r;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct line *x = *(const struct line *const *)a, *y = *(const struct line *const *)b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x < y ? -1 : x > y;
}

static bool bound_removed(const struct verify *v, uint64_t first, uint64_t last)
{
	for (size_t i = 0; i < v->nbound; i++)
		if (v->bound[i].first <= first && last <= v->bound[i].last)
			return true;
	return false;
}

static bool bound_ends_at(const struct verify *v, uint64_t last)
{
	for (size_t i = 0; i < v->nbound; i++)
		if (v->bound[i].last == last)
			return true;
	return false;
}

/* A checkpoint's fields, its signature checked; false when it is not one (said). */
struct cp {
	char reason[16], previous[16];	/* previous: "" when the checkpoint has none */
	uint64_t covers;
	uint8_t head[NODELOG_MAC_LEN];
	bool signed_ok;
};

static bool parse_checkpoint(struct verify *v, const struct line *l, struct cp *cp, bool quiet)
{
	json_error_t jerr;
	json_t *root = json_loadb(l->text, l->len, 0, &jerr), *c;
	const char *sig, *key_id, *head, *sigkey, *reason, *previous;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int ok;

	json_int_t covers = 0;

	memset(cp, 0, sizeof(*cp));
	c = root ? json_object_get(root, "checkpoint") : NULL;
	if (!c || json_unpack(c, "{s:s, s:I, s:s, s:s, s:s}", "reason", &reason,
			      "covers_log_seq", &covers, "chain_head", &head, "key_id", &key_id,
			      "signature", &sig) ||
	    nodelog_unhex(head, strlen(head), cp->head, NODELOG_MAC_LEN)) {
		if (!quiet)
			problem(v, l, "log_seq %llu: a checkpoint without its fields: edited",
				(unsigned long long)l->seq);
		json_decref(root);
		return false;
	}
	cp->covers = covers > 0 ? (uint64_t)covers : 0;
	snprintf(cp->reason, sizeof(cp->reason), "%s", reason);
	if (json_unpack(c, "{s:s}", "previous", &previous) == 0)
		snprintf(cp->previous, sizeof(cp->previous), "%s", previous);
	if (!v->have_pub) {
		cp->signed_ok = true;	/* nothing to check it with: said once, in the summary */
	} else if (strcmp(key_id, v->key.key_id)) {
		if (!quiet)
			problem(v, l,
				"log_seq %llu: checkpoint signed by key %s, not by this key (%s)",
				(unsigned long long)l->seq, key_id, v->key.key_id);
	} else {
		sigkey = memmem(l->text, l->body, NODELOG_SIG_KEY, sizeof(NODELOG_SIG_KEY) - 1);
		ok = sigkey && !base64_decode(sig, strlen(sig), (char **)&raw, &raw_len);
		ok = ok ? nodelog_sig_verify(&v->key, l->text, (size_t)(sigkey - l->text), raw,
					     raw_len)
			: 0;
		free(raw);
		if (ok == 1)
			cp->signed_ok = true;
		else if (!quiet)
			problem(v, l, "log_seq %llu: the checkpoint's signature does not verify: edited",
				(unsigned long long)l->seq);
	}
	json_decref(root);
	return true;
}

/* A node_log_dropped line of the disk bound: the log_seqs it says went. */
static void note_bound(struct verify *v, const struct line *l)
{
	json_t *root = json_loadb(l->text, l->len, 0, NULL), *d;
	json_int_t first = 0, last = 0;
	const char *reason = NULL;

	d = root ? json_object_get(root, "node_log_dropped") : NULL;
	if (d && !json_unpack(d, "{s:s}", "reason", &reason) && !strcmp(reason, "max_bytes") &&
	    !json_unpack(d, "{s:I, s:I}", "first_log_seq", &first, "last_log_seq", &last) &&
	    first > 0 && last >= first) {
		void *n = realloc(v->bound, (v->nbound + 1) * sizeof(*v->bound));

		if (n) {
			v->bound = n;
			v->bound[v->nbound].first = (uint64_t)first;
			v->bound[v->nbound].last = (uint64_t)last;
			v->nbound++;
		}
	}
	json_decref(root);
}

static int check(struct verify *v)
{
	uint64_t max_seen = 0;
	const struct line *max_line = NULL;
	struct cp cp;

	/* lines that are not node log lines; the order lines come in */
	for (size_t i = 0; i < v->nlines; i++) {
		struct line *l = &v->lines[i];

		if (l->type == LINE_BAD) {
			if (l->cut)
				problem(v, l, "the line is cut short (the file ends inside it): "
					      "the file was truncated");
			else
				problem(v, l, "not a node log line (no log_seq and mac at its end): "
					      "edited or inserted");
			continue;
		}
		if (l->type == LINE_DROPPED)
			note_bound(v, l);
		v->by_seq[v->nseq++] = l;
		if (max_line && l->seq <= max_seen)
			problem(v, l, "log_seq %llu comes after log_seq %llu (%s:%llu): %s",
				(unsigned long long)l->seq, (unsigned long long)max_seen,
				file_of(v, max_line), (unsigned long long)max_line->lineno,
				l->seq == max_seen ? "a record duplicated" : "records reordered");
		else
			max_seen = l->seq, max_line = l;
	}
	qsort(v->by_seq, v->nseq, sizeof(*v->by_seq), cmp_seq);

	for (size_t i = 0; i < v->nseq; i++) {
		const struct line *l = v->by_seq[i], *prev = i ? v->by_seq[i - 1] : NULL;
		const uint8_t *chain = NULL;
		uint8_t mac[NODELOG_MAC_LEN];
		bool is_cp = l->type == LINE_CHECKPOINT && parse_checkpoint(v, l, &cp, false);

		if (prev && prev->seq == l->seq)
			continue;	/* a duplicate: said above */
		if (prev && l->seq > prev->seq + 1) {
			if (bound_removed(v, prev->seq + 1, l->seq - 1))
				note(v, l, "log_seq %llu..%llu removed by the disk bound (max_bytes), as "
					   "a node_log_dropped line says",
				     (unsigned long long)prev->seq + 1, (unsigned long long)l->seq - 1);
			else
				problem(v, l, "log_seq %llu..%llu missing before this line: records removed",
					(unsigned long long)prev->seq + 1, (unsigned long long)l->seq - 1);
		}
		if (prev && prev->seq + 1 == l->seq)
			chain = prev->mac;
		if (is_cp) {
			if (cp.covers + 1 != l->seq)
				problem(v, l, "log_seq %llu: the checkpoint covers log_seq %llu, not the "
					      "line before it: edited",
					(unsigned long long)l->seq, (unsigned long long)cp.covers);
			else if (chain && memcmp(chain, cp.head, NODELOG_MAC_LEN))
				problem(v, l, "log_seq %llu: the checkpoint's chain_head is not the mac of "
					      "log_seq %llu: that line was edited",
					(unsigned long long)l->seq, (unsigned long long)prev->seq);
			/* a signed head stands for a line the log no longer has */
			if (!chain && cp.signed_ok && !strcmp(cp.reason, "open"))
				chain = cp.head;
		}
		if (!i && !(is_cp && !strcmp(cp.reason, "open")))
			problem(v, l, "log_seq %llu: the log's first line is not a file's open "
				      "checkpoint: lines before it removed",
				(unsigned long long)l->seq);
		if (!i && is_cp && cp.covers)
			note(v, l, "the log starts at log_seq %llu: %s", (unsigned long long)l->seq,
			     bound_ends_at(v, cp.covers)
				     ? "the lines before it were removed by the disk bound (max_bytes), "
				       "as a node_log_dropped line says"
				     : "the files before it were not given (or were removed by the "
				       "disk bound)");
		if (!v->mac || !chain)
			continue;
		if (nodelog_mac(v->mac, chain, l->text, l->body, mac))
			return -EIO;
		if (memcmp(mac, l->mac, NODELOG_MAC_LEN))
			problem(v, l, "log_seq %llu: its MAC does not match: the line was edited",
				(unsigned long long)l->seq);
	}
	return 0;
}

/*
 * The anchor: a checkpoint from off the node (the last line of the file
 * at `path`), which the log must hold byte for byte.
 */
static int check_anchor(struct verify *v, const char *path)
{
	const struct line *last = v->nseq ? v->by_seq[v->nseq - 1] : NULL;
	struct line a = { .file = (unsigned int)v->nfiles };
	char *text = NULL;
	size_t len = 0, start;
	struct cp cp;
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f || getdelim(&text, &len, '\0', f) < 0) {
		r = f && !ferror(f) ? -EINVAL : -errno;
		fprintf(v->err, "tether audit verify: %s: %s\n", path,
			r == -EINVAL ? "empty" : strerror(-r));
		goto out;
	}
	v->files[v->nfiles].path = path;
	len = strlen(text);
	while (len && text[len - 1] == '\n')
		len--;
	start = len;
	while (start && text[start - 1] != '\n')
		start--;
	a.text = text + start;
	a.len = len - start;
	a.lineno = 1;
	for (size_t i = 0; i < start; i++)
		a.lineno += text[i] == '\n';
	if (nodelog_line_parse(a.text, a.len, &a.seq, a.mac, &a.body) ||
	    !memmem(a.text, a.body, CP_MARK, sizeof(CP_MARK) - 1) ||
	    !parse_checkpoint(v, &a, &cp, true) || !cp.signed_ok) {
		fprintf(v->err,
			"tether audit verify: %s: its last line is not a checkpoint signed by this "
			"key\n", path);
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < v->nseq; i++) {
		const struct line *l = v->by_seq[i];

		if (l->seq != a.seq)
			continue;
		if (l->len != a.len || memcmp(l->text, a.text, a.len))
			problem(v, l, "log_seq %llu differs from the anchor (%s): edited",
				(unsigned long long)l->seq, path);
		goto out;
	}
	if (last && a.seq > last->seq) {
		problem(v, last,
			"log_seq %llu..%llu cut off the end of the log after this line (the anchor, "
			"%s, is log_seq %llu)",
			(unsigned long long)last->seq + 1, (unsigned long long)a.seq, path,
			(unsigned long long)a.seq);
	} else if (!last) {
		fprintf(v->err, "tether audit verify: no log line to check against the anchor\n");
		v->errors++;
	}
	/* else: inside the log but missing, a removal check() named */
out:
	if (f)
		fclose(f);
	free(text);
	return r;
}

static void release(struct verify *v)
{
	for (size_t i = 0; i < v->nfiles; i++)
		if (v->files[i].map)
			munmap(v->files[i].map, v->files[i].size);
	free(v->files);
	free(v->lines);
	free(v->by_seq);
	free(v->bound);
	for (size_t i = 0; i < v->nsaid; i++)
		free(v->said[i].text);
	free(v->said);
	nodelog_mac_free(v->mac);
	explicit_bzero(&v->key, sizeof(v->key));
}

static int cmp_first_seq(const void *a, const void *b)
{
	const struct logfile *x = a, *y = b;

	return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

int nodelog_verify(const struct nodelog_verify_options *o, const char *const *paths, size_t count,
		   FILE *out, FILE *err)
{
	struct verify v = { .o = o, .out = out, .err = err };
	size_t nlog = count + (o->anchor_path ? 1 : 0);
	char why[512];
	int r = 0;

	if (o->public_key_path)
		r = nodelog_key_load(o->public_key_path, true, false, &v.key, why, sizeof(why));
	else
		r = nodelog_key_load(o->key_path ? o->key_path : NODELOG_DEFAULT_KEY_PATH, false,
				     false, &v.key, why, sizeof(why));
	if (r) {
		fprintf(err, "tether audit verify: %s\n", why);
		return r;
	}
	v.have_pub = true;
	if (v.key.has_hmac) {
		v.mac = nodelog_mac_new(v.key.hmac);
		if (!v.mac) {
			fprintf(err, "tether audit verify: libcrypto has no HMAC-SHA-256\n");
			release(&v);
			return -EIO;
		}
	}
	v.files = calloc(nlog, sizeof(*v.files));
	if (!v.files) {
		release(&v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++)
		v.files[i].path = paths[i];
	v.nfiles = count;
	for (unsigned int i = 0; i < count && !r; i++)
		r = load_file(&v, i);
	if (r) {
		release(&v);
		return r;
	}
	/* files in the order of their lines; then the anchor's, last and apart */
	qsort(v.files, count, sizeof(*v.files), cmp_first_seq);
	for (size_t i = 0; i < count; i++)
		for (size_t j = v.files[i].first_line; j < v.files[i].first_line + v.files[i].nlines;
		     j++)
			v.lines[j].file = (unsigned int)i;
	/* the lines in file order: rebuild the index so lines follow their files' order */
	{
		struct line *sorted = malloc((v.nlines ? v.nlines : 1) * sizeof(*sorted));
		size_t n = 0;

		if (!sorted) {
			release(&v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < count; i++) {
			if (v.files[i].nlines)
				memcpy(sorted + n, v.lines + v.files[i].first_line,
				       v.files[i].nlines * sizeof(*sorted));
			v.files[i].first_line = n;
			n += v.files[i].nlines;
		}
		free(v.lines);
		v.lines = sorted;
		v.cap = v.nlines;
	}
	v.by_seq = calloc(v.nlines ? v.nlines : 1, sizeof(*v.by_seq));
	if (!v.by_seq) {
		release(&v);
		return -ENOMEM;
	}
	r = check(&v);
	if (!r && o->anchor_path) {
		r = check_anchor(&v, o->anchor_path);
	} else if (!r && v.nseq) {
		const struct line *last = v.by_seq[v.nseq - 1];
		struct cp cp;

		if (last->type != LINE_CHECKPOINT || !parse_checkpoint(&v, last, &cp, true) ||
		    strcmp(cp.reason, "close"))
			note(&v, last,
			     "the log does not end with a close checkpoint (log_seq %llu is its last "
			     "line): the daemon is running, stopped without closing it, or its tail "
			     "was cut; --anchor with the last exported checkpoint tells which",
			     (unsigned long long)last->seq);
	}
	if (r) {
		release(&v);
		return r;
	}
	if (!v.mac)
		note(&v, NULL, "no HMAC key (--public-key): checkpoints' signatures checked, the "
			       "lines' MACs not");
	print_said(&v);
	if (!o->quiet) {
		if (v.errors && v.first_error)
			fprintf(out, "%lu problem%s in %zu line%s; the first at %s:%llu\n", v.errors,
				v.errors == 1 ? "" : "s", v.nlines, v.nlines == 1 ? "" : "s",
				v.files[v.first_error->file].path,
				(unsigned long long)v.first_error->lineno);
		else if (v.errors)
			fprintf(out, "%lu problem%s\n", v.errors, v.errors == 1 ? "" : "s");
		else if (v.nseq)
			fprintf(out, "verified: %zu lines, log_seq %llu..%llu, in %zu file%s\n", v.nlines,
				(unsigned long long)v.by_seq[0]->seq,
				(unsigned long long)v.by_seq[v.nseq - 1]->seq, count,
				count == 1 ? "" : "s");
		else
			fprintf(out, "verified: no lines\n");
	}
	r = v.errors ? 1 : 0;
	release(&v);
	return r;
}
