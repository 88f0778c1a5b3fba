// SPDX-License-Identifier: GPL-2.0
/*
 * policyc/values.c: every accepted spelling, every class of error with its
 * message, the boundaries of each range, and format/parse round trips.
 *
 * Every parser gets its text in a heap buffer of exactly `len` bytes with no
 * terminator, so ASan reports any read past the length it was given.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "policyc/values.h"

TestSuite(values, .timeout = 20);

static char why[TP_WHY_MAX];

static char *exact_copy(const char *text, size_t len)
{
	char *copy = malloc(len ? len : 1);

	cr_assert(copy);
	memcpy(copy, text, len);
	return copy;
}

/* A `why` is one line, not empty, not cut short, without a trailing period. */
static void check_why(const char *text, const char *expected)
{
	size_t n = strnlen(why, sizeof(why));

	cr_assert_gt(n, 0, "'%s': empty why", text);
	cr_expect_lt(n, sizeof(why) - 1, "'%s': why filled the buffer (truncated?): %s", text, why);
	cr_expect_null(strchr(why, '\n'), "'%s': why has a line break: %s", text, why);
	cr_expect_neq(why[n - 1], '.', "'%s': why ends with a period: %s", text, why);
	if (expected)
		cr_expect_str_eq(why, expected, "'%s':\n  got      %s\n  expected %s", text, why,
				 expected);
}

/* ---- number kinds: sizes, durations, CPUs, integers -------------------- */

typedef int (*number_parser)(const char *, size_t, uint64_t, uint64_t, uint64_t *, char *,
			     size_t);

static void number_ok(number_parser parse, const char *text, uint64_t min, uint64_t max,
		      uint64_t expected)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	uint64_t value = 0xdeadbeef;
	int r;

	why[0] = '\0';
	r = parse(copy, len, min, max, &value, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, 0, "'%s': r=%d why=%s", text, r, why);
	cr_expect_eq(value, expected, "'%s': %llu, expected %llu", text,
		     (unsigned long long)value, (unsigned long long)expected);
}

static void number_error_len(number_parser parse, const char *text, size_t len, uint64_t min,
			     uint64_t max, const char *expected)
{
	char *copy = exact_copy(text, len);
	uint64_t value = 0xdeadbeef;
	int r;

	why[0] = '\0';
	r = parse(copy, len, min, max, &value, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d, expected -EINVAL (value %llu)", text, r,
		     (unsigned long long)value);
	cr_expect_eq(value, 0xdeadbeef, "'%s': output written on error", text);
	check_why(text, expected);
}

static void number_error(number_parser parse, const char *text, uint64_t min, uint64_t max,
			 const char *expected)
{
	number_error_len(parse, text, strlen(text), min, max, expected);
}

#define ANY 0, UINT64_MAX

/* -- sizes -- */

Test(values, size_accepts_every_unit)
{
	number_ok(tp_parse_size, "0", ANY, 0);
	number_ok(tp_parse_size, "1", ANY, 1);
	number_ok(tp_parse_size, "4294967296", ANY, 4294967296ull);
	number_ok(tp_parse_size, "512B", ANY, 512);
	number_ok(tp_parse_size, "0B", ANY, 0);
	number_ok(tp_parse_size, "512KiB", ANY, 512ull << 10);
	number_ok(tp_parse_size, "4MiB", ANY, 4ull << 20);
	number_ok(tp_parse_size, "2GiB", ANY, 2ull << 30);
	number_ok(tp_parse_size, "1TiB", ANY, 1ull << 40);
	number_ok(tp_parse_size, "1PiB", ANY, 1ull << 50);
	number_ok(tp_parse_size, "1EiB", ANY, 1ull << 60);
	number_ok(tp_parse_size, "500kB", ANY, 500000);
	number_ok(tp_parse_size, "2MB", ANY, 2000000);
	number_ok(tp_parse_size, "1GB", ANY, 1000000000);
	number_ok(tp_parse_size, "1TB", ANY, 1000000000000ull);
	number_ok(tp_parse_size, "1PB", ANY, 1000000000000000ull);
	number_ok(tp_parse_size, "18EB", ANY, 18000000000000000000ull);
	number_ok(tp_parse_size, "1536MiB", ANY, 1536ull << 20);
}

Test(values, size_uint64_boundaries)
{
	number_ok(tp_parse_size, "18446744073709551615", ANY, UINT64_MAX);
	number_ok(tp_parse_size, "15EiB", ANY, 15ull << 60);
	number_ok(tp_parse_size, "16383PiB", ANY, 16383ull << 50);
	number_error(tp_parse_size, "18446744073709551616", ANY,
		     "'18446744073709551616' is too large; the maximum is 18446744073709551615");
	number_error(tp_parse_size, "99999999999999999999999999999", ANY, NULL);
	number_error(tp_parse_size, "16EiB", ANY,
		     "'16EiB' is too large; the maximum is 18446744073709551615");
	number_error(tp_parse_size, "16384PiB", ANY, NULL);
	number_error(tp_parse_size, "19EB", ANY, NULL);
	number_error(tp_parse_size, "18446744073709551616B", ANY, NULL);
}

Test(values, size_range)
{
	uint64_t mib = 1ull << 20, pib = 1ull << 50;

	number_ok(tp_parse_size, "1MiB", mib, pib, mib);
	number_ok(tp_parse_size, "1PiB", mib, pib, pib);
	number_ok(tp_parse_size, "1048576", mib, pib, mib);
	number_error(tp_parse_size, "1048575", mib, pib,
		     "'1048575' is too small; the minimum is 1MiB");
	number_error(tp_parse_size, "512KiB", mib, pib, "'512KiB' is too small; the minimum is 1MiB");
	number_error(tp_parse_size, "0", 1, pib, "'0' is too small; the minimum is 1");
	number_error(tp_parse_size, "2PiB", mib, pib, "'2PiB' is too large; the maximum is 1PiB");
	number_error(tp_parse_size, "1125899906842625", mib, pib,
		     "'1125899906842625' is too large; the maximum is 1PiB");
	number_error(tp_parse_size, "2TiB", 1, 1ull << 40,
		     "'2TiB' is too large; the maximum is 1TiB");
}

Test(values, size_unit_spelling_hints)
{
	number_error(tp_parse_size, "2gib", ANY, "'2gib' has a unit in the wrong case; write '2GiB'");
	number_error(tp_parse_size, "2GIB", ANY, "'2GIB' has a unit in the wrong case; write '2GiB'");
	number_error(tp_parse_size, "512b", ANY, "'512b' has a unit in the wrong case; write '512B'");
	number_error(tp_parse_size, "2KB", ANY,
		     "'2KB' has a unit in the wrong case; write '2kB' (powers of 1000) or '2KiB' (powers of 1024)");
	number_error(tp_parse_size, "2mb", ANY,
		     "'2mb' has a unit in the wrong case; write '2MB' (powers of 1000) or '2MiB' (powers of 1024)");
	number_error(tp_parse_size, "2G", ANY,
		     "'2G' has an ambiguous unit; write '2GiB' (powers of 1024) or '2GB' (powers of 1000)");
	number_error(tp_parse_size, "4k", ANY,
		     "'4k' has an ambiguous unit; write '4KiB' (powers of 1024) or '4kB' (powers of 1000)");
	number_error(tp_parse_size, "2Gi", ANY, "'2Gi' has an incomplete unit; write '2GiB'");
	number_error(tp_parse_size, "8mi", ANY, "'8mi' has an incomplete unit; write '8MiB'");
	number_error(tp_parse_size, "2XB", ANY,
		     "'2XB' has an unknown unit 'XB'; use B, kB, MB, GB, TB, PB, EB, KiB, MiB, GiB, TiB, PiB or EiB");
	number_error(tp_parse_size, "2bytes", ANY, NULL);
	number_error(tp_parse_size, "2GiB!", ANY, NULL);
}

Test(values, size_syntax_errors)
{
	number_error(tp_parse_size, "2 GiB", ANY,
		     "'2 GiB' has a space between the number and the unit; write '2GiB'");
	number_error(tp_parse_size, "2\tGiB", ANY,
		     "'2\\x09GiB' has a space between the number and the unit; write '2GiB'");
	number_error(tp_parse_size, " 2GiB", ANY,
		     "' 2GiB' has a leading or trailing space; write '2GiB'");
	number_error(tp_parse_size, "2GiB ", ANY,
		     "'2GiB ' has a leading or trailing space; write '2GiB'");
	number_error(tp_parse_size, "2 G iB x", ANY,
		     "'2 G iB x' has a space; write the value without spaces");
	number_error(tp_parse_size, "   ", ANY, "'   ' is only spaces");
	number_error(tp_parse_size, "02GiB", ANY, "'02GiB' has a leading zero; write '2GiB'");
	number_error(tp_parse_size, "02Gx", ANY, "'02Gx' has a leading zero");
	number_error(tp_parse_size, "00", ANY, "'00' has a leading zero; write '0'");
	number_error(tp_parse_size, "-1", ANY, "'-1' is negative; a size cannot be negative");
	number_error(tp_parse_size, "+5", ANY, "'+5' has a '+' sign; write '5'");
	number_error(tp_parse_size, "+", ANY, NULL);
	number_error(tp_parse_size, "GiB", ANY,
		     "'GiB' is not a size; expected a number of bytes with an optional unit, e.g. '2GiB'");
	number_error(tp_parse_size, "2.GiB", ANY, NULL);
	number_error(tp_parse_size, ".5GiB", ANY, NULL);
	number_error(tp_parse_size, "1_000", ANY, "'1_000' has a digit separator; write the digits together");
	number_error(tp_parse_size, "1,000", ANY, NULL);
	number_error(tp_parse_size, "", ANY, "the value is empty; expected a size such as '2GiB'");
}

