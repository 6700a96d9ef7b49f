// SPDX-License-Identifier: Apache-2.0
/*
 * `metrics`: the node's guards, policies and programs in the Prometheus
 * text format, on stdout or as a file for node_exporter's textfile collector.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/promtext.h"
#include "base/util.h"
#include "kernel/memory.h"
#include "kernel/program.h"
#include "cmd/cli.h"
#include "cmd/every.h"
#include "cmd/guards.h"

#define TEXTFILE_NAME "sysctl_guard.prom"

static const char *const state_names[SG_GUARD_STATE_COUNT] = {"enforced", "degraded",
							      "not_enforced", "cgroup_gone"};

/*
 * The labels that name a guard's series. The cgroup id keeps them apart
 * where the rest may not: guards of removed cgroups, or attached by hand
 * (no container id) with one policy. The last slot is the caller's.
 */
#define GUARD_LABELS 6
struct guard_labels {
	char cgroup_id[24];
	struct sg_prom_label v[GUARD_LABELS];
};

static void guard_labels(const struct sg_shown_guard *g, struct guard_labels *l)
{
	snprintf(l->cgroup_id, sizeof(l->cgroup_id), "%llu",
		 (unsigned long long)g->st.meta.cgroup_id);
	l->v[0] = (struct sg_prom_label){"container_id", g->st.meta.container_id};
	l->v[1] = (struct sg_prom_label){"cgroup", g->cgroup};
	l->v[2] = (struct sg_prom_label){"cgroup_id", l->cgroup_id};
	l->v[3] = (struct sg_prom_label){"policy", g->st.meta.policy_key};
	l->v[4] = (struct sg_prom_label){"policy_description", g->st.meta.description};
}

/* Each guard's state once: a degraded guard is known by a lookup per rule of its policy. */
static enum sg_guard_state *guard_states(const struct sg_shown_guards *gs)
{
	enum sg_guard_state *states = sg_xcalloc(gs->n ? gs->n : 1, sizeof(*states));

	for (size_t i = 0; i < gs->n; i++)
		states[i] = sg_shown_guard_state(&gs->v[i]);
	return states;
}

/* Every state is written, 0 too: an alert on not_enforced > 0 needs the series to exist. */
static void write_state_counts(FILE *out, const enum sg_guard_state *states, size_t n)
{
	uint64_t count[SG_GUARD_STATE_COUNT] = {0};

	for (size_t i = 0; i < n; i++)
		count[states[i]]++;
	sg_prom_family(
	    out, "sysctl_guard_guards", "gauge",
	    "Guards pinned on this node, by state: enforced; degraded (enforced, but "
	    "the kernel ignores rewrites, so rewrite and clamp rules deny); not_enforced "
	    "(the cgroup is there, its guard's link was detached); cgroup_gone (gc "
	    "removes it).");
	for (int s = 0; s < SG_GUARD_STATE_COUNT; s++)
		sg_prom_sample(out, "sysctl_guard_guards",
			       &(struct sg_prom_label){"state", state_names[s]}, 1, count[s]);
}

static void write_guard_states(FILE *out, const struct sg_shown_guards *gs,
			       const enum sg_guard_state *states)
{
	struct guard_labels l;

	sg_prom_family(out, "sysctl_guard_guard_state", "gauge",
		       "1 for each guard, labelled with its state (as sysctl_guard_guards).");
	for (size_t i = 0; i < gs->n; i++) {
		guard_labels(&gs->v[i], &l);
		l.v[GUARD_LABELS - 1] = (struct sg_prom_label){"state", state_names[states[i]]};
		sg_prom_sample(out, "sysctl_guard_guard_state", l.v, GUARD_LABELS, 1);
	}
}

