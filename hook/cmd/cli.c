// SPDX-License-Identifier: Apache-2.0
/* The commands that need no kernel: check, explain, profiles; and the command table. */
#include "cmd/cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "policy/compose.h"
#include "policy/name.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "compile/compile.h"
#include "compile/eval.h"
#include "oci/config.h"

const struct sg_command sg_commands[] = {
    {"hook", sg_cmd_hook, "[--config FILE] [prestart|createRuntime|poststop]",
     "Runs as an OCI hook: reads the container state on stdin and attaches (or, at\n"
     "poststop, removes) the container's guard. Without a stage argument, the stage\n"
     "is the `stage` environment variable's, else poststop when the state's pid is\n"
     "0, createRuntime otherwise. --config FILE: the node config (else\n"
     "$SYSCTL_GUARD_CONFIG, else /etc/sysctl-guard/config.json).\n"},
    {"check", sg_cmd_check, "FILE...",
     "Validates policy files. Errors name the file, line:column and JSON path.\n"
     "Exit status 0 when every file is valid, 1 otherwise.\n"},
    {"explain", sg_cmd_explain,
     "FILE NAME [--write VALUE] [--pos N] [--host-namespaces LIST] | FILE --batch",
     "Shows the decision FILE's policy takes for reading NAME (or writing VALUE to\n"
     "it at file position N, default 0) and the rule that made it. With --batch,\n"
     "reads names from stdin and prints NAME allow|deny|rewrite|audit per line.\n"
     "--host-namespaces LIST: the writer shares these namespaces with the host\n"
     "(net,uts,ipc,user,pid, all or none; default none), as a container without\n"
     "its own network namespace shares net.\n"},
    {"attach", sg_cmd_attach, "--cgroup DIR (--policy FILE | --profile NAME)",
     "Guards the cgroup v2 directory DIR (and its descendants) with a policy,\n"
     "replacing the guard already there (not a container's: detach that first).\n"
     "Options: --config FILE (node config, for profiles_dir); --log-reads to report\n"
     "every read as an event too; --force to guard the root of the hierarchy, that\n"
     "is every process on the host; --pid PID: writes to the sysctls of namespaces\n"
     "PID shares with the host are denied unless a rule sets allow_host_namespace.\n"},
    {"detach", sg_cmd_detach, "--cgroup DIR",
     "Removes the guard of the cgroup v2 directory DIR.\n"},
    {"status", sg_cmd_status, "[--cgroup DIR | --container ID] [--json]",
     "Lists the guards on this node: cgroup, container, policy, mode, since when,\n"
     "and counters per verdict; with --cgroup or --container, per rule too. --json\n"
     "prints a JSON array, one object per guard.\n"},
    {"metrics", sg_cmd_metrics, "[--textfile DIR [--every SECONDS]]",
     "Prints the node's metrics in the Prometheus text format (0.0.4): guards by\n"
     "state, each guard's decisions by verdict and events dropped (labelled with\n"
     "container_id, cgroup, cgroup_id, policy, policy_description), policies and\n"
     "the kernel memory of each policy and program. --textfile DIR writes them to\n"
     "DIR/sysctl_guard.prom instead, atomically, for node_exporter's textfile\n"
     "collector (--collector.textfile.directory=DIR). Exit status 2 when DIR\n"
     "cannot be written. --every SECONDS: again every SECONDS until SIGTERM or\n"
     "SIGINT, which end it with status 0 (a DaemonSet's container).\n"},
    {"monitor", sg_cmd_monitor, "[--json | --syslog | --journal] [--container ID]",
     "Streams the decisions of every guard on this node: denials and rewrites, every\n"
     "write of an audit-mode guard. --json prints one JSON object per line\n"
     "(schema/event.schema.json); --syslog sends them to syslog; --journal to the\n"
     "systemd journal, with the fields CONTAINER_ID, SYSCTL, ACCESS, VERDICT, RULE,\n"
     "REASON, VALUE, NEW_VALUE, HOST_NAMESPACE, TASK_PID and TASK_COMM (builds\n"
     "linked with libsystemd); --container ID keeps the events of containers whose\n"
     "ids begin with ID. Stops on SIGINT or SIGTERM.\n"},
    {"learn", sg_cmd_learn, "(--container ID | --cgroup DIR)",
     "Prints a policy that allows exactly what the container read and wrote while its\n"
     "guard recorded (audit mode, or annotation io.sysctl-guard.learn=true), writes\n"
     "as values. `check` accepts it; review it before you enforce it.\n"},
    {"preload", sg_cmd_preload, "[--config FILE] [--sysctl NAME=VALUE]... [PROFILE...]",
     "Makes ahead, as the hook would for a container whose only annotation names\n"
     "PROFILE, each profile's policy (every profile in profiles_dir when none is\n"
     "named; the baseline alone too where the node config has one), so that such\n"
     "containers find it in use: no parsing or compiling as they start. Each\n"
     "replaces what was preloaded for the same profile before; with no PROFILE,\n"
     "profiles no longer installed lose theirs. `gc` keeps preloaded policies\n"
     "while no container uses them. --sysctl NAME=VALUE (repeatable) makes them\n"
     "for containers whose config.json has exactly these linux.sysctl pairs, as\n"
     "Podman (net.ipv4.ping_group_range=0 0) and containerd add to every one.\n"
     "Exit status 2 when a policy is made but its inputs could not be recorded\n"
     "(its first container would make it again).\n"},
    {"gc", sg_cmd_gc, "[--min-age SECONDS] [--preloaded] [--every SECONDS] [--preload-first]",
     "Removes guards whose cgroup is gone, staging leftovers of killed hooks, the\n"
     "policies no guard has used for SECONDS (default 60), preloaded ones too with\n"
     "--preloaded, and the programs no guard or policy holds (another build's).\n"
     "--every SECONDS: again every SECONDS until SIGTERM or SIGINT, which end it\n"
     "with status 0 (a DaemonSet's main process). --preload-first: runs `preload`\n"
     "first; its failure is reported, and gc runs anyway (containers then make\n"
     "their policies as they start).\n"},
    {"profiles", sg_cmd_profiles, "[--config FILE]",
     "Lists the built-in profiles and those installed in profiles_dir.\n"},
    {"install", sg_cmd_install,
     "--root DIR [--hook annotated|always] [--config FILE] [--profiles SRC] [--dry-run]",
     "Installs this binary on the node whose root is DIR (/ on the node itself, /host\n"
     "in a pod that mounts it there): the binary as DIR/usr/local/sbin/sysctl-guard,\n"
     "the hooks.d file that names it (as the node sees it, without DIR) as\n"
     "DIR/etc/containers/oci/hooks.d/sysctl-guard.json, and the default node config\n"
     "as DIR/etc/sysctl-guard/config.json where there is none: a node config there is\n"
     "never overwritten. Each file is replaced atomically (a hook running meanwhile\n"
     "runs the old binary or the new one), and only where it differs: run again, it\n"
     "says \"up to date\". The binary goes first, the hooks.d file last.\n"
     "--hook annotated (default): the hook runs for containers with an\n"
     "io.sysctl-guard annotation; always: for every container (a node baseline).\n"
     "--config FILE: installs FILE as the node config, replacing the node's.\n"
     "--profiles SRC: installs each SRC/NAME.json into the config's profiles_dir\n"
     "(none is removed). Both are checked as the hook reads them before anything is\n"
     "written. --dry-run: says what would change, writes nothing.\n"
     "Exit status 1 for invalid options or files, 2 when the system refused a write.\n"},
    {NULL, NULL, NULL, NULL},
};

