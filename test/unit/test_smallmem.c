// SPDX-License-Identifier: Apache-2.0
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bigmem.h" /* SG_BIGMEM_MIN */
#include "smallmem.h"
#include "smaps.h"
#include "test.h"

/*
 * Run first: a unit (64 KiB) a class, each in small pages, of which only
 * those its blocks reached are resident; a block never handed out reads as
 * zeroes.
 */
TEST(a_run_holds_only_the_pages_its_blocks_reached)
{
	static const size_t sizes[] = {16, 100, 300, 1000, 5000, 20000, 40000, 60000};
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	unsigned char *b[N];

	for (size_t i = 0; i < N; i++) {
		b[i] = sg_smallmem_alloc(sizes[i]);
		CHECK(b[i] != NULL);
		if (!b[i])
			return;
		memset(b[i], (int)i + 1, sizes[i]);
	}
	CHECK(in_small_pages(b[0]));
	/* each block's pages: 36 in all */
	long rss = smaps_kb(b[0], "Rss:");
	CHECK(rss >= 36 * 4 && rss <= 48 * 4);
	for (size_t i = 0; i < N; i++)
		CHECK(all_bytes(b[i], sizes[i], (unsigned char)(i + 1)));
	unsigned char *fresh = sg_smallmem_calloc(5000);
	CHECK(fresh && all_bytes(fresh, 5000, 0));
	sg_smallmem_free(fresh);
	for (size_t i = 0; i < N; i++)
		sg_smallmem_free(b[i]);
}

/* Every size up to the largest class: a block of its class, aligned, that holds the size. */
TEST(every_size_gets_a_block_that_holds_it)
{
	size_t prev_usable = 0;
	for (size_t size = 1; size < SG_BIGMEM_MIN; size++) {
		unsigned char *p = sg_smallmem_alloc(size);
		CHECK(p && sg_smallmem_owns(p) && (uintptr_t)p % 16 == 0);
		if (!p)
			return;
		size_t usable = sg_smallmem_usable(p);
		CHECK(usable >= size && usable >= prev_usable);
		CHECK(size <= 256 ? usable - size < 16 : usable - size <= usable / 5);
		p[0] = p[usable - 1] = 0xab; /* both ends are the block's */
		prev_usable = usable;
		sg_smallmem_free(p);
	}
	CHECK(sg_smallmem_alloc(SG_BIGMEM_MIN) == NULL); /* bigmem's */
	CHECK(!sg_smallmem_owns(NULL));
	int on_stack;
	CHECK(!sg_smallmem_owns(&on_stack));
}

TEST(a_freed_block_is_the_next_one_of_its_class)
{
	void *a = sg_smallmem_alloc(100);
	void *b = sg_smallmem_alloc(100);
	CHECK(a && b && a != b);
	sg_smallmem_free(a);
	CHECK(sg_smallmem_alloc(110) == a); /* same class: 112 bytes */
	void *other = sg_smallmem_alloc(200);
	CHECK(other != a && other != b);
	sg_smallmem_free(a);
	sg_smallmem_free(b);
	sg_smallmem_free(other);
}

/* Cleared whether fresh (never handed out) or given back dirty: a class's blocks past its free list
 * are fresh. */
TEST(calloc_gives_zeroes_fresh_or_reused)
{
	enum { N = 12, SIZE = 3000 };
	unsigned char *b[N];
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++) {
			b[i] = sg_smallmem_calloc(SIZE);
			CHECK(b[i] && all_bytes(b[i], SIZE, 0));
		}
		for (int i = 0; i < N; i++) {
			memset(b[i], 0xee, SIZE);
			sg_smallmem_free(b[i]);
		}
	}
}

/*
 * Each class across more than one span (a span is 4 blocks, or a unit of
 * 64 KiB): its blocks keep their class's size and never overlap.
 */
TEST(a_classs_blocks_across_spans_are_apart)
{
	enum { N = 40 };
	unsigned char *b[N];
	size_t size = 1;
	while (size < SG_BIGMEM_MIN) {
		unsigned char *first = sg_smallmem_alloc(size);
		size_t usable = first ? sg_smallmem_usable(first) : 0;
		CHECK(usable >= size);
		if (!first)
			return;
		sg_smallmem_free(first);
		int n = usable > 4096 ? 9 : N;
		for (int i = 0; i < n; i++) {
			b[i] = sg_smallmem_alloc(size); /* its class: room for usable */
			CHECK(b[i] && sg_smallmem_usable(b[i]) == usable);
			if (!b[i])
				return;
			memset(b[i], i + 1, usable);
		}
		for (int i = 0; i < n; i++) {
			CHECK(all_bytes(b[i], usable, (unsigned char)(i + 1)));
			sg_smallmem_free(b[i]);
		}
		size = usable + 1;
	}
}

