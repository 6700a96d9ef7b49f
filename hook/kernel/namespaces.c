// SPDX-License-Identifier: Apache-2.0
#include "kernel/namespaces.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/eval.h"

int sg_namespaces_shared(long pid, uint32_t *shared, struct sg_err *err)
{
	*shared = 0;
	for (uint32_t i = 0; i < SG_NS_TYPES; i++) {
		char self[64], theirs[64];
		struct stat mine, its;

		/* The names of /proc/PID/ns/ links. */
		const char *link = sg_namespace_name(1u << i);
		snprintf(self, sizeof(self), "/proc/self/ns/%s", link);
		snprintf(theirs, sizeof(theirs), "/proc/%ld/ns/%s", pid, link);
		if (stat(self, &mine) < 0) {
			if (errno != ENOENT)
				return sg_system_error(err, errno, "cannot read %s: %s", self,
						       strerror(errno));
			*shared |= 1u << i; /* the kernel has one of this kind, for all */
			continue;
		}
		if (stat(theirs, &its) < 0)
			return sg_system_error(
			    err, errno,
			    "cannot read %s: %s; the container's process must be alive while "
			    "its hook runs",
			    theirs, strerror(errno));
		if (mine.st_dev == its.st_dev && mine.st_ino == its.st_ino)
			*shared |= 1u << i;
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
