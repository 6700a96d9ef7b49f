/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which of the namespaces that own sysctls (enum sg_namespace) a process
 * shares with the host: with this process, which runs where the runtime
 * runs its hooks, in the host's namespaces.
 */
#ifndef SG_NAMESPACES_H
#define SG_NAMESPACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "bpf/sysctl_guard.h"

/*
 * The namespaces (enum sg_namespace bits) process @pid is in together with
 * this process, compared by /proc/PID/ns/ links, not by any configuration:
 * a path in config.json may name the host's namespace too. A type this
 * kernel does not have (no /proc/self/ns link) is one namespace for all,
 * hence shared. A process that is gone, or a link that cannot be read, is a
 * system error (exit 2).
 */
int sg_namespaces_shared(long pid, uint32_t *shared, struct sg_err *err);

/*
 * What config.json's linux.namespaces asks for, by enum sg_namespace bit
 * index: @listed, a namespace of that type (a new one, or @path's); not
 * listed, the runtime's.
 */
struct sg_namespace_config {
	bool listed[SG_NS_TYPES];
	char *path[SG_NS_TYPES]; /* NULL: a new namespace */
};

/*
 * The same from @config, where there is no process to look at: a type not
 * listed is shared, a path is compared with this process's namespace.
 */
int sg_namespaces_shared_by_config(const struct sg_namespace_config *config, uint32_t *shared,
				   struct sg_err *err);

/* @shared as "net,uts,ipc" (enum sg_namespace order), or "none". */
void sg_namespaces_text(uint32_t shared, char *out, size_t cap);

#endif
