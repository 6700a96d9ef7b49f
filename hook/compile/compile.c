// SPDX-License-Identifier: Apache-2.0
/*
 * Policy set -> the tables of bpf/sysctl_guard.h.
 *
 * Literal rules go into a sorted exact-name table. The pattern rules of each
 * layer become one DFA over byte classes (dfa.c).
 */
#include "compile/compile.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "policy/name.h"
#include "compile/dfa.h"

/* Where a pinned pair's rule came from, for messages. */
static const char pinned_origin[] = "linux.sysctl";

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
	if (r->allow_host_namespace)
		e->flags |= SG_RULE_HOST_NAMESPACE;
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
					      where_text(where, buf), (size_t)r->n_ranges,
					      SG_FIELDS_MAX);
		} else {
			e->n_ranges = r->n_ranges;
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
 * The end of passes that went back and forth between @v and @tmp: the
 * sorted names, at @from, are put in @v, and @tmp is freed.
 */
static void passes_done(struct sg_exact_name *v, const struct sg_exact_name *from,
			struct sg_exact_name *tmp, size_t n)
{
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
}

/*
 * Sorts @n exact names by cmp_exact_name: a merge sort, bottom up, of the
 * entries themselves. With qsort the comparisons were calls through a
 * pointer, and musl's copies every swap through memcpy.
 */
static void merge_sort_exact(struct sg_exact_name *v, size_t n)
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
	passes_done(v, from, tmp, n);
}

#define RADIX_BITS   11
#define RADIX_PASSES 4 /* the high 33 bits of the order, then the layer (at most 0xff) */
#define RADIX_SHIFT  (64 - (RADIX_PASSES - 1) * RADIX_BITS)

static uint32_t radix_digit(const struct sg_exact_name *e, int pass)
{
	if (pass == RADIX_PASSES - 1)
		return e->layer;
	return (uint32_t)(e->order >> (RADIX_SHIFT + pass * RADIX_BITS)) & ((1u << RADIX_BITS) - 1);
}

/* Whether @a and @b fall in one run of the radix passes: one layer, the same high bits. */
static bool same_run(const struct sg_exact_name *a, const struct sg_exact_name *b)
{
	return a->layer == b->layer && a->order >> RADIX_SHIFT == b->order >> RADIX_SHIFT;
}

/*
 * The exact names by cmp_exact_name, whose order is that of their layer and
 * hash but for names whose hashes are equal: by layer and the hash's high
 * 33 bits, eleven bits a pass (a radix sort, which keeps the order of equal
 * keys: the rules' own), then each run of one layer and those bits by the
 * merge sort (of 9,000 names, nearly every run is one). The merge sort
 * alone took 0.67 ms of 9,000 names, most of it comparisons that went
 * either way at random, each a mispredicted branch; names made to share a
 * hash cost that merge sort, no more.
 */
void sg_exact_names_sort(struct sg_exact_name *v, size_t n)
{
	/* A few names: their counts (32 KiB of fresh pages) would cost more than they save */
	if (n < 1024) {
		merge_sort_exact(v, n);
		return;
	}
	uint32_t(*count)[1u << RADIX_BITS] = sg_xcalloc(RADIX_PASSES, sizeof(*count));
	struct sg_exact_name *from = v, *to = sg_xrealloc(NULL, n, sizeof(*to)), *tmp = to;

	for (size_t i = 0; i < n; i++)
		for (int pass = 0; pass < RADIX_PASSES; pass++)
			count[pass][radix_digit(&v[i], pass)]++;
	for (int pass = 0; pass < RADIX_PASSES; pass++) {
		uint32_t *c = count[pass], sum = 0;
		if (c[radix_digit(&from[0], pass)] == n)
			continue; /* one digit for all: nothing moves */
		for (size_t d = 0; d < (1u << RADIX_BITS); d++) {
			uint32_t k = c[d];
			c[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			to[c[radix_digit(&from[i], pass)]++] = from[i];
		struct sg_exact_name *t = from;
		from = to;
		to = t;
	}
	passes_done(v, from, tmp, n);
	free(count);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && same_run(&v[end], &v[i]); end++)
			;
		if (end - i > 1)
			merge_sort_exact(v + i, end - i);
	}
}

