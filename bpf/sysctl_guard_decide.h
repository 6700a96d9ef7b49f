/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The decision, written once: included by the BPF program and by the
 * userspace evaluator (hook/compile/eval.c), so that `explain` and the kernel cannot
 * disagree. Each includer first defines struct sg_env and these accessors:
 *
 *   const struct sg_config *sg_env_config(struct sg_env *env);
 *   const struct sg_rule_entry *sg_env_rule(struct sg_env *env, __u32 rule);
 *   const struct sg_rule_text *sg_env_text(struct sg_env *env, __u32 text);
 *   const struct sg_field_bounds *sg_env_bounds(struct sg_env *env, __u32 element);
 *       element of the rules table holding bounds (sysctl_guard.h), or NULL
 *   __u32 sg_env_exact(struct sg_env *env, const struct sg_exact_key *key);
 *   __u32 sg_env_step(struct sg_env *env, __u32 state, __u32 byte_class);
 *   __u32 sg_env_accept(struct sg_env *env, __u32 state);
 *   __u32 sg_env_match(struct sg_env *env, const struct sg_exact_key *key, __u32 start);
 *       sg_match_name, declared before and defined after this file: in BPF
 *       a global function
 *   int sg_env_has_value(struct sg_env *env, const struct sg_value_hash_key *key);
 *   __u32 sg_env_host_namespaces(struct sg_env *env);
 *       enum sg_namespace: the namespaces the accessing processes share with
 *       the host
 *   void sg_env_load_value(struct sg_env *env, struct sg_scratch *s);
 *       puts the value being written in s->cur (and its lengths), once: only
 *       constrained writes read it
 *
 * and SG_INLINE, SG_SUBPROG (how the loops over a value are compiled: in BPF
 * global functions, which the verifier checks once, with unknown arguments,
 * instead of on every path that reaches them). Loops are bounded and indices masked for the
 * verifier.
 */
#ifndef SYSCTL_GUARD_DECIDE_H
#define SYSCTL_GUARD_DECIDE_H

#include "sysctl_guard.h"

/* Why a decision was taken; carried into counters' callers, events and `explain`. */
enum sg_reason {
	SG_REASON_ACCESS = 0,	   /* the rule's (or default's) access level decided */
	SG_REASON_NAME_TOO_LONG,   /* the kernel's name does not fit SG_NAME_MAX */
	SG_REASON_FILE_POS,	   /* a constrained write not at position 0 */
	SG_REASON_VALUE_TOO_LONG,  /* a constrained write longer than SG_VALUE_MAX - 1 */
	SG_REASON_NOT_IN_VALUES,   /* not one of the rule's values */
	SG_REASON_NOT_INTEGERS,	   /* a range rule got something other than integers */
	SG_REASON_TOO_MANY_FIELDS, /* more fields than the rule has ranges for */
	SG_REASON_OUT_OF_RANGE,	   /* a field outside [min, max] */
	SG_REASON_CLAMPED,	   /* fields moved to the nearest bound */
	SG_REASON_REWRITTEN,	   /* the rule's rewrite value replaced the write */
	SG_REASON_NO_REWRITE,	   /* a rewrite or clamp, but this kernel ignores rewrites */
	SG_REASON_PINNED,	   /* a linux.sysctl pair of the container's config */
	SG_REASON_LATER_REWRITE,  /* a later layer rewrote or clamped to a value this one refuses */
	SG_REASON_HOST_NAMESPACE, /* a write to a namespace shared with the host */
	SG_REASON_COUNT,
};

/* The per-access working memory: a per-CPU map value in BPF, a local in userspace. */
struct sg_scratch {
	__u64 busy;		       /* a run of the program holds it (BPF side) */
	__u64 hash_key[2];	       /* the values hash key of this program */
	struct sg_exact_key key;       /* the name being decided, zero padded */
	struct sg_value_hash_key vkey; /* values-table lookups */
	char
	    cur[2 * SG_VALUE_MAX]; /* the value being written, NUL terminated; rewrites land here */
	char out[2 * SG_VALUE_MAX];	  /* a clamped value being assembled */
	__u32 field_start[SG_FIELDS_MAX]; /* where each integer field's text starts in cur */
	__u32 field_end[SG_FIELDS_MAX];
	__u32 clamp_to[SG_FIELDS_MAX]; /* 0: kept, 1: min, 2: max */
	__s64 min[SG_FIELDS_MAX];      /* the bounds of the rule being checked (sg_load_bounds) */
	__s64 max[SG_FIELDS_MAX];
	__u32 written_len;	 /* bytes the caller wrote */
	struct sg_seen_key seen; /* learning: the seen map's key */
	__u32 cur_len;		 /* bytes of cur before its NUL */
	__u32 cur_too_long;	 /* the write did not fit cur */
	__s64 scanned;		 /* the integer sg_scan_long read last */
};

struct sg_result {
	__u32 verdict;	 /* enum sg_verdict */
	__u32 reason;	 /* enum sg_reason */
	__u32 rule;	 /* deciding rule or SG_NO_RULE */
	__s32 layer;	 /* deciding layer or -1 */
	__u32 row;	 /* counter row (sysctl_guard.h) */
	__u32 rewritten; /* scratch.cur holds the value the kernel must store */
};

