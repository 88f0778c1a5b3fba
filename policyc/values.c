// SPDX-License-Identifier: GPL-2.0
/*
 * Scalar values of the envelope: the syntax of each is specified in values.h.
 *
 * Every parser is strict: a value has one spelling, so that the person who
 * reads an envelope, any YAML tool and this compiler can never disagree on
 * what it means.  Near misses (wrong case, a space, a fraction, a YAML 1.1
 * spelling, a leading zero that some readers take as octal) stay errors, but
 * the message names the accepted spelling whenever there is one.
 *
 * Text comes with an explicit length and is never read past it; nothing here
 * allocates except the name tp_parse_hostname() returns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policyc/policyc_internal.h"
#include "policyc/values.h"

/* User text escaped for a message; the buffer lives until the end of the statement's block. */
#define EXCERPT(text, len) tp_excerpt((char[TP_EXCERPT_MAX]){ 0 }, (text), (len))

/* Enough for every formatted bound or suggestion (sizes, durations, CPUs, CIDRs). */
#define VALUE_TEXT_MAX 64

/* Space-free copies tried for a "write '...'" hint: at most a maximal hostname. */
#define STRIPPED_MAX 256

/*
 * A message quotes the value once (at most TP_EXCERPT_MAX - 1 characters);
 * anything else it quotes is either validated text (short, printable) or a
 * unit no longer than this, so every message fits TP_WHY_MAX untruncated.
 */
#define UNIT_SHOWN_MAX 16

static int __attribute__((format(printf, 3, 4)))
fail(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	/* Callers that only want to know whether text is valid pass why == NULL. */
	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static char to_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static unsigned int hex_value(char c)
{
	if (is_digit(c))
		return (unsigned int)(c - '0');
	return (unsigned int)(to_lower(c) - 'a' + 10);
}

/* strchr() also finds the terminator: never a member here. */
static bool char_in(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

static bool span_is(const char *text, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(text, word, len) == 0;
}

static bool span_is_nocase(const char *text, size_t len, const char *word)
{
	if (strlen(word) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (to_lower(text[i]) != to_lower(word[i]))
			return false;
	return true;
}

static bool span_all(const char *text, size_t len, bool (*pred)(char))
{
	for (size_t i = 0; i < len; i++)
		if (!pred(text[i]))
			return false;
	return true;
}

static size_t span_count(const char *text, size_t len, char c)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += text[i] == c;
	return n;
}

static bool span_has(const char *text, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (n > len)
		return false;
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(text + i, needle, n) == 0)
			return true;
	return false;
}

/* A run of decimal digits; `overflow` once the value no longer fits uint64. */
struct number {
	uint64_t value;
	size_t digits;
	bool overflow;
};

static size_t scan_number(const char *text, size_t len, size_t pos, struct number *num)
{
	*num = (struct number){ 0 };
	while (pos < len && is_digit(text[pos])) {
		uint64_t digit = (uint64_t)(text[pos] - '0');

		if (!num->overflow && (__builtin_mul_overflow(num->value, 10, &num->value) ||
				       __builtin_add_overflow(num->value, digit, &num->value)))
			num->overflow = true;
		num->digits++;
		pos++;
	}
	return pos;
}

/* Number of leading zeros to drop from a digit run so that one digit remains. */
static size_t excess_zeros(const char *digits, size_t count)
{
	size_t n = 0;

	while (n + 1 < count && digits[n] == '0')
		n++;
	return n;
}

static uint64_t pow10_u64(size_t exponent)
{
	uint64_t p = 1;

	for (size_t i = 0; i < exponent; i++)
		p *= 10;
	return p;
}

/* ---- checks every scalar gets first ------------------------------------ */

static int check_plain(const char *text, size_t len, const char *expected, char *why,
		       size_t why_len)
{
	if (!text && len)
		return fail(why, why_len, "the value is missing; expected %s", expected);
	if (len && memchr(text, '\0', len))
		return fail(why, why_len, "'%s' contains a NUL byte", EXCERPT(text, len));
	if (len == 0)
		return fail(why, why_len, "the value is empty; expected %s", expected);
	return 0;
}

typedef bool (*valid_fn)(const void *ctx, const char *text, size_t len);

/*
 * Spaces are never part of a value.  When the text without them is valid,
 * the message says so, which covers the common "2 GiB" and "1h 30m".
 */
static int check_spaces(const char *text, size_t len, valid_fn valid, const void *ctx,
			char *why, size_t why_len)
{
	char stripped[STRIPPED_MAX];
	size_t first = 0, last, n = 0;
	bool inner = false, fits = true;

	while (first < len && !is_space(text[first]))
		first++;
	if (first == len)
		return 0;

	for (size_t i = 0; i < len && fits; i++) {
		if (is_space(text[i]))
			continue;
		if (n == sizeof(stripped))
			fits = false;
		else
			stripped[n++] = text[i];
	}
	if (n == 0)
		return fail(why, why_len, "'%s' is only spaces", EXCERPT(text, len));
	if (!fits || !valid(ctx, stripped, n))
		return fail(why, why_len, "'%s' has a space; write the value without spaces",
			    EXCERPT(text, len));

	/* Spaces inside the value, as opposed to only around it? */
	last = len;
	while (last > 0 && is_space(text[last - 1]))
		last--;
	for (size_t i = 0; i < last; i++)
		if (is_space(text[i]) && i > 0 && !is_space(text[i - 1]))
			inner = true;
	if (!inner)
		return fail(why, why_len, "'%s' has a leading or trailing space; write '%s'",
			    EXCERPT(text, len), EXCERPT(stripped, n));
	if (first > 0 && is_digit(text[first - 1])) {
		size_t after = first;

		while (after < len && is_space(text[after]))
			after++;
		if (after < len && is_alpha(text[after]))
			return fail(why, why_len,
				    "'%s' has a space between the number and the unit; write '%s'",
				    EXCERPT(text, len), EXCERPT(stripped, n));
	}
	return fail(why, why_len, "'%s' has a space; write '%s'", EXCERPT(text, len),
		    EXCERPT(stripped, n));
}

/* ---- numbers with units ------------------------------------------------ */

/*
 * Returns 0 with *out set, -EINVAL with `why`, or -ERANGE when the syntax is
 * right but the value does not fit uint64 (the caller names the maximum).
 */
typedef int (*syntax_fn)(const char *text, size_t len, uint64_t *out, char *why,
			 size_t why_len);
typedef void (*format_fn)(uint64_t value, char *out);

struct number_kind {
	const char *what;	/* "a size", for "a size cannot be negative" */
	const char *expected;	/* for an empty value */
	syntax_fn syntax;
	format_fn format;	/* bounds in messages, in the value's own syntax */
};

static bool number_valid(const void *ctx, const char *text, size_t len)
{
	const struct number_kind *kind = ctx;
	uint64_t value;

	return kind->syntax(text, len, &value, NULL, 0) == 0;
}

static int parse_number(const struct number_kind *kind, const char *text, size_t len,
			uint64_t min, uint64_t max, uint64_t *out, char *why, size_t why_len)
{
	char bound[VALUE_TEXT_MAX];
	uint64_t value;
	int r;

	r = check_plain(text, len, kind->expected, why, why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, number_valid, kind, why, why_len);
	if (r < 0)
		return r;
	/* Only where a number follows: "-" alone is just not a number. */
	if (len > 1 && text[0] == '-' && (is_digit(text[1]) || text[1] == '.'))
		return fail(why, why_len, "'%s' is negative; %s cannot be negative",
			    EXCERPT(text, len), kind->what);
	if (len > 1 && text[0] == '+' && number_valid(kind, text + 1, len - 1))
		return fail(why, why_len, "'%s' has a '+' sign; write '%s'", EXCERPT(text, len),
			    EXCERPT(text + 1, len - 1));

	r = kind->syntax(text, len, &value, why, why_len);
	if (r == -ERANGE || (r == 0 && value > max)) {
		kind->format(max, bound);
		return fail(why, why_len, "'%s' is too large; the maximum is %s",
			    EXCERPT(text, len), bound);
	}
	if (r < 0)
		return r;
	if (value < min) {
		kind->format(min, bound);
		return fail(why, why_len, "'%s' is too small; the minimum is %s",
			    EXCERPT(text, len), bound);
	}
	*out = value;
	return 0;
}

/* -- sizes -- */

struct size_unit {
	const char *name;
	uint64_t bytes;
	const char *iec;	/* for an SI unit: the IEC unit of the same prefix */
};

static const struct size_unit size_units[] = {
	{ "B", 1, NULL },
	{ "KiB", 1ull << 10, NULL },
	{ "MiB", 1ull << 20, NULL },
	{ "GiB", 1ull << 30, NULL },
	{ "TiB", 1ull << 40, NULL },
	{ "PiB", 1ull << 50, NULL },
	{ "EiB", 1ull << 60, NULL },
	{ "kB", 1000ull, "KiB" },
	{ "MB", 1000000ull, "MiB" },
	{ "GB", 1000000000ull, "GiB" },
	{ "TB", 1000000000000ull, "TiB" },
	{ "PB", 1000000000000000ull, "PiB" },
	{ "EB", 1000000000000000000ull, "EiB" },
};

#define SIZE_UNIT_LIST "B, kB, MB, GB, TB, PB, EB, KiB, MiB, GiB, TiB, PiB or EiB"

static void format_size_si(uint64_t bytes, char *out)
{
	for (size_t i = sizeof(size_units) / sizeof(size_units[0]); i-- > 0;) {
		const struct size_unit *u = &size_units[i];

		if (u->iec && bytes && bytes % u->bytes == 0) {
			snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64 "%s", bytes / u->bytes, u->name);
			return;
		}
	}
	snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64, bytes);
}