static void write_decisions(FILE *out, const struct sg_shown_guards *gs)
{
	struct guard_labels l;

	sg_prom_family(out, "sysctl_guard_decisions_total", "counter",
		       "Reads and writes under /proc/sys the guard decided, by verdict (audit: "
		       "allowed by an audit-mode policy that enforce would not allow).");
	for (size_t i = 0; i < gs->n; i++) {
		guard_labels(&gs->v[i], &l);
		for (int v = 0; v < SG_VERDICT_COUNT; v++) {
			l.v[GUARD_LABELS - 1] =
			    (struct sg_prom_label){"verdict", sg_verdict_names[v]};
			sg_prom_sample(out, "sysctl_guard_decisions_total", l.v, GUARD_LABELS,
				       gs->v[i].st.totals[v]);
		}
	}
}

static void write_events_dropped(FILE *out, const struct sg_shown_guards *gs)
{
	struct guard_labels l;

	sg_prom_family(out, "sysctl_guard_events_dropped_total", "counter",
		       "Events of the guard lost to a full ring buffer (is a monitor reading?).");
	for (size_t i = 0; i < gs->n; i++) {
		guard_labels(&gs->v[i], &l);
		sg_prom_sample(out, "sysctl_guard_events_dropped_total", l.v, GUARD_LABELS - 1,
			       gs->v[i].st.events_dropped);
	}
}

/* A pinned object's directory under SG_POLICY_ROOT or SG_PROGRAM_ROOT, with its memory. */
struct pinned_dir {
	char key[NAME_MAX + 1];
	uint64_t bytes;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct pinned_dir *)a)->key, ((const struct pinned_dir *)b)->key);
}

/*
 * The directories under @root with the memory of their pins, by name (a
 * textfile then changes only where a value does), but staging ones (a hook
 * is making them) and those gone while read (gc freed them).
 */
static size_t pinned_dirs(const char *root, struct pinned_dir **out)
{
	DIR *dir = opendir(root);
	size_t n = 0;

	*out = NULL;
	for (struct dirent *de; dir && (de = readdir(dir));) {
		char path[PATH_MAX];
		uint64_t bytes;

		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, SG_STAGING_PREFIX, strlen(SG_STAGING_PREFIX)) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, de->d_name);
		if (sg_pinned_memory(path, &bytes) < 0)
			continue;
		*out = sg_xrealloc(*out, n + 1, sizeof(**out));
		snprintf((*out)[n].key, sizeof((*out)[n].key), "%s", de->d_name);
		(*out)[n++].bytes = bytes;
	}
	if (dir)
		closedir(dir);
	if (n)
		qsort(*out, n, sizeof(**out), by_key);
	return n;
}

/* The memlock of each directory pinned under @root, as @metric labelled @label = its key. */
static size_t write_pinned_memory(FILE *out, const char *root, const char *metric, const char *help,
				  const char *label)
{
	_cleanup_free_ struct pinned_dir *dirs = NULL;
	size_t n = pinned_dirs(root, &dirs);

	sg_prom_family(out, metric, "gauge", help);
	for (size_t i = 0; i < n; i++)
		sg_prom_sample(out, metric, &(struct sg_prom_label){label, dirs[i].key}, 1,
			       dirs[i].bytes);
	return n;
}

static void write_policies(FILE *out)
{
	size_t n = write_pinned_memory(
	    out, SG_POLICY_ROOT, "sysctl_guard_policy_memory_bytes",
	    "Kernel memory of a policy's maps (their memlock), shared by every guard that uses "
	    "the policy.",
	    "policy");

	sg_prom_family(out, "sysctl_guard_policies", "gauge",
		       "Policies loaded on this node: in use by guards, preloaded, or unused until "
		       "gc frees them.");
	sg_prom_sample(out, "sysctl_guard_policies", NULL, 0, n);
}

static void write_programs(FILE *out)
{
	write_pinned_memory(out, SG_PROGRAM_ROOT, "sysctl_guard_program_memory_bytes",
			    "Kernel memory of a node program and its own maps (their memlock), "
			    "vacant policy tables kept for reuse included.",
			    "program");
}

static void write_metrics(FILE *out)
{
	struct sg_shown_guards gs = {0};

	sg_shown_guards_collect("", NULL, &gs);
	_cleanup_free_ enum sg_guard_state *states = guard_states(&gs);
	write_state_counts(out, states, gs.n);
	write_guard_states(out, &gs, states);
	write_decisions(out, &gs);
	write_events_dropped(out, &gs);
	sg_shown_guards_free(&gs);
	write_policies(out);
	write_programs(out);
}

