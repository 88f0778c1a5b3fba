// SPDX-License-Identifier: GPL-2.0
/*
 * tpol: the canonical binary form of a compiled policy, and its digest.
 *
 * The digest of a policy is the sha256 of these bytes, so the format must
 * have exactly one encoding per policy: the encoder refuses a struct that is
 * not canonical, and the decoder refuses every byte string the encoder could
 * not have written.  Hence decode(encode(p)) == p and every accepted input
 * re-encodes to itself byte for byte.  Decoded policies may come from disk or
 * from another process, so the decoder treats its input as hostile.
 *
 * Layout (all integers little-endian, written byte by byte):
 *
 *   header      "TPOL"  u16 version (5)  u16 reserved (0)  u32 total length
 *               (of everything, header included)
 *   sections    each: u16 id, u32 length of its body, body; all fourteen are
 *               present, in this order, and each body is consumed exactly:
 *
 *    1 identity    u32 mode, u32 flags, 32 bytes image_digest,
 *                  ostr runtime_revision, ostr tenant, ostr run_id, u32 uid, u32 gid
 *    2 workspace   str workspace, ostr workspace_source, ostr workspace_ref
 *                  (version 5), u32 workspace_mode, u32 lifetime
 *    3 path_rules  u32 n, n x { str path, u32 access, u32 kind }
 *    4 inputs      u32 n, n x { str path, u8 has_digest, 32 bytes digest }
 *    5 net_rules   u32 n, n x { 16 bytes addr, u8 prefixlen, u8 protocols,
 *                               u16 port_min, u16 port_max }
 *    6 host_rules  u32 n, n x { str name, u8 protocols, u16 port_min, u16 port_max }
 *    7 methods     u32 n, n x str
 *    8 dns         u32 n, n x { 16 bytes addr, u16 port }, u32 ttl_min_s, u32 ttl_max_s
 *    9 limits      TP_LIMIT_COUNT x u64 (0: not set), in enum tp_limit order
 *   10 artifacts   u32 n, n x str
 *   11 audit       ostr audit_sink
 *   12 gaps        u32 n, n x str
 *   13 abstract_sockets  u32 n, n x str  (version 2)
 *   14 environment u32 n, n x str  (version 3)
 *
 * Version 4 added resources.disk_inodes to the limits (one more u64);
 * version 5 workspace_ref.
 *
 * Version 3 also changed the meaning of uid and gid: they are the run's ids
 * (the compiler writes the defaults in), where version 2 had a flag for
 * each and left the run with the controller's ids without it.  A reader
 * knows one version and refuses the others.
 *
 *   str   u32 length, then the bytes (no NUL among them, no terminator)
 *   ostr  u8 present (0 or 1); when 1, a str follows.  NULL and "" differ.
 *   bool  u8, 0 or 1
 *
 * Positions (struct tp_pos) are not part of the policy and are not encoded.
 *
 * Canonical form, checked by both sides (policy_check()):
 *   - mode, workspace_mode, lifetime, path kinds are known enum values;
 *     flags and access masks have no unknown bits; protocols is 1..3;
 *     ports are 1..65535 with port_min <= port_max; prefixlen <= 128 and
 *     address bits below the prefix are zero; dns_ttl_min_s <= dns_ttl_max_s;
 *   - a value whose presence flag is clear is zero (image_digest without
 *     TP_POLICY_IMAGE_DIGEST, an input digest without has_digest);
 *   - uid and gid are at most TP_ID_MAX;
 *   - lists are strictly increasing in the order policy.h gives (so free of
 *     duplicates); dns upstreams keep their order but hold no duplicate;
 *   - strings: paths are normalised ("/" or "/a/b": no empty, "." or ".."
 *     component, no trailing '/'), absolute except artifacts (relative, ""
 *     for the workspace itself; "**" is an ordinary component here); path
 *     rules, inputs and the workspace at most 251 bytes (TETHER_PATH_KEY_MAX
 *     less the '/' the kernel key appends), workspace_source, artifacts and
 *     audit_sink at most 4095; the workspace is not "/"; host names
 *     lower-case DNS names of at most 253 bytes after an optional "*.";
 *     methods HTTP tokens without lower-case letters, at most 64 bytes; gaps
 *     an optional '@' then [a-z0-9_.], 1..128 bytes; runtime_revision,
 *     tenant and run_id any bytes but NUL, at most 253; abstract
 *     socket names any bytes but NUL, 1..107; environment names
 *     [A-Za-z_][A-Za-z0-9_]*, 1..128 bytes, at most 256 of them, none
 *     that tp_env_default_names covers or that tether sets itself.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policyc/policyc_internal.h"
#include "policyc/values.h"

#define TPOL_HEADER_BYTES 12
#define TPOL_SECTION_HEADER_BYTES 6

#define TPOL_PATH_MAX (TETHER_PATH_KEY_MAX - 1)	/* 251 */
#define TPOL_HOST_PATH_MAX 4095			/* PATH_MAX less the NUL */
#define TPOL_TEXT_MAX 253
#define TPOL_HOST_MAX 253			/* without a leading "*." */
#define TPOL_METHOD_MAX 64
#define TPOL_GAP_MAX 128

#define TPOL_KNOWN_FLAGS                                                            \
	(TP_POLICY_IMAGE_DIGEST |                                                   \
	 TP_POLICY_ARTIFACTS_SCAN | TP_POLICY_ARTIFACTS_HASH |                      \
	 TP_POLICY_REVOKE_CREDENTIALS | TP_POLICY_VERIFY_PROCESS_TREE |             \
	 TP_POLICY_AUDIT_FAIL_CLOSED | TP_POLICY_AUDIT_RECORD_ALLOWED |             \
	 TP_POLICY_TMP_EXEC)

enum tpol_section {
	TPOL_IDENTITY = 1,
	TPOL_WORKSPACE,
	TPOL_PATH_RULES,
	TPOL_INPUTS,
	TPOL_NET_RULES,
	TPOL_HOST_RULES,
	TPOL_METHODS,
	TPOL_DNS,
	TPOL_LIMITS,
	TPOL_ARTIFACTS,
	TPOL_AUDIT,
	TPOL_GAPS,
	TPOL_ABSTRACT_SOCKETS,
	TPOL_ENVIRONMENT,
	TPOL_SECTION_LAST = TPOL_ENVIRONMENT,
};