static int size_unit_error(const char *text, size_t len, size_t unit_pos, char *why,
			   size_t why_len)
{
	const char *unit = text + unit_pos;
	size_t unit_len = len - unit_pos;
	const char *number = EXCERPT(text, unit_pos);

	if (unit_len >= 2 && char_in(unit[0], "_,'") && is_digit(unit[1]))
		return fail(why, why_len, "'%s' has a digit separator; write the digits together",
			    EXCERPT(text, len));
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++) {
		const struct size_unit *u = &size_units[i];

		if (!span_is_nocase(unit, unit_len, u->name))
			continue;
		if (!u->iec)
			return fail(why, why_len, "'%s' has a unit in the wrong case; write '%s%s'",
				    EXCERPT(text, len), number, u->name);
		return fail(why, why_len,
			    "'%s' has a unit in the wrong case; write '%s%s' (powers of 1000) or '%s%s' (powers of 1024)",
			    EXCERPT(text, len), number, u->name, number, u->iec);
	}
	/* "2G", "2k", "2Gi": the shorthands of other tools. */
	if ((unit_len == 1 || (unit_len == 2 && to_lower(unit[1]) == 'i')) &&
	    char_in(unit[0], "kmgtpeKMGTPE")) {
		char prefix = unit[0] == 'k' || unit[0] == 'K' ? 'K' : (char)(unit[0] & ~0x20);

		if (unit_len == 2)
			return fail(why, why_len, "'%s' has an incomplete unit; write '%s%ciB'",
				    EXCERPT(text, len), number, prefix);
		return fail(why, why_len,
			    "'%s' has an ambiguous unit; write '%s%ciB' (powers of 1024) or '%s%cB' (powers of 1000)",
			    EXCERPT(text, len), number, prefix, number,
			    prefix == 'K' ? 'k' : prefix);
	}
	if (unit_len > UNIT_SHOWN_MAX)
		return fail(why, why_len, "'%s' has an unknown unit; use " SIZE_UNIT_LIST,
			    EXCERPT(text, len));
	return fail(why, why_len, "'%s' has an unknown unit '%s'; use " SIZE_UNIT_LIST,
		    EXCERPT(text, len), EXCERPT(unit, unit_len));
}

static int size_syntax(const char *text, size_t len, uint64_t *out, char *why, size_t why_len)
{
	const struct size_unit *unit = NULL;
	struct number num, frac = { 0 };
	bool has_frac = false;
	size_t pos;
	uint64_t bytes;

	pos = scan_number(text, len, 0, &num);
	if (num.digits == 0)
		return fail(why, why_len,
			    "'%s' is not a size; expected a number of bytes with an optional unit, e.g. '2GiB'",
			    EXCERPT(text, len));
	if (num.digits > 1 && text[0] == '0') {
		size_t zeros = excess_zeros(text, num.digits);

		if (size_syntax(text + zeros, len - zeros, &bytes, NULL, 0) == -EINVAL)
			return fail(why, why_len, "'%s' has a leading zero", EXCERPT(text, len));
		return fail(why, why_len, "'%s' has a leading zero; write '%s'",
			    EXCERPT(text, len), EXCERPT(text + zeros, len - zeros));
	}
	if (pos < len && text[pos] == '.') {
		has_frac = true;
		pos = scan_number(text, len, pos + 1, &frac);
		if (frac.digits == 0)
			return fail(why, why_len,
				    "'%s' is not a size; expected a number of bytes with an optional unit, e.g. '2GiB'",
				    EXCERPT(text, len));
	}

	if (pos == len) {
		unit = &size_units[0];
	} else {
		for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++)
			if (span_is(text + pos, len - pos, size_units[i].name))
				unit = &size_units[i];
		if (!unit)
			return size_unit_error(text, len, pos, why, why_len);
	}

	if (has_frac) {
		char hint[VALUE_TEXT_MAX];
		uint64_t part, whole;
		uint64_t scale = frac.digits <= 19 ? pow10_u64(frac.digits) : 0;

		if (unit->bytes == 1)
			return fail(why, why_len,
				    "'%s' has a fraction; a size is a whole number of bytes",
				    EXCERPT(text, len));
		/* 1.5GiB is exactly 1536MiB: say so when the value is whole bytes. */
		if (scale && !num.overflow && !frac.overflow &&
		    !__builtin_mul_overflow(frac.value, unit->bytes, &part) &&
		    part % scale == 0 && !__builtin_mul_overflow(num.value, unit->bytes, &whole) &&
		    !__builtin_add_overflow(whole, part / scale, &whole)) {
			if (unit->iec)
				format_size_si(whole, hint);
			else
				tp_format_size(whole, hint);
			return fail(why, why_len, "'%s' has a fraction; write '%s'",
				    EXCERPT(text, len), hint);
		}
		return fail(why, why_len,
			    "'%s' has a fraction; write a whole number of a smaller unit",
			    EXCERPT(text, len));
	}

	if (num.overflow || __builtin_mul_overflow(num.value, unit->bytes, &bytes))
		return -ERANGE;
	*out = bytes;
	return 0;
}

static const struct number_kind size_kind = {
	.what = "a size",
	.expected = "a size such as '2GiB'",
	.syntax = size_syntax,
	.format = tp_format_size,
};

int tp_parse_size(const char *text, size_t len, uint64_t min, uint64_t max, uint64_t *out,
		  char *why, size_t why_len)
{
	return parse_number(&size_kind, text, len, min, max, out, why, why_len);
}

void tp_format_size(uint64_t bytes, char out[TP_SIZE_TEXT_MAX])
{
	/* Largest first, so 2^30 prints as "1GiB", not "1024MiB". */
	for (size_t i = 6; i >= 1 && bytes; i--) {
		const struct size_unit *u = &size_units[i];

		if (bytes % u->bytes == 0) {
			snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64 "%s", bytes / u->bytes, u->name);
			return;
		}
	}
	snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64, bytes);
}

/* -- durations -- */

struct duration_unit {
	const char *name;
	uint64_t ms;
};

