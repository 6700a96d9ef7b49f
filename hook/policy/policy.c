// SPDX-License-Identifier: Apache-2.0
/*
 * Policy parsing and validation. Every message reads
 * "ORIGIN:LINE:COL: JSON.PATH: what is wrong", pointing at the offending
 * value (or key).
 */
#include "policy/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/siphash.h"
#include "base/util.h"
#include "policy/name.h"

struct ctx {
	const char *origin;
	struct sg_err *err;
	struct sg_arena *strings; /* the policy's */
};

/*
 * Where a value sits, as "rules[3].range[0]". Only a message needs the text,
 * so it is a chain on the stack, formatted on error: writing it out for every
 * field took longer than the rest of parsing a policy.
 */
struct path {
	const struct path *parent;
	const char *key; /* a member's name, or NULL for element @index of an array */
	size_t index;
};

#define PATH_KEY(up, name) ((struct path){.parent = (up), .key = (name)})
#define PATH_INDEX(up, i)  ((struct path){.parent = (up), .index = (i)})
#define PATH_TOP(name)	   PATH_KEY(NULL, name)

static void format_path(const struct path *p, char *out, size_t cap)
{
	size_t len;

	out[0] = '\0';
	if (p->parent)
		format_path(p->parent, out, cap);
	len = strlen(out);
	if (!p->key)
		snprintf(out + len, cap - len, "[%zu]", p->index);
	else
		snprintf(out + len, cap - len, "%s%s", p->parent ? "." : "", p->key);
}

__attribute__((format(printf, 4, 5))) static int invalid(const struct ctx *c,
							 const struct sg_pos *pos,
							 const struct path *path, const char *fmt,
							 ...)
{
	char what[512], where[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	format_path(path, where, sizeof(where));
	return sg_input_error(c->err, "%s:%u:%u: %s: %s", c->origin, pos->line, pos->col, where,
			      what);
}

static int expect_type(const struct ctx *c, const struct sg_json *v, enum sg_json_type type,
		       const struct path *path)
{
	if (v->type == type)
		return 0;
	return invalid(c, &v->pos, path, "expected %s %s, got %s",
		       type == SG_JSON_ARRAY || type == SG_JSON_OBJECT ? "an" : "a",
		       sg_json_type_name(type), sg_json_type_name(v->type));
}

/*
 * Rejects keys not in @allowed (NULL-terminated), naming the ones that are;
 * puts each member at its key's index of @found, when not NULL: one pass
 * over a rule's members, not one per key (the parser let no key repeat).
 */
static int check_keys(const struct ctx *c, const struct sg_json *object, const struct path *path,
		      const char *const *allowed, const struct sg_json **found)
{
	for (size_t i = 0; i < object->object.len; i++) {
		size_t k = 0;
		while (allowed[k] && !sg_same_word(allowed[k], object->object.keys[i]))
			k++;
		if (allowed[k]) {
			if (found)
				found[k] = object->object.values[i];
			continue;
		}
		char list[256] = "";
		for (const char *const *a = allowed; *a; a++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 a == allowed ? "" : ", ", *a);
		char key[72];
		sg_json_quote(object->object.keys[i], strlen(object->object.keys[i]), key,
			      sizeof(key));
		return invalid(c, &object->object.key_pos[i], path, "unknown key %s (expected %s)",
			       key, list);
	}
	return 0;
}

static int parse_enum(const struct ctx *c, const struct sg_json *v, const struct path *path,
		      const char *const *names, size_t n, int *out)
{
	int r = expect_type(c, v, SG_JSON_STRING, path);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (sg_same_word(v->string.text, names[i])) {
			*out = (int)i;
			return 0;
		}
	}
	char list[128] = "";
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 names[i]);
	char quoted[72];
	sg_json_quote(v->string.text, v->string.len, quoted, sizeof(quoted));
	return invalid(c, &v->pos, path, "%s is not one of %s", quoted, list);
}

static const char *const access_names[] = {"none", "read", "read-write"};
static const char *const mode_names[] = {"enforce", "audit"};
static const char *const violation_names[] = {"deny", "clamp"};

const char *sg_access_name(enum sg_access access)
{
	return (unsigned)access < SG_ARRAY_SIZE(access_names) ? access_names[access] : "unknown";
}

