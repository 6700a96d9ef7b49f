// SPDX-License-Identifier: Apache-2.0
/*
 * The userspace side of bpf/sysctl_guard_decide.h: the same decision over the
 * compiled tables in memory.
 */
#include "compile/eval.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#define SG_INLINE  inline
#define SG_SUBPROG static inline

struct sg_env {
	const struct sg_compiled *c;
	__u32 host_namespaces;
};

static inline const struct sg_config *sg_env_config(struct sg_env *env)
{
	return &env->c->config;
}

static inline const struct sg_rule_entry *sg_env_rule(struct sg_env *env, __u32 rule)
{
	return rule < env->c->config.n_rules ? &env->c->rules[rule] : NULL;
}

static inline const struct sg_field_bounds *sg_env_bounds(struct sg_env *env, __u32 element)
{
	const struct sg_compiled *c = env->c;
	return element >= c->config.n_rules && element - c->config.n_rules < c->n_bounds
		   ? &c->bounds[element - c->config.n_rules]
		   : NULL;
}

static inline const struct sg_rule_text *sg_env_text(struct sg_env *env, __u32 text)
{
	return text < env->c->n_texts ? &env->c->texts[text] : NULL;
}

static inline __u32 sg_env_host_namespaces(struct sg_env *env)
{
	return env->host_namespaces;
}

static inline __u32 sg_env_exact(struct sg_env *env, const struct sg_exact_key *key)
{
	return sg_compiled_exact(env->c, key->layer, key->name);
}

static inline __u32 sg_env_step(struct sg_env *env, __u32 state, __u32 byte_class)
{
	const struct sg_dfa *dfa = &env->c->dfa;
	if (state >= dfa->n_states || byte_class >= dfa->n_classes)
		return SG_DEAD_STATE;
	return sg_dfa_next(dfa, state, byte_class);
}

static inline __u32 sg_env_accept(struct sg_env *env, __u32 state)
{
	return state < env->c->dfa.n_states ? env->c->dfa.accept[state] : SG_NO_RULE;
}

static inline int sg_env_has_value(struct sg_env *env, const struct sg_value_hash_key *key);
static inline __u32 sg_env_match(struct sg_env *env, const struct sg_exact_key *key, __u32 start);

/* The caller put the value being written in the scratch space before deciding. */
struct sg_scratch;
static inline void sg_env_load_value(struct sg_env *env, struct sg_scratch *s)
{
	(void)env;
	(void)s;
}

#include "bpf/sysctl_guard_decide.h"

uint64_t sg_value_hash(const __u64 key[2], const char *normalised)
{
	struct sg_hash h;
	sg_hash_init(&h, key);
	for (const char *p = normalised; *p; p++)
		sg_hash_byte(&h, (unsigned char)*p);
	return sg_hash_final(&h);
}

/* The kernel looks the hash up; here the rule's few values are hashed in turn. */
static inline int sg_env_has_value(struct sg_env *env, const struct sg_value_hash_key *key)
{
	const struct sg_compiled *c = env->c;
	for (size_t i = 0; i < c->n_values; i++)
		if (c->values[i].set == key->set &&
		    sg_value_hash(c->config.hash_key, c->values[i].value) == key->hash)
			return 1;
	return 0;
}

static inline __u32 sg_env_match(struct sg_env *env, const struct sg_exact_key *key, __u32 start)
{
	return sg_match_name(env, key, start);
}

static const char *const reasons[SG_REASON_COUNT] = {
    [SG_REASON_ACCESS] = "access level",
    [SG_REASON_NAME_TOO_LONG] = "name too long",
    [SG_REASON_FILE_POS] = "write not at file position 0 to a constrained rule",
    [SG_REASON_VALUE_TOO_LONG] = "value too long for a constrained rule",
    [SG_REASON_NOT_IN_VALUES] = "value not in the rule's values",
    [SG_REASON_NOT_INTEGERS] = "value is not a list of integers",
    [SG_REASON_TOO_MANY_FIELDS] = "more fields than the rule has ranges",
    [SG_REASON_OUT_OF_RANGE] = "a field is out of range",
    [SG_REASON_CLAMPED] = "clamped to the range",
    [SG_REASON_REWRITTEN] = "rewritten by the rule",
    [SG_REASON_NO_REWRITE] = "rewrite needed but this kernel ignores rewrites",
    [SG_REASON_PINNED] = "a linux.sysctl pair of the container config",
    [SG_REASON_LATER_REWRITE] = "a later layer rewrote or clamped it to a value this layer refuses",
    [SG_REASON_HOST_NAMESPACE] =
	"a write to a namespace shared with the host, which no allow_host_namespace rule permits",
};

const char *sg_reason_text(unsigned reason)
{
	return reason < SG_REASON_COUNT ? reasons[reason] : "unknown";
}

