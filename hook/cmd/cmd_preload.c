// SPDX-License-Identifier: Apache-2.0
/*
 * `sysctl-guard preload`: makes the policies of the node's profiles before
 * any container asks for them. Parsing, compiling and loading a policy of
 * 10,000 rules takes tens of milliseconds, which the first container of a
 * new policy otherwise waits for; preloaded, its hook finds the policy by
 * its inputs (source.h), like any policy in use.
 *
 * Every profile is read and compiled before anything is loaded: an invalid
 * one fails the command and changes nothing on the node. A profile's
 * policy preloaded before (of an older text, say) loses its mark to the
 * new one, and gc frees it once no container uses it. Without names, the
 * node's marks become exactly those of its profiles and baseline: a
 * profile removed since loses its mark too.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "policy/compose.h"
#include "kernel/guard.h"
#include "kernel/probe_rewrite.h"
#include "kernel/tables.h"
#include "oci/config.h"
#include "oci/confine.h"
#include "oci/source.h"
#include "cmd/cli.h"

struct preload {
	struct sg_policy_source src;
	char *label; /* "profile NAME", or "baseline (profile NAME)": what is preloaded */
	char *mark;  /* the label its mark takes: with "@SCOPE" for --sysctl (tables.h) */
	struct sg_inputs inputs;
};

/* The linux.sysctl pairs every container of the node has (--sysctl), as a runtime adds them. */
struct node_sysctls {
	struct sg_sysctl_pair *v;
	size_t n;
	char *text;	/* " (linux.sysctl NAME=VALUE ...)" for the labels, "" when none */
	char scope[32]; /* "sysctls-" and a hash of the pairs, whatever their order; "" */
};

/* --sysctl NAME=VALUE, once per name: 0, or the usage error's exit status. */
static int add_sysctl(struct node_sysctls *s, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return sg_usage_error("preload", "--sysctl takes NAME=VALUE, not \"%s\"", arg);
	size_t name_len = (size_t)(eq - arg);
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i].name) == name_len && strncmp(s->v[i].name, arg, name_len) == 0)
			return sg_usage_error("preload", "--sysctl %.*s given twice", (int)name_len,
					      arg);
	s->v = sg_xrealloc(s->v, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = (struct sg_sysctl_pair){sg_xstrndup(arg, name_len), sg_xstrdup(eq + 1)};
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sg_sysctl_pair *)a)->name,
		      ((const struct sg_sysctl_pair *)b)->name);
}

/*
 * The scope of the marks made with these pairs: a hash (FNV-1a) of them in
 * name order, so that each set of pairs keeps its marks apart whatever order
 * they came in, and a mark's name stays short however long the values are.
 */
static void scope_sysctls(struct node_sysctls *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), by_name);
	for (size_t i = 0; i < s->n; i++) {
		const char *parts[] = {s->v[i].name, s->v[i].value};
		for (size_t k = 0; k < 2; k++)
			for (const char *c = parts[k];; c++) {
				h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
				if (!*c)
					break;
			}
	}
	snprintf(s->scope, sizeof(s->scope), "%s%016llx", SG_MARK_SCOPE_PREFIX,
		 (unsigned long long)h);
}

/* What the labels add: which pairs the policies were made with. */
static void describe_sysctls(struct node_sysctls *s)
{
	size_t len = strlen(" (linux.sysctl)") + 1;
	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i].name) + strlen(s->v[i].value) + 2;
	s->text = sg_xcalloc(len, 1);
	if (!s->n)
		return;
	strcat(s->text, " (linux.sysctl");
	for (size_t i = 0; i < s->n; i++) {
		strcat(s->text, " ");
		strcat(s->text, s->v[i].name);
		strcat(s->text, "=");
		strcat(s->text, s->v[i].value);
	}
	strcat(s->text, ")");
}

static void node_sysctls_free(struct node_sysctls *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].value);
	}
	free(s->v);
	free(s->text);
}

/*
 * One source per profile named (every installed one when none is), and the
 * baseline alone, each with the node's linux.sysctl pairs. The label names
 * the pairs: a profile preloaded with them and without has a mark for each.
 */
static size_t plan(const struct sg_node_config *config, char **names, size_t n_names,
		   const struct node_sysctls *sysctls, struct preload **out)
{
	size_t n = n_names + (config->baseline ? 1 : 0);
	struct preload *p = sg_xcalloc(n ? n : 1, sizeof(*p));

	for (size_t i = 0; i < n; i++) {
		p[i].src.config = config;
		p[i].src.keep_text = true;
		p[i].src.sysctls = sysctls->v;
		p[i].src.n_sysctls = sysctls->n;
		char *base = i < n_names ? sg_xasprintf("profile %s", names[i])
					 : sg_xasprintf("baseline (%s)", config->baseline_label);
		p[i].label = sg_xasprintf("%s%s", base, sysctls->text);
		p[i].mark =
		    sysctls->scope[0]
			? sg_xasprintf("%s%c%s", base, SG_MARK_SCOPE_SEPARATOR, sysctls->scope)
			: sg_xstrdup(base);
		free(base);
	}
	*out = p;
	return n;
}

