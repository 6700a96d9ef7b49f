// SPDX-License-Identifier: Apache-2.0
#include "policy/profiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/util.h"

#define SG_PROFILE_NAME_MAX 64

/* Generated from the files in hook/profiles by hook/profiles/embed.py; ends with a NULL name. */
struct sg_builtin_profile {
	const char *name;
	const char *summary;
	const char *json;
};
extern const struct sg_builtin_profile sg_builtin_profiles[];

static const struct sg_builtin_profile *find_builtin(const char *name)
{
	for (const struct sg_builtin_profile *p = sg_builtin_profiles; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * The grammar has no '/', and no name can be "." or "..", so NAME.json always
 * stays inside the profiles directory.
 */
bool sg_profile_name_valid(const char *name)
{
	if (!name || !is_name_start(name[0]))
		return false;
	size_t i;
	for (i = 1; name[i]; i++) {
		char c = name[i];
		if (i >= SG_PROFILE_NAME_MAX)
			return false;
		if (!is_name_start(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

const char *sg_builtin_profile(const char *name)
{
	const struct sg_builtin_profile *p = name ? find_builtin(name) : NULL;
	return p ? p->json : NULL;
}

const char *sg_builtin_profile_summary(const char *name)
{
	const struct sg_builtin_profile *p = name ? find_builtin(name) : NULL;
	return p ? p->summary : NULL;
}

const char *const *sg_builtin_profile_names(void)
{
	/* The table is constant, so filling this more than once writes the same values. */
	static const char *names[16];
	size_t n = 0;

	for (const struct sg_builtin_profile *p = sg_builtin_profiles; p->name; p++)
		if (n + 1 < SG_ARRAY_SIZE(names))
			names[n++] = p->name;
	names[n] = NULL;
	return names;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stems of @profiles_dir's NAME.json files whose NAME is valid (@valid) or not, sorted. */
static int list_profile_files(const char *profiles_dir, bool valid, char ***names, size_t *n,
			      struct sg_err *err)
{
	DIR *dir = opendir(profiles_dir);

	*names = NULL;
	*n = 0;
	if (!dir && errno == ENOENT)
		return 0;	      /* none installed yet */
	if (!dir && errno == ENOTDIR) /* the node config names a file */
		return sg_input_error(err, "profiles_dir %s is not a directory", profiles_dir);
	if (!dir)
		return sg_system_error(err, errno, "cannot list the profiles in %s: %s",
				       profiles_dir, strerror(errno));
	for (struct dirent *de; (de = readdir(dir));) {
		size_t len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		char *name = sg_xstrndup(de->d_name, len - 5);
		if (sg_profile_name_valid(name) != valid) {
			free(name);
			continue;
		}
		*names = sg_xrealloc(*names, *n + 1, sizeof(char *));
		(*names)[(*n)++] = name;
	}
	closedir(dir);
	if (*n)
		qsort(*names, *n, sizeof(char *), compare_names);
	return 0;
}

int sg_installed_profile_names(const char *profiles_dir, char ***names, size_t *n,
			       struct sg_err *err)
{
	return list_profile_files(profiles_dir, true, names, n, err);
}

int sg_misnamed_profile_files(const char *profiles_dir, char ***stems, size_t *n,
			      struct sg_err *err)
{
	return list_profile_files(profiles_dir, false, stems, n, err);
}

void sg_profile_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* "k8s-safe, read-only, deny-all, audit" */
static void builtin_list(char *out, size_t cap)
{
	size_t used = 0;

	out[0] = '\0';
	for (const char *const *n = sg_builtin_profile_names(); *n && used < cap; n++) {
		int w = snprintf(out + used, cap - used, "%s%s", used ? ", " : "", *n);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static int not_found(const char *name, const char *path, struct sg_err *err)
{
	char builtins[256];

	builtin_list(builtins, sizeof(builtins));
	return sg_input_error(err,
			      "profile \"%s\" not found: not built in (%s) and no %s; "
			      "install the file or pick a built-in profile",
			      name, builtins, path);
}

/*
 * Opens @path for reading without blocking on a FIFO and without accepting
 * anything but a regular file. Returns the descriptor, or -errno.
 */
static int open_regular(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return SG_TAKE_FD(fd);
}

static int read_from_dir(const char *name, const char *dir, struct sg_profile_text *out,
			 struct sg_err *err)
{
	size_t dir_len = strlen(dir);
	const char *sep = dir_len && dir[dir_len - 1] == '/' ? "" : "/";
	_cleanup_free_ char *path = sg_xasprintf("%s%s%s.json", dir, sep, name);

	_cleanup_close_ int fd = open_regular(path);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return not_found(name, path, err);
	if (fd == -EISDIR || fd == -EINVAL)
		return sg_input_error(err, "profile \"%s\": %s is not a regular file", name, path);
	if (fd < 0)
		return sg_input_error(err, "profile \"%s\": cannot open %s: %s", name, path,
				      strerror(-fd));

	/* A profile is a policy, with a policy's bound: `check` takes what the hook takes. */
	int r = sg_read_fd(fd, path, SG_MAX_POLICY_BYTES, &out->text, &out->len, err);
	if (r < 0) {
		sg_err_prefix(err, "profile \"%s\"", name);
		return r;
	}
	out->origin = SG_TAKE(path);
	return 0;
}

int sg_profile_read(const char *name, const char *profiles_dir, struct sg_profile_text *out,
		    struct sg_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!sg_profile_name_valid(name))
		return sg_input_error(err,
				      "profile name \"%s\" is invalid: a profile name is 1 to %d "
				      "characters of a-z, 0-9, '.', '_' and '-', starting with a "
				      "letter or digit (it names a built-in profile or a file in "
				      "the profiles directory, never a path)",
				      name ? name : "", SG_PROFILE_NAME_MAX);

	const struct sg_builtin_profile *builtin = find_builtin(name);
	if (builtin) {
		out->len = strlen(builtin->json);
		out->text = sg_xstrdup(builtin->json);
		out->origin = sg_xasprintf("profile %s", name);
		return 0;
	}
	return read_from_dir(name, profiles_dir ? profiles_dir : SG_DEFAULT_PROFILES_DIR, out, err);
}

int sg_profile_parse(const struct sg_profile_text *text, struct sg_policy *out, struct sg_err *err)
{
	return sg_policy_parse(text->text, text->len, text->origin, out, err);
}

void sg_profile_text_free(struct sg_profile_text *text)
{
	free(text->text);
	free(text->origin);
	memset(text, 0, sizeof(*text));
}

int sg_profile_load(const char *name, const char *profiles_dir, struct sg_policy *out,
		    struct sg_err *err)
{
	struct sg_profile_text text;
	int r = sg_profile_read(name, profiles_dir, &text, err);
	if (r == 0)
		r = sg_policy_parse_taking(&text.text, text.len, text.origin, out, err);
	sg_profile_text_free(&text);
	return r;
}
