// SPDX-License-Identifier: Apache-2.0
/*
 * A JSON tree with positions, built from yajl's event parser: yajl reports
 * how far it has read when it calls back, and the token's start is found from
 * there, so every value and key knows its line:column.
 *
 * yajl is lenient where this parser must not be: it takes overlong UTF-8 and
 * encoded surrogates, decodes "\ud800" without its other half to "?" (in a
 * rule name, a wildcard), and separates tokens with \v and \f. A look at the
 * text before yajl and at every string after it closes those gaps, so what
 * this parser accepts is RFC 8259 JSON in UTF-8, without NUL characters,
 * duplicate keys or deep nesting.
 *
 * Every offset is turned into line:column by a cursor that only moves
 * forward, and keys are checked for duplicates with a hash set per object:
 * the parse stays linear however large the input.
 */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "util.h"

/* Turns byte offsets into line:column; columns count characters, not bytes. */
struct cursor {
	const char *text;
	size_t offset;
	struct sg_pos pos;
};

/* Offsets asked for only grow while parsing, so the scan is linear overall. */
static struct sg_pos cursor_at(struct cursor *c, size_t offset)
{
	if (offset < c->offset || c->pos.line == 0) {
		c->offset = 0;
		c->pos = (struct sg_pos){1, 1};
	}
	for (; c->offset < offset; c->offset++) {
		unsigned char ch = (unsigned char)c->text[c->offset];
		if (ch == '\n') {
			c->pos.line++;
			c->pos.col = 1;
		} else if ((ch & 0xc0) != 0x80) {
			c->pos.col++;
		}
	}
	return c->pos;
}

/* An open array or object. */
struct frame {
	struct sg_json *value;
	size_t cap;	/* items or members allocated */
	size_t *slots;	/* object: hash set of member index + 1, 0 when free */
	size_t n_slots; /* a power of two, or 0 */
};

struct builder {
	const char *text;
	size_t len;
	const char *origin;
	yajl_handle yajl;
	struct sg_json *root;
	struct frame stack[SG_JSON_MAX_DEPTH];
	unsigned depth;
	char *pending_key; /* the key whose value comes next */
	struct sg_pos pending_key_pos;
	struct cursor cursor;
	bool completing; /* in yajl_complete_parse(): yajl counts bytes of its own buffer */
	struct sg_err *err;
};

__attribute__((format(printf, 3, 4))) static int fail(struct builder *b, size_t offset,
						      const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	struct sg_pos pos = cursor_at(&b->cursor, offset);
	sg_input_error(b->err, "%s:%u:%u: %s", b->origin, pos.line, pos.col, what);
	return 0; /* a callback's 0 cancels the parse */
}

/* @c as it stands in a JSON string literal; returns the length written to @piece. */
static size_t escape_char(unsigned char c, char piece[8])
{
	if (c == '"' || c == '\\')
		return (size_t)snprintf(piece, 8, "\\%c", c);
	if (c == '\n')
		return (size_t)snprintf(piece, 8, "\\n");
	if (c == '\t')
		return (size_t)snprintf(piece, 8, "\\t");
	if (c < 0x20 || c == 0x7f)
		return (size_t)snprintf(piece, 8, "\\u%04x", c);
	piece[0] = (char)c;
	return 1;
}

void sg_json_quote(const char *s, size_t len, char *out, size_t cap)
{
	char piece[8];
	size_t o = 0, whole = 2;

	if (cap < 8) {
		if (cap)
			out[0] = '\0';
		return;
	}
	for (size_t i = 0; i < len && whole < cap; i++)
		whole += escape_char((unsigned char)s[i], piece);
	/* Room for the closing quote and the NUL, and for "..." when it does not all fit. */
	size_t room = cap - (whole < cap ? 2 : 5);
	out[o++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t n = escape_char(c, piece);
		if (o + n > room) {
			if ((c & 0xc0) == 0x80) { /* never cut a character in two */
				while (o > 1 && ((unsigned char)out[o - 1] & 0xc0) == 0x80)
					o--;
				if (o > 1)
					o--;
			}
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, piece, n);
		o += n;
	}
	out[o++] = '"';
	out[o] = '\0';
}

