/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A guard: the node's program (program.h) attached to one cgroup through a
 * bpf_link, with the cgroup's storage naming its policy's tables (tables.h);
 * pinned under SG_PIN_ROOT/<cgroup id>/ so that it outlives the hook and
 * `status`, `detach`, poststop and `gc` can find it:
 *
 *   link        the cgroup link (unpinning it detaches the program)
 *   meta        struct sg_guard_meta: container, policy key, since when
 *
 * and, for a container, SG_CONTAINER_ROOT/<id> links to that directory.
 *
 * A guard is built in a staging directory and renamed into place, so a hook
 * killed at any point leaves a complete guard or a staging directory that
 * `gc` removes.
 */
#ifndef SG_GUARD_H
#define SG_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "policy/inputs.h"
#include "compile/compile.h"
#include "kernel/program.h"
#include "kernel/tables.h"

#define SG_META_FORMAT 3

struct sg_guard_meta {
	uint32_t format; /* SG_META_FORMAT */
	uint32_t n_layers;
	uint32_t n_rules;
	uint32_t rewrite_works;
	uint64_t cgroup_id;
	uint64_t attached_at; /* CLOCK_REALTIME, seconds */
	uint8_t layer_modes[SG_LAYERS_MAX];
	uint8_t learn;		    /* the seen map records every access */
	uint8_t save_learned;	    /* poststop writes the learned policy (io.sysctl-guard.learn) */
	uint8_t host_namespaces;    /* enum sg_namespace: shared with the host */
	uint8_t namespaces_checked; /* host_namespaces was found (the hook, attach --pid) */
	uint8_t pad[2];
	char policy_key[SG_KEY_LEN];  /* where the policy's tables are pinned (tables.h) */
	char program_key[SG_KEY_LEN]; /* where the program is pinned (program.h) */
	char container_id[72];
	char description[SG_DESCRIPTION_LEN];
};

/* Options of one guard, beyond its policy. */
struct sg_guard_options {
	const char *container_id; /* NULL for `attach` */
	const char *description;
	bool learn;	 /* record every access for `learn` */
	uint32_t events; /* enum sg_event_policy beyond denials and rewrites */
	/*
	 * enum sg_namespace: those the guarded processes share with the host,
	 * whose sysctls they write as the host's (sg_namespaces_shared).
	 */
	uint32_t host_namespaces;
	bool namespaces_checked; /* host_namespaces was found; else it is 0 */
};

/*
 * A guard's policy: the one its inputs (inputs.h) made before, or else its
 * compiled form, given or made on demand. Making it means parsing and
 * compiling, which a policy already in use on the node skips.
 */
struct sg_policy_request {
	const struct sg_compiled *compiled; /* NULL: @make makes it when needed */
	const struct sg_inputs *inputs;	    /* NULL: neither looked up nor remembered */
	/*
	 * The compiled policy and the guard's description, for inputs not seen
	 * before. The inputs are digested before: make may free what they point
	 * to.
	 */
	int (*make)(void *arg, const struct sg_compiled **compiled, const char **description,
		    struct sg_err *err);
	void *make_arg;
};

/*
 * Guards the cgroup @cgroup_dir with @policy (its tables made, or shared
 * with the cgroups that already use this policy), or replaces the guard
 * already there. Nothing is attached unless every table is in place; a
 * replacement swaps the policy in one step. A policy with an audit layer
 * records what the cgroup does, for `learn`. Fills @meta.
 */
int sg_guard_attach(const char *cgroup_dir, const struct sg_policy_request *policy,
		    const struct sg_guard_options *options, struct sg_guard_meta *meta,
		    struct sg_err *err);

/*
 * Makes @policy's tables (or finds them) without guarding any cgroup and
 * marks them preloaded for @label (tables.h), so that the first container
 * of those inputs finds its policy in use; the policy preloaded for @label
 * before, if another, loses the mark. Fills @tables; @description is the
 * guard description those inputs give, replaced by the recorded one when
 * the inputs were seen before. Fails (exit status 2) when the inputs could
 * not be recorded: the policy is then made and marked, but its first
 * container would make it again.
 */
int sg_guard_preload(const struct sg_policy_request *policy, const char *label,
		     struct sg_tables *tables, char description[SG_DESCRIPTION_LEN],
		     struct sg_err *err);

/*
 * Takes every preloaded mark of @scope off whose label is none of @labels: a
 * preload of everything installed drops the marks of profiles removed since
 * (sg_tables_drop_marks_except).
 */
