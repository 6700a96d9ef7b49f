// SPDX-License-Identifier: Apache-2.0
/*
 * `sysctl-guard hook`: the OCI runtime hook. At prestart/createRuntime it
 * attaches the container's guard before the workload starts; at poststop it
 * removes the guard's pins. Fail closed: when a policy applies and cannot be
 * enforced, the hook exits non-zero and the runtime does not start the
 * container (unless the node config says on_unsupported: skip).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>

#include "base/log.h"
#include "base/util.h"
#include "policy/compose.h"
#include "policy/inputs.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "compile/compile.h"
#include "kernel/cgroup.h"
#include "kernel/guard.h"
#include "kernel/namespaces.h"
#include "kernel/probe_rewrite.h"
#include "oci/config.h"
#include "oci/confine.h"
#include "oci/oci.h"
#include "oci/source.h"
#include "cmd/cli.h"
#include "cmd/learn.h"

enum hook_stage {
	STAGE_ATTACH, /* prestart, createRuntime */
	STAGE_POSTSTOP,
};

struct hook_ctx {
	struct sg_node_config config;
	struct sg_oci_state state;
	struct sg_oci_config oci;
	struct sg_policy_source src; /* the container's policy: its inputs, made when new */
	bool policy_parsed;	     /* make_policy ran: its input errors, if any, are reported */
};

static void hook_ctx_free(struct hook_ctx *h)
{
	sg_source_free(&h->src);
	sg_oci_config_free(&h->oci);
	sg_oci_state_free(&h->state);
	sg_node_config_free(&h->config);
}

static int parse_stage(const char *arg, long pid, enum hook_stage *stage, struct sg_err *err)
{
	const char *s = arg ? arg : getenv("stage");
	if (!s || !*s) {
		*stage = pid == 0 ? STAGE_POSTSTOP : STAGE_ATTACH;
		return 0;
	}
	if (strcmp(s, "prestart") == 0 || strcmp(s, "createRuntime") == 0 ||
	    strcmp(s, "createContainer") == 0) {
		*stage = STAGE_ATTACH;
		return 0;
	}
	if (strcmp(s, "poststop") == 0) {
		*stage = STAGE_POSTSTOP;
		return 0;
	}
	return sg_input_error(err,
			      "unknown hook stage \"%s\" (expected prestart, createRuntime "
			      "or poststop)",
			      s);
}

/* The annotation's policy, read: a profile name, or inline JSON where the node allows it. */
static int read_annotation_policy(struct hook_ctx *h, struct sg_err *err)
{
	const char *profile = sg_oci_annotation(&h->state, &h->oci, SG_ANNOTATION_PROFILE);
	const char *inline_policy = sg_oci_annotation(&h->state, &h->oci, SG_ANNOTATION_POLICY);

	if (profile && inline_policy)
		return sg_input_error(err, "annotations %s and %s both set: use one",
				      SG_ANNOTATION_PROFILE, SG_ANNOTATION_POLICY);
	if (profile)
		return sg_source_set_profile(&h->src, profile, err);
	if (inline_policy)
		return sg_source_set_inline(&h->src, inline_policy, err);
	return 0;
}

/*
 * Parses, composes and compiles the container's policy: for inputs new on the
 * node, at most once a run (policy_parsed). The text is untrusted: the hook
 * confines itself first (confine.c). A container whose inputs the node has
 * seen parses nothing and skips the filter's load, about 0.1 ms.
 */
static int make_policy(struct hook_ctx *h, struct sg_err *err)
{
	h->policy_parsed = true;
	int r = sg_confine(err);
	return r < 0 ? r : sg_source_make(&h->src, err);
}

/* make_policy as sg_guard_attach calls it, when the inputs are new on the node. */
static int make_for_guard(void *arg, const struct sg_compiled **compiled, const char **description,
			  struct sg_err *err)
{
	struct hook_ctx *h = arg;
	int r = make_policy(h, err);
	*compiled = &h->src.compiled;
	*description = h->src.set.description;
	return r;
}

static bool wants_learning(const struct hook_ctx *h)
{
	const char *learn = sg_oci_annotation(&h->state, &h->oci, SG_ANNOTATION_LEARN);
	return learn && strcmp(learn, "true") == 0;
}

/* The learn annotation is "true" or "false": "yes" must not pass for a silent no. */
static int check_learn_annotation(const struct hook_ctx *h, struct sg_err *err)
{
	const char *learn = sg_oci_annotation(&h->state, &h->oci, SG_ANNOTATION_LEARN);
	if (learn && strcmp(learn, "true") != 0 && strcmp(learn, "false") != 0)
		return sg_input_error(err, "annotation %s: \"%s\" is not true or false",
				      SG_ANNOTATION_LEARN, learn);
	return 0;
}

