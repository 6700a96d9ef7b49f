// SPDX-License-Identifier: Apache-2.0
/*
 * The eight-lane hash against its definition (siphash8.h) built from plain
 * SipHash-2-4 (test_siphash.c checks that one), with every way this CPU
 * runs the lanes; streamed in pieces; compared; batched.
 */
#include <stdlib.h>
#include <string.h>

#include "siphash.h"
#include "siphash8.h"
#include "test.h"

static const uint64_t key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};

static uint64_t plain(const void *msg, size_t n)
{
	struct sg_siphash h;
	sg_siphash_init(&h, key);
	sg_siphash_update(&h, msg, n);
	return sg_siphash_final(&h);
}

/* The definition, word by word: each lane's message spelled out, then the whole. */
static uint64_t defined(const unsigned char *msg, size_t n)
{
	const size_t blocks = n / 64;
	uint64_t *lane_msg = calloc(blocks + 1, sizeof(uint64_t));
	uint64_t all[2 + 8 + 8] = {8, n};

	for (uint64_t j = 0; j < 8; j++) {
		lane_msg[0] = j;
		for (size_t b = 0; b < blocks; b++)
			memcpy(&lane_msg[1 + b], msg + 64 * b + 8 * j, 8);
		all[2 + j] = plain(lane_msg, 8 * (blocks + 1));
	}
	memcpy(&all[10], msg + 64 * blocks, n % 64);
	free(lane_msg);
	return plain(all, 8 * 10 + n % 64);
}

static uint64_t in_pieces(const unsigned char *msg, size_t n, size_t piece)
{
	struct sg_siphash8 h;
	sg_siphash8_init(&h, key);
	for (size_t at = 0; at < n; at += piece)
		sg_siphash8_update(&h, msg + at, n - at < piece ? n - at : piece);
	return sg_siphash8_final(&h);
}

static unsigned char *message(size_t n)
{
	unsigned char *msg = malloc(n);
	for (size_t i = 0; i < n; i++)
		msg[i] = (unsigned char)(i * 37 + 11 + (i >> 8));
	return msg;
}

/*
 * Before any width is chosen (this test runs first): small pieces run two
 * lanes at a time, and the first large one asks the CPU which way.
 */
TEST(as_defined_before_a_width_is_chosen)
{
	const size_t len = 300000;
	unsigned char *msg = message(len);
	const uint64_t want = defined(msg, len);

	CHECK(in_pieces(msg, len, 1000) == want); /* pieces below the size worth asking */
	CHECK(in_pieces(msg, len, len) == want);  /* one above it: the CPU is asked */
	CHECK(in_pieces(msg, len, 1000) == want); /* and its way taken since */
	free(msg);
}

/* Every length to 300 and a long one, whole and cut, as defined, with each way to run the lanes. */
TEST(as_defined_with_every_width)
{
	const size_t long_len = 100003;
	unsigned char *msg = message(long_len);
	int widths = 0;

	for (unsigned width = 2; width <= 8; width *= 2) {
		if (!sg_siphash8_use(width)) {
			printf("  (this CPU cannot run %u lanes at once)\n", width);
			continue;
		}
		widths++;
		for (size_t n = 0; n <= 300; n++) {
			const uint64_t want = defined(msg, n);
			CHECK(in_pieces(msg, n, n ? n : 1) == want);
			CHECK(in_pieces(msg, n, 1) == want);
			CHECK(in_pieces(msg, n, 63) == want);
			CHECK(in_pieces(msg, n, 65) == want);
		}
		const uint64_t want = defined(msg, long_len);
		for (size_t piece = 1; piece <= 130; piece += 3)
			CHECK(in_pieces(msg, long_len, piece) == want);
		CHECK(in_pieces(msg, long_len, long_len) == want);
	}
	CHECK(widths >= 1);
	CHECK(!sg_siphash8_use(3));
	free(msg);
}

/* A byte changed anywhere, in a lane's word or in the bytes after the last block, changes it. */
TEST(each_byte_counts)
{
	unsigned char *msg = message(200);
	const uint64_t base = in_pieces(msg, 200, 200);

	for (size_t i = 0; i < 200; i++) {
		msg[i] ^= 0x40;
		CHECK(in_pieces(msg, 200, 200) != base);
		msg[i] ^= 0x40;
	}
	/* a zero byte more is another input */
	unsigned char *longer = calloc(1, 201);
	memcpy(longer, msg, 200);
	CHECK(in_pieces(longer, 201, 201) != base);
	free(longer);
	free(msg);
}

TEST(same_after_the_same_bytes_however_cut)
{
	unsigned char *msg = message(300);
	struct sg_siphash8 a, b, c;
	const uint64_t other_key[2] = {1, 2};

	sg_siphash8_init(&a, key);
	sg_siphash8_init(&b, key);
	CHECK(sg_siphash8_same(&a, &b));
	sg_siphash8_update(&a, msg, 150);
	for (size_t at = 0; at < 150; at += 7)
		sg_siphash8_update(&b, msg + at, 150 - at < 7 ? 150 - at : 7);
	CHECK(sg_siphash8_same(&a, &b));
	/* another pending byte */
	c = b;
	sg_siphash8_update(&a, "x", 1);
	sg_siphash8_update(&c, "y", 1);
	CHECK(!sg_siphash8_same(&a, &c));
	/* more bytes */
	CHECK(!sg_siphash8_same(&a, &b));
	/* another key */
	sg_siphash8_init(&a, key);
	sg_siphash8_init(&b, other_key);
	CHECK(!sg_siphash8_same(&a, &b));
	free(msg);
}

/*
 * A batch hashes the bytes it was given, however they fall against its
 * buffer: fields, strings (their NULs too) and blocks larger than it.
 */
TEST(a_batch_hashes_as_the_updates_would)
{
	static char text[10000];
	struct sg_siphash8 direct, batched;
	struct sg_siphash8_batch *b = malloc(sizeof(*b));
	uint64_t rng = 7;

	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	sg_siphash8_init(&direct, key);
	sg_siphash8_init(&batched, key);
	sg_siphash8_batch_init(b, &batched);
	for (int i = 0; i < 3000; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		size_t len = (rng >> 33) % (i % 100 == 99 ? 9000 : 90), at = (rng >> 20) % 1000;
		if (rng >> 63) {
			char saved = text[at + len];
			text[at + len] = '\0';
			sg_siphash8_batch_add(b, text + at, len + 1); /* a string with its NUL */
			sg_siphash8_update(&direct, text + at, len + 1);
			text[at + len] = saved;
		} else {
			sg_siphash8_batch_add(b, text + at, len);
			sg_siphash8_update(&direct, text + at, len);
		}
	}
	sg_siphash8_batch_flush(b);
	CHECK(sg_siphash8_final(&batched) == sg_siphash8_final(&direct));
	free(b);
}

RUN_TESTS(T(as_defined_before_a_width_is_chosen), T(as_defined_with_every_width),
	  T(each_byte_counts), T(same_after_the_same_bytes_however_cut),
	  T(a_batch_hashes_as_the_updates_would))
