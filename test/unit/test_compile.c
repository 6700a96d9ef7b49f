// SPDX-License-Identifier: Apache-2.0
/*
 * The compiler: the tables of bpf/sysctl_guard.h built from policies in
 * memory, and a differential test of the compiled lookup (exact table, then
 * the layer's DFA) against the reference matcher and precedence of name.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "policy/name.h"
#include "policy/policy.h"
#include "compile/compile.h"
#include "compile/dfa_pack.h"
#include "compile/eval.h"
#include "test.h"

/* --- policies built in memory, without the JSON parser --- */

static struct sg_rule *add_rule(struct sg_policy *p, const char *name, enum sg_access access)
{
	char pattern[SG_NAME_MAX];
	struct sg_err err = {0};

	if (sg_name_normalise(name, pattern, sizeof(pattern), &err) < 0) {
		fprintf(stderr, "bad test rule %s: %s\n", name, err.msg);
		exit(1);
	}
	p->rules = sg_xrealloc(p->rules, p->n_rules + 1, sizeof(*p->rules));
	struct sg_rule *r = &p->rules[p->n_rules++];
	memset(r, 0, sizeof(*r));
	r->name = sg_xstrdup(name);
	r->pattern = sg_xstrdup(pattern);
	r->is_literal = sg_pattern_is_literal(pattern);
	r->access = access;
	return r;
}

static void set_values(struct sg_rule *r, const char **values, size_t n)
{
	r->values = sg_xcalloc(n, sizeof(*r->values));
	for (size_t i = 0; i < n; i++)
		r->values[i] = sg_xstrdup(values[i]);
	r->n_values = n;
}

static void set_ranges(struct sg_rule *r, const struct sg_range *ranges, size_t n, bool per_field)
{
	r->ranges = sg_xcalloc(n, sizeof(*r->ranges));
	memcpy(r->ranges, ranges, n * sizeof(*ranges));
	r->n_ranges = n;
	r->range_per_field = per_field;
}

static void free_policy(struct sg_policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		struct sg_rule *r = &p->rules[i];
		free(r->name);
		free(r->pattern);
		for (size_t v = 0; v < r->n_values; v++)
			free(r->values[v]);
		free(r->values);
		free(r->ranges);
		free(r->rewrite);
	}
	free(p->rules);
	memset(p, 0, sizeof(*p));
}

static void free_set(struct sg_policy_set *set)
{
	for (size_t l = 0; l < set->n_layers; l++)
		free_policy(&set->layers[l]);
	for (size_t i = 0; i < set->n_pinned; i++) {
		free(set->pinned[i].name);
		free(set->pinned[i].value);
	}
	free(set->pinned);
	memset(set, 0, sizeof(*set));
}

static void add_pinned(struct sg_policy_set *set, const char *name, const char *value)
{
	set->pinned = sg_xrealloc(set->pinned, set->n_pinned + 1, sizeof(*set->pinned));
	set->pinned[set->n_pinned].name = sg_xstrdup(name);
	set->pinned[set->n_pinned].value = sg_xstrdup(value);
	set->n_pinned++;
}

static void compile_ok(const struct sg_policy_set *set, struct sg_compiled *c)
{
	struct sg_err err = {0};
	if (sg_compile(set, c, &err) < 0) {
		fprintf(stderr, "sg_compile: %s\n", err.msg);
		exit(1);
	}
}

/*
 * The DFA as the program reads it (dfa_pack.h), written in two windows as
 * tables.c writes them, holds every entry of the compiled one.
 */
static void check_packed(const struct sg_dfa *dfa)
{
	const uint32_t nc = dfa->n_classes;
	struct sg_dfa_packed p;

	sg_dfa_pack(dfa, &p);
	CHECK(p.n_elements >= dfa->n_states);
	const size_t n = p.n_elements, split = n / 3;
	sg_dfa_element *elements = sg_xcalloc(n, sizeof(*elements));
	memset(elements, 0xff, n * sizeof(*elements)); /* the writer leaves nothing as it was */
	sg_dfa_packed_write(&p, 0, split, elements);
	sg_dfa_packed_write(&p, split, n - split, elements + split);
	for (uint32_t s = 0; s < dfa->n_states; s++) {
		bool same = sg_dfa_element_lookup(elements, n, s, sg_dfa_accept_column(nc), true) ==
			    dfa->accept[s];
		for (uint32_t cl = 0; cl < nc && same; cl++)
			same = sg_dfa_element_lookup(elements, n, s, cl, false) ==
			       sg_dfa_next(dfa, s, cl);
		if (!same) {
			fprintf(stderr, "  packed DFA: state %u of %u differs\n", s, dfa->n_states);
			CHECK(same);
			break;
		}
	}
	free(elements);
	sg_dfa_packed_free(&p);
}

/* The tables are well formed: state 0 dead, every index in range, keys sorted and unique. */
static void check_invariants(const struct sg_compiled *c)
{
	const struct sg_dfa *dfa = &c->dfa;
	uint32_t nc = dfa->n_classes;

	CHECK(nc >= 2 && nc <= 256);
	CHECK(dfa->n_states >= 1);
	CHECK(dfa->accept[SG_DEAD_STATE] == SG_NO_RULE);
	for (uint32_t cl = 0; cl < nc; cl++)
		CHECK(sg_dfa_next(dfa, SG_DEAD_STATE, cl) == SG_DEAD_STATE);
	/* 16-bit entries while every state number fits them, 32-bit after */
	CHECK(dfa->wide == (dfa->n_states > UINT16_MAX + 1u));
	for (uint32_t s = 0; s < dfa->n_states; s++)
		for (uint32_t cl = 0; cl < nc; cl++)
			if (sg_dfa_next(dfa, s, cl) >= dfa->n_states) {
				CHECK(sg_dfa_next(dfa, s, cl) < dfa->n_states);
				s = dfa->n_states - 1;
				break;
			}
	for (uint32_t s = 0; s < dfa->n_states; s++)
		if (dfa->accept[s] != SG_NO_RULE && dfa->accept[s] >= c->config.n_rules) {
			CHECK(dfa->accept[s] < c->config.n_rules);
			break;
		}
	for (unsigned b = 0; b < 256; b++) {
		CHECK(dfa->byte_class[b] < nc);
		if (b != '/' && dfa->byte_class[b] == dfa->byte_class['/']) {
			CHECK(dfa->byte_class[b] != dfa->byte_class['/']);
			break;
		}
	}
	/* The program reads the byte classes and start states in the config. */
	CHECK(c->config.n_classes == nc);
	CHECK(memcmp(c->config.byte_class, dfa->byte_class, sizeof(dfa->byte_class)) == 0);
	check_packed(dfa);
	for (size_t i = 1; i < c->n_exact; i++) {
		const struct sg_exact_name *a = &c->exact[i - 1], *b = &c->exact[i];
		int order = a->layer != b->layer   ? (a->layer > b->layer) - (a->layer < b->layer)
			    : a->order != b->order ? (a->order > b->order) - (a->order < b->order)
						   : strcmp(a->name, b->name);
		if (order >= 0) {
			CHECK(!"exact names sorted and unique");
			break;
		}
	}
	for (size_t i = 1; i < c->n_values; i++) {
		const struct sg_rule_value *a = &c->values[i - 1], *b = &c->values[i];
		if (a->set > b->set || (a->set == b->set && strcmp(a->value, b->value) >= 0)) {
			CHECK(!"values sorted and unique");
			break;
		}
	}
	for (uint32_t l = 0; l < c->config.n_layers; l++)
		CHECK(dfa->start[l] < dfa->n_states &&
		      c->config.layers[l].dfa_start == dfa->start[l]);
}

