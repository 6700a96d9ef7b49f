// SPDX-License-Identifier: Apache-2.0
#include "bigmem.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define REGION_BYTES (256ul << 20)
/* Blocks are whole pages: a freed one can be split and reused cleanly. */
#define GRAIN 4096ul
/* Free ranges remembered; more are left unused (coalescing keeps them few). */
#define MAX_FREE 256
/* Before each block: what the block spans, header included. */
struct header {
	size_t span;
	size_t pad; /* the data stays 16-aligned */
};

struct range {
	size_t off, len; /* from the region's base */
};

static struct {
	pthread_mutex_t lock;
	bool tried;		     /* to map the region */
	char *base;		     /* NULL: no region */
	size_t top;		     /* the first byte no block has reached yet */
	size_t touched;		     /* the highest top: above it every byte is still zero */
	struct range free[MAX_FREE]; /* sorted by offset, none adjacent to another or to top */
	size_t n_free;
} bm = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void lock(void)
{
	pthread_mutex_lock(&bm.lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&bm.lock);
}

void *sg_reserve_small_pages(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; musl's headers lack it */
#endif

bool sg_populate(void *p, size_t bytes)
{
	const uintptr_t page = 4096, from = ((uintptr_t)p + page - 1) & ~(page - 1),
			to = ((uintptr_t)p + bytes) & ~(page - 1);
	return to > from && madvise((void *)from, to - from, MADV_POPULATE_WRITE) == 0;
}

static void map_region(void)
{
	bm.base = sg_reserve_small_pages(REGION_BYTES);
}

/* Whether there is a region, mapped at the first call. Locked. */
static bool ready(void)
{
	if (!bm.tried) {
		bm.tried = true;
		map_region();
		if (bm.base)
			(void)pthread_atfork(lock, unlock, unlock);
	}
	return bm.base != NULL;
}

static struct header *header_of(const void *p)
{
	return (struct header *)((char *)p - sizeof(struct header));
}

/* The span of a block of @size bytes of data, or 0 when none could be that large. */
static size_t span_for(size_t size)
{
	if (size > REGION_BYTES)
		return 0;
	return (size + sizeof(struct header) + GRAIN - 1) & ~(GRAIN - 1);
}

static void remove_free(size_t i)
{
	memmove(&bm.free[i], &bm.free[i + 1], (bm.n_free - i - 1) * sizeof(bm.free[0]));
	bm.n_free--;
}

/* Returns [off, off+len) to the free ranges, merged with its neighbours or top. */
static void give_back(size_t off, size_t len)
{
	size_t i = 0;

	while (i < bm.n_free && bm.free[i].off < off)
		i++;
	if (i > 0 && bm.free[i - 1].off + bm.free[i - 1].len == off) {
		off = bm.free[i - 1].off;
		len += bm.free[i - 1].len;
		remove_free(--i);
	}
	if (i < bm.n_free && off + len == bm.free[i].off) {
		len += bm.free[i].len;
		remove_free(i);
	}
	if (off + len == bm.top) {
		bm.top = off;
		return;
	}
	if (bm.n_free == MAX_FREE)
		return; /* left unused until the process exits */
	memmove(&bm.free[i + 1], &bm.free[i], (bm.n_free - i) * sizeof(bm.free[0]));
	bm.free[i] = (struct range){off, len};
	bm.n_free++;
}

/* Takes @n bytes from the start of free range @i, which has them. Locked. */
static void carve(size_t i, size_t n)
{
	bm.free[i].off += n;
	bm.free[i].len -= n;
	if (bm.free[i].len == 0)
		remove_free(i);
}

/* Moves top up by @n bytes, if the region has them. Locked. */
static bool raise_top(size_t n)
{
	if (n > REGION_BYTES - bm.top)
		return false;
	bm.top += n;
	if (bm.top > bm.touched)
		bm.touched = bm.top;
	return true;
}

/*
 * The offset of @span free bytes, or SIZE_MAX. Locked. Best fit, lowest
 * first among equals: small blocks fill small holes, and a large hole stays
 * whole for a large block (first fit cut the policy's text's hole into
 * small tables, and the compiler's large ones went on top: 14% more pages).
 */
static size_t take(size_t span)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < bm.n_free; i++)
		if (bm.free[i].len >= span &&
		    (best == SIZE_MAX || bm.free[i].len < bm.free[best].len))
			best = i;
	size_t off = best != SIZE_MAX ? bm.free[best].off : bm.top;
	if (best != SIZE_MAX)
		carve(best, span);
	else if (!raise_top(span))
		return SIZE_MAX;
	return off;
}

/* A block of @size bytes; *@dirty: how many of its first bytes may not be zero. */
static void *alloc_block(size_t size, size_t *dirty)
{
	size_t span = span_for(size);

	if (!span)
		return NULL;
	lock();
	size_t touched = bm.touched;
	size_t off = ready() ? take(span) : SIZE_MAX;
	unlock();
	if (off == SIZE_MAX)
		return NULL;
	struct header *h = (struct header *)(bm.base + off);
	h->span = span;
	*dirty = off >= touched ? 0 : touched - off - sizeof(*h);
	return h + 1;
}

void *sg_bigmem_alloc(size_t size)
{
	size_t dirty;
	return alloc_block(size, &dirty);
}

void *sg_bigmem_calloc(size_t n, size_t size)
{
	size_t dirty;

	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = alloc_block(n * size, &dirty);
	if (p) /* memory never handed out is zero already: no page touched for nothing */
		memset(p, 0, dirty < n * size ? dirty : n * size);
	return p;
}

bool sg_bigmem_owns(const void *p)
{
	return bm.base && (const char *)p >= bm.base && (const char *)p < bm.base + REGION_BYTES;
}

size_t sg_bigmem_usable(const void *p)
{
	return header_of(p)->span - sizeof(struct header);
}

void sg_bigmem_free(void *p)
{
	struct header *h = header_of(p);

	lock();
	give_back((size_t)((char *)h - bm.base), h->span);
	unlock();
}

/* Grows the block at @off from @span to @want in place if the bytes after it are free. Locked. */
static bool grow_in_place(size_t off, size_t span, size_t want)
{
	size_t end = off + span, more = want - span;

	if (end == bm.top)
		return raise_top(more);
	for (size_t i = 0; i < bm.n_free && bm.free[i].off <= end; i++) {
		if (bm.free[i].off != end || bm.free[i].len < more)
			continue;
		carve(i, more);
		return true;
	}
	return false;
}

void *sg_bigmem_realloc(void *p, size_t size)
{
	struct header *h = header_of(p);
	size_t want = span_for(size);

	if (!want)
		return NULL;
	if (want <= h->span)
		return p; /* kept whole: it may grow again */
	lock();
	bool grown = grow_in_place((size_t)((char *)h - bm.base), h->span, want);
	unlock();
	if (grown) {
		h->span = want;
		return p;
	}
	void *q = sg_bigmem_alloc(size);
	if (!q)
		return NULL;
	memcpy(q, p, h->span - sizeof(*h));
	sg_bigmem_free(p);
	return q;
}
