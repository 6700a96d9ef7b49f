/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SipHash-2-4 (Aumasson and Bernstein), streamed: a keyed hash whose outputs
 * nobody can predict or collide without the key. It names policies on a node
 * (tables.c) under the node's secret key, so a policy written to collide with
 * another cannot be built offline. Pure logic.
 */
#ifndef SG_SIPHASH_H
#define SG_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct sg_siphash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail; /* bytes not yet in a full word, little-endian */
	size_t len;    /* bytes so far */
};

void sg_siphash_init(struct sg_siphash *h, const uint64_t key[2]);
void sg_siphash_update(struct sg_siphash *h, const void *data, size_t len);
uint64_t sg_siphash_final(struct sg_siphash *h);

/*
 * Bytes for @h gathered a few kilobytes at a time: one update per block
 * instead of one per field, where a policy's key hashes three small fields
 * of each of thousands of names. The same bytes, so the same hash.
 */
struct sg_siphash_batch {
	struct sg_siphash *h;
	size_t n;
	unsigned char bytes[4096];
};

static inline void sg_siphash_batch_init(struct sg_siphash_batch *b, struct sg_siphash *h)
{
	b->h = h;
	b->n = 0;
}

/* Hashes what is gathered: before the hash is read, or updated by another way. */
void sg_siphash_batch_flush(struct sg_siphash_batch *b);

static inline void sg_siphash_batch_add(struct sg_siphash_batch *b, const void *data, size_t len)
{
	if (len > sizeof(b->bytes) - b->n) {
		sg_siphash_batch_flush(b);
		if (len > sizeof(b->bytes)) {
			sg_siphash_update(b->h, data, len);
			return;
		}
	}
	/* musl's memcpy of a few bytes takes a rep movs and its start-up */
	sg_copy_short(b->bytes + b->n, data, len);
	b->n += len;
}

#endif
