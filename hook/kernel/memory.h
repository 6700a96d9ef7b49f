/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel memory that pinned BPF objects hold, as the kernel accounts
 * it: the memlock line of each object's fdinfo (charged to the memory
 * cgroup of whoever made it, since 5.11).
 */
#ifndef SG_MEMORY_H
#define SG_MEMORY_H

#include <stdint.h>

/*
 * The memory of the maps and programs pinned in @dir, each object once
 * (a policy's preloaded marks are second pins of its info map). Pins that
 * are neither, or vanish while read, count nothing. 0, or -errno when @dir
 * cannot be read (-ENOENT: it went, as a policy gc frees).
 */
int sg_pinned_memory(const char *dir, uint64_t *bytes);

#endif
