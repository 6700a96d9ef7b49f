/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Large blocks (SG_BIGMEM_MIN and up) from one region of address space, in
 * small pages.
 *
 * Why: musl's malloc maps a block of 128 KiB and up on its own and unmaps
 * it when it is freed, and a hook run frees and makes again blocks of its
 * policy's size: each unmapping a TLB shootdown once the process has
 * threads, each fresh page faulted in again. Blocks come from the region's free range
 * that fits best (the lowest among equals), so a run's large data stays
 * together, and what is freed is kept for the next block instead of going
 * back to the system (the hook is a short process).
 *
 * Small pages, not transparent huge ones (MADV_NOHUGEPAGE): on the VMs of
 * 2026-12-05 a page's first touch cost 7.8 us and huge pages halved a new
 * 10,000-rule policy's hook; on the machines of 2026-12-06 it costs about
 * 1 us, and a huge page 70 us or, when the host must back it afresh, 7 ms:
 * with huge pages that hook took 16.4 ms in the median but 18.2 on average
 * and 33.8 at the 90th percentile, in small pages 17.1, 17.1 and 18.0, with
 * 1.4 MiB less peak RSS (20 alternating rounds).
 *
 * A block that does not fit (the region is 256 MiB of address space,
 * reserved, not committed) or a region that cannot be mapped (an
 * address-space limit) leaves the caller to malloc or mmap: every function
 * here may return NULL.
 *
 * Thread-safe; a child forked while another thread allocates finds the
 * region unlocked (pthread_atfork).
 */
#ifndef SG_BIGMEM_H
#define SG_BIGMEM_H

#include <stdbool.h>
#include <stddef.h>

/* Smaller blocks are smallmem's (or malloc's): they are packed by size class. */
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
/*
 * @bytes of address space, reserved, not committed, in small pages
 * (MADV_NOHUGEPAGE, for kernels with THP "always"): the region of this
 * file and smallmem.c's. NULL when it cannot be mapped.
 */
void *sg_reserve_small_pages(size_t bytes);

/*
 * Maps the whole pages of the @bytes at @p now, in one call, for memory
 * that is about to be filled from end to end: the page faults of 826 KB
 * read into a fresh buffer, one by one, took 0.13 ms more. Best effort:
 * false where the kernel did not (before Linux 5.14 the pages come one
 * fault at a time).
 */
bool sg_populate(void *p, size_t bytes);

#endif
