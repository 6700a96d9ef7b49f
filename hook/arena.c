// SPDX-License-Identifier: Apache-2.0
#include "arena.h"

#include <stdalign.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

struct sg_arena_block {
	struct sg_arena_block *prev;
	size_t used, cap; /* bytes of data */
	max_align_t data[];
};

enum { FIRST_BLOCK = 32 << 10, LARGEST_BLOCK = 1 << 20, OWN_BLOCK_OVER = LARGEST_BLOCK / 4 };

static struct sg_arena_block *new_block(size_t cap, struct sg_arena_block *prev)
{
	struct sg_arena_block *blk = sg_xmap(sizeof(*blk) + cap);
	blk->prev = prev;
	blk->cap = cap;
	return blk;
}

static void unmap_block(struct sg_arena_block *blk)
{
	munmap(blk, sizeof(*blk) + blk->cap);
}

void *sg_arena_take(struct sg_arena *a, size_t size, size_t align)
{
	struct sg_arena_block *blk = a->blocks;
	size_t at = blk ? (blk->used + align - 1) & ~(align - 1) : 0;

	if (blk && at + size <= blk->cap) {
		blk->used = at + size;
		return (char *)blk->data + at;
	}
	if (size > OWN_BLOCK_OVER) {
		a->large = new_block(size, a->large);
		a->large->used = size;
		return a->large->data;
	}
	size_t cap = !blk ? FIRST_BLOCK : blk->cap < LARGEST_BLOCK ? 2 * blk->cap : LARGEST_BLOCK;
	while (cap < size) /* size <= OWN_BLOCK_OVER < LARGEST_BLOCK */
		cap *= 2;
	a->blocks = new_block(cap, blk);
	a->blocks->used = size;
	return a->blocks->data;
}

void *sg_arena_alloc(struct sg_arena *a, size_t size)
{
	return memset(sg_arena_take(a, size, alignof(max_align_t)), 0, size);
}

char *sg_arena_strdup(struct sg_arena *a, const char *s)
{
	return sg_arena_strndup(a, s, strlen(s));
}

char *sg_arena_strndup(struct sg_arena *a, const char *s, size_t len)
{
	char *copy = sg_arena_take(a, len + 1, 1);
	sg_copy_short(copy, s, len);
	copy[len] = '\0';
	return copy;
}

struct sg_arena_mark sg_arena_mark(const struct sg_arena *a)
{
	return (struct sg_arena_mark){a->blocks, a->large, a->blocks ? a->blocks->used : 0};
}

void sg_arena_rewind(struct sg_arena *a, struct sg_arena_mark m)
{
	while (a->blocks != m.blocks) {
		struct sg_arena_block *prev = a->blocks->prev;
		unmap_block(a->blocks);
		a->blocks = prev;
	}
	while (a->large != m.large) {
		struct sg_arena_block *prev = a->large->prev;
		unmap_block(a->large);
		a->large = prev;
	}
	if (a->blocks)
		a->blocks->used = m.used;
}

void sg_arena_free(struct sg_arena *a)
{
	sg_arena_rewind(a, (struct sg_arena_mark){NULL, NULL, 0});
}
