// SPDX-License-Identifier: Apache-2.0
#include "base/siphash.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(struct sg_siphash *h)
{
	h->v0 += h->v1;
	h->v1 = ROTL(h->v1, 13) ^ h->v0;
	h->v0 = ROTL(h->v0, 32);
	h->v2 += h->v3;
	h->v3 = ROTL(h->v3, 16) ^ h->v2;
	h->v0 += h->v3;
	h->v3 = ROTL(h->v3, 21) ^ h->v0;
	h->v2 += h->v1;
	h->v1 = ROTL(h->v1, 17) ^ h->v2;
	h->v2 = ROTL(h->v2, 32);
}

static void absorb(struct sg_siphash *h, uint64_t m)
{
	h->v3 ^= m;
	sip_round(h);
	sip_round(h);
	h->v0 ^= m;
}

void sg_siphash_init(struct sg_siphash *h, const uint64_t key[2])
{
	h->v0 = key[0] ^ 0x736f6d6570736575ull;
	h->v1 = key[1] ^ 0x646f72616e646f6dull;
	h->v2 = key[0] ^ 0x6c7967656e657261ull;
	h->v3 = key[1] ^ 0x7465646279746573ull;
	h->tail = 0;
	h->len = 0;
}

/* Two rounds on a word in locals: the update's loop keeps the state in registers. */
#define ABSORB_LOCAL(v0, v1, v2, v3, m)                                                            \
	do {                                                                                       \
		struct sg_siphash _r = {.v0 = v0, .v1 = v1, .v2 = v2, .v3 = v3};                   \
		absorb(&_r, m);                                                                    \
		v0 = _r.v0, v1 = _r.v1, v2 = _r.v2, v3 = _r.v3;                                    \
	} while (0)

/*
 * Whole words however the input is cut: when the pending word holds @fill
 * bytes, each word of input completes it and leaves its last @fill bytes
 * pending. A policy's key hashes megabytes in pieces of every length.
 * The state is in locals: through @h, every round stored and loaded it
 * again, since @data may point anywhere.
 */
void sg_siphash_update(struct sg_siphash *h, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t v0 = h->v0, v1 = h->v1, v2 = h->v2, v3 = h->v3, tail = h->tail;
	unsigned fill = (unsigned)(h->len % 8); /* bytes in tail */

	h->len += len;
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t m;
		memcpy(&m, p, 8); /* little-endian hosts: the word as SipHash reads it */
		if (fill) {
			uint64_t word = tail | m << (8 * fill);
			tail = m >> (64 - 8 * fill);
			m = word;
		}
		ABSORB_LOCAL(v0, v1, v2, v3, m);
	}
	if (len) {
		const uint64_t rest = sg_load_short(p, len);
		tail |= rest << (8 * fill); /* what does not fit the word is shifted out */
		fill += (unsigned)len;
		if (fill >= 8) {
			ABSORB_LOCAL(v0, v1, v2, v3, tail);
			fill -= 8;
			/* the bytes that did not fit: all of @rest but its first 8 - old fill */
			tail = fill ? rest >> (8 * (len - fill)) : 0;
		}
	}
	h->v0 = v0, h->v1 = v1, h->v2 = v2, h->v3 = v3, h->tail = tail;
}

uint64_t sg_siphash_final(struct sg_siphash *h)
{
	absorb(h, h->tail | ((uint64_t)(h->len & 0xff) << 56));
	h->v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(h);
	return h->v0 ^ h->v1 ^ h->v2 ^ h->v3;
}

uint64_t sg_table_hash(const char *s, size_t len)
{
	static uint64_t key[2];
	static bool keyed;
	struct sg_siphash h;

	/* Without the kernel's randomness (early boot), some: nothing blocks on it. */
	if (!keyed && getrandom(key, sizeof(key), GRND_NONBLOCK) != sizeof(key)) {
		key[0] = (uint64_t)(uintptr_t)&key ^ (uint64_t)getpid();
		key[1] = (uint64_t)time(NULL);
	}
	keyed = true;
	sg_siphash_init(&h, key);
	sg_siphash_update(&h, s, len);
	return sg_siphash_final(&h);
}