/*
 * A container that can reach bpf(2) with CAP_SYS_ADMIN or CAP_BPF, or that
 * sees the host's bpffs (unlinking its link's pin is enough), can detach its
 * guard.
 */
static int check_tamper(const struct hook_ctx *h, struct sg_err *err)
{
	char what[PATH_MAX + 160];
	const char *fix;

	if (h->config.tamper == SG_TAMPER_IGNORE)
		return 0;
	if (h->oci.bpf_caps && h->oci.seccomp_allows_bpf) {
		snprintf(what, sizeof(what),
			 "the container has CAP_SYS_ADMIN or CAP_BPF and its seccomp profile "
			 "allows bpf(2): it could detach its own guard");
		fix = "drop those capabilities or block bpf(2) in linux.seccomp";
	} else if (h->oci.pins_mount) {
		snprintf(what, sizeof(what),
			 "the container mounts %s, which shows it the host's bpffs: removing "
			 "its guard's pin would detach the guard",
			 h->oci.pins_mount);
		fix = "mount a directory of that bpffs away from " SG_PIN_ROOT ", or none";
	} else {
		return 0;
	}
	if (h->config.tamper == SG_TAMPER_REFUSE)
		return sg_input_error(err, "%s; refusing to start it (tamper: refuse); %s", what,
				      fix);
	sg_warning("%s (tamper: warn)", what);
	return 0;
}

/* io.sysctl-guard.events: "reads" reports reads too (denials and rewrites always are). */
static int parse_events(const char *text, uint32_t *events, struct sg_err *err)
{
	*events = 0;
	if (!text)
		return 0;
	if (strcmp(text, "reads") != 0)
		return sg_input_error(err, "annotation %s: \"%s\" is not \"reads\"",
				      SG_ANNOTATION_EVENTS, text);
	*events = SG_EVENTS_READS;
	return 0;
}

static int resolve_cgroup(const struct hook_ctx *h, char out[PATH_MAX], struct sg_err *err)
{
	char mount[PATH_MAX];
	int r = sg_cgroup2_mount(mount, err);
	if (r < 0)
		return r;
	if (h->state.pid > 0) {
		struct sg_err pid_err = {0};
		if (sg_cgroup_of_pid(h->state.pid, mount, out, &pid_err) == 0)
			return 0;
		sg_debug("%s; trying linux.cgroupsPath", pid_err.msg);
	}
	return sg_cgroup_from_config(h->oci.cgroups_path, mount, out, err);
}

/*
 * The namespaces the container shares with the host: its process's, else
 * (a process already gone, as at a late prestart) what config.json asks for.
 */
static int container_namespaces(const struct hook_ctx *h, uint32_t *shared, struct sg_err *err)
{
	if (h->state.pid > 0) {
		struct sg_err pid_err = {0};
		if (sg_namespaces_shared(h->state.pid, shared, &pid_err) == 0)
			return 0;
		sg_debug("%s; trying linux.namespaces", pid_err.msg);
	}
	return sg_namespaces_shared_by_config(&h->oci.namespaces, shared, err);
}

/*
 * Nothing to guard, known before config.json is read: no baseline, and the
 * state carries the container's annotations (they take precedence over
 * config.json's) with none of ours. Runtime configs with a seccomp profile
 * run to tens of KiB; parsing one cost the unguarded majority of containers
 * more than the rest of the hook.
 */
static bool nothing_to_guard_by_state(const struct hook_ctx *h)
{
	if (h->config.baseline || h->state.n_annotations == 0)
		return false;
	for (size_t i = 0; i < h->state.n_annotations; i++)
		if (strncmp(h->state.annotations[i].key, SG_ANNOTATION_PREFIX,
			    strlen(SG_ANNOTATION_PREFIX)) == 0)
			return false;
	return true;
}

/*
 * Guards the container: with the policy its inputs made before on this node
 * when there is one (no parsing, no compiling), or with the policy made from
 * them now.
 */
static int guard_container(struct hook_ctx *h, uint32_t events, struct sg_guard_meta *meta,
			   struct sg_err *err)
{
	struct sg_inputs inputs;
	char cgroup[PATH_MAX];

