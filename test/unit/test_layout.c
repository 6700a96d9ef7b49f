// SPDX-License-Identifier: Apache-2.0
/*
 * The hashed tables as the loader writes them (layout.c): a compiled policy
 * of thousands of exact names in three layers and thousands of values,
 * planned, laid out in two windows, then read as the program reads them
 * (sysctl_guard.bpf.c: home bucket, the next ones, a tag before the key, a
 * free slot or the array's end for a miss). Every name and value is found
 * with its rule, and names, layers and values that are not there are not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "policy/compose.h"
#include "policy/policy.h"
#include "compile/eval.h"
#include "compile/layout.h"
#include "test.h"

enum { N_BASE = 3000, N_ANNOTATION = 1000 };

struct laid {
	struct sg_hashed_tables t;
	struct sg_exact_bucket *exact;
	struct sg_value_bucket *values;
	__u64 hash_key[2];
};

/* Lays both tables out as tables.c's windows do: in two, the second from @split on. */
static void lay_out(const struct sg_compiled *c, uint64_t seed, struct laid *l)
{
	memset(l, 0, sizeof(*l));
	l->t.seed = seed;
	l->hash_key[0] = seed * 3;
	l->hash_key[1] = seed * 5;
	CHECK(sg_plan_exact(&l->t, c) == 0);
	CHECK(sg_plan_values(&l->t, c, l->hash_key) == 0);

	size_t n = l->t.exact.n_buckets, split = n / 3;
	l->exact = sg_xcalloc(n, sizeof(*l->exact));
	sg_lay_exact_buckets(&l->t, c, 0, split, (char *)l->exact, sizeof(*l->exact));
	sg_lay_exact_buckets(&l->t, c, split, n - split, (char *)(l->exact + split),
			     sizeof(*l->exact));
	n = l->t.values.n_buckets;
	split = n / 2;
	l->values = sg_xcalloc(n, sizeof(*l->values));
	sg_lay_value_buckets(&l->t, 0, split, (char *)l->values, sizeof(*l->values));
	sg_lay_value_buckets(&l->t, split, n - split, (char *)(l->values + split),
			     sizeof(*l->values));
}

static void laid_free(struct laid *l)
{
	sg_hashed_tables_free(&l->t);
	free(l->exact);
	free(l->values);
}

/* The program's exact lookup of a short name. */
static uint32_t exact_rule(const struct laid *l, uint32_t layer, const char *name)
{
	struct sg_exact_short_key key;

	/* As the program has it: zeroed, then the name as the kernel reads it. */
	memset(&key, 0, sizeof(key));
	key.layer = layer;
	memcpy(key.name, name, strlen(name));
	uint64_t hash = sg_exact_hash(&key, l->t.seed);
	uint32_t b = sg_home_bucket(hash, l->t.exact.n_homes);
	for (int probe = 0; probe < SG_HASH_PROBES && b < l->t.exact.n_buckets; probe++, b++)
		for (int way = 0; way < SG_HASH_WAYS; way++) {
			const struct sg_exact_slot *slot = &l->exact[b].slot[way];
			if (slot->tag == 0)
				return SG_NO_RULE;
			if (slot->tag == sg_exact_tag(hash) &&
			    memcmp(&slot->key, &key, sizeof(key)) == 0)
				return slot->rule;
		}
	return SG_NO_RULE;
}

/* The program's values lookup. */
static bool has_value(const struct laid *l, uint32_t set, const char *value)
{
	const struct sg_value_hash_key key = {.set = set,
					      .hash = sg_value_hash(l->hash_key, value)};
	uint32_t b = sg_home_bucket(sg_value_slot_hash(&key, l->t.seed), l->t.values.n_homes);
	for (int probe = 0; probe < SG_HASH_PROBES && b < l->t.values.n_buckets; probe++, b++)
		for (int way = 0; way < SG_HASH_WAYS; way++) {
			const struct sg_value_hash_key *slot = &l->values[b].slot[way];
			if (slot->set == SG_NO_RULE)
				return false;
			if (slot->set == key.set && slot->hash == key.hash)
				return true;
		}
	return false;
}

static void parse(const char *json, struct sg_policy *out)
{
	struct sg_err err = {0};
	if (sg_policy_parse(json, strlen(json), "t.json", out, &err) < 0) {
		fprintf(stderr, "test policy: %s\n", err.msg);
		exit(1);
	}
}

