// SPDX-License-Identifier: Apache-2.0
#include "oci/oci.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include "base/json.h"
#include "base/util.h"
#include "oci/tamper.h"

static int read_annotations(const struct sg_json *obj, const char *origin,
			    struct sg_annotation **out, size_t *n, struct sg_err *err)
{
	if (!obj || obj->type == SG_JSON_NULL)
		return 0;
	if (obj->type != SG_JSON_OBJECT)
		return sg_input_error(err, "%s:%u:%u: annotations: expected an object", origin,
				      obj->pos.line, obj->pos.col);
	*out = sg_xcalloc(obj->object.len, sizeof(**out));
	for (size_t i = 0; i < obj->object.len; i++) {
		const struct sg_json *v = obj->object.values[i];
		if (v->type != SG_JSON_STRING)
			return sg_input_error(err,
					      "%s:%u:%u: annotations[\"%s\"]: expected a string",
					      origin, v->pos.line, v->pos.col, obj->object.keys[i]);
		(*out)[i].key = sg_xstrdup(obj->object.keys[i]);
		(*out)[i].value = sg_xstrdup(v->string.text);
		(*n)++;
	}
	return 0;
}

static void free_annotations(struct sg_annotation *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(a[i].key);
		free(a[i].value);
	}
	free(a);
}

int sg_oci_state_parse(const char *text, size_t len, struct sg_oci_state *out, struct sg_err *err)
{
	_cleanup_json_ struct sg_json *root = NULL;
	const struct sg_json *pid;
	const char *s;
	int r;

	memset(out, 0, sizeof(*out));
	r = sg_json_parse(text, len, "state", &root, err);
	if (r < 0)
		return r;
	if (root->type != SG_JSON_OBJECT)
		return sg_input_error(err, "state: expected a JSON object");
	s = sg_json_get_string(root, "id");
	if (!s || !*s)
		return sg_input_error(err, "state: \"id\" is missing or not a string");
	out->id = sg_xstrdup(s);
	s = sg_json_get_string(root, "status");
	out->status = sg_xstrdup(s ? s : "");
	pid = sg_json_get(root, "pid");
	if (pid && (pid->type != SG_JSON_NUMBER || !pid->number.is_integer ||
		    pid->number.integer < 0 || pid->number.integer > INT_MAX))
		return sg_input_error(err, "state:%u:%u: pid: expected a process id", pid->pos.line,
				      pid->pos.col);
	out->pid = pid ? (long)pid->number.integer : 0;
	s = sg_json_get_string(root, "bundle");
	if (!s)
		s = sg_json_get_string(root, "bundlePath");
	if (!s || s[0] != '/')
		return sg_input_error(err, "state: \"bundle\" is missing or not an absolute path");
	out->bundle = sg_xstrdup(s);
	return read_annotations(sg_json_get(root, "annotations"), "state", &out->annotations,
				&out->n_annotations, err);
}

void sg_oci_state_free(struct sg_oci_state *state)
{
	free(state->id);
	free(state->status);
	free(state->bundle);
	free_annotations(state->annotations, state->n_annotations);
	memset(state, 0, sizeof(*state));
}

static int read_sysctls(const struct sg_json *obj, const char *origin, struct sg_oci_config *out,
			struct sg_err *err)
{
	if (!obj || obj->type == SG_JSON_NULL)
		return 0;
	if (obj->type != SG_JSON_OBJECT)
		return sg_input_error(err, "%s:%u:%u: linux.sysctl: expected an object", origin,
				      obj->pos.line, obj->pos.col);
	out->sysctls = sg_xcalloc(obj->object.len, sizeof(*out->sysctls));
	for (size_t i = 0; i < obj->object.len; i++) {
		const struct sg_json *v = obj->object.values[i];
		if (v->type != SG_JSON_STRING)
			return sg_input_error(err,
					      "%s:%u:%u: linux.sysctl[\"%s\"]: expected a string",
					      origin, v->pos.line, v->pos.col, obj->object.keys[i]);
		out->sysctls[i].name = sg_xstrdup(obj->object.keys[i]);
		out->sysctls[i].value = sg_xstrdup(v->string.text);
		out->n_sysctls++;
	}
	return 0;
}

/* The OCI names of the namespace types that own sysctls, by enum sg_namespace bit index. */
static const char *const oci_namespace_types[SG_NS_TYPES] = {"network", "uts", "ipc", "user",
							     "pid"};

