// SPDX-License-Identifier: Apache-2.0
/*
 * The DFA of a policy's wildcard patterns, by subset construction.
 *
 * The NFA reads the name with a virtual '/' in front, so that every
 * component, the first included, is "/" followed by its characters, and a
 * "**" component is ("/" [^/]*)*, which equals ("/" .*)?: no special case at
 * either end of the pattern. The DFA's start state is the one after that
 * virtual '/'.
 *
 * The patterns of a layer share one NFA shaped as a trie over their items
 * (a byte, '?', '*', "**"): two hundred patterns that all begin with "net",
 * then "**", then differ share one "**" loop, not two hundred. That keeps the subsets small, and
 * the construction fast, for policies of thousands of patterns.
 */
#include "compile/dfa.h"

#include <errno.h>
#include <string.h>

#include "base/util.h"
#include "policy/name.h"

#define CLASS_OTHER 0 /* bytes no pattern names, NUL included */
#define CLASS_SLASH 1

/* A node of the NFA may loop on itself: after '*', and inside "**" after its '/'. */
enum node_loop {
	LOOP_NONE,
	LOOP_NOT_SLASH, /* '*' */
	LOOP_ANY,	/* the rest of a "**": any byte, '/' included */
};

enum edge_kind {
	EDGE_BYTE, /* one byte class */
	EDGE_ANY,  /* '?': any byte but '/' */
};

/* Pattern items, as trie keys: a byte class, or one of these. */
#define ITEM_ANY   256u
#define ITEM_STAR  257u
#define ITEM_DSTAR 258u

struct nfa_node {
	uint32_t first_edge; /* byte edges, 0-terminated list (edge 0 is unused) */
	uint32_t first_eps;  /* epsilon edges */
	uint32_t accept;     /* the rule that ends here, SG_NO_RULE when none */
	uint32_t accept_chars;
	uint8_t loop; /* enum node_loop */
};

struct nfa_edge {
	uint32_t next;
	uint32_t target;
	uint8_t kind; /* enum edge_kind; unused for epsilon edges */
	uint8_t cls;
};

/*
 * The patterns' trie: a node's children are among the targets of its own
 * edges (nfa_find_child), so it needs no index of its own.
 */
struct nfa {
	struct nfa_node *nodes; /* node 0 is the root: before the virtual '/' */
	size_t n_nodes, nodes_cap;
	struct nfa_edge *edges;
	size_t n_edges, edges_cap;
};

static void nfa_free(struct nfa *nfa)
{
	free(nfa->nodes);
	free(nfa->edges);
	memset(nfa, 0, sizeof(*nfa));
}

/*
 * Room for the NFA of patterns of @bytes bytes in all: a byte, '*' or '?'
 * makes at most a node and an edge, "**" two nodes and three edges, each
 * pattern one node more for its first component. Reserved at once, its
 * pages touched only as nodes fill them: doubling from a few hundred, a
 * large policy's NFA touched half as many pages again in the blocks it
 * grew out of. At most 2^18 nodes ahead (5 MiB, and the edges' 6): an
 * untrusted policy of many long patterns reserves no more than that, and
 * doubles from there.
 */
static void nfa_reserve(struct nfa *nfa, size_t bytes)
{
	nfa->nodes_cap = bytes + 2 < (1u << 18) ? bytes + 2 : (1u << 18);
	nfa->nodes = sg_xrealloc(nfa->nodes, nfa->nodes_cap, sizeof(*nfa->nodes));
	nfa->edges_cap = 2 * nfa->nodes_cap;
	nfa->edges = sg_xrealloc(nfa->edges, nfa->edges_cap, sizeof(*nfa->edges));
	if (nfa->n_edges == 0)
		nfa->n_edges = 1; /* index 0 ends the lists */
}

static uint32_t nfa_node(struct nfa *nfa, enum node_loop loop)
{
	if (nfa->n_nodes == nfa->nodes_cap) {
		nfa->nodes_cap = nfa->nodes_cap ? 2 * nfa->nodes_cap : 256;
		nfa->nodes = sg_xrealloc(nfa->nodes, nfa->nodes_cap, sizeof(*nfa->nodes));
	}
	nfa->nodes[nfa->n_nodes] = (struct nfa_node){.accept = SG_NO_RULE, .loop = (uint8_t)loop};
	return (uint32_t)nfa->n_nodes++;
}

