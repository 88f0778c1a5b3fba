// SPDX-License-Identifier: GPL-2.0
/*
 * RFC 5424 syslog sinks (syslog.h) over TCP, TLS and unix datagrams, each
 * behind a spool (spool.h) drained by a sender thread of the sink.
 *
 * Delivery: TCP has no application acknowledgement.  The sender counts a
 * batch of messages as delivered only once the peer's kernel acknowledged
 * every byte (SIOCOUTQ reaches 0) and the connection is still up; only
 * then does the spool's acknowledged id move (and become durable).  What a
 * connection cut between the peer's kernel taking the bytes and the
 * collector writing them loses is the one window left: it is the
 * collector's, and docs/audit.md says so.  A connection cut before the
 * bytes were acknowledged resends the batch on the next connection, so a
 * collector may see a message twice (same id) after such a cut, never none.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "bpf/abi/event.h"
#include "runtime/dnsproxy.h"
#include "runtime/json.h"
#include "runtime/record.h"
#include "runtime/sink/ocsf.h"
#include "runtime/sink/sink.h"
#include "runtime/sink/spool.h"
#include "runtime/sink/syslog.h"

#define BATCH_MAX		64
/* under a flood, the acknowledged id is synced this often, not per batch */
#define SYNC_MS			200
#define IO_TIMEOUT_MS		2000
#define BACKOFF_MIN_MS		100
#define BACKOFF_MAX_MS		30000
#define DRAIN_TIMEOUT_MS	10000

/* ---- the message ------------------------------------------------------- */

unsigned int syslog_severity(const struct record *rec)
{
	uint32_t decision = TETHER_DECISION_ALLOW;

	switch (rec->kind) {
	case RECORD_KERNEL_FS:
		decision = rec->fs.decision;
		break;
	case RECORD_KERNEL_NET:
		decision = rec->net.ev ? rec->net.ev->decision : TETHER_DECISION_ALLOW;
		break;
	case RECORD_DNS:
		decision = rec->dns && rec->dns->kind != DNS_EV_ALLOWED ? TETHER_DECISION_DENY
								       : TETHER_DECISION_ALLOW;
		break;
	case RECORD_RUN:
	case RECORD_NODE_LINE:
		break;
	}
	if (decision == TETHER_DECISION_DENY)
		return 4;
	return decision == TETHER_DECISION_WOULD_DENY ? 5 : 6;
}

int syslog_sd_escape(struct strbuf *out, const char *s, size_t len)
{
	int r = 0;

	for (size_t i = 0; i < len && !r; i++) {
		char c = s[i];

		if (c == '"' || c == '\\' || c == ']')
			r = sb_printf(out, "\\%c", c);
		else
			r = sb_printf(out, "%c", c);
	}
	return r;
}

int syslog_frame_octet(struct strbuf *out, const char *msg, size_t len)
{
	int r = sb_printf(out, "%zu ", len);
	size_t at = out->len;

	if (r)
		return r;
	/* room first: msg may hold NULs only in theory, but %s would stop there */
	r = sb_printf(out, "%*s", (int)len, "");
	if (r)
		return r;
	memcpy(out->data + at, msg, len);
	return 0;
}

/* A header field: PRINTUSASCII (33..126) only, at most max bytes; "-" if empty. */
static int header_field(struct strbuf *out, const char *s, size_t max)
{
	size_t n = 0;
	int r = 0;

	for (; s && s[n] && n < max && !r; n++)
		r = sb_printf(out, "%c", s[n] > 32 && s[n] < 127 ? s[n] : '_');
	return r ?: (n ? 0 : sb_printf(out, "-"));
}

static const char *record_msgid(const struct record *rec)
{
	switch (rec->kind) {
	case RECORD_KERNEL_FS:
		return rec->fs.kind ? rec->fs.kind : "fs";
	case RECORD_KERNEL_NET:
		return "net";
	case RECORD_RUN:
		return "run";
	case RECORD_DNS:
		return "dns";
	case RECORD_NODE_LINE:
		return rec->line_kind ? rec->line_kind : "node_log";
	}
	return "-";
}