	/* The probes fork and unshare, which the confined hook may not: they come first. */
	int r = sg_probe_kernel(&h->src.rewrite_works, err);
	if (r < 0)
		return r;
	r = resolve_cgroup(h, cgroup, err);
	if (r < 0)
		return r;
	if (sg_cgroup_is_root(cgroup))
		return sg_system_error(
		    err, EPERM,
		    "the container's cgroup is the root of the hierarchy (%s): a "
		    "guard there would confine every process on the host",
		    cgroup);
	/* Only the kernel's steps of an attach are left, and make_policy for new inputs. */
	sg_source_inputs(&h->src, &inputs);
	struct sg_policy_request request = {
	    .inputs = &inputs, .make = make_for_guard, .make_arg = h};
	struct sg_guard_options options = {
	    .container_id = h->state.id,
	    .learn = wants_learning(h),
	    .events = events,
	    .namespaces_checked = true,
	};
	r = container_namespaces(h, &options.host_namespaces, err);
	if (r < 0)
		return r;
	r = sg_guard_attach(cgroup, &request, &options, meta, err);
	if (r < 0)
		return r;
	sg_info("guarded %s with %s (%u rule%s, policy %s)", cgroup, meta->description,
		meta->n_rules, sg_plural(meta->n_rules), meta->policy_key);
	return 0;
}

/*
 * The system failed the hook before its policy was made. A policy that does
 * not compile is still the user's error, on any kernel and whatever
 * on_unsupported says: it is reported instead.
 */
static int input_error_first(struct hook_ctx *h, int r, struct sg_err *err)
{
	struct sg_err policy_err = {0};

	if (err->status == SG_EXIT_INPUT)
		return r;
	if (h->policy_parsed)
		return r;
	int pr = make_policy(h, &policy_err);
	/* Only the policy's own errors: a failed self-confinement keeps the first. */
	if (pr == 0 || policy_err.status != SG_EXIT_INPUT)
		return r;
	*err = policy_err;
	return pr;
}

/*
 * Annotations that ask for what this container will not get are errors, not
 * quiet no-ops: one misspelt, or one that needs a policy the container does
 * not have (learning, reads reported), or mode=audit beside the node's
 * baseline alone: an annotation only narrows, so the baseline takes enforce
 * from it, never audit.
 */
static int check_annotations_apply(const struct hook_ctx *h, const char *mode_text, uint32_t events,
				   struct sg_err *err)
{
	const char *unknown = sg_oci_unknown_annotation(&h->state, &h->oci);
	if (unknown)
		return sg_input_error(err,
				      "annotation %s is not one of sysctl-guard's (%s, %s, %s, %s, "
				      "%s): is it misspelt?",
				      unknown, SG_ANNOTATION_PROFILE, SG_ANNOTATION_POLICY,
				      SG_ANNOTATION_MODE, SG_ANNOTATION_LEARN,
				      SG_ANNOTATION_EVENTS);
	const char *asks = mode_text	       ? SG_ANNOTATION_MODE
			   : wants_learning(h) ? SG_ANNOTATION_LEARN
			   : events	       ? SG_ANNOTATION_EVENTS
					       : NULL;
	if (!asks || h->src.has_annotation)
		return 0;
	if (!h->src.config->baseline)
		return sg_input_error(err,
				      "annotation %s needs a policy, and the container has none: "
				      "name one with %s (the built-in profile audit allows and "
				      "records everything) or %s",
				      asks, SG_ANNOTATION_PROFILE, SG_ANNOTATION_POLICY);
	if (mode_text && h->src.mode == SG_MODE_AUDIT)
		return sg_input_error(err,
				      "annotation %s=audit sets the mode of the container's own "
				      "policy (%s or %s), and it has none; the node's baseline is "
				      "not audited at a container's request",
				      SG_ANNOTATION_MODE, SG_ANNOTATION_PROFILE,
				      SG_ANNOTATION_POLICY);
	return 0;
}