/* In the order they must be written. */
static const struct duration_unit duration_units[] = {
	{ "d", 86400000 }, { "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 },
};

#define DURATION_UNIT_COUNT (sizeof(duration_units) / sizeof(duration_units[0]))

/* Spellings of other tools, each mapped to ours. */
static const struct {
	const char *alias;
	const char *unit;
	const char *meaning;
} duration_aliases[] = {
	{ "sec", "s", "seconds" },	{ "secs", "s", "seconds" },
	{ "second", "s", "seconds" },	{ "seconds", "s", "seconds" },
	{ "min", "m", "minutes" },	{ "mins", "m", "minutes" },
	{ "minute", "m", "minutes" },	{ "minutes", "m", "minutes" },
	{ "hr", "h", "hours" },		{ "hrs", "h", "hours" },
	{ "hour", "h", "hours" },	{ "hours", "h", "hours" },
	{ "day", "d", "days" },		{ "days", "d", "days" },
	{ "msec", "ms", "milliseconds" }, { "msecs", "ms", "milliseconds" },
};

static int duration_syntax(const char *text, size_t len, uint64_t *out, char *why,
			   size_t why_len);

static int duration_unit_error(const char *text, size_t len, const char *unit, size_t unit_len,
			       char *why, size_t why_len)
{
	for (size_t i = 0; i < DURATION_UNIT_COUNT; i++) {
		if (!span_is_nocase(unit, unit_len, duration_units[i].name))
			continue;
		if (len <= VALUE_TEXT_MAX) {
			char lower[VALUE_TEXT_MAX];
			uint64_t ms;

			for (size_t j = 0; j < len; j++)
				lower[j] = to_lower(text[j]);
			if (duration_syntax(lower, len, &ms, NULL, 0) != -EINVAL)
				return fail(why, why_len, "'%s' has an upper-case unit; write '%s'",
					    EXCERPT(text, len), EXCERPT(lower, len));
		}
		return fail(why, why_len, "'%s' has an upper-case unit; units are lower case",
			    EXCERPT(text, len));
	}
	for (size_t i = 0; i < sizeof(duration_aliases) / sizeof(duration_aliases[0]); i++)
		if (span_is_nocase(unit, unit_len, duration_aliases[i].alias))
			return fail(why, why_len,
				    "'%s' has an unknown unit '%s'; write '%s' for %s",
				    EXCERPT(text, len), EXCERPT(unit, unit_len),
				    duration_aliases[i].unit, duration_aliases[i].meaning);
	if (span_is_nocase(unit, unit_len, "w") || span_is_nocase(unit, unit_len, "week") ||
	    span_is_nocase(unit, unit_len, "weeks"))
		return fail(why, why_len, "'%s' has an unknown unit '%s'; write days, e.g. '7d'",
			    EXCERPT(text, len), EXCERPT(unit, unit_len));
	if (unit_len > UNIT_SHOWN_MAX)
		return fail(why, why_len, "'%s' has an unknown unit; units are d, h, m, s and ms",
			    EXCERPT(text, len));
	return fail(why, why_len, "'%s' has an unknown unit '%s'; units are d, h, m, s and ms",
		    EXCERPT(text, len), EXCERPT(unit, unit_len));
}

enum duration_flaw {
	DURATION_OK,
	DURATION_LEADING_ZERO,
	DURATION_FRACTION,
	DURATION_ORDER,
	DURATION_REPEAT,
};

static int duration_syntax(const char *text, size_t len, uint64_t *out, char *why,
			   size_t why_len)
{
	enum duration_flaw flaw = DURATION_OK;
	const char *repeated = NULL;
	bool overflow = false, inexact = false;
	uint64_t total = 0;
	size_t pos = 0, terms = 0, last_rank = 0;
	char hint[TP_DURATION_TEXT_MAX];

	/*
	 * Order, repetition, fractions and leading zeros are reported after the
	 * whole value is read, so the message can give the canonical spelling.
	 */
	while (pos < len) {
		struct number num, frac = { 0 };
		bool has_frac = false;
		size_t start = pos, unit_start, rank;
		uint64_t term;

		if (!is_digit(text[pos]))
			return fail(why, why_len,
				    "'%s' is not a duration; expected numbers with units, e.g. '10m' or '1h30m'",
				    EXCERPT(text, len));
		pos = scan_number(text, len, pos, &num);
		if (num.digits > 1 && text[start] == '0' && !flaw)
			flaw = DURATION_LEADING_ZERO;
		if (pos < len && text[pos] == '.') {
			has_frac = true;
			pos = scan_number(text, len, pos + 1, &frac);
			if (frac.digits == 0)
				return fail(why, why_len,
					    "'%s' is not a duration; expected numbers with units, e.g. '10m' or '1h30m'",
					    EXCERPT(text, len));
			if (flaw < DURATION_FRACTION)
				flaw = DURATION_FRACTION;
		}

		unit_start = pos;
		while (pos < len && is_alpha(text[pos]))
			pos++;
		if (unit_start == pos) {
			if (pos < len)
				return fail(why, why_len,
					    "'%s' is not a duration; expected numbers with units, e.g. '10m' or '1h30m'",
					    EXCERPT(text, len));
			if (terms > 0)
				return fail(why, why_len,
					    "'%s' ends with a number without a unit",
					    EXCERPT(text, len));
			if (has_frac)
				return fail(why, why_len,
					    "'%s' has no unit; write whole numbers with units, e.g. '1m30s'",
					    EXCERPT(text, len));
			return fail(why, why_len, "'%s' has no unit; add a unit, e.g. '%ss' or '%sm'",
				    EXCERPT(text, len), EXCERPT(text, len), EXCERPT(text, len));
		}

		for (rank = 0; rank < DURATION_UNIT_COUNT; rank++)
			if (span_is(text + unit_start, pos - unit_start, duration_units[rank].name))
				break;
		if (rank == DURATION_UNIT_COUNT)
			return duration_unit_error(text, len, text + unit_start, pos - unit_start,
						   why, why_len);
		if (terms > 0 && rank <= last_rank && flaw < DURATION_ORDER) {
			flaw = rank == last_rank ? DURATION_REPEAT : DURATION_ORDER;
			repeated = duration_units[rank].name;
		}
		last_rank = rank;
		terms++;

		if (num.overflow ||
		    __builtin_mul_overflow(num.value, duration_units[rank].ms, &term) ||
		    __builtin_add_overflow(total, term, &total)) {
			overflow = true;
			continue;
		}
		if (has_frac) {
			uint64_t scale = frac.digits <= 19 ? pow10_u64(frac.digits) : 0;
			uint64_t part;

			if (!scale || frac.overflow ||
			    __builtin_mul_overflow(frac.value, duration_units[rank].ms, &part) ||
			    part % scale != 0)
				inexact = true;
			else if (__builtin_add_overflow(total, part / scale, &total))
				overflow = true;
		}
	}

	if (flaw != DURATION_OK) {
		bool hinted = !overflow && !inexact;

		if (hinted)
			tp_format_duration(total, hint);
		switch (flaw) {
		case DURATION_LEADING_ZERO:
			if (hinted)
				return fail(why, why_len, "'%s' has a leading zero; write '%s'",
					    EXCERPT(text, len), hint);
			return fail(why, why_len, "'%s' has a leading zero", EXCERPT(text, len));
		case DURATION_FRACTION:
			if (hinted)
				return fail(why, why_len, "'%s' has a fraction; write '%s'",
					    EXCERPT(text, len), hint);
			return fail(why, why_len,
				    "'%s' has a fraction; write whole numbers of smaller units",
				    EXCERPT(text, len));
		case DURATION_ORDER:
			if (hinted)
				return fail(why, why_len,
					    "'%s' has units out of order (largest first); write '%s'",
					    EXCERPT(text, len), hint);
			return fail(why, why_len,
				    "'%s' has units out of order; write the largest unit first",
				    EXCERPT(text, len));
		case DURATION_REPEAT:
		default:
			if (hinted)
				return fail(why, why_len, "'%s' repeats the unit '%s'; write '%s'",
					    EXCERPT(text, len), repeated, hint);
			return fail(why, why_len, "'%s' repeats the unit '%s'", EXCERPT(text, len),
				    repeated);
		}
	}
	if (overflow)
		return -ERANGE;
	*out = total;
	return 0;
}

static const struct number_kind duration_kind = {
	.what = "a duration",
	.expected = "a duration such as '10m' or '1h30m'",
	.syntax = duration_syntax,
	.format = tp_format_duration,
};

int tp_parse_duration(const char *text, size_t len, uint64_t min_ms, uint64_t max_ms,
		      uint64_t *out_ms, char *why, size_t why_len)
{
	return parse_number(&duration_kind, text, len, min_ms, max_ms, out_ms, why, why_len);
}

void tp_format_duration(uint64_t ms, char out[TP_DURATION_TEXT_MAX])
{
	size_t used = 0;

	if (ms == 0) {
		snprintf(out, TP_DURATION_TEXT_MAX, "0s");
		return;
	}
	/* At most 12 digits of days plus four two- or three-digit terms: fits. */
	for (size_t i = 0; i < DURATION_UNIT_COUNT; i++) {
		uint64_t count = ms / duration_units[i].ms;

		if (!count)
			continue;
		ms %= duration_units[i].ms;
		used += (size_t)snprintf(out + used, TP_DURATION_TEXT_MAX - used, "%" PRIu64 "%s",
					 count, duration_units[i].name);
	}
}

/* -- CPUs -- */

static int cpu_syntax(const char *text, size_t len, uint64_t *out, char *why, size_t why_len)
{
	struct number whole, frac = { 0 };
	uint64_t milli;
	size_t pos;

	pos = scan_number(text, len, 0, &whole);
	if (whole.digits == 0) {
		if (len > 1 && len <= 4 && text[0] == '.' && span_all(text + 1, len - 1, is_digit))
			return fail(why, why_len, "'%s' needs a zero before the point; write '0%s'",
				    EXCERPT(text, len), EXCERPT(text, len));
		goto not_cpu;
	}
	if (whole.digits > 1 && text[0] == '0') {
		size_t zeros = excess_zeros(text, whole.digits);

		if (cpu_syntax(text + zeros, len - zeros, &milli, NULL, 0) == -EINVAL)
			return fail(why, why_len, "'%s' has a leading zero", EXCERPT(text, len));
		return fail(why, why_len, "'%s' has a leading zero; write '%s'",
			    EXCERPT(text, len), EXCERPT(text + zeros, len - zeros));
	}

	if (pos < len && text[pos] == '.') {
		pos = scan_number(text, len, pos + 1, &frac);
		if (frac.digits == 0) {
			if (pos == len)
				return fail(why, why_len,
					    "'%s' ends with a decimal point; write '%s'",
					    EXCERPT(text, len), EXCERPT(text, len - 1));
			goto not_cpu;
		}
		if (pos < len) {
			if (pos + 1 == len && to_lower(text[pos]) == 'm')
				return fail(why, why_len,
					    "'%s' has a fraction of a milli-CPU; write CPUs ('0.5') or whole milli-CPUs ('500m')",
					    EXCERPT(text, len));
			goto not_cpu;
		}
		if (frac.digits > 3)
			return fail(why, why_len,
				    "'%s' has more than three decimals; the smallest step is 0.001 ('1m')",
				    EXCERPT(text, len));
		if (whole.overflow || __builtin_mul_overflow(whole.value, 1000, &milli) ||
		    __builtin_add_overflow(milli, frac.value * pow10_u64(3 - frac.digits), &milli))
			return -ERANGE;
		*out = milli;
		return 0;
	}

	if (pos == len) {
		if (whole.overflow || __builtin_mul_overflow(whole.value, 1000, &milli))
			return -ERANGE;
		*out = milli;
		return 0;
	}
	if (pos + 1 == len && text[pos] == 'm') {
		if (whole.overflow)
			return -ERANGE;
		*out = whole.value;
		return 0;
	}
	if (pos + 1 == len && text[pos] == 'M')
		return fail(why, why_len, "'%s' has an upper-case unit; write '%sm'",
			    EXCERPT(text, len), EXCERPT(text, pos));
	if (pos + 1 == len && text[pos] == '%') {
		char hint[TP_SIZE_TEXT_MAX];

		if (whole.overflow || __builtin_mul_overflow(whole.value, 10, &milli))
			return -ERANGE;
		tp_format_cpu(milli, hint);
		return fail(why, why_len, "'%s' is a percentage; write CPUs, e.g. '%s'",
			    EXCERPT(text, len), hint);
	}
not_cpu:
	return fail(why, why_len,
		    "'%s' is not a CPU amount; expected CPUs ('2', '0.5') or milli-CPUs ('500m')",
		    EXCERPT(text, len));
}

static const struct number_kind cpu_kind = {
	.what = "a CPU amount",
	.expected = "a CPU amount such as '2', '0.5' or '500m'",
	.syntax = cpu_syntax,
	.format = tp_format_cpu,
};

int tp_parse_cpu(const char *text, size_t len, uint64_t min_milli, uint64_t max_milli,
		 uint64_t *out_milli, char *why, size_t why_len)
{
	return parse_number(&cpu_kind, text, len, min_milli, max_milli, out_milli, why, why_len);
}

void tp_format_cpu(uint64_t milli, char out[TP_SIZE_TEXT_MAX])
{
	uint64_t whole = milli / 1000, frac = milli % 1000;

	if (frac == 0)
		snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64, whole);
	else if (frac % 100 == 0)
		snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64 ".%" PRIu64, whole, frac / 100);
	else if (frac % 10 == 0)
		snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64 ".%02" PRIu64, whole, frac / 10);
	else
		snprintf(out, TP_SIZE_TEXT_MAX, "%" PRIu64 ".%03" PRIu64, whole, frac);
}

