// SPDX-License-Identifier: Apache-2.0
/*
 * The forecast DFA (forecast.h): the scan finds a policy text's wildcard
 * names as the parser does, gives up where it would have to decode, and the
 * compiler takes a forecast's DFA only when it was built from the same
 * patterns, which gives the DFA it would have built itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/util.h"
#include "policy/compose.h"
#include "policy/policy.h"
#include "compile/compile.h"
#include "compile/dfa.h"
#include "compile/dfa_pack.h"
#include "compile/forecast.h"
#include "test.h"

/* A policy of @n rules, one in @every a pattern, the rest exact names; @salt varies the patterns.
 */
static char *policy_text(int n, int every, int salt, size_t *len)
{
	size_t cap = 128 + (size_t)n * 128, at = 0;
	char *t = sg_xmalloc(cap);

	at += (size_t)snprintf(t + at, cap - at,
			       "{\"version\": 1, \"description\": \"not a rule: \\\"name\\\": "
			       "\\\"x.*\\\"\",\n \"rules\": [");
	for (int i = 0; i < n; i++) {
		if (i % every == 0)
			at +=
			    (size_t)snprintf(t + at, cap - at,
					     "%s\n  {\"access\": \"read\", \"name\" :\t\"net.ipv4."
					     "conf.eth%d*.rp_filter_%d\"}",
					     i ? "," : "", i, salt);
		else
			at +=
			    (size_t)snprintf(t + at, cap - at,
					     "%s\n  {\"name\": \"net/ipv6/conf/veth%d/mtu\", "
					     "\"access\": \"read-write\", \"values\": [\"name\"]}",
					     i ? "," : "", i);
	}
	at += (size_t)snprintf(t + at, cap - at, "\n]}\n");
	*len = at;
	return t;
}

static void parse_ok(const char *text, size_t len, struct sg_policy *p)
{
	struct sg_err err = {0};
	if (sg_policy_parse(text, len, "test.json", p, &err) < 0) {
		fprintf(stderr, "parse: %s\n", err.msg);
		exit(1);
	}
}

/* The set of @baseline (NULL: none) and the policy of @text; *@compiled with *@forecast. */
static void compile_text(const struct sg_policy *baseline, const char *text, size_t len,
			 struct sg_dfa_forecast **forecast, struct sg_compiled *compiled)
{
	struct sg_policy p;
	struct sg_policy_set set;
	struct sg_err err = {0};

	parse_ok(text, len, &p);
	CHECK(sg_policy_set_compose(baseline, "baseline", &p, "annotation", NULL, NULL, 0, &set,
				    &err) == 0);
	if (sg_compile_keyed(&set, NULL, forecast, compiled, &err) < 0) {
		fprintf(stderr, "compile: %s\n", err.msg);
		exit(1);
	}
	/* The compiled form points into the set: only its DFA is compared, which does not. */
	sg_policy_set_free(&set);
	sg_policy_free(&p);
}

static void check_same_dfa(const struct sg_dfa *a, const struct sg_dfa *b)
{
	CHECK(a->n_states == b->n_states);
	CHECK(a->n_classes == b->n_classes);
	CHECK(a->wide == b->wide);
	CHECK(memcmp(a->byte_class, b->byte_class, sizeof(a->byte_class)) == 0);
	for (int l = 0; l < SG_LAYERS_MAX; l++)
		CHECK(a->start[l] == b->start[l]);
	if (a->n_states != b->n_states || a->n_classes != b->n_classes || a->wide != b->wide)
		return;
	CHECK(memcmp(a->transitions, b->transitions,
		     (size_t)a->n_states * a->n_classes * sg_dfa_entry_size(a)) == 0);
	CHECK(memcmp(a->accept, b->accept, a->n_states * sizeof(*a->accept)) == 0);
}