/*
 * Baseline: eth0..eth2999, every third with values of its own and the
 * next ones each with the same three; annotation: veth0..; pinned: a pair.
 * The compiled policy points into @set: free it first.
 */
static void make_compiled(struct sg_policy_set *set, struct sg_compiled *c)
{
	size_t cap = 200 * (N_BASE + N_ANNOTATION), at = 0;
	char *base = sg_xcalloc(cap, 1), *annotation = sg_xcalloc(cap, 1);
	struct sg_policy pb = {0}, pa = {0};
	struct sg_err err = {0};

	at = (size_t)snprintf(base, cap, "{\"version\":1,\"rules\":[");
	for (int i = 0; i < N_BASE; i++) {
		at += (size_t)snprintf(base + at, cap - at,
				       "%s{\"name\":\"net.ipv4.conf.eth%d.rp_filter\",",
				       i ? "," : "", i);
		if (i % 3 == 0)
			at += (size_t)snprintf(
			    base + at, cap - at,
			    "\"access\":\"read-write\",\"values\":[\"0\",\"1\",\"%d\"]}", i + 3);
		else if (i % 3 == 1)
			at += (size_t)snprintf(
			    base + at, cap - at,
			    "\"access\":\"read-write\",\"values\":[\"0\",\"1\",\"2\"]}");
		else
			at += (size_t)snprintf(base + at, cap - at, "\"access\":\"read\"}");
	}
	/* A long name (the other table) and a name of 47 bytes, the longest short one. */
	snprintf(
	    base + at, cap - at,
	    ",{\"name\":\"net.ipv4.conf.a_very_long_interface_name_0123.rp_filter\",\"access\":"
	    "\"read\"}"
	    ",{\"name\":\"net.ipv4.conf.abcdefghijklmnopqrstuv.rp_filter\",\"access\":\"read\"}]}");
	at = (size_t)snprintf(annotation, cap, "{\"version\":1,\"rules\":[");
	for (int i = 0; i < N_ANNOTATION; i++)
		at += (size_t)snprintf(
		    annotation + at, cap - at,
		    "%s{\"name\":\"net.ipv6.conf.veth%d.accept_ra\",\"access\":\"read\"}",
		    i ? "," : "", i);
	snprintf(annotation + at, cap - at,
		 ",{\"name\":\"net.ipv4.conf.eth5.rp_filter\",\"access\":\"none\"}]}");
	parse(base, &pb);
	parse(annotation, &pa);
	struct sg_sysctl_pair pairs[] = {{"kernel/domainname", "x"}, {"kernel/domainname", "y"}};
	CHECK(sg_policy_set_compose(&pb, "baseline", &pa, "annotation", NULL, pairs, 2, set,
				    &err) == 0);
	CHECK(sg_compile(set, c, &err) == 0);
	sg_policy_free(&pb);
	sg_policy_free(&pa);
	free(base);
	free(annotation);
}

/* A short key is the program's bytes, for names of every length it takes. */
TEST(short_keys_are_the_programs_bytes)
{
	char name[SG_SHORT_NAME_MAX];

	for (size_t len = 1; len < SG_SHORT_NAME_MAX; len++) {
		struct sg_exact_short_key made, want;
		for (size_t i = 0; i < len; i++)
			name[i] = (char)('a' + (len + i) % 26);
		name[len] = '\0';
		const struct sg_exact_name e = {
		    .rule = 7,
		    .layer = (uint16_t)(len % 3 ? len % 3 - 1 : SG_PINNED_LAYER),
		    .len = (uint16_t)len,
		    .name = name};
		memset(&made, 0xa5, sizeof(made)); /* every byte written, padding too */
		sg_exact_short_key_of(&e, &made);
		memset(&want, 0, sizeof(want));
		want.layer = e.layer;
		memcpy(want.name, name, len);
		CHECK(memcmp(&made, &want, sizeof(want)) == 0);
	}
}

