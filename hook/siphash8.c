// SPDX-License-Identifier: Apache-2.0
#include "siphash8.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "siphash.h"

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound, of one lane's words or of vectors of lanes' words alike. */
#define SIP_ROUND(v0, v1, v2, v3)                                                                  \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = ROTL(v1, 13) ^ v0;                                                            \
		v0 = ROTL(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = ROTL(v3, 16) ^ v2;                                                            \
		v0 += v3;                                                                          \
		v3 = ROTL(v3, 21) ^ v0;                                                            \
		v2 += v1;                                                                          \
		v1 = ROTL(v1, 17) ^ v2;                                                            \
		v2 = ROTL(v2, 32);                                                                 \
	} while (0)

/* SipHash-2-4's compression of word m, in each lane of the v's. */
#define ABSORB(v0, v1, v2, v3, m)                                                                  \
	do {                                                                                       \
		v3 ^= m;                                                                           \
		SIP_ROUND(v0, v1, v2, v3);                                                         \
		SIP_ROUND(v0, v1, v2, v3);                                                         \
		v0 ^= m;                                                                           \
	} while (0)

typedef void blocks_fn(uint64_t v[4][SG_SIPHASH8_LANES], const unsigned char *p, size_t n);

/*
 * The @n blocks at @p into the lanes, two lanes through all the blocks at a
 * time: two chains of rounds, which the CPU runs side by side. Words as
 * SipHash reads them on little-endian hosts, as siphash.c.
 */
static void blocks_by_two(uint64_t v[4][SG_SIPHASH8_LANES], const unsigned char *p, size_t n)
{
	for (unsigned j = 0; j < SG_SIPHASH8_LANES; j += 2) {
		uint64_t a0 = v[0][j], a1 = v[1][j], a2 = v[2][j], a3 = v[3][j];
		uint64_t b0 = v[0][j + 1], b1 = v[1][j + 1], b2 = v[2][j + 1], b3 = v[3][j + 1];
		const unsigned char *q = p + 8 * j;
		for (size_t i = 0; i < n; i++, q += SG_SIPHASH8_BLOCK) {
			uint64_t ma, mb;
			memcpy(&ma, q, 8);
			memcpy(&mb, q + 8, 8);
			ABSORB(a0, a1, a2, a3, ma);
			ABSORB(b0, b1, b2, b3, mb);
		}
		v[0][j] = a0, v[1][j] = a1, v[2][j] = a2, v[3][j] = a3;
		v[0][j + 1] = b0, v[1][j + 1] = b1, v[2][j + 1] = b2, v[3][j + 1] = b3;
	}
}

#if defined(__x86_64__)
typedef uint64_t u64x4 __attribute__((vector_size(32)));
typedef uint64_t u64x8 __attribute__((vector_size(64)));

/* Lanes 0-3 and 4-7 in two AVX2 vectors, the two chains side by side. */
__attribute__((target("avx2"))) static void blocks_by_four(uint64_t v[4][SG_SIPHASH8_LANES],
							   const unsigned char *p, size_t n)
{
	u64x4 a0, a1, a2, a3, b0, b1, b2, b3;
	memcpy(&a0, &v[0][0], 32), memcpy(&b0, &v[0][4], 32);
	memcpy(&a1, &v[1][0], 32), memcpy(&b1, &v[1][4], 32);
	memcpy(&a2, &v[2][0], 32), memcpy(&b2, &v[2][4], 32);
	memcpy(&a3, &v[3][0], 32), memcpy(&b3, &v[3][4], 32);
	for (size_t i = 0; i < n; i++, p += SG_SIPHASH8_BLOCK) {
		u64x4 ma, mb;
		memcpy(&ma, p, 32);
		memcpy(&mb, p + 32, 32);
		ABSORB(a0, a1, a2, a3, ma);
		ABSORB(b0, b1, b2, b3, mb);
	}
	memcpy(&v[0][0], &a0, 32), memcpy(&v[0][4], &b0, 32);
	memcpy(&v[1][0], &a1, 32), memcpy(&v[1][4], &b1, 32);
	memcpy(&v[2][0], &a2, 32), memcpy(&v[2][4], &b2, 32);
	memcpy(&v[3][0], &a3, 32), memcpy(&v[3][4], &b3, 32);
}

/* All eight lanes in one AVX-512 vector, whose rotations are one instruction. */
__attribute__((target("avx512f"))) static void blocks_by_eight(uint64_t v[4][SG_SIPHASH8_LANES],
							       const unsigned char *p, size_t n)
{
	u64x8 v0, v1, v2, v3;
	memcpy(&v0, v[0], 64), memcpy(&v1, v[1], 64), memcpy(&v2, v[2], 64), memcpy(&v3, v[3], 64);
	for (size_t i = 0; i < n; i++, p += SG_SIPHASH8_BLOCK) {
		u64x8 m;
		memcpy(&m, p, 64);
		ABSORB(v0, v1, v2, v3, m);
	}
	memcpy(v[0], &v0, 64), memcpy(v[1], &v1, 64), memcpy(v[2], &v2, 64), memcpy(v[3], &v3, 64);
}
#endif

#if defined(__x86_64__)
/*
 * How many lanes this CPU runs at once: 8 with AVX-512F, 4 with AVX2, as
 * CPUID has them and the kernel saves their registers (XCR0). Three CPUID
 * instructions, each an exit to the hypervisor in a VM, and only once a
 * hash is made: libgcc's __builtin_cpu_supports would bring in a
 * constructor that asks many more in every run, 0.03 ms here.
 */
