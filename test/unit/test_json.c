// SPDX-License-Identifier: Apache-2.0
/* The JSON tree: line:col of every value and key, numbers, strings, and what it rejects. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/util.h"
#include "test.h"

/* Parses @text (all of it); NULL, with the message printed, when it is rejected. */
static struct sg_json *parse(const char *text)
{
	struct sg_json *root = NULL;
	struct sg_err err = {0};

	if (sg_json_parse(text, strlen(text), "t.json", &root, &err) < 0) {
		fprintf(stderr, "  unexpected rejection: %s\n", err.msg);
		CHECK(root == NULL);
		return NULL;
	}
	CHECK(!sg_err_is_set(&err));
	CHECK(root != NULL);
	return root;
}

/* The message for @len bytes of @text, which must be rejected; "" when it was accepted. */
static const char *rejected_n(const char *text, size_t len)
{
	static struct sg_err err;
	struct sg_json *root = (struct sg_json *)1;

	memset(&err, 0, sizeof(err));
	int r = sg_json_parse(text, len, "t.json", &root, &err);
	CHECK(r == -EINVAL);
	CHECK(root == NULL);
	if (r == 0) {
		sg_json_free(root);
		return "";
	}
	CHECK(err.code == EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	CHECK(strncmp(err.msg, "t.json", 6) == 0);
	return err.msg;
}

static const char *rejected(const char *text)
{
	return rejected_n(text, strlen(text));
}

#define CHECK_POS(pos, l, c)                                                                       \
	do {                                                                                       \
		struct sg_pos _p = (pos);                                                          \
		if (_p.line != (l) || _p.col != (c)) {                                             \
			fprintf(stderr, "%s:%d: CHECK_POS failed: %s is %u:%u, expected %u:%u\n",  \
				__FILE__, __LINE__, #pos, _p.line, _p.col, (unsigned)(l),          \
				(unsigned)(c));                                                    \
			sg_test_failures++;                                                        \
		}                                                                                  \
	} while (0)

/* The position of key @key in @object. */
static struct sg_pos key_pos(const struct sg_json *object, const char *key)
{
	for (size_t i = 0; object && object->type == SG_JSON_OBJECT && i < object->object.len; i++)
		if (strcmp(object->object.keys[i], key) == 0)
			return object->object.key_pos[i];
	return (struct sg_pos){0, 0};
}

TEST(positions_of_values_and_keys)
{
	const char *text = "{\n"
			   "  \"version\": 1,\n"
			   "  \"mode\":\"audit\",\n"
			   "\t\"flag\": true, \"off\": false, \"nothing\": null,\n"
			   "  \"rules\": [\n"
			   "    { \"name\": \"net.core.somaxconn\", \"range\": [128, -4096] },\n"
			   "    {\"x\":-1.5e3}\n"
			   "  ]\n"
			   "}\n";
	_cleanup_json_ struct sg_json *root = parse(text);
	if (!root)
		return;
	CHECK(root->type == SG_JSON_OBJECT);
	CHECK_POS(root->pos, 1, 1);
	CHECK(root->object.len == 6);

	CHECK_POS(key_pos(root, "version"), 2, 3);
	CHECK_POS(sg_json_get(root, "version")->pos, 2, 14);
	CHECK_POS(key_pos(root, "mode"), 3, 3);
	CHECK_POS(sg_json_get(root, "mode")->pos, 3, 10);
	/* a tab is one column */
	CHECK_POS(key_pos(root, "flag"), 4, 2);
	CHECK_POS(sg_json_get(root, "flag")->pos, 4, 10);
	CHECK_POS(key_pos(root, "off"), 4, 16);
	CHECK_POS(sg_json_get(root, "off")->pos, 4, 23);
	CHECK_POS(key_pos(root, "nothing"), 4, 30);
	CHECK_POS(sg_json_get(root, "nothing")->pos, 4, 41);
	CHECK(sg_json_get(root, "flag")->boolean);
	CHECK(!sg_json_get(root, "off")->boolean);
	CHECK(sg_json_get(root, "nothing")->type == SG_JSON_NULL);

	const struct sg_json *rules = sg_json_get(root, "rules");
	CHECK_POS(key_pos(root, "rules"), 5, 3);
	CHECK(rules && rules->type == SG_JSON_ARRAY && rules->array.len == 2);
	if (!rules || rules->type != SG_JSON_ARRAY || rules->array.len != 2)
		return;
	CHECK_POS(rules->pos, 5, 12);

	const struct sg_json *r0 = rules->array.items[0];
	CHECK_POS(r0->pos, 6, 5);
	CHECK_POS(key_pos(r0, "name"), 6, 7);
	CHECK_POS(sg_json_get(r0, "name")->pos, 6, 15);
	CHECK_POS(key_pos(r0, "range"), 6, 37);
	const struct sg_json *range = sg_json_get(r0, "range");
	CHECK_POS(range->pos, 6, 46);
	CHECK(range->array.len == 2);
	CHECK_POS(range->array.items[0]->pos, 6, 47);
	CHECK_POS(range->array.items[1]->pos, 6, 52);
	CHECK(range->array.items[1]->number.integer == -4096);

	const struct sg_json *r1 = rules->array.items[1];
	CHECK_POS(r1->pos, 7, 5);
	CHECK_POS(key_pos(r1, "x"), 7, 6);
	CHECK_POS(sg_json_get(r1, "x")->pos, 7, 10);
	CHECK_STR(sg_json_get(r1, "x")->number.text, "-1.5e3");
}

TEST(positions_count_characters_and_skip_escapes)
{
	/* "é" and "✓" are one column each; escaped quotes and backslashes do not end strings */
	const char *text = "{\"é✓\": \"a\\\"b\", \"k\": \"\\\\\", \"n\": \"x\\\\\\\"\", \"v\": 7,\n"
			   " \"ü\": [\"\\\\\", 8]}";
	_cleanup_json_ struct sg_json *root = parse(text);
	if (!root)
		return;
	CHECK_POS(key_pos(root, "é✓"), 1, 2);
	CHECK_POS(sg_json_get(root, "é✓")->pos, 1, 8);
	CHECK_STR(sg_json_get_string(root, "é✓"), "a\"b");
	CHECK_POS(key_pos(root, "k"), 1, 16);
	CHECK_POS(sg_json_get(root, "k")->pos, 1, 21);
	CHECK_STR(sg_json_get_string(root, "k"), "\\");
	CHECK_POS(key_pos(root, "n"), 1, 27);
	CHECK_POS(sg_json_get(root, "n")->pos, 1, 32);
	CHECK_STR(sg_json_get_string(root, "n"), "x\\\"");
	CHECK_POS(key_pos(root, "v"), 1, 41);
	CHECK_POS(sg_json_get(root, "v")->pos, 1, 46);
	CHECK_POS(key_pos(root, "ü"), 2, 2);
	const struct sg_json *a = sg_json_get(root, "ü");
	CHECK_POS(a->pos, 2, 7);
	CHECK_POS(a->array.items[0]->pos, 2, 8);
	CHECK_POS(a->array.items[1]->pos, 2, 14);
}

TEST(positions_of_top_level_scalars)
{
	struct sg_json *v = parse("  42");
	if (v) {
		CHECK(v->type == SG_JSON_NUMBER);
		CHECK_POS(v->pos, 1, 3);
		CHECK(v->number.is_integer && v->number.integer == 42);
	}
	sg_json_free(v);
	v = parse("\n\n   -7\n");
	if (v)
		CHECK_POS(v->pos, 3, 4);
	sg_json_free(v);
	v = parse(" \"s\"");
	if (v) {
		CHECK(v->type == SG_JSON_STRING);
		CHECK_POS(v->pos, 1, 2);
	}
	sg_json_free(v);
	v = parse("\ttrue ");
	if (v)
		CHECK_POS(v->pos, 1, 2);
	sg_json_free(v);
	v = parse(" [ ]");
	if (v) {
		CHECK(v->type == SG_JSON_ARRAY && v->array.len == 0);
		CHECK_POS(v->pos, 1, 2);
	}
	sg_json_free(v);
}

TEST(numbers)
{
	_cleanup_json_ struct sg_json *root =
	    parse("[0, -0, 9223372036854775807, -9223372036854775808, 9223372036854775808,"
		  " -9223372036854775809, 123456789012345678901234567890, 1.0, 1e3, 1E3, -2.5,"
		  " 4096]");
	if (!root)
		return;
	struct sg_json **n = root->array.items;
	CHECK(root->array.len == 12);
	for (size_t i = 0; i < root->array.len; i++)
		CHECK(n[i]->type == SG_JSON_NUMBER);
	CHECK(n[0]->number.is_integer && n[0]->number.integer == 0);
	CHECK(n[1]->number.is_integer && n[1]->number.integer == 0);
	CHECK_STR(n[1]->number.text, "-0");
	CHECK(n[2]->number.is_integer && n[2]->number.integer == INT64_MAX);
	CHECK(n[3]->number.is_integer && n[3]->number.integer == INT64_MIN);
	/* huge integers are numbers, but not integers the policy can use */
	CHECK(!n[4]->number.is_integer);
	CHECK_STR(n[4]->number.text, "9223372036854775808");
	CHECK(!n[5]->number.is_integer);
	CHECK(!n[6]->number.is_integer);
	CHECK_STR(n[6]->number.text, "123456789012345678901234567890");
	/* a fraction or an exponent is not an integer, whatever its value */
	CHECK(!n[7]->number.is_integer);
	CHECK_STR(n[7]->number.text, "1.0");
	CHECK(!n[8]->number.is_integer);
	CHECK(!n[9]->number.is_integer);
	CHECK(!n[10]->number.is_integer);
	CHECK(n[11]->number.is_integer && n[11]->number.integer == 4096);
}

TEST(strings_and_lookups)
{
	_cleanup_json_ struct sg_json *root =
	    parse("{\"a\": \"caf\\u00e9\\n\", \"b\": \"\", \"c\": 1, \"d\": \"\\ud83d\\ude00\"}");
	if (!root)
		return;
	const struct sg_json *a = sg_json_get(root, "a");
	CHECK(a && a->type == SG_JSON_STRING);
	CHECK_STR(sg_json_get_string(root, "a"), "caf\xc3\xa9\n");
	CHECK(a && a->string.len == 6);
	CHECK_STR(sg_json_get_string(root, "b"), "");
	CHECK(sg_json_get(root, "b")->string.len == 0);
	CHECK_STR(sg_json_get_string(root, "d"), "\xf0\x9f\x98\x80");
	CHECK(sg_json_get(root, "c") != NULL);
	CHECK(sg_json_get_string(root, "c") == NULL); /* not a string */
	CHECK(sg_json_get(root, "missing") == NULL);
	CHECK(sg_json_get_string(root, "missing") == NULL);
	CHECK(sg_json_get(sg_json_get(root, "c"), "a") == NULL); /* not an object */
	CHECK(sg_json_get(NULL, "a") == NULL);
	CHECK_STR(sg_json_type_name(SG_JSON_NULL), "null");
	CHECK_STR(sg_json_type_name(SG_JSON_BOOL), "boolean");
	CHECK_STR(sg_json_type_name(SG_JSON_NUMBER), "number");
	CHECK_STR(sg_json_type_name(SG_JSON_STRING), "string");
	CHECK_STR(sg_json_type_name(SG_JSON_ARRAY), "array");
	CHECK_STR(sg_json_type_name(SG_JSON_OBJECT), "object");
	CHECK_STR(sg_json_type_name((enum sg_json_type)42), "unknown");
	sg_json_free(NULL);
}

TEST(only_len_bytes_are_read)
{
	/* the text need not be NUL terminated: exactly len bytes, no more */
	static const char text[] = "{\"a\": 1}garbage";
	char *exact = sg_xmalloc(8);
	memcpy(exact, text, 8);
	struct sg_json *root = NULL;
	struct sg_err err = {0};
	CHECK(sg_json_parse(exact, 8, "t.json", &root, &err) == 0);
	CHECK(root && sg_json_get(root, "a") != NULL);
	sg_json_free(root);
	free(exact);

	char *blank = sg_xmalloc(3);
	memcpy(blank, " \n\t", 3);
	CHECK_CONTAINS(rejected_n(blank, 3), "t.json: empty input, expected a JSON value");
	free(blank);
	char *open = sg_xmalloc(6);
	memcpy(open, "[1, 2", 5);
	CHECK_CONTAINS(rejected_n(open, 5),
		       "t.json:1:6: invalid JSON: premature end of input, expected ',' or ']'");
	free(open);
}

TEST(duplicate_keys)
{
	CHECK_STR(rejected("{\"version\":1,\"version\":1}"),
		  "t.json:1:14: duplicate key \"version\"");
	CHECK_STR(
	    rejected("{\n  \"rules\": [\n    {\"name\": \"a\",\n     \"name\": \"b\"}\n  ]\n}"),
	    "t.json:4:6: duplicate key \"name\"");
	/* the same key in different objects is fine */
	_cleanup_json_ struct sg_json *ok = parse("[{\"a\":1},{\"a\":2,\"b\":{\"a\":3}}]");
	CHECK(ok != NULL);
	/* keys are compared after unescaping */
	CHECK_STR(rejected("{\"ab\": 1, \"a\\u0062\": 2}"), "t.json:1:11: duplicate key \"ab\"");
	/* small objects compare their keys, larger ones hash them: around the switch */
	for (int n = 1; n <= 20; n++)
		for (int dup = 0; dup<n; dup += n - 1> 0 ? n - 1 : 1) {
			char text[512], want[64];
			int at = snprintf(text, sizeof(text), "{");
			for (int k = 0; k < n; k++)
				at +=
				    snprintf(text + at, sizeof(text) - (size_t)at, "\"k%d\":1,", k);
			snprintf(text + at, sizeof(text) - (size_t)at, "\"k%d\":2}", dup);
			snprintf(want, sizeof(want), "t.json:1:%d: duplicate key \"k%d\"", at + 1,
				 dup);
			CHECK_STR(rejected(text), want);
			text[at - 1] = '}'; /* the members without the repeat */
			text[at] = '\0';
			_cleanup_json_ struct sg_json *fine = parse(text);
			CHECK(fine && fine->object.len == (size_t)n);
		}
}

TEST(nul_bytes)
{
	static const char raw[] = "{\"a\":\n \"x\0y\"}";
	CHECK_STR(rejected_n(raw, sizeof(raw) - 1), "t.json:2:4: a NUL byte in JSON text");
	CHECK_STR(rejected("{\"a\": [\"ok\", \"x\\u0000y\"]}"),
		  "t.json:1:14: string contains a NUL character");
	CHECK_STR(rejected("{\"ok\": 1,\n \"k\\u0000\": 1}"),
		  "t.json:2:2: key contains a NUL character");
}

TEST(invalid_utf8)
{
	CHECK_CONTAINS(rejected("{\"a\": \"caf\xe9\"}"), "t.json:1:");
	CHECK_STR(rejected("{\"a\": \"caf\xe9\"}"), "t.json:1:7: string is not valid UTF-8");
	CHECK_STR(rejected("{\"a\": \"\xc3\"}"),
		  "t.json:1:7: string is not valid UTF-8"); /* truncated */
	CHECK_STR(rejected("{\"a\": \"\x80\"}"),
		  "t.json:1:7: string is not valid UTF-8"); /* lone continuation */
	CHECK_STR(rejected("{\"caf\xe9\": 1}"), "t.json:1:2: key is not valid UTF-8");
	CHECK_STR(rejected("{\"a\": \"\xff\xfe\"}"),
		  "t.json:1:7: string is not valid UTF-8"); /* never in UTF-8 */
	/* overlong forms, surrogates and code points above U+10FFFF are invalid UTF-8 too */
	CHECK_CONTAINS(rejected("{\"a\": \"\xc0\xaf\"}"), "t.json:1:7: ");
	CHECK_CONTAINS(rejected("{\"a\": \"\xc0\xaf\"}"), "not valid UTF-8");
	CHECK_CONTAINS(rejected("{\"a\": \"\xe0\x80\xaf\"}"), "not valid UTF-8");
	CHECK_CONTAINS(rejected("{\"a\": \"\xed\xa0\x80\"}"), "not valid UTF-8");
	CHECK_CONTAINS(rejected("{\"a\": \"\xf4\x90\x80\x80\"}"), "not valid UTF-8");
	CHECK_CONTAINS(rejected("{\"a\": \"\xf5\x80\x80\x80\"}"), "not valid UTF-8");
	CHECK_CONTAINS(rejected("[\"ok\",\n {\"\xc0\x80\": 1}]"),
		       "t.json:2:3: key is not valid UTF-8");
	/* the largest valid forms are fine */
	_cleanup_json_ struct sg_json *ok =
	    parse("[\"\xdf\xbf\", \"\xef\xbf\xbf\", \"\xf4\x8f\xbf\xbf\", \"\xe0\xa0\x80\"]");
	CHECK(ok != NULL);
}

/* @depth nested arrays around a 1. */
static char *nested(unsigned depth)
{
	char *s = sg_xmalloc(2 * depth + 2);
	memset(s, '[', depth);
	s[depth] = '1';
	memset(s + depth + 1, ']', depth);
	s[2 * depth + 1] = '\0';
	return s;
}

TEST(depth_limit)
{
	_cleanup_free_ char *max = nested(SG_JSON_MAX_DEPTH);
	_cleanup_json_ struct sg_json *root = parse(max);
	CHECK(root != NULL);

	_cleanup_free_ char *deeper = nested(SG_JSON_MAX_DEPTH + 1);
	char want[64];
	snprintf(want, sizeof(want), "t.json:1:%d: nested deeper than %d levels",
		 SG_JSON_MAX_DEPTH + 1, SG_JSON_MAX_DEPTH);
	CHECK_STR(rejected(deeper), want);

	/* objects count as levels too, and deep inputs do not crash the parser */
	_cleanup_free_ char *huge = nested(100000);
	CHECK_CONTAINS(rejected(huge), "nested deeper than");
	CHECK_CONTAINS(
	    rejected("{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":"
		     "{\"a\":{\"a\":{}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}"),
	    "t.json:1:161: nested deeper than 32 levels");
}

TEST(syntax_errors)
{
	CHECK_CONTAINS(rejected("{\"version\": 1} x"), "t.json:1:");
	CHECK_CONTAINS(rejected("{\"version\": 1} x"), "invalid JSON: trailing garbage");
	CHECK_CONTAINS(rejected("{\"version\": 1}\n{\"version\": 1}"),
		       "invalid JSON: trailing garbage");
	CHECK_CONTAINS(rejected("{\"version\": 1,}"), "t.json:1:");
	CHECK_CONTAINS(rejected("{\"version\": 1,}"), "invalid JSON");
	CHECK_CONTAINS(
	    rejected("{\n  // no comments\n  \"version\": 1\n}"),
	    "t.json:2:3: invalid JSON: expected a key (a string in double quotes), found '/' "
	    "(a comment? JSON has none)");
	CHECK_STR(rejected("[1, 2"),
		  "t.json:1:6: invalid JSON: premature end of input, expected ',' or ']'");
	CHECK_STR(rejected("{\n  \"rules\": [\n"),
		  "t.json:3:1: invalid JSON: premature end of input, expected a value");
	CHECK_STR(
	    rejected("[\"abc"),
	    "t.json:1:6: invalid JSON: premature end of input, in a string that has no closing "
	    "quote");
	CHECK_STR(rejected("{\"a\": 1,\n}"),
		  "t.json:1:8: invalid JSON: a comma before '}'; JSON has no trailing commas");
	CHECK_STR(rejected("[1,\n ]"),
		  "t.json:1:3: invalid JSON: a comma before ']'; JSON has no trailing commas");
	CHECK_STR(rejected("{\"a\" 1}"),
		  "t.json:1:6: invalid JSON: expected ':' after the key, found '1'");
	CHECK_STR(rejected("{\"a\": 1 \"b\": 2}"),
		  "t.json:1:9: invalid JSON: expected ',' or '}', found '\"'");
	CHECK_STR(
	    rejected("{1: 2}"),
	    "t.json:1:2: invalid JSON: expected a key (a string in double quotes), found '1'");
	CHECK_STR(rejected("[True]"), "t.json:1:2: invalid JSON: expected a value, found 'True'");
	CHECK_STR(rejected("[nullx]"), "t.json:1:2: invalid JSON: expected a value, found 'nullx'");
	CHECK_STR(rejected("{'a': 1}"),
		  "t.json:1:2: invalid JSON: expected a key (a string in double quotes), found ''' "
		  "(JSON strings take double quotes)");
	CHECK_STR(rejected("[\"a\\qb\"]"),
		  "t.json:1:4: invalid JSON: '\\' followed by 'qb' in a string; JSON escapes are "
		  "\\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX");
	CHECK_STR(rejected("[\"\\u12g4\"]"),
		  "t.json:1:3: invalid JSON: \\u must be followed by four hex digits");
	CHECK_STR(rejected("[\"a\tb\"]"),
		  "t.json:1:4: invalid JSON: control character U+0009 in a string; JSON strings "
		  "write it escaped");
	/* a column after a string of characters longer than a byte */
	CHECK_STR(rejected("[\"\xc3\xa9\xc3\xa9\", x]"),
		  "t.json:1:8: invalid JSON: expected a value, found 'x'");
	CHECK_STR(rejected("[1] ]"),
		  "t.json:1:5: invalid JSON: trailing garbage after the JSON value: ']'");
}

TEST(numbers_as_rfc_8259_writes_them)
{
	static const char *const malformed[] = {"-",   "01", "-01",   "1.",   "1.e3", "1e",
						"1e+", "1x", "1.2.3", "0x10", "-a"};
	for (size_t i = 0; i < SG_ARRAY_SIZE(malformed); i++) {
		char text[32];
		snprintf(text, sizeof(text), "[%s]", malformed[i]);
		CHECK_CONTAINS(rejected(text), "t.json:1:2: invalid JSON: malformed number");
	}
	CHECK_CONTAINS(rejected("[+1]"), "t.json:1:2: invalid JSON: expected a value, found '+1'");
	CHECK_CONTAINS(rejected("[.5]"), "t.json:1:2: invalid JSON: expected a value, found '.5'");
	_cleanup_json_ struct sg_json *n =
	    parse("[0, -0, 10, -1.5e+3, 2E-2, 0.25, 9223372036854775807, -9223372036854775808, "
		  "9223372036854775808]");
	CHECK(n && n->array.len == 9);
	if (n && n->array.len == 9) {
		CHECK(!n->array.items[3]->number.is_integer);
		CHECK_STR(n->array.items[3]->number.text, "-1.5e+3");
		CHECK(n->array.items[6]->number.is_integer &&
		      n->array.items[6]->number.integer == INT64_MAX);
		CHECK(n->array.items[7]->number.is_integer &&
		      n->array.items[7]->number.integer == INT64_MIN);
		CHECK(!n->array.items[8]->number.is_integer);
	}
	CHECK_STR(rejected("[NaN]"), "t.json:1:2: invalid JSON: expected a value, found 'NaN'");
}

TEST(empty_input)
{
	CHECK_STR(rejected(""), "t.json: empty input, expected a JSON value");
	CHECK_STR(rejected(" \n\t\r\n"), "t.json: empty input, expected a JSON value");
	CHECK_STR(rejected_n("", 0), "t.json: empty input, expected a JSON value");
}

TEST(lone_surrogates)
{
	/* a lone surrogate has no UTF-8 form; made a "?", it would be a wildcard nobody wrote */
	CHECK_STR(rejected("[\"kernel.\\ud800x\"]"),
		  "t.json:1:10: \\ud800 is the first half of a UTF-16 surrogate pair without the "
		  "second; write the character itself or its full pair");
	CHECK_CONTAINS(rejected("{\"a\":\n \"\\uD800\\u0041\"}"),
		       "t.json:2:3: \\uD800 is the first half");
	CHECK_CONTAINS(rejected("[\"x\\udc00\"]"), "t.json:1:4: \\udc00 is the second half");
	CHECK_CONTAINS(rejected("{\"\\ud83d\": 1}"), "t.json:1:3: \\ud83d is the first half");
	/* an escaped backslash before "u" is no escape */
	_cleanup_json_ struct sg_json *ok =
	    parse("[\"\\\\ud800\", \"\\ud83d\\ude00\", \"\\uffff\"]");
	CHECK(ok != NULL);
	if (ok) {
		CHECK_STR(ok->array.items[0]->string.text, "\\ud800");
		CHECK_STR(ok->array.items[1]->string.text, "\xf0\x9f\x98\x80");
		CHECK_STR(ok->array.items[2]->string.text, "\xef\xbf\xbf");
	}
}

TEST(only_json_whitespace)
{
	/* some parsers take \v and \f for whitespace; JSON does not */
	CHECK_CONTAINS(rejected("[1,\v2]"), "t.json:1:4: invalid JSON: control character U+000B");
	CHECK_CONTAINS(rejected("{\"a\":\n\f1}"),
		       "t.json:2:1: invalid JSON: control character U+000C");
	/* other control characters are refused where they stand */
	CHECK_CONTAINS(rejected("[\"a\tb\"]"), "t.json:1:");
	CHECK_CONTAINS(rejected("[\"a\tb\"]"), "invalid JSON");
	CHECK_CONTAINS(rejected("[1,\x01 2]"), "invalid JSON");
	CHECK_CONTAINS(rejected("\xef\xbb\xbf{\"version\": 1}"),
		       "t.json:1:1: invalid JSON: a byte order mark (U+FEFF)");
	_cleanup_json_ struct sg_json *ok = parse(" \t\r\n[1,\r\n\t2]\r\n");
	CHECK(ok != NULL);
}

/*
 * The scan takes eight bytes at a time: each refused byte alone at every
 * place of whole words and of the last part of one, then the order of
 * faults: NUL, the byte order mark, \v and \f.
 */
TEST(unwelcome_bytes_anywhere)
{
	static const struct {
		char byte;
		const char *what;
	} refused[] = {{'\0', "a NUL byte in JSON text"},
		       {'\v', "invalid JSON: control character U+000B"},
		       {'\f', "invalid JSON: control character U+000C"}};
	char text[48], want[96];
	const size_t len = 41; /* "[", 38 spaces, "1]": five words and a byte */

	for (size_t k = 0; k < SG_ARRAY_SIZE(refused); k++) {
		for (size_t at = 1; at < len - 2; at++) {
			snprintf(text, sizeof(text), "[%*s1]", 38, "");
			text[at] = refused[k].byte;
			snprintf(want, sizeof(want), "t.json:1:%zu: %s", at + 1, refused[k].what);
			CHECK_CONTAINS(rejected_n(text, len), want);
		}
	}
	snprintf(text, sizeof(text), "[%*s1]", 38, "");
	text[5] = '\f';
	text[30] = '\0'; /* a NUL after it is told first */
	CHECK_CONTAINS(rejected_n(text, len), "t.json:1:31: a NUL byte in JSON text");
	static const char bom_then_vt[] = "\xef\xbb\xbf[1,        \v2]";
	CHECK_CONTAINS(rejected(bom_then_vt), "t.json:1:1: invalid JSON: a byte order mark");
}

/* @n members "k<i>": 1 in one object, or @n numbers in one array when @array. */
static char *wide(size_t n, bool array, const char *last_key)
{
	size_t cap = 32 + n * 24, o = 0;
	char *s = sg_xmalloc(cap);

	s[o++] = array ? '[' : '{';
	for (size_t i = 0; i < n; i++) {
		if (array)
			o += (size_t)snprintf(s + o, cap - o, "%s%zu", i ? ",\n" : "", i);
		else
			o += (size_t)snprintf(s + o, cap - o, "%s\"k%zu\":%zu", i ? ",\n" : "", i,
					      i);
	}
	if (last_key)
		o += (size_t)snprintf(s + o, cap - o, ",\n\"%s\":0", last_key);
	s[o++] = array ? ']' : '}';
	s[o] = '\0';
	return s;
}

/* line:column of byte @offset of @text, counted a byte at a time: the reference. */
static struct sg_pos reference_pos(const char *text, size_t offset)
{
	struct sg_pos pos = {1, 1};
	for (size_t i = 0; i < offset; i++) {
		unsigned char ch = (unsigned char)text[i];
		if (ch == '\n') {
			pos.line++;
			pos.col = 1;
		} else if ((ch & 0xc0) != 0x80) {
			pos.col++;
		}
	}
	return pos;
}

TEST(positions_on_long_lines_of_mixed_text)
{
	/*
	 * Keys after runs of every length of ASCII, "é" and "✓", on one line
	 * and across lines: the cursor takes eight plain bytes at a time, so
	 * every alignment of a newline or a multi-byte character must count.
	 */
	static const char *const pieces[] = {"a", "\xc3\xa9", "\xe2\x9c\x93", " "};
	char text[16384];
	size_t len = 0;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "{");
	for (int i = 0; i < 96; i++) {
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\"k%d\": \"",
					i ? "," : "", i);
		for (int j = 0; j < i % 19; j++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s",
						pieces[(i * 7 + j) % (i % 3 ? 3 : 1)]);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "\"%s",
					i % 5 == 4 ? "\n" : "");
	}
	len += (size_t)snprintf(text + len, sizeof(text) - len, "}");
	CHECK(len < sizeof(text) - 1);

	_cleanup_json_ struct sg_json *root = parse(text);
	if (!root)
		return;
	for (int i = 0; i < 96; i++) {
		char key[16], quoted[20];
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(quoted, sizeof(quoted), "\"%s\"", key);
		const char *at = strstr(text, quoted);
		CHECK(at != NULL);
		if (!at)
			continue;
		struct sg_pos want = reference_pos(text, (size_t)(at - text));
		CHECK_POS(key_pos(root, key), want.line, want.col);
		want = reference_pos(text, (size_t)(at - text) + strlen(quoted) + 2);
		CHECK_POS(sg_json_get(root, key)->pos, want.line, want.col);
	}
}

