/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DFA of a compiled policy as the program reads it (bpf/sysctl_guard.h):
 * each state's most common next state, and its other entries overlaid with
 * the other states' where they leave room. A large policy's 2 MB of rows
 * become about 400 KB, and the kernel's pages are what a new policy's
 * tables cost most. Pure logic: tables.c has the elements written into the
 * map's pages, window by window; the plan keeps a few words per state and
 * the columns of its extra entries, not the elements, which are read again
 * from the compiled rows.
 */
#ifndef SG_DFA_PACK_H
#define SG_DFA_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compile.h"

typedef uint32_t sg_dfa_element[SG_DFA_ELEMENT_WORDS];

struct sg_dfa_packed {
	/*
	 * The DFA's fields of the compiled policy it packs (sg_dfa_view): its
	 * tables are borrowed, and stay where they are when the policy's struct
	 * is copied.
	 */
	struct sg_compiled dfa;
	uint32_t *defaults; /* each state's default next state */
	uint32_t *offsets;  /* each state's base, less n_states */
	uint16_t *extras;   /* how many entries each state has other than its default */
	uint16_t *columns;  /* those entries' columns, state after state */
	uint32_t *first;    /* each state's first in @columns */
	size_t n_elements;  /* the states', then up to the last entry's */
};

/*
 * Plans where @c's entries go; @c's DFA tables must outlive the plan.
 * Aborts on no memory (sg_xcalloc).
 */
void sg_dfa_pack(const struct sg_compiled *c, struct sg_dfa_packed *out);

/* Writes elements @first to @first + @count - 1 at @dst. */
void sg_dfa_packed_write(const struct sg_dfa_packed *p, size_t first, size_t count,
			 sg_dfa_element *dst);

/*
 * What the program reads in @n @elements for @state in @column: the next
 * state on a byte class, or with @accept (the column sg_dfa_accept_column)
 * the rule @state accepts. For the unit tests: the program's own walk is in
 * bpf/.
 */
uint32_t sg_dfa_element_lookup(const sg_dfa_element *elements, size_t n, uint32_t state,
			       uint32_t column, bool accept);

void sg_dfa_packed_free(struct sg_dfa_packed *p);

#endif
