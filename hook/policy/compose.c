// SPDX-License-Identifier: Apache-2.0
#include "policy/compose.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "policy/name.h"

static int add_layer(struct sg_policy_set *set, const struct sg_policy *policy, struct sg_err *err)
{
	if (set->n_layers >= SG_LAYERS_MAX)
		return sg_input_error(err, "more than %d policy layers", SG_LAYERS_MAX);
	if (sg_policy_copy(policy, &set->layers[set->n_layers]) < 0)
		return sg_system_error(err, ENOMEM, "cannot copy policy %s: out of memory",
				       policy->origin ? policy->origin : "(unnamed)");
	set->n_layers++;
	return 0;
}

/* @policy itself as the next layer, without a copy; it is left empty. */
static int take_layer(struct sg_policy_set *set, struct sg_policy *policy, struct sg_err *err)
{
	if (set->n_layers >= SG_LAYERS_MAX)
		return sg_input_error(err, "more than %d policy layers", SG_LAYERS_MAX);
	set->layers[set->n_layers++] = *policy;
	memset(policy, 0, sizeof(*policy));
	return 0;
}

static bool pair_known(const struct sg_policy_set *set, const char *name, const char *value)
{
	for (size_t i = 0; i < set->n_pinned; i++)
		if (strcmp(set->pinned[i].name, name) == 0 &&
		    strcmp(set->pinned[i].value, value) == 0)
			return true;
	return false;
}

/*
 * Pins the linux.sysctl pairs: slash-form names and token-list values, as the
 * BPF program compares them. Identical pairs (net.x and net/x with the same
 * value) are kept once.
 */
static int add_pairs(struct sg_policy_set *set, const struct sg_sysctl_pair *pairs, size_t n_pairs,
		     struct sg_err *err)
{
	set->pinned = n_pairs ? sg_xcalloc(n_pairs, sizeof(*set->pinned)) : NULL;
	for (size_t i = 0; i < n_pairs; i++) {
		const char *raw_name = pairs[i].name ? pairs[i].name : "";
		const char *raw_value = pairs[i].value ? pairs[i].value : "";
		char name[SG_NAME_MAX], value[SG_VALUE_MAX];

		if (sg_name_normalise(raw_name, name, sizeof(name), err) < 0) {
			sg_err_prefix(err, "linux.sysctl[\"%s\"]", raw_name);
			return -EINVAL;
		}
		if (sg_value_normalise(raw_value, strlen(raw_value), value, sizeof(value)) < 0)
			return sg_input_error(
			    err,
			    "linux.sysctl[\"%s\"]: the value is longer than %d "
			    "bytes, more than sysctl-guard can compare; shorten it "
			    "or set it outside the container",
			    raw_name, SG_VALUE_MAX - 1);
		if (pair_known(set, name, value))
			continue;
		set->pinned[set->n_pinned].name = sg_xstrdup(name);
		set->pinned[set->n_pinned].value = sg_xstrdup(value);
		set->n_pinned++;
	}
	return 0;
}

static const char *label_of(const char *label, const struct sg_policy *policy)
{
	if (label)
		return label;
	return policy->origin ? policy->origin : "policy";
}

/*
 * Names the layers; the mode annotation after the last, and only where it
 * changed one (compose): alone with a baseline, it can only make an audited
 * one enforce.
 */
static char *describe(const struct sg_policy *baseline, const char *baseline_label,
		      const struct sg_policy *annotation, const char *annotation_label,
		      const enum sg_mode *mode_override)
{
	const bool applies =
	    mode_override &&
	    (annotation || (*mode_override == SG_MODE_ENFORCE && baseline->mode == SG_MODE_AUDIT));
	_cleanup_free_ char *mode =
	    applies ? sg_xasprintf(" (mode %s)", sg_mode_name(*mode_override)) : sg_xstrdup("");

	if (baseline && annotation)
		return sg_xasprintf("baseline %s + annotation %s%s",
				    label_of(baseline_label, baseline),
				    label_of(annotation_label, annotation), mode);
	if (baseline)
		return sg_xasprintf("baseline %s%s", label_of(baseline_label, baseline), mode);
	return sg_xasprintf("annotation %s%s", label_of(annotation_label, annotation), mode);
}

