// SPDX-License-Identifier: Apache-2.0
/*
 * The policy language: what a valid policy becomes, every rejection with its
 * exact "file:line:col: json.path: message", warnings, value normalisation,
 * copy and free, and the fixtures the schema is checked against.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "policy/policy.h"
#include "compile/compile.h"
#include "test.h"

/* Parses @text as "t.json"; false, with the message printed, when it is rejected. */
static bool parse(const char *text, struct sg_policy *p)
{
	struct sg_err err = {0};

	if (sg_policy_parse(text, strlen(text), "t.json", p, &err) < 0) {
		fprintf(stderr, "  unexpected rejection: %s\n", err.msg);
		return false;
	}
	CHECK(!sg_err_is_set(&err));
	return true;
}

/* The message for @text as @origin, which must be rejected; "" when it was accepted. */
static const char *rejected_as(const char *origin, const char *text)
{
	static struct sg_err err;
	struct sg_policy p;

	memset(&err, 0, sizeof(err));
	memset(&p, 0x5a, sizeof(p)); /* whatever was there: rejection leaves it empty */
	int r = sg_policy_parse(text, strlen(text), origin, &p, &err);
	CHECK(r == -EINVAL);
	if (r == 0) {
		fprintf(stderr, "  accepted: %s\n", text);
		sg_policy_free(&p);
		return "";
	}
	CHECK(err.code == EINVAL);
	CHECK(err.status == SG_EXIT_INPUT);
	CHECK(strncmp(err.msg, origin, strlen(origin)) == 0);
	CHECK(strchr(err.msg, '\n') == NULL);
	CHECK(p.rules == NULL && p.n_rules == 0 && p.origin == NULL && p.warnings == NULL);
	return err.msg;
}

static const char *rejected(const char *text)
{
	return rejected_as("t.json", text);
}

/* A policy of one rule written as @rule (the rest of the object's members). */
static char *one_rule(const char *rule)
{
	return sg_xasprintf("{\"version\": 1, \"rules\": [{%s}]}", rule);
}

/* The message for the policy of one rule @rule; the rule's object starts at 1:27. */
static const char *rule_rejected(const char *rule)
{
	_cleanup_free_ char *text = one_rule(rule);
	return rejected(text);
}

TEST(design_example)
{
	static const char text[] =
	    "{\n"
	    "  \"version\": 1,\n"
	    "  \"mode\": \"enforce\",\n"
	    "  \"default\": \"read\",\n"
	    "  \"rules\": [\n"
	    "    { \"name\": \"kernel.domainname\", \"access\": \"read-write\", \"rewrite\": "
	    "\"sandbox\" },\n"
	    "    { \"name\": \"net.core.somaxconn\", \"access\": \"read-write\",\n"
	    "      \"range\": [128, 4096], \"on_violation\": \"clamp\" },\n"
	    "    { \"name\": \"net.ipv4.ip_local_port_range\", \"access\": \"read-write\",\n"
	    "      \"range\": [[1024, 65535], [1024, 65535]] },\n"
	    "    { \"name\": \"vm.swappiness\", \"access\": \"read-write\", \"values\": [\"0\", "
	    "\"10\", \"60\"] },\n"
	    "    { \"name\": \"kernel.random.*\", \"access\": \"none\" }\n"
	    "  ]\n"
	    "}\n";
	struct sg_policy p;

	if (!parse(text, &p))
		return;
	CHECK_STR(p.origin, "t.json");
	CHECK(p.mode == SG_MODE_ENFORCE);
	CHECK(p.default_access == SG_ACCESS_READ);
	sg_policy_find_shadowed(&p);
	CHECK(p.n_warnings == 0);
	CHECK(p.n_rules == 5);
	if (p.n_rules != 5) {
		sg_policy_free(&p);
		return;
	}

	const struct sg_rule *r = p.rules;
	CHECK_STR(r[0].name, "kernel.domainname");
	CHECK_STR(r[0].pattern, "kernel/domainname");
	CHECK(r[0].is_literal);
	CHECK(r[0].access == SG_ACCESS_READ_WRITE);
	CHECK_STR(r[0].rewrite, "sandbox");
	CHECK(r[0].n_values == 0 && r[0].n_ranges == 0);
	CHECK(r[0].on_violation == SG_VIOLATION_DENY);
	CHECK(r[0].pos.line == 6 && r[0].pos.col == 5);

	CHECK_STR(r[1].pattern, "net/core/somaxconn");
	CHECK(r[1].n_ranges == 1 && !r[1].range_per_field);
	CHECK(r[1].ranges[0].min == 128 && r[1].ranges[0].max == 4096);
	CHECK(r[1].on_violation == SG_VIOLATION_CLAMP);
	CHECK(r[1].rewrite == NULL);
	CHECK(r[1].pos.line == 7 && r[1].pos.col == 5);

	CHECK_STR(r[2].pattern, "net/ipv4/ip_local_port_range");
	CHECK(r[2].n_ranges == 2 && r[2].range_per_field);
	CHECK(r[2].ranges[0].min == 1024 && r[2].ranges[0].max == 65535);
	CHECK(r[2].ranges[1].min == 1024 && r[2].ranges[1].max == 65535);
	CHECK(r[2].on_violation == SG_VIOLATION_DENY);

	CHECK(r[3].n_values == 3 && r[3].n_ranges == 0);
	CHECK_STR(r[3].values[0], "0");
	CHECK_STR(r[3].values[1], "10");
	CHECK_STR(r[3].values[2], "60");

	CHECK_STR(r[4].name, "kernel.random.*");
	CHECK_STR(r[4].pattern, "kernel/random/*");
	CHECK(!r[4].is_literal);
	CHECK(r[4].access == SG_ACCESS_NONE);
	CHECK(r[4].pos.line == 12 && r[4].pos.col == 5);
	sg_policy_free(&p);
	CHECK(p.rules == NULL && p.n_rules == 0 && p.origin == NULL);
}