static int attach_stage(struct hook_ctx *h, struct sg_err *err)
{
	uint32_t events = 0;
	struct sg_guard_meta meta = {0};
	int r;

	if (nothing_to_guard_by_state(h)) {
		sg_debug("no baseline and no annotation of sysctl-guard's: nothing to guard");
		return 0;
	}
	r = sg_oci_config_load(h->state.bundle, &h->oci, err);
	if (r < 0)
		return r;
	h->src.config = &h->config;
	h->src.sysctls = h->oci.sysctls;
	h->src.n_sysctls = h->oci.n_sysctls;
	r = read_annotation_policy(h, err);
	if (r < 0)
		return r;
	/* Annotations in config.json count too: read once it is loaded. */
	const char *mode_text = sg_oci_annotation(&h->state, &h->oci, SG_ANNOTATION_MODE);
	if (mode_text && sg_source_set_mode(&h->src, mode_text, err) < 0)
		return -EINVAL;
	r = parse_events(sg_oci_annotation(&h->state, &h->oci, SG_ANNOTATION_EVENTS), &events, err);
	if (r == 0)
		r = check_learn_annotation(h, err);
	if (r == 0)
		r = check_annotations_apply(h, mode_text, events, err);
	if (r < 0)
		return r;
	if (!sg_source_has_policy(&h->src)) {
		sg_debug("no baseline and no policy annotation: nothing to guard");
		return 0;
	}
	r = check_tamper(h, err);
	if (r < 0)
		return r;
	r = guard_container(h, events, &meta, err);
	if (r < 0)
		return input_error_first(h, r, err);
	return 0;
}

/* Removes every guard pinned for this container id. */
static int poststop_stage(const struct hook_ctx *h, struct sg_err *err)
{
	struct sg_guard_meta meta;
	char entry[32];

	if (sg_guard_find_container_exact(h->state.id, entry, &meta) < 0)
		return 0; /* no guard for this container */
	/*
	 * The learned policy goes to a fixed directory, named by the container
	 * id. The meta says whether the annotation asked for it: poststop's
	 * state may not carry the annotations, and config.json is not read here.
	 */
	struct sg_err learn_err = {0};
	if (meta.learn && (meta.save_learned || wants_learning(h))) {
		if (sg_learn_save(entry, h->state.id, &learn_err) < 0)
			sg_warning("%s", learn_err.msg);
		else
			sg_info("wrote the learned policy to %s/%s.json", SG_LEARNED_DIR,
				h->state.id);
	}
	if (sg_guard_remove_entry_of(entry, &meta, err) < 0)
		return -EIO;
	sg_info("removed the guard of cgroup %s", entry);
	return 0;
}

static int run_hook(struct hook_ctx *h, const char *stage_arg, const char *config_path,
		    struct sg_err *err)
{
	_cleanup_free_ char *text = NULL;
	enum hook_stage stage = STAGE_ATTACH;
	size_t len;
	int r;

	r = sg_read_fd(STDIN_FILENO, "state (stdin)", SG_MAX_STATE_BYTES, &text, &len, err);
	if (r < 0)
		return r;
	r = sg_oci_state_parse(text, len, &h->state, err);
	if (r < 0)
		return r;
	char tag[32];
	snprintf(tag, sizeof(tag), "container %.12s", h->state.id);
	sg_log_set_tag(tag);
	r = parse_stage(stage_arg, h->state.pid, &stage, err);
	if (r < 0)
		return r;
	if (stage == STAGE_POSTSTOP)
		return poststop_stage(h, err);
	r = sg_node_config_load(config_path, &h->config, err);
	if (r < 0)
		return r;
	sg_log_setup(h->config.log_syslog, h->config.log_debug);
	return attach_stage(h, err);
}

/* [--config FILE] [STAGE], in either order: 0, or the usage error's exit status. */
static int parse_hook_args(int argc, char **argv, const char **stage, const char **config_path)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0) {
			if (i + 1 == argc)
				return sg_usage_error("hook", "--config needs a FILE");
			*config_path = argv[++i];
		} else if (strncmp(argv[i], "--config=", 9) == 0) {
			*config_path = argv[i] + 9;
		} else if (argv[i][0] == '-') {
			return sg_usage_error("hook", "unknown option");
		} else if (*stage) {
			return sg_usage_error("hook", "expected at most a STAGE argument");
		} else {
			*stage = argv[i];
		}
	}
	return SG_EXIT_OK;
}

int sg_cmd_hook(int argc, char **argv)
{
	struct hook_ctx h = {0};
	struct sg_err err = {0};
	const char *stage = NULL, *config_path = NULL;

	int usage = parse_hook_args(argc, argv, &stage, &config_path);
	if (usage != SG_EXIT_OK)
		return usage;
	sg_log_setup(true, false);
	int r = run_hook(&h, stage, config_path, &err);
	int status = SG_EXIT_OK;
	if (r < 0) {
		if (err.unsupported && h.config.on_unsupported == SG_UNSUPPORTED_SKIP) {
			sg_warning("%s; the container runs unguarded (on_unsupported: skip)",
				   err.msg);
		} else {
			sg_error("%s", err.msg);
			status = err.status ? err.status : SG_EXIT_SYSTEM;
		}
	}
	hook_ctx_free(&h);
	return status;
}