const char *sg_mode_name(enum sg_mode mode)
{
	return (unsigned)mode < SG_ARRAY_SIZE(mode_names) ? mode_names[mode] : "unknown";
}

static int is_value_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

int sg_value_normalise(const char *value, size_t len, char *out, size_t cap)
{
	size_t j = 0;
	bool pending_space = false, newline = false, spliced = false;

	if (cap == 0)
		return -E2BIG;
	/* j never passes i, so @out may be @value. */
	for (size_t i = 0; i < len && value[i]; i++) {
		if (is_value_space(value[i])) {
			pending_space = j > 0;
			newline |= value[i] == '\n';
			continue;
		}
		spliced |= newline;
		if (pending_space) {
			if (j + 1 >= cap)
				return -E2BIG;
			out[j++] = ' ';
			pending_space = false;
		}
		if (j + 1 >= cap)
			return -E2BIG;
		out[j++] = value[i];
	}
	/* The mark sg_hash_cur (bpf/sysctl_guard_decide.h) hashes too. */
	if (spliced) {
		if (j + 1 >= cap)
			return -E2BIG;
		out[j++] = '\n';
	}
	out[j] = '\0';
	return (int)j;
}

void sg_value_spell(const char *normalised, char *out, size_t cap)
{
	const size_t len = strlen(normalised);

	if (cap == 0)
		return;
	if (len == 0 || normalised[len - 1] != '\n') {
		snprintf(out, cap, "%s", normalised);
		return;
	}
	/* The marked newline goes back before the last token: "a b\n" is "a\nb", "x\n" "\nx". */
	const char *last_space = memrchr(normalised, ' ', len - 1);
	if (last_space)
		snprintf(out, cap, "%.*s\n%.*s", (int)(last_space - normalised), normalised,
			 (int)(len - 2 - (size_t)(last_space - normalised)), last_space + 1);
	else
		snprintf(out, cap, "\n%.*s", (int)(len - 1), normalised);
}

static int parse_values(const struct ctx *c, const struct sg_json *v, const struct path *path,
			struct sg_rule *rule)
{
	char norm[SG_VALUE_MAX];
	int r = expect_type(c, v, SG_JSON_ARRAY, path);
	if (r < 0)
		return r;
	if (v->array.len == 0)
		return invalid(c, &v->pos, path, "must list at least one value");
	rule->values = sg_arena_alloc(c->strings, v->array.len * sizeof(char *));
	for (size_t i = 0; i < v->array.len; i++) {
		const struct sg_json *item = v->array.items[i];
		const struct path item_path = PATH_INDEX(path, i);
		r = expect_type(c, item, SG_JSON_STRING, &item_path);
		if (r < 0)
			return r;
		int n = sg_value_normalise(item->string.text, item->string.len, norm, sizeof(norm));
		if (n < 0)
			return invalid(c, &item->pos, &item_path, "longer than %d bytes",
				       SG_VALUE_MAX - 1);
		/* n == 0: "" (or whitespace), the value of a write of no bytes or a newline */
		rule->values[rule->n_values++] = sg_arena_strndup(c->strings, norm, (size_t)n);
	}
	return 0;
}

static int parse_int(const struct ctx *c, const struct sg_json *v, const struct path *path,
		     int64_t *out)
{
	int r = expect_type(c, v, SG_JSON_NUMBER, path);
	if (r < 0)
		return r;
	if (!v->number.is_integer)
		return invalid(c, &v->pos, path, "%s is not an integer between %lld and %lld",
			       v->number.text, (long long)INT64_MIN, (long long)INT64_MAX);
	*out = v->number.integer;
	return 0;
}

/* [min, max] */
static int parse_pair(const struct ctx *c, const struct sg_json *v, const struct path *path,
		      struct sg_range *out)
{
	const struct path min_path = PATH_INDEX(path, 0), max_path = PATH_INDEX(path, 1);
	int r = expect_type(c, v, SG_JSON_ARRAY, path);
	if (r < 0)
		return r;
	if (v->array.len != 2)
		return invalid(c, &v->pos, path, "expected [min, max], got %zu elements",
			       v->array.len);
	r = parse_int(c, v->array.items[0], &min_path, &out->min);
	if (r < 0)
		return r;
	r = parse_int(c, v->array.items[1], &max_path, &out->max);
	if (r < 0)
		return r;
	if (out->min > out->max)
		return invalid(c, &v->pos, path, "min %lld is greater than max %lld",
			       (long long)out->min, (long long)out->max);
	return 0;
}

