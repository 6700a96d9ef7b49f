// SPDX-License-Identifier: Apache-2.0
/*
 * The program reads the integer fields of a written value itself
 * (sg_scan_long in bpf/sysctl_guard_decide.h) where it called bpf_strtol
 * before. It must read them exactly as that helper did: here against a port
 * of the helper (kernel/bpf/helpers.c, __bpf_strtoull and bpf_strtol, with
 * lib/kstrtox.c's base and digit rules), on chosen edge cases and on many
 * generated strings.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "compile/eval.h"
#include "test.h"

/* The kernel's isspace(): its ctype table also counts 0xa0 as space. */
static int kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* bpf_strtol(buf, len, 0, res) as kernel/bpf/helpers.c implements it. */
static long kernel_strtol(const char *buf, __u32 len, long *res)
{
	const char *cur = buf, *end = buf + len;
	char str[64];
	size_t n;
	bool negative;
	unsigned base = 10;
	unsigned long long value = 0;
	size_t digits = 0;

	while (cur < end && kernel_isspace((unsigned char)*cur))
		cur++;
	negative = cur < end && *cur == '-';
	if (negative)
		cur++;
	size_t consumed = (size_t)(cur - buf);
	if (consumed == len)
		return -EINVAL;
	n = len - consumed;
	if (n > sizeof(str) - 1)
		n = sizeof(str) - 1;
	memcpy(str, cur, n);
	str[n] = '\0';

	const char *p = str;
	if (p[0] == '0') {
		if (tolower((unsigned char)p[1]) == 'x' && isxdigit((unsigned char)p[2])) {
			base = 16;
			p += 2;
		} else {
			base = 8;
		}
	}
	for (;; p++, digits++) {
		unsigned d;
		unsigned char ch = (unsigned char)*p;
		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (tolower(ch) >= 'a' && tolower(ch) <= 'f')
			d = (unsigned)(tolower(ch) - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		if (value > (ULLONG_MAX - d) / base)
			return -ERANGE;
		value = value * base + d;
	}
	if (digits == 0)
		return -EINVAL;
	if (negative) {
		if ((long long)-value > 0)
			return -ERANGE;
		*res = (long)-value;
	} else {
		if ((long long)value < 0)
			return -ERANGE;
		*res = (long)value;
	}
	return (long)(consumed + (size_t)(p - str));
}

/* What the helper read from @text, with the window the program gives it: SG_VALUE_MAX bytes. */
static long helper_reads(const char *text, long *value)
{
	char buf[SG_VALUE_MAX] = {0};
	snprintf(buf, sizeof(buf), "%s", text);
	return kernel_strtol(buf, SG_VALUE_MAX, value);
}

/* What the generated strings reached: each kind must occur, or the test proves little. */
static struct {
	unsigned no_digit, overflow, negative, octal, hex, stopped_at_digit, plain;
} seen;

/*
 * Where the fast path takes a value, the general scan must read the same
 * single field from it, with only whitespace after (what sg_check_range's
 * general path then accepts as one field).
 */
static void check_plain_decimal(const char *text, long want_len, long want)
{
	long long plain = 0;
	unsigned digits = sg_eval_scan_plain_decimal(text, &plain);

	if (!digits)
		return;
	seen.plain++;
	if (want_len != (long)digits || want != plain ||
	    text[digits + strspn(text + digits, " \t\n\v\f\r")] != '\0') {
		fprintf(stderr, "\"%s\": helper %ld (%ld), fast path %u (%lld)\n", text, want_len,
			want, digits, plain);
		CHECK(!"the fast path reads what the general scan reads");
	}
}

static void check_same(const char *text)
{
	long want = 0;
	long long got = 0;
	long want_len = helper_reads(text, &want);

	seen.no_digit += want_len == -EINVAL;
	seen.overflow += want_len == -ERANGE;
	seen.negative += want_len > 0 && want < 0;
	seen.octal += want_len > 1 && strspn(text, " \t\n-") < strlen(text) &&
		      text[strspn(text, " \t\n-")] == '0' &&
		      isdigit((unsigned char)text[strspn(text, " \t\n-") + 1]);
	seen.hex += want_len > 0 && strpbrk(text, "xX") && strpbrk(text, "xX") < text + want_len;
	seen.stopped_at_digit += want_len > 0 && (size_t)want_len < strlen(text) &&
				 isdigit((unsigned char)text[want_len]);
	long got_len = sg_eval_scan_long(text, &got);

	if (got_len != want_len || (want_len >= 0 && got != want)) {
		fprintf(stderr, "\"%s\": helper %ld (%ld), scan %ld (%lld)\n", text, want_len, want,
			got_len, got);
		CHECK(!"the scan reads as bpf_strtol does");
	}
	check_plain_decimal(text, want_len, want);
}

TEST(edge_cases)
{
	static const char *const cases[] = {
	    "0",
	    "4096",
	    "4096\n",
	    "  4096",
	    "\t\n\v\f\r 7",
	    "\xa0"
	    "12",
	    "-1",
	    "-0",
	    "--1",
	    "- 1",
	    "+1",
	    "",
	    " ",
	    "-",
	    "x",
	    "0x",
	    "0x1f",
	    "0X1F",
	    "0xg",
	    "0x 1",
	    "010",
	    "08",
	    "0777",
	    "09",
	    "00000000000000000000000000000000000000000000000000000000000000000000001",
	    "9223372036854775807",
	    "9223372036854775808",
	    "-9223372036854775808",
	    "-9223372036854775809",
	    "18446744073709551615",
	    "18446744073709551616",
	    "0xffffffffffffffff",
	    "0x10000000000000000",
	    "0x7fffffffffffffff",
	    "01777777777777777777777",
	    "02000000000000000000000",
	    "1777777777777777777777",
	    "4096 8192",
	    "200x",
	    "12abc",
	    "1e3",
	    "١٢",
	    "\xff"
	    "1",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_same(cases[i]);
}

/*
 * Digits running past the 63 bytes the helper reads after the sign, in
 * every base, after whitespace and a sign: the window, not the digits, ends
 * the number ("0x" and 70 zeros and a 1 is 0, 63 bytes).
 */
TEST(digits_past_the_window)
{
	static const char *const leads[] = {"", "0x", "0X", "-", "-0x", "   ", "  -0x", "0"};
	static const char digits[] = "0123456789abcdef";
	char text[SG_VALUE_MAX];

	for (size_t l = 0; l < sizeof(leads) / sizeof(leads[0]); l++)
		for (size_t run = 55; run <= 80; run++)
			for (size_t d = 0; d < sizeof(digits) - 1; d++) {
				size_t len = strlen(leads[l]);
				memcpy(text, leads[l], len);
				memset(text + len, '0', run);
				text[len + run] = digits[d];
				text[len + run + 1] = '\0';
				check_same(text);
			}
}

/* Whitespace, signs and prefixes before digits of every base, up to the window and past it. */
TEST(generated_strings)
{
	static const char alphabet[] = "0123456789abcdefABCDEFxX- \t\n\xa0+g";
	uint64_t state = 0x9e3779b97f4a7c15ull;
	char text[SG_VALUE_MAX];

	for (int n = 0; n < 300000; n++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		size_t len = (size_t)(state % (SG_VALUE_MAX - 1));
		uint64_t r = state;
		/* Mostly digits, often long runs of one kind, to reach the window and overflow. */
		for (size_t i = 0; i < len; i++) {
			if (i % 8 == 0)
				r = r * 6364136223846793005ull + 1442695040888963407ull;
			unsigned pick = (unsigned)(r >> (8 * (i % 8))) & 0xff;
			text[i] = pick < 160   ? (char)('0' + pick % 10)
				  : pick < 200 ? (pick < 180 ? ' ' : '0')
					       : alphabet[pick % (sizeof(alphabet) - 1)];
		}
		text[len] = '\0';
		check_same(text);
	}
	fprintf(stderr,
		"     no digit %u, overflow %u, negative %u, octal %u, hex %u, stopped before a "
		"digit (octal 8 or 9, or the window) %u\n",
		seen.no_digit, seen.overflow, seen.negative, seen.octal, seen.hex,
		seen.stopped_at_digit);
	CHECK(seen.no_digit > 100 && seen.overflow > 100 && seen.negative > 100);
	CHECK(seen.octal > 100 && seen.hex > 100 && seen.stopped_at_digit > 100);
}

/* The shapes the fast path takes, and the near misses it leaves to the general scan. */
TEST(plain_decimal_fast_path)
{
	static const struct {
		const char *text;
		unsigned digits;
	} cases[] = {
	    {"4096", 4},
	    {"4096\n", 4},
	    {"1", 1},
	    {"999999999999999999", 18},
	    {"0", 0},
	    {"04096", 0},
	    {"4096 ", 0},
	    {" 4096", 0},
	    {"-1", 0},
	    {"+1", 0},
	    {"4096\n\n", 0},
	    {"4096\n1", 0},
	    {"1000000000000000000", 0},
	    {"4096 8192", 0},
	    {"12abc", 0},
	    {"", 0},
	};
	long long v;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(sg_eval_scan_plain_decimal(cases[i].text, &v) == cases[i].digits);
		check_same(cases[i].text);
	}
	CHECK(sg_eval_scan_plain_decimal("999999999999999999", &v) && v == 999999999999999999ll);
}

/* Short strings of digits and whitespace: the fast path's whole domain and its edges. */
TEST(short_strings)
{
	static const char alphabet[] = "01234567899999\n\n \t0x-";
	uint64_t state = 0x2545f4914f6cdd1dull;
	char text[24];

	seen.plain = 0;
	for (int n = 0; n < 200000; n++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		size_t len = (size_t)(state % 22);
		for (size_t i = 0; i < len; i++)
			text[i] = alphabet[(state >> (2 * i + 5)) % (sizeof(alphabet) - 1)];
		/* Mostly plain: digits with at most a newline at the end. */
		if (state & 1)
			for (size_t i = 0; i < len; i++)
				if (text[i] < '0' || text[i] > '9')
					text[i] = (char)('1' + i % 9);
		if (len && (state & 6) == 6)
			text[len - 1] = '\n';
		text[len] = '\0';
		check_same(text);
	}
	fprintf(stderr, "     taken by the fast path: %u of 200000\n", seen.plain);
	CHECK(seen.plain > 20000);
}

RUN_TESTS(T(edge_cases), T(digits_past_the_window), T(generated_strings),
	  T(plain_decimal_fast_path), T(short_strings))
