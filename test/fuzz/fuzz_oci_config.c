// SPDX-License-Identifier: Apache-2.0
/*
 * The bundle's config.json (sg_oci_config_parse) and what the hook does with
 * it: the annotation lookups, then the effective policy composed from a
 * built-in baseline, the annotation policy or profile and the linux.sysctl
 * pairs, compiled and evaluated. Checks the design's promise that a write of
 * exactly a linux.sysctl pair is always allowed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "policy/compose.h"
#include "policy/name.h"
#include "policy/policy.h"
#include "policy/profiles.h"
#include "compile/compile.h"
#include "compile/eval.h"
#include "oci/oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Profiles never come from disk here. */
#define NO_PROFILES_DIR "/nonexistent/sysctl-guard-fuzz/profiles"

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_oci_config: %s: %s\n", what, detail ? detail : "");
	abort();
}

/* The node baseline of a typical Kubernetes node, parsed once. */
static const struct sg_policy *baseline(void)
{
	static struct sg_policy policy;
	static bool loaded;
	struct sg_err err = {0};

	if (!loaded) {
		if (sg_profile_load("k8s-safe", NO_PROFILES_DIR, &policy, &err) < 0)
			fail("built-in profile k8s-safe does not load", err.msg);
		loaded = true;
	}
	return &policy;
}

static void check_pinned_writes(const struct sg_oci_config *config, const struct sg_compiled *c)
{
	for (size_t i = 0; i < config->n_sysctls; i++) {
		const struct sg_sysctl_pair *pair = &config->sysctls[i];
		char name[SG_NAME_MAX], value[SG_VALUE_MAX];
		struct sg_err err = {0};
		struct sg_decision d;

		if (sg_name_normalise(pair->name, name, sizeof(name), &err) < 0)
			fail("composed although a linux.sysctl name is invalid", pair->name);
		size_t len = strlen(pair->value);
		if (sg_value_normalise(pair->value, len, value, sizeof(value)) < 0)
			fail("composed although a linux.sysctl value is too long", pair->name);
		/* The kernel hands the program at most SG_VALUE_MAX - 1 bytes. */
		if (len >= SG_VALUE_MAX)
			continue;
		struct sg_access_req req = {
		    .name = name, .write = true, .value = pair->value, .value_len = len};
		sg_eval(c, &req, &d);
		if (d.verdict != SG_VERDICT_ALLOW || d.rewritten) {
			fprintf(stderr, "fuzz_oci_config: write \"%s\" to %s: verdict %d (%s)\n",
				pair->value, name, d.verdict, d.reason);
			fail("a write of a linux.sysctl pair is not allowed", pair->name);
		}
	}
}

/* What hook.c does after reading config.json, without the kernel. */
static void compose_and_compile(const struct sg_oci_state *state,
				const struct sg_oci_config *config)
{
	const char *profile = sg_oci_annotation(state, config, SG_ANNOTATION_PROFILE);
	const char *inline_policy = sg_oci_annotation(state, config, SG_ANNOTATION_POLICY);
	const char *mode_text = sg_oci_annotation(state, config, SG_ANNOTATION_MODE);
	struct sg_policy annotation = {0};
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	struct sg_err err = {0};
	bool has_annotation = false;
	enum sg_mode mode = SG_MODE_ENFORCE;
	int r = 0;

	if (profile && !inline_policy) {
		r = sg_profile_load(profile, NO_PROFILES_DIR, &annotation, &err);
		has_annotation = r == 0;
	} else if (inline_policy && !profile) {
		r = sg_policy_parse(inline_policy, strlen(inline_policy),
				    "annotation " SG_ANNOTATION_POLICY, &annotation, &err);
		has_annotation = r == 0;
	}
	if (r < 0 && !err.msg[0])
		fail("annotation policy rejected without a message", NULL);
	if (r < 0)
		goto out;
	if (mode_text && strcmp(mode_text, "audit") == 0)
		mode = SG_MODE_AUDIT;
	else if (mode_text && strcmp(mode_text, "enforce") != 0)
		mode_text = NULL;

	r = sg_policy_set_compose(
	    baseline(), "profile k8s-safe", has_annotation ? &annotation : NULL, "annotation",
	    mode_text ? &mode : NULL, config->sysctls, config->n_sysctls, &set, &err);
	if (r < 0) {
		if (!err.msg[0])
			fail("composition failed without a message", NULL);
		goto out;
	}
	r = sg_compile(&set, &compiled, &err);
	if (r < 0) {
		if (!err.msg[0])
			fail("compilation failed without a message", NULL);
		goto out;
	}
	compiled.config.rewrite_works = 1;
	check_pinned_writes(config, &compiled);
out:
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_policy_free(&annotation);
}

static bool names_bpf(const struct sg_json *syscalls)
{
	for (size_t i = 0; syscalls && syscalls->type == SG_JSON_ARRAY && i < syscalls->array.len;
	     i++) {
		const struct sg_json *names = sg_json_get(syscalls->array.items[i], "names");
		for (size_t n = 0; names && names->type == SG_JSON_ARRAY && n < names->array.len;
		     n++)
			if (names->array.items[n]->type == SG_JSON_STRING &&
			    strcmp(names->array.items[n]->string.text, "bpf") == 0)
				return true;
	}
	return false;
}

