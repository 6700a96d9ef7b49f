/* SPDX-License-Identifier: Apache-2.0 */
/* Maps made, filled and read through bpf(2) as every kernel step of the hook needs them. */
#ifndef SG_MAP_H
#define SG_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

/*
 * BPF_MAP_CREATE, named. Not libbpf's bpf_map_create: it loads a program to
 * probe whether the kernel takes map names (4.15+, older than our floor),
 * which cost a verification and a JIT on every hook run. -1 and errno on
 * failure.
 */
int sg_map_create(enum bpf_map_type type, const char *name, uint32_t key_size, uint32_t value_size,
		  uint32_t max_entries, uint32_t flags);

/*
 * Writes @n key/value pairs into map @fd: one BPF_MAP_UPDATE_BATCH call where
 * the kernel has it (5.6+), element by element otherwise. 0 or -errno.
 */
int sg_map_update_all(int fd, const void *keys, size_t key_size, const void *values,
		      size_t value_size, size_t n, uint64_t flags);

/*
 * Whether map @fd has keys and values of these sizes. A map pinned by
 * another build of sysctl-guard (a node mid-upgrade, or rolled back) may
 * hold larger ones, which the kernel would copy past the end of ours.
 */
bool sg_map_shape_is(int fd, size_t key_size, size_t value_size);

/* bpf_map_lookup_elem, once the sizes are checked: 0, -errno, or -EPROTO for another shape. */
int sg_map_lookup_sized(int fd, const void *key, size_t key_size, void *value, size_t value_size);

#endif