/* The rule of @layer that decides @name: exact table first, then the layer's DFA. */
static uint32_t lookup(const struct sg_compiled *c, uint32_t layer, const char *name)
{
	uint32_t rule = sg_compiled_exact(c, layer, name);
	return rule != SG_NO_RULE ? rule : sg_compiled_match_pattern(c, layer, name);
}

/* --- the example of DESIGN.md, composed with an annotation and pinned pairs --- */

static void example_set(struct sg_policy_set *set)
{
	struct sg_policy *base = &set->layers[0], *ann = &set->layers[1];

	memset(set, 0, sizeof(*set));
	set->n_layers = 2;
	base->origin = "base.json";
	base->mode = SG_MODE_ENFORCE;
	base->default_access = SG_ACCESS_READ;
	struct sg_rule *r = add_rule(base, "kernel.domainname", SG_ACCESS_READ_WRITE); /* 0 */
	r->rewrite = sg_xstrdup("sandbox");
	r = add_rule(base, "net.core.somaxconn", SG_ACCESS_READ_WRITE); /* 1 */
	set_ranges(r, (struct sg_range[]){{128, 4096}}, 1, false);
	r->on_violation = SG_VIOLATION_CLAMP;
	r = add_rule(base, "net.ipv4.ip_local_port_range", SG_ACCESS_READ_WRITE); /* 2 */
	set_ranges(r, (struct sg_range[]){{1024, 65535}, {2048, 60000}}, 2, true);
	r = add_rule(base, "vm.swappiness", SG_ACCESS_READ_WRITE); /* 3 */
	set_values(r, (const char *[]){"0", "10", "60"}, 3);
	add_rule(base, "kernel.random.*", SG_ACCESS_NONE);	  /* 4 */
	add_rule(base, "kernel/domainname", SG_ACCESS_NONE);	  /* 5: duplicate, never wins */
	add_rule(base, "kernel.*", SG_ACCESS_READ);		  /* 6 */
	add_rule(base, "net.**", SG_ACCESS_READ_WRITE);		  /* 7 */
	add_rule(base, "kernel.random.uu?d", SG_ACCESS_READ);	  /* 8: 17 literal chars */
	add_rule(base, "kernel.random.*", SG_ACCESS_READ);	  /* 9: tie with 4, listed later */
	add_rule(base, "net/ipv4/conf/eth0.7/x", SG_ACCESS_NONE); /* 10 */

	ann->origin = "annotation io.sysctl-guard.policy";
	ann->mode = SG_MODE_AUDIT;
	ann->default_access = SG_ACCESS_NONE;
	add_rule(ann, "net.ipv4.conf.eth0/100.rp_filter", SG_ACCESS_READ_WRITE); /* 11 */
	add_rule(ann, "net.ipv4.conf.*.rp_filter", SG_ACCESS_READ);		 /* 12 */

	add_pinned(set, "net/ipv4/ping_group_range", "0 0"); /* 13 */
	add_pinned(set, "net/core/somaxconn", "1024");	     /* 14 */
	add_pinned(set, "net/ipv4/ping_group_range", "1 1"); /* 13 */
}

TEST(rule_entries)
{
	struct sg_policy_set set;
	struct sg_compiled c;

	example_set(&set);
	compile_ok(&set, &c);
	check_invariants(&c);

	CHECK(c.config.n_layers == 2);
	CHECK(c.config.n_rules == 15);
	CHECK(c.config.rewrite_works == 0);
	CHECK(c.config.layers[0].mode == SG_MODE_ENFORCE);
	CHECK(c.config.layers[0].default_access == SG_ACCESS_READ);
	CHECK(c.config.layers[1].mode == SG_MODE_AUDIT);
	CHECK(c.config.layers[1].default_access == SG_ACCESS_NONE);

	/* Only the rewrite (0) and the clamp (1) have texts, in rule order. */
	CHECK(c.n_texts == 2);
	const struct sg_rule_entry *e = &c.rules[0];
	CHECK(e->access == SG_ACCESS_READ_WRITE && e->flags == SG_RULE_REWRITE);
	CHECK(e->layer == 0 && e->text == 0);
	CHECK(c.texts[0].rewrite_len == 7 && strcmp(c.texts[0].rewrite, "sandbox") == 0);

	e = &c.rules[1];
	CHECK(e->flags == (SG_RULE_RANGE | SG_RULE_RANGE_ALL));
	CHECK(sg_compiled_bounds(&c, e, 0)->min == 128 &&
	      sg_compiled_bounds(&c, e, 0)->max == 4096 && e->on_violation == SG_VIOLATION_CLAMP);
	CHECK(e->text == 1 && c.texts[1].rewrite_len == 0);
	CHECK(c.texts[1].bound[0][0].len == 3 && strcmp(c.texts[1].bound[0][0].text, "128") == 0);
	CHECK(c.texts[1].bound[0][1].len == 4 && strcmp(c.texts[1].bound[0][1].text, "4096") == 0);
	for (uint32_t i = 2; i < c.config.n_rules; i++)
		CHECK(c.rules[i].text == SG_NO_RULE);

	e = &c.rules[2];
	CHECK(e->flags == SG_RULE_RANGE && e->n_ranges == 2);
	CHECK(sg_compiled_bounds(&c, e, 0)->min == 1024 &&
	      sg_compiled_bounds(&c, e, 0)->max == 65535 &&
	      sg_compiled_bounds(&c, e, 1)->min == 2048 &&
	      sg_compiled_bounds(&c, e, 1)->max == 60000);
	CHECK(e->on_violation == SG_VIOLATION_DENY);

	CHECK(c.rules[3].flags == SG_RULE_VALUES);
	CHECK(c.rules[4].access == SG_ACCESS_NONE && c.rules[4].flags == 0);
	CHECK(c.rules[11].layer == 1 && c.rules[12].layer == 1);

	for (uint32_t pinned = 13; pinned <= 14; pinned++) {
		CHECK(c.rules[pinned].layer == SG_PINNED_LAYER);
		CHECK(c.rules[pinned].access == SG_ACCESS_READ_WRITE);
		CHECK(c.rules[pinned].flags == SG_RULE_VALUES);
		CHECK(c.origins[pinned].index == SIZE_MAX);
	}
	CHECK_STR(c.origins[13].name, "net/ipv4/ping_group_range");
	CHECK(c.origins[5].index == 5);
	CHECK_STR(c.origins[5].policy, "base.json");
	CHECK_STR(c.origins[5].name, "kernel/domainname");
	CHECK_STR(c.origins[12].name, "net.ipv4.conf.*.rp_filter");
	CHECK(c.origins[12].index == 1);

	sg_compiled_free(&c);
	CHECK(c.rules == NULL && c.dfa.transitions == NULL && c.dfa.n_states == 0);
	free_set(&set);
}