/* <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID, then the SD's opening. */
static int format_head(struct strbuf *out, unsigned int pri, uint64_t real_ns,
		       const char *host, unsigned int procid, const char *msgid, uint64_t id)
{
	char when[64];
	int r;

	record_format_time(real_ns, when, sizeof(when));
	r = sb_printf(out, "<%u>1 %s ", pri, when);
	r = r ?: header_field(out, host, 255);
	r = r ?: sb_printf(out, " tether ");
	r = r ?: (procid ? sb_printf(out, "%u", procid) : sb_printf(out, "-"));
	r = r ?: sb_printf(out, " ");
	r = r ?: header_field(out, msgid, 32);
	return r ?: sb_printf(out, " [" SYSLOG_SD_ID " id=\"%llu\"", (unsigned long long)id);
}

static int append_bytes(struct strbuf *out, const char *p, size_t n)
{
	size_t at = out->len;
	int r = sb_printf(out, "%*s", (int)n, "");

	if (!r)
		memcpy(out->data + at, p, n);
	return r;
}

/*
 * head (without its "]"), then MSG `body`, within max bytes: cut at a UTF-8
 * boundary and marked truncated="N" when it does not fit.
 */
static int finish_message(struct strbuf *out, size_t start, const struct strbuf *body,
			  size_t max, bool *truncated)
{
	size_t room;
	int r;

	*truncated = false;
	if (out->len - start + 2 + body->len <= max)
		return sb_printf(out, "] ") ?: append_bytes(out, body->data, body->len);
	r = sb_printf(out, " truncated=\"%zu\"] ", body->len);
	if (r)
		return r;
	room = out->len - start < max ? max - (out->len - start) : 0;
	if (room > body->len)
		room = body->len;
	/* never end inside a multi-byte sequence: back off its continuation bytes */
	while (room && room < body->len && ((unsigned char)body->data[room] & 0xc0) == 0x80)
		room--;
	*truncated = true;
	return append_bytes(out, body->data, room);
}

int syslog_encode_body(enum syslog_format format, const struct record *rec, struct strbuf *out)
{
	if (format == SYSLOG_FORMAT_OCSF && rec->kind != RECORD_NODE_LINE)
		return ocsf_encode(rec, out);
	return sink_jsonl_encode(rec, out);
}

int syslog_format_record(const struct syslog_header *hdr, const struct record *rec,
			 uint64_t id, size_t max, struct strbuf *out, bool *truncated)
{
	const char *host = rec->ctx && rec->ctx->host ? rec->ctx->host : hdr->hostname;
	unsigned int pri = hdr->facility * 8 + syslog_severity(rec);
	struct strbuf body = { 0 };
	size_t start = out->len;
	int r;

	if (max < 512)
		return -EINVAL;
	r = syslog_encode_body(hdr->format, rec, &body);
	if (r < 0)
		goto out;
	r = format_head(out, pri, record_real_ns(rec), host, hdr->procid, record_msgid(rec), id);
	if (!r && rec->run_id) {
		r = sb_printf(out, " run_id=\"");
		r = r ?: syslog_sd_escape(out, rec->run_id, strnlen(rec->run_id, 256));
		r = r ?: sb_printf(out, "\"");
	}
	if (!r && rec->seq)
		r = sb_printf(out, " seq=\"%llu\"", (unsigned long long)rec->seq);
	r = r ?: finish_message(out, start, &body, max, truncated);
	r = r ? -ENOMEM : 0;
out:
	sb_free(&body);
	return r;
}

/* ---- the sink ---------------------------------------------------------- */

struct syslog_sink {
	struct sink sink;
	char *name;
	enum syslog_transport transport;
	struct sockaddr_storage addr;	/* TCP, TLS, UNIX */
	socklen_t addr_len;
	char *server_name;		/* TLS */
	bool server_name_is_ip;
	SSL_CTX *tls;
	struct syslog_header hdr;
	char hostname[256];
	unsigned int close_ms;
	bool quiet;
	struct spool *spool;

	pthread_t sender;
	bool sender_started;
	pthread_mutex_t lock;		/* guards the fields below and wakes the sender's sleeps */
	pthread_cond_t wake;
	bool closing;
	struct timespec deadline;	/* CLOCK_MONOTONIC: when closing stops sending */
	char last_error[256];

	_Atomic uint64_t written, truncated, sent, connects;

	/* the sender's own */
	int fd;
	SSL *ssl;
	bool was_up;			/* for messages on transitions only */
};

