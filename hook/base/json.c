// SPDX-License-Identifier: Apache-2.0
/*
 * A JSON tree with positions: a parser of RFC 8259 JSON in UTF-8, strict
 * where a policy must be (no NUL characters, lone surrogates, overlong or
 * otherwise invalid UTF-8, duplicate keys, comments, trailing commas, \v or
 * \f for whitespace, nesting deeper than SG_JSON_MAX_DEPTH).
 *
 * It replaced yajl, whose event parser was lenient in those places (three
 * checks around it closed the gaps), told where a token ended but not where
 * it started (every value's start was searched for backwards), and took half
 * of parsing a 10,000-rule policy by itself. This parser reads each byte
 * once: it knows the line it is on as it skips whitespace (the only place a
 * newline may stand), so a token's line:column is a subtraction, and a
 * string without escapes, nearly every string of a policy, is found eight
 * bytes at a time and copied once.
 *
 * Keys are checked for duplicates with a hash set per object: the parse
 * stays linear however large the input. The tree lives in an arena that
 * sg_json_free releases whole: a policy of thousands of rules has hundreds
 * of thousands of values, keys and strings, and a malloc block for each cost
 * about as much again in headers, rounding and arrays grown by doubling.
 * Members of an open container wait on the builder's stack and go into the
 * arena, at their final size, when it closes. Short strings are stored once
 * per tree, in an arena of their own: every rule repeats its keys and words
 * such as "read-write". The items of a streamed array (json.h) are handed
 * out as each completes, and the arena is rewound to where the item
 * started: a policy's rules never make a tree.
 */
#include "base/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/siphash.h"
#include "base/util.h"

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
 * other: strings hold no NUL, and it is at most 15 bytes.
 */
struct interned {
	uint64_t word[2];
	char *text;
};

/* A string token read: its bytes (in the text, or decoded in the scratch buffer). */
struct string_token {
	size_t start; /* offset of its opening quote */
	const char *s;
	size_t len;
};

struct builder {
	const char *text;
	size_t len;
	const char *origin;
	size_t at; /* the next byte to read */
	/*
	 * Where the reading is: the line, the offset its first byte has, and
	 * the UTF-8 continuation bytes read on it (in strings, the only place
	 * they may be), which take no column of their own.
	 */
	unsigned line;
	size_t line_start, line_continuations;
	char *scratch; /* strings with escapes, decoded */
	size_t scratch_cap;
	struct json_doc *doc;
	struct sg_json *root;
	struct frame stack[SG_JSON_MAX_DEPTH];
	unsigned depth;
	struct member *members; /* of all open containers, the innermost's last */
	size_t n_members, members_cap;
	char *pending_key; /* the key whose value comes next (in the arena) */
	uint64_t pending_key_hash;
	struct sg_pos pending_key_pos;
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
 * The line:column of @offset, for messages: columns count characters, not
 * bytes. A scan from the start, as errors are rare and may point anywhere,
 * into a string's middle too.
 */
static struct sg_pos position_of(const struct builder *b, size_t offset)
{
	struct sg_pos pos = {1, 1};

	for (size_t i = 0; i < offset && i < b->len; i++) {
		unsigned char ch = (unsigned char)b->text[i];
		if (ch == '\n') {
			pos.line++;
			pos.col = 1;
		} else if ((ch & 0xc0) != 0x80) {
			pos.col++;
		}
	}
	return pos;
}

/*
 * The line:column of a token starting at @offset, on the line being read
 * and after every string of that line read so far.
 */
static struct sg_pos token_position(const struct builder *b, size_t offset)
{
	return (struct sg_pos){b->line,
			       (unsigned)(offset - b->line_start - b->line_continuations + 1)};
}

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
	/*
	 * Loaded into registers, not copied to the stack and read back: the
	 * words read over the pieces just stored stalled the load (store
	 * forwarding), 40% of interning.
	 */
	if (len >= 8) {
		memcpy(&word[0], s, sizeof(word[0]));
		word[1] = sg_load_short(s + 8, len - 8);
	} else {
		word[0] = sg_load_short(s, len);
	}
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

/* Records the error at @offset; returns false, for the parse to stop. */
__attribute__((format(printf, 3, 4))) static bool fail(struct builder *b, size_t offset,
						       const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	struct sg_pos pos = position_of(b, offset);
	sg_input_error(b->err, "%s:%u:%u: %s", b->origin, pos.line, pos.col, what);
	return false;
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

size_t sg_utf8_char_len(const char *s, size_t avail)
{
	return utf8_char((const unsigned char *)s, avail);
}

bool sg_utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n)
		if (!(n = utf8_char((const unsigned char *)s + i, len - i)))
			return false;
	return true;
}