/* [min, max] for every field, or [[min, max], ...] one per field. */
static int parse_range(const struct ctx *c, const struct sg_json *v, const struct path *path,
		       struct sg_rule *rule)
{
	int r = expect_type(c, v, SG_JSON_ARRAY, path);
	if (r < 0)
		return r;
	if (v->array.len == 0)
		return invalid(c, &v->pos, path, "expected [min, max] or [[min, max], ...]");
	if (v->array.items[0]->type != SG_JSON_ARRAY) {
		rule->ranges = sg_arena_alloc(c->strings, sizeof(*rule->ranges));
		rule->n_ranges = 1;
		return parse_pair(c, v, path, &rule->ranges[0]);
	}
	if (v->array.len > SG_FIELDS_MAX)
		return invalid(c, &v->pos, path, "%zu fields; at most %d can be constrained",
			       v->array.len, SG_FIELDS_MAX);
	rule->range_per_field = true;
	rule->ranges = sg_arena_alloc(c->strings, v->array.len * sizeof(*rule->ranges));
	for (size_t i = 0; i < v->array.len; i++) {
		const struct path item_path = PATH_INDEX(path, i);
		r = parse_pair(c, v->array.items[i], &item_path, &rule->ranges[i]);
		if (r < 0)
			return r;
		rule->n_ranges++;
	}
	return 0;
}

static int parse_name(const struct ctx *c, const struct sg_json *v, const struct path *path,
		      struct sg_rule *rule)
{
	char pattern[SG_NAME_MAX];
	/*
	 * Unset (code 0: the first error wins) without zeroing its 1 KiB message
	 * a rule; sg_name_normalise writes the message when it fails.
	 */
	struct sg_err name_err;
	name_err.code = 0;
	int r = expect_type(c, v, SG_JSON_STRING, path);
	if (r < 0)
		return r;
	if (v->string.len == 0)
		return invalid(c, &v->pos, path, "empty name");
	if (sg_name_normalise_n(v->string.text, v->string.len, pattern, sizeof(pattern),
				&name_err) < 0)
		return invalid(c, &v->pos, path, "%s", name_err.msg);
	/* Normalising keeps the length; the parser refused NULs inside strings. */
	rule->name = sg_arena_strndup(c->strings, v->string.text, v->string.len);
	rule->pattern = sg_arena_strndup(c->strings, pattern, v->string.len);
	rule->name_len = (uint16_t)v->string.len; /* < SG_NAME_MAX: normalised */
	rule->is_literal = sg_pattern_is_literal_n(pattern, v->string.len);
	return 0;
}

static int parse_rule(const struct ctx *c, const struct sg_json *v, const struct path *path,
		      struct sg_rule *rule)
{
	enum { NAME, ACCESS, VALUES, RANGE, ON_VIOLATION, REWRITE, HOST_NAMESPACE, N_KEYS };
	static const char *const keys[N_KEYS + 1] = {
	    "name", "access", "values", "range", "on_violation", "rewrite", "allow_host_namespace",
	    NULL};
	const struct path name_path = PATH_KEY(path, "name"),
			  access_path = PATH_KEY(path, "access"),
			  values_path = PATH_KEY(path, "values"),
			  range_path = PATH_KEY(path, "range"),
			  violation_path = PATH_KEY(path, "on_violation"),
			  rewrite_path = PATH_KEY(path, "rewrite"),
			  host_path = PATH_KEY(path, "allow_host_namespace");
	const struct sg_json *m[N_KEYS] = {NULL};
	int r, access = 0, violation = 0;

	rule->pos = v->pos;
	r = expect_type(c, v, SG_JSON_OBJECT, path);
	if (r == 0)
		r = check_keys(c, v, path, keys, m);
	if (r < 0)
		return r;

	if (!m[NAME])
		return invalid(c, &v->pos, path, "\"name\" is required");
	if ((r = parse_name(c, m[NAME], &name_path, rule)) < 0)
		return r;
	if (!m[ACCESS])
		return invalid(c, &v->pos, path,
			       "\"access\" is required (none, read or read-write)");
	if ((r = parse_enum(c, m[ACCESS], &access_path, access_names, SG_ARRAY_SIZE(access_names),
			    &access)) < 0)
		return r;
	rule->access = (enum sg_access)access;

