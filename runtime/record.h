/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Typed audit records.  Every record of a run, whoever made it (a BPF hook,
 * the controller, the DNS proxy), becomes one struct record before it is
 * text; a sink (runtime/sink.h) encodes it.  Decoding resolves what only the
 * run knows (rule ids to rule paths and destinations, capability numbers to
 * names), so a sink needs nothing but the record.
 *
 * Strings in a record are borrowed: from the kernel's record, from the run,
 * or from the decoder's scratch space.  They live until the next decode with
 * the same scratch, or until the run is freed; a sink that keeps a record
 * past write() copies what it keeps.
 *
 * The field names and their order in JSON are docs/audit.md's.
 */
#ifndef TETHER_RUNTIME_RECORD_H
#define TETHER_RUNTIME_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/event.h"
#include "policyc/policy.h"

enum record_kind {
	RECORD_KERNEL_FS = 1,	/* struct tether_fs_event: kind fs (and the concepts it carries) */
	RECORD_KERNEL_NET,	/* struct tether_net_event */
	RECORD_RUN,		/* a transition of the run, from the controller */
	RECORD_DNS,		/* a DNS proxy decision */
	/*
	 * A line of the node log (runtime/sink/nodelog.h), already encoded:
	 * its checkpoints and drop records, sent to the log's export sinks as
	 * the very bytes the log holds.  `line` is the JSON object, no newline;
	 * `line_kind` its "kind".  OCSF has no class for it and leaves it out.
	 */
	RECORD_NODE_LINE,
};

/* A run of consecutive sequence numbers, first..last inclusive. */
struct record_seq_range {
	uint64_t first, last;
};

/* A string that is not NUL-bounded. */
struct record_text {
	const char *text;
	size_t len;
};

/*
 * A coalesced record (runtime/coalesce.h): it stands for `count` denials
 * with the key of the record written in full as `first_seq`, each of which
 * took one of the run's sequence numbers (`seqs`).  Where the key leaves
 * the path out (kinds fs and unix: the path names the object), `paths`
 * replaces the record's path: the distinct paths of the first records it
 * stands for, and how many of them had a path not listed.
 */
struct record_coalesced {
	uint64_t count;
	uint64_t first_seq;
	const struct record_seq_range *seqs;
	size_t seq_range_count;
	bool paths_listed;
	const struct record_text *paths;
	size_t path_count;
	uint64_t paths_unlisted;
};

/* A kernel record with a struct tether_fs_event body. */
struct record_fs {
	const char *kind;	/* "fs", or the concept the kernel's kind names */
	const char *op;
	const char *path;	/* decoded: full path, capability name, ...; not NUL-bounded */
	size_t path_len;
	bool path_truncated;
	bool path_fs_relative;
	uint32_t access;	/* TETHER_ACCESS_*; 0: none to name */
	uint32_t decision;	/* enum tether_decision */
	int32_t err;		/* negative errno, 0 if allowed */
	uint32_t reason;	/* enum tether_reason */
	bool has_rule;		/* "rule" is written */
	uint32_t rule;
	const char *rule_path;	/* NULL: not known to this run */
	const struct tether_fs_event *ev;	/* pid, tgid, uid, comm, exe, cgroup id */
	const struct record_coalesced *coalesced;	/* NULL: one record of its own */
};

/* A kernel record with a struct tether_net_event body. */
struct record_net {
	const char *op;
	const char *rule_name;	/* "rule_destination" or "host"; NULL: not known */
	const struct tether_net_event *ev;
};

enum record_run_event {
	RECORD_RUN_START = 1,
	RECORD_RUN_OUTPUT_TRUNCATED,
	RECORD_RUN_CLEANUP,
	RECORD_RUN_END,
	RECORD_RUN_ADOPTED,
	RECORD_RUN_SUPPRESSED,
	RECORD_RUN_ARTIFACT,
};

/*
 * Flood control (runtime/audit.h): the kernel records of one window that
 * were past the run's ceiling and not written, each counted here with its
 * seq; by_kind in record_flood_kinds order.
 */
