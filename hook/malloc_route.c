// SPDX-License-Identifier: Apache-2.0
/*
 * The static binary's malloc, calloc, realloc, free and malloc_usable_size:
 * blocks of SG_BIGMEM_MIN and up come from bigmem.c (whole pages), smaller
 * ones from smallmem.c (kept, never unmapped), and libc's malloc takes what
 * either refuses. The linker sends every call of the binary, libraries and
 * libc's own included, here (meson.build: -Wl,--wrap=malloc,...), so that a
 * block is always freed by the allocator that made it. Memory from
 * aligned_alloc and posix_memalign stays libc's, and free tells the three
 * apart by address.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bigmem.h"
#include "smallmem.h"

void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
size_t __real_malloc_usable_size(void *p);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
size_t __wrap_malloc_usable_size(void *p);

/* A block of @size from the region its size belongs to, or NULL when that one has no room. */
static void *region_alloc(size_t size)
{
	return size >= SG_BIGMEM_MIN ? sg_bigmem_alloc(size) : sg_smallmem_alloc(size);
}

void *__wrap_malloc(size_t size)
{
	void *p = region_alloc(size);
	return p ? p : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	size_t bytes = n * size;
	void *p = bytes >= SG_BIGMEM_MIN ? sg_bigmem_calloc(n, size) : sg_smallmem_calloc(bytes);
	if (p)
		return p;
	/*
	 * Not libc's calloc: it mallocs (which comes back here, and a region
	 * may have room by now) and then reads the block's header as musl's.
	 */
	p = __real_malloc(bytes);
	return p ? memset(p, 0, bytes) : NULL;
}

void __wrap_free(void *p)
{
	if (sg_bigmem_owns(p))
		sg_bigmem_free(p);
	else if (sg_smallmem_owns(p))
		sg_smallmem_free(p);
	else
		__real_free(p);
}

size_t __wrap_malloc_usable_size(void *p)
{
	if (sg_bigmem_owns(p))
		return sg_bigmem_usable(p);
	return sg_smallmem_owns(p) ? sg_smallmem_usable(p) : __real_malloc_usable_size(p);
}

/* Moves @p's contents (@old bytes of them) to @q, a block of @size, and frees @p. */
static void *move(void *p, size_t old, size_t size, void *q)
{
	if (!q)
		return NULL; /* p stays the caller's, as realloc leaves it */
	memcpy(q, p, old < size ? old : size);
	__wrap_free(p);
	return q;
}

void *__wrap_realloc(void *p, size_t size)
{
	if (!p)
		return __wrap_malloc(size);
	if (sg_bigmem_owns(p)) {
		void *q = size >= SG_BIGMEM_MIN ? sg_bigmem_realloc(p, size) : NULL;
		return q ? q : move(p, sg_bigmem_usable(p), size, __wrap_malloc(size));
	}
	if (sg_smallmem_owns(p)) {
		size_t usable = sg_smallmem_usable(p);
		return size <= usable ? p : move(p, usable, size, __wrap_malloc(size));
	}
	/* libc's blocks (a region had no room) move to the regions when they can. */
	void *q = region_alloc(size);
	return q ? move(p, __real_malloc_usable_size(p), size, q) : __real_realloc(p, size);
}
