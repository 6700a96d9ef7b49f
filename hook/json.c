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
 *
 * The tree lives in an arena that sg_json_free releases whole: a policy of
 * thousands of rules has hundreds of thousands of values, keys and strings,
 * and a malloc block for each cost about as much again in headers, rounding
 * and arrays grown by doubling. Members of an open container wait on the
 * builder's stack and go into the arena, at their final size, when it closes.
 * Short strings are stored once per tree, in an arena of their own: every
 * rule repeats its keys and words such as "read-write". The items of a
 * streamed array (json.h) are handed out as each completes, and the arena is
 * rewound to where the item started: a policy's rules never make a tree.
 */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "arena.h"
#include "util.h"

/* Turns byte offsets into line:column; columns count characters, not bytes. */
struct cursor {
	const char *text;
	size_t len; /* of the text */
	size_t offset;
	struct sg_pos pos;
};

/*
 * The high bit of each of the eight bytes of @w that is a newline or not
 * ASCII: those are the bytes that do more than add a column (a UTF-8
 * continuation byte adds none). Like sg_bytes_equal's, a newline's bit may
 * come with false ones above it, never below.
 */
static uint64_t line_or_utf8(uint64_t w)
{
	return sg_bytes_equal(w, '\n') | (w & 0x8080808080808080ull);
}

/*
 * The bits of line_or_utf8 that stand for the first @n bytes of a word
 * loaded from memory. Little-endian only: there the first bytes are the low
 * ones, below any false bit, which the has-zero test raises only above a
 * true one; elsewhere words are only taken whole.
 */
static uint64_t first_bytes(size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n < sizeof(uint64_t))
		return ((uint64_t)1 << (8 * n)) - 1;
#endif
	(void)n;
	return ~(uint64_t)0;
}

/* One byte: a newline starts a line, any other byte but a continuation adds a column. */
static void cursor_step(struct cursor *c)
{
	unsigned char ch = (unsigned char)c->text[c->offset++];
	if (ch == '\n') {
		c->pos.line++;
		c->pos.col = 1;
	} else if ((ch & 0xc0) != 0x80) {
		c->pos.col++;
	}
}

/*
 * Offsets asked for only grow while parsing, so the scan is linear overall;
 * it takes eight bytes at a time while they are plain ASCII on one line,
 * which a policy file nearly always is, and the last few bytes before the
 * offset in one look too when the text goes on for a word (a byte at a time,
 * the scan was a tenth of a large policy's parse).
 */
static struct sg_pos cursor_at(struct cursor *c, size_t offset)
{
	uint64_t w;

	if (offset < c->offset || c->pos.line == 0) {
		c->offset = 0;
		c->pos = (struct sg_pos){1, 1};
	}
	while (offset - c->offset >= sizeof(w)) {
		memcpy(&w, c->text + c->offset, sizeof(w));
		if (line_or_utf8(w)) {
			cursor_step(c);
			continue;
		}
		c->offset += sizeof(w);
		c->pos.col += (unsigned)sizeof(w);
	}
	size_t left = offset - c->offset;
	if (left && c->len - c->offset >= sizeof(w)) {
		memcpy(&w, c->text + c->offset, sizeof(w));
		if (!(line_or_utf8(w) & first_bytes(left))) {
			c->offset = offset;
			c->pos.col += (unsigned)left;
		}
	}
	while (c->offset < offset)
		cursor_step(c);
	return c->pos;
}

/*
 * What sg_json_parse hands out: the root first, so that sg_json_free finds
 * the arenas from it. Interned strings have an arena of their own: the
 * tree's is rewound after each streamed item, and they outlive it.
 */
struct json_doc {
	struct sg_json root;
	struct sg_arena tree, words;
};

static void doc_free(struct json_doc *doc)
{
	if (!doc)
		return;
	sg_arena_free(&doc->tree);
	sg_arena_free(&doc->words);
	free(doc);
}

/* A value of an open container, with its key when that is an object. */
struct member {
	struct sg_json *value;
	char *key;
	uint64_t key_hash; /* sg_table_hash of the key, once the object has a set (SMALL_OBJECT) */
	struct sg_pos key_pos;
};

