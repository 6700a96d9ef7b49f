// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * sysctl-guard's cgroup sysctl program: runs on every read() and write() of
 * /proc/sys by a task of the guarded cgroup and decides it from the compiled
 * policy tables (sysctl_guard.h). Returning 0 makes the syscall fail with
 * EPERM; a rewrite replaces the value the kernel stores.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define SG_INLINE  __always_inline
#define SG_SUBPROG __attribute__((noinline))

#include "sysctl_guard.h"

/* Kernel features, set by the loader before load: the verifier sees them. */
const volatile struct sg_program_config program_config = {};

/*
 * A policy's tables are one map of its own, sized to it (sysctl_guard.h),
 * and its long exact names another; these outer maps hold them at the
 * policy's slot. The tables' map carries BPF_F_INNER_MAP so that each
 * policy's may have its own size, and BPF_F_MMAPABLE so that the loader
 * fills it with a copy. Its elements are byte arrays, never structs: the
 * loader makes a policy's maps without BTF, and before 6.2 the kernel's
 * inner-map check (bpf_map_meta_equal) compares where a map's value keeps a
 * bpf_timer, "none found" for a struct described by BTF and "not looked
 * for" without BTF, so each outer-map update failed with EINVAL (6.1).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SG_MAX_POLICIES);
	__type(key, __u32);
	__array(
	    values, struct {
		    __uint(type, BPF_MAP_TYPE_ARRAY);
		    __uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
		    __uint(max_entries, 1);
		    __type(key, __u32);
		    __type(value, __u8[SG_PAGE_SIZE]);
	    });
} policy_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SG_MAX_POLICIES);
	__type(key, __u32);
	__array(
	    values, struct {
		    __uint(type, BPF_MAP_TYPE_HASH);
		    __uint(max_entries, 1);
		    __type(key, struct sg_exact_key);
		    __type(value, __u32);
	    });
} policy_exact_long SEC(".maps");

/* The key policies are named under on this node (userspace only: tables.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} secret SEC(".maps");

/* Which policy holds each slot (its key): userspace claims slots here, atomically. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SG_MAX_POLICIES);
	__type(key, __u32);
	__type(value, char[SG_KEY_LEN]);
} slots SEC(".maps");

/* Policies by the digest of the inputs that made them (userspace only: guard.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SG_MAX_INPUTS);
	__type(key, __u64);
	__type(value, struct sg_inputs_entry);
} inputs SEC(".maps");

/* The tables of the policy deciding this access, and the access. */
struct sg_env {
	const struct sg_config *cfg;
	void *tables; /* the policy's map (sysctl_guard.h) */
	__u32 slot;
	__u32 name_len;	       /* of the name in scratch.key: which exact table holds it */
	__u32 value_loaded;    /* scratch.cur holds the value being written */
	__u32 host_namespaces; /* the guard's: enum sg_namespace */
	struct bpf_sysctl *ctx;
};

/*
 * Finds the policy's tables; 0 when it has none (then deny). Its long
 * names are found where they are read: a policy with none has no such map,
 * and its empty slot reads as no entry.
 */
static SG_INLINE int sg_env_open(struct sg_env *env, const struct sg_guard_storage *g)
{
	__u32 slot = g->slot;

	if (slot == 0)
		return 0; /* attached, policy not written yet */
	env->cfg = &g->config;
	env->slot = slot;
	env->host_namespaces = g->host_namespaces;
	env->tables = bpf_map_lookup_elem(&policy_tables, &slot);
	return env->tables != 0;
}

/*
 * Element @i of table @table, whose elements are 1 << @shift bytes: on the
 * page @i falls in, at its place there. The loader lays the tables out so
 * that every index the program can compute is inside its table
 * (hook/kernel/tables.c): the program does not check, as each check is a
 * branch in the DFA's loop and the verifier walks every one.
 */
static SG_INLINE void *sg_table_at(struct sg_env *env, __u32 table, __u32 i, __u32 shift)
{
	__u32 page = env->cfg->tables[table].first_page + (i >> (SG_PAGE_SHIFT - shift));
	char *p = bpf_map_lookup_elem(env->tables, &page);

	/* The mask keeps the element inside the page, as the verifier needs: it is already. */
	return p ? p + ((i << shift) & (SG_PAGE_SIZE - (1u << shift))) : 0;
}

static SG_INLINE const struct sg_config *sg_env_config(struct sg_env *env)
{
	return env->cfg;
}

static SG_INLINE __u32 sg_env_host_namespaces(struct sg_env *env)
{
	return env->host_namespaces;
}