bool sg_reason_is_host_namespace(unsigned reason)
{
	return reason == SG_REASON_HOST_NAMESPACE;
}

/*
 * SG_REASON_ACCESS said for people: what the access level allowed or
 * refused, or for a constrained write that passed, the check it passed.
 * An audit verdict is what enforcing would have done.
 */
static const char *access_reason(const struct sg_compiled *c, bool write,
				 const struct sg_result *res)
{
	bool refused = res->verdict == SG_VERDICT_DENY || res->verdict == SG_VERDICT_AUDIT;
	uint8_t flags = res->rule != SG_NO_RULE ? c->rules[res->rule].flags : 0;

	if (!write)
		return refused ? "the access level does not allow reads"
			       : "the access level allows reads";
	if (refused)
		return "the access level does not allow writes";
	if (flags & SG_RULE_VALUES)
		return "the value is one of the rule's values";
	if (flags & SG_RULE_RANGE)
		return "every field is within the rule's range";
	return "the access level allows writes";
}

void sg_eval(const struct sg_compiled *c, const struct sg_access_req *req, struct sg_decision *out)
{
	struct sg_env env = {.c = c, .host_namespaces = req->host_namespaces};
	struct sg_scratch s;
	struct sg_result res;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	size_t name_len = strlen(req->name);
	if (name_len >= SG_NAME_MAX) {
		out->verdict = SG_VERDICT_DENY;
		out->rule = SG_NO_RULE;
		out->layer = -1;
		out->reason = sg_reason_text(SG_REASON_NAME_TOO_LONG);
		return;
	}
	memcpy(s.key.name, req->name, name_len);
	s.hash_key[0] = c->config.hash_key[0];
	s.hash_key[1] = c->config.hash_key[1];
	if (req->write) {
		/* bpf_sysctl_get_new_value: at most SG_VALUE_MAX - 1 bytes, else -E2BIG. */
		if (req->value_len >= SG_VALUE_MAX) {
			s.cur_too_long = 1;
		} else {
			memcpy(s.cur, req->value, req->value_len);
			s.cur_len = (__u32)req->value_len;
			s.written_len = s.cur_len;
		}
	}
	sg_decide(&env, &s, req->write, (__u32)req->file_pos, &res);

	out->verdict = res.verdict;
	out->rule = res.rule;
	out->layer = res.layer;
	out->reason = res.reason == SG_REASON_ACCESS ? access_reason(c, req->write, &res)
						     : sg_reason_text(res.reason);
	out->rewritten = res.rewritten;
	if (res.rewritten) {
		size_t n = strnlen(s.cur, sizeof(out->new_value) - 1);
		memcpy(out->new_value, s.cur, n);
		out->new_value[n] = '\0';
		out->new_len = n;
	}
}

uint32_t sg_namespace_of(const char *slash_name)
{
	struct sg_exact_key key;

	memset(&key, 0, sizeof(key));
	snprintf(key.name, sizeof(key.name), "%s", slash_name);
	return sg_name_namespace(&key);
}

static const char *const namespace_names[SG_NS_TYPES] = {"net", "uts", "ipc", "user", "pid"};

const char *sg_namespace_name(uint32_t ns)
{
	for (uint32_t i = 0; i < SG_NS_TYPES; i++)
		if (ns == 1u << i)
			return namespace_names[i];
	return "unknown";
}

int sg_namespace_parse_list(const char *text, uint32_t *ns)
{
	*ns = 0;
	if (strcmp(text, "none") == 0)
		return 0;
	if (strcmp(text, "all") == 0) {
		*ns = (1u << SG_NS_TYPES) - 1;
		return 0;
	}
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",");
		uint32_t i = 0;
		while (i < SG_NS_TYPES && (strlen(namespace_names[i]) != len ||
					   strncmp(p, namespace_names[i], len) != 0))
			i++;
		if (i == SG_NS_TYPES)
			return -EINVAL;
		*ns |= 1u << i;
		p += len + (p[len] == ',');
	}
	return 0;
}

unsigned sg_eval_scan_plain_decimal(const char *text, long long *value)
{
	struct sg_scratch s;
	__s64 v = 0;

	memset(&s, 0, sizeof(s));
	snprintf(s.cur, SG_VALUE_MAX, "%s", text);
	__u32 digits = sg_scan_plain_decimal(&s, &v);
	*value = v;
	return digits;
}

long sg_eval_scan_long(const char *text, long long *value)
{
	struct sg_scratch s;

	memset(&s, 0, sizeof(s));
	snprintf(s.cur, SG_VALUE_MAX, "%s", text);
	long r = sg_scan_long(&s, 0);
	if (r >= 0)
		*value = s.scanned;
	return r;
}
