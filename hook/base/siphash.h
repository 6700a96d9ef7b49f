/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SipHash-2-4 (Aumasson and Bernstein), streamed: a keyed hash whose outputs
 * nobody can predict or collide without the key. The hash that names
 * policies on a node (a policy's key and its inputs' digest), and, under a
 * key random per process, of the strings of the hook's own hash tables
 * (sg_table_hash).
 */
#ifndef SG_SIPHASH_H
#define SG_SIPHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sg_siphash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail; /* bytes not yet in a full word, little-endian */
	size_t len;    /* bytes so far */
};

void sg_siphash_init(struct sg_siphash *h, const uint64_t key[2]);
void sg_siphash_update(struct sg_siphash *h, const void *data, size_t len);
uint64_t sg_siphash_final(struct sg_siphash *h);

/*
 * The hash of the tables that hold what a policy says (JSON keys, rule
 * patterns): SipHash under a key random per process, so that no input can
 * choose collisions and make a linear pass quadratic.
 */
uint64_t sg_table_hash(const char *s, size_t len);

#endif
