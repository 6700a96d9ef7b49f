// SPDX-License-Identifier: Apache-2.0
#include <stdlib.h>
#include <string.h>

#include "spare.h"
#include "test.h"
#include "util.h"

/* Frees every block kept, so that each test starts with none (a take fits up to twice its size). */
static void drain(void)
{
	void *p;
	for (size_t size = SG_SPARE_MIN; size <= (64u << 20); size *= 2)
		while ((p = sg_spare_take(size)))
			free(p);
}

TEST(a_large_block_given_back_is_taken_again)
{
	drain();
	char *p = malloc(1 << 20);
	memset(p, 7, 1 << 20);
	sg_spare_put(p);
	CHECK(sg_spare_take(1 << 21) == NULL);	 /* too small for it */
	CHECK(sg_spare_take(100 << 10) == NULL); /* over twice what is asked: kept for more */
	char *again = sg_spare_take((1 << 20) - 4096);
	CHECK(again == p);
	CHECK(sg_spare_take((1 << 20) - 4096) == NULL); /* taken once */
	again = realloc(again, 3 << 20);		/* a kept block is malloc's as any */
	CHECK(again != NULL);
	free(again);
}

TEST(small_blocks_and_null_are_freed)
{
	drain();
	sg_spare_put(NULL);
	sg_spare_put(malloc(100));
	sg_spare_put(malloc(SG_SPARE_MIN / 2));
	CHECK(sg_spare_take(SG_SPARE_MIN / 2) == NULL); /* below the minimum: never kept */
	CHECK(sg_spare_take(SG_SPARE_MIN) == NULL);
}

TEST(the_smallest_that_fits_is_taken)
{
	drain();
	char *big = malloc(400 << 10), *mid = malloc(300 << 10), *small = malloc(200 << 10);
	sg_spare_put(big);
	sg_spare_put(mid);
	sg_spare_put(small);
	CHECK(sg_spare_take(250 << 10) == mid);
	CHECK(sg_spare_take(150 << 10) == small);
	CHECK(sg_spare_take(250 << 10) == big);
	free(big);
	free(mid);
	free(small);
}

TEST(a_full_cache_frees_what_comes)
{
	drain();
	void *kept[32];
	for (size_t i = 0; i < 32; i++)
		sg_spare_put(kept[i] = malloc(SG_SPARE_MIN));
	size_t back = 0;
	void *p;
	while ((p = sg_spare_take(SG_SPARE_MIN))) {
		back++;
		free(p);
	}
	CHECK(back > 0 && back < 32); /* a few kept, the rest freed (ASan would see a leak) */
}

TEST(allocations_take_kept_blocks_zeroed)
{
	drain();
	char *p = malloc(256 << 10);
	memset(p, 0xff, 256 << 10);
	sg_spare_put(p);
	char *z = sg_xcalloc(200 << 10, 1);
	CHECK(z == p);
	for (size_t i = 0; i < (200u << 10); i += 4096)
		CHECK(z[i] == 0);
	CHECK(z[(200 << 10) - 1] == 0);
	sg_spare_put(z);
	char *r = sg_xrealloc(NULL, 150 << 10, 1); /* a first allocation through realloc */
	CHECK(r == p);
	free(r);
}

TEST(release_frees_every_block_kept)
{
	drain();
	sg_spare_put(malloc(SG_SPARE_MIN));
	sg_spare_put(malloc(4 * SG_SPARE_MIN));
	sg_spare_release(); /* freed, or ASan would see them leak */
	CHECK(sg_spare_take(SG_SPARE_MIN) == NULL);
	CHECK(sg_spare_take(4 * SG_SPARE_MIN) == NULL);
}

RUN_TESTS(T(a_large_block_given_back_is_taken_again), T(small_blocks_and_null_are_freed),
	  T(the_smallest_that_fits_is_taken), T(a_full_cache_frees_what_comes),
	  T(allocations_take_kept_blocks_zeroed), T(release_frees_every_block_kept))
