// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sysctl_guard.h"

SEC("cgroup/sysctl")
int sysctl_guard(struct bpf_sysctl *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
