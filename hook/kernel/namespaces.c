// SPDX-License-Identifier: Apache-2.0
#include "kernel/namespaces.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/eval.h"

/*
 * Whether the namespace at @path (a /proc/PID/ns/ link or a bind mount of
 * one) is this process's namespace of the type @ns.
 */
static int same_as_mine(uint32_t ns, const char *path, bool *same, struct sg_err *err)
{
	char mine_path[64];
	struct stat mine, its;

	/* The names of /proc/PID/ns/ links are the namespaces' own names. */
	snprintf(mine_path, sizeof(mine_path), "/proc/self/ns/%s", sg_namespace_name(ns));
	if (stat(mine_path, &mine) < 0) {
		if (errno != ENOENT)
			return sg_system_error(err, errno, "cannot read %s: %s", mine_path,
					       strerror(errno));
		*same = true; /* the kernel has one of this kind, for all */
		return 0;
	}
	if (stat(path, &its) < 0)
		return sg_system_error(err, errno, "cannot read the %s namespace %s: %s",
				       sg_namespace_name(ns), path, strerror(errno));
	*same = mine.st_dev == its.st_dev && mine.st_ino == its.st_ino;
	return 0;
}

int sg_namespaces_shared(long pid, uint32_t *shared, struct sg_err *err)
{
	*shared = 0;
	for (uint32_t i = 0; i < SG_NS_TYPES; i++) {
		char path[64];
		bool same;

		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", pid, sg_namespace_name(1u << i));
		int r = same_as_mine(1u << i, path, &same, err);
		if (r < 0)
			return r;
		*shared |= same ? 1u << i : 0;
	}
	return 0;
}

int sg_namespaces_shared_by_config(const struct sg_namespace_config *config, uint32_t *shared,
				   struct sg_err *err)
{
	*shared = 0;
	for (uint32_t i = 0; i < SG_NS_TYPES; i++) {
		bool same = !config->listed[i]; /* not made for it: the runtime's */

		if (config->path[i]) {
			int r = same_as_mine(1u << i, config->path[i], &same, err);
			if (r < 0)
				return r;
		}
		*shared |= same ? 1u << i : 0;
	}
	return 0;
}

void sg_namespaces_text(uint32_t shared, char *out, size_t cap)
{
	size_t at = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < SG_NS_TYPES && at < cap; i++)
		if (shared & (1u << i))
			at += (size_t)snprintf(out + at, cap - at, "%s%s", at ? "," : "",
					       sg_namespace_name(1u << i));
	if (!shared)
		snprintf(out, cap, "none");
}
