// SPDX-License-Identifier: Apache-2.0
/*
 * The policy language end to end: parse (sg_policy_parse), compose a set of
 * one (sg_policy_set_single), compile (sg_compile) and decide (sg_eval) for
 * names made from the policy's own rules. Beyond memory safety it checks the
 * semantics of DESIGN.md against the reference matcher of name.h:
 *   - the compiled lookup (exact table, then the DFA) picks the rule that
 *     the reference matcher and precedence pick;
 *   - reads and writes are allowed or denied by that rule's access level;
 *   - an allowed value or an in-range value is accepted, a constrained write
 *     at a position other than 0 is denied, a rewrite stores the rewrite
 *     value, a clamp the nearest bound;
 *   - audit mode never denies or rewrites and flags exactly what enforce
 *     would deny or rewrite; without working rewrites, a rewrite is a deny.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "policy/compose.h"
#include "policy/name.h"
#include "policy/policy.h"
#include "compile/compile.h"
#include "compile/dfa.h"
#include "compile/eval.h"
#include "reference.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ORIGIN	      "fuzz.json"
#define MAX_NAMES     48 /* names decided per input */
#define MAX_RULE_PICK 16 /* rules whose patterns are instantiated */
#define MAX_WILDCARDS 24 /* in all patterns of a policy that is compiled */

static const char *const fixed_names[] = {
    "kernel/domainname",
    "kernel/hostname",
    "kernel/random/uuid",
    "net/core/somaxconn",
    "net/ipv4/ip_local_port_range",
    "net/ipv4/conf/eth0.100/rp_filter",
    "vm/swappiness",
};

struct fuzz {
	const uint8_t *data;
	size_t size;
	uint64_t rng;
	const struct sg_policy *policy; /* the set's copy: its rules are the compiled ones */
	struct sg_compiled *compiled;
	const char *name;  /* the name being decided, for messages */
	bool reference_ok; /* every pattern is one the reference matcher answers at once */
};

static uint32_t rnd(struct fuzz *f, uint32_t n)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return n ? (uint32_t)(f->rng % n) : 0;
}

static void fail(const struct fuzz *f, const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_policy: name \"%s\": %s%s%s\n", f->name ? f->name : "", what,
		detail ? ": " : "", detail ? detail : "");
	abort();
}

/* A name @pattern matches (most of the time): wildcards replaced by text. */
static void instantiate(struct fuzz *f, const char *pattern, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *p = pattern; *p && o + 4 < cap; p++) {
		bool whole = (p == pattern || p[-1] == '/') && p[0] == '*' && p[1] == '*' &&
			     (p[2] == '/' || p[2] == '\0');
		if (whole) {
			static const char *const spans[] = {"", "x", "x/y", "**"};
			const char *s = spans[rnd(f, 4)];
			if (!*s && p[2] == '/')
				p++; /* zero components: drop the separator too */
			else
				for (; *s && o + 4 < cap; s++)
					out[o++] = *s;
			p++;
			continue;
		}
		if (*p == '*') {
			static const char *const runs[] = {"", "z", "zz", "*"};
			for (const char *s = runs[rnd(f, 4)]; *s; s++)
				out[o++] = *s;
		} else if (*p == '?') {
			out[o++] = "q?/"[rnd(f, 3)];
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	if (o && rnd(f, 6) == 0)
		out[rnd(f, (uint32_t)o)] = "a./"[rnd(f, 3)];
}

/* The reference decision: every rule, the winner by precedence (name.h). */
static size_t reference(const struct sg_policy *p, const char *name, bool patterns_only)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < p->n_rules; i++) {
		const char *pat = p->rules[i].pattern;
		if (patterns_only && sg_pattern_is_literal(pat))
			continue;
		if (!sg_pattern_match(pat, name))
			continue;
		if (best == SIZE_MAX ||
		    sg_pattern_precedence(pat, i, p->rules[best].pattern, best) < 0)
			best = i;
	}
	return best;
}

static void check_lookup(struct fuzz *f, const char *name, size_t want)
{
	uint32_t got = sg_compiled_exact(f->compiled, 0, name);
	if (got == SG_NO_RULE)
		got = sg_compiled_match_pattern(f->compiled, 0, name);
	size_t want_pattern = reference(f->policy, name, true);
	uint32_t got_pattern = sg_compiled_match_pattern(f->compiled, 0, name);
	uint32_t w = want == SIZE_MAX ? SG_NO_RULE : (uint32_t)want;
	uint32_t wp = want_pattern == SIZE_MAX ? SG_NO_RULE : (uint32_t)want_pattern;

	if (got != w || got_pattern != wp) {
		fprintf(stderr, "fuzz_policy: lookup %d (want %d), DFA %d (want %d)\n", (int)got,
			(int)w, (int)got_pattern, (int)wp);
		fail(f, "the compiled lookup disagrees with the reference matcher", NULL);
	}
}

