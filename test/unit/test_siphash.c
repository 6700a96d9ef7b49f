// SPDX-License-Identifier: Apache-2.0
/* SipHash-2-4 against the reference vectors, whole and streamed in pieces. */
#include <stdlib.h>
#include <string.h>

#include "base/siphash.h"
#include "base/util.h"
#include "test.h"

/*
 * The test vectors of the SipHash authors' reference implementation
 * (vectors.h): key 00..0f, and vector n the hash of the message 00..(n-1).
 * Vector 15 is the paper's worked example (Appendix A).
 */
static const uint64_t vectors[64] = {
    0x726fdb47dd0e0e31ull, 0x74f839c593dc67fdull, 0x0d6c8009d9a94f5aull, 0x85676696d7fb7e2dull,
    0xcf2794e0277187b7ull, 0x18765564cd99a68dull, 0xcbc9466e58fee3ceull, 0xab0200f58b01d137ull,
    0x93f5f5799a932462ull, 0x9e0082df0ba9e4b0ull, 0x7a5dbbc594ddb9f3ull, 0xf4b32f46226bada7ull,
    0x751e8fbc860ee5fbull, 0x14ea5627c0843d90ull, 0xf723ca908e7af2eeull, 0xa129ca6149be45e5ull,
    0x3f2acc7f57c29bdbull, 0x699ae9f52cbe4794ull, 0x4bc1b3f0968dd39cull, 0xbb6dc91da77961bdull,
    0xbed65cf21aa2ee98ull, 0xd0f2cbb02e3b67c7ull, 0x93536795e3a33e88ull, 0xa80c038ccd5ccec8ull,
    0xb8ad50c6f649af94ull, 0xbce192de8a85b8eaull, 0x17d835b85bbb15f3ull, 0x2f2e6163076bcfadull,
    0xde4daaaca71dc9a5ull, 0xa6a2506687956571ull, 0xad87a3535c49ef28ull, 0x32d892fad841c342ull,
    0x7127512f72f27cceull, 0xa7f32346f95978e3ull, 0x12e0b01abb051238ull, 0x15e034d40fa197aeull,
    0x314dffbe0815a3b4ull, 0x027990f029623981ull, 0xcadcd4e59ef40c4dull, 0x9abfd8766a33735cull,
    0x0e3ea96b5304a7d0ull, 0xad0c42d6fc585992ull, 0x187306c89bc215a9ull, 0xd4a60abcf3792b95ull,
    0xf935451de4f21df2ull, 0xa9538f0419755787ull, 0xdb9acddff56ca510ull, 0xd06c98cd5c0975ebull,
    0xe612a3cb9ecba951ull, 0xc766e62cfcadaf96ull, 0xee64435a9752fe72ull, 0xa192d576b245165aull,
    0x0a8787bf8ecb74b2ull, 0x81b3e73d20b49b6full, 0x7fa8220ba3b2eceaull, 0x245731c13ca42499ull,
    0xb78dbfaf3a8d83bdull, 0xea1ad565322a1a0bull, 0x60e61c23a3795013ull, 0x6606d7e446282b93ull,
    0x6ca4ecb15c5f91e1ull, 0x9f626da15c9625f3ull, 0xe51b38608ef25f57ull, 0x958a324ceb064572ull,
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
	for (size_t n = 0; n < SG_ARRAY_SIZE(vectors); n++)
		for (size_t piece = 1; piece <= 64; piece++)
			CHECK(hash_in_pieces(msg, n, piece) == vectors[n]);
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
	for (size_t n = 0; n < SG_ARRAY_SIZE(vectors); n++)
		CHECK(reference_siphash(paper_key, msg, n) == vectors[n]);

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