static void sink_say(struct syslog_sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sink_say(struct syslog_sink *s, const char *fmt, ...)
{
	va_list ap;

	if (s->quiet)
		return;
	fprintf(stderr, "tether: syslog sink %s: ", s->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void set_error(struct syslog_sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct syslog_sink *s, const char *fmt, ...)
{
	char text[sizeof(s->last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->lock);
	memcpy(s->last_error, text, sizeof(text));
	pthread_mutex_unlock(&s->lock);
	if (s->was_up)
		sink_say(s, "%s; records are spooled and sent when it is back", text);
	s->was_up = false;
}

struct format_call {
	struct syslog_sink *sink;
	const struct record *rec;
	bool truncated;
};

static int format_spooled(void *ctx, uint64_t id, struct strbuf *out)
{
	struct format_call *call = ctx;

	if (call->sink->transport == SYSLOG_JSONL_UNIX)
		return syslog_encode_body(call->sink->hdr.format, call->rec, out) ?:
		       sb_printf(out, "\n");

	return syslog_format_record(&call->sink->hdr, call->rec, id, SYSLOG_MSG_MAX, out,
				    &call->truncated);
}

/* The audit_loss message: what the spool dropped, as its own record. */
static int format_loss(void *ctx, uint64_t id, const struct spool_loss *loss, struct strbuf *out)
{
	struct syslog_sink *s = ctx;
	struct strbuf body = { 0 };
	size_t start = out->len;
	bool truncated;
	char when[64];
	int r;

	record_format_time(0, when, sizeof(when));
	/* the id in the body too: the JSON Lines form has no SD to carry it */
	r = sb_printf(&body, "{\"time\":\"%s\",\"kind\":\"audit_loss\",\"id\":%llu,\"host\":",
		      when, (unsigned long long)id);
	r |= sb_json_string(&body, s->hostname, sizeof(s->hostname));
	r |= sb_printf(&body, ",\"sink\":");
	r |= sb_json_string(&body, s->name, 256);
	r |= sb_printf(&body, ",\"lost\":%llu,\"first_id\":%llu,\"last_id\":%llu,"
			      "\"first_seq\":%llu,\"last_seq\":%llu}",
		       (unsigned long long)loss->count, (unsigned long long)loss->first_id,
		       (unsigned long long)loss->last_id, (unsigned long long)loss->first_tag,
		       (unsigned long long)loss->last_tag);
	if (s->transport == SYSLOG_JSONL_UNIX) {
		r |= append_bytes(out, body.data, body.len) | sb_printf(out, "\n");
		sb_free(&body);
		return r ? -ENOMEM : 0;
	}
	r |= format_head(out, s->hdr.facility * 8 + 4, 0, s->hostname, s->hdr.procid,
			 "audit_loss", id);
	r |= sb_printf(out, " lost=\"%llu\"", (unsigned long long)loss->count);
	if (!r)
		r = finish_message(out, start, &body, SYSLOG_MSG_MAX, &truncated);
	sb_free(&body);
	return r ? -ENOMEM : 0;
}

static int syslog_write(struct sink *sink, const struct record *rec)
{
	struct syslog_sink *s = (struct syslog_sink *)sink;
	struct format_call call = { s, rec, false };
	int r = spool_append(s->spool, rec->seq, format_spooled, &call, NULL);

	if (r == 0) {
		s->written++;
		if (call.truncated)
			s->truncated++;
	}
	/*
	 * A record the cap dropped is counted and reported by an audit_loss
	 * record: not an error of the run's stream, which is not lost but
	 * accounted for.  Anything else is.
	 */
	return r == -ENOSPC ? 0 : r;
}

static int syslog_flush(struct sink *sink)
{
	return 0;	/* nothing is buffered in memory: the spool has it */
}

void sink_syslog_stats(struct sink *sink, struct syslog_stats *st)
{
	struct syslog_sink *s = (struct syslog_sink *)sink;
	struct spool_stats sp;

	spool_stats(s->spool, &sp);
	*st = (struct syslog_stats){
		.written = s->written,
		.truncated = s->truncated,
		.dropped = sp.dropped,
		.loss_records = sp.loss_messages,
		.unreported = sp.unreported.count,
		.sent = s->sent,
		.connects = s->connects,
		.pending = sp.pending,
		.pending_bytes = sp.pending_bytes,
	};
	pthread_mutex_lock(&s->lock);
	memcpy(st->last_error, s->last_error, sizeof(st->last_error));
	pthread_mutex_unlock(&s->lock);
}

/* ---- the sender -------------------------------------------------------- */

static bool closing_expired(struct syslog_sink *s, bool *closing)
{
	struct timespec now;
	bool expired;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&s->lock);
	*closing = s->closing;
	expired = s->closing && (now.tv_sec > s->deadline.tv_sec ||
				 (now.tv_sec == s->deadline.tv_sec &&
				  now.tv_nsec >= s->deadline.tv_nsec));
	pthread_mutex_unlock(&s->lock);
	return expired;
}

/* Sleeps ms, or less when close() wakes the sender. */
static void sender_sleep(struct syslog_sink *s, unsigned int ms)
{
	struct timespec until;
	bool closing;

	/* closing: short naps until the deadline, which the sender's loop checks */
	closing_expired(s, &closing);
	if (closing && ms > 50)
		ms = 50;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&s->lock);
	while (s->closing == closing)
		if (pthread_cond_timedwait(&s->wake, &s->lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&s->lock);
}

static void disconnect(struct syslog_sink *s)
{
	if (s->ssl) {
		SSL_free(s->ssl);
		s->ssl = NULL;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static const char *tls_error(char *buf, size_t size)
{
	unsigned long e = ERR_get_error();

	if (!e)
		return "no detail from OpenSSL";
	ERR_error_string_n(e, buf, size);
	ERR_clear_error();
	return buf;
}

/* connect() with a timeout, then blocking I/O bounded by IO_TIMEOUT_MS. */
static int connect_socket(struct syslog_sink *s)
{
	int type = s->transport == SYSLOG_UNIX ? SOCK_DGRAM : SOCK_STREAM;
	bool unix_stream = s->transport == SYSLOG_JSONL_UNIX;
	struct timeval tv = { IO_TIMEOUT_MS / 1000, (IO_TIMEOUT_MS % 1000) * 1000 };
	struct pollfd pfd;
	int fd, err = 0, one = 1;
	socklen_t len = sizeof(err);

	fd = socket(s->addr.ss_family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&s->addr, s->addr_len) < 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			goto fail;
		}
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (poll(&pfd, 1, IO_TIMEOUT_MS) != 1) {
			err = ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err)
			goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    (type == SOCK_STREAM && !unix_stream &&
	     setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) < 0)) {
		err = errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -err;
}

static int connect_tls(struct syslog_sink *s)
{
	char why[256];
	long verify;

	s->ssl = SSL_new(s->tls);
	if (!s->ssl)
		return -ENOMEM;
	SSL_set_fd(s->ssl, s->fd);
	if (s->server_name_is_ip) {
		if (!X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->ssl), s->server_name))
			return -EINVAL;
	} else if (!SSL_set1_host(s->ssl, s->server_name) ||
		   !SSL_set_tlsext_host_name(s->ssl, s->server_name)) {
		return -EINVAL;
	}
	if (SSL_connect(s->ssl) != 1) {
		verify = SSL_get_verify_result(s->ssl);
		set_error(s, "TLS handshake with %s failed: %s", s->server_name,
			  verify != X509_V_OK ? X509_verify_cert_error_string(verify)
					      : tls_error(why, sizeof(why)));
		return -EPROTO;
	}
	return 0;
}

static int sender_connect(struct syslog_sink *s)
{
	int r = connect_socket(s);

	if (r < 0) {
		set_error(s, "cannot connect to the collector: %s", strerror(-r));
		return r;
	}
	s->fd = r;
	if (s->transport == SYSLOG_TLS) {
		r = connect_tls(s);
		if (r < 0) {
			if (r != -EPROTO)
				set_error(s, "cannot set up TLS: %s", strerror(-r));
			disconnect(s);
			return r;
		}
	}
	s->connects++;
	if (!s->was_up && s->connects > 1)
		sink_say(s, "connected to the collector again; sending what was spooled");
	s->was_up = true;
	return 0;
}

/*
 * Whether the stream is still up: a collector never sends us data, so the
 * peer's FIN or RST (POLLRDHUP, POLLHUP, POLLERR) is the only news.
 */
static bool stream_up(struct syslog_sink *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLRDHUP };

	if (s->transport == SYSLOG_UNIX)
		return true;
	return poll(&pfd, 1, 0) == 0 || !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void consume_sigpipe(void)
{
	static const struct timespec zero;
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	while (sigtimedwait(&pipe, NULL, &zero) > 0)
		;
}

static int send_frame(struct syslog_sink *s, struct strbuf *frame)
{
	size_t off = 0;

	if (s->transport == SYSLOG_TLS) {
		/* without partial writes (OpenSSL's default) SSL_write is all or an error */
		int n = SSL_write(s->ssl, frame->data, (int)frame->len);

		if (n <= 0) {
			char why[256];

			consume_sigpipe();
			set_error(s, "TLS write to the collector failed: %s",
				  tls_error(why, sizeof(why)));
			return -EIO;
		}
		return 0;
	}
	if (s->transport == SYSLOG_UNIX) {
		/* one datagram per message: sent whole or not at all */
		if (send(s->fd, frame->data, frame->len, MSG_NOSIGNAL) < 0) {
			int err = errno;

			set_error(s, "send to the socket failed: %s", strerror(err));
			return -err;
		}
		return 0;
	}
	while (off < frame->len) {
		ssize_t n = send(s->fd, frame->data + off, frame->len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : EIO;

			set_error(s, "send to the collector failed: %s", strerror(err));
			return -err;
		}
		off += (size_t)n;
	}
	return 0;
}

/*
 * Whether what went on the stream reached the peer: the send queue empties
 * (the peer's kernel acknowledged every byte) while the connection stays
 * up.  A datagram socket's send() already put the message in the
 * receiver's queue.
 */
static bool delivered(struct syslog_sink *s)
{
	bool closing;

	/* the peer acknowledges within a round trip: look again soon, then less often */
	for (unsigned int waited_us = 0, step_us = 100; s->transport != SYSLOG_UNIX;
	     waited_us += step_us, step_us = step_us < 5000 ? step_us * 2 : 5000) {
		int queued = 0;

		if (!stream_up(s) || ioctl(s->fd, SIOCOUTQ, &queued) < 0) {
			set_error(s, "the collector closed the connection before it took %s",
				  "every message sent; they are sent again");
			return false;
		}
		if (queued == 0)
			break;
		if (closing_expired(s, &closing)) {
			/* not known to be delivered: stays spooled, sent again next time */
			return false;
		}
		if (waited_us >= DRAIN_TIMEOUT_MS * 1000u) {
			set_error(s, "the collector took no data for %d ms: reconnecting",
				  DRAIN_TIMEOUT_MS);
			return false;
		}
		usleep(step_us);
	}
	return true;
}

/* The batch went: acknowledged in the spool, durably. */
static void confirm(struct syslog_sink *s, const uint64_t *ids, size_t count)
{
	int r;

	for (size_t i = 0; i < count; i++)
		spool_ack(s->spool, ids[i]);
	s->sent += count;
	r = spool_commit(s->spool, SYNC_MS);
	if (r < 0)
		set_error(s, "cannot record what was sent in the spool: %s", strerror(-r));
}

static void *sender_main(void *arg)
{
	struct syslog_sink *s = arg;
	struct strbuf msg = { 0 }, frame = { 0 };
	uint64_t batch[BATCH_MAX];
	size_t batched = 0;
	unsigned int backoff = BACKOFF_MIN_MS;
	sigset_t pipe;
	bool closing;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	while (!closing_expired(s, &closing)) {
		uint64_t id;
		int r;

		if (s->fd < 0) {
			if (!spool_wait(s->spool, 0) && closing)
				break;	/* nothing to send: no connection needed */
			if (sender_connect(s) < 0) {
				sender_sleep(s, backoff);
				backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
				continue;
			}
			backoff = BACKOFF_MIN_MS;
		}
		r = batched < BATCH_MAX ? spool_next(s->spool, &msg, &id) : -EAGAIN;
		if (r == -EAGAIN) {
			if (batched) {
				if (delivered(s)) {
					confirm(s, batch, batched);
				} else {
					disconnect(s);
					spool_rewind(s->spool);
				}
				batched = 0;
				continue;
			}
			/* idle: what was acknowledged is made durable now, not at the next flood */
			r = spool_sync(s->spool);
			if (r < 0)
				set_error(s, "cannot record what was sent in the spool: %s",
					  strerror(-r));
			if (closing)
				break;
			spool_wait(s->spool, 500);
			continue;
		}
		if (r < 0) {
			set_error(s, "cannot read the spool: %s", strerror(-r));
			sender_sleep(s, BACKOFF_MAX_MS);
			continue;
		}
		frame.len = 0;
		if (s->transport == SYSLOG_UNIX || s->transport == SYSLOG_JSONL_UNIX)
			r = append_bytes(&frame, msg.data, msg.len);
		else
			r = syslog_frame_octet(&frame, msg.data, msg.len);
		if (r == 0 && stream_up(s))
			r = send_frame(s, &frame);
		else if (r == 0)
			r = -ECONNRESET;
		if (r < 0) {
			if (r == -ECONNRESET)
				set_error(s, "the collector closed the connection");
			disconnect(s);
			spool_rewind(s->spool);
			batched = 0;
			continue;
		}
		batch[batched++] = id;
	}
	disconnect(s);
	sb_free(&msg);
	sb_free(&frame);
	return NULL;
}

/* ---- open and close ---------------------------------------------------- */

static int syslog_close(struct sink *sink)
{
	struct syslog_sink *s = (struct syslog_sink *)sink;
	struct spool_stats st;
	int r = 0;

	if (s->sender_started) {
		pthread_mutex_lock(&s->lock);
		s->closing = true;
		clock_gettime(CLOCK_MONOTONIC, &s->deadline);
		s->deadline.tv_sec += s->close_ms / 1000;
		s->deadline.tv_nsec += (long)(s->close_ms % 1000) * 1000000;
		if (s->deadline.tv_nsec >= 1000000000) {
			s->deadline.tv_sec++;
			s->deadline.tv_nsec -= 1000000000;
		}
		pthread_cond_broadcast(&s->wake);
		pthread_mutex_unlock(&s->lock);
		spool_wake(s->spool);
		pthread_join(s->sender, NULL);
	}
	if (s->spool) {
		spool_stats(s->spool, &st);
		if (st.pending || st.unreported.count)
			sink_say(s, "%llu records (%llu bytes) remain spooled%s%s, and %llu dropped "
				    "records not yet reported; they are sent when the sink opens again",
				 (unsigned long long)st.pending, (unsigned long long)st.pending_bytes,
				 s->last_error[0] ? ": " : "", s->last_error,
				 (unsigned long long)st.unreported.count);
		r = spool_close(s->spool);
	}
	if (s->tls)
		SSL_CTX_free(s->tls);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s->server_name);
	free(s->name);
	free(s);
	return r;
}