static void nfa_edge(struct nfa *nfa, uint32_t *list, uint32_t target, enum edge_kind kind,
		     uint8_t cls)
{
	if (nfa->n_edges == nfa->edges_cap) {
		nfa->edges_cap = nfa->edges_cap ? 2 * nfa->edges_cap : 256;
		nfa->edges = sg_xrealloc(nfa->edges, nfa->edges_cap, sizeof(*nfa->edges));
		if (nfa->n_edges == 0)
			nfa->n_edges = 1; /* index 0 ends the lists */
	}
	uint32_t e = (uint32_t)nfa->n_edges++;
	nfa->edges[e] =
	    (struct nfa_edge){.next = *list, .target = target, .kind = (uint8_t)kind, .cls = cls};
	*list = e;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/*
 * The child @item made of @node before, found among @node's edges: a byte
 * or '?' child is the plain node a byte edge leads to ("**" also puts a
 * '/' edge to the node inside it, which loops); a '*' child is the looping
 * node of an epsilon edge, a "**" child the plain one. A node has a few
 * children (at most one per item): walking its edges took the place of a
 * hash table whose pages were a fifth of what a large policy's automaton
 * touched.
 */
static uint32_t nfa_find_child(const struct nfa *nfa, uint32_t node, uint32_t item)
{
	const struct nfa_node *n = &nfa->nodes[node];
	const bool eps = item == ITEM_STAR || item == ITEM_DSTAR;
	const uint8_t loop = item == ITEM_STAR ? LOOP_NOT_SLASH : LOOP_NONE;

	for (uint32_t e = eps ? n->first_eps : n->first_edge; e; e = nfa->edges[e].next) {
		const struct nfa_edge *edge = &nfa->edges[e];
		if (nfa->nodes[edge->target].loop != loop)
			continue;
		if (eps || (item == ITEM_ANY ? edge->kind == EDGE_ANY
					     : edge->kind == EDGE_BYTE && edge->cls == item))
			return edge->target;
	}
	return 0; /* the root is no one's child */
}

/* The child of @node by @item, created with its edges if new. */
static uint32_t nfa_child(struct nfa *nfa, uint32_t node, uint32_t item)
{
	uint32_t child = nfa_find_child(nfa, node, item);
	if (child)
		return child;
	if (item == ITEM_STAR) {
		child = nfa_node(nfa, LOOP_NOT_SLASH);
		nfa_edge(nfa, &nfa->nodes[node].first_eps, child, EDGE_BYTE, 0);
	} else if (item == ITEM_DSTAR) {
		/* Zero components: straight on; more: '/' then anything, then on. */
		child = nfa_node(nfa, LOOP_NONE);
		uint32_t inside = nfa_node(nfa, LOOP_ANY);
		nfa_edge(nfa, &nfa->nodes[node].first_eps, child, EDGE_BYTE, 0);
		nfa_edge(nfa, &nfa->nodes[node].first_edge, inside, EDGE_BYTE, CLASS_SLASH);
		nfa_edge(nfa, &nfa->nodes[inside].first_eps, child, EDGE_BYTE, 0);
	} else if (item == ITEM_ANY) {
		child = nfa_node(nfa, LOOP_NONE);
		nfa_edge(nfa, &nfa->nodes[node].first_edge, child, EDGE_ANY, 0);
	} else {
		child = nfa_node(nfa, LOOP_NONE);
		nfa_edge(nfa, &nfa->nodes[node].first_edge, child, EDGE_BYTE, (uint8_t)item);
	}
	return child;
}

static void nfa_add_pattern(struct nfa *nfa, const uint8_t *byte_class, const char *pattern,
			    uint32_t rule)
{
	uint32_t node = 0;

	for (const char *comp = pattern;;) {
		size_t len = (size_t)(strchrnul(comp, '/') - comp);
		if (len == 2 && comp[0] == '*' && comp[1] == '*') {
			node = nfa_child(nfa, node, ITEM_DSTAR);
		} else {
			node = nfa_child(nfa, node, CLASS_SLASH);
			for (size_t i = 0; i < len; i++) {
				if (comp[i] == '*') {
					/* "a**b" cannot pass sg_name_normalise; one loop is enough
					 * anyway. */
					if (i == 0 || comp[i - 1] != '*')
						node = nfa_child(nfa, node, ITEM_STAR);
				} else if (comp[i] == '?') {
					node = nfa_child(nfa, node, ITEM_ANY);
				} else {
					node = nfa_child(nfa, node,
							 byte_class[(unsigned char)comp[i]]);
				}
			}
		}
		if (!comp[len])
			break;
		comp += len + 1;
	}
	/* The same items twice: the same pattern, and the first listed wins. */
	struct nfa_node *n = &nfa->nodes[node];
	if (n->accept == SG_NO_RULE) {
		n->accept = rule;
		n->accept_chars = (uint32_t)sg_pattern_literal_chars(pattern);
	}
}

/* A growable list of NFA nodes. */
struct posbuf {
	uint32_t *v;
	size_t n, cap;
};

static void posbuf_push(struct posbuf *b, uint32_t pos)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->v = sg_xrealloc(b->v, b->cap, sizeof(*b->v));
	}
	b->v[b->n++] = pos;
}

