/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Blocks under SG_BIGMEM_MIN for the static binary (malloc_route.c): size
 * classes carved from one reserved region, freed blocks kept on a list per
 * class, nothing given back to the kernel before the process exits. Small
 * pages only (smallmem.c says why).
 *
 * Why: musl's malloc gives a group of blocks back (munmap, MADV_FREE) as soon
 * as its last block is freed, and a hook run frees and makes again the few
 * blocks of each size it uses: a 100-rule policy's hook made 37 mappings and
 * unmapped 35 of them, each unmapping 25 to 60 us on these VMs (a TLB
 * shootdown to the other CPU once the process has threads), and each fresh
 * page faulted in again. The hook is a short process: its small blocks stay.
 *
 * Thread-safe; a child forked while another thread allocates finds the
 * region unlocked (pthread_atfork). The region is forked as any memory is.
 * A region that cannot be mapped, or that is full (64 MiB of address space,
 * reserved, not committed), leaves the caller to libc's malloc:
 * sg_smallmem_alloc may return NULL.
 */
#ifndef SG_SMALLMEM_H
#define SG_SMALLMEM_H

#include <stdbool.h>
#include <stddef.h>

/* @size bytes (below SG_BIGMEM_MIN), 16-aligned, or NULL (then use libc's malloc). */
void *sg_smallmem_alloc(size_t size);
/* sg_smallmem_alloc's block, cleared (only if it was used before). */
void *sg_smallmem_calloc(size_t size);
/* Whether @p (any pointer) is a block of the region. */
bool sg_smallmem_owns(const void *p);
/* What the block @p may hold (its size class). */
size_t sg_smallmem_usable(const void *p);
/* Gives the block @p back to its class. */
void sg_smallmem_free(void *p);

#endif
