// SPDX-License-Identifier: Apache-2.0
/* SipHash-2-4 against the reference vectors, whole and streamed in pieces. */
#include <string.h>

#include "siphash.h"
#include "test.h"

/* Key 00..0f, message 00..(n-1): the paper's reference implementation's outputs. */
static const struct {
	size_t n;
	uint64_t out;
} vectors[] = {
    {0, 0x726fdb47dd0e0e31ull},
    {1, 0x74f839c593dc67fdull},
    {63, 0x958a324ceb064572ull},
};

static uint64_t hash_in_pieces(const unsigned char *msg, size_t n, size_t piece)
{
	const uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
	struct sg_siphash h;

	sg_siphash_init(&h, key);
	for (size_t at = 0; at < n; at += piece)
		sg_siphash_update(&h, msg + at, n - at < piece ? n - at : piece);
	return sg_siphash_final(&h);
}

TEST(reference_vectors_whole_and_in_pieces)
{
	unsigned char msg[64];
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)i;
	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++)
		for (size_t piece = 1; piece <= 64; piece++)
			CHECK(hash_in_pieces(msg, vectors[v].n, piece) == vectors[v].out);
}

TEST(irregular_pieces_hash_as_the_whole)
{
	/* Pieces of 1 to 23 bytes in turn: the pending word holds every count of bytes */
	unsigned char msg[4096];
	const uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
	struct sg_siphash whole, cut;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)(i * 131 + 7);
	sg_siphash_init(&whole, key);
	sg_siphash_update(&whole, msg, sizeof(msg));
	sg_siphash_init(&cut, key);
	for (size_t at = 0, piece = 1; at < sizeof(msg); at += piece, piece = piece % 23 + 1)
		sg_siphash_update(&cut, msg + at,
				  sizeof(msg) - at < piece ? sizeof(msg) - at : piece);
	CHECK(sg_siphash_final(&whole) == sg_siphash_final(&cut));
}

RUN_TESTS(T(reference_vectors_whole_and_in_pieces), T(irregular_pieces_hash_as_the_whole))