/* An open array or object. */
struct frame {
	struct sg_json *value;
	size_t first;	/* its first member on the builder's stack */
	size_t *slots;	/* object: hash set of member index + 1, 0 when free */
	size_t n_slots; /* a power of two, or 0 */
};

/*
 * Objects of up to this many members find a repeated key by comparing it
 * with each; larger ones keep a hash set of their keys under a keyed hash,
 * which no input can make slow. Most objects are a rule's few members.
 */
#define SMALL_OBJECT 8

#define INTERN_SLOTS   512 /* a power of two */
#define INTERN_MAX_LEN 15

/*
 * An interned string and its bytes zero padded, which tell it from any
 * other: strings hold no NUL (check_string), and it is at most 15 bytes.
 */
struct interned {
	uint64_t word[2];
	char *text;
};

struct builder {
	const char *text;
	size_t len;
	const char *origin;
	yajl_handle yajl;
	struct json_doc *doc;
	struct sg_json *root;
	struct frame stack[SG_JSON_MAX_DEPTH];
	unsigned depth;
	struct member *members; /* of all open containers, the innermost's last */
	size_t n_members, members_cap;
	char *pending_key; /* the key whose value comes next (in the arena) */
	uint64_t pending_key_hash;
	struct sg_pos pending_key_pos;
	struct cursor cursor;
	bool completing; /* in yajl_complete_parse(): yajl counts bytes of its own buffer */
	struct sg_err *err;
	/* Short strings seen, each once in the arena: keys and words repeat in every rule. */
	struct interned interned[INTERN_SLOTS];
	/* The streamed array (json.h): its frame's depth, 0 when none is open. */
	const struct sg_json_stream *stream;
	unsigned stream_depth;
	size_t streamed;		 /* its items so far */
	struct sg_arena_mark item_start; /* the tree's arena before the item being read */
};

/*
 * Where a short string starts its search of the interned ones: a multiply
 * per word, no key. Strings made to collide cost no more than eight probes
 * each, and then a copy of their own.
 */
static size_t intern_slot(const uint64_t word[2])
{
	uint64_t h = word[0] * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29) ^ word[1]) * 0xbf58476d1ce4e5b9ull;
	return (size_t)(h >> 40);
}

/*
 * The arena's copy of @s: shared with every equal short string of the tree
 * (nothing writes to the tree's strings), a copy of its own otherwise.
 */
static char *intern(struct builder *b, const char *s, size_t len)
{
	uint64_t word[2] = {0, 0};

	if (len > INTERN_MAX_LEN)
		return sg_arena_strndup(&b->doc->tree, s, len);
	sg_copy_short(word, s, len);
	for (size_t i = intern_slot(word) & (INTERN_SLOTS - 1), probes = 0; probes < 8;
	     i = (i + 1) & (INTERN_SLOTS - 1), probes++) {
		struct interned *seen = &b->interned[i];
		if (!seen->text) {
			*seen = (struct interned){{word[0], word[1]}, NULL};
			return seen->text = sg_arena_strndup(&b->doc->words, s, len);
		}
		if (seen->word[0] == word[0] && seen->word[1] == word[1])
			return seen->text;
	}
	return sg_arena_strndup(&b->doc->tree, s, len); /* a crowded neighbourhood: not shared */
}

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

/*
 * Start of the string token that ends at @end and reads @s: yajl hands over
 * a string without escapes where it stands in our text, so its quote is
 * just before it; a decoded one is a copy, and the token is searched for.
 */
