// SPDX-License-Identifier: Apache-2.0
/*
 * The JSON tree (hook/base/json.h). Besides memory safety, checks what json.h
 * promises of every tree it returns: nesting within SG_JSON_MAX_DEPTH,
 * strings NUL-free valid UTF-8 with the right length, unique keys found by
 * sg_json_get, positions inside the input, integers that match their text.
 * And that streaming the root object's "rules" (sg_json_parse_stream) hands
 * out, in order, the very items the whole tree has, and fails alike.
 *
 * yajl is the oracle of syntax: what the parser accepts, yajl's tree parser
 * accepts too, with the same values, keys and numbers' text; and what yajl
 * accepts, the parser refuses only for a fault it is stricter about (yajl
 * takes duplicate keys, lone surrogates, overlong UTF-8, \v and \f, comments
 * in its tree parser, and a value followed by a string that never closes).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const struct sg_json *v, const char *what)
{
	fprintf(stderr, "fuzz_json: value at %u:%u: %s\n", v->pos.line, v->pos.col, what);
	abort();
}

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

static void check_string(const struct sg_json *v, const char *s, size_t len)
{
	if (!s || strlen(s) != len)
		fail(v, "string length differs from its text (a NUL inside?)");
	if (!valid_utf8((const unsigned char *)s, len))
		fail(v, "string is not valid UTF-8");
}

struct walk {
	unsigned max_line; /* lines in the input */
	size_t values;
};

static void check(const struct sg_json *v, unsigned depth, struct walk *w)
{
	w->values++;
	if (v->pos.line < 1 || v->pos.col < 1 || v->pos.line > w->max_line)
		fail(v, "position outside the input");
	if (strcmp(sg_json_type_name(v->type), "unknown") == 0)
		fail(v, "unknown type");

	switch (v->type) {
	case SG_JSON_NUMBER:
		if (!v->number.text || !v->number.text[0])
			fail(v, "number without text");
		if (v->number.is_integer) {
			char *end;
			errno = 0;
			long long n = strtoll(v->number.text, &end, 10);
			if (errno || *end || n != v->number.integer)
				fail(v, "integer differs from its text");
		}
		break;
	case SG_JSON_STRING:
		check_string(v, v->string.text, v->string.len);
		break;
	case SG_JSON_ARRAY:
	case SG_JSON_OBJECT:
		if (depth > SG_JSON_MAX_DEPTH)
			fail(v, "nested deeper than SG_JSON_MAX_DEPTH");
		if (v->type == SG_JSON_ARRAY) {
			for (size_t i = 0; i < v->array.len; i++)
				check(v->array.items[i], depth + 1, w);
			break;
		}
		for (size_t i = 0; i < v->object.len; i++) {
			const char *key = v->object.keys[i];
			check_string(v, key, strlen(key));
			if (sg_json_get(v, key) != v->object.values[i])
				fail(v, "duplicate key, or sg_json_get finds another member");
			const char *s = sg_json_get_string(v, key);
			if ((s != NULL) != (v->object.values[i]->type == SG_JSON_STRING))
				fail(v, "sg_json_get_string disagrees with the member's type");
			if (v->object.key_pos[i].line < 1 || v->object.key_pos[i].col < 1)
				fail(v, "key without position");
			check(v->object.values[i], depth + 1, w);
		}
		break;
	default:
		break;
	}
}

static uint64_t mix(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Everything a value says: type, position, text, members, items. */
static uint64_t fingerprint(const struct sg_json *v, uint64_t h)
{
	h = mix(h, &v->type, sizeof(v->type));
	h = mix(h, &v->pos, sizeof(v->pos));
	switch (v->type) {
	case SG_JSON_BOOL:
		return mix(h, &v->boolean, sizeof(v->boolean));
	case SG_JSON_NUMBER:
		h = mix(h, &v->number.is_integer, sizeof(v->number.is_integer));
		if (v->number.is_integer)
			h = mix(h, &v->number.integer, sizeof(v->number.integer));
		return mix(h, v->number.text, strlen(v->number.text));
	case SG_JSON_STRING:
		return mix(h, v->string.text, v->string.len);
	case SG_JSON_ARRAY:
		for (size_t i = 0; i < v->array.len; i++)
			h = fingerprint(v->array.items[i], h);
		return mix(h, &v->array.len, sizeof(v->array.len));
	case SG_JSON_OBJECT:
		for (size_t i = 0; i < v->object.len; i++) {
			h = mix(h, v->object.keys[i], strlen(v->object.keys[i]) + 1);
			h = mix(h, &v->object.key_pos[i], sizeof(v->object.key_pos[i]));
			h = fingerprint(v->object.values[i], h);
		}
		return h;
	default:
		return h;
	}
}

struct streamed {
	uint64_t *prints;
	size_t n, cap;
};

static void on_item(const struct sg_json *item, size_t index, void *arg)
{
	struct streamed *s = arg;
	if (index != s->n)
		abort();
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->prints = realloc(s->prints, s->cap * sizeof(*s->prints));
		if (!s->prints)
			abort();
	}
	s->prints[s->n++] = fingerprint(item, 0xcbf29ce484222325ull);
}