/*
 * The tamper analysis, where the answer is plain: any capability set naming
 * CAP_SYS_ADMIN or CAP_BPF; no seccomp profile lets bpf(2) through; a profile
 * that never names bpf decides it by its default action.
 */
static void check_tamper(const uint8_t *data, size_t size, const struct sg_oci_config *config)
{
	static const char *const sets[] = {"bounding", "effective", "permitted", "inheritable",
					   "ambient"};
	struct sg_json *root = NULL;
	struct sg_err err = {0};

	if (sg_json_parse((const char *)data, size, "config.json", &root, &err) < 0)
		fail("config.json parsed once, not twice", err.msg);
	const struct sg_json *caps = sg_json_get(sg_json_get(root, "process"), "capabilities");
	bool want_caps = false;
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		const struct sg_json *list = sg_json_get(caps, sets[s]);
		for (size_t i = 0; list && list->type == SG_JSON_ARRAY && i < list->array.len;
		     i++) {
			const struct sg_json *c = list->array.items[i];
			/* runc's names, any case as crun takes them, or their numbers */
			if (c->type == SG_JSON_STRING &&
			    (strcasecmp(c->string.text, "CAP_SYS_ADMIN") == 0 ||
			     strcasecmp(c->string.text, "CAP_BPF") == 0 ||
			     strcmp(c->string.text, "21") == 0 ||
			     strcmp(c->string.text, "39") == 0))
				want_caps = true;
		}
	}
	if (config->bpf_caps != want_caps)
		fail("bpf_caps disagrees with process.capabilities", want_caps ? "true" : "false");

	const struct sg_json *seccomp = sg_json_get(sg_json_get(root, "linux"), "seccomp");
	if (!seccomp || seccomp->type != SG_JSON_OBJECT) {
		if (!config->seccomp_allows_bpf)
			fail("no seccomp profile, yet bpf(2) is blocked", NULL);
	} else if (!names_bpf(sg_json_get(seccomp, "syscalls"))) {
		const char *def = sg_json_get_string(seccomp, "defaultAction");
		bool allow =
		    def && (strcmp(def, "SCMP_ACT_ALLOW") == 0 || strcmp(def, "SCMP_ACT_LOG") == 0);
		bool block =
		    def &&
		    (strcmp(def, "SCMP_ACT_ERRNO") == 0 || strcmp(def, "SCMP_ACT_KILL") == 0 ||
		     strcmp(def, "SCMP_ACT_KILL_PROCESS") == 0 ||
		     strcmp(def, "SCMP_ACT_KILL_THREAD") == 0 || strcmp(def, "SCMP_ACT_TRAP") == 0);
		if ((allow && !config->seccomp_allows_bpf) || (block && config->seccomp_allows_bpf))
			fail("seccomp analysis disagrees with defaultAction", def);
	}
	sg_json_free(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {SG_ANNOTATION_PROFILE, SG_ANNOTATION_POLICY,
					   SG_ANNOTATION_MODE, SG_ANNOTATION_LEARN, ""};
	struct sg_oci_config config;
	struct sg_err err = {0};

	if (size > SG_MAX_CONFIG_BYTES)
		return 0;
	int r = sg_oci_config_parse((const char *)data, size, "config.json", &config, &err);
	if (r < 0) {
		/* Invalid input is -EINVAL; only the seccomp analysis can meet a system error. */
		if (!err.msg[0] || strncmp(err.msg, "config.json", 11) != 0)
			fail("rejected without a message naming config.json", err.msg);
		sg_oci_config_free(&config);
		return 0;
	}

	/* A state without annotations defers to config.json; one with annotations wins. */
	struct sg_oci_state bare = {0};
	struct sg_annotation own = {.key = (char *)SG_ANNOTATION_MODE, .value = (char *)"audit"};
	struct sg_oci_state annotated = {.annotations = &own, .n_annotations = 1};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		(void)sg_oci_annotation(&bare, &config, keys[i]);
		const char *v = sg_oci_annotation(&annotated, &config, keys[i]);
		if ((v != NULL) != (strcmp(keys[i], SG_ANNOTATION_MODE) == 0))
			fail("state annotations do not take precedence", keys[i]);
	}
	for (size_t i = 0; i < config.n_annotations; i++)
		if (!sg_oci_annotation(&bare, &config, config.annotations[i].key))
			fail("an annotation is not found by its key", config.annotations[i].key);
	for (size_t i = 0; i < config.n_sysctls; i++)
		if (!config.sysctls[i].name || !config.sysctls[i].value)
			fail("a linux.sysctl pair without name or value", NULL);

	check_tamper(data, size, &config);
	compose_and_compile(&bare, &config);
	sg_oci_config_free(&config);
	return 0;
}
