// SPDX-License-Identifier: Apache-2.0
/*
 * A JSON tree with positions, built from yajl's event parser: yajl reports
 * how far it has read when it calls back, and the token's start is found from
 * there, so every value and key knows its line:column.
 */
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "util.h"

struct builder {
	const char *text;
	size_t len;
	const char *origin;
	yajl_handle yajl;
	struct sg_json *root;
	struct sg_json *stack[SG_JSON_MAX_DEPTH + 1]; /* open arrays and objects */
	unsigned depth;
	char *pending_key; /* the key whose value comes next */
	struct sg_pos pending_key_pos;
	struct sg_err *err; /* set when a callback cancels the parse */
	bool completing;    /* in yajl_complete_parse: yajl counts bytes of its own buffer */
};

static struct sg_pos position_of(const char *text, size_t offset)
{
	struct sg_pos pos = {1, 1};
	for (size_t i = 0; i < offset; i++) {
		if (text[i] == '\n') {
			pos.line++;
			pos.col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			pos.col++; /* columns count characters, not UTF-8 continuation bytes */
		}
	}
	return pos;
}

static size_t consumed(const struct builder *b)
{
	/*
	 * yajl_complete_parse() finishes by parsing a one-byte buffer of its own,
	 * and then reports bytes consumed of that: everything of ours was read.
	 */
	if (b->completing)
		return b->len;
	size_t n = yajl_get_bytes_consumed(b->yajl);
	return n > b->len ? b->len : n;
}

/* Start of the string token that ends just before @end (its closing quote is at end - 1). */
static size_t string_start(const char *text, size_t end)
{
	size_t i = end >= 2 ? end - 2 : 0;
	for (; i > 0; i--) {
		if (text[i] != '"')
			continue;
		size_t backslashes = 0;
		while (i > backslashes && text[i - 1 - backslashes] == '\\')
			backslashes++;
		if (backslashes % 2 == 0)
			return i;
	}
	return 0;
}

static size_t scalar_start(const char *text, size_t end)
{
	size_t i = end;
	while (i > 0 && strchr("0123456789+-.eEtruefalsn", text[i - 1]) && text[i - 1])
		i--;
	return i;
}

static struct sg_pos token_pos(const struct builder *b, enum sg_json_type type)
{
	size_t end = consumed(b), start;
	if (type == SG_JSON_STRING)
		start = string_start(b->text, end);
	else if (type == SG_JSON_OBJECT || type == SG_JSON_ARRAY)
		start = end ? end - 1 : 0;
	else
		start = scalar_start(b->text, end);
	return position_of(b->text, start);
}

static int fail(struct builder *b, struct sg_pos pos, const char *fmt, const char *arg)
{
	char what[256];
	snprintf(what, sizeof(what), fmt, arg);
	sg_input_error(b->err, "%s:%u:%u: %s", b->origin, pos.line, pos.col, what);
	return 0; /* cancels the parse */
}

/* Attaches a new value to the open container (or makes it the root). */
static int add_value(struct builder *b, struct sg_json *v)
{
	struct sg_json *parent = b->depth ? b->stack[b->depth - 1] : NULL;

	if (!parent) {
		b->root = v;
		return 1;
	}
	if (parent->type == SG_JSON_ARRAY) {
		size_t n = parent->array.len;
		parent->array.items = sg_xrealloc(parent->array.items, n + 1, sizeof(v));
		parent->array.items[n] = v;
		parent->array.len++;
		return 1;
	}
	size_t n = parent->object.len;
	parent->object.keys = sg_xrealloc(parent->object.keys, n + 1, sizeof(char *));
	parent->object.key_pos = sg_xrealloc(parent->object.key_pos, n + 1, sizeof(struct sg_pos));
	parent->object.values = sg_xrealloc(parent->object.values, n + 1, sizeof(v));
	parent->object.keys[n] = SG_TAKE(b->pending_key);
	parent->object.key_pos[n] = b->pending_key_pos;
	parent->object.values[n] = v;
	parent->object.len++;
	return 1;
}

static struct sg_json *new_value(struct builder *b, enum sg_json_type type)
{
	struct sg_json *v = sg_xcalloc(1, sizeof(*v));
	v->type = type;
	v->pos = token_pos(b, type);
	return v;
}

static int on_null(void *ctx)
{
	struct builder *b = ctx;
	return add_value(b, new_value(b, SG_JSON_NULL));
}

static int on_boolean(void *ctx, int value)
{
	struct builder *b = ctx;
	struct sg_json *v = new_value(b, SG_JSON_BOOL);
	v->boolean = value != 0;
	return add_value(b, v);
}

static bool integer_literal(const char *s, size_t len)
{
	size_t i = s[0] == '-' ? 1 : 0;
	if (i == len)
		return false;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct builder *b = ctx;
	struct sg_json *v = new_value(b, SG_JSON_NUMBER);

	v->number.text = sg_xstrndup(s, len);
	if (integer_literal(s, len)) {
		errno = 0;
		long long n = strtoll(v->number.text, NULL, 10);
		v->number.is_integer = errno != ERANGE;
		v->number.integer = n;
	}
	return add_value(b, v);
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;
	if (memchr(s, '\0', len))
		return fail(b, token_pos(b, SG_JSON_STRING), "%sstring contains a NUL character",
			    "");
	struct sg_json *v = new_value(b, SG_JSON_STRING);
	v->string.text = sg_xstrndup((const char *)s, len);
	v->string.len = len;
	return add_value(b, v);
}

