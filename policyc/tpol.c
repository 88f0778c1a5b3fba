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
 *   header      "TPOL"  u16 version (1)  u16 reserved (0)  u32 total length
 *               (of everything, header included)
 *   sections    each: u16 id, u32 length of its body, body; all twelve are
 *               present, in this order, and each body is consumed exactly:
 *
 *    1 identity    u32 mode, u32 flags, 32 bytes image_digest,
 *                  ostr runtime_revision, ostr tenant, ostr run_id, u32 uid, u32 gid
 *    2 workspace   str workspace, ostr workspace_source, u32 workspace_mode,
 *                  u32 lifetime
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
 *     TP_POLICY_IMAGE_DIGEST, uid, gid, an input digest without has_digest);
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
 *     tenant and run_id any bytes but NUL, at most 253.
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
	(TP_POLICY_IMAGE_DIGEST | TP_POLICY_UID | TP_POLICY_GID |                   \
	 TP_POLICY_ARTIFACTS_SCAN | TP_POLICY_ARTIFACTS_HASH |                      \
	 TP_POLICY_REVOKE_CREDENTIALS | TP_POLICY_VERIFY_PROCESS_TREE |             \
	 TP_POLICY_AUDIT_FAIL_CLOSED | TP_POLICY_AUDIT_RECORD_ALLOWED)

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
	TPOL_SECTION_LAST = TPOL_GAPS,
};

static const char *const tpol_section_names[TPOL_SECTION_LAST + 1] = {
	[TPOL_IDENTITY] = "identity",	[TPOL_WORKSPACE] = "workspace",
	[TPOL_PATH_RULES] = "path_rules", [TPOL_INPUTS] = "inputs",
	[TPOL_NET_RULES] = "net_rules",	[TPOL_HOST_RULES] = "host_rules",
	[TPOL_METHODS] = "methods",	[TPOL_DNS] = "dns",
	[TPOL_LIMITS] = "limits",	[TPOL_ARTIFACTS] = "artifacts",
	[TPOL_AUDIT] = "audit",		[TPOL_GAPS] = "gaps",
};

