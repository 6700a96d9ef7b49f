/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which of the namespaces that own sysctls (enum sg_namespace) a process
 * shares with the host: with this process, which runs where the runtime
 * runs its hooks, in the host's namespaces.
 */
#ifndef SG_NAMESPACES_H
#define SG_NAMESPACES_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/*
 * The namespaces (enum sg_namespace bits) process @pid is in together with
 * this process, compared by /proc/PID/ns/ links, not by any configuration:
 * a path in config.json may name the host's namespace too. A type this
 * kernel does not have (no /proc/self/ns link) is one namespace for all,
 * hence shared. A process that is gone, or a link that cannot be read, is a
 * system error (exit 2).
 */
int sg_namespaces_shared(long pid, uint32_t *shared, struct sg_err *err);

/* @shared as "net,uts,ipc" (enum sg_namespace order), or "none". */
void sg_namespaces_text(uint32_t shared, char *out, size_t cap);

#endif
