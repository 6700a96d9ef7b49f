// SPDX-License-Identifier: Apache-2.0
/*
 * hook/malloc_route.c, linked as the static binary links it (-Wl,--wrap,
 * test/meson.build): every malloc, calloc, realloc and free of this test
 * goes through it, large blocks to bigmem, small ones to smallmem.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigmem.h"
#include "smallmem.h"
#include "smaps.h"
#include "test.h"

/* Small pages for small and large blocks alike (smallmem.c, bigmem.h say why). */
TEST(blocks_take_small_pages)
{
	char *small = malloc(100);
	char *large = malloc(1 << 20);
	CHECK(small && large);
	if (!small || !large)
		return;
	memset(large, 1, 1 << 20);
	CHECK(in_small_pages(small));
	CHECK(in_small_pages(large));
	free(large);
	free(small);
}

TEST(large_blocks_are_bigmems_small_ones_smallmems)
{
	char *small = malloc(100);
	char *large = malloc(SG_BIGMEM_MIN);
	memset(small, 1, 100);
	CHECK(small && sg_smallmem_owns(small) && !sg_bigmem_owns(small));
	CHECK(large && sg_bigmem_owns(large));
	CHECK(malloc_usable_size(large) >= SG_BIGMEM_MIN);
	CHECK(malloc_usable_size(small) >= 100);
	free(small);
	free(large);
	free(NULL);
}

TEST(calloc_zeroes_and_refuses_overflow)
{
	unsigned char *p = malloc(1 << 20);
	memset(p, 0xee, 1 << 20);
	free(p); /* kept by bigmem: the next block may be these pages */
	unsigned char *z = calloc(1 << 10, 1 << 10);
	CHECK(z && sg_bigmem_owns(z) && all_bytes(z, 1 << 20, 0));
	free(z);
	volatile size_t too_many = SIZE_MAX / 2; /* hidden from the compiler's check */
	CHECK(calloc(too_many, 4) == NULL);
	unsigned char *mid = calloc(2, 30000); /* under the threshold, whichever way it is asked */
	CHECK(mid && sg_smallmem_owns(mid) && all_bytes(mid, 60000, 0));
	free(mid);
	unsigned char *s = malloc(100);
	memset(s, 0xee, 100);
	free(s); /* the next small block of its class is this one */
	s = calloc(10, 10);
	CHECK(s && sg_smallmem_owns(s) && all_bytes(s, 100, 0));
	free(s);
}

/* A block growing past the threshold moves to bigmem, one shrinking under it back. */
TEST(realloc_moves_between_the_two_with_the_contents)
{
	unsigned char *p = malloc(1000);
	memset(p, 7, 1000);
	p = realloc(p, 3 << 20);
	CHECK(p && sg_bigmem_owns(p) && all_bytes(p, 1000, 7));
	memset(p, 8, 3 << 20);
	p = realloc(p, 5 << 20);
	CHECK(p && sg_bigmem_owns(p) && all_bytes(p, 3 << 20, 8));
	p = realloc(p, 500);
	CHECK(p && sg_smallmem_owns(p) && all_bytes(p, 500, 8));
	uintptr_t before = (uintptr_t)p;
	p = realloc(p, 510); /* within its class: stays */
	CHECK(p && (uintptr_t)p == before && all_bytes(p, 500, 8));
	p = realloc(p, 5000);
	CHECK(p && sg_smallmem_owns(p) && all_bytes(p, 500, 8));
	p = realloc(p, 0); /* a block to free, or NULL */
	free(p);
	unsigned char *q = realloc(NULL, SG_BIGMEM_MIN);
	CHECK(q && sg_bigmem_owns(q));
	free(q);
}

/* A block libc made for itself (strdup's) is freed by whichever allocator made it. */
TEST(blocks_libc_makes_are_freed_by_their_maker)
{
	static char big[SG_BIGMEM_MIN + 10];
	memset(big, 'x', sizeof(big) - 1);
	char *copy = strdup(big); /* routed where libc is linked in, libc's own elsewhere */
	CHECK(copy && strcmp(copy, big) == 0);
	free(copy);
}

RUN_TESTS({"blocks_take_small_pages", blocks_take_small_pages},
	  {"large_blocks_are_bigmems_small_ones_smallmems",
	   large_blocks_are_bigmems_small_ones_smallmems},
	  {"calloc_zeroes_and_refuses_overflow", calloc_zeroes_and_refuses_overflow},
	  {"realloc_moves_between_the_two_with_the_contents",
	   realloc_moves_between_the_two_with_the_contents},
	  {"blocks_libc_makes_are_freed_by_their_maker",
	   blocks_libc_makes_are_freed_by_their_maker})