/* The winning rule by the compiled tables: exact table, then the DFA. */
static size_t compiled_lookup(const struct fuzz *f, const char *name)
{
	uint32_t got = sg_compiled_exact(f->compiled, 0, name);
	if (got == SG_NO_RULE)
		got = sg_compiled_match_pattern(f->compiled, 0, name);
	if (got != SG_NO_RULE && got >= f->policy->n_rules)
		fail(f, "the compiled lookup names a rule the policy does not have", NULL);
	return got == SG_NO_RULE ? SIZE_MAX : got;
}

/* Equal as token lists ("4096\n" equals "4096"). */
static bool same_tokens(const char *a, const char *b)
{
	char na[2 * SG_VALUE_MAX], nb[2 * SG_VALUE_MAX];
	if (sg_value_normalise(a, strlen(a), na, sizeof(na)) < 0 ||
	    sg_value_normalise(b, strlen(b), nb, sizeof(nb)) < 0)
		return false;
	return strcmp(na, nb) == 0;
}

static void decide(struct fuzz *f, const struct sg_access_req *req, enum sg_mode mode,
		   bool rewrite_works, struct sg_decision *d)
{
	f->compiled->config.layers[0].mode = mode;
	f->compiled->config.rewrite_works = rewrite_works;
	sg_eval(f->compiled, req, d);
	if (d->verdict >= SG_VERDICT_COUNT || !d->reason)
		fail(f, "verdict out of range or without a reason", NULL);
	if (d->rewritten != (d->verdict == SG_VERDICT_REWRITE))
		fail(f, "rewritten without a rewrite verdict, or the reverse", d->reason);
	if (d->rewritten && !memchr(d->new_value, '\0', sizeof(d->new_value)))
		fail(f, "new value not terminated", NULL);
}

/*
 * What one access must come to. @expect: the enforce verdict, or -1 when
 * only the consistency between modes is checked; @new_value: what a
 * rewrite must store (as tokens), or NULL.
 */
static void check_access(struct fuzz *f, const struct sg_access_req *req, uint32_t rule, int expect,
			 const char *new_value)
{
	struct sg_decision enforce, no_rewrite, audit;

	decide(f, req, SG_MODE_ENFORCE, true, &enforce);
	decide(f, req, SG_MODE_ENFORCE, false, &no_rewrite);
	decide(f, req, SG_MODE_AUDIT, true, &audit);

	if (enforce.rule != rule || audit.rule != rule) {
		fprintf(stderr, "fuzz_policy: rule %d/%d, want %d\n", (int)enforce.rule,
			(int)audit.rule, (int)rule);
		fail(f, "the decision names another rule", enforce.reason);
	}
	if (expect >= 0 && enforce.verdict != (enum sg_verdict)expect) {
		fprintf(stderr, "fuzz_policy: %s \"%.*s\" at %" PRIu64 ": verdict %d, want %d\n",
			req->write ? "write" : "read", (int)(req->write ? req->value_len : 0),
			req->write ? req->value : "", req->file_pos, enforce.verdict, expect);
		fail(f, "unexpected verdict", enforce.reason);
	}
	if (new_value && enforce.verdict == SG_VERDICT_REWRITE &&
	    !same_tokens(enforce.new_value, new_value)) {
		fprintf(stderr, "fuzz_policy: stored \"%s\", want \"%s\"\n", enforce.new_value,
			new_value);
		fail(f, "a rewrite stores the wrong value", enforce.reason);
	}
	/* Without working rewrites, what would be rewritten is denied; nothing else changes. */
	enum sg_verdict want_nr =
	    enforce.verdict == SG_VERDICT_REWRITE ? SG_VERDICT_DENY : enforce.verdict;
	if (no_rewrite.verdict != want_nr)
		fail(f, "rewrite_works changes more than rewrites", no_rewrite.reason);
	/* Audit never denies or rewrites, and flags exactly what enforce would. */
	bool would = enforce.verdict == SG_VERDICT_DENY || enforce.verdict == SG_VERDICT_REWRITE;
	if (audit.verdict != (would ? SG_VERDICT_AUDIT : SG_VERDICT_ALLOW))
		fail(f, "audit mode does not mirror enforce", audit.reason);
}

