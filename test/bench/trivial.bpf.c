// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The kernel's floor for a cgroup sysctl program: allow everything. Any
 * attached program makes the kernel render the current value for it, so a
 * guard is compared against this, not against an unguarded cgroup.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("cgroup/sysctl")
int sg_bench_trivial(struct bpf_sysctl *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