/* Each sequence of bounds is stored once, after the rules, whichever rules have it. */
TEST(rules_with_the_same_ranges_share_their_bounds)
{
	const struct sg_range ten = {0, 10}, two[] = {{0, 10}, {5, 6}};
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_policy *p = &set.layers[0];
	struct sg_compiled c;

	p->origin = "ranges.json";
	set_ranges(add_rule(p, "a.a", SG_ACCESS_READ_WRITE), &ten, 1, false);
	set_ranges(add_rule(p, "a.b", SG_ACCESS_READ_WRITE), &ten, 1, false);
	set_ranges(add_rule(p, "a.c", SG_ACCESS_READ_WRITE), two, 2, true);
	set_ranges(add_rule(p, "a.d", SG_ACCESS_READ_WRITE), &ten, 1, true);
	add_rule(p, "a.e", SG_ACCESS_READ_WRITE);
	compile_ok(&set, &c);
	CHECK(c.n_bounds == 3);
	CHECK(c.rules[0].bounds == c.config.n_rules && c.rules[1].bounds == c.rules[0].bounds);
	CHECK(c.rules[2].bounds == c.config.n_rules + 1 && c.rules[3].bounds == c.rules[0].bounds);
	CHECK(sg_compiled_bounds(&c, &c.rules[2], 1)->min == 5);
	CHECK(c.rules[4].bounds == 0 && !(c.rules[4].flags & SG_RULE_RANGE));
	sg_compiled_free(&c);
	free_set(&set);
}

/* Rules with the same values, in any order, share one set of them; the others keep their own. */
TEST(rules_with_the_same_values_share_a_set)
{
	const char *one_two[] = {"1", "2"}, *two_one[] = {"2", "1"}, *one[] = {"1"};
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_policy *p = &set.layers[0];
	struct sg_compiled c;

	p->origin = "values.json";
	set_values(add_rule(p, "a.a", SG_ACCESS_READ_WRITE), one_two, 2);
	set_values(add_rule(p, "a.b", SG_ACCESS_READ_WRITE), one, 1);
	set_values(add_rule(p, "a.c", SG_ACCESS_READ_WRITE), two_one, 2);
	compile_ok(&set, &c);
	CHECK(c.n_values == 3);
	CHECK(c.rules[0].value_set == 0 && c.rules[1].value_set == 1 && c.rules[2].value_set == 0);
	CHECK(sg_compiled_has_value(&c, 2, "1") && sg_compiled_has_value(&c, 2, "2"));
	CHECK(sg_compiled_has_value(&c, 1, "1") && !sg_compiled_has_value(&c, 1, "2"));
	sg_compiled_free(&c);
	free_set(&set);
}

/*
 * The values table is sorted by rule and value, each pair once: a rule's
 * few values and its many out of order, and linux.sysctl pairs of one name
 * apart from each other (their rules' values out of rule order).
 */
TEST(values_are_sorted_by_rule_then_value)
{
	const char *few[] = {"2", "0", "1", "0"};
	const char *many[] = {"k", "b", "j", "a", "i", "c", "h", "d", "g", "e", "f", "b"};

	for (int pinned = 0; pinned <= 1; pinned++) {
		struct sg_policy_set set = {.n_layers = 1};
		struct sg_compiled c;

		set.layers[0].origin = "values.json";
		set_values(add_rule(&set.layers[0], "a.few", SG_ACCESS_READ_WRITE), few, 4);
		set_values(add_rule(&set.layers[0], "a.many", SG_ACCESS_READ_WRITE), many, 12);
		if (pinned) {
			add_pinned(&set, "b.x", "9");
			add_pinned(&set, "b.y", "5");
			add_pinned(&set, "b.x", "3");
		}
		compile_ok(&set, &c);
		CHECK(c.n_values == 3 + 11 + (pinned ? 3 : 0));
		for (size_t i = 1; i < c.n_values; i++)
			CHECK(c.values[i - 1].set < c.values[i].set ||
			      (c.values[i - 1].set == c.values[i].set &&
			       strcmp(c.values[i - 1].value, c.values[i].value) < 0));
		for (size_t i = 0; i < SG_ARRAY_SIZE(many); i++)
			CHECK(sg_compiled_has_value(&c, 1, many[i]));
		CHECK(sg_compiled_has_value(&c, 0, "1") && !sg_compiled_has_value(&c, 0, "k"));
		if (pinned) {
			CHECK(sg_compiled_has_value(&c, 2, "3") &&
			      sg_compiled_has_value(&c, 2, "9"));
			CHECK(sg_compiled_has_value(&c, 3, "5") &&
			      !sg_compiled_has_value(&c, 3, "9"));
		}
		sg_compiled_free(&c);
		free_set(&set);
	}
}

