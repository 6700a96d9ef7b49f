/* SPDX-License-Identifier: Apache-2.0 */
/* What /proc/self/smaps says of the mapping that holds an address. */
#ifndef SG_TEST_SMAPS_H
#define SG_TEST_SMAPS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The line of the mapping holding @p that starts with @field, copied to @line; 0 or -1. */
static inline int smaps_line(const void *p, const char *field, char line[512])
{
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0, found = -1;
	uintptr_t lo, hi;

	while (f && found < 0 && fgets(line, 512, f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && strncmp(line, field, strlen(field)) == 0)
			found = 0;
	}
	if (f)
		fclose(f);
	return found;
}

/* Whether the mapping holding @p has @flag ("hg": MADV_HUGEPAGE, "nh": NOHUGEPAGE); -1: none. */
static inline int smaps_flag(const void *p, const char *flag)
{
	char line[512], word[8];

	if (smaps_line(p, "VmFlags:", line) < 0)
		return -1;
	snprintf(word, sizeof(word), " %s", flag);
	return strstr(line, word) != NULL;
}

/* Whether the mapping holding @p is in small pages: MADV_NOHUGEPAGE, not MADV_HUGEPAGE. */
static inline int in_small_pages(const void *p)
{
	return smaps_flag(p, "nh") == 1 && smaps_flag(p, "hg") == 0;
}

/* The KiB of @field ("Rss:") of the mapping holding @p, or -1. */
static inline long smaps_kb(const void *p, const char *field)
{
	char line[512];
	long kb;

	if (smaps_line(p, field, line) < 0 || sscanf(line + strlen(field), "%ld", &kb) != 1)
		return -1;
	return kb;
}

#endif
