// SPDX-License-Identifier: Apache-2.0
/* `status`: the node's guards, by cgroup directory, with their policies and counters. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/jsonout.h"
#include "base/util.h"
#include "kernel/cgroup.h"
#include "compile/eval.h"
#include "kernel/guard.h"
#include "kernel/namespaces.h"
#include "cmd/cli.h"
#include "cmd/guards.h"

static const char *mode_text(const struct sg_guard_meta *m)
{
	bool audit = false, enforce = false;
	for (uint32_t i = 0; i < m->n_layers && i < SG_LAYERS_MAX; i++) {
		audit |= m->layer_modes[i] == SG_MODE_AUDIT;
		enforce |= m->layer_modes[i] != SG_MODE_AUDIT;
	}
	return audit && enforce ? "mixed" : audit ? "audit" : "enforce";
}

static uint32_t decision_rows(const struct sg_guard_status *st)
{
	return st->n_rows;
}

static uint64_t dropped_events(const struct sg_guard_status *st)
{
	return st->events_dropped;
}

/* This guard's own decisions; per-rule rows count every cgroup sharing the policy. */
static void verdict_totals(const struct sg_guard_status *st, uint64_t totals[SG_VERDICT_COUNT])
{
	memcpy(totals, st->totals, SG_VERDICT_COUNT * sizeof(uint64_t));
}

/* The counter row's label: a rule name, a layer default, or early decisions. */
static void row_label(const struct sg_guard_status *st, uint32_t row, char *out, size_t cap)
{
	if (row < st->meta.n_rules)
		snprintf(out, cap, "%s", st->rule_names[row].name);
	else if (row < st->meta.n_rules + st->meta.n_layers)
		snprintf(out, cap, "(default, layer %u)", row - st->meta.n_rules);
	else if (row == st->meta.n_rules + st->meta.n_layers)
		snprintf(out, cap, "(name too long)");
	else
		snprintf(out, cap, "(write to a host namespace)");
}

/* The namespaces the guarded processes share with the host, for people. */
static void host_namespaces_line(const struct sg_guard_meta *m)
{
	char shared[64];

	if (!m->namespaces_checked) {
		printf("    namespaces: not checked (attach --pid PID checks them)\n");
		return;
	}
	sg_namespaces_text(m->host_namespaces, shared, sizeof(shared));
	printf("    namespaces shared with the host: %s%s\n", shared,
	       m->host_namespaces ? " (writes to their sysctls are denied unless a rule "
				    "sets allow_host_namespace)"
				  : "");
}

/* The same as a JSON array of names, or null when they were not checked. */
static void host_namespaces_json(const struct sg_guard_meta *m)
{
	if (!m->namespaces_checked) {
		printf("null");
		return;
	}
	printf("[");
	for (uint32_t i = 0, n = 0; i < SG_NS_TYPES; i++)
		if (m->host_namespaces & (1u << i))
			printf("%s\"%s\"", n++ ? ", " : "", sg_namespace_name(1u << i));
	printf("]");
}

