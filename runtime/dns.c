// SPDX-License-Identifier: GPL-2.0
/*
 * DNS wire format helpers for the run's DNS proxy (runtime/dnsproxy.c).
 *
 * Everything here reads attacker-controlled bytes: the query comes from the
 * confined agent, the response from the network.  Every read is checked
 * against the message length before it happens; names are decoded into a
 * bounded canonical form (uncompressed wire form, ASCII lower case) and
 * compared as such, never as text, so that a label holding a '.' cannot pass
 * for two labels.
 */
#include <errno.h>
#include <string.h>

#include "runtime/dns.h"

#define WIRE_NAME_MAX 255	/* RFC 1035 3.1, length octets and the final 0 included */
/* A message of 64 KiB holds at most this many pointers anyway; a loop is already ruled out. */
#define POINTER_HOPS_MAX 128

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* RFC 2181 8: a TTL with the most significant bit set is to be read as zero. */
static uint32_t ttl_value(uint32_t ttl)
{
	return ttl & 0x80000000u ? 0 : ttl;
}

/*
 * Reads the (possibly compressed) name at `off`.  `wire` (may be NULL) gets
 * its canonical form: uncompressed, lower case, at most WIRE_NAME_MAX bytes,
 * *wire_len its length.  *next is the offset after the name where it sits
 * (after the first pointer, if any).
 *
 * A pointer must point before the start of the stretch of labels it ends:
 * every writer points to a name written earlier, and the starts then strictly
 * decrease, so no input can make this loop (RFC 1035 4.1.4 allows only
 * "prior" occurrences).
 */
static int name_read(const uint8_t *msg, size_t len, size_t off, uint8_t *wire,
		     size_t *wire_len, size_t *next)
{
	size_t pos = off, segment = off, out = 0, after = 0;
	unsigned hops = 0;
	bool jumped = false;

	for (;;) {
		uint8_t b;

		if (pos >= len)
			return -EBADMSG;
		b = msg[pos];
		if ((b & 0xc0) == 0xc0) {
			size_t target;

			if (pos + 1 >= len)
				return -EBADMSG;
			target = (size_t)(b & 0x3f) << 8 | msg[pos + 1];
			if (!jumped)
				after = pos + 2;
			if (target >= segment || ++hops > POINTER_HOPS_MAX)
				return -EBADMSG;
			jumped = true;
			pos = segment = target;
			continue;
		}
		if (b & 0xc0)	/* 0x40 and 0x80: extended and reserved label types */
			return -EBADMSG;
		if (b == 0) {
			if (wire)
				wire[out] = 0;
			out++;
			if (!jumped)
				after = pos + 1;
			break;
		}
		/* Room for this label and the final zero octet. */
		if (pos + 1 + b > len || out + 1 + b + 1 > WIRE_NAME_MAX)
			return -EBADMSG;
		if (wire) {
			wire[out] = b;
			for (size_t i = 0; i < b; i++)
				wire[out + 1 + i] = lower(msg[pos + 1 + i]);
		}
		out += 1 + (size_t)b;
		pos += 1 + (size_t)b;
	}
	if (wire_len)
		*wire_len = out;
	*next = after;
	return 0;
}

/* Characters a query's label may hold: hostnames, plus '_' for service labels (_dmarc, _tcp). */
static bool query_label_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/*
 * The question's name in a query, as text.  Nothing precedes it but the
 * header, so a compression pointer there is malformed; so is any character a
 * policy name could not hold, so the text maps back to exactly one wire name.
 */
