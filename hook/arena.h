/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory handed out in pieces and given back whole, or back to a mark: for
 * the many small strings and arrays of a large policy and of its JSON tree,
 * which a malloc and a free each would cost more than the rest of parsing
 * them. All zero is an empty arena.
 *
 * Blocks come from bigmem.c (whole pages, kept for the compiler's large
 * tables once freed), else are mapped; either way the pages of a block not
 * filled yet are never touched. The first is 32 KiB, each next one twice the last, up
 * to 1 MiB: a small document takes one small block, a 10,000-rule policy's
 * strings a handful. A piece larger than a quarter of that gets a block of
 * its own, and the block being filled goes on.
 */
#ifndef SG_ARENA_H
#define SG_ARENA_H

#include <stddef.h>

/* A mapped block: here for sg_arena_take's inline part, arena.c's otherwise. */
struct sg_arena_block {
	struct sg_arena_block *prev;
	size_t used, cap; /* bytes of data */
	max_align_t data[];
};

struct sg_arena {
	struct sg_arena_block *blocks, *large; /* newest first */
};

/* What an arena held at some moment: sg_arena_rewind frees what came after. */
struct sg_arena_mark {
	struct sg_arena_block *blocks, *large;
	size_t used;
};

/* sg_arena_take when the newest block has no room: a new block. */
void *sg_arena_take_new(struct sg_arena *a, size_t size, size_t align);

/*
 * @size bytes at @align (a power of two, at most alignof(max_align_t)), not
 * zeroed. Inline: a large policy's parse takes about 100,000 pieces.
 */
static inline void *sg_arena_take(struct sg_arena *a, size_t size, size_t align)
{
	struct sg_arena_block *blk = a->blocks;
	size_t at = blk ? (blk->used + align - 1) & ~(align - 1) : 0;

	if (__builtin_expect(blk && at + size <= blk->cap, 1)) {
		blk->used = at + size;
		return (char *)blk->data + at;
	}
	return sg_arena_take_new(a, size, align);
}
/* @size zeroed bytes, aligned for any type. */
void *sg_arena_alloc(struct sg_arena *a, size_t size);
/* Copies of strings, byte-aligned; @len is strlen(s). */
char *sg_arena_strdup(struct sg_arena *a, const char *s);
char *sg_arena_strndup(struct sg_arena *a, const char *s, size_t len);

struct sg_arena_mark sg_arena_mark(const struct sg_arena *a);
/* Frees everything taken since @m; what comes next reuses the newest block's rest. */
void sg_arena_rewind(struct sg_arena *a, struct sg_arena_mark m);
void sg_arena_free(struct sg_arena *a);

#endif
