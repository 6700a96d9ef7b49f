/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The effective policy of a container: the node baseline AND the annotation
 * policy, each a layer that can only narrow what the layers before it allow,
 * plus the linux.sysctl pairs of config.json, whose exact writes are always
 * allowed (the runtime writes them from inside the guarded cgroup). Pure logic.
 */
#ifndef SG_COMPOSE_H
#define SG_COMPOSE_H

#include "policy/policy.h"

struct sg_sysctl_pair {
	char *name;  /* slash form */
	char *value; /* normalised token list */
};

struct sg_policy_set {
	struct sg_policy layers[SG_LAYERS_MAX]; /* owned copies, baseline first */
	size_t n_layers;
	struct sg_sysctl_pair *pinned;
	size_t n_pinned;
	char *description; /* "baseline k8s-safe + profile deny-all", for status and logs */
};

/*
 * Builds the set. @baseline and @annotation may be NULL. @mode_override
 * (NULL: none) is io.sysctl-guard.mode: it sets the annotation layer's mode;
 * on the baseline it may only turn audit into enforce, never the reverse,
 * because an annotation can only narrow. @pairs are config.json linux.sysctl
 * entries as written (dotted or slash names, raw values).
 */
int sg_policy_set_compose(const struct sg_policy *baseline, const char *baseline_label,
			  const struct sg_policy *annotation, const char *annotation_label,
			  const enum sg_mode *mode_override, const struct sg_sysctl_pair *pairs,
			  size_t n_pairs, struct sg_policy_set *out, struct sg_err *err);

/*
 * The same, but the set takes @annotation over and leaves it empty: no copy
 * of a policy that may have SG_MAX_RULES rules (the hook's).
 */
int sg_policy_set_compose_adopt(const struct sg_policy *baseline, const char *baseline_label,
				struct sg_policy *annotation, const char *annotation_label,
				const enum sg_mode *mode_override,
				const struct sg_sysctl_pair *pairs, size_t n_pairs,
				struct sg_policy_set *out, struct sg_err *err);

/* A set of one policy (the attach command). */
int sg_policy_set_single(const struct sg_policy *policy, const char *label,
			 struct sg_policy_set *out, struct sg_err *err);

/*
 * The same, but the set takes @policy over and leaves it empty: no copy of a
 * policy that may have SG_MAX_RULES rules when the caller has no further use
 * for it.
 */
void sg_policy_set_adopt(struct sg_policy *policy, const char *label, struct sg_policy_set *out);

void sg_policy_set_free(struct sg_policy_set *set);

#endif
