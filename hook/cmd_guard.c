// SPDX-License-Identifier: Apache-2.0
/* The commands that touch the kernel: attach, detach, status, gc. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <stdlib.h>

#include "cgroup.h"
#include "cli.h"
#include "compile.h"
#include "compose.h"
#include "config.h"
#include "dfa_job.h"
#include "guard.h"
#include "jsonout.h"
#include "log.h"
#include "probe.h"
#include "profiles.h"
#include "timing.h"
#include "util.h"

/* Loads --policy FILE or --profile NAME. */
static int load_policy(const char *file, const char *profile, const char *config_path,
		       struct sg_policy *out, char **label, struct sg_err *err)
{
	if (file) {
		*label = sg_xasprintf("policy %s", file);
		return sg_policy_load_file(file, out, err);
	}
	struct sg_node_config config = {0};
	int r = sg_node_config_load(config_path, &config, err);
	if (r == 0)
		r = sg_profile_load(profile, config.profiles_dir, out, err);
	sg_node_config_free(&config);
	*label = sg_xasprintf("profile %s", profile);
	return r;
}

/* Some layer of @compiled is in audit mode. */
static bool compiled_audits(const struct sg_compiled *compiled)
{
	for (uint32_t i = 0; i < compiled->config.n_layers && i < SG_LAYERS_MAX; i++)
		if (compiled->config.layers[i].mode == SG_MODE_AUDIT)
			return true;
	return false;
}

int sg_probe_kernel(bool *rewrite_works, struct sg_err *err)
{
	if (!sg_probe_sysctl_hook())
		return sg_system_error(
		    err, EOPNOTSUPP,
		    "this kernel cannot load BPF_PROG_TYPE_CGROUP_SYSCTL programs "
		    "(needs Linux 5.2+ with CONFIG_CGROUP_BPF)");
	return sg_probe_rewrite(rewrite_works, err);
}

/*
 * Rewriting needs a kernel where bpf_sysctl_set_new_value works; elsewhere
 * rewrite and clamp rules deny, and the user hears why.
 */
void sg_fit_to_kernel(struct sg_compiled *compiled, bool rewrite_works)
{
	compiled->config.rewrite_works = rewrite_works;
	/* Audit layers report every write. */
	compiled->config.audit_events = compiled_audits(compiled);
	if (rewrite_works)
		return;
	for (uint32_t i = 0; i < compiled->config.n_rules; i++) {
		const struct sg_rule_entry *e = &compiled->rules[i];
		if ((e->flags & SG_RULE_REWRITE) || e->on_violation == SG_VIOLATION_CLAMP) {
			sg_warning("this kernel ignores bpf_sysctl_set_new_value() (fixed in "
				   "6.12.96 and 6.18.39): rewrite and clamp rules deny instead");
			return;
		}
	}
}

int sg_prepare_kernel(struct sg_compiled *compiled, struct sg_err *err)
{
	bool works = false;
	int r = sg_probe_kernel(&works, err);
	if (r == 0)
		sg_fit_to_kernel(compiled, works);
	return r;
}

/*
 * A failure once the policy compiled: a DFA built apart (dfa_job.h) may
 * yet find the policy too complex, the user's error, which is reported
 * instead, as when the DFA is built here first.
 */
static int report_after_compile(struct sg_compiled *compiled, struct sg_err *err)
{
	sg_dfa_job_input_error(compiled->dfa_job, err);
	return sg_report(err);
}