/* linux.namespaces: which types the container gets, and paths to join. */
static int read_namespaces(const struct sg_json *list, const char *origin,
			   struct sg_namespace_config *out, struct sg_err *err)
{
	if (!list || list->type == SG_JSON_NULL)
		return 0;
	if (list->type != SG_JSON_ARRAY)
		return sg_input_error(err, "%s:%u:%u: linux.namespaces: expected an array", origin,
				      list->pos.line, list->pos.col);
	for (size_t i = 0; i < list->array.len; i++) {
		const struct sg_json *ns = list->array.items[i];
		const char *type = sg_json_get_string(ns, "type");
		const struct sg_json *path = sg_json_get(ns, "path");

		if (!type || (path && path->type != SG_JSON_STRING))
			return sg_input_error(err,
					      "%s:%u:%u: linux.namespaces[%zu]: expected an object "
					      "with a string \"type\" and maybe a string \"path\"",
					      origin, ns->pos.line, ns->pos.col, i);
		for (uint32_t t = 0; t < SG_NS_TYPES; t++) {
			if (strcmp(type, oci_namespace_types[t]) != 0)
				continue;
			out->listed[t] = true;
			free(out->path[t]);
			out->path[t] =
			    path && path->string.len ? sg_xstrdup(path->string.text) : NULL;
		}
	}
	return 0;
}

int sg_oci_config_parse(const char *text, size_t len, const char *origin, struct sg_oci_config *out,
			struct sg_err *err)
{
	_cleanup_json_ struct sg_json *root = NULL;
	const struct sg_json *linux_obj;
	int r;

	memset(out, 0, sizeof(*out));
	r = sg_json_parse(text, len, origin, &root, err);
	if (r < 0)
		return r;
	if (root->type != SG_JSON_OBJECT)
		return sg_input_error(err, "%s: expected a JSON object", origin);
	r = read_annotations(sg_json_get(root, "annotations"), origin, &out->annotations,
			     &out->n_annotations, err);
	if (r < 0)
		return r;
	const struct sg_json *process = sg_json_get(root, "process");
	out->bpf_caps = sg_tamper_caps_allow_bpf(sg_json_get(process, "capabilities"));
	const char *pins_mount = sg_tamper_mount_exposing_pins(sg_json_get(root, "mounts"));
	if (pins_mount)
		out->pins_mount = sg_xstrdup(pins_mount);
	linux_obj = sg_json_get(root, "linux");
	r = sg_tamper_seccomp_allows_bpf(sg_json_get(linux_obj, "seccomp"),
					 &out->seccomp_allows_bpf);
	if (r < 0)
		return sg_system_error(err, -r, "%s: cannot analyse linux.seccomp: %s", origin,
				       strerror(-r));
	if (!linux_obj || linux_obj->type != SG_JSON_OBJECT)
		return 0;
	const char *path = sg_json_get_string(linux_obj, "cgroupsPath");
	if (path)
		out->cgroups_path = sg_xstrdup(path);
	r = read_namespaces(sg_json_get(linux_obj, "namespaces"), origin, &out->namespaces, err);
	if (r < 0)
		return r;
	return read_sysctls(sg_json_get(linux_obj, "sysctl"), origin, out, err);
}

int sg_oci_config_load(const char *bundle, struct sg_oci_config *out, struct sg_err *err)
{
	_cleanup_free_ char *path = sg_xasprintf("%s/config.json", bundle);
	_cleanup_free_ char *text = NULL;
	size_t len;

	int r = sg_read_file(path, SG_MAX_CONFIG_BYTES, &text, &len, err);
	if (r < 0)
		return r;
	return sg_oci_config_parse(text, len, path, out, err);
}

void sg_oci_config_free(struct sg_oci_config *config)
{
	free_annotations(config->annotations, config->n_annotations);
	for (size_t i = 0; i < config->n_sysctls; i++) {
		free(config->sysctls[i].name);
		free(config->sysctls[i].value);
	}
	free(config->sysctls);
	free(config->cgroups_path);
	free(config->pins_mount);
	for (uint32_t t = 0; t < SG_NS_TYPES; t++)
		free(config->namespaces.path[t]);
	memset(config, 0, sizeof(*config));
}

static const char *find(const struct sg_annotation *a, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].key, key) == 0)
			return a[i].value;
	return NULL;
}

const char *sg_oci_unknown_annotation(const struct sg_oci_state *state,
				      const struct sg_oci_config *config)
{
	static const char *const known[] = {SG_ANNOTATION_PROFILE, SG_ANNOTATION_POLICY,
					    SG_ANNOTATION_MODE, SG_ANNOTATION_LEARN,
					    SG_ANNOTATION_EVENTS};
	const struct sg_annotation *a = state->n_annotations ? state->annotations
					: config	     ? config->annotations
							     : NULL;
	size_t n = state->n_annotations ? state->n_annotations : config ? config->n_annotations : 0;

	for (size_t i = 0; i < n; i++) {
		if (strncmp(a[i].key, SG_ANNOTATION_PREFIX, strlen(SG_ANNOTATION_PREFIX)) != 0)
			continue;
		bool ours = false;
		for (size_t k = 0; k < SG_ARRAY_SIZE(known) && !ours; k++)
			ours = strcmp(a[i].key, known[k]) == 0;
		if (!ours)
			return a[i].key;
	}
	return NULL;
}

const char *sg_oci_annotation(const struct sg_oci_state *state, const struct sg_oci_config *config,
			      const char *key)
{
	if (state->n_annotations)
		return find(state->annotations, state->n_annotations, key);
	return config ? find(config->annotations, config->n_annotations, key) : NULL;
}
