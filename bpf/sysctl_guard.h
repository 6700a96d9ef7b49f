/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The compiled policy tables: the contract between the compiler (hook/compile/compile.c),
 * the userspace evaluator (hook/compile/eval.c) and the BPF program (sysctl_guard.bpf.c).
 * Included by both sides; only fixed-size types.
 *
 * A name is decided per layer (baseline, then annotation policy; each can only
 * narrow). Within a layer an exact rule is found with one hash lookup; pattern
 * rules are compiled into one DFA over byte classes whose accepting states name
 * the winning rule. Both costs depend on the name's length, never on the
 * number of rules.
 */
#ifndef SYSCTL_GUARD_H
#define SYSCTL_GUARD_H

#ifndef __BPF__
#include <linux/types.h>
#endif

#define SG_NAME_MAX   128 /* bytes with the NUL; longer names are denied */
#define SG_VALUE_MAX  128 /* bytes with the NUL; a longer write to a constrained rule is denied */
#define SG_FIELDS_MAX 4	  /* integer fields a range can constrain (tcp_rmem has 3) */
#define SG_LAYERS_MAX 2
#define SG_BOUND_TEXT 23 /* "-9223372036854775808" fits */
#define SG_NO_RULE    0xffffffffu
#define SG_DEAD_STATE 0 /* every DFA has state 0: no transition out, accepts nothing */

/* Layer of the exact-name table that holds the always-allowed linux.sysctl pairs. */
#define SG_PINNED_LAYER 0xffu

enum sg_access {
	SG_ACCESS_NONE = 0,
	SG_ACCESS_READ = 1,
	SG_ACCESS_READ_WRITE = 2,
};

enum sg_mode {
	SG_MODE_ENFORCE = 0,
	SG_MODE_AUDIT = 1,
};

enum sg_on_violation {
	SG_VIOLATION_DENY = 0,
	SG_VIOLATION_CLAMP = 1,
};

enum sg_rule_flags {
	SG_RULE_VALUES = 1 << 0,	 /* the written value must be in the values table */
	SG_RULE_RANGE = 1 << 1,		 /* integer fields must lie in min/max */
	SG_RULE_RANGE_ALL = 1 << 2,	 /* one min/max (index 0) applies to every field */
	SG_RULE_REWRITE = 1 << 3,	 /* an accepted write is replaced by rewrite[] */
	SG_RULE_HOST_NAMESPACE = 1 << 4, /* its writes may reach a namespace shared with the host */
};

/*
 * The namespaces that own sysctls (docs/namespaces.md): a write to a sysctl
 * of a namespace the guarded processes share with the host changes the
 * host's value.
 */
enum sg_namespace {
	SG_NS_NET = 1 << 0,
	SG_NS_UTS = 1 << 1,
	SG_NS_IPC = 1 << 2,
	SG_NS_USER = 1 << 3,
	SG_NS_PID = 1 << 4,
	SG_NS_TYPES = 5,
};

/* What happened to one access. AUDIT: an audit-mode layer would have denied or rewritten. */
enum sg_verdict {
	SG_VERDICT_ALLOW = 0,
	SG_VERDICT_DENY = 1,
	SG_VERDICT_REWRITE = 2,
	SG_VERDICT_AUDIT = 3,
	SG_VERDICT_COUNT = 4,
};

/*
 * What every decision by a rule reads: the rules table, one entry per rule,
 * kept small. What only a rewrite or a clamp needs is in the texts table;
 * what only a range check needs follows the rules in their table.
 */
