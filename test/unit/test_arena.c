// SPDX-License-Identifier: Apache-2.0
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "base/util.h"
#include "test.h"

static int aligned(const void *p, size_t align)
{
	return ((uintptr_t)p & (align - 1)) == 0;
}

TEST(pieces_are_aligned_zeroed_and_apart)
{
	struct sg_arena a = {0};
	char *prev = NULL;

	for (size_t i = 0; i < 5000; i++) {
		size_t size = 1 + i % 97;
		char *p = sg_arena_alloc(&a, size);
		CHECK(aligned(p, alignof(max_align_t)));
		for (size_t k = 0; k < size; k++)
			CHECK(p[k] == 0);
		memset(p, 0xab, size);
		CHECK(p != prev);
		prev = p;
	}
	char *odd = sg_arena_take(&a, 3, 1);
	uint64_t *word = sg_arena_take(&a, sizeof(*word), alignof(uint64_t));
	CHECK(aligned(word, alignof(uint64_t)));
	CHECK((char *)word >= odd + 3);
	sg_arena_free(&a);
	CHECK(a.blocks == NULL && a.large == NULL);
}

TEST(strings_are_copied_whole)
{
	struct sg_arena a = {0};
	char text[300];

	for (size_t len = 0; len < sizeof(text); len++) {
		memset(text, 'a' + (int)(len % 26), len);
		text[len] = '\0';
		char *copy = sg_arena_strndup(&a, text, len);
		CHECK(strlen(copy) == len && memcmp(copy, text, len) == 0);
		CHECK_STR(sg_arena_strdup(&a, text), text);
	}
	sg_arena_free(&a);
}

/*
 * sg_copy_short (util.h): every length at every alignment of source and
 * destination, each byte distinct, nothing written before or after the copy.
 */
TEST(short_copies_are_exact)
{
	unsigned char src[96], dst[112];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t len = 0; len <= 80; len++)
		for (size_t from = 0; from < 8; from++)
			for (size_t to = 0; to < 8; to++) {
				memset(dst, 0xee, sizeof(dst));
				sg_copy_short(dst + 8 + to, src + from, len);
				CHECK(memcmp(dst + 8 + to, src + from, len) == 0);
				for (size_t k = 0; k < sizeof(dst); k++)
					if (k < 8 + to || k >= 8 + to + len)
						CHECK(dst[k] == 0xee);
			}
}

/* Pieces larger than a quarter of the largest block, and pieces of every size up to it. */
TEST(large_pieces_and_block_growth)
{
	struct sg_arena a = {0};
	size_t sizes[] = {100, 40 << 10, 200 << 10, 300 << 10, 5 << 20, 16, 256 << 10, 1};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *p = sg_arena_alloc(&a, sizes[i]);
		CHECK(p[0] == 0 && p[sizes[i] - 1] == 0);
		memset(p, 1, sizes[i]);
	}
	sg_arena_free(&a);
}

/* What was taken after a mark is given back; what came before stays as it was. */
TEST(rewind_to_a_mark)
{
	struct sg_arena a = {0};
	char *kept = sg_arena_strdup(&a, "kept");
	struct sg_arena_mark m = sg_arena_mark(&a);
	char *first = sg_arena_take(&a, 10, 1);

	for (int round = 0; round < 3; round++) {
		sg_arena_rewind(&a, m);
		/* Small pieces after the mark start where the first one did. */
		CHECK(sg_arena_take(&a, 10, 1) == first);
		for (int i = 0; i < 100; i++)
			memset(sg_arena_take(&a, 4000, 8), 0xff, 4000); /* new blocks */
		memset(sg_arena_take(&a, 2 << 20, 8), 0xff, 2 << 20);	/* a block of its own */
	}
	sg_arena_rewind(&a, m);
	CHECK(a.blocks == m.blocks && a.large == m.large);
	CHECK_STR(kept, "kept");
	sg_arena_free(&a);
}

TEST(rewind_of_an_empty_arena)
{
	struct sg_arena a = {0};
	struct sg_arena_mark m = sg_arena_mark(&a);

	sg_arena_strdup(&a, "gone");
	sg_arena_take(&a, 1 << 20, 8);
	sg_arena_rewind(&a, m);
	CHECK(a.blocks == NULL && a.large == NULL);
	sg_arena_free(&a);
}

RUN_TESTS(T(pieces_are_aligned_zeroed_and_apart), T(strings_are_copied_whole),
	  T(short_copies_are_exact), T(large_pieces_and_block_growth), T(rewind_to_a_mark),
	  T(rewind_of_an_empty_arena))