static SG_INLINE int sg_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * 1 for the whitespace bytes, computed without a branch: a branch here would
 * split the verifier's walk of the hashing loop into one path per byte kind.
 * Bit c of the masks is set for ' ' (32) and '\t'..'\r' (9..13).
 */
static SG_INLINE __u64 sg_space_bit(unsigned char c)
{
	const __u64 low = (1ull << 32) | (0x1full << 9);
	__u64 below_64 = ((__u64)(c >> 6) - 1) >> 63; /* 1 when c < 64 */
	return (low >> (c & 63)) & below_64;
}

/*
 * The winning rule of layer key->layer for the name in @key, or SG_NO_RULE:
 * its exact rule, or the rule the DFA accepts, walked from @state, the
 * layer's start state.
 */
static SG_INLINE __u32 sg_match_name(struct sg_env *env, const struct sg_exact_key *key,
				     __u32 state)
{
	const struct sg_config *cfg = sg_env_config(env);
	__u32 rule = sg_env_exact(env, key);

	if (rule != SG_NO_RULE)
		return rule;
	for (__u32 i = 0; i < SG_NAME_MAX && state != SG_DEAD_STATE; i++) {
		unsigned char c = key->name[i];
		if (!c)
			break;
		state = sg_env_step(env, state, cfg->byte_class[c]);
	}
	return sg_env_accept(env, state);
}

/* The winning rule of @layer for the name in s->key, or SG_NO_RULE. */
static SG_INLINE __u32 sg_find_rule(struct sg_env *env, struct sg_scratch *s, __u32 layer)
{
	const struct sg_config *cfg = sg_env_config(env);

	s->key.layer = layer;
	return sg_env_match(env, &s->key, cfg->layers[layer & (SG_LAYERS_MAX - 1)].dfa_start);
}

/*
 * The sysctls the kernel keeps per namespace, as it registers them (docs/
 * namespaces.md says where, and since which kernel): whole subtrees by their
 * prefix (@len: its bytes), single sysctls by their name (@len 0). A name
 * here is in slash form, zero padded, and compared as three words.
 */
#define SG_NS_NAME_BYTES 24
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "sg_ns_word_mask");
struct sg_ns_name {
	char name[SG_NS_NAME_BYTES];
	__u32 len;
	__u32 ns; /* enum sg_namespace */
};

static const struct sg_ns_name sg_ns_names[] = {
    {"net/", 4, SG_NS_NET},	       /* net/sysctl_net.c: per network namespace */
    {"user/", 5, SG_NS_USER},	       /* kernel/ucount.c */
    {"fs/mqueue/", 10, SG_NS_IPC},     /* ipc/mq_sysctl.c */
    {"kernel/hostname", 0, SG_NS_UTS}, /* kernel/utsname_sysctl.c */
    {"kernel/domainname", 0, SG_NS_UTS},
    {"kernel/ostype", 0, SG_NS_UTS},
    {"kernel/osrelease", 0, SG_NS_UTS},
    {"kernel/version", 0, SG_NS_UTS},
    {"kernel/arch", 0, SG_NS_UTS},
    {"kernel/shmmax", 0, SG_NS_IPC}, /* ipc/ipc_sysctl.c */
    {"kernel/shmall", 0, SG_NS_IPC},
    {"kernel/shmmni", 0, SG_NS_IPC},
    {"kernel/shm_rmid_forced", 0, SG_NS_IPC},
    {"kernel/msgmax", 0, SG_NS_IPC},
    {"kernel/msgmni", 0, SG_NS_IPC},
    {"kernel/msgmnb", 0, SG_NS_IPC},
    {"kernel/auto_msgmni", 0, SG_NS_IPC},
    {"kernel/sem", 0, SG_NS_IPC},
    {"kernel/sem_next_id", 0, SG_NS_IPC},
    {"kernel/msg_next_id", 0, SG_NS_IPC},
    {"kernel/shm_next_id", 0, SG_NS_IPC},
    {"kernel/ns_last_pid", 0, SG_NS_PID}, /* kernel/pid_namespace.c */
    {"kernel/pid_max", 0, SG_NS_PID},	  /* kernel/pid.c, from 6.14; global before */
    {"vm/memfd_noexec", 0, SG_NS_PID},
};
#define SG_NS_NAMES (sizeof(sg_ns_names) / sizeof(sg_ns_names[0]))

/* Unrolled in BPF, the table's words become constants the verifier need not track. */
#ifdef __clang__
#define SG_UNROLL _Pragma("unroll")
#else
#define SG_UNROLL
#endif

/* Of word @k of a name, the bytes a prefix of @len bytes covers (all for 0: a whole name). */
static SG_INLINE __u64 sg_ns_word_mask(__u32 len, __u32 k)
{
	if (len == 0 || len >= 8 * (k + 1))
		return ~0ull;
	if (len <= 8 * k)
		return 0;
	return (1ull << (8 * (len - 8 * k))) - 1; /* little-endian: the first bytes */
}

