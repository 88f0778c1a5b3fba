/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Audit records: decoding what the BPF programs put in a run's ring buffer and
 * writing it as JSON Lines, one object per record.  Record shapes are
 * documented in docs/audit.md.
 */
#ifndef TETHER_RUNTIME_AUDIT_H
#define TETHER_RUNTIME_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct audit_stream {
	FILE *out;
	const char *run_id;
	const char *const *rule_paths;	/* rule_id -> path, for "rule_path" */
	size_t rule_count;
	/* net rule_id -> "192.0.2.0/24"; host rule index -> "*.example.com" */
	const char *const *net_rule_names;
	size_t net_rule_count;
	const char *const *host_rule_names;
	size_t host_rule_count;
	bool egress_exhausted;	/* a record said network_egress.max_bytes is spent */
	uint64_t records;	/* kernel records written */
	uint64_t max_seq;	/* highest kernel sequence number seen */
	uint64_t malformed;	/* records that could not be decoded */
	int write_error;	/* first errno from writing `out`, 0 if none */
};

struct strbuf {
	char *data;
	size_t len, cap;
};
int sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends at most max_len bytes of `s` as a JSON string (quotes included);
 * bytes that are not valid UTF-8 become \u00XX.  Returns 0 or -ENOMEM. */
int sb_json_string(struct strbuf *sb, const char *s, size_t max_len);
void sb_free(struct strbuf *sb);

/* Formats one kernel record as a JSON object without a trailing newline. */
int audit_format_record(const void *data, size_t size, const struct audit_stream *st,
			struct strbuf *out);

/* libbpf ring_buffer callback: ctx is a struct audit_stream. */
int audit_handle_record(void *ctx, void *data, size_t size);

/* Writes a controller record for a run transition ("start", "end", ...) with
 * extra already-formatted JSON members (may be NULL). */
int audit_write_run_event(struct audit_stream *st, const char *event, const char *extra_json);

/* Converts a CLOCK_MONOTONIC timestamp to an RFC 3339 UTC string. */
void audit_format_time(uint64_t mono_ns, char *buf, size_t size);

const char *audit_fs_op_name(uint32_t op);
/*
 * The name of the capability whose number a capability record carries
 * ("21" -> "cap_sys_admin", written into buf), or `number` itself when it
 * is not a number.
 */
const char *audit_capability_name(const char *number, char *buf, size_t size);
const char *audit_net_op_name(uint32_t op);

/* "192.0.2.1" for IPv4-mapped addresses, "2001:db8::1" otherwise. */
void audit_format_addr(const uint8_t addr[16], char *buf, size_t size);

struct dns_event;
/* A DNS proxy decision as a "dns" record. */
int audit_write_dns_event(struct audit_stream *st, const struct dns_event *ev);
const char *audit_errno_name(int err);

#endif
