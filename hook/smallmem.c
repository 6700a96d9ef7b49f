// SPDX-License-Identifier: Apache-2.0
#include "smallmem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "bigmem.h" /* SG_BIGMEM_MIN (the largest class), sg_reserve_small_pages */

#define REGION_BYTES (64ul << 20)
/* The region is cut into units; each unit belongs to one class (unit_class). */
#define UNIT_SHIFT 16
#define UNIT_BYTES (1ul << UNIT_SHIFT)
#define N_UNITS	   (REGION_BYTES >> UNIT_SHIFT)
/* A class takes this many blocks' room at a time (at least a unit). */
#define BLOCKS_PER_SPAN 4

/*
 * Classes: 16 to 256 bytes in steps of 16, then four per doubling up to
 * SG_BIGMEM_MIN (320, 384, 448, 512, 640, ...): a block wastes at most a
 * fifth of itself.
 */
#define N_FINE	   16
#define N_CLASSES  (N_FINE + 4 * 8)
#define FINE_LIMIT 256

_Static_assert(FINE_LIMIT << 8 == SG_BIGMEM_MIN, "the classes end at bigmem's first block");

struct free_block {
	struct free_block *next;
};

struct class_state {
	struct free_block *free; /* blocks given back, last first */
	char *next, *end;	 /* the rest of the class's current span */
};

/* The region's life: mapped at the first call, never unmapped. */
enum region_state { UNTRIED, MAPPING, READY, NONE };

static struct {
	_Atomic int state; /* enum region_state */
	char *base;	   /* set before state turns READY */
	pthread_mutex_t lock;
	size_t top; /* units taken by classes */
	struct class_state class[N_CLASSES];
	uint8_t unit_class[N_UNITS];
} sm = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void lock(void)
{
	pthread_mutex_lock(&sm.lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&sm.lock);
}

static size_t class_size(unsigned c)
{
	if (c < N_FINE)
		return 16 * (c + 1);
	unsigned step = c - N_FINE; /* 0: 320 */
	size_t base = (size_t)FINE_LIMIT << (step / 4);
	return base + (base / 4) * (step % 4 + 1);
}

static unsigned class_of(size_t size)
{
	if (size <= FINE_LIMIT)
		return size ? (unsigned)((size - 1) / 16) : 0;
	unsigned c = N_FINE + 4 * (unsigned)(63 - __builtin_clzl((size - 1) / FINE_LIMIT));
	while (class_size(c) < size)
		c++;
	return c;
}

/*
 * Address space only, in small pages: a hook run touches a page or two of
 * some 30 classes, each first touch about 1 us here. The region's first
 * 2 MiB used to be one transparent huge page, which spared the VMs of
 * 2026-12-05 (a first touch 12 us there) 46 faults in a new 100-rule
 * policy's hook; on the machines of 2026-12-06 faulting it in and zeroing
 * it took 70 to 290 us, and 3.6 ms in a poststop after a new 10,000-rule
 * policy had freed its memory (a huge page the host backs afresh: bigmem.h).
 * Without it every hook process took 0.2 to 0.35 ms less there, and that
 * poststop 3 ms less (sg_reserve_small_pages keeps a
 * kernel with THP "always" from doing the same). Unlocked: a block asked
 * for by another thread while this one maps comes from libc, as state is
 * not READY yet.
 */
static void map_region(void)
{
	char *base = sg_reserve_small_pages(REGION_BYTES);
	if (!base) {
		sm.state = NONE;
		return;
	}
	sm.base = base;
	sm.state = READY;
	/*
	 * Ready first: pthread_atfork mallocs, and its block then comes from the
	 * region. That spares the process libc's malloc, which would set itself
	 * up for this one block (4 system calls and 3 page faults). Served by
	 * the region, the registration does not run out of memory; were it to
	 * fail all the same, a child forked while another thread holds the lock
	 * would wait for it forever (the hook forks from one thread).
	 */
	(void)pthread_atfork(lock, unlock, unlock);
}

static bool ready(void)
{
	int untried = UNTRIED;
	if (sm.state == UNTRIED && atomic_compare_exchange_strong(&sm.state, &untried, MAPPING))
		map_region();
	return sm.state == READY;
}

/* A new span for class @c, from the region's untaken units. Locked. */
static bool new_span(unsigned c)
{
	size_t bytes = class_size(c) * BLOCKS_PER_SPAN;
	size_t units = (bytes + UNIT_BYTES - 1) >> UNIT_SHIFT;
	if (units > N_UNITS - sm.top)
		return false;
	for (size_t i = 0; i < units; i++)
		sm.unit_class[sm.top + i] = (uint8_t)c;
	struct class_state *cs = &sm.class[c];
	cs->next = sm.base + (sm.top << UNIT_SHIFT);
	cs->end = cs->next + (units << UNIT_SHIFT);
	sm.top += units;
	return true;
}

/* A block of class @c, or NULL; *@fresh: it was never handed out (all zero). Locked. */
static void *take(unsigned c, bool *fresh)
{
	struct class_state *cs = &sm.class[c];
	*fresh = !cs->free;
	if (cs->free) {
		struct free_block *b = cs->free;
		cs->free = b->next;
		return b;
	}
	size_t size = class_size(c);
	if ((size_t)(cs->end - cs->next) < size && !new_span(c))
		return NULL;
	void *p = cs->next;
	cs->next += size;
	return p;
}

static void *alloc(size_t size, bool *fresh)
{
	if (size >= SG_BIGMEM_MIN || !ready())
		return NULL;
	lock();
	void *p = take(class_of(size), fresh);
	unlock();
	return p;
}

void *sg_smallmem_alloc(size_t size)
{
	bool fresh;
	return alloc(size, &fresh);
}

/*
 * Units go to one class each and are never taken back, so a block never
 * handed out is still the kernel's zero pages: clearing it would only fault
 * them in (calloc'd tables a hook fills in part).
 */
void *sg_smallmem_calloc(size_t size)
{
	bool fresh;
	void *p = alloc(size, &fresh);
	return p && !fresh ? memset(p, 0, size) : p;
}

bool sg_smallmem_owns(const void *p)
{
	/* READY is stored after base: reading it first makes base safe to read unlocked */
	if (sm.state != READY)
		return false;
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)sm.base;
	return a >= base && a < base + REGION_BYTES;
}

static unsigned class_of_block(const void *p)
{
	return sm.unit_class[(size_t)((const char *)p - sm.base) >> UNIT_SHIFT];
}

size_t sg_smallmem_usable(const void *p)
{
	return class_size(class_of_block(p));
}

void sg_smallmem_free(void *p)
{
	struct free_block *b = p;
	lock();
	struct class_state *cs = &sm.class[class_of_block(p)];
	b->next = cs->free;
	cs->free = b;
	unlock();
}