TEST(defaults_and_optional_keys)
{
	struct sg_policy p;

	if (parse("{\"version\": 1}", &p)) {
		CHECK(p.mode == SG_MODE_ENFORCE);
		CHECK(p.default_access == SG_ACCESS_READ);
		sg_policy_find_shadowed(&p);
		CHECK(p.n_rules == 0 && p.n_warnings == 0);
		sg_policy_free(&p);
	}
	if (parse("{\"rules\": [], \"default\": \"none\", \"mode\": \"audit\", \"version\": 1,"
		  " \"description\": \"anything \\u2713\"}",
		  &p)) {
		CHECK(p.mode == SG_MODE_AUDIT);
		CHECK(p.default_access == SG_ACCESS_NONE);
		CHECK(p.n_rules == 0);
		sg_policy_free(&p);
	}
	if (parse("{\"version\": 1, \"default\": \"read-write\"}", &p)) {
		CHECK(p.default_access == SG_ACCESS_READ_WRITE);
		sg_policy_free(&p);
	}
	/* on_violation "deny" may be spelled out; a rewrite without other constraints is fine */
	_cleanup_free_ char *text = one_rule(
	    "\"name\": \"kernel.hostname\", \"access\": \"read-write\", \"values\": [\"a\"],"
	    " \"on_violation\": \"deny\", \"rewrite\": \"b\"");
	if (parse(text, &p)) {
		CHECK(p.rules[0].on_violation == SG_VIOLATION_DENY);
		CHECK(p.rules[0].n_values == 1);
		CHECK_STR(p.rules[0].rewrite, "b");
		sg_policy_free(&p);
	}
}

TEST(names_dotted_slash_and_patterns)
{
	static const struct {
		const char *name, *pattern;
		bool literal;
	} cases[] = {
	    {"net.ipv4.tcp_rmem", "net/ipv4/tcp_rmem", true},
	    {"net/ipv4/tcp_rmem", "net/ipv4/tcp_rmem", true},
	    {"net.ipv4.conf.eth0/100.rp_filter", "net/ipv4/conf/eth0.100/rp_filter", true},
	    {"net/ipv4/conf/eth0.100/rp_filter", "net/ipv4/conf/eth0.100/rp_filter", true},
	    {"net.**.rp_filter", "net/**/rp_filter", false},
	    {"kernel.sched_*", "kernel/sched_*", false},
	    {"net.ipv4.neigh.eth?.gc_stale_time", "net/ipv4/neigh/eth?/gc_stale_time", false},
	};

	for (size_t i = 0; i < SG_ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *rule =
		    sg_xasprintf("\"name\": \"%s\", \"access\": \"read\"", cases[i].name);
		_cleanup_free_ char *text = one_rule(rule);
		struct sg_policy p;
		if (!parse(text, &p))
			continue;
		CHECK_STR(p.rules[0].name, cases[i].name);
		CHECK_STR(p.rules[0].pattern, cases[i].pattern);
		CHECK(p.rules[0].is_literal == cases[i].literal);
		sg_policy_free(&p);
	}
}

TEST(values_are_normalised)
{
	struct sg_policy p;
	_cleanup_free_ char *text =
	    one_rule("\"name\": \"net.ipv4.ip_local_port_range\", \"access\": \"read-write\","
		     " \"values\": [\"4096\\n\", \"  1024\\t\\t65535 \", \"a\\r\\nb\\u000bc\\fd\","
		     " \"x\"]");

	if (!parse(text, &p))
		return;
	CHECK(p.rules[0].n_values == 4);
	CHECK_STR(p.rules[0].values[0], "4096");
	CHECK_STR(p.rules[0].values[1], "1024 65535");
	CHECK_STR(p.rules[0].values[2], "a b c d\n"); /* its newline before "b" marked */
	CHECK_STR(p.rules[0].values[3], "x");
	sg_policy_free(&p);
}

/* sg_value_normalise of @in (with the NUL) into @cap bytes: the result, or NULL for -E2BIG. */
static const char *normalised(const char *in, size_t cap)
{
	static char out[512];
	int n = sg_value_normalise(in, strlen(in), out, cap);
	if (n < 0) {
		CHECK(n == -E2BIG);
		return NULL;
	}
	CHECK((size_t)n == strlen(out));
	return out;
}

