/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OCI runtime hook input: the container state on stdin and the bundle's
 * config.json (only what the hook needs: annotations, linux.sysctl,
 * linux.cgroupsPath). Pure logic over JSON text.
 */
#ifndef SG_OCI_H
#define SG_OCI_H

#include <stddef.h>

#include "base/err.h"
#include "policy/compose.h"
#include "kernel/namespaces.h"

#define SG_MAX_STATE_BYTES  (1u << 20)	/* 1 MiB */
#define SG_MAX_CONFIG_BYTES (16u << 20) /* 16 MiB */

#define SG_ANNOTATION_PREFIX  "io.sysctl-guard."
#define SG_ANNOTATION_PROFILE "io.sysctl-guard.profile"
#define SG_ANNOTATION_POLICY  "io.sysctl-guard.policy"
#define SG_ANNOTATION_MODE    "io.sysctl-guard.mode"
#define SG_ANNOTATION_LEARN   "io.sysctl-guard.learn"
#define SG_ANNOTATION_EVENTS  "io.sysctl-guard.events" /* "reads": report reads too */

struct sg_annotation {
	char *key;
	char *value;
};

struct sg_oci_state {
	char *id;
	char *status;
	long pid; /* 0 at poststop */
	char *bundle;
	struct sg_annotation *annotations;
	size_t n_annotations;
};

struct sg_oci_config {
	struct sg_annotation *annotations;
	size_t n_annotations;
	struct sg_sysctl_pair *sysctls; /* as written in linux.sysctl */
	size_t n_sysctls;
	char *cgroups_path;	 /* linux.cgroupsPath or NULL */
	bool bpf_caps;		 /* process.capabilities has CAP_SYS_ADMIN or CAP_BPF */
	bool seccomp_allows_bpf; /* linux.seccomp (or its absence) lets bpf(2) through */
	char *pins_mount;	 /* the source of a mount that shows the host's pins, or NULL */
	struct sg_namespace_config namespaces; /* linux.namespaces of the types that own sysctls */
};

/* Parses the state JSON ("bundle", or the older "bundlePath"). Errors name "state". */
int sg_oci_state_parse(const char *text, size_t len, struct sg_oci_state *out, struct sg_err *err);
void sg_oci_state_free(struct sg_oci_state *state);

/* Parses config.json text; @origin names it in messages. */
int sg_oci_config_parse(const char *text, size_t len, const char *origin, struct sg_oci_config *out,
			struct sg_err *err);
int sg_oci_config_load(const char *bundle, struct sg_oci_config *out, struct sg_err *err);
void sg_oci_config_free(struct sg_oci_config *config);

/*
 * The first annotation of the io.sysctl-guard. prefix that is none of the
 * above (where sg_oci_annotation looks), or NULL: a misspelt one would
 * leave a container without the guard it asks for.
 */
const char *sg_oci_unknown_annotation(const struct sg_oci_state *state,
				      const struct sg_oci_config *config);

/* The annotation @key: the state's if it has any annotations, else config.json's. */
const char *sg_oci_annotation(const struct sg_oci_state *state, const struct sg_oci_config *config,
			      const char *key);

#endif