TEST(lookups)
{
	struct sg_policy_set set;
	struct sg_compiled c;

	example_set(&set);
	compile_ok(&set, &c);

	/* Exact names; of duplicates the first listed. */
	CHECK(sg_compiled_exact(&c, 0, "kernel/domainname") == 0);
	CHECK(sg_compiled_exact(&c, 0, "vm/swappiness") == 3);
	CHECK(sg_compiled_exact(&c, 0, "net/ipv4/conf/eth0.7/x") == 10);
	CHECK(sg_compiled_exact(&c, 1, "kernel/domainname") == SG_NO_RULE);
	CHECK(sg_compiled_exact(&c, 0, "kernel/random/uuid") == SG_NO_RULE);
	CHECK(sg_compiled_exact(&c, 1, "net/ipv4/conf/eth0.100/rp_filter") == 11);
	CHECK(sg_compiled_exact(&c, SG_PINNED_LAYER, "net/ipv4/ping_group_range") == 13);
	CHECK(sg_compiled_exact(&c, SG_PINNED_LAYER, "net/core/somaxconn") == 14);
	CHECK(sg_compiled_exact(&c, SG_PINNED_LAYER, "vm/swappiness") == SG_NO_RULE);

	/* Patterns: more literal characters win, then the first listed. */
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/random/uuid") == 8);
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/random/boot_id") == 4);
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/hostname") == 6);
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/random") == 6);
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel") == SG_NO_RULE);
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/a/b") == SG_NO_RULE);
	CHECK(sg_compiled_match_pattern(&c, 0, "net") == 7);
	CHECK(sg_compiled_match_pattern(&c, 0, "net/core/somaxconn") == 7);
	CHECK(sg_compiled_match_pattern(&c, 0, "net/ipv4/conf/eth0.7/x") == 7);
	CHECK(sg_compiled_match_pattern(&c, 0, "network") == SG_NO_RULE);
	CHECK(sg_compiled_match_pattern(&c, 0, "vm/swappiness") == SG_NO_RULE);
	CHECK(sg_compiled_match_pattern(&c, 1, "net/ipv4/conf/eth0/rp_filter") == 12);
	CHECK(sg_compiled_match_pattern(&c, 1, "net/ipv4/conf/eth0.100/rp_filter") == 12);
	CHECK(sg_compiled_match_pattern(&c, 1, "net/ipv4/conf/eth0/x/rp_filter") == SG_NO_RULE);
	CHECK(sg_compiled_match_pattern(&c, 2, "net/core/somaxconn") == SG_NO_RULE);
	/* Bytes no pattern names, NUL-free: the 'other' class. */
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/\xff\x01") == 6);

	CHECK(lookup(&c, 0, "net/ipv4/conf/eth0.7/x") == 10);
	CHECK(lookup(&c, 0, "kernel/domainname") == 0);

	/* Values, per rule, as normalised token lists. */
	CHECK(sg_compiled_has_value(&c, 3, "10"));
	CHECK(sg_compiled_has_value(&c, 3, "0"));
	CHECK(!sg_compiled_has_value(&c, 3, "11"));
	CHECK(!sg_compiled_has_value(&c, 3, "10 "));
	CHECK(!sg_compiled_has_value(&c, 2, "10"));
	CHECK(sg_compiled_has_value(&c, 13, "0 0"));
	CHECK(sg_compiled_has_value(&c, 13, "1 1"));
	CHECK(!sg_compiled_has_value(&c, 13, "1024"));
	CHECK(sg_compiled_has_value(&c, 14, "1024"));
	CHECK(c.n_values == 6);

	sg_compiled_free(&c);
	free_set(&set);
}

/* The evaluator over these tables: the decision of bpf/sysctl_guard_decide.h. */
TEST(decisions_over_the_tables)
{
	struct sg_policy_set set;
	struct sg_compiled c;
	struct sg_decision d;

	example_set(&set);
	set.n_layers = 1; /* the annotation layer is audit-only; keep the baseline */
	compile_ok(&set, &c);
	set.n_layers = 2;
	c.config.rewrite_works = 1;

	struct sg_access_req req = {
	    .name = "vm/swappiness", .write = true, .value = "60\n", .value_len = 3};
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_ALLOW && d.rule == 3);
	CHECK(strcmp(d.reason, "the value is one of the rule's values") == 0);
	req.value = "61";
	req.value_len = 2;
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_DENY && d.rule == 3);
	CHECK(strcmp(d.reason, "value not in the rule's values") == 0);

	req = (struct sg_access_req){.name = "net/ipv4/ip_local_port_range",
				     .write = true,
				     .value = "2000 3000",
				     .value_len = 9};
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_ALLOW && d.rule == 2);
	CHECK(strcmp(d.reason, "every field is within the rule's range") == 0);
	req.name = "net/ipv4/tcp_rmem"; /* net.**: read-write, unconstrained */
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_ALLOW && d.rule == 7);
	CHECK(strcmp(d.reason, "the access level allows writes") == 0);
	req.name = "kernel/ostype"; /* kernel.*: read */
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_DENY && d.rule == 6);
	CHECK(strcmp(d.reason, "the access level does not allow writes") == 0);

	req = (struct sg_access_req){.name = "kernel/random/boot_id"};
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_DENY && d.rule == 4);
	CHECK(strcmp(d.reason, "the access level does not allow reads") == 0);
	req.name = "kernel/random/uuid";
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_ALLOW && d.rule == 8);
	CHECK(strcmp(d.reason, "the access level allows reads") == 0);

	req = (struct sg_access_req){
	    .name = "net/ipv4/ping_group_range", .write = true, .value = "1\t1\n", .value_len = 4};
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_ALLOW);
	CHECK(d.rule == sg_compiled_exact(&c, SG_PINNED_LAYER, "net/ipv4/ping_group_range"));

	req = (struct sg_access_req){
	    .name = "net/core/somaxconn", .write = true, .value = "9000", .value_len = 4};
	sg_eval(&c, &req, &d);
	CHECK(d.verdict == SG_VERDICT_REWRITE && d.rule == 1);
	/* The program writes fields padded to a fixed width; the kernel skips the blanks. */
	char *end = NULL;
	CHECK(strtol(d.new_value, &end, 10) == 4096 && end && *end == '\0');

	sg_compiled_free(&c);
	free_set(&set);
}

TEST(layers_without_patterns_start_dead)
{
	struct sg_policy_set set = {.n_layers = 2};
	struct sg_compiled c;

	set.layers[0].origin = "literal only";
	add_rule(&set.layers[0], "kernel.domainname", SG_ACCESS_READ_WRITE);
	set.layers[1].origin = "patterns";
	add_rule(&set.layers[1], "kernel.*", SG_ACCESS_READ);
	compile_ok(&set, &c);
	check_invariants(&c);
	CHECK(c.config.layers[0].dfa_start == SG_DEAD_STATE);
	CHECK(c.config.layers[1].dfa_start != SG_DEAD_STATE);
	CHECK(sg_compiled_match_pattern(&c, 0, "kernel/domainname") == SG_NO_RULE);
	CHECK(sg_compiled_match_pattern(&c, 1, "kernel/domainname") == 1);
	sg_compiled_free(&c);
	free_set(&set);

	/* Nothing at all: one dead state, two classes. */
	struct sg_policy_set empty = {0};
	compile_ok(&empty, &c);
	check_invariants(&c);
	CHECK(c.dfa.n_states == 1 && c.config.n_rules == 0 && c.n_exact == 0);
	CHECK(sg_compiled_exact(&c, 0, "x") == SG_NO_RULE);
	CHECK(!sg_compiled_has_value(&c, 0, "x"));
	sg_compiled_free(&c);
}