static size_t token_of_string(const struct builder *b, const unsigned char *s, size_t end)
{
	uintptr_t at = (uintptr_t)s, text = (uintptr_t)b->text;
	if (at > text && at <= text + b->len)
		return (size_t)(at - text) - 1;
	return string_start(b->text, end);
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

/* Member @index of the innermost open object. */
static const struct member *member_at(const struct builder *b, size_t index)
{
	return &b->members[b->stack[b->depth - 1].first + index];
}

/*
 * Whether the innermost open object has a member @key; *@hash gets the
 * key's hash when the object keeps a set (SMALL_OBJECT).
 */
static bool has_member(const struct builder *b, const char *key, size_t len, uint64_t *hash)
{
	const struct frame *f = &b->stack[b->depth - 1];

	*hash = 0;
	if (!f->n_slots) {
		for (size_t i = f->first; i < b->n_members; i++)
			if (strcmp(b->members[i].key, key) == 0)
				return true;
		return false;
	}
	*hash = sg_table_hash(key, len);
	size_t mask = f->n_slots - 1;
	for (size_t i = *hash & mask;; i = (i + 1) & mask) {
		size_t slot = f->slots[i];
		if (slot == 0)
			return false;
		if (strcmp(member_at(b, slot - 1)->key, key) == 0)
			return true;
	}
}

static void put_member(struct builder *b, size_t index)
{
	struct frame *f = &b->stack[b->depth - 1];
	size_t mask = f->n_slots - 1;
	size_t i = member_at(b, index)->key_hash & mask;
	while (f->slots[i])
		i = (i + 1) & mask;
	f->slots[i] = index + 1;
}

/*
 * Adds member @index (the last one) of the innermost object to its set, kept
 * at most half full; the set starts when the object outgrows SMALL_OBJECT.
 */
static void insert_member(struct builder *b, size_t index)
{
	struct frame *f = &b->stack[b->depth - 1];

	if (index < SMALL_OBJECT)
		return;
	if (!f->n_slots) /* the members so far were compared, not hashed */
		for (size_t k = 0; k <= index; k++) {
			struct member *m = &b->members[f->first + k];
			m->key_hash = sg_table_hash(m->key, strlen(m->key));
		}
	if (2 * (index + 1) > f->n_slots) {
		free(f->slots);
		f->n_slots = f->n_slots ? f->n_slots * 2 : 4 * SMALL_OBJECT;
		f->slots = sg_xcalloc(f->n_slots, sizeof(size_t));
		for (size_t k = 0; k < index; k++)
			put_member(b, k);
	}
	put_member(b, index);
}

/* Whether a value added now is an item of the streamed array. */
static bool in_stream(const struct builder *b)
{
	return b->stream_depth && b->depth == b->stream_depth;
}

/* Hands a complete item of the streamed array out, then frees it. */
static void deliver(struct builder *b, const struct sg_json *item)
{
	b->stream->item(item, b->streamed++, b->stream->arg);
	sg_arena_rewind(&b->doc->tree, b->item_start);
}

/* Whether the array opening now is the streamed one: the root object's member stream->key. */
static bool starts_stream(const struct builder *b)
{
	return b->stream && b->depth == 1 && b->stack[0].value->type == SG_JSON_OBJECT &&
	       b->pending_key && strcmp(b->pending_key, b->stream->key) == 0;
}

/* Attaches a new value to the open container (or makes it the root). */
static void add_value(struct builder *b, struct sg_json *v)
{
	if (b->depth == 0) {
		b->root = v;
		return;
	}
	if (in_stream(b)) {
		/* Not kept: a scalar goes out now, a container once it closes. */
		if (v->type != SG_JSON_ARRAY && v->type != SG_JSON_OBJECT)
			deliver(b, v);
		return;
	}
	const struct frame *f = &b->stack[b->depth - 1];
	bool in_object = f->value->type == SG_JSON_OBJECT;

	if (b->n_members == b->members_cap) {
		b->members_cap = b->members_cap ? 2 * b->members_cap : 256;
		b->members = sg_xrealloc(b->members, b->members_cap, sizeof(*b->members));
	}
	b->members[b->n_members++] = (struct member){
	    .value = v,
	    .key = in_object ? b->pending_key : NULL,
	    .key_hash = in_object ? b->pending_key_hash : 0,
	    .key_pos = b->pending_key_pos,
	};
	if (in_object)
		insert_member(b, b->n_members - 1 - f->first);
}

/* Moves the members of the innermost open container off the stack, into the arena. */
static void close_container(struct builder *b)
{
	struct frame *f = &b->stack[b->depth - 1];
	size_t n = b->n_members - f->first;
	const struct member *m = n ? &b->members[f->first] : NULL;
	struct sg_json *v = f->value;
	struct sg_json **values = NULL;

	if (n) {
		values =
		    sg_arena_take(&b->doc->tree, n * sizeof(*values), _Alignof(struct sg_json *));
		for (size_t i = 0; i < n; i++)
			values[i] = m[i].value;
	}
	if (v->type == SG_JSON_ARRAY) {
		v->array.items = values;
		v->array.len = n;
	} else if (n) {
		v->object.values = values;
		v->object.keys = sg_arena_take(&b->doc->tree, n * sizeof(char *), _Alignof(char *));
		v->object.key_pos = sg_arena_take(&b->doc->tree, n * sizeof(struct sg_pos),
						  _Alignof(struct sg_pos));
		for (size_t i = 0; i < n; i++) {
			v->object.keys[i] = m[i].key;
			v->object.key_pos[i] = m[i].key_pos;
		}
		v->object.len = n;
	}
	b->n_members = f->first;
	free(f->slots);
	b->depth--;
	if (b->stream_depth && b->depth == b->stream_depth)
		deliver(b, v);
	else if (b->stream_depth && b->depth < b->stream_depth)
		b->stream_depth = 0; /* the streamed array itself closed: it stays, empty */
}

/* yajl reports a single top-level value (no yajl_allow_multiple_values): it is the doc's root. */
static struct sg_json *new_value(struct builder *b, enum sg_json_type type, size_t start)
{
	if (in_stream(b))
		b->item_start = sg_arena_mark(&b->doc->tree);
	struct sg_json *v =
	    b->depth == 0 ? &b->doc->root
			  : sg_arena_take(&b->doc->tree, sizeof(*v), _Alignof(struct sg_json));
	memset(v, 0, sizeof(*v));
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

/*
 * The value of @s when it is an integer literal (digits, maybe a minus) that
 * fits int64_t; false otherwise (a fraction, an exponent, too large).
 * Digits are summed here: musl's strtoll reads through a FILE, some 500
 * instructions a number.
 */
static bool integer_literal(const char *s, size_t len, int64_t *out)
{
	const bool negative = len && s[0] == '-';
	/* the magnitude's bound: INT64_MIN's is one more than INT64_MAX's */
	const uint64_t limit = (uint64_t)INT64_MAX + negative;
	uint64_t magnitude = 0;
	size_t i = negative;

	if (i == len)
		return false;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned digit = (unsigned)(s[i] - '0');
		if (magnitude > (limit - digit) / 10)
			return false;
		magnitude = magnitude * 10 + digit;
	}
	*out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
	return true;
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct builder *b = ctx;
	size_t end = consumed(b);
	struct sg_json *v = new_value(b, SG_JSON_NUMBER, token_start(b->text, end));

	v->number.text = sg_arena_strndup(&b->doc->tree, s, len);
	v->number.is_integer = integer_literal(s, len, &v->number.integer);
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

static bool is_ascii(const unsigned char *s, size_t len)
{
	uint64_t high = 0, word;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&word, s + i, 8);
		high |= word;
	}
	for (; i < len; i++)
		high |= s[i];
	return (high & 0x8080808080808080ull) == 0;
}

