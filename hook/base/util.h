/* SPDX-License-Identifier: Apache-2.0 */
/* Cleanup attributes and small helpers shared by every file of the hook. */
#ifndef SG_UTIL_H
#define SG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"

/* The "s" a count of @n things takes in a message: "1 rule", "2 rules". */
static inline const char *sg_plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static inline void sg_freep(void *p)
{
	free(*(void **)p);
}

static inline void sg_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void sg_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_	 __attribute__((cleanup(sg_freep)))
#define _cleanup_close_	 __attribute__((cleanup(sg_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(sg_fclosep)))

#define SG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The high bit of each byte of @w that equals @byte, for scans that take
 * eight bytes at a time (no false positives below a true one).
 */
static inline uint64_t sg_bytes_equal(uint64_t w, unsigned char byte)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t x = w ^ (ones * byte);
	return (x - ones) & ~x & (ones << 7);
}

/*
 * strcmp(a, b) == 0, inline, for the few short words of keys and enums that
 * mostly differ in their first byte: calls of strcmp were an eighth of
 * parsing a large policy.
 */
static inline bool sg_same_word(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* Seconds from @a to @b (CLOCK_MONOTONIC readings). */
static inline double sg_seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Hands ownership out of a cleanup variable. */
#define SG_TAKE(p)                                                                                 \
	({                                                                                         \
		__typeof__(p) _taken = (p);                                                        \
		(p) = NULL;                                                                        \
		_taken;                                                                            \
	})

/* Hands ownership of a descriptor out of a cleanup variable. */
#define SG_TAKE_FD(fd)                                                                             \
	({                                                                                         \
		int _taken_fd = (fd);                                                              \
		(fd) = -1;                                                                         \
		_taken_fd;                                                                         \
	})

/*
 * Reads a whole file (or stream, for "-") of at most @max bytes into a NUL
 * terminated buffer. Errors are input errors (exit 1) that name @path.
 */
int sg_read_file(const char *path, size_t max, char **out, size_t *len, struct sg_err *err);

/* Reads all of @fd (stdin for the hook's state), at most @max bytes. */
int sg_read_fd(int fd, const char *what, size_t max, char **out, size_t *len, struct sg_err *err);

/* Aborts on allocation failure: the hook cannot do anything useful without memory. */
void *sg_xmalloc(size_t size);
void *sg_xcalloc(size_t n, size_t size);
void *sg_xrealloc(void *p, size_t n, size_t size);
char *sg_xstrdup(const char *s);
char *sg_xstrndup(const char *s, size_t n);

/*
 * Items 0 to @n - 1 in order of their keys, each below @n_keys, the order
 * of equal keys kept (a counting sort: a pass over the items and one over
 * the keys). @key gives item @i's key; it is called twice an item.
 */
uint32_t *sg_order_by_key(size_t n, uint32_t n_keys, uint32_t (*key)(const void *arg, size_t i),
			  const void *arg);

/*
 * Copies @n bytes, as memcpy: inline, a word at a time. For the names and
 * values of a policy, tens of bytes each: musl's memcpy moves the bytes that
 * are not whole aligned words one instruction each (about 11 ns for 40
 * bytes, against 2 here), and a large policy copies tens of thousands.
 */
static inline void sg_copy_short(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	uint64_t w;

	if (n < sizeof(w)) {
		/*
		 * Fewer than eight: two copies that overlap, no loop (gcc turns a
		 * byte loop into a call of memcpy, the very call this avoids).
		 */
		if (n >= 4) {
			uint32_t a, z;
			memcpy(&a, s, 4);
			memcpy(&z, s + n - 4, 4);
			memcpy(d, &a, 4);
			memcpy(d + n - 4, &z, 4);
		} else if (n >= 2) {
			uint16_t a, z;
			memcpy(&a, s, 2);
			memcpy(&z, s + n - 2, 2);
			memcpy(d, &a, 2);
			memcpy(d + n - 2, &z, 2);
		} else if (n) {
			d[0] = s[0];
		}
		return;
	}
	for (size_t i = 0; i + sizeof(w) <= n; i += sizeof(w)) {
		memcpy(&w, s + i, sizeof(w));
		memcpy(d + i, &w, sizeof(w));
	}
	/* The tail: the last whole word, overlapping what was copied. */
	memcpy(&w, s + n - sizeof(w), sizeof(w));
	memcpy(d + n - sizeof(w), &w, sizeof(w));
}

/*
 * The @n (under 8) bytes at @p as the low bytes of a little-endian word,
 * zeros above: two loads that overlap, whose shared bytes are alike, so
 * or-ing them is exact. For the last bytes of a name or a hashed piece: a
 * byte loop there cost more than the hashing.
 */
static inline uint64_t sg_load_short(const void *p, size_t n)
{
	const unsigned char *b = p;

	if (n >= 4) {
		uint32_t a, z;
		memcpy(&a, b, 4);
		memcpy(&z, b + n - 4, 4);
		return a | (uint64_t)z << (8 * (n - 4));
	}
	if (n >= 2) {
		uint16_t a, z;
		memcpy(&a, b, 2);
		memcpy(&z, b + n - 2, 2);
		return a | (uint64_t)z << (8 * (n - 2));
	}
	return n ? b[0] : 0;
}

char *sg_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Swaps two paths atomically (renameat2's RENAME_EXCHANGE); -1 and errno on failure. */
int sg_rename_exchange(const char *a, const char *b);

#endif