TEST(byte_classes_stay_few)
{
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_compiled c;

	set.layers[0].origin = "p";
	add_rule(&set.layers[0], "net.ipv4.conf.*.rp_filter", SG_ACCESS_READ);
	add_rule(&set.layers[0], "vm.some_very_long_literal_name", SG_ACCESS_READ);
	compile_ok(&set, &c);
	check_invariants(&c);
	/* Literal rules add no classes; '/' has its own; unnamed bytes share one. */
	CHECK(c.config.byte_class['w'] == c.config.byte_class[0xfe]);
	CHECK(c.config.byte_class['/'] != c.config.byte_class['n']);
	CHECK(c.config.n_classes <= 2 + strlen("netipv4confrp_filter"));
	sg_compiled_free(&c);
	free_set(&set);
}

/*
 * A DFA with more states than 16 bits can number: its table turns wide on
 * the way, the rows made before copied over.
 */
TEST(wide_tables_past_65536_states)
{
	struct sg_policy_set set = {.n_layers = 1};
	char name[SG_NAME_MAX] = "**.a";
	struct sg_compiled c;
	bool seen = false;
	int stars = 14;

	set.layers[0].origin = "wide.json";
	add_rule(&set.layers[0], "x.y", SG_ACCESS_READ); /* literal: not in the DFA */
	for (int i = 0; i < stars; i++)
		strcat(name, ".*");
	add_rule(&set.layers[0], name, SG_ACCESS_NONE);
	for (; stars < 17 && !seen; stars++) {
		compile_ok(&set, &c);
		if (c.dfa.n_states > UINT16_MAX + 1u) {
			char match[SG_NAME_MAX] = "x/a", miss[SG_NAME_MAX] = "x/a";
			for (int i = 0; i < stars; i++)
				snprintf(match + strlen(match), sizeof(match) - strlen(match),
					 "/%d", i);
			snprintf(miss, sizeof(miss), "%s/extra", match);
			seen = true;
			check_invariants(&c);
			CHECK(c.dfa.wide);
			/* "**" takes "x" or nothing; one component too many matches not */
			CHECK(sg_compiled_match_pattern(&c, 0, match) == 1);
			CHECK(sg_compiled_match_pattern(&c, 0, match + 2) == 1);
			CHECK(sg_compiled_match_pattern(&c, 0, miss) == SG_NO_RULE);
		}
		sg_compiled_free(&c);
		/* one more ".*" doubles the states */
		struct sg_rule *r = &set.layers[0].rules[1];
		strcat(name, ".*");
		free(r->pattern);
		r->pattern = sg_xstrdup(name);
		for (char *p = r->pattern; *p; p++)
			*p = *p == '.' ? '/' : *p;
	}
	CHECK(seen);
	free_set(&set);
}

static const char *compile_error(const struct sg_policy_set *set, struct sg_err *err)
{
	struct sg_compiled c;

	memset(err, 0, sizeof(*err));
	if (sg_compile(set, &c, err) == 0) {
		sg_compiled_free(&c);
		return NULL;
	}
	CHECK(err->status == SG_EXIT_INPUT);
	CHECK(c.rules == NULL && c.dfa.transitions == NULL);
	return err->msg;
}

TEST(limits_are_input_errors)
{
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_err err;
	char big[SG_VALUE_MAX + 1];

	memset(big, '7', sizeof(big));
	big[SG_VALUE_MAX] = '\0';
	set.layers[0].origin = "p.json";

	struct sg_rule *r = add_rule(&set.layers[0], "kernel.domainname", SG_ACCESS_READ_WRITE);
	r->rewrite = sg_xstrdup(big);
	CHECK_CONTAINS(compile_error(&set, &err), "p.json: rules[0] \"kernel.domainname\"");
	CHECK_CONTAINS(err.msg, "rewrite value is 128 bytes");
	free(r->rewrite);
	r->rewrite = NULL;

	set_values(r, (const char *[]){"1", big}, 2);
	CHECK_CONTAINS(compile_error(&set, &err), "values of at most 127 bytes");
	free_set(&set);

	set.n_layers = 1;
	set.layers[0].origin = "p.json";
	r = add_rule(&set.layers[0], "net.x", SG_ACCESS_READ_WRITE);
	struct sg_range ranges[SG_FIELDS_MAX + 1] = {{0, 1}};
	set_ranges(r, ranges, SG_FIELDS_MAX + 1, true);
	char want[64];
	snprintf(want, sizeof(want), "%d per-field ranges", SG_FIELDS_MAX + 1);
	CHECK_CONTAINS(compile_error(&set, &err), want);
	/* values and a range: the rule entry holds the one or the other */
	free(r->ranges);
	set_ranges(r, ranges, 1, false);
	set_values(r, (const char *[]){"1"}, 1);
	CHECK_CONTAINS(compile_error(&set, &err), "both values and a range");
	free_set(&set);

	set.n_layers = SG_LAYERS_MAX + 1;
	CHECK_CONTAINS(compile_error(&set, &err), "at most 2");
	set.n_layers = 0;

	add_pinned(&set, "net/core/somaxconn", big);
	CHECK_CONTAINS(compile_error(&set, &err), "linux.sysctl \"net/core/somaxconn\"");
	free_set(&set);
}

TEST(too_many_rules)
{
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_policy *p = &set.layers[0];
	struct sg_err err;

	p->origin = "huge.json";
	p->rules = sg_xcalloc(SG_MAX_RULES + 1, sizeof(*p->rules));
	p->n_rules = SG_MAX_RULES + 1;
	for (size_t i = 0; i < p->n_rules; i++) {
		p->rules[i].name = sg_xasprintf("net.x%zu", i);
		p->rules[i].pattern = sg_xasprintf("net/x%zu", i);
		p->rules[i].is_literal = true;
	}
	CHECK_CONTAINS(compile_error(&set, &err), "65537 rules");
	free_set(&set);
}

/*
 * "**" followed by "a" and k single-component wildcards makes the DFA
 * remember which of the last k components were "a": 2^k states.
 */
