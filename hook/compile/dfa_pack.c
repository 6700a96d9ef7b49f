// SPDX-License-Identifier: Apache-2.0
#include "compile/dfa_pack.h"

#include <string.h>

#include "base/util.h"

/* Columns of a row: the byte classes and the accepted rule's. */
static uint32_t columns_of(const struct sg_dfa *dfa)
{
	return sg_dfa_accept_column(dfa->n_classes) + 1;
}

/* A state's row, its accepted rule last: at most 256 classes and that. */
struct row {
	uint32_t entry[257];
};

/* Room for the columns of the extras, state after state (sg_dfa_packed.columns). */
struct extra_columns {
	uint16_t *columns;
	size_t n, cap;
};

/*
 * The entry most of @row's @n holds, when one holds more than half: the
 * majority vote (Boyer and Moore) finds it in one pass. Without such an
 * entry it returns another, which costs room, never correctness: every
 * entry unlike the default is stored.
 */
static uint32_t majority(const uint32_t *row, uint32_t n)
{
	uint32_t candidate = row[0], lead = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (lead == 0)
			candidate = row[i];
		lead += row[i] == candidate ? 1 : (uint32_t)-1;
	}
	return candidate;
}

/*
 * A guess at a row's majority from its first, middle and last entries:
 * nearly every row's shows in two of them.
 */
static uint32_t likely_of(uint32_t first, uint32_t middle, uint32_t last)
{
	return first == middle || first == last ? first : middle;
}

static uint32_t likely_majority(const uint32_t *row, uint32_t n)
{
	return likely_of(row[0], row[n / 2], row[n - 1]);
}

static uint32_t count_unlike(const uint32_t *row, uint32_t n, uint32_t entry)
{
	uint32_t unlike = 0;
	for (uint32_t i = 0; i < n; i++)
		unlike += row[i] != entry;
	return unlike;
}

/* The entry of state @s in @column: its next state on a byte class, or its accepted rule. */
static uint32_t entry_at(const struct sg_dfa *dfa, uint32_t s, uint32_t column)
{
	const uint32_t classes = dfa->n_classes;
	return column == classes ? dfa->accept[s] : sg_dfa_next(dfa, s, column);
}

static void read_row(const struct sg_dfa *dfa, uint32_t s, struct row *r)
{
	const uint32_t classes = dfa->n_classes;
	sg_dfa_next_states(dfa, (size_t)s * classes, classes, r->entry);
	r->entry[classes] = dfa->accept[s];
}

/* Room in @x for a row's extras, which keep_extras writes at the end of @x. */
static uint16_t *room_for_row(struct extra_columns *x, uint32_t classes)
{
	if (x->n + classes + 1 > x->cap) {
		x->cap = 2 * x->cap + classes + 1;
		x->columns = sg_xrealloc(x->columns, x->cap, sizeof(*x->columns));
	}
	return x->columns + x->n;
}

/*
 * Writes the columns of row @r unlike @dflt (the accepted rule's: unlike
 * SG_NO_RULE) at @out, found once, as the default is chosen: placing and
 * writing the rows went over each again, a fifth of packing 13,700 states.
 * Returns how many.
 */
static uint32_t keep_extras(const struct row *r, uint32_t classes, uint32_t dflt, uint16_t *out)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < classes; k++) {
		out[n] = (uint16_t)k; /* kept only if it differs: no branch to mispredict */
		n += r->entry[k] != dflt;
	}
	if (r->entry[classes] != SG_NO_RULE)
		out[n++] = (uint16_t)classes;
	return n;
}

/* The high bit of each 16-bit lane of @w that differs from the lane of @dflt4. */
static uint64_t lanes_unlike(uint64_t w, uint64_t dflt4)
{
	const uint64_t low15 = 0x7fff7fff7fff7fffull;
	const uint64_t x = w ^ dflt4;
	return (((x & low15) + low15) | x) & ~low15; /* no lane carries into the next */
}

/*
 * keep_extras of state @s of a table of 16-bit entries, four entries a
 * step, with the likely default: false, and nothing kept, where more than
 * half its classes differ from it (the vote decides then). The rows of a
 * large policy's DFA are mostly one state, the dead one, and a few others:
 * entry by entry, choosing defaults took over a third of packing 13,700
 * states.
 */
