// SPDX-License-Identifier: Apache-2.0
#include "base/arena.h"

#include <assert.h>
#include <stdalign.h>
#include <string.h>

#include "base/util.h"

struct sg_arena_block {
	struct sg_arena_block *prev;
	size_t used, cap; /* bytes of data */
	max_align_t data[];
};

/* Sizes of the blocks, header included. */
enum { FIRST_BLOCK = 32 << 10, LARGEST_BLOCK = 1 << 20, OWN_BLOCK_OVER = LARGEST_BLOCK / 4 };

/* A block of @bytes, for @bytes less its header of data. */
static struct sg_arena_block *new_block(size_t bytes, struct sg_arena_block *prev)
{
	struct sg_arena_block *blk = sg_xmalloc(bytes);
	blk->prev = prev;
	blk->used = 0;
	blk->cap = bytes - sizeof(*blk);
	return blk;
}

/* Twice the last block, up to LARGEST_BLOCK, and room for @size (at most OWN_BLOCK_OVER). */
static size_t next_block_bytes(const struct sg_arena_block *last, size_t size)
{
	size_t bytes = last ? 2 * (sizeof(*last) + last->cap) : FIRST_BLOCK;

	if (bytes > LARGEST_BLOCK)
		bytes = LARGEST_BLOCK;
	while (bytes - sizeof(*last) < size)
		bytes *= 2;
	return bytes;
}

void *sg_arena_take(struct sg_arena *a, size_t size, size_t align)
{
	assert(align && (align & (align - 1)) == 0 && align <= alignof(max_align_t));
	struct sg_arena_block *blk = a->blocks;
	size_t at = blk ? (blk->used + align - 1) & ~(align - 1) : 0;

	if (blk && at + size <= blk->cap) {
		blk->used = at + size;
		return (char *)blk->data + at;
	}
	if (size > OWN_BLOCK_OVER) {
		a->large = new_block(sizeof(*a->large) + size, a->large);
		a->large->used = size;
		return a->large->data;
	}
	a->blocks = new_block(next_block_bytes(blk, size), blk);
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
	memcpy(copy, s, len);
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
		free(a->blocks);
		a->blocks = prev;
	}
	while (a->large != m.large) {
		struct sg_arena_block *prev = a->large->prev;
		free(a->large);
		a->large = prev;
	}
	if (a->blocks)
		a->blocks->used = m.used;
}

void sg_arena_free(struct sg_arena *a)
{
	sg_arena_rewind(a, (struct sg_arena_mark){NULL, NULL, 0});
}