TEST(too_many_states)
{
	struct sg_policy_set set = {.n_layers = 1};
	char name[SG_NAME_MAX] = "**.a";
	struct sg_err err;
	struct sg_compiled c;

	set.layers[0].origin = "blowup.json";
	for (int i = 0; i < 10; i++)
		strcat(name, ".*");
	add_rule(&set.layers[0], name, SG_ACCESS_NONE);
	compile_ok(&set, &c);
	CHECK(c.dfa.n_states > 1024 && c.dfa.n_states < 4096);
	CHECK(sg_compiled_match_pattern(&c, 0, "x/a/1/2/3/4/5/6/7/8/9/10") == 0);
	CHECK(sg_compiled_match_pattern(&c, 0, "a/1/2/3/4/5/6/7/8/9/10/11") == SG_NO_RULE);
	sg_compiled_free(&c);

	for (int i = 0; i < 9; i++)
		strcat(name, ".*");
	free(set.layers[0].rules[0].pattern);
	set.layers[0].rules[0].pattern = sg_xstrdup(name);
	for (char *p = set.layers[0].rules[0].pattern; *p; p++)
		*p = *p == '.' ? '/' : *p;
	CHECK_CONTAINS(compile_error(&set, &err), "blowup.json: policy too complex");
	CHECK_CONTAINS(err.msg, "more than 262144 DFA states");
	free_set(&set);
}

/* --- the differential test --- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static void append(char *buf, size_t cap, const char *s)
{
	size_t len = strlen(buf);
	snprintf(buf + len, cap - len, "%s", s);
}

static void append_char(char *buf, size_t cap, char ch)
{
	char s[2] = {ch, '\0'};
	append(buf, cap, s);
}

/* A name component: mostly the pattern alphabet, sometimes bytes no pattern uses. */
static void random_component(char *buf, size_t cap, bool allow_empty)
{
	static const char alphabet[] = "ab.ab.abz";
	uint32_t len = allow_empty && rnd(20) == 0 ? 0 : 1 + rnd(3);
	for (uint32_t i = 0; i < len; i++)
		append_char(buf, cap, rnd(50) == 0 ? '\xff' : alphabet[rnd(sizeof(alphabet) - 1)]);
}

static void random_name(char *buf, size_t cap)
{
	uint32_t n = 1 + rnd(5);
	buf[0] = '\0';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			append(buf, cap, "/");
		random_component(buf, cap, true);
	}
}

/*
 * A pattern in slash form: 1-4 components over a small alphabet with '*',
 * '?' and "**"; one in @wild_in characters is a wildcard (a third of them
 * '?'), one in @wild_in components "**"; one in four patterns is literal.
 */
static void random_pattern(char *buf, size_t cap, uint32_t wild_in)
{
	static const char literal_chars[] = "ab.";
	bool literal = rnd(4) == 0;
	uint32_t n = 1 + rnd(4);

	buf[0] = '\0';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			append(buf, cap, "/");
		if (!literal && rnd(2 * wild_in) < 2) {
			append(buf, cap, "**");
			continue;
		}
		uint32_t len = 1 + rnd(3);
		char comp[4] = "", prev = 0;
		for (uint32_t k = 0; k < len; k++) {
			char ch = literal_chars[rnd(sizeof(literal_chars) - 1)];
			if (!literal && rnd(wild_in) == 0)
				ch = rnd(3) ? '*' : '?';
			if (ch == '*' && prev == '*')
				ch = 'a';
			comp[k] = prev = ch;
		}
		/* "." and ".." are no sysctl's components: sg_name_normalise rejects them. */
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
			comp[0] = 'b';
		append(buf, cap, comp);
	}
}

/* A name @pattern matches (or nearly: a mutation can land it next to a match). */
static void instantiate(const char *pattern, char *buf, size_t cap)
{
	bool first = true;

	buf[0] = '\0';
	for (const char *comp = pattern;;) {
		size_t len = strcspn(comp, "/");
		if (len == 2 && comp[0] == '*' && comp[1] == '*') {
			for (uint32_t k = rnd(3); k > 0; k--, first = false) {
				if (!first)
					append(buf, cap, "/");
				random_component(buf, cap, false);
			}
		} else {
			if (!first)
				append(buf, cap, "/");
			first = false;
			for (size_t i = 0; i < len; i++) {
				if (comp[i] == '*') {
					for (uint32_t k = rnd(3); k > 0; k--)
						append_char(buf, cap, "ab.z"[rnd(4)]);
				} else if (comp[i] == '?') {
					append_char(buf, cap, "ab.z"[rnd(4)]);
				} else {
					append_char(buf, cap, comp[i]);
				}
			}
		}
		if (!comp[len])
			break;
		comp += len + 1;
	}
	size_t n = strlen(buf);
	if (n && rnd(5) == 0)
		buf[rnd((uint32_t)n)] = "ab./"[rnd(4)];
}

/* The reference: every rule of the layer, the winner by precedence. */
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

static void random_policy(struct sg_policy *p, size_t n_rules, uint32_t wild_in)
{
	char pattern[SG_NAME_MAX], name[SG_NAME_MAX], again[SG_NAME_MAX];
	struct sg_err err = {0};

	p->origin = "random";
	p->mode = rnd(2) ? SG_MODE_ENFORCE : SG_MODE_AUDIT;
	p->default_access = (enum sg_access)rnd(3);
	p->rules = sg_xcalloc(n_rules, sizeof(*p->rules));
	for (size_t i = 0; i < n_rules; i++) {
		if (i && rnd(8) == 0)
			snprintf(pattern, sizeof(pattern), "%s",
				 p->rules[rnd((uint32_t)i)].pattern);
		else
			random_pattern(pattern, sizeof(pattern), wild_in);
		/* The dotted spelling must come back as the same pattern. */
		sg_name_to_dotted(pattern, name, sizeof(name));
		if (!memchr(pattern, '.', strcspn(pattern, "/"))) {
			memset(&err, 0, sizeof(err));
			CHECK(sg_name_normalise(name, again, sizeof(again), &err) == 0);
			CHECK_STR(again, pattern);
		}
		p->rules[i].name = sg_xstrdup(name);
		p->rules[i].pattern = sg_xstrdup(pattern);
		p->rules[i].is_literal = sg_pattern_is_literal(pattern);
		p->rules[i].access = (enum sg_access)rnd(3);
		p->n_rules++;
	}
}

static void print_layer(const struct sg_policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		fprintf(stderr, "    rules[%zu] %s\n", i, p->rules[i].pattern);
}

/*
 * Compares compiled and reference decisions for @n_names names per layer of
 * one random policy set; returns the mismatches, or -1 when the set needs
 * more DFA states than the compiler allows (random wildcards can).
 */
struct diff_stats {
	unsigned names, by_exact, by_pattern, reported;
	uint64_t states;
};

static int differential_round(size_t max_rules, uint32_t wild_in, unsigned n_names,
			      struct diff_stats *st)
{
	struct sg_policy_set set = {0};
	struct sg_compiled c;
	struct sg_err err = {0};
	char name[SG_NAME_MAX];
	int mismatches = 0;

