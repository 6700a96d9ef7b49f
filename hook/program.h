/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loaded program of a policy. Loading means verification, by far the
 * most expensive step of an attach, so one program serves every cgroup
 * guarded by the same policy: it is pinned under SG_POLICY_ROOT/<key>/ and
 * found again by the policy's key (a hash of the compiled tables and the
 * kernel features they were built for).
 *
 *   prog      the program
 *   guard     cgroup local storage, struct sg_guard_storage per guarded cgroup
 *   totals    per-CPU cgroup local storage, struct sg_guard_totals
 *   counters  per-CPU per-rule counters of the policy (all its cgroups)
 *   seen      learning: accesses by guarded cgroup (struct sg_seen_key)
 */
#ifndef SG_PROGRAM_H
#define SG_PROGRAM_H

#include <stdint.h>

#include "compile.h"
#include "err.h"

#define SG_PIN_ROOT	  "/sys/fs/bpf/sysctl-guard"
#define SG_POLICY_ROOT	  SG_PIN_ROOT "/policies"
#define SG_POLICY_KEY_LEN 24

struct sg_program {
	char key[SG_POLICY_KEY_LEN];
	int prog_fd;
	int guard_fd;
	int totals_fd;
	bool loaded; /* this call loaded it (not found pinned) */
};

/* The key a compiled policy's program is pinned under. */
void sg_policy_key(const struct sg_compiled *c, char out[SG_POLICY_KEY_LEN]);

/* Finds the program pinned for @c, or loads, fills and pins one. */
int sg_program_get(const struct sg_compiled *c, struct sg_program *out, struct sg_err *err);

void sg_program_close(struct sg_program *p);

/* Opens map @name of the policy pinned under @key. */
int sg_program_open_map(const char *key, const char *name);

/*
 * Writes @n key/value pairs into map @fd: one BPF_MAP_UPDATE_BATCH call where
 * the kernel has it (5.6+), element by element otherwise. 0 or -errno.
 */
int sg_map_update_all(int fd, const void *keys, size_t key_size, const void *values,
		      size_t value_size, size_t n, uint64_t flags);

/* Unpins @names in @dir, then removes @dir; returns 0 or the last -errno. */
int sg_unpin_dir(const char *dir, const char *const *names, size_t n);

/* Removes the pins of policy @key (its program stays while links use it). */
int sg_program_unpin(const char *key);

/*
 * A test seam: SYSCTL_GUARD_FAULT=STEP[,STEP...] makes those kernel steps
 * fail (bpffs, map_create, prog_load, map_update, attach, pin, rename), so
 * tests can show that every failure leaves nothing attached or pinned. It can
 * only make the hook fail, which fails closed. Returns -EIO for a chosen step.
 */
int sg_injected_fault(const char *step);

/* Makes sure bpffs is mounted at /sys/fs/bpf and SG_PIN_ROOT exists. */
int sg_bpffs_prepare(struct sg_err *err);

/* Opens the node's events ring buffer, creating and pinning it when missing. */
int sg_events_open(struct sg_err *err);

#endif