int sg_cmd_attach(int argc, char **argv)
{
	static const struct option options[] = {
	    {"cgroup", required_argument, NULL, 'g'},
	    {"policy", required_argument, NULL, 'p'},
	    {"profile", required_argument, NULL, 'P'},
	    {"config", required_argument, NULL, 'c'},
	    {"force", no_argument, NULL, 'f'},
	    {"log-reads", no_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	const char *cgroup = NULL, *file = NULL, *profile = NULL, *config_path = NULL;
	bool force = false, log_reads = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'g':
			cgroup = optarg;
			break;
		case 'p':
			file = optarg;
			break;
		case 'P':
			profile = optarg;
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'r':
			log_reads = true;
			break;
		default:
			return sg_usage_error("attach", "unknown option");
		}
	}
	if (!cgroup || optind != argc)
		return sg_usage_error("attach", "expected --cgroup DIR");
	if (!file == !profile)
		return sg_usage_error("attach",
				      "expected exactly one of --policy FILE and --profile NAME");

	struct sg_err err = {0};
	struct sg_policy policy = {0};
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	struct sg_guard_meta meta = {0};
	_cleanup_free_ char *label = NULL;
	int status = SG_EXIT_OK;

	if (!force && sg_cgroup_is_root(cgroup))
		return sg_usage_error("attach",
				      "%s is the root of the cgroup hierarchy: a guard there "
				      "confines every process on the host; add --force if that "
				      "is what you mean",
				      cgroup);
	if (load_policy(file, profile, config_path, &policy, &label, &err) < 0) {
		status = sg_report(&err);
		goto out;
	}
	sg_timing_mark("parse");
	sg_policy_set_adopt(&policy, label, &set);
	int r = sg_compile_apart(&set, &compiled, &err);
	sg_timing_mark("compile");
	if (r < 0 || sg_prepare_kernel(&compiled, &err) < 0) {
		status = report_after_compile(&compiled, &err);
		goto out;
	}
	struct sg_guard_options guard_options = {.description = set.description,
						 .events = log_reads ? SG_EVENTS_READS : 0};
	struct sg_policy_request request = {.compiled = &compiled};
	if (sg_guard_attach(cgroup, &request, &guard_options, &meta, &err) < 0) {
		status = report_after_compile(&compiled, &err);
		goto out;
	}
	printf("guarded %s with %s (%u rule%s, policy %s)\n", cgroup, label,
	       compiled.config.n_rules, sg_plural(compiled.config.n_rules), meta.policy_key);
out:
	sg_dfa_job_free(compiled.dfa_job);
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_policy_free(&policy);
	return status;
}

int sg_cmd_detach(int argc, char **argv)
{
	static const struct option options[] = {
	    {"cgroup", required_argument, NULL, 'g'},
	    {NULL, 0, NULL, 0},
	};
	const char *cgroup = NULL;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'g')
			return sg_usage_error("detach", "unknown option");
		cgroup = optarg;
	}
	if (!cgroup || optind != argc)
		return sg_usage_error("detach", "expected --cgroup DIR");

	struct sg_err err = {0};
	bool found = false;
	if (sg_guard_detach(cgroup, &found, &err) < 0)
		return sg_report(&err);
	printf(found ? "removed the guard of %s\n" : "%s had no guard\n", cgroup);
	return SG_EXIT_OK;
}

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

static const char *const verdict_names[SG_VERDICT_COUNT] = {"allow", "deny", "rewrite", "audit"};

/* The counter row's label: a rule name, a layer default, or early decisions. */
static void row_label(const struct sg_guard_status *st, uint32_t row, char *out, size_t cap)
{
	if (row < st->meta.n_rules)
		snprintf(out, cap, "%s", st->rule_names[row].name);
	else if (row < st->meta.n_rules + st->meta.n_layers)
		snprintf(out, cap, "(default, layer %u)", row - st->meta.n_rules);
	else
		snprintf(out, cap, "(name too long)");
}

static void print_guard_json(const char *entry, const struct sg_guard_status *st, bool first)
{
	uint64_t totals[SG_VERDICT_COUNT];
	char label[SG_NAME_MAX + 32];

	verdict_totals(st, totals);
	printf("%s\n  {\"cgroup_id\": %s, \"container_id\": ", first ? "" : ",", entry);
	sg_json_write_string(stdout, st->meta.container_id);
	printf(", \"policy\": ");
	sg_json_write_string(stdout, st->meta.description);
	printf(", \"policy_hash\": \"%s\", \"program\": \"%s\", \"mode\": \"%s\", "
	       "\"attached_at\": %llu, \"attached\": %s, \"rewrite_works\": %s, \"counters\": {",
	       st->meta.policy_key, st->meta.program_key, mode_text(&st->meta),
	       (unsigned long long)st->meta.attached_at, st->link_alive ? "true" : "false",
	       st->meta.rewrite_works ? "true" : "false");
	for (int v = 0; v < SG_VERDICT_COUNT; v++)
		printf("%s\"%s\": %llu", v ? ", " : "", verdict_names[v],
		       (unsigned long long)totals[v]);
	printf(", \"events_dropped\": %llu}, \"rules\": [", (unsigned long long)dropped_events(st));
	for (uint32_t row = 0; row < decision_rows(st); row++) {
		row_label(st, row, label, sizeof(label));
		printf("%s{\"rule\": ", row ? ", " : "");
		sg_json_write_string(stdout, label);
		for (int v = 0; v < SG_VERDICT_COUNT; v++)
			printf(
			    ", \"%s\": %llu", verdict_names[v],
			    (unsigned long long)st->counters[sg_counter_index(row, (uint32_t)v)]);
		printf("}");
	}
	printf("]}");
}