const struct sg_command *sg_command_find(const char *name)
{
	for (const struct sg_command *c = sg_commands; name && c->name; c++)
		if (strcmp(c->name, name) == 0 && c->run)
			return c;
	return NULL;
}

bool sg_parse_number(const char *text, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!*text)
		return false;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9' || v > (max - (unsigned)(*p - '0')) / 10)
			return false;
		v = v * 10 + (unsigned)(*p - '0');
	}
	*out = v;
	return true;
}

int sg_usage_error(const char *command, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "sysctl-guard %s: ", command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see sysctl-guard help %s\n", command);
	return SG_EXIT_INPUT;
}

int sg_report(const struct sg_err *err)
{
	fprintf(stderr, "sysctl-guard: %s\n", err->msg);
	return err->status;
}

/* A name @pattern (slash form) matches: each wildcard read as "x" ("**" as one component). */
static void example_name(const char *pattern, char out[SG_NAME_MAX])
{
	size_t o = 0;

	for (const char *c = pattern; *c && o + 1 < SG_NAME_MAX; c++) {
		if (c[0] == '*' && c[1] == '*')
			c++;
		out[o++] = *c == '*' || *c == '?' ? 'x' : *c;
	}
	out[o] = '\0';
}

/* rules[@i], a pattern that never decides: which rule decides a name it matches instead. */
static void warn_never_winning(const struct sg_policy *p, size_t i, const struct sg_compiled *c)
{
	char name[SG_NAME_MAX], dotted[SG_NAME_MAX], instead[64] = "";
	struct sg_decision d;

	example_name(p->rules[i].pattern, name);
	sg_eval(c, &(struct sg_access_req){.name = name}, &d);
	sg_name_to_dotted(name, dotted, sizeof(dotted));
	if (d.rule != SG_NO_RULE && c->origins[d.rule].index != SIZE_MAX)
		snprintf(instead, sizeof(instead), "rules[%zu]", c->origins[d.rule].index);
	fprintf(stderr,
		"warning: %s:%u:%u: rules[%zu]: never matches: another pattern wins every name "
		"it matches (one with more literal characters, or as many and listed first): "
		"%s decides %s\n",
		p->origin, p->rules[i].pos.line, p->rules[i].pos.col, i,
		instead[0] ? instead : "another rule", dotted);
}