/* Sorted for bsearch; of duplicate names the first listed rule wins. */
static void build_exact_table(struct sg_compiled *c)
{
	size_t kept = 0;

	sg_exact_names_sort(c->exact, c->n_exact);
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

/*
 * Sorts the values by rule, then value. They come in rule order, but for
 * linux.sysctl's pairs (compile_pinned): then each rule's few values are
 * put in order where they are (qsort of 7,500 values, each compare a call
 * of strcmp, took a tenth of a millisecond), and all of them otherwise.
 */
static void sort_values(struct sg_rule_value *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i].set < v[i - 1].set) {
			qsort(v, n, sizeof(*v), cmp_rule_value);
			return;
		}
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && v[end].set == v[i].set; end++)
			;
		if (end - i > 8) {
			qsort(v + i, end - i, sizeof(*v), cmp_rule_value);
			continue;
		}
		for (size_t k = i + 1; k < end; k++) { /* insertion: a rule has a few */
			struct sg_rule_value x = v[k];
			size_t j = k;
			for (; j > i && strcmp(v[j - 1].value, x.value) > 0; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
}

/* Sorted for bsearch, each pair once. */
static void build_values_table(struct sg_compiled *c)
{
	size_t kept = 0;

	sort_values(c->values, c->n_values);
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
	free(p->normalised);
	free(p->len);
	free(p->literal);
	free(p->of);
	memset(p, 0, sizeof(*p));
}

#define _cleanup_rule_patterns_ __attribute__((cleanup(rule_patterns_free)))

static int rule_pattern(struct rule_patterns *p, size_t g, const struct sg_rule *rule,
			const struct sg_rule_origin *where, struct sg_err *err)
{
	char pattern[SG_NAME_MAX], buf[256];

	if (rule->pattern) {
		size_t len = rule->name_len ? rule->name_len : strlen(rule->pattern);
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
	const char *name = rule->name ? rule->name : rule->pattern;
	const size_t len = rule->name_len ? rule->name_len : name ? strlen(name) : 0;
	return (struct sg_rule_origin){p->origin, i, name, len};
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
			/* The parser found it of the same pattern (name_len: a parsed rule) */
			patterns->literal[g] =
			    rule->name_len && rule->pattern
				? rule->is_literal
				: sg_pattern_is_literal_n(patterns->of[g], patterns->len[g]);
		}
	}
	return 0;
}

/* What the DFA of @set is built from: its wildcard patterns, layer by layer. */
static void dfa_input_of(const struct sg_policy_set *set, const struct rule_patterns *patterns,
			 struct sg_dfa_input *in)
{
	for (size_t l = 0, g = 0; l < set->n_layers; l++) {
		for (size_t i = 0; i < set->layers[l].n_rules; i++, g++)
			if (!patterns->literal[g])
				sg_dfa_input_add(in, patterns->of[g], patterns->len[g],
						 (uint32_t)g);
		sg_dfa_input_end_layer(in);
	}
}

#define _cleanup_dfa_input_ __attribute__((cleanup(sg_dfa_input_free)))

/* One DFA per layer over its wildcard patterns, end to end; state 0 is the dead state. */
static int build_dfa(const struct sg_policy_set *set, const struct sg_dfa_input *in,
		     struct sg_dfa *dfa, struct sg_err *err)
{
	uint32_t layer = 0;

