/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A keyed hash of long inputs made of SipHash-2-4 (siphash.h) in eight
 * lanes: the hash of a policy's inputs and a policy's key (tables.c) cover
 * hundreds of kilobytes for a large policy, where one SipHash's chain of
 * rounds left most of a CPU idle. Pure logic.
 *
 * The input is cut into 64-byte blocks; word j of every block (8 bytes,
 * little-endian) goes to lane j. Lane j hashes, by SipHash-2-4 under the
 * key, the word j followed by its words of the blocks. The hash is SipHash-2-4
 * under the key of the word 8, the input's length (8 bytes), the eight
 * lanes' hashes, and the bytes after the last whole block. Each message a
 * SipHash reads is told apart by its first word and has one reading, so
 * what holds for SipHash holds for it: no one can predict or collide its
 * outputs without the key.
 *
 * The same value on every CPU: the lanes run eight at a time where the CPU
 * has AVX-512, four at a time with AVX2, two at a time otherwise.
 */
#ifndef SG_SIPHASH8_H
#define SG_SIPHASH8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define SG_SIPHASH8_LANES 8
#define SG_SIPHASH8_BLOCK (8 * SG_SIPHASH8_LANES)

struct sg_siphash8 {
	/* v[i][j]: SipHash's state word vi of lane j, a vector's worth per word */
	uint64_t v[4][SG_SIPHASH8_LANES] __attribute__((aligned(64)));
	uint64_t key[2];
	uint64_t len;				  /* bytes so far */
	unsigned char pending[SG_SIPHASH8_BLOCK]; /* len % 64 of them */
};

void sg_siphash8_init(struct sg_siphash8 *h, const uint64_t key[2]);
void sg_siphash8_update(struct sg_siphash8 *h, const void *data, size_t len);
uint64_t sg_siphash8_final(const struct sg_siphash8 *h);

/* Whether @a and @b hashed the same bytes under the same key so far. */
bool sg_siphash8_same(const struct sg_siphash8 *a, const struct sg_siphash8 *b);

/*
 * For the tests: hash the lanes @lanes_at_once (8, 4 or 2) at a time from
 * now on, whatever the CPU has. False, and nothing changed, when this CPU
 * cannot (or @lanes_at_once is none of those).
 */
bool sg_siphash8_use(unsigned lanes_at_once);

/*
 * Bytes for a hash gathered a few kilobytes at a time: one update per block
 * instead of one per field, where a policy's key hashes three small fields
 * of each of thousands of names. The same bytes, so the same hash.
 */
struct sg_siphash8_batch {
	struct sg_siphash8 *h;
	size_t n;
	unsigned char bytes[4096];
};

static inline void sg_siphash8_batch_init(struct sg_siphash8_batch *b, struct sg_siphash8 *h)
{
	b->h = h;
	b->n = 0;
}

/* Hashes what is gathered: before the hash is read, or updated by another way. */
void sg_siphash8_batch_flush(struct sg_siphash8_batch *b);

/* What does not fit: the gathered bytes are hashed first. */
void sg_siphash8_batch_add_long(struct sg_siphash8_batch *b, const void *data, size_t len);

static inline void sg_siphash8_batch_add(struct sg_siphash8_batch *b, const void *data, size_t len)
{
	if (len > sizeof(b->bytes) - b->n) {
		sg_siphash8_batch_add_long(b, data, len);
		return;
	}
	/* musl's memcpy of a few bytes takes a rep movs and its start-up */
	sg_copy_short(b->bytes + b->n, data, len);
	b->n += len;
}

#endif
