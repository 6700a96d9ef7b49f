/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one container's policy is made from: the node config and its
 * baseline, the profile or inline policy its annotation names, the mode
 * annotation and linux.sysctl. The hook fills a source from a container's
 * state and config.json; `preload` from a profile name alone, as for a
 * container that names only that profile. Both digest the same inputs
 * (inputs.h), so that a container finds a preloaded policy in use.
 */
#ifndef SG_SOURCE_H
#define SG_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "policy/compose.h"
#include "policy/inputs.h"
#include "policy/profiles.h"
#include "compile/compile.h"
#include "oci/config.h"

struct sg_policy_source {
	const struct sg_node_config *config; /* borrowed */
	/* The annotation's policy as read: parsed only when its inputs are new on the node. */
	bool has_annotation;
	struct sg_profile_text annotation;
	char *annotation_label;
	const char *mode_text; /* io.sysctl-guard.mode as written (borrowed), NULL: none */
	enum sg_mode mode;
	const struct sg_sysctl_pair *sysctls; /* linux.sysctl (borrowed) */
	size_t n_sysctls;
	char *sysctl_text; /* linux.sysctl as "name\0value\0"..., for the digest */
	size_t sysctl_text_len;
	bool rewrite_works; /* the kernel probe's answer */
	bool keep_text;	    /* make parses a copy: the inputs are digested after it */
	struct sg_policy_set set;
	struct sg_compiled compiled;
};

/* The annotation names profile @name: reads it (not parsed yet). */
int sg_source_set_profile(struct sg_policy_source *src, const char *name, struct sg_err *err);

/* The annotation holds policy @text, where the node config allows inline policies. */
int sg_source_set_inline(struct sg_policy_source *src, const char *text, struct sg_err *err);

/* The mode annotation says @text: audit or enforce. */
int sg_source_set_mode(struct sg_policy_source *src, const char *text, struct sg_err *err);

/* Whether any policy applies: a baseline or an annotation's. */
bool sg_source_has_policy(const struct sg_policy_source *src);

/* The inputs to digest, rewrite_works among them (probe first); they borrow from @src. */
void sg_source_inputs(struct sg_policy_source *src, struct sg_inputs *in);

/*
 * Parses, composes and compiles the policy into src->set and src->compiled,
 * fitted to the kernel (rewrite_works). The annotation's text goes as soon
 * as it is parsed, unless keep_text. The caller confines itself first: the
 * text is untrusted.
 */
int sg_source_make(struct sg_policy_source *src, struct sg_err *err);

void sg_source_free(struct sg_policy_source *src);

#endif
