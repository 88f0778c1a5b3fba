/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent's configuration, /etc/tether/daemon.yaml: who may talk to
 * `tether daemon` on its socket, and for which tenants.  docs/daemon.md is
 * the reference page, with an example.
 *
 *   version: 1                        # required, must be 1
 *   socket: /run/tether/tether.sock   # optional; an absolute path
 *   socket_group: tether              # optional; the group owning the socket
 *   state_dir: /var/lib/tether        # optional; an absolute path
 *   max_runs: 256                     # optional; 1..DAEMON_MAX_RUNS_LIMIT
 *   audit_rate_limit: 2000            # optional; 0 (none) .. 10^9
 *   callers:                          # optional; who may call, for which tenants
 *     - uid: 0                        # exactly one of uid / user / gid / group
 *       tenants: ["*"]                # required, not empty; "*" = every tenant
 *     - group: agents
 *       tenants: [team-a, team-b]
 *
 * Keys and values:
 *
 *   version       1, the only version this tether reads.
 *   socket        the Unix socket the daemon listens on: absolute, lexically
 *                 normalised ("//", ".", ".." and a trailing "/" go), at most
 *                 107 bytes (sun_path less its NUL), not "/".  Default
 *                 DAEMON_DEFAULT_SOCKET.
 *   socket_group  the group that owns the socket (mode 0660, so its members
 *                 may connect): a name from the group file, or a numeric gid
 *                 (all digits; taken as given, not looked up),
 *                 0..4294967294.  Default 0 (root's group).
 *   state_dir     where the daemon keeps its state: absolute, normalised, at
 *                 most DAEMON_STATE_DIR_MAX bytes, not "/".  Default
 *                 DAEMON_DEFAULT_STATE_DIR.
 *   max_runs      how many runs the daemon holds at once: 1..
 *                 DAEMON_MAX_RUNS_LIMIT (the BPF side's TETHER_MAX_RUNS run
 *                 slots, bpf/abi/rules.h).  Default DAEMON_DEFAULT_MAX_RUNS.
 *   audit_rate_limit  flood control: the lines of kernel records a run may
 *                 write per second (docs/audit.md, "Flood control"); past
 *                 it they are counted in "suppressed" records.  0: no
 *                 ceiling.  Default AUDIT_RATE_LIMIT_DEFAULT (2000).
 *   callers       a non-empty list of entries; each has exactly one of
 *                   uid: N       a numeric uid, 0..4294967294
 *                   user: NAME   a name from the passwd file (its uid)
 *                   gid: N       a numeric gid, 0..4294967294
 *                   group: NAME  a name from the group file (its gid)
 *                 and `tenants`, a non-empty list of tenant names (1 to 64
 *                 letters, digits, '.', '_' or '-', starting with a letter
 *                 or digit: the rule of an envelope's identity.tenant) or
 *                 "*" alone (every tenant; quote it: a plain * is a YAML
 *                 alias).  Two entries for the same uid, or for the same
 *                 gid, are an error (merge their tenants), and so is a tenant
 *                 listed twice, or beside "*".  Optional: `envelopes`, a
 *                 non-empty list of digests ("sha256:" and 64 lowercase hex
 *                 digits, as `tether check` prints them: the envelopes it
 *                 may run; no key: any), and `workspaces`, a non-empty list
 *                 of absolute directories (normalised; where a run's own
 *                 workspace may be; no key: nowhere, root aside); each
 *                 entry once.  Default: one entry, uid 0 with every tenant
 *                 and any envelope.
 *
 * A caller (a peer's uid and its gids) may use the daemon when an entry
 * matches it: a uid entry by its uid, a gid entry when the gid is among the
 * caller's gids (primary or supplementary).  It may create and see the runs
 * of the tenants of every entry that matches it, together.  A `user` entry
 * matches the uid only: the user's groups grant nothing unless named.
 *
 * Names are resolved once, when the file is parsed, from the passwd and
 * group files (struct daemon_config_files) read with fgetpwent_r() and
 * fgetgrent_r(): never through getpwnam(), whose NSS modules a static binary
 * would dlopen at run time.  A name that is not there is an error at its
 * position; so are names that cannot be names (':' or control characters,
 * or a leading '+' or '-', which mark NIS compat lines in those files).
 *
 * Parsed as strictly as an envelope, through policyc's schema layer
 * (policyc/schema_internal.h): unknown keys, wrong kinds, duplicate keys,
 * out-of-range values and empty lists are errors, each a diagnostic
 * "FILE:LINE:COLUMN: error: MESSAGE", and one pass reports every problem
 * of the file, sorted into file order.  The library never prints.
 *
 * Functions return 0 or a negative errno; output parameters are written only
 * on success (daemon_config_load()'s -ENOENT is the one exception, below).
 */
#ifndef TETHER_RUNTIME_DAEMON_CONFIG_H
#define TETHER_RUNTIME_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi/rules.h"
#include "policyc/policy.h"

#define DAEMON_CONFIG_PATH		"/etc/tether/daemon.yaml"
#define DAEMON_DEFAULT_SOCKET		"/run/tether/tether.sock"
#define DAEMON_DEFAULT_STATE_DIR	"/var/lib/tether"
#define DAEMON_DEFAULT_MAX_RUNS		256u
/* 4096, or fewer when the BPF side has fewer run slots (1024 today). */
#define DAEMON_MAX_RUNS_LIMIT		(TETHER_MAX_RUNS < 4096 ? TETHER_MAX_RUNS : 4096)
/* sizeof(sockaddr_un.sun_path) less the NUL: a longer path cannot be bound. */
#define DAEMON_SOCKET_PATH_MAX		107
/* Room under PATH_MAX (4096) for the paths the daemon makes below it. */
#define DAEMON_STATE_DIR_MAX		1024
/* Far above any real file; what the parser reads at most. */
#define DAEMON_CONFIG_MAX_BYTES		(1u << 20)
#define DAEMON_TENANT_MAX		64

_Static_assert(DAEMON_DEFAULT_MAX_RUNS >= 1 && DAEMON_DEFAULT_MAX_RUNS <= DAEMON_MAX_RUNS_LIMIT,
	       "the default max_runs must be one the file may set");

enum daemon_caller_kind {
	DAEMON_CALLER_UID = 1,	/* matches a caller whose uid is `id` */
	DAEMON_CALLER_GID,	/* matches a caller with `id` among its gids */
};

/* One entry of `callers`. */
struct daemon_caller {
	enum daemon_caller_kind kind;
	uint32_t id;		/* the uid or gid: written, or resolved from a name */
	char **tenants;		/* the tenant names listed, in file order, each valid
				 * (daemon_tenant_valid()); never "*": NULL when any_tenant */
	size_t tenant_count;	/* 0 when any_tenant */
	bool any_tenant;	/* tenants: ["*"] */
	/* envelopes: the digests ("sha256:" and 64 hex digits) of the envelopes
	 * or policies, as written, it may run; NULL with any_envelope (no key) */
	char **envelopes;
	size_t envelope_count;
	bool any_envelope;
	/* workspaces: where a run's own workspace (the API's `workspace`) may
	 * be, absolute and normalised; none without the key */
	char **workspaces;
	size_t workspace_count;
	unsigned int line;	/* of the entry in the file; 0 for the default entry */
};

struct daemon_sink;

/*
 * `node_log:` (docs/daemon.md; docs/audit.md, "The node log"): the node's
 * tamper-evident log of every run's records, <state_dir>/audit.
 *
 *   node_log:
 *     enabled: true            # default true
 *     key_file: /var/lib/tether/node-log.key   # default <state_dir>/node-log.key
 *     file_bytes: 64MiB        # rotate past this: 64KiB .. 1TiB
 *     max_bytes: 1GiB          # all files together; at least 2 x file_bytes
 *     checkpoint_records: 10000   # 1 .. 10^9
 *     checkpoint_seconds: 60      # 1 .. 86400
 */
struct daemon_node_log {
	bool enabled;
	char *key_file;		/* absolute, normalised; NULL: <state_dir>/node-log.key */
	uint64_t file_bytes, max_bytes, checkpoint_records, checkpoint_ms;
};

struct daemon_config {
	char *socket_path;	/* absolute, normalised */
	char *state_dir;	/* absolute, normalised */
	uint32_t socket_gid;	/* the socket's group (mode 0660) */
	uint32_t max_runs;	/* 1..DAEMON_MAX_RUNS_LIMIT */
	/* each run's flood control ceiling (run_config.audit_rate_limit):
	 * 0: AUDIT_RATE_LIMIT_DEFAULT, UINT64_MAX: none (the file's 0) */
	uint64_t audit_rate_limit;
	struct daemon_caller *callers;	/* in file order; never empty */
	size_t caller_count;	/* at least 1 */
	struct daemon_sink *sinks;	/* `sinks:`, in file order; NULL: none */
	size_t sink_count;
	struct daemon_node_log node_log;
};

/* Where names are resolved; for tests.  A NULL struct or member: the system's. */
struct daemon_config_files {
	const char *passwd;	/* user names -> uids; NULL: /etc/passwd */
	const char *group;	/* group names -> gids; NULL: /etc/group */
};

/*
 * The configuration of a host without the file: the defaults above, and
 * one caller, uid 0 with every tenant.  0, -EINVAL (cfg NULL) or -ENOMEM.
 */
int daemon_config_defaults(struct daemon_config *cfg);

/*
 * Parses `len` bytes of text held in memory (at most DAEMON_CONFIG_MAX_BYTES);
 * `name` is the file name in diagnostics (NULL: "<input>"), `files` where
 * names are resolved (may be NULL).  Keys left out get their defaults.
 * Every problem is appended to `diags` (may be NULL), sorted into file
 * order.  Returns 0, -EINVAL (the text is invalid, see diags; or a bad
 * argument, without a diagnostic) or -ENOMEM.  *cfg is written only on 0.
 */
int daemon_config_parse(const char *name, const char *text, size_t len,
			const struct daemon_config_files *files, struct daemon_config *cfg,
			struct tp_diags *diags);

/*
 * Reads and parses the file `path` (NULL: DAEMON_CONFIG_PATH).  Returns 0;
 * -ENOENT, without a diagnostic, when the file does not exist: *cfg then
 * holds the defaults (daemon_config_defaults()), for the caller to use or
 * refuse; -EINVAL when it is invalid (see diags); -ENOMEM; or another
 * negative errno (-EACCES, -EISDIR, -EFBIG over DAEMON_CONFIG_MAX_BYTES,
 * -EINVAL for a FIFO or device...) with one diagnostic at line 0 when it
 * cannot be read.
 */
int daemon_config_load(const char *path, const struct daemon_config_files *files,
		       struct daemon_config *cfg, struct tp_diags *diags);

/* Frees what cfg holds and zeroes it; NULL-safe and idempotent. */
void daemon_config_free(struct daemon_config *cfg);

/*
 * May the caller with `uid` and the `gid_count` gids `gids` (its primary
 * and supplementary groups; gids may be NULL when gid_count is 0) use the
 * daemon at all (tenant NULL), or create and see the runs of `tenant`?  An
 * entry matches by its uid, or by a gid among `gids`; the tenants of every
 * matching entry apply together.  An invalid tenant name is refused.
 * False for a NULL cfg.
 */
bool daemon_config_allows(const struct daemon_config *cfg, uint32_t uid, const uint32_t *gids,
			  size_t gid_count, const char *tenant);
/*
 * May that caller run the envelope whose digest (as written, "sha256:...")
 * is `digest`?  Yes when a matching entry has no `envelopes`, or lists it.
 */
bool daemon_config_allows_envelope(const struct daemon_config *cfg, uint32_t uid,
				   const uint32_t *gids, size_t gid_count, const char *digest);
/*
 * May that caller give a run the workspace `path` (absolute, normalised)?
 * Root may (it could run tether itself); anyone else when `path` is one of
 * a matching entry's `workspaces` or beneath one.
 */
bool daemon_config_allows_workspace(const struct daemon_config *cfg, uint32_t uid,
				    const uint32_t *gids, size_t gid_count, const char *path);
/*
 * Whether `tenant` is a tenant name: 1 to DAEMON_TENANT_MAX letters, digits,
 * '.', '_' or '-', starting with a letter or digit (so never ".", ".." or
 * an option).  "*" is not a name.  False for NULL.
 */
bool daemon_tenant_valid(const char *tenant);

/* ---- sinks: where records go besides each run's records file ---------------
 *
 *   sinks:                            # optional; a non-empty list
 *     - name: siem                    # required; unique; 1-64 of [A-Za-z0-9._-]
 *       type: syslog-tls              # required; see enum daemon_sink_type
 *       address: 192.0.2.10:6514      # syslog-tcp, syslog-tls: IPv4:port or [IPv6]:port
 *       ca_file: /etc/tether/siem-ca.pem   # syslog-tls: required
 *       cert_file: /etc/tether/node.pem    # syslog-tls: optional, with key_file
 *       key_file: /etc/tether/node.key
 *       server_name: siem.example.com # syslog-tls: the name checked; default the address
 *       facility: local0              # syslog-*: a facility name; default local0
 *       format: json                  # the record's form: "json" (default) or "ocsf"
 *       spool_bytes: 64MiB            # syslog-*: the spool's cap; default 64MiB
 *       default: true                 # every run's records (default false: only the
 *                                     # runs that name it in `audit_sinks`)
 *     - name: local
 *       type: syslog-unix
 *       path: /dev/log                # syslog-unix, jsonl-file, jsonl-unix: absolute
 *
 * docs/daemon.md is the reference, docs/audit.md ("Exporting records: syslog
 * and spools") says what each type writes and guarantees.  A syslog sink's
 * spool is <state_dir>/spool/<name>.
 */
enum daemon_sink_type {
	DAEMON_SINK_SYSLOG_TCP = 1,	/* "syslog-tcp": RFC 5424 over TCP, RFC 6587 framing */
	DAEMON_SINK_SYSLOG_TLS,		/* "syslog-tls": RFC 5425 */
	DAEMON_SINK_SYSLOG_UNIX,	/* "syslog-unix": a unix datagram socket (/dev/log) */
	DAEMON_SINK_JSONL_FILE,		/* "jsonl-file": JSON Lines appended to a file (0600) */
	DAEMON_SINK_JSONL_UNIX,		/* "jsonl-unix": JSON Lines to a unix stream socket */
};

#define DAEMON_SINK_NAME_MAX	64

struct daemon_sink {
	char *name;
	enum daemon_sink_type type;
	char *address;		/* syslog-tcp, syslog-tls; else NULL */
	char *path;		/* syslog-unix, jsonl-*; else NULL */
	char *ca_file, *cert_file, *key_file, *server_name;	/* syslog-tls; NULL: not set */
	unsigned int facility;	/* 0..23; syslog-* only */
	uint64_t spool_bytes;	/* syslog-*; SYSLOG_DEFAULT_SPOOL_BYTES when not set */
	bool is_default;	/* `default: true` */
	bool ocsf;		/* `format: ocsf`: OCSF events (runtime/sink/ocsf.h), not JSON Lines */
	unsigned int line, column;	/* of the entry */
};

/* The sink named `name`, or NULL. */
const struct daemon_sink *daemon_config_sink(const struct daemon_config *cfg, const char *name);
/* "syslog-tcp", ... */
const char *daemon_sink_type_name(enum daemon_sink_type type);

#endif