/*
 * The namespace (enum sg_namespace) whose copy of the sysctl named in @key an
 * access reaches, or 0 for one the kernel keeps once for the whole system.
 */
static SG_INLINE __u32 sg_name_namespace(const struct sg_exact_key *key)
{
	__u64 w[3];

	__builtin_memcpy(w, key->name, sizeof(w));
	SG_UNROLL
	for (__u32 i = 0; i < SG_NS_NAMES; i++) {
		const struct sg_ns_name *n = &sg_ns_names[i];
		__u64 t[3];
		__u32 same = 1;

		__builtin_memcpy(t, n->name, sizeof(t));
		for (__u32 k = 0; k < 3; k++)
			same &= (w[k] & sg_ns_word_mask(n->len, k)) == t[k];
		if (same)
			return n->ns;
	}
	return 0;
}

/* SipHash's round; the values hash runs one per byte of the normalised value. */
#define SG_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SG_SIPROUND(v0, v1, v2, v3)                                                                \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = SG_ROTL(v1, 13);                                                              \
		v1 ^= v0;                                                                          \
		v0 = SG_ROTL(v0, 32);                                                              \
		v2 += v3;                                                                          \
		v3 = SG_ROTL(v3, 16);                                                              \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = SG_ROTL(v3, 21);                                                              \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = SG_ROTL(v1, 17);                                                              \
		v1 ^= v2;                                                                          \
		v2 = SG_ROTL(v2, 32);                                                              \
	} while (0)

struct sg_hash {
	__u64 v0, v1, v2, v3;
};

static SG_INLINE void sg_hash_init(struct sg_hash *h, const __u64 key[2])
{
	h->v0 = key[0] ^ 0x736f6d6570736575ull;
	h->v1 = key[1] ^ 0x646f72616e646f6dull;
	h->v2 = key[0] ^ 0x6c7967656e657261ull;
	h->v3 = key[1] ^ 0x7465646279746573ull;
}

static SG_INLINE void sg_hash_byte(struct sg_hash *h, unsigned char c)
{
	__u64 v0 = h->v0, v1 = h->v1, v2 = h->v2, v3 = h->v3;
	v3 ^= c;
	SG_SIPROUND(v0, v1, v2, v3);
	v0 ^= c;
	h->v0 = v0, h->v1 = v1, h->v2 = v2, h->v3 = v3;
}

/* Hashes @c when @take is 1, leaves the state as it was when 0; without a branch. */
static SG_INLINE void sg_hash_byte_if(struct sg_hash *h, unsigned char c, __u64 take)
{
	struct sg_hash next = *h;
	__u64 keep = take - 1; /* all ones when not taken */

	sg_hash_byte(&next, c);
	h->v0 = (h->v0 & keep) | (next.v0 & ~keep);
	h->v1 = (h->v1 & keep) | (next.v1 & ~keep);
	h->v2 = (h->v2 & keep) | (next.v2 & ~keep);
	h->v3 = (h->v3 & keep) | (next.v3 & ~keep);
}

