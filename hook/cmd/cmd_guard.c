// SPDX-License-Identifier: Apache-2.0
/* The commands that change guards: attach, detach, gc (status: cmd_status.c). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "base/log.h"
#include "base/timing.h"
#include "base/util.h"
#include "policy/compose.h"
#include "policy/profiles.h"
#include "compile/compile.h"
#include "kernel/cgroup.h"
#include "kernel/guard.h"
#include "kernel/namespaces.h"
#include "kernel/probe_rewrite.h"
#include "oci/config.h"
#include "cmd/cli.h"
#include "cmd/every.h"

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

/* Probes the kernel (cached per boot) and fits @compiled to it. */
static int prepare_kernel(struct sg_compiled *compiled, struct sg_err *err)
{
	bool works = false;
	int r = sg_probe_kernel(&works, err);
	if (r == 0)
		sg_fit_to_kernel(compiled, works);
	return r;
}

int sg_cmd_attach(int argc, char **argv)
{
	static const struct option options[] = {
	    {"cgroup", required_argument, NULL, 'g'},  {"policy", required_argument, NULL, 'p'},
	    {"profile", required_argument, NULL, 'P'}, {"config", required_argument, NULL, 'c'},
	    {"force", no_argument, NULL, 'f'},	       {"log-reads", no_argument, NULL, 'r'},
	    {"pid", required_argument, NULL, 'n'},     {NULL, 0, NULL, 0},
	};
	const char *cgroup = NULL, *file = NULL, *profile = NULL, *config_path = NULL;
	bool force = false, log_reads = false;
	unsigned long long pid = 0;
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
		case 'n':
			if (!sg_parse_number(optarg, INT32_MAX, &pid) || pid == 0)
				return sg_usage_error(
				    "attach", "--pid needs a process id, not \"%s\"", optarg);
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
	int r = sg_compile(&set, &compiled, &err);
	sg_timing_mark("compile");
	if (r < 0 || prepare_kernel(&compiled, &err) < 0) {
		status = sg_report(&err);
		goto out;
	}
	struct sg_guard_options guard_options = {.description = set.description,
						 .events = log_reads ? SG_EVENTS_READS : 0,
						 .namespaces_checked = pid != 0};
	if (pid && sg_namespaces_shared((long)pid, &guard_options.host_namespaces, &err) < 0) {
		status = sg_report(&err);
		goto out;
	}
	struct sg_policy_request request = {.compiled = &compiled};
	if (sg_guard_attach(cgroup, &request, &guard_options, &meta, &err) < 0) {
		status = sg_report(&err);
		goto out;
	}
	printf("guarded %s with %s (%u rule%s, policy %s)\n", cgroup, label,
	       compiled.config.n_rules, sg_plural(compiled.config.n_rules), meta.policy_key);
out:
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

/* One pass of gc: 0 or SG_EXIT_SYSTEM when something could not be removed. */
static int gc_once(unsigned min_age, bool preloaded)
{
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
	int removed = sg_guard_gc_policies(min_age, preloaded);
	if (removed > 0)
		printf("removed %d unused polic%s from %s\n", removed, removed == 1 ? "y" : "ies",
		       SG_POLICY_ROOT);
	return status;
}

struct gc_options {
	unsigned min_age;
	bool preloaded;
};

static void gc_run(void *arg)
{
	const struct gc_options *o = arg;
	gc_once(o->min_age, o->preloaded);
}

int sg_cmd_gc(int argc, char **argv)
{
	static const struct option options[] = {
	    {"min-age", required_argument, NULL, 'a'},
	    {"preloaded", no_argument, NULL, 'p'},
	    {"every", required_argument, NULL, 'e'},
	    {"preload-first", no_argument, NULL, 'f'},
	    {NULL, 0, NULL, 0},
	};
	/* A policy pinned a moment ago may be about to get its first link. */
	unsigned long long min_age = SG_GC_MIN_AGE, every = 0;
	bool preloaded = false, preload_first = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'p') {
			preloaded = true;
		} else if (opt == 'f') {
			preload_first = true;
		} else if (opt == 'a') {
			if (!sg_parse_number(optarg, UINT_MAX, &min_age))
				return sg_usage_error("gc", "--min-age takes seconds, not \"%s\"",
						      optarg);
		} else if (opt == 'e') {
			if (!sg_parse_number(optarg, UINT_MAX, &every) || every == 0)
				return sg_usage_error(
				    "gc", "--every takes seconds, at least 1, not \"%s\"", optarg);
		} else {
			return sg_usage_error("gc", "unknown option");
		}
	}
	if (optind != argc)
		return sg_usage_error("gc", "unexpected argument \"%s\"", argv[optind]);

	if (preload_first) {
		char *preload_argv[] = {"preload", NULL};
		int r = sg_cmd_preload(1, preload_argv);
		if (r != SG_EXIT_OK)
			fprintf(stderr,
				"sysctl-guard gc: preload failed (exit %d): containers make "
				"their policies as they start\n",
				r);
		fflush(stdout);
	}
	struct gc_options o = {.min_age = (unsigned)min_age, .preloaded = preloaded};
	if (every)
		return sg_every((unsigned)every, "gc", gc_run, &o);
	return gc_once(o.min_age, o.preloaded);
}