static const char *const tpol_section_names[TPOL_SECTION_LAST + 1] = {
	[TPOL_IDENTITY] = "identity",	[TPOL_WORKSPACE] = "workspace",
	[TPOL_PATH_RULES] = "path_rules", [TPOL_INPUTS] = "inputs",
	[TPOL_NET_RULES] = "net_rules",	[TPOL_HOST_RULES] = "host_rules",
	[TPOL_METHODS] = "methods",	[TPOL_DNS] = "dns",
	[TPOL_LIMITS] = "limits",	[TPOL_ARTIFACTS] = "artifacts",
	[TPOL_AUDIT] = "audit",		[TPOL_GAPS] = "gaps",
	[TPOL_ABSTRACT_SOCKETS] = "abstract_sockets",
	[TPOL_ENVIRONMENT] = "environment",
};

static int set_why(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_why(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- freeing ----------------------------------------------------------- */

static void free_strv(char **strv, size_t count)
{
	if (!strv)
		return;
	for (size_t i = 0; i < count; i++)
		free(strv[i]);
	free(strv);
}

/*
 * Accepts a partially built policy (the decoder's error paths hand one over):
 * every array whose pointer is set holds `count` entries, each NULL or owned.
 */
void tp_policy_free(struct tp_policy *policy)
{
	if (!policy)
		return;
	free(policy->runtime_revision);
	free(policy->tenant);
	free(policy->run_id);
	free(policy->workspace);
	free(policy->workspace_source);
	free(policy->workspace_ref);
	if (policy->path_rules)
		for (size_t i = 0; i < policy->path_rule_count; i++)
			free(policy->path_rules[i].path);
	free(policy->path_rules);
	if (policy->inputs)
		for (size_t i = 0; i < policy->input_count; i++)
			free(policy->inputs[i].path);
	free(policy->inputs);
	free(policy->net_rules);
	if (policy->host_rules)
		for (size_t i = 0; i < policy->host_rule_count; i++)
			free(policy->host_rules[i].name);
	free(policy->host_rules);
	free_strv(policy->methods, policy->method_count);
	free(policy->dns_upstreams);
	free_strv(policy->artifacts, policy->artifact_count);
	free(policy->audit_sink);
	free_strv(policy->gaps, policy->gap_count);
	free_strv(policy->abstract_sockets, policy->abstract_socket_count);
	free_strv(policy->env_names, policy->env_name_count);
	free(policy);
}

static void tp_policy_freep(struct tp_policy **policy)
{
	tp_policy_free(*policy);
}

/* ---- the canonical form ------------------------------------------------ */

/* "/" or "/a/b" (absolute), "" or "a/b" (relative): no empty, "." or ".." component. */
static bool path_normal(const char *path, bool absolute)
{
	const char *p = path;

	if (absolute) {
		if (p[0] != '/')
			return false;
		if (p[1] == '\0')
			return true;
		p++;
	} else {
		if (p[0] == '\0')
			return true;
	}
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (p[n] == '\0')
			return true;
		p += n + 1;
	}
}

/* Lower-case DNS name, labels 1..63 of [a-z0-9-] not starting or ending with '-'. */
static bool host_valid(const char *name)
{
	const char *p = name;
	size_t label = 0;

	if (p[0] == '*' && p[1] == '.')
		p += 2;
	if (p[0] == '\0' || strlen(p) > TPOL_HOST_MAX)
		return false;
	for (;; p++) {
		char c = *p;

		if (c == '.' || c == '\0') {
			if (label == 0 || p[-1] == '-')
				return false;
			if (c == '\0')
				return true;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
		if ((c == '-' && label == 0) || ++label > 63)
			return false;
	}
}

/* An HTTP method: an RFC 9110 token without lower-case letters. */
static bool method_valid(const char *method)
{
	size_t len = strlen(method);

	if (len == 0 || len > TPOL_METHOD_MAX)
		return false;
	for (const char *p = method; *p; p++) {
		char c = *p;

		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      (c && strchr("!#$%&'*+-.^_`|~", c))))
			return false;
	}
	return true;
}

/* A field name below "sandbox" ("network_egress.methods"), or a built-in ("@signals_ptrace"). */
static bool gap_valid(const char *gap)
{
	size_t len = strlen(gap);

	if (len == 0 || len > TPOL_GAP_MAX || strcmp(gap, "@") == 0)
		return false;
	for (const char *p = gap[0] == '@' ? gap + 1 : gap; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '.'))
			return false;
	return true;
}

static bool all_zero(const uint8_t *bytes, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (bytes[i])
			return false;
	return true;
}

/* Every address bit at or after `prefixlen` is zero. */
static bool host_bits_zero(const uint8_t addr[16], uint8_t prefixlen)
{
	for (unsigned int i = prefixlen / 8; i < 16; i++) {
		uint8_t mask = 0xff;

		if (i == prefixlen / 8u)
			mask = (uint8_t)(0xffu >> (prefixlen % 8));
		if (addr[i] & mask)
			return false;
	}
	return true;
}

static int compare_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int net_rule_compare(const struct tp_net_rule *a, const struct tp_net_rule *b)
{
	int c = memcmp(a->addr, b->addr, sizeof(a->addr));

	if (!c)
		c = compare_u32(a->prefixlen, b->prefixlen);
	if (!c)
		c = compare_u32(a->protocols, b->protocols);
	if (!c)
		c = compare_u32(a->port_min, b->port_min);
	if (!c)
		c = compare_u32(a->port_max, b->port_max);
	return c;
}

static int host_rule_compare(const struct tp_host_rule *a, const struct tp_host_rule *b)
{
	int c = strcmp(a->name, b->name);

	if (!c)
		c = compare_u32(a->protocols, b->protocols);
	if (!c)
		c = compare_u32(a->port_min, b->port_min);
	if (!c)
		c = compare_u32(a->port_max, b->port_max);
	return c;
}

static int endpoint_compare(const void *x, const void *y)
{
	const struct tp_endpoint *a = *(const struct tp_endpoint *const *)x;
	const struct tp_endpoint *b = *(const struct tp_endpoint *const *)y;
	int c = memcmp(a->addr, b->addr, sizeof(a->addr));

	return c ? c : compare_u32(a->port, b->port);
}

static int check_ports(const char *list, size_t i, uint8_t protocols, uint16_t port_min,
		       uint16_t port_max, char *why, size_t why_len)
{
	if (protocols == 0 || (protocols & ~TP_PROTO_ANY))
		return set_why(why, why_len, "%s[%zu]: protocols 0x%x is not 1..3", list, i,
			       protocols);
	if (port_min == 0 || port_min > port_max)
		return set_why(why, why_len, "%s[%zu]: port range %u-%u is not within 1..65535 "
			       "in increasing order", list, i, port_min, port_max);
	return 0;
}

/* A string field: present, within `max` bytes, and of the expected shape. */
enum string_shape {
	SHAPE_TEXT,		/* any bytes but NUL */
	SHAPE_ABSOLUTE,		/* normalised absolute path */
	SHAPE_RELATIVE,		/* normalised relative path */
	SHAPE_HOST,
	SHAPE_METHOD,
	SHAPE_GAP,
	SHAPE_ENV_NAME,		/* tp_env_name_valid() */
};

