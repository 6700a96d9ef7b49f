/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Feature probes, side-effect free and cached: once per process in memory,
 * once per boot in SG_PROBE_CACHE (keyed by the boot id).
 */
#ifndef SG_PROBE_H
#define SG_PROBE_H

#include <stdbool.h>

#define SG_RUN_DIR     "/run/sysctl-guard"
#define SG_PROBE_CACHE SG_RUN_DIR "/probe"

/*
 * The first feature guarding needs that this kernel lacks, as a phrase naming
 * it and the Linux release that brought it ("BPF ring buffers (Linux 5.8)"),
 * or NULL when it has them all (cached as sysctl_hook=).
 */
const char *sg_probe_missing_feature(void);

/* Events can carry pid, comm and the task's cgroup (helpers allowed for this program type). */
bool sg_probe_task_helpers(void);

/*
 * The answer of the rewrite probe (probe_rewrite.h), which attaches a guard
 * and so cannot be here, cached for this boot: 1 or 0, or -1 before it ran.
 */
int sg_probe_cached_rewrite(void);
void sg_probe_cache_rewrite(bool works);

#endif
