// SPDX-License-Identifier: Apache-2.0
#include "kernel/fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sg_injected_fault(const char *step)
{
	const char *list = getenv("SYSCTL_GUARD_FAULT");
	size_t len = strlen(step);

	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
		if (strncmp(p, step, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return -EIO;
	return 0;
}