static int check_string(const char *what, size_t i, const char *s, size_t max,
			enum string_shape shape, char *why, size_t why_len)
{
	char excerpt[TP_EXCERPT_MAX];
	char label[64];
	size_t len;
	bool ok = true;

	if (i == SIZE_MAX)
		snprintf(label, sizeof(label), "%s", what);
	else
		snprintf(label, sizeof(label), "%s[%zu]", what, i);
	if (!s)
		return set_why(why, why_len, "%s is missing", label);
	len = strlen(s);
	if (len > max)
		return set_why(why, why_len, "%s is %zu bytes long, more than %zu", label, len,
			       max);
	switch (shape) {
	case SHAPE_TEXT:
		break;
	case SHAPE_ABSOLUTE:
	case SHAPE_RELATIVE:
		ok = path_normal(s, shape == SHAPE_ABSOLUTE);
		break;
	case SHAPE_HOST:
		ok = host_valid(s);
		break;
	case SHAPE_METHOD:
		ok = method_valid(s);
		break;
	case SHAPE_GAP:
		ok = gap_valid(s);
		break;
	case SHAPE_ENV_NAME:
		ok = tp_env_name_valid(s);
		break;
	}
	if (!ok) {
		static const char *const shape_names[] = {
			[SHAPE_TEXT] = "text",
			[SHAPE_ABSOLUTE] = "a normalised absolute path",
			[SHAPE_RELATIVE] = "a normalised relative path",
			[SHAPE_HOST] = "a lower-case host name",
			[SHAPE_METHOD] = "an upper-case HTTP method",
			[SHAPE_GAP] = "a field name",
			[SHAPE_ENV_NAME] = "an environment variable name",
		};

		return set_why(why, why_len, "%s '%s' is not %s", label,
			       tp_excerpt(excerpt, s, len), shape_names[shape]);
	}
	return 0;
}

static int check_optional(const char *what, const char *s, size_t max, enum string_shape shape,
			  char *why, size_t why_len)
{
	return s ? check_string(what, SIZE_MAX, s, max, shape, why, why_len) : 0;
}

static int check_list(const char *what, const void *items, size_t count, char *why,
		      size_t why_len)
{
	if (count > UINT32_MAX)
		return set_why(why, why_len, "%s has %zu entries, more than the format holds",
			       what, count);
	if (count && !items)
		return set_why(why, why_len, "%s has %zu entries but no array", what, count);
	return 0;
}

static int not_increasing(const char *what, size_t i, char *why, size_t why_len)
{
	return set_why(why, why_len, "%s[%zu] is not after %s[%zu]: the list must be sorted "
		       "and free of duplicates", what, i, what, i - 1);
}

static int check_strv(const char *what, char *const *strv, size_t count, size_t max,
		      enum string_shape shape, char *why, size_t why_len)
{
	int r = check_list(what, strv, count, why, why_len);

	for (size_t i = 0; !r && i < count; i++) {
		r = check_string(what, i, strv[i], max, shape, why, why_len);
		if (!r && i > 0 && strcmp(strv[i - 1], strv[i]) >= 0)
			r = not_increasing(what, i, why, why_len);
	}
	return r;
}

static int check_identity(const struct tp_policy *p, char *why, size_t why_len)
{
	int r;

	if (p->mode > TP_MODE_AUDIT)
		return set_why(why, why_len, "mode %u is unknown", p->mode);
	if (p->flags & ~(uint32_t)TPOL_KNOWN_FLAGS)
		return set_why(why, why_len, "flags 0x%x has unknown bits 0x%x", p->flags,
			       p->flags & ~(uint32_t)TPOL_KNOWN_FLAGS);
	if (!(p->flags & TP_POLICY_IMAGE_DIGEST) && !all_zero(p->image_digest, 32))
		return set_why(why, why_len, "image_digest is set without the image digest flag");
	if (p->uid > TP_ID_MAX)
		return set_why(why, why_len, "uid %u is (uid_t)-1, not an id", p->uid);
	if (p->gid > TP_ID_MAX)
		return set_why(why, why_len, "gid %u is (gid_t)-1, not an id", p->gid);
	r = check_optional("runtime_revision", p->runtime_revision, TPOL_TEXT_MAX, SHAPE_TEXT,
			   why, why_len);
	if (!r)
		r = check_optional("tenant", p->tenant, TPOL_TEXT_MAX, SHAPE_TEXT, why, why_len);
	if (!r)
		r = check_optional("run_id", p->run_id, TPOL_TEXT_MAX, SHAPE_TEXT, why, why_len);
	return r;
}

static int check_workspace(const struct tp_policy *p, char *why, size_t why_len)
{
	int r;

	r = check_string("workspace", SIZE_MAX, p->workspace, TPOL_PATH_MAX, SHAPE_ABSOLUTE,
			 why, why_len);
	if (r)
		return r;
	/* A one_run workspace is deleted at the end: never let that be "/". */
	if (strcmp(p->workspace, "/") == 0)
		return set_why(why, why_len, "workspace is '/'");
	r = check_optional("workspace_source", p->workspace_source, TPOL_HOST_PATH_MAX,
			   SHAPE_ABSOLUTE, why, why_len);
	if (r)
		return r;
	if (p->workspace_mode > TP_WORKSPACE_FRESH_OVERLAY)
		return set_why(why, why_len, "workspace_mode %u is unknown", p->workspace_mode);
	if (p->workspace_ref) {
		size_t n = strlen(p->workspace_ref);

		if ((n != 40 && n != 64) || strspn(p->workspace_ref, "0123456789abcdef") != n)
			return set_why(why, why_len, "workspace_ref is not 40 or 64 lower-case "
				       "hex digits");
		if (!p->workspace_source || p->workspace_mode != TP_WORKSPACE_FRESH_OVERLAY)
			return set_why(why, why_len, "workspace_ref without a fresh_overlay "
				       "source");
	}
	if (p->lifetime > TP_LIFETIME_ONE_RUN)
		return set_why(why, why_len, "lifetime %u is unknown", p->lifetime);
	return 0;
}