TEST(value_normalise)
{
	CHECK_STR(normalised("4096", 128), "4096");
	CHECK_STR(normalised("4096\n", 128), "4096");
	CHECK_STR(normalised(" 4096 ", 128), "4096");
	CHECK_STR(normalised("1024\t65535", 128), "1024 65535");
	CHECK_STR(normalised("\t1024 \r\v\f 65535\n", 128), "1024 65535");
	/* a newline before the last token: marked, as the kernel stores what precedes it */
	CHECK_STR(normalised("\t1024 \n\r\v\f 65535\n", 128), "1024 65535\n");
	CHECK_STR(normalised("\nprod", 128), "prod\n");
	CHECK_STR(normalised("a\nb", 128), "a b\n");
	CHECK_STR(normalised("a b\n\n", 128), "a b");
	CHECK(normalised("ab\nc", 5) == NULL);
	CHECK_STR(normalised("ab\nc", 6), "ab c\n");
	/* spelled back, each normalises to itself */
	static const char *const marked[] = {"4096", "1024 65535", "a b\n", "x\n", "p q r\n", ""};
	for (size_t i = 0; i < sizeof(marked) / sizeof(marked[0]); i++) {
		char spelled[64];
		sg_value_spell(marked[i], spelled, sizeof(spelled));
		CHECK_STR(normalised(spelled, 128), marked[i]);
	}
	char spelled[64];
	sg_value_spell("p q r\n", spelled, sizeof(spelled));
	CHECK_STR(spelled, "p q\nr");
	CHECK_STR(normalised("4096 87380   6291456\n", 128), "4096 87380 6291456");
	CHECK_STR(normalised("", 128), "");
	CHECK_STR(normalised(" \n\t", 128), "");
	/* only ASCII whitespace separates: other bytes, even non-breaking spaces, are kept */
	CHECK_STR(normalised("a\xc2\xa0z", 128), "a\xc2\xa0z");

	/* @cap counts the NUL; the trailing whitespace never needs room */
	CHECK_STR(normalised("abc", 4), "abc");
	CHECK(normalised("abcd", 4) == NULL);
	CHECK_STR(normalised("abc\n\n\n\n\n", 4), "abc");
	CHECK_STR(normalised("  a b", 4), "a b");
	CHECK(normalised("a  bc", 4) == NULL);
	CHECK_STR(normalised("", 1), "");
	char none[1];
	CHECK(sg_value_normalise("", 0, none, 0) == -E2BIG);

	/* only @len bytes are read, and a NUL ends the value */
	char out[16];
	CHECK(sg_value_normalise("12 34", 2, out, sizeof(out)) == 2);
	CHECK_STR(out, "12");
	CHECK(sg_value_normalise("1\0002", 3, out, sizeof(out)) == 1);
	CHECK_STR(out, "1");

	/* in place */
	char buf[] = "  60 \t 10\n";
	CHECK(sg_value_normalise(buf, strlen(buf), buf, sizeof(buf)) == 5);
	CHECK_STR(buf, "60 10");
}

TEST(access_and_mode_names)
{
	CHECK_STR(sg_access_name(SG_ACCESS_NONE), "none");
	CHECK_STR(sg_access_name(SG_ACCESS_READ), "read");
	CHECK_STR(sg_access_name(SG_ACCESS_READ_WRITE), "read-write");
	CHECK_STR(sg_access_name((enum sg_access)7), "unknown");
	CHECK_STR(sg_mode_name(SG_MODE_ENFORCE), "enforce");
	CHECK_STR(sg_mode_name(SG_MODE_AUDIT), "audit");
	CHECK_STR(sg_mode_name((enum sg_mode)7), "unknown");
}

/* The two messages of the brief, at the positions it gives. */
TEST(messages_name_file_line_col_and_path)
{
	CHECK_STR(
	    rejected_as("policy.json",
			"{\n"
			"  \"version\": 1,\n"
			"  \"rules\": [\n"
			"    { \"name\": \"a\", \"access\": \"read\" },\n"
			"    { \"name\": \"b\", \"access\": \"read\" },\n"
			"    { \"name\": \"net.core.somaxconn\", \"access\": \"read-write\",\n"
			"     \"range\": [5000, 4096] }\n"
			"  ]\n"
			"}\n"),
	    "policy.json:7:15: rules[2].range: min 5000 is greater than max 4096");
	CHECK_STR(rejected_as("p.json", "{\n"
					"  \"version\": 1, \"rules\": [{\"name\": \"x\",\n"
					"    \"acess\": \"read\"}]\n"
					"}\n"),
		  "p.json:3:5: rules[0]: unknown key \"acess\" (expected name, access, values, "
		  "range, on_violation, rewrite, allow_host_namespace)");
}

TEST(top_level_rejections)
{
	CHECK_STR(rejected("[]"), "t.json:1:1: (top level): expected an object, got array");
	CHECK_STR(rejected("\n \"policy\""),
		  "t.json:2:2: (top level): expected an object, got string");
	CHECK_STR(rejected("{}"), "t.json:1:1: (top level): \"version\": 1 is required");
	CHECK_STR(rejected("{\"version\": 1, \"Mode\": \"audit\"}"),
		  "t.json:1:16: (top level): unknown key \"Mode\" (expected version, description, "
		  "mode, default, rules)");
	/* an unknown key is reported before a missing one */
	CHECK_CONTAINS(rejected("{\"rulez\": []}"),
		       "t.json:1:2: (top level): unknown key \"rulez\"");
	CHECK_STR(rejected("{\"version\": 2}"),
		  "t.json:1:13: version: this is policy version 1; got 2");
	CHECK_STR(rejected("{\"version\": 0}"),
		  "t.json:1:13: version: this is policy version 1; got 0");
	CHECK_STR(rejected("{\"version\": 1.0}"),
		  "t.json:1:13: version: this is policy version 1; got 1.0");
	CHECK_STR(rejected("{\"version\": \"1\"}"),
		  "t.json:1:13: version: this is policy version 1; got string");
	CHECK_STR(rejected("{\"version\": true}"),
		  "t.json:1:13: version: this is policy version 1; got boolean");
	CHECK_STR(rejected("{\"version\": 1, \"description\": 7}"),
		  "t.json:1:31: description: expected a string, got number");
	CHECK_STR(rejected("{\"version\": 1, \"mode\": \"strict\"}"),
		  "t.json:1:24: mode: \"strict\" is not one of enforce, audit");
	CHECK_STR(rejected("{\"version\": 1, \"mode\": null}"),
		  "t.json:1:24: mode: expected a string, got null");
	CHECK_STR(rejected("{\"version\": 1, \"default\": \"write\"}"),
		  "t.json:1:27: default: \"write\" is not one of none, read, read-write");
	CHECK_STR(rejected("{\"version\": 1, \"default\": [\"read\"]}"),
		  "t.json:1:27: default: expected a string, got array");
	CHECK_STR(rejected("{\"version\": 1, \"rules\": {}}"),
		  "t.json:1:25: rules: expected an array, got object");
	CHECK_STR(rejected("{\"version\": 1, \"rules\": [\"net.core.somaxconn\"]}"),
		  "t.json:1:26: rules[0]: expected an object, got string");
	/* JSON errors come first, with their own position */
	CHECK_STR(rejected("{\"version\": 1, \"version\": 1}"),
		  "t.json:1:16: duplicate key \"version\"");
	CHECK_CONTAINS(rejected("{\"version\": 1,}"), "t.json:1:");
	CHECK_STR(rejected(""), "t.json: empty input, expected a JSON value");
}

