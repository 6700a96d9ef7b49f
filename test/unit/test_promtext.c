// SPDX-License-Identifier: Apache-2.0
/* The Prometheus text format writer: families, samples, and label values escaped. */
#include <stdio.h>
#include <stdlib.h>

#include "base/promtext.h"
#include "base/util.h"
#include "test.h"

/* What @write puts in a stream, as a string to free. */
#define WRITTEN(out, write)                                                                        \
	({                                                                                         \
		char *_buf = NULL;                                                                 \
		size_t _len = 0;                                                                   \
		FILE *out = open_memstream(&_buf, &_len);                                          \
		write;                                                                             \
		fclose(out);                                                                       \
		_buf;                                                                              \
	})

TEST(family_lines_escape_backslash_and_newline_in_help)
{
	_cleanup_free_ char *got =
	    WRITTEN(f, sg_prom_family(f, "x_total", "counter", "a \\ b\nc \"quoted\""));
	CHECK_STR(got, "# HELP x_total a \\\\ b\\nc \"quoted\"\n# TYPE x_total counter\n");
}

TEST(sample_without_labels)
{
	_cleanup_free_ char *got =
	    WRITTEN(f, sg_prom_sample(f, "x", NULL, 0, 18446744073709551615ull));
	CHECK_STR(got, "x 18446744073709551615\n");
}

TEST(sample_labels_in_order)
{
	const struct sg_prom_label l[] = {{"a", "1"}, {"b", ""}};
	_cleanup_free_ char *got = WRITTEN(f, sg_prom_sample(f, "x_total", l, 2, 7));
	CHECK_STR(got, "x_total{a=\"1\",b=\"\"} 7\n");
}

TEST(label_value_escapes_backslash_quote_newline)
{
	_cleanup_free_ char *got = WRITTEN(f, sg_prom_label_value(f, "/a\\b\"c\nd\te"));
	CHECK_STR(got, "\"/a\\\\b\\\"c\\nd\te\"");
}

TEST(label_value_keeps_utf8_and_replaces_other_bytes)
{
	/* é (2 bytes), € (3), 😀 (4) stay; a lone 0xff, a cut sequence, an overlong '/' and a
	 * surrogate do not. */
	_cleanup_free_ char *got = WRITTEN(
	    f, sg_prom_label_value(f, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xff|\xe2\x82|\xc0\xaf|"
				      "\xed\xa0\x80"));
	CHECK_STR(got,
		  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
		  "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}

RUN_TESTS(T(family_lines_escape_backslash_and_newline_in_help), T(sample_without_labels),
	  T(sample_labels_in_order), T(label_value_escapes_backslash_quote_newline),
	  T(label_value_keeps_utf8_and_replaces_other_bytes))