static int question_name(const uint8_t *msg, size_t len, size_t off, char *text, size_t *next)
{
	size_t pos = off, out = 0;

	for (;;) {
		uint8_t b;

		if (pos >= len)
			return -EBADMSG;
		b = msg[pos];
		if (b == 0)
			break;
		if (b > 63 || pos + 1 + b > len)
			return -EBADMSG;
		/* The text form: labels, dots between them, at most DNS_NAME_MAX. */
		if (out + (out ? 1 : 0) + b > DNS_NAME_MAX)
			return -EBADMSG;
		if (out)
			text[out++] = '.';
		for (size_t i = 0; i < b; i++) {
			uint8_t c = msg[pos + 1 + i];

			if (!query_label_char(c))
				return -EBADMSG;
			text[out++] = (char)lower(c);
		}
		pos += 1 + (size_t)b;
	}
	text[out] = '\0';
	*next = pos + 1;
	return 0;
}

/* Text name (as in struct dns_question) to canonical wire form.  -EINVAL if it is not one. */
static int text_to_wire(const char *text, uint8_t *wire, size_t *wire_len)
{
	size_t n = strnlen(text, DNS_NAME_MAX + 1), pos = 0, out = 0;

	if (n > DNS_NAME_MAX)
		return -EINVAL;
	if (n && text[n - 1] == '.')
		n--;
	while (pos < n) {
		const char *dot = memchr(text + pos, '.', n - pos);
		size_t label = dot ? (size_t)(dot - text) - pos : n - pos;

		if (label == 0 || label > 63 || out + 1 + label + 1 > WIRE_NAME_MAX)
			return -EINVAL;
		wire[out++] = (uint8_t)label;
		for (size_t i = 0; i < label; i++)
			wire[out++] = lower((uint8_t)text[pos + i]);
		pos += label + 1;
	}
	wire[out++] = 0;
	*wire_len = out;
	return 0;
}

struct rr {
	uint8_t owner[WIRE_NAME_MAX];
	size_t owner_len;
	uint16_t type, class;
	uint32_t ttl;
	size_t rdata, rdlen;	/* offset and length of RDATA */
};

/* One resource record at *off; *off moves past it.  `r` gets it if non-NULL. */
static int rr_read(const uint8_t *msg, size_t len, size_t *off, struct rr *r)
{
	size_t pos, rdlen;
	int ret;

	ret = name_read(msg, len, *off, r ? r->owner : NULL, r ? &r->owner_len : NULL, &pos);
	if (ret < 0)
		return ret;
	if (len - pos < 10)
		return -EBADMSG;
	rdlen = get16(msg + pos + 8);
	if (len - pos - 10 < rdlen)
		return -EBADMSG;
	if (r) {
		r->type = get16(msg + pos);
		r->class = get16(msg + pos + 2);
		r->ttl = get32(msg + pos + 4);
		r->rdata = pos + 10;
		r->rdlen = rdlen;
	}
	*off = pos + 10 + rdlen;
	return 0;
}

/* Skips `count` questions at *off (compression allowed: used on responses). */
static int questions_skip(const uint8_t *msg, size_t len, size_t *off, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		size_t pos;
		int ret = name_read(msg, len, *off, NULL, NULL, &pos);

		if (ret < 0)
			return ret;
		if (len - pos < 4)
			return -EBADMSG;
		*off = pos + 4;
	}
	return 0;
}

/* An A or AAAA record's address as IPv4-mapped IPv6; -EBADMSG on a wrong RDATA length. */
static int rr_addr(const uint8_t *msg, const struct rr *r, uint8_t addr[16])
{
	if (r->type == DNS_TYPE_A) {
		if (r->rdlen != 4)
			return -EBADMSG;
		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, msg + r->rdata, 4);
		return 0;
	}
	if (r->rdlen != 16)
		return -EBADMSG;
	memcpy(addr, msg + r->rdata, 16);
	return 0;
}

