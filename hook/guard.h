/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A guard: the loaded program with its maps, attached to one cgroup through a
 * bpf_link, pinned under SG_PIN_ROOT/<cgroup id>/ so that it outlives the hook
 * and `status`, `detach`, poststop and `gc` can find it:
 *
 *   link        the cgroup link (unpinning it detaches the program)
 *   counters    per-CPU counters, rows of sysctl_guard.h
 *   rule_names  rule index -> name as written, for status
 *   meta        struct sg_guard_meta
 *   seen        learning: every name, access and value seen (struct sg_seen_key)
 *
 * A guard is built in a staging directory and renamed into place, so a hook
 * killed at any point leaves a complete guard or a staging directory that
 * `gc` removes.
 */
#ifndef SG_GUARD_H
#define SG_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "compile.h"
#include "err.h"

#define SG_PIN_ROOT     "/sys/fs/bpf/sysctl-guard"
#define SG_EVENTS_PIN   SG_PIN_ROOT "/events" /* the node's ring buffer of events */
#define SG_META_FORMAT  1
#define SG_STAGING_PREFIX "staging-" /* bpffs reserves names with dots */

struct sg_guard_meta {
	uint32_t format; /* SG_META_FORMAT */
	uint32_t n_layers;
	uint32_t n_rules;
	uint32_t rewrite_works;
	uint64_t cgroup_id;
	uint64_t attached_at; /* CLOCK_REALTIME, seconds */
	uint8_t layer_modes[SG_LAYERS_MAX];
	uint8_t learn; /* the seen map records every access */
	uint8_t pad[5];
	char policy_hash[24]; /* hex of a 64-bit hash of the compiled tables */
	char container_id[72];
	char description[376];
};

struct sg_rule_name {
	char name[SG_NAME_MAX];
};

/*
 * Loads a program for @compiled and attaches it to the cgroup @cgroup_dir, or
 * atomically replaces the guard already there. Nothing is attached unless
 * every table is in place. @meta's cgroup_id, attached_at and counts are
 * filled in here.
 */
int sg_guard_attach(const char *cgroup_dir, const struct sg_compiled *compiled,
		    struct sg_guard_meta *meta, struct sg_err *err);

/* Detaches and unpins the guard of @cgroup_dir; *found says whether there was one. */
int sg_guard_detach(const char *cgroup_dir, bool *found, struct sg_err *err);

/* Detaches and unpins the guard pinned at SG_PIN_ROOT/@entry (a cgroup id or staging dir). */
int sg_guard_remove_entry(const char *entry, struct sg_err *err);

struct sg_guard_status {
	struct sg_guard_meta meta;
	bool link_alive;          /* the link is still attached to a live cgroup */
	uint32_t n_rows;          /* counter rows */
	uint64_t *counters;       /* n_rows * SG_VERDICT_COUNT, summed over CPUs */
	struct sg_rule_name *rule_names; /* meta.n_rules */
	uint32_t prog_id;
};

/* Reads the guard pinned at SG_PIN_ROOT/@entry. */
int sg_guard_read(const char *entry, struct sg_guard_status *out, struct sg_err *err);
void sg_guard_status_free(struct sg_guard_status *status);

/* The pin directory name of a cgroup id. */
void sg_guard_entry_name(uint64_t cgroup_id, char out[32]);

/* The pin directory name of the guard of container @id (or an id prefix); -ENOENT when none. */
int sg_guard_find_container(const char *id, char entry[32]);

/* Opens the node's events ring buffer, creating and pinning it when missing. */
int sg_events_open(struct sg_err *err);

/* Makes sure bpffs is mounted at /sys/fs/bpf and SG_PIN_ROOT exists. */
int sg_bpffs_prepare(struct sg_err *err);

/* A 64-bit FNV-1a over the compiled tables: equal policies get equal hashes. */
uint64_t sg_compiled_hash(const struct sg_compiled *compiled);

#endif