static void write_value(struct fuzz *f, const char *name, uint32_t rule, const char *value,
			size_t len, uint64_t pos, int expect, const char *new_value)
{
	struct sg_access_req req = {
	    .name = name, .write = true, .value = value, .value_len = len, .file_pos = pos};
	check_access(f, &req, rule, expect, new_value);
}

static void write_text(struct fuzz *f, const char *name, uint32_t rule, const char *text,
		       int expect, const char *new_value)
{
	write_value(f, name, rule, text, strlen(text), 0, expect, new_value);
}

/*
 * Integer fields, each in, below or above its range and written in decimal,
 * hex or octal as the kernel's parser reads them; the verdict and, for a
 * clamp, the value stored follow from the rule alone.
 */
static void write_fields(struct fuzz *f, const char *name, uint32_t rule, const struct sg_rule *r)
{
	size_t max_fields = r->range_per_field ? r->n_ranges : SG_FIELDS_MAX;
	size_t n = 1 + rnd(f, (uint32_t)max_fields);
	char text[SG_VALUE_MAX * 2], want[SG_VALUE_MAX * 2];
	size_t o = 0, w = 0;
	bool out_of_range = false;

	for (size_t i = 0; i < n; i++) {
		const struct sg_range *rg = &r->ranges[r->range_per_field ? i : 0];
		int64_t v;
		int where = (int)rnd(f, 3); /* 0 inside, 1 below, 2 above */
		if (where == 1 && rg->min > INT64_MIN)
			v = rg->min - 1;
		else if (where == 2 && rg->max < INT64_MAX)
			v = rg->max + 1;
		else
			v = rnd(f, 2) ? rg->min : rg->max, where = 0;
		const char *sep = i == 0 ? (rnd(f, 2) ? " " : "") : (rnd(f, 2) ? "\t" : " ");
		char field[40];
		switch (v >= 0 ? rnd(f, 3) : 0) {
		case 1:
			snprintf(field, sizeof(field), "0x%" PRIx64, (uint64_t)v);
			break;
		case 2:
			snprintf(field, sizeof(field), "0%" PRIo64, (uint64_t)v);
			break;
		default:
			snprintf(field, sizeof(field), "%" PRId64, v);
		}
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", sep, field);
		if (where)
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%" PRId64,
					      i ? " " : "", where == 1 ? rg->min : rg->max);
		else
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%s", i ? " " : "",
					      field);
		out_of_range |= where != 0;
	}
	if (rnd(f, 2))
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\n");
	if (o >= SG_VALUE_MAX)
		return;

	int expect = SG_VERDICT_ALLOW;
	const char *stored = NULL;
	if (out_of_range && r->on_violation != SG_VIOLATION_CLAMP) {
		expect = SG_VERDICT_DENY;
	} else if (r->rewrite) {
		expect = SG_VERDICT_REWRITE;
		stored = r->rewrite;
	} else if (out_of_range) {
		expect = SG_VERDICT_REWRITE;
		stored = want;
	}
	write_text(f, name, rule, text, expect, stored);
}

