/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory handed out in pieces and given back whole, or back to a mark: for
 * the many small strings and arrays of a policy and of its JSON tree, which
 * then need no free of their own. All zero is an empty arena.
 *
 * Blocks come from malloc, each twice the last, from 32 KiB up to 1 MiB. A
 * piece larger than a quarter of that gets a block of its own, and the block
 * being filled goes on.
 */
#ifndef SG_ARENA_H
#define SG_ARENA_H

#include <stddef.h>

struct sg_arena_block;

struct sg_arena {
	struct sg_arena_block *blocks, *large; /* newest first */
};

/* What an arena held at some moment: sg_arena_rewind frees what came after. */
struct sg_arena_mark {
	struct sg_arena_block *blocks, *large;
	size_t used;
};

/* @size bytes at @align (a power of two, at most alignof(max_align_t)), not zeroed. */
void *sg_arena_take(struct sg_arena *a, size_t size, size_t align);
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
