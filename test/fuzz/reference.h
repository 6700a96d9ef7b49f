/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sg_pattern_match (hook/policy/name.h) is the reference matcher: plain recursion
 * that backtracks, O(n^k) for k '*' in one component and likewise over the
 * components for k "**". The harnesses ask it only about patterns it answers
 * at once; the compiled matcher has no such limit and is checked against it.
 */
#ifndef SG_FUZZ_REFERENCE_H
#define SG_FUZZ_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

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

/*
 * sg_name_normalise as its contract reads, a step at a time (the hook's
 * does it in one pass): whether @name is a valid name, and then its slash
 * form in @out, for a buffer of @cap bytes (at most @max with the NUL).
 */
static inline bool reference_normalise(const char *name, char *out, size_t cap, size_t max)
{
	size_t limit = cap < max ? cap : max, len = strlen(name);

	if (len == 0 || (strncmp(name, "/proc/sys/", 10) == 0 && name[10]))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] <= 0x20 || name[i] == 0x7f)
			return false;
	if (len + 1 > limit)
		return false;
	const char *first_sep = strpbrk(name, "./");
	bool dotted = first_sep && *first_sep == '.';
	for (size_t i = 0; i <= len; i++)
		out[i] = !dotted ? name[i] : name[i] == '.' ? '/' : name[i] == '/' ? '.' : name[i];
	for (const char *comp = out;;) {
		const char *end = strchr(comp, '/');
		size_t n = end ? (size_t)(end - comp) : strlen(comp);
		if (n == 0 || (n == 1 && comp[0] == '.') ||
		    (n == 2 && comp[0] == '.' && comp[1] == '.'))
			return false;
		for (size_t i = 0; n != 2 && i + 1 < n; i++)
			if (comp[i] == '*' && comp[i + 1] == '*')
				return false;
		if (!end)
			return true;
		comp = end + 1;
	}
}

#endif