static void print_guard_row(const char *entry, const struct sg_guard_status *st, bool per_rule)
{
	uint64_t totals[SG_VERDICT_COUNT];
	char since[32], label[SG_NAME_MAX + 32];
	time_t t = (time_t)st->meta.attached_at;
	struct tm tm;

	verdict_totals(st, totals);
	strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	printf("%-10s %-14.12s %-8s %-19s %8llu %6llu %7llu %6llu  %s%s\n", entry,
	       st->meta.container_id[0] ? st->meta.container_id : "-", mode_text(&st->meta), since,
	       (unsigned long long)totals[0], (unsigned long long)totals[1],
	       (unsigned long long)totals[2], (unsigned long long)totals[3], st->meta.description,
	       st->link_alive ? "" : " (cgroup gone)");
	if (!per_rule)
		return;
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

static void print_status_header(void)
{
	printf("%-10s %-14s %-8s %-19s %8s %6s %7s %6s  %s\n", "CGROUP", "CONTAINER", "MODE",
	       "SINCE", "ALLOW", "DENY", "REWRITE", "AUDIT", "POLICY");
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

	DIR *dir = opendir(SG_PIN_ROOT);
	size_t shown = 0;
	if (json)
		printf("[");
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
		if (!container || sg_guard_meta_id_starts(&st.meta, container)) {
			if (!json && shown == 0)
				print_status_header();
			if (json)
				print_guard_json(de->d_name, &st, shown == 0);
			else
				print_guard_row(de->d_name, &st, cgroup || container);
			shown++;
		}
		sg_guard_status_free(&st);
	}
	if (dir)
		closedir(dir);
	if (json)
		printf("%s]\n", shown ? "\n" : "");
	else if (!shown && !cgroup && !container)
		print_status_header(); /* a node without guards: an empty table */
	if ((cgroup || container) && !shown) {
		fprintf(stderr, "sysctl-guard: no guard for %s\n", cgroup ? cgroup : container);
		return SG_EXIT_INPUT;
	}
	return SG_EXIT_OK;
}

int sg_cmd_gc(int argc, char **argv)
{
	static const struct option options[] = {
	    {"min-age", required_argument, NULL, 'a'},
	    {"preloaded", no_argument, NULL, 'p'},
	    {NULL, 0, NULL, 0},
	};
	/* A policy pinned a moment ago may be about to get its first link. */
	unsigned long long min_age = SG_GC_MIN_AGE;
	bool preloaded = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'p') {
			preloaded = true;
			continue;
		}
		if (opt != 'a')
			return sg_usage_error("gc", "unknown option");
		if (!sg_parse_number(optarg, UINT_MAX, &min_age))
			return sg_usage_error("gc", "--min-age takes seconds, not \"%s\"", optarg);
	}
	if (optind != argc)
		return sg_usage_error("gc", "unexpected argument \"%s\"", argv[optind]);

	DIR *dir = opendir(SG_PIN_ROOT);
	int status = SG_EXIT_OK;
	for (struct dirent *de; dir && (de = readdir(dir));) {
		struct sg_err err = {0};

		/* A staging directory of a hook still running is neither orphan nor an entry. */
		bool orphan = sg_is_orphan_staging(de->d_name);
		if (!orphan && !sg_guard_is_entry(de->d_name))
			continue;
		/* Whoever made it, a guard whose link still enforces stays. */
		if (!orphan && sg_guard_link_alive(de->d_name))
			continue;
		int r = orphan ? sg_guard_remove_staging(de->d_name, &err)
			       : sg_guard_remove_entry(de->d_name, &err);
		if (r < 0) {
			fprintf(stderr, "sysctl-guard: %s\n", err.msg);
			status = SG_EXIT_SYSTEM;
		} else {
			printf("removed %s/%s\n", SG_PIN_ROOT, de->d_name);
		}
	}
	if (dir)
		closedir(dir);
	sg_guard_gc_index();
	int removed = sg_guard_gc_policies((unsigned)min_age, preloaded);
	if (removed > 0)
		printf("removed %d unused polic%s from %s\n", removed, removed == 1 ? "y" : "ies",
		       SG_POLICY_ROOT);
	return status;
}
