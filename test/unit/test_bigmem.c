// SPDX-License-Identifier: Apache-2.0
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bigmem.h"
#include "smaps.h"
#include "test.h"

/* Small pages, also for a run that asks for megabytes (bigmem.h says why). */
TEST(blocks_take_small_pages)
{
	char *small = sg_bigmem_alloc(SG_BIGMEM_MIN);
	char *large = sg_bigmem_alloc(4 << 20);
	CHECK(small && large);
	if (!small || !large)
		return;
	memset(large, 1, 4 << 20);
	CHECK(in_small_pages(large));
	CHECK(in_small_pages(small));
	sg_bigmem_free(large);
	sg_bigmem_free(small);
}

TEST(blocks_are_the_regions_aligned_and_hold_what_was_asked)
{
	char *p = sg_bigmem_alloc(100000);
	CHECK(p != NULL);
	CHECK(sg_bigmem_owns(p));
	CHECK(((uintptr_t)p & 15) == 0);
	CHECK(sg_bigmem_usable(p) >= 100000);
	memset(p, 1, 100000);
	int on_stack;
	CHECK(!sg_bigmem_owns(&on_stack));
	CHECK(!sg_bigmem_owns(NULL));
	sg_bigmem_free(p);
}

TEST(a_freed_block_is_reused_and_calloc_zeroes_it)
{
	char *p = sg_bigmem_alloc(1 << 20);
	memset(p, 0xaa, 1 << 20);
	sg_bigmem_free(p);
	char *q = sg_bigmem_calloc(1 << 10, 1 << 10);
	CHECK(q == p); /* the lowest free range: the same pages, touched already */
	CHECK(all_bytes((unsigned char *)q, 1 << 20, 0));
	sg_bigmem_free(q);
	CHECK(sg_bigmem_calloc(SIZE_MAX / 2, 4) == NULL); /* overflow */
	CHECK(sg_bigmem_alloc(SIZE_MAX - 8) == NULL);
	CHECK(sg_bigmem_alloc(512u << 20) == NULL); /* larger than the region */
}

TEST(realloc_keeps_contents_in_place_or_moved)
{
	char *p = sg_bigmem_alloc(70000);
	memset(p, 3, 70000);
	char *grown = sg_bigmem_realloc(p, 5 << 20); /* at the top: grows in place */
	CHECK(grown == p);
	CHECK(all_bytes((unsigned char *)grown, 70000, 3));
	char *blocker = sg_bigmem_alloc(70000); /* now p cannot grow in place */
	memset(grown, 4, 5 << 20);
	char *moved = sg_bigmem_realloc(grown, 9 << 20);
	CHECK(moved != NULL && moved != grown);
	CHECK(all_bytes((unsigned char *)moved, 5 << 20, 4));
	CHECK(sg_bigmem_realloc(moved, 100) == moved);	     /* shrinking keeps the block */
	CHECK(sg_bigmem_realloc(moved, 512u << 20) == NULL); /* no room: unchanged */
	CHECK(all_bytes((unsigned char *)moved, 5 << 20, 4));
	sg_bigmem_free(moved);
	sg_bigmem_free(blocker);
}

/*
 * Random blocks against a model: each filled with its own byte, checked
 * whole before it is freed or grown, never overlapping another.
 */