static bool keep_narrow_extras(const struct sg_dfa *dfa, uint32_t s, uint32_t *dflt, uint16_t *out,
			       uint32_t *kept)
{
	const uint32_t classes = dfa->n_classes;
	const uint16_t *row = (const uint16_t *)dfa->transitions + (size_t)s * classes;
	const uint16_t d = (uint16_t)likely_of(row[0], row[classes / 2], row[classes - 1]);
	const uint64_t d4 = d * 0x0001000100010001ull;
	uint32_t n = 0;

	for (uint32_t k = 0; k < classes; k += 4) {
		uint64_t w;
		if (classes - k >= 4) {
			memcpy(&w, row + k, sizeof(w)); /* one load: no pieces stored first */
		} else { /* past the row's end: the default, never kept */
			const uint32_t bits = 16 * (classes - k);
			w = sg_load_short(row + k, 2 * (classes - k)) | (d4 >> bits << bits);
		}
		for (uint64_t m = lanes_unlike(w, d4); m; m &= m - 1)
			out[n++] = (uint16_t)(k + (uint32_t)__builtin_ctzll(m) / 16);
	}
	if (n * 2 > classes)
		return false;
	if (dfa->accept[s] != SG_NO_RULE)
		out[n++] = (uint16_t)classes;
	*dflt = d;
	*kept = n;
	return true;
}

/*
 * The entry elements, counted from the first after the states: each free
 * one is its own next_free, a taken one leads on to a free one (union-find
 * with path compression). Before end some are taken, from end on none.
 */
struct room {
	uint32_t *next_free;
	size_t cap, end;
};

static void make_room(struct room *rm, size_t end)
{
	if (end <= rm->cap)
		return;
	size_t cap = rm->cap * 2 > end ? rm->cap * 2 : end;
	rm->next_free = sg_xrealloc(rm->next_free, cap, sizeof(*rm->next_free));
	for (size_t i = rm->cap; i < cap; i++)
		rm->next_free[i] = (uint32_t)i;
	rm->cap = cap;
}

static bool is_free(const struct room *rm, size_t i)
{
	return i >= rm->cap || rm->next_free[i] == i;
}

/* The first free element from @i on. */
static size_t free_from(struct room *rm, size_t i)
{
	size_t found = i;
	while (!is_free(rm, found))
		found = rm->next_free[found];
	while (i != found) {
		uint32_t next = rm->next_free[i];
		rm->next_free[i] = (uint32_t)found;
		i = next;
	}
	return found;
}

static bool fits(const struct room *rm, size_t offset, const uint16_t *column, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!is_free(rm, offset + column[i]))
			return false;
	return true;
}

/*
 * Free elements a row of several extras tries before it goes past the last
 * one taken, and how far back from there it starts: holes that fit no row
 * of its shape would otherwise be tried by every row after it (13,700 rows
 * of two extras: 150 ms).
 */
enum { TRIES = 16, NEAR_END = 64 };

/*
 * The lowest offset, of those tried, where each of the @n extra @column of
 * a row lands on a free element; takes them.
 */
static uint32_t place_row(struct room *rm, const uint16_t *column, uint32_t n, uint32_t columns)
{
	const uint32_t first = column[0];
	/* rows of one extra come last and fill the holes the others left */
	size_t from = n > 1 && rm->end > NEAR_END ? rm->end - NEAR_END : 0;
	size_t at = free_from(rm, from > first ? from : first); /* where the first extra would go */

	for (int tries = 0; !fits(rm, at - first, column, n); tries++)
		at = tries < TRIES ? free_from(rm, at + 1) : rm->end + first;
	const size_t offset = at - first;
	make_room(rm, offset + columns);
	for (uint32_t i = 0; i < n; i++) {
		const size_t taken = offset + column[i];
		rm->next_free[taken] = (uint32_t)(taken + 1);
		if (taken + 1 > rm->end)
			rm->end = taken + 1;
	}
	return (uint32_t)offset;
}

/* Each state's default and extras (@x); the most extras any has. */
static uint32_t choose_defaults(struct sg_dfa_packed *p, struct row *r, struct extra_columns *x)
{
	const struct sg_dfa *dfa = &p->dfa;
	const uint32_t classes = dfa->n_classes;
	uint32_t most = 0;

	for (uint32_t s = 0; s < dfa->n_states; s++) {
		uint16_t *out = room_for_row(x, classes);
		uint32_t d, n;
		if (dfa->wide || !keep_narrow_extras(dfa, s, &d, out, &n)) {
			read_row(dfa, s, r);
			d = likely_majority(r->entry, classes);
			if (count_unlike(r->entry, classes, d) * 2 > classes)
				d = majority(r->entry, classes);
			n = keep_extras(r, classes, d, out);
		}
		p->defaults[s] = d;
		p->extras[s] = (uint16_t)n;
		p->first[s] = (uint32_t)x->n;
		x->n += n;
		most = n > most ? n : most;
	}
	return most;
}