static int textfile_error(struct sg_err *err, const char *dir, int code, const char *what)
{
	return sg_system_error(err, code,
			       "--textfile %s: %s: %s; give a directory this process can write, "
			       "the one node_exporter's --collector.textfile.directory names",
			       dir, what, strerror(code));
}

/* Writes the metrics to the new file open at @fd and syncs it; closes @fd. */
static int write_synced(int fd, const char *dir, struct sg_err *err)
{
	/* node_exporter may run as another user; mkostemp makes the file 0600. */
	if (fchmod(fd, 0644) < 0) {
		int code = errno;
		close(fd);
		return textfile_error(err, dir, code, "cannot write a file in it");
	}
	_cleanup_fclose_ FILE *f = fdopen(fd, "w");
	if (!f) {
		int code = errno;
		close(fd);
		return textfile_error(err, dir, code, "cannot write a file in it");
	}
	write_metrics(f);
	if (fflush(f) != 0 || ferror(f) || fsync(fd) < 0)
		return textfile_error(err, dir, errno ? errno : EIO, "cannot write a file in it");
	return 0;
}

/*
 * Writes DIR/sysctl_guard.prom whole or not at all: node_exporter reads the
 * directory's *.prom files at any moment, so the text goes to a temporary
 * file it ignores (no .prom ending), synced, then renamed over the old one.
 */
static int write_textfile(const char *dir, struct sg_err *err)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	struct stat st;

	if (stat(dir, &st) < 0)
		return textfile_error(err, dir, errno, "cannot use it");
	if (!S_ISDIR(st.st_mode))
		return textfile_error(err, dir, ENOTDIR, "cannot use it");
	snprintf(path, sizeof(path), "%s/" TEXTFILE_NAME, dir);
	snprintf(tmp, sizeof(tmp), "%s/." TEXTFILE_NAME ".XXXXXX", dir);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return textfile_error(err, dir, errno, "cannot create a file in it");
	int r = write_synced(fd, dir, err);
	if (r == 0 && rename(tmp, path) < 0)
		r = textfile_error(err, dir, errno,
				   "cannot rename the new " TEXTFILE_NAME " into place");
	if (r < 0)
		unlink(tmp);
	return r;
}

/* One more textfile, for --every: a failure is said, and the next run tries again. */
static void textfile_run(void *dir)
{
	struct sg_err err = {0};
	if (write_textfile(dir, &err) < 0)
		sg_report(&err);
}

int sg_cmd_metrics(int argc, char **argv)
{
	static const struct option options[] = {
	    {"textfile", required_argument, NULL, 't'},
	    {"every", required_argument, NULL, 'e'},
	    {NULL, 0, NULL, 0},
	};
	const char *textfile = NULL;
	unsigned long long every = 0;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 't') {
			textfile = optarg;
		} else if (opt == 'e') {
			if (!sg_parse_number(optarg, UINT_MAX, &every) || every == 0)
				return sg_usage_error(
				    "metrics", "--every takes seconds, at least 1, not \"%s\"",
				    optarg);
		} else {
			return sg_usage_error("metrics", "unknown option");
		}
	}
	if (optind != argc)
		return sg_usage_error("metrics", "unexpected argument \"%s\"", argv[optind]);
	if (textfile && !textfile[0])
		return sg_usage_error("metrics", "--textfile takes a directory, not \"\"");
	if (every && !textfile)
		return sg_usage_error("metrics", "--every needs --textfile DIR to write to");

	struct sg_err err = {0};
	if (every)
		return sg_every((unsigned)every, "metrics", textfile_run, (void *)textfile);
	if (textfile)
		return write_textfile(textfile, &err) < 0 ? sg_report(&err) : SG_EXIT_OK;
	write_metrics(stdout);
	if (fflush(stdout) != 0) {
		sg_system_error(&err, errno, "cannot write the metrics: %s", strerror(errno));
		return sg_report(&err);
	}
	return SG_EXIT_OK;
}