/* -- plain integers -- */

static int uint_syntax(const char *text, size_t len, uint64_t *out, char *why, size_t why_len)
{
	struct number num;
	size_t pos = scan_number(text, len, 0, &num);

	if (num.digits == 0)
		return fail(why, why_len, "'%s' is not a number; expected a decimal integer",
			    EXCERPT(text, len));
	if (pos < len) {
		char c = text[pos];

		if (num.digits == 1 && text[0] == '0' && char_in(c, "xXoObB"))
			return fail(why, why_len,
				    "'%s' is not a decimal integer; write the number in decimal",
				    EXCERPT(text, len));
		if (char_in(c, "_,'") && pos + 1 < len && is_digit(text[pos + 1]))
			return fail(why, why_len,
				    "'%s' has a digit separator; write the digits together",
				    EXCERPT(text, len));
		if (c == '.')
			return fail(why, why_len, "'%s' is not a whole number", EXCERPT(text, len));
		return fail(why, why_len,
			    "'%s' is not a plain decimal integer; write the number in full, without a unit",
			    EXCERPT(text, len));
	}
	/* YAML 1.1 reads "010" as octal 8: refuse the spelling, whatever was meant. */
	if (num.digits > 1 && text[0] == '0') {
		size_t zeros = excess_zeros(text, num.digits);

		return fail(why, why_len, "'%s' has a leading zero (octal in YAML 1.1); write '%s'",
			    EXCERPT(text, len), EXCERPT(text + zeros, len - zeros));
	}
	if (num.overflow)
		return -ERANGE;
	*out = num.value;
	return 0;
}

static void format_uint(uint64_t value, char *out)
{
	snprintf(out, VALUE_TEXT_MAX, "%" PRIu64, value);
}

static const struct number_kind uint_kind = {
	.what = "a number",
	.expected = "a decimal integer",
	.syntax = uint_syntax,
	.format = format_uint,
};

int tp_parse_uint(const char *text, size_t len, uint64_t min, uint64_t max, uint64_t *out,
		  char *why, size_t why_len)
{
	return parse_number(&uint_kind, text, len, min, max, out, why, why_len);
}

/* ---- booleans ---------------------------------------------------------- */

static int bool_syntax(const char *text, size_t len, bool *out, char *why, size_t why_len)
{
	static const char *const yaml11_true[] = { "yes", "y", "on" };
	static const char *const yaml11_false[] = { "no", "n", "off" };

	if (span_is(text, len, "true") || span_is(text, len, "false")) {
		*out = text[0] == 't';
		return 0;
	}
	if (span_is_nocase(text, len, "true") || span_is_nocase(text, len, "false"))
		return fail(why, why_len, "'%s' must be lower case; write '%s'",
			    EXCERPT(text, len), to_lower(text[0]) == 't' ? "true" : "false");
	/* YAML 1.1 reads these as booleans, YAML 1.2 as strings. */
	for (size_t i = 0; i < 3; i++) {
		if (span_is_nocase(text, len, yaml11_true[i]))
			return fail(why, why_len,
				    "'%s' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'true'",
				    EXCERPT(text, len));
		if (span_is_nocase(text, len, yaml11_false[i]))
			return fail(why, why_len,
				    "'%s' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'false'",
				    EXCERPT(text, len));
	}
	return fail(why, why_len, "'%s' is not a boolean; write 'true' or 'false'",
		    EXCERPT(text, len));
}

static bool bool_valid(const void *ctx, const char *text, size_t len)
{
	bool value;

	return bool_syntax(text, len, &value, NULL, 0) == 0;
}

