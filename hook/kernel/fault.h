/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel steps made to fail on purpose, for the tests of what a failure leaves behind. */
#ifndef SG_FAULT_H
#define SG_FAULT_H

/*
 * A test seam: SYSCTL_GUARD_FAULT=STEP[,STEP...] makes those kernel steps
 * fail (bpffs, map_create, prog_load, map_update, attach, pin, rename), so
 * tests can show that every failure leaves nothing attached or pinned;
 * "rewrite" makes the probe find that the kernel ignores rewrites,
 * "no_ringbuf" the feature probe find no BPF ring buffers,
 * "inputs" leaves a policy's inputs unrecorded, as a full record does,
 * "plan" fails laying out a hashed table (tables.c), as hashes that crowd
 * together at every size would, "fill_TABLE" fails filling that table's map
 * (tables.c), and "kill_after_storage" kills an attach once the cgroup's
 * storage names the new policy, before its meta does, as a runtime's timeout
 * could. It can only make the hook fail or slower, deny what a rewrite or
 * clamp rule would have changed, or parse again: it fails closed. Returns
 * -EIO for a chosen step.
 */
int sg_injected_fault(const char *step);

#endif
