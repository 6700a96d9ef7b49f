/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Feature probes, side-effect free and cached: once per process in memory,
 * once per boot in SG_PROBE_CACHE (keyed by the boot id).
 */
#ifndef SG_PROBE_H
#define SG_PROBE_H

#include <stdbool.h>

#include "err.h"

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
 * Whether bpf_sysctl_set_new_value() takes effect (it was silently ignored on
 * mainline kernels from 2022 until the June 2026 fixes). Probed by writing
 * kernel.domainname through a rewriting guard from a child in a fresh UTS
 * namespace and a temporary cgroup: harmless, that value is per namespace.
 */
int sg_probe_rewrite(bool *works, struct sg_err *err);

#endif