struct streamed {
	size_t n;
	const void *first_item; /* where item 0 was: later items reuse its memory */
	bool reused;
	char seen[8][64];
};

static void on_item(const struct sg_json *item, size_t index, void *arg)
{
	struct streamed *s = arg;

	CHECK(index == s->n);
	if (index == 0)
		s->first_item = item;
	else if ((const void *)item == s->first_item)
		s->reused = true;
	if (s->n < 8) {
		const char *name = sg_json_get_string(item, "name");
		const struct sg_json *tags = sg_json_get(item, "tags");
		if (name)
			snprintf(s->seen[s->n], sizeof(s->seen[0]), "%s %u:%u %zu", name,
				 item->pos.line, item->pos.col, tags ? tags->array.len : 0);
		else
			snprintf(s->seen[s->n], sizeof(s->seen[0]), "%s %u:%u",
				 sg_json_type_name(item->type), item->pos.line, item->pos.col);
	}
	s->n++;
}

TEST(streamed_arrays)
{
	struct streamed s = {0};
	const struct sg_json_stream stream = {"rules", on_item, &s};
	struct sg_err err = {0};
	struct sg_json *root = NULL;
	/* short words repeat across items: interned once, they outlive each item's memory */
	const char *text = "{\"version\": 1, \"rules\": [\n"
			   " {\"name\": \"read\", \"tags\": [\"read\", \"none\"]},\n"
			   " {\"name\": \"none\", \"tags\": []},\n"
			   " 7, [\"read\"], {\"name\": \"a-name-too-long-to-intern\"}],\n"
			   " \"after\": {\"rules\": [1, 2]}}";

	CHECK(sg_json_parse_stream(text, strlen(text), "t.json", &stream, &root, &err) == 0);
	if (!root)
		return;
	CHECK(s.n == 5);
	CHECK_STR(s.seen[0], "read 2:2 2");
	CHECK_STR(s.seen[1], "none 3:2 0");
	CHECK_STR(s.seen[2], "number 4:2");
	CHECK_STR(s.seen[3], "array 4:5");
	CHECK_STR(s.seen[4], "a-name-too-long-to-intern 4:15 0");
	CHECK(s.reused);
	/* the streamed array stays, empty; only the root object's member is streamed */
	const struct sg_json *rules = sg_json_get(root, "rules");
	CHECK(rules && rules->type == SG_JSON_ARRAY && rules->array.len == 0);
	if (rules)
		CHECK_POS(rules->pos, 1, 25);
	const struct sg_json *inner = sg_json_get(sg_json_get(root, "after"), "rules");
	CHECK(inner && inner->array.len == 2);
	sg_json_free(root);

	/* a top-level array is not streamed, nor is a "rules" that is not an array */
	s = (struct streamed){0};
	CHECK(sg_json_parse_stream("[{\"rules\": [1]}]", 16, "t.json", &stream, &root, &err) == 0);
	CHECK(s.n == 0 && root && root->array.len == 1);
	sg_json_free(root);
	CHECK(sg_json_parse_stream("{\"rules\": {\"a\": 1}}", 19, "t.json", &stream, &root, &err) ==
	      0);
	CHECK(s.n == 0 && root && sg_json_get(root, "rules")->object.len == 1);
	sg_json_free(root);
}

