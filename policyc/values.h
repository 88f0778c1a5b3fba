/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scalar value syntax of the envelope: sizes, durations, CPUs, integers,
 * booleans, digests, hostnames, addresses, CIDRs, ports, destinations.
 *
 * Every parser takes the scalar's text and length (the text may hold NUL
 * bytes: any NUL is an error), writes its result only on success and returns
 * 0, or -EINVAL with a one-line reason in `why` (a complete English phrase
 * without trailing period and without the key's name, e.g. "'2 GiB' has a
 * space between the number and the unit; write '2GiB'").  Quoted user text
 * inside `why` is escaped with tp_excerpt().  No parser allocates except
 * tp_parse_hostname(), which returns a malloc'd name.
 *
 * Not part of the library's API: only policyc/ includes it, and
 * runtime/daemon/config.c (tp_parse_uint for daemon.yaml's numbers).
 */
#ifndef TETHER_POLICYC_VALUES_H
#define TETHER_POLICYC_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policyc/policy.h"
#include "policyc/policyc_internal.h"

#define TP_WHY_MAX 512

/*
 * Sizes in bytes: a decimal integer ("4294967296"), or one with an IEC unit
 * ("2GiB", "512KiB", "4MiB", "1TiB", "1PiB", "1EiB") or an SI unit ("500kB",
 * "2MB", "1GB", "1TB", "1PB", "1EB" = powers of 1000), or "B" ("512B").  No
 * sign, no fraction, no space, no leading zeros ("0" alone is a number), units
 * spelt exactly as above (case matters: "2gib" and "2G" are errors, with a
 * hint); overflow of uint64 is an error.  The result must lie in [min, max].
 */
int tp_parse_size(const char *text, size_t len, uint64_t min, uint64_t max,
		  uint64_t *out, char *why, size_t why_len);

/*
 * Durations in milliseconds: one or more number+unit terms in decreasing
 * unit order, each unit at most once: "10m", "1h30m", "90s", "250ms",
 * "1d12h".  Units: d, h, m, s, ms.  A bare number ("10") is an error with
 * the hint to add a unit; "1.5h" is an error (hint "1h30m").  [min, max] in ms.
 */
int tp_parse_duration(const char *text, size_t len, uint64_t min_ms, uint64_t max_ms,
		      uint64_t *out_ms, char *why, size_t why_len);

/*
 * CPUs in milli-CPUs: "2" (2000), "0.5" (500), "1.25" (1250), "500m" (500).
 * At most three decimals; [min, max] in milli-CPUs.
 */
int tp_parse_cpu(const char *text, size_t len, uint64_t min_milli, uint64_t max_milli,
		 uint64_t *out_milli, char *why, size_t why_len);

/* A plain decimal integer (no unit, sign or leading zero) in [min, max]. */
int tp_parse_uint(const char *text, size_t len, uint64_t min, uint64_t max,
		  uint64_t *out, char *why, size_t why_len);

/*
 * "true" or "false" only.  YAML 1.1 spellings (yes, no, on, off, y, n, True,
 * FALSE...) are errors with a hint, so no reader and no parser disagree.
 */
int tp_parse_bool(const char *text, size_t len, bool *out, char *why, size_t why_len);

/*
 * "sha256:" followed by exactly 64 lower-case hex digits.  Placeholders
 * ("sha256:<immutable-image>", "sha256:...", "<digest>", "TODO", all-zero
 * digests) get a message saying it is a placeholder; upper-case hex gets a
 * hint; other algorithms are refused ("only sha256 digests are accepted").
 */
int tp_parse_digest(const char *text, size_t len, uint8_t digest[32], char *why,
		    size_t why_len);

/*
 * A DNS hostname: labels of [A-Za-z0-9-], 1..63 bytes, not starting or ending
 * with '-', total at most 253 bytes, at least two labels ("localhost" is an
 * error: loopback is an address rule), an optional trailing dot (dropped),
 * optionally a leading "*." (wildcard: any name below, not the name itself;
 * only as the whole first label).  Not an IPv4 address in disguise (all
 * labels numeric is an error).  Returned lower-cased, malloc'd.
 */
int tp_parse_hostname(const char *text, size_t len, char **out, char *why, size_t why_len);

/*
 * An IP address or CIDR block: "192.0.2.1", "192.0.2.0/24", "2001:db8::1",
 * "2001:db8::/32", "::ffff:192.0.2.1".  IPv4 is strict dotted quad (no
 * leading zeros, no octal or short forms like "127.1").  The result is the
 * 16-byte mapped form (IPv4 -> ::ffff:a.b.c.d, prefixlen 96 + n; a bare
 * address is /32 or /128).  Host bits set below the prefix are an error with
 * a hint naming the network ("192.0.2.1/24: did you mean 192.0.2.0/24?").
 * IPv6 zone ids ("%eth0") are refused.
 */
int tp_parse_cidr(const char *text, size_t len, uint8_t addr[16], uint8_t *prefixlen,
		  char *why, size_t why_len);

/* A port "443" (1..65535) or an inclusive range "8000-8100" (min <= max). */
int tp_parse_port_range(const char *text, size_t len, uint16_t *min, uint16_t *max,
			char *why, size_t why_len);

/*
 * One destination in its scalar form:
 *   host                 api.github.com        (any port)
 *   host:port[-port]     api.github.com:443
 *   *.host               *.example.com
 *   address or CIDR      192.0.2.1, 192.0.2.0/24, 2001:db8::/32
 *   v4:port[-port]       192.0.2.1:443, 192.0.2.0/24:8000-8100
 *   [v6]:port[-port]     [2001:db8::1]:443, [2001:db8::/32]:53
 * Protocols are TP_PROTO_ANY; an entry without a port has 1..65535.
 * Sets dest->host (malloc'd) or dest->addr/prefixlen; never dest->pos.
 */
int tp_parse_destination(const char *text, size_t len, struct tp_destination *dest,
			 char *why, size_t why_len);

/* An address with an optional port: "192.0.2.53", "192.0.2.53:5353", "[2001:db8::53]:53". */
int tp_parse_endpoint(const char *text, size_t len, uint16_t default_port,
		      struct tp_endpoint *out, char *why, size_t why_len);

/* Where a path pattern may point. */
enum tp_pattern_where {
	TP_PATTERN_ANY,		/* absolute, or relative to the workspace */
	TP_PATTERN_ABSOLUTE,
	TP_PATTERN_RELATIVE,
};

/* A `why` that quotes a pattern twice needs more room than TP_WHY_MAX. */
#define TP_PATTERN_WHY_MAX (3 * TP_EXCERPT_MAX + 256)

/*
 * A path pattern, as in filesystem.read/write/exec/deny, workspace.write,
 * artifacts.allow and a task contract's allowed_paths: an exact path
 * ("/a/b", "src/main.c"), a subtree (a path, a slash and "**"), or "**"
 * alone (the workspace; "/" + "**" is the root).  Lexically normalised
 * ("//", ".", ".."); a relative pattern must not climb out of the workspace;
 * no other glob character ("*?[]{}"), no trailing "/", at most 251 bytes.
 * The workspace itself must be written "**", not as an exact "." .
 * Sets out->path (malloc'd: absolute, or relative without a leading "/",
 * "" for the workspace), relative and kind; never out->pos.  Returns 0,
 * -EINVAL with `why`, or -ENOMEM.
 */
int tp_parse_path_pattern(const char *text, size_t len, enum tp_pattern_where where,
			  struct tp_path_entry *out, char *why, size_t why_len);

/* Formats a mapped address/prefix back: "192.0.2.0/24", "2001:db8::/32",
 * "192.0.2.1" (a full-length prefix is printed without "/n").  `out` must
 * hold at least TP_CIDR_TEXT_MAX bytes. */
#define TP_CIDR_TEXT_MAX 64
void tp_format_cidr(const uint8_t addr[16], uint8_t prefixlen, char out[TP_CIDR_TEXT_MAX]);

/* Formats a byte count for humans: "4GiB" when exact, else the number: "4294967297". */
#define TP_SIZE_TEXT_MAX 32
void tp_format_size(uint64_t bytes, char out[TP_SIZE_TEXT_MAX]);
/* Formats milliseconds: "1h30m", "10m", "250ms". */
#define TP_DURATION_TEXT_MAX 48
void tp_format_duration(uint64_t ms, char out[TP_DURATION_TEXT_MAX]);
/* Formats milli-CPUs: "2", "0.5", "1.25". */
void tp_format_cpu(uint64_t milli, char out[TP_SIZE_TEXT_MAX]);

/*
 * sha256 (FIPS 180-4) of `len` bytes, by libcrypto.  Returns 0, or -ENOMEM
 * when libcrypto could not allocate (digest then unwritten).
 */
int tp_sha256(const void *data, size_t len, uint8_t digest[32]);

#endif