static int check_paths(const struct tp_policy *p, char *why, size_t why_len)
{
	int r;

	r = check_list("path_rules", p->path_rules, p->path_rule_count, why, why_len);
	for (size_t i = 0; !r && i < p->path_rule_count; i++) {
		const struct tp_path_rule *rule = &p->path_rules[i];

		r = check_string("path_rules", i, rule->path, TPOL_PATH_MAX, SHAPE_ABSOLUTE, why,
				 why_len);
		if (r)
			break;
		if (rule->access & ~(uint32_t)TETHER_ACCESS_ALL)
			return set_why(why, why_len,
				       "path_rules[%zu]: access 0x%x has unknown bits", i,
				       rule->access);
		if (rule->kind > TP_PATH_SUBTREE)
			return set_why(why, why_len, "path_rules[%zu]: kind %u is unknown", i,
				       rule->kind);
		if (i > 0 && strcmp(p->path_rules[i - 1].path, rule->path) >= 0)
			return not_increasing("path_rules", i, why, why_len);
	}
	if (r)
		return r;

	r = check_list("inputs", p->inputs, p->input_count, why, why_len);
	for (size_t i = 0; !r && i < p->input_count; i++) {
		const struct tp_input *input = &p->inputs[i];

		r = check_string("inputs", i, input->path, TPOL_PATH_MAX, SHAPE_ABSOLUTE, why,
				 why_len);
		if (r)
			break;
		if (!input->has_digest && !all_zero(input->digest, 32))
			return set_why(why, why_len, "inputs[%zu]: digest set without has_digest",
				       i);
		if (i > 0 && strcmp(p->inputs[i - 1].path, input->path) >= 0)
			return not_increasing("inputs", i, why, why_len);
	}
	if (r)
		return r;

	r = check_strv("artifacts", p->artifacts, p->artifact_count, TPOL_HOST_PATH_MAX,
		       SHAPE_RELATIVE, why, why_len);
	if (!r)
		r = check_optional("audit_sink", p->audit_sink, TPOL_HOST_PATH_MAX, SHAPE_ABSOLUTE,
				   why, why_len);
	return r;
}

static int check_network(const struct tp_policy *p, char *why, size_t why_len)
{
	_cleanup_free_ const struct tp_endpoint **sorted = NULL;
	int r;

	r = check_list("net_rules", p->net_rules, p->net_rule_count, why, why_len);
	for (size_t i = 0; !r && i < p->net_rule_count; i++) {
		const struct tp_net_rule *rule = &p->net_rules[i];

		if (rule->prefixlen > 128)
			return set_why(why, why_len, "net_rules[%zu]: prefix length %u exceeds 128",
				       i, rule->prefixlen);
		if (!host_bits_zero(rule->addr, rule->prefixlen))
			return set_why(why, why_len, "net_rules[%zu]: address bits are set below "
				       "prefix length %u", i, rule->prefixlen);
		r = check_ports("net_rules", i, rule->protocols, rule->port_min, rule->port_max,
				why, why_len);
		if (!r && i > 0 && net_rule_compare(&p->net_rules[i - 1], rule) >= 0)
			r = not_increasing("net_rules", i, why, why_len);
	}
	if (r)
		return r;

	r = check_list("host_rules", p->host_rules, p->host_rule_count, why, why_len);
	for (size_t i = 0; !r && i < p->host_rule_count; i++) {
		const struct tp_host_rule *rule = &p->host_rules[i];

		r = check_string("host_rules", i, rule->name, TPOL_HOST_MAX + 2, SHAPE_HOST, why,
				 why_len);
		if (!r)
			r = check_ports("host_rules", i, rule->protocols, rule->port_min,
					rule->port_max, why, why_len);
		if (!r && i > 0 && host_rule_compare(&p->host_rules[i - 1], rule) >= 0)
			r = not_increasing("host_rules", i, why, why_len);
	}
	if (r)
		return r;

	r = check_strv("methods", p->methods, p->method_count, TPOL_METHOD_MAX, SHAPE_METHOD,
		       why, why_len);
	if (r)
		return r;
	r = check_strv("abstract_sockets", p->abstract_sockets, p->abstract_socket_count,
		       TP_ABSTRACT_SOCKET_MAX, SHAPE_TEXT, why, why_len);
	for (size_t i = 0; !r && i < p->abstract_socket_count; i++)
		if (!p->abstract_sockets[i][0])
			r = set_why(why, why_len, "abstract_sockets[%zu] is empty", i);
	if (r)
		return r;

	if (p->dns_ttl_min_s > p->dns_ttl_max_s)
		return set_why(why, why_len, "dns ttl minimum %u exceeds the maximum %u",
			       p->dns_ttl_min_s, p->dns_ttl_max_s);
	r = check_list("dns_upstreams", p->dns_upstreams, p->dns_upstream_count, why, why_len);
	if (r || p->dns_upstream_count == 0)
		return r;
	/*
	 * Upstreams keep the order they were written in, so duplicates are found
	 * on a sorted copy of pointers: O(n log n) even for a hostile count.
	 */
	sorted = calloc(p->dns_upstream_count, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < p->dns_upstream_count; i++) {
		if (p->dns_upstreams[i].port == 0)
			return set_why(why, why_len, "dns_upstreams[%zu]: port 0", i);
		sorted[i] = &p->dns_upstreams[i];
	}
	qsort(sorted, p->dns_upstream_count, sizeof(*sorted), endpoint_compare);
	for (size_t i = 1; i < p->dns_upstream_count; i++)
		if (endpoint_compare(&sorted[i - 1], &sorted[i]) == 0)
			return set_why(why, why_len, "dns_upstreams[%zu] is listed twice",
				       (size_t)(sorted[i] - p->dns_upstreams));
	return 0;
}

static int check_environment(const struct tp_policy *p, char *why, size_t why_len)
{
	int r;

	if (p->env_name_count > TP_ENV_NAMES_MAX)
		return set_why(why, why_len, "environment has %zu names, more than %d",
			       p->env_name_count, TP_ENV_NAMES_MAX);
	r = check_strv("environment", p->env_names, p->env_name_count, TP_ENV_NAME_MAX,
		       SHAPE_ENV_NAME, why, why_len);
	for (size_t i = 0; !r && i < p->env_name_count; i++) {
		const char *name = p->env_names[i];

		/* Listing a default changes nothing: one encoding per meaning. */
		if (tp_env_name_is_default(name))
			return set_why(why, why_len, "environment[%zu] '%s' is passed by default",
				       i, name);
		for (const char *const *n = tp_env_reserved_names; *n; n++)
			if (strcmp(*n, name) == 0)
				return set_why(why, why_len, "environment[%zu] '%s' is set by "
					       "tether", i, name);
	}
	return r;
}

/*
 * The one definition of "canonical", used by the encoder (which refuses) and
 * by the decoder (on what it decoded), so neither accepts what the other
 * would not.  Returns 0, -EINVAL with a reason, or -ENOMEM.
 */