	const struct sg_json *values = m[VALUES];
	if (values && (r = parse_values(c, values, &values_path, rule)) < 0)
		return r;
	const struct sg_json *range = m[RANGE];
	if (range && (r = parse_range(c, range, &range_path, rule)) < 0)
		return r;
	const struct sg_json *on_violation = m[ON_VIOLATION];
	if (on_violation && (r = parse_enum(c, on_violation, &violation_path, violation_names,
					    SG_ARRAY_SIZE(violation_names), &violation)) < 0)
		return r;
	rule->on_violation = (enum sg_on_violation)violation;
	const struct sg_json *rewrite = m[REWRITE];
	if (rewrite) {
		if ((r = expect_type(c, rewrite, SG_JSON_STRING, &rewrite_path)) < 0)
			return r;
		if (rewrite->string.len == 0)
			return invalid(c, &rewrite->pos, &rewrite_path, "empty rewrite value");
		if (rewrite->string.len > SG_VALUE_MAX - 1)
			return invalid(c, &rewrite->pos, &rewrite_path, "longer than %d bytes",
				       SG_VALUE_MAX - 1);
		rule->rewrite =
		    sg_arena_strndup(c->strings, rewrite->string.text, rewrite->string.len);
	}

	const struct sg_json *host = m[HOST_NAMESPACE];
	if (host) {
		if ((r = expect_type(c, host, SG_JSON_BOOL, &host_path)) < 0)
			return r;
		rule->allow_host_namespace = host->boolean;
	}

	/* Constraints only make sense where writes are allowed. */
	const struct sg_json *constraint = values	  ? values
					   : range	  ? range
					   : on_violation ? on_violation
					   : rewrite	  ? rewrite
							  : host;
	if (constraint && rule->access != SG_ACCESS_READ_WRITE)
		return invalid(c, &constraint->pos, path,
			       "values, range, on_violation, rewrite and allow_host_namespace need "
			       "access \"read-write\" (access is \"%s\")",
			       sg_access_name(rule->access));
	if (values && range)
		return invalid(c, &range->pos, path, "use either values or range, not both");
	if (rule->on_violation == SG_VIOLATION_CLAMP && !range)
		return invalid(c, &on_violation->pos, path, "on_violation \"clamp\" needs a range");
	return 0;
}

__attribute__((format(printf, 2, 3))) static void warn(struct sg_policy *p, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	/* Doubling at each power of two: a policy may warn about every one of SG_MAX_RULES rules.
	 */
	size_t n = p->n_warnings;
	if ((n & (n - 1)) == 0)
		p->warnings = sg_xrealloc(p->warnings, n ? 2 * n : 1, sizeof(char *));
	p->warnings[p->n_warnings++] = msg;
}

