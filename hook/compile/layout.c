// SPDX-License-Identifier: Apache-2.0
#include "compile/layout.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "compile/eval.h"

size_t sg_long_names(const struct sg_compiled *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_exact; i++)
		n += sg_is_long_name(c->exact[i].len);
	return n;
}

void sg_exact_short_key_of(const struct sg_exact_name *e, struct sg_exact_short_key *key)
{
	assert(!sg_is_long_name(e->len));
	memset(key, 0, sizeof(*key));
	key->layer = e->layer;
	sg_copy_short(key->name, e->name, e->len);
}

int sg_plan_exact(struct sg_hashed_tables *t, const struct sg_compiled *c)
{
	size_t n = 0;

	/* Room for every name: the long ones, few, are skipped below. */
	t->short_names = sg_xcalloc(c->n_exact, sizeof(*t->short_names));
	t->short_hashes = sg_xcalloc(c->n_exact, sizeof(*t->short_hashes));
	for (size_t i = 0; i < c->n_exact; i++) {
		struct sg_exact_short_key key;
		if (sg_is_long_name(c->exact[i].len))
			continue;
		sg_exact_short_key_of(&c->exact[i], &key);
		t->short_names[n] = (uint32_t)i;
		t->short_hashes[n++] = sg_exact_hash(&key, t->seed);
	}
	return sg_hash_plan(t->short_hashes, n, &t->exact);
}

/* The values' keys: each value's hash under the policy's values-hash key. */
int sg_plan_values(struct sg_hashed_tables *t, const struct sg_compiled *c, const __u64 hash_key[2])
{
	_cleanup_free_ uint64_t *hashes = sg_xcalloc(c->n_values, sizeof(*hashes));

	t->value_keys = sg_xcalloc(c->n_values, sizeof(*t->value_keys));
	for (size_t i = 0; i < c->n_values; i++) {
		struct sg_value_hash_key *key = &t->value_keys[i];
		key->set = c->values[i].set;
		key->hash = sg_value_hash(hash_key, c->values[i].value);
		hashes[i] = sg_value_slot_hash(key, t->seed);
	}
	return sg_hash_plan(hashes, c->n_values, &t->values);
}

void sg_lay_exact_buckets(const struct sg_hashed_tables *t, const struct sg_compiled *c,
			  size_t first, size_t count, char *dst, size_t stride)
{
	for (size_t k = 0; k < count; k++) {
		struct sg_exact_bucket *b = (struct sg_exact_bucket *)(dst + k * stride);
		const uint32_t *entry = &t->exact.slot_entry[(first + k) * SG_HASH_WAYS];
		memset(b, 0, sizeof(*b));
		for (size_t w = 0; w < SG_HASH_WAYS; w++) {
			const struct sg_exact_name *e;
			if (entry[w] == SG_HASH_FREE) {
				b->slot[w].rule = SG_NO_RULE;
				continue;
			}
			e = &c->exact[t->short_names[entry[w]]];
			sg_exact_short_key_of(e, &b->slot[w].key);
			b->slot[w].rule = e->rule;
			b->slot[w].tag = sg_exact_tag(t->short_hashes[entry[w]]);
		}
	}
}

void sg_lay_value_buckets(const struct sg_hashed_tables *t, size_t first, size_t count, char *dst,
			  size_t stride)
{
	for (size_t k = 0; k < count; k++) {
		struct sg_value_bucket *b = (struct sg_value_bucket *)(dst + k * stride);
		const uint32_t *entry = &t->values.slot_entry[(first + k) * SG_HASH_WAYS];
		memset(b, 0, sizeof(*b));
		for (size_t w = 0; w < SG_HASH_WAYS; w++) {
			if (entry[w] == SG_HASH_FREE)
				b->slot[w].set = SG_NO_RULE;
			else
				b->slot[w] = t->value_keys[entry[w]];
		}
	}
}

void sg_hashed_tables_free(struct sg_hashed_tables *t)
{
	sg_hash_plan_free(&t->exact);
	sg_hash_plan_free(&t->values);
	free(t->short_names);
	free(t->short_hashes);
	free(t->value_keys);
	t->short_names = NULL;
	t->short_hashes = NULL;
	t->value_keys = NULL;
}
