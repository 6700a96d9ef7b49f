// SPDX-License-Identifier: Apache-2.0
/*
 * The hashed tables' plans: every entry placed once, in reach of its home
 * bucket, and found by the program's lookup (sysctl_guard.bpf.c), which
 * stops at the first free slot; tables grow when the first size is too
 * crowded, and hashes that no size can place are an error, not a hang.
 */
#include <errno.h>
#include <stdbool.h>

#include "bpf/sysctl_guard.h"
#include "compile/hashtab.h"
#include "test.h"

/* The program's lookup; entries stand for their keys (one key per entry). */
static bool found(const struct sg_hash_plan *p, uint64_t hash, uint32_t entry)
{
	uint32_t b = sg_home_bucket(hash, p->n_homes);
	for (int probe = 0; probe < SG_HASH_PROBES && b < p->n_buckets; probe++, b++) {
		for (int way = 0; way < SG_HASH_WAYS; way++) {
			uint32_t e = p->slot_entry[(size_t)b * SG_HASH_WAYS + way];
			if (e == SG_HASH_FREE)
				return false;
			if (e == entry)
				return true;
		}
	}
	return false;
}

/* Each entry once; buckets filled in order; each entry found from its hash. */
static void check_plan(const struct sg_hash_plan *p, const uint64_t *hashes, size_t n)
{
	const size_t slots = (size_t)p->n_buckets * SG_HASH_WAYS;
	unsigned char *seen = calloc(n ? n : 1, 1);
	size_t placed = 0;

	for (size_t s = 0; s < slots; s++) {
		uint32_t e = p->slot_entry[s];
		if (e == SG_HASH_FREE)
			continue;
		CHECK(e < n && !seen[e]);
		if (e < n)
			seen[e] = 1;
		placed++;
		CHECK(s % SG_HASH_WAYS == 0 || p->slot_entry[s - 1] != SG_HASH_FREE);
	}
	CHECK(placed == n);
	CHECK(p->n_buckets >= p->n_homes && p->n_buckets < p->n_homes + SG_HASH_PROBES);
	/* The array ends with its last bucket used, unless that is a home bucket. */
	CHECK(p->n_buckets == p->n_homes ||
	      p->slot_entry[(size_t)(p->n_buckets - 1) * SG_HASH_WAYS] != SG_HASH_FREE);
	for (size_t e = 0; e < n; e++)
		CHECK(found(p, hashes[e], (uint32_t)e));
	free(seen);
}

static uint64_t next_random(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return sg_hash_mix(*state, 0);
}

TEST(many_random_entries_are_all_found)
{
	enum { N = 20000 };
	uint64_t *hashes = calloc(N, sizeof(*hashes)), state = 42;
	struct sg_hash_plan p;

	for (size_t n = 1; n <= N; n *= 10) {
		for (size_t i = 0; i < n; i++)
			hashes[i] = next_random(&state);
		CHECK(sg_hash_plan(hashes, n, &p) == 0);
		check_plan(&p, hashes, n);
		/* Random hashes fit the first size. */
		CHECK(p.n_homes == sg_hash_homes_for(n));
		sg_hash_plan_free(&p);
	}
	free(hashes);
}

TEST(an_empty_table_has_one_free_bucket)
{
	struct sg_hash_plan p;
	CHECK(sg_hash_plan(NULL, 0, &p) == 0);
	CHECK(p.n_homes == 1);
	for (int w = 0; w < SG_HASH_WAYS; w++)
		CHECK(p.slot_entry[w] == SG_HASH_FREE);
	CHECK(!found(&p, 0, 0));
	sg_hash_plan_free(&p);
}

/* Hashes whose top 32 bits are close together share a home bucket in small tables. */
TEST(a_crowded_table_grows)
{
	enum { N = 80, SHIFT = 53 };
	uint64_t hashes[N];
	struct sg_hash_plan p;

	for (size_t i = 0; i < N; i++)
		hashes[i] = (uint64_t)i << SHIFT | i;
	CHECK(sg_hash_plan(hashes, N, &p) == 0);
	CHECK(p.n_homes > sg_hash_homes_for(N));
	check_plan(&p, hashes, N);
	sg_hash_plan_free(&p);
}

TEST(one_hash_fills_what_one_lookup_reaches_and_no_more)
{
	enum { REACH = SG_HASH_WAYS * SG_HASH_PROBES };
	uint64_t hashes[REACH + 1];
	struct sg_hash_plan p;

	for (size_t i = 0; i <= REACH; i++)
		hashes[i] = 0x1234567890abcdefull;
	CHECK(sg_hash_plan(hashes, REACH, &p) == 0);
	check_plan(&p, hashes, REACH);
	sg_hash_plan_free(&p);

	CHECK(sg_hash_plan(hashes, REACH + 1, &p) == -E2BIG);
	CHECK(p.slot_entry == NULL && p.n_homes == 0 && p.n_buckets == 0);
}

/* The last home bucket's entries go on into the buckets past it, the last one partly filled. */
TEST(probes_go_past_the_last_home)
{
	enum { N = 2 * SG_HASH_WAYS + 3 };
	uint64_t hashes[N];
	struct sg_hash_plan p;

	for (size_t i = 0; i < N; i++)
		hashes[i] = ~0ull - i; /* all in the last bucket */
	CHECK(sg_hash_plan(hashes, N, &p) == 0);
	check_plan(&p, hashes, N);
	CHECK(p.n_buckets == p.n_homes + 2);
	CHECK(p.slot_entry[(size_t)(p.n_homes + 1) * SG_HASH_WAYS + 2] != SG_HASH_FREE);
	CHECK(p.slot_entry[(size_t)(p.n_homes + 1) * SG_HASH_WAYS + 3] == SG_HASH_FREE);
	sg_hash_plan_free(&p);
}

RUN_TESTS(T(many_random_entries_are_all_found), T(an_empty_table_has_one_free_bucket),
	  T(a_crowded_table_grows), T(one_hash_fills_what_one_lookup_reaches_and_no_more),
	  T(probes_go_past_the_last_home))
