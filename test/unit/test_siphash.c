// SPDX-License-Identifier: Apache-2.0
/* SipHash-2-4 against the reference vectors, whole and streamed in pieces. */
#include <stdlib.h>
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

/* SipHash-2-4 as the paper writes it: a byte at a time, nothing streamed. */
#define REF_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define REF_ROUND(v)                                                                               \
	do {                                                                                       \
		v[0] += v[1], v[1] = REF_ROTL(v[1], 13) ^ v[0], v[0] = REF_ROTL(v[0], 32);         \
		v[2] += v[3], v[3] = REF_ROTL(v[3], 16) ^ v[2];                                    \
		v[0] += v[3], v[3] = REF_ROTL(v[3], 21) ^ v[0];                                    \
		v[2] += v[1], v[1] = REF_ROTL(v[1], 17) ^ v[2], v[2] = REF_ROTL(v[2], 32);         \
	} while (0)

static uint64_t reference_siphash(const uint64_t key[2], const unsigned char *msg, size_t n)
{
	uint64_t v[4] = {key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
			 key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
	uint64_t m = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n)
			m |= (uint64_t)(n & 0xff) << 56;
		else
			m |= (uint64_t)msg[i] << (8 * (i % 8));
		if (i == n || i % 8 == 7) {
			v[3] ^= m;
			REF_ROUND(v);
			REF_ROUND(v);
			v[0] ^= m;
			m = 0;
		}
		if (i == n)
			break;
	}
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		REF_ROUND(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* Every length to 80, cut into pieces of every length to 17 (and whole), against the reference. */
TEST(every_length_and_cut_as_the_reference)
{
	const uint64_t key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
	unsigned char msg[80];

	/* the reference itself, against the paper's vectors */
	const uint64_t paper_key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)i;
	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++)
		CHECK(reference_siphash(paper_key, msg, vectors[v].n) == vectors[v].out);

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)(i * 37 + 11);
	for (size_t n = 0; n <= sizeof(msg); n++) {
		const uint64_t want = reference_siphash(key, msg, n);
		for (size_t piece = 1; piece <= 17; piece++) {
			struct sg_siphash h;
			sg_siphash_init(&h, key);
			for (size_t at = 0; at < n; at += piece)
				sg_siphash_update(&h, msg + at, n - at < piece ? n - at : piece);
			CHECK(sg_siphash_final(&h) == want);
		}
	}
}

RUN_TESTS(T(reference_vectors_whole_and_in_pieces), T(irregular_pieces_hash_as_the_whole),
	  T(every_length_and_cut_as_the_reference))