static void print_guard_json(const struct sg_shown_guard *g, bool first)
{
	const struct sg_guard_status *st = &g->st;
	uint64_t totals[SG_VERDICT_COUNT];
	char label[SG_NAME_MAX + 32];

	verdict_totals(st, totals);
	printf("%s\n  {\"cgroup_id\": %llu, \"cgroup\": ", first ? "" : ",",
	       (unsigned long long)st->meta.cgroup_id);
	if (g->cgroup[0])
		sg_json_write_string(stdout, g->cgroup);
	else
		printf("null");
	printf(", \"container_id\": ");
	sg_json_write_string(stdout, st->meta.container_id);
	printf(", \"policy\": ");
	sg_json_write_string(stdout, st->meta.description);
	printf(", \"policy_hash\": \"%s\", \"program\": \"%s\", \"mode\": \"%s\", "
	       "\"attached_at\": %llu, \"attached\": %s, \"rewrite_works\": %s, \"degraded\": %s, "
	       "\"counters\": {",
	       st->meta.policy_key, st->meta.program_key, mode_text(&st->meta),
	       (unsigned long long)st->meta.attached_at, st->link_alive ? "true" : "false",
	       st->meta.rewrite_works ? "true" : "false",
	       sg_shown_guard_degraded(g) ? "true" : "false");
	for (int v = 0; v < SG_VERDICT_COUNT; v++)
		printf("%s\"%s\": %llu", v ? ", " : "", sg_verdict_names[v],
		       (unsigned long long)totals[v]);
	printf(", \"events_dropped\": %llu}, \"host_namespaces\": ",
	       (unsigned long long)dropped_events(st));
	host_namespaces_json(&st->meta);
	printf(", \"rules\": [");
	for (uint32_t row = 0; row < decision_rows(st); row++) {
		row_label(st, row, label, sizeof(label));
		printf("%s{\"rule\": ", row ? ", " : "");
		sg_json_write_string(stdout, label);
		for (int v = 0; v < SG_VERDICT_COUNT; v++)
			printf(
			    ", \"%s\": %llu", sg_verdict_names[v],
			    (unsigned long long)st->counters[sg_counter_index(row, (uint32_t)v)]);
		printf("}");
	}
	printf("]}");
}

/* The CGROUP column: the directory, or the id of a cgroup that is gone. */
static void cgroup_column(const struct sg_shown_guard *g, char out[PATH_MAX])
{
	if (g->cgroup[0])
		snprintf(out, PATH_MAX, "%s", g->cgroup);
	else
		snprintf(out, PATH_MAX, "(id %llu)", (unsigned long long)g->st.meta.cgroup_id);
}

/* What the row says of a guard that does not simply enforce its policy. */
static const char *health(const struct sg_shown_guard *g)
{
	switch (sg_shown_guard_state(g)) {
	case SG_GUARD_DEGRADED:
		return " (degraded: this kernel ignores rewrites; rewrite and clamp rules deny)";
	case SG_GUARD_NOT_ENFORCED:
		return " (NOT ENFORCED: its link was detached; attach again or detach)";
	case SG_GUARD_CGROUP_GONE:
		return " (cgroup gone)";
	default:
		return "";
	}
}

static void print_guard_row(const struct sg_shown_guard *g, int width, bool per_rule)
{
	const struct sg_guard_status *st = &g->st;
	uint64_t totals[SG_VERDICT_COUNT];
	char since[32], label[SG_NAME_MAX + 32], cgroup[PATH_MAX];
	time_t t = (time_t)st->meta.attached_at;
	struct tm tm;

	verdict_totals(st, totals);
	strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	cgroup_column(g, cgroup);
	printf("%-*s %-14.12s %-8s %-19s %8llu %6llu %7llu %6llu  %s%s\n", width, cgroup,
	       st->meta.container_id[0] ? st->meta.container_id : "-", mode_text(&st->meta), since,
	       (unsigned long long)totals[0], (unsigned long long)totals[1],
	       (unsigned long long)totals[2], (unsigned long long)totals[3], st->meta.description,
	       health(g));
	if (!per_rule)
		return;
	if (sg_shown_guard_degraded(g))
		printf("    this kernel ignores bpf_sysctl_set_new_value(): the policy's rewrite "
		       "and clamp rules deny instead\n");
	host_namespaces_line(&st->meta);
	if (dropped_events(st))
		printf(
		    "    %llu events dropped: the ring buffer was full (is a monitor reading?)\n",
		    (unsigned long long)dropped_events(st));
	printf("    per rule, for every cgroup guarded by this policy:\n");
	for (uint32_t row = 0; row < decision_rows(st); row++) {
		const uint64_t *c = &st->counters[sg_counter_index(row, 0)];
		if (!c[0] && !c[1] && !c[2] && !c[3] && row >= st->meta.n_rules)
			continue;
		row_label(st, row, label, sizeof(label));
		printf("    %-46s %8llu %6llu %7llu %6llu\n", label, (unsigned long long)c[0],
		       (unsigned long long)c[1], (unsigned long long)c[2],
		       (unsigned long long)c[3]);
	}
}