static const struct sink_ops syslog_ops = {
	.name = "syslog",
	.write = syslog_write,
	.flush = syslog_flush,
	.close = syslog_close,
};

int syslog_address_parse(const char *address, struct sockaddr_storage *addr, socklen_t *addr_len,
			 char **host)
{
	const char *colon = address ? strrchr(address, ':') : NULL;
	char text[INET6_ADDRSTRLEN + 2];
	unsigned long port;
	size_t hl;
	char *end;

	if (!colon || colon == address || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (*end || errno || port == 0 || port > 65535)
		return -EINVAL;
	hl = (size_t)(colon - address);
	if (address[0] == '[') {
		if (hl < 3 || address[hl - 1] != ']' || hl - 2 >= sizeof(text))
			return -EINVAL;
		memcpy(text, address + 1, hl - 2);
		text[hl - 2] = 0;
	} else {
		if (hl >= sizeof(text))
			return -EINVAL;
		memcpy(text, address, hl);
		text[hl] = 0;
	}
	memset(addr, 0, sizeof(*addr));
	if (address[0] != '[' && inet_pton(AF_INET, text, &((struct sockaddr_in *)addr)->sin_addr) == 1) {
		struct sockaddr_in *in = (struct sockaddr_in *)addr;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*addr_len = sizeof(*in);
	} else if (address[0] == '[' &&
		   inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)addr)->sin6_addr) == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*addr_len = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	if (!host)
		return 0;
	*host = strdup(text);
	return *host ? 0 : -ENOMEM;
}