	set.n_layers = 1 + rnd(SG_LAYERS_MAX);
	for (size_t l = 0; l < set.n_layers; l++)
		random_policy(&set.layers[l], 1 + rnd((uint32_t)max_rules), wild_in);
	for (uint32_t k = rnd(3); k > 0; k--) {
		random_name(name, sizeof(name));
		add_pinned(&set, name, "1");
	}
	if (sg_compile(&set, &c, &err) < 0) {
		CHECK_CONTAINS(err.msg, "policy too complex");
		free_set(&set);
		return -1;
	}
	check_invariants(&c);
	st->states += c.dfa.n_states;

	uint32_t offset = 0;
	for (uint32_t l = 0; l < set.n_layers; l++) {
		const struct sg_policy *p = &set.layers[l];
		for (unsigned k = 0; k < n_names; k++) {
			if (rnd(2))
				instantiate(p->rules[rnd((uint32_t)p->n_rules)].pattern, name,
					    sizeof(name));
			else
				random_name(name, sizeof(name));

			size_t want = reference(p, name, false);
			size_t want_pattern = reference(p, name, true);
			uint32_t got = lookup(&c, l, name);
			uint32_t got_pattern = sg_compiled_match_pattern(&c, l, name);
			uint32_t want_g = want == SIZE_MAX ? SG_NO_RULE : offset + (uint32_t)want;
			uint32_t want_pattern_g =
			    want_pattern == SIZE_MAX ? SG_NO_RULE : offset + (uint32_t)want_pattern;
			st->names++;
			st->by_exact += want != SIZE_MAX && want != want_pattern;
			st->by_pattern += want != SIZE_MAX && want == want_pattern;
			if (got == want_g && got_pattern == want_pattern_g)
				continue;
			mismatches++;
			if (st->reported++ < 5) {
				fprintf(stderr,
					"  layer %u name \"%s\": lookup %d (want %d), DFA %d "
					"(want %d), rule offset %u\n",
					l, name, (int)got, (int)want_g, (int)got_pattern,
					(int)want_pattern_g, offset);
				print_layer(p);
			}
		}
		offset += (uint32_t)p->n_rules;
	}
	sg_compiled_free(&c);
	free_set(&set);
	return mismatches;
}

static void differential(uint64_t seed, int rounds, size_t max_rules, uint32_t wild_in,
			 unsigned n_names)
{
	unsigned mismatches = 0, too_complex = 0;
	struct diff_stats st = {0};

	rng_state = seed;
	for (int round = 0; round < rounds; round++) {
		int r = differential_round(max_rules, wild_in, n_names, &st);
		if (r < 0)
			too_complex++;
		else
			mismatches += (unsigned)r;
	}
	printf("     %d sets (%u too complex), %llu DFA states; %u names: %u decided by an "
	       "exact rule, %u by a pattern, %u by no rule; %u mismatches\n",
	       rounds, too_complex, (unsigned long long)st.states, st.names, st.by_exact,
	       st.by_pattern, st.names - st.by_exact - st.by_pattern, mismatches);
	CHECK(mismatches == 0);
	/* A few random sets may blow up; most must compile, or this tests little. */
	CHECK(too_complex * 20 <= (unsigned)rounds);
}

/* Small sets, wildcards everywhere: the corners of '*', '?' and "**". */
/*
 * The DFA is built before the rules are compiled: its error is told first,
 * and a rule's error when the DFA is fine.
 */
TEST(errors_of_the_dfa_before_the_rules)
{
	struct sg_policy_set set = {.n_layers = 1};
	char name[SG_NAME_MAX] = "**.a";
	struct sg_err err;

	set.layers[0].origin = "many.json";
	for (int i = 0; i < 300; i++) {
		char pattern[64];
		snprintf(pattern, sizeof(pattern), "net.ipv4.conf.eth%d*.rp_filter", i);
		add_rule(&set.layers[0], pattern, SG_ACCESS_READ);
	}
	struct sg_rule *bad = add_rule(&set.layers[0], "net.core.somaxconn", SG_ACCESS_READ_WRITE);
	bad->range_per_field = true;
	bad->n_ranges = SG_FIELDS_MAX + 1; /* a rule the compiler refuses */
	bad->ranges = sg_xcalloc(bad->n_ranges, sizeof(*bad->ranges));
	CHECK_CONTAINS(compile_error(&set, &err), "per-field ranges, more than");

	for (int i = 0; i < 19; i++) /* and a pattern whose DFA is too large */
		strcat(name, ".*");
	add_rule(&set.layers[0], name, SG_ACCESS_NONE);
	CHECK_CONTAINS(compile_error(&set, &err), "many.json: policy too complex");

	set.layers[0].n_rules--; /* without it, the rule's error is told again */
	free(set.layers[0].rules[set.layers[0].n_rules].name);
	free(set.layers[0].rules[set.layers[0].n_rules].pattern);
	CHECK_CONTAINS(compile_error(&set, &err), "per-field ranges, more than");
	free_set(&set);
}

/* Every rule's name keeps its length beside it, measured or parsed: the rule names' bytes add up.
 */
TEST(origins_know_their_names_lengths)
{
	static const char text[] =
	    "{\"version\": 1, \"rules\": [{\"name\": \"net.ipv4.conf.*.rp_filter\", "
	    "\"access\": \"read\"}, {\"name\": \"kernel/domainname\", \"access\": \"none\"}]}";
	struct sg_policy_set set = {.n_layers = 2};
	struct sg_compiled c;
	struct sg_err err = {0};

	CHECK(sg_policy_parse(text, strlen(text), "parsed.json", &set.layers[0], &err) == 0);
	add_rule(&set.layers[1], "vm.swappiness", SG_ACCESS_READ); /* made, not parsed */
	add_pinned(&set, "net.core.somaxconn", "4096");
	compile_ok(&set, &c);
	size_t bytes = 0;
	for (uint32_t i = 0; i < c.config.n_rules; i++) {
		CHECK(c.origins[i].name && c.origins[i].name_len == strlen(c.origins[i].name));
		bytes += strlen(c.origins[i].name) + 1;
	}
	CHECK(c.config.n_rules == 4 && c.rule_names_bytes == bytes);
	sg_compiled_free(&c);
	sg_policy_free(&set.layers[0]);
	free_policy(&set.layers[1]);
	for (size_t i = 0; i < set.n_pinned; i++) {
		free(set.pinned[i].name);
		free(set.pinned[i].value);
	}
	free(set.pinned);
}