/*
 * The states by their extras, most first (a counting sort): the widest rows
 * go in while room is easy to find.
 */
struct widest_first {
	const uint16_t *extras;
	uint32_t most;
};

static uint32_t fewer_extras(const void *arg, size_t s)
{
	const struct widest_first *w = arg;
	return w->most - w->extras[s];
}

static uint32_t *placing_order(const struct sg_dfa_packed *p, uint32_t most)
{
	const struct widest_first w = {p->extras, most};
	return sg_order_by_key(p->dfa.n_states, most + 1, fewer_extras, &w);
}

void sg_dfa_pack(const struct sg_dfa *dfa, struct sg_dfa_packed *out)
{
	const size_t n = dfa->n_states ? dfa->n_states : 1;
	struct room rm = {0};
	struct row r;

	*out = (struct sg_dfa_packed){0};
	out->dfa = *dfa;
	out->defaults = sg_xcalloc(n, sizeof(*out->defaults));
	out->offsets = sg_xcalloc(n, sizeof(*out->offsets));
	out->extras = sg_xcalloc(n, sizeof(*out->extras));
	out->first = sg_xcalloc(n, sizeof(*out->first));
	/*
	 * The extras' columns grow from their likely size (about two a state:
	 * dfa_pack.h) at once, their pages touched only as they fill: doubling
	 * from nothing, a large policy's packing touched half as many pages
	 * again in the blocks they grew out of.
	 */
	struct extra_columns x = {.cap = 2 * n + columns_of(dfa)};
	x.columns = sg_xrealloc(NULL, x.cap, sizeof(*x.columns));
	_cleanup_free_ uint32_t *order = placing_order(out, choose_defaults(out, &r, &x));
	for (uint32_t i = 0; i < dfa->n_states && out->extras[order[i]]; i++) {
		const uint32_t s = order[i];
		out->offsets[s] =
		    place_row(&rm, x.columns + out->first[s], out->extras[s], columns_of(dfa));
	}
	free(rm.next_free);
	out->columns = x.columns;
	out->n_elements = (size_t)dfa->n_states + rm.end;
	if (out->n_elements == 0)
		out->n_elements = 1; /* an array map has at least one element */
}

void sg_dfa_packed_write(const struct sg_dfa_packed *p, size_t first, size_t count,
			 sg_dfa_element *dst)
{
	const struct sg_dfa *dfa = &p->dfa;
	const size_t n = dfa->n_states, end = first + count;

	memset(dst, 0, count * sizeof(*dst));
	for (size_t s = first; s < n && s < end; s++) {
		dst[s - first][0] = (uint32_t)(n + p->offsets[s]);
		dst[s - first][1] = p->defaults[s];
	}
	for (uint32_t s = 0; s < n; s++) {
		const size_t base = n + p->offsets[s];
		if (!p->extras[s] || base >= end || base + columns_of(dfa) <= first)
			continue;
		const uint16_t *column = p->columns + p->first[s];
		for (uint32_t i = 0; i < p->extras[s]; i++) {
			const size_t at = base + column[i];
			if (at >= first && at < end) {
				dst[at - first][0] = sg_dfa_owner(s);
				dst[at - first][1] = entry_at(dfa, s, column[i]);
			}
		}
	}
}

uint32_t sg_dfa_element_lookup(const sg_dfa_element *elements, size_t n, uint32_t state,
			       uint32_t column, bool accept)
{
	if (state >= n)
		return accept ? SG_NO_RULE : SG_DEAD_STATE;
	const uint32_t *s = elements[state];
	const size_t at = (size_t)s[0] + column;
	if (at < n && elements[at][0] == sg_dfa_owner(state))
		return elements[at][1];
	return accept ? SG_NO_RULE : s[1];
}

void sg_dfa_packed_free(struct sg_dfa_packed *p)
{
	free(p->defaults);
	free(p->offsets);
	free(p->extras);
	free(p->columns);
	free(p->first);
	*p = (struct sg_dfa_packed){0};
}
