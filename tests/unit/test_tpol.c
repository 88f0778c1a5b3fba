// SPDX-License-Identifier: GPL-2.0
/*
 * policyc: sha256, the tpol binary form of a compiled policy, and its digest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policyc/policy.h"
#include "policyc/values.h"

/* ---- sha256 ------------------------------------------------------------ */

static void expect_sha256(const void *data, size_t len, const char *hex)
{
	uint8_t digest[32];
	char text[TP_DIGEST_TEXT_MAX];

	cr_assert_eq(tp_sha256(data, len, digest), 0);
	tp_digest_text(digest, text);
	cr_expect_str_eq(text + 7, hex, "sha256 of %zu bytes", len);
}

/* Expected values from coreutils' sha256sum. */
Test(sha256, nist_vectors)
{
	expect_sha256("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect_sha256(NULL, 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect_sha256("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	expect_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	expect_sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		      "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112,
		      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

Test(sha256, million_a)
{
	size_t len = 1000000;
	char *data = malloc(len);

	cr_assert_not_null(data);
	memset(data, 'a', len);
	expect_sha256(data, len,
		      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(data);
}

/* Lengths around the padding boundary: 55 fits the length in one block, 56 does not. */
Test(sha256, padding_boundaries)
{
	static const struct {
		size_t len;
		const char *hex;
	} cases[] = {
		{ 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34" },
		{ 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0" },
	};
	char data[65];
	uint8_t bytes[1025];

	memset(data, 'a', sizeof(data));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_sha256(data, cases[i].len, cases[i].hex);

	/* Every byte value, and a length that is not a multiple of 8. */
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = i < 1024 ? (uint8_t)i : 'x';
	expect_sha256(bytes, sizeof(bytes),
		      "8b22d5427688462387bbd8fcef9d2a1f1cb3a8886cd48e604b29e2913b663399");
}

Test(sha256, digest_text)
{
	uint8_t digest[32];
	char text[TP_DIGEST_TEXT_MAX];

	for (size_t i = 0; i < 32; i++)
		digest[i] = (uint8_t)(i * 0x11 + 0x0f);
	memset(text, 'X', sizeof(text));
	tp_digest_text(digest, text);
	cr_expect_eq(strlen(text), TP_DIGEST_TEXT_MAX - 1);
	cr_expect_str_eq(text, "sha256:0f2031425364758697a8b9cadbecfd0e"
			       "1f30415263748596a7b8c9daebfc0d1e");
}

/* ---- policies ---------------------------------------------------------- */

static char *xstrdup(const char *s)
{
	char *copy = s ? strdup(s) : NULL;

	cr_assert(!s || copy);
	return copy;
}

static void replace(char **slot, const char *value)
{
	free(*slot);
	*slot = xstrdup(value);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	cr_assert_not_null(p);
	return p;
}

static char **strv(size_t n, const char *const *items)
{
	char **v = xcalloc(n, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(items[i]);
	return v;
}

static void mapped_v4(uint8_t addr[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(addr, 0, 16);
	addr[10] = addr[11] = 0xff;
	addr[12] = a;
	addr[13] = b;
	addr[14] = c;
	addr[15] = d;
}

static struct tp_policy *minimal_policy(void)
{
	struct tp_policy *p = xcalloc(1, sizeof(*p));

	p->workspace = xstrdup("/w");
	return p;
}

/* Every field set, every list with more than one entry, all sorted. */
static struct tp_policy *full_policy(void)
{
	static const char *const methods[] = { "GET", "POST" };
	static const char *const artifacts[] = { "out/**", "out/report.json" };
	static const char *const gaps[] = { "@signals_ptrace", "artifacts",
					    "network_egress.methods" };
	static const char *const sockets[] = { "dbus", "tether/ls" };
	static const char *const env_names[] = { "CI", "GIT_AUTHOR_NAME", "_private" };
	struct tp_policy *p = xcalloc(1, sizeof(*p));

	p->mode = TP_MODE_ENFORCE;
	p->flags = TP_POLICY_IMAGE_DIGEST |
		   TP_POLICY_ARTIFACTS_SCAN | TP_POLICY_ARTIFACTS_HASH |
		   TP_POLICY_REVOKE_CREDENTIALS | TP_POLICY_VERIFY_PROCESS_TREE |
		   TP_POLICY_AUDIT_FAIL_CLOSED | TP_POLICY_AUDIT_RECORD_ALLOWED | TP_POLICY_TMP_EXEC;
	for (size_t i = 0; i < 32; i++)
		p->image_digest[i] = (uint8_t)(i + 1);
	p->runtime_revision = xstrdup("rev-1");
	p->tenant = xstrdup("acme");
	p->run_id = xstrdup("run-42");
	p->uid = 1000;
	p->gid = 1001;
	p->workspace = xstrdup("/work/ws");
	p->workspace_source = xstrdup("/srv/src");
	p->workspace_mode = TP_WORKSPACE_FRESH_OVERLAY;
	p->lifetime = TP_LIFETIME_ONE_RUN;

	p->path_rule_count = 4;
	p->path_rules = xcalloc(4, sizeof(*p->path_rules));
	p->path_rules[0] = (struct tp_path_rule){ xstrdup("/"), TETHER_ACCESS_READ,
						  TP_PATH_SUBTREE };
	p->path_rules[1] = (struct tp_path_rule){ xstrdup("/dev/null"),
						  TETHER_ACCESS_READ | TETHER_ACCESS_WRITE,
						  TP_PATH_EXACT };
	p->path_rules[2] = (struct tp_path_rule){ xstrdup("/work/ws"),
						  TETHER_ACCESS_READ | TETHER_ACCESS_WRITE,
						  TP_PATH_SUBTREE };
	p->path_rules[3] = (struct tp_path_rule){ xstrdup("/work/ws/secret"), 0,
						  TP_PATH_SUBTREE };

	p->input_count = 2;
	p->inputs = xcalloc(2, sizeof(*p->inputs));
	p->inputs[0].path = xstrdup("/data/a");
	p->inputs[0].has_digest = true;
	memset(p->inputs[0].digest, 0xaa, 32);
	p->inputs[1].path = xstrdup("/data/b");

	p->net_rule_count = 3;
	p->net_rules = xcalloc(3, sizeof(*p->net_rules));
	mapped_v4(p->net_rules[0].addr, 192, 0, 2, 0);
	p->net_rules[0].prefixlen = 120;
	p->net_rules[0].protocols = TP_PROTO_TCP;
	p->net_rules[0].port_min = p->net_rules[0].port_max = 443;
	p->net_rules[1] = p->net_rules[0];
	p->net_rules[1].protocols = TP_PROTO_ANY;
	p->net_rules[1].port_min = 1;
	p->net_rules[1].port_max = 65535;
	p->net_rules[2].addr[0] = 0x20;
	p->net_rules[2].addr[1] = 0x01;
	p->net_rules[2].addr[2] = 0x0d;
	p->net_rules[2].addr[3] = 0xb8;
	p->net_rules[2].prefixlen = 32;
	p->net_rules[2].protocols = TP_PROTO_UDP;
	p->net_rules[2].port_min = p->net_rules[2].port_max = 53;

	p->host_rule_count = 3;
	p->host_rules = xcalloc(3, sizeof(*p->host_rules));
	p->host_rules[0] = (struct tp_host_rule){ xstrdup("*.example.com"), TP_PROTO_ANY,
						  443, 443 };
	p->host_rules[1] = (struct tp_host_rule){ xstrdup("api.github.com"), TP_PROTO_TCP,
						  443, 443 };
	p->host_rules[2] = (struct tp_host_rule){ xstrdup("api.github.com"), TP_PROTO_TCP,
						  8000, 8100 };

	p->method_count = 2;
	p->methods = strv(2, methods);

	p->dns_upstream_count = 2;
	p->dns_upstreams = xcalloc(2, sizeof(*p->dns_upstreams));
	/* Not sorted: upstreams keep the order they were written in. */
	p->dns_upstreams[0].addr[0] = 0x20;
	p->dns_upstreams[0].addr[1] = 0x01;
	p->dns_upstreams[0].addr[15] = 0x53;
	p->dns_upstreams[0].port = 5353;
	mapped_v4(p->dns_upstreams[1].addr, 192, 0, 2, 53);
	p->dns_upstreams[1].port = 53;
	p->dns_ttl_min_s = 5;
	p->dns_ttl_max_s = 3600;

	for (size_t i = 0; i < TP_LIMIT_COUNT; i++)
		p->limits[i] = (i + 1) * 1000003u;
	p->limits[TP_LIMIT_COUNT - 1] = UINT64_MAX;

	p->artifact_count = 2;
	p->artifacts = strv(2, artifacts);
	p->audit_sink = xstrdup("/var/log/tether/audit.jsonl");
	p->gap_count = 3;
	p->gaps = strv(3, gaps);
	p->abstract_socket_count = 2;
	p->abstract_sockets = strv(2, sockets);
	p->env_name_count = 3;
	p->env_names = strv(3, env_names);
	return p;
}

static bool str_equal(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool strv_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!str_equal(a[i], b[i]))
			return false;
	return true;
}

/* Field by field: a memcmp of the structs would compare pointers and padding. */
static bool policy_equal(const struct tp_policy *a, const struct tp_policy *b)
{
	if (a->mode != b->mode || a->flags != b->flags ||
	    memcmp(a->image_digest, b->image_digest, 32) ||
	    !str_equal(a->runtime_revision, b->runtime_revision) ||
	    !str_equal(a->tenant, b->tenant) || !str_equal(a->run_id, b->run_id) ||
	    a->uid != b->uid || a->gid != b->gid || !str_equal(a->workspace, b->workspace) ||
	    !str_equal(a->workspace_source, b->workspace_source) ||
	    !str_equal(a->workspace_ref, b->workspace_ref) ||
	    a->workspace_mode != b->workspace_mode || a->lifetime != b->lifetime)
		return false;

	if (a->path_rule_count != b->path_rule_count)
		return false;
	for (size_t i = 0; i < a->path_rule_count; i++)
		if (!str_equal(a->path_rules[i].path, b->path_rules[i].path) ||
		    a->path_rules[i].access != b->path_rules[i].access ||
		    a->path_rules[i].kind != b->path_rules[i].kind)
			return false;

	if (a->input_count != b->input_count)
		return false;
	for (size_t i = 0; i < a->input_count; i++)
		if (!str_equal(a->inputs[i].path, b->inputs[i].path) ||
		    a->inputs[i].has_digest != b->inputs[i].has_digest ||
		    memcmp(a->inputs[i].digest, b->inputs[i].digest, 32))
			return false;

	if (a->net_rule_count != b->net_rule_count)
		return false;
	for (size_t i = 0; i < a->net_rule_count; i++) {
		const struct tp_net_rule *x = &a->net_rules[i], *y = &b->net_rules[i];

		if (memcmp(x->addr, y->addr, 16) || x->prefixlen != y->prefixlen ||
		    x->protocols != y->protocols || x->port_min != y->port_min ||
		    x->port_max != y->port_max)
			return false;
	}

	if (a->host_rule_count != b->host_rule_count)
		return false;
	for (size_t i = 0; i < a->host_rule_count; i++) {
		const struct tp_host_rule *x = &a->host_rules[i], *y = &b->host_rules[i];

		if (!str_equal(x->name, y->name) || x->protocols != y->protocols ||
		    x->port_min != y->port_min || x->port_max != y->port_max)
			return false;
	}

	if (!strv_equal(a->methods, a->method_count, b->methods, b->method_count))
		return false;

	if (a->dns_upstream_count != b->dns_upstream_count ||
	    a->dns_ttl_min_s != b->dns_ttl_min_s || a->dns_ttl_max_s != b->dns_ttl_max_s)
		return false;
	for (size_t i = 0; i < a->dns_upstream_count; i++)
		if (memcmp(a->dns_upstreams[i].addr, b->dns_upstreams[i].addr, 16) ||
		    a->dns_upstreams[i].port != b->dns_upstreams[i].port)
			return false;

	return memcmp(a->limits, b->limits, sizeof(a->limits)) == 0 &&
	       strv_equal(a->artifacts, a->artifact_count, b->artifacts, b->artifact_count) &&
	       str_equal(a->audit_sink, b->audit_sink) &&
	       strv_equal(a->gaps, a->gap_count, b->gaps, b->gap_count) &&
	       strv_equal(a->abstract_sockets, a->abstract_socket_count, b->abstract_sockets,
			  b->abstract_socket_count) &&
	       strv_equal(a->env_names, a->env_name_count, b->env_names, b->env_name_count);
}

static void encode(const struct tp_policy *p, uint8_t **data, size_t *len)
{
	int r = tp_policy_encode(p, data, len);

	cr_assert_eq(r, 0, "encode: %d", r);
}

/* decode(encode(p)) == p, and the decoded policy re-encodes to the same bytes. */
static void expect_round_trip(const struct tp_policy *p)
{
	uint8_t *data = NULL, *again = NULL;
	size_t len = 0, again_len = 0;
	struct tp_policy *decoded = NULL;
	char why[TP_WHY_MAX] = "";
	int r;

	encode(p, &data, &len);
	r = tp_policy_decode(data, len, &decoded, why, sizeof(why));
	cr_assert_eq(r, 0, "decode: %d (%s)", r, why);
	cr_expect(policy_equal(p, decoded), "decode(encode(p)) differs from p");
	encode(decoded, &again, &again_len);
	cr_expect(again_len == len && memcmp(again, data, len) == 0, "re-encoding differs");
	free(again);
	free(data);
	tp_policy_free(decoded);
}

/*
 * Decodes untrusted bytes: either refused with a reason, or accepted and then
 * re-encoding gives back exactly these bytes.
 */
static void expect_strict(const uint8_t *data, size_t len, const char *context)
{
	struct tp_policy *decoded = NULL;
	char why[TP_WHY_MAX] = "";
	uint8_t *again = NULL;
	size_t again_len = 0;
	int r;

	r = tp_policy_decode(data, len, &decoded, why, sizeof(why));
	if (r) {
		cr_assert_eq(r, -EINVAL, "%s: decode returned %d", context, r);
		cr_assert(why[0] != '\0', "%s: refused without a reason", context);
		cr_assert_null(decoded, "%s: output written on failure", context);
		return;
	}
	cr_assert_eq(tp_policy_encode(decoded, &again, &again_len), 0,
		     "%s: accepted but cannot re-encode", context);
	cr_assert(again_len == len && memcmp(again, data, len) == 0,
		  "%s: accepted bytes re-encode differently", context);
	free(again);
	tp_policy_free(decoded);
}

/* Decoding must fail with -EINVAL and a reason containing `fragment`. */
static void expect_refused(const uint8_t *data, size_t len, const char *fragment)
{
	struct tp_policy *decoded = NULL;
	char why[TP_WHY_MAX] = "";
	int r;

	r = tp_policy_decode(data, len, &decoded, why, sizeof(why));
	cr_expect_eq(r, -EINVAL, "expected refusal (%s), got %d", fragment, r);
	cr_expect_null(decoded);
	cr_expect(strstr(why, fragment), "reason '%s' lacks '%s'", why, fragment);
	tp_policy_free(decoded);
}

static void put_le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Offset of section `id`'s header within an encoding. */
static size_t section_offset(const uint8_t *data, size_t len, unsigned int id)
{
	size_t pos = 12;

	while (pos + 6 <= len) {
		if ((unsigned int)(data[pos] | data[pos + 1] << 8) == id)
			return pos;
		pos += 6 + get_le32(data + pos + 2);
	}
	cr_assert_fail("section %u not found", id);
	return 0;
}

/* ---- round trips ------------------------------------------------------- */

Test(tpol, round_trip_minimal)
{
	struct tp_policy *p = minimal_policy();
	uint8_t *data = NULL;
	size_t len = 0;

	expect_round_trip(p);

	encode(p, &data, &len);
	cr_expect(memcmp(data, "TPOL", 4) == 0);
	cr_expect(data[4] == 5 && data[5] == 0, "version 5, little-endian");
	cr_expect(data[6] == 0 && data[7] == 0, "reserved");
	cr_expect_eq(get_le32(data + 8), len);
	/* Fourteen sections follow, in order. */
	for (unsigned int id = 1; id <= 14; id++)
		section_offset(data, len, id);
	free(data);
	tp_policy_free(p);
}

Test(tpol, round_trip_full)
{
	struct tp_policy *p = full_policy();

	expect_round_trip(p);
	tp_policy_free(p);
}

/* NULL and "" are different values and survive the round trip as such. */
Test(tpol, null_and_empty_strings_differ)
{
	struct tp_policy *a = full_policy(), *b = full_policy();
	uint8_t da[32], db[32];

	replace(&a->tenant, NULL);
	replace(&b->tenant, "");
	replace(&a->artifacts[0], "");	/* the workspace itself */
	replace(&b->artifacts[0], "");
	expect_round_trip(a);
	expect_round_trip(b);
	cr_assert_eq(tp_policy_digest(a, da), 0);
	cr_assert_eq(tp_policy_digest(b, db), 0);
	cr_expect(memcmp(da, db, 32) != 0);
	tp_policy_free(a);
	tp_policy_free(b);
}

Test(tpol, free_accepts_null_and_partial)
{
	struct tp_policy *p = xcalloc(1, sizeof(*p));

	tp_policy_free(NULL);
	/* An array allocated, its entries not yet filled. */
	p->path_rules = xcalloc(3, sizeof(*p->path_rules));
	p->path_rule_count = 3;
	p->path_rules[0].path = xstrdup("/a");
	p->methods = xcalloc(2, sizeof(*p->methods));
	p->method_count = 2;
	p->tenant = xstrdup("t");
	tp_policy_free(p);
}

/* ---- the encoder refuses what is not canonical ------------------------- */

static void expect_encode_refused(struct tp_policy *p, const char *what)
{
	uint8_t *data = (uint8_t *)"untouched";
	size_t len = 12345;
	uint8_t digest[32] = { 0 };
	int r;

	r = tp_policy_encode(p, &data, &len);
	cr_expect_eq(r, -EINVAL, "%s: encode returned %d", what, r);
	cr_expect(strcmp((char *)data, "untouched") == 0 && len == 12345,
		  "%s: outputs written on failure", what);
	cr_expect_eq(tp_policy_digest(p, digest), -EINVAL, "%s: digest", what);
	tp_policy_free(p);
}

Test(tpol, encoder_refuses_unsorted_and_duplicates)
{
	struct tp_policy *p;
	char *tmp;

	p = full_policy();
	tmp = p->path_rules[1].path;
	p->path_rules[1].path = p->path_rules[2].path;
	p->path_rules[2].path = tmp;
	expect_encode_refused(p, "unsorted path rules");

	p = full_policy();
	replace(&p->path_rules[2].path, "/dev/null");
	p->path_rules[2].kind = TP_PATH_SUBTREE;	/* same path, other kind */
	expect_encode_refused(p, "duplicate path rule");

	p = full_policy();
	replace(&p->inputs[1].path, "/data/a");
	expect_encode_refused(p, "duplicate input");

	p = full_policy();
	p->net_rules[1] = p->net_rules[0];
	expect_encode_refused(p, "duplicate net rule");

	p = full_policy();
	p->net_rules[0].protocols = TP_PROTO_ANY;
	p->net_rules[1].protocols = TP_PROTO_TCP;
	expect_encode_refused(p, "net rules unsorted by protocols");

	p = full_policy();
	p->host_rules[1].port_min = p->host_rules[1].port_max = 9000;
	expect_encode_refused(p, "host rules unsorted by port");

	p = full_policy();
	p->host_rules[2].port_min = 443;
	p->host_rules[2].port_max = 443;
	expect_encode_refused(p, "duplicate host rule");

	p = full_policy();
	replace(&p->methods[0], "PUT");
	expect_encode_refused(p, "unsorted methods");

	p = full_policy();
	replace(&p->methods[1], "GET");
	expect_encode_refused(p, "duplicate method");

	p = full_policy();
	p->dns_upstreams[1] = p->dns_upstreams[0];
	expect_encode_refused(p, "duplicate dns upstream");

	p = full_policy();
	replace(&p->artifacts[0], "zzz");
	expect_encode_refused(p, "unsorted artifacts");

	p = full_policy();
	replace(&p->gaps[1], "network_egress.methods");
	expect_encode_refused(p, "duplicate gap");
}

Test(tpol, encoder_refuses_invalid_values)
{
	struct tp_policy *p;

#define REFUSE(what, change)           \
	do {                           \
		p = full_policy();     \
		change;                \
		expect_encode_refused(p, what); \
	} while (0)

	REFUSE("mode", p->mode = 2);
	REFUSE("unknown flag", p->flags |= 1u << 10);
	REFUSE("image digest without flag", p->flags &= ~(uint32_t)TP_POLICY_IMAGE_DIGEST);
	/* Format 2's "uid is set" and "gid is set": retired, the ids are always set. */
	REFUSE("retired uid flag", p->flags |= 1u << 1);
	REFUSE("retired gid flag", p->flags |= 1u << 2);
	REFUSE("uid (uid_t)-1", p->uid = UINT32_MAX);
	REFUSE("gid (gid_t)-1", p->gid = UINT32_MAX);
	REFUSE("workspace_mode", p->workspace_mode = 3);
	REFUSE("lifetime", p->lifetime = 2);
	REFUSE("no workspace", replace(&p->workspace, NULL));
	REFUSE("workspace /", replace(&p->workspace, "/"));
	REFUSE("relative workspace", replace(&p->workspace, "work/ws"));
	REFUSE("workspace_source not normalised", replace(&p->workspace_source, "/srv//src"));
	REFUSE("workspace_ref a name", replace(&p->workspace_ref, "main"));
	REFUSE("workspace_ref upper-case",
	       replace(&p->workspace_ref, "0123456789ABCDEF0123456789abcdef01234567"));
	REFUSE("workspace_ref of 41 digits",
	       replace(&p->workspace_ref, "0123456789abcdef0123456789abcdef012345678"));
	REFUSE("workspace_ref without a source", (replace(&p->workspace_ref,
		"0123456789abcdef0123456789abcdef01234567"), replace(&p->workspace_source, NULL)));
	REFUSE("access bits", p->path_rules[1].access = 1u << 3);
	REFUSE("path kind", p->path_rules[1].kind = 2);
	REFUSE("relative path rule", replace(&p->path_rules[3].path, "work/ws/secret"));
	REFUSE("trailing slash", replace(&p->path_rules[3].path, "/work/ws/secret/"));
	REFUSE("dot-dot", replace(&p->path_rules[3].path, "/work/ws/.."));
	REFUSE("dot", replace(&p->path_rules[3].path, "/work/ws/."));
	REFUSE("input digest without has_digest", p->inputs[1].digest[0] = 1);
	REFUSE("prefixlen 129", p->net_rules[2].prefixlen = 129);
	REFUSE("host bits", p->net_rules[2].addr[4] = 1);
	REFUSE("host bits in partial byte", p->net_rules[0].addr[15] = 1);
	REFUSE("port_min > port_max", p->net_rules[2].port_min = 54);
	REFUSE("port 0", p->net_rules[1].port_min = 0);
	REFUSE("protocols 0", p->net_rules[2].protocols = 0);
	REFUSE("protocols 4", p->net_rules[2].protocols = 4);
	REFUSE("host protocols 0", p->host_rules[0].protocols = 0);
	REFUSE("host port range", p->host_rules[0].port_min = 444);
	REFUSE("upper-case host", replace(&p->host_rules[0].name, "*.Example.com"));
	REFUSE("host empty label", replace(&p->host_rules[0].name, "*.example..com"));
	REFUSE("lower-case method", replace(&p->methods[0], "get"));
	REFUSE("empty method", replace(&p->methods[0], ""));
	REFUSE("empty abstract socket", replace(&p->abstract_sockets[0], ""));
	REFUSE("unsorted environment", replace(&p->env_names[0], "Z"));
	REFUSE("duplicate environment name", replace(&p->env_names[1], "CI"));
	REFUSE("environment name with '='", replace(&p->env_names[0], "A=b"));
	REFUSE("environment name starting with a digit", replace(&p->env_names[0], "1CI"));
	REFUSE("empty environment name", replace(&p->env_names[0], ""));
	REFUSE("environment name passed by default", replace(&p->env_names[0], "LC_ALL"));
	REFUSE("environment PATH", replace(&p->env_names[1], "PATH"));
	REFUSE("environment TMPDIR", replace(&p->env_names[1], "TMPDIR"));
	REFUSE("environment name too long", {
		char name[130];

		memset(name, '_', 129);
		name[129] = '\0';	/* 129 bytes */
		replace(&p->env_names[2], name);
	});
	REFUSE("dns port 0", p->dns_upstreams[0].port = 0);
	REFUSE("ttl min > max", p->dns_ttl_min_s = 3601);
	REFUSE("absolute artifact", replace(&p->artifacts[0], "/out/report.json"));
	REFUSE("relative audit sink", replace(&p->audit_sink, "audit.jsonl"));
	REFUSE("gap name", replace(&p->gaps[1], "Artifacts"));
	REFUSE("gap '@'", replace(&p->gaps[0], "@"));
	REFUSE("NULL list entry", replace(&p->gaps[1], NULL));
	REFUSE("artifact with '..'", replace(&p->artifacts[1], "out/../x"));
	REFUSE("list without array", p->net_rule_count = 4; free(p->net_rules);
	       p->net_rules = NULL);
	REFUSE("path too long", {
		char path[254];

		path[0] = '/';
		memset(path + 1, 'a', 251);
		path[252] = '\0';	/* 252 bytes */
		replace(&p->path_rules[3].path, path);
	});
	REFUSE("tenant too long", {
		char text[255];

		memset(text, 't', 254);
		text[254] = '\0';
		replace(&p->tenant, text);
	});
#undef REFUSE

	cr_expect_eq(tp_policy_encode(NULL, &(uint8_t *){ NULL }, &(size_t){ 0 }), -EINVAL);
}

/* The limits themselves: the longest accepted values still round-trip. */
Test(tpol, length_limits_accepted)
{
	struct tp_policy *p = full_policy();
	char path[252], letters[64], host[256], text[254];

	/* 251 bytes, still sorted last among the path rules */
	snprintf(path, sizeof(path), "/work/ws/secret/%0235d", 0);
	cr_assert_eq(strlen(path), 251);
	replace(&p->path_rules[3].path, path);
	/* "*." and 253 bytes in labels of at most 63 */
	memset(letters, 'e', 63);
	letters[63] = '\0';
	snprintf(host, sizeof(host), "*.%s.%s.%s.%.61s", letters, letters, letters, letters);
	cr_assert_eq(strlen(host), 255);
	replace(&p->host_rules[0].name, host);
	memset(text, 0x01, 253);	/* any byte but NUL */
	text[253] = '\0';
	replace(&p->run_id, text);
	expect_round_trip(p);
	tp_policy_free(p);
}

/* ---- the decoder refuses what the encoder cannot write ----------------- */

Test(tpol, decoder_refuses_truncation_at_every_length)
{
	struct tp_policy *p = full_policy();
	uint8_t *data = NULL, *copy;
	size_t len = 0;

	encode(p, &data, &len);
	copy = malloc(len);
	cr_assert_not_null(copy);
	for (size_t cut = 0; cut < len; cut++) {
		char context[64];

		/* As is: the header's total length gives it away. */
		memcpy(copy, data, cut);
		snprintf(context, sizeof(context), "cut at %zu", cut);
		expect_refused(copy, cut, cut < 12 ? "truncated" : "");
		/* With the total length patched: a section must notice. */
		if (cut >= 12) {
			put_le32(copy + 8, (uint32_t)cut);
			expect_strict(copy, cut, context);
			cr_expect_neq(tp_policy_decode(copy, cut, &(struct tp_policy *){ NULL },
						       NULL, 0), 0, "%s accepted", context);
		}
	}
	expect_refused(NULL, 0, "truncated");
	free(copy);
	free(data);
	tp_policy_free(p);
}

/* Every bit of every byte: refused, or accepted and canonical. */
static void flip_every_bit(const struct tp_policy *p)
{
	uint8_t *data = NULL;
	size_t len = 0;

	encode(p, &data, &len);
	for (size_t i = 0; i < len; i++) {
		for (unsigned int bit = 0; bit < 8; bit++) {
			char context[64];

			snprintf(context, sizeof(context), "byte %zu bit %u", i, bit);
			data[i] ^= (uint8_t)(1u << bit);
			expect_strict(data, len, context);
			data[i] ^= (uint8_t)(1u << bit);
		}
		data[i] ^= 0xff;
		expect_strict(data, len, "byte inverted");
		data[i] ^= 0xff;
	}
	free(data);
}

Test(tpol, decoder_strict_under_bit_flips)
{
	struct tp_policy *p = minimal_policy();

	flip_every_bit(p);
	tp_policy_free(p);
	p = full_policy();
	flip_every_bit(p);
	tp_policy_free(p);
}

/* A small deterministic fuzzer: random overwrites, insertions and deletions. */
Test(tpol, decoder_strict_under_random_mutation, .timeout = 120)
{
	struct tp_policy *p = full_policy();
	uint8_t *data = NULL, *mutant;
	size_t len = 0;
	uint64_t state = 0x9e3779b97f4a7c15u;

	encode(p, &data, &len);
	mutant = malloc(len + 8);
	cr_assert_not_null(mutant);
	for (int round = 0; round < 20000; round++) {
		size_t mutant_len = len;
		int edits;

		memcpy(mutant, data, len);
		state = state * 6364136223846793005u + 1442695040888963407u;
		edits = 1 + (int)(state >> 62);
		for (int e = 0; e < edits; e++) {
			size_t at;

			state = state * 6364136223846793005u + 1442695040888963407u;
			at = (size_t)(state >> 33) % mutant_len;
			switch ((state >> 8) % 4) {
			case 0:
			case 1:
				mutant[at] = (uint8_t)(state >> 16);
				break;
			case 2:	/* delete a byte */
				memmove(mutant + at, mutant + at + 1, mutant_len - at - 1);
				mutant_len--;
				break;
			default:	/* insert a byte, if there is room */
				if (mutant_len < len + 8) {
					memmove(mutant + at + 1, mutant + at, mutant_len - at);
					mutant[at] = (uint8_t)(state >> 24);
					mutant_len++;
				}
				break;
			}
		}
		/* Half the time keep the header's length right, to reach the sections. */
		if (state & (1u << 20) && mutant_len >= 12)
			put_le32(mutant + 8, (uint32_t)mutant_len);
		expect_strict(mutant, mutant_len, "mutant");
	}
	free(mutant);
	free(data);
	tp_policy_free(p);
}

Test(tpol, decoder_refuses_header_corruption)
{
	struct tp_policy *p = full_policy();
	uint8_t *data = NULL, *copy;
	size_t len = 0;

	encode(p, &data, &len);
	copy = malloc(len + 1);
	cr_assert_not_null(copy);

	memcpy(copy, data, len);
	copy[len] = 0;
	expect_refused(copy, len + 1, "1 trailing bytes");
	put_le32(copy + 8, (uint32_t)len + 1);
	expect_refused(copy, len + 1, "1 bytes after the last section");

	memcpy(copy, data, len);
	copy[0] = 't';
	expect_refused(copy, len, "magic");

	memcpy(copy, data, len);
	copy[4] = 1;	/* version 1 had no abstract_sockets: recompile the envelope */
	expect_refused(copy, len, "format version 1 is not supported");

	memcpy(copy, data, len);
	copy[4] = 2;	/* version 2 left the controller's ids to a run without uid: recompile */
	expect_refused(copy, len, "format version 2 is not supported");

	memcpy(copy, data, len);
	copy[4] = 3;	/* version 3 had no disk_inodes limit: recompile */
	expect_refused(copy, len, "format version 3 is not supported");

	memcpy(copy, data, len);
	copy[4] = 4;	/* version 4 had no workspace_ref: recompile */
	expect_refused(copy, len, "format version 4 is not supported");

	memcpy(copy, data, len);
	copy[4] = 6;
	expect_refused(copy, len, "format version 6 is not supported");

	memcpy(copy, data, len);
	copy[7] = 1;
	expect_refused(copy, len, "reserved");

	memcpy(copy, data, len);
	put_le32(copy + 8, (uint32_t)len + 1);
	expect_refused(copy, len, "truncated");

	free(copy);
	free(data);
	tp_policy_free(p);
}

Test(tpol, decoder_refuses_section_corruption)
{
	struct tp_policy *p = full_policy();
	uint8_t *data = NULL, *copy;
	size_t len = 0, at;

	encode(p, &data, &len);
	copy = malloc(len);
	cr_assert_not_null(copy);

	/* Sections out of order. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 3);
	copy[at] = 4;
	expect_refused(copy, len, "found section id 4 where section 3 was expected");

	/* A section one byte longer than its content. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 9);
	put_le32(copy + at + 2, get_le32(copy + at + 2) + 1);
	expect_refused(copy, len, "section limits: 1 unused bytes");

	/* A section claiming more than there is. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 12);
	put_le32(copy + at + 2, 0xffffffffu);
	expect_refused(copy, len, "declares 4294967295 bytes");

	/* A count that cannot fit: refused before allocating. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 7);
	put_le32(copy + at + 6, 0xffffffffu);
	expect_refused(copy, len, "methods: 4294967295 entries cannot fit");

	/* A string length beyond the limit. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 2);
	put_le32(copy + at + 6, 4000);
	expect_refused(copy, len, "workspace: length 4000 exceeds 251");

	/* A presence byte that is neither 0 nor 1. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 11);
	copy[at + 6] = 2;
	expect_refused(copy, len, "audit_sink: 2 is not a boolean");

	/* A NUL inside a string ("POST" -> "PO\0T"). */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 7);
	copy[at + 6 + 4 + 4 + 3 + 4 + 2] = 0;
	expect_refused(copy, len, "NUL");

	/* Unsorted: swap "GET" and "POS" in place (same lengths after the edit). */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 7);
	memcpy(copy + at + 6 + 4 + 4, "POS", 3);
	memcpy(copy + at + 6 + 4 + 4 + 3 + 4, "GETT", 4);
	expect_refused(copy, len, "methods[1] is not after methods[0]");

	/* An unknown flag bit. */
	memcpy(copy, data, len);
	at = section_offset(copy, len, 1);
	copy[at + 6 + 4 + 1] |= 0x80;	/* bit 15 */
	expect_refused(copy, len, "unknown bits");

	free(copy);
	free(data);
	tp_policy_free(p);
}

Test(tpol, decoder_accepts_null_why)
{
	struct tp_policy *p = full_policy(), *decoded = NULL;
	uint8_t *data = NULL;
	size_t len = 0;

	encode(p, &data, &len);
	cr_expect_eq(tp_policy_decode(data, len - 1, &decoded, NULL, 0), -EINVAL);
	cr_expect_eq(tp_policy_decode(data, len, NULL, NULL, 0), -EINVAL);
	cr_expect_eq(tp_policy_decode(data, len, &decoded, NULL, 0), 0);
	tp_policy_free(decoded);
	free(data);
	tp_policy_free(p);
}

/* ---- the digest -------------------------------------------------------- */

/* Changes one field of a full policy, keeping it canonical; false past the last. */
static bool change_one_field(struct tp_policy *p, int which)
{
	int i = 0;

#define CASE(change)              \
	if (which == i++) {       \
		change;           \
		return true;      \
	}
	CASE(p->mode = TP_MODE_AUDIT);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_IMAGE_DIGEST; memset(p->image_digest, 0, 32));
	CASE(p->uid = 0);
	CASE(p->gid = 0);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_ARTIFACTS_SCAN);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_ARTIFACTS_HASH);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_REVOKE_CREDENTIALS);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_VERIFY_PROCESS_TREE);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_AUDIT_FAIL_CLOSED);
	CASE(p->flags &= ~(uint32_t)TP_POLICY_AUDIT_RECORD_ALLOWED);
	CASE(p->image_digest[31] ^= 1);
	CASE(replace(&p->runtime_revision, NULL));
	CASE(replace(&p->runtime_revision, ""));
	CASE(replace(&p->runtime_revision, "rev-2"));
	CASE(replace(&p->tenant, NULL));
	CASE(replace(&p->tenant, "acmf"));
	CASE(replace(&p->run_id, NULL));
	CASE(replace(&p->run_id, "run-43"));
	CASE(p->uid = 1002);
	CASE(p->gid = 1002);
	CASE(replace(&p->workspace, "/work/wt"));
	CASE(replace(&p->workspace_source, NULL));
	CASE(replace(&p->workspace_source, "/srv/src2"));
	CASE(replace(&p->workspace_ref, "0123456789abcdef0123456789abcdef01234567"));
	CASE(p->workspace_mode = TP_WORKSPACE_FRESH);
	CASE(p->lifetime = TP_LIFETIME_PERSISTENT);
	CASE(replace(&p->path_rules[3].path, "/work/ws/secrets"));
	CASE(p->path_rules[1].access = TETHER_ACCESS_READ);
	CASE(p->path_rules[1].kind = TP_PATH_SUBTREE);
	CASE(free(p->path_rules[3].path); p->path_rules[3].path = NULL; p->path_rule_count--);
	CASE(replace(&p->inputs[1].path, "/data/c"));
	CASE(p->inputs[1].has_digest = true);
	CASE(p->inputs[0].digest[0] ^= 1);
	CASE(free(p->inputs[1].path); p->inputs[1].path = NULL; p->input_count--);
	CASE(p->net_rules[2].addr[3] ^= 1);
	CASE(p->net_rules[2].prefixlen = 33);
	CASE(p->net_rules[1].protocols = TP_PROTO_UDP);
	CASE(p->net_rules[2].port_min = 52);
	CASE(p->net_rules[0].port_max = 444);
	CASE(p->net_rule_count--);
	CASE(replace(&p->host_rules[0].name, "*.example.org"));
	CASE(p->host_rules[0].protocols = TP_PROTO_TCP);
	CASE(p->host_rules[2].port_min = 8001);
	CASE(p->host_rules[2].port_max = 8101);
	CASE(free(p->host_rules[2].name); p->host_rules[2].name = NULL; p->host_rule_count--);
	CASE(replace(&p->methods[1], "PUT"));
	CASE(free(p->methods[1]); p->methods[1] = NULL; p->method_count--);
	CASE(struct tp_endpoint t = p->dns_upstreams[0];
	     p->dns_upstreams[0] = p->dns_upstreams[1]; p->dns_upstreams[1] = t);
	CASE(p->dns_upstreams[0].addr[15] ^= 1);
	CASE(p->dns_upstreams[1].port = 54);
	CASE(p->dns_upstream_count--);
	CASE(p->dns_ttl_min_s = 6);
	CASE(p->dns_ttl_max_s = 3601);
	for (int limit = 0; limit < TP_LIMIT_COUNT; limit++) {
		CASE(p->limits[limit] = 0);
		CASE(p->limits[limit] ^= 2);
	}
	CASE(replace(&p->artifacts[1], "out/report.jsonl"));
	CASE(free(p->artifacts[1]); p->artifacts[1] = NULL; p->artifact_count--);
	CASE(replace(&p->audit_sink, NULL));
	CASE(replace(&p->audit_sink, "/var/log/tether/audit2.jsonl"));
	CASE(replace(&p->gaps[2], "network_egress.method"));
	CASE(free(p->gaps[2]); p->gaps[2] = NULL; p->gap_count--);
	CASE(replace(&p->abstract_sockets[1], "tether/lt"));
	CASE(replace(&p->env_names[2], "_privatf"));
	CASE(free(p->env_names[2]); p->env_names[2] = NULL; p->env_name_count--);