/* Whether @a and @b say the same: types, positions, texts, numbers, keys and items. */
static bool same_tree(const struct sg_json *a, const struct sg_json *b)
{
	if (a->type != b->type || a->pos.line != b->pos.line || a->pos.col != b->pos.col)
		return false;
	switch (a->type) {
	case SG_JSON_BOOL:
		return a->boolean == b->boolean;
	case SG_JSON_NUMBER:
		return strcmp(a->number.text, b->number.text) == 0 &&
		       a->number.is_integer == b->number.is_integer &&
		       (!a->number.is_integer || a->number.integer == b->number.integer);
	case SG_JSON_STRING:
		return a->string.len == b->string.len &&
		       memcmp(a->string.text, b->string.text, a->string.len + 1) == 0;
	case SG_JSON_ARRAY:
		if (a->array.len != b->array.len)
			return false;
		for (size_t i = 0; i < a->array.len; i++)
			if (!same_tree(a->array.items[i], b->array.items[i]))
				return false;
		return true;
	case SG_JSON_OBJECT:
		if (a->object.len != b->object.len)
			return false;
		for (size_t i = 0; i < a->object.len; i++)
			if (strcmp(a->object.keys[i], b->object.keys[i]) != 0 ||
			    a->object.key_pos[i].line != b->object.key_pos[i].line ||
			    a->object.key_pos[i].col != b->object.key_pos[i].col ||
			    !same_tree(a->object.values[i], b->object.values[i]))
				return false;
		return true;
	default:
		return true;
	}
}