static SG_INLINE __u64 sg_hash_final(struct sg_hash *h)
{
	__u64 v0 = h->v0, v1 = h->v1, v2 = h->v2, v3 = h->v3;
	v2 ^= 0xff;
	SG_SIPROUND(v0, v1, v2, v3);
	SG_SIPROUND(v0, v1, v2, v3);
	SG_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * The hash of s->cur as a token list: whitespace runs count as one space,
 * leading and trailing whitespace not at all. Equal to the hash of the
 * normalised string (sg_value_normalise), byte by byte, its mark included:
 * a newline before the last token adds a newline after the tokens. The
 * kernel's string handlers store only what precedes the first newline, so
 * "\nprod" would store an empty string and "a\nb" "a": such a write matches
 * only a value listed with a newline there too, not "prod" or "a b".
 */
SG_SUBPROG __u64 sg_hash_cur(struct sg_scratch *s)
{
	struct sg_hash h;
	__u64 started = 0, pending_space = 0, newline = 0, spliced = 0;
	__u32 i;

	if (!s)
		return 0;
	sg_hash_init(&h, s->hash_key);
	for (i = 0; i < SG_VALUE_MAX - 1; i++) {
		unsigned char c = s->cur[i];
		if (!c)
			break;
		/*
		 * No branch depends on the state flags: the verifier then sees one
		 * state per byte position instead of one per flag history.
		 */
		__u64 space = sg_space_bit(c);
		sg_hash_byte_if(&h, ' ', (1 - space) & pending_space);
		sg_hash_byte_if(&h, c, 1 - space);
		pending_space = space & (pending_space | started);
		started |= 1 - space;
		spliced |= newline & (1 - space);
		newline |= ((__u64)(c ^ '\n') - 1) >> 63; /* 1 when c is '\n' */
	}
	sg_hash_byte_if(&h, '\n', spliced);
	return sg_hash_final(&h);
}

/*
 * Writes the clamped value into s->cur: each field keeps the text it was
 * written with, or becomes its bound's decimal text. The field spans and
 * clamp choices were stored in the scratch map by sg_check_range: read back
 * from map memory they are unknown to the verifier, so it checks one path
 * here instead of one per combination of clamped fields.
 */
SG_SUBPROG int sg_write_clamped(struct sg_scratch *s, const struct sg_rule_text *text,
				__u32 rule_flags, __u32 n)
{
	__u32 pos = 0, f, i;

	if (!s || !text)
		return -1;
	for (f = 0; f < SG_FIELDS_MAX; f++) {
		if (f >= n)
			break;
		__u32 to = s->clamp_to[f];
		if (to) {
			__u32 r = (rule_flags & SG_RULE_RANGE_ALL) ? 0 : f;
			const struct sg_bound_text *b =
			    &text->bound[r & (SG_FIELDS_MAX - 1)][(to - 1) & 1];
			/* A space before a field after the first: "4096", not " 4096". */
			s->out[pos & (2 * SG_VALUE_MAX - 1)] = ' ';
			pos += f != 0;
			/*
			 * Whole fixed-size copies: a loop that stopped at the length
			 * would make the verifier follow one path per length.
			 */
			for (i = 0; i < SG_BOUND_TEXT; i++)
				s->out[(pos + i) & (2 * SG_VALUE_MAX - 1)] = b->text[i];
			pos += b->len;
		} else {
			__u32 start = s->field_start[f];
			for (i = 0; i < SG_VALUE_MAX; i++)
				s->out[(pos + i) & (2 * SG_VALUE_MAX - 1)] =
				    s->cur[(start + i) & (2 * SG_VALUE_MAX - 1)];
			pos += s->field_end[f] - start;
		}
		if (pos >= SG_VALUE_MAX)
			return -1;
	}
	__builtin_memcpy(s->cur, s->out, SG_VALUE_MAX);
	s->cur_len = pos;
	s->cur[pos & (SG_VALUE_MAX - 1)] = '\0';
	return 0;
}

/*
 * A write whose value was replaced returns the new value's length, and a
 * caller told fewer bytes than it wrote writes the rest again at a later
 * position. Newlines pad the new value to the length written: the kernel's
 * parsers stop at or skip them.
 */
SG_SUBPROG int sg_pad_to_written(struct sg_scratch *s)
{
	__u32 i, len, written;

	if (!s)
		return 0;
	len = s->cur_len;
	written = s->written_len;
	/* One comparison per step, and it ends the loop: one path for the verifier. */
	for (i = 0; i < SG_VALUE_MAX - 1; i++) {
		if (len + i >= written)
			break;
		s->cur[(len + i) & (SG_VALUE_MAX - 1)] = '\n';
	}
	if (written > len && written < SG_VALUE_MAX)
		s->cur_len = written;
	s->cur[s->cur_len & (SG_VALUE_MAX - 1)] = '\0';
	return 0;
}

/*
 * Per byte: SG_CHAR_SPACE for the kernel's isspace() (its ctype table counts
 * 0xa0 too), and one more than the byte's value as a digit of any base up to
 * 16 in SG_CHAR_DIGIT (0: not a digit). A table rather than comparisons:
 * then each step of the scan below has the one branch that may end it, and
 * the verifier follows one path per step instead of one per kind of byte.
 */
#define SG_CHAR_SPACE  0x20
#define SG_CHAR_DIGIT  0x1f
#define SG_DIGIT(c, v) [c] = (v) + 1
static const __u8 sg_char_class[256] = {
    [' '] = SG_CHAR_SPACE,  ['\t'] = SG_CHAR_SPACE, ['\n'] = SG_CHAR_SPACE, ['\v'] = SG_CHAR_SPACE,
    ['\f'] = SG_CHAR_SPACE, ['\r'] = SG_CHAR_SPACE, [0xa0] = SG_CHAR_SPACE, SG_DIGIT('0', 0),
    SG_DIGIT('1', 1),	    SG_DIGIT('2', 2),	    SG_DIGIT('3', 3),	    SG_DIGIT('4', 4),
    SG_DIGIT('5', 5),	    SG_DIGIT('6', 6),	    SG_DIGIT('7', 7),	    SG_DIGIT('8', 8),
    SG_DIGIT('9', 9),	    SG_DIGIT('a', 10),	    SG_DIGIT('b', 11),	    SG_DIGIT('c', 12),
    SG_DIGIT('d', 13),	    SG_DIGIT('e', 14),	    SG_DIGIT('f', 15),	    SG_DIGIT('A', 10),
    SG_DIGIT('B', 11),	    SG_DIGIT('C', 12),	    SG_DIGIT('D', 13),	    SG_DIGIT('E', 14),
    SG_DIGIT('F', 15),
};

/* The byte's digit value, or 0xffffffff when it is none: no base takes it. */
static SG_INLINE __u32 sg_digit(unsigned char c)
{
	return (__u32)(sg_char_class[c] & SG_CHAR_DIGIT) - 1;
}

#define SG_CUR(s, i)   (s)->cur[(i) & (2 * SG_VALUE_MAX - 1)]
#define SG_SCAN_WINDOW 63 /* bytes after the sign that bpf_strtol copies and reads */
#define SG_SCAN_EINVAL (-22)
#define SG_SCAN_ERANGE (-34)

/*
 * The digits of sg_scan_long's integer, from s->cur[@off + @start] past the
 * whitespace and the sign. A function of its own, verified once with @start
 * unknown: within sg_scan_long the verifier would follow this loop again for
 * every length of whitespace before it (847,000 instructions verified
 * instead of 212,000).
 */
SG_SUBPROG long sg_scan_digits(struct sg_scratch *s, __u32 off, __u32 start, __u32 negative)
{
	__u32 i, pos, end, base = 10, digits = 0;
	__u64 hi = 0, lo = 0, over = 0; /* the value in 32-bit halves; over: it passed 64 bits */

	if (!s || start >= SG_VALUE_MAX)
		return SG_SCAN_EINVAL;
	/* Bytes past the window read as the NUL that ends the helper's copy. */
	end = SG_VALUE_MAX - start < SG_SCAN_WINDOW ? SG_VALUE_MAX : start + SG_SCAN_WINDOW;
	pos = start;
	if (SG_CUR(s, off + pos) == '0') {
		base = 8;
		if (pos + 2 < end && (SG_CUR(s, off + pos + 1) | 0x20) == 'x' &&
		    sg_digit((unsigned char)SG_CUR(s, off + pos + 2)) < 16) {
			base = 16;
			pos += 2;
		}
	}
	/*
	 * value = value * base + d in halves, so that a carry out of 64 bits
	 * shows without a division or a branch per digit (the verifier follows
	 * every branch of every step).
	 */
	for (i = 0; i < SG_SCAN_WINDOW && pos < end; i++, pos++, digits++) {
		__u32 d = sg_digit((unsigned char)SG_CUR(s, off + pos));
		if (d >= base)
			break;
		__u64 low = lo * base + d, high = hi * base + (low >> 32);
		over |= high >> 32;
		hi = high & 0xffffffff;
		lo = low & 0xffffffff;
	}
	if (digits == 0)
		return SG_SCAN_EINVAL;
	if (over)
		return SG_SCAN_ERANGE;
	__u64 value = hi << 32 | lo;
	if (negative) {
		if ((__s64)(0 - value) > 0)
			return SG_SCAN_ERANGE;
		s->scanned = (__s64)(0 - value);
	} else {
		if ((__s64)value < 0)
			return SG_SCAN_ERANGE;
		s->scanned = (__s64)value;
	}
	return pos;
}

/*
 * The integer at s->cur + @off, read as the kernel's bpf_strtol(buf,
 * SG_VALUE_MAX, 0) reads it (kernel/bpf/helpers.c), the base chosen as
 * /proc/sys's integer parsers choose it: whitespace, an optional '-', then
 * base 0 (0x hex, a leading 0 octal, else decimal) within SG_SCAN_WINDOW
 * bytes. Puts the value in s->scanned and returns the bytes taken:
 * whitespace, sign, prefix and digits. -22 (EINVAL) when no digit follows,
 * -34 (ERANGE) beyond 64 bits. Scanned here, not by the helper: bpf_strtol
 * cost 100 to 120 ns of a constrained write.
 */
SG_SUBPROG long sg_scan_long(struct sg_scratch *s, __u32 off)
{
	__u32 i, negative = 0;

	if (!s)
		return SG_SCAN_EINVAL;
	for (i = 0; i < SG_VALUE_MAX; i++)
		if (!(sg_char_class[(unsigned char)SG_CUR(s, off + i)] & SG_CHAR_SPACE))
			break;
	if (i < SG_VALUE_MAX && SG_CUR(s, off + i) == '-') {
		negative = 1;
		i++;
	}
	return sg_scan_digits(s, off, i, negative);
}

#define SG_PLAIN_DIGITS_MAX 18 /* 10^18 - 1 < 2^63: no overflow to check */

/*
 * "4096" or "4096\n", the one plain decimal field most writes are: read
 * here, in the caller, without the general scan's three nested calls. Where function
 * returns are mitigated (SRSO "safe RET" on AMD), each call and return costs
 * tens of nanoseconds. Returns the digits taken, with the value in *value;
 * 0 for any other text (whitespace, sign, a leading 0, more fields, more
 * than SG_PLAIN_DIGITS_MAX digits), which the general scan reads instead.
 */
static SG_INLINE __u32 sg_scan_plain_decimal(const struct sg_scratch *s, __s64 *value)
{
	__u64 v = 0;
	__u32 i;

	if (sg_digit((unsigned char)s->cur[0]) - 1 >= 9) /* not 1-9 */
		return 0;
	for (i = 0; i < SG_PLAIN_DIGITS_MAX; i++) {
		__u32 d = sg_digit((unsigned char)s->cur[i]);
		if (d >= 10)
			break;
		v = v * 10 + d;
	}
	char next = s->cur[i & (2 * SG_VALUE_MAX - 1)];
	if (next == '\n')
		next = s->cur[(i + 1) & (2 * SG_VALUE_MAX - 1)];
	if (next)
		return 0;
	*value = (__s64)v;
	return i;
}

/*
 * Field @f, of value @v, against @rule's ranges (their bounds in s->min and
 * s->max: sg_load_bounds): SG_REASON_ACCESS when it is
 * inside, SG_REASON_CLAMPED when clamping moves it (s->clamp_to[f] says to
 * which bound), or the violation.
 */
static SG_INLINE __u32 sg_check_field(struct sg_scratch *s, const struct sg_rule_entry *rule,
				      __u32 f, __s64 v)
{
	__u32 r = (rule->flags & SG_RULE_RANGE_ALL) ? 0 : f;

	if (!(rule->flags & SG_RULE_RANGE_ALL) && f >= rule->n_ranges)
		return SG_REASON_TOO_MANY_FIELDS;
	__s64 lo = s->min[r & (SG_FIELDS_MAX - 1)], hi = s->max[r & (SG_FIELDS_MAX - 1)];
	__u32 to = v < lo ? 1 : v > hi ? 2 : 0;
	if (to && rule->on_violation != SG_VIOLATION_CLAMP)
		return SG_REASON_OUT_OF_RANGE;
	s->clamp_to[f & (SG_FIELDS_MAX - 1)] = to;
	return to ? SG_REASON_CLAMPED : SG_REASON_ACCESS;
}

/*
 * Checks the integer fields of s->cur against @rule's ranges. Returns
 * SG_REASON_ACCESS when they pass, SG_REASON_CLAMPED when clamping moved a
 * field (s->clamp_to and the field spans say how, *n_fields their count), or
 * the violation.
 */
SG_SUBPROG __u32 sg_check_range(struct sg_scratch *s, const struct sg_rule_entry *rule,
				__u32 *n_fields)
{
	__u32 off = 0, f, i, clamped = 0, reason;
	__s64 v;

	if (!s || !rule || !n_fields)
		return SG_REASON_NOT_INTEGERS;

	for (f = 0; f < SG_FIELDS_MAX; f++) {
		long ret = sg_scan_long(s, off & (SG_VALUE_MAX - 1));
		if (ret == SG_SCAN_EINVAL) /* no more integers */
			break;
		if (ret < 0)
			return SG_REASON_OUT_OF_RANGE; /* beyond 64 bits */
		v = s->scanned;
		s->field_start[f & (SG_FIELDS_MAX - 1)] = off;
		off += (__u32)ret;
		if (off >= SG_VALUE_MAX)
			return SG_REASON_NOT_INTEGERS;
		s->field_end[f & (SG_FIELDS_MAX - 1)] = off;

		reason = sg_check_field(s, rule, f, v);
		if (reason != SG_REASON_ACCESS && reason != SG_REASON_CLAMPED)
			return reason;
		clamped |= reason == SG_REASON_CLAMPED;
		/* " 4096" or "1 2\n" ends here: spare the call that would find no integer. */
		char next = s->cur[off & (2 * SG_VALUE_MAX - 1)];
		if (!next || (sg_is_space(next) && !s->cur[(off + 1) & (2 * SG_VALUE_MAX - 1)])) {
			f++;
			break;
		}
	}
	*n_fields = f;
	if (f == 0)
		return SG_REASON_NOT_INTEGERS;
	/* Only whitespace may follow the last field. */
	for (i = 0; i < SG_VALUE_MAX; i++) {
		char c = s->cur[(off + i) & (2 * SG_VALUE_MAX - 1)];
		if (!c)
			break;
		if (!sg_is_space(c))
			return f == SG_FIELDS_MAX ? SG_REASON_TOO_MANY_FIELDS
						  : SG_REASON_NOT_INTEGERS;
	}
	return clamped ? SG_REASON_CLAMPED : SG_REASON_ACCESS;
}

/* Puts @rule's bounds in s->min and s->max; 0 when the table lacks one (then deny). */
static SG_INLINE int sg_load_bounds(struct sg_env *env, struct sg_scratch *s,
				    const struct sg_rule_entry *rule)
{
	__u32 n = (rule->flags & SG_RULE_RANGE_ALL) ? 1 : rule->n_ranges;

	for (__u32 f = 0; f < SG_FIELDS_MAX && f < n; f++) {
		const struct sg_field_bounds *b = sg_env_bounds(env, rule->bounds + f);
		if (!b)
			return 0;
		s->min[f] = b->min;
		s->max[f] = b->max;
	}
	return 1;
}

/* sg_check_range, with the plain decimal field read here, without a call. */
static SG_INLINE __u32 sg_check_plain_range(struct sg_env *env, struct sg_scratch *s,
					    const struct sg_rule_entry *rule, __u32 *n_fields)
{
	__s64 v;
	__u32 digits;

	if (!sg_load_bounds(env, s, rule))
		return SG_REASON_OUT_OF_RANGE;
	digits = sg_scan_plain_decimal(s, &v);
	if (!digits)
		return sg_check_range(s, rule, n_fields);
	s->field_start[0] = 0;
	s->field_end[0] = digits;
	*n_fields = 1;
	return sg_check_field(s, rule, 0, v);
}

/* Copies the rule's rewrite value into s->cur. */
SG_SUBPROG int sg_take_rewrite(struct sg_scratch *s, const struct sg_rule_text *text)
{
	__u32 i, len;

	if (!s || !text)
		return -1;
	len = text->rewrite_len;

	for (i = 0; i < SG_VALUE_MAX - 1 && i < len; i++)
		s->cur[i] = text->rewrite[i];
	s->cur[len & (SG_VALUE_MAX - 1)] = '\0';
	s->cur_len = len;
	return 0;
}

/* Whether s->cur is among the values @rule lists (its hash in the values table, under its set). */
static SG_INLINE int sg_cur_listed(struct sg_env *env, struct sg_scratch *s,
				   const struct sg_rule_entry *rule)
{
	s->vkey.set = rule->value_set;
	s->vkey.hash = sg_hash_cur(s);
	return sg_env_has_value(env, &s->vkey);
}

/*
 * One layer's verdict on a write by @rule (NULL: the layer default allowed
 * writes). Only an enforcing layer (@apply) changes s->cur; *rewritten says
 * it did. Returns the reason.
 */
static SG_INLINE __u32 sg_check_write(struct sg_env *env, struct sg_scratch *s,
				      const struct sg_rule_entry *rule, __u32 file_pos, int apply,
				      __u32 *rewritten)
{
	const struct sg_config *cfg = sg_env_config(env);
	__u32 n_fields = 0, reason = SG_REASON_ACCESS;

	*rewritten = 0;
	if (!rule || !(rule->flags & (SG_RULE_VALUES | SG_RULE_RANGE | SG_RULE_REWRITE)))
		return SG_REASON_ACCESS;
	/* A write elsewhere than at 0 could splice a forbidden value together. */
	if (file_pos != 0)
		return SG_REASON_FILE_POS;
	sg_env_load_value(env, s);
	if (s->cur_too_long)
		return SG_REASON_VALUE_TOO_LONG;

	if ((rule->flags & SG_RULE_VALUES) && !sg_cur_listed(env, s, rule))
		return SG_REASON_NOT_IN_VALUES;
	if (rule->flags & SG_RULE_RANGE) {
		reason = sg_check_plain_range(env, s, rule, &n_fields);
		if (reason != SG_REASON_ACCESS && reason != SG_REASON_CLAMPED)
			return reason;
	}
	if (rule->flags & SG_RULE_REWRITE)
		reason = SG_REASON_REWRITTEN;
	if (reason == SG_REASON_ACCESS || !apply)
		return reason;
	if (!cfg->rewrite_works)
		return SG_REASON_NO_REWRITE;
	const struct sg_rule_text *text = sg_env_text(env, rule->text);
	if (reason == SG_REASON_REWRITTEN) {
		if (sg_take_rewrite(s, text) < 0)
			return SG_REASON_VALUE_TOO_LONG;
	} else if (sg_write_clamped(s, text, rule->flags, n_fields) < 0) {
		return SG_REASON_VALUE_TOO_LONG;
	}
	*rewritten = 1;
	return reason;
}

/* A write of exactly a linux.sysctl pair of the container's config. */
static SG_INLINE int sg_is_pinned_write(struct sg_env *env, struct sg_scratch *s, __u32 file_pos,
					__u32 *rule)
{
	if (file_pos != 0)
		return 0;
	sg_env_load_value(env, s);
	if (s->cur_too_long)
		return 0;
	s->key.layer = SG_PINNED_LAYER;
	*rule = sg_env_exact(env, &s->key);
	if (*rule == SG_NO_RULE)
		return 0;
	const struct sg_rule_entry *entry = sg_env_rule(env, *rule);
	return entry && sg_cur_listed(env, s, entry);
}

static SG_INLINE int sg_is_violation(__u32 reason)
{
	return reason != SG_REASON_ACCESS && reason != SG_REASON_CLAMPED &&
	       reason != SG_REASON_REWRITTEN;
}

static SG_INLINE void sg_record(struct sg_result *res, __u32 verdict, __u32 reason, __u32 rule,
				__u32 layer, __u32 row)
{
	res->verdict = verdict;
	res->reason = reason;
	res->rule = rule;
	res->layer = (__s32)layer;
	res->row = row;
}

/* Whether s->cur is the rewrite value of @rule (its text): what that rule would store. */
static SG_INLINE int sg_cur_is_rewrite(struct sg_env *env, const struct sg_scratch *s,
				       const struct sg_rule_entry *rule)
{
	const struct sg_rule_text *text = sg_env_text(env, rule->text);
	__u32 i, len, differ;

	if (!text)
		return 0;
	len = text->rewrite_len;
	differ = s->cur_len ^ len;
	for (i = 0; i < SG_VALUE_MAX - 1; i++) {
		if (i >= len)
			break;
		differ |= (__u32)(s->cur[i] ^ text->rewrite[i]);
	}
	return differ == 0;
}

/*
 * Whether an enforcing layer's @rule takes the final value in s->cur as it
 * stands: in its values, inside its ranges (not clamped), its own rewrite.
 * A later layer's rewrite or clamp happens after this layer checked what was
 * written, and must leave a value it takes too: a layer only narrows.
 */
static SG_INLINE int sg_rule_keeps(struct sg_env *env, struct sg_scratch *s,
				   const struct sg_rule_entry *rule)
{
	__u32 n_fields = 0;

	if (!rule || !(rule->flags & (SG_RULE_VALUES | SG_RULE_RANGE | SG_RULE_REWRITE)))
		return 1;
	if ((rule->flags & SG_RULE_VALUES) && !sg_cur_listed(env, s, rule))
		return 0;
	if ((rule->flags & SG_RULE_RANGE) &&
	    sg_check_plain_range(env, s, rule, &n_fields) != SG_REASON_ACCESS)
		return 0;
	return !(rule->flags & SG_RULE_REWRITE) || sg_cur_is_rewrite(env, s, rule);
}

/*
 * Decides the access to the name in s->key (and, for a write, the value in
 * s->cur). Layers run in order and each can only narrow: the first enforcing
 * layer that denies ends the decision; an audit layer records what it would
 * have done (verdict SG_VERDICT_AUDIT) and lets the access pass unchanged.
 * A value a layer rewrote or clamped must also be one every earlier
 * enforcing layer takes (sg_rule_keeps): an annotation cannot widen the
 * baseline by rewriting. The result names the last layer that had a say,
 * or the one that denied.
 */
static SG_INLINE void sg_decide(struct sg_env *env, struct sg_scratch *s, int write, __u32 file_pos,
				struct sg_result *res)
{
	const struct sg_config *cfg = sg_env_config(env);
	__u32 layer, pinned_rule;

	res->verdict = SG_VERDICT_ALLOW;
	res->reason = SG_REASON_ACCESS;
	res->rule = SG_NO_RULE;
	res->layer = -1;
	res->row = cfg->n_rules + cfg->n_layers;
	res->rewritten = 0;

	if (write && cfg->has_pinned && sg_is_pinned_write(env, s, file_pos, &pinned_rule)) {
		res->reason = SG_REASON_PINNED;
		res->rule = pinned_rule;
		res->row = pinned_rule;
		return;
	}

	/* Each enforcing layer's rule, for the check of a later layer's rewrite. */
	const struct sg_rule_entry *enforced[SG_LAYERS_MAX] = {0};
	__u32 enforced_idx[SG_LAYERS_MAX] = {0};
	/* A write the host sees: each layer's rule must opt in to it. */
	__u32 host_ns = sg_env_host_namespaces(env);
	int host_level = write && host_ns && (sg_name_namespace(&s->key) & host_ns);

	for (layer = 0; layer < SG_LAYERS_MAX && layer < cfg->n_layers; layer++) {
		const struct sg_layer *l = &cfg->layers[layer];
		int enforce = l->mode != SG_MODE_AUDIT;
		__u32 rule_idx = sg_find_rule(env, s, layer);
		const struct sg_rule_entry *rule =
		    rule_idx == SG_NO_RULE ? 0 : sg_env_rule(env, rule_idx);
		__u32 access = rule ? rule->access : l->default_access;
		__u32 row = rule ? rule_idx : cfg->n_rules + layer;
		__u32 reason = SG_REASON_ACCESS, rewritten = 0;
		int denied = access < (write ? SG_ACCESS_READ_WRITE : SG_ACCESS_READ);

		if (!denied && host_level && !(rule && (rule->flags & SG_RULE_HOST_NAMESPACE))) {
			reason = SG_REASON_HOST_NAMESPACE;
			row = cfg->n_rules + cfg->n_layers + 1;
			denied = 1;
		}
		if (!denied && write) {
			reason = sg_check_write(env, s, rule, file_pos, enforce, &rewritten);
			denied = sg_is_violation(reason);
		}
		if (!rule)
			rule_idx = SG_NO_RULE;

		if (!enforce) {
			if ((denied || reason != SG_REASON_ACCESS) &&
			    res->verdict == SG_VERDICT_ALLOW)
				sg_record(res, SG_VERDICT_AUDIT, reason, rule_idx, layer, row);
			else if (res->verdict == SG_VERDICT_ALLOW)
				sg_record(res, SG_VERDICT_ALLOW, reason, rule_idx, layer, row);
			continue;
		}
		if (denied) {
			sg_record(res, SG_VERDICT_DENY, reason, rule_idx, layer, row);
			res->rewritten = 0;
			return;
		}
		if (rewritten) {
			sg_record(res, SG_VERDICT_REWRITE, reason, rule_idx, layer, row);
			res->rewritten = 1;
		} else if (res->verdict == SG_VERDICT_ALLOW) {
			sg_record(res, SG_VERDICT_ALLOW, reason, rule_idx, layer, row);
		}
		enforced[layer & (SG_LAYERS_MAX - 1)] = rule;
		enforced_idx[layer & (SG_LAYERS_MAX - 1)] = rule_idx;
	}
	if (!res->rewritten)
		return;
	for (layer = 0; layer < SG_LAYERS_MAX && (__s32)layer < res->layer; layer++) {
		const struct sg_rule_entry *rule = enforced[layer];
		__u32 rule_idx = enforced_idx[layer];
		if (!sg_rule_keeps(env, s, rule)) {
			sg_record(res, SG_VERDICT_DENY, SG_REASON_LATER_REWRITE, rule_idx, layer,
				  rule_idx);
			res->rewritten = 0;
			return;
		}
	}
	sg_pad_to_written(s);
}

#endif
