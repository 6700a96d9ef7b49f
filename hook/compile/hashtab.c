// SPDX-License-Identifier: Apache-2.0
#include "compile/hashtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bpf/sysctl_guard.h"
#include "base/util.h"

uint32_t sg_hash_homes_for(size_t n)
{
	/* n / (0.8 * SG_HASH_WAYS), rounded up */
	size_t homes = (n * 5 + 4 * SG_HASH_WAYS - 1) / (4 * SG_HASH_WAYS);
	return homes ? (uint32_t)homes : 1;
}

/*
 * Puts entry @e in the first free slot within reach of @home; false when
 * there is none. The array reaches the bucket it went into: past the array's
 * end a lookup finds no bucket, which the program takes for a miss, as it
 * would a free slot.
 */
static bool place(struct sg_hash_plan *plan, uint8_t *used, uint32_t home, uint32_t e)
{
	for (uint32_t b = home; b < home + SG_HASH_PROBES; b++) {
		if (used[b] < SG_HASH_WAYS) {
			plan->slot_entry[(size_t)b * SG_HASH_WAYS + used[b]++] = e;
			if (b >= plan->n_buckets)
				plan->n_buckets = b + 1;
			return true;
		}
	}
	return false;
}

/*
 * The entries in order of their home buckets (a counting sort). Placed in
 * that order, an entry is pushed out of its home only by entries of homes
 * up to its own, never by a later one: the displacements stay short (Robin
 * Hood's layout), where placing them as they come leaves some long ones.
 */
struct homes {
	const uint64_t *hashes;
	uint32_t n_homes;
};

static uint32_t home_of(const void *arg, size_t e)
{
	const struct homes *h = arg;
	return sg_home_bucket(h->hashes[e], h->n_homes);
}

static uint32_t *by_home(const uint64_t *hashes, size_t n, uint32_t n_homes)
{
	const struct homes h = {hashes, n_homes};
	return sg_order_by_key(n, n_homes, home_of, &h);
}

/* One try at plan->n_homes: true when every entry found a slot. */
static bool try_plan(const uint64_t *hashes, size_t n, struct sg_hash_plan *plan)
{
	const uint32_t most_buckets = plan->n_homes + SG_HASH_PROBES - 1;
	const size_t slots = (size_t)most_buckets * SG_HASH_WAYS;
	_cleanup_free_ uint8_t *used = sg_xcalloc(most_buckets, 1);
	_cleanup_free_ uint32_t *order = by_home(hashes, n, plan->n_homes);

	plan->n_buckets = plan->n_homes;
	plan->slot_entry = sg_xrealloc(plan->slot_entry, slots, sizeof(*plan->slot_entry));
	for (size_t s = 0; s < slots; s++)
		plan->slot_entry[s] = SG_HASH_FREE;
	for (size_t i = 0; i < n; i++)
		if (!place(plan, used, sg_home_bucket(hashes[order[i]], plan->n_homes), order[i]))
			return false;
	return true;
}

int sg_hash_plan(const uint64_t *hashes, size_t n, struct sg_hash_plan *plan)
{
	/* Beyond this many the table is mostly empty: the hashes themselves collide. */
	const size_t most_homes = 4 * n + 1;

	plan->slot_entry = NULL;
	if (n > UINT32_MAX / 8)
		return -E2BIG;
	for (size_t homes = sg_hash_homes_for(n); homes <= most_homes; homes += homes / 2 + 1) {
		plan->n_homes = (uint32_t)homes;
		if (try_plan(hashes, n, plan))
			return 0;
	}
	sg_hash_plan_free(plan);
	return -E2BIG;
}

void sg_hash_plan_free(struct sg_hash_plan *plan)
{
	free(plan->slot_entry);
	plan->slot_entry = NULL;
	plan->n_homes = plan->n_buckets = 0;
}