TEST(rule_rejections)
{
	/* the rule's object starts at 1:26 */
	CHECK_STR(rule_rejected("\"access\": \"read\""),
		  "t.json:1:26: rules[0]: \"name\" is required");
	CHECK_STR(rule_rejected("\"name\": \"x\""),
		  "t.json:1:26: rules[0]: \"access\" is required (none, read or read-write)");
	CHECK_STR(rule_rejected("\"name\": \"x\", \"access\": \"read\", \"comment\": \"\""),
		  "t.json:1:58: rules[0]: unknown key \"comment\" (expected name, access, values, "
		  "range, on_violation, rewrite, allow_host_namespace)");
	CHECK_STR(rule_rejected("\"name\": 5, \"access\": \"read\""),
		  "t.json:1:35: rules[0].name: expected a string, got number");
	CHECK_STR(rule_rejected("\"name\": \"\", \"access\": \"read\""),
		  "t.json:1:35: rules[0].name: empty name");
	/* the name's own problem comes from name.h, after the path */
	CHECK_CONTAINS(rule_rejected("\"name\": \"net..core\", \"access\": \"read\""),
		       "t.json:1:35: rules[0].name: \"net..core\" has an empty component");
	CHECK_CONTAINS(rule_rejected("\"name\": \"net.core. somaxconn\", \"access\": \"read\""),
		       "t.json:1:35: rules[0].name: \"net.core. somaxconn\" contains whitespace");
	CHECK_CONTAINS(rule_rejected("\"name\": \"net.**x\", \"access\": \"read\""),
		       "t.json:1:35: rules[0].name: \"net.**x\": component \"**x\" mixes **");
	CHECK_STR(rule_rejected("\"name\": \"x\", \"access\": \"write\""),
		  "t.json:1:50: rules[0].access: \"write\" is not one of none, read, read-write");
	CHECK_STR(rule_rejected("\"name\": \"x\", \"access\": 2"),
		  "t.json:1:50: rules[0].access: expected a string, got number");
}