/* yajl checks only the shape of multi-byte sequences. */
bool sg_utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n)
		if (!(n = utf8_char((const unsigned char *)s + i, len - i)))
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
	/*
	 * Every escape is longer than what it stands for: a string as long as
	 * its token's inside had none, and yajl lets no control byte through
	 * unescaped. If it is ASCII too, nothing is left to check.
	 */
	if (len + 2 == end - start && is_ascii(s, len))
		return 1;
	if (memchr(s, '\0', len))
		return fail(b, start, "%s contains a NUL character", what);
	if (!check_escapes(b, start, end))
		return 0;
	if (!sg_utf8_valid((const char *)s, len))
		return fail(b, start, "%s is not valid UTF-8", what);
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;
	size_t end = consumed(b), start = token_of_string(b, s, end);

	if (!check_string(b, start, end, s, len, "string"))
		return 0;
	struct sg_json *v = new_value(b, SG_JSON_STRING, start);
	v->string.text = intern(b, (const char *)s, len);
	v->string.len = len;
	add_value(b, v);
	return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;
	size_t end = consumed(b), start = token_of_string(b, s, end);

	if (!check_string(b, start, end, s, len, "key"))
		return 0;
	uint64_t hash;
	char *key = intern(b, (const char *)s, len);
	if (has_member(b, key, len, &hash)) {
		char quoted[80];
		sg_json_quote(key, len, quoted, sizeof(quoted));
		return fail(b, start, "duplicate key %s", quoted);
	}
	b->pending_key = key;
	b->pending_key_hash = hash;
	b->pending_key_pos = cursor_at(&b->cursor, start);
	return 1;
}

