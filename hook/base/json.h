/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON parser: a small JSON tree whose every value and key
 * remembers its line:column, so messages can point into the input. Strict:
 * duplicate keys, NUL bytes, invalid UTF-8, nesting deeper than
 * SG_JSON_MAX_DEPTH and inputs longer than the caller's limit are rejected.
 */
#ifndef SG_JSON_H
#define SG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define SG_JSON_MAX_DEPTH 32

/* Where in a text something is, for messages. */
struct sg_pos {
	unsigned line, col; /* 1-based; 0 when unknown */
};

enum sg_json_type {
	SG_JSON_NULL,
	SG_JSON_BOOL,
	SG_JSON_NUMBER,
	SG_JSON_STRING,
	SG_JSON_ARRAY,
	SG_JSON_OBJECT,
};

struct sg_json {
	enum sg_json_type type;
	struct sg_pos pos; /* where the value starts */
	union {
		bool boolean;
		struct {
			char *text;	 /* as written */
			bool is_integer; /* written without fraction or exponent, fits int64 */
			int64_t integer;
		} number;
		struct {
			char *text; /* NUL terminated, valid UTF-8, no NUL inside */
			size_t len;
		} string;
		struct {
			struct sg_json **items;
			size_t len;
		} array;
		struct {
			char **keys;
			struct sg_pos *key_pos;
			struct sg_json **values;
			size_t len;
		} object;
	};
};

/*
 * Parses @len bytes. Syntax errors read "ORIGIN:LINE:COL: what is wrong".
 * Returns 0 and a tree to free with sg_json_free, or -EINVAL and @err.
 */
int sg_json_parse(const char *text, size_t len, const char *origin, struct sg_json **out,
		  struct sg_err *err);

/*
 * An array handed out item by item as it is parsed: the items of the array
 * at member @key of the top-level object go to @item, each once it is
 * complete, and are freed when @item returns; the tree keeps that array
 * empty. A policy's rules are most of it, and their tree was four times the
 * size of its text.
 */
struct sg_json_stream {
	const char *key;
	void (*item)(const struct sg_json *item, size_t index, void *arg);
	void *arg;
};

/* sg_json_parse, with the array @stream names streamed (NULL: none). */
int sg_json_parse_stream(const char *text, size_t len, const char *origin,
			 const struct sg_json_stream *stream, struct sg_json **out,
			 struct sg_err *err);

/* Frees a whole tree: @root must be what sg_json_parse returned, not a value inside it. */
void sg_json_free(struct sg_json *root);

static inline void sg_json_freep(struct sg_json **root)
{
	sg_json_free(*root);
}
#define _cleanup_json_ __attribute__((cleanup(sg_json_freep)))

/* The member @key of an object, or NULL (also when @object is not an object). */
const struct sg_json *sg_json_get(const struct sg_json *object, const char *key);

/* The string member @key, or NULL when absent or not a string. */
const char *sg_json_get_string(const struct sg_json *object, const char *key);

const char *sg_json_type_name(enum sg_json_type type);

/*
 * @len bytes of @s as a JSON string literal for messages: quotes, backslashes
 * and control characters escaped, cut with "..." (never inside a UTF-8
 * character) to fit @cap bytes with the NUL. @cap should be at least 8.
 */
void sg_json_quote(const char *s, size_t len, char *out, size_t cap);

/* Whether @len bytes of @s are UTF-8, as a JSON string must be (no overlong forms, no surrogates).
 */
bool sg_utf8_valid(const char *s, size_t len);

/* Length of the UTF-8 character at @s, of at most @avail bytes, by the same rules; 0 if invalid. */
size_t sg_utf8_char_len(const char *s, size_t avail);

#endif