TEST(constraint_rejections)
{
	/* constraints on a rule that cannot write, at the constraint */
	CHECK_STR(rule_rejected("\"name\": \"x\", \"access\": \"read\", \"values\": [\"1\"]"),
		  "t.json:1:68: rules[0]: values, range, on_violation, rewrite and "
		  "allow_host_namespace need access "
		  "\"read-write\" (access is \"read\")");
	CHECK_STR(rule_rejected("\"name\": \"x\", \"access\": \"none\", \"range\": [1, 2]"),
		  "t.json:1:67: rules[0]: values, range, on_violation, rewrite and "
		  "allow_host_namespace need access "
		  "\"read-write\" (access is \"none\")");
	CHECK_STR(
	    rule_rejected("\"name\": \"x\", \"access\": \"read\", \"on_violation\": \"deny\""),
	    "t.json:1:74: rules[0]: values, range, on_violation, rewrite and allow_host_namespace "
	    "need access "
	    "\"read-write\" (access is \"read\")");
	CHECK_STR(rule_rejected("\"name\": \"x\", \"access\": \"read\", \"rewrite\": \"y\""),
		  "t.json:1:69: rules[0]: values, range, on_violation, rewrite and "
		  "allow_host_namespace need access "
		  "\"read-write\" (access is \"read\")");

#define RW "\"name\": \"x\", \"access\": \"read-write\", "
	CHECK_STR(rule_rejected(RW "\"values\": [\"1\"], \"range\": [1, 2]"),
		  "t.json:1:90: rules[0]: use either values or range, not both");
	CHECK_STR(rule_rejected(RW "\"on_violation\": \"clamp\""),
		  "t.json:1:80: rules[0]: on_violation \"clamp\" needs a range");
	CHECK_STR(rule_rejected(RW "\"values\": [\"1\"], \"on_violation\": \"clamp\""),
		  "t.json:1:97: rules[0]: on_violation \"clamp\" needs a range");
	CHECK_STR(rule_rejected(RW "\"on_violation\": \"ignore\""),
		  "t.json:1:80: rules[0].on_violation: \"ignore\" is not one of deny, clamp");

	/* values */
	CHECK_STR(rule_rejected(RW "\"values\": \"1\""),
		  "t.json:1:74: rules[0].values: expected an array, got string");
	CHECK_STR(rule_rejected(RW "\"values\": []"),
		  "t.json:1:74: rules[0].values: must list at least one value");
	CHECK_STR(rule_rejected(RW "\"values\": [\"1\", 2]"),
		  "t.json:1:80: rules[0].values[1]: expected a string, got number");

	/* range */
	CHECK_STR(rule_rejected(RW "\"range\": 5"),
		  "t.json:1:73: rules[0].range: expected an array, got number");
	CHECK_STR(rule_rejected(RW "\"range\": []"),
		  "t.json:1:73: rules[0].range: expected [min, max] or [[min, max], ...]");
	CHECK_STR(rule_rejected(RW "\"range\": [1, 2, 3]"),
		  "t.json:1:73: rules[0].range: expected [min, max], got 3 elements");
	CHECK_STR(rule_rejected(RW "\"range\": [5000, 4096]"),
		  "t.json:1:73: rules[0].range: min 5000 is greater than max 4096");
	CHECK_STR(rule_rejected(RW "\"range\": [\"1\", 2]"),
		  "t.json:1:74: rules[0].range[0]: expected a number, got string");
	CHECK_STR(rule_rejected(RW "\"range\": [1, 2.5]"),
		  "t.json:1:77: rules[0].range[1]: 2.5 is not an integer between "
		  "-9223372036854775808 and 9223372036854775807");
	CHECK_STR(rule_rejected(RW "\"range\": [1e3, 2000]"),
		  "t.json:1:74: rules[0].range[0]: 1e3 is not an integer between "
		  "-9223372036854775808 and 9223372036854775807");
	CHECK_STR(rule_rejected(RW "\"range\": [-9223372036854775809, 0]"),
		  "t.json:1:74: rules[0].range[0]: -9223372036854775809 is not an integer between "
		  "-9223372036854775808 and 9223372036854775807");
	CHECK_STR(rule_rejected(RW "\"range\": [[1, 2], [4, 3]]"),
		  "t.json:1:82: rules[0].range[1]: min 4 is greater than max 3");
	CHECK_STR(rule_rejected(RW "\"range\": [[1, 2], 3]"),
		  "t.json:1:82: rules[0].range[1]: expected an array, got number");
	CHECK_STR(rule_rejected(RW "\"range\": [1, [2, 3]]"),
		  "t.json:1:77: rules[0].range[1]: expected a number, got array");
	CHECK_STR(rule_rejected(RW "\"range\": [[1, 2], [3]]"),
		  "t.json:1:82: rules[0].range[1]: expected [min, max], got 1 elements");
	CHECK_STR(rule_rejected(RW "\"range\": [[0,1],[0,1],[0,1],[0,1],[0,1]]"),
		  "t.json:1:73: rules[0].range: 5 fields; at most 4 can be constrained");

	/* rewrite */
	CHECK_STR(rule_rejected(RW "\"rewrite\": 1"),
		  "t.json:1:75: rules[0].rewrite: expected a string, got number");
	CHECK_STR(rule_rejected(RW "\"rewrite\": \"\""),
		  "t.json:1:75: rules[0].rewrite: empty rewrite value");
#undef RW
}