static int open_container(struct builder *b, enum sg_json_type type)
{
	struct sg_json *v = new_value(b, type);
	struct sg_pos pos = v->pos;

	if (b->depth >= SG_JSON_MAX_DEPTH) {
		sg_json_free(v);
		char limit[16];
		snprintf(limit, sizeof(limit), "%d", SG_JSON_MAX_DEPTH);
		return fail(b, pos, "nested deeper than %s levels", limit);
	}
	add_value(b, v);
	b->stack[b->depth++] = v;
	return 1;
}

static int on_start_map(void *ctx)
{
	return open_container(ctx, SG_JSON_OBJECT);
}

static int on_start_array(void *ctx)
{
	return open_container(ctx, SG_JSON_ARRAY);
}

static int on_end(void *ctx)
{
	struct builder *b = ctx;
	if (b->depth)
		b->depth--;
	return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;
	const struct sg_json *object = b->stack[b->depth - 1];
	struct sg_pos pos = token_pos(b, SG_JSON_STRING);
	_cleanup_free_ char *key = sg_xstrndup((const char *)s, len);

	if (memchr(s, '\0', len))
		return fail(b, pos, "%skey contains a NUL character", "");
	for (size_t i = 0; i < object->object.len; i++)
		if (strcmp(object->object.keys[i], key) == 0)
			return fail(b, pos, "duplicate key \"%s\"", key);
	free(b->pending_key);
	b->pending_key = SG_TAKE(key);
	b->pending_key_pos = pos;
	return 1;
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_boolean,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_map_key,
	.yajl_end_map = on_end,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end,
};

/* yajl's message without its "parse error: " prefix and its drawing of the input. */
static void syntax_error(struct builder *b, struct sg_err *err)
{
	unsigned char *msg = yajl_get_error(b->yajl, 0, (const unsigned char *)b->text, b->len);
	const char *what = msg ? (const char *)msg : "invalid JSON";
	if (strncmp(what, "parse error: ", 13) == 0)
		what += 13;
	char clean[256];
	snprintf(clean, sizeof(clean), "%s", what);
	clean[strcspn(clean, "\n")] = '\0';
	struct sg_pos pos = position_of(b->text, consumed(b));
	sg_input_error(err, "%s:%u:%u: invalid JSON: %s", b->origin, pos.line, pos.col, clean);
	if (msg)
		yajl_free_error(b->yajl, msg);
}

/* Only JSON whitespace (@text need not be NUL terminated). */
static bool blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", text[i]) || !text[i])
			return false;
	return true;
}

int sg_json_parse(const char *text, size_t len, const char *origin, struct sg_json **out,
		  struct sg_err *err)
{
	struct builder b = {.text = text, .len = len, .origin = origin, .err = err};
	const char *nul = memchr(text, '\0', len);
	int ret = 0;

	*out = NULL;
	if (nul) {
		struct sg_pos pos = position_of(text, (size_t)(nul - text));
		return sg_input_error(err, "%s:%u:%u: a NUL byte in JSON text", origin, pos.line,
				      pos.col);
	}
	b.yajl = yajl_alloc(&callbacks, NULL, &b);
	if (!b.yajl)
		return sg_input_error(err, "%s: out of memory", origin);

	yajl_status st = yajl_parse(b.yajl, (const unsigned char *)text, len);
	if (st == yajl_status_ok) {
		b.completing = true;
		st = yajl_complete_parse(b.yajl);
	}
	if (st == yajl_status_client_canceled) {
		ret = -EINVAL; /* the callback said why */
	} else if (st != yajl_status_ok && !b.root && blank(text, len)) {
		ret = sg_input_error(err, "%s: empty input, expected a JSON value", origin);
	} else if (st != yajl_status_ok) {
		syntax_error(&b, err);
		ret = -EINVAL;
	} else if (!b.root) {
		ret = sg_input_error(err, "%s: empty input, expected a JSON value", origin);
	}
	yajl_free(b.yajl);
	free(b.pending_key);
	if (ret < 0) {
		sg_json_free(b.root);
		return ret;
	}
	*out = b.root;
	return 0;
}

void sg_json_free(struct sg_json *v)
{
	if (!v)
		return;
	switch (v->type) {
	case SG_JSON_NUMBER:
		free(v->number.text);
		break;
	case SG_JSON_STRING:
		free(v->string.text);
		break;
	case SG_JSON_ARRAY:
		for (size_t i = 0; i < v->array.len; i++)
			sg_json_free(v->array.items[i]);
		free(v->array.items);
		break;
	case SG_JSON_OBJECT:
		for (size_t i = 0; i < v->object.len; i++) {
			free(v->object.keys[i]);
			sg_json_free(v->object.values[i]);
		}
		free(v->object.keys);
		free(v->object.key_pos);
		free(v->object.values);
		break;
	default:
		break;
	}
	free(v);
}

const struct sg_json *sg_json_get(const struct sg_json *object, const char *key)
{
	if (!object || object->type != SG_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < object->object.len; i++)
		if (strcmp(object->object.keys[i], key) == 0)
			return object->object.values[i];
	return NULL;
}

const char *sg_json_get_string(const struct sg_json *object, const char *key)
{
	const struct sg_json *v = sg_json_get(object, key);
	return v && v->type == SG_JSON_STRING ? v->string.text : NULL;
}

const char *sg_json_type_name(enum sg_json_type type)
{
	static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
	return (unsigned)type < SG_ARRAY_SIZE(names) ? names[type] : "unknown";
}