	if (sg_dfa_build(in, dfa, &layer) < 0) {
		const char *origin = set->layers[layer].origin;
		return sg_input_error(err,
				      "%s: policy too complex: the patterns need more than "
				      "%d DFA states; use fewer '*'/'**' patterns",
				      origin ? origin : "policy", SG_MAX_DFA_STATES);
	}
	return 0;
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
		const size_t len = strlen(pair->name);
		const struct sg_rule_origin where = {pinned_origin, SIZE_MAX, pair->name, len};

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

/* What the program reads of the DFA in a policy's config: its byte classes and start states. */
static void config_dfa(struct sg_config *config, const struct sg_dfa *dfa)
{
	config->n_classes = dfa->n_classes;
	memcpy(config->byte_class, dfa->byte_class, sizeof(config->byte_class));
	for (size_t l = 0; l < SG_LAYERS_MAX; l++)
		config->layers[l].dfa_start = dfa->start[l];
}

/*
 * The DFA is built before the rule tables exist: it is the largest step, and
 * what it needs while building is freed before they are made.
 */
int sg_compile(const struct sg_policy_set *set, struct sg_compiled *out, struct sg_err *err)
{
	_cleanup_compiled_ struct sg_compiled c = {0};
	_cleanup_rule_patterns_ struct rule_patterns patterns = {0};
	_cleanup_dfa_input_ struct sg_dfa_input dfa_in = {0};
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
	dfa_input_of(set, &patterns, &dfa_in);
	if ((r = build_dfa(set, &dfa_in, &c.dfa, err)) < 0)
		return r;

	c.rules = sg_xcalloc(c.config.n_rules, sizeof(*c.rules));
	c.origins = sg_xcalloc(c.config.n_rules, sizeof(*c.origins));
	c.texts = sg_xcalloc(n_texts, sizeof(*c.texts));
	c.bounds = sg_xcalloc(n_bounds ? n_bounds : 1, sizeof(*c.bounds));
	c.values = sg_xcalloc(n_values + set->n_pinned, sizeof(*c.values));
	c.exact = sg_xcalloc(c.config.n_rules, sizeof(*c.exact));
	sequence_index_init(&bounds, n_ranged);
	r = compile_policy_rules(set, &patterns, &c, &bounds, err);
	sequence_index_free(&bounds);
	if (r == 0)
		r = compile_pinned(set, pinned_rule, (uint32_t)n_policy_rules, &c, err);
	if (r < 0)
		return r;
	build_exact_table(&c);
	build_values_table(&c);
	share_value_sets(&c, n_valued + n_pinned_rules);
	config_dfa(&c.config, &c.dfa);
	for (uint32_t i = 0; i < c.config.n_rules; i++)
		c.rule_names_bytes += c.origins[i].name_len + 1;

	c.dfa_patterns = sg_xcalloc(patterns.n ? patterns.n : 1, sizeof(*c.dfa_patterns));
	for (size_t g = 0; g < patterns.n; g++)
		if (!patterns.literal[g])
			c.dfa_patterns[g] = patterns.of[g];
	c.name_copies = SG_TAKE(patterns.normalised);
	c.n_name_copies = patterns.n;
	*out = c;
	memset(&c, 0, sizeof(c));
	rule_patterns_free(&patterns);
	return 0;
}

/* Some layer of @compiled is in audit mode. */
static bool compiled_audits(const struct sg_compiled *compiled)
{
	for (uint32_t i = 0; i < compiled->config.n_layers && i < SG_LAYERS_MAX; i++)
		if (compiled->config.layers[i].mode == SG_MODE_AUDIT)
			return true;
	return false;
}

void sg_fit_to_kernel(struct sg_compiled *compiled, bool rewrite_works)
{
	compiled->config.rewrite_works = rewrite_works;
	/* Audit layers report every write. */
	compiled->config.audit_events = compiled_audits(compiled);
	if (rewrite_works)
		return;
	for (uint32_t i = 0; i < compiled->config.n_rules; i++) {
		const struct sg_rule_entry *e = &compiled->rules[i];
		if ((e->flags & SG_RULE_REWRITE) || e->on_violation == SG_VIOLATION_CLAMP) {
			sg_warning(
			    "this kernel ignores bpf_sysctl_set_new_value() (the stable "
			    "kernels 6.1.192, 6.12.96 and 6.18.39 have the fix): rewrite and "
			    "clamp rules deny instead");
			return;
		}
	}
}

size_t sg_compiled_patterns_never_winning(const struct sg_compiled *c, bool *never)
{
	size_t n = 0;

	for (size_t g = 0; g < c->n_name_copies; g++)
		never[g] = c->dfa_patterns && c->dfa_patterns[g];
	/* Every state is reached by some name, and its accept entry is that name's winner. */
	for (uint32_t s = 0; c->dfa.accept && s < c->dfa.n_states; s++)
		if (c->dfa.accept[s] < c->n_name_copies)
			never[c->dfa.accept[s]] = false;
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

/* The config, and the DFA or what it was built from. */
static void hash_rest(const struct sg_compiled *c, const uint8_t *build_id, size_t build_id_len,
		      struct sg_siphash *h)
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
		const struct sg_dfa *dfa = &c->dfa;
		sg_siphash_update(h, &dfa->wide, sizeof(dfa->wide));
		sg_siphash_update(h, dfa->transitions,
				  (size_t)dfa->n_states * dfa->n_classes * sg_dfa_entry_size(dfa));
		sg_siphash_update(h, dfa->accept, (size_t)dfa->n_states * sizeof(uint32_t));
	}
}

/* The rules, exact names, values and rule names, which the DFA has no part in. */
static void hash_rules(const struct sg_compiled *c, struct sg_siphash *h)
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
			sg_siphash_update(h, c->origins[i].name, c->origins[i].name_len + 1);
	}
}

void sg_compiled_hash(const struct sg_compiled *c, const uint8_t *build_id, size_t build_id_len,
		      struct sg_siphash *h)
{
	hash_rules(c, h);
	hash_rest(c, build_id, build_id_len, h);
}

void sg_compiled_free(struct sg_compiled *compiled)
{
	if (!compiled)
		return;
	sg_dfa_free(&compiled->dfa);
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
	return layer < c->config.n_layers ? sg_dfa_match(&c->dfa, layer, name) : SG_NO_RULE;
}