/* Subset construction state for one layer; the DFA tables are global to the compile. */
struct dfa_builder {
	const struct nfa *nfa;
	struct sg_dfa *dfa;
	uint32_t n_classes;
	size_t states_cap;

	uint32_t base; /* first global state of this layer */
	uint32_t *set_pool;
	size_t pool_len, pool_cap;
	size_t *set_off; /* per layer state (global id - base) */
	uint32_t *set_len;
	uint64_t *set_hash;
	size_t sets_cap;

	uint32_t *table; /* open addressing: global state ids, 0 = empty slot */
	size_t table_cap;

	uint32_t *mark; /* per NFA node: stamp of the set being built */
	uint32_t stamp;
};

static void builder_free(struct dfa_builder *b)
{
	free(b->set_pool);
	free(b->set_off);
	free(b->set_len);
	free(b->set_hash);
	free(b->table);
	free(b->mark);
}

static uint64_t hash_set(const uint32_t *v, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (size_t i = 0; i < n; i++)
		h = (h ^ v[i]) * 0x100000001b3ull;
	return mix64(h);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void sort_nodes(uint32_t *v, size_t n)
{
	size_t i = 1;
	while (i < n && v[i - 1] < v[i])
		i++;
	if (i >= n)
		return;
	if (n > 32) {
		qsort(v, n, sizeof(*v), cmp_u32);
		return;
	}
	for (; i < n; i++) {
		uint32_t x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* @out = the union of the sorted, disjoint @a and @b. */
static void merge_nodes(const struct posbuf *a, const struct posbuf *b, struct posbuf *out)
{
	size_t i = 0, j = 0;

	out->n = 0;
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->v[i] < b->v[j]))
			posbuf_push(out, a->v[i++]);
		else
			posbuf_push(out, b->v[j++]);
	}
}

/* Adds @node and what it reaches without reading a byte, unless this set has them already. */
static void add_closure(struct dfa_builder *b, struct posbuf *set, uint32_t node)
{
	const struct nfa *nfa = b->nfa;

	if (b->mark[node] == b->stamp)
		return;
	b->mark[node] = b->stamp;
	posbuf_push(set, node);
	for (size_t i = set->n - 1; i < set->n; i++) {
		for (uint32_t e = nfa->nodes[set->v[i]].first_eps; e; e = nfa->edges[e].next) {
			uint32_t t = nfa->edges[e].target;
			if (b->mark[t] != b->stamp) {
				b->mark[t] = b->stamp;
				posbuf_push(set, t);
			}
		}
	}
}

static void new_stamp(struct dfa_builder *b)
{
	if (++b->stamp == 0) {
		memset(b->mark, 0, b->nfa->n_nodes * sizeof(*b->mark));
		b->stamp = 1;
	}
}

/* The winning rule among the patterns that end in @set: sg_pattern_precedence, precomputed. */
static uint32_t set_accept(const struct nfa *nfa, const uint32_t *set, size_t n)
{
	uint32_t best = SG_NO_RULE, best_chars = 0;

	for (size_t i = 0; i < n; i++) {
		const struct nfa_node *node = &nfa->nodes[set[i]];
		uint32_t rule = node->accept, chars = node->accept_chars;
		if (rule == SG_NO_RULE)
			continue;
		if (best == SG_NO_RULE || chars > best_chars ||
		    (chars == best_chars && rule < best)) {
			best = rule;
			best_chars = chars;
		}
	}
	return best;
}

static void table_insert(struct dfa_builder *b, uint32_t state)
{
	size_t mask = b->table_cap - 1;
	size_t i = (size_t)b->set_hash[state - b->base] & mask;
	while (b->table[i])
		i = (i + 1) & mask;
	b->table[i] = state;
}

