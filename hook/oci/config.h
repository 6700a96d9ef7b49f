/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node configuration (schema/config.schema.json), by default
 * /etc/sysctl-guard/config.json; --config and SYSCTL_GUARD_CONFIG override the
 * path. No file at the default path means no baseline and the defaults below;
 * a path given explicitly must exist.
 */
#ifndef SG_CONFIG_H
#define SG_CONFIG_H

#include <stdbool.h>

#include "policy/policy.h"

#define SG_DEFAULT_CONFIG "/etc/sysctl-guard/config.json"
/* The largest node config the hook reads. */
#define SG_CONFIG_MAX_BYTES (1u << 20)

enum sg_on_unsupported {
	SG_UNSUPPORTED_FAIL = 0,
	SG_UNSUPPORTED_SKIP,
};

enum sg_tamper {
	SG_TAMPER_WARN = 0,
	SG_TAMPER_REFUSE,
	SG_TAMPER_IGNORE,
};

struct sg_node_config {
	char *path; /* file read, NULL when none */
	char *text; /* its bytes, for the inputs digest (inputs.h) */
	size_t text_len;
	char *baseline_text; /* the baseline profile's bytes, when it names one */
	size_t baseline_text_len;
	struct sg_policy *baseline; /* NULL when none */
	char *baseline_label;	    /* "profile k8s-safe" or "inline baseline" */
	char *profiles_dir;
	bool allow_inline;
	enum sg_on_unsupported on_unsupported;
	enum sg_tamper tamper;
	bool log_syslog; /* "log": {"syslog": bool} default true */
	bool log_debug;	 /* "log": {"level": "debug"|"info"} default info */
};

/*
 * @explicit_path: the --config argument or NULL; then SYSCTL_GUARD_CONFIG, then
 * the default. Errors name the file, line:col and JSON path; exit 1.
 */
int sg_node_config_load(const char *explicit_path, struct sg_node_config *out, struct sg_err *err);

/*
 * Where a config's baseline that names a profile is read from, for `install`,
 * which checks a config before the node has it: in @first when NAME.json is
 * there (the profiles installed with it), else in the config's profiles_dir
 * under @root (the node's root as mounted here; NULL: /).
 */
struct sg_config_lookup {
	const char *root;
	const char *first;
};

/*
 * Parses node config @text (@len bytes; @origin names it in errors) as
 * sg_node_config_load parses a file, reading a baseline profile as @lookup says.
 */
int sg_node_config_parse(const char *origin, const char *text, size_t len,
			 const struct sg_config_lookup *lookup, struct sg_node_config *out,
			 struct sg_err *err);

void sg_node_config_free(struct sg_node_config *config);

#endif
