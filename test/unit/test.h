/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minimal unit test harness: each test file is one executable, each
 * TEST() a function; a failed CHECK prints file:line and the expression and
 * marks the test failed, and the process exits 1 if any test failed.
 */
#ifndef SG_TEST_H
#define SG_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_test {
	const char *name;
	void (*fn)(void);
};

extern int sg_test_failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
			sg_test_failures++;                                                        \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                           \
			fprintf(stderr,                                                            \
				"%s:%d: CHECK_STR failed: %s\n  got:      \"%s\"\n  expected: "    \
				"\"%s\"\n",                                                        \
				__FILE__, __LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)");   \
			sg_test_failures++;                                                        \
		}                                                                                  \
	} while (0)

/* The message must contain @needle. */
#define CHECK_CONTAINS(haystack, needle)                                                           \
	do {                                                                                       \
		const char *_h = (haystack), *_n = (needle);                                       \
		if (!_h || !strstr(_h, _n)) {                                                      \
			fprintf(stderr,                                                            \
				"%s:%d: CHECK_CONTAINS failed:\n  in:      \"%s\"\n  missing: "    \
				"\"%s\"\n",                                                        \
				__FILE__, __LINE__, _h ? _h : "(null)", _n);                       \
			sg_test_failures++;                                                        \
		}                                                                                  \
	} while (0)

#define TEST(fn_name) static void fn_name(void)

/* Whether the @n bytes at @p all hold @byte. */
static inline int all_bytes(const unsigned char *p, size_t n, unsigned char byte)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != byte)
			return 0;
	return 1;
}

#define RUN_TESTS(...)                                                                             \
	int sg_test_failures;                                                                      \
	int main(void)                                                                             \
	{                                                                                          \
		static const struct sg_test tests[] = {__VA_ARGS__};                               \
		for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {                    \
			int before = sg_test_failures;                                             \
			tests[i].fn();                                                             \
			printf("%s %s\n", sg_test_failures == before ? "ok  " : "FAIL",            \
			       tests[i].name);                                                     \
		}                                                                                  \
		return sg_test_failures ? 1 : 0;                                                   \
	}
#define T(fn_name)                                                                                 \
	{                                                                                          \
#fn_name, fn_name                                                                  \
	}

#endif
