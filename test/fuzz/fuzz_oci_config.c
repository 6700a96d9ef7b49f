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

#include "compile.h"
#include "compose.h"
#include "eval.h"
#include "name.h"
#include "oci.h"
#include "policy.h"
#include "profiles.h"

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
		if (r != -EINVAL || !err.msg[0])
			fail("rejected without a message", err.msg);
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

	compose_and_compile(&bare, &config);
	sg_oci_config_free(&config);
	return 0;
}