struct sg_rule_entry {
	__u8 access;	   /* enum sg_access */
	__u8 on_violation; /* enum sg_on_violation */
	__u8 flags;	   /* enum sg_rule_flags */
	__u8 n_ranges;	   /* fields with their own range (SG_RULE_RANGE without _ALL) */
	__u8 layer;	   /* index into sg_config.layers, or SG_PINNED_LAYER */
	__u8 pad[3];
	__u32 text; /* index of its sg_rule_text, or SG_NO_RULE: it neither rewrites nor clamps */
	union {	    /* a rule has a range or values, never both */
		/* SG_RULE_RANGE: the element of its first field's bounds in the rules table */
		__u32 bounds;
		/* SG_RULE_VALUES: its values' set in the values table */
		__u32 value_set;
	};
};

/*
 * One integer field's range. The bounds of the rules' ranges follow the
 * rules in the rules table, field after field (one for SG_RULE_RANGE_ALL),
 * each sequence once however many rules have it: 2,500 rules of a large
 * policy with [0, 1000000] share one element.
 */
struct sg_field_bounds {
	__s64 min, max;
};

/* A bound in decimal, for clamping: the program copies, never formats. */
struct sg_bound_text {
	__u8 len;
	char text[SG_BOUND_TEXT];
};

/* What a rule writes instead of the value written: only rules that rewrite or clamp have one. */
struct sg_rule_text {
	struct sg_bound_text bound[SG_FIELDS_MAX][2]; /* [field][0: min, 1: max] */
	__u16 rewrite_len;			      /* strlen(rewrite) */
	char rewrite[SG_VALUE_MAX];
};

/*
 * The exact-name tables are keyed by layer and slash-form name, zero padded.
 * Names shorter than SG_SHORT_NAME_MAX (with the NUL) are in a table of
 * their own whose keys are the first bytes of the long ones: 56 bytes to
 * hash and compare instead of 136. Of the 1,331 names of /proc/sys on a
 * test machine, 1,284 are this short (net/ipv4/conf/eth0/rp_filter: 26 bytes).
 * Eight-byte aligned, so that the program reads a short key as seven words.
 */
#define SG_SHORT_NAME_MAX 48
struct sg_exact_short_key {
	__u32 layer;
	char name[SG_SHORT_NAME_MAX];
} __attribute__((aligned(8)));

struct sg_exact_key {
	union {
		struct sg_exact_short_key short_key; /* when the name is that short */
		struct {
			__u32 layer;
			char name[SG_NAME_MAX];
		};
	};
};

/*
 * Key of the values table: the value set and a keyed hash (SipHash rounds,
 * with a random key per policy) of the normalised value. Rules with the
 * same values share one set (the 2,500 rules of the bench's 10,000-rule
 * policy that allow 0, 1 or 2: three entries, not 7,500). Hashing while
 * normalising keeps the program small for the verifier; the secret key
 * keeps a container from crafting a colliding value.
 */
struct sg_value_hash_key {
	__u32 set; /* SG_NO_RULE: a free slot */
	__u32 pad;
	__u64 hash;
};

/*
 * The short exact names and the values are hash tables that userspace lays
 * out in arrays (hook/compile/hashtab.c), filled with one copy: a kernel hash map
 * takes a system call's work per element, milliseconds for the 9,000 names
 * of a large policy. A bucket holds SG_HASH_WAYS slots, filled in order; an
 * entry lives in its home bucket or one of the next SG_HASH_PROBES - 1, in
 * the first with a free slot when it was placed; past the last home bucket
 * the array goes on as far as entries went, so a probe never wraps. A lookup
 * stops at the first free slot, or past the array's end: nothing was placed
 * beyond either.
 */
#define SG_HASH_WAYS   8
#define SG_HASH_PROBES 4

struct sg_exact_slot {
	struct sg_exact_short_key key; /* zeros when free */
	__u32 rule;		       /* SG_NO_RULE when free */
	__u32 tag;		       /* sg_exact_tag of the key's hash; 0 when free */
};

struct sg_exact_bucket {
	struct sg_exact_slot slot[SG_HASH_WAYS];
};

struct sg_value_bucket {
	struct sg_value_hash_key slot[SG_HASH_WAYS]; /* set SG_NO_RULE when free */
};

