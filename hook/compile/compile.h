/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy set -> the tables of bpf/sysctl_guard.h. Pure logic. The BPF loader
 * copies these tables into maps; hook/eval.c decides over the same tables.
 */
#ifndef SG_COMPILE_H
#define SG_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sysctl_guard.h"
#include "base/siphash.h"
#include "policy/compose.h"
#include "compile/dfa.h"

/* Where a compiled rule came from, for explain/status messages. */
struct sg_rule_origin {
	const char *policy; /* the policy's origin (points into the set) */
	size_t index;	    /* rules[index] of that policy; SIZE_MAX for a pinned pair */
	const char *name;   /* as written */
	size_t name_len;    /* its strlen; 0 without a name */
};

/*
 * A literal rule: a key of the exact table. Compiled tables point into the
 * policy set for names and values instead of holding the kernel's 132-byte
 * zero-padded keys: a policy may have tens of thousands of them, and the
 * loader writes each key once.
 */
struct sg_exact_name {
	uint32_t rule;
	uint16_t layer;	  /* < SG_LAYERS_MAX, or SG_PINNED_LAYER */
	uint16_t len;	  /* strlen(name) < SG_NAME_MAX: the loader lays names out in passes */
	uint64_t order;	  /* sg_exact_order(name, len): the table's order (compile.c) */
	const char *name; /* slash form */
};

/* A value a rule allows, normalised as a token list (sg_value_normalise). */
struct sg_rule_value {
	uint32_t set; /* sg_rule_entry.value_set: rules with the same values share a set */
	uint32_t len; /* strlen(value) */
	const char *value;
};

/* Points into the set it was compiled from (names, values, origins): free it first. */
struct sg_compiled {
	struct sg_config config; /* n_layers, n_rules, layers, the DFA's byte classes */

	/*
	 * The wildcard rules' DFA, whose byte classes and start states config
	 * has too, for the program.
	 */
	struct sg_dfa dfa;

	struct sg_rule_entry *rules; /* config.n_rules */
	struct sg_rule_origin *origins;
	size_t rule_names_bytes; /* of the origins' names, each with its NUL */
	struct sg_field_bounds
	    *bounds; /* elements n_rules on of the rules table: sg_rule_entry.bounds */
	uint32_t n_bounds;
	struct sg_rule_text *texts; /* of the rules that rewrite or clamp (sg_rule_entry.text) */
	uint32_t n_texts;

	struct sg_exact_name *exact; /* by layer, order, name (strcmp), for bsearch; unique */
	size_t n_exact;
	char **name_copies; /* slash forms of rules the set has only dotted (rule_pattern) */
	size_t n_name_copies;
	/*
	 * What the DFA was built from: the slash form of each policy rule with a
	 * wildcard, NULL for the others (n_name_copies of them), which the
	 * policy's key hashes in place of the DFA (tables.c).
	 */
	const char **dfa_patterns;

	struct sg_rule_value *values; /* by set (sg_rule_entry.value_set), then value; unique */
	size_t n_values;
};

/* The bounds of field @f of rule entry @e (SG_RULE_RANGE): after the rules in their table. */
static inline const struct sg_field_bounds *
sg_compiled_bounds(const struct sg_compiled *c, const struct sg_rule_entry *e, uint32_t f)
{
	return &c->bounds[e->bounds - c->config.n_rules + f];
}

int sg_compile(const struct sg_policy_set *set, struct sg_compiled *out, struct sg_err *err);

/*
 * Fits @compiled to the kernel: rewriting needs one where
 * bpf_sysctl_set_new_value() takes effect (@rewrite_works); elsewhere
 * rewrite and clamp rules deny, and the user hears why. Audit layers have
 * every write reported.
 */
void sg_fit_to_kernel(struct sg_compiled *compiled, bool rewrite_works);

/*
 * The wildcard rules of @c (sg_compile'd, DFA and all) that decide no name:
 * for every name one matches, another pattern of its layer wins (more
 * literal characters, or as many and listed first). Sets never[g] for each
 * such policy rule g and clears it for the others (n_name_copies entries);
 * returns how many. A name past SG_NAME_MAX counts as a name here.
 */
size_t sg_compiled_patterns_never_winning(const struct sg_compiled *c, bool *never);

/*
 * Adds to @h everything a program reads of @c but the values-hash key and
 * the table seed (random per policy: zero in @c), for the policy's key.
 * With the @build_id of the binary that compiled it, the DFA (2 MB of a
 * 10,000-rule policy, half of all) goes in as what it was built from: the
 * wildcard patterns, each with its rule (whose entry has its layer), and
 * that build of the compiler. Without one, the DFA itself. A section of
 * variable length goes in after its count, so that no two compiled policies
 * give the same bytes: the first one made would decide the other's tables.
 */
void sg_compiled_hash(const struct sg_compiled *c, const uint8_t *build_id, size_t build_id_len,
		      struct sg_siphash *h);
void sg_compiled_free(struct sg_compiled *compiled);

/*
 * Sorts @n exact names by layer, order, name and rule: the exact table's
 * order (compile.c). Here for the unit tests.
 */
void sg_exact_names_sort(struct sg_exact_name *v, size_t n);

/* Table lookups shared by the evaluator and tests. */
uint32_t sg_compiled_exact(const struct sg_compiled *c, uint32_t layer, const char *name);
bool sg_compiled_has_value(const struct sg_compiled *c, uint32_t rule, const char *normalised);
uint32_t sg_compiled_match_pattern(const struct sg_compiled *c, uint32_t layer, const char *name);

#endif
