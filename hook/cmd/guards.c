// SPDX-License-Identifier: Apache-2.0
#include "cmd/guards.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kernel/cgroup.h"

const char *const sg_verdict_names[SG_VERDICT_COUNT] = {"allow", "deny", "rewrite", "audit"};

void sg_shown_guards_free(struct sg_shown_guards *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		sg_guard_status_free(&gs->v[i].st);
		free(gs->v[i].cgroup);
	}
	free(gs->v);
	*gs = (struct sg_shown_guards){0};
}

bool sg_shown_guard_degraded(const struct sg_shown_guard *g)
{
	return !g->st.meta.rewrite_works && sg_guard_policy_rewrites(&g->st.meta);
}

enum sg_guard_state sg_shown_guard_state(const struct sg_shown_guard *g)
{
	if (g->st.link_alive)
		return sg_shown_guard_degraded(g) ? SG_GUARD_DEGRADED : SG_GUARD_ENFORCED;
	/* Only the kernel's word that the cgroup is gone says so: any other failure may hide one.
	 */
	return g->cgroup_error == -ESTALE ? SG_GUARD_CGROUP_GONE : SG_GUARD_NOT_ENFORCED;
}

static int by_cgroup(const void *a, const void *b)
{
	const struct sg_shown_guard *x = a, *y = b;
	int c = strcmp(x->cgroup, y->cgroup);
	if (c)
		return c;
	return (x->st.meta.cgroup_id > y->st.meta.cgroup_id) -
	       (x->st.meta.cgroup_id < y->st.meta.cgroup_id);
}

/* A whole container id wins over the ids it begins (x over x2), as learn takes it. */
static void keep_whole_ids(struct sg_shown_guards *gs, const char *id)
{
	size_t whole = 0;

	for (size_t i = 0; i < gs->n; i++)
		whole += sg_guard_meta_names(&gs->v[i].st.meta, id);
	if (!whole)
		return;
	size_t kept = 0;
	for (size_t i = 0; i < gs->n; i++) {
		if (sg_guard_meta_names(&gs->v[i].st.meta, id)) {
			gs->v[kept++] = gs->v[i];
			continue;
		}
		sg_guard_status_free(&gs->v[i].st);
		free(gs->v[i].cgroup);
	}
	gs->n = kept;
}

void sg_shown_guards_collect(const char *only, const char *container, struct sg_shown_guards *gs)
{
	DIR *dir = opendir(SG_PIN_ROOT);
	char path[PATH_MAX];

	for (struct dirent *de; dir && (de = readdir(dir));) {
		struct sg_guard_status st;
		struct sg_err read_err = {0};

		if (!sg_guard_is_entry(de->d_name) || (only[0] && strcmp(only, de->d_name) != 0))
			continue;
		if (sg_guard_read(de->d_name, &st, &read_err) < 0) {
			/* Removed while we looked is no news; anything else is. */
			if (read_err.code != ENOENT)
				fprintf(stderr, "sysctl-guard: %s\n", read_err.msg);
			continue;
		}
		if (container && !sg_guard_meta_id_starts(&st.meta, container)) {
			sg_guard_status_free(&st);
			continue;
		}
		int r = sg_cgroup_path_of(st.meta.cgroup_id, path);
		if (r < 0)
			path[0] = '\0';
		gs->v = sg_xrealloc(gs->v, gs->n + 1, sizeof(*gs->v));
		gs->v[gs->n++] = (struct sg_shown_guard){st, sg_xstrdup(path), r < 0 ? r : 0};
	}
	if (dir)
		closedir(dir);
	if (container)
		keep_whole_ids(gs, container);
	if (gs->n)
		qsort(gs->v, gs->n, sizeof(*gs->v), by_cgroup);
}