/* Smallest encoded size of one list element: caps a count before allocating. */
#define TPOL_STR_MIN 4
#define TPOL_PATH_RULE_MIN (TPOL_STR_MIN + 4 + 4)
#define TPOL_INPUT_MIN (TPOL_STR_MIN + 1 + 32)
#define TPOL_NET_RULE_BYTES (16 + 1 + 1 + 2 + 2)
#define TPOL_HOST_RULE_MIN (TPOL_STR_MIN + 1 + 2 + 2)
#define TPOL_ENDPOINT_BYTES (16 + 2)

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
	}
	if (!ok) {
		static const char *const shape_names[] = {
			[SHAPE_TEXT] = "text",
			[SHAPE_ABSOLUTE] = "a normalised absolute path",
			[SHAPE_RELATIVE] = "a normalised relative path",
			[SHAPE_HOST] = "a lower-case host name",
			[SHAPE_METHOD] = "an upper-case HTTP method",
			[SHAPE_GAP] = "a field name",
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
	if (!(p->flags & TP_POLICY_UID) && p->uid)
		return set_why(why, why_len, "uid %u is set without the uid flag", p->uid);
	if (!(p->flags & TP_POLICY_GID) && p->gid)
		return set_why(why, why_len, "gid %u is set without the gid flag", p->gid);
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
	return r;
}

/* ---- encoding ---------------------------------------------------------- */

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

static void put_u8(struct writer *w, uint8_t v)
{
	put_bytes(w, &v, 1);
}

static void put_u16(struct writer *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	put_bytes(w, b, sizeof(b));
}

static void store_le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void put_u32(struct writer *w, uint32_t v)
{
	uint8_t b[4];

	store_le32(b, v);
	put_bytes(w, b, sizeof(b));
}

static void put_u64(struct writer *w, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, sizeof(b));
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

static void put_strv(struct writer *w, char *const *strv, size_t count)
{
	put_u32(w, (uint32_t)count);
	for (size_t i = 0; i < count; i++)
		put_str(w, strv[i]);
}

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
		store_le32(w->data + start + 2,
			   (uint32_t)(w->len - start - TPOL_SECTION_HEADER_BYTES));
}

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
	put_u32(w, p->workspace_mode);
	put_u32(w, p->lifetime);
	section_end(w, s);

	s = section_begin(w, TPOL_PATH_RULES);
	put_u32(w, (uint32_t)p->path_rule_count);
	for (size_t i = 0; i < p->path_rule_count; i++) {
		put_str(w, p->path_rules[i].path);
		put_u32(w, p->path_rules[i].access);
		put_u32(w, p->path_rules[i].kind);
	}
	section_end(w, s);

	s = section_begin(w, TPOL_INPUTS);
	put_u32(w, (uint32_t)p->input_count);
	for (size_t i = 0; i < p->input_count; i++) {
		put_str(w, p->inputs[i].path);
		put_u8(w, p->inputs[i].has_digest ? 1 : 0);
		put_bytes(w, p->inputs[i].digest, sizeof(p->inputs[i].digest));
	}
	section_end(w, s);

	s = section_begin(w, TPOL_NET_RULES);
	put_u32(w, (uint32_t)p->net_rule_count);
	for (size_t i = 0; i < p->net_rule_count; i++) {
		const struct tp_net_rule *rule = &p->net_rules[i];

		put_bytes(w, rule->addr, sizeof(rule->addr));
		put_u8(w, rule->prefixlen);
		put_u8(w, rule->protocols);
		put_u16(w, rule->port_min);
		put_u16(w, rule->port_max);
	}
	section_end(w, s);

	s = section_begin(w, TPOL_HOST_RULES);
	put_u32(w, (uint32_t)p->host_rule_count);
	for (size_t i = 0; i < p->host_rule_count; i++) {
		const struct tp_host_rule *rule = &p->host_rules[i];

		put_str(w, rule->name);
		put_u8(w, rule->protocols);
		put_u16(w, rule->port_min);
		put_u16(w, rule->port_max);
	}
	section_end(w, s);

	s = section_begin(w, TPOL_METHODS);
	put_strv(w, p->methods, p->method_count);
	section_end(w, s);

	s = section_begin(w, TPOL_DNS);
	put_u32(w, (uint32_t)p->dns_upstream_count);
	for (size_t i = 0; i < p->dns_upstream_count; i++) {
		put_bytes(w, p->dns_upstreams[i].addr, sizeof(p->dns_upstreams[i].addr));
		put_u16(w, p->dns_upstreams[i].port);
	}
	put_u32(w, p->dns_ttl_min_s);
	put_u32(w, p->dns_ttl_max_s);
	section_end(w, s);

	s = section_begin(w, TPOL_LIMITS);
	for (size_t i = 0; i < TP_LIMIT_COUNT; i++)
		put_u64(w, p->limits[i]);
	section_end(w, s);

	s = section_begin(w, TPOL_ARTIFACTS);
	put_strv(w, p->artifacts, p->artifact_count);
	section_end(w, s);

	s = section_begin(w, TPOL_AUDIT);
	put_ostr(w, p->audit_sink);
	section_end(w, s);

	s = section_begin(w, TPOL_GAPS);
	put_strv(w, p->gaps, p->gap_count);
	section_end(w, s);
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
	store_le32(data + 8, (uint32_t)w.len);

	*out = TAKE_PTR(data);
	*out_len = w.len;
	return 0;
}

/* ---- decoding ---------------------------------------------------------- */

struct reader {
	const uint8_t *data;
	size_t pos;
	size_t end;		/* of the current section's body */
	const char *section;
	char *why;
	size_t why_len;
};

