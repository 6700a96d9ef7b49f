/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A policy's tables in the kernel: maps of its own, sized to it, placed in
 * the node program's outer maps at a slot the policy claims. They are made
 * once per distinct policy and shared by every cgroup it guards, and pinned
 * under SG_POLICY_ROOT/<key>/:
 *
 *   info        struct sg_policy_info: slot, program, the policy's knobs
 *   tables      the tables the program reads (bpf/sysctl_guard.h)
 *   exact_long  its long exact names, when it has any
 *   rule_names  the rules' names as written, for status and events: each
 *               with its NUL, one after the other in rule order, in an
 *               array of SG_RULE_NAMES_UNIT-byte elements
 *
 * Made in a staging directory and renamed into place; a slot is claimed
 * before, so a policy under its final name always has one.
 */
#ifndef SG_TABLES_H
#define SG_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "compile/compile.h"
#include "kernel/program.h"

#define SG_POLICY_INFO_FORMAT 6
#define SG_RULE_NAMES_UNIT    8

struct sg_policy_info {
	uint32_t format; /* SG_POLICY_INFO_FORMAT */
	uint32_t slot;
	uint32_t program_id; /* the program whose outer maps hold the slot */
	uint32_t pad;
	char program_key[SG_KEY_LEN];
	struct sg_config config; /* with this policy's random values-hash key */
};

struct sg_rule_name {
	char name[SG_NAME_MAX];
};

/* Names of policy @key's first @n rules (cut at SG_NAME_MAX - 1 bytes): 0 or -errno. */
int sg_tables_read_rule_names(const char *key, uint32_t n, struct sg_rule_name *out);

struct sg_tables {
	char key[SG_KEY_LEN];
	struct sg_policy_info info;
};

/*
 * Finds the tables of @compiled for program @prog, or makes, fills and pins
 * them and puts them in the program's outer maps. The caller holds the pins
 * lock (shared) until the policy is in a cgroup's storage.
 */
int sg_tables_get(struct sg_program *prog, const struct sg_compiled *compiled,
		  struct sg_tables *out, struct sg_err *err);

/* The tables pinned under @key, for program @prog: 0, or -errno when none or another's. */
int sg_tables_find(const struct sg_program *prog, const char *key, struct sg_tables *out);

/*
 * The tables a container's inputs made before (inputs.h): their digest under
 * @prog's secret is @digest. Fills @description, the guard's description
 * those inputs gave. 0, or -ENOENT when the inputs are new or their policy
 * was collected since.
 */
int sg_tables_find_by_inputs(const struct sg_program *prog, uint64_t digest, struct sg_tables *out,
			     char description[SG_DESCRIPTION_LEN]);

/* Records that the inputs of digest @digest made @tables (best effort). */
void sg_tables_remember_inputs(const struct sg_program *prog, uint64_t digest,
			       const struct sg_tables *tables, const char *description);

/* Forgets the inputs whose policy is no longer pinned (gc; the pins lock held exclusively). */
void sg_tables_forget_inputs_of_removed(const struct sg_program *prog);

/*
 * A policy preloaded (`sysctl-guard preload`) for a label ("profile NAME")
 * carries a mark, a second pin of its info map, named after the label:
 * `gc` keeps a marked policy of this build's program while no guard uses
 * it. Callers hold the pins lock shared; marks change under a lock of
 * their own.
 */

/* Marks policy @key for @label, and takes the label's mark off any other policy. 0 or -errno. */
int sg_tables_take_mark(const char *key, const char *label);

/*
 * A mark's scope: the linux.sysctl pairs its policies were made with
 * (`preload --sysctl`), as a label ends with "@SCOPE"; "" for none.
 */
#define SG_MARK_SCOPE_SEPARATOR '@'
#define SG_MARK_SCOPE_PREFIX	"sysctls-" /* then 16 hex digits: a hash of the pairs */

/*
 * Takes off every mark of scope @scope ("" for marks of none) whose label is
 * none of @labels: a preload of everything drops only marks of its own
 * pairs. 0 or -errno.
 */
int sg_tables_drop_marks_except(const char *const *labels, size_t n, const char *scope);

/* Whether policy @key carries a preloaded mark, for any label. */
bool sg_tables_is_preloaded(const char *key);

/* Reads the info of the policy pinned under @key: 0 or -errno. */
int sg_tables_read_info(const char *key, struct sg_policy_info *info);

/* Opens map @name of the policy pinned under @key. */
int sg_tables_open_map(const char *key, const char *name);

/* A pinned policy's tables as the program reads them, mapped read-only. */
struct sg_tables_view {
	const char *base;
	size_t len;
	struct sg_config config; /* where each table is (bpf/sysctl_guard.h) */
};

/* Maps the tables of the policy pinned under @key: 0, or -errno (-EPROTO: another build's). */
int sg_tables_view_open(const char *key, struct sg_tables_view *view);

/* Table @table of @view, and its elements' count in *@n. */
const void *sg_tables_view_table(const struct sg_tables_view *view, enum sg_table table,
				 uint32_t *n);

void sg_tables_view_close(struct sg_tables_view *view);

/*
 * Takes policy @key out of its program's outer maps, frees its slot and
 * unpins it. The caller holds the pins lock exclusively and knows that no
 * guard uses the policy.
 */
int sg_tables_remove(const char *key);

/*
 * Frees each of @keys; returns how many were freed. A policy's map of
 * tables stays in its slot as a vacancy (vacancy.h) while its program has
 * room for it; the others are removed (sg_tables_remove).
 * Each removal waits for an RCU grace period or two (place_tables), so
 * they run side by side, in children.
 */
int sg_tables_remove_many(const char (*keys)[SG_KEY_LEN], size_t n);

/* Frees slots claimed by hooks that died before they pinned their policy (lock held exclusively).
 */
int sg_tables_release_orphan_slots(const struct sg_program *prog);

/* Whether a policy holds a slot of @prog: vacancies (vacancy.h) do not count. */
bool sg_tables_any_policy(const struct sg_program *prog);

#endif