/* A DFA packed by a forecast, @ahead, as the program reads it: @a's packed here. */
static void check_same_packing(const struct sg_dfa *a, const struct sg_dfa_packed *ahead)
{
	struct sg_dfa_packed own;

	CHECK(ahead != NULL);
	sg_dfa_pack(a, &own);
	if (ahead && ahead->n_elements == own.n_elements) {
		const size_t n = own.n_elements;
		sg_dfa_element *x = sg_xcalloc(n, sizeof(*x)), *y = sg_xcalloc(n, sizeof(*y));
		sg_dfa_packed_write(&own, 0, n, x);
		sg_dfa_packed_write(ahead, 0, n, y);
		CHECK(memcmp(x, y, n * sizeof(*x)) == 0);
		free(x);
		free(y);
	} else {
		CHECK(false);
	}
	sg_dfa_packed_free(&own);
}

/*
 * The same rules after three descriptions: none (a text without a
 * backslash, scanned for its "name" keys), one whose escaped quotes make
 * "name": "a.*" no key (scanned from quote to quote), and one whose
 * backslash comes after the rules (the first scan gives way to the other).
 */
TEST(the_scan_finds_the_wildcard_names_in_rule_order)
{
	static const char *const descriptions[] = {
	    "\"plain\"",
	    "\"\\\"name\\\": \\\"a.*\\\" is no rule\"",
	    NULL,
	};
	static const char rules[] =
	    "\"rules\": [{\"name\": \"kernel.ostype\", \"access\": \"read\"},\n"
	    "  {\"access\": \"read\", \"name\"\n:\n \"net.ipv4.conf.*.rp_filter\"},\n"
	    "  {\"name\": \"net/ipv4/neigh/eth0.5/x?\", \"access\": \"read-write\",\n"
	    "   \"values\": [\"name\", \"a*\"]},\n"
	    "  {\"name\" : \"net.**.mtu\", \"access\": \"none\"}]";

	for (size_t d = 0; d < SG_ARRAY_SIZE(descriptions); d++) {
		char text[1024];
		struct sg_arena names = {0};
		struct sg_dfa_input in = {0};

		if (descriptions[d])
			snprintf(text, sizeof(text), "{\"description\": %s, \"version\": 1,\n %s}",
				 descriptions[d], rules);
		else
			snprintf(text, sizeof(text),
				 "{\"version\": 1,\n %s, \"description\": \"back\\\\slash\"}",
				 rules);
		struct sg_policy parsed;
		parse_ok(text, strlen(text), &parsed); /* a policy, rules and all */
		CHECK(parsed.n_rules == 4);
		sg_policy_free(&parsed);
		CHECK(sg_forecast_scan(text, strlen(text), 5, NULL, &names, &in));
		CHECK(in.n_layers == 1 && in.layer_end[0] == 3 && in.n == 3);
		if (in.n == 3) {
			CHECK_STR(in.pattern[0], "net/ipv4/conf/*/rp_filter");
			CHECK_STR(in.pattern[1], "net/ipv4/neigh/eth0.5/x?");
			CHECK_STR(in.pattern[2], "net/**/mtu");
			CHECK(in.rule[0] == 6 && in.rule[1] == 7 && in.rule[2] == 8);
			CHECK(in.len[0] == strlen(in.pattern[0]));
		}
		sg_dfa_input_free(&in);
		sg_arena_free(&names);
	}
}

TEST(the_scan_gives_up_where_it_would_have_to_decode)
{
	static const char *const texts[] = {
	    "{\"rules\": [{\"name\": \"net.ipv4.conf.\\u0065th0*.x\"}]}", /* an escape */
	    "{\"rules\": [{\"name\": \"net.*",				  /* not closed */
	    "{\"rules\": [{\"name\": \"net.*\\",			  /* nor here */
	    "{\"rules\": [\\ {\"name\": \"net.*\"}]}",			  /* a stray backslash */
	    "{\"rules\": [{\"name\": 1}]}",				  /* not a string */
	    "{\"rules\": [{\"name\": \"net..*\"}]}", /* a name the parser refuses */
	    "{\"rules\": [{\"name\": \"\"}]}",
	    "{\"rules\": [{\"n\\u0061me\": \"net.*\"}]}", /* a key that may be "name" */
	};
	for (size_t i = 0; i < SG_ARRAY_SIZE(texts); i++) {
		struct sg_arena names = {0};
		struct sg_dfa_input in = {0};
		if (sg_forecast_scan(texts[i], strlen(texts[i]), 0, NULL, &names, &in)) {
			fprintf(stderr, "  scanned: %s\n", texts[i]);
			CHECK(false);
		}
		sg_dfa_input_free(&in);
		sg_arena_free(&names);
	}
}