/* Where yajl stopped in our text. */
static size_t consumed(const struct builder *b)
{
	if (b->completing)
		return b
		    ->len; /* yajl_complete_parse() parses " " of its own: all of ours was read */
	size_t n = yajl_get_bytes_consumed(b->yajl);
	return n > b->len ? b->len : n;
}

/* Start of the string token whose closing quote is at @end - 1. */
static size_t string_start(const char *text, size_t end)
{
	for (size_t i = end >= 2 ? end - 2 : 0; i > 0; i--) {
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

static bool scalar_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' ||
	       c == '.' || c == 'E';
}

/* Start of the token (string, number, literal or punctuation) that ends at @end. */
static size_t token_start(const char *text, size_t end)
{
	if (end == 0)
		return 0;
	if (text[end - 1] == '"')
		return string_start(text, end);
	if (!scalar_char(text[end - 1]))
		return end - 1;
	size_t i = end;
	while (i > 0 && scalar_char(text[i - 1]))
		i--;
	return i;
}

static unsigned hex4(const char *s)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

/*
 * The escapes of the string token at [@start, @end) that yajl lets through:
 * surrogates without their other half, which yajl turns into "?" or into
 * bytes that are not UTF-8. yajl has checked the escapes' syntax.
 */
static int check_escapes(struct builder *b, size_t start, size_t end)
{
	const char *t = b->text;

	for (size_t i = start + 1; i + 1 < end; i++) {
		if (t[i] != '\\')
			continue;
		if (t[i + 1] != 'u' || i + 6 > end) {
			i++;
			continue;
		}
		unsigned cp = hex4(t + i + 2);
		bool high = cp >= 0xd800 && cp <= 0xdbff, low = cp >= 0xdc00 && cp <= 0xdfff;
		if (low)
			return fail(b, i,
				    "\\u%.4s is the second half of a UTF-16 surrogate pair without "
				    "the first; write the character itself or its full pair",
				    t + i + 2);
		if (high) {
			bool paired = i + 12 <= end && t[i + 6] == '\\' && t[i + 7] == 'u' &&
				      hex4(t + i + 8) >= 0xdc00 && hex4(t + i + 8) <= 0xdfff;
			if (!paired)
				return fail(b, i,
					    "\\u%.4s is the first half of a UTF-16 surrogate pair "
					    "without the second; write the character itself or its "
					    "full pair",
					    t + i + 2);
			i += 6;
		}
		i += 5;
	}
	return 1;
}

static bool grow(void **items, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return false;
	size_t n = *cap ? *cap * 2 : 4;
	*items = sg_xrealloc(*items, n, size);
	*cap = n;
	return true;
}

static uint64_t hash_key(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The member index of @key in the open object @f, or SIZE_MAX. */
static size_t find_member(const struct frame *f, const char *key)
{
	if (!f->n_slots)
		return SIZE_MAX;
	size_t mask = f->n_slots - 1;
	for (size_t i = hash_key(key) & mask;; i = (i + 1) & mask) {
		size_t slot = f->slots[i];
		if (slot == 0)
			return SIZE_MAX;
		if (strcmp(f->value->object.keys[slot - 1], key) == 0)
			return slot - 1;
	}
}

static void put_member(struct frame *f, size_t index)
{
	size_t mask = f->n_slots - 1;
	size_t i = hash_key(f->value->object.keys[index]) & mask;
	while (f->slots[i])
		i = (i + 1) & mask;
	f->slots[i] = index + 1;
}

/* Adds member @index (the last one) to the set, kept at most half full. */
static void insert_member(struct frame *f, size_t index)
{
	if (2 * (index + 1) > f->n_slots) {
		free(f->slots);
		f->n_slots = f->n_slots ? f->n_slots * 2 : 16;
		f->slots = sg_xcalloc(f->n_slots, sizeof(size_t));
		for (size_t k = 0; k < index; k++)
			put_member(f, k);
	}
	put_member(f, index);
}

/* Attaches a new value to the open container (or makes it the root); takes @v. */
static void add_value(struct builder *b, struct sg_json *v)
{
	if (b->depth == 0) {
		b->root = v;
		return;
	}
	struct frame *f = &b->stack[b->depth - 1];
	struct sg_json *parent = f->value;

	if (parent->type == SG_JSON_ARRAY) {
		grow((void **)&parent->array.items, &f->cap, parent->array.len + 1, sizeof(v));
		parent->array.items[parent->array.len++] = v;
		return;
	}
	size_t n = parent->object.len;
	if (grow((void **)&parent->object.values, &f->cap, n + 1, sizeof(v))) {
		parent->object.keys = sg_xrealloc(parent->object.keys, f->cap, sizeof(char *));
		parent->object.key_pos =
		    sg_xrealloc(parent->object.key_pos, f->cap, sizeof(struct sg_pos));
	}
	parent->object.keys[n] = SG_TAKE(b->pending_key);
	parent->object.key_pos[n] = b->pending_key_pos;
	parent->object.values[n] = v;
	insert_member(f, n);
	parent->object.len++;
}

static struct sg_json *new_value(struct builder *b, enum sg_json_type type, size_t start)
{
	struct sg_json *v = sg_xcalloc(1, sizeof(*v));
	v->type = type;
	v->pos = cursor_at(&b->cursor, start);
	return v;
}

static int on_null(void *ctx)
{
	struct builder *b = ctx;
	size_t end = consumed(b);
	add_value(b, new_value(b, SG_JSON_NULL, token_start(b->text, end)));
	return 1;
}

static int on_boolean(void *ctx, int value)
{
	struct builder *b = ctx;
	size_t end = consumed(b);
	struct sg_json *v = new_value(b, SG_JSON_BOOL, token_start(b->text, end));
	v->boolean = value != 0;
	add_value(b, v);
	return 1;
}

static bool integer_literal(const char *s, size_t len)
{
	size_t i = len && s[0] == '-' ? 1 : 0;
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
	size_t end = consumed(b);
	struct sg_json *v = new_value(b, SG_JSON_NUMBER, token_start(b->text, end));

	v->number.text = sg_xstrndup(s, len);
	if (integer_literal(s, len)) {
		errno = 0;
		long long n = strtoll(v->number.text, NULL, 10);
		v->number.is_integer = errno != ERANGE;
		v->number.integer = v->number.is_integer ? n : 0;
	}
	add_value(b, v);
	return 1;
}

/* Length of the UTF-8 character at @s (RFC 3629: shortest form, no surrogates), 0 if invalid. */
static size_t utf8_char(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (avail < n)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* yajl checks only the shape of multi-byte sequences. */
static bool valid_utf8(const unsigned char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n)
		if (!(n = utf8_char(s + i, len - i)))
			return false;
	return true;
}

/*
 * The checks of a string or key token at [@start, @end) that yajl does not
 * make; @what names it in messages.
 */
static int check_string(struct builder *b, size_t start, size_t end, const unsigned char *s,
			size_t len, const char *what)
{
	if (memchr(s, '\0', len))
		return fail(b, start, "%s contains a NUL character", what);
	if (!check_escapes(b, start, end))
		return 0;
	if (!valid_utf8(s, len))
		return fail(b, start, "%s is not valid UTF-8", what);
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;
	size_t end = consumed(b), start = string_start(b->text, end);

	if (!check_string(b, start, end, s, len, "string"))
		return 0;
	struct sg_json *v = new_value(b, SG_JSON_STRING, start);
	v->string.text = sg_xstrndup((const char *)s, len);
	v->string.len = len;
	add_value(b, v);
	return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;
	size_t end = consumed(b), start = string_start(b->text, end);
	const struct frame *f = &b->stack[b->depth - 1];

	if (!check_string(b, start, end, s, len, "key"))
		return 0;
	_cleanup_free_ char *key = sg_xstrndup((const char *)s, len);
	if (find_member(f, key) != SIZE_MAX) {
		char quoted[80];
		sg_json_quote(key, len, quoted, sizeof(quoted));
		return fail(b, start, "duplicate key %s", quoted);
	}
	free(b->pending_key);
	b->pending_key = SG_TAKE(key);
	b->pending_key_pos = cursor_at(&b->cursor, start);
	return 1;
}

static int open_container(struct builder *b, enum sg_json_type type)
{
	size_t end = consumed(b), start = end ? end - 1 : 0;

	if (b->depth >= SG_JSON_MAX_DEPTH)
		return fail(b, start, "nested deeper than %d levels", SG_JSON_MAX_DEPTH);
	struct sg_json *v = new_value(b, type, start);
	add_value(b, v);
	b->stack[b->depth++] = (struct frame){.value = v};
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
	if (b->depth) {
		free(b->stack[b->depth - 1].slots);
		b->depth--;
	}
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

/*
 * What yajl would let through or describe poorly: NUL bytes, \v and \f (yajl
 * takes them for whitespace), a byte order mark. The rest is yajl's to check:
 * it rejects other control characters, and checks the shape of UTF-8.
 */
static int scan_text(struct builder *b)
{
	const char *nul = memchr(b->text, '\0', b->len);

	if (nul)
		return fail(b, (size_t)(nul - b->text), "a NUL byte in JSON text");
	if (b->len >= 3 && memcmp(b->text, "\xef\xbb\xbf", 3) == 0)
		return fail(b, 0,
			    "invalid JSON: a byte order mark (U+FEFF); save the file as UTF-8 "
			    "without it");
	for (size_t i = 0; i < b->len; i++)
		if (b->text[i] == '\v' || b->text[i] == '\f')
			return fail(b, i,
				    "invalid JSON: control character U+%04X; JSON separates "
				    "tokens only with space, tab, newline and carriage return, and "
				    "strings escape control characters",
				    (unsigned)b->text[i]);
	return 1;
}

static bool blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
			return false;
	return true;
}

/* yajl's message, one line, without "parse error: ", where yajl stopped. */
static void syntax_error(struct builder *b)
{
	unsigned char *msg = yajl_get_error(b->yajl, 0, (const unsigned char *)b->text, b->len);
	const char *what = msg ? (const char *)msg : "invalid JSON";
	char clean[256];

	if (strncmp(what, "parse error: ", 13) == 0)
		what += 13;
	snprintf(clean, sizeof(clean), "%s", what);
	clean[strcspn(clean, "\n")] = '\0';
	fail(b, consumed(b), "invalid JSON: %s", clean);
	if (msg)
		yajl_free_error(b->yajl, msg);
}

int sg_json_parse(const char *text, size_t len, const char *origin, struct sg_json **out,
		  struct sg_err *err)
{
	struct builder b = {.text = text ? text : "",
			    .len = text ? len : 0,
			    .origin = origin,
			    .cursor = {.text = text ? text : ""},
			    .err = err};
	int ret = 0;

	*out = NULL;
	if (blank(b.text, b.len))
		return sg_input_error(err, "%s: empty input, expected a JSON value", origin);
	if (!scan_text(&b))
		return -EINVAL;
	b.yajl = yajl_alloc(&callbacks, NULL, &b);
	if (!b.yajl)
		return sg_input_error(err, "%s: out of memory", origin);

	yajl_status st = yajl_parse(b.yajl, (const unsigned char *)b.text, b.len);
	if (st == yajl_status_ok) {
		b.completing = true;
		st = yajl_complete_parse(b.yajl);
	}
	if (st == yajl_status_client_canceled) {
		ret = -EINVAL; /* the callback said why */
	} else if (st != yajl_status_ok) {
		syntax_error(&b);
		ret = -EINVAL;
	} else if (!b.root) {
		ret = sg_input_error(err, "%s: empty input, expected a JSON value", origin);
	}
	yajl_free(b.yajl);
	free(b.pending_key);
	while (b.depth)
		free(b.stack[--b.depth].slots);
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
	if (!object || object->type != SG_JSON_OBJECT || !key)
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
	static const char *const names[] = {"null",   "boolean", "number",
					    "string", "array",	 "object"};
	return (unsigned)type < SG_ARRAY_SIZE(names) ? names[type] : "unknown";
}
