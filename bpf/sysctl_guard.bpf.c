// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * sysctl-guard's cgroup sysctl program: runs on every read() and write() of
 * /proc/sys by a task of the guarded cgroup and decides it from the compiled
 * policy tables (sysctl_guard.h). Returning 0 makes the syscall fail with
 * EPERM; a rewrite replaces the value the kernel stores.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SG_INLINE      __always_inline
#define SG_CONFIG_QUAL volatile
#define SG_SUBPROG     __attribute__((noinline))

#include "sysctl_guard.h"

/* Set by the loader before load; the verifier sees the constants. */
const volatile struct sg_config config = {};

/* Maps are sized by the loader to the compiled policy. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct sg_exact_key);
	__type(value, __u32);
} exact_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dfa_next SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dfa_accept SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sg_rule_entry);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct sg_value_hash_key);
	__type(value, __u8);
} rule_values SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Read by userspace only (status); the program never touches them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 512); /* struct sg_guard_meta */
} meta SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SG_NAME_MAX);
} rule_names SEC(".maps");

struct sg_env {
	int unused;
};

static SG_INLINE const volatile struct sg_config *sg_env_config(struct sg_env *env)
{
	return &config;
}

static SG_INLINE const struct sg_rule_entry *sg_env_rule(struct sg_env *env, __u32 rule)
{
	return bpf_map_lookup_elem(&rules, &rule);
}

static SG_INLINE __u32 sg_env_exact(struct sg_env *env, const struct sg_exact_key *key)
{
	__u32 *rule = bpf_map_lookup_elem(&exact_names, key);
	return rule ? *rule : SG_NO_RULE;
}

static SG_INLINE __u32 sg_env_step(struct sg_env *env, __u32 state, __u32 byte_class)
{
	__u32 key = state * config.n_classes + byte_class;
	__u32 *next = bpf_map_lookup_elem(&dfa_next, &key);
	return next ? *next : SG_DEAD_STATE;
}

static SG_INLINE __u32 sg_env_accept(struct sg_env *env, __u32 state)
{
	__u32 *rule = bpf_map_lookup_elem(&dfa_accept, &state);
	return rule ? *rule : SG_NO_RULE;
}

static SG_INLINE int sg_env_has_value(struct sg_env *env, const struct sg_value_hash_key *key)
{
	return bpf_map_lookup_elem(&rule_values, key) != NULL;
}

static SG_INLINE long sg_env_strtol(const char *buf, __u32 len, long *res)
{
	return bpf_strtol(buf, len, 0, res);
}

/*
 * The values hash key, copied here from the config at load time. Writable
 * data, so the verifier does not know it: with a known key it would follow
 * the hash's constants down every path of the hashing loop.
 */
__u64 hash_key[2] = {};

#include "sysctl_guard_decide.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sg_scratch);
} scratch SEC(".maps");

static SG_INLINE void count(__u32 row, __u32 verdict)
{
	__u32 key = sg_counter_index(row, verdict);
	__u64 *n = bpf_map_lookup_elem(&counters, &key);
	if (n)
		*n += 1;
}

/* Copies the value being written into s->cur; a longer one is marked, not cut. */
static SG_INLINE void load_new_value(struct bpf_sysctl *ctx, struct sg_scratch *s)
{
	long n = bpf_sysctl_get_new_value(ctx, s->cur, SG_VALUE_MAX);

	s->cur_too_long = n < 0;
	s->cur_len = n < 0 ? 0 : (__u32)n;
	s->written_len = s->cur_len;
	if (n < 0)
		s->cur[0] = '\0';
}

SEC("cgroup/sysctl")
int sysctl_guard(struct bpf_sysctl *ctx)
{
	struct sg_env env = {};
	struct sg_result res;
	__u32 zero = 0, write = ctx->write;
	struct sg_scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s)
		return 0;
	__builtin_memset(&s->key, 0, sizeof(s->key));
	if (bpf_sysctl_get_name(ctx, s->key.name, sizeof(s->key.name), 0) < 0) {
		/* Longer than any name a policy can hold: fail closed. */
		count(config.n_rules + config.n_layers, SG_VERDICT_DENY);
		return 0;
	}
	if (write) {
		load_new_value(ctx, s);
		s->hash_key[0] = hash_key[0];
		s->hash_key[1] = hash_key[1];
	}

	sg_decide(&env, s, write, ctx->file_pos, &res);
	count(res.row, res.verdict);

	if (res.verdict == SG_VERDICT_DENY)
		return 0;
	if (res.rewritten) {
		/* The length of the string, never the buffer: the kernel stores what it gets. */
		__u32 len = s->cur_len;
		if (len == 0 || len >= SG_VALUE_MAX)
			return 0;
		ctx->file_pos = 0;
		if (bpf_sysctl_set_new_value(ctx, s->cur, ((len - 1) & (SG_VALUE_MAX - 1)) + 1) < 0)
			return 0;
	}
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