Test(values, size_fraction_hints)
{
	number_error(tp_parse_size, "1.5GiB", ANY, "'1.5GiB' has a fraction; write '1536MiB'");
	number_error(tp_parse_size, "0.5KiB", ANY, "'0.5KiB' has a fraction; write '512'");
	number_error(tp_parse_size, "1.5GB", ANY, "'1.5GB' has a fraction; write '1500MB'");
	number_error(tp_parse_size, "2.25TiB", ANY, "'2.25TiB' has a fraction; write '2304GiB'");
	number_error(tp_parse_size, "1.3KiB", ANY,
		     "'1.3KiB' has a fraction; write a whole number of a smaller unit");
	number_error(tp_parse_size, "1.5", ANY,
		     "'1.5' has a fraction; a size is a whole number of bytes");
	number_error(tp_parse_size, "1.5B", ANY, NULL);
	number_error(tp_parse_size, "1.00000000000000000000001EiB", ANY,
		     "'1.00000000000000000000001EiB' has a fraction; write a whole number of a smaller unit");
}

Test(values, size_nul_and_length)
{
	number_error_len(tp_parse_size, "2\0GiB", 5, ANY, "'2\\x00GiB' contains a NUL byte");
	number_error_len(tp_parse_size, "\0", 1, ANY, "'\\x00' contains a NUL byte");
	/* The length, not a terminator, ends the text. */
	number_ok(tp_parse_size, "2GiB", ANY, 2ull << 30);
	{
		char *copy = exact_copy("2GiBxyz", 7);
		uint64_t value = 0;

		cr_expect_eq(tp_parse_size(copy, 4, ANY, &value, why, sizeof(why)), 0);
		cr_expect_eq(value, 2ull << 30);
		cr_expect_eq(tp_parse_size(copy, 1, ANY, &value, why, sizeof(why)), 0);
		cr_expect_eq(value, 2);
		free(copy);
	}
}

Test(values, why_may_be_null_or_short)
{
	uint64_t value = 7;
	char small[8];

	cr_expect_eq(tp_parse_size("2gib", 4, ANY, &value, NULL, 0), -EINVAL);
	cr_expect_eq(tp_parse_size("2gib", 4, ANY, &value, small, 0), -EINVAL);
	cr_expect_eq(tp_parse_size("2gib", 4, ANY, &value, small, sizeof(small)), -EINVAL);
	cr_expect_str_eq(small, "'2gib' ");
	cr_expect_eq(value, 7);
	cr_expect_eq(tp_parse_size(NULL, 0, ANY, &value, why, sizeof(why)), -EINVAL);
	cr_expect_eq(tp_parse_size(NULL, 3, ANY, &value, why, sizeof(why)), -EINVAL);
}

/* A long hostile value is cut in the message and escaped. */
Test(values, why_escapes_and_cuts_user_text)
{
	char text[300];

	memset(text, 'x', sizeof(text));
	text[0] = '1';
	text[1] = '\x1b';
	number_error_len(tp_parse_size, text, sizeof(text), ANY, NULL);
	cr_expect(strstr(why, "'1\\x1bxxx") == why, "%s", why);
	cr_expect_null(strchr(why, '\x1b'));
	cr_expect_not_null(strstr(why, "...'"), "%s", why);
	cr_expect_lt(strlen(why), TP_WHY_MAX);
}

/*
 * Messages that quote a second piece of the text (a suggestion, a unit) only
 * do so for validated or short pieces: two escaped 64-byte excerpts would not
 * fit TP_WHY_MAX.
 */
Test(values, why_fits_with_hostile_text)
{
	char text[200];

	memset(text, '\x9c', sizeof(text));
	memcpy(text, "2G", 2);
	number_error_len(tp_parse_size, text, sizeof(text), ANY, NULL);
	cr_expect_not_null(strstr(why, "' has an unknown unit; use B, kB"), "%s", why);

	memcpy(text, "02G", 3);
	number_error_len(tp_parse_size, text, sizeof(text), ANY, NULL);
	cr_expect_not_null(strstr(why, "...' has a leading zero"), "%s", why);
	cr_expect_null(strstr(why, "write"), "%s", why);
	number_error_len(tp_parse_cpu, text, sizeof(text), ANY, NULL);
	cr_expect_null(strstr(why, "write"), "%s", why);

	memcpy(text, "+2", 2);
	number_error_len(tp_parse_size, text, sizeof(text), ANY, NULL);
	number_error_len(tp_parse_uint, text, sizeof(text), ANY, NULL);

	memcpy(text, "10M", 3);
	number_error_len(tp_parse_duration, text, 60, ANY, NULL);
	cr_expect_null(strstr(why, "write"), "%s", why);
	number_error_len(tp_parse_duration, text, sizeof(text), ANY, NULL);

	memset(text, 'x', sizeof(text));
	memcpy(text, "10", 2);
	number_error_len(tp_parse_duration, text, sizeof(text), ANY, NULL);
	cr_expect_not_null(strstr(why, "' has an unknown unit; units are d, h, m, s and ms"), "%s", why);
	memset(text, '\x9c', sizeof(text));

	memcpy(text, ".5", 2);
	number_error_len(tp_parse_cpu, text, sizeof(text), ANY, NULL);

	memcpy(text, "[::1]:", 6);
	{
		struct tp_destination dest;
		struct tp_endpoint endpoint;
		uint8_t addr[16], prefixlen;
		char *name = NULL;
		uint16_t min, max;

		cr_expect_eq(tp_parse_destination(text, sizeof(text), &dest, why, sizeof(why)),
			     -EINVAL);
		check_why("destination", NULL);
		cr_expect_eq(tp_parse_endpoint(text, sizeof(text), 53, &endpoint, why,
					       sizeof(why)), -EINVAL);
		check_why("endpoint", NULL);
		cr_expect_eq(tp_parse_cidr(text, sizeof(text), addr, &prefixlen, why, sizeof(why)),
			     -EINVAL);
		check_why("cidr", NULL);
		cr_expect_eq(tp_parse_hostname(text, sizeof(text), &name, why, sizeof(why)),
			     -EINVAL);
		check_why("hostname", NULL);
		cr_expect_eq(tp_parse_port_range(text + 6, sizeof(text) - 6, &min, &max, why,
						 sizeof(why)), -EINVAL);
		check_why("ports", NULL);
	}
}

/* -- durations -- */

#define SEC 1000ull
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)

Test(values, duration_accepts)
{
	number_ok(tp_parse_duration, "10m", ANY, 10 * MIN);
	number_ok(tp_parse_duration, "1h30m", ANY, HOUR + 30 * MIN);
	number_ok(tp_parse_duration, "90s", ANY, 90 * SEC);
	number_ok(tp_parse_duration, "250ms", ANY, 250);
	number_ok(tp_parse_duration, "1d12h", ANY, DAY + 12 * HOUR);
	number_ok(tp_parse_duration, "1d1h1m1s1ms", ANY, DAY + HOUR + MIN + SEC + 1);
	number_ok(tp_parse_duration, "2h500ms", ANY, 2 * HOUR + 500);
	number_ok(tp_parse_duration, "90m", ANY, 90 * MIN);
	number_ok(tp_parse_duration, "0s", ANY, 0);
	number_ok(tp_parse_duration, "0ms", ANY, 0);
	number_ok(tp_parse_duration, "7d", ANY, 7 * DAY);
}

Test(values, duration_boundaries)
{
	number_ok(tp_parse_duration, "1s", SEC, 30 * DAY, SEC);
	number_ok(tp_parse_duration, "30d", SEC, 30 * DAY, 30 * DAY);
	number_ok(tp_parse_duration, "29d23h59m59s999ms", SEC, 30 * DAY, 30 * DAY - 1);
	number_error(tp_parse_duration, "999ms", SEC, 30 * DAY,
		     "'999ms' is too small; the minimum is 1s");
	number_error(tp_parse_duration, "0s", SEC, 30 * DAY, "'0s' is too small; the minimum is 1s");
	number_error(tp_parse_duration, "30d1ms", SEC, 30 * DAY,
		     "'30d1ms' is too large; the maximum is 30d");
	number_error(tp_parse_duration, "8d", SEC, 7 * DAY, "'8d' is too large; the maximum is 7d");
	number_ok(tp_parse_duration, "213503982334d14h25m51s615ms", ANY, UINT64_MAX);
	number_ok(tp_parse_duration, "18446744073709551615ms", ANY, UINT64_MAX);
	number_error(tp_parse_duration, "213503982334d14h25m51s616ms", ANY,
		     "'213503982334d14h25m51s616ms' is too large; the maximum is 213503982334d14h25m51s615ms");
	number_error(tp_parse_duration, "213503982335d", ANY, NULL);
	number_error(tp_parse_duration, "18446744073709551616ms", ANY, NULL);
	number_error(tp_parse_duration, "99999999999999999999999d", ANY, NULL);
}