#define RECORD_FLOOD_KINDS	6	/* fs, proc, capability, kernel, unix, net */
extern const char *const record_flood_kinds[RECORD_FLOOD_KINDS];
struct record_run_suppressed {
	uint64_t count;
	uint64_t denied;		/* of count, denials */
	uint64_t rate_limit;		/* the ceiling: lines per second */
	uint64_t window_ms;
	const struct record_seq_range *seqs;
	size_t seq_range_count;
	uint64_t seqs_unlisted;		/* of count, seqs the ranges do not list */
	const uint64_t *by_kind;
};

/*
 * A supervisor took the run over from one that stopped (tether daemon's
 * restart or upgrade): how long nobody supervised it, and how many of its
 * records had found its ring full by then (what the gap cost).
 */
struct record_run_adopted {
	uint64_t gap_ms;		/* since the last sign of the supervisor that stopped */
	uint64_t audit_lost;		/* the run's lost records so far, the gap's included */
	uint64_t backlog;		/* records the ring held, read at adoption */
	bool command_alive;		/* the command was still running */
};

struct record_run_start {
	const char *command;	/* argv[0] only: arguments may carry secrets */
	const char *tmpdir;
	uint64_t cgroup_id;
	uint32_t run_slot;
	bool audit_mode;	/* "mode": "audit", else "enforce" */
	size_t rules;
	const char *policy_digest;
	const char *envelope_digest;	/* the envelope as written: policy_digest unless bound */
	char *const *unenforced;
	size_t unenforced_count;
	uint32_t uid, gid;
	const uint64_t *limits;	/* TP_LIMIT_*; 0: not set */
	uint64_t setup_us;
	/* fresh_overlay: the workspace's source and its copy's tree digest; NULL: none */
	const char *source, *source_digest;
	/* a git source (workspace.ref): the commit checked out and its tree; NULL: none */
	const char *source_commit, *source_tree;
};

struct record_run_truncated {
	const char *stream;	/* "stdout" or "stderr" */
	uint64_t output_bytes_max;
};

struct record_run_cleanup {
	unsigned int killed;
	uint64_t duration_us;
	bool tree_empty, map_entries_removed, cgroup_removed, tmpdir_removed, verified;
};

struct record_run_end {
	int exit_status;
	uint64_t audit_records, audit_seq_last, audit_lost, audit_malformed;
	uint64_t audit_coalesced;	/* of audit_records, those counted in coalesced records */
	uint64_t audit_suppressed;	/* of audit_records, those counted in suppressed records */
	/* audit.fail_closed: actions refused because their record found the ring full */
	bool fail_closed;
	uint64_t audit_refused;
	uint64_t egress_bytes;
	uint32_t ingress_dropped;
	unsigned int leftover_processes;
	bool cleanup_verified;
	const char *reason;	/* the terminal reason's name */
	const char *budget;	/* reason budget_exhausted: which; else NULL */
	bool has_output;	/* resources.output_bytes is set */
	uint64_t output_bytes;
	bool output_truncated;
};

/*
 * One file of the workspace at the end (runtime/run/artifacts.c): what
 * happened to it, and for one that left, its size and sha256, written
 * before it is published.
 */
struct record_run_artifact {
	const char *path;		/* relative to the workspace */
	const char *decision;		/* exported, quarantined, refused, missing, failed */
	const char *reason;		/* why, unless exported; NULL: none */
	uint64_t size;
	const char *sha256;		/* "sha256:..." of what left; NULL: nothing did */
};

struct record_run {
	enum record_run_event event;
	union {
		struct record_run_start start;
		struct record_run_truncated truncated;
		struct record_run_cleanup cleanup;
		struct record_run_end end;
		struct record_run_adopted adopted;
		struct record_run_suppressed suppressed;
		struct record_run_artifact artifact;
	};
};