struct compared {
	const struct sg_json *whole; /* the whole tree's array */
	size_t n, differ;
};

static void compare_item(const struct sg_json *item, size_t index, void *arg)
{
	struct compared *c = arg;
	if (!c->whole || index >= c->whole->array.len ||
	    !same_tree(item, c->whole->array.items[index])) {
		fprintf(stderr, "  item %zu differs from the whole tree's\n", index);
		c->differ++;
	}
	c->n++;
}

/*
 * The streamed array's items, of every shape (one line or several, escapes,
 * UTF-8, fractions, exponents, literals, empty and nested containers), are
 * the very values the whole tree has, positions and all.
 */
TEST(streamed_items_are_the_whole_trees)
{
	const char *text =
	    "{\"version\": 1, \"rules\": [\n"
	    "  {\"name\": \"net.core.somaxconn\", \"access\": \"read-write\", \"range\": [128, "
	    "4096]},\n"
	    "  {\"name\":\"a\",\"range\":[[-1, 0], [-0, 9223372036854775807]]},\t{\"values\": "
	    "[\"0\", \"10\"]},\n"
	    "  {\"n\": \"\\u0041\"}, {\"n\": \"\xc3\xa9\", \"m\": 1}, {\"n\": 1.5}, {\"n\": 1e3},\n"
	    "  {\"n\": -9223372036854775808}, {\"n\": 9223372036854775808}, {\"n\": true},\n"
	    "  {\"n\": []}, {}, {\"n\": {\"deeper\": 1}}, {\"n\": [[[1]]]}, {\"n\": [[1]]},\n"
	    "  {\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4, \"e\": 5, \"f\": 6, \"g\": 7, \"h\": 8, "
	    "\"i\": 9},\n"
	    "  {\"name\": \"spans\",\n   \"lines\": 2}, {\"long\": \"a string longer than "
	    "fifteen\"}\n"
	    "]}";
	struct sg_err err = {0};
	struct sg_json *whole = NULL, *streamed_root = NULL;

	CHECK(sg_json_parse(text, strlen(text), "t.json", &whole, &err) == 0);
	if (!whole)
		return;
	struct compared c = {.whole = sg_json_get(whole, "rules")};
	const struct sg_json_stream stream = {"rules", compare_item, &c};
	CHECK(sg_json_parse_stream(text, strlen(text), "t.json", &stream, &streamed_root, &err) ==
	      0);
	CHECK(c.n == 18 && c.n == c.whole->array.len && c.differ == 0);
	sg_json_free(streamed_root);
	sg_json_free(whole);

	/* a duplicate key, a trailing comma: the same message streamed or not */
	const char *bad[] = {"{\"rules\": [{\"a\": 1, \"a\": 2}]}", "{\"rules\": [{\"a\": 1,}]}",
			     "{\"rules\": [{\"a\": [1,]}]}", "{\"rules\": [{\"a\": 01}]}"};
	for (size_t i = 0; i < SG_ARRAY_SIZE(bad); i++) {
		struct sg_err whole_err = {0}, stream_err = {0};
		struct compared none = {.whole = NULL};
		const struct sg_json_stream count = {"rules", compare_item, &none};
		CHECK(sg_json_parse(bad[i], strlen(bad[i]), "t.json", &whole, &whole_err) < 0);
		CHECK(sg_json_parse_stream(bad[i], strlen(bad[i]), "t.json", &count, &streamed_root,
					   &stream_err) < 0);
		CHECK_STR(stream_err.msg, whole_err.msg);
		CHECK(none.n == 0);
	}
}