/* Reads every profile, then, confined, parses and compiles each: input errors first. */
static int make_all(struct preload *p, size_t n, char **names, size_t n_names, struct sg_err *err)
{
	bool rewrite_works;
	int r = 0;

	for (size_t i = 0; i < n_names && r == 0; i++)
		r = sg_source_set_profile(&p[i].src, names[i], err);
	if (r == 0)
		r = sg_probe_kernel(&rewrite_works, err);
	/* The probes fork and unshare, which the confined process may not. */
	if (r == 0)
		r = sg_confine(err);
	for (size_t i = 0; i < n && r == 0; i++) {
		p[i].src.rewrite_works = rewrite_works;
		sg_source_inputs(&p[i].src, &p[i].inputs);
		r = sg_source_make(&p[i].src, err);
	}
	return r;
}

/* Loads each policy (or finds it in use) and marks it preloaded. */
static int load_all(struct preload *p, size_t n, struct sg_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct sg_policy_request request = {.compiled = &p[i].src.compiled,
						    .inputs = &p[i].inputs};
		char description[SG_DESCRIPTION_LEN];
		struct sg_tables tables;
		unsigned rules = p[i].src.compiled.config.n_rules;

		snprintf(description, sizeof(description), "%s", p[i].src.set.description);
		int r = sg_guard_preload(&request, p[i].mark, &tables, description, err);
		if (r < 0)
			return r;
		printf("preloaded %s: policy %s (%u rule%s)\n", p[i].label, tables.key, rules,
		       sg_plural(rules));
	}
	return 0;
}

/* After a preload of everything: marks of its scope (its --sysctl pairs) not in the plan go. */
static int drop_other_marks(const struct preload *p, size_t n, const char *scope,
			    struct sg_err *err)
{
	const char **labels = sg_xcalloc(n ? n : 1, sizeof(*labels));

	for (size_t i = 0; i < n; i++)
		labels[i] = p[i].mark;
	int r = sg_guard_drop_marks_except(labels, n, scope, err);
	free(labels);
	return r;
}

static int preload(const struct sg_node_config *config, char **names, size_t n_names,
		   const struct node_sysctls *sysctls, bool everything, struct sg_err *err)
{
	struct preload *p;
	size_t n = plan(config, names, n_names, sysctls, &p);

	/*
	 * A node with no profile and no baseline has nothing to make ahead: not
	 * an error, since the boot unit runs preload on every node. Its marks
	 * stay as they are: nothing was made that could take their place.
	 */
	if (n == 0) {
		fprintf(stderr,
			"sysctl-guard: nothing to preload: no profile named, none installed in %s "
			"and no baseline in the node config\n",
			config->profiles_dir);
		free(p);
		return 0;
	}
	int r = make_all(p, n, names, n_names, err);
	if (r == 0)
		r = load_all(p, n, err);
	if (r == 0 && everything)
		r = drop_other_marks(p, n, sysctls->scope, err);
	for (size_t i = 0; i < n; i++) {
		sg_source_free(&p[i].src);
		free(p[i].label);
		free(p[i].mark);
	}
	free(p);
	return r;
}

int sg_cmd_preload(int argc, char **argv)
{
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"sysctl", required_argument, NULL, 's'},
	    {NULL, 0, NULL, 0},
	};
	struct node_sysctls sysctls = {0};
	struct sg_node_config config = {0};
	struct sg_err err = {0};
	const char *config_path = NULL;
	char **installed = NULL;
	int opt, status = SG_EXIT_OK;

	optind = 1;
	while (status == SG_EXIT_OK && (opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'c')
			config_path = optarg;
		else if (opt == 's')
			status = add_sysctl(&sysctls, optarg);
		else
			status = sg_usage_error("preload", "unknown option");
	}
	if (status == SG_EXIT_OK && sg_node_config_load(config_path, &config, &err) < 0)
		status = sg_report(&err);
	if (status != SG_EXIT_OK) {
		node_sysctls_free(&sysctls);
		return status;
	}
	scope_sysctls(&sysctls);
	describe_sysctls(&sysctls);
	char **names = argv + optind;
	size_t n_names = (size_t)(argc - optind);
	bool everything = n_names == 0;
	int r = everything
		    ? sg_installed_profile_names(config.profiles_dir, &installed, &n_names, &err)
		    : 0;
	if (r == 0)
		r = preload(&config, everything ? installed : names, n_names, &sysctls, everything,
			    &err);
	if (everything)
		sg_profile_names_free(installed, n_names);
	sg_node_config_free(&config);
	node_sysctls_free(&sysctls);
	return r < 0 ? sg_report(&err) : SG_EXIT_OK;
}