static int setup_tls(struct syslog_sink *s, const struct syslog_options *o)
{
	char why[256];

	if (!o->ca_file) {
		sink_say(s, "TLS needs a CA file ('ca_file') to check the collector's certificate");
		return -EINVAL;
	}
	if (!o->cert_file != !o->key_file) {
		sink_say(s, "a client certificate needs both 'cert_file' and 'key_file'");
		return -EINVAL;
	}
	s->tls = SSL_CTX_new(TLS_client_method());
	if (!s->tls)
		return -ENOMEM;
	SSL_CTX_set_min_proto_version(s->tls, TLS1_2_VERSION);
	SSL_CTX_set_verify(s->tls, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(s->tls, SSL_MODE_AUTO_RETRY);
	if (SSL_CTX_load_verify_locations(s->tls, o->ca_file, NULL) != 1) {
		sink_say(s, "cannot load the CA file %s: %s", o->ca_file, tls_error(why, sizeof(why)));
		return -EINVAL;
	}
	if (o->cert_file && (SSL_CTX_use_certificate_chain_file(s->tls, o->cert_file) != 1 ||
			     SSL_CTX_use_PrivateKey_file(s->tls, o->key_file, SSL_FILETYPE_PEM) != 1 ||
			     SSL_CTX_check_private_key(s->tls) != 1)) {
		sink_say(s, "cannot load the client certificate %s and key %s: %s", o->cert_file,
			 o->key_file, tls_error(why, sizeof(why)));
		return -EINVAL;
	}
	return 0;
}

static int setup_peer(struct syslog_sink *s, const struct syslog_options *o)
{
	char *host = NULL;
	struct in6_addr any;
	int r;

	if (o->transport == SYSLOG_UNIX || o->transport == SYSLOG_JSONL_UNIX) {
		struct sockaddr_un *un = (struct sockaddr_un *)&s->addr;

		if (!o->path || o->path[0] != '/' || strlen(o->path) >= sizeof(un->sun_path)) {
			sink_say(s, "'path' must be an absolute socket path of at most %zu bytes",
				 sizeof(un->sun_path) - 1);
			return -EINVAL;
		}
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, o->path);
		s->addr_len = sizeof(*un);
		return 0;
	}
	if (o->transport != SYSLOG_TCP && o->transport != SYSLOG_TLS)
		return -EINVAL;
	r = syslog_address_parse(o->address, &s->addr, &s->addr_len, &host);
	if (r == -EINVAL)
		sink_say(s, "'address' must be an IPv4 address and port (192.0.2.1:6514) or an "
			    "IPv6 one ([2001:db8::1]:6514), got '%s'; names are not resolved",
			 o->address ? o->address : "");
	if (r < 0)
		return r;
	if (o->transport == SYSLOG_TLS) {
		s->server_name = o->server_name ? strdup(o->server_name) : host;
		if (o->server_name)
			free(host);
		if (!s->server_name)
			return -ENOMEM;
		s->server_name_is_ip = inet_pton(AF_INET, s->server_name, &any) == 1 ||
				       inet_pton(AF_INET6, s->server_name, &any) == 1;
		return setup_tls(s, o);
	}
	free(host);
	return 0;
}