static bool rr_is_addr(const struct rr *r)
{
	return r->class == DNS_CLASS_IN && (r->type == DNS_TYPE_A || r->type == DNS_TYPE_AAAA);
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *q)
{
	struct dns_question parsed = { 0 };
	unsigned an, ns, ar;
	size_t pos;
	bool opt = false;
	int ret;

	if (len < DNS_HEADER_LEN)
		return -EBADMSG;
	parsed.id = get16(msg);
	parsed.flags = get16(msg + 2);
	if (parsed.flags & DNS_FLAG_QR)
		return -EBADMSG;
	if (DNS_OPCODE(parsed.flags) != 0 || get16(msg + 4) != 1)
		return -EOPNOTSUPP;
	an = get16(msg + 6);
	ns = get16(msg + 8);
	ar = get16(msg + 10);

	ret = question_name(msg, len, DNS_HEADER_LEN, parsed.name, &pos);
	if (ret < 0)
		return ret;
	if (len - pos < 4)
		return -EBADMSG;
	parsed.qtype = get16(msg + pos);
	parsed.qclass = get16(msg + pos + 2);
	parsed.end = pos + 4;

	pos = parsed.end;
	for (unsigned i = 0; i < an + ns + ar; i++) {
		struct rr r;

		ret = rr_read(msg, len, &pos, &r);
		if (ret < 0)
			return ret;
		if (r.type != DNS_TYPE_OPT)
			continue;
		/* RFC 6891 6.1.1: one OPT, in the additional section, owned by the root. */
		if (i < an + ns || opt || r.owner_len != 1)
			return -EBADMSG;
		opt = true;
		parsed.edns = true;
		parsed.edns_size = r.class;
		parsed.edns_do = r.ttl & 0x8000;
	}
	*q = parsed;
	return 0;
}

int dns_parse_response(const uint8_t *msg, size_t len, const struct dns_question *q,
		       struct dns_addr *addrs, size_t max, size_t *count, uint8_t *rcode)
{
	uint8_t target[WIRE_NAME_MAX], qname[WIRE_NAME_MAX];
	size_t target_len, qname_len, pos, found = 0;
	unsigned an, ns, ar, cnames = 0;
	uint16_t flags;
	int ret;

	if (len < DNS_HEADER_LEN)
		return -EBADMSG;
	flags = get16(msg + 2);
	if (get16(msg) != q->id || !(flags & DNS_FLAG_QR) || DNS_OPCODE(flags) != 0 ||
	    get16(msg + 4) != 1)
		return -ENOMSG;
	an = get16(msg + 6);
	ns = get16(msg + 8);
	ar = get16(msg + 10);

	if (text_to_wire(q->name, target, &target_len) < 0)
		return -ENOMSG;
	ret = name_read(msg, len, DNS_HEADER_LEN, qname, &qname_len, &pos);
	if (ret < 0)
		return ret;
	if (len - pos < 4)
		return -EBADMSG;
	if (qname_len != target_len || memcmp(qname, target, qname_len) != 0 ||
	    get16(msg + pos) != q->qtype || get16(msg + pos + 2) != q->qclass)
		return -ENOMSG;
	pos += 4;

	/*
	 * Follow the chain in order, as a stub resolver reads the section: a
	 * record counts when its owner is the name the chain has reached.
	 */
	for (unsigned i = 0; i < an; i++) {
		struct rr r;

		ret = rr_read(msg, len, &pos, &r);
		if (ret < 0)
			return ret;
		if (r.class != DNS_CLASS_IN)
			continue;
		if (rr_is_addr(&r)) {
			uint8_t addr[16];

			ret = rr_addr(msg, &r, addr);
			if (ret < 0)
				return ret;
			if (r.owner_len != target_len || memcmp(r.owner, target, target_len) != 0 ||
			    found >= max)
				continue;
			memcpy(addrs[found].addr, addr, 16);
			addrs[found].ttl = ttl_value(r.ttl);
			found++;
		} else if (r.type == DNS_TYPE_CNAME) {
			size_t end;

			if (r.owner_len != target_len || memcmp(r.owner, target, target_len) != 0 ||
			    cnames >= DNS_CNAME_CHAIN_MAX)
				continue;
			/* The name must fill RDATA exactly: one running on past it is corrupt. */
			ret = name_read(msg, r.rdata + r.rdlen, r.rdata, target, &target_len, &end);
			if (ret < 0 || end != r.rdata + r.rdlen)
				return -EBADMSG;
			cnames++;
		}
	}
	/* The rest must be well-formed too: the whole message goes to the client. */
	for (unsigned i = 0; i < ns + ar; i++) {
		ret = rr_read(msg, len, &pos, NULL);
		if (ret < 0)
			return ret;
	}
	*count = found;
	*rcode = DNS_RCODE(flags);
	return 0;
}

