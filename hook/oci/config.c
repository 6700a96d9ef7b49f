// SPDX-License-Identifier: Apache-2.0
#include "oci/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "base/util.h"
#include "policy/profiles.h"

#define SG_CONFIG_ENV "SYSCTL_GUARD_CONFIG"

/* Everything one parse needs to say where a problem is. */
struct config_ctx {
	const char *path;
	const char *text;
	size_t len;
	const struct sg_config_lookup *lookup; /* NULL: the hook's, profiles_dir itself */
	struct sg_err *err;
};

__attribute__((format(printf, 4, 5))) static int at(const struct config_ctx *ctx, struct sg_pos pos,
						    const char *json_path, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return sg_input_error(ctx->err, "%s:%u:%u: %s: %s", ctx->path, pos.line, pos.col, json_path,
			      what);
}

static int wrong_type(const struct config_ctx *ctx, const struct sg_json *v, const char *json_path,
		      const char *expected)
{
	return at(ctx, v->pos, json_path, "expected %s, got %s", expected,
		  sg_json_type_name(v->type));
}

static int get_bool(const struct config_ctx *ctx, const struct sg_json *v, const char *json_path,
		    bool *out)
{
	if (v->type != SG_JSON_BOOL)
		return wrong_type(ctx, v, json_path, "true or false");
	*out = v->boolean;
	return 0;
}

/* Maps a string member onto one of @choices (NULL terminated); *out is the index. */
static int get_choice(const struct config_ctx *ctx, const struct sg_json *v, const char *json_path,
		      const char *const *choices, int *out)
{
	char list[256] = "";
	size_t used = 0;

	for (int i = 0; choices[i]; i++) {
		if (v->type == SG_JSON_STRING && strcmp(v->string.text, choices[i]) == 0) {
			*out = i;
			return 0;
		}
		int w = snprintf(list + used, sizeof(list) - used, "%s\"%s\"",
				 i == 0 ? "" : (choices[i + 1] ? ", " : " or "), choices[i]);
		if (w > 0 && (size_t)w < sizeof(list) - used)
			used += (size_t)w;
	}
	if (v->type != SG_JSON_STRING)
		return wrong_type(ctx, v, json_path, list);
	return at(ctx, v->pos, json_path, "\"%s\" is not one of %s", v->string.text, list);
}

/* ---- Locating the inline baseline in the file ---- */

/*
 * Byte offset of line:col in the text. Columns may count bytes or UTF-8
 * characters; *char_cols says which convention put an opening brace there.
 * Returns -1 when neither does.
 */
static ssize_t offset_of(const char *text, size_t len, struct sg_pos pos, bool *char_cols)
{
	size_t line_start = 0;
	unsigned line = 1;

	if (pos.line == 0 || pos.col == 0)
		return -1;
	for (size_t i = 0; i < len && line < pos.line; i++)
		if (text[i] == '\n') {
			line++;
			line_start = i + 1;
		}
	if (line != pos.line)
		return -1;

	size_t by_bytes = line_start + pos.col - 1;
	if (by_bytes < len && text[by_bytes] == '{') {
		*char_cols = false;
		return (ssize_t)by_bytes;
	}
	size_t i = line_start;
	for (unsigned col = 1; col < pos.col && i < len && text[i] != '\n'; col++) {
		i++;
		while (i < len && ((unsigned char)text[i] & 0xc0) == 0x80)
			i++;
	}
	if (i < len && text[i] == '{') {
		*char_cols = true;
		return (ssize_t)i;
	}
	return -1;
}