Test(values, duration_hints)
{
	number_error(tp_parse_duration, "10", ANY,
		     "'10' has no unit; add a unit, e.g. '10s' or '10m'");
	number_error(tp_parse_duration, "0", ANY, "'0' has no unit; add a unit, e.g. '0s' or '0m'");
	number_error(tp_parse_duration, "1.5", ANY,
		     "'1.5' has no unit; write whole numbers with units, e.g. '1m30s'");
	number_error(tp_parse_duration, "1.5h", ANY, "'1.5h' has a fraction; write '1h30m'");
	number_error(tp_parse_duration, "0.5s", ANY, "'0.5s' has a fraction; write '500ms'");
	number_error(tp_parse_duration, "1.25d", ANY, "'1.25d' has a fraction; write '1d6h'");
	number_error(tp_parse_duration, "0.0001s", ANY,
		     "'0.0001s' has a fraction; write whole numbers of smaller units");
	number_error(tp_parse_duration, "30m1h", ANY,
		     "'30m1h' has units out of order (largest first); write '1h30m'");
	number_error(tp_parse_duration, "1s1m", ANY,
		     "'1s1m' has units out of order (largest first); write '1m1s'");
	number_error(tp_parse_duration, "1h1h", ANY, "'1h1h' repeats the unit 'h'; write '2h'");
	number_error(tp_parse_duration, "1h05m", ANY, "'1h05m' has a leading zero; write '1h5m'");
	number_error(tp_parse_duration, "010m", ANY, "'010m' has a leading zero; write '10m'");
	number_error(tp_parse_duration, "1h30", ANY, "'1h30' ends with a number without a unit");
	number_error(tp_parse_duration, "10min", ANY,
		     "'10min' has an unknown unit 'min'; write 'm' for minutes");
	number_error(tp_parse_duration, "5sec", ANY,
		     "'5sec' has an unknown unit 'sec'; write 's' for seconds");
	number_error(tp_parse_duration, "2Hours", ANY,
		     "'2Hours' has an unknown unit 'Hours'; write 'h' for hours");
	number_error(tp_parse_duration, "1w", ANY, "'1w' has an unknown unit 'w'; write days, e.g. '7d'");
	number_error(tp_parse_duration, "10M", ANY, "'10M' has an upper-case unit; write '10m'");
	number_error(tp_parse_duration, "1H30M", ANY, "'1H30M' has an upper-case unit; write '1h30m'");
	number_error(tp_parse_duration, "10us", ANY,
		     "'10us' has an unknown unit 'us'; units are d, h, m, s and ms");
	number_error(tp_parse_duration, "1h 30m", ANY, "'1h 30m' has a space; write '1h30m'");
	number_error(tp_parse_duration, "10 m", ANY,
		     "'10 m' has a space between the number and the unit; write '10m'");
	number_error(tp_parse_duration, "h", ANY,
		     "'h' is not a duration; expected numbers with units, e.g. '10m' or '1h30m'");
	number_error(tp_parse_duration, "1h-30m", ANY, NULL);
	number_error(tp_parse_duration, "1.h", ANY, NULL);
	number_error(tp_parse_duration, "-5m", ANY, "'-5m' is negative; a duration cannot be negative");
	number_error(tp_parse_duration, "", ANY,
		     "the value is empty; expected a duration such as '10m' or '1h30m'");
	number_error_len(tp_parse_duration, "10m\0", 4, ANY, "'10m\\x00' contains a NUL byte");
}

/* -- CPUs -- */

Test(values, cpu_accepts)
{
	number_ok(tp_parse_cpu, "2", ANY, 2000);
	number_ok(tp_parse_cpu, "0.5", ANY, 500);
	number_ok(tp_parse_cpu, "1.25", ANY, 1250);
	number_ok(tp_parse_cpu, "0.001", ANY, 1);
	number_ok(tp_parse_cpu, "1.0", ANY, 1000);
	number_ok(tp_parse_cpu, "0", ANY, 0);
	number_ok(tp_parse_cpu, "500m", ANY, 500);
	number_ok(tp_parse_cpu, "0m", ANY, 0);
	number_ok(tp_parse_cpu, "2500m", ANY, 2500);
}

Test(values, cpu_boundaries)
{
	number_ok(tp_parse_cpu, "10m", 10, 1024000, 10);
	number_ok(tp_parse_cpu, "0.01", 10, 1024000, 10);
	number_ok(tp_parse_cpu, "1024", 10, 1024000, 1024000);
	number_error(tp_parse_cpu, "9m", 10, 1024000, "'9m' is too small; the minimum is 0.01");
	number_error(tp_parse_cpu, "0.001", 10, 1024000, "'0.001' is too small; the minimum is 0.01");
	number_error(tp_parse_cpu, "1024.001", 10, 1024000,
		     "'1024.001' is too large; the maximum is 1024");
	number_ok(tp_parse_cpu, "18446744073709551.615", ANY, UINT64_MAX);
	number_ok(tp_parse_cpu, "18446744073709551615m", ANY, UINT64_MAX);
	number_ok(tp_parse_cpu, "18446744073709551", ANY, 18446744073709551000ull);
	number_error(tp_parse_cpu, "18446744073709551.616", ANY,
		     "'18446744073709551.616' is too large; the maximum is 18446744073709551.615");
	number_error(tp_parse_cpu, "18446744073709552", ANY, NULL);
	number_error(tp_parse_cpu, "18446744073709551616m", ANY, NULL);
}

Test(values, cpu_errors)
{
	number_error(tp_parse_cpu, "0.0005", ANY,
		     "'0.0005' has more than three decimals; the smallest step is 0.001 ('1m')");
	number_error(tp_parse_cpu, ".5", ANY, "'.5' needs a zero before the point; write '0.5'");
	number_error(tp_parse_cpu, "5.", ANY, "'5.' ends with a decimal point; write '5'");
	number_error(tp_parse_cpu, "01", ANY, "'01' has a leading zero; write '1'");
	number_error(tp_parse_cpu, "00.5", ANY, "'00.5' has a leading zero; write '0.5'");
	number_error(tp_parse_cpu, "500M", ANY, "'500M' has an upper-case unit; write '500m'");
	number_error(tp_parse_cpu, "50%", ANY, "'50%' is a percentage; write CPUs, e.g. '0.5'");
	number_error(tp_parse_cpu, "0.5m", ANY,
		     "'0.5m' has a fraction of a milli-CPU; write CPUs ('0.5') or whole milli-CPUs ('500m')");
	number_error(tp_parse_cpu, "2cpu", ANY,
		     "'2cpu' is not a CPU amount; expected CPUs ('2', '0.5') or milli-CPUs ('500m')");
	number_error(tp_parse_cpu, "1.5.5", ANY, NULL);
	number_error(tp_parse_cpu, "m", ANY, NULL);
	number_error(tp_parse_cpu, "-1", ANY, "'-1' is negative; a CPU amount cannot be negative");
	number_error(tp_parse_cpu, "-0.5", ANY, NULL);
	number_error(tp_parse_cpu, "2 m", ANY,
		     "'2 m' has a space between the number and the unit; write '2m'");
	number_error(tp_parse_cpu, "", ANY,
		     "the value is empty; expected a CPU amount such as '2', '0.5' or '500m'");
}

/* -- integers -- */

Test(values, uint_accepts_and_boundaries)
{
	number_ok(tp_parse_uint, "0", ANY, 0);
	number_ok(tp_parse_uint, "1", ANY, 1);
	number_ok(tp_parse_uint, "42", ANY, 42);
	number_ok(tp_parse_uint, "18446744073709551615", ANY, UINT64_MAX);
	number_ok(tp_parse_uint, "4294967294", 1, 4294967294u, 4294967294u);
	number_ok(tp_parse_uint, "1", 1, 4294967294u, 1);
	number_error(tp_parse_uint, "0", 1, 4294967294u, "'0' is too small; the minimum is 1");
	number_error(tp_parse_uint, "4294967295", 1, 4294967294u,
		     "'4294967295' is too large; the maximum is 4294967294");
	number_error(tp_parse_uint, "18446744073709551616", ANY,
		     "'18446744073709551616' is too large; the maximum is 18446744073709551615");
}

Test(values, uint_errors)
{
	number_error(tp_parse_uint, "012", ANY,
		     "'012' has a leading zero (octal in YAML 1.1); write '12'");
	number_error(tp_parse_uint, "1.0", ANY, "'1.0' is not a whole number");
	number_error(tp_parse_uint, "0x10", ANY,
		     "'0x10' is not a decimal integer; write the number in decimal");
	number_error(tp_parse_uint, "0o17", ANY, NULL);
	number_error(tp_parse_uint, "1_000", ANY,
		     "'1_000' has a digit separator; write the digits together");
	number_error(tp_parse_uint, "1e6", ANY,
		     "'1e6' is not a plain decimal integer; write the number in full, without a unit");
	number_error(tp_parse_uint, "10k", ANY, NULL);
	number_error(tp_parse_uint, "abc", ANY, "'abc' is not a number; expected a decimal integer");
	number_error(tp_parse_uint, "-1", ANY, "'-1' is negative; a number cannot be negative");
	number_error(tp_parse_uint, "+1", ANY, "'+1' has a '+' sign; write '1'");
	number_error(tp_parse_uint, "1 000", ANY, NULL);
	number_error(tp_parse_uint, "", ANY, "the value is empty; expected a decimal integer");
	number_error_len(tp_parse_uint, "1\0", 2, ANY, "'1\\x00' contains a NUL byte");
}

/* ---- booleans ---------------------------------------------------------- */

static void bool_ok(const char *text, bool expected)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	bool value = !expected;
	int r = tp_parse_bool(copy, len, &value, why, sizeof(why));

	free(copy);
	cr_assert_eq(r, 0, "'%s': %s", text, why);
	cr_expect_eq(value, expected);
}