#undef CASE
	return false;
}

Test(tpol, digest_changes_with_every_field)
{
	uint8_t digests[128][32];
	char text[TP_DIGEST_TEXT_MAX];
	struct tp_policy *p = full_policy();
	int n = 0;

	cr_assert_eq(tp_policy_digest(p, digests[n++]), 0);
	tp_policy_free(p);
	for (int which = 0;; which++) {
		p = full_policy();
		if (!change_one_field(p, which)) {
			tp_policy_free(p);
			break;
		}
		cr_assert_lt(n, 128);
		cr_assert_eq(tp_policy_digest(p, digests[n]), 0, "change %d", which);
		expect_round_trip(p);
		for (int other = 0; other < n; other++)
			cr_expect(memcmp(digests[n], digests[other], 32) != 0,
				  "change %d: same digest as %d", which, other - 1);
		n++;
		tp_policy_free(p);
	}
	cr_expect_gt(n, 70);

	/* The digest is the sha256 of the encoding, and stable across calls. */
	p = full_policy();
	{
		uint8_t *data = NULL, direct[32], again[32];
		size_t len = 0;

		encode(p, &data, &len);
		cr_assert_eq(tp_sha256(data, len, direct), 0);
		cr_assert_eq(tp_policy_digest(p, again), 0);
		cr_expect(memcmp(direct, again, 32) == 0 && memcmp(direct, digests[0], 32) == 0);
		free(data);
	}
	tp_digest_text(digests[0], text);
	cr_expect(strncmp(text, "sha256:", 7) == 0 && strlen(text) == 71);
	for (size_t i = 7; i < 71; i++)
		cr_expect(strchr("0123456789abcdef", text[i]), "'%c' in digest text", text[i]);
	tp_policy_free(p);
}