/*
 * Every rule that can never decide, in rule order: a name listed before
 * (sg_policy_find_shadowed's warnings, one per such rule, in that order),
 * and, once compiled (@c), a pattern another one wins for every name.
 */
static void warn_dead_rules(const struct sg_policy *p, const struct sg_compiled *c)
{
	_cleanup_free_ bool *never = sg_xcalloc(p->n_rules ? p->n_rules : 1, 1);
	size_t shadowed = 0;

	if (c && c->n_name_copies == p->n_rules)
		sg_compiled_patterns_never_winning(c, never);
	for (size_t i = 0; i < p->n_rules; i++) {
		if (p->rules[i].shadowed && shadowed < p->n_warnings)
			fprintf(stderr, "warning: %s\n", p->warnings[shadowed++]);
		else if (never[i])
			warn_never_winning(p, i, c);
	}
}

/* Whether @file is a policy the hook takes, as check says: 0 or the exit status. */
static int check_file(const char *file)
{
	struct sg_policy policy = {0};
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	struct sg_err err = {0};
	int status = SG_EXIT_OK;

	if (sg_policy_load_file(file, &policy, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return SG_EXIT_INPUT;
	}
	sg_policy_find_shadowed(&policy);
	sg_policy_set_adopt(&policy, file, &set);
	const struct sg_policy *p = &set.layers[0];
	/* What the hook compiles too: a policy too complex for it is not valid. */
	if (sg_compile(&set, &compiled, &err) < 0) {
		warn_dead_rules(p, NULL);
		status = sg_report(&err);
		goto out;
	}
	compiled.config.rewrite_works = 1;
	warn_dead_rules(p, &compiled);
	printf("%s: valid (%zu rule%s, mode %s, default %s)\n", file, p->n_rules,
	       sg_plural(p->n_rules), sg_mode_name(p->mode), sg_access_name(p->default_access));
out:
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_policy_free(&policy);
	return status;
}

int sg_cmd_check(int argc, char **argv)
{
	int status = SG_EXIT_OK;

	if (argc < 2)
		return sg_usage_error("check", "expected at least one policy file");
	for (int i = 1; i < argc; i++) {
		int r = check_file(argv[i]);
		if (r != SG_EXIT_OK)
			status = r;
	}
	return status;
}

static void print_rule(const struct sg_compiled *c, const struct sg_policy_set *set,
		       uint32_t rule_idx)
{
	const struct sg_rule_origin *o = &c->origins[rule_idx];
	const struct sg_rule_entry *e = &c->rules[rule_idx];

	if (o->index == SIZE_MAX) {
		printf("  rule:   linux.sysctl %s of the container config\n", o->name);
		return;
	}
	const struct sg_policy *p = NULL;
	for (size_t l = 0; l < set->n_layers; l++)
		if (set->layers[l].origin == o->policy)
			p = &set->layers[l];
	const struct sg_rule *r = p && o->index < p->n_rules ? &p->rules[o->index] : NULL;
	printf("  rule:   rules[%zu] \"%s\"", o->index, o->name);
	if (r && r->pos.line)
		printf(" (%s:%u:%u)", o->policy, r->pos.line, r->pos.col);
	printf(", access %s", sg_access_name(e->access));
	if (e->flags & SG_RULE_RANGE) {
		unsigned n = (e->flags & SG_RULE_RANGE_ALL) ? 1 : e->n_ranges;
		printf(", range");
		for (unsigned i = 0; i < n; i++)
			printf(" [%lld, %lld]", (long long)sg_compiled_bounds(c, e, i)->min,
			       (long long)sg_compiled_bounds(c, e, i)->max);
		if (e->on_violation == SG_VIOLATION_CLAMP)
			printf(", on_violation clamp");
	}
	if (r && r->n_values)
		printf(", %u allowed value%s", r->n_values, sg_plural(r->n_values));
	if (e->flags & SG_RULE_REWRITE && e->text < c->n_texts)
		printf(", rewrite \"%s\"", c->texts[e->text].rewrite);
	if (e->flags & SG_RULE_HOST_NAMESPACE)
		printf(", allow_host_namespace");
	printf("\n");
}

/* A value as C would write it: "4096\\n" shows its newline. */
static void print_quoted(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\t')
			fputs("\\t", stdout);
		else if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\x%02x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static const char *verdict_text(enum sg_verdict v)
{
	static const char *const text[] = {"allowed", "denied (EPERM)", "rewritten",
					   "allowed (audit mode: enforce would not)"};
	return v < SG_VERDICT_COUNT ? text[v] : "unknown";
}

/*
 * The kernel's write() returns the length of the value it stores. Callers
 * that loop until what they asked for is written take a larger count for a
 * broken system call (docs/policy.md, "When the stored value is longer
 * than the write").
 */
static void print_longer_note(size_t stored, size_t written)
{
	printf("  note:   write() returns %zu for the %zu byte%s written: Go and Rust panic, "
	       "busybox, dash and Python report an error (bash and procps sysctl do not); "
	       "the value is stored either way\n",
	       stored, written, sg_plural(written));
}

/* Compiles a policy file as `attach` would, but for the evaluator. */
static int compile_file(const char *file, struct sg_policy *policy, struct sg_policy_set *set,
			struct sg_compiled *compiled, struct sg_err *err)
{
	if (sg_policy_load_file(file, policy, err) < 0)
		return -1;
	sg_policy_set_adopt(policy, file, set);
	if (sg_compile(set, compiled, err) < 0)
		return -1;
	compiled->config.rewrite_works = 1;
	return 0;
}

/* Which namespace keeps the sysctl, and whether the writer shares it with the host. */
static void print_namespace(const char *name, uint32_t host_namespaces)
{
	uint32_t ns = sg_namespace_of(name);

	if (!ns) {
		printf("  namespace: none, the kernel keeps one value for the whole host\n");
		return;
	}
	if (host_namespaces & ns)
		printf(
		    "  namespace: %s, the host's here: only a rule with allow_host_namespace lets "
		    "a write through\n",
		    sg_namespace_name(ns));
	else
		printf("  namespace: %s, the container's own here (--host-namespaces %s: the "
		       "host's)\n",
		       sg_namespace_name(ns), sg_namespace_name(ns));
}

/* One decision per name on stdin: "NAME allow|deny|rewrite|audit". */
static int explain_batch(const char *file, const char *value, uint32_t host_namespaces)
{
	static const char *const words[] = {"allow", "deny", "rewrite", "audit"};
	struct sg_err err = {0};
	struct sg_policy policy = {0};
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int status = SG_EXIT_OK;

	if (compile_file(file, &policy, &set, &compiled, &err) < 0) {
		status = sg_report(&err);
		goto out;
	}
	while ((len = getline(&line, &cap, stdin)) > 0) {
		char name[SG_NAME_MAX];
		struct sg_err name_err = {0};
		struct sg_decision d;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (sg_name_normalise(line, name, sizeof(name), &name_err) < 0) {
			printf("%s invalid: %s\n", line, name_err.msg);
			status = SG_EXIT_INPUT;
			continue;
		}
		struct sg_access_req req = {.name = name,
					    .write = value != NULL,
					    .value = value,
					    .value_len = value ? strlen(value) : 0,
					    .host_namespaces = host_namespaces};
		sg_eval(&compiled, &req, &d);
		printf("%s %s\n", line, words[d.verdict]);
	}
out:
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_policy_free(&policy);
	return status;
}

int sg_cmd_explain(int argc, char **argv)
{
	static const struct option options[] = {
	    {"write", required_argument, NULL, 'w'},
	    {"pos", required_argument, NULL, 'p'},
	    {"batch", no_argument, NULL, 'b'},
	    {"host-namespaces", required_argument, NULL, 'n'},
	    {NULL, 0, NULL, 0},
	};
	const char *value = NULL;
	bool batch = false, pos_given = false;
	unsigned long long pos = 0;
	uint32_t host_namespaces = 0;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'w') {
			value = optarg;
		} else if (opt == 'p') {
			pos_given = true;
			if (!sg_parse_number(optarg, UINT32_MAX, &pos))
				return sg_usage_error(
				    "explain", "--pos takes a file position of 0 to %u, not \"%s\"",
				    UINT32_MAX, optarg);
		} else if (opt == 'b') {
			batch = true;
		} else if (opt == 'n') {
			if (sg_namespace_parse_list(optarg, &host_namespaces) < 0)
				return sg_usage_error(
				    "explain",
				    "--host-namespaces takes a list of net, uts, ipc, user and pid "
				    "(\"net,uts\"), all or none, not \"%s\"",
				    optarg);
		} else {
			return sg_usage_error("explain", "unknown option");
		}
	}
	if (pos_given && !value)
		return sg_usage_error("explain",
				      "--pos is a write's file position: give --write too");
	if (batch && argc - optind != 1)
		return sg_usage_error("explain", "--batch takes a policy FILE and names on stdin");
	if (batch)
		return explain_batch(argv[optind], value, host_namespaces);
	if (argc - optind != 2)
		return sg_usage_error("explain", "expected a policy FILE and a sysctl NAME");

	struct sg_err err = {0};
	struct sg_policy policy = {0};
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	char name[SG_NAME_MAX];
	int status = SG_EXIT_OK;

	/* explain describes the policy; whether this kernel can rewrite is `status`'s concern. */
	if (compile_file(argv[optind], &policy, &set, &compiled, &err) < 0 ||
	    sg_name_normalise(argv[optind + 1], name, sizeof(name), &err) < 0) {
		status = sg_report(&err);
		goto out;
	}

	struct sg_access_req req = {
	    .name = name,
	    .write = value != NULL,
	    .value = value,
	    .value_len = value ? strlen(value) : 0,
	    .file_pos = pos,
	    .host_namespaces = host_namespaces,
	};
	struct sg_decision d;
	sg_eval(&compiled, &req, &d);

	char dotted[SG_NAME_MAX];
	sg_name_to_dotted(name, dotted, sizeof(dotted));
	if (value) {
		printf("%s: write ", dotted);
		print_quoted(value);
		printf(": %s", verdict_text(d.verdict));
	} else {
		printf("%s: read: %s", dotted, verdict_text(d.verdict));
	}
	if (d.rewritten) {
		/* Without the newlines that pad it to the length written. */
		d.new_value[strcspn(d.new_value, "\n")] = '\0';
		printf(" to ");
		print_quoted(d.new_value + strspn(d.new_value, " "));
	}
	printf("\n");
	if (d.rule != SG_NO_RULE)
		print_rule(&compiled, &set, d.rule);
	else
		printf("  rule:   none matches; the policy's default is %s\n",
		       sg_access_name(set.layers[0].default_access));
	printf("  reason: %s\n", d.reason);
	print_namespace(name, host_namespaces);
	if (d.rewritten && d.new_len > req.value_len)
		print_longer_note(d.new_len, req.value_len);
	if (set.layers[0].mode == SG_MODE_AUDIT)
		printf("  mode:   audit (nothing is denied or rewritten; events record it)\n");
out:
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_policy_free(&policy);
	return status;
}