static void bool_error_len(const char *text, size_t len, const char *expected)
{
	char *copy = exact_copy(text, len);
	bool value = true;
	int r;

	why[0] = '\0';
	r = tp_parse_bool(copy, len, &value, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	cr_expect(value);
	check_why(text, expected);
}

static void bool_error(const char *text, const char *expected)
{
	bool_error_len(text, strlen(text), expected);
}

Test(values, bool_values)
{
	bool_ok("true", true);
	bool_ok("false", false);
	bool_error("True", "'True' must be lower case; write 'true'");
	bool_error("FALSE", "'FALSE' must be lower case; write 'false'");
	bool_error("yes", "'yes' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'true'");
	bool_error("On", "'On' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'true'");
	bool_error("y", "'y' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'true'");
	bool_error("no", "'no' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'false'");
	bool_error("off", "'off' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'false'");
	bool_error("N", "'N' is a boolean in YAML 1.1 but a string in YAML 1.2; write 'false'");
	bool_error("1", "'1' is not a boolean; write 'true' or 'false'");
	bool_error("0", "'0' is not a boolean; write 'true' or 'false'");
	bool_error("truee", NULL);
	bool_error(" true", "' true' has a leading or trailing space; write 'true'");
	bool_error("", "the value is empty; expected 'true' or 'false'");
	bool_error_len("true\0", 5, "'true\\x00' contains a NUL byte");
}

/* ---- digests ----------------------------------------------------------- */

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void digest_error_len(const char *text, size_t len, const char *expected)
{
	char *copy = exact_copy(text, len);
	uint8_t digest[32];
	int r;

	memset(digest, 0xa5, sizeof(digest));
	why[0] = '\0';
	r = tp_parse_digest(copy, len, digest, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	for (size_t i = 0; i < sizeof(digest); i++)
		cr_expect_eq(digest[i], 0xa5);
	check_why(text, expected);
}

static void digest_error(const char *text, const char *expected)
{
	digest_error_len(text, strlen(text), expected);
}

Test(values, digest_accepts)
{
	const char *text = "sha256:" HEX64;
	char *copy = exact_copy(text, strlen(text));
	uint8_t digest[32];

	cr_assert_eq(tp_parse_digest(copy, strlen(text), digest, why, sizeof(why)), 0, "%s", why);
	free(copy);
	for (size_t i = 0; i < 32; i++)
		cr_expect_eq(digest[i], (uint8_t)((i % 8) * 0x22 + 0x01),
			     "byte %zu: %02x", i, digest[i]);
}

Test(values, digest_placeholders)
{
	digest_error("sha256:<immutable-image>",
		     "'sha256:<immutable-image>' is a placeholder, not a digest; write the real sha256 digest");
	digest_error("sha256:...", NULL);
	digest_error("sha256:", NULL);
	digest_error("<digest>", NULL);
	digest_error("TODO", "'TODO' is a placeholder, not a digest; write the real sha256 digest");
	digest_error("sha256:todo", NULL);
	digest_error("sha256:${IMAGE_DIGEST}", NULL);
	digest_error("sha256:0000000000000000000000000000000000000000000000000000000000000000",
		     NULL);
	cr_expect_not_null(strstr(why, "is a placeholder, not a digest"), "%s", why);
	digest_error("sha256:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", NULL);
	cr_expect_not_null(strstr(why, "is a placeholder, not a digest"), "%s", why);
	digest_error("sha256:abc\xe2\x80\xa6", NULL);
	cr_expect_not_null(strstr(why, "is a placeholder, not a digest"), "%s", why);
}

Test(values, digest_errors)
{
	digest_error("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		     "'sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef012345678...' has upper-case hex digits; write the digest in lower case");
	digest_error("sha512:" HEX64 HEX64, NULL);
	cr_expect_not_null(strstr(why, "only sha256 digests are accepted"), "%s", why);
	digest_error("md5:d41d8cd98f00b204e9800998ecf8427e",
		     "'md5:d41d8cd98f00b204e9800998ecf8427e' is not a sha256 digest; only sha256 digests are accepted");
	digest_error("SHA256:" HEX64, NULL);
	cr_expect_not_null(strstr(why, "has an upper-case algorithm; write 'sha256:'"), "%s", why);
	digest_error(HEX64, NULL);
	cr_expect_not_null(strstr(why, "has no algorithm; write 'sha256:' before the hex digits"),
			   "%s", why);
	digest_error("sha256:abc", "'sha256:abc' has 3 hex digits; a sha256 digest has 64");
	digest_error("sha256:" HEX64 "0", NULL);
	cr_expect_not_null(strstr(why, "has 65 hex digits"), "%s", why);
	digest_error("sha256:g123", "'sha256:g123' has a character that is not a hex digit");
	digest_error("deadbeef",
		     "'deadbeef' is not a digest; expected 'sha256:' followed by 64 lower-case hex digits");
	digest_error("sha256: " HEX64, NULL);
	cr_expect_not_null(strstr(why, "has a space; write 'sha256:0123"), "%s", why);
	digest_error("", "the value is empty; expected 'sha256:' followed by 64 lower-case hex digits");
	digest_error_len("sha256:\0" HEX64, 72, NULL);
	cr_expect_not_null(strstr(why, "contains a NUL byte"), "%s", why);
}

/* ---- hostnames --------------------------------------------------------- */

static void hostname_ok(const char *text, const char *expected)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	char *name = NULL;
	int r = tp_parse_hostname(copy, len, &name, why, sizeof(why));

	free(copy);
	cr_assert_eq(r, 0, "'%s': %s", text, why);
	cr_expect_str_eq(name, expected);
	free(name);
}

static void hostname_error_len(const char *text, size_t len, const char *expected)
{
	char *copy = exact_copy(text, len);
	char *name = (char *)"untouched";
	int r;

	why[0] = '\0';
	r = tp_parse_hostname(copy, len, &name, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	cr_expect_str_eq(name, "untouched");
	check_why(text, expected);
}

static void hostname_error(const char *text, const char *expected)
{
	hostname_error_len(text, strlen(text), expected);
}

Test(values, hostname_accepts)
{
	hostname_ok("api.github.com", "api.github.com");
	hostname_ok("API.GitHub.COM", "api.github.com");
	hostname_ok("example.com.", "example.com");
	hostname_ok("*.example.com", "*.example.com");
	hostname_ok("*.Example.COM.", "*.example.com");
	hostname_ok("a-b.c0.io", "a-b.c0.io");
	hostname_ok("1.2.3.example", "1.2.3.example");
	hostname_ok("0x7f.example.com", "0x7f.example.com");
	hostname_ok("xn--bcher-kva.example", "xn--bcher-kva.example");
}

Test(values, hostname_lengths)
{
	char text[300], expected[300];

	/* A 63-byte label is the most; 64 is one too many. */
	memset(text, 'a', 63);
	strcpy(text + 63, ".com");
	hostname_ok(text, text);
	memset(text, 'a', 64);
	strcpy(text + 64, ".com");
	hostname_error(text, NULL);
	cr_expect_not_null(strstr(why, "has a label longer than 63 bytes"), "%s", why);

	/* 253 bytes of name (63+1+63+1+63+1+61), with or without the trailing dot. */
	memset(text, 'a', 253);
	text[63] = text[127] = text[191] = '.';
	text[253] = '\0';
	hostname_ok(text, text);
	strcpy(expected, text);
	strcat(text, ".");
	hostname_ok(text, expected);
	memset(text, 'a', 254);
	text[63] = text[127] = text[191] = '.';
	text[254] = '\0';
	hostname_error(text, NULL);
	cr_expect_not_null(strstr(why, "is longer than 253 bytes"), "%s", why);
}

Test(values, hostname_errors)
{
	hostname_error("localhost",
		       "'localhost' is a loopback name; loopback is an address rule ('127.0.0.1' or '::1')");
	hostname_error("LOCALHOST.", NULL);
	hostname_error("app.localhost", NULL);
	cr_expect_not_null(strstr(why, "loopback"), "%s", why);
	hostname_error("*.localhost", NULL);
	hostname_error("intranet",
		       "'intranet' is a single label; write the fully qualified name, e.g. 'host.example.com'");
	hostname_error("*.com",
		       "'*.com' would match a whole top-level domain; name at least two labels after '*.'");
	hostname_error("a.*.com",
		       "'a.*.com' has a misplaced '*'; a wildcard is a whole first label, as in '*.example.com'");
	hostname_error("*example.com", NULL);
	hostname_error("**.example.com", NULL);
	hostname_error("*", NULL);
	hostname_error("*.", NULL);
	hostname_error("*..", "'*..' has an empty label");
	hostname_error("-a.com", "'-a.com' has a label that starts or ends with '-'");
	hostname_error("a-.com", "'a-.com' has a label that starts or ends with '-'");
	hostname_error("a..com", "'a..com' has an empty label");
	hostname_error(".a.com", "'.a.com' has an empty label");
	hostname_error("a.com..", "'a.com..' has an empty label");
	hostname_error(".", "'.' is not a hostname");
	hostname_error("_dmarc.example.com",
		       "'_dmarc.example.com' has '_', which is not allowed in a hostname (letters, digits, '-' and '.')");
	hostname_error("example.com:443", NULL);
	hostname_error("ex\xc3\xa4mple.com",
		       "'ex\\xc3\\xa4mple.com' has a non-ASCII character; write an internationalised name in its 'xn--' form");
	hostname_error("127.1",
		       "'127.1' is not a dotted quad; write an IPv4 address as four decimal numbers, e.g. '192.0.2.1'");
	hostname_error("0x7f.1", NULL);
	cr_expect_not_null(strstr(why, "is not a dotted quad"), "%s", why);
	hostname_error("192.0.2.1", "'192.0.2.1' is an IP address, not a hostname");
	hostname_error("1.2.3.4.", NULL);
	hostname_error("api .github.com", "'api .github.com' has a space; write 'api.github.com'");
	hostname_error("", "the value is empty; expected a hostname such as 'api.example.com'");
	hostname_error_len("a.com\0", 6, "'a.com\\x00' contains a NUL byte");
}

/* ---- CIDRs ------------------------------------------------------------- */

static void cidr_ok(const char *text, const char *expected_hex, uint8_t expected_prefixlen)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	uint8_t addr[16], expected[16], prefixlen = 0;
	int r = tp_parse_cidr(copy, len, addr, &prefixlen, why, sizeof(why));

	free(copy);
	cr_assert_eq(r, 0, "'%s': %s", text, why);
	for (size_t i = 0; i < 16; i++) {
		unsigned int byte;

		cr_assert_eq(sscanf(expected_hex + 2 * i, "%2x", &byte), 1);
		expected[i] = (uint8_t)byte;
	}
	cr_expect_arr_eq(addr, expected, 16, "'%s': wrong address", text);
	cr_expect_eq(prefixlen, expected_prefixlen, "'%s': /%u", text, prefixlen);
}

static void cidr_error_len(const char *text, size_t len, const char *expected)
{
	char *copy = exact_copy(text, len);
	uint8_t addr[16], prefixlen = 200;
	int r;

	memset(addr, 0xa5, sizeof(addr));
	why[0] = '\0';
	r = tp_parse_cidr(copy, len, addr, &prefixlen, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	cr_expect_eq(prefixlen, 200);
	cr_expect_eq(addr[0], 0xa5);
	check_why(text, expected);
}

static void cidr_error(const char *text, const char *expected)
{
	cidr_error_len(text, strlen(text), expected);
}

#define V4(hex) "00000000000000000000ffff" hex

Test(values, cidr_accepts_ipv4)
{
	cidr_ok("192.0.2.1", V4("c0000201"), 128);
	cidr_ok("192.0.2.0/24", V4("c0000200"), 120);
	cidr_ok("0.0.0.0/0", V4("00000000"), 96);
	cidr_ok("255.255.255.255", V4("ffffffff"), 128);
	cidr_ok("255.255.255.255/32", V4("ffffffff"), 128);
	cidr_ok("10.0.0.0/8", V4("0a000000"), 104);
	cidr_ok("0.0.0.0", V4("00000000"), 128);
}

Test(values, cidr_accepts_ipv6)
{
	cidr_ok("2001:db8::1", "20010db8000000000000000000000001", 128);
	cidr_ok("2001:db8::/32", "20010db8000000000000000000000000", 32);
	cidr_ok("2001:DB8::1", "20010db8000000000000000000000001", 128);
	cidr_ok("2001:0db8:0000:0000:0000:0000:0000:0001", "20010db8000000000000000000000001",
		128);
	cidr_ok("::", "00000000000000000000000000000000", 128);
	cidr_ok("::/0", "00000000000000000000000000000000", 0);
	cidr_ok("::1", "00000000000000000000000000000001", 128);
	cidr_ok("1::", "00010000000000000000000000000000", 128);
	cidr_ok("1:2:3:4:5:6:7:8", "00010002000300040005000600070008", 128);
	cidr_ok("1:2:3:4:5:6:7::", "00010002000300040005000600070000", 128);
	cidr_ok("::2:3:4:5:6:7:8", "00000002000300040005000600070008", 128);
	cidr_ok("1:2:3:4:5:6:1.2.3.4", "00010002000300040005000601020304", 128);
	cidr_ok("::1.2.3.4", "00000000000000000000000001020304", 128);
	cidr_ok("fe80::/10", "fe800000000000000000000000000000", 10);
	cidr_ok("2001:db8::/128", "20010db8000000000000000000000000", 128);
}

/* "::ffff:a.b.c.d" and "a.b.c.d" are one address, in one form. */
Test(values, cidr_ipv4_mapped)
{
	cidr_ok("::ffff:192.0.2.1", V4("c0000201"), 128);
	cidr_ok("::FFFF:c000:0201", V4("c0000201"), 128);
	cidr_ok("::ffff:192.0.2.0/120", V4("c0000200"), 120);
	cidr_ok("::ffff:0:0/96", V4("00000000"), 96);
	cidr_error("::ffff:192.0.2.1/24", "'::ffff:192.0.2.1/24' has host bits set; did you mean '::/24'?");
}

Test(values, cidr_host_bits)
{
	cidr_error("192.0.2.1/24", "'192.0.2.1/24' has host bits set; did you mean '192.0.2.0/24'?");
	cidr_error("10.1.2.3/8", "'10.1.2.3/8' has host bits set; did you mean '10.0.0.0/8'?");
	cidr_error("1.1.1.1/0", "'1.1.1.1/0' has host bits set; did you mean '0.0.0.0/0'?");
	cidr_error("2001:db8::1/32",
		   "'2001:db8::1/32' has host bits set; did you mean '2001:db8::/32'?");
	cidr_error("::1/0", "'::1/0' has host bits set; did you mean '::/0'?");
	cidr_error("fe80::1/127", "'fe80::1/127' has host bits set; did you mean 'fe80::/127'?");
}

Test(values, cidr_ipv4_errors)
{
	cidr_error("127.1",
		   "'127.1' is not a dotted quad; write an IPv4 address as four decimal numbers, e.g. '192.0.2.1'");
	cidr_error("10", NULL);
	cidr_error("1.2.3.4.5", NULL);
	cidr_error("1.2.3.", NULL);
	cidr_error(".1.2.3", NULL);
	cidr_error("1..2.3", NULL);
	cidr_error("192.168.01.1",
		   "'192.168.01.1' has a leading zero in a number (octal to some readers); write an IPv4 address as four decimal numbers, e.g. '192.0.2.1'");
	cidr_error("010.0.0.1", NULL);
	cidr_error("256.1.1.1", "'256.1.1.1' has a number above 255");
	cidr_error("1.2.3.99999999999999999999999", "'1.2.3.99999999999999999999999' has a number above 255");
	cidr_error("0x7f.0.0.1", "'0x7f.0.0.1' is not an IP address");
	cidr_error("example.com", "'example.com' is not an IP address");
}

Test(values, cidr_prefix_errors)
{
	cidr_error("1.2.3.4/33", "'1.2.3.4/33' has a prefix length above 32, the IPv4 maximum");
	cidr_error("2001:db8::/129", "'2001:db8::/129' has a prefix length above 128, the IPv6 maximum");
	cidr_error("1.2.3.0/024", "'1.2.3.0/024' has a leading zero in the prefix length");
	cidr_error("1.2.3.4/", "'1.2.3.4/' has no prefix length after '/'");
	cidr_error("1.2.3.0/x", "'1.2.3.0/x' has a prefix length that is not a number");
	cidr_error("1.2.3.0/24/8", NULL);
	cidr_error("1.2.3.0/-1", NULL);
	cidr_error("1.2.3.0/99999999999999999999999", NULL);
	cidr_error("/24", "'/24' is not an IP address");
	cidr_error("1.2.3.0 /24", "'1.2.3.0 /24' has a space; write '1.2.3.0/24'");
}

Test(values, cidr_ipv6_errors)
{
	cidr_error("fe80::1%eth0", "'fe80::1%eth0' has an IPv6 zone id; zone ids are not supported");
	cidr_error("fe80::1%1/64", NULL);
	cidr_error("2001:db8:::1", "'2001:db8:::1' is not an IPv6 address: it has an empty group");
	cidr_error("1::2::3", "'1::2::3' is not an IPv6 address: it has more than one '::'");
	cidr_error("12345::", "'12345::' is not an IPv6 address: a group has more than four hex digits");
	cidr_error("1:2:3:4:5:6:7:8:9", "'1:2:3:4:5:6:7:8:9' is not an IPv6 address: it has more than eight groups");
	cidr_error("1:2:3:4:5:6:7", "'1:2:3:4:5:6:7' is not an IPv6 address: it has fewer than eight groups and no '::'");
	cidr_error("1:2:3:4:5:6:7::8", "'1:2:3:4:5:6:7::8' is not an IPv6 address: '::' stands for no group");
	cidr_error("1:2:3:4:5:6:7:8::", NULL);
	cidr_error(":1::", "':1::' is not an IPv6 address: it starts with a single ':'");
	cidr_error("1::2:", "'1::2:' is not an IPv6 address: it ends with a single ':'");
	cidr_error(":::", NULL);
	cidr_error("::g", "'::g' is not an IPv6 address: it has a character other than hex digits, ':' and '.'");
	cidr_error("::1.2.3", "'::1.2.3' is not an IPv6 address: the IPv4 part is not a dotted quad");
	cidr_error("::1.2.3.04", NULL);
	cidr_error("::1.2.3.4:5", "'::1.2.3.4:5' is not an IPv6 address: the IPv4 part is misplaced");
	cidr_error("1:2:3:4:5:6:7:1.2.3.4", NULL);
	cidr_error("[::1]", "'[::1]' has brackets; they are only for an IPv6 address followed by a port");
	cidr_error("", "the value is empty; expected an IP address or CIDR block such as '192.0.2.0/24'");
	cidr_error_len("::1\0", 4, "'::1\\x00' contains a NUL byte");
}

static void cidr_format_roundtrip(const char *text)
{
	uint8_t addr[16], again[16], prefixlen, prefixlen_again;
	char out[TP_CIDR_TEXT_MAX];

	cr_assert_eq(tp_parse_cidr(text, strlen(text), addr, &prefixlen, why, sizeof(why)), 0,
		     "'%s': %s", text, why);
	tp_format_cidr(addr, prefixlen, out);
	cr_expect_str_eq(out, text);
	cr_assert_eq(tp_parse_cidr(out, strlen(out), again, &prefixlen_again, why, sizeof(why)), 0,
		     "'%s': %s", out, why);
	cr_expect_arr_eq(again, addr, 16);
	cr_expect_eq(prefixlen_again, prefixlen);
}

/* Canonical text (RFC 5952 for IPv6) formats back to itself. */
Test(values, cidr_format_canonical)
{
	static const char *const canonical[] = {
		"192.0.2.1", "192.0.2.0/24", "0.0.0.0/0", "255.255.255.255", "10.0.0.0/8",
		"2001:db8::/32", "2001:db8::1", "::", "::/0", "::1", "1::", "fe80::/10",
		"2001:db8:0:1:1:1:1:1", "2001:0:0:1::1", "2001:db8::1:0:0:1",
		"1:2:3:4:5:6:7:8", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"0:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:0", "::1:2", "2001:db8::/127",
	};

	for (size_t i = 0; i < sizeof(canonical) / sizeof(canonical[0]); i++)
		cidr_format_roundtrip(canonical[i]);
}

Test(values, cidr_format_forms)
{
	char out[TP_CIDR_TEXT_MAX];
	uint8_t addr[16] = { 0 };

	addr[10] = addr[11] = 0xff;
	tp_format_cidr(addr, 96, out);
	cr_expect_str_eq(out, "0.0.0.0/0");
	tp_format_cidr(addr, 80, out);
	cr_expect_str_eq(out, "::ffff:0:0/80");
	addr[10] = 0;
	tp_format_cidr(addr, 128, out);
	cr_expect_str_eq(out, "::ff:0:0");
	memset(addr, 0xff, sizeof(addr));
	tp_format_cidr(addr, 128, out);
	cr_expect_str_eq(out, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

/* parse(format(x)) == x for random blocks of both families and every prefix length. */
Test(values, cidr_random_roundtrip)
{
	uint64_t state = 0x9e3779b97f4a7c15ull;

	for (unsigned int round = 0; round < 4000; round++) {
		uint8_t addr[16], again[16], prefixlen, prefixlen_again;
		char out[TP_CIDR_TEXT_MAX];

		for (size_t i = 0; i < 16; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			addr[i] = (uint8_t)(state >> 56);
			/* Zero runs of every length, so "::" lands everywhere. */
			if ((state >> 40) % 3 == 0)
				addr[i] = 0;
		}
		if (round % 2) {
			memset(addr, 0, 10);
			addr[10] = addr[11] = 0xff;
			prefixlen = (uint8_t)(96 + round / 2 % 33);
		} else {
			prefixlen = (uint8_t)(round / 2 % 129);
		}
		for (unsigned int bit = prefixlen; bit < 128; bit++)
			addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));

		tp_format_cidr(addr, prefixlen, out);
		cr_assert_eq(tp_parse_cidr(out, strlen(out), again, &prefixlen_again, why,
					   sizeof(why)), 0, "'%s': %s", out, why);
		cr_assert_arr_eq(again, addr, 16, "'%s' parsed to another address", out);
		cr_assert_eq(prefixlen_again, prefixlen, "'%s'", out);
	}
}

/* ---- ports ------------------------------------------------------------- */

static void ports_ok(const char *text, uint16_t min, uint16_t max)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	uint16_t got_min = 0, got_max = 0;
	int r = tp_parse_port_range(copy, len, &got_min, &got_max, why, sizeof(why));

	free(copy);
	cr_assert_eq(r, 0, "'%s': %s", text, why);
	cr_expect_eq(got_min, min);
	cr_expect_eq(got_max, max);
}

static void ports_error(const char *text, const char *expected)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	uint16_t min = 7, max = 7;
	int r;

	why[0] = '\0';
	r = tp_parse_port_range(copy, len, &min, &max, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	cr_expect(min == 7 && max == 7);
	check_why(text, expected);
}

Test(values, port_ranges)
{
	ports_ok("443", 443, 443);
	ports_ok("1", 1, 1);
	ports_ok("65535", 65535, 65535);
	ports_ok("8000-8100", 8000, 8100);
	ports_ok("80-80", 80, 80);
	ports_ok("1-65535", 1, 65535);
	ports_error("0", "port '0' is out of range; ports are 1..65535");
	ports_error("65536", "port '65536' is out of range; ports are 1..65535");
	ports_error("99999999999999999999999", NULL);
	ports_error("0-80", "port '0' is out of range; ports are 1..65535");
	ports_error("8100-8000", "'8100-8000' is a reversed range; write '8000-8100'");
	ports_error("0443", "port '0443' has a leading zero; write '443'");
	ports_error("8000-", "'8000-' is not a port or port range (e.g. '443' or '8000-8100')");
	ports_error("-80", NULL);
	ports_error("-", NULL);
	ports_error("1-2-3", NULL);
	ports_error("*", "'*' is not a port; leave the port out to allow every port");
	ports_error("any", NULL);
	ports_error("http", "'http' is not a port number");
	ports_error("+80", NULL);
	ports_error("8000 - 8100", "'8000 - 8100' has a space; write '8000-8100'");
	ports_error("", "the value is empty; expected a port such as '443' or a range such as '8000-8100'");
}

/* ---- destinations ------------------------------------------------------ */

static struct tp_destination dest_parse_ok(const char *text)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	struct tp_destination dest;
	int r;

	memset(&dest, 0xa5, sizeof(dest));
	dest.pos = (struct tp_pos){ .line = 7, .column = 9 };
	r = tp_parse_destination(copy, len, &dest, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, 0, "'%s': %s", text, why);
	cr_expect(dest.pos.line == 7 && dest.pos.column == 9, "'%s': pos written", text);
	cr_expect_eq(dest.protocols, TP_PROTO_ANY);
	return dest;
}

static void dest_host_ok(const char *text, const char *host, uint16_t min, uint16_t max)
{
	struct tp_destination dest = dest_parse_ok(text);

	cr_assert_not_null(dest.host, "'%s'", text);
	cr_expect_str_eq(dest.host, host);
	cr_expect_eq(dest.port_min, min, "'%s'", text);
	cr_expect_eq(dest.port_max, max, "'%s'", text);
	free(dest.host);
}

static void dest_addr_ok(const char *text, const char *cidr, uint16_t min, uint16_t max)
{
	struct tp_destination dest = dest_parse_ok(text);
	uint8_t addr[16], prefixlen;

	cr_assert_null(dest.host, "'%s'", text);
	cr_assert_eq(tp_parse_cidr(cidr, strlen(cidr), addr, &prefixlen, why, sizeof(why)), 0);
	cr_expect_arr_eq(dest.addr, addr, 16, "'%s'", text);
	cr_expect_eq(dest.prefixlen, prefixlen, "'%s'", text);
	cr_expect_eq(dest.port_min, min, "'%s'", text);
	cr_expect_eq(dest.port_max, max, "'%s'", text);
}

static void dest_error(const char *text, const char *expected)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	struct tp_destination dest, before;
	int r;

	memset(&dest, 0xa5, sizeof(dest));
	before = dest;
	why[0] = '\0';
	r = tp_parse_destination(copy, len, &dest, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	cr_expect_eq(memcmp(&dest, &before, sizeof(dest)), 0, "'%s': output written", text);
	check_why(text, expected);
}

Test(values, destination_hosts)
{
	dest_host_ok("api.github.com", "api.github.com", 1, 65535);
	dest_host_ok("api.github.com:443", "api.github.com", 443, 443);
	dest_host_ok("*.example.com", "*.example.com", 1, 65535);
	dest_host_ok("*.example.com:8000-8100", "*.example.com", 8000, 8100);
	dest_host_ok("API.Example.COM.:80", "api.example.com", 80, 80);
	dest_host_ok("1.2.3.example", "1.2.3.example", 1, 65535);
}

Test(values, destination_addresses)
{
	dest_addr_ok("192.0.2.1", "192.0.2.1", 1, 65535);
	dest_addr_ok("192.0.2.0/24", "192.0.2.0/24", 1, 65535);
	dest_addr_ok("2001:db8::/32", "2001:db8::/32", 1, 65535);
	/* Not host:port: a bare IPv6 address never carries a port. */
	dest_addr_ok("2001:db8::1", "2001:db8::1", 1, 65535);
	dest_addr_ok("2001:db8::1:443", "2001:db8::1:443", 1, 65535);
	dest_addr_ok("::ffff:192.0.2.1", "192.0.2.1", 1, 65535);
	dest_addr_ok("192.0.2.1:443", "192.0.2.1", 443, 443);
	dest_addr_ok("192.0.2.0/24:8000-8100", "192.0.2.0/24", 8000, 8100);
	dest_addr_ok("[2001:db8::1]:443", "2001:db8::1", 443, 443);
	dest_addr_ok("[2001:db8::/32]:53", "2001:db8::/32", 53, 53);
	dest_addr_ok("[::ffff:192.0.2.1]:53-54", "192.0.2.1", 53, 54);
	dest_addr_ok("0.0.0.0/0:443", "0.0.0.0/0", 443, 443);
}

Test(values, destination_port_errors)
{
	dest_error("host.example.com:0", "port '0' is out of range; ports are 1..65535");
	dest_error("api.github.com:65536", "port '65536' is out of range; ports are 1..65535");
	dest_error("api.github.com:8100-8000", "'8100-8000' is a reversed range; write '8000-8100'");
	dest_error("192.0.2.1:0", NULL);
	dest_error("[2001:db8::1]:70000", NULL);
	dest_error("api.github.com:", "'api.github.com:' has no port after ':'");
	dest_error(":443", "':443' has no host before ':'");
	dest_error("api.github.com:https", "'https' is not a port number");
	dest_error("api.github.com:*", "'*' is not a port; leave the port out to allow every port");
}

Test(values, destination_form_errors)
{
	dest_error("2001:db8::/32:53",
		   "'2001:db8::/32:53' has a port after an IPv6 address without brackets; write '[2001:db8::/32]:53'");
	dest_error("::ffff:192.0.2.1:443",
		   "'::ffff:192.0.2.1:443' has a port after an IPv6 address without brackets; write '[::ffff:192.0.2.1]:443'");
	dest_error("[2001:db8::1]",
		   "'[2001:db8::1]' has brackets but no port; write the address without brackets, or add ':PORT'");
	dest_error("[192.0.2.1]:443",
		   "'[192.0.2.1]:443' has brackets around something that is not an IPv6 address; brackets are only for IPv6");
	dest_error("[api.github.com]:443", NULL);
	dest_error("[2001:db8::1", "'[2001:db8::1' has '[' without a closing ']'");
	dest_error("[2001:db8::1]443", "'[2001:db8::1]443' has text after ']' that is not ':PORT'");
	dest_error("[2001:db8::1]:", "'[2001:db8::1]:' has no port after ':'");
	dest_error("[]:443", NULL);
	dest_error("[2001:db8::1/32]:443",
		   "'2001:db8::1/32' has host bits set; did you mean '2001:db8::/32'?");
	dest_error("https://api.github.com",
		   "'https://api.github.com' is a URL; write the host name, optionally with ':PORT'");
	dest_error("api.github.com/path", "'api.github.com/path' is not an IP address");
	dest_error("a:b:c", NULL);
	dest_error("fe80::1%eth0", "'fe80::1%eth0' has an IPv6 zone id; zone ids are not supported");
	dest_error("[fe80::1%eth0]:53", NULL);
	dest_error("api.github.com :443", "'api.github.com :443' has a space; write 'api.github.com:443'");
	dest_error("", "the value is empty; expected a destination such as 'api.example.com:443' or '192.0.2.0/24'");
}

Test(values, destination_value_errors)
{
	dest_error("127.1",
		   "'127.1' is not a dotted quad; write an IPv4 address as four decimal numbers, e.g. '192.0.2.1'");
	dest_error("127.1:80", NULL);
	dest_error("192.0.2.1/24", "'192.0.2.1/24' has host bits set; did you mean '192.0.2.0/24'?");
	dest_error("192.0.2.1/24:443", NULL);
	dest_error("localhost", NULL);
	cr_expect_not_null(strstr(why, "loopback"), "%s", why);
	dest_error("localhost:8080", NULL);
	dest_error("intranet:80", NULL);
	dest_error("*.com", NULL);
	dest_error("a.*.example.com", NULL);
	dest_error("300.1.1.1", "'300.1.1.1' has a number above 255");
	dest_error("_srv.example.com", NULL);
}

/* ---- endpoints --------------------------------------------------------- */

static void endpoint_ok(const char *text, uint16_t default_port, const char *address,
			uint16_t port)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	struct tp_endpoint endpoint;
	uint8_t addr[16], prefixlen;
	int r;

	memset(&endpoint, 0xa5, sizeof(endpoint));
	endpoint.pos = (struct tp_pos){ .line = 3, .column = 4 };
	r = tp_parse_endpoint(copy, len, default_port, &endpoint, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, 0, "'%s': %s", text, why);
	cr_assert_eq(tp_parse_cidr(address, strlen(address), addr, &prefixlen, why, sizeof(why)),
		     0);
	cr_expect_arr_eq(endpoint.addr, addr, 16, "'%s'", text);
	cr_expect_eq(endpoint.port, port, "'%s'", text);
	cr_expect(endpoint.pos.line == 3 && endpoint.pos.column == 4, "'%s': pos written", text);
}