int tp_parse_bool(const char *text, size_t len, bool *out, char *why, size_t why_len)
{
	int r;

	r = check_plain(text, len, "'true' or 'false'", why, why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, bool_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	return bool_syntax(text, len, out, why, why_len);
}

/* ---- digests ----------------------------------------------------------- */

/*
 * An envelope template's "sha256:<immutable-image>" pasted as is must not
 * read as "some digest": it would pin nothing.
 */
static bool digest_is_placeholder(const char *text, size_t len)
{
	static const char *const words[] = {
		"todo", "fixme", "tbd", "xxx", "changeme", "placeholder", "digest", "none",
		"null", "unknown",
	};
	const char *body = text;
	size_t body_len = len;
	bool zeros = true, xs = true;

	if (len >= 7 && span_is_nocase(text, 7, "sha256:")) {
		body += 7;
		body_len -= 7;
	}
	if (body_len == 0)
		return true;
	for (size_t i = 0; i < body_len; i++) {
		if (char_in(body[i], "<>{}$"))
			return true;
		zeros = zeros && body[i] == '0';
		xs = xs && to_lower(body[i]) == 'x';
	}
	if (zeros || xs || span_has(body, body_len, "...") || span_has(body, body_len, "\xe2\x80\xa6"))
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (span_is_nocase(body, body_len, words[i]))
			return true;
	return false;
}

static bool is_lower_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static int digest_syntax(const char *text, size_t len, uint8_t digest[32], char *why,
			 size_t why_len)
{
	const char *colon, *body;
	size_t alg_len, body_len;

	if (digest_is_placeholder(text, len))
		return fail(why, why_len,
			    "'%s' is a placeholder, not a digest; write the real sha256 digest",
			    EXCERPT(text, len));
	colon = memchr(text, ':', len);
	if (!colon) {
		if (len == 64 && span_all(text, len, is_hex))
			return fail(why, why_len,
				    "'%s' has no algorithm; write 'sha256:' before the hex digits",
				    EXCERPT(text, len));
		return fail(why, why_len,
			    "'%s' is not a digest; expected 'sha256:' followed by 64 lower-case hex digits",
			    EXCERPT(text, len));
	}
	alg_len = (size_t)(colon - text);
	if (!span_is(text, alg_len, "sha256")) {
		if (span_is_nocase(text, alg_len, "sha256"))
			return fail(why, why_len, "'%s' has an upper-case algorithm; write 'sha256:'",
				    EXCERPT(text, len));
		return fail(why, why_len, "'%s' is not a sha256 digest; only sha256 digests are accepted",
			    EXCERPT(text, len));
	}
	body = colon + 1;
	body_len = len - alg_len - 1;
	if (!span_all(body, body_len, is_hex))
		return fail(why, why_len, "'%s' has a character that is not a hex digit",
			    EXCERPT(text, len));
	if (!span_all(body, body_len, is_lower_hex))
		return fail(why, why_len,
			    "'%s' has upper-case hex digits; write the digest in lower case",
			    EXCERPT(text, len));
	if (body_len != 64)
		return fail(why, why_len,
			    "'%s' has %zu hex digits; a sha256 digest has 64", EXCERPT(text, len),
			    body_len);
	for (size_t i = 0; i < 32; i++)
		digest[i] = (uint8_t)(hex_value(body[2 * i]) << 4 | hex_value(body[2 * i + 1]));
	return 0;
}

static bool digest_valid(const void *ctx, const char *text, size_t len)
{
	uint8_t digest[32];

	return digest_syntax(text, len, digest, NULL, 0) == 0;
}

int tp_parse_digest(const char *text, size_t len, uint8_t digest[32], char *why,
		    size_t why_len)
{
	int r;

	r = check_plain(text, len, "'sha256:' followed by 64 lower-case hex digits", why, why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, digest_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	return digest_syntax(text, len, digest, why, why_len);
}

/* ---- addresses --------------------------------------------------------- */

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

#define DOTTED_QUAD_HINT "write an IPv4 address as four decimal numbers, e.g. '192.0.2.1'"

/*
 * Strict dotted quad.  inet_aton() also takes "127.1", "0x7f.1" and
 * "010.0.0.1" (octal 8): forms that mean different addresses to different
 * readers, so only the one unambiguous spelling is accepted.
 */
static const char *ipv4_parse(const char *text, size_t len, uint8_t out[4])
{
	size_t pos = 0;

	if (span_count(text, len, '.') != 3)
		return "is not a dotted quad; " DOTTED_QUAD_HINT;
	for (size_t octet = 0; octet < 4; octet++) {
		struct number num;
		size_t start = pos;

		pos = scan_number(text, len, pos, &num);
		if (num.digits == 0 || (pos < len && text[pos] != '.'))
			return "is not a dotted quad; " DOTTED_QUAD_HINT;
		if (num.digits > 1 && text[start] == '0')
			return "has a leading zero in a number (octal to some readers); " DOTTED_QUAD_HINT;
		if (num.overflow || num.value > 255)
			return "has a number above 255";
		out[octet] = (uint8_t)num.value;
		pos++;	/* the dot */
	}
	return NULL;
}

static bool is_v4_char(char c)
{
	return is_digit(c) || c == '.';
}

static bool is_v6_char(char c)
{
	return is_hex(c) || c == ':' || c == '.';
}

/* RFC 4291 section 2.2 text form, with at most one "::" standing for one or more zero groups. */
static const char *ipv6_parse(const char *text, size_t len, uint8_t out[16])
{
	uint16_t words[8] = { 0 };
	size_t count = 0, pos = 0;
	ssize_t gap = -1;

	if (!span_all(text, len, is_v6_char))
		return "it has a character other than hex digits, ':' and '.'";
	if (len >= 2 && text[0] == ':' && text[1] == ':') {
		gap = 0;
		pos = 2;
	} else if (len >= 1 && text[0] == ':') {
		return "it starts with a single ':'";
	}

	while (pos < len) {
		size_t end = pos, digits;
		uint16_t word = 0;

		while (end < len && text[end] != ':')
			end++;
		if (memchr(text + pos, '.', end - pos)) {
			uint8_t v4[4];

			/* An embedded IPv4 address ends the text and fills two groups. */
			if (end != len || count > 6)
				return "the IPv4 part is misplaced";
			if (ipv4_parse(text + pos, len - pos, v4))
				return "the IPv4 part is not a dotted quad";
			words[count++] = (uint16_t)(v4[0] << 8 | v4[1]);
			words[count++] = (uint16_t)(v4[2] << 8 | v4[3]);
			pos = len;
			break;
		}
		digits = end - pos;
		if (digits == 0)
			return "it has an empty group";
		if (digits > 4)
			return "a group has more than four hex digits";
		if (count == 8)
			return "it has more than eight groups";
		for (size_t i = pos; i < end; i++)
			word = (uint16_t)(word << 4 | hex_value(text[i]));
		words[count++] = word;
		pos = end;
		if (pos == len)
			break;
		pos++;	/* the ':' */
		if (pos < len && text[pos] == ':') {
			if (gap >= 0)
				return "it has more than one '::'";
			gap = (ssize_t)count;
			pos++;
		} else if (pos == len) {
			return "it ends with a single ':'";
		}
	}

	if (gap < 0 && count != 8)
		return "it has fewer than eight groups and no '::'";
	if (gap >= 0) {
		size_t tail = count - (size_t)gap;

		if (count > 7)
			return "'::' stands for no group";
		memmove(words + 8 - tail, words + gap, tail * sizeof(words[0]));
		memset(words + gap, 0, (8 - count) * sizeof(words[0]));
	}
	for (size_t i = 0; i < 8; i++) {
		out[2 * i] = (uint8_t)(words[i] >> 8);
		out[2 * i + 1] = (uint8_t)words[i];
	}
	return NULL;
}

/*
 * An address or CIDR block, in the mapped form.  Messages quote `text`, which
 * may be the inside of "[...]:port".
 */
static int address_parse(const char *text, size_t len, bool allow_prefix, uint8_t addr[16],
			 uint8_t *prefixlen, char *why, size_t why_len)
{
	const char *slash = memchr(text, '/', len);
	size_t addr_len = slash ? (size_t)(slash - text) : len;
	uint8_t bytes[16];
	unsigned int bits, max_bits;
	const char *problem;
	bool v4;

	if (len == 0 || addr_len == 0 || text[0] == '[' || text[len - 1] == ']') {
		if (memchr(text, '[', len) || memchr(text, ']', len))
			return fail(why, why_len,
				    "'%s' has brackets; they are only for an IPv6 address followed by a port",
				    EXCERPT(text, len));
		return fail(why, why_len, "'%s' is not an IP address", EXCERPT(text, len));
	}
	if (memchr(text, '%', addr_len))
		return fail(why, why_len, "'%s' has an IPv6 zone id; zone ids are not supported",
			    EXCERPT(text, len));

	v4 = !memchr(text, ':', addr_len);
	if (v4) {
		if (!span_all(text, addr_len, is_v4_char))
			return fail(why, why_len, "'%s' is not an IP address", EXCERPT(text, len));
		memcpy(bytes, v4_mapped_prefix, sizeof(v4_mapped_prefix));
		problem = ipv4_parse(text, addr_len, bytes + 12);
		if (problem)
			return fail(why, why_len, "'%s' %s", EXCERPT(text, len), problem);
		max_bits = 32;
	} else {
		problem = ipv6_parse(text, addr_len, bytes);
		if (problem)
			return fail(why, why_len, "'%s' is not an IPv6 address: %s",
				    EXCERPT(text, len), problem);
		max_bits = 128;
	}

	bits = max_bits;
	if (slash) {
		const char *digits = slash + 1;
		size_t digits_len = len - addr_len - 1;
		struct number num;

		if (!allow_prefix)
			return fail(why, why_len, "'%s' is a CIDR block; write a single address",
				    EXCERPT(text, len));
		if (digits_len == 0)
			return fail(why, why_len, "'%s' has no prefix length after '/'",
				    EXCERPT(text, len));
		if (scan_number(digits, digits_len, 0, &num) != digits_len)
			return fail(why, why_len, "'%s' has a prefix length that is not a number",
				    EXCERPT(text, len));
		if (digits_len > 1 && digits[0] == '0')
			return fail(why, why_len, "'%s' has a leading zero in the prefix length",
				    EXCERPT(text, len));
		if (num.overflow || num.value > max_bits)
			return fail(why, why_len, "'%s' has a prefix length above %u, the %s maximum",
				    EXCERPT(text, len), max_bits, v4 ? "IPv4" : "IPv6");
		bits = (unsigned int)num.value;
	}
	if (v4)
		bits += 96;

	/* Host bits set: the writer may have meant the address or the network. */
	for (unsigned int i = bits; i < 128; i++) {
		if (bytes[i / 8] & (0x80u >> (i % 8))) {
			char network[TP_CIDR_TEXT_MAX];

			for (unsigned int j = bits; j < 128; j++)
				bytes[j / 8] &= (uint8_t)~(0x80u >> (j % 8));
			tp_format_cidr(bytes, (uint8_t)bits, network);
			return fail(why, why_len, "'%s' has host bits set; did you mean '%s'?",
				    EXCERPT(text, len), network);
		}
	}

	memcpy(addr, bytes, 16);
	*prefixlen = (uint8_t)bits;
	return 0;
}

static bool cidr_valid(const void *ctx, const char *text, size_t len)
{
	uint8_t addr[16], prefixlen;

	return address_parse(text, len, true, addr, &prefixlen, NULL, 0) == 0;
}

int tp_parse_cidr(const char *text, size_t len, uint8_t addr[16], uint8_t *prefixlen,
		  char *why, size_t why_len)
{
	int r;

	r = check_plain(text, len, "an IP address or CIDR block such as '192.0.2.0/24'", why,
			why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, cidr_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	return address_parse(text, len, true, addr, prefixlen, why, why_len);
}

void tp_format_cidr(const uint8_t addr[16], uint8_t prefixlen, char out[TP_CIDR_TEXT_MAX])
{
	size_t best = 0, best_len = 0, used = 0;

	if (prefixlen >= 96 && memcmp(addr, v4_mapped_prefix, sizeof(v4_mapped_prefix)) == 0) {
		used = (size_t)snprintf(out, TP_CIDR_TEXT_MAX, "%u.%u.%u.%u", addr[12], addr[13],
					addr[14], addr[15]);
		if (prefixlen != 128)
			snprintf(out + used, TP_CIDR_TEXT_MAX - used, "/%u", prefixlen - 96u);
		return;
	}

	/* RFC 5952: the longest run of two or more zero groups, the first on a tie, is "::". */
	for (size_t i = 0; i < 8;) {
		size_t run = 0;

		while (i + run < 8 && addr[2 * (i + run)] == 0 && addr[2 * (i + run) + 1] == 0)
			run++;
		if (run > best_len) {
			best = i;
			best_len = run;
		}
		i += run ? run : 1;
	}
	if (best_len < 2)
		best_len = 0;

	for (size_t i = 0; i < 8; i++) {
		if (best_len && i == best) {
			used += (size_t)snprintf(out + used, TP_CIDR_TEXT_MAX - used, "::");
			i += best_len - 1;
			continue;
		}
		used += (size_t)snprintf(out + used, TP_CIDR_TEXT_MAX - used, "%s%x",
					 used && out[used - 1] != ':' ? ":" : "",
					 (unsigned int)(addr[2 * i] << 8 | addr[2 * i + 1]));
	}
	if (prefixlen != 128)
		snprintf(out + used, TP_CIDR_TEXT_MAX - used, "/%u", prefixlen);
}

/* ---- ports ------------------------------------------------------------- */

static int port_parse(const char *text, size_t len, uint16_t *port, char *why, size_t why_len)
{
	struct number num;

	if (len == 0)
		return fail(why, why_len, "a port is missing; ports are 1..65535");
	if (scan_number(text, len, 0, &num) != len) {
		if (span_is(text, len, "*") || span_is_nocase(text, len, "any"))
			return fail(why, why_len,
				    "'%s' is not a port; leave the port out to allow every port",
				    EXCERPT(text, len));
		return fail(why, why_len, "'%s' is not a port number", EXCERPT(text, len));
	}
	if (len > 1 && text[0] == '0') {
		size_t zeros = excess_zeros(text, len);

		return fail(why, why_len, "port '%s' has a leading zero; write '%s'",
			    EXCERPT(text, len), EXCERPT(text + zeros, len - zeros));
	}
	if (num.overflow || num.value < 1 || num.value > 65535)
		return fail(why, why_len, "port '%s' is out of range; ports are 1..65535",
			    EXCERPT(text, len));
	*port = (uint16_t)num.value;
	return 0;
}

static int port_range_syntax(const char *text, size_t len, uint16_t *min, uint16_t *max,
			     char *why, size_t why_len)
{
	const char *dash = memchr(text, '-', len);
	size_t first_len = dash ? (size_t)(dash - text) : len;
	uint16_t low = 0, high = 0;
	int r;

	if (dash && (first_len == 0 || first_len + 1 == len ||
		     memchr(dash + 1, '-', len - first_len - 1)))
		return fail(why, why_len,
			    "'%s' is not a port or port range (e.g. '443' or '8000-8100')",
			    EXCERPT(text, len));
	r = port_parse(text, first_len, &low, why, why_len);
	if (r < 0)
		return r;
	high = low;
	if (dash) {
		r = port_parse(dash + 1, len - first_len - 1, &high, why, why_len);
		if (r < 0)
			return r;
		if (high < low)
			return fail(why, why_len, "'%s' is a reversed range; write '%u-%u'",
				    EXCERPT(text, len), high, low);
	}
	*min = low;
	*max = high;
	return 0;
}

static bool port_range_valid(const void *ctx, const char *text, size_t len)
{
	uint16_t min, max;

	return port_range_syntax(text, len, &min, &max, NULL, 0) == 0;
}

int tp_parse_port_range(const char *text, size_t len, uint16_t *min, uint16_t *max,
			char *why, size_t why_len)
{
	int r;

	r = check_plain(text, len, "a port such as '443' or a range such as '8000-8100'", why,
			why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, port_range_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	return port_range_syntax(text, len, min, max, why, why_len);
}

/* ---- hostnames --------------------------------------------------------- */

static bool is_hostname_char(char c)
{
	return is_alpha(c) || is_digit(c) || c == '-' || c == '.';
}

/* A label an IPv4 parser would take as a number: "127", "0x7f", "0x". */
static bool label_is_numeric(const char *label, size_t len)
{
	if (len >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X'))
		return span_all(label + 2, len - 2, is_hex);
	return span_all(label, len, is_digit);
}

/*
 * Checks a hostname without allocating; *name_len is its length without the
 * trailing dot.
 */
static int hostname_check(const char *text, size_t len, size_t *name_len, char *why,
			  size_t why_len)
{
	size_t n = len, pos = 0, labels = 0;
	bool wildcard = false, numeric = true;
	uint8_t quad[4];

	if (n && text[n - 1] == '.')
		n--;
	if (n == 0)
		return fail(why, why_len, "'%s' is not a hostname", EXCERPT(text, len));
	if (n >= 2 && text[0] == '*' && text[1] == '.') {
		wildcard = true;
		pos = 2;
	}
	for (size_t i = pos; i < n; i++) {
		char c = text[i];

		if (is_hostname_char(c))
			continue;
		if (c == '*')
			return fail(why, why_len,
				    "'%s' has a misplaced '*'; a wildcard is a whole first label, as in '*.example.com'",
				    EXCERPT(text, len));
		if ((unsigned char)c >= 0x80)
			return fail(why, why_len,
				    "'%s' has a non-ASCII character; write an internationalised name in its 'xn--' form",
				    EXCERPT(text, len));
		return fail(why, why_len,
			    "'%s' has '%s', which is not allowed in a hostname (letters, digits, '-' and '.')",
			    EXCERPT(text, len), EXCERPT(&text[i], 1));
	}
	if (n > 253)
		return fail(why, why_len, "'%s' is longer than 253 bytes", EXCERPT(text, len));

	while (pos <= n) {
		const char *dot = memchr(text + pos, '.', n - pos);
		size_t label_len = dot ? (size_t)(dot - text) - pos : n - pos;
		const char *label = text + pos;

		if (label_len == 0)
			return fail(why, why_len, "'%s' has an empty label", EXCERPT(text, len));
		if (label_len > 63)
			return fail(why, why_len, "'%s' has a label longer than 63 bytes",
				    EXCERPT(text, len));
		if (label[0] == '-' || label[label_len - 1] == '-')
			return fail(why, why_len, "'%s' has a label that starts or ends with '-'",
				    EXCERPT(text, len));
		numeric = numeric && label_is_numeric(label, label_len);
		labels++;
		pos += label_len + 1;
	}

	if (span_is_nocase(text + (wildcard ? 2 : 0), n - (wildcard ? 2 : 0), "localhost") ||
	    (n >= 10 && span_is_nocase(text + n - 10, 10, ".localhost")))
		return fail(why, why_len,
			    "'%s' is a loopback name; loopback is an address rule ('127.0.0.1' or '::1')",
			    EXCERPT(text, len));
	if (numeric) {
		if (!wildcard && ipv4_parse(text, n, quad) == NULL)
			return fail(why, why_len, "'%s' is an IP address, not a hostname",
				    EXCERPT(text, len));
		return fail(why, why_len, "'%s' is not a dotted quad; " DOTTED_QUAD_HINT,
			    EXCERPT(text, len));
	}
	if (labels < 2) {
		if (wildcard)
			return fail(why, why_len,
				    "'%s' would match a whole top-level domain; name at least two labels after '*.'",
				    EXCERPT(text, len));
		return fail(why, why_len,
			    "'%s' is a single label; write the fully qualified name, e.g. 'host.example.com'",
			    EXCERPT(text, len));
	}
	*name_len = n;
	return 0;
}

static bool hostname_valid(const void *ctx, const char *text, size_t len)
{
	size_t name_len;

	return hostname_check(text, len, &name_len, NULL, 0) == 0;
}

static char *hostname_copy(const char *text, size_t name_len)
{
	char *name = malloc(name_len + 1);

	if (!name)
		return NULL;
	for (size_t i = 0; i < name_len; i++)
		name[i] = to_lower(text[i]);
	name[name_len] = '\0';
	return name;
}

int tp_parse_hostname(const char *text, size_t len, char **out, char *why, size_t why_len)
{
	size_t name_len;
	char *name;
	int r;

	r = check_plain(text, len, "a hostname such as 'api.example.com'", why, why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, hostname_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	r = hostname_check(text, len, &name_len, why, why_len);
	if (r < 0)
		return r;
	name = hostname_copy(text, name_len);
	if (!name) {
		fail(why, why_len, "out of memory");
		return -ENOMEM;
	}
	*out = name;
	return 0;
}

/* ---- destinations and endpoints ---------------------------------------- */

/* A destination before its host name is copied: parsing never allocates. */
struct destination_parts {
	const char *host;	/* NULL for an address rule */
	size_t host_len;	/* without the trailing dot */
	uint8_t addr[16];
	uint8_t prefixlen;
	uint16_t port_min, port_max;
};

/* Text looks like an IPv4 address or block, not a name: route it to the strict parser. */
static bool looks_like_address(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!is_digit(text[i]) && text[i] != '.' && text[i] != '/')
			return false;
	return true;
}

/*
 * "2001:db8::1:443" is a valid address, so a port after a bare IPv6 address
 * cannot be told apart: it needs brackets.  When the text only parses with the
 * last group read as a port, say so.
 */
static int v6_needs_brackets(const char *text, size_t len, bool allow_prefix, bool allow_range,
			     char *why, size_t why_len)
{
	const char *colon = memrchr(text, ':', len);
	size_t addr_len = colon ? (size_t)(colon - text) : 0;
	uint8_t addr[16], prefixlen;
	uint16_t min, max;

	if (!colon || addr_len == 0 || addr_len + 1 == len)
		return 0;
	if (address_parse(text, addr_len, allow_prefix, addr, &prefixlen, NULL, 0) < 0 ||
	    port_range_syntax(colon + 1, len - addr_len - 1, &min, &max, NULL, 0) < 0 ||
	    (!allow_range && min != max))
		return 0;
	return fail(why, why_len, "'%s' has a port after an IPv6 address without brackets; write '[%s]:%s'",
		    EXCERPT(text, len), EXCERPT(text, addr_len),
		    EXCERPT(colon + 1, len - addr_len - 1));
}

/* "[v6]:port": splits it and checks the parts' shape. */
static int split_brackets(const char *text, size_t len, const char **inner, size_t *inner_len,
			  const char **port, size_t *port_len, char *why, size_t why_len)
{
	const char *close = memchr(text, ']', len);

	if (!close)
		return fail(why, why_len, "'%s' has '[' without a closing ']'", EXCERPT(text, len));
	*inner = text + 1;
	*inner_len = (size_t)(close - text) - 1;
	if (!memchr(*inner, ':', *inner_len))
		return fail(why, why_len,
			    "'%s' has brackets around something that is not an IPv6 address; brackets are only for IPv6",
			    EXCERPT(text, len));
	if (close + 1 == text + len)
		return fail(why, why_len,
			    "'%s' has brackets but no port; write the address without brackets, or add ':PORT'",
			    EXCERPT(text, len));
	if (close[1] != ':')
		return fail(why, why_len, "'%s' has text after ']' that is not ':PORT'",
			    EXCERPT(text, len));
	*port = close + 2;
	*port_len = len - (size_t)(close - text) - 2;
	if (*port_len == 0)
		return fail(why, why_len, "'%s' has no port after ':'", EXCERPT(text, len));
	return 0;
}

static int destination_syntax(const char *text, size_t len, struct destination_parts *parts,
			      char *why, size_t why_len)
{
	struct destination_parts p = { .port_min = 1, .port_max = 65535 };
	const char *host = text;
	size_t host_len = len;
	size_t colons = span_count(text, len, ':');
	int r;

	if (span_has(text, len, "://"))
		return fail(why, why_len, "'%s' is a URL; write the host name, optionally with ':PORT'",
			    EXCERPT(text, len));
	if (text[0] == '[') {
		const char *inner, *port;
		size_t inner_len, port_len;

		r = split_brackets(text, len, &inner, &inner_len, &port, &port_len, why, why_len);
		if (r < 0)
			return r;
		r = port_range_syntax(port, port_len, &p.port_min, &p.port_max, why, why_len);
		if (r < 0)
			return r;
		r = address_parse(inner, inner_len, true, p.addr, &p.prefixlen, why, why_len);
		if (r < 0)
			return r;
		*parts = p;
		return 0;
	}

	if (colons >= 2) {
		r = address_parse(text, len, true, p.addr, &p.prefixlen, NULL, 0);
		if (r < 0) {
			r = v6_needs_brackets(text, len, true, true, why, why_len);
			if (r < 0)
				return r;
			return address_parse(text, len, true, p.addr, &p.prefixlen, why, why_len);
		}
		*parts = p;
		return 0;
	}

	if (colons == 1) {
		const char *colon = memchr(text, ':', len);

		host_len = (size_t)(colon - text);
		if (host_len == 0)
			return fail(why, why_len, "'%s' has no host before ':'", EXCERPT(text, len));
		if (host_len + 1 == len)
			return fail(why, why_len, "'%s' has no port after ':'", EXCERPT(text, len));
		r = port_range_syntax(colon + 1, len - host_len - 1, &p.port_min, &p.port_max, why,
				      why_len);
		if (r < 0)
			return r;
	}

	if (looks_like_address(host, host_len) || memchr(host, '/', host_len)) {
		r = address_parse(host, host_len, true, p.addr, &p.prefixlen, why, why_len);
		if (r < 0)
			return r;
	} else {
		r = hostname_check(host, host_len, &p.host_len, why, why_len);
		if (r < 0)
			return r;
		p.host = host;
	}
	*parts = p;
	return 0;
}

static bool destination_valid(const void *ctx, const char *text, size_t len)
{
	struct destination_parts parts;

	return destination_syntax(text, len, &parts, NULL, 0) == 0;
}

int tp_parse_destination(const char *text, size_t len, struct tp_destination *dest,
			 char *why, size_t why_len)
{
	struct destination_parts parts;
	char *host = NULL;
	int r;

	r = check_plain(text, len, "a destination such as 'api.example.com:443' or '192.0.2.0/24'",
			why, why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, destination_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	r = destination_syntax(text, len, &parts, why, why_len);
	if (r < 0)
		return r;
	if (parts.host) {
		host = hostname_copy(parts.host, parts.host_len);
		if (!host) {
			fail(why, why_len, "out of memory");
			return -ENOMEM;
		}
		memset(parts.addr, 0, sizeof(parts.addr));
		parts.prefixlen = 0;
	}

	dest->host = host;
	memcpy(dest->addr, parts.addr, sizeof(dest->addr));
	dest->prefixlen = parts.prefixlen;
	dest->protocols = TP_PROTO_ANY;
	dest->port_min = parts.port_min;
	dest->port_max = parts.port_max;
	return 0;
}

/* An endpoint's port: one port, not a range. */
static int endpoint_port(const char *text, size_t len, uint16_t *port, char *why,
			 size_t why_len)
{
	if (memchr(text, '-', len))
		return fail(why, why_len, "'%s' is a port range; write a single port",
			    EXCERPT(text, len));
	return port_parse(text, len, port, why, why_len);
}

static int endpoint_syntax(const char *text, size_t len, uint16_t default_port,
			   struct tp_endpoint *out, char *why, size_t why_len)
{
	const char *addr_text = text, *port_text = NULL;
	size_t addr_len = len, port_len = 0;
	size_t colons = span_count(text, len, ':');
	uint8_t addr[16], prefixlen;
	uint16_t port = default_port;
	int r;

	if (text[0] == '[') {
		r = split_brackets(text, len, &addr_text, &addr_len, &port_text, &port_len, why,
				   why_len);
		if (r < 0)
			return r;
	} else if (colons >= 2) {
		if (address_parse(text, len, false, addr, &prefixlen, NULL, 0) < 0) {
			r = v6_needs_brackets(text, len, false, false, why, why_len);
			if (r < 0)
				return r;
		}
	} else if (colons == 1) {
		const char *colon = memchr(text, ':', len);

		addr_len = (size_t)(colon - text);
		port_text = colon + 1;
		port_len = len - addr_len - 1;
		if (addr_len == 0)
			return fail(why, why_len, "'%s' has no address before ':'",
				    EXCERPT(text, len));
		if (port_len == 0)
			return fail(why, why_len, "'%s' has no port after ':'", EXCERPT(text, len));
	}

	if (port_text) {
		r = endpoint_port(port_text, port_len, &port, why, why_len);
		if (r < 0)
			return r;
	} else if (port == 0) {
		return fail(why, why_len, "'%s' has no port", EXCERPT(text, len));
	}
	r = address_parse(addr_text, addr_len, false, addr, &prefixlen, why, why_len);
	if (r < 0)
		return r;
	memcpy(out->addr, addr, sizeof(out->addr));
	out->port = port;
	return 0;
}

static bool endpoint_valid(const void *ctx, const char *text, size_t len)
{
	struct tp_endpoint endpoint;

	return endpoint_syntax(text, len, 53, &endpoint, NULL, 0) == 0;
}

int tp_parse_endpoint(const char *text, size_t len, uint16_t default_port,
		      struct tp_endpoint *out, char *why, size_t why_len)
{
	struct tp_endpoint endpoint;
	int r;

	r = check_plain(text, len, "an address such as '192.0.2.53' or '[2001:db8::53]:53'", why,
			why_len);
	if (r < 0)
		return r;
	r = check_spaces(text, len, endpoint_valid, NULL, why, why_len);
	if (r < 0)
		return r;
	r = endpoint_syntax(text, len, default_port, &endpoint, why, why_len);
	if (r < 0)
		return r;
	/* Only addr and port: the caller owns pos. */
	memcpy(out->addr, endpoint.addr, sizeof(out->addr));
	out->port = endpoint.port;
	return 0;
}

/* ---- path patterns ------------------------------------------------------ */

#define PATH_RULE_MAX_BYTES (TETHER_PATH_KEY_MAX - 1)

int tp_parse_path_pattern(const char *text, size_t len, enum tp_pattern_where where,
			  struct tp_path_entry *out, char *why, size_t why_len)
{
	_cleanup_free_ char *rooted = NULL, *normalized = NULL;
	char excerpt[TP_EXCERPT_MAX], stripped[TP_EXCERPT_MAX];
	size_t body = len;
	bool subtree = false, relative;
	int depth = 0;

	if (!text || !out)
		return -EINVAL;
	tp_excerpt(excerpt, text, len);
	if (len == 0) {
		snprintf(why, why_len, "the pattern is empty; write '**' for the whole workspace");
		return -EINVAL;
	}
	/* A C string would end at the NUL, so the rule would name another file. */
	if (memchr(text, '\0', len)) {
		snprintf(why, why_len, "'%s' contains a NUL byte", excerpt);
		return -EINVAL;
	}
	if (len >= 2 && memcmp(text + len - 2, "**", 2) == 0 && (len == 2 || text[len - 3] == '/')) {
		subtree = true;
		body = len == 2 ? 0 : len - 3;
		if (body == 0 && text[0] == '/')
			body = 1;	/* a slash and "**": the root */
	}
	/* The kernel matches path prefixes: a glob has no rule it could become. */
	for (size_t i = 0; i < body; i++) {
		if (strchr("*?[]{}", text[i])) {
			snprintf(why, why_len,
				 "'%s' is a glob the kernel cannot enforce: only exact paths "
				 "('dir/file') and whole subtrees ('dir/**') can be; list the files, "
				 "or grant their directory with 'dir/**'", excerpt);
			return -EINVAL;
		}
	}
	/* "src/" reads as "the directory" to some and "everything in it" to others. */
	if (body > 1 && text[body - 1] == '/') {
		size_t keep = body;

		while (keep > 1 && text[keep - 1] == '/')
			keep--;
		tp_excerpt(stripped, text, keep);
		snprintf(why, why_len,
			 "'%s' ends with '/': write '%s/**' for the directory and everything "
			 "beneath it, or '%s' for the directory itself", excerpt, stripped, stripped);
		return -EINVAL;
	}

	relative = body == 0 || text[0] != '/';
	if (relative && where == TP_PATTERN_ABSOLUTE) {
		snprintf(why, why_len, "'%s' must be an absolute path", excerpt);
		return -EINVAL;
	}
	if (!relative && where == TP_PATTERN_RELATIVE) {
		snprintf(why, why_len, "'%s' must be relative to the workspace (no leading '/')",
			 excerpt);
		return -EINVAL;
	}
	if (relative) {
		/* Count components as they come: ".." may never go above the workspace. */
		for (size_t i = 0; i < body;) {
			size_t start = i;

			while (i < body && text[i] != '/')
				i++;
			if (i - start == 2 && text[start] == '.' && text[start + 1] == '.')
				depth--;
			else if (i > start && !(i - start == 1 && text[start] == '.'))
				depth++;
			if (depth < 0) {
				snprintf(why, why_len, "'%s' leaves the workspace through '..'", excerpt);
				return -EINVAL;
			}
			while (i < body && text[i] == '/')
				i++;
		}
	}
	if (asprintf(&rooted, "%s%.*s", relative ? "/" : "", (int)body, text) < 0) {
		rooted = NULL;
		return -ENOMEM;
	}
	normalized = tp_path_normalize(rooted);
	if (!normalized)
		return -ENOMEM;
	if (relative)	/* "/src/auth" -> "src/auth"; "/" -> "" (the workspace) */
		memmove(normalized, normalized + 1, strlen(normalized));
	if (strlen(normalized) > PATH_RULE_MAX_BYTES) {
		snprintf(why, why_len,
			 "'%s' is %zu bytes long after normalisation, over the limit of %d: the "
			 "kernel's path rule key holds at most %d bytes",
			 excerpt, strlen(normalized), PATH_RULE_MAX_BYTES, PATH_RULE_MAX_BYTES);
		return -EINVAL;
	}
	if (relative && !subtree && normalized[0] == '\0') {
		snprintf(why, why_len, "'%s' names the workspace itself: write '**' for the "
			 "workspace and everything in it", excerpt);
		return -EINVAL;
	}

	*out = (struct tp_path_entry){
		.path = TAKE_PTR(normalized),
		.relative = relative,
		.kind = subtree ? TP_PATH_SUBTREE : TP_PATH_EXACT,
		.pos = out->pos,
	};
	return 0;
}