static int fail(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "byte 40: section path_rules: ...": where, in which section, and what. */
static int fail(struct reader *rd, const char *fmt, ...)
{
	va_list ap;
	int n;

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

/* `what` and `index` (SIZE_MAX: none) name the field in messages. */
static int need(struct reader *rd, size_t n, const char *what, size_t index)
{
	if (n <= rd->end - rd->pos)
		return 0;
	if (index == SIZE_MAX)
		return fail(rd, "truncated in %s (%zu bytes needed, %zu left)", what, n,
			    rd->end - rd->pos);
	return fail(rd, "truncated in %s[%zu] (%zu bytes needed, %zu left)", what, index, n,
		    rd->end - rd->pos);
}

static int get_bytes(struct reader *rd, void *dst, size_t n, const char *what, size_t index)
{
	int r = need(rd, n, what, index);

	if (r)
		return r;
	memcpy(dst, rd->data + rd->pos, n);
	rd->pos += n;
	return 0;
}

static int get_u8(struct reader *rd, uint8_t *v, const char *what, size_t index)
{
	return get_bytes(rd, v, 1, what, index);
}

static int get_bool(struct reader *rd, bool *v, const char *what, size_t index)
{
	uint8_t b = 0;
	int r = get_u8(rd, &b, what, index);

	if (r)
		return r;
	if (b > 1) {
		rd->pos--;
		return fail(rd, "%s: %u is not a boolean (0 or 1)", what, b);
	}
	*v = b;
	return 0;
}

static int get_u16(struct reader *rd, uint16_t *v, const char *what, size_t index)
{
	uint8_t b[2];
	int r = get_bytes(rd, b, sizeof(b), what, index);

	if (!r)
		*v = (uint16_t)(b[0] | b[1] << 8);
	return r;
}

static uint32_t load_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static int get_u32(struct reader *rd, uint32_t *v, const char *what, size_t index)
{
	uint8_t b[4];
	int r = get_bytes(rd, b, sizeof(b), what, index);

	if (!r)
		*v = load_le32(b);
	return r;
}

static int get_u64(struct reader *rd, uint64_t *v, const char *what, size_t index)
{
	uint8_t b[8];
	int r = get_bytes(rd, b, sizeof(b), what, index);

	if (r)
		return r;
	*v = 0;
	for (int i = 7; i >= 0; i--)
		*v = *v << 8 | b[i];
	return 0;
}

/*
 * A str of at most `max` bytes, NUL-free.  The length is checked against
 * `max` and the bytes left before anything is allocated.
 */
static int get_str(struct reader *rd, char **out, size_t max, const char *what, size_t index)
{
	_cleanup_free_ char *s = NULL;
	uint32_t len;
	int r;

	r = get_u32(rd, &len, what, index);
	if (r)
		return r;
	if (len > max) {
		rd->pos -= 4;
		return fail(rd, "%s: length %u exceeds %zu", what, len, max);
	}
	r = need(rd, len, what, index);
	if (r)
		return r;
	if (memchr(rd->data + rd->pos, '\0', len))
		return fail(rd, "%s: contains a NUL byte", what);
	s = malloc((size_t)len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, rd->data + rd->pos, len);
	s[len] = '\0';
	rd->pos += len;
	*out = TAKE_PTR(s);
	return 0;
}

static int get_ostr(struct reader *rd, char **out, size_t max, const char *what)
{
	bool present = false;
	int r = get_bool(rd, &present, what, SIZE_MAX);

	if (r || !present)
		return r;
	return get_str(rd, out, max, what, SIZE_MAX);
}

/*
 * A list count, capped by what the rest of the section could hold at
 * `min_bytes` per entry, so a forged count cannot make us allocate more than
 * a small multiple of the input's size.
 */
static int get_count(struct reader *rd, size_t min_bytes, size_t *count, const char *what)
{
	uint32_t n;
	int r = get_u32(rd, &n, what, SIZE_MAX);

	if (r)
		return r;
	if (n > (rd->end - rd->pos) / min_bytes)
		return fail(rd, "%s: %u entries cannot fit in the %zu bytes left", what, n,
			    rd->end - rd->pos);
	*count = n;
	return 0;
}

/* Allocates a zeroed list and only then sets its count, for tp_policy_free(). */
#define ALLOC_LIST(items, count, n)                                    \
	({                                                             \
		int _r = 0;                                            \
		if ((n) > 0) {                                         \
			(items) = calloc((n), sizeof(*(items)));       \
			if ((items))                                   \
				(count) = (n);                         \
			else                                           \
				_r = -ENOMEM;                          \
		}                                                      \
		_r;                                                    \
	})

static int get_strv(struct reader *rd, char ***strv, size_t *count, size_t max,
		    const char *what)
{
	size_t n = 0;
	int r;

	r = get_count(rd, TPOL_STR_MIN, &n, what);
	if (!r)
		r = ALLOC_LIST(*strv, *count, n);
	for (size_t i = 0; !r && i < n; i++)
		r = get_str(rd, &(*strv)[i], max, what, i);
	return r;
}

static int decode_identity(struct reader *rd, struct tp_policy *p)
{
	int r;

	r = get_u32(rd, &p->mode, "mode", SIZE_MAX);
	if (!r)
		r = get_u32(rd, &p->flags, "flags", SIZE_MAX);
	if (!r)
		r = get_bytes(rd, p->image_digest, sizeof(p->image_digest), "image_digest",
			      SIZE_MAX);
	if (!r)
		r = get_ostr(rd, &p->runtime_revision, TPOL_TEXT_MAX, "runtime_revision");
	if (!r)
		r = get_ostr(rd, &p->tenant, TPOL_TEXT_MAX, "tenant");
	if (!r)
		r = get_ostr(rd, &p->run_id, TPOL_TEXT_MAX, "run_id");
	if (!r)
		r = get_u32(rd, &p->uid, "uid", SIZE_MAX);
	if (!r)
		r = get_u32(rd, &p->gid, "gid", SIZE_MAX);
	return r;
}

static int decode_workspace(struct reader *rd, struct tp_policy *p)
{
	int r;

	r = get_str(rd, &p->workspace, TPOL_PATH_MAX, "workspace", SIZE_MAX);
	if (!r)
		r = get_ostr(rd, &p->workspace_source, TPOL_HOST_PATH_MAX, "workspace_source");
	if (!r)
		r = get_u32(rd, &p->workspace_mode, "workspace_mode", SIZE_MAX);
	if (!r)
		r = get_u32(rd, &p->lifetime, "lifetime", SIZE_MAX);
	return r;
}

static int decode_path_rules(struct reader *rd, struct tp_policy *p)
{
	size_t n = 0;
	int r;

	r = get_count(rd, TPOL_PATH_RULE_MIN, &n, "path_rules");
	if (!r)
		r = ALLOC_LIST(p->path_rules, p->path_rule_count, n);
	for (size_t i = 0; !r && i < n; i++) {
		struct tp_path_rule *rule = &p->path_rules[i];

		r = get_str(rd, &rule->path, TPOL_PATH_MAX, "path_rules", i);
		if (!r)
			r = get_u32(rd, &rule->access, "path_rules", i);
		if (!r)
			r = get_u32(rd, &rule->kind, "path_rules", i);
	}
	return r;
}

static int decode_inputs(struct reader *rd, struct tp_policy *p)
{
	size_t n = 0;
	int r;

	r = get_count(rd, TPOL_INPUT_MIN, &n, "inputs");
	if (!r)
		r = ALLOC_LIST(p->inputs, p->input_count, n);
	for (size_t i = 0; !r && i < n; i++) {
		struct tp_input *input = &p->inputs[i];

		r = get_str(rd, &input->path, TPOL_PATH_MAX, "inputs", i);
		if (!r)
			r = get_bool(rd, &input->has_digest, "inputs", i);
		if (!r)
			r = get_bytes(rd, input->digest, sizeof(input->digest), "inputs", i);
	}
	return r;
}

static int decode_net_rules(struct reader *rd, struct tp_policy *p)
{
	size_t n = 0;
	int r;

	r = get_count(rd, TPOL_NET_RULE_BYTES, &n, "net_rules");
	if (!r)
		r = ALLOC_LIST(p->net_rules, p->net_rule_count, n);
	for (size_t i = 0; !r && i < n; i++) {
		struct tp_net_rule *rule = &p->net_rules[i];

		r = get_bytes(rd, rule->addr, sizeof(rule->addr), "net_rules", i);
		if (!r)
			r = get_u8(rd, &rule->prefixlen, "net_rules", i);
		if (!r)
			r = get_u8(rd, &rule->protocols, "net_rules", i);
		if (!r)
			r = get_u16(rd, &rule->port_min, "net_rules", i);
		if (!r)
			r = get_u16(rd, &rule->port_max, "net_rules", i);
	}
	return r;
}

static int decode_host_rules(struct reader *rd, struct tp_policy *p)
{
	size_t n = 0;
	int r;

	r = get_count(rd, TPOL_HOST_RULE_MIN, &n, "host_rules");
	if (!r)
		r = ALLOC_LIST(p->host_rules, p->host_rule_count, n);
	for (size_t i = 0; !r && i < n; i++) {
		struct tp_host_rule *rule = &p->host_rules[i];

		r = get_str(rd, &rule->name, TPOL_HOST_MAX + 2, "host_rules", i);
		if (!r)
			r = get_u8(rd, &rule->protocols, "host_rules", i);
		if (!r)
			r = get_u16(rd, &rule->port_min, "host_rules", i);
		if (!r)
			r = get_u16(rd, &rule->port_max, "host_rules", i);
	}
	return r;
}

static int decode_methods(struct reader *rd, struct tp_policy *p)
{
	return get_strv(rd, &p->methods, &p->method_count, TPOL_METHOD_MAX, "methods");
}

static int decode_dns(struct reader *rd, struct tp_policy *p)
{
	size_t n = 0;
	int r;

	r = get_count(rd, TPOL_ENDPOINT_BYTES, &n, "dns_upstreams");
	if (!r)
		r = ALLOC_LIST(p->dns_upstreams, p->dns_upstream_count, n);
	for (size_t i = 0; !r && i < n; i++) {
		struct tp_endpoint *upstream = &p->dns_upstreams[i];

		r = get_bytes(rd, upstream->addr, sizeof(upstream->addr), "dns_upstreams", i);
		if (!r)
			r = get_u16(rd, &upstream->port, "dns_upstreams", i);
	}
	if (!r)
		r = get_u32(rd, &p->dns_ttl_min_s, "dns_ttl_min_s", SIZE_MAX);
	if (!r)
		r = get_u32(rd, &p->dns_ttl_max_s, "dns_ttl_max_s", SIZE_MAX);
	return r;
}

static int decode_limits(struct reader *rd, struct tp_policy *p)
{
	int r = 0;

	for (size_t i = 0; !r && i < TP_LIMIT_COUNT; i++)
		r = get_u64(rd, &p->limits[i], "limits", i);
	return r;
}

static int decode_artifacts(struct reader *rd, struct tp_policy *p)
{
	return get_strv(rd, &p->artifacts, &p->artifact_count, TPOL_HOST_PATH_MAX,
			"artifacts");
}

static int decode_audit(struct reader *rd, struct tp_policy *p)
{
	return get_ostr(rd, &p->audit_sink, TPOL_HOST_PATH_MAX, "audit_sink");
}

static int decode_gaps(struct reader *rd, struct tp_policy *p)
{
	return get_strv(rd, &p->gaps, &p->gap_count, TPOL_GAP_MAX, "gaps");
}

static int (*const section_decoders[TPOL_SECTION_LAST + 1])(struct reader *, struct tp_policy *) = {
	[TPOL_IDENTITY] = decode_identity,	[TPOL_WORKSPACE] = decode_workspace,
	[TPOL_PATH_RULES] = decode_path_rules,	[TPOL_INPUTS] = decode_inputs,
	[TPOL_NET_RULES] = decode_net_rules,	[TPOL_HOST_RULES] = decode_host_rules,
	[TPOL_METHODS] = decode_methods,	[TPOL_DNS] = decode_dns,
	[TPOL_LIMITS] = decode_limits,		[TPOL_ARTIFACTS] = decode_artifacts,
	[TPOL_AUDIT] = decode_audit,		[TPOL_GAPS] = decode_gaps,
};

int tp_policy_decode(const uint8_t *data, size_t len, struct tp_policy **out,
		     char *why, size_t why_len)
{
	_cleanup_(tp_policy_freep) struct tp_policy *p = NULL;
	struct reader rd = {
		.data = data, .end = len, .section = "header", .why = why, .why_len = why_len,
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

	for (unsigned int id = 1; id <= TPOL_SECTION_LAST; id++) {
		uint16_t found = 0;
		uint32_t body = 0;

		rd.end = len;
		rd.section = tpol_section_names[id];
		if (len - rd.pos < TPOL_SECTION_HEADER_BYTES)
			return fail(&rd, "truncated: the section header is missing");
		get_u16(&rd, &found, "section id", SIZE_MAX);
		get_u32(&rd, &body, "section length", SIZE_MAX);
		if (found != id) {
			rd.pos -= TPOL_SECTION_HEADER_BYTES;
			return fail(&rd, "found section id %u where section %u was expected", found,
				    id);
		}
		if (body > len - rd.pos)
			return fail(&rd, "declares %u bytes, only %zu left", body, len - rd.pos);
		rd.end = rd.pos + body;
		r = section_decoders[id](&rd, p);
		if (r)
			return r;
		if (rd.pos != rd.end)
			return fail(&rd, "%zu unused bytes at the end of the section",
				    rd.end - rd.pos);
	}
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
	tp_sha256(data, len, digest);
	return 0;
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
