// SPDX-License-Identifier: Apache-2.0
/*
 * Policy set -> the tables of bpf/sysctl_guard.h.
 *
 * Literal rules go into a sorted exact-name table. The pattern rules of each
 * layer become one DFA over byte classes, built by subset construction.
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
#include "compile.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "name.h"
#include "spare.h"
#include "thread.h"
#include "util.h"

#define CLASS_OTHER 0 /* bytes no pattern names, NUL included */
#define CLASS_SLASH 1

/* Where a pinned pair's rule came from, for messages. */
static const char pinned_origin[] = "linux.sysctl";

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
	sg_spare_put(nfa->nodes);
	sg_spare_put(nfa->edges);
	memset(nfa, 0, sizeof(*nfa));
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
	struct sg_compiled *c;
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
	sg_spare_put(b->set_pool);
	sg_spare_put(b->set_off);
	sg_spare_put(b->set_len);
	sg_spare_put(b->set_hash);
	sg_spare_put(b->table);
	sg_spare_put(b->mark);
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
	b->table = sg_xcalloc_probed(b->table_cap, sizeof(*b->table));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			table_insert(b, old[i]);
	sg_spare_put(old);
}

/* Whether the @n nodes at @a and @b are the same (musl's memcmp takes a byte at a time). */
static bool same_nodes(const uint32_t *a, const uint32_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* Bytes of one entry of c->transitions. */
static size_t entry_size(const struct sg_compiled *c)
{
	return c->wide ? sizeof(uint32_t) : sizeof(uint16_t);
}

static void set_next(struct sg_compiled *c, size_t i, uint32_t next)
{
	if (c->wide)
		((uint32_t *)c->transitions)[i] = next;
	else
		((uint16_t *)c->transitions)[i] = (uint16_t)next;
}

/* Row @state of the table: the next state for each class. */
static void store_row(struct sg_compiled *c, size_t state, const uint32_t *row)
{
	const uint32_t n = c->config.n_classes;

	if (c->wide) {
		memcpy((uint32_t *)c->transitions + state * n, row, n * sizeof(*row));
		return;
	}
	uint16_t *narrow = (uint16_t *)c->transitions + state * n;
	for (uint32_t cl = 0; cl < n; cl++)
		narrow[cl] = (uint16_t)row[cl];
}

void sg_dfa_next_states(const struct sg_compiled *c, size_t first, size_t n, uint32_t *out)
{
	if (c->wide) {
		memcpy(out, (const uint32_t *)c->transitions + first, n * sizeof(*out));
		return;
	}
	const uint16_t *narrow = (const uint16_t *)c->transitions + first;
	for (size_t i = 0; i < n; i++)
		out[i] = narrow[i];
}

/*
 * The table in 32-bit entries with room for @cap_rows rows, for a state
 * number 16 bits cannot hold: the @rows rows so far (made of smaller
 * numbers) are copied over; the others are written as their states are
 * processed.
 */
static void widen(struct sg_compiled *c, size_t rows, size_t cap_rows)
{
	uint32_t *wide = sg_xrealloc(NULL, cap_rows * c->config.n_classes, sizeof(*wide));

	sg_dfa_next_states(c, 0, rows * c->config.n_classes, wide);
	sg_spare_put(c->transitions);
	c->transitions = wide;
	c->wide = true;
}

/*
 * The DFA state of the sorted set @v, created (with its accept entry; its
 * row is filled when it is processed) if new. Returns the global state, or
 * 0 for the empty set, or -E2BIG beyond SG_MAX_DFA_STATES.
 */
static int64_t state_of(struct dfa_builder *b, const uint32_t *v, size_t n)
{
	struct sg_compiled *c = b->c;

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

	if (c->n_states >= SG_MAX_DFA_STATES)
		return -E2BIG;
	uint32_t s = c->n_states++, local = s - b->base;
	const bool grow = c->n_states > b->states_cap;
	if (grow) {
		/* Never past the limit: its rows would be allocated for nothing. */
		b->states_cap =
		    b->states_cap * 2 < SG_MAX_DFA_STATES ? b->states_cap * 2 : SG_MAX_DFA_STATES;
		c->accept = sg_xrealloc(c->accept, b->states_cap, sizeof(uint32_t));
	}
	if (s > UINT16_MAX && !c->wide)
		widen(c, s, b->states_cap);
	else if (grow)
		c->transitions =
		    sg_xrealloc(c->transitions, b->states_cap * b->n_classes, entry_size(c));
	c->accept[s] = set_accept(b->nfa, v, n);
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

	if (s->n_lits > 1)
		qsort(s->lits, s->n_lits, sizeof(*s->lits), cmp_lit_step);
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
	store_row(b->c, state, s->row);
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
	struct sg_compiled *c = b->c;
	/*
	 * No more than the limit lets through, and no more than 16 MiB of
	 * 16-bit rows ahead: an untrusted policy of many patterns gets its
	 * "too complex", not an abort for memory it never touches.
	 */
	size_t row_bytes = (size_t)b->n_classes * sizeof(uint16_t), limit = SG_MAX_DFA_STATES;
	if (states > limit + 1 - c->n_states)
		states = limit + 1 - c->n_states;
	if (states > (16u << 20) / row_bytes)
		states = (16u << 20) / row_bytes;
	size_t want = c->n_states + states;

	if (want > b->states_cap) {
		b->states_cap = want;
		c->accept = sg_xrealloc(c->accept, want, sizeof(uint32_t));
		c->transitions = sg_xrealloc(c->transitions, want * b->n_classes, entry_size(c));
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
	b->table = sg_xcalloc_probed(b->table_cap, sizeof(*b->table));
}

/* Builds the DFA of @nfa into c's tables; returns its start state. */
static int build_layer_dfa(struct sg_compiled *c, const struct nfa *nfa, size_t *states_cap,
			   uint32_t *start)
{
	struct dfa_builder b = {
	    .nfa = nfa,
	    .c = c,
	    .n_classes = c->config.n_classes,
	    .states_cap = *states_cap,
	    .base = c->n_states,
	};
	struct step_scratch s = {0};
	struct posbuf root = {0}, first = {0};
	int64_t st;
	int r = 0;

	*start = SG_DEAD_STATE;
	if (nfa->n_nodes <= 1)
		return 0;
	b.mark = sg_xcalloc_probed(nfa->n_nodes, sizeof(*b.mark));
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
	for (uint32_t state = b.base; state < c->n_states; state++) {
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
static void assign_byte_classes(const struct sg_policy_set *set, const char **patterns,
				const bool *literal, struct sg_config *cfg)
{
	bool used[256] = {false};
	size_t k = 0;

	for (size_t l = 0; l < set->n_layers; l++) {
		for (size_t i = 0; i < set->layers[l].n_rules; i++, k++) {
			if (literal[k])
				continue;
			const char *p = patterns[k];
			for (; *p; p++)
				used[(unsigned char)*p] = true;
		}
	}
	used['*'] = used['?'] = used['/'] = used[0] = false;
	memset(cfg->byte_class, CLASS_OTHER, sizeof(cfg->byte_class));
	cfg->byte_class['/'] = CLASS_SLASH;
	cfg->n_classes = 2;
	for (unsigned ch = 1; ch < 256; ch++)
		if (used[ch])
			cfg->byte_class[ch] = (uint8_t)cfg->n_classes++;
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
static void merge_byte_classes(struct sg_compiled *c)
{
	uint32_t n_classes = c->config.n_classes, n_states = c->n_states;
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
			hash[cl] = (hash[cl] ^ sg_dfa_next(c, s, cl)) * 0x100000001b3ull;
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
				same = sg_dfa_next(c, s, cl) == sg_dfa_next(c, s, prev);
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
			set_next(c, (size_t)s * n_new + map[cl], sg_dfa_next(c, s, cl));
	c->transitions = sg_xrealloc(c->transitions, (size_t)n_states * n_new, entry_size(c));
	for (unsigned ch = 0; ch < 256; ch++)
		c->config.byte_class[ch] = (uint8_t)map[c->config.byte_class[ch]];
	c->config.n_classes = n_new;
}

/*
 * The exact table is ordered by a hash of the name before the name itself:
 * names of one policy share long prefixes (net/ipv4/conf/eth12/...), and
 * sorting 10,000 of them by strcmp alone took milliseconds. Equal hashes
 * fall back to strcmp, so a collision costs a comparison, never a wrong
 * answer, and names made to collide cost no more than that sort. The hash
 * is unkeyed, because the order must be the same in every run (it is part of
 * the policy's digest, tables.c), and takes a word at a time: byte by byte,
 * hashing 9,000 names took a third of a millisecond.
 */
static uint64_t sg_exact_order(const char *name, size_t len)
{
	uint64_t h = len, word;
	size_t i = 0;

	for (; i + sizeof(word) <= len; i += sizeof(word)) {
		memcpy(&word, name + i, sizeof(word));
		h = sg_hash_mix(h, word);
	}
	if (i < len)
		h = sg_hash_mix(h, sg_load_short(name + i, len - i));
	return h;
}

/* By layer, order and name, without the rule: a lookup's key has none. */
static int cmp_exact_key(const struct sg_exact_name *x, const struct sg_exact_name *y)
{
	if (x->layer != y->layer)
		return (x->layer > y->layer) - (x->layer < y->layer);
	if (x->order != y->order)
		return (x->order > y->order) - (x->order < y->order);
	return strcmp(x->name, y->name);
}

/* Of equal names the first listed rule comes first. */
static int cmp_exact_name(const void *a, const void *b)
{
	const struct sg_exact_name *x = a, *y = b;
	int r = cmp_exact_key(x, y);
	if (r)
		return r;
	return (x->rule > y->rule) - (x->rule < y->rule);
}

static int cmp_rule_value(const void *a, const void *b)
{
	const struct sg_rule_value *x = a, *y = b;
	if (x->set != y->set)
		return (x->set > y->set) - (x->set < y->set);
	return strcmp(x->value, y->value);
}

static void compiled_reset(struct sg_compiled *c)
{
	sg_compiled_free(c);
}

#define _cleanup_compiled_ __attribute__((cleanup(compiled_reset)))

/*
 * Names a rule in a message: "ORIGIN: rules[I] \"NAME\"", or "linux.sysctl
 * \"NAME\"" for a pinned pair. Formatted only on error: one snprintf per rule
 * was a tenth of compiling.
 */
static const char *where_text(const struct sg_rule_origin *where, char buf[256])
{
	if (where->index == SIZE_MAX)
		snprintf(buf, 256, "linux.sysctl \"%s\"", where->name);
	else
		snprintf(buf, 256, "%s: rules[%zu] \"%s\"",
			 where->policy ? where->policy : "policy", where->index,
			 where->name ? where->name : "");
	return buf;
}

/* The decimal text a clamped field gets: the BPF program copies it. */
static void set_bound_text(struct sg_bound_text *b, int64_t v)
{
	int n = snprintf(b->text, sizeof(b->text), "%lld", (long long)v);
	b->len = (uint8_t)(n > 0 && (size_t)n < sizeof(b->text) ? n : 0);
}

/* A rule that may replace the value written has an entry in the texts table. */
static bool rule_has_text(const struct sg_rule *r)
{
	return r->rewrite || (r->n_ranges && r->on_violation == SG_VIOLATION_CLAMP);
}

/* The rule's entry in the texts table: its bounds in decimal, its rewrite value. */
static int fill_text(struct sg_rule_text *t, const struct sg_rule_entry *e, const struct sg_rule *r,
		     const struct sg_rule_origin *where, struct sg_err *err)
{
	char buf[256];
	size_t n = e->flags & SG_RULE_RANGE_ALL ? 1 : e->n_ranges;

	for (size_t f = 0; f < n; f++) {
		set_bound_text(&t->bound[f][0], r->ranges[f].min);
		set_bound_text(&t->bound[f][1], r->ranges[f].max);
	}
	if (!r->rewrite)
		return 0;
	size_t len = strlen(r->rewrite);
	if (len >= SG_VALUE_MAX)
		return sg_input_error(err,
				      "%s: the rewrite value is %zu bytes long; "
				      "sysctl-guard can write at most %d",
				      where_text(where, buf), len, SG_VALUE_MAX - 1);
	t->rewrite_len = (uint16_t)len;
	memcpy(t->rewrite, r->rewrite, len);
	return 0;
}

/*
 * Sequences stored once in one of the compiled arrays (the bounds, the
 * values), found by their hash. Open addressing, at most half full.
 */
struct sequence_index {
	uint32_t *first; /* 0: free; else 1 + the sequence's first index in its array */
	uint32_t *len;
	size_t mask;
};

static void sequence_index_init(struct sequence_index *ix, size_t n_sequences)
{
	size_t cap = 2;
	while (cap < 2 * n_sequences)
		cap *= 2;
	ix->first = sg_xcalloc(cap, sizeof(*ix->first));
	ix->len = sg_xcalloc(cap, sizeof(*ix->len));
	ix->mask = cap - 1;
}

static void sequence_index_free(struct sequence_index *ix)
{
	free(ix->first);
	free(ix->len);
}

/* Whether the stored sequence from @first on equals the @len items at @seq. */
typedef bool same_fn(const struct sg_compiled *c, uint32_t first, const void *seq, uint32_t len);

/*
 * The slot of the sequence @seq of @len items, of hash @h: the one that
 * holds it (*found), or the free one to store it in.
 */
static size_t sequence_slot(const struct sequence_index *ix, const struct sg_compiled *c,
			    uint64_t h, const void *seq, uint32_t len, same_fn *same, bool *found)
{
	size_t at;

	for (at = h & ix->mask; ix->first[at]; at = (at + 1) & ix->mask)
		if (ix->len[at] == len && same(c, ix->first[at] - 1, seq, len)) {
			*found = true;
			return at;
		}
	*found = false;
	return at;
}

static bool same_bounds(const struct sg_compiled *c, uint32_t first, const void *seq, uint32_t n)
{
	const struct sg_range *ranges = seq;
	for (uint32_t f = 0; f < n; f++)
		if (c->bounds[first + f].min != ranges[f].min ||
		    c->bounds[first + f].max != ranges[f].max)
			return false;
	return true;
}

/* The rules-table element of the bounds of @n fields, @ranges: added unless some rule has them. */
static uint32_t add_bounds(struct sg_compiled *c, struct sequence_index *ix,
			   const struct sg_range *ranges, uint32_t n)
{
	uint64_t h = n;
	bool found;

	for (uint32_t f = 0; f < n; f++)
		h = sg_hash_mix(sg_hash_mix(h, (uint64_t)ranges[f].min), (uint64_t)ranges[f].max);
	size_t at = sequence_slot(ix, c, h, ranges, n, same_bounds, &found);
	if (!found) {
		ix->first[at] = c->n_bounds + 1;
		ix->len[at] = n;
		for (uint32_t f = 0; f < n; f++)
			c->bounds[c->n_bounds++] =
			    (struct sg_field_bounds){ranges[f].min, ranges[f].max};
	}
	return c->config.n_rules + ix->first[at] - 1;
}

/* Fills the rule entry (and text) of a policy rule; checks what the tables cannot hold. */
static int fill_rule(struct sg_compiled *c, struct sequence_index *bounds, uint32_t rule,
		     const struct sg_rule *r, uint8_t layer, const struct sg_rule_origin *where,
		     struct sg_err *err)
{
	struct sg_rule_entry *e = &c->rules[rule];
	char buf[256];

	memset(e, 0, sizeof(*e));
	e->access = (uint8_t)r->access;
	e->on_violation = (uint8_t)r->on_violation;
	e->layer = layer;
	e->text = SG_NO_RULE;
	/* The parser rejects both (policy.c); the entry has room for one (bounds or value_set). */
	if (r->n_values && r->n_ranges)
		return sg_input_error(err, "%s: a rule with both values and a range",
				      where_text(where, buf));
	if (r->n_values)
		e->flags |= SG_RULE_VALUES;
	if (r->rewrite)
		e->flags |= SG_RULE_REWRITE;
	if (r->n_ranges) {
		e->flags |= SG_RULE_RANGE;
		if (!r->range_per_field) {
			e->flags |= SG_RULE_RANGE_ALL;
			e->n_ranges = 1;
		} else if (r->n_ranges > SG_FIELDS_MAX) {
			return sg_input_error(err,
					      "%s: %zu per-field ranges, more than the %d fields "
					      "sysctl-guard can check; give one [min, max] for all "
					      "fields instead",
					      where_text(where, buf), r->n_ranges, SG_FIELDS_MAX);
		} else {
			e->n_ranges = (uint8_t)r->n_ranges;
		}
		e->bounds = add_bounds(c, bounds, r->ranges,
				       e->flags & SG_RULE_RANGE_ALL ? 1 : (uint32_t)r->n_ranges);
	}
	if (!rule_has_text(r))
		return 0;
	e->text = c->n_texts++;
	return fill_text(&c->texts[e->text], e, r, where, err);
}

static int add_value(struct sg_rule_value *values, size_t *n, uint32_t rule, const char *value,
		     const struct sg_rule_origin *where, struct sg_err *err)
{
	char buf[256];

	size_t len = strlen(value);
	if (len >= SG_VALUE_MAX)
		return sg_input_error(err,
				      "%s: the value \"%.40s...\" is %zu bytes long; sysctl-guard "
				      "compares values of at most %d bytes",
				      where_text(where, buf), value, len, SG_VALUE_MAX - 1);
	/* its set is the rule's index until share_value_sets */
	values[(*n)++] = (struct sg_rule_value){.set = rule, .len = (uint32_t)len, .value = value};
	return 0;
}

/* @name has @len (< SG_NAME_MAX) bytes. */
static void add_exact(struct sg_exact_name *exact, size_t *n, uint32_t layer, const char *name,
		      size_t len, uint32_t rule)
{
	exact[(*n)++] = (struct sg_exact_name){.rule = rule,
					       .layer = (uint16_t)layer,
					       .len = (uint16_t)len,
					       .order = sg_exact_order(name, len),
					       .name = name};
}

/*
 * Sorts the exact names by cmp_exact_name: a merge sort, bottom up, of the
 * entries themselves. With qsort the comparisons were calls through a
 * pointer, and musl's copies every swap through memcpy: 30% of compiling
 * 10,000 rules (callgrind).
 */
static void sort_exact(struct sg_exact_name *v, size_t n)
{
	struct sg_exact_name *from = v, *to = sg_xrealloc(NULL, n, sizeof(*to)), *tmp = to;

	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				to[k++] =
				    cmp_exact_name(&from[j], &from[i]) < 0 ? from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		struct sg_exact_name *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	sg_spare_put(tmp);
}

/* Sorted for bsearch; of duplicate names the first listed rule wins. */
static void build_exact_table(struct sg_compiled *c)
{
	size_t kept = 0;

	sort_exact(c->exact, c->n_exact);
	for (size_t i = 0; i < c->n_exact; i++) {
		if (kept && cmp_exact_key(&c->exact[i], &c->exact[kept - 1]) == 0)
			continue;
		c->exact[kept++] = c->exact[i];
	}
	c->n_exact = kept;
}

static bool same_values(const struct sg_compiled *c, uint32_t first, const void *seq, uint32_t n)
{
	const struct sg_rule_value *values = seq;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(c->values[first + i].value, values[i].value) != 0)
			return false;
	return true;
}

static uint64_t hash_values(const struct sg_rule_value *values, uint32_t n)
{
	uint64_t h = n;
	/* FNV-1a over the values, each with its NUL */
	for (uint32_t i = 0; i < n; i++)
		for (const char *p = values[i].value;; p++) {
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
			if (!*p)
				break;
		}
	return sg_hash_mix(h, 0);
}

/*
 * Rules with the same values share one set of them (sg_rule_entry.value_set):
 * c->values, sorted by rule, keeps the first such rule's, numbered by set
 * in the order of their rules, so still sorted for bsearch.
 */
static void share_value_sets(struct sg_compiled *c, size_t n_valued_rules)
{
	struct sequence_index ix;
	size_t kept = 0;
	uint32_t n_sets = 0;

	sequence_index_init(&ix, n_valued_rules);
	for (size_t i = 0, end; i < c->n_values; i = end) {
		const uint32_t rule = c->values[i].set; /* the rule's index until here */
		for (end = i; end < c->n_values && c->values[end].set == rule; end++)
			;
		const uint32_t n = (uint32_t)(end - i);
		bool found;
		size_t at = sequence_slot(&ix, c, hash_values(&c->values[i], n), &c->values[i], n,
					  same_values, &found);
		if (!found) {
			memmove(&c->values[kept], &c->values[i], n * sizeof(*c->values));
			for (size_t k = kept; k < kept + n; k++)
				c->values[k].set = n_sets;
			ix.first[at] = (uint32_t)kept + 1;
			ix.len[at] = n;
			kept += n;
			n_sets++;
		}
		c->rules[rule].value_set = c->values[ix.first[at] - 1].set;
	}
	c->n_values = kept;
	sequence_index_free(&ix);
}

/* Sorted for bsearch, each pair once. */
static void build_values_table(struct sg_compiled *c)
{
	size_t kept = 0;

	qsort(c->values, c->n_values, sizeof(*c->values), cmp_rule_value);
	for (size_t i = 0; i < c->n_values; i++) {
		if (kept && cmp_rule_value(&c->values[kept - 1], &c->values[i]) == 0)
			continue;
		c->values[kept++] = c->values[i];
	}
	c->n_values = kept;
}

/*
 * The slash-form pattern of every policy rule, in global rule order: the
 * policy's own (the parser normalised it already), or normalised here for a
 * rule that has only a name. Only those few are copies, which the compiled
 * tables keep: the exact table points at them.
 */
struct rule_patterns {
	const char **of;
	uint32_t *len;	   /* strlen of each: measured here once */
	bool *literal;	   /* sg_pattern_is_literal of each: asked here once */
	char **normalised; /* the copies, to free */
	size_t n;
};

static void rule_patterns_free(struct rule_patterns *p)
{
	for (size_t i = 0; p->normalised && i < p->n; i++)
		free(p->normalised[i]);
	sg_spare_put(p->normalised);
	sg_spare_put(p->len);
	sg_spare_put(p->literal);
	sg_spare_put(p->of);
	memset(p, 0, sizeof(*p));
}

#define _cleanup_rule_patterns_ __attribute__((cleanup(rule_patterns_free)))

static int rule_pattern(struct rule_patterns *p, size_t g, const struct sg_rule *rule,
			const struct sg_rule_origin *where, struct sg_err *err)
{
	char pattern[SG_NAME_MAX], buf[256];

	if (rule->pattern) {
		size_t len = strlen(rule->pattern);
		if (len >= SG_NAME_MAX)
			return sg_input_error(err, "%s: the name is longer than %d characters",
					      where_text(where, buf), SG_NAME_MAX - 1);
		p->of[g] = rule->pattern;
		p->len[g] = (uint32_t)len;
		return 0;
	}
	if (sg_name_normalise(rule->name ? rule->name : "", pattern, sizeof(pattern), err) < 0) {
		sg_err_prefix(err, "%s", where_text(where, buf));
		return -EINVAL;
	}
	p->normalised[g] = sg_xstrdup(pattern);
	p->of[g] = p->normalised[g];
	p->len[g] = (uint32_t)strlen(pattern);
	return 0;
}

/* Where rules[@i] of @p came from, named as written. */
static struct sg_rule_origin policy_rule_origin(const struct sg_policy *p, size_t i)
{
	const struct sg_rule *rule = &p->rules[i];
	return (struct sg_rule_origin){p->origin, i, rule->name ? rule->name : rule->pattern};
}

/* The slash form of every policy rule (validated here), in global rule order. */
static int collect_patterns(const struct sg_policy_set *set, size_t n_policy_rules,
			    struct rule_patterns *patterns, struct sg_err *err)
{
	patterns->n = n_policy_rules;
	patterns->of = sg_xcalloc(n_policy_rules, sizeof(*patterns->of));
	patterns->normalised = sg_xcalloc(n_policy_rules, sizeof(*patterns->normalised));
	patterns->len = sg_xcalloc(n_policy_rules, sizeof(*patterns->len));
	patterns->literal = sg_xcalloc(n_policy_rules, sizeof(*patterns->literal));
	for (size_t l = 0, g = 0; l < set->n_layers; l++) {
		const struct sg_policy *p = &set->layers[l];
		for (size_t i = 0; i < p->n_rules; i++, g++) {
			const struct sg_rule *rule = &p->rules[i];
			const struct sg_rule_origin where = policy_rule_origin(p, i);
			int r = rule_pattern(patterns, g, rule, &where, err);
			if (r < 0)
				return r;
			patterns->literal[g] =
			    sg_pattern_is_literal_n(patterns->of[g], patterns->len[g]);
		}
	}
	return 0;
}

/* One DFA per layer over its wildcard patterns, end to end; state 0 is the dead state. */
static int build_dfa(const struct sg_policy_set *set, const struct rule_patterns *patterns,
		     struct sg_compiled *c, struct sg_err *err)
{
	struct nfa nfa = {0};
	size_t states_cap = 1024;

	assign_byte_classes(set, patterns->of, patterns->literal, &c->config);
	c->transitions = sg_xcalloc(states_cap * c->config.n_classes, sizeof(uint16_t));
	c->accept = sg_xcalloc(states_cap, sizeof(uint32_t));
	c->accept[SG_DEAD_STATE] = SG_NO_RULE;
	c->n_states = 1;

	for (size_t l = 0, g = 0; l < set->n_layers; l++) {
		const struct sg_policy *p = &set->layers[l];
		nfa_free(&nfa);
		nfa_node(&nfa, LOOP_NONE); /* the root */
		for (size_t i = 0; i < p->n_rules; i++, g++)
			if (!patterns->literal[g])
				nfa_add_pattern(&nfa, c->config.byte_class, patterns->of[g],
						(uint32_t)g);
		int r = build_layer_dfa(c, &nfa, &states_cap, &c->config.layers[l].dfa_start);
		if (r < 0) {
			nfa_free(&nfa);
			return sg_input_error(err,
					      "%s: policy too complex: the patterns need more than "
					      "%d DFA states; use fewer '*'/'**' patterns",
					      p->origin ? p->origin : "policy", SG_MAX_DFA_STATES);
		}
	}
	nfa_free(&nfa);
	/* The tables grew by doubling: give back the rows no state took. */
	c->transitions =
	    sg_xrealloc(c->transitions, (size_t)c->n_states * c->config.n_classes, entry_size(c));
	c->accept = sg_xrealloc(c->accept, c->n_states, sizeof(uint32_t));
	merge_byte_classes(c);
	return 0;
}

/*
 * A policy with this many patterns has its DFA built by a second thread
 * while the first compiles the rules: 1,000 patterns' DFA took 2.4 to 2.7
 * ms here and the rest 1.1 to 1.3, against some 0.1 ms to start a thread.
 */
#define DFA_HELPER_MIN_PATTERNS 256

struct dfa_job {
	const struct sg_policy_set *set;
	const struct rule_patterns *patterns;
	struct sg_compiled *c; /* the DFA's fields only: the rules' are the other thread's */
	struct sg_err err;
	int r;
};

static void *build_dfa_job(void *arg)
{
	struct dfa_job *job = arg;
	job->r = build_dfa(job->set, job->patterns, job->c, &job->err);
	return NULL;
}

static size_t count_wildcards(const struct rule_patterns *p)
{
	size_t n = 0;
	for (size_t g = 0; g < p->n; g++)
		n += !p->literal[g];
	return n;
}

/*
 * The policy rules' entries, texts and values, in layer order; the literal
 * ones go into the exact table too.
 */
static int compile_policy_rules(const struct sg_policy_set *set,
				const struct rule_patterns *patterns, struct sg_compiled *c,
				struct sequence_index *bounds, struct sg_err *err)
{
	for (size_t l = 0, g = 0; l < set->n_layers; l++) {
		const struct sg_policy *p = &set->layers[l];

		c->config.layers[l].mode = (uint8_t)p->mode;
		c->config.layers[l].default_access = (uint8_t)p->default_access;
		for (size_t i = 0; i < p->n_rules; i++, g++) {
			const struct sg_rule *rule = &p->rules[i];
			const struct sg_rule_origin where = policy_rule_origin(p, i);
			int r = fill_rule(c, bounds, (uint32_t)g, rule, (uint8_t)l, &where, err);
			if (r < 0)
				return r;
			c->origins[g] = where;
			for (size_t v = 0; v < rule->n_values; v++) {
				r = add_value(c->values, &c->n_values, (uint32_t)g, rule->values[v],
					      &where, err);
				if (r < 0)
					return r;
			}
			/* Not rule->is_literal: the exact table and the DFA must split alike. */
			if (patterns->literal[g])
				add_exact(c->exact, &c->n_exact, (uint32_t)l, patterns->of[g],
					  patterns->len[g], (uint32_t)g);
		}
	}
	return 0;
}

/*
 * One rule per pinned name, after the policy rules: read-write, exactly its
 * values. @pinned_rule maps each pair to its rule among the pinned ones.
 */
static int compile_pinned(const struct sg_policy_set *set, const uint32_t *pinned_rule,
			  uint32_t first, struct sg_compiled *c, struct sg_err *err)
{
	char buf[256];
	uint32_t g = first;

	for (size_t i = 0; i < set->n_pinned; i++) {
		const struct sg_sysctl_pair *pair = &set->pinned[i];
		uint32_t rule = first + pinned_rule[i];
		const struct sg_rule_origin where = {pinned_origin, SIZE_MAX, pair->name};

		size_t len = strlen(pair->name);
		if (len >= SG_NAME_MAX)
			return sg_input_error(err, "%s: the name is longer than %d characters",
					      where_text(&where, buf), SG_NAME_MAX - 1);
		if (rule == g) {
			struct sg_rule_entry *e = &c->rules[g];
			e->access = SG_ACCESS_READ_WRITE;
			e->on_violation = SG_VIOLATION_DENY;
			e->flags = SG_RULE_VALUES;
			e->layer = SG_PINNED_LAYER;
			e->text = SG_NO_RULE;
			c->origins[g] = where;
			add_exact(c->exact, &c->n_exact, SG_PINNED_LAYER, pair->name, len, g);
			g++;
		}
		int r = add_value(c->values, &c->n_values, rule, pair->value ? pair->value : "",
				  &where, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Pairs of the same name become one rule whose values are all of them.
 * Quadratic, but over the few linux.sysctl entries of one config.json.
 * Returns each pair's rule among the pinned ones; *n: how many rules.
 */
static uint32_t *group_pinned(const struct sg_policy_set *set, size_t *n)
{
	uint32_t *pinned_rule = sg_xcalloc(set->n_pinned, sizeof(*pinned_rule));

	*n = 0;
	for (size_t i = 0; i < set->n_pinned; i++) {
		size_t j = 0;
		while (j < i && strcmp(set->pinned[j].name, set->pinned[i].name) != 0)
			j++;
		pinned_rule[i] = j < i ? pinned_rule[j] : (uint32_t)(*n)++;
	}
	return pinned_rule;
}

/*
 * The DFA is built before the rule tables exist: it is the largest step, and
 * what it needs while building is freed before they are made.
 */
int sg_compile(const struct sg_policy_set *set, struct sg_compiled *out, struct sg_err *err)
{
	return sg_compile_keyed(set, NULL, out, err);
}

int sg_compile_keyed(const struct sg_policy_set *set, const struct sg_siphash *key_start,
		     struct sg_compiled *out, struct sg_err *err)
{
	_cleanup_compiled_ struct sg_compiled c = {0};
	_cleanup_rule_patterns_ struct rule_patterns patterns = {0};
	_cleanup_free_ uint32_t *pinned_rule = NULL;
	size_t n_policy_rules = 0, n_values = 0, n_valued = 0, n_pinned_rules = 0, n_texts = 0,
	       n_ranged = 0, n_bounds = 0;
	struct sequence_index bounds;
	int r;

	memset(out, 0, sizeof(*out));
	if (set->n_layers > SG_LAYERS_MAX)
		return sg_input_error(err, "%zu policy layers; sysctl-guard composes at most %d",
				      set->n_layers, SG_LAYERS_MAX);
	for (size_t l = 0; l < set->n_layers; l++) {
		n_policy_rules += set->layers[l].n_rules;
		for (size_t i = 0; i < set->layers[l].n_rules; i++) {
			const struct sg_rule *rule = &set->layers[l].rules[i];
			n_values += rule->n_values;
			n_valued += rule->n_values > 0;
			n_texts += rule_has_text(rule);
			n_ranged += rule->n_ranges > 0;
			n_bounds +=
			    rule->n_ranges; /* at most SG_FIELDS_MAX each: fill_rule checks */
		}
	}
	pinned_rule = group_pinned(set, &n_pinned_rules);
	if (n_policy_rules + n_pinned_rules > SG_MAX_RULES)
		return sg_input_error(err,
				      "%zu rules; sysctl-guard compiles at most %d: merge rules "
				      "with patterns (net.ipv4.conf.*.rp_filter)",
				      n_policy_rules + n_pinned_rules, SG_MAX_RULES);
	c.config.n_layers = (uint32_t)set->n_layers;
	c.config.n_rules = (uint32_t)(n_policy_rules + n_pinned_rules);
	c.config.has_pinned = n_pinned_rules > 0;

	if ((r = collect_patterns(set, n_policy_rules, &patterns, err)) < 0)
		return r;
	struct dfa_job dfa = {.set = set, .patterns = &patterns, .c = &c};
	pthread_t helper;
	bool helped = count_wildcards(&patterns) >= DFA_HELPER_MIN_PATTERNS &&
		      sg_thread_start(&helper, build_dfa_job, &dfa) == 0;
	if (!helped && (r = build_dfa(set, &patterns, &c, err)) < 0)
		return r;

	c.rules = sg_xcalloc(c.config.n_rules, sizeof(*c.rules));
	c.origins = sg_xcalloc(c.config.n_rules, sizeof(*c.origins));
	c.texts = sg_xcalloc(n_texts, sizeof(*c.texts));
	c.bounds = sg_xcalloc(n_bounds ? n_bounds : 1, sizeof(*c.bounds));
	c.values = sg_xcalloc(n_values + set->n_pinned, sizeof(*c.values));
	c.exact = sg_xcalloc(c.config.n_rules, sizeof(*c.exact));
	sequence_index_init(&bounds, n_ranged);
	struct sg_err rules_err = {0};
	r = compile_policy_rules(set, &patterns, &c, &bounds, &rules_err);
	sequence_index_free(&bounds);
	if (r == 0)
		r = compile_pinned(set, pinned_rule, (uint32_t)n_policy_rules, &c, &rules_err);
	if (r == 0) {
		build_exact_table(&c);
		build_values_table(&c);
		share_value_sets(&c, n_valued + n_pinned_rules);
		if (key_start) { /* while the DFA is built, when it has a thread */
			c.has_key_head = true;
			c.key_from = c.key_head = *key_start;
			sg_compiled_hash_rules(&c, &c.key_head);
		}
	}
	if (helped) {
		pthread_join(helper, NULL);
		if (dfa.r < 0) /* told first, as when the DFA was built first */
			return sg_err_copy(err, &dfa.err), dfa.r;
	}
	if (r < 0)
		return sg_err_copy(err, &rules_err), r;
	for (uint32_t i = 0; i < c.config.n_rules; i++)
		c.rule_names_bytes += (c.origins[i].name ? strlen(c.origins[i].name) : 0) + 1;

	c.dfa_patterns = sg_xcalloc(patterns.n ? patterns.n : 1, sizeof(*c.dfa_patterns));
	for (size_t g = 0; g < patterns.n; g++)
		if (!patterns.literal[g])
			c.dfa_patterns[g] = patterns.of[g];
	c.name_copies = SG_TAKE(patterns.normalised);
	c.n_name_copies = patterns.n;
	*out = c;
	memset(&c, 0, sizeof(c));
	rule_patterns_free(&patterns);
	/* The tables are made of what is compiled: the blocks the compiler gave back go. */
	sg_spare_release();
	return 0;
}

size_t sg_compiled_patterns_never_winning(const struct sg_compiled *c, bool *never)
{
	size_t n = 0;

	for (size_t g = 0; g < c->n_name_copies; g++)
		never[g] = c->dfa_patterns && c->dfa_patterns[g];
	/* Every state is reached by some name, and its accept entry is that name's winner. */
	for (uint32_t s = 0; c->accept && s < c->n_states; s++)
		if (c->accept[s] < c->n_name_copies)
			never[c->accept[s]] = false;
	for (size_t g = 0; g < c->n_name_copies; g++)
		n += never[g];
	return n;
}

/* How many items a section of the key's stream has, before them: no two policies' streams alike. */
static void hash_count(struct sg_siphash *h, size_t n)
{
	const uint64_t count = n;
	sg_siphash_update(h, &count, sizeof(count));
}

void sg_compiled_hash_rest(const struct sg_compiled *c, const uint8_t *build_id,
			   size_t build_id_len, struct sg_siphash *h)
{
	const uint64_t id_len = build_id_len;

	sg_siphash_update(h, &c->config, sizeof(c->config));
	sg_siphash_update(h, &id_len, sizeof(id_len));
	if (id_len) {
		size_t n_patterns = 0;
		for (uint32_t i = 0; i < c->n_name_copies; i++)
			n_patterns += c->dfa_patterns[i] != NULL;
		sg_siphash_update(h, build_id, id_len);
		hash_count(h, n_patterns);
		for (uint32_t i = 0; i < c->n_name_copies; i++) {
			if (!c->dfa_patterns[i])
				continue;
			sg_siphash_update(h, &i, sizeof(i));
			sg_siphash_update(h, c->dfa_patterns[i], strlen(c->dfa_patterns[i]) + 1);
		}
	} else {
		sg_siphash_update(h, &c->wide, sizeof(c->wide));
		sg_siphash_update(h, c->transitions,
				  (size_t)c->n_states * c->config.n_classes * entry_size(c));
		sg_siphash_update(h, c->accept, (size_t)c->n_states * sizeof(uint32_t));
	}
}

void sg_compiled_hash_rules(const struct sg_compiled *c, struct sg_siphash *h)
{
	sg_siphash_update(h, c->rules, (size_t)c->config.n_rules * sizeof(*c->rules));
	hash_count(h, c->n_bounds);
	sg_siphash_update(h, c->bounds, (size_t)c->n_bounds * sizeof(*c->bounds));
	hash_count(h, c->n_texts);
	sg_siphash_update(h, c->texts, (size_t)c->n_texts * sizeof(*c->texts));
	hash_count(h, c->n_exact);
	for (size_t i = 0; i < c->n_exact; i++) {
		sg_siphash_update(h, &c->exact[i].layer, sizeof(c->exact[i].layer));
		sg_siphash_update(h, &c->exact[i].rule, sizeof(c->exact[i].rule));
		sg_siphash_update(h, c->exact[i].name, c->exact[i].len + 1);
	}
	hash_count(h, c->n_values);
	for (size_t i = 0; i < c->n_values; i++) {
		sg_siphash_update(h, &c->values[i].set, sizeof(c->values[i].set));
		sg_siphash_update(h, c->values[i].value, c->values[i].len + 1);
	}
	for (uint32_t i = 0; i < c->config.n_rules; i++) {
		const uint8_t named = c->origins[i].name != NULL;
		sg_siphash_update(h, &named, sizeof(named));
		if (named)
			sg_siphash_update(h, c->origins[i].name, strlen(c->origins[i].name) + 1);
	}
}

/*
 * The rules first: sg_compile_keyed hashes them while the DFA is built, and
 * the config, which the DFA's byte classes are part of, after.
 */
void sg_compiled_hash(const struct sg_compiled *c, const uint8_t *build_id, size_t build_id_len,
		      struct sg_siphash *h)
{
	sg_compiled_hash_rules(c, h);
	sg_compiled_hash_rest(c, build_id, build_id_len, h);
}

void sg_compiled_free(struct sg_compiled *compiled)
{
	if (!compiled)
		return;
	free(compiled->transitions);
	free(compiled->accept);
	free(compiled->rules);
	free(compiled->origins);
	free(compiled->bounds);
	free(compiled->texts);
	free(compiled->exact);
	free(compiled->values);
	for (size_t i = 0; compiled->name_copies && i < compiled->n_name_copies; i++)
		free(compiled->name_copies[i]);
	free(compiled->name_copies);
	free(compiled->dfa_patterns);
	memset(compiled, 0, sizeof(*compiled));
}

uint32_t sg_compiled_exact(const struct sg_compiled *c, uint32_t layer, const char *name)
{
	const size_t len = strlen(name);
	if (len >= SG_NAME_MAX || layer > UINT16_MAX)
		return SG_NO_RULE; /* no exact name is that long, no layer that high */
	const struct sg_exact_name key = {.rule = 0,
					  .layer = (uint16_t)layer,
					  .len = (uint16_t)len,
					  .order = sg_exact_order(name, len),
					  .name = name};

	/* Not by cmp_exact_name, which orders equal names by rule: they are unique here. */
	size_t lo = 0, hi = c->n_exact;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = cmp_exact_key(&c->exact[mid], &key);
		if (r == 0)
			return c->exact[mid].rule;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SG_NO_RULE;
}

bool sg_compiled_has_value(const struct sg_compiled *c, uint32_t rule, const char *normalised)
{
	if (rule >= c->config.n_rules || !(c->rules[rule].flags & SG_RULE_VALUES))
		return false;
	const struct sg_rule_value key = {.set = c->rules[rule].value_set,
					  .len = (uint32_t)strlen(normalised),
					  .value = normalised};
	return bsearch(&key, c->values, c->n_values, sizeof(key), cmp_rule_value) != NULL;
}

uint32_t sg_compiled_match_pattern(const struct sg_compiled *c, uint32_t layer, const char *name)
{
	if (layer >= c->config.n_layers || !c->transitions)
		return SG_NO_RULE;
	uint32_t state = c->config.layers[layer].dfa_start;
	for (const unsigned char *p = (const unsigned char *)name; *p && state != SG_DEAD_STATE;
	     p++)
		state = sg_dfa_next(c, state, c->config.byte_class[*p]);
	return c->accept[state];
}