static int cmp_exact_full(const void *a, const void *b)
{
	const struct sg_exact_name *x = a, *y = b;
	if (x->layer != y->layer)
		return x->layer < y->layer ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	int r = strcmp(x->name, y->name);
	if (r)
		return r;
	return (x->rule > y->rule) - (x->rule < y->rule);
}

/*
 * The exact table's sort (by digits of the layer and hash, then names of one
 * hash by name) orders as one comparison of all four would: hashes drawn
 * from a few values, so that many names share one, from all 64 bits, and
 * from a few that differ only below the bits the radix passes take.
 */
TEST(exact_names_sort_by_layer_hash_name_and_rule)
{
	static const char *const names[] = {"a", "b", "net/x", "net/y", "kernel/z"};
	static const uint16_t layers[] = {0, 1, SG_PINNED_LAYER};
	uint64_t rng = 12345;

	for (size_t n = 0; n < 6000; n = n * 3 + 1) {
		for (int spread = 0; spread <= 2; spread++) {
			struct sg_exact_name *v = sg_xcalloc(n ? n : 1, sizeof(*v));
			struct sg_exact_name *want = sg_xcalloc(n ? n : 1, sizeof(*want));
			for (size_t i = 0; i < n; i++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				v[i] = (struct sg_exact_name){
				    .rule = (uint32_t)i,
				    .layer = layers[(rng >> 20) % 3],
				    .order = spread == 1   ? rng
					     : spread == 2 ? (rng >> 33) % 8 /* low bits only */
							   : (rng >> 33) % 4 << 40,
				    .name = names[(rng >> 40) % SG_ARRAY_SIZE(names)]};
			}
			memcpy(want, v, n * sizeof(*v));
			qsort(want, n, sizeof(*want), cmp_exact_full);
			sg_exact_names_sort(v, n);
			for (size_t i = 0; i < n; i++)
				if (v[i].rule != want[i].rule) {
					fprintf(stderr, "  n %zu: [%zu] is rule %u, not %u\n", n, i,
						v[i].rule, want[i].rule);
					CHECK(false);
					break;
				}
			free(v);
			free(want);
		}
	}
}

TEST(differential_small_policies)
{
	differential(0x5eed5eed12345678ull, 4000, 12, 3, 40);
}

/* Hundreds of patterns per layer: large subsets, hash collisions, many classes. */
TEST(differential_large_policies)
{
	differential(0xdecafbad0badcafeull, 30, 300, 8, 1000);
}

/* The hash of a compiled one-layer policy of @names (NULL ends), @build_id as the compiler's build.
 */
static uint64_t hash_of(const char *const *names, const char *build_id,
			const char *pattern_of_first)
{
	static const uint64_t key[2] = {1, 2};
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_compiled c;
	struct sg_siphash h;

	for (size_t i = 0; names[i]; i++)
		add_rule(&set.layers[0], names[i], SG_ACCESS_NONE);
	if (pattern_of_first) { /* a rule whose slash form is not its name's: only the DFA sees it
				 */
		free(set.layers[0].rules[0].pattern);
		set.layers[0].rules[0].pattern = sg_xstrdup(pattern_of_first);
	}
	compile_ok(&set, &c);
	sg_siphash_init(&h, key);
	sg_compiled_hash(&c, (const uint8_t *)build_id, build_id ? strlen(build_id) : 0, &h);
	uint64_t out = sg_siphash_final(&h);
	sg_compiled_free(&c);
	free_set(&set);
	return out;
}

/*
 * With a build id the policy key hashes what the DFA was built from instead
 * of the DFA: a policy whose DFA differs gets another key all the same.
 */
TEST(the_key_hashes_what_the_dfa_is_made_of)
{
	const char *const names[] = {"net.ipv4.conf.*.rp_filter", "kernel.hostname", NULL};
	const char *const other[] = {"net.ipv4.conf.*.forwarding", "kernel.hostname", NULL};

	CHECK(hash_of(names, "build-1", NULL) == hash_of(names, "build-1", NULL));
	CHECK(hash_of(names, "build-1", NULL) != hash_of(other, "build-1", NULL));
	CHECK(hash_of(names, "build-1", NULL) != hash_of(names, "build-2", NULL));
	/* the same names, origins and byte classes, another pattern: only the DFA differs */
	CHECK(hash_of(names, "build-1", NULL) !=
	      hash_of(names, "build-1", "net/ipv4/conf/*/rp_fitler"));
	CHECK(hash_of(names, NULL, NULL) != hash_of(names, NULL, "net/ipv4/conf/*/rp_fitler"));
}

/* A pattern that some name lets win is not flagged; one that loses every name is. */
TEST(patterns_that_never_win)
{
	struct sg_policy_set set = {.n_layers = 1};
	struct sg_compiled c;
	bool never[7];

	add_rule(&set.layers[0], "net.ipv4.**", SG_ACCESS_READ);	       /* 0 */
	add_rule(&set.layers[0], "net.ipv4.*", SG_ACCESS_NONE);		       /* 1: 0 wins */
	add_rule(&set.layers[0], "net.ipv4.conf.*.rp_filter", SG_ACCESS_READ); /* 2 */
	add_rule(&set.layers[0], "kernel.*", SG_ACCESS_READ);		       /* 3 */
	add_rule(&set.layers[0], "kernel.ho*", SG_ACCESS_NONE);		       /* 4: more literal */
	add_rule(&set.layers[0], "kernel.hostname", SG_ACCESS_NONE);	       /* 5: no wildcard */
	add_rule(&set.layers[0], "kernel.h?", SG_ACCESS_NONE);		       /* 6 */
	compile_ok(&set, &c);
	CHECK(sg_compiled_patterns_never_winning(&c, never) == 1);
	CHECK(never[1]);
	CHECK(!never[0] && !never[2] && !never[3] && !never[4] && !never[5] && !never[6]);
	sg_compiled_free(&c);
	free_set(&set);
}

RUN_TESTS(T(rule_entries), T(rules_with_the_same_ranges_share_their_bounds),
	  T(rules_with_the_same_values_share_a_set), T(values_are_sorted_by_rule_then_value),
	  T(lookups), T(decisions_over_the_tables), T(layers_without_patterns_start_dead),
	  T(byte_classes_stay_few), T(limits_are_input_errors), T(too_many_rules),
	  T(too_many_states), T(errors_of_the_dfa_before_the_rules),
	  T(exact_names_sort_by_layer_hash_name_and_rule), T(origins_know_their_names_lengths),
	  T(wide_tables_past_65536_states), T(differential_small_policies),
	  T(differential_large_policies), T(the_key_hashes_what_the_dfa_is_made_of),
	  T(patterns_that_never_win))
