// SPDX-License-Identifier: Apache-2.0
/* Names and patterns: the sysctl.d(5) dot/slash rule, validation, precedence, matching. */
#include <stdio.h>
#include <string.h>

#include "bpf/sysctl_guard.h"
#include "policy/name.h"
#include "test.h"

static const char *norm(const char *name)
{
	static char out[SG_NAME_MAX];
	struct sg_err err = {0};

	if (sg_name_normalise(name, out, sizeof(out), &err) < 0) {
		fprintf(stderr, "  sg_name_normalise(\"%s\"): %s\n", name, err.msg);
		return NULL;
	}
	CHECK(!sg_err_is_set(&err));
	return out;
}

/* The error message of a rejected name; NULL when it was accepted. */
static const char *rejected(const char *name)
{
	static struct sg_err err;
	char out[SG_NAME_MAX];

	memset(&err, 0, sizeof(err));
	if (sg_name_normalise(name, out, sizeof(out), &err) == 0)
		return NULL;
	CHECK(sg_err_is_set(&err));
	CHECK(err.status == SG_EXIT_INPUT);
	return err.msg;
}

TEST(dotted_names_become_slash_form)
{
	CHECK_STR(norm("net.ipv4.tcp_rmem"), "net/ipv4/tcp_rmem");
	CHECK_STR(norm("kernel.domainname"), "kernel/domainname");
	CHECK_STR(norm("vm.swappiness"), "vm/swappiness");
	/* A '/' in dotted form stands for a literal dot: the VLAN device eth0.100. */
	CHECK_STR(norm("net.ipv4.conf.eth0/100.rp_filter"), "net/ipv4/conf/eth0.100/rp_filter");
	CHECK_STR(norm("net.ipv4.conf.br0/10/20.forwarding"), "net/ipv4/conf/br0.10.20/forwarding");
	/* No separator: nothing to convert. */
	CHECK_STR(norm("kernel"), "kernel");
}

TEST(slash_names_keep_their_dots)
{
	CHECK_STR(norm("net/ipv4/tcp_rmem"), "net/ipv4/tcp_rmem");
	CHECK_STR(norm("net/ipv4/conf/eth0.100/rp_filter"), "net/ipv4/conf/eth0.100/rp_filter");
	CHECK_STR(norm("net/ipv6/conf/a.b.c/forwarding"), "net/ipv6/conf/a.b.c/forwarding");
}

TEST(patterns_normalise_like_names)
{
	CHECK_STR(norm("kernel.random.*"), "kernel/random/*");
	CHECK_STR(norm("net.**.rp_filter"), "net/**/rp_filter");
	CHECK_STR(norm("net.ipv?.conf.*.forwarding"), "net/ipv?/conf/*/forwarding");
	CHECK_STR(norm("net.ipv4.conf.eth0/*.rp_filter"), "net/ipv4/conf/eth0.*/rp_filter");
	CHECK_STR(norm("**"), "**");
	CHECK_STR(norm("**.x"), "**/x");
	CHECK_STR(norm("net/**"), "net/**");
	CHECK_STR(norm("a*b?c"), "a*b?c");
}

TEST(bad_names_are_rejected_with_a_reason)
{
	CHECK_CONTAINS(rejected(""), "empty name");
	CHECK_CONTAINS(rejected(NULL), "empty name");
	CHECK_CONTAINS(rejected("net..ipv4"), "empty component");
	CHECK_CONTAINS(rejected("net//ipv4"), "empty component");
	CHECK_CONTAINS(rejected(".net.ipv4"), "starts with a separator");
	CHECK_CONTAINS(rejected("/net/ipv4"), "starts with a separator");
	CHECK_CONTAINS(rejected("net.ipv4."), "ends with a separator");
	CHECK_CONTAINS(rejected("net/ipv4/"), "ends with a separator");
	CHECK_CONTAINS(rejected("."), "separator");
	CHECK_CONTAINS(rejected("net.ipv4 .x"), "whitespace");
	CHECK_CONTAINS(rejected("net.ipv4\t.x"), "whitespace or a control character");
	CHECK_CONTAINS(rejected("net.ipv4\n"), "\\n"); /* escaped in the message */
	CHECK_CONTAINS(rejected("net.\x7f"), "control character");
	CHECK_CONTAINS(rejected("net.a**.x"), "** must be a whole component");
	CHECK_CONTAINS(rejected("net.**x"), "mixes **");
	CHECK_CONTAINS(rejected("net.***"), "mixes **");
	CHECK_CONTAINS(rejected("net/../kernel/x"), "component \"..\"");
	CHECK_CONTAINS(rejected("net/./x"), "component \".\"");
	/* "net.//.x" is dotted: "//" becomes the component "..". */
	CHECK_CONTAINS(rejected("net.//.x"), "component \"..\"");
	CHECK_CONTAINS(rejected("/proc/sys/net/ipv4/tcp_rmem"), "relative to /proc/sys");
	CHECK_CONTAINS(rejected("/proc/sys/net/ipv4/tcp_rmem"), "\"net/ipv4/tcp_rmem\"");
}