static void endpoint_error(const char *text, uint16_t default_port, const char *expected)
{
	size_t len = strlen(text);
	char *copy = exact_copy(text, len);
	struct tp_endpoint endpoint, before;
	int r;

	memset(&endpoint, 0xa5, sizeof(endpoint));
	before = endpoint;
	why[0] = '\0';
	r = tp_parse_endpoint(copy, len, default_port, &endpoint, why, sizeof(why));
	free(copy);
	cr_assert_eq(r, -EINVAL, "'%s': r=%d", text, r);
	cr_expect_eq(memcmp(&endpoint, &before, sizeof(endpoint)), 0, "'%s': output written", text);
	check_why(text, expected);
}

Test(values, endpoints)
{
	endpoint_ok("192.0.2.53", 53, "192.0.2.53", 53);
	endpoint_ok("192.0.2.53:5353", 53, "192.0.2.53", 5353);
	endpoint_ok("[2001:db8::53]:53", 53, "2001:db8::53", 53);
	endpoint_ok("[2001:db8::53]:5353", 53, "2001:db8::53", 5353);
	endpoint_ok("2001:db8::53", 53, "2001:db8::53", 53);
	endpoint_ok("::ffff:192.0.2.53", 53, "192.0.2.53", 53);
	endpoint_ok("192.0.2.53", 853, "192.0.2.53", 853);
	endpoint_ok("192.0.2.53:1", 0, "192.0.2.53", 1);
	endpoint_ok("192.0.2.53:65535", 53, "192.0.2.53", 65535);
}