/* One past the '}' that closes the object opened at @start; -1 if none (never for parsed JSON). */
static ssize_t object_end(const char *text, size_t len, size_t start)
{
	size_t depth = 0;
	bool in_string = false;

	for (size_t i = start; i < len; i++) {
		char c = text[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return (ssize_t)(i + 1);
	}
	return -1;
}

/*
 * The config text with everything but the object at [start, end) turned into
 * blanks, newlines kept: parsed as a policy, its positions are the file's own.
 */
static char *isolate_object(const char *text, size_t len, size_t start, size_t end, bool char_cols)
{
	char *out = sg_xmalloc(len + 1);
	size_t line_start = 0, o = 0;

	for (size_t i = 0; i < start; i++)
		if (text[i] == '\n')
			line_start = i + 1;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (i >= start && i < end) {
			out[o++] = c;
			continue;
		}
		if (c == '\n') {
			out[o++] = c;
			continue;
		}
		/* With character columns one blank must stand for a whole character. */
		if (char_cols && i >= line_start && i < start && ((unsigned char)c & 0xc0) == 0x80)
			continue;
		out[o++] = ' ';
	}
	out[o] = '\0';
	return out;
}

/*
 * The policy parser reports "PATH:LINE:COL: rules[0].name: ..." relative to
 * the policy; in the node configuration that policy is the value of
 * "baseline", so its JSON path becomes "baseline.rules[0].name". Returns the
 * message rewritten (free it).
 */
static char *name_baseline_in(const char *path, const char *msg)
{
	static const char root_name[] = "(top level)";
	size_t plen = strlen(path), root_len = strlen(root_name);
	const char *p = msg;

	if (strncmp(p, path, plen) != 0 || p[plen] != ':')
		return sg_xasprintf("%s: baseline: %s", path, msg);
	p += plen + 1;
	for (int field = 0; field < 2; field++) {
		if (*p < '0' || *p > '9')
			return sg_xasprintf("%s: baseline: %s", path, msg);
		p += strspn(p, "0123456789");
		if (*p == ':')
			p++;
	}
	p += strspn(p, " ");

	/* A JSON path is one token without blanks followed by ": "; the root has its own name. */
	size_t token = strcspn(p, " :");
	bool is_path = token > 0 && p[token] == ':' && p[token + 1] == ' ';
	const char *insert = "baseline: ";
	size_t head = (size_t)(p - msg);
	if (strncmp(p, root_name, root_len) == 0 && p[root_len] == ':') {
		insert = "baseline";
		p += root_len;
	} else if (is_path) {
		insert = *p == '[' ? "baseline" : "baseline.";
	}
	return sg_xasprintf("%.*s%s%s", (int)head, msg, insert, p);
}

static void name_baseline_in_error(const struct config_ctx *ctx)
{
	_cleanup_free_ char *msg = name_baseline_in(ctx->path, ctx->err->msg);
	snprintf(ctx->err->msg, sizeof(ctx->err->msg), "%s", msg);
}

static int parse_inline_baseline(const struct config_ctx *ctx, const struct sg_json *v,
				 struct sg_policy *out)
{
	bool char_cols = false;
	ssize_t start = offset_of(ctx->text, ctx->len, v->pos, &char_cols);
	ssize_t end = start < 0 ? -1 : object_end(ctx->text, ctx->len, (size_t)start);

	if (start < 0 || end < 0)
		return at(ctx, v->pos, "baseline", "cannot locate the inline policy in the file");

	_cleanup_free_ char *isolated =
	    isolate_object(ctx->text, ctx->len, (size_t)start, (size_t)end, char_cols);
	int r = sg_policy_parse(isolated, strlen(isolated), ctx->path, out, ctx->err);
	if (r < 0) {
		name_baseline_in_error(ctx);
		return r;
	}
	sg_policy_find_shadowed(out);
	for (size_t i = 0; i < out->n_warnings; i++) {
		char *warning = name_baseline_in(ctx->path, out->warnings[i]);
		free(out->warnings[i]);
		out->warnings[i] = warning;
	}
	free(out->origin);
	out->origin = sg_xasprintf("%s baseline", ctx->path);
	return 0;
}

/* ---- The keys ---- */

static int parse_log(const struct config_ctx *ctx, const struct sg_json *log,
		     struct sg_node_config *cfg)
{
	static const char *const levels[] = {"info", "debug", NULL};