TEST(random_blocks_keep_their_contents_and_never_overlap)
{
	enum { N = 64, ROUNDS = 4000 };
	unsigned char *block[N] = {0};
	size_t size[N] = {0};
	unsigned seed = 12345;

	for (int r = 0; r < ROUNDS; r++) {
		int i = (int)(rand_r(&seed) % N);
		size_t want = SG_BIGMEM_MIN / 2 + rand_r(&seed) % (600u << 10);
		if (block[i]) {
			CHECK(all_bytes(block[i], size[i], (unsigned char)i));
			if (rand_r(&seed) % 2) {
				sg_bigmem_free(block[i]);
				block[i] = NULL;
				continue;
			}
			unsigned char *q = sg_bigmem_realloc(block[i], want);
			CHECK(q != NULL);
			if (!q)
				continue;
			block[i] = q;
		} else {
			block[i] = sg_bigmem_alloc(want);
			CHECK(block[i] != NULL);
			if (!block[i])
				continue;
		}
		size[i] = want;
		memset(block[i], i, want);
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			if (i != j && block[i] && block[j])
				CHECK(block[i] + size[i] <= block[j] ||
				      block[j] + size[j] <= block[i]);
	for (int i = 0; i < N; i++) {
		if (!block[i])
			continue;
		CHECK(all_bytes(block[i], size[i], (unsigned char)i));
		sg_bigmem_free(block[i]);
	}
}

static void *churn(void *arg)
{
	unsigned char byte = (unsigned char)(uintptr_t)arg;
	for (int r = 0; r < 2000; r++) {
		unsigned char *p = sg_bigmem_alloc(SG_BIGMEM_MIN + (size_t)r * 8);
		if (!p)
			return (void *)1;
		memset(p, byte, SG_BIGMEM_MIN);
		if (!all_bytes(p, SG_BIGMEM_MIN, byte))
			return (void *)1;
		sg_bigmem_free(p);
	}
	return NULL;
}

TEST(two_threads_share_the_region)
{
	pthread_t a, b;
	void *ra, *rb;
	pthread_create(&a, NULL, churn, (void *)1);
	pthread_create(&b, NULL, churn, (void *)2);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	CHECK(ra == NULL && rb == NULL);
}

/* A forked child takes, frees and reuses blocks on its own copy; the parent's stay as they were. */
TEST(a_forked_child_uses_the_region_as_its_own)
{
	unsigned char *before = sg_bigmem_alloc(SG_BIGMEM_MIN);
	unsigned char *freed = sg_bigmem_alloc(3 << 20);
	CHECK(before && freed);
	if (!before || !freed)
		return;
	memset(before, 7, SG_BIGMEM_MIN);
	memset(freed, 1, 3 << 20);
	sg_bigmem_free(freed);
	pid_t pid = fork();
	if (pid == 0) {
		unsigned char *in_child =
		    sg_bigmem_calloc(1, 3 << 20); /* the freed range, cleared */
		int ok = in_child && all_bytes(in_child, 3 << 20, 0) && all_bytes(before, 64, 7);
		if (in_child)
			memset(in_child, 9, 3 << 20);
		_exit(ok ? 0 : 1);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unsigned char *after = sg_bigmem_alloc(3 << 20);
	CHECK(after && all_bytes(after, 3 << 20, 1)); /* the child's writes were its own */
	CHECK(all_bytes(before, SG_BIGMEM_MIN, 7));
	sg_bigmem_free(after);
	sg_bigmem_free(before);
}

/* Whether the pages of @bytes at @p, page-aligned, are all in memory. */
static bool all_resident(void *p, size_t bytes)
{
	unsigned char in[256];
	const size_t pages = bytes / 4096;

	if (pages > sizeof(in) || mincore(p, bytes, in) != 0)
		return false;
	for (size_t i = 0; i < pages; i++)
		if (!(in[i] & 1))
			return false;
	return true;
}

/*
 * A block about to be filled is mapped at once: in memory before a byte is
 * written. The first test, so that the region's pages are fresh.
 */
TEST(a_populated_block_is_in_memory)
{
	const size_t bytes = 1 << 20;
	char *p = sg_bigmem_alloc(2 * bytes);
	CHECK(p != NULL);
	char *page = (char *)(((uintptr_t)p + 4095) & ~(uintptr_t)4095);
	if (all_resident(page, bytes)) {
		printf("note: the block's pages were in memory already\n");
	} else if (!sg_populate(p, bytes + 4096)) {
		printf("note: MADV_POPULATE_WRITE refused here (a kernel before 5.14?)\n");
	} else {
		CHECK(all_resident(page, bytes));
	}
	sg_bigmem_free(p);
}

RUN_TESTS({"a_populated_block_is_in_memory", a_populated_block_is_in_memory}, /* first: fresh */
	  {"blocks_take_small_pages", blocks_take_small_pages},
	  {"blocks_are_the_regions_aligned_and_hold_what_was_asked",
	   blocks_are_the_regions_aligned_and_hold_what_was_asked},
	  {"a_freed_block_is_reused_and_calloc_zeroes_it",
	   a_freed_block_is_reused_and_calloc_zeroes_it},
	  {"realloc_keeps_contents_in_place_or_moved", realloc_keeps_contents_in_place_or_moved},
	  {"random_blocks_keep_their_contents_and_never_overlap",
	   random_blocks_keep_their_contents_and_never_overlap},
	  {"two_threads_share_the_region", two_threads_share_the_region},
	  {"a_forked_child_uses_the_region_as_its_own", a_forked_child_uses_the_region_as_its_own})
