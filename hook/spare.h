/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Large blocks kept for the next large allocation instead of going back to
 * the system. musl unmaps a freed block of 128 KiB or more at once, so a
 * large policy's compile took fresh pages for its tables just after its
 * parse and its automaton's scaffolding gave theirs back, and a page first
 * touched costs about 1.6 us on these machines (zeroing, charging, mapping)
 * where a page reused costs its memset. The hook is a short process: the
 * blocks kept go with it.
 */
#ifndef SG_SPARE_H
#define SG_SPARE_H

#include <stddef.h>

/*
 * Blocks smaller than this are freed, never kept: malloc reuses small ones
 * itself (musl maps its own groups of slots from about 128 KiB up; a block
 * of 64 to 128 KiB is a group's only slot, given back as one).
 */
#define SG_SPARE_MIN (64 << 10)

/* Frees @p (from malloc, or NULL), or keeps it for sg_spare_take when it is large. */
void sg_spare_put(void *p);

/*
 * A kept block of at least @size bytes and at most twice that (a large
 * block stays for a large request), not zeroed, to free or realloc as any;
 * or NULL.
 */
void *sg_spare_take(size_t size);

/*
 * Frees the blocks kept: what comes next allocates little, and they would
 * count in its peak. Paths that never call it (a failed compile, `check`)
 * keep at most a few blocks until they exit.
 */
void sg_spare_release(void);

#endif