struct churn_arg {
	unsigned seed;
	int bad;
};

/* Blocks of random sizes, each filled with its own byte, freed in random order. */
static void *churn(void *arg)
{
	struct churn_arg *c = arg;
	enum { N = 512 };
	unsigned char *block[N] = {0};
	size_t len[N] = {0};

	for (int round = 0; round < 20000; round++) {
		int i = rand_r(&c->seed) % N;
		if (block[i]) {
			c->bad |= !all_bytes(block[i], len[i], (unsigned char)i);
			sg_smallmem_free(block[i]);
		}
		len[i] = 1 + rand_r(&c->seed) % (rand_r(&c->seed) % 8 ? 300 : SG_BIGMEM_MIN - 1);
		block[i] = sg_smallmem_alloc(len[i]);
		c->bad |= !block[i];
		if (!block[i])
			break;
		memset(block[i], (unsigned char)i, len[i]);
	}
	for (int i = 0; i < N; i++)
		if (block[i]) {
			c->bad |= !all_bytes(block[i], len[i], (unsigned char)i);
			sg_smallmem_free(block[i]);
		}
	return NULL;
}

TEST(two_threads_keep_their_blocks_apart)
{
	struct churn_arg a = {.seed = 1}, b = {.seed = 2};
	pthread_t ta, tb;
	CHECK(pthread_create(&ta, NULL, churn, &a) == 0);
	CHECK(pthread_create(&tb, NULL, churn, &b) == 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK(!a.bad && !b.bad);
}

/* The child of a fork reads, frees and makes blocks as the parent does, on its own copy. */
TEST(a_forked_child_uses_the_blocks_made_before)
{
	char *before = sg_smallmem_alloc(64);
	strcpy(before, "made before the fork");
	pid_t pid = fork();
	if (pid == 0) {
		int ok = strcmp(before, "made before the fork") == 0;
		sg_smallmem_free(before);
		char *again = sg_smallmem_alloc(64);
		ok &= again == before;
		strcpy(again, "the child's");
		_exit(ok ? 0 : 1);
	}
	int status = -1;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(strcmp(before, "made before the fork") == 0);
	sg_smallmem_free(before);
}

/* Run last: the region fills (its 64 MiB of units), then NULL sends callers to libc. */
TEST(a_full_region_refuses_and_its_blocks_stay_good)
{
	enum { SIZE = 60000 };
	size_t n = 0, max = 2000;
	unsigned char **blocks = calloc(max, sizeof(*blocks)); /* libc's: not routed here */
	unsigned char *p;
	while (n < max && (p = sg_smallmem_alloc(SIZE))) {
		p[0] = p[SIZE - 1] = (unsigned char)n;
		blocks[n++] = p;
	}
	/* 1024 units of 64 KiB, less those the tests before took (about 150) */
	CHECK(n > 512 && n < max);
	CHECK(sg_smallmem_alloc(SIZE) == NULL);
	int intact = 1;
	for (size_t i = 0; i < n; i++)
		intact &=
		    blocks[i][0] == (unsigned char)i && blocks[i][SIZE - 1] == (unsigned char)i;
	CHECK(intact);
	sg_smallmem_free(blocks[0]);
	CHECK(sg_smallmem_alloc(SIZE) == blocks[0]); /* a freed block still serves */
	free(blocks);
}

RUN_TESTS({"a_run_holds_only_the_pages_its_blocks_reached",
	   a_run_holds_only_the_pages_its_blocks_reached},
	  {"every_size_gets_a_block_that_holds_it", every_size_gets_a_block_that_holds_it},
	  {"a_freed_block_is_the_next_one_of_its_class",
	   a_freed_block_is_the_next_one_of_its_class},
	  {"calloc_gives_zeroes_fresh_or_reused", calloc_gives_zeroes_fresh_or_reused},
	  {"a_classs_blocks_across_spans_are_apart", a_classs_blocks_across_spans_are_apart},
	  {"two_threads_keep_their_blocks_apart", two_threads_keep_their_blocks_apart},
	  {"a_forked_child_uses_the_blocks_made_before",
	   a_forked_child_uses_the_blocks_made_before},
	  {"a_full_region_refuses_and_its_blocks_stay_good",
	   a_full_region_refuses_and_its_blocks_stay_good})