static int policy_check(const struct tp_policy *p, char *why, size_t why_len)
{
	int r;

	r = check_identity(p, why, why_len);
	if (!r)
		r = check_workspace(p, why, why_len);
	if (!r)
		r = check_paths(p, why, why_len);
	if (!r)
		r = check_network(p, why, why_len);
	if (!r)
		r = check_strv("gaps", p->gaps, p->gap_count, TPOL_GAP_MAX, SHAPE_GAP, why,
			       why_len);
	if (!r)
		r = check_environment(p, why, why_len);
	return r;
}

/* ---- writing and reading bytes ----------------------------------------- */

/*
 * Both sides keep their first error and turn every later call into a no-op,
 * so a section reads as its layout, one call per field, and is checked once.
 */
struct writer {
	uint8_t *data;
	size_t len, cap;
	int error;		/* the first failure: -ENOMEM or -E2BIG */
};

static void put_bytes(struct writer *w, const void *src, size_t n)
{
	if (w->error || n == 0)
		return;
	/* The header's u32 total length bounds the whole encoding. */
	if (n > UINT32_MAX - w->len) {
		w->error = -E2BIG;
		return;
	}
	if (n > w->cap - w->len) {
		size_t cap = w->cap ? w->cap : 512;
		uint8_t *data;

		while (cap - w->len < n)
			cap *= 2;
		data = realloc(w->data, cap);
		if (!data) {
			w->error = -ENOMEM;
			return;
		}
		w->data = data;
		w->cap = cap;
	}
	memcpy(w->data + w->len, src, n);
	w->len += n;
}

static void store_le(uint8_t *b, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t load_le(const uint8_t *b, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--)
		v = v << 8 | b[i - 1];
	return v;
}

/* An n-byte little-endian integer, n <= 8. */
static void put_le(struct writer *w, uint64_t v, size_t n)
{
	uint8_t b[8];

	store_le(b, v, n);
	put_bytes(w, b, n);
}

static void put_u8(struct writer *w, uint8_t v)
{
	put_le(w, v, 1);
}

static void put_u16(struct writer *w, uint16_t v)
{
	put_le(w, v, 2);
}

static void put_u32(struct writer *w, uint32_t v)
{
	put_le(w, v, 4);
}

static void put_u64(struct writer *w, uint64_t v)
{
	put_le(w, v, 8);
}

/* Lengths were checked by policy_check(): every string is far below 4 GiB. */
static void put_str(struct writer *w, const char *s)
{
	size_t len = strlen(s);

	put_u32(w, (uint32_t)len);
	put_bytes(w, s, len);
}

static void put_ostr(struct writer *w, const char *s)
{
	put_u8(w, s ? 1 : 0);
	if (s)
		put_str(w, s);
}

struct reader {
	const uint8_t *data;
	size_t len;		/* of the whole input */
	size_t pos;
	size_t end;		/* of the current section's body */
	const char *section;
	char *why;
	size_t why_len;
	int error;		/* the first failure: -EINVAL (with a reason) or -ENOMEM */
};