/* A string of @n copies of @c. */
static char *repeat(char c, size_t n)
{
	char *s = sg_xmalloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

TEST(limits)
{
	struct sg_policy p;
	_cleanup_free_ char *v127 = repeat('7', SG_VALUE_MAX - 1);
	_cleanup_free_ char *v128 = repeat('8', SG_VALUE_MAX);

	/* values: at most SG_VALUE_MAX - 1 bytes once normalised, however long as written */
	_cleanup_free_ char *ok = sg_xasprintf(
	    "{\"version\": 1, \"rules\": [{\"name\": \"x\", \"access\": \"read-write\","
	    " \"values\": [\"%s\", \"   %s\\n\\n\"], \"rewrite\": \"%s\"}]}",
	    v127, v127, v127);
	if (parse(ok, &p)) {
		CHECK(strlen(p.rules[0].values[0]) == SG_VALUE_MAX - 1);
		CHECK_STR(p.rules[0].values[1], v127);
		CHECK(strlen(p.rules[0].rewrite) == SG_VALUE_MAX - 1);
		sg_policy_free(&p);
	}
	_cleanup_free_ char *long_value = sg_xasprintf(
	    "{\"version\": 1, \"rules\": [{\"name\": \"x\", \"access\": \"read-write\","
	    " \"values\": [\"%s\"]}]}",
	    v128);
	CHECK_STR(rejected(long_value), "t.json:1:75: rules[0].values[0]: longer than 127 bytes");
	_cleanup_free_ char *long_rewrite = sg_xasprintf(
	    "{\"version\": 1, \"rules\": [{\"name\": \"x\", \"access\": \"read-write\","
	    " \"rewrite\": \"%s\"}]}",
	    v128);
	CHECK_STR(rejected(long_rewrite), "t.json:1:75: rules[0].rewrite: longer than 127 bytes");
	/* bytes, not characters: 64 two-byte characters are 128 bytes */
	char two_byte[2 * 64 + 1] = "";
	for (int i = 0; i < 64; i++)
		strcat(two_byte, "\xc3\xa9");
	_cleanup_free_ char *long_utf8 = sg_xasprintf(
	    "{\"version\": 1, \"rules\": [{\"name\": \"x\", \"access\": \"read-write\","
	    " \"rewrite\": \"%s\"}]}",
	    two_byte);
	CHECK_STR(rejected(long_utf8), "t.json:1:75: rules[0].rewrite: longer than 127 bytes");

	/* int64 bounds and SG_FIELDS_MAX fields */
	if (parse("{\"version\": 1, \"rules\": [{\"name\": \"x\", \"access\": \"read-write\","
		  " \"range\": [-9223372036854775808, 9223372036854775807]},"
		  " {\"name\": \"y\", \"access\": \"read-write\","
		  " \"range\": [[0, 1], [-1, 0], [5, 5], [0, 9]], \"on_violation\": \"clamp\"}]}",
		  &p)) {
		CHECK(p.rules[0].ranges[0].min == INT64_MIN);
		CHECK(p.rules[0].ranges[0].max == INT64_MAX);
		CHECK(p.rules[1].n_ranges == SG_FIELDS_MAX && p.rules[1].range_per_field);
		CHECK(p.rules[1].ranges[1].min == -1 && p.rules[1].ranges[2].max == 5);
		CHECK(p.rules[1].on_violation == SG_VIOLATION_CLAMP);
		sg_policy_free(&p);
	}
}

/* A policy of @n rules named "kernel.r<i % distinct>", access read. */
static char *many_rules(size_t n, size_t distinct)
{
	size_t cap = 64 + n * 64, o = 0;
	char *s = sg_xmalloc(cap);

	o += (size_t)snprintf(s + o, cap - o, "{\"version\": 1, \"rules\": [\n");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(s + o, cap - o,
				      "%s{\"name\": \"kernel.r%zu\", \"access\": \"read\"}\n",
				      i ? "," : "", i % distinct);
	snprintf(s + o, cap - o, "]}");
	return s;
}

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

TEST(rule_count_limit)
{
	struct sg_policy p;
	struct sg_err err = {0};

	/* SG_MAX_RULES rules, all the same name: parsed, and one warning for each but the first,
	 * in well under the time an O(n^2) comparison would take */
	_cleanup_free_ char *most = many_rules(SG_MAX_RULES, 1);
	double t0 = seconds();
	CHECK(sg_policy_parse(most, strlen(most), "t.json", &p, &err) == 0);
	sg_policy_find_shadowed(&p);
	/* Informational only: speed is measured in test/bench, never asserted here. */
	fprintf(stderr, "  %d rules took %.2f s\n", SG_MAX_RULES, seconds() - t0);
	CHECK(p.n_rules == SG_MAX_RULES);
	CHECK(p.n_warnings == SG_MAX_RULES - 1);
	if (p.n_warnings == SG_MAX_RULES - 1) {
		CHECK_STR(p.warnings[0],
			  "t.json:3:2: rules[1]: never matches: shadowed by rules[0], "
			  "which has the same name and is listed first");
		CHECK_CONTAINS(p.warnings[SG_MAX_RULES - 2], ": rules[65535]: never matches: "
							     "shadowed by rules[0],");
	}
	sg_policy_free(&p);

	_cleanup_free_ char *too_many = many_rules(SG_MAX_RULES + 1, SG_MAX_RULES + 1);
	CHECK_STR(rejected(too_many), "t.json:1:25: rules: 65537 rules; at most 65536 are allowed");
}

TEST(rules_made_while_parsing_report_as_from_a_whole_tree)
{
	/*
	 * The rules are made as the parser hands them out (json.h): an error in
	 * one is reported only after the JSON and the top level are found right,
	 * and the first rule in error is the one named.
	 */
	const char *bad_rule = "{\"name\": \"kernel.a\", \"access\": \"write\"}";
	char text[512];

	snprintf(text, sizeof(text), "{\"rules\": [%s]}", bad_rule);
	CHECK_STR(rejected(text), "t.json:1:1: (top level): \"version\": 1 is required");
	snprintf(text, sizeof(text), "{\"rules\": [%s], \"version\": 2}", bad_rule);
	CHECK_STR(rejected(text), "t.json:1:65: version: this is policy version 1; got 2");
	snprintf(text, sizeof(text), "{\"rules\": [%s], \"modes\": 1}", bad_rule);
	CHECK_CONTAINS(rejected(text), "t.json:1:54: (top level): unknown key \"modes\"");
	snprintf(text, sizeof(text), "{\"version\": 1, \"rules\": [%s], }", bad_rule);
	CHECK_CONTAINS(rejected(text), "invalid JSON");
	snprintf(text, sizeof(text),
		 "{\"version\": 1, \"rules\": [{\"name\": \"kernel.b\", \"access\": \"read\"}, %s, "
		 "{\"access\": \"none\"}]}",
		 bad_rule);
	CHECK_STR(rejected(text),
		  "t.json:1:97: rules[1].access: \"write\" is not one of none, read, read-write");

	/* Rules after one in error are not made, and the policy is not half made */
	struct sg_policy p;
	struct sg_err err = {0};
	CHECK(sg_policy_parse(text, strlen(text), "t.json", &p, &err) < 0);
	CHECK(p.rules == NULL && p.n_rules == 0 && p.origin == NULL);

	/* Scalars and arrays as rules are items too, each told apart by its index */
	CHECK_STR(
	    rejected("{\"version\": 1, \"rules\": [{\"name\": \"a.b\", \"access\": \"read\"}, "
		     "[1], 2]}"),
	    "t.json:1:61: rules[1]: expected an object, got array");
	/* An empty list of rules is no list at all */
	CHECK(parse("{\"version\": 1, \"rules\": []}", &p));
	CHECK(p.n_rules == 0);
	sg_policy_free(&p);
}

TEST(warnings_for_rules_that_never_match)
{
	struct sg_policy p;

	if (!parse("{\"version\": 1, \"rules\": [\n"
		   "  {\"name\": \"net.core.somaxconn\", \"access\": \"read\"},\n"
		   "  {\"name\": \"kernel.random.*\", \"access\": \"none\"},\n"
		   "  {\"name\": \"net/core/somaxconn\", \"access\": \"read-write\"},\n"
		   "  {\"name\": \"kernel.random.?\", \"access\": \"read\"},\n"
		   "  {\"name\": \"kernel/random/*\", \"access\": \"read\"},\n"
		   "  {\"name\": \"net.core.somaxconn\", \"access\": \"none\"}\n"
		   "]}",
		   &p))
		return;
	CHECK(p.n_rules == 6);
	CHECK(p.n_warnings == 0); /* parsing does not look */
	sg_policy_find_shadowed(&p);
	sg_policy_find_shadowed(&p); /* a second look finds the same, not twice as many */
	CHECK(p.n_warnings == 3);
	if (p.n_warnings == 3) {
		/* in the order of the rules they are about */
		CHECK_STR(p.warnings[0],
			  "t.json:4:3: rules[2]: never matches: shadowed by rules[0], "
			  "which has the same name and is listed first");
		CHECK_STR(p.warnings[1],
			  "t.json:6:3: rules[4]: never matches: shadowed by rules[1], "
			  "which has the same name and is listed first");
		CHECK_STR(p.warnings[2],
			  "t.json:7:3: rules[5]: never matches: shadowed by rules[0], "
			  "which has the same name and is listed first");
	}
	sg_policy_free(&p);

	/* different patterns, even overlapping ones, are no warning */
	if (parse("{\"version\": 1, \"rules\": [{\"name\": \"net.**\", \"access\": \"read\"},"
		  " {\"name\": \"net.*\", \"access\": \"none\"},"
		  " {\"name\": \"net.core\", \"access\": \"none\"}]}",
		  &p)) {
		sg_policy_find_shadowed(&p);
		CHECK(p.n_warnings == 0);
		sg_policy_free(&p);
	}
}

/* Two policies hold equal rules, in separate memory. */
static void check_same(const struct sg_policy *a, const struct sg_policy *b)
{
	CHECK_STR(a->origin, b->origin);
	CHECK(a->origin != b->origin);
	CHECK(a->mode == b->mode && a->default_access == b->default_access);
	CHECK(a->n_rules == b->n_rules && a->n_warnings == b->n_warnings);
	if (a->n_rules != b->n_rules || a->n_warnings != b->n_warnings)
		return;
	for (size_t i = 0; i < a->n_warnings; i++) {
		CHECK_STR(a->warnings[i], b->warnings[i]);
		CHECK(a->warnings[i] != b->warnings[i]);
	}
	for (size_t i = 0; i < a->n_rules; i++) {
		const struct sg_rule *x = &a->rules[i], *y = &b->rules[i];
		CHECK_STR(x->name, y->name);
		CHECK_STR(x->pattern, y->pattern);
		CHECK(x->name != y->name && x->pattern != y->pattern);
		CHECK(x->is_literal == y->is_literal && x->access == y->access);
		CHECK(x->on_violation == y->on_violation &&
		      x->range_per_field == y->range_per_field);
		CHECK(x->pos.line == y->pos.line && x->pos.col == y->pos.col);
		CHECK((x->rewrite == NULL) == (y->rewrite == NULL));
		if (x->rewrite && y->rewrite) {
			CHECK_STR(x->rewrite, y->rewrite);
			CHECK(x->rewrite != y->rewrite);
		}
		CHECK(x->n_values == y->n_values && x->n_ranges == y->n_ranges);
		if (x->n_values != y->n_values || x->n_ranges != y->n_ranges)
			continue;
		for (size_t v = 0; v < x->n_values; v++) {
			CHECK_STR(x->values[v], y->values[v]);
			CHECK(x->values[v] != y->values[v]);
		}
		for (size_t r = 0; r < x->n_ranges; r++)
			CHECK(x->ranges[r].min == y->ranges[r].min &&
			      x->ranges[r].max == y->ranges[r].max);
		CHECK(x->n_ranges == 0 || x->ranges != y->ranges);
	}
}

TEST(copy_and_free)
{
	struct sg_policy p, copy, empty_copy, empty = {0};

	if (!parse("{\"version\": 1, \"mode\": \"audit\", \"default\": \"none\", \"rules\": [\n"
		   "  {\"name\": \"kernel.domainname\", \"access\": \"read-write\", \"rewrite\": "
		   "\"x\"},\n"
		   "  {\"name\": \"vm.swappiness\", \"access\": \"read-write\", \"values\": "
		   "[\"0\", \"1\"]},\n"
		   "  {\"name\": \"net.ipv4.tcp_rmem\", \"access\": \"read-write\",\n"
		   "   \"range\": [[1, 2], [3, 4], [5, 6]], \"on_violation\": \"clamp\"},\n"
		   "  {\"name\": \"kernel/domainname\", \"access\": \"none\"}\n"
		   "]}",
		   &p))
		return;
	sg_policy_find_shadowed(&p);
	CHECK(sg_policy_copy(&p, &copy) == 0);
	check_same(&p, &copy);
	/* the copy outlives the original */
	sg_policy_free(&p);
	CHECK(p.rules == NULL && p.warnings == NULL && p.origin == NULL);
	CHECK(copy.n_rules == 4 && copy.n_warnings == 1);
	CHECK_STR(copy.rules[1].values[1], "1");
	CHECK(copy.rules[2].ranges[2].max == 6);
	CHECK_STR(copy.warnings[0], "t.json:6:3: rules[3]: never matches: shadowed by rules[0], "
				    "which has the same name and is listed first");
	/* a copy of a copy is the same too */
	struct sg_policy again;
	CHECK(sg_policy_copy(&copy, &again) == 0);
	check_same(&copy, &again);
	sg_policy_free(&again);
	sg_policy_free(&copy);
	/* freeing twice, or an empty policy, is harmless */
	sg_policy_free(&copy);
	CHECK(sg_policy_copy(&empty, &empty_copy) == 0);
	CHECK(empty_copy.n_rules == 0 && empty_copy.origin == NULL);
	sg_policy_free(&empty_copy);
	sg_policy_free(&empty);
}

/* A scratch file with @text; returns its path (free it, and unlink it). */
static char *scratch(const char *text)
{
	char *path = sg_xstrdup("/tmp/sg-test-policy.XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
		close(fd);
	}
	return path;
}

TEST(load_file)
{
	struct sg_policy p;
	struct sg_err err = {0};

	_cleanup_free_ char *good =
	    scratch("{\"version\": 1, \"rules\": [{\"name\": \"kernel.hostname\","
		    " \"access\": \"none\"}]}\n");
	CHECK(sg_policy_load_file(good, &p, &err) == 0);
	CHECK_STR(p.origin, good);
	CHECK(p.n_rules == 1);
	sg_policy_free(&p);
	unlink(good);

	/* messages name the file */
	_cleanup_free_ char *bad = scratch("{\n  \"version\": 1,\n  \"default\": \"maybe\"\n}\n");
	memset(&err, 0, sizeof(err));
	CHECK(sg_policy_load_file(bad, &p, &err) == -EINVAL);
	_cleanup_free_ char *want =
	    sg_xasprintf("%s:3:14: default: \"maybe\" is not one of none, read, read-write", bad);
	CHECK_STR(err.msg, want);
	CHECK(p.rules == NULL && p.origin == NULL);
	unlink(bad);

	/* a missing file is invalid input (exit 1) that names it */
	memset(&err, 0, sizeof(err));
	CHECK(sg_policy_load_file("/nonexistent/sg/policy.json", &p, &err) < 0);
	CHECK(err.status == SG_EXIT_INPUT);
	CHECK_CONTAINS(err.msg, "/nonexistent/sg/policy.json");
	CHECK_CONTAINS(err.msg, "No such file or directory");
	CHECK(p.rules == NULL && p.origin == NULL);
}

/*
 * test/fixtures/policies, found from this file's path as the compiler saw it.
 * Meson compiles from the build root with paths relative to it, and this
 * executable lives in BUILD/test/, so a relative path is taken from there.
 */
static char *fixtures_dir(void)
{
	const char *self = __FILE__;
	const char *cut = strstr(self, "unit/test_policy.c");
	char exe[4096];

	if (!cut) {
		fprintf(stderr, "cannot find the fixtures from %s\n", self);
		exit(1);
	}
	if (self[0] == '/')
		return sg_xasprintf("%.*sfixtures/policies", (int)(cut - self), self);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("/proc/self/exe");
		exit(1);
	}
	exe[n] = '\0';
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
	}
	return sg_xasprintf("%s/%.*sfixtures/policies", exe, (int)(cut - self), self);
}