/* A new value that starts at @pos, in the arena (the root in the doc). */
static struct sg_json *new_value(struct builder *b, enum sg_json_type type, struct sg_pos pos)
{
	if (in_stream(b))
		b->item_start = sg_arena_mark(&b->doc->tree);
	struct sg_json *v =
	    b->depth == 0 ? &b->doc->root
			  : sg_arena_take(&b->doc->tree, sizeof(*v), _Alignof(struct sg_json));
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->pos = pos;
	return v;
}

/* --- Reading: each function reads one token at b->at, or fails saying what it found. --- */

static void skip_whitespace(struct builder *b)
{
	const char *t = b->text;
	size_t i = b->at;

	for (; i < b->len; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c > ' ') /* most tokens: one compare */
			break;
		if (c == '\n') {
			b->line++;
			b->line_start = i + 1;
			b->line_continuations = 0;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			break;
		}
	}
	b->at = i;
}

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '+' || c == '.';
}

/* What stands at @offset, for "expected X, found Y". */
static void describe_found(const struct builder *b, size_t offset, char *out, size_t cap)
{
	unsigned char c = (unsigned char)b->text[offset];
	size_t n = 0;

	if (c == '/')
		snprintf(out, cap, "'/' (a comment? JSON has none)");
	else if (c == '\'')
		snprintf(out, cap, "''' (JSON strings take double quotes)");
	else if (is_word_char((char)c)) {
		while (offset + n < b->len && n < 24 && is_word_char(b->text[offset + n]))
			n++;
		snprintf(out, cap, "'%.*s'", (int)n, b->text + offset);
	} else if (c < 0x20 || c == 0x7f)
		snprintf(out, cap, "control character U+%04X", c);
	else if (c >= 0x80)
		snprintf(out, cap, "byte 0x%02X", c);
	else
		snprintf(out, cap, "'%c'", c);
}

/* Fails where the reading stands: @expected did not come. */
static bool unexpected(struct builder *b, const char *expected)
{
	char found[64];

	if (b->at >= b->len)
		return fail(b, b->at, "invalid JSON: premature end of input, expected %s",
			    expected);
	describe_found(b, b->at, found, sizeof(found));
	return fail(b, b->at, "invalid JSON: expected %s, found %s", expected, found);
}

/*
 * The high bit of each of the eight bytes of @w that ends a plain run of a
 * string: a quote, a backslash, a control character or a byte of a UTF-8
 * sequence. Like sg_bytes_equal's, false bits come only above a true one.
 */