int sink_syslog_open(const struct syslog_options *o, struct sink **out)
{
	struct syslog_sink *s;
	struct spool_options so;
	struct utsname uts;
	int r;

	if (!o || !o->spool_dir || (o->facility > 23) ||
	    (o->format && o->format != SYSLOG_FORMAT_JSON && o->format != SYSLOG_FORMAT_OCSF))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	s->sink.ops = &syslog_ops;
	s->fd = -1;
	s->quiet = o->quiet;
	s->transport = o->transport;
	s->close_ms = o->close_ms ? o->close_ms : SYSLOG_DEFAULT_CLOSE_MS;
	s->name = strdup(o->name ? o->name : "syslog");
	if (!s->name) {
		r = -ENOMEM;
		goto fail;
	}
	if (uname(&uts) == 0)
		snprintf(s->hostname, sizeof(s->hostname), "%s", uts.nodename);
	s->hdr = (struct syslog_header){
		.facility = o->facility ? o->facility : SYSLOG_FACILITY_LOCAL0,
		.hostname = s->hostname[0] ? s->hostname : NULL,
		.procid = (unsigned int)getpid(),
		.format = o->format ? o->format : SYSLOG_FORMAT_JSON,
	};
	r = setup_peer(s, o);
	if (r < 0)
		goto fail;
	so = (struct spool_options){
		.dir = o->spool_dir,
		.max_bytes = o->spool_bytes ? o->spool_bytes : SYSLOG_DEFAULT_SPOOL_BYTES,
		.loss_format = format_loss,
		.loss_ctx = s,
	};
	r = spool_open(&so, &s->spool);
	if (r < 0) {
		sink_say(s, "cannot open the spool %s: %s", o->spool_dir, strerror(-r));
		goto fail;
	}
	r = -pthread_create(&s->sender, NULL, sender_main, s);
	if (r < 0)
		goto fail;
	s->sender_started = true;
	*out = &s->sink;
	return 0;
fail:
	syslog_close(&s->sink);
	return r;
}
