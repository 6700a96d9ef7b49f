// SPDX-License-Identifier: Apache-2.0
#include "kernel/seen.h"

#include <dirent.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "bpf/sysctl_guard.h"
#include "base/util.h"
#include "kernel/map.h"
#include "kernel/program.h"

/* The keys of @fd's records for which @drop says so, then deleted: not while iterating. */
static void forget_where(int fd, bool (*drop)(uint64_t cgid, void *arg), void *arg)
{
	struct sg_seen_key key, next;
	struct sg_seen_key *doomed = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	if (!sg_map_shape_is(fd, sizeof(next), sizeof(uint64_t)))
		return;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!drop(next.guard, arg))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			doomed = sg_xrealloc(doomed, cap, sizeof(*doomed));
		}
		doomed[n++] = next;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &doomed[i]);
	free(doomed);
}

static bool is_cgroup(uint64_t cgid, void *arg)
{
	return cgid == *(const uint64_t *)arg;
}

void sg_seen_forget(const char *program_key, uint64_t cgid)
{
	_cleanup_close_ int fd = sg_program_open_map(program_key, "seen");
	if (fd >= 0)
		forget_where(fd, is_cgroup, &cgid);
}

void sg_seen_forget_where(bool (*drop)(uint64_t cgid, void *arg), void *arg)
{
	DIR *dir = opendir(SG_PROGRAM_ROOT);

	for (struct dirent *de; dir && (de = readdir(dir));) {
		if (de->d_name[0] == '.')
			continue;
		_cleanup_close_ int fd = sg_program_open_map(de->d_name, "seen");
		if (fd >= 0)
			forget_where(fd, drop, arg);
	}
	if (dir)
		closedir(dir);
}