int dns_for_each_addr(const uint8_t *msg, size_t len,
		      int (*fn)(void *ctx, const uint8_t addr[16], uint32_t ttl), void *ctx)
{
	unsigned records;
	size_t pos = DNS_HEADER_LEN;
	int ret;

	if (len < DNS_HEADER_LEN)
		return -EBADMSG;
	ret = questions_skip(msg, len, &pos, get16(msg + 4));
	if (ret < 0)
		return ret;
	records = (unsigned)get16(msg + 6) + get16(msg + 8) + get16(msg + 10);
	for (unsigned i = 0; i < records; i++) {
		struct rr r;
		uint8_t addr[16];

		ret = rr_read(msg, len, &pos, &r);
		if (ret < 0)
			return ret;
		if (!rr_is_addr(&r))
			continue;
		ret = rr_addr(msg, &r, addr);
		if (ret < 0)
			return ret;
		ret = fn(ctx, addr, ttl_value(r.ttl));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The end of the name at `off` as laid out in place: its labels up to the
 * zero octet or the first pointer, whose target is not read.  For walks over
 * a message already checked with name_read(), once bytes a pointer may target
 * (TTLs) have been rewritten: positions do not depend on those bytes.
 */
static int name_skip_in_place(const uint8_t *msg, size_t len, size_t off, size_t *next)
{
	size_t pos = off;

	while (pos < len) {
		uint8_t b = msg[pos];

		if ((b & 0xc0) == 0xc0) {
			if (pos + 1 >= len)
				return -EBADMSG;
			*next = pos + 2;
			return 0;
		}
		if (b & 0xc0)
			return -EBADMSG;
		if (b == 0) {
			*next = pos + 1;
			return 0;
		}
		pos += 1 + (size_t)b;
	}
	return -EBADMSG;
}

/*
 * Checks the header, questions and answer section with full name decoding;
 * then, only if all is well, rewrites TTLs in a second walk that does not
 * follow pointers: a pointer may target a TTL just rewritten, and the walk
 * must find the records where the check found them, so it cannot fail half
 * way and leave the message half rewritten.
 */
int dns_cap_ttls(uint8_t *msg, size_t len, uint32_t max_ttl)
{
	size_t pos = DNS_HEADER_LEN;
	unsigned qd, an;
	int ret;

	if (len < DNS_HEADER_LEN)
		return -EBADMSG;
	qd = get16(msg + 4);
	an = get16(msg + 6);
	ret = questions_skip(msg, len, &pos, qd);
	if (ret < 0)
		return ret;
	for (unsigned i = 0; i < an; i++) {
		ret = rr_read(msg, len, &pos, NULL);
		if (ret < 0)
			return ret;
	}

	pos = DNS_HEADER_LEN;
	for (unsigned i = 0; i < qd; i++) {
		if (name_skip_in_place(msg, len, pos, &pos) < 0)
			return -EBADMSG;	/* not reached: checked above */
		pos += 4;
	}
	for (unsigned i = 0; i < an; i++) {
		uint16_t type;
		uint32_t ttl;

		if (name_skip_in_place(msg, len, pos, &pos) < 0 || len - pos < 10)
			return -EBADMSG;	/* not reached: checked above */
		type = get16(msg + pos);
		ttl = get32(msg + pos + 4);
		/* OPT is never an answer, but its "TTL" holds flags: never touch it. */
		if (type != DNS_TYPE_OPT) {
			if (ttl & 0x80000000u)
				put32(msg + pos + 4, 0);
			else if (ttl > max_ttl)
				put32(msg + pos + 4, max_ttl);
		}
		pos += 10 + get16(msg + pos + 8);
	}
	return 0;
}

size_t dns_build_reply(const uint8_t *query, const struct dns_question *q, uint8_t rcode,
		       uint8_t *out, size_t size)
{
	uint16_t flags;

	if (q->end < DNS_HEADER_LEN + 5 || q->end > DNS_QUESTION_MAX || q->end > size)
		return 0;
	memcpy(out, query, q->end);
	flags = DNS_FLAG_QR | DNS_FLAG_RA | (q->flags & (DNS_FLAG_RD | DNS_FLAG_CD));
	flags |= rcode & 0xf;
	put16(out, q->id);
	put16(out + 2, flags);
	put16(out + 4, 1);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	return q->end;
}

static bool span_eq_nocase(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower((uint8_t)a[i]) != lower((uint8_t)b[i]))
			return false;
	return true;
}

static size_t name_len(const char *s)
{
	size_t n = strlen(s);

	return n && s[n - 1] == '.' ? n - 1 : n;
}

bool dns_name_matches(const char *pattern, const char *name)
{
	size_t pn = name_len(pattern), nn = name_len(name);

	if (pn == 0 || nn == 0)
		return false;
	if (pn >= 2 && pattern[0] == '*' && pattern[1] == '.') {
		const char *zone = pattern + 2;
		size_t zn = pn - 2;

		/* Strictly below: at least one label, then '.', then the zone. */
		return zn > 0 && nn > zn + 1 && name[nn - zn - 1] == '.' &&
		       span_eq_nocase(name + nn - zn, zone, zn);
	}
	return pn == nn && span_eq_nocase(pattern, name, nn);
}

/* An IPv4 address carried inside IPv6, judged as the IPv4 address it names. */
static enum tp_addr_class classify_v4(const uint8_t *v4)
{
	uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff };

	memcpy(mapped + 12, v4, 4);
	return tp_addr_range_class(mapped);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

enum tp_addr_class dns_classify(const uint8_t addr[16])
{
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };

	/* ::ffff:a.b.c.d (the kernel sends it to a.b.c.d), ::, ::1: the table's own forms. */
	if (all_zero(addr, 10) && addr[10] == 0xff && addr[11] == 0xff)
		return tp_addr_range_class(addr);
	if (all_zero(addr, 12)) {
		if (all_zero(addr + 12, 3) && addr[15] <= 1)
			return tp_addr_range_class(addr);
		/* ::a.b.c.d (IPv4-compatible, deprecated): judged by the IPv4 address it names. */
		return classify_v4(addr + 12);
	}
	/* A NAT64 or 6to4 gateway forwards these to the IPv4 address they carry. */
	if (memcmp(addr, nat64, 12) == 0)
		return classify_v4(addr + 12);
	if (addr[0] == 0x20 && addr[1] == 0x02) {
		enum tp_addr_class c = classify_v4(addr + 2);

		if (c != TP_ADDR_PUBLIC)
			return c;
	}
	return tp_addr_range_class(addr);
}