TEST(every_name_found_with_its_rule_and_no_other)
{
	struct sg_policy_set set;
	struct sg_compiled c;
	make_compiled(&set, &c);
	CHECK(sg_long_names(&c) == 1);

	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct laid l;
		size_t found = 0;
		lay_out(&c, seed * 0x9e3779b97f4a7c15ull, &l);
		for (size_t i = 0; i < c.n_exact; i++) {
			const struct sg_exact_name *e = &c.exact[i];
			if (sg_is_long_name(strlen(e->name)))
				continue;
			CHECK(exact_rule(&l, e->layer, e->name) == e->rule);
			found += exact_rule(&l, e->layer, e->name) == e->rule;
		}
		CHECK(found == c.n_exact - 1);
		CHECK(found > N_BASE + N_ANNOTATION);
		/* Layers keep names apart; names not there are not found. */
		CHECK(exact_rule(&l, 1, "net/ipv4/conf/eth7/rp_filter") == SG_NO_RULE);
		CHECK(exact_rule(&l, 0, "net/ipv6/conf/veth7/accept_ra") == SG_NO_RULE);
		CHECK(exact_rule(&l, 0, "net/ipv4/conf/eth3000/rp_filter") == SG_NO_RULE);
		CHECK(exact_rule(&l, 0, "net/ipv4/conf/eth7/rp_filte") == SG_NO_RULE);
		CHECK(exact_rule(&l, SG_PINNED_LAYER, "kernel/domainname") != SG_NO_RULE);
		CHECK(exact_rule(&l, 0, "kernel/domainname") == SG_NO_RULE);
		laid_free(&l);
	}
	sg_compiled_free(&c);
	sg_policy_set_free(&set);
}

/* Whether value @value is in set @set of the compiled table (sorted by set, then value). */
static bool in_set(const struct sg_compiled *c, uint32_t set, const char *value)
{
	for (size_t i = 0; i < c->n_values; i++)
		if (c->values[i].set == set && strcmp(c->values[i].value, value) == 0)
			return true;
	return false;
}

TEST(every_value_found_in_its_set_only)
{
	struct sg_policy_set set;
	struct sg_compiled c;
	make_compiled(&set, &c);

	struct laid l;
	lay_out(&c, 42, &l);
	for (size_t i = 0; i < c.n_values; i++) {
		CHECK(has_value(&l, c.values[i].set, c.values[i].value));
		CHECK(!has_value(&l, c.values[i].set + 1, c.values[i].value) ||
		      in_set(&c, c.values[i].set + 1, c.values[i].value));
	}
	/* 1,000 sets of their own, one shared by 1,000 rules, the pinned pair's */
	CHECK(c.n_values == 3 * (N_BASE / 3) + 3 + 2);
	CHECK(c.rules[1].value_set == c.rules[4].value_set);
	CHECK(c.rules[0].value_set != c.rules[3].value_set);
	CHECK(has_value(&l, c.rules[3].value_set, "6") &&
	      !has_value(&l, c.rules[0].value_set, "6"));
	CHECK(!has_value(&l, c.rules[1].value_set, "3"));
	uint32_t pinned = exact_rule(&l, SG_PINNED_LAYER, "kernel/domainname");
	const uint32_t pinned_set = c.rules[pinned].value_set;
	CHECK(has_value(&l, pinned_set, "x") && has_value(&l, pinned_set, "y") &&
	      !has_value(&l, pinned_set, "z"));
	laid_free(&l);
	sg_compiled_free(&c);
	sg_policy_set_free(&set);
}

/* Free slots read as free: no tag, no rule. */
TEST(free_slots_are_marked)
{
	struct sg_policy_set set;
	struct sg_compiled c;
	make_compiled(&set, &c);

	struct laid l;
	size_t free_exact = 0, free_values = 0;
	lay_out(&c, 7, &l);
	for (size_t b = 0; b < l.t.exact.n_buckets; b++)
		for (int w = 0; w < SG_HASH_WAYS; w++)
			if (l.t.exact.slot_entry[b * SG_HASH_WAYS + w] == SG_HASH_FREE) {
				CHECK(l.exact[b].slot[w].tag == 0 &&
				      l.exact[b].slot[w].rule == SG_NO_RULE);
				free_exact++;
			} else {
				CHECK(l.exact[b].slot[w].tag != 0);
			}
	for (size_t b = 0; b < l.t.values.n_buckets; b++)
		for (int w = 0; w < SG_HASH_WAYS; w++)
			if (l.t.values.slot_entry[b * SG_HASH_WAYS + w] == SG_HASH_FREE) {
				CHECK(l.values[b].slot[w].set == SG_NO_RULE);
				free_values++;
			}
	CHECK(free_exact > 0 && free_values > 0);
	laid_free(&l);
	sg_compiled_free(&c);
	sg_policy_set_free(&set);
}

RUN_TESTS(T(short_keys_are_the_programs_bytes), T(every_name_found_with_its_rule_and_no_other),
	  T(every_value_found_in_its_set_only), T(free_slots_are_marked))
