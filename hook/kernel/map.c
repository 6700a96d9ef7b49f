// SPDX-License-Identifier: Apache-2.0
#include "kernel/map.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/fault.h"

int sg_map_create(enum bpf_map_type type, const char *name, uint32_t key_size, uint32_t value_size,
		  uint32_t max_entries, uint32_t flags)
{
	union bpf_attr attr;

	if (sg_injected_fault("map_create")) {
		errno = EIO;
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.map_type = type;
	attr.key_size = key_size;
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	attr.map_flags = flags;
	snprintf(attr.map_name, sizeof(attr.map_name), "%s", name);
	return (int)syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
}

/*
 * One BPF_MAP_UPDATE_BATCH call where the kernel has it (5.6+), element by
 * element otherwise.
 */
int sg_map_update_all(int fd, const void *keys, size_t key_size, const void *values,
		      size_t value_size, size_t n, uint64_t flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = flags);
	uint32_t count = (uint32_t)n;

	if (n == 0)
		return 0;
	if (bpf_map_update_batch(fd, keys, values, &count, &opts) == 0 && count == n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, (const char *)keys + i * key_size,
					(const char *)values + i * value_size, flags) < 0)
			return -errno;
	return 0;
}

bool sg_map_shape_is(int fd, size_t key_size, size_t value_size)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.key_size == key_size &&
	       info.value_size == value_size;
}

int sg_map_lookup_sized(int fd, const void *key, size_t key_size, void *value, size_t value_size)
{
	if (!sg_map_shape_is(fd, key_size, value_size))
		return -EPROTO;
	return bpf_map_lookup_elem(fd, key, value) < 0 ? -errno : 0;
}