int sg_guard_drop_marks_except(const char *const *labels, size_t n, const char *scope,
			       struct sg_err *err);

/* Detaches and unpins the guard of @cgroup_dir; *found says whether there was one. */
int sg_guard_detach(const char *cgroup_dir, bool *found, struct sg_err *err);

/* Detaches and unpins the guard pinned at SG_PIN_ROOT/@entry (a cgroup id). */
int sg_guard_remove_entry(const char *entry, struct sg_err *err);

/*
 * Unpins the staging directory SG_PIN_ROOT/@name of a killed hook, never
 * detaching: its link may be the one its cgroup's guard kept (a guard
 * replaced by one of the same program), and a link of its own goes with
 * its last pin anyway.
 */
int sg_guard_remove_staging(const char *name, struct sg_err *err);

/*
 * Whether the link pinned at SG_PIN_ROOT/@entry is still attached to its
 * cgroup. Read from the link alone: a guard another version of sysctl-guard
 * made, whose meta this one cannot read, still counts.
 */
bool sg_guard_link_alive(const char *entry);

/* The same for a guard whose @meta the caller has read already (NULL: none to read). */
int sg_guard_remove_entry_of(const char *entry, const struct sg_guard_meta *meta,
			     struct sg_err *err);

struct sg_guard_status {
	struct sg_guard_meta meta;
	bool link_alive; /* the link is still attached to a live cgroup */
	uint32_t prog_id;
	uint64_t totals[SG_VERDICT_COUNT]; /* this guard's decisions by verdict */
	uint64_t events_dropped;
	uint32_t n_rows;    /* per-rule counter rows of the policy */
	uint64_t *counters; /* n_rows * SG_VERDICT_COUNT, all cgroups sharing the policy */
	struct sg_rule_name *rule_names; /* meta.n_rules */
};

/* Whether @name in SG_PIN_ROOT is a guard (a cgroup id), not staging, policies or events. */
bool sg_guard_is_entry(const char *name);

/*
 * Whether @name is a staging directory (of a guard, a policy or a program)
 * whose hook is gone: killed before it renamed the directory into place.
 * One of a hook that still runs is not ours to take.
 */
bool sg_is_orphan_staging(const char *name);

/*
 * Whether the container id in @meta starts with @prefix. A meta keeps the
 * first 71 characters of an id; a longer @prefix is compared that far.
 */
bool sg_guard_meta_id_starts(const struct sg_guard_meta *meta, const char *prefix);

/* Whether @meta is container @id's, the whole id (as far as the meta holds it). */
bool sg_guard_meta_names(const struct sg_guard_meta *meta, const char *id);

/* Reads only the meta of the guard pinned at SG_PIN_ROOT/@entry: who it is for. */
int sg_guard_read_meta(const char *entry, struct sg_guard_meta *meta, struct sg_err *err);

/* Reads the guard pinned at SG_PIN_ROOT/@entry, with its counters and rule names. */
int sg_guard_read(const char *entry, struct sg_guard_status *out, struct sg_err *err);
void sg_guard_status_free(struct sg_guard_status *status);

/* Whether the policy of the guard of @meta has rewrite or clamp rules (a lookup per rule). */
bool sg_guard_policy_rewrites(const struct sg_guard_meta *meta);

/* The pin directory name of a cgroup id. */
void sg_guard_entry_name(uint64_t cgroup_id, char out[32]);

/*
 * The pin directory name of the guard of container @id, or of the one
 * container whose id begins with @id; -ENOENT when none, -ENOTUNIQ when
 * several do.
 */
int sg_guard_find_container(const char *id, char entry[32]);

/* Whether a guard is pinned under the pin directory name @entry. */
bool sg_guard_exists(const char *entry);

/*
 * The same for exactly @id, through the index of guards by container
 * (SG_CONTAINER_ROOT): no scan of every guard, for poststop, unless the id
 * cannot name an index link (a '/', over NAME_MAX bytes). Fills @meta.
 */
int sg_guard_find_container_exact(const char *id, char entry[32], struct sg_guard_meta *meta);

/* Removes index links whose guard is gone. */
void sg_guard_gc_index(void);

/*
 * Removes policies no guard uses any more (pinned more than @min_age_s ago),
 * preloaded ones too when @preloaded, and programs no link uses; returns
 * how many policies.
 */
int sg_guard_gc_policies(unsigned min_age_s, bool preloaded);

/* What `gc` leaves alone by default: a policy pinned this recently may be about to get a guard. */
#define SG_GC_MIN_AGE 60

#endif