static uint64_t string_stops(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t control = (w - ones * 0x20) & ~w & (ones << 7);
	return sg_bytes_equal(w, '"') | sg_bytes_equal(w, '\\') | control | (w & (ones << 7));
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The four hex digits at @s (@avail bytes there), or -1. */
static long hex4(const char *s, size_t avail)
{
	long v = 0;

	if (avail < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int d = hex_digit(s[i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static char *scratch_room(struct builder *b, size_t need)
{
	if (need > b->scratch_cap) {
		b->scratch_cap = need > 2 * b->scratch_cap ? need : 2 * b->scratch_cap;
		b->scratch = sg_xrealloc(b->scratch, b->scratch_cap, 1);
	}
	return b->scratch;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The \u escape at @i (its backslash), with its pair when it is a
 * surrogate's first half: the code point in *@cp, the escape's length
 * returned; 0 after failing. A NUL is refused by the caller.
 */
static size_t unicode_escape(struct builder *b, size_t i, uint32_t *cp)
{
	const char *t = b->text;
	long hi = hex4(t + i + 2, b->len - i - 2);

	if (hi < 0)
		return fail(b, i, "invalid JSON: \\u must be followed by four hex digits"), 0;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail(b, i,
			    "\\u%.4s is the second half of a UTF-16 surrogate pair without the "
			    "first; write the character itself or its full pair",
			    t + i + 2),
		       0;
	if (hi < 0xd800 || hi > 0xdbff) {
		*cp = (uint32_t)hi;
		return 6;
	}
	long lo = i + 12 <= b->len && t[i + 6] == '\\' && t[i + 7] == 'u'
		      ? hex4(t + i + 8, b->len - i - 8)
		      : -1;
	if (lo < 0xdc00 || lo > 0xdfff)
		return fail(b, i,
			    "\\u%.4s is the first half of a UTF-16 surrogate pair without the "
			    "second; write the character itself or its full pair",
			    t + i + 2),
		       0;
	*cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
	return 12;
}

/* The byte an escape \@c stands for, or -1 (\u is unicode_escape's). */
static int simple_escape(char c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return -1;
	}
}

/*
 * The string token at @tok->start that has an escape or a byte that is not
 * plain ASCII, decoded into the scratch buffer; @what ("string" or "key")
 * names it in messages. The decoded text is never longer than the token.
 */
static bool read_escaped_string(struct builder *b, struct string_token *tok, const char *what)
{
	const char *t = b->text;
	char *out = scratch_room(b, b->len - tok->start);
	size_t o = 0, i = tok->start + 1, continuations = 0;

	while (i < b->len) {
		unsigned char c = (unsigned char)t[i];
		if (c == '"') {
			tok->s = out;
			tok->len = o;
			b->at = i + 1;
			b->line_continuations += continuations;
			return true;
		}
		if (c < 0x20)
			return fail(b, i,
				    "invalid JSON: control character U+%04X in a %s; JSON strings "
				    "write it escaped",
				    c, what);
		if (c >= 0x80) {
			size_t n = utf8_char((const unsigned char *)t + i, b->len - i);
			if (!n)
				return fail(b, tok->start, "%s is not valid UTF-8", what);
			memcpy(out + o, t + i, n);
			o += n;
			i += n;
			continuations += n - 1;
			continue;
		}
		if (c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= b->len)
			break;
		if (t[i + 1] == 'u') {
			uint32_t cp;
			size_t n = unicode_escape(b, i, &cp);
			if (!n)
				return false;
			if (cp == 0)
				return fail(b, tok->start, "%s contains a NUL character", what);
			o += put_utf8(out + o, cp);
			i += n;
			continue;
		}
		int e = simple_escape(t[i + 1]);
		if (e < 0) {
			char found[64];
			describe_found(b, i + 1, found, sizeof(found));
			return fail(b, i,
				    "invalid JSON: '\\' followed by %s in a %s; JSON escapes are "
				    "\\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
				    found, what);
		}
		out[o++] = (char)e;
		i += 2;
	}
	return fail(b, b->len,
		    "invalid JSON: premature end of input, in a %s that has no closing quote",
		    what);
}

/*
 * Where the plain run of the string whose opening quote is at @quote stops:
 * at its closing quote, a backslash, a control character, a byte of a UTF-8
 * sequence, or the end of the text.
 */
static size_t plain_run_end(const struct builder *b, size_t quote)
{
	const char *t = b->text;
	size_t i = quote + 1;
	uint64_t w;

	for (; i + sizeof(w) <= b->len; i += sizeof(w)) {
		memcpy(&w, t + i, sizeof(w));
		uint64_t stops = string_stops(w);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* the lowest stop is a true one, and the first byte to stop at */
		if (stops)
			return i + (size_t)__builtin_ctzll(stops) / 8;
#else
		if (stops)
			break;
#endif
	}
	while (i < b->len && t[i] != '"' && t[i] != '\\' && (unsigned char)t[i] >= 0x20 &&
	       (unsigned char)t[i] < 0x80)
		i++;
	return i;
}

/*
 * The string token at b->at (its opening quote). Most strings are plain
 * ASCII without escapes, found eight bytes at a time and left in the text;
 * the others are decoded.
 */
static bool read_string(struct builder *b, struct string_token *tok, const char *what)
{
	const char *t = b->text;
	const size_t i = plain_run_end(b, b->at);

	tok->start = b->at;
	if (i < b->len && t[i] == '"') {
		tok->s = t + tok->start + 1;
		tok->len = i - tok->start - 1;
		b->at = i + 1;
		return true;
	}
	return read_escaped_string(b, tok, what);
}

/*
 * The value of @s when it is an integer literal (digits, maybe a minus) that
 * fits int64_t; false otherwise (a fraction, an exponent, too large).
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

static bool is_digit(const struct builder *b, size_t i)
{
	return i < b->len && b->text[i] >= '0' && b->text[i] <= '9';
}

static size_t skip_digits(const struct builder *b, size_t i)
{
	while (is_digit(b, i))
		i++;
	return i;
}

/*
 * The end of the number token at @start (RFC 8259: -?(0|[1-9][0-9]*)
 * (.[0-9]+)?([eE][+-]?[0-9]+)?), or 0 when it is malformed.
 */
static size_t number_end(const struct builder *b, size_t start)
{
	size_t i = start + (b->text[start] == '-');

	if (!is_digit(b, i))
		return 0;
	i = b->text[i] == '0' ? i + 1 : skip_digits(b, i);
	if (i < b->len && b->text[i] == '.') {
		if (!is_digit(b, i + 1))
			return 0;
		i = skip_digits(b, i + 1);
	}
	if (i < b->len && (b->text[i] == 'e' || b->text[i] == 'E')) {
		i++;
		if (i < b->len && (b->text[i] == '+' || b->text[i] == '-'))
			i++;
		if (!is_digit(b, i))
			return 0;
		i = skip_digits(b, i);
	}
	/* a number runs into no letter or digit: "01", "1x", "1.2.3" */
	return i < b->len && is_word_char(b->text[i]) ? 0 : i;
}

static bool read_number(struct builder *b)
{
	size_t start = b->at, end = number_end(b, start);

	if (!end) {
		size_t n = 0;
		while (start + n < b->len && n < 24 && is_word_char(b->text[start + n]))
			n++;
		return fail(b, start,
			    "invalid JSON: malformed number '%.*s' (JSON numbers have no "
			    "leading zeros, a digit on both sides of '.', digits after 'e')",
			    (int)n, b->text + start);
	}
	struct sg_json *v = new_value(b, SG_JSON_NUMBER, token_position(b, start));
	v->number.text = sg_arena_strndup(&b->doc->tree, b->text + start, end - start);
	v->number.is_integer = integer_literal(b->text + start, end - start, &v->number.integer);
	add_value(b, v);
	b->at = end;
	return true;
}

/* true, false or null. */
static bool read_literal(struct builder *b)
{
	static const struct {
		const char *word;
		size_t len;
		enum sg_json_type type;
		bool value;
	} literals[] = {
	    {"true", 4, SG_JSON_BOOL, true},
	    {"false", 5, SG_JSON_BOOL, false},
	    {"null", 4, SG_JSON_NULL, false},
	};
	size_t start = b->at, left = b->len - start;

	for (size_t k = 0; k < SG_ARRAY_SIZE(literals); k++) {
		size_t n = literals[k].len;
		if (left < n || memcmp(b->text + start, literals[k].word, n) != 0 ||
		    (left > n && is_word_char(b->text[start + n])))
			continue;
		struct sg_json *v = new_value(b, literals[k].type, token_position(b, start));
		v->boolean = literals[k].value;
		add_value(b, v);
		b->at = start + n;
		return true;
	}
	return unexpected(b, "a value");
}

static bool read_plain_string(struct builder *b)
{
	struct sg_pos pos = token_position(b, b->at); /* before the string's own characters */
	struct string_token tok;

	if (!read_string(b, &tok, "string"))
		return false;
	struct sg_json *v = new_value(b, SG_JSON_STRING, pos);
	v->string.text = intern(b, tok.s, tok.len);
	v->string.len = tok.len;
	add_value(b, v);
	return true;
}

/* The key at b->at of the innermost open object, which must be new to it. */
static bool read_key(struct builder *b)
{
	struct sg_pos pos = token_position(b, b->at); /* before the key's own characters */
	struct string_token tok;
	uint64_t hash;

	if (!read_string(b, &tok, "key"))
		return false;
	char *key = intern(b, tok.s, tok.len);
	if (has_member(b, key, tok.len, &hash)) {
		char quoted[80];
		sg_json_quote(key, tok.len, quoted, sizeof(quoted));
		return fail(b, tok.start, "duplicate key %s", quoted);
	}
	b->pending_key = key;
	b->pending_key_hash = hash;
	b->pending_key_pos = pos;
	return true;
}

static bool open_container(struct builder *b, enum sg_json_type type)
{
	size_t start = b->at;

	if (b->depth >= SG_JSON_MAX_DEPTH)
		return fail(b, start, "nested deeper than %d levels", SG_JSON_MAX_DEPTH);
	bool stream = type == SG_JSON_ARRAY && starts_stream(b);
	struct sg_json *v = new_value(b, type, token_position(b, start));
	add_value(b, v);
	b->stack[b->depth++] = (struct frame){.value = v, .first = b->n_members};
	if (stream)
		b->stream_depth = b->depth;
	b->at++;
	skip_whitespace(b);
	return true;
}

static bool read_value(struct builder *b);

static bool at_byte(const struct builder *b, char c)
{
	return b->at < b->len && b->text[b->at] == c;
}

/* The ',' at b->at and the whitespace after it; JSON has no comma before @close. */
static bool read_comma(struct builder *b, char close)
{
	size_t comma = b->at;

	b->at++;
	skip_whitespace(b);
	if (at_byte(b, close))
		return fail(b, comma,
			    "invalid JSON: a comma before '%c'; JSON has no trailing commas",
			    close);
	return true;
}

/* The array at b->at; the items' nesting is bounded by open_container. */
static bool read_array(struct builder *b)
{
	if (!open_container(b, SG_JSON_ARRAY))
		return false;
	if (at_byte(b, ']'))
		goto close;
	for (;;) {
		if (!read_value(b))
			return false;
		skip_whitespace(b);
		if (at_byte(b, ',')) {
			if (!read_comma(b, ']'))
				return false;
			continue;
		}
		if (at_byte(b, ']'))
			goto close;
		return unexpected(b, "',' or ']'");
	}
close:
	b->at++;
	close_container(b);
	return true;
}

static bool read_object(struct builder *b)
{
	if (!open_container(b, SG_JSON_OBJECT))
		return false;
	if (at_byte(b, '}'))
		goto close;
	for (;;) {
		if (!at_byte(b, '"'))
			return unexpected(b, "a key (a string in double quotes)");
		if (!read_key(b))
			return false;
		skip_whitespace(b);
		if (!at_byte(b, ':'))
			return unexpected(b, "':' after the key");
		b->at++;
		skip_whitespace(b);
		if (!read_value(b))
			return false;
		skip_whitespace(b);
		if (at_byte(b, ',')) {
			if (!read_comma(b, '}'))
				return false;
			continue;
		}
		if (at_byte(b, '}'))
			goto close;
		return unexpected(b, "',' or '}'");
	}
close:
	b->at++;
	close_container(b);
	return true;
}

/* The value at b->at, whitespace before it skipped. */
static bool read_value(struct builder *b)
{
	if (b->at >= b->len)
		return unexpected(b, "a value");
	char c = b->text[b->at];
	if (c == '"')
		return read_plain_string(b);
	if (c == '{')
		return read_object(b);
	if (c == '[')
		return read_array(b);
	if (c == '-' || (c >= '0' && c <= '9'))
		return read_number(b);
	return read_literal(b);
}

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
 * Faults told before any other, in this order wherever they are: NUL bytes,
 * a byte order mark, \v and \f (which some parsers take for whitespace).
 */
static bool scan_text(struct builder *b)
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
	return true;
}

/* The whole text: one value and nothing but whitespace around it. */
static bool read_document(struct builder *b)
{
	skip_whitespace(b);
	if (b->at == b->len)
		return sg_input_error(b->err, "%s: empty input, expected a JSON value", b->origin),
		       false;
	if (!scan_text(b) || !read_value(b))
		return false;
	skip_whitespace(b);
	if (b->at < b->len) {
		char found[64];
		describe_found(b, b->at, found, sizeof(found));
		return fail(b, b->at, "invalid JSON: trailing garbage after the JSON value: %s",
			    found);
	}
	return true;
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
			    .line = 1,
			    .err = err,
			    .stream = stream};

	*out = NULL;
	b.doc = sg_xcalloc(1, sizeof(*b.doc));
	bool ok = read_document(&b);
	while (b.depth)
		free(b.stack[--b.depth].slots);
	free(b.members);
	free(b.scratch);
	if (!ok) {
		doc_free(b.doc);
		return -EINVAL;
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