/* Every access to @name this harness knows the answer to. */
static void check_name(struct fuzz *f, const char *name)
{
	const struct sg_policy *p = f->policy;
	size_t want = f->reference_ok ? reference(p, name, false) : compiled_lookup(f, name);
	const struct sg_rule *r = want == SIZE_MAX ? NULL : &p->rules[want];
	uint32_t rule = want == SIZE_MAX ? SG_NO_RULE : (uint32_t)want;
	enum sg_access access = r ? r->access : p->default_access;
	bool constrained = r && (r->n_values || r->n_ranges || r->rewrite);
	char text[256];

	f->name = name;
	if (f->reference_ok)
		check_lookup(f, name, want);

	struct sg_access_req read = {.name = name};
	check_access(f, &read, rule, access >= SG_ACCESS_READ ? SG_VERDICT_ALLOW : SG_VERDICT_DENY,
		     NULL);

	/* Some bytes of the input as a value: only the modes must agree. */
	size_t off = f->size ? rnd(f, (uint32_t)f->size) : 0;
	size_t len = f->size - off < 160 ? f->size - off : rnd(f, 160);
	write_value(f, name, rule, (const char *)f->data + off, len, 0,
		    access < SG_ACCESS_READ_WRITE ? SG_VERDICT_DENY
		    : !constrained		  ? SG_VERDICT_ALLOW
						  : -1,
		    NULL);

	if (access < SG_ACCESS_READ_WRITE) {
		write_text(f, name, rule, "1", SG_VERDICT_DENY, NULL);
		return;
	}
	if (!constrained) {
		write_value(f, name, rule, "1", 1, 7, SG_VERDICT_ALLOW, NULL);
		return;
	}
	/* Constrained: a write that is not at position 0 is denied. */
	write_value(f, name, rule, "1", 1, 1 + rnd(f, 4096), SG_VERDICT_DENY, NULL);

	int accepted = r->rewrite ? SG_VERDICT_REWRITE : SG_VERDICT_ALLOW;
	for (size_t i = 0; i < r->n_values; i++) {
		char spelled[2 * SG_VALUE_MAX];
		sg_value_spell(r->values[i], spelled, sizeof(spelled));
		write_text(f, name, rule, spelled, accepted, r->rewrite);
		/* The same tokens, spelled with other whitespace. */
		snprintf(text, sizeof(text), " %s\n", spelled);
		if (strlen(text) < SG_VALUE_MAX)
			write_text(f, name, rule, text, accepted, r->rewrite);
	}
	if (r->n_ranges && !r->range_per_field) {
		const struct sg_range *rg = &r->ranges[0];
		snprintf(text, sizeof(text), "%" PRId64, rg->min);
		write_text(f, name, rule, text, accepted, r->rewrite);
		snprintf(text, sizeof(text), "%" PRId64 "\n", rg->max);
		write_text(f, name, rule, text, accepted, r->rewrite);
		bool clamp = r->on_violation == SG_VIOLATION_CLAMP;
		char bound[32];
		if (rg->max < INT64_MAX) {
			snprintf(text, sizeof(text), "%" PRId64, rg->max + 1);
			snprintf(bound, sizeof(bound), "%" PRId64, rg->max);
			write_text(f, name, rule, text,
				   clamp ? SG_VERDICT_REWRITE : SG_VERDICT_DENY,
				   r->rewrite ? r->rewrite : bound);
		}
		/* DESIGN.md: the range holds for every integer field, however many. */
		if (!clamp && rg->max < INT64_MAX) {
			size_t o = 0;
			for (int i = 0; i < SG_FIELDS_MAX; i++)
				o += (size_t)snprintf(text + o, sizeof(text) - o, "%" PRId64 " ",
						      rg->min);
			snprintf(text + o, sizeof(text) - o, "%" PRId64, rg->max + 1);
			if (strlen(text) < SG_VALUE_MAX)
				write_text(f, name, rule, text, SG_VERDICT_DENY, NULL);
		}
		if (rg->min > INT64_MIN) {
			snprintf(text, sizeof(text), "%" PRId64, rg->min - 1);
			snprintf(bound, sizeof(bound), "%" PRId64, rg->min);
			write_text(f, name, rule, text,
				   clamp ? SG_VERDICT_REWRITE : SG_VERDICT_DENY,
				   r->rewrite ? r->rewrite : bound);
		}
	} else if (r->n_ranges) {
		size_t o = 0;
		for (size_t i = 0; i < r->n_ranges; i++)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%" PRId64,
					      i ? "\t" : "", r->ranges[i].min);
		if (o < SG_VALUE_MAX)
			write_text(f, name, rule, text, accepted, r->rewrite);
		/* One field more than the rule has ranges for. */
		snprintf(text + o, sizeof(text) - o, " 0");
		if (strlen(text) < SG_VALUE_MAX)
			write_text(f, name, rule, text, SG_VERDICT_DENY, NULL);
	}
	if (r->n_ranges)
		for (int k = 0; k < 4; k++)
			write_fields(f, name, rule, r);
	if (r->n_values == 0 && r->n_ranges == 0)
		write_text(f, name, rule, "anything", SG_VERDICT_REWRITE, r->rewrite);
	/* A value the kernel cannot hand over whole is denied for a constrained rule. */
	memset(text, '1', SG_VALUE_MAX);
	write_value(f, name, rule, text, SG_VALUE_MAX, 0, SG_VERDICT_DENY, NULL);
}

static void try_name(struct fuzz *f, const char *candidate, unsigned *n)
{
	char name[SG_NAME_MAX];
	struct sg_err err = {0};

	if (*n >= MAX_NAMES || sg_name_normalise(candidate, name, sizeof(name), &err) < 0)
		return;
	(*n)++;
	check_name(f, name);
}