/* The first line of @path, or NULL. */
static char *first_line(const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct sg_err err = {0};

	if (sg_read_file(path, 4096, &text, &len, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	text[strcspn(text, "\n")] = '\0';
	return SG_TAKE(text);
}

/*
 * Every fixture without python: valid/ loads, invalid/ and invalid-semantic/
 * fail with a message that names the file and contains NAME.expect
 * (test/unit/schema_agree.sh checks the schema says the same).
 */
TEST(fixtures)
{
	_cleanup_free_ char *dir = fixtures_dir();
	static const char *const kinds[] = {"valid", "invalid", "invalid-semantic"};
	size_t seen[3] = {0, 0, 0};

	for (size_t k = 0; k < SG_ARRAY_SIZE(kinds); k++) {
		_cleanup_free_ char *sub = sg_xasprintf("%s/%s", dir, kinds[k]);
		DIR *d = opendir(sub);
		if (!d) {
			fprintf(stderr, "%s: %s\n", sub, strerror(errno));
			CHECK(d != NULL);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
				continue;
			_cleanup_free_ char *path = sg_xasprintf("%s/%s", sub, e->d_name);
			struct sg_policy p;
			struct sg_err err = {0};
			int r = sg_policy_load_file(path, &p, &err);
			seen[k]++;
			if (k == 0) {
				if (r < 0)
					fprintf(stderr, "%s\n", err.msg);
				CHECK(r == 0);
				sg_policy_free(&p);
				continue;
			}
			if (r == 0) {
				fprintf(stderr, "%s: accepted\n", path);
				sg_policy_free(&p);
			}
			CHECK(r == -EINVAL);
			CHECK(strncmp(err.msg, path, strlen(path)) == 0);
			_cleanup_free_ char *expect_path =
			    sg_xasprintf("%s/%.*s.expect", sub, (int)(n - 5), e->d_name);
			_cleanup_free_ char *expect = first_line(expect_path);
			CHECK(expect != NULL && expect[0] != '\0');
			if (expect && r < 0)
				CHECK_CONTAINS(err.msg, expect);
		}
		closedir(d);
	}
	CHECK(seen[0] >= 8);
	CHECK(seen[1] >= 20);
	CHECK(seen[2] >= 5);
}

RUN_TESTS(T(design_example), T(defaults_and_optional_keys), T(names_dotted_slash_and_patterns),
	  T(values_are_normalised), T(value_normalise), T(access_and_mode_names),
	  T(messages_name_file_line_col_and_path), T(top_level_rejections), T(rule_rejections),
	  T(constraint_rejections), T(limits), T(rule_count_limit),
	  T(rules_made_while_parsing_report_as_from_a_whole_tree),
	  T(warnings_for_rules_that_never_match), T(copy_and_free), T(load_file), T(fixtures))