static int open_container(struct builder *b, enum sg_json_type type)
{
	size_t end = consumed(b), start = end ? end - 1 : 0;

	if (b->depth >= SG_JSON_MAX_DEPTH)
		return fail(b, start, "nested deeper than %d levels", SG_JSON_MAX_DEPTH);
	bool stream = type == SG_JSON_ARRAY && starts_stream(b);
	struct sg_json *v = new_value(b, type, start);
	add_value(b, v);
	b->stack[b->depth++] = (struct frame){.value = v, .first = b->n_members};
	if (stream)
		b->stream_depth = b->depth;
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
		close_container(b);
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

/* The offset of the first NUL, \v or \f in @text, or @len; eight bytes at a time. */
static size_t first_unwelcome(const char *text, size_t len)
{
	size_t i = 0;
	uint64_t w;

	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, text + i, sizeof(w));
		if (sg_bytes_equal(w, '\0') | sg_bytes_equal(w, '\v') | sg_bytes_equal(w, '\f'))
			break;
	}
	for (; i < len; i++)
		if (text[i] == '\0' || text[i] == '\v' || text[i] == '\f')
			return i;
	return len;
}

/*
 * What yajl would let through or describe poorly, told in this order: NUL
 * bytes, a byte order mark, \v and \f (yajl takes them for whitespace). The
 * rest is yajl's to check: it rejects other control characters, and checks
 * the shape of UTF-8. One pass over the text (a byte at a time, these scans
 * were a twentieth of parsing a large policy).
 */
static int scan_text(struct builder *b)
{
	size_t at = first_unwelcome(b->text, b->len);
	const char *nul = at < b->len ? memchr(b->text + at, '\0', b->len - at) : NULL;

	if (nul)
		return fail(b, (size_t)(nul - b->text), "a NUL byte in JSON text");
	if (b->len >= 3 && memcmp(b->text, "\xef\xbb\xbf", 3) == 0)
		return fail(b, 0,
			    "invalid JSON: a byte order mark (U+FEFF); save the file as UTF-8 "
			    "without it");
	if (at < b->len)
		return fail(b, at,
			    "invalid JSON: control character U+%04X; JSON separates "
			    "tokens only with space, tab, newline and carriage return, and "
			    "strings escape control characters",
			    (unsigned)b->text[at]);
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
	return sg_json_parse_stream(text, len, origin, NULL, out, err);
}

int sg_json_parse_stream(const char *text, size_t len, const char *origin,
			 const struct sg_json_stream *stream, struct sg_json **out,
			 struct sg_err *err)
{
	struct builder b = {.text = text ? text : "",
			    .len = text ? len : 0,
			    .origin = origin,
			    .cursor = {.text = text ? text : "", .len = text ? len : 0},
			    .err = err,
			    .stream = stream};
	int ret = 0;

	*out = NULL;
	if (blank(b.text, b.len))
		return sg_input_error(err, "%s: empty input, expected a JSON value", origin);
	if (!scan_text(&b))
		return -EINVAL;
	b.yajl = yajl_alloc(&callbacks, NULL, &b);
	if (!b.yajl)
		return sg_input_error(err, "%s: out of memory", origin);
	b.doc = sg_xcalloc(1, sizeof(*b.doc));

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
	while (b.depth)
		free(b.stack[--b.depth].slots);
	free(b.members);
	if (ret < 0) {
		doc_free(b.doc);
		return ret;
	}
	*out = b.root;
	return 0;
}

void sg_json_free(struct sg_json *root)
{
	/* Only a root comes here (json.h), and a root is the start of its doc. */
	doc_free((struct json_doc *)root);
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