Test(values, endpoint_errors)
{
	endpoint_error("192.0.2.0/24", 53, "'192.0.2.0/24' is a CIDR block; write a single address");
	endpoint_error("[2001:db8::/32]:53", 53, NULL);
	endpoint_error("dns.google", 53, "'dns.google' is not an IP address");
	endpoint_error("dns.google:53", 53, "'dns.google' is not an IP address");
	endpoint_error("192.0.2.53:53-54", 53, "'53-54' is a port range; write a single port");
	endpoint_error("192.0.2.53:0", 53, "port '0' is out of range; ports are 1..65535");
	endpoint_error("192.0.2.53:65536", 53, NULL);
	endpoint_error("192.0.2.53:", 53, "'192.0.2.53:' has no port after ':'");
	endpoint_error(":53", 53, "':53' has no address before ':'");
	endpoint_error("[2001:db8::53]", 53,
		       "'[2001:db8::53]' has brackets but no port; write the address without brackets, or add ':PORT'");
	endpoint_error("2001:db8::53%eth0", 53, NULL);
	endpoint_error("::ffff:192.0.2.53:53", 53,
		       "'::ffff:192.0.2.53:53' has a port after an IPv6 address without brackets; write '[::ffff:192.0.2.53]:53'");
	endpoint_error("192.0.2.53", 0, "'192.0.2.53' has no port");
	endpoint_error("127.1", 53, NULL);
	endpoint_error("192.0.2.53 :53", 53, "'192.0.2.53 :53' has a space; write '192.0.2.53:53'");
	endpoint_error("", 53, "the value is empty; expected an address such as '192.0.2.53' or '[2001:db8::53]:53'");
}