int sg_load_config_option(const char *command, int argc, char **argv, struct sg_node_config *config)
{
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'},
	    {NULL, 0, NULL, 0},
	};
	const char *config_path = NULL;
	struct sg_err err = {0};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt != 'c')
			return sg_usage_error(command, "unknown option");
		config_path = optarg;
	}
	if (sg_node_config_load(config_path, config, &err) < 0)
		return sg_report(&err);
	return SG_EXIT_OK;
}

/*
 * An installed profile as a container would get it: a built-in one of the
 * same name wins (profiles.h), and one that does not parse stops the
 * container; both are said here, not at the container's start.
 */
static void print_installed_profile(const char *name, const char *profiles_dir)
{
	struct sg_policy policy = {0};
	struct sg_err err = {0};

	if (sg_builtin_profile(name)) {
		printf("  %-12s shadowed: the built-in profile %s is used\n", name, name);
		return;
	}
	if (sg_profile_load(name, profiles_dir, &policy, &err) < 0) {
		printf("  %-12s invalid: %s\n", name, err.msg);
		return;
	}
	size_t n_rules = policy.n_rules;
	bool audit = policy.mode == SG_MODE_AUDIT;
	enum sg_access default_access = policy.default_access;
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	sg_policy_set_adopt(&policy, name, &set);
	/* The hook compiles it too: one too complex for that is no more usable. */
	if (sg_compile(&set, &compiled, &err) < 0)
		printf("  %-12s invalid: %s\n", name, err.msg);
	else
		printf("  %-12s %zu rule%s, default %s%s\n", name, n_rules, sg_plural(n_rules),
		       sg_access_name(default_access), audit ? ", audit mode" : "");
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
}