TEST(streamed_items_with_large_arrays)
{
	/* an item's array larger than a quarter block has a block of its own, freed with the item
	 */
	struct streamed s = {0};
	const struct sg_json_stream stream = {"rules", on_item, &s};
	struct sg_err err = {0};
	struct sg_json *root = NULL;
	const size_t per_item = 40000, items = 3;
	size_t cap = items * (per_item * 2 + 64) + 64, len = 0;
	_cleanup_free_ char *text = malloc(cap);

	if (!text)
		return;
	len += (size_t)snprintf(text + len, cap - len, "{\"rules\": [");
	for (size_t i = 0; i < items; i++) {
		len += (size_t)snprintf(text + len, cap - len, "%s{\"name\": \"n%zu\", \"tags\": [",
					i ? "," : "", i);
		for (size_t k = 0; k < per_item; k++)
			len += (size_t)snprintf(text + len, cap - len, "%s1", k ? "," : "");
		len += (size_t)snprintf(text + len, cap - len, "]}");
	}
	len += (size_t)snprintf(text + len, cap - len, "]}");
	CHECK(sg_json_parse_stream(text, len, "t.json", &stream, &root, &err) == 0);
	CHECK(s.n == items);
	char want[64];
	snprintf(want, sizeof(want), "n2 1:%zu %zu",
		 (size_t)(strstr(text, "{\"name\": \"n2\"") - text) + 1, per_item);
	CHECK_STR(s.seen[2], want);
	sg_json_free(root);
}

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