static SG_INLINE const struct sg_rule_entry *sg_env_rule(struct sg_env *env, __u32 rule)
{
	return sg_table_at(env, SG_TABLE_RULES, rule, SG_RULES_SHIFT);
}

/* Bounds follow the rules in their table (sysctl_guard.h). */
static SG_INLINE const struct sg_field_bounds *sg_env_bounds(struct sg_env *env, __u32 element)
{
	return sg_table_at(env, SG_TABLE_RULES, element, SG_RULES_SHIFT);
}

/* NULL: deny. */
static SG_INLINE const struct sg_rule_text *sg_env_text(struct sg_env *env, __u32 text)
{
	return sg_table_at(env, SG_TABLE_TEXTS, text, SG_TEXTS_SHIFT);
}

static SG_INLINE int sg_short_key_equal(const struct sg_exact_short_key *a,
					const struct sg_exact_short_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 diff = 0;
	for (__u32 i = 0; i < SG_SHORT_KEY_WORDS; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/* The rule of a short name in its hashed table (sysctl_guard.h), or SG_NO_RULE. */
static SG_INLINE __u32 sg_exact_short(struct sg_env *env, const struct sg_exact_short_key *key)
{
	const __u64 hash = sg_exact_hash(key, env->cfg->table_seed);
	const __u32 tag = sg_exact_tag(hash);
	__u32 bucket = sg_home_bucket(hash, env->cfg->exact_homes);

#pragma clang loop unroll(disable)
	for (__u32 probe = 0; probe < SG_HASH_PROBES; probe++, bucket++) {
		const struct sg_exact_bucket *b =
		    sg_table_at(env, SG_TABLE_EXACT, bucket, SG_EXACT_SHIFT);
		if (!b)
			return SG_NO_RULE;
		for (__u32 way = 0; way < SG_HASH_WAYS; way++) {
			const struct sg_exact_slot *slot = &b->slot[way];
			/*
			 * Compared through a difference the compiler cannot fold
			 * back: a compare of the tags themselves would narrow @tag's
			 * range on one path, and the verifier would walk every slot
			 * once per combination of paths before it.
			 */
			__u32 differs = slot->tag ^ tag;
			asm volatile("" : "+r"(differs));
			if (slot->tag == 0)
				return SG_NO_RULE;
			if (differs == 0 && sg_short_key_equal(&slot->key, key))
				return slot->rule;
		}
	}
	return SG_NO_RULE;
}

/*
 * Long names are few: they stay in a kernel hash map. The asm statement
 * keeps the compiler from merging its lookup call with the short table's:
 * the verifier could then not tell which map the call is for, and the
 * program would call the generic lookup helper, some 25 ns slower.
 */
static SG_INLINE __u32 sg_env_exact(struct sg_env *env, const struct sg_exact_key *key)
{
	if (env->name_len < SG_SHORT_NAME_MAX)
		return sg_exact_short(env, &key->short_key);
	void *exact_long = bpf_map_lookup_elem(&policy_exact_long, &env->slot);
	if (!exact_long)
		return SG_NO_RULE; /* not made: the policy has no long name */
	__u32 *rule = bpf_map_lookup_elem(exact_long, key);
	asm volatile("%0 = %0" : "+r"(rule));
	return rule ? *rule : SG_NO_RULE;
}

/*
 * What the DFA holds for @state in @column (sysctl_guard.h): the element
 * owned by @state at its base plus the column, or the state's default; the
 * dead state, or no rule, when the state is not in the table (a table
 * shorter than its policy's DFA: then only exact rules and defaults
 * decide). @accept: the column of the rule accepted, whose default is
 * SG_NO_RULE.
 */
static SG_INLINE __u32 sg_dfa_entry(struct sg_env *env, __u32 state, __u32 column, int accept)
{
	__u32 *s = sg_table_at(env, SG_TABLE_DFA, state, SG_DFA_SHIFT);
	if (!s)
		return accept ? SG_NO_RULE : SG_DEAD_STATE;
	__u32 *e = sg_table_at(env, SG_TABLE_DFA, s[0] + column, SG_DFA_SHIFT);
	if (e && e[0] == sg_dfa_owner(state))
		return e[1];
	return accept ? SG_NO_RULE : s[1];
}

static SG_INLINE __u32 sg_env_step(struct sg_env *env, __u32 state, __u32 byte_class)
{
	return sg_dfa_entry(env, state, byte_class, 0);
}

static SG_INLINE __u32 sg_env_accept(struct sg_env *env, __u32 state)
{
	return sg_dfa_entry(env, state, sg_dfa_accept_column(env->cfg->n_classes), 1);
}

static SG_INLINE int sg_env_has_value(struct sg_env *env, const struct sg_value_hash_key *key)
{
	__u32 bucket =
	    sg_home_bucket(sg_value_slot_hash(key, env->cfg->table_seed), env->cfg->value_homes);

#pragma clang loop unroll(disable)
	for (__u32 probe = 0; probe < SG_HASH_PROBES; probe++, bucket++) {
		const struct sg_value_bucket *b =
		    sg_table_at(env, SG_TABLE_VALUES, bucket, SG_VALUES_SHIFT);
		if (!b)
			return 0;
		for (__u32 way = 0; way < SG_HASH_WAYS; way++) {
			const struct sg_value_hash_key *slot = &b->slot[way];
			if (slot->set == SG_NO_RULE)
				return 0;
			if (slot->set == key->set && slot->hash == key->hash)
				return 1;
		}
	}
	return 0;
}

/* Defined below, where struct sg_scratch is complete, and after sg_match_name. */
struct sg_scratch;
static SG_INLINE void sg_env_load_value(struct sg_env *env, struct sg_scratch *s);
static SG_INLINE __u32 sg_env_match(struct sg_env *env, const struct sg_exact_key *key,
				    __u32 start);

#include "sysctl_guard_decide.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sg_scratch);
} scratch SEC(".maps");

/*
 * sg_match_name as a global function: the verifier checks it once, with
 * unknown arguments, instead of on every path that reaches it, once per
 * layer. Its loop over the name's bytes would otherwise be most of the
 * program's verification, which Linux 6.1 caps at a million instructions.
 * The name is the scratch space's, which this run holds: before 6.2 a map
 * key cannot be a global function's argument.
 */
__attribute__((noinline)) __u32 sg_match_in_policy(__u32 slot, const struct sg_config *cfg,
						   __u32 name_len, __u32 start)
{
	struct sg_env env = {.cfg = cfg, .slot = slot, .name_len = name_len};
	/*
	 * The scratch space's key is 0, as env.value_loaded is: a key of its
	 * own took the 8 bytes by which 6.1 found this function's stack and
	 * its caller's together over 512.
	 */
	struct sg_scratch *s = bpf_map_lookup_elem(&scratch, &env.value_loaded);

	if (!cfg || !s)
		return SG_NO_RULE;
	env.tables = bpf_map_lookup_elem(&policy_tables, &slot);
	if (!env.tables)
		return SG_NO_RULE;
	return sg_match_name(&env, &s->key, start);
}

/* @key is the scratch space's (sg_find_rule). */
static SG_INLINE __u32 sg_env_match(struct sg_env *env, const struct sg_exact_key *key, __u32 start)
{
	(void)key;
	return sg_match_in_policy(env->slot, env->cfg, env->name_len, start);
}

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

/* The guard's own verdict totals; alone for a denial before any policy decided. */
static SG_INLINE void count_for_guard(struct sg_guard_storage *g, __u32 verdict)
{
	__sync_fetch_and_add(&g->verdicts[verdict & (SG_VERDICT_COUNT - 1)], 1);
}

/* The policy's per-rule counter and the guard's totals. */
static SG_INLINE void count(struct sg_env *env, struct sg_guard_storage *g, __u32 row,
			    __u32 verdict)
{
	__u32 key = sg_counter_index(row, verdict);
	__u64 *n = sg_table_at(env, SG_TABLE_COUNTERS, key, SG_COUNTERS_SHIFT);

	if (n)
		__sync_fetch_and_add(n, 1);
	count_for_guard(g, verdict);
}

static SG_INLINE int wants_event(const struct sg_guard_storage *g, const struct sg_result *res,
				 int write)
{
	__u32 policy = g->events | (g->config.audit_events ? SG_EVENTS_AUDIT_WRITES : 0);

	if (res->verdict != SG_VERDICT_ALLOW)
		return 1;
	if (write)
		return policy & (SG_EVENTS_ALL_WRITES | SG_EVENTS_AUDIT_WRITES);
	return policy & SG_EVENTS_READS;
}

/* Reports a decision; a full ring buffer is counted, never silent. */
static SG_INLINE void emit_event(struct bpf_sysctl *ctx, struct sg_scratch *s,
				 struct sg_guard_storage *g, const struct sg_result *res, int write)
{
	struct sg_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&g->events_dropped, 1);
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
	if (program_config.task_helpers) {
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
	/* -EINVAL: a write of no bytes, whose value is the empty string the helper left. */
	long got = write ? bpf_sysctl_get_new_value(ctx, e->new_value, sizeof(e->new_value)) : 0;
	if (got == -7) /* E2BIG */
		e->value_truncated = 1;
	if (res->rewritten)
		__builtin_memcpy(e->final_value, s->cur, sizeof(e->final_value));
	bpf_ringbuf_submit(e, 0);
}

/*
 * Learning: what the workload reads and writes, with the values written,
 * taken before the decision (which may rewrite the value)...
 */
static SG_INLINE void observe(struct bpf_sysctl *ctx, struct sg_scratch *s,
			      const struct sg_guard_storage *g, int write)
{
	__builtin_memset(&s->seen, 0, sizeof(s->seen));
	s->seen.guard = g->cgroup_id;
	s->seen.write = (__u8)write;
	__builtin_memcpy(s->seen.name, s->key.name, sizeof(s->seen.name));
	/* -EINVAL: a write of no bytes; -E2BIG: a longer one than value[] holds, cut. */
	long got = write ? bpf_sysctl_get_new_value(ctx, s->seen.value, sizeof(s->seen.value)) : 0;
	if (got < 0)
		s->seen.value[0] = '\0';
	s->seen.value_too_long = got == -7; /* E2BIG */
}

/*
 * ... and kept with its verdict: a policy learned from what the guard
 * denied, rewrote or clamped would allow what the guard did not.
 */
static SG_INLINE void remember(struct sg_scratch *s, const struct sg_result *res)
{
	__u64 one = 1;

	s->seen.verdict = (__u8)res->verdict;
	bpf_map_update_elem(&seen, &s->seen, &one, BPF_ANY);
}

/*
 * Copies the value being written into s->cur, once; a longer one is marked,
 * not cut. With it, the key its hash needs: the policy's. A write of no
 * bytes has no new value: the helper says -EINVAL, and it is the empty
 * string (runc writes a linux.sysctl pair of "" that way).
 */
static SG_INLINE void sg_env_load_value(struct sg_env *env, struct sg_scratch *s)
{
	if (env->value_loaded)
		return;
	env->value_loaded = 1;
	long n = bpf_sysctl_get_new_value(env->ctx, s->cur, SG_VALUE_MAX);
	if (n == -22) /* EINVAL */
		n = 0;
	s->cur_too_long = n < 0;
	s->cur_len = n < 0 ? 0 : (__u32)n;
	s->written_len = s->cur_len;
	if (n < 0)
		s->cur[0] = '\0';
	s->hash_key[0] = env->cfg->hash_key[0];
	s->hash_key[1] = env->cfg->hash_key[1];
}

/* Decides one access, with the scratch space @s this run holds; 1 allows it. */
static SG_INLINE int guard_access(struct bpf_sysctl *ctx, struct sg_env *env,
				  struct sg_guard_storage *g, struct sg_scratch *s)
{
	struct sg_result res;
	__u32 write = ctx->write;

	__builtin_memset(&s->key, 0, sizeof(s->key));
	long name_len = bpf_sysctl_get_name(ctx, s->key.name, sizeof(s->key.name), 0);
	if (name_len < 0) {
		/* Longer than any name a policy can hold: fail closed. */
		count(env, g, g->config.n_rules + g->config.n_layers, SG_VERDICT_DENY);
		return 0;
	}
	env->name_len = (__u32)name_len;

	if (g->learn)
		observe(ctx, s, g, write);
	sg_decide(env, s, write, ctx->file_pos, &res);
	if (g->learn)
		remember(s, &res);
	count(env, g, res.row, res.verdict);
	if (wants_event(g, &res, write))
		emit_event(ctx, s, g, &res, write);

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

SEC("cgroup/sysctl")
int sysctl_guard(struct bpf_sysctl *ctx)
{
	struct sg_env env = {.ctx = ctx};
	__u32 zero = 0;
	struct sg_guard_storage *g = bpf_get_local_storage(&guard, 0);
	struct sg_scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	if (!s || !sg_env_open(&env, g)) {
		count_for_guard(g, SG_VERDICT_DENY);
		return 0;
	}
	/*
	 * The program runs with migration, not preemption, disabled: another
	 * task on this CPU may run it while this run is preempted. The scratch
	 * space is taken by an atomic exchange; a run that finds it taken
	 * denies rather than share it.
	 */
	if (__sync_lock_test_and_set(&s->busy, 1)) {
		count_for_guard(g, SG_VERDICT_DENY);
		return 0;
	}
	int allow = guard_access(ctx, &env, g, s);
	/*
	 * Released with a plain store: only tasks on this CPU take this slot,
	 * and they see this CPU's stores in program order (an atomic exchange
	 * here cost a locked instruction per access).
	 */
	asm volatile("" ::: "memory");
	s->busy = 0;
	return allow;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
