/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hashed tables of a compiled policy (bpf/sysctl_guard.h): the short
 * exact names and the allowed values, laid out in buckets as the program
 * reads them. Pure logic: tables.c makes the maps and has these functions
 * write the buckets into their mappings.
 */
#ifndef SG_LAYOUT_H
#define SG_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compile/compile.h"
#include "compile/hashtab.h"

/* Whether a name of @len bytes goes into the exact table with the long keys (a kernel hash map). */
static inline bool sg_is_long_name(size_t len)
{
	return len + 1 > SG_SHORT_NAME_MAX;
}

size_t sg_long_names(const struct sg_compiled *c);

/* Where the entries go, and what they are; all zero is empty. */
struct sg_hashed_tables {
	uint64_t seed; /* the policy's table_seed: set before planning */
	struct sg_hash_plan exact, values;
	uint32_t *short_names;		      /* exact's entries: indices into c->exact */
	uint64_t *short_hashes;		      /* and their hashes, for the tags */
	struct sg_value_hash_key *value_keys; /* values' entries */
};

/* The key of a short exact name, zero padded as the program's. */
void sg_exact_short_key_of(const struct sg_exact_name *e, struct sg_exact_short_key *key);

/* Plans one table (sg_hash_plan's errors). */
int sg_plan_exact(struct sg_hashed_tables *t, const struct sg_compiled *c);
int sg_plan_values(struct sg_hashed_tables *t, const struct sg_compiled *c,
		   const __u64 hash_key[2]);

/* Writes @count buckets from bucket @first on at @dst, @stride bytes apart. */
void sg_lay_exact_buckets(const struct sg_hashed_tables *t, const struct sg_compiled *c,
			  size_t first, size_t count, char *dst, size_t stride);
void sg_lay_value_buckets(const struct sg_hashed_tables *t, size_t first, size_t count, char *dst,
			  size_t stride);

void sg_hashed_tables_free(struct sg_hashed_tables *t);

#endif