TEST(large_inputs_stay_linear)
{
	/* a few MiB, as a policy may be: positions, members and keys cost O(n) in all */
	const size_t n = 200000;
	_cleanup_free_ char *array = wide(n, true, NULL);
	_cleanup_free_ char *object = wide(n, false, NULL);
	_cleanup_free_ char *dup = wide(n, false, "k123");
	double t0 = seconds();

	_cleanup_json_ struct sg_json *a = parse(array);
	_cleanup_json_ struct sg_json *o = parse(object);
	CHECK(a && a->array.len == n);
	CHECK(o && o->object.len == n);
	if (a && a->array.len == n) {
		CHECK_POS(a->array.items[n - 1]->pos, n, 1);
		CHECK(a->array.items[n - 1]->number.integer == (int64_t)(n - 1));
	}
	if (o && o->object.len == n) {
		CHECK_POS(o->object.key_pos[n - 1], n, 1);
		CHECK(sg_json_get(o, "k199999") == o->object.values[n - 1]);
		CHECK(sg_json_get(o, "k0") == o->object.values[0]);
	}
	char want[64];
	snprintf(want, sizeof(want), "t.json:%zu:1: duplicate key \"k123\"", n + 1);
	CHECK_STR(rejected(dup), want);
	/* Informational only: speed is measured in test/bench, never asserted here. */
	fprintf(stderr, "  took %.2f s\n", seconds() - t0);
}