static int compose(const struct sg_policy *baseline, struct sg_policy *annotation,
		   bool take_annotation, const enum sg_mode *mode_override,
		   const struct sg_sysctl_pair *pairs, size_t n_pairs, struct sg_policy_set *out,
		   struct sg_err *err)
{
	int r;

	if (baseline) {
		r = add_layer(out, baseline, err);
		if (r < 0)
			return r;
		/* An annotation can only narrow: it may make an audited baseline enforce, never the
		 * reverse. */
		if (mode_override && *mode_override == SG_MODE_ENFORCE)
			out->layers[out->n_layers - 1].mode = SG_MODE_ENFORCE;
	}
	if (annotation) {
		r = take_annotation ? take_layer(out, annotation, err)
				    : add_layer(out, annotation, err);
		if (r < 0)
			return r;
		if (mode_override)
			out->layers[out->n_layers - 1].mode = *mode_override;
	}
	return add_pairs(out, pairs, n_pairs, err);
}

static int set_compose(const struct sg_policy *baseline, const char *baseline_label,
		       struct sg_policy *annotation, bool take_annotation,
		       const char *annotation_label, const enum sg_mode *mode_override,
		       const struct sg_sysctl_pair *pairs, size_t n_pairs,
		       struct sg_policy_set *out, struct sg_err *err)
{
	memset(out, 0, sizeof(*out));
	/* Nothing to enforce: the caller attaches nothing, so the pairs need no checking. */
	if (!baseline && !annotation) {
		out->description = sg_xstrdup("no policy");
		return 0;
	}

	/* Described first: a taken annotation is empty afterwards. */
	char *description =
	    describe(baseline, baseline_label, annotation, annotation_label, mode_override);
	int r =
	    compose(baseline, annotation, take_annotation, mode_override, pairs, n_pairs, out, err);
	if (r < 0) {
		free(description);
		sg_policy_set_free(out);
		return r;
	}
	out->description = description;
	return 0;
}

int sg_policy_set_compose(const struct sg_policy *baseline, const char *baseline_label,
			  const struct sg_policy *annotation, const char *annotation_label,
			  const enum sg_mode *mode_override, const struct sg_sysctl_pair *pairs,
			  size_t n_pairs, struct sg_policy_set *out, struct sg_err *err)
{
	/* Not taken, so not changed: the cast only shares the code. */
	return set_compose(baseline, baseline_label, (struct sg_policy *)annotation, false,
			   annotation_label, mode_override, pairs, n_pairs, out, err);
}

int sg_policy_set_compose_adopt(const struct sg_policy *baseline, const char *baseline_label,
				struct sg_policy *annotation, const char *annotation_label,
				const enum sg_mode *mode_override,
				const struct sg_sysctl_pair *pairs, size_t n_pairs,
				struct sg_policy_set *out, struct sg_err *err)
{
	return set_compose(baseline, baseline_label, annotation, true, annotation_label,
			   mode_override, pairs, n_pairs, out, err);
}

int sg_policy_set_single(const struct sg_policy *policy, const char *label,
			 struct sg_policy_set *out, struct sg_err *err)
{
	memset(out, 0, sizeof(*out));
	int r = add_layer(out, policy, err);
	if (r < 0)
		return r;
	out->description = sg_xstrdup(label_of(label, policy));
	return 0;
}

void sg_policy_set_adopt(struct sg_policy *policy, const char *label, struct sg_policy_set *out)
{
	memset(out, 0, sizeof(*out));
	out->description = sg_xstrdup(label_of(label, policy));
	out->layers[out->n_layers++] = *policy;
	memset(policy, 0, sizeof(*policy));
}

void sg_policy_set_free(struct sg_policy_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n_layers; i++)
		sg_policy_free(&set->layers[i]);
	for (size_t i = 0; i < set->n_pinned; i++) {
		free(set->pinned[i].name);
		free(set->pinned[i].value);
	}
	free(set->pinned);
	free(set->description);
	memset(set, 0, sizeof(*set));
}
