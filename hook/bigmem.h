/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Large blocks (SG_BIGMEM_MIN and up) from one region of address space that
 * the kernel may back with transparent huge pages (MADV_HUGEPAGE).
 *
 * Why: on the VMs these hooks run in, a page fault is a trap to the
 * hypervisor. A 4 KiB page first touched cost 7.8 us here (8 MiB touched
 * page by page: 16 ms; the same in 2 MiB pages: 0.4 ms), and a new
 * 10,000-rule policy's hook touched about 2,000 of them: a fault handler
 * took 28% of its CPU time, and the unmapping of blocks malloc gives back
 * another 6%. Blocks come from the region's free range that fits best (the
 * lowest among equals), so a run's large data shares few huge pages, and
 * what is freed is kept for the next block instead of going back to the
 * system (the hook is a short process).
 *
 * A process that has asked for less than 512 KiB in all keeps small pages
 * (no policy, a policy in use, a small one: a huge page would cost them
 * 2 MiB of RSS and its zeroing); past that the region goes to huge pages
 * from the next 2 MiB on.
 *
 * Where huge pages are off (transparent_hugepage=never) the region still
 * serves, page by page, as malloc would. A block that does not fit (the
 * region is 256 MiB of address space, reserved, not committed) or a region
 * that cannot be mapped (an address-space limit) leaves the caller to
 * malloc or mmap: every function here may return NULL.
 *
 * Thread-safe; a child forked while another thread allocates finds the
 * region unlocked (pthread_atfork). After a fork both processes take new
 * blocks from huge pages of their own (bigmem.c says why).
 */
#ifndef SG_BIGMEM_H
#define SG_BIGMEM_H

#include <stdbool.h>
#include <stddef.h>

/* The size of a transparent huge page on the machines the hook runs on. */
#define SG_HUGE_PAGE (2ul << 20)

/* Smaller blocks are malloc's: it packs them, and a huge page is 2 MiB. */
#define SG_BIGMEM_MIN (64 << 10)

/* @size bytes (any size; SG_BIGMEM_MIN and up is the point), 16-aligned, or NULL. */
void *sg_bigmem_alloc(size_t size);
/* @n * @size zeroed bytes, or NULL (also on overflow). */
void *sg_bigmem_calloc(size_t n, size_t size);
/* Whether @p (any pointer) is a block of the region. */
bool sg_bigmem_owns(const void *p);
/* What the block @p may hold (as malloc_usable_size). */
size_t sg_bigmem_usable(const void *p);
/* Gives the block @p back to the region. */
void sg_bigmem_free(void *p);
/*
 * The block @p grown or shrunk to @size, in place where it can be: its
 * contents kept up to @size. NULL when the region has no room: @p is then
 * unchanged, still the caller's.
 */
void *sg_bigmem_realloc(void *p, size_t size);
/* @bytes of address space (reserved, not committed) from a huge page's start, or NULL. */
void *sg_reserve_huge_aligned(size_t bytes);

#endif