static void free_warnings(struct sg_policy *p)
{
	for (size_t i = 0; i < p->n_warnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	p->warnings = NULL;
	p->n_warnings = 0;
}

/*
 * A rule whose pattern an earlier rule already has can never win: equal
 * patterns tie on everything but their order. Found with a hash table of the
 * first rule of each pattern, not by comparing every pair: a policy may have
 * SG_MAX_RULES rules. Warnings come in rule order.
 */
void sg_policy_find_shadowed(struct sg_policy *p)
{
	free_warnings(p); /* those of an earlier call */
	size_t cap = 1;
	while (cap < 2 * p->n_rules)
		cap <<= 1;
	/* The first rule of each pattern seen, plus one; 0: a free slot. */
	_cleanup_free_ uint32_t *first_of = sg_xcalloc(cap, sizeof(uint32_t));

	for (size_t i = 0; i < p->n_rules; i++) {
		const char *pattern = p->rules[i].pattern;
		size_t k = (size_t)sg_table_hash(pattern, strlen(pattern)) & (cap - 1);
		for (; first_of[k]; k = (k + 1) & (cap - 1))
			if (strcmp(p->rules[first_of[k] - 1].pattern, pattern) == 0)
				break;
		if (!first_of[k]) {
			first_of[k] = (uint32_t)i + 1; /* n_rules <= SG_MAX_RULES */
			continue;
		}
		p->rules[i].shadowed = true;
		warn(p,
		     "%s:%u:%u: rules[%zu]: never matches: shadowed by rules[%u], which has the "
		     "same name and is listed first",
		     p->origin, p->rules[i].pos.line, p->rules[i].pos.col, i, first_of[k] - 1);
	}
}

/*
 * The rules, made one at a time as the parser hands them out (json.h): the
 * first error is kept aside, and reported only if the JSON and the top level
 * are right, as when the rules were read from a whole tree.
 */
struct rule_stream {
	struct ctx c; /* its err: rule_err */
	struct sg_policy *out;
	size_t count, cap; /* rules seen; room in out->rules */
	int error;	   /* of the first rule in error, 0 while none */
	struct sg_err rule_err;
};

/*
 * Room for as many rules as a text of @bytes may hold, a rule to 32 bytes
 * (most take 40 to 100): the array is not grown, and moved, a dozen times
 * as it fills. Its pages are touched only as rules fill them.
 */
static void reserve_rules(struct rule_stream *s, size_t bytes)
{
	size_t cap = bytes / 32 + 16;

	s->cap = cap < SG_MAX_RULES ? cap : SG_MAX_RULES;
	s->out->rules = sg_xrealloc(NULL, s->cap, sizeof(*s->out->rules));
}

static void on_rule(const struct sg_json *item, size_t i, void *arg)
{
	struct rule_stream *s = arg;
	const struct path rules = PATH_TOP("rules"), rule_path = PATH_INDEX(&rules, i);
	struct sg_policy *out = s->out;

	s->count++;
	if (s->error || i >= SG_MAX_RULES)
		return;
	if (i == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		out->rules = sg_xrealloc(out->rules, s->cap, sizeof(*out->rules));
	}
	memset(&out->rules[i], 0, sizeof(out->rules[i]));
	out->n_rules = i + 1;
	s->error = parse_rule(&s->c, item, &rule_path, &out->rules[i]);
}

static int parse_policy(const struct ctx *c, const struct sg_json *root,
			const struct rule_stream *rules_seen, struct sg_policy *out)
{
	static const char *const keys[] = {"version", "description", "mode",
					   "default", "rules",	     NULL};
	const struct path top = PATH_TOP("(top level)"), version = PATH_TOP("version"),
			  description = PATH_TOP("description"), mode = PATH_TOP("mode"),
			  default_path = PATH_TOP("default"), rules = PATH_TOP("rules");
	const struct sg_json *f;
	int r, value = 0;

	r = expect_type(c, root, SG_JSON_OBJECT, &top);
	if (r == 0)
		r = check_keys(c, root, &top, keys, NULL);
	if (r < 0)
		return r;
	if (!(f = sg_json_get(root, "version")))
		return invalid(c, &root->pos, &top, "\"version\": 1 is required");
	if (f->type != SG_JSON_NUMBER || !f->number.is_integer || f->number.integer != 1)
		return invalid(c, &f->pos, &version, "this is policy version 1; got %s",
			       f->type == SG_JSON_NUMBER ? f->number.text
							 : sg_json_type_name(f->type));
	if ((f = sg_json_get(root, "description")) &&
	    (r = expect_type(c, f, SG_JSON_STRING, &description)) < 0)
		return r;
	out->mode = SG_MODE_ENFORCE;
	if ((f = sg_json_get(root, "mode"))) {
		if ((r = parse_enum(c, f, &mode, mode_names, SG_ARRAY_SIZE(mode_names), &value)) <
		    0)
			return r;
		out->mode = (enum sg_mode)value;
	}
	out->default_access = SG_ACCESS_READ;
	if ((f = sg_json_get(root, "default"))) {
		if ((r = parse_enum(c, f, &default_path, access_names, SG_ARRAY_SIZE(access_names),
				    &value)) < 0)
			return r;
		out->default_access = (enum sg_access)value;
	}
	if (!(f = sg_json_get(root, "rules")))
		return 0;
	if ((r = expect_type(c, f, SG_JSON_ARRAY, &rules)) < 0)
		return r;
	if (rules_seen->count > SG_MAX_RULES)
		return invalid(c, &f->pos, &rules, "%zu rules; at most %d are allowed",
			       rules_seen->count, SG_MAX_RULES);
	if (rules_seen->error) {
		sg_err_copy(c->err, &rules_seen->rule_err);
		return rules_seen->error;
	}
	if (!out->rules)
		out->rules = sg_xcalloc(0, sizeof(*out->rules));
	return 0;
}

/*
 * The policy of @text: its rules are made while it is parsed, so a large
 * policy's tree never holds them (json.h). Frees *@owned (the text, when
 * the caller gave it up) once parsed. Shadowed rules are looked for only
 * when asked (sg_policy_find_shadowed).
 */
static int parse_text(const char *text, size_t len, char **owned, const char *origin,
		      struct sg_policy *out, struct sg_err *err)
{
	struct sg_json *root = NULL;
	struct rule_stream rules = {.c = {.origin = origin, .strings = &out->strings}, .out = out};
	const struct sg_json_stream stream = {"rules", on_rule, &rules};
	const struct ctx c = {.origin = origin, .err = err, .strings = &out->strings};
	int r;

	memset(out, 0, sizeof(*out));
	rules.c.err = &rules.rule_err;
	reserve_rules(&rules, len);
	out->origin = sg_xstrdup(origin);
	if (len > SG_MAX_POLICY_BYTES)
		r = sg_input_error(err, "%s: larger than %u bytes", origin, SG_MAX_POLICY_BYTES);
	else
		r = sg_json_parse_stream(text, len, origin, &stream, &root, err);
	if (owned)
		free(SG_TAKE(*owned));
	if (r == 0)
		r = parse_policy(&c, root, &rules, out);
	sg_json_free(root);
	if (r < 0) {
		sg_policy_free(out);
		return r;
	}
	return 0;
}

int sg_policy_parse(const char *text, size_t len, const char *origin, struct sg_policy *out,
		    struct sg_err *err)
{
	return parse_text(text, len, NULL, origin, out, err);
}

int sg_policy_parse_taking(char **text, size_t len, const char *origin, struct sg_policy *out,
			   struct sg_err *err)
{
	return parse_text(*text, len, text, origin, out, err);
}

int sg_policy_load_file(const char *path, struct sg_policy *out, struct sg_err *err)
{
	char *text = NULL;
	size_t len;

	memset(out, 0, sizeof(*out));
	int r = sg_read_file(path, SG_MAX_POLICY_BYTES, &text, &len, err);
	if (r < 0)
		return r;
	return sg_policy_parse_taking(&text, len, path, out, err);
}

void sg_policy_free(struct sg_policy *policy)
{
	if (!policy)
		return;
	free(policy->rules);
	sg_arena_free(&policy->strings);
	free_warnings(policy);
	free(policy->origin);
	memset(policy, 0, sizeof(*policy));
}

static char *dup_or_null(struct sg_arena *a, const char *s)
{
	return s ? sg_arena_strdup(a, s) : NULL;
}

int sg_policy_copy(const struct sg_policy *src, struct sg_policy *dst)
{
	memset(dst, 0, sizeof(*dst));
	dst->origin = src->origin ? sg_xstrdup(src->origin) : NULL;
	dst->mode = src->mode;
	dst->default_access = src->default_access;
	dst->rules = sg_xcalloc(src->n_rules, sizeof(*dst->rules));
	dst->n_rules = src->n_rules;
	for (size_t i = 0; i < src->n_rules; i++) {
		const struct sg_rule *s = &src->rules[i];
		struct sg_rule *d = &dst->rules[i];
		*d = *s;
		d->name = dup_or_null(&dst->strings, s->name);
		d->pattern = dup_or_null(&dst->strings, s->pattern);
		d->rewrite = dup_or_null(&dst->strings, s->rewrite);
		d->values = sg_arena_alloc(&dst->strings, s->n_values * sizeof(char *));
		for (size_t v = 0; v < s->n_values; v++)
			d->values[v] = sg_arena_strdup(&dst->strings, s->values[v]);
		d->ranges = sg_arena_alloc(&dst->strings, s->n_ranges * sizeof(*d->ranges));
		if (s->n_ranges)
			memcpy(d->ranges, s->ranges, s->n_ranges * sizeof(*d->ranges));
	}
	dst->warnings = sg_xcalloc(src->n_warnings, sizeof(char *));
	dst->n_warnings = src->n_warnings;
	for (size_t i = 0; i < src->n_warnings; i++)
		dst->warnings[i] = sg_xstrdup(src->warnings[i]);
	return 0;
}
