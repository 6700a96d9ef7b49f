// SPDX-License-Identifier: Apache-2.0
#include "oci/source.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/timing.h"
#include "base/util.h"
#include "policy/policy.h"
#include "oci/oci.h"

int sg_source_set_profile(struct sg_policy_source *src, const char *name, struct sg_err *err)
{
	int r = sg_profile_read(name, src->config->profiles_dir, &src->annotation, err);
	if (r < 0)
		return r;
	src->annotation_label = sg_xasprintf("profile %s", name);
	src->has_annotation = true;
	return 0;
}

int sg_source_set_inline(struct sg_policy_source *src, const char *text, struct sg_err *err)
{
	const struct sg_node_config *config = src->config;

	if (!config->allow_inline)
		return sg_input_error(err,
				      "annotation %s: inline policies are disabled on "
				      "this node (allow_inline: false in %s); use %s",
				      SG_ANNOTATION_POLICY,
				      config->path ? config->path : "the node config",
				      SG_ANNOTATION_PROFILE);
	src->annotation.len = strlen(text);
	src->annotation.text = sg_xstrdup(text);
	src->annotation.origin = sg_xstrdup("annotation " SG_ANNOTATION_POLICY);
	src->annotation_label = sg_xstrdup("inline policy");
	src->has_annotation = true;
	return 0;
}

int sg_source_set_mode(struct sg_policy_source *src, const char *text, struct sg_err *err)
{
	if (strcmp(text, "enforce") == 0)
		src->mode = SG_MODE_ENFORCE;
	else if (strcmp(text, "audit") == 0)
		src->mode = SG_MODE_AUDIT;
	else
		return sg_input_error(err, "annotation %s: \"%s\" is not audit or enforce",
				      SG_ANNOTATION_MODE, text);
	src->mode_text = text;
	return 0;
}

bool sg_source_has_policy(const struct sg_policy_source *src)
{
	return src->config->baseline || src->has_annotation;
}

static int by_name_and_value(const void *a, const void *b)
{
	const struct sg_sysctl_pair *x = *(const struct sg_sysctl_pair *const *)a,
				    *y = *(const struct sg_sysctl_pair *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->value, y->value);
}

/*
 * linux.sysctl as one input: each name and value with its NUL, sorted by
 * name. It is a JSON object, whose order means nothing: runtimes written in
 * Go write it sorted, and `preload --sysctl` takes the pairs in any order.
 */
static void serialise_sysctls(struct sg_policy_source *src)
{
	_cleanup_free_ const struct sg_sysctl_pair **sorted =
	    sg_xcalloc(src->n_sysctls ? src->n_sysctls : 1, sizeof(*sorted));
	size_t len = 0;

	for (size_t i = 0; i < src->n_sysctls; i++) {
		sorted[i] = &src->sysctls[i];
		len += strlen(src->sysctls[i].name) + strlen(src->sysctls[i].value) + 2;
	}
	if (src->n_sysctls)
		qsort(sorted, src->n_sysctls, sizeof(*sorted), by_name_and_value);
	free(src->sysctl_text);
	src->sysctl_text = sg_xmalloc(len ? len : 1);
	src->sysctl_text_len = 0;
	for (size_t i = 0; i < src->n_sysctls; i++) {
		const char *parts[] = {sorted[i]->name, sorted[i]->value};
		for (size_t k = 0; k < 2; k++) {
			size_t n = strlen(parts[k]) + 1;
			memcpy(src->sysctl_text + src->sysctl_text_len, parts[k], n);
			src->sysctl_text_len += n;
		}
	}
}

void sg_source_inputs(struct sg_policy_source *src, struct sg_inputs *in)
{
	const struct sg_node_config *config = src->config;

	serialise_sysctls(src);
	sg_inputs_init(in);
	sg_inputs_add(in, "node config", config->text, config->text_len);
	sg_inputs_add(in, "baseline profile", config->baseline_text, config->baseline_text_len);
	sg_inputs_add_str(in, "annotation", src->annotation_label);
	sg_inputs_add(in, "annotation policy", src->annotation.text, src->annotation.len);
	sg_inputs_add_str(in, "mode", src->mode_text);
	sg_inputs_add(in, "linux.sysctl", src->sysctl_text, src->sysctl_text_len);
	/* sg_fit_to_kernel turns rewrites off where the kernel ignores them. */
	sg_inputs_add_str(in, "rewrites", src->rewrite_works ? "work" : "ignored");
}

/*
 * The annotation's policy. Digested already, its text goes as soon as it is
 * parsed into a tree, unless kept.
 */
static int parse_annotation(struct sg_policy_source *src, struct sg_policy *out, struct sg_err *err)
{
	struct sg_profile_text *a = &src->annotation;

	return src->keep_text ? sg_policy_parse(a->text, a->len, a->origin, out, err)
			      : sg_policy_parse_taking(&a->text, a->len, a->origin, out, err);
}

int sg_source_make(struct sg_policy_source *src, struct sg_err *err)
{
	const struct sg_node_config *config = src->config;
	struct sg_policy annotation = {0};
	int r = 0;

	sg_timing_mark("setup");
	if (src->has_annotation)
		r = parse_annotation(src, &annotation, err);
	/* The set takes the annotation's policy over: a large one is not held twice. */
	if (r == 0)
		r = sg_policy_set_compose_adopt(config->baseline, config->baseline_label,
						src->has_annotation ? &annotation : NULL,
						src->annotation_label,
						src->mode_text ? &src->mode : NULL, src->sysctls,
						src->n_sysctls, &src->set, err);
	sg_policy_free(&annotation);
	sg_timing_mark("parse");
	if (r == 0)
		r = sg_compile(&src->set, &src->compiled, err);
	sg_timing_mark("compile");
	if (r == 0)
		sg_fit_to_kernel(&src->compiled, src->rewrite_works);
	return r;
}

void sg_source_free(struct sg_policy_source *src)
{
	sg_compiled_free(&src->compiled);
	sg_policy_set_free(&src->set);
	sg_profile_text_free(&src->annotation);
	free(src->annotation_label);
	free(src->sysctl_text);
}