/* ---- formatting and round trips ---------------------------------------- */

Test(values, format_size)
{
	char out[TP_SIZE_TEXT_MAX];

	tp_format_size(0, out);
	cr_expect_str_eq(out, "0");
	tp_format_size(1, out);
	cr_expect_str_eq(out, "1");
	tp_format_size(1000, out);
	cr_expect_str_eq(out, "1000");
	tp_format_size(1024, out);
	cr_expect_str_eq(out, "1KiB");
	tp_format_size(1536, out);
	cr_expect_str_eq(out, "1536");
	tp_format_size(1536ull << 20, out);
	cr_expect_str_eq(out, "1536MiB");
	tp_format_size(4ull << 30, out);
	cr_expect_str_eq(out, "4GiB");
	tp_format_size(4294967297ull, out);
	cr_expect_str_eq(out, "4294967297");
	tp_format_size(1ull << 50, out);
	cr_expect_str_eq(out, "1PiB");
	tp_format_size(15ull << 60, out);
	cr_expect_str_eq(out, "15EiB");
	tp_format_size(UINT64_MAX, out);
	cr_expect_str_eq(out, "18446744073709551615");
}

Test(values, format_duration)
{
	char out[TP_DURATION_TEXT_MAX];

	tp_format_duration(0, out);
	cr_expect_str_eq(out, "0s");
	tp_format_duration(HOUR + 30 * MIN, out);
	cr_expect_str_eq(out, "1h30m");
	tp_format_duration(10 * MIN, out);
	cr_expect_str_eq(out, "10m");
	tp_format_duration(250, out);
	cr_expect_str_eq(out, "250ms");
	tp_format_duration(DAY, out);
	cr_expect_str_eq(out, "1d");
	tp_format_duration(DAY + 1, out);
	cr_expect_str_eq(out, "1d1ms");
	tp_format_duration(90 * SEC, out);
	cr_expect_str_eq(out, "1m30s");
	tp_format_duration(UINT64_MAX, out);
	cr_expect_str_eq(out, "213503982334d14h25m51s615ms");
}

