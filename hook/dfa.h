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

#include "compile.h"

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

void sg_dfa_input_free(struct sg_dfa_input *in);

/*
 * Builds the DFA of @in into the DFA fields of @dfa (config.byte_class,
 * config.n_classes, config.layers[].dfa_start, n_states, transitions, wide,
 * accept), which must be empty. Returns 0, or -E2BIG when layer
 * *@failed_layer needs more than SG_MAX_DFA_STATES states. On error the
 * fields are left for sg_dfa_free.
 */
int sg_dfa_build(const struct sg_dfa_input *in, struct sg_compiled *dfa, uint32_t *failed_layer);

/* @view: only the DFA fields of @c, its tables borrowed. */
void sg_dfa_view(const struct sg_compiled *c, struct sg_compiled *view);

/* Frees the DFA tables of @c: no states left. */
void sg_dfa_free(struct sg_compiled *c);

#endif
