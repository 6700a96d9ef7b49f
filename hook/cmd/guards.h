/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The guards pinned on the node as `status` and `metrics` show them: each
 * guard's status (kernel/guard.h) with its cgroup's directory, and the
 * state it is in.
 */
#ifndef SG_GUARDS_H
#define SG_GUARDS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/guard.h"

/* A guard status shows, with its cgroup's directory ("" when the cgroup is gone). */
struct sg_shown_guard {
	struct sg_guard_status st;
	char *cgroup;
	int cgroup_error; /* why cgroup is "": -ESTALE when the cgroup is gone */
};

struct sg_shown_guards {
	struct sg_shown_guard *v;
	size_t n;
};

/*
 * Whether a guard enforces its policy, and how well. An operator must hear
 * of a guard NOT_ENFORCED (a `bpftool link detach`, say); one whose cgroup
 * is gone waits for gc.
 */
enum sg_guard_state {
	SG_GUARD_ENFORCED,
	SG_GUARD_DEGRADED,     /* enforced, but the kernel ignores rewrites: rewrite and clamp rules
				  deny */
	SG_GUARD_NOT_ENFORCED, /* the cgroup is there, and the guard's link was detached */
	SG_GUARD_CGROUP_GONE,  /* the link went with the cgroup */
	SG_GUARD_STATE_COUNT,
};

/*
 * The guards pinned on the node, of entry @only ("" for all) and of
 * @container (NULL for any; a whole id wins over the ids it begins), sorted
 * by cgroup directory. A guard that cannot be read is said on stderr and
 * left out, unless it was removed meanwhile.
 */
void sg_shown_guards_collect(const char *only, const char *container, struct sg_shown_guards *gs);

void sg_shown_guards_free(struct sg_shown_guards *gs);

/* Rewrite and clamp rules deny: the kernel ignores bpf_sysctl_set_new_value(). */
bool sg_shown_guard_degraded(const struct sg_shown_guard *g);

enum sg_guard_state sg_shown_guard_state(const struct sg_shown_guard *g);

/* The verdicts as status and metrics name them, by enum sg_verdict. */
extern const char *const sg_verdict_names[SG_VERDICT_COUNT];

#endif