static void print_status_header(int width)
{
	printf("%-*s %-14s %-8s %-19s %8s %6s %7s %6s  %s\n", width, "CGROUP", "CONTAINER", "MODE",
	       "SINCE", "ALLOW", "DENY", "REWRITE", "AUDIT", "POLICY");
}

static void print_status(const struct sg_shown_guards *gs, bool json, bool per_rule)
{
	char cgroup[PATH_MAX];
	int width = (int)strlen("CGROUP");

	if (json) {
		printf("[");
		for (size_t i = 0; i < gs->n; i++)
			print_guard_json(&gs->v[i], i == 0);
		printf("%s]\n", gs->n ? "\n" : "");
		return;
	}
	for (size_t i = 0; i < gs->n; i++) {
		cgroup_column(&gs->v[i], cgroup);
		if ((int)strlen(cgroup) > width)
			width = (int)strlen(cgroup);
	}
	print_status_header(width);
	for (size_t i = 0; i < gs->n; i++)
		print_guard_row(&gs->v[i], width, per_rule);
}

/*
 * The nearest ancestor of cgroup @dir that has a guard, up to the root of
 * the hierarchy (`attach --force` there): the kernel runs an ancestor's
 * program for every descendant.
 */
static bool guarded_ancestor(const char *dir, char out[PATH_MAX])
{
	char mount[PATH_MAX], path[PATH_MAX];
	struct sg_err ignored = {0};

	if (sg_cgroup2_mount(mount, &ignored) < 0 || !realpath(dir, path))
		return false;
	size_t root = strlen(mount);
	for (char *slash; (slash = strrchr(path, '/')) && (size_t)(slash - path) >= root;) {
		*slash = '\0';
		_cleanup_close_ int fd = -1;
		uint64_t id;
		char entry[32];
		if (sg_cgroup_open(path, &fd, &id, &ignored) < 0)
			return false;
		sg_guard_entry_name(id, entry);
		if (sg_guard_exists(entry)) {
			snprintf(out, PATH_MAX, "%s", path);
			return true;
		}
	}
	return false;
}

int sg_cmd_status(int argc, char **argv)
{
	static const struct option options[] = {
	    {"cgroup", required_argument, NULL, 'g'},
	    {"container", required_argument, NULL, 'C'},
	    {"json", no_argument, NULL, 'j'},
	    {NULL, 0, NULL, 0},
	};
	const char *cgroup = NULL, *container = NULL;
	bool json = false;
	char only[32] = "";
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'g':
			cgroup = optarg;
			break;
		case 'C':
			container = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:
			return sg_usage_error("status", "unknown option");
		}
	}
	if (optind != argc || (cgroup && container))
		return sg_usage_error("status", "expected at most one of --cgroup and --container");

	struct sg_err err = {0};
	if (cgroup) {
		_cleanup_close_ int fd = -1;
		uint64_t id;
		if (sg_cgroup_open(cgroup, &fd, &id, &err) < 0)
			return sg_report(&err);
		sg_guard_entry_name(id, only);
	}

	struct sg_shown_guards gs = {0};
	sg_shown_guards_collect(only, container, &gs);
	/* Nothing on stdout for a guard asked for and not found, only the error. */
	bool missing = (cgroup || container) && !gs.n;
	if (!missing)
		print_status(&gs, json, cgroup || container);
	sg_shown_guards_free(&gs);
	if (missing) {
		char ancestor[PATH_MAX];
		fprintf(stderr, "sysctl-guard: no guard for %s", cgroup ? cgroup : container);
		if (cgroup && guarded_ancestor(cgroup, ancestor))
			fprintf(stderr,
				"; its ancestor %s is guarded, and that guard applies to it too",
				ancestor);
		fputc('\n', stderr);
		return SG_EXIT_INPUT;
	}
	return SG_EXIT_OK;
}
