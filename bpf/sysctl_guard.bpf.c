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

/* Shared by every guard on the node: the loader reuses the pinned one. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Learning: every name, access and value seen, by guarded cgroup; filled on demand. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct sg_seen_key);
	__type(value, __u64);
} seen SEC(".maps");

/* What belongs to one guarded cgroup (see sysctl_guard.h). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct sg_guard_storage);
} guard SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct sg_guard_totals);
} totals SEC(".maps");

static SG_INLINE void count(__u32 row, __u32 verdict)
{
	__u32 key = sg_counter_index(row, verdict);
	__u64 *n = bpf_map_lookup_elem(&counters, &key);
	struct sg_guard_totals *t = bpf_get_local_storage(&totals, 0);

	if (n)
		*n += 1;
	t->verdicts[verdict & (SG_VERDICT_COUNT - 1)] += 1;
}

static SG_INLINE int wants_event(const struct sg_guard_storage *g, const struct sg_result *res,
				 int write)
{
	__u32 policy = g->events | (config.audit_events ? SG_EVENTS_AUDIT_WRITES : 0);

	if (res->verdict != SG_VERDICT_ALLOW)
		return 1;
	if (write)
		return policy & (SG_EVENTS_ALL_WRITES | SG_EVENTS_AUDIT_WRITES);
	return policy & SG_EVENTS_READS;
}

/* Reports a decision; a full ring buffer is counted, never silent. */
static SG_INLINE void emit_event(struct bpf_sysctl *ctx, struct sg_scratch *s,
				 const struct sg_guard_storage *g, const struct sg_result *res,
				 int write)
{
	struct sg_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		struct sg_guard_totals *t = bpf_get_local_storage(&totals, 0);
		t->events_dropped += 1;
		return;
	}
	e->version = SG_EVENT_VERSION;
	e->verdict = res->verdict;
	e->reason = res->reason;
	e->write = write;
	e->rewritten = res->rewritten;
	e->rule = res->rule;
	e->layer = res->layer;
	e->time_ns = bpf_ktime_get_boot_ns();
	e->guard_cgroup_id = g->cgroup_id;
	e->pid = 0;
	e->comm[0] = '\0';
	if (config.task_helpers) {
		e->pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		e->cgroup_id = bpf_get_current_cgroup_id();
	} else {
		e->cgroup_id = g->cgroup_id;
	}
	__builtin_memcpy(e->name, s->key.name, sizeof(e->name));
	if (bpf_sysctl_get_current_value(ctx, e->current_value, sizeof(e->current_value)) < 0)
		e->current_value[0] = '\0';
	e->value_truncated = 0;
	e->new_value[0] = '\0';
	e->final_value[0] = '\0';
	if (write && bpf_sysctl_get_new_value(ctx, e->new_value, sizeof(e->new_value)) < 0)
		e->value_truncated = 1;
	if (res->rewritten)
		__builtin_memcpy(e->final_value, s->cur, sizeof(e->final_value));
	bpf_ringbuf_submit(e, 0);
}

/* Learning: what the workload reads and writes, with the values written. */
static SG_INLINE void remember(struct bpf_sysctl *ctx, struct sg_scratch *s,
			       const struct sg_guard_storage *g, int write)
{
	__u64 one = 1;

	__builtin_memset(&s->seen, 0, sizeof(s->seen));
	s->seen.guard = g->cgroup_id;
	s->seen.write = write;
	__builtin_memcpy(s->seen.name, s->key.name, sizeof(s->seen.name));
	if (write && bpf_sysctl_get_new_value(ctx, s->seen.value, sizeof(s->seen.value)) < 0)
		s->seen.value[0] = '\0';
	bpf_map_update_elem(&seen, &s->seen, &one, BPF_ANY);
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
	/*
	 * The program runs in syscall context with migration, not preemption,
	 * disabled: another task on this CPU may run it meanwhile and reuse the
	 * scratch space. Each run marks it; a run that finds its mark gone denies.
	 */
	__u64 owner = bpf_ktime_get_ns();
	s->owner = owner;
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

	struct sg_guard_storage *g = bpf_get_local_storage(&guard, 0);
	if (g->learn)
		remember(ctx, s, g, write);
	sg_decide(&env, s, write, ctx->file_pos, &res);
	count(res.row, res.verdict);
	if (wants_event(g, &res, write))
		emit_event(ctx, s, g, &res, write);

	if (res.verdict == SG_VERDICT_DENY || s->owner != owner)
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
	return s->owner == owner;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
