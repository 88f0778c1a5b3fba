/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RFC 5424 syslog sinks (docs/audit.md, "Exporting records: syslog and
 * spools").  Each record is one message:
 *
 *   <PRI>1 TIMESTAMP HOSTNAME tether PROCID MSGID [tether@32473 id=".." run_id=".." seq=".."] MSG
 *
 * PRI is facility * 8 + severity (a denial warning, an audit-mode
 * would-deny notice, anything else info); TIMESTAMP the record's time (RFC
 * 3339, UTC, microseconds); HOSTNAME the record's host (its context), else
 * the node's name; PROCID the daemon's pid; MSGID the record's kind;
 * MSG the record's JSON object (sink_jsonl_encode()).  32473 is the
 * enterprise number RFC 5612 reserves for documentation: tether has no
 * IANA number of its own yet.  `id` is the sink's own dense sequence
 * (the spool's id, spool.h), so a collector can tell a gap.
 *
 * Transports: TCP with octet-counting framing (RFC 6587 3.4.1, "LEN SP
 * MSG"), TLS (RFC 5425: the same framing inside TLS 1.2 or later, the
 * server's certificate checked against a CA file and a name), and a local
 * unix datagram socket (one message per datagram, no framing).  A message
 * is never split or glued to another; one longer than SYSLOG_MSG_MAX is
 * truncated: its MSG is cut (at a UTF-8 boundary) and its SD gains
 * truncated="N", the MSG's length before the cut.
 *
 * write() appends to the sink's spool and returns at once; a thread of the
 * sink sends from the spool (spool.h).  The daemon's loop never waits on
 * the network.
 */
#ifndef TETHER_RUNTIME_SINK_SYSLOG_H
#define TETHER_RUNTIME_SINK_SYSLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record;
struct sink;
struct strbuf;

/* RFC 5425 6.1 asks receivers for 2048 and advises 8192; rsyslog's default is 8k. */
#define SYSLOG_MSG_MAX		8192
#define SYSLOG_FACILITY_LOCAL0	16
#define SYSLOG_SD_ID		"tether@32473"
#define SYSLOG_DEFAULT_SPOOL_BYTES	(64ull << 20)
#define SYSLOG_DEFAULT_CLOSE_MS		2000

enum syslog_transport {
	SYSLOG_TCP = 1,
	SYSLOG_TLS,
	SYSLOG_UNIX,
	/*
	 * Not syslog: JSON Lines (the record's JSON object and "\n", no RFC
	 * 5424 header) to a unix stream socket, through the same spool and
	 * sender; "delivered" there means the collector read the bytes
	 * (SIOCOUTQ on a unix stream counts what the peer has not read).
	 */
	SYSLOG_JSONL_UNIX,
};

enum syslog_format {
	SYSLOG_FORMAT_JSON = 1,		/* MSG: the JSON Lines object */
	/* MSG: the OCSF event (runtime/sink/ocsf.h); the node log's own lines,
	 * which OCSF has no class for, as they are (the anchor must get out) */
	SYSLOG_FORMAT_OCSF,
};

/* The message body `format` makes of `rec` (the MSG; no newline): 0 or -ENOMEM. */
int syslog_encode_body(enum syslog_format format, const struct record *rec, struct strbuf *out);

/* What a message's header holds besides the record's own fields. */
struct syslog_header {
	unsigned int facility;		/* 0..23 */
	const char *hostname;		/* when the record has no context; NULL: "-" */
	unsigned int procid;		/* 0: "-" */
	enum syslog_format format;	/* 0: SYSLOG_FORMAT_JSON */
};

struct syslog_options {
	const char *name;		/* the sink's name, in messages about it */
	enum syslog_transport transport;
	const char *address;		/* TCP, TLS: "IPv4:port" or "[IPv6]:port" */
	const char *path;		/* UNIX: the socket, e.g. /dev/log; JSONL_UNIX: a stream socket */
	const char *ca_file;		/* TLS: required */
	const char *cert_file, *key_file;	/* TLS: a client certificate, both or neither */
	const char *server_name;	/* TLS: the name checked; NULL: the address's host */
	unsigned int facility;		/* 0: SYSLOG_FACILITY_LOCAL0; else 1..23 (kern is 0:
					 * not ours to send) */
	enum syslog_format format;	/* 0: SYSLOG_FORMAT_JSON */
	const char *spool_dir;		/* required */
	uint64_t spool_bytes;		/* 0: SYSLOG_DEFAULT_SPOOL_BYTES */
	unsigned int close_ms;		/* 0: SYSLOG_DEFAULT_CLOSE_MS */
	bool quiet;			/* no messages on stderr (tests) */
};

struct syslog_stats {
	uint64_t written;		/* records write() spooled */
	uint64_t truncated;		/* of those, cut to SYSLOG_MSG_MAX */
	uint64_t dropped;		/* the spool's cap (or a failed write) dropped */
	uint64_t loss_records;		/* audit_loss messages spooled */
	uint64_t unreported;		/* dropped, not yet in an audit_loss message */
	uint64_t sent;			/* messages the collector took */
	uint64_t connects;		/* connections made */
	uint64_t pending;		/* in the spool, not yet sent */
	uint64_t pending_bytes;
	char last_error[256];		/* why the last connection or send failed; "" */
};

/*
 * Opens the sink: the spool now, the connection in the sender thread.
 * Checks what can be checked without the collector (the address, the TLS
 * files), so a wrong configuration fails here.  Returns 0, -EINVAL (a bad
 * option: said on stderr unless quiet), -ENOMEM, or the spool's or TLS
 * setup's negative errno.
 */
int sink_syslog_open(const struct syslog_options *opts, struct sink **out);

/* The sink's counters now.  `sink` must be a syslog sink. */
void sink_syslog_stats(struct sink *sink, struct syslog_stats *st);

/* The severity of `rec`: 4 warning (a denial), 5 notice (would deny), 6 info. */
unsigned int syslog_severity(const struct record *rec);

/* Appends `len` bytes of `s` as an SD-PARAM value: '"', '\' and ']' escaped. */
int syslog_sd_escape(struct strbuf *out, const char *s, size_t len);

/*
 * Appends the RFC 5424 message for `rec`, numbered `id`, at most `max`
 * bytes (SYSLOG_MSG_MAX; at least 512): *truncated says whether MSG was cut.
 * Returns 0, -ENOMEM, or -EINVAL for a record no encoder knows.
 */
int syslog_format_record(const struct syslog_header *hdr, const struct record *rec,
			 uint64_t id, size_t max, struct strbuf *out, bool *truncated);

struct sockaddr_storage;
/*
 * "IPv4:port" or "[IPv6]:port" (names are not resolved: a static binary
 * has no NSS) into addr; the address's text into *host (malloc'd) unless
 * host is NULL.  0, -EINVAL or -ENOMEM.
 */
int syslog_address_parse(const char *address, struct sockaddr_storage *addr,
			 unsigned int *addr_len, char **host);

/* Appends "LEN SP MSG" (RFC 6587 octet counting). */
int syslog_frame_octet(struct strbuf *out, const char *msg, size_t len);

#endif
