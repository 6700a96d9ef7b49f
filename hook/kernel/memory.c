// SPDX-License-Identifier: Apache-2.0
#include "kernel/memory.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include <bpf/bpf.h>

#include "base/util.h"

/* A pinned object: maps and programs are numbered apart, so both ids and kinds tell them. */
struct object {
	bool is_prog;
	uint32_t id; /* 0: the kernel did not say; never taken for another */
	uint64_t memlock;
};

/* What the fdinfo of @fd says of the object open there; false when it has no memlock line. */
static bool read_fdinfo(int fd, struct object *o)
{
	char path[64], line[256];
	unsigned long long v;
	bool have_memlock = false;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	*o = (struct object){0};
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "memlock: %llu", &v) == 1)
			o->memlock = v, have_memlock = true;
		else if (sscanf(line, "map_id: %llu", &v) == 1)
			o->id = (uint32_t)v;
		else if (sscanf(line, "prog_id: %llu", &v) == 1)
			o->id = (uint32_t)v, o->is_prog = true;
	}
	return have_memlock;
}

static bool seen_before(const struct object *seen, size_t n, const struct object *o)
{
	for (size_t i = 0; o->id && i < n; i++)
		if (seen[i].id == o->id && seen[i].is_prog == o->is_prog)
			return true;
	return false;
}

int sg_pinned_memory(const char *dir, uint64_t *bytes)
{
	_cleanup_free_ struct object *seen = NULL;
	size_t n = 0;
	DIR *d = opendir(dir);

	*bytes = 0;
	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d));) {
		char path[PATH_MAX];
		struct object o;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		_cleanup_close_ int fd = bpf_obj_get(path);
		if (fd < 0 || !read_fdinfo(fd, &o) || seen_before(seen, n, &o))
			continue;
		seen = sg_xrealloc(seen, n + 1, sizeof(*seen));
		seen[n++] = o;
		*bytes += o.memlock;
	}
	closedir(d);
	return 0;
}
