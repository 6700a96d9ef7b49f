/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sg_pattern_match (hook/name.h) is the reference matcher: plain recursion
 * that backtracks, O(n^k) for k '*' in one component and likewise over the
 * components for k "**". The harnesses ask it only about patterns it answers
 * at once; the compiled matcher has no such limit and is checked against it.
 */
#ifndef SG_FUZZ_REFERENCE_H
#define SG_FUZZ_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#define REFERENCE_MAX_STARS	      6 /* in a pattern; "**" counts two */
#define REFERENCE_MAX_COMPONENT_STARS 3

static inline bool reference_is_fast(const char *pattern)
{
	size_t stars = 0, in_component = 0;

	for (const char *c = pattern; *c; c++) {
		if (*c == '/')
			in_component = 0;
		else if (*c == '*')
			stars++, in_component++;
		if (stars > REFERENCE_MAX_STARS || in_component > REFERENCE_MAX_COMPONENT_STARS)
			return false;
	}
	return true;
}

#endif
