// SPDX-License-Identifier: Apache-2.0
#include "smallmem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bigmem.h" /* SG_BIGMEM_MIN (the largest class), sg_reserve_huge_aligned */

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
	_Atomic bool trim_asked; /* sg_smallmem_trim was called */
	bool trimmed;		 /* and has given the pages back (locked) */
	size_t top;		 /* units taken by classes */
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

/* Gives the kernel the pages of [from, to) in the first huge page that no block reached. Locked. */
static void give_back_unreached(const char *from, const char *to)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	char *start = (char *)(((uintptr_t)from + page - 1) & ~(page - 1));
	char *end = sm.base + SG_HUGE_PAGE;
	if (to < end)
		end = (char *)to;
	if (start < end)
		(void)madvise(start, (size_t)(end - start), MADV_DONTNEED);
}

/*
 * A large run's RSS is counted to the page (its limit is 8 MiB, and a new
 * 10,000-rule policy comes within 300 KiB of it): the first huge page is
 * split, keeping the pages blocks reached. What no block reached reads as
 * zeroes again, as a fresh block must, and comes back page by page.
 */
static void trim_now(void)
{
	lock();
	if (!sm.trimmed) {
		sm.trimmed = true;
		(void)madvise(sm.base, SG_HUGE_PAGE, MADV_NOHUGEPAGE);
		for (unsigned c = 0; c < N_CLASSES; c++)
			if (sm.class[c].next)
				give_back_unreached(sm.class[c].next, sm.class[c].end);
		give_back_unreached(sm.base + (sm.top << UNIT_SHIFT), sm.base + SG_HUGE_PAGE);
	}
	unlock();
}

/*
 * Address space only, aligned to a huge page. Every class starts in the
 * first 2 MiB (32 units), which is one huge page: a hook run touches a page
 * or two of some 30 classes there, and on the VMs hooks run in each first
 * touch of a small page is a trap to the hypervisor (about 12 us), where the
 * huge page costs one trap and its zeroing (120 to 140 us). A 100-rule
 * policy's hook took 46 faults fewer and 0.7 ms less. The rest stays in
 * small pages (no THP). A large run gives back what no class reached
 * (sg_smallmem_trim). Unlocked: a block asked for by another thread while
 * this one maps comes from libc, as state is not READY yet.
 */
static void map_region(void)
{
	char *base = sg_reserve_huge_aligned(REGION_BYTES);
	if (!base) {
		sm.state = NONE;
		return;
	}
	/* A run known to be large by now has no use for it. */
	const bool huge = !sm.trim_asked;
	const size_t small_from = huge ? SG_HUGE_PAGE : 0;
	if (huge)
		(void)madvise(base, SG_HUGE_PAGE, MADV_HUGEPAGE);
	(void)madvise(base + small_from, REGION_BYTES - small_from, MADV_NOHUGEPAGE);
	sm.base = base;
	sm.state = READY;
	if (huge && sm.trim_asked)
		trim_now(); /* asked for while this thread mapped */
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

void sg_smallmem_trim(void)
{
	if (!atomic_exchange(&sm.trim_asked, true) && sm.state == READY)
		trim_now();
}