static unsigned cpu_width(void)
{
	unsigned a, b, c, d, lo, hi;

	__cpuid(0, a, b, c, d);
	if (a < 7)
		return 2;
	__cpuid(1, a, b, c, d);
	if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 2;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	const uint64_t xcr0 = lo | (uint64_t)hi << 32;
	if ((xcr0 & 0x6) != 0x6) /* SSE and AVX state */
		return 2;
	__cpuid_count(7, 0, a, b, c, d);
	if ((b & bit_AVX512F) && (xcr0 & 0xe0) == 0xe0) /* opmask and ZMM state */
		return 8;
	return (b & bit_AVX2) ? 4 : 2;
}
#else
static unsigned cpu_width(void)
{
	return 2;
}
#endif

static blocks_fn *blocks_for(unsigned lanes_at_once)
{
#if defined(__x86_64__)
	if (lanes_at_once == 8)
		return blocks_by_eight;
	if (lanes_at_once == 4)
		return blocks_by_four;
#endif
	return blocks_by_two;
}

static blocks_fn *chosen;

/*
 * Below this many blocks at once (128 KiB) the lanes run two at a time
 * until a larger piece chose: asking the CPU (about 20 us here) costs more
 * than the wider lanes save on less.
 */
#define WIDTH_WORTH_ASKING 2048

/* The widest way this CPU runs, chosen once; threads that ask at once choose alike. */
static void hash_blocks(struct sg_siphash8 *h, const unsigned char *p, size_t n)
{
	blocks_fn *blocks = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
	if (!blocks && n < WIDTH_WORTH_ASKING)
		blocks = blocks_by_two;
	if (!blocks) {
		blocks = blocks_for(cpu_width());
		__atomic_store_n(&chosen, blocks, __ATOMIC_RELAXED);
	}
	blocks(h->v, p, n);
}

bool sg_siphash8_use(unsigned lanes_at_once)
{
	if ((lanes_at_once != 2 && lanes_at_once != 4 && lanes_at_once != 8) ||
	    lanes_at_once > cpu_width())
		return false;
	__atomic_store_n(&chosen, blocks_for(lanes_at_once), __ATOMIC_RELAXED);
	return true;
}

void sg_siphash8_init(struct sg_siphash8 *h, const uint64_t key[2])
{
	memset(h, 0, sizeof(*h));
	h->key[0] = key[0];
	h->key[1] = key[1];
	for (unsigned j = 0; j < SG_SIPHASH8_LANES; j++) {
		struct sg_siphash lane;
		const uint64_t first = j; /* the lane's own first word */
		sg_siphash_init(&lane, key);
		sg_siphash_update(&lane, &first, sizeof(first));
		h->v[0][j] = lane.v0, h->v[1][j] = lane.v1, h->v[2][j] = lane.v2,
		h->v[3][j] = lane.v3;
	}
}

void sg_siphash8_update(struct sg_siphash8 *h, const void *data, size_t len)
{
	const unsigned char *p = data;
	const size_t fill = h->len % SG_SIPHASH8_BLOCK;

	h->len += len;
	if (fill) {
		const size_t take = len < SG_SIPHASH8_BLOCK - fill ? len : SG_SIPHASH8_BLOCK - fill;
		memcpy(h->pending + fill, p, take);
		if (fill + take < SG_SIPHASH8_BLOCK)
			return;
		hash_blocks(h, h->pending, 1);
		p += take, len -= take;
	}
	const size_t n = len / SG_SIPHASH8_BLOCK;
	if (n)
		hash_blocks(h, p, n);
	memcpy(h->pending, p + n * SG_SIPHASH8_BLOCK, len % SG_SIPHASH8_BLOCK);
}

uint64_t sg_siphash8_final(const struct sg_siphash8 *h)
{
	const uint64_t head[2] = {SG_SIPHASH8_LANES, h->len}; /* the word 8, then the length */
	uint64_t lanes[SG_SIPHASH8_LANES];
	struct sg_siphash all;

	for (unsigned j = 0; j < SG_SIPHASH8_LANES; j++) {
		/* Its first word and one per block: SipHash's last word counts them. */
		struct sg_siphash lane = {.v0 = h->v[0][j],
					  .v1 = h->v[1][j],
					  .v2 = h->v[2][j],
					  .v3 = h->v[3][j],
					  .tail = 0,
					  .len = 8 * (1 + h->len / SG_SIPHASH8_BLOCK)};
		lanes[j] = sg_siphash_final(&lane);
	}
	sg_siphash_init(&all, h->key);
	sg_siphash_update(&all, head, sizeof(head));
	sg_siphash_update(&all, lanes, sizeof(lanes));
	sg_siphash_update(&all, h->pending, h->len % SG_SIPHASH8_BLOCK);
	return sg_siphash_final(&all);
}

bool sg_siphash8_same(const struct sg_siphash8 *a, const struct sg_siphash8 *b)
{
	return a->key[0] == b->key[0] && a->key[1] == b->key[1] && a->len == b->len &&
	       memcmp(a->v, b->v, sizeof(a->v)) == 0 &&
	       memcmp(a->pending, b->pending, a->len % SG_SIPHASH8_BLOCK) == 0;
}

void sg_siphash8_batch_flush(struct sg_siphash8_batch *b)
{
	sg_siphash8_update(b->h, b->bytes, b->n);
	b->n = 0;
}

void sg_siphash8_batch_add_long(struct sg_siphash8_batch *b, const void *data, size_t len)
{
	sg_siphash8_batch_flush(b);
	if (len > sizeof(b->bytes)) {
		sg_siphash8_update(b->h, data, len);
		return;
	}
	memcpy(b->bytes, data, len);
	b->n = len;
}
