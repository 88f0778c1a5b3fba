/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policyc: sandbox envelope (YAML) -> validated model -> compiled policy.
 *
 * A pure library: it reads the envelope file and nothing else, never prints,
 * and reports every problem of a file in one pass as a list of diagnostics,
 * each "FILE:LINE:COLUMN: error: MESSAGE" (lines and columns count from 1).
 * The schema is documented key by key in docs/envelope.md.
 *
 * Three stages:
 *
 *   tp_envelope_parse()   YAML -> struct tp_envelope: every key, type, unit
 *                         and range checked; values normalised; positions kept
 *   tp_policy_compile()   envelope -> struct tp_policy: relative paths resolved
 *                         against the workspace, conflicts and unenforceable
 *                         fields reported, everything sorted into one canonical
 *                         form (semantically equal envelopes compile to equal
 *                         policies)
 *   tp_policy_encode()    policy -> the versioned binary ("tpol"), whose
 *                         sha256 is the policy digest; tp_policy_decode() is
 *                         its strict inverse
 *
 * Functions return 0 or a negative errno; output parameters are written only
 * on success.  -EINVAL means "the input is invalid, see diags".
 */
#ifndef TETHER_POLICYC_POLICY_H
#define TETHER_POLICYC_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/abi/rules.h"
#include "policyc/ranges.h"

/* ---- diagnostics ------------------------------------------------------- */

struct tp_diag {
	char *file;		/* as given by the caller */
	unsigned int line;	/* 1-based; 0: no position (I/O error, size limit) */
	unsigned int column;	/* 1-based */
	char *message;		/* without the "error: " prefix */
};

struct tp_diags {
	struct tp_diag *items;
	size_t count;
};

