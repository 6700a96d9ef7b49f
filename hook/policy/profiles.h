/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Profiles: built-in policies embedded in the binary (k8s-safe, read-only,
 * deny-all, audit), then PROFILES_DIR/NAME.json. Names match
 * [a-z0-9][a-z0-9._-]* so that an annotation cannot name a path.
 */
#ifndef SG_PROFILES_H
#define SG_PROFILES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "policy/policy.h"

/* Where installed profiles are, unless the node config says otherwise. */
#define SG_DEFAULT_PROFILES_DIR "/etc/sysctl-guard/profiles"

bool sg_profile_name_valid(const char *name);

/* The built-in profile @name as JSON text, or NULL. */
const char *sg_builtin_profile(const char *name);

/* NULL-terminated list of built-in profile names, in a stable order. */
const char *const *sg_builtin_profile_names(void);

/*
 * The names of the profiles installed in @profiles_dir (NAME.json with a
 * valid NAME), sorted, in *@names and their count in *@n; free with
 * sg_profile_names_free. A missing directory has none; one that cannot be
 * read is an error.
 */
int sg_installed_profile_names(const char *profiles_dir, char ***names, size_t *n,
			       struct sg_err *err);
void sg_profile_names_free(char **names, size_t n);

/*
 * The stems of @profiles_dir's .json files that no annotation can name (an
 * invalid NAME), as sg_installed_profile_names lists the others.
 */
int sg_misnamed_profile_files(const char *profiles_dir, char ***stems, size_t *n,
			      struct sg_err *err);

/* One-line description of a built-in profile, or NULL. */
const char *sg_builtin_profile_summary(const char *name);

/*
 * Loads profile @name: built-in first, then @profiles_dir/NAME.json. An invalid
 * name or a profile that exists nowhere is an input error naming both places.
 */
int sg_profile_load(const char *name, const char *profiles_dir, struct sg_policy *out,
		    struct sg_err *err);

/* A profile's text, read but not parsed: what the hook hashes (inputs.h) before parsing. */
struct sg_profile_text {
	char *text;
	size_t len;
	char *origin; /* the file, or "profile NAME" for a built-in one: for errors */
};

/* sg_profile_load in two steps: reading (the same errors) and parsing. */
int sg_profile_read(const char *name, const char *profiles_dir, struct sg_profile_text *out,
		    struct sg_err *err);
int sg_profile_parse(const struct sg_profile_text *text, struct sg_policy *out, struct sg_err *err);
void sg_profile_text_free(struct sg_profile_text *text);

#endif