/* Installed files no annotation can name, and a profiles_dir that is not there: said. */
static void print_unusable(const char *profiles_dir)
{
	struct sg_err err = {0};
	char **stems;
	size_t n;

	if (sg_misnamed_profile_files(profiles_dir, &stems, &n, &err) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		printf("  %-12s not a profile name ([a-z0-9][a-z0-9._-]*, at most 64 characters): "
		       "no container can name %s.json\n",
		       stems[i], stems[i]);
	sg_profile_names_free(stems, n);
}

int sg_cmd_profiles(int argc, char **argv)
{
	struct sg_node_config config = {0};
	struct sg_err err = {0};
	char **names;
	size_t found;
	int status = sg_load_config_option("profiles", argc, argv, &config);

	if (status != SG_EXIT_OK)
		return status;
	if (sg_installed_profile_names(config.profiles_dir, &names, &found, &err) < 0) {
		sg_node_config_free(&config);
		return sg_report(&err);
	}
	printf("Built in:\n");
	for (const char *const *n = sg_builtin_profile_names(); *n; n++)
		printf("  %-12s %s\n", *n, sg_builtin_profile_summary(*n));

	printf("Installed in %s:\n", config.profiles_dir);
	for (size_t i = 0; i < found; i++)
		print_installed_profile(names[i], config.profiles_dir);
	sg_profile_names_free(names, found);
	print_unusable(config.profiles_dir);
	if (access(config.profiles_dir, F_OK) < 0)
		printf("  (none: there is no such directory)\n");
	else if (!found)
		printf("  (none)\n");
	sg_node_config_free(&config);
	return SG_EXIT_OK;
}