#define SG_SHORT_KEY_WORDS (sizeof(struct sg_exact_short_key) / sizeof(__u64))

/* One step of the tables' hash: a multiply and a shift per word (the key is random per policy). */
static inline __u64 sg_hash_mix(__u64 h, __u64 word)
{
	h = (h ^ word) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static inline __u64 sg_exact_hash(const struct sg_exact_short_key *key, __u64 seed)
{
	__u64 h = seed, word;
	for (__u32 i = 0; i < SG_SHORT_KEY_WORDS; i++) {
		__builtin_memcpy(&word, (const char *)key + i * sizeof(word), sizeof(word));
		h = sg_hash_mix(h, word);
	}
	return h;
}

static inline __u64 sg_value_slot_hash(const struct sg_value_hash_key *key, __u64 seed)
{
	return sg_hash_mix(sg_hash_mix(seed, key->set), key->hash);
}

/* Compared before the key: most slots a lookup passes hold other names. Never 0. */
static inline __u32 sg_exact_tag(__u64 hash)
{
	return (__u32)hash | 1;
}

/* The home bucket of @hash among @n_homes: a multiply, not a division, in the program. */
static inline __u32 sg_home_bucket(__u64 hash, __u32 n_homes)
{
	return (__u32)(((hash >> 32) * n_homes) >> 32);
}

/*
 * A policy's tables are one array map of its own whose elements are pages
 * of SG_PAGE_SIZE bytes (hook/kernel/tables.c). Each table starts on a page
 * of its own; its elements have a power-of-two size, so none straddles two
 * pages. One map per policy: putting a map into an outer map returns only
 * after an RCU grace period, and a new policy waits for one, not one per
 * table. (Long exact names stay in a kernel hash map: few policies have any.)
 */
#define SG_PAGE_SHIFT 12
#define SG_PAGE_SIZE  (1u << SG_PAGE_SHIFT)

enum sg_table {
	SG_TABLE_EXACT,	   /* struct sg_exact_bucket */
	SG_TABLE_DFA,	   /* __u32[SG_DFA_ELEMENT_WORDS] */
	SG_TABLE_RULES,	   /* struct sg_rule_entry, then struct sg_field_bounds */
	SG_TABLE_VALUES,   /* struct sg_value_bucket */
	SG_TABLE_TEXTS,	   /* struct sg_rule_text, in an element of SG_TEXT_SLOT bytes */
	SG_TABLE_COUNTERS, /* __u64 */
	SG_TABLE_COUNT,
};

/* log2 of each table's element size, in enum sg_table order. */
#define SG_EXACT_SHIFT	  9
#define SG_DFA_SHIFT	  3
#define SG_RULES_SHIFT	  4
#define SG_VALUES_SHIFT	  7
#define SG_TEXTS_SHIFT	  9
#define SG_COUNTERS_SHIFT 3
#define SG_TABLE_SHIFTS                                                                            \
	{                                                                                          \
		SG_EXACT_SHIFT, SG_DFA_SHIFT, SG_RULES_SHIFT, SG_VALUES_SHIFT, SG_TEXTS_SHIFT,     \
		    SG_COUNTERS_SHIFT                                                              \
	}
#define SG_TEXT_SLOT (1u << SG_TEXTS_SHIFT)

_Static_assert(sizeof(struct sg_exact_bucket) == 1u << SG_EXACT_SHIFT, "exact bucket");
_Static_assert(sizeof(struct sg_rule_entry) == 1u << SG_RULES_SHIFT, "rule entry");
_Static_assert(sizeof(struct sg_field_bounds) == 1u << SG_RULES_SHIFT, "bounds: rules' elements");
_Static_assert(sizeof(struct sg_value_bucket) == 1u << SG_VALUES_SHIFT, "value bucket");
_Static_assert(sizeof(struct sg_rule_text) <= SG_TEXT_SLOT, "a text fits its element");

/* Where a table is in its policy's map; an absent one has no elements. */
struct sg_table_place {
	__u32 first_page;
	__u32 n_elements;
};

/* Pages of a table of @n elements of 1 << @shift bytes. */
static inline __u32 sg_table_pages(__u32 n, __u32 shift)
{
	const __u32 per_page = SG_PAGE_SIZE >> shift;
	return (n + per_page - 1) / per_page;
}

struct sg_layer {
	__u32 dfa_start; /* start state of this layer's pattern DFA */
	__u8 mode;	 /* enum sg_mode */
	__u8 default_access;
	__u8 pad[2];
};

/* Which accesses become events (sg_config.events). Denials and rewrites always do. */
enum sg_event_policy {
	SG_EVENTS_AUDIT_WRITES = 1 << 0, /* every write an audit layer saw */
	SG_EVENTS_READS = 1 << 1,	 /* every read */
	SG_EVENTS_ALL_WRITES = 1 << 2,	 /* every write */
};

/* A policy's knobs, kept in the storage of every cgroup it guards. */
struct sg_config {
	__u32 n_layers;
	__u32 n_classes; /* byte classes: a DFA row has this many entries */
	__u32 n_rules;
	__u32 rewrite_works; /* bpf_sysctl_set_new_value takes effect on this kernel */
	__u32 audit_events;  /* some layer audits: report every write (SG_EVENTS_AUDIT_WRITES) */
	__u32 has_pinned;    /* the exact table holds linux.sysctl pairs (SG_PINNED_LAYER) */
	__u64 hash_key[2];   /* key of the values hash; random per policy */
	__u64 table_seed;    /* of the hashed tables' hash; random per policy */
	__u32 exact_homes;   /* home buckets of the short exact names' table */
	__u32 value_homes;   /* home buckets of the values table */
	struct sg_table_place tables[SG_TABLE_COUNT];
	struct sg_layer layers[SG_LAYERS_MAX];
	__u8 byte_class[256];
};

/*
 * One loaded program serves every guarded cgroup on the node, whatever its
 * policy: loading means verification, by far the most expensive step of an
 * attach, and it happens once. Each policy's tables are maps of their own,
 * found through the outer maps at the policy's slot; what belongs to one
 * guarded cgroup, its slot and policy knobs among it, lives in cgroup local
 * storage, which the kernel keeps per attachment. Replacing a cgroup's policy
 * swaps its storage in one step.
 */
#define SG_MAX_POLICIES 2048 /* slots; slot 0 means "no policy yet" and denies */
#define SG_KEY_LEN	24   /* a policy's key as text, with its NUL: the slots map's values */

/*
 * Which policy a container's raw inputs made (hook/policy/inputs.h), by their
 * digest under the node's secret: a container whose inputs are known skips
 * parsing and compiling. Userspace only.
 */
#define SG_MAX_INPUTS	   4096
#define SG_DESCRIPTION_LEN 352 /* the guard's description, with its NUL */

struct sg_inputs_entry {
	char policy_key[SG_KEY_LEN];
	char description[SG_DESCRIPTION_LEN];
};

struct sg_guard_storage {
	__u64 cgroup_id;       /* the guarded cgroup, for events */
	__u32 learn;	       /* record every access in the seen map */
	__u32 events;	       /* enum sg_event_policy, beyond denials and rewrites */
	__u32 slot;	       /* the policy's tables in the outer maps */
	__u32 host_namespaces; /* enum sg_namespace: those the guarded processes share with the host
				*/
	/*
	 * The guard's decisions by verdict, and events lost: the program adds
	 * to them atomically (one map for all a guard holds: each map of
	 * cgroup storage costs a helper call per access). Userspace carries them
	 * over when it replaces the value.
	 */
	__u64 verdicts[SG_VERDICT_COUNT];
	__u64 events_dropped;
	struct sg_config config; /* the policy's knobs */
};

/*
 * The kernel's DFA table. Nearly every row of a policy's DFA sends most byte
 * classes to one state (the dead state, or the state a '*' or '**' loops
 * in): a large policy's rows have 37 entries and differ from their most
 * common one in about two. So each state keeps that default, and only its
 * other entries are stored, the rows overlaid on one another where they
 * leave room (row displacement, as lexer generators pack their tables).
 *
 * Every element is two words. Elements 0 to n_states - 1 are the states:
 * { base, default next state }. The entries follow: the entry of state s in
 * column k (a byte class, or sg_dfa_accept_column for the rule s accepts) is
 * element base + k when that element is { s + 1, entry }; otherwise it is
 * the default (for the rule accepted: SG_NO_RULE). An element past the
 * table's end belongs to no state. Two lookups per byte of the name.
 */
#define SG_DFA_ELEMENT_WORDS 2 /* an element of the DFA table: __u32[SG_DFA_ELEMENT_WORDS] */
_Static_assert(SG_DFA_ELEMENT_WORDS * sizeof(__u32) == 1u << SG_DFA_SHIFT, "DFA element");

static inline __u32 sg_dfa_accept_column(__u32 n_classes)
{
	return n_classes;
}

/* The first word of the entry element of @state: 0 is no state's. */
static inline __u32 sg_dfa_owner(__u32 state)
{
	return state + 1;
}

/* Knobs of the loaded program that the verifier must see: kernel features. */
struct sg_program_config {
	__u32 task_helpers; /* pid and comm helpers are allowed for this program type */
};

/*
 * Per-rule counters of a policy (all cgroups it guards): one row of
 * SG_VERDICT_COUNT per rule, then one row per layer for names no rule
 * matched, then one row for accesses decided before any rule (name too long),
 * then one for writes denied as host-level (SG_REASON_HOST_NAMESPACE).
 */
#define SG_EXTRA_COUNTER_ROWS 2

#define SG_EVENT_VERSION 1

/* One decision, as the program reports it through the node's ring buffer. */
struct sg_event {
	__u16 version; /* SG_EVENT_VERSION */
	__u8 verdict;  /* enum sg_verdict */
	__u8 reason;   /* enum sg_reason (sysctl_guard_decide.h) */
	__u8 write;
	__u8 rewritten;
	__u8 value_truncated; /* the value written did not fit new_value */
	__u8 pad;
	__u32 rule;  /* SG_NO_RULE when a default decided */
	__s32 layer; /* -1 when none */
	__u32 pid;   /* 0 when the kernel does not let this program read it */
	__u32 pad2;
	__u64 time_ns;	       /* CLOCK_BOOTTIME */
	__u64 guard_cgroup_id; /* the cgroup the deciding guard is attached to */
	__u64 cgroup_id;       /* the task's own cgroup, maybe a descendant */
	char comm[16];
	char name[SG_NAME_MAX];
	char current_value[SG_VALUE_MAX];
	char new_value[SG_VALUE_MAX];	/* as written */
	char final_value[SG_VALUE_MAX]; /* what the kernel got, when rewritten */
};

/* Key of a guard's seen map (learning): one entry per name, access, value and verdict. */
struct sg_seen_key {
	__u64 guard; /* the guarded cgroup */
	__u8 write;
	__u8 verdict;	     /* enum sg_verdict: what the guard did with it */
	__u8 value_too_long; /* the value written did not fit value[], which is empty */
	/*
	 * 8 bytes longer than the key of the versions before the verdict
	 * (write and a pad, 32 bits each): their maps fail learn's check of the
	 * key's size, and their records cannot pass for allowed ones.
	 */
	__u8 pad[13];
	char name[SG_NAME_MAX];
	char value[SG_VALUE_MAX]; /* as written, zero padded; empty for reads */
};
static inline __u32 sg_counter_index(__u32 row, __u32 verdict)
{
	return row * SG_VERDICT_COUNT + verdict;
}

#endif