const char *dns_addr_class_name(enum tp_addr_class c)
{
	switch (c) {
	case TP_ADDR_PUBLIC:
		return "public";
	case TP_ADDR_LOOPBACK:
		return "loopback";
	case TP_ADDR_PRIVATE:
		return "private";
	case TP_ADDR_LINK_LOCAL:
		return "link-local";
	case TP_ADDR_METADATA:
		return "metadata";
	case TP_ADDR_UNSPECIFIED:
		return "unspecified";
	case TP_ADDR_MULTICAST:
		return "multicast";
	}
	return "unknown";
}

/*
 * The entropy threshold, in bits per character, for labels of 16 to 39 bytes
 * (longer ones are suspect by length alone).  Measured on labels of real
 * service names ("productionservice" 3.50, "cloudfront-distribution" 3.56,
 * "production-eu-west-2" 3.68, "dualstack-apiserver" 3.68: hyphenated English
 * stays under 3.7, because letters repeat) and on random labels such as
 * encoders emit: base32 or base36 of 24 characters reaches 3.8 in about half
 * the samples, of 32 characters in more than 95%.  3.8 therefore flags most
 * base32/36 payloads of 24+ bytes with few false alarms; a 16-byte label of
 * all-distinct characters (4.0) is flagged, which is acceptable for a hint.
 * Hex payloads (at most 4.0, typically 3.2-3.7) are caught by length only.
 * The flag is advisory: it goes with a name that is refused anyway.
 */