/* Appends one diagnostic (printf-style); returns 0 or -ENOMEM. */
int tp_diags_add(struct tp_diags *diags, const char *file, unsigned int line,
		 unsigned int column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void tp_diags_free(struct tp_diags *diags);
/* Formats every diagnostic as "FILE:LINE:COLUMN: error: MESSAGE\n" ("FILE: error:
 * MESSAGE\n" for line 0) into one malloc'd string ("" when there are none).
 * Returns 0, -EINVAL or -ENOMEM. */
int tp_diags_format(const struct tp_diags *diags, char **out);

/* ---- the envelope model ------------------------------------------------ */

struct tp_pos {
	unsigned int line;	/* 0: not written in the file (a default) */
	unsigned int column;
};

enum tp_mode {
	TP_MODE_ENFORCE = 0,
	TP_MODE_AUDIT = 1,	/* path rules allow and record what they would deny */
};

/* How a path entry matches: the path itself, or the path and all beneath it. */
enum tp_path_kind {
	TP_PATH_EXACT = 0,	/* written "a/b": the path itself */
	TP_PATH_SUBTREE = 1,	/* written "a/b" + "/" + "**": the path and all beneath */
};

/* One entry of a path list, as written (after lexical normalisation). */
struct tp_path_entry {
	char *path;		/* absolute ("/a/b"), or relative to the workspace ("src/auth",
				 * "" for the workspace itself); never "**", "//", ".", ".." */
	bool relative;
	enum tp_path_kind kind;
	struct tp_pos pos;
};

struct tp_path_list {
	struct tp_path_entry *items;
	size_t count;
};

enum tp_proto {
	TP_PROTO_TCP = 1u << 0,
	TP_PROTO_UDP = 1u << 1,
};
#define TP_PROTO_ANY (TP_PROTO_TCP | TP_PROTO_UDP)

/*
 * One allowed destination: a hostname (resolved by the controller's DNS
 * proxy, never by the run) or an address block, with a port range and
 * protocols.  Addresses are stored in one form for both families: IPv4 as
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) with prefixlen 96 + n, so "1.2.3.4" and
 * "::ffff:1.2.3.4" are the same rule.  Host bits below the prefix are zero.
 */
struct tp_destination {
	char *host;		/* lower case, no trailing dot, "*." prefix for a wildcard;
				 * NULL for an address rule */
	uint8_t addr[16];
	uint8_t prefixlen;	/* 0..128 */
	uint8_t protocols;	/* TP_PROTO_* mask, never 0 */
	uint16_t port_min;	/* 1..65535; an entry without a port: 1..65535 */
	uint16_t port_max;
	struct tp_pos pos;
};

/* A DNS upstream: an address (mapped form as above) and a port. */
struct tp_endpoint {
	uint8_t addr[16];
	uint16_t port;
	struct tp_pos pos;
};

/*
 * Numeric limits.  A limit that is not set is unlimited; every set value is
 * at least 1 (0 is out of range everywhere), so 0 in the array also means
 * "not set".  Units are fixed: bytes, milli-CPUs, milliseconds, seconds.
 */
enum tp_limit {
	TP_LIMIT_CPU_MILLI,		/* resources.cpu: 1000 = one CPU */
	TP_LIMIT_MEMORY_BYTES,		/* resources.memory_bytes */
	TP_LIMIT_PROCESS_COUNT,		/* resources.process_count (tasks: threads count) */
	TP_LIMIT_DISK_BYTES,		/* resources.disk_bytes */
	TP_LIMIT_OPEN_FILES,		/* resources.open_files */
	TP_LIMIT_OUTPUT_BYTES,		/* resources.output_bytes */
	TP_LIMIT_WALL_CLOCK_MS,		/* resources.wall_clock */
	TP_LIMIT_WORKSPACE_BYTES,	/* filesystem.workspace.max_bytes */
	TP_LIMIT_EGRESS_BYTES,		/* network_egress.max_bytes */
	TP_LIMIT_LEASE_MS,		/* cleanup.lease */
	TP_LIMIT_DISK_INODES,		/* resources.disk_inodes (format 4) */
	TP_LIMIT_COUNT
};

/*
 * The terms of G = K ∧ P ∧ F ∧ N ∧ I ∧ R ∧ T ∧ C (seed 000, "Specify the
 * sandbox") and a field's enforcement status: see policyc/fields.h, whose
 * table holds a row like this for every field (limits hold theirs below).
 */
enum tp_term {
	TP_TERM_K,	/* kernel / system-call boundary */
	TP_TERM_P,	/* process, user, IPC and tenant isolation */
	TP_TERM_F,	/* filesystem, mount, device and artifact isolation */
	TP_TERM_N,	/* ingress and network egress policy */
	TP_TERM_I,	/* workload identity and credential authority */
	TP_TERM_R,	/* resource control */
	TP_TERM_T,	/* workspace lifetime, persistence, cleanup, remanence */
	TP_TERM_C,	/* control-plane integrity, audit, configuration */
	TP_TERM_COUNT
};

enum tp_status {
	TP_ENFORCED,
	TP_RECORDED,
	TP_NOT_ENFORCED,
};

struct tp_field_info {
	const char *field;	/* below "sandbox", dotted.  Rows whose name starts
				 * with '@' are built-in guarantees, not envelope keys */
	enum tp_term term;
	enum tp_status status;
	bool restricts;		/* NOT_ENFORCED only: setting it is a gap */
	bool former_gap;	/* ENFORCED only: an earlier version left it a gap, so
				 * an envelope may still acknowledge it (dropped) */
	const char *mechanism;	/* what enforces it, or why nothing does */
};

/* How a limit is written in the envelope and the unit it is held in. */
enum tp_limit_unit {
	TP_UNIT_BYTES,		/* a size ("512MiB", "2GB", "4096"), in bytes */
	TP_UNIT_MILLI_CPU,	/* CPUs ("0.5", "2", "500m"), in milli-CPUs */
	TP_UNIT_COUNT,		/* a plain decimal integer */
	TP_UNIT_MS,		/* a duration ("90s", "1h30m"), in milliseconds */
};

/*
 * Everything tether knows about one limit, in one place: the schema checks
 * `unit`, `min` and `max`; the compiler's gap check, the guarantee report and
 * the enforcement table read `row`; explain prints `label`; diff prints the
 * key; the run names it `record_name` in its start record.
 */
struct tp_limit_info {
	struct tp_field_info row;	/* row.field is the envelope key ("resources.cpu") */
	const char *label;		/* what the summary calls it: "cpu", "memory" */
	const char *record_name;	/* its member of the run's start record ("cpu_milli"),
					 * NULL where the start record does not name it */
	enum tp_limit_unit unit;
	uint64_t min, max;		/* the range an envelope may set, in `unit` */
};

/* Indexed by enum tp_limit. */
extern const struct tp_limit_info tp_limits[TP_LIMIT_COUNT];

/* What enforces `field` (a key below "sandbox"), or for a gap why nothing
 * does, as the guarantee report and explain say it; NULL for no such field. */
const char *tp_field_mechanism(const char *field);

/* identity.uid and identity.gid: 65534 ("nobody") by default, at most TP_ID_MAX
 * ((uid_t)-1 means "unchanged" to setresuid and is refused). */
#define TP_DEFAULT_ID 65534u
#define TP_ID_MAX 4294967294u

/*
 * sandbox.environment: names of [A-Za-z_][A-Za-z0-9_]*, 1..TP_ENV_NAME_MAX
 * bytes, at most TP_ENV_NAMES_MAX of them.
 */
#define TP_ENV_NAME_MAX 128
#define TP_ENV_NAMES_MAX 256
/*
 * What every run gets from the controller's environment when set there,
 * whatever the policy lists: PATH, LANG, LANGUAGE, LC_* (an entry ending in
 * '*' is a prefix), TERM, TZ.  NULL-terminated.  The compiler drops listed
 * names this set covers, so listing one changes nothing, not even the digest.
 */
extern const char *const tp_env_default_names[];
/* What tether sets itself, always (TMPDIR: the run's temporary directory):
 * listing one is an error.  HOME is the workspace unless the policy lists
 * HOME.  NULL-terminated. */
extern const char *const tp_env_reserved_names[];
/* Whether `name` is a variable name of sandbox.environment's syntax. */
bool tp_env_name_valid(const char *name);
/* Whether tp_env_default_names covers `name`. */
bool tp_env_name_is_default(const char *name);

enum tp_workspace_mode {
	TP_WORKSPACE_EXISTING = 0,	/* use (and create if missing) the directory at path */
	TP_WORKSPACE_FRESH = 1,		/* must be new or empty */
	TP_WORKSPACE_FRESH_OVERLAY = 2,	/* an overlay over `source` */
};

enum tp_lifetime {
	TP_LIFETIME_PERSISTENT = 0,	/* the workspace outlives the run */
	TP_LIFETIME_ONE_RUN = 1,	/* deleted when the run ends */
};

struct tp_input {
	char *path;		/* absolute, normalised */
	bool has_digest;
	uint8_t digest[32];	/* sha256 */
	struct tp_pos pos;
};

/*
 * A field whose restriction this version does not enforce.  `field` is its
 * key below "sandbox" ("network_egress.methods"), the name the envelope lists
 * under acknowledge_unenforced; `why` says what is missing.
 */
struct tp_gap {
	const char *field;	/* static */
	const char *why;	/* static */
	struct tp_pos pos;	/* of the key, or of 'sandbox' for a default */
};

struct tp_envelope {
	/* sandbox */
	enum tp_mode mode;
	bool has_image_digest;
	uint8_t image_digest[32];
	char *runtime_revision;		/* NULL: not given */
	/* sandbox.identity */
	char *tenant;
	char *run_id;
	bool has_uid, has_gid;		/* written in the file */
	uint32_t uid, gid;		/* as written, else the defaults: uid TP_DEFAULT_ID,
					 * gid the uid */
	/* sandbox.environment: variable names as written (valid, no duplicates) */
	char **env_names;
	size_t env_name_count;
	/* sandbox.filesystem */
	struct tp_input *inputs;
	size_t input_count;
	char *workspace_path;		/* absolute, normalised */
	char *workspace_source;		/* NULL: none */
	char *workspace_ref;		/* a commit id (lower-case hex); NULL: none */
	enum tp_workspace_mode workspace_mode;
	struct tp_path_list read, write, exec, deny, connect;
	/*
	 * filesystem.exec keywords: @system (the system software trees, which
	 * an exec list otherwise replaces) and @tmp (the run's private /tmp and
	 * /var/tmp); pos.line 0: not listed.
	 */
	struct tp_pos exec_system, exec_tmp;
	bool exec_given;		/* filesystem.exec written, keywords included */
	/* filesystem.abstract_sockets: names without the leading NUL, as written */
	char **abstract_sockets;
	size_t abstract_socket_count;
	struct tp_path_list workspace_write;	/* relative; default: one subtree entry "" (the whole workspace) */
	/* sandbox.network_egress */
	struct tp_destination *destinations;
	size_t destination_count;
	char **methods;			/* upper case HTTP methods */
	size_t method_count;
	struct tp_endpoint *dns_upstreams;
	size_t dns_upstream_count;
	uint32_t dns_ttl_min_s, dns_ttl_max_s;	/* defaults 5 and 3600 */
	/* sandbox.resources and other limits */
	uint64_t limits[TP_LIMIT_COUNT];
	struct tp_pos limit_pos[TP_LIMIT_COUNT];
	/* sandbox.workspace_lifetime, artifacts, cleanup */
	enum tp_lifetime lifetime;
	char **artifacts;		/* workspace-relative, normalised */
	size_t artifact_count;
	bool artifacts_scan, artifacts_hash;
	bool revoke_credentials;
	bool verify_process_tree;	/* default true */
	/* sandbox.audit */
	char *audit_sink;		/* NULL: the controller's stderr; else an absolute path */
	bool audit_fail_closed;
	bool audit_record_allowed;
	/* Gaps this envelope triggers (fields it sets that this version does not
	 * enforce, and restricting defaults), in file order. */
	struct tp_gap *gaps;
	size_t gap_count;
	/* sandbox.acknowledge_unenforced, as written (validated names) */
	char **acknowledged;
	size_t acknowledged_count;
	struct tp_pos *acknowledged_pos;
	/* where 'sandbox' is: defaults are reported there */
	struct tp_pos sandbox_pos;
};

/* Parses and validates an envelope held in memory; `name` is used in diagnostics. */
int tp_envelope_parse(const char *name, const char *data, size_t len,
		      struct tp_envelope **out, struct tp_diags *diags);

/*
 * What one run fills into an envelope written for many ("One envelope, many
 * runs" in docs/envelope.md): `${RUN_ID}` in filesystem.workspace.path
 * becomes `run_id` (run_id_valid(): no '/', never "." or ".."), and
 * `workspace`, when set, replaces that path altogether.  The path that
 * results is checked exactly as a written workspace.path is, and so is
 * every rule that depends on it; an error is reported at the path's
 * position.  Without a binding (`tether check`, `tether compile`)
 * `${RUN_ID}` is an ordinary part of the path.
 */
#define TP_RUN_ID_PLACEHOLDER "${RUN_ID}"
struct tp_run_binding {
	const char *run_id;	/* NULL: ${RUN_ID} stays as written */
	const char *workspace;	/* NULL: the envelope's own path */
};
int tp_envelope_parse_bound(const char *name, const char *data, size_t len,
			    const struct tp_run_binding *bind, struct tp_envelope **out,
			    struct tp_diags *diags);
/* Reads `path` (at most TP_ENVELOPE_MAX_BYTES) and parses it. -ENOENT etc. for I/O errors
 * (a diagnostic at line 0 describes them), -EINVAL for invalid content. */
int tp_envelope_parse_file(const char *path, struct tp_envelope **out,
			   struct tp_diags *diags);
void tp_envelope_free(struct tp_envelope *env);
/*
 * Appends to `out` what `tether check` warns about in a valid envelope
 * (policyc/warnings.c), each at its entry's position in `file`.  0 or
 * -ENOMEM.
 */
int tp_envelope_warnings(const char *file, const struct tp_envelope *env, struct tp_diags *out);

#define TP_ENVELOPE_MAX_BYTES (4u << 20)

/* ---- the compiled policy ----------------------------------------------- */

/* One compiled path rule. */
struct tp_path_rule {
	char *path;		/* absolute, normalised */
	uint32_t access;	/* TETHER_ACCESS_* mask; 0: nothing (a deny rule) */
	uint32_t kind;		/* enum tp_path_kind */
};

/* Address rule, as struct tp_destination without host and position. */
struct tp_net_rule {
	uint8_t addr[16];
	uint8_t prefixlen;
	uint8_t protocols;
	uint16_t port_min, port_max;
};

struct tp_host_rule {
	char *name;
	uint8_t protocols;
	uint16_t port_min, port_max;
};

/*
 * Bits 1 and 2 were "uid is set" and "gid is set" up to format 2; since
 * format 3 uid and gid always hold the run's ids, and the bits are unused
 * (a policy with them set is refused).
 */
enum tp_policy_flags {
	TP_POLICY_IMAGE_DIGEST = 1u << 0,	/* image_digest is set */
	TP_POLICY_ARTIFACTS_SCAN = 1u << 3,
	TP_POLICY_ARTIFACTS_HASH = 1u << 4,
	TP_POLICY_REVOKE_CREDENTIALS = 1u << 5,
	TP_POLICY_VERIFY_PROCESS_TREE = 1u << 6,
	TP_POLICY_AUDIT_FAIL_CLOSED = 1u << 7,
	TP_POLICY_AUDIT_RECORD_ALLOWED = 1u << 8,
	TP_POLICY_TMP_EXEC = 1u << 9,		/* filesystem.exec @tmp */
};

/*
 * The canonical compiled policy.  Every list is sorted and free of
 * duplicates, in the order given with each field, so two semantically equal
 * envelopes compile to equal structures and equal bytes.
 */
struct tp_policy {
	uint32_t mode;			/* enum tp_mode */
	uint32_t flags;			/* enum tp_policy_flags */
	uint8_t image_digest[32];
	char *runtime_revision;		/* NULL or text */
	char *tenant;
	char *run_id;
	/*
	 * The ids the run's processes have: setresgid(gid), setgroups(0, NULL),
	 * setresuid(uid), every capability dropped.  Always set: an envelope
	 * without them gets TP_DEFAULT_ID (65534, "nobody") for the uid, and the
	 * uid for the gid.  0..TP_ID_MAX; uid 0 owns root's files but has no
	 * capabilities.
	 */
	uint32_t uid, gid;

	char *workspace;		/* absolute */
	char *workspace_source;		/* NULL or absolute */
	char *workspace_ref;		/* NULL, or the commit of a git source: 40 or 64 hex digits */
	uint32_t workspace_mode;	/* enum tp_workspace_mode */
	uint32_t lifetime;		/* enum tp_lifetime */

	/* By path (bytewise); a rule's index is its rule_id in the kernel and in audit. */
	struct tp_path_rule *path_rules;
	size_t path_rule_count;
	/* Inputs by path. */
	struct tp_input *inputs;	/* pos is zero */
	size_t input_count;

	/* By (addr, prefixlen, protocols, port_min, port_max). */
	struct tp_net_rule *net_rules;
	size_t net_rule_count;
	/* By (name, protocols, port_min, port_max). */
	struct tp_host_rule *host_rules;
	size_t host_rule_count;
	/* Abstract unix socket names the run may reach (no leading NUL), bytewise;
	 * each 1..TP_ABSTRACT_SOCKET_MAX bytes, no NUL. */
	char **abstract_sockets;
	size_t abstract_socket_count;
	/* Upper case, bytewise. */
	char **methods;
	size_t method_count;
	/* In the order written: the first is asked first. */
	struct tp_endpoint *dns_upstreams;	/* pos is zero */
	size_t dns_upstream_count;
	uint32_t dns_ttl_min_s, dns_ttl_max_s;

	uint64_t limits[TP_LIMIT_COUNT];	/* 0: not set */

	/* Workspace-relative, bytewise. */
	char **artifacts;
	size_t artifact_count;

	char *audit_sink;		/* NULL: stderr */

	/*
	 * Environment variables that pass from the controller's environment
	 * into the run when set there, besides tp_env_default_names: bytewise,
	 * each a valid name (tp_env_name_valid()), none covered by the default
	 * set, none of tp_env_reserved_names; at most TP_ENV_NAMES_MAX.  Every
	 * other variable is dropped.
	 */
	char **env_names;
	size_t env_name_count;

	/* Acknowledged gaps, by field name: those the envelope triggers, all of them
	 * gaps of this version (tp_policy_load_file() refuses a .tpol listing others). */
	char **gaps;
	size_t gap_count;
};

/*
 * Envelope -> policy.  tp_envelope_parse() has reported everything that can
 * be wrong with an envelope, so this fails only for an envelope that did not
 * come from it (-EINVAL, no diagnostic), for lack of memory, or when the
 * allowed destinations overlap so much that they would compile to more
 * than a million rules (-EINVAL, with a diagnostic for file `name`).
 */
int tp_policy_compile(const char *name, const struct tp_envelope *env,
		      struct tp_policy **out, struct tp_diags *diags);
void tp_policy_free(struct tp_policy *policy);

/* Reads, parses and compiles one envelope file. */
int tp_compile_file(const char *path, struct tp_policy **out, struct tp_diags *diags);
/*
 * Reads a policy from `path`: a compiled policy (a file that starts with
 * TP_FORMAT_MAGIC) is decoded, anything else is compiled as an envelope.
 * Problems are diagnostics, as for tp_compile_file().
 */
int tp_policy_load_file(const char *path, struct tp_policy **out, struct tp_diags *diags);
/* The same for `len` bytes held in memory (at most TP_POLICY_MAX_BYTES, the
 * caller's to check); `name` is the file diagnostics name ("<stdin>"). */
int tp_policy_load(const char *name, const char *data, size_t len, struct tp_policy **out,
		   struct tp_diags *diags);
/*
 * tp_policy_load() for one run: the policy `bind` makes of the input in
 * *out, and in `envelope_digest` the digest of the input as written (what
 * `tether check` prints: one digest for every run of one envelope; NULL:
 * not wanted, and not computed).  A compiled policy cannot be bound: a
 * `workspace`, or a workspace path that still holds `${RUN_ID}`, is then an
 * error that says to run the envelope.
 */
int tp_policy_load_bound(const char *name, const char *data, size_t len,
			 const struct tp_run_binding *bind, struct tp_policy **out,
			 uint8_t envelope_digest[32], struct tp_diags *diags);
/* The same for the file at `path`, read as tp_policy_load_file() does. */
int tp_policy_load_file_bound(const char *path, const struct tp_run_binding *bind,
			      struct tp_policy **out, uint8_t envelope_digest[32],
			      struct tp_diags *diags);
#define TP_POLICY_MAX_BYTES (64u << 20)

/* ---- the binary form and the digest ------------------------------------ */

#define TP_FORMAT_MAGIC "TPOL"		/* 4 bytes */
/* 2: abstract_sockets; 3: environment, uid and gid always set (format 2 meant the
 * controller's ids when unset: such files are refused, recompile the envelope);
 * 4: the limit resources.disk_inodes. */
#define TP_FORMAT_VERSION 5u
/* sun_path holds 108 bytes; an abstract name is those after the leading NUL. */
#define TP_ABSTRACT_SOCKET_MAX TETHER_ABSTRACT_NAME_MAX

/* Policy -> canonical bytes (malloc'd). */
int tp_policy_encode(const struct tp_policy *policy, uint8_t **out, size_t *out_len);
/*
 * Bytes -> policy.  Strict: wrong magic, an unknown version, trailing bytes,
 * truncation, unsorted or duplicate entries, out-of-range values are -EINVAL
 * (with a one-line reason in `why`, which may be NULL), so decode(encode(p))
 * is p and every accepted input re-encodes to itself.
 */
int tp_policy_decode(const uint8_t *data, size_t len, struct tp_policy **out,
		     char *why, size_t why_len);
/* sha256 of the encoded policy. */
int tp_policy_digest(const struct tp_policy *policy, uint8_t digest[32]);
/* "sha256:" and 64 lower-case hex digits, NUL-terminated. */
#define TP_DIGEST_TEXT_MAX (7 + 64 + 1)
void tp_digest_text(const uint8_t digest[32], char out[TP_DIGEST_TEXT_MAX]);

/* ---- reports ----------------------------------------------------------- */

/*
 * The guarantee report: for each term of G = K ∧ P ∧ F ∧ N ∧ I ∧ R ∧ T ∧ C,
 * which fields of the policy it covers and which hook, cgroup limit or
 * runtime step enforces each, and the acknowledged gaps.
 */
int tp_report_write(const struct tp_policy *policy, FILE *out);
/* A short human summary: read, write, execute, reach, consume, leave behind. */
int tp_explain_write(const struct tp_policy *policy, FILE *out);

/*
 * Where one access right is granted, as the summary lists it under "may
 * read" and the like: a region is a rule that grants the right while its
 * nearest enclosing subtree rule does not, and its exceptions are the rules
 * beneath it that lack the right.  Regions and exceptions are in path
 * order; the rules are borrowed from the policy.
 */
struct tp_grant_region {
	const struct tp_path_rule *top;
	const struct tp_path_rule **except;
	size_t except_count;
};

struct tp_grant_regions {
	struct tp_grant_region *items;
	size_t count;
	const struct tp_path_rule **storage;	/* every region's exceptions */
};

/* `right` is one TETHER_ACCESS_* right.  0, -EINVAL or -ENOMEM. */
int tp_grant_regions(const struct tp_policy *policy, uint32_t right,
		     struct tp_grant_regions *out);
void tp_grant_regions_free(struct tp_grant_regions *regions);
/*
 * Every widening and narrowing of authority from `old` to `new`, widenings
 * first.  *widened is set when anything widened.
 */
int tp_diff_write(const struct tp_policy *old_policy, const struct tp_policy *new_policy,
		  FILE *out, bool *widened);

enum tp_change_kind {
	TP_CHANGE_WIDENED,
	TP_CHANGE_NARROWED,
	TP_CHANGE_CHANGED,	/* neither: metadata, DNS, a gap gone */
};

/* One line of tp_diff_write()'s output, without its "widened: " prefix. */
struct tp_change {
	enum tp_change_kind kind;
	char *text;
};

/*
 * The same comparison as data: the changes in tp_diff_write()'s order
 * (widenings, narrowings, then the others), each one line of text with
 * user text escaped as there.  *widened as for tp_diff_write().  Release
 * with tp_changes_free().  0 or -ENOMEM.
 */
int tp_diff_changes(const struct tp_policy *old_policy, const struct tp_policy *new_policy,
		    struct tp_change **changes, size_t *count, bool *widened);
void tp_changes_free(struct tp_change *changes, size_t count);

/* ---- the task contract ------------------------------------------------- */

/*
 * A task contract (seed 002, "Turn the Request Into a Task Contract"):
 * task_id, goal, workspace {repository, ref}, allowed_paths, network {allow},
 * forbidden, approvals, verification, deliverable.  Only allowed_paths,
 * network.allow and forbidden carry authority the sandbox can check.
 */
struct tp_contract;

int tp_contract_parse(const char *name, const char *data, size_t len,
		      struct tp_contract **out, struct tp_diags *diags);
int tp_contract_parse_file(const char *path, struct tp_contract **out, struct tp_diags *diags);
void tp_contract_free(struct tp_contract *contract);
/*
 * Checks that `env` grants no more than `contract`: every write the envelope
 * grants inside the workspace lies within allowed_paths, every write outside
 * it is reported, every destination lies within network.allow.  Problems are
 * diagnostics at the envelope's positions (file `env_name`) that name the
 * contract entry concerned.  Free-text `forbidden` items, which no sandbox can
 * see, are written to `notes` (may be NULL) one per line.  Returns 0 when the
 * envelope is within the contract, -EINVAL when not, -ENOMEM.
 */
int tp_contract_check(const struct tp_contract *contract, const char *env_name,
		      const struct tp_envelope *env, struct tp_diags *diags, FILE *notes);

/* ---- paths ------------------------------------------------------------- */

/*
 * The built-in protected set: paths no run may read, write or execute
 * unless its policy has a rule on that exact path (a grant on /etc does not
 * re-open /etc/shadow; a rule on /home/alice leaves the rest of /home
 * protected).  The runtime installs one rule per entry whose resolved path
 * no rule of the policy has, marked TETHER_ACCESS_PROTECTED; the compiler
 * never drops as redundant a rule that such an entry would otherwise decide
 * for.  NULL-terminated.
 */
extern const char *const tp_protected_paths[];

/*
 * Where `root: read_only` grants EXEC when the envelope has no exec list:
 * /usr, /bin, /sbin, /lib, /lib32, /lib64, /libx32, /opt.  NULL-terminated.
 */
extern const char *const tp_system_software_trees[];

/* Lexical normalisation of an absolute path: collapses "//" and ".", resolves
 * ".." lexically (never above "/"), strips a trailing "/".  Returns a malloc'd
 * string, or NULL with errno = EINVAL for relative or empty input. */
char *tp_path_normalize(const char *path);

#endif
