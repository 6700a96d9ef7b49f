/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DFA of a policy's wildcard patterns, one per layer, over byte classes.
 * Pure logic: compile.c builds it from a policy set.
 */
#ifndef SG_DFA_H
#define SG_DFA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sysctl_guard.h"

/* More states than this is a policy too complex (input error): kernel memory stays bounded. */
#define SG_MAX_DFA_STATES 262144

/*
 * The states of every layer, one after the other; state 0 (SG_DEAD_STATE)
 * is the dead state, which every layer shares. All zero is no DFA. The
 * program reads the byte classes and start states in a policy's config
 * (compile.c puts them there) and the rows packed (dfa_pack.h).
 */
struct sg_dfa {
	uint32_t n_states;
	uint32_t n_classes; /* byte classes: a row has this many entries */
	uint8_t byte_class[256];
	uint32_t start[SG_LAYERS_MAX]; /* each layer's start state */
	/*
	 * n_states * n_classes next states (sg_dfa_next): 16 bits each while
	 * every state number fits, half the pages of a large policy's table,
	 * and 32 (wide) once one does not.
	 */
	void *transitions;
	bool wide;
	uint32_t *accept; /* n_states: winning rule, or SG_NO_RULE */
};

/* Bytes of one entry of dfa->transitions. */
static inline size_t sg_dfa_entry_size(const struct sg_dfa *dfa)
{
	return dfa->wide ? sizeof(uint32_t) : sizeof(uint16_t);
}

/* The state after @state on a byte of class @cls. */
static inline uint32_t sg_dfa_next(const struct sg_dfa *dfa, size_t state, uint32_t cls)
{
	size_t i = state * dfa->n_classes + cls;
	return dfa->wide ? ((const uint32_t *)dfa->transitions)[i]
			 : ((const uint16_t *)dfa->transitions)[i];
}

/* @n next states from entry @first on (state * n_classes + class), as 32-bit entries at @out. */
void sg_dfa_next_states(const struct sg_dfa *dfa, size_t first, size_t n, uint32_t *out);

/* The rule layer @layer's patterns decide @name (slash form) by, or SG_NO_RULE. */
uint32_t sg_dfa_match(const struct sg_dfa *dfa, uint32_t layer, const char *name);

/*
 * All a DFA is built from: the slash form of every wildcard rule (the
 * literal ones go to the exact table) with its global rule number, layer by
 * layer in rule order. Two equal inputs give the same DFA.
 */
struct sg_dfa_input {
	uint32_t n_layers;
	size_t layer_end[SG_LAYERS_MAX]; /* layer l's patterns: from layer_end[l - 1] (or 0) */
	const char **pattern;		 /* borrowed, each NUL-terminated */
	uint32_t *len;			 /* strlen of each */
	uint32_t *rule;
	size_t n, cap;
};

void sg_dfa_input_add(struct sg_dfa_input *in, const char *pattern, uint32_t len, uint32_t rule);

/* Closes the current layer: the patterns added since the last one are layer n_layers++. */
void sg_dfa_input_end_layer(struct sg_dfa_input *in);

bool sg_dfa_input_equal(const struct sg_dfa_input *a, const struct sg_dfa_input *b);

void sg_dfa_input_free(struct sg_dfa_input *in);

/*
 * Builds the DFA of @in into @dfa, which must be empty. Returns 0; -E2BIG
 * when layer *@failed_layer needs more than SG_MAX_DFA_STATES states.
 * On error @dfa is left for sg_dfa_free.
 */
int sg_dfa_build(const struct sg_dfa_input *in, struct sg_dfa *dfa, uint32_t *failed_layer);

/* Frees the tables of @dfa: no states left. */
void sg_dfa_free(struct sg_dfa *dfa);

#endif
