/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's loaded program. Loading means verification, by far the most
 * expensive step of an attach, so one program serves every guarded cgroup
 * whatever its policy: it is loaded once per build of sysctl-guard and boot,
 * and pinned under SG_PROGRAM_ROOT/<key>/, the key the BPF object's digest
 * and the event format (kernel features are probed at load, and bpffs pins
 * do not outlive a boot):
 *
 *   prog      the program
 *   guard     cgroup local storage: struct sg_guard_storage per guarded cgroup
 *   totals    per-CPU cgroup local storage: struct sg_guard_totals
 *   seen      learning: accesses by guarded cgroup (struct sg_seen_key)
 *   slots     which policy holds each slot of the outer maps
 *   secret    a random key, made at load: policies are named by a keyed hash
 *   inputs    policies by the keyed digest of the inputs that made them
 *   exact exact_long dfa rules values texts counters
 *             outer maps: slot -> that policy's table (tables.h)
 *
 * Pins are built in a staging directory and renamed into place: a hook
 * killed at any point leaves nothing half made under its final name.
 */
#ifndef SG_PROGRAM_H
#define SG_PROGRAM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#include <linux/bpf.h>

#include "bpf/sysctl_guard.h"
#include "base/err.h"

#define SG_BPFFS_ROOT	  "/sys/fs/bpf"
#define SG_PIN_ROOT	  SG_BPFFS_ROOT "/sysctl-guard"
#define SG_PROGRAM_ROOT	  SG_PIN_ROOT "/programs"
#define SG_POLICY_ROOT	  SG_PIN_ROOT "/policies"
#define SG_CONTAINER_ROOT SG_PIN_ROOT "/containers"
#define SG_STAGING_PREFIX "staging-" /* bpffs reserves names with dots */

/* The outer maps: for each, slot -> the policy's own map (bpf/sysctl_guard.bpf.c). */
enum sg_outer {
	SG_OUTER_TABLES,     /* the policy's tables (bpf/sysctl_guard.h) */
	SG_OUTER_EXACT_LONG, /* its long exact names, when it has any */
	SG_OUTER_COUNT,
};

/* The outer maps' pin names, and their inner maps', in enum sg_outer order. */
#define SG_OUTER_NAMES "tables", "exact_long"

extern const char *const sg_outer_names[SG_OUTER_COUNT];

struct sg_program {
	char key[SG_KEY_LEN];
	uint32_t id; /* the kernel's id of the loaded program: another load, another id */
	uint64_t secret[2];
	int prog_fd;
	int guard_fd;
	int slots_fd; /* these only after sg_program_open_slots() */
	int outer_fds[SG_OUTER_COUNT];
};

/* No descriptors open: what sg_program_close() may be called on. */
void sg_program_init(struct sg_program *p);

/* The key this build's program is pinned under: its object's digest and the event format. */
void sg_program_key(char out[SG_KEY_LEN]);

/* Finds the node's program, or loads and pins it. */
int sg_program_get(struct sg_program *out, struct sg_err *err);

/* Opens the node program pinned under @key: what an attach needs. 0 or -ENOENT. */
int sg_program_open(const char *key, struct sg_program *out);

/*
 * Opens the slots map and the outer maps of @p too: what making or removing
 * a policy's tables needs, and only that (each is a path lookup in bpffs). 0
 * or -ENOENT.
 */
int sg_program_open_slots(struct sg_program *p);

void sg_program_close(struct sg_program *p);

/* Opens map @name of the program pinned under @key. */
int sg_program_open_map(const char *key, const char *name);

/* Removes the pins of program @key (it stays loaded while links use it). */
int sg_program_unpin(const char *key);

/* Unpins everything in @dir, then removes @dir; returns 0 or the last -errno. */
int sg_unpin_dir(const char *dir);

/*
 * Serialises `gc` against attaches: attaches hold the pins shared while they
 * pick up a policy and write it into a cgroup's storage, gc holds them
 * exclusively while it frees policies. Returns a descriptor to close, or -errno.
 */
int sg_pins_lock(bool exclusive);

/* Makes sure bpffs is mounted at /sys/fs/bpf and our directories exist. */
int sg_bpffs_prepare(struct sg_err *err);

/* Opens the node's events ring buffer, creating and pinning it when missing. */
int sg_events_open(struct sg_err *err);

#endif