Test(values, format_cpu)
{
	char out[TP_SIZE_TEXT_MAX];

	tp_format_cpu(0, out);
	cr_expect_str_eq(out, "0");
	tp_format_cpu(2000, out);
	cr_expect_str_eq(out, "2");
	tp_format_cpu(500, out);
	cr_expect_str_eq(out, "0.5");
	tp_format_cpu(1250, out);
	cr_expect_str_eq(out, "1.25");
	tp_format_cpu(1, out);
	cr_expect_str_eq(out, "0.001");
	tp_format_cpu(10, out);
	cr_expect_str_eq(out, "0.01");
	tp_format_cpu(1024000, out);
	cr_expect_str_eq(out, "1024");
	tp_format_cpu(UINT64_MAX, out);
	cr_expect_str_eq(out, "18446744073709551.615");
}

/* Values worth a round trip: edges, unit multiples and their neighbours, and random ones. */
static size_t roundtrip_values(uint64_t *values, size_t max)
{
	static const uint64_t units[] = {
		1, 10, 1000, 1024, 60000, 3600000, 86400000, 1000000, 1ull << 20, 1ull << 30,
		1000000000, 1ull << 40, 1ull << 50, 1ull << 60, 1000000000000000000ull,
	};
	uint64_t state = 12345;
	size_t n = 0;

	values[n++] = 0;
	values[n++] = UINT64_MAX;
	values[n++] = UINT64_MAX - 1;
	values[n++] = 1ull << 63;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		for (uint64_t k = 1; k <= 7; k++) {
			values[n++] = units[i] * k;
			values[n++] = units[i] * k + 1;
			values[n++] = units[i] * k - 1;
		}
	while (n < max) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		values[n++] = state >> (state % 61);
	}
	return n;
}

Test(values, roundtrip_size_duration_cpu)
{
	uint64_t values[2000];
	size_t n = roundtrip_values(values, sizeof(values) / sizeof(values[0]));

	for (size_t i = 0; i < n; i++) {
		char size[TP_SIZE_TEXT_MAX], duration[TP_DURATION_TEXT_MAX], cpu[TP_SIZE_TEXT_MAX];
		uint64_t back;

		tp_format_size(values[i], size);
		cr_assert_eq(tp_parse_size(size, strlen(size), ANY, &back, why, sizeof(why)), 0,
			     "size '%s': %s", size, why);
		cr_assert_eq(back, values[i], "size '%s'", size);

		tp_format_duration(values[i], duration);
		cr_assert_eq(tp_parse_duration(duration, strlen(duration), ANY, &back, why,
					       sizeof(why)), 0, "duration '%s': %s", duration, why);
		cr_assert_eq(back, values[i], "duration '%s'", duration);

		tp_format_cpu(values[i], cpu);
		cr_assert_eq(tp_parse_cpu(cpu, strlen(cpu), ANY, &back, why, sizeof(why)), 0,
			     "cpu '%s': %s", cpu, why);
		cr_assert_eq(back, values[i], "cpu '%s'", cpu);
	}
}

/* Range messages print bounds in the value's own syntax: they must parse back. */
Test(values, range_messages_name_parseable_bounds)
{
	uint64_t value;

	number_error(tp_parse_size, "1KiB", 1ull << 20, 1ull << 50, NULL);
	cr_expect_eq(tp_parse_size("1MiB", 4, ANY, &value, why, sizeof(why)), 0);
	number_error(tp_parse_duration, "31d", 1000, 30 * DAY, NULL);
	cr_expect_not_null(strstr(why, "the maximum is 30d"), "%s", why);
	number_error(tp_parse_cpu, "1m", 10, 1024000, NULL);
	cr_expect_not_null(strstr(why, "the minimum is 0.01"), "%s", why);
}

/* ---- path patterns (shared by envelopes and task contracts) -------------- */

static void pattern_ok(const char *text, enum tp_pattern_where where, const char *path,
		       bool relative, enum tp_path_kind kind)
{
	char pwhy[TP_PATTERN_WHY_MAX];
	struct tp_path_entry e = { .pos = { 7, 9 } };

	cr_assert_eq(tp_parse_path_pattern(text, strlen(text), where, &e, pwhy, sizeof(pwhy)), 0,
		     "'%s': %s", text, pwhy);
	cr_expect_str_eq(e.path, path, "'%s'", text);
	cr_expect_eq(e.relative, relative, "'%s'", text);
	cr_expect_eq(e.kind, kind, "'%s'", text);
	cr_expect(e.pos.line == 7 && e.pos.column == 9, "pos must be left alone");
	free(e.path);
}

static void pattern_bad(const char *text, size_t len, enum tp_pattern_where where,
			const char *message)
{
	char pwhy[TP_PATTERN_WHY_MAX];
	struct tp_path_entry e = { 0 };

	cr_assert_eq(tp_parse_path_pattern(text, len, where, &e, pwhy, sizeof(pwhy)), -EINVAL,
		     "'%s' accepted", text);
	cr_expect_str_eq(pwhy, message);
	cr_expect_null(e.path);
}

Test(values, path_patterns)
{
	pattern_ok("**", TP_PATTERN_ANY, "", true, TP_PATH_SUBTREE);
	pattern_ok("/**", TP_PATTERN_ANY, "/", false, TP_PATH_SUBTREE);
	pattern_ok("src/auth/**", TP_PATTERN_RELATIVE, "src/auth", true, TP_PATH_SUBTREE);
	pattern_ok("./src//auth/../lib/**", TP_PATTERN_ANY, "src/lib", true, TP_PATH_SUBTREE);
	pattern_ok("/opt//x/./y", TP_PATTERN_ABSOLUTE, "/opt/x/y", false, TP_PATH_EXACT);
	pattern_ok("/a/../..", TP_PATTERN_ANY, "/", false, TP_PATH_EXACT);
	pattern_ok("a/b/..", TP_PATTERN_ANY, "a", true, TP_PATH_EXACT);

	pattern_bad("", 0, TP_PATTERN_ANY, "the pattern is empty; write '**' for the whole workspace");
	pattern_bad("a\0b", 3, TP_PATTERN_ANY, "'a\\x00b' contains a NUL byte");
	pattern_bad("src/*.c", 7, TP_PATTERN_ANY,
		    "'src/*.c' is a glob the kernel cannot enforce: only exact paths ('dir/file') "
		    "and whole subtrees ('dir/**') can be; list the files, or grant their "
		    "directory with 'dir/**'");
	pattern_bad("src/**/x", 8, TP_PATTERN_ANY,
		    "'src/**/x' is a glob the kernel cannot enforce: only exact paths ('dir/file') "
		    "and whole subtrees ('dir/**') can be; list the files, or grant their "
		    "directory with 'dir/**'");
	pattern_bad("a**", 3, TP_PATTERN_ANY,
		    "'a**' is a glob the kernel cannot enforce: only exact paths ('dir/file') "
		    "and whole subtrees ('dir/**') can be; list the files, or grant their "
		    "directory with 'dir/**'");
	pattern_bad("src//", 5, TP_PATTERN_ANY,
		    "'src//' ends with '/': write 'src/**' for the directory and everything "
		    "beneath it, or 'src' for the directory itself");
	pattern_bad("../x", 4, TP_PATTERN_ANY, "'../x' leaves the workspace through '..'");
	pattern_bad("a/../../x/**", 12, TP_PATTERN_ANY,
		    "'a/../../x/**' leaves the workspace through '..'");
	pattern_bad(".", 1, TP_PATTERN_ANY,
		    "'.' names the workspace itself: write '**' for the workspace and everything "
		    "in it");
	pattern_bad("/etc/**", 7, TP_PATTERN_RELATIVE,
		    "'/etc/**' must be relative to the workspace (no leading '/')");
	pattern_bad("etc/**", 6, TP_PATTERN_ABSOLUTE, "'etc/**' must be an absolute path");
}

Test(values, path_pattern_length_limit_applies_after_normalisation)
{
	char text[600], pwhy[TP_PATTERN_WHY_MAX];
	struct tp_path_entry e = { 0 };

	/* "/" + 250 'a' = 251 bytes: the longest a kernel rule key holds. */
	memset(text, 'a', sizeof(text));
	text[0] = '/';
	cr_assert_eq(tp_parse_path_pattern(text, 251, TP_PATTERN_ANY, &e, pwhy, sizeof(pwhy)), 0);
	free(e.path);
	e.path = NULL;
	cr_assert_eq(tp_parse_path_pattern(text, 252, TP_PATTERN_ANY, &e, pwhy, sizeof(pwhy)),
		     -EINVAL);
	cr_expect(strstr(pwhy, "is 252 bytes long after normalisation, over the limit of 251"),
		  "%s", pwhy);
	/* 299 bytes as written ("/" and 24 "./" before 250 'a'), 251 once "./" collapses. */
	memset(text, 'a', sizeof(text));
	text[0] = '/';
	for (int i = 0; i < 24; i++)
		memcpy(text + 1 + 2 * i, "./", 2);
	cr_assert_eq(tp_parse_path_pattern(text, 299, TP_PATTERN_ANY, &e, pwhy, sizeof(pwhy)), 0,
		     "%s", pwhy);
	cr_expect_eq(strlen(e.path), 251);
	free(e.path);
}