/* The streamed parse of the input that gave @root (NULL: rejected, with @whole_err). */
static void check_streamed(const uint8_t *data, size_t size, const struct sg_json *root,
			   const struct sg_err *whole_err)
{
	struct streamed s = {0};
	const struct sg_json_stream stream = {"rules", on_item, &s};
	struct sg_json *stream_root = NULL;
	struct sg_err err = {0};

	int r = sg_json_parse_stream((const char *)data, size, "fuzz.json", &stream, &stream_root,
				     &err);
	if ((r == 0) != (root != NULL) || strcmp(err.msg, whole_err->msg) != 0) {
		fprintf(stderr, "fuzz_json: streaming says \"%s\", the whole tree \"%s\"\n",
			err.msg, whole_err->msg);
		abort();
	}
	if (!root) { /* items before the error may have been handed out: nothing to compare */
		free(s.prints);
		return;
	}
	const struct sg_json *rules =
	    root->type == SG_JSON_OBJECT ? sg_json_get(root, "rules") : NULL;
	size_t want = rules && rules->type == SG_JSON_ARRAY ? rules->array.len : 0;
	if (s.n != want)
		fail(root, "streaming handed out another number of items");
	for (size_t i = 0; i < want; i++)
		if (s.prints[i] != fingerprint(rules->array.items[i], 0xcbf29ce484222325ull))
			fail(rules->array.items[i], "a streamed item differs from the tree's");
	if (want && sg_json_get(stream_root, "rules")->array.len != 0)
		fail(stream_root, "the streamed array is not empty in the tree");
	sg_json_free(stream_root);
	free(s.prints);
}

/* Whether yajl's tree @y says what @v says. */
static bool same_as_yajl(const struct sg_json *v, const yajl_val y)
{
	switch (v->type) {
	case SG_JSON_NULL:
		return YAJL_IS_NULL(y);
	case SG_JSON_BOOL:
		return v->boolean ? YAJL_IS_TRUE(y) : YAJL_IS_FALSE(y);
	case SG_JSON_NUMBER:
		return YAJL_IS_NUMBER(y) && strcmp(v->number.text, YAJL_GET_NUMBER(y)) == 0;
	case SG_JSON_STRING:
		return YAJL_IS_STRING(y) && strlen(YAJL_GET_STRING(y)) == v->string.len &&
		       memcmp(v->string.text, YAJL_GET_STRING(y), v->string.len) == 0;
	case SG_JSON_ARRAY:
		if (!YAJL_IS_ARRAY(y) || y->u.array.len != v->array.len)
			return false;
		for (size_t i = 0; i < v->array.len; i++)
			if (!same_as_yajl(v->array.items[i], y->u.array.values[i]))
				return false;
		return true;
	case SG_JSON_OBJECT:
		if (!YAJL_IS_OBJECT(y) || y->u.object.len != v->object.len)
			return false;
		for (size_t i = 0; i < v->object.len; i++)
			if (strcmp(v->object.keys[i], y->u.object.keys[i]) != 0 ||
			    !same_as_yajl(v->object.values[i], y->u.object.values[i]))
				return false;
		return true;
	default:
		return false;
	}
}

/* The faults the parser refuses and yajl lets through. */
static bool stricter_than_yajl(const char *msg)
{
	static const char *const faults[] = {
	    "duplicate key",   "nested deeper than",
	    "not valid UTF-8", "surrogate pair",
	    "U+000B",	       "U+000C",
	    "byte order mark", "NUL",
	    "comment",	       "trailing garbage",
	};
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (strstr(msg, faults[i]))
			return true;
	return false;
}

/* Our verdict on the input (the tree @root, or NULL and @err) against yajl's. */
static void check_against_yajl(const uint8_t *data, size_t size, const struct sg_json *root,
			       const struct sg_err *err)
{
	char why[256];

	if (memchr(data, '\0', size)) /* yajl's tree parser reads a C string */
		return;
	char *text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	yajl_val y = yajl_tree_parse(text, why, sizeof(why));
	if (root && !y) {
		fprintf(stderr, "fuzz_json: accepted what yajl refuses: %s\n", why);
		abort();
	}
	if (!root && y && !stricter_than_yajl(err->msg)) {
		fprintf(stderr, "fuzz_json: refused what yajl accepts: %s\n", err->msg);
		abort();
	}
	if (root && !same_as_yajl(root, y))
		fail(root, "the tree differs from yajl's");
	yajl_tree_free(y);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sg_json *root = NULL;
	struct sg_err err = {0};

	int r = sg_json_parse((const char *)data, size, "fuzz.json", &root, &err);
	check_streamed(data, size, r == 0 ? root : NULL, &err);
	check_against_yajl(data, size, r == 0 ? root : NULL, &err);
	if (r < 0) {
		if (root || r != -EINVAL || !err.msg[0] || strncmp(err.msg, "fuzz.json", 9) != 0) {
			fprintf(stderr, "fuzz_json: bad failure: %d \"%s\"\n", r, err.msg);
			abort();
		}
		return 0;
	}
	struct walk w = {.max_line = 1};
	for (size_t i = 0; i < size; i++)
		w.max_line += data[i] == '\n';
	check(root, 1, &w);
	/* Lookups on non-objects and absent keys are NULL, never a crash. */
	if (sg_json_get(NULL, "x") || sg_json_get(root, "\x01"
							"absent"))
		fail(root, "sg_json_get found what is not there");
	sg_json_free(root);
	return 0;
}