/* The DFA of a baseline and a large policy, forecast, is the compiler's own. */
TEST(a_forecast_dfa_is_the_one_the_compiler_builds)
{
	size_t len, base_len;
	char *text = policy_text(3000, 7, 1, &len), *base_text = policy_text(40, 3, 2, &base_len);
	struct sg_policy baseline;
	struct sg_compiled own, forecast;

	parse_ok(base_text, base_len, &baseline);
	for (int with_baseline = 0; with_baseline <= 1; with_baseline++) {
		const struct sg_policy *b = with_baseline ? &baseline : NULL;
		compile_text(b, text, len, NULL, &own);
		struct sg_dfa_forecast *f = sg_dfa_forecast_start(text, len, b, NULL);
		CHECK(f != NULL);
		compile_text(b, text, len, &f, &forecast);
		CHECK(f == NULL && forecast.dfa_forecast != NULL); /* it went with its DFA */
		CHECK(own.dfa.n_states > 400);
		check_same_dfa(&own.dfa, &forecast.dfa);
		check_same_packing(&own.dfa, sg_compiled_dfa_packed(&forecast));
		sg_compiled_free(&own);
		sg_compiled_free(&forecast);
	}
	sg_policy_free(&baseline);
	free(text);
	free(base_text);
}

/* What the compiler asks for: a layer of the policy's wildcard patterns, its rules from @first. */
static void add_layer(const struct sg_policy *p, uint32_t first, struct sg_dfa_input *in)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (!p->rules[i].is_literal)
			sg_dfa_input_add(in, p->rules[i].pattern,
					 (uint32_t)strlen(p->rules[i].pattern),
					 first + (uint32_t)i);
	sg_dfa_input_end_layer(in);
}

/* With a baseline before it: its patterns, then the text's, numbered after its rules. */
TEST(a_forecast_after_a_baseline_is_taken)
{
	size_t len, base_len;
	char *text = policy_text(500, 5, 7, &len), *base_text = policy_text(30, 2, 8, &base_len);
	struct sg_policy p, baseline;
	struct sg_dfa_input in = {0};
	struct sg_dfa taken = {0};

	parse_ok(text, len, &p);
	parse_ok(base_text, base_len, &baseline);
	add_layer(&baseline, 0, &in);
	add_layer(&p, (uint32_t)baseline.n_rules, &in);
	struct sg_dfa_forecast *f = sg_dfa_forecast_start(text, len, &baseline, NULL);
	CHECK(f && sg_dfa_forecast_take(f, &in, &taken));
	CHECK(taken.start[0] != SG_DEAD_STATE);
	CHECK(taken.start[1] != SG_DEAD_STATE);
	sg_dfa_forecast_free(f); /* first: it reads the DFA while packing */
	sg_dfa_free(&taken);
	sg_dfa_input_free(&in);
	sg_policy_free(&p);
	sg_policy_free(&baseline);
	free(text);
	free(base_text);
}

TEST(a_forecast_is_taken_only_for_the_patterns_it_was_built_from)
{
	size_t len;
	char *text = policy_text(500, 5, 3, &len);
	struct sg_policy p;
	struct sg_dfa_input in = {0};
	struct sg_dfa taken = {0}, built = {0};
	uint32_t layer;

	parse_ok(text, len, &p);
	add_layer(&p, 0, &in);
	struct sg_dfa_forecast *f = sg_dfa_forecast_start(text, len, NULL, NULL);
	CHECK(f && sg_dfa_forecast_take(f, &in, &taken));
	CHECK(sg_dfa_build(&in, NULL, &built, &layer) == 0);
	check_same_dfa(&taken, &built);
	check_same_packing(&built, sg_dfa_forecast_packed(f));
	sg_dfa_forecast_free(f);
	sg_dfa_free(&taken);

	/* One rule number, one byte or one layer more: not the same patterns. */
	for (int change = 0; change < 3; change++) {
		struct sg_dfa_input other = {0};
		char copy[SG_NAME_MAX];
		for (size_t k = 0; k < in.n; k++) {
			const char *pattern = in.pattern[k];
			if (change == 1 && k == in.n / 2) {
				snprintf(copy, sizeof(copy), "%s", pattern);
				copy[0] = 'N';
				pattern = copy;
			}
			sg_dfa_input_add(&other, pattern, in.len[k],
					 in.rule[k] + (change == 0 && k == in.n - 1));
		}
		sg_dfa_input_end_layer(&other);
		if (change == 2)
			sg_dfa_input_end_layer(&other);
		f = sg_dfa_forecast_start(text, len, NULL, NULL);
		CHECK(f && !sg_dfa_forecast_take(f, &other, &taken));
		CHECK(taken.transitions == NULL && taken.n_states == 0);
		sg_dfa_forecast_free(f);
		sg_dfa_input_free(&other);
	}
	sg_dfa_free(&built);
	sg_dfa_input_free(&in);
	sg_policy_free(&p);
	free(text);
}