#define DNS_TUNNEL_ENTROPY 3.8
#define TUNNEL_LABEL_LEN 40
#define TUNNEL_NAME_LEN 150
#define ENTROPY_LABEL_MIN 16

/* n * log2(n) for n < 64, so no libm is needed (the binary links statically). */
static const double n_log2_n[64] = {
	0.000000,   0.000000,	2.000000,   4.754888,	8.000000,   11.609640,	15.509775,
	19.651484,  24.000000,	28.529325,  33.219281,	38.053748,  43.019550,	48.105716,
	53.302969,  58.603359,	64.000000,  69.486868,	75.058650,  80.710623,	86.438562,
	92.238666,  98.107496,	104.041925, 110.039100, 116.096405, 122.211433, 128.381963,
	134.605938, 140.881449, 147.206718, 153.580086, 160.000000, 166.465006, 172.973737,
	179.524906, 186.117300, 192.749775, 199.421246, 206.130687, 212.877124, 219.659632,
	226.477332, 233.329384, 240.214991, 247.133389, 254.083850, 261.065676, 268.078200,
	275.120782, 282.192809, 289.293692, 296.422865, 303.579784, 310.763925, 317.974784,
	325.211876, 332.474731, 339.762898, 347.075940, 354.413436, 361.774978, 369.160171,
	376.568635,
};

/* Shannon entropy of a label of 1..63 bytes, case-folded: H = log2 n - sum(c log2 c) / n. */
static double label_entropy(const char *label, size_t n)
{
	unsigned counts[256] = { 0 };
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		counts[lower((uint8_t)label[i])]++;
	for (size_t c = 0; c < 256; c++)
		sum += n_log2_n[counts[c]];
	return (n_log2_n[n] - sum) / (double)n;
}

bool dns_suspect_tunnel(const char *name)
{
	size_t n = strlen(name), pos = 0;

	if (n >= TUNNEL_NAME_LEN)
		return true;
	while (pos < n) {
		const char *dot = memchr(name + pos, '.', n - pos);
		size_t label = dot ? (size_t)(dot - name) - pos : n - pos;

		if (label >= TUNNEL_LABEL_LEN)
			return true;
		if (label >= ENTROPY_LABEL_MIN &&
		    label_entropy(name + pos, label) > DNS_TUNNEL_ENTROPY)
			return true;
		pos += label + 1;
	}
	return false;
}

const char *dns_type_name(uint16_t qtype)
{
	switch (qtype) {
	case 1: return "A";
	case 2: return "NS";
	case 5: return "CNAME";
	case 6: return "SOA";
	case 12: return "PTR";
	case 13: return "HINFO";
	case 15: return "MX";
	case 16: return "TXT";
	case 28: return "AAAA";
	case 33: return "SRV";
	case 35: return "NAPTR";
	case 39: return "DNAME";
	case 41: return "OPT";
	case 43: return "DS";
	case 46: return "RRSIG";
	case 47: return "NSEC";
	case 48: return "DNSKEY";
	case 50: return "NSEC3";
	case 52: return "TLSA";
	case 64: return "SVCB";
	case 65: return "HTTPS";
	case 99: return "SPF";
	case 251: return "IXFR";
	case 252: return "AXFR";
	case 255: return "ANY";
	case 257: return "CAA";
	}
	return NULL;
}