TEST(length_limit)
{
	char name[SG_NAME_MAX + 8], out[SG_NAME_MAX];
	struct sg_err err = {0};

	memset(name, 'a', sizeof(name));
	name[SG_NAME_MAX - 1] = '\0'; /* 127 characters: fits */
	CHECK(sg_name_normalise(name, out, sizeof(out), &err) == 0);
	CHECK(strlen(out) == SG_NAME_MAX - 1);

	name[SG_NAME_MAX - 1] = 'a';
	name[SG_NAME_MAX] = '\0'; /* 128: does not */
	CHECK_CONTAINS(rejected(name), "at most 127 characters");

	/* A smaller buffer is a smaller limit. */
	char small[8];
	memset(&err, 0, sizeof(err));
	CHECK(sg_name_normalise("kernel.domainname", small, sizeof(small), &err) < 0);
	CHECK_CONTAINS(err.msg, "at most 7 characters");
	memset(&err, 0, sizeof(err));
	CHECK(sg_name_normalise("vm.swap", small, sizeof(small), &err) == 0);
	CHECK_STR(small, "vm/swap");
}

TEST(messages_do_not_repeat_the_position)
{
	const char *msg = rejected("net..x");
	CHECK(msg && strncmp(msg, "\"net..x\"", 8) == 0);
}

TEST(literal_patterns)
{
	CHECK(sg_pattern_is_literal("net/ipv4/tcp_rmem"));
	CHECK(sg_pattern_is_literal("net/ipv4/conf/eth0.100/rp_filter"));
	CHECK(!sg_pattern_is_literal("kernel/random/*"));
	CHECK(!sg_pattern_is_literal("net/ipv?/x"));
	CHECK(!sg_pattern_is_literal("net/**"));
	/* A wildcard at every place of a word and of the tail, and bytes that differ by one bit. */
	char name[41];
	for (size_t len = 1; len < sizeof(name); len++) {
		memset(name, 'a', len);
		name[len] = '\0';
		name[len / 2] = '+'; /* '*' + 1 */
		name[len - 1] = '>'; /* '?' - 1 */
		/* bytes of UTF-8 names, which differ from '*' and '?' by 0x81 */
		name[(len + 1) / 3] = (char)0xab;
		name[(len + 2) / 4] = (char)0xbe;
		CHECK(sg_pattern_is_literal_n(name, len));
		for (size_t at = 0; at < len; at++) {
			char was = name[at];
			name[at] = at % 2 ? '*' : '?';
			CHECK(!sg_pattern_is_literal_n(name, len));
			CHECK(sg_pattern_is_literal_n(name, at)); /* before it: none */
			name[at] = was;
		}
	}

	CHECK(sg_pattern_literal_chars("kernel/random/*") == 14);
	CHECK(sg_pattern_literal_chars("net/**/rp_filter") == 14);
	CHECK(sg_pattern_literal_chars("a?b*") == 2);
	CHECK(sg_pattern_literal_chars("**") == 0);
}

TEST(precedence)
{
	/* Exact beats any pattern, whatever the order. */
	CHECK(sg_pattern_precedence("a/b", 5, "a/*", 0) < 0);
	CHECK(sg_pattern_precedence("a/*", 0, "a/b", 5) > 0);
	/* Among patterns more literal characters win. */
	CHECK(sg_pattern_precedence("net/ipv4/*", 9, "net/*", 0) < 0);
	CHECK(sg_pattern_precedence("net/**", 0, "net/ipv4/conf/*/rp_filter", 1) > 0);
	/* A tie: listed first wins. */
	CHECK(sg_pattern_precedence("a/*", 1, "*/b", 2) < 0);
	CHECK(sg_pattern_precedence("a/*", 3, "*/b", 2) > 0);
	CHECK(sg_pattern_precedence("a/b", 3, "a/b", 2) > 0);
	CHECK(sg_pattern_precedence("a/b", 2, "a/b", 2) == 0);
}