/*
 * What every record of a run carries besides its own fields (docs/audit.md,
 * "The record envelope"): who made it where, for which run and attempt.
 * Strings are NUL-bounded and borrowed from the run; NULL where the run has
 * none (a standalone run has no tenant; no traceparent, no trace ids).
 */
#define RECORD_SCHEMA_VERSION	3
struct record_context {
	const char *host;		/* the node's name (uname nodename) */
	const char *boot_id;		/* /proc/sys/kernel/random/boot_id */
	const char *tether_version;
	const char *tenant;
	unsigned int attempt;		/* 1 for a first attempt */
	const char *trace_id;		/* 32 hex digits, from the run's traceparent */
	const char *span_id;		/* 16 hex digits */
	const char *policy_digest;	/* "sha256:...": what the run enforces */
	/*
	 * The members above as JSON (from ,"host" to "policy_digest"'s value,
	 * run_id `encoded_run_id`'s among them), encoded once for the run by
	 * sink_jsonl_encode_context(): a record of that run copies them.
	 * NULL: each record encodes them anew.
	 */
	const char *encoded;
	size_t encoded_len;
	const char *encoded_run_id;
};

struct dns_event;

struct record {
	enum record_kind kind;
	uint64_t seq;		/* the run's sequence number: kernel and controller share it */
	uint64_t mono_ns;	/* when, CLOCK_MONOTONIC */
	/* when, CLOCK_REALTIME ns: 0 (most records) is mono_ns's instant, found
	 * when a sink encodes it; the fan-out of a run's records sets it once so
	 * every sink writes the same "time" (record_real_ns()) */
	uint64_t real_ns;
	const char *run_id;
	const struct record_context *ctx;	/* NULL: a record outside any run's stream */
	union {
		struct record_fs fs;
		struct record_net net;
		struct record_run run;
		const struct dns_event *dns;
		struct {
			struct record_text line;
			const char *line_kind;
		};
	};
};

/* What decoding a kernel record needs from its run. */
struct record_names {
	const char *run_id;
	const struct record_context *ctx;	/* copied into every record; may be NULL */
	const char *const *rule_paths;	/* rule_id -> path, for "rule_path" */
	size_t rule_count;
	/* net rule_id -> "192.0.2.0/24"; host rule index -> "*.example.com" */
	const char *const *net_rule_names;
	size_t net_rule_count;
	const char *const *host_rule_names;
	size_t host_rule_count;
};

/* Scratch space for what decoding builds (a joined path, a capability name). */
struct record_scratch {
	char text[2 * TETHER_EVENT_PATH_MAX + 8];
};

/*
 * Decodes one record of a run's ring into `rec`.  Returns 0, or -EBADMSG when
 * the bytes are not a record this version knows (size, kind).
 */
int record_decode(const void *data, size_t size, const struct record_names *names,
		  struct record_scratch *scratch, struct record *rec);

/* The record's CLOCK_REALTIME nanoseconds: real_ns, else its mono_ns's instant (0: now). */
uint64_t record_real_ns(const struct record *rec);

/* "time": RFC 3339 in UTC with microseconds, of CLOCK_REALTIME ns (0: now).  size >= 32. */
void record_format_time(uint64_t real_ns, char *buf, size_t size);

struct strbuf;
/* A start record's workspace source fields (JSON members, each with its leading ','). */
int record_encode_source(const struct record_run_start *s, struct strbuf *out);

/* The kernel's boot id (36 characters), or "" when it cannot be read. */
void record_boot_id(char *buf, size_t size);

/* Names of the values records carry. */
const char *record_fs_op_name(uint32_t op);
const char *record_net_op_name(uint32_t op);
const char *record_errno_name(int err);
const char *record_reason_name(uint32_t reason);
const char *record_decision_name(uint32_t decision);
/*
 * The name of the capability whose number a capability record carries
 * ("21" -> "cap_sys_admin", written into buf), or `number` itself when it
 * is not a number.
 */
const char *record_capability_name(const char *number, char *buf, size_t size);

#endif
