/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the kernel is asked before a guard is attached: whether it has every
 * feature guarding needs (probe.h), and whether bpf_sysctl_set_new_value()
 * takes effect, which only a guard can show.
 */
#ifndef SG_PROBE_REWRITE_H
#define SG_PROBE_REWRITE_H

#include <stdbool.h>

#include "base/err.h"

/*
 * Whether bpf_sysctl_set_new_value() takes effect (it was silently ignored on
 * mainline kernels from 2022 until the June 2026 fixes). Probed by writing
 * kernel.domainname through a rewriting guard from a child in a fresh UTS
 * namespace and a temporary cgroup: harmless, that value is per namespace.
 * Cached per boot (probe.h).
 */
int sg_probe_rewrite(bool *works, struct sg_err *err);

/*
 * Every probe guarding needs, cached per boot: the kernel's features (a
 * missing one is an unsupported error), then rewriting.
 */
int sg_probe_kernel(bool *rewrite_works, struct sg_err *err);

#endif