TEST(quoting_for_messages)
{
	char out[80];

	sg_json_quote("net.core", 8, out, sizeof(out));
	CHECK_STR(out, "\"net.core\"");
	sg_json_quote("a\"b\\c\nd\te\x01", 10, out, sizeof(out));
	CHECK_STR(out, "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
	sg_json_quote("", 0, out, sizeof(out));
	CHECK_STR(out, "\"\"");
	/* cut with "..." to fit, never inside a UTF-8 character */
	sg_json_quote("abcdefghijkl", 12, out, 12);
	CHECK_STR(out, "\"abcdef...\"");
	CHECK(strlen(out) < 12);
	sg_json_quote("abc\xc3\xa9\xc3\xa9xyz", 10, out, 12);
	CHECK_STR(out, "\"abc\xc3\xa9...\"");
	sg_json_quote("abcdefgh", 8, out, 11);
	CHECK_STR(out, "\"abcdefgh\"");
	/* the duplicate key message quotes the key */
	CHECK_STR(rejected("{\"a\\nb\": 1, \"a\\nb\": 2}"), "t.json:1:13: duplicate key \"a\\nb\"");
}

RUN_TESTS(T(positions_of_values_and_keys), T(positions_count_characters_and_skip_escapes),
	  T(positions_of_top_level_scalars), T(numbers), T(strings_and_lookups),
	  T(only_len_bytes_are_read), T(duplicate_keys), T(nul_bytes), T(invalid_utf8),
	  T(depth_limit), T(syntax_errors), T(numbers_as_rfc_8259_writes_them), T(empty_input),
	  T(lone_surrogates), T(only_json_whitespace), T(unwelcome_bytes_anywhere),
	  T(positions_on_long_lines_of_mixed_text), T(streamed_arrays),
	  T(streamed_items_are_the_whole_trees), T(streamed_items_with_large_arrays),
	  T(large_inputs_stay_linear), T(quoting_for_messages))