static void table_grow(struct dfa_builder *b)
{
	uint32_t *old = b->table;
	size_t old_cap = b->table_cap;

	b->table_cap = old_cap ? 2 * old_cap : 1024;
	b->table = sg_xcalloc(b->table_cap, sizeof(*b->table));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			table_insert(b, old[i]);
	free(old);
}

/* Whether the @n nodes at @a and @b are the same (musl's memcmp takes a byte at a time). */
static bool same_nodes(const uint32_t *a, const uint32_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static void set_next(struct sg_dfa *dfa, size_t i, uint32_t next)
{
	if (dfa->wide)
		((uint32_t *)dfa->transitions)[i] = next;
	else
		((uint16_t *)dfa->transitions)[i] = (uint16_t)next;
}

/* Row @state of the table: the next state for each class. */
static void store_row(struct sg_dfa *dfa, size_t state, const uint32_t *row)
{
	const uint32_t n = dfa->n_classes;

	if (dfa->wide) {
		memcpy((uint32_t *)dfa->transitions + state * n, row, n * sizeof(*row));
		return;
	}
	uint16_t *narrow = (uint16_t *)dfa->transitions + state * n;
	for (uint32_t cl = 0; cl < n; cl++)
		narrow[cl] = (uint16_t)row[cl];
}

void sg_dfa_next_states(const struct sg_dfa *dfa, size_t first, size_t n, uint32_t *out)
{
	if (dfa->wide) {
		memcpy(out, (const uint32_t *)dfa->transitions + first, n * sizeof(*out));
		return;
	}
	const uint16_t *narrow = (const uint16_t *)dfa->transitions + first;
	for (size_t i = 0; i < n; i++)
		out[i] = narrow[i];
}

/*
 * The table in 32-bit entries with room for @cap_rows rows, for a state
 * number 16 bits cannot hold: the @rows rows so far (made of smaller
 * numbers) are copied over; the others are written as their states are
 * processed.
 */
static void widen(struct sg_dfa *dfa, size_t rows, size_t cap_rows)
{
	uint32_t *wide = sg_xrealloc(NULL, cap_rows * dfa->n_classes, sizeof(*wide));

	sg_dfa_next_states(dfa, 0, rows * dfa->n_classes, wide);
	free(dfa->transitions);
	dfa->transitions = wide;
	dfa->wide = true;
}

/*
 * The DFA state of the sorted set @v, created (with its accept entry; its
 * row is filled when it is processed) if new. Returns the global state, or
 * 0 for the empty set, or -E2BIG beyond SG_MAX_DFA_STATES.
 */
static int64_t state_of(struct dfa_builder *b, const uint32_t *v, size_t n)
{
	struct sg_dfa *dfa = b->dfa;

	if (n == 0)
		return SG_DEAD_STATE;
	uint64_t h = hash_set(v, n);
	size_t mask = b->table_cap - 1;
	for (size_t i = (size_t)h & mask; b->table[i]; i = (i + 1) & mask) {
		uint32_t s = b->table[i], local = s - b->base;
		if (b->set_hash[local] == h && b->set_len[local] == n &&
		    same_nodes(b->set_pool + b->set_off[local], v, n))
			return s;
	}

	if (dfa->n_states >= SG_MAX_DFA_STATES)
		return -E2BIG;
	uint32_t s = dfa->n_states++, local = s - b->base;
	const bool grow = dfa->n_states > b->states_cap;
	if (grow) {
		/* Never past the limit: its rows would be allocated for nothing. */
		b->states_cap =
		    b->states_cap * 2 < SG_MAX_DFA_STATES ? b->states_cap * 2 : SG_MAX_DFA_STATES;
		dfa->accept = sg_xrealloc(dfa->accept, b->states_cap, sizeof(uint32_t));
	}
	if (s > UINT16_MAX && !dfa->wide)
		widen(dfa, s, b->states_cap);
	else if (grow)
		dfa->transitions = sg_xrealloc(dfa->transitions, b->states_cap * b->n_classes,
					       sg_dfa_entry_size(dfa));
	dfa->accept[s] = set_accept(b->nfa, v, n);
	if (local >= b->sets_cap) {
		b->sets_cap = b->sets_cap ? 2 * b->sets_cap : 256;
		b->set_off = sg_xrealloc(b->set_off, b->sets_cap, sizeof(*b->set_off));
		b->set_len = sg_xrealloc(b->set_len, b->sets_cap, sizeof(*b->set_len));
		b->set_hash = sg_xrealloc(b->set_hash, b->sets_cap, sizeof(*b->set_hash));
	}
	if (b->pool_len + n > b->pool_cap) {
		while (b->pool_len + n > b->pool_cap)
			b->pool_cap = b->pool_cap ? 2 * b->pool_cap : 4096;
		b->set_pool = sg_xrealloc(b->set_pool, b->pool_cap, sizeof(*b->set_pool));
	}
	sg_copy_short(b->set_pool + b->pool_len, v, n * sizeof(*v));
	b->set_off[local] = b->pool_len;
	b->set_len[local] = (uint32_t)n;
	b->set_hash[local] = h;
	b->pool_len += n;

	if (2 * (size_t)(local + 1) > b->table_cap)
		table_grow(b);
	table_insert(b, s);
	return s;
}

/* A (byte class, target node) pair of a byte edge. */
struct lit_step {
	uint32_t cls, target;
};

static int cmp_lit_step(const void *a, const void *b);

/*
 * By class, then target. A state has a few steps: they are put in order
 * where they are, and only many go to qsort (musl's moves each element with
 * a call of memcpy: with it, a tenth of building a large policy's DFA).
 */
static void sort_lit_steps(struct lit_step *v, size_t n)
{
	if (n > 32) {
		qsort(v, n, sizeof(*v), cmp_lit_step);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct lit_step x = v[i];
		size_t j = i;
		for (; j > 0 && (v[j - 1].cls > x.cls ||
				 (v[j - 1].cls == x.cls && v[j - 1].target > x.target));
		     j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static int cmp_lit_step(const void *a, const void *b)
{
	const struct lit_step *x = a, *y = b;
	if (x->cls != y->cls)
		return (x->cls > y->cls) - (x->cls < y->cls);
	return (x->target > y->target) - (x->target < y->target);
}

/* Scratch buffers reused for every state of a layer. */
struct step_scratch {
	struct posbuf wild;  /* closure after any non-'/' byte no edge names */
	struct posbuf slash; /* closure after '/' */
	struct posbuf extra; /* what one byte class adds to wild */
	struct posbuf set;   /* closure after one byte class */
	struct lit_step *lits;
	size_t n_lits, lits_cap;
	uint32_t *row;
};

static void scratch_free(struct step_scratch *s)
{
	free(s->wild.v);
	free(s->slash.v);
	free(s->extra.v);
	free(s->set.v);
	free(s->lits);
	free(s->row);
}

/* The closure of what the nodes of @set reach by reading '/'. */
static void slash_targets(struct dfa_builder *b, const uint32_t *set, size_t n, struct posbuf *out)
{
	const struct nfa *nfa = b->nfa;

	for (size_t i = 0; i < n; i++) {
		const struct nfa_node *node = &nfa->nodes[set[i]];
		if (node->loop == LOOP_ANY)
			add_closure(b, out, set[i]);
		for (uint32_t e = node->first_edge; e; e = nfa->edges[e].next)
			if (nfa->edges[e].kind == EDGE_BYTE && nfa->edges[e].cls == CLASS_SLASH)
				add_closure(b, out, nfa->edges[e].target);
	}
}

/* Computes the transition row of @state. */
static int process_state(struct dfa_builder *b, struct step_scratch *s, uint32_t state)
{
	const struct nfa *nfa = b->nfa;
	uint32_t local = state - b->base;
	int64_t next;

	/* Gather the targets first: state_of() may move the set pool. */
	const uint32_t *set = b->set_pool + b->set_off[local];
	size_t n = b->set_len[local];

	s->wild.n = s->slash.n = s->n_lits = 0;
	new_stamp(b);
	for (size_t i = 0; i < n; i++) {
		const struct nfa_node *node = &nfa->nodes[set[i]];
		if (node->loop != LOOP_NONE)
			add_closure(b, &s->wild, set[i]);
		for (uint32_t e = node->first_edge; e; e = nfa->edges[e].next)
			if (nfa->edges[e].kind == EDGE_ANY)
				add_closure(b, &s->wild, nfa->edges[e].target);
	}
	new_stamp(b);
	slash_targets(b, set, n, &s->slash);
	for (size_t i = 0; i < n; i++) {
		for (uint32_t e = nfa->nodes[set[i]].first_edge; e; e = nfa->edges[e].next) {
			const struct nfa_edge *edge = &nfa->edges[e];
			if (edge->kind != EDGE_BYTE || edge->cls == CLASS_SLASH)
				continue;
			if (s->n_lits == s->lits_cap) {
				s->lits_cap = s->lits_cap ? 2 * s->lits_cap : 64;
				s->lits = sg_xrealloc(s->lits, s->lits_cap, sizeof(*s->lits));
			}
			s->lits[s->n_lits++] = (struct lit_step){edge->cls, edge->target};
		}
	}

	sort_nodes(s->wild.v, s->wild.n);
	next = state_of(b, s->wild.v, s->wild.n);
	if (next < 0)
		return (int)next;
	for (uint32_t cl = 0; cl < b->n_classes; cl++)
		s->row[cl] = (uint32_t)next;
	sort_nodes(s->slash.v, s->slash.n);
	next = state_of(b, s->slash.v, s->slash.n);
	if (next < 0)
		return (int)next;
	s->row[CLASS_SLASH] = (uint32_t)next;

	sort_lit_steps(s->lits, s->n_lits);
	for (size_t i = 0; i < s->n_lits;) {
		uint32_t cl = s->lits[i].cls;
		new_stamp(b);
		s->extra.n = 0;
		/* The wildcard targets are closed already; mark them so duplicates drop. */
		for (size_t w = 0; w < s->wild.n; w++)
			b->mark[s->wild.v[w]] = b->stamp;
		for (; i < s->n_lits && s->lits[i].cls == cl; i++)
			add_closure(b, &s->extra, s->lits[i].target);
		sort_nodes(s->extra.v, s->extra.n);
		merge_nodes(&s->wild, &s->extra, &s->set);
		next = state_of(b, s->set.v, s->set.n);
		if (next < 0)
			return (int)next;
		s->row[cl] = (uint32_t)next;
	}
	store_row(b->dfa, state, s->row);
	return 0;
}

/*
 * Room for @states more states, each table allocated once: as many states
 * as the NFA has nodes and a quarter more is what policies of names with
 * wildcards in their components take (13,136 for 12,619 nodes), where the
 * tables used to double from a few hundred states. Their copies, rehashes
 * and pages touched anew at each step took a quarter of such a build (3.3
 * against 2.4 ms with musl). A larger DFA still doubles them from there.
 */
static void reserve(struct dfa_builder *b, size_t states)
{
	struct sg_dfa *dfa = b->dfa;
	/*
	 * No more than the limit lets through, and no more than 16 MiB of
	 * 16-bit rows ahead: an untrusted policy of many patterns gets its
	 * "too complex", not an abort for memory it never touches.
	 */
	size_t row_bytes = (size_t)b->n_classes * sizeof(uint16_t), limit = SG_MAX_DFA_STATES;
	if (states > limit + 1 - dfa->n_states)
		states = limit + 1 - dfa->n_states;
	if (states > (16u << 20) / row_bytes)
		states = (16u << 20) / row_bytes;
	size_t want = dfa->n_states + states;

	if (want > b->states_cap) {
		b->states_cap = want;
		dfa->accept = sg_xrealloc(dfa->accept, want, sizeof(uint32_t));
		dfa->transitions =
		    sg_xrealloc(dfa->transitions, want * b->n_classes, sg_dfa_entry_size(dfa));
	}
	b->sets_cap = states;
	b->set_off = sg_xrealloc(b->set_off, states, sizeof(*b->set_off));
	b->set_len = sg_xrealloc(b->set_len, states, sizeof(*b->set_len));
	b->set_hash = sg_xrealloc(b->set_hash, states, sizeof(*b->set_hash));
	b->pool_cap = 4 * states; /* the sets hold about three nodes each */
	b->set_pool = sg_xrealloc(b->set_pool, b->pool_cap, sizeof(*b->set_pool));
	/* At most half full, a power of two: state_of masks its probes. */
	for (b->table_cap = 1024; b->table_cap < 2 * states; b->table_cap *= 2)
		;
	b->table = sg_xcalloc(b->table_cap, sizeof(*b->table));
}

/* Builds the DFA of @nfa into @dfa's tables; *@start is its start state. */
static int build_layer_dfa(struct sg_dfa *dfa, const struct nfa *nfa,
			   size_t *states_cap, uint32_t *start)
{
	struct dfa_builder b = {
	    .nfa = nfa,
	    .dfa = dfa,
	    .n_classes = dfa->n_classes,
	    .states_cap = *states_cap,
	    .base = dfa->n_states,
	};
	struct step_scratch s = {0};
	struct posbuf root = {0}, first = {0};
	int64_t st;
	int r = 0;

	*start = SG_DEAD_STATE;
	if (nfa->n_nodes <= 1)
		return 0;
	b.mark = sg_xcalloc(nfa->n_nodes, sizeof(*b.mark));
	s.row = sg_xcalloc(b.n_classes, sizeof(*s.row));
	reserve(&b, nfa->n_nodes + nfa->n_nodes / 4);

	/* Every pattern starts with the '/' of its first component: read the virtual one. */
	new_stamp(&b);
	add_closure(&b, &root, 0);
	new_stamp(&b);
	slash_targets(&b, root.v, root.n, &first);
	sort_nodes(first.v, first.n);
	st = state_of(&b, first.v, first.n);
	if (st < 0) {
		r = (int)st;
		goto out;
	}
	*start = (uint32_t)st;
	for (uint32_t state = b.base; state < dfa->n_states; state++) {
		r = process_state(&b, &s, state);
		if (r < 0)
			goto out;
	}
out:
	*states_cap = b.states_cap;
	free(root.v);
	free(first.v);
	scratch_free(&s);
	builder_free(&b);
	return r;
}

/* Bytes named literally by some pattern get a class each; '/' has its own; the rest share one. */
static void assign_byte_classes(const struct sg_dfa_input *in, struct sg_dfa *dfa)
{
	bool used[256] = {false};

	for (size_t k = 0; k < in->n; k++)
		for (const char *p = in->pattern[k]; *p; p++)
			used[(unsigned char)*p] = true;
	used['*'] = used['?'] = used['/'] = used[0] = false;
	memset(dfa->byte_class, CLASS_OTHER, sizeof(dfa->byte_class));
	dfa->byte_class['/'] = CLASS_SLASH;
	dfa->n_classes = 2;
	for (unsigned ch = 1; ch < 256; ch++)
		if (used[ch])
			dfa->byte_class[ch] = (uint8_t)dfa->n_classes++;
}

/*
 * Whether the columns hashed so far all differ ('/' apart, which is never
 * merged): columns whose first rows differ differ, whatever follows.
 */
static bool columns_all_differ(const uint64_t *hash, uint32_t n_classes)
{
	for (uint32_t cl = 0; cl < n_classes; cl++)
		for (uint32_t prev = 0; prev < cl; prev++)
			if (cl != CLASS_SLASH && prev != CLASS_SLASH && hash[prev] == hash[cl])
				return false;
	return true;
}

/*
 * Merges byte classes that every DFA state treats alike (identical columns of
 * the transition table) to keep rows short. '/' keeps its own class.
 */
static void merge_byte_classes(struct sg_dfa *dfa)
{
	uint32_t n_classes = dfa->n_classes, n_states = dfa->n_states;
	uint32_t map[256], n_new = 0, next_look = 256;
	uint64_t hash[256];
	bool kept[256];

	/*
	 * Row by row: a column's entries are a row apart, a cache miss each in a
	 * large table. Most policies' columns part within the first rows (looked
	 * at after 256, 512, 1,024... rows): then nothing merges, and the rest
	 * is not read (hashing all of a 10,000-rule policy's table was 3% of
	 * compiling it).
	 */
	memset(hash, 0, sizeof(hash));
	for (uint32_t s = 0; s < n_states; s++) {
		for (uint32_t cl = 0; cl < n_classes; cl++)
			hash[cl] = (hash[cl] ^ sg_dfa_next(dfa, s, cl)) * 0x100000001b3ull;
		if (s + 1 == next_look) {
			if (columns_all_differ(hash, n_classes))
				return;
			next_look *= 2; /* a table whose columns merge is looked at a few times */
		}
	}
	for (uint32_t cl = 0; cl < n_classes; cl++) {
		kept[cl] = true;
		for (uint32_t prev = 0; prev < cl && cl != CLASS_SLASH; prev++) {
			if (!kept[prev] || prev == CLASS_SLASH || hash[prev] != hash[cl])
				continue;
			bool same = true;
			for (uint32_t s = 0; s < n_states && same; s++)
				same = sg_dfa_next(dfa, s, cl) == sg_dfa_next(dfa, s, prev);
			if (same) {
				map[cl] = map[prev];
				kept[cl] = false;
				break;
			}
		}
		if (kept[cl])
			map[cl] = n_new++;
	}
	if (n_new == n_classes)
		return;

	/*
	 * Narrowed in place rather than into a second table as large: map[cl] <=
	 * cl and n_new < n_classes, so every entry moves down to a place already
	 * read, never onto one still to be read.
	 */
	for (uint32_t s = 0; s < n_states; s++)
		for (uint32_t cl = 0; cl < n_classes; cl++)
			set_next(dfa, (size_t)s * n_new + map[cl], sg_dfa_next(dfa, s, cl));
	dfa->transitions =
	    sg_xrealloc(dfa->transitions, (size_t)n_states * n_new, sg_dfa_entry_size(dfa));
	for (unsigned ch = 0; ch < 256; ch++)
		dfa->byte_class[ch] = (uint8_t)map[dfa->byte_class[ch]];
	dfa->n_classes = n_new;
}

void sg_dfa_input_add(struct sg_dfa_input *in, const char *pattern, uint32_t len, uint32_t rule)
{
	if (in->n == in->cap) {
		in->cap = in->cap ? 2 * in->cap : 64;
		in->pattern = sg_xrealloc(in->pattern, in->cap, sizeof(*in->pattern));
		in->len = sg_xrealloc(in->len, in->cap, sizeof(*in->len));
		in->rule = sg_xrealloc(in->rule, in->cap, sizeof(*in->rule));
	}
	in->pattern[in->n] = pattern;
	in->len[in->n] = len;
	in->rule[in->n] = rule;
	in->n++;
}

void sg_dfa_input_end_layer(struct sg_dfa_input *in)
{
	in->layer_end[in->n_layers++] = in->n;
}

void sg_dfa_input_free(struct sg_dfa_input *in)
{
	free(in->pattern);
	free(in->len);
	free(in->rule);
	memset(in, 0, sizeof(*in));
}

int sg_dfa_build(const struct sg_dfa_input *in, struct sg_dfa *dfa,
		 uint32_t *failed_layer)
{
	struct nfa nfa = {0};
	size_t states_cap = 1024;

	assign_byte_classes(in, dfa);
	dfa->transitions = sg_xcalloc(states_cap * dfa->n_classes, sizeof(uint16_t));
	dfa->accept = sg_xcalloc(states_cap, sizeof(uint32_t));
	dfa->accept[SG_DEAD_STATE] = SG_NO_RULE;
	dfa->n_states = 1;

	for (uint32_t l = 0; l < in->n_layers; l++) {
		const size_t first = l ? in->layer_end[l - 1] : 0;
		size_t bytes = 0;
		for (size_t k = first; k < in->layer_end[l]; k++)
			bytes += in->len[k] + 1;
		nfa_free(&nfa);
		nfa_reserve(&nfa, bytes);
		nfa_node(&nfa, LOOP_NONE); /* the root */
		for (size_t k = first; k < in->layer_end[l]; k++)
			nfa_add_pattern(&nfa, dfa->byte_class, in->pattern[k], in->rule[k]);
		int r = build_layer_dfa(dfa, &nfa, &states_cap, &dfa->start[l]);
		if (r < 0) {
			nfa_free(&nfa);
			*failed_layer = l;
			return r;
		}
	}
	nfa_free(&nfa);
	/* The tables grew by doubling: give back the rows no state took. */
	dfa->transitions = sg_xrealloc(dfa->transitions, (size_t)dfa->n_states * dfa->n_classes,
				       sg_dfa_entry_size(dfa));
	dfa->accept = sg_xrealloc(dfa->accept, dfa->n_states, sizeof(uint32_t));
	merge_byte_classes(dfa);
	return 0;
}

uint32_t sg_dfa_match(const struct sg_dfa *dfa, uint32_t layer, const char *name)
{
	if (layer >= SG_LAYERS_MAX || !dfa->transitions)
		return SG_NO_RULE;
	uint32_t state = dfa->start[layer];
	for (const unsigned char *p = (const unsigned char *)name; *p && state != SG_DEAD_STATE;
	     p++)
		state = sg_dfa_next(dfa, state, dfa->byte_class[*p]);
	return dfa->accept[state];
}

void sg_dfa_free(struct sg_dfa *dfa)
{
	free(dfa->transitions);
	free(dfa->accept);
	dfa->transitions = NULL;
	dfa->accept = NULL;
	dfa->n_states = 0;
	dfa->wide = false;
}