static int fail(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * "byte 40: section path_rules: ...": where, in which section, and what.
 * Only the first failure is recorded; it is the one that explains the input.
 */
static int fail(struct reader *rd, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (rd->error)
		return rd->error;
	rd->error = -EINVAL;
	if (!rd->why || !rd->why_len)
		return -EINVAL;
	n = snprintf(rd->why, rd->why_len, "byte %zu: section %s: ", rd->pos, rd->section);
	if (n >= 0 && (size_t)n < rd->why_len) {
		va_start(ap, fmt);
		vsnprintf(rd->why + n, rd->why_len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * Whether `n` more bytes are in the section; records a failure when not.
 * `what` and `index` (SIZE_MAX: none) name the field in messages.
 */
static bool need(struct reader *rd, size_t n, const char *what, size_t index)
{
	if (rd->error)
		return false;
	if (n <= rd->end - rd->pos)
		return true;
	if (index == SIZE_MAX)
		fail(rd, "truncated in %s (%zu bytes needed, %zu left)", what, n,
		     rd->end - rd->pos);
	else
		fail(rd, "truncated in %s[%zu] (%zu bytes needed, %zu left)", what, index, n,
		     rd->end - rd->pos);
	return false;
}

/* The next `n` bytes, consumed; NULL once the reader has failed. */
static const uint8_t *take(struct reader *rd, size_t n, const char *what, size_t index)
{
	const uint8_t *bytes;

	if (!need(rd, n, what, index))
		return NULL;
	bytes = rd->data + rd->pos;
	rd->pos += n;
	return bytes;
}

/* The getters write their output only on success: fields stay zeroed otherwise. */
static void get_bytes(struct reader *rd, void *dst, size_t n, const char *what, size_t index)
{
	const uint8_t *b = take(rd, n, what, index);

	if (b)
		memcpy(dst, b, n);
}

static void get_u8(struct reader *rd, uint8_t *v, const char *what, size_t index)
{
	const uint8_t *b = take(rd, 1, what, index);

	if (b)
		*v = b[0];
}

static void get_bool(struct reader *rd, bool *v, const char *what, size_t index)
{
	const uint8_t *b = take(rd, 1, what, index);

	if (!b)
		return;
	if (b[0] > 1) {
		rd->pos--;
		fail(rd, "%s: %u is not a boolean (0 or 1)", what, b[0]);
		return;
	}
	*v = b[0];
}

static void get_u16(struct reader *rd, uint16_t *v, const char *what, size_t index)
{
	const uint8_t *b = take(rd, 2, what, index);

	if (b)
		*v = (uint16_t)load_le(b, 2);
}

static void get_u32(struct reader *rd, uint32_t *v, const char *what, size_t index)
{
	const uint8_t *b = take(rd, 4, what, index);

	if (b)
		*v = (uint32_t)load_le(b, 4);
}

static void get_u64(struct reader *rd, uint64_t *v, const char *what, size_t index)
{
	const uint8_t *b = take(rd, 8, what, index);

	if (b)
		*v = load_le(b, 8);
}

/*
 * A str of at most `max` bytes, NUL-free.  The length is checked against
 * `max` and the bytes left before anything is allocated.
 */
static void get_str(struct reader *rd, char **out, size_t max, const char *what, size_t index)
{
	uint32_t len = 0;
	char *s;

	get_u32(rd, &len, what, index);
	if (rd->error)
		return;
	if (len > max) {
		rd->pos -= 4;
		fail(rd, "%s: length %u exceeds %zu", what, len, max);
		return;
	}
	if (!need(rd, len, what, index))
		return;
	if (memchr(rd->data + rd->pos, '\0', len)) {
		fail(rd, "%s: contains a NUL byte", what);
		return;
	}
	s = malloc((size_t)len + 1);
	if (!s) {
		rd->error = -ENOMEM;
		return;
	}
	memcpy(s, rd->data + rd->pos, len);
	s[len] = '\0';
	rd->pos += len;
	*out = s;
}

static void get_ostr(struct reader *rd, char **out, size_t max, const char *what)
{
	bool present = false;

	get_bool(rd, &present, what, SIZE_MAX);
	if (present)
		get_str(rd, out, max, what, SIZE_MAX);
}

/* ---- lists ------------------------------------------------------------- */

/*
 * A list is a u32 count and that many entries of one record type, which
 * `put` and `get` write and read.  `min_bytes`, the smallest encoding of one
 * entry, caps a decoded count by the bytes left before anything is
 * allocated, so a forged count cannot make us allocate more than a small
 * multiple of the input's size.
 */
struct list_format {
	const char *what;		/* the list's name in messages: "path_rules[3]" */
	size_t item_size;		/* of one entry in memory */
	size_t min_bytes;
	size_t str_max;			/* the longest str an entry holds */
	void (*put)(struct writer *w, const void *item);
	void (*get)(struct reader *rd, void *item, const struct list_format *list, size_t i);
};

#define TPOL_STR_MIN 4

static void put_list(struct writer *w, const struct list_format *list, const void *items,
		     size_t count)
{
	put_u32(w, (uint32_t)count);
	for (size_t i = 0; !w->error && i < count; i++)
		list->put(w, (const uint8_t *)items + i * list->item_size);
}

/*
 * Returns the zeroed array and sets *count once it is allocated, so that on
 * failure tp_policy_free() releases the entries read so far.
 */
static void *get_list(struct reader *rd, const struct list_format *list, size_t *count)
{
	uint8_t *items = NULL;
	uint32_t n = 0;

	get_u32(rd, &n, list->what, SIZE_MAX);
	if (rd->error || n == 0)
		return NULL;
	if (n > (rd->end - rd->pos) / list->min_bytes) {
		fail(rd, "%s: %u entries cannot fit in the %zu bytes left", list->what, n,
		     rd->end - rd->pos);
		return NULL;
	}
	items = calloc(n, list->item_size);
	if (!items) {
		rd->error = -ENOMEM;
		return NULL;
	}
	*count = n;
	for (size_t i = 0; !rd->error && i < n; i++)
		list->get(rd, items + i * list->item_size, list, i);
	return items;
}

/* path_rules: { str path, u32 access, u32 kind } */
static void put_path_rule(struct writer *w, const void *item)
{
	const struct tp_path_rule *rule = item;

	put_str(w, rule->path);
	put_u32(w, rule->access);
	put_u32(w, rule->kind);
}

static void get_path_rule(struct reader *rd, void *item, const struct list_format *list,
			  size_t i)
{
	struct tp_path_rule *rule = item;

	get_str(rd, &rule->path, list->str_max, list->what, i);
	get_u32(rd, &rule->access, list->what, i);
	get_u32(rd, &rule->kind, list->what, i);
}

static const struct list_format path_rule_list = {
	"path_rules", sizeof(struct tp_path_rule), TPOL_STR_MIN + 4 + 4, TPOL_PATH_MAX,
	put_path_rule, get_path_rule,
};

/* inputs: { str path, bool has_digest, 32 bytes digest } */
static void put_input(struct writer *w, const void *item)
{
	const struct tp_input *input = item;

	put_str(w, input->path);
	put_u8(w, input->has_digest ? 1 : 0);
	put_bytes(w, input->digest, sizeof(input->digest));
}

static void get_input(struct reader *rd, void *item, const struct list_format *list, size_t i)
{
	struct tp_input *input = item;

	get_str(rd, &input->path, list->str_max, list->what, i);
	get_bool(rd, &input->has_digest, list->what, i);
	get_bytes(rd, input->digest, sizeof(input->digest), list->what, i);
}

static const struct list_format input_list = {
	"inputs", sizeof(struct tp_input), TPOL_STR_MIN + 1 + 32, TPOL_PATH_MAX,
	put_input, get_input,
};

/* The tail of net and host rules: u8 protocols, u16 port_min, u16 port_max. */
static void put_ports(struct writer *w, uint8_t protocols, uint16_t port_min, uint16_t port_max)
{
	put_u8(w, protocols);
	put_u16(w, port_min);
	put_u16(w, port_max);
}

static void get_ports(struct reader *rd, uint8_t *protocols, uint16_t *port_min,
		      uint16_t *port_max, const char *what, size_t i)
{
	get_u8(rd, protocols, what, i);
	get_u16(rd, port_min, what, i);
	get_u16(rd, port_max, what, i);
}

/* net_rules: { 16 bytes addr, u8 prefixlen, u8 protocols, u16 port_min, u16 port_max } */
static void put_net_rule(struct writer *w, const void *item)
{
	const struct tp_net_rule *rule = item;

	put_bytes(w, rule->addr, sizeof(rule->addr));
	put_u8(w, rule->prefixlen);
	put_ports(w, rule->protocols, rule->port_min, rule->port_max);
}

static void get_net_rule(struct reader *rd, void *item, const struct list_format *list,
			 size_t i)
{
	struct tp_net_rule *rule = item;

	get_bytes(rd, rule->addr, sizeof(rule->addr), list->what, i);
	get_u8(rd, &rule->prefixlen, list->what, i);
	get_ports(rd, &rule->protocols, &rule->port_min, &rule->port_max, list->what, i);
}

static const struct list_format net_rule_list = {
	"net_rules", sizeof(struct tp_net_rule), 16 + 1 + 1 + 2 + 2, 0,
	put_net_rule, get_net_rule,
};

/* host_rules: { str name, u8 protocols, u16 port_min, u16 port_max } */
static void put_host_rule(struct writer *w, const void *item)
{
	const struct tp_host_rule *rule = item;

	put_str(w, rule->name);
	put_ports(w, rule->protocols, rule->port_min, rule->port_max);
}

static void get_host_rule(struct reader *rd, void *item, const struct list_format *list,
			  size_t i)
{
	struct tp_host_rule *rule = item;

	get_str(rd, &rule->name, list->str_max, list->what, i);
	get_ports(rd, &rule->protocols, &rule->port_min, &rule->port_max, list->what, i);
}

static const struct list_format host_rule_list = {
	"host_rules", sizeof(struct tp_host_rule), TPOL_STR_MIN + 1 + 2 + 2, TPOL_HOST_MAX + 2,
	put_host_rule, get_host_rule,
};

/* dns upstreams: { 16 bytes addr, u16 port } */
static void put_endpoint(struct writer *w, const void *item)
{
	const struct tp_endpoint *endpoint = item;

	put_bytes(w, endpoint->addr, sizeof(endpoint->addr));
	put_u16(w, endpoint->port);
}

static void get_endpoint(struct reader *rd, void *item, const struct list_format *list,
			 size_t i)
{
	struct tp_endpoint *endpoint = item;

	get_bytes(rd, endpoint->addr, sizeof(endpoint->addr), list->what, i);
	get_u16(rd, &endpoint->port, list->what, i);
}

static const struct list_format dns_upstream_list = {
	"dns_upstreams", sizeof(struct tp_endpoint), 16 + 2, 0, put_endpoint, get_endpoint,
};

/* methods, artifacts, gaps: str */
static void put_str_item(struct writer *w, const void *item)
{
	put_str(w, *(char *const *)item);
}

static void get_str_item(struct reader *rd, void *item, const struct list_format *list,
			 size_t i)
{
	get_str(rd, item, list->str_max, list->what, i);
}

static const struct list_format method_list = {
	"methods", sizeof(char *), TPOL_STR_MIN, TPOL_METHOD_MAX, put_str_item, get_str_item,
};

static const struct list_format artifact_list = {
	"artifacts", sizeof(char *), TPOL_STR_MIN, TPOL_HOST_PATH_MAX, put_str_item, get_str_item,
};

static const struct list_format gap_list = {
	"gaps", sizeof(char *), TPOL_STR_MIN, TPOL_GAP_MAX, put_str_item, get_str_item,
};

static const struct list_format abstract_socket_list = {
	"abstract_sockets", sizeof(char *), TPOL_STR_MIN, TP_ABSTRACT_SOCKET_MAX, put_str_item,
	get_str_item,
};

static const struct list_format env_name_list = {
	"environment", sizeof(char *), TPOL_STR_MIN, TP_ENV_NAME_MAX, put_str_item, get_str_item,
};

/* ---- encoding ---------------------------------------------------------- */

/* Writes the section header; the length is filled in by section_end(). */
static size_t section_begin(struct writer *w, enum tpol_section id)
{
	size_t start = w->len;

	put_u16(w, (uint16_t)id);
	put_u32(w, 0);
	return start;
}

static void section_end(struct writer *w, size_t start)
{
	if (!w->error)
		store_le(w->data + start + 2, w->len - start - TPOL_SECTION_HEADER_BYTES, 4);
}

/* A section whose body is one list. */
static void put_list_section(struct writer *w, enum tpol_section id,
			     const struct list_format *list, const void *items, size_t count)
{
	size_t s = section_begin(w, id);

	put_list(w, list, items, count);
	section_end(w, s);
}

/* The layout, field by field; decode_sections() mirrors it line for line. */
static void encode_sections(struct writer *w, const struct tp_policy *p)
{
	size_t s;

	s = section_begin(w, TPOL_IDENTITY);
	put_u32(w, p->mode);
	put_u32(w, p->flags);
	put_bytes(w, p->image_digest, sizeof(p->image_digest));
	put_ostr(w, p->runtime_revision);
	put_ostr(w, p->tenant);
	put_ostr(w, p->run_id);
	put_u32(w, p->uid);
	put_u32(w, p->gid);
	section_end(w, s);

	s = section_begin(w, TPOL_WORKSPACE);
	put_str(w, p->workspace);
	put_ostr(w, p->workspace_source);
	put_ostr(w, p->workspace_ref);
	put_u32(w, p->workspace_mode);
	put_u32(w, p->lifetime);
	section_end(w, s);

	put_list_section(w, TPOL_PATH_RULES, &path_rule_list, p->path_rules, p->path_rule_count);
	put_list_section(w, TPOL_INPUTS, &input_list, p->inputs, p->input_count);
	put_list_section(w, TPOL_NET_RULES, &net_rule_list, p->net_rules, p->net_rule_count);
	put_list_section(w, TPOL_HOST_RULES, &host_rule_list, p->host_rules, p->host_rule_count);
	put_list_section(w, TPOL_METHODS, &method_list, p->methods, p->method_count);

	s = section_begin(w, TPOL_DNS);
	put_list(w, &dns_upstream_list, p->dns_upstreams, p->dns_upstream_count);
	put_u32(w, p->dns_ttl_min_s);
	put_u32(w, p->dns_ttl_max_s);
	section_end(w, s);

	s = section_begin(w, TPOL_LIMITS);
	for (size_t i = 0; i < TP_LIMIT_COUNT; i++)
		put_u64(w, p->limits[i]);
	section_end(w, s);

	put_list_section(w, TPOL_ARTIFACTS, &artifact_list, p->artifacts, p->artifact_count);

	s = section_begin(w, TPOL_AUDIT);
	put_ostr(w, p->audit_sink);
	section_end(w, s);

	put_list_section(w, TPOL_GAPS, &gap_list, p->gaps, p->gap_count);
	put_list_section(w, TPOL_ABSTRACT_SOCKETS, &abstract_socket_list, p->abstract_sockets,
			 p->abstract_socket_count);
	put_list_section(w, TPOL_ENVIRONMENT, &env_name_list, p->env_names, p->env_name_count);
}

int tp_policy_encode(const struct tp_policy *policy, uint8_t **out, size_t *out_len)
{
	_cleanup_free_ uint8_t *data = NULL;
	struct writer w = { 0 };
	int r;

	if (!policy || !out || !out_len)
		return -EINVAL;
	r = policy_check(policy, NULL, 0);
	if (r)
		return r;

	put_bytes(&w, TP_FORMAT_MAGIC, 4);
	put_u16(&w, TP_FORMAT_VERSION);
	put_u16(&w, 0);
	put_u32(&w, 0);		/* total length, filled in below */
	encode_sections(&w, policy);
	data = w.data;
	if (w.error)
		return w.error;
	store_le(data + 8, w.len, 4);

	*out = TAKE_PTR(data);
	*out_len = w.len;
	return 0;
}

/* ---- decoding ---------------------------------------------------------- */

/* Reads section `id`'s header and bounds the reader to its body. */
static void section_enter(struct reader *rd, enum tpol_section id)
{
	uint16_t found = 0;
	uint32_t body = 0;

	if (rd->error)
		return;
	rd->end = rd->len;
	rd->section = tpol_section_names[id];
	if (rd->len - rd->pos < TPOL_SECTION_HEADER_BYTES) {
		fail(rd, "truncated: the section header is missing");
		return;
	}
	get_u16(rd, &found, "section id", SIZE_MAX);
	get_u32(rd, &body, "section length", SIZE_MAX);
	if (found != id) {
		rd->pos -= TPOL_SECTION_HEADER_BYTES;
		fail(rd, "found section id %u where section %u was expected", found,
		     (unsigned int)id);
		return;
	}
	if (body > rd->len - rd->pos) {
		fail(rd, "declares %u bytes, only %zu left", body, rd->len - rd->pos);
		return;
	}
	rd->end = rd->pos + body;
}

/* Each section's body is consumed exactly. */
static void section_leave(struct reader *rd)
{
	if (!rd->error && rd->pos != rd->end)
		fail(rd, "%zu unused bytes at the end of the section", rd->end - rd->pos);
}

static void *get_list_section(struct reader *rd, enum tpol_section id,
			      const struct list_format *list, size_t *count)
{
	void *items;

	section_enter(rd, id);
	items = get_list(rd, list, count);
	section_leave(rd);
	return items;
}

/*
 * encode_sections(), read back.  After the first failure every call is a
 * no-op; what was allocated by then hangs off `p`, for tp_policy_free().
 */
static void decode_sections(struct reader *rd, struct tp_policy *p)
{
	section_enter(rd, TPOL_IDENTITY);
	get_u32(rd, &p->mode, "mode", SIZE_MAX);
	get_u32(rd, &p->flags, "flags", SIZE_MAX);
	get_bytes(rd, p->image_digest, sizeof(p->image_digest), "image_digest", SIZE_MAX);
	get_ostr(rd, &p->runtime_revision, TPOL_TEXT_MAX, "runtime_revision");
	get_ostr(rd, &p->tenant, TPOL_TEXT_MAX, "tenant");
	get_ostr(rd, &p->run_id, TPOL_TEXT_MAX, "run_id");
	get_u32(rd, &p->uid, "uid", SIZE_MAX);
	get_u32(rd, &p->gid, "gid", SIZE_MAX);
	section_leave(rd);

	section_enter(rd, TPOL_WORKSPACE);
	get_str(rd, &p->workspace, TPOL_PATH_MAX, "workspace", SIZE_MAX);
	get_ostr(rd, &p->workspace_source, TPOL_HOST_PATH_MAX, "workspace_source");
	get_ostr(rd, &p->workspace_ref, 64, "workspace_ref");
	get_u32(rd, &p->workspace_mode, "workspace_mode", SIZE_MAX);
	get_u32(rd, &p->lifetime, "lifetime", SIZE_MAX);
	section_leave(rd);

	p->path_rules = get_list_section(rd, TPOL_PATH_RULES, &path_rule_list, &p->path_rule_count);
	p->inputs = get_list_section(rd, TPOL_INPUTS, &input_list, &p->input_count);
	p->net_rules = get_list_section(rd, TPOL_NET_RULES, &net_rule_list, &p->net_rule_count);
	p->host_rules = get_list_section(rd, TPOL_HOST_RULES, &host_rule_list, &p->host_rule_count);
	p->methods = get_list_section(rd, TPOL_METHODS, &method_list, &p->method_count);

	section_enter(rd, TPOL_DNS);
	p->dns_upstreams = get_list(rd, &dns_upstream_list, &p->dns_upstream_count);
	get_u32(rd, &p->dns_ttl_min_s, "dns_ttl_min_s", SIZE_MAX);
	get_u32(rd, &p->dns_ttl_max_s, "dns_ttl_max_s", SIZE_MAX);
	section_leave(rd);

	section_enter(rd, TPOL_LIMITS);
	for (size_t i = 0; i < TP_LIMIT_COUNT; i++)
		get_u64(rd, &p->limits[i], "limits", i);
	section_leave(rd);

	p->artifacts = get_list_section(rd, TPOL_ARTIFACTS, &artifact_list, &p->artifact_count);

	section_enter(rd, TPOL_AUDIT);
	get_ostr(rd, &p->audit_sink, TPOL_HOST_PATH_MAX, "audit_sink");
	section_leave(rd);

	p->gaps = get_list_section(rd, TPOL_GAPS, &gap_list, &p->gap_count);
	p->abstract_sockets = get_list_section(rd, TPOL_ABSTRACT_SOCKETS, &abstract_socket_list,
					       &p->abstract_socket_count);
	p->env_names = get_list_section(rd, TPOL_ENVIRONMENT, &env_name_list, &p->env_name_count);
}

int tp_policy_decode(const uint8_t *data, size_t len, struct tp_policy **out,
		     char *why, size_t why_len)
{
	_cleanup_(tp_policy_freep) struct tp_policy *p = NULL;
	struct reader rd = {
		.data = data, .len = len, .end = len, .section = "header", .why = why,
		.why_len = why_len,
	};
	uint16_t version = 0, reserved = 0;
	uint32_t total = 0;
	int r;

	if (why && why_len)
		why[0] = '\0';
	if (!out || (!data && len))
		return set_why(why, why_len, "invalid arguments");
	if (len < TPOL_HEADER_BYTES)
		return set_why(why, why_len, "truncated: %zu bytes, the header alone is %d", len,
			       TPOL_HEADER_BYTES);
	if (memcmp(data, TP_FORMAT_MAGIC, 4) != 0)
		return set_why(why, why_len, "not a tpol policy: the magic is not '%s'",
			       TP_FORMAT_MAGIC);
	rd.pos = 4;
	get_u16(&rd, &version, "version", SIZE_MAX);
	get_u16(&rd, &reserved, "reserved", SIZE_MAX);
	get_u32(&rd, &total, "total length", SIZE_MAX);
	if (version != TP_FORMAT_VERSION)
		return set_why(why, why_len, "format version %u is not supported (this reader "
			       "knows version %u)", version, TP_FORMAT_VERSION);
	if (reserved != 0)
		return set_why(why, why_len, "header: reserved field is %u, not 0", reserved);
	if (total < len)
		return set_why(why, why_len, "%zu trailing bytes after the %u bytes the header "
			       "declares", len - total, total);
	if (total > len)
		return set_why(why, why_len, "truncated: the header declares %u bytes, only %zu "
			       "present", total, len);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	decode_sections(&rd, p);
	if (rd.error)
		return rd.error;
	if (rd.pos != len)
		return set_why(why, why_len, "%zu bytes after the last section", len - rd.pos);

	r = policy_check(p, why, why_len);
	if (r)
		return r;
	*out = TAKE_PTR(p);
	return 0;
}

/* ---- digest ------------------------------------------------------------ */

int tp_policy_digest(const struct tp_policy *policy, uint8_t digest[32])
{
	_cleanup_free_ uint8_t *data = NULL;
	size_t len;
	int r;

	if (!digest)
		return -EINVAL;
	r = tp_policy_encode(policy, &data, &len);
	if (r)
		return r;
	return tp_sha256(data, len, digest);
}

void tp_digest_text(const uint8_t digest[32], char out[TP_DIGEST_TEXT_MAX])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	memcpy(p, "sha256:", 7);
	p += 7;
	for (size_t i = 0; i < 32; i++) {
		*p++ = hex[digest[i] >> 4];
		*p++ = hex[digest[i] & 0xf];
	}
	*p = '\0';
}