static void check_policy(struct fuzz *f)
{
	const struct sg_policy *p = f->policy;
	char name[SG_NAME_MAX];
	unsigned n = 0;

	for (size_t i = 0; i < SG_ARRAY_SIZE(fixed_names); i++)
		try_name(f, fixed_names[i], &n);
	for (size_t k = 0; k < p->n_rules && k < MAX_RULE_PICK; k++) {
		size_t i = p->n_rules <= MAX_RULE_PICK ? k : rnd(f, (uint32_t)p->n_rules);
		try_name(f, p->rules[i].pattern, &n);
		instantiate(f, p->rules[i].pattern, name, sizeof(name));
		try_name(f, name, &n);
		instantiate(f, p->rules[i].pattern, name, sizeof(name));
		try_name(f, name, &n);
	}
	/* A name too long to decide is denied before any rule. */
	struct sg_access_req read = {.name =
					 "kernel/"
					 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
					 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
					 "xxxxxxxxxxxxxxxxxxxxxxxxx"};
	struct sg_decision d;
	f->name = read.name;
	decide(f, &read, SG_MODE_ENFORCE, true, &d);
	if (d.verdict != SG_VERDICT_DENY)
		fail(f, "a name longer than SG_NAME_MAX is not denied", d.reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sg_policy policy = {0};
	struct sg_policy_set set = {0};
	struct sg_compiled compiled = {0};
	struct sg_err err = {0};
	struct fuzz f = {.data = data, .size = size, .rng = 0x9e3779b97f4a7c15ull};

	for (size_t i = 0; i < size; i++)
		f.rng = (f.rng ^ data[i]) * 0x100000001b3ull;
	f.rng |= 1;

	if (sg_policy_parse((const char *)data, size, ORIGIN, &policy, &err) < 0) {
		if (strncmp(err.msg, ORIGIN, strlen(ORIGIN)) != 0)
			fail(&f, "an error that does not name the policy", err.msg);
		goto out;
	}
	sg_policy_find_shadowed(&policy);
	for (size_t i = 0; i < policy.n_warnings; i++)
		if (strncmp(policy.warnings[i], ORIGIN, strlen(ORIGIN)) != 0)
			fail(&f, "a warning that does not name the policy", policy.warnings[i]);
	for (size_t i = 0; i < policy.n_rules; i++) {
		const struct sg_rule *r = &policy.rules[i];
		char again[SG_NAME_MAX];
		struct sg_err name_err = {0};
		if (sg_name_normalise(r->name, again, sizeof(again), &name_err) < 0 ||
		    strcmp(again, r->pattern) != 0)
			fail(&f, "a rule's pattern is not its normalised name", r->name);
		if (r->is_literal != sg_pattern_is_literal(r->pattern))
			fail(&f, "is_literal is wrong", r->name);
		if (r->access != SG_ACCESS_READ_WRITE && (r->n_values || r->n_ranges || r->rewrite))
			fail(&f, "constraints on a rule that cannot write", r->name);
		if (r->n_values && r->n_ranges)
			fail(&f, "values and range on one rule", r->name);
		for (size_t k = 0; k < r->n_ranges; k++)
			if (r->ranges[k].min > r->ranges[k].max)
				fail(&f, "an inverted range", r->name);
	}

	/*
	 * Patterns like "*??????????x*" blow the DFA up to SG_MAX_DFA_STATES. That
	 * bound holds (a tenth of a second in a release build), but under the
	 * sanitizers each such input takes seconds and fuzzing stalls on them.
	 */
	size_t wildcards = 0;
	for (size_t i = 0; i < policy.n_rules; i++)
		for (const char *c = policy.rules[i].pattern; *c; c++)
			wildcards += *c == '*' || *c == '?';
	if (wildcards > MAX_WILDCARDS)
		goto out;

	if (sg_policy_set_single(&policy, ORIGIN, &set, &err) < 0)
		fail(&f, "a valid policy does not make a set", err.msg);
	if (sg_compile(&set, &compiled, &err) < 0) {
		/* Only size limits may refuse a valid policy. */
		if (!err.msg[0])
			fail(&f, "compilation failed without a message", NULL);
		goto out;
	}
	if (compiled.config.n_layers != 1 || compiled.config.n_rules != policy.n_rules)
		fail(&f, "compiled tables do not hold the policy's rules", NULL);
	f.policy = &set.layers[0];
	f.reference_ok = true;
	for (size_t i = 0; i < policy.n_rules; i++)
		f.reference_ok = f.reference_ok && reference_is_fast(policy.rules[i].pattern);
	f.compiled = &compiled;
	check_policy(&f);
out:
	sg_compiled_free(&compiled);
	sg_policy_set_free(&set);
	sg_policy_free(&policy);
	return 0;
}