/* A text that differs from the one parsed: the compiler builds the parsed policy's DFA. */
TEST(a_forecast_of_another_text_is_not_used)
{
	size_t len_a, len_b;
	char *a = policy_text(800, 4, 4, &len_a), *b = policy_text(800, 4, 5, &len_b);
	struct sg_compiled own, with_other;

	compile_text(NULL, b, len_b, NULL, &own);
	struct sg_dfa_forecast *f = sg_dfa_forecast_start(a, len_a, NULL, NULL);
	CHECK(f != NULL);
	compile_text(NULL, b, len_b, &f, &with_other);
	CHECK(f != NULL && with_other.dfa_forecast == NULL); /* not taken: still the caller's */
	sg_dfa_forecast_free(f);
	check_same_dfa(&own.dfa, &with_other.dfa);
	sg_compiled_free(&own);
	sg_compiled_free(&with_other);
	free(a);
	free(b);
}

static int refuse(struct sg_err *err)
{
	return sg_input_error(err, "no filter here");
}

static int confine_calls;

static int count_call(struct sg_err *err)
{
	(void)err;
	confine_calls++;
	return 0;
}

/* The thread's first call (its filter): where it fails, nothing is forecast. */
TEST(a_forecast_confines_its_thread_first)
{
	size_t len;
	char *text = policy_text(300, 3, 9, &len);
	struct sg_policy p;
	struct sg_dfa_input in = {0};
	struct sg_dfa taken = {0};

	parse_ok(text, len, &p);
	add_layer(&p, 0, &in);
	struct sg_dfa_forecast *f = sg_dfa_forecast_start(text, len, NULL, refuse);
	CHECK(f && !sg_dfa_forecast_take(f, &in, &taken));
	sg_dfa_forecast_free(f);
	f = sg_dfa_forecast_start(text, len, NULL, count_call);
	CHECK(f && sg_dfa_forecast_take(f, &in, &taken));
	CHECK(confine_calls == 1);
	sg_dfa_forecast_free(f);
	sg_dfa_free(&taken);
	sg_dfa_input_free(&in);
	sg_policy_free(&p);
	free(text);
}

/* Freed while it builds (a policy found in use, a parse that failed): it stops. */
TEST(a_forecast_freed_at_once_stops)
{
	size_t len;
	char *text = policy_text(20000, 2, 6, &len);

	for (int i = 0; i < 3; i++) {
		struct sg_dfa_forecast *f = sg_dfa_forecast_start(text, len, NULL, NULL);
		CHECK(f != NULL);
		if (i == 1)
			sg_dfa_forecast_text_done(f);
		sg_dfa_forecast_free(f);
	}
	free(text);
}

RUN_TESTS(T(the_scan_finds_the_wildcard_names_in_rule_order),
	  T(the_scan_gives_up_where_it_would_have_to_decode),
	  T(a_forecast_dfa_is_the_one_the_compiler_builds),
	  T(a_forecast_is_taken_only_for_the_patterns_it_was_built_from),
	  T(a_forecast_after_a_baseline_is_taken), T(a_forecast_of_another_text_is_not_used),
	  T(a_forecast_confines_its_thread_first), T(a_forecast_freed_at_once_stops))
