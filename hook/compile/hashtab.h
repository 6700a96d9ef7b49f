/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the entries of a hashed table go (bpf/sysctl_guard.h): buckets of
 * SG_HASH_WAYS slots, each entry in the first free slot of its home bucket
 * or of one of the next SG_HASH_PROBES - 1. The loader writes the table the
 * plan describes into an array map with one copy. Pure logic.
 */
#ifndef SG_HASHTAB_H
#define SG_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

#define SG_HASH_FREE UINT32_MAX

/* slot_entry: the entry in each of the n_buckets * SG_HASH_WAYS slots, or SG_HASH_FREE. */
struct sg_hash_plan {
	uint32_t n_homes;   /* home buckets: sg_home_bucket's range */
	uint32_t n_buckets; /* the array's: n_homes and those past them that hold entries */
	uint32_t *slot_entry;
};

/*
 * The home buckets a table of @n entries starts with, for a load of 80%.
 * Placed in order of their homes, nearly every plan of random hashes
 * succeeds at the first size (a simulation: 100 of 100 for 9,000 entries,
 * 97 of 100 for 60,000; placed as they came, 0 of 100 for 9,000 at 70%,
 * 93 at 50%).
 */
uint32_t sg_hash_homes_for(size_t n);

/*
 * Places entries 0..@n-1, whose hashes (sg_exact_hash, sg_value_slot_hash)
 * are @hashes, growing the table until each is within reach of its home
 * bucket. 0, or -E2BIG when they do not fit even a table of 32 slots per
 * entry: more than SG_HASH_WAYS * SG_HASH_PROBES of them share the top 32
 * bits of their hash, or come that close at every size tried.
 */
int sg_hash_plan(const uint64_t *hashes, size_t n, struct sg_hash_plan *plan);

void sg_hash_plan_free(struct sg_hash_plan *plan);

#endif