TEST(matching_within_components)
{
	CHECK(sg_pattern_match("kernel/random/*", "kernel/random/uuid"));
	CHECK(sg_pattern_match("kernel/random/*", "kernel/random/"));
	CHECK(!sg_pattern_match("kernel/random/*", "kernel/random"));
	CHECK(!sg_pattern_match("kernel/random/*", "kernel/random/a/b"));
	CHECK(!sg_pattern_match("kernel/*", "kernel/random/uuid"));
	CHECK(sg_pattern_match("net/ipv?/tcp_*mem", "net/ipv4/tcp_rmem"));
	CHECK(!sg_pattern_match("net/ipv?/x", "net/ipv/x"));
	CHECK(!sg_pattern_match("net/ipv?/x", "net/ipv46/x"));
	CHECK(!sg_pattern_match("a?b", "a/b"));
	CHECK(!sg_pattern_match("a*b", "a/b"));
	CHECK(sg_pattern_match("a*b", "ab"));
	CHECK(sg_pattern_match("a*b*c", "axxbyybc"));
	CHECK(
	    sg_pattern_match("net/ipv4/conf/eth0.*/rp_filter", "net/ipv4/conf/eth0.100/rp_filter"));
	CHECK(!sg_pattern_match("net/ipv4/conf/eth0.*/rp_filter", "net/ipv4/conf/eth0/rp_filter"));
	CHECK(sg_pattern_match("net/ipv4/tcp_rmem", "net/ipv4/tcp_rmem"));
	CHECK(!sg_pattern_match("net/ipv4/tcp_rmem", "net/ipv4/tcp_rmem/x"));
	CHECK(!sg_pattern_match("net/ipv4/tcp_rmem", "net/ipv4"));
}

TEST(matching_whole_components)
{
	CHECK(sg_pattern_match("a/**/b", "a/b"));
	CHECK(sg_pattern_match("a/**/b", "a/x/b"));
	CHECK(sg_pattern_match("a/**/b", "a/x/y/b"));
	CHECK(!sg_pattern_match("a/**/b", "a/xb"));
	CHECK(!sg_pattern_match("a/**/b", "ab"));
	CHECK(!sg_pattern_match("a/**/b", "a/b/c"));
	CHECK(sg_pattern_match("a/**", "a"));
	CHECK(sg_pattern_match("a/**", "a/x"));
	CHECK(sg_pattern_match("a/**", "a/x/y"));
	CHECK(!sg_pattern_match("a/**", "ab"));
	CHECK(!sg_pattern_match("a/**", "b/a"));
	CHECK(sg_pattern_match("**/b", "b"));
	CHECK(sg_pattern_match("**/b", "x/y/b"));
	CHECK(!sg_pattern_match("**/b", "xb"));
	CHECK(!sg_pattern_match("**/b", "b/x"));
	CHECK(sg_pattern_match("**", "anything/at/all"));
	CHECK(sg_pattern_match("**", "x"));
	CHECK(sg_pattern_match("net/**/conf/*/rp_filter", "net/ipv4/conf/all/rp_filter"));
	CHECK(sg_pattern_match("net/**/conf/*/rp_filter", "net/conf/eth0/rp_filter"));
	CHECK(!sg_pattern_match("net/**/conf/*/rp_filter", "net/ipv4/conf/rp_filter"));
	CHECK(sg_pattern_match("a/**/**/b", "a/b"));
	CHECK(sg_pattern_match("a/**/**/b", "a/x/y/z/b"));
	CHECK(sg_pattern_match("**/x/**", "a/x"));
	CHECK(sg_pattern_match("**/x/**", "x"));
	CHECK(sg_pattern_match("**/x/**", "a/x/b/c"));
	CHECK(!sg_pattern_match("**/x/**", "a/xb/c"));
}

TEST(dotted_rendering)
{
	char out[SG_NAME_MAX];

	sg_name_to_dotted("net/ipv4/conf/eth0.100/rp_filter", out, sizeof(out));
	CHECK_STR(out, "net.ipv4.conf.eth0/100.rp_filter");
	sg_name_to_dotted("kernel/random/*", out, sizeof(out));
	CHECK_STR(out, "kernel.random.*");
	sg_name_to_dotted("kernel", out, sizeof(out));
	CHECK_STR(out, "kernel");
	/* A dot in the first component has no dotted spelling: slash form stays. */
	sg_name_to_dotted("a.b/c", out, sizeof(out));
	CHECK_STR(out, "a.b/c");
	/* Truncated, always terminated. */
	char small[6];
	sg_name_to_dotted("net/ipv4/tcp_rmem", small, sizeof(small));
	CHECK_STR(small, "net.i");

	/* Dotted rendering normalises back to the same name. */
	const char *names[] = {"net/ipv4/conf/eth0.100/rp_filter", "net/**/x.y", "vm/swappiness",
			       "net/ipv4/conf/br0.1.2/*"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sg_name_to_dotted(names[i], out, sizeof(out));
		CHECK_STR(norm(out), names[i]);
	}
}

RUN_TESTS(T(dotted_names_become_slash_form), T(slash_names_keep_their_dots),
	  T(patterns_normalise_like_names), T(bad_names_are_rejected_with_a_reason),
	  T(length_limit), T(messages_do_not_repeat_the_position), T(literal_patterns),
	  T(precedence), T(matching_within_components), T(matching_whole_components),
	  T(dotted_rendering))