	if (log->type != SG_JSON_OBJECT)
		return wrong_type(ctx, log, "log", "an object");
	for (size_t i = 0; i < log->object.len; i++) {
		const char *key = log->object.keys[i];
		const struct sg_json *v = log->object.values[i];
		int r, level = 0;

		if (strcmp(key, "syslog") == 0) {
			r = get_bool(ctx, v, "log.syslog", &cfg->log_syslog);
		} else if (strcmp(key, "level") == 0) {
			r = get_choice(ctx, v, "log.level", levels, &level);
			cfg->log_debug = level == 1;
		} else {
			_cleanup_free_ char *json_path = sg_xasprintf("log.%s", key);
			r = at(ctx, log->object.key_pos[i], json_path,
			       "unknown key; known keys: syslog, level");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* Where a baseline that names profile @name is read from (struct sg_config_lookup). */
static char *baseline_dir(const struct config_ctx *ctx, const char *name,
			  const struct sg_node_config *cfg)
{
	const struct sg_config_lookup *l = ctx->lookup;

	if (!l)
		return sg_xstrdup(cfg->profiles_dir);
	if (l->first && sg_profile_name_valid(name)) {
		_cleanup_free_ char *file = sg_xasprintf("%s/%s.json", l->first, name);
		if (access(file, F_OK) == 0)
			return sg_xstrdup(l->first);
	}
	if (l->root)
		return sg_xasprintf("%s%s", l->root, cfg->profiles_dir);
	return sg_xstrdup(cfg->profiles_dir);
}

static const char *const known_keys =
    "version, baseline, profiles_dir, allow_inline, on_unsupported, tamper, log";

static int parse_config(const struct config_ctx *ctx, const struct sg_json *root,
			struct sg_node_config *cfg)
{
	static const char *const unsupported[] = {"fail", "skip", NULL};
	static const char *const tamper[] = {"warn", "refuse", "ignore", NULL};
	const struct sg_json *baseline = NULL;
	int r = 0, choice = 0;

	if (root->type != SG_JSON_OBJECT)
		return at(ctx, root->pos, "(top level)", "expected an object, got %s",
			  sg_json_type_name(root->type));

	for (size_t i = 0; i < root->object.len; i++) {
		const char *key = root->object.keys[i];
		const struct sg_json *v = root->object.values[i];

		if (strcmp(key, "version") == 0) {
			if (v->type != SG_JSON_NUMBER || !v->number.is_integer)
				r = wrong_type(ctx, v, key, "the integer 1");
			else if (v->number.integer != 1)
				r = at(ctx, v->pos, key,
				       "unsupported version %s; this sysctl-guard reads version 1",
				       v->number.text);
		} else if (strcmp(key, "baseline") == 0) {
			/* Resolved after the loop, once profiles_dir is known. */
			if (v->type != SG_JSON_STRING && v->type != SG_JSON_OBJECT)
				r = wrong_type(ctx, v, key,
					       "a profile name or an inline policy object");
			baseline = v;
		} else if (strcmp(key, "profiles_dir") == 0) {
			if (v->type != SG_JSON_STRING)
				r = wrong_type(ctx, v, key, "an absolute directory path");
			else if (v->string.text[0] != '/')
				r = at(ctx, v->pos, key,
				       "\"%s\" is not an absolute path; write the directory from /",
				       v->string.text);
			else {
				free(cfg->profiles_dir);
				cfg->profiles_dir = sg_xstrdup(v->string.text);
			}
		} else if (strcmp(key, "allow_inline") == 0) {
			r = get_bool(ctx, v, key, &cfg->allow_inline);
		} else if (strcmp(key, "on_unsupported") == 0) {
			r = get_choice(ctx, v, key, unsupported, &choice);
			cfg->on_unsupported = (enum sg_on_unsupported)choice;
		} else if (strcmp(key, "tamper") == 0) {
			r = get_choice(ctx, v, key, tamper, &choice);
			cfg->tamper = (enum sg_tamper)choice;
		} else if (strcmp(key, "log") == 0) {
			r = parse_log(ctx, v, cfg);
		} else {
			r = at(ctx, root->object.key_pos[i], key, "unknown key; known keys: %s",
			       known_keys);
		}
		if (r < 0)
			return r;
	}

	if (!baseline)
		return 0;

	_cleanup_free_ struct sg_policy *policy = sg_xcalloc(1, sizeof(*policy));
	if (baseline->type == SG_JSON_STRING) {
		struct sg_profile_text text;
		_cleanup_free_ char *dir = baseline_dir(ctx, baseline->string.text, cfg);
		r = sg_profile_read(baseline->string.text, dir, &text, ctx->err);
		if (r == 0)
			r = sg_profile_parse(&text, policy, ctx->err);
		cfg->baseline_text = SG_TAKE(text.text);
		cfg->baseline_text_len = text.len;
		sg_profile_text_free(&text);
		if (r < 0) {
			sg_err_prefix(ctx->err, "%s:%u:%u: baseline", ctx->path, baseline->pos.line,
				      baseline->pos.col);
			return r;
		}
		cfg->baseline_label = sg_xasprintf("profile %s", baseline->string.text);
	} else {
		r = parse_inline_baseline(ctx, baseline, policy);
		if (r < 0)
			return r;
		cfg->baseline_label = sg_xstrdup("inline policy");
	}
	cfg->baseline = SG_TAKE(policy);
	return 0;
}

static void set_defaults(struct sg_node_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->profiles_dir = sg_xstrdup(SG_DEFAULT_PROFILES_DIR);
	cfg->allow_inline = true;
	cfg->on_unsupported = SG_UNSUPPORTED_FAIL;
	cfg->tamper = SG_TAMPER_WARN;
	cfg->log_syslog = true;
	cfg->log_debug = false;
}

/* Parses @*text (taken: it becomes out->text) into @out, which has the defaults. */
static int parse_text(const char *path, char **text, size_t len,
		      const struct sg_config_lookup *lookup, struct sg_node_config *out,
		      struct sg_err *err)
{
	out->path = sg_xstrdup(path);
	_cleanup_json_ struct sg_json *root = NULL;
	int r = sg_json_parse(*text, len, path, &root, err);
	if (r >= 0) {
		struct config_ctx ctx = {
		    .path = path, .text = *text, .len = len, .lookup = lookup, .err = err};
		r = parse_config(&ctx, root, out);
	}
	if (r < 0) {
		sg_node_config_free(out);
		return r;
	}
	out->text = SG_TAKE(*text);
	out->text_len = len;
	return 0;
}

int sg_node_config_load(const char *explicit_path, struct sg_node_config *out, struct sg_err *err)
{
	const char *env = getenv(SG_CONFIG_ENV);
	const char *path = explicit_path;
	bool optional = false;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (!path && env && env[0])
		path = env;
	if (!path) {
		path = SG_DEFAULT_CONFIG;
		optional = true;
	}

	set_defaults(out);

	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT && optional)
		return 0;
	if (fd < 0) {
		int e = errno;
		const char *named_by = explicit_path ? "--config"
				       : optional    ? "the default path"
						     : SG_CONFIG_ENV;
		sg_node_config_free(out);
		return sg_input_error(err,
				      "%s: cannot open the node configuration (named by %s): %s; "
				      "create it or point to an existing file",
				      path, named_by, strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sg_node_config_free(out);
		return sg_input_error(err, "%s: the node configuration is not a regular file",
				      path);
	}
	r = sg_read_fd(fd, path, SG_CONFIG_MAX_BYTES, &text, &len, err);
	if (r < 0) {
		sg_node_config_free(out);
		return r;
	}
	return parse_text(path, &text, len, NULL, out, err);
}

int sg_node_config_parse(const char *origin, const char *text, size_t len,
			 const struct sg_config_lookup *lookup, struct sg_node_config *out,
			 struct sg_err *err)
{
	_cleanup_free_ char *copy = sg_xmalloc(len + 1);

	memcpy(copy, text, len);
	copy[len] = '\0';
	set_defaults(out);
	return parse_text(origin, &copy, len, lookup, out, err);
}

void sg_node_config_free(struct sg_node_config *config)
{
	if (!config)
		return;
	if (config->baseline) {
		sg_policy_free(config->baseline);
		free(config->baseline);
	}
	free(config->path);
	free(config->text);
	free(config->baseline_text);
	free(config->baseline_label);
	free(config->profiles_dir);
	memset(config, 0, sizeof(*config));
}
