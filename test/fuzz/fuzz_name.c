// SPDX-License-Identifier: Apache-2.0
/*
 * Names and patterns (hook/policy/name.h). The input is "NAME\nPATTERN": both are
 * normalised, then matched against each other and against a few real sysctl
 * names. Asserts the properties the compiler and the CLI rely on: a
 * normalised name fits SG_NAME_MAX, survives the round trip through the
 * dotted form, and every pattern matches itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/sysctl_guard.h"
#include "base/util.h"
#include "policy/name.h"
#include "reference.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixed_names[] = {
    "kernel/domainname",
    "kernel/random/uuid",
    "net/ipv4/tcp_rmem",
    "net/ipv4/conf/eth0.100/rp_filter",
    "net/core/somaxconn",
    "vm/swappiness",
    "a",
};

static void fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_name: %s: \"%s\" \"%s\"\n", what, a, b ? b : "");
	abort();
}

/* What a normalised name must satisfy; @norm came from sg_name_normalise. */
static void check_normalised(const char *norm)
{
	char dotted[SG_NAME_MAX], again[SG_NAME_MAX];
	struct sg_err err = {0};
	size_t len = strlen(norm);

	if (len == 0 || len >= SG_NAME_MAX)
		fail("normalised name is empty or too long", norm, NULL);
	if (reference_is_fast(norm) && !sg_pattern_match(norm, norm))
		fail("pattern does not match itself", norm, NULL);
	if (sg_pattern_is_literal(norm) != (strpbrk(norm, "*?") == NULL))
		fail("sg_pattern_is_literal", norm, NULL);
	if (sg_pattern_literal_chars(norm) > len)
		fail("more literal characters than characters", norm, NULL);
	if (sg_pattern_precedence(norm, 0, norm, 0) != 0 ||
	    sg_pattern_precedence(norm, 0, norm, 1) >= 0)
		fail("precedence of a rule against itself", norm, NULL);

	sg_name_to_dotted(norm, dotted, sizeof(dotted));
	/* A dot in the first component cannot be written dotted (sysctl.d(5)). */
	if (!memchr(norm, '.', strcspn(norm, "/"))) {
		if (sg_name_normalise(dotted, again, sizeof(again), &err) < 0)
			fail("dotted form does not normalise", norm, err.msg);
		if (strcmp(again, norm) != 0)
			fail("dotted round trip changes the name", norm, again);
	}
	/* Short buffers truncate, never overflow. */
	for (size_t cap = 0; cap < 4; cap++) {
		char small[4];
		memset(small, 'X', sizeof(small));
		sg_name_to_dotted(norm, small, cap);
		if (cap && !memchr(small, '\0', cap))
			fail("sg_name_to_dotted does not terminate a short buffer", norm, NULL);
	}
	for (size_t cap = 1; cap < 4; cap++) {
		char small[4];
		struct sg_err small_err = {0};
		if (sg_name_normalise(norm, small, cap, &small_err) == 0 && strlen(norm) >= cap)
			fail("sg_name_normalise accepted a name longer than its buffer", norm,
			     NULL);
	}
}

/* sg_name_normalise took or refused @name, giving @norm, as the step-by-step reference does. */
static void check_against_reference(const char *name, bool ok, const char *norm)
{
	char ref[SG_NAME_MAX];
	bool ref_ok = reference_normalise(name, ref, sizeof(ref), SG_NAME_MAX);

	if (ok != ref_ok)
		fail(ok ? "accepted what the reference refuses"
			: "refused what the reference takes",
		     name, NULL);
	if (ok && strcmp(norm, ref) != 0)
		fail("slash form differs from the reference's", norm, ref);
	if (!ok && norm[0])
		fail("refused, but left a slash form", name, norm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nl = memchr(text, '\n', size);
	size_t name_len = nl ? (size_t)(nl - text) : size;
	_cleanup_free_ char *name = sg_xstrndup(text, name_len);
	_cleanup_free_ char *pattern =
	    nl ? sg_xstrndup(nl + 1, size - name_len - 1) : sg_xstrdup(name);
	char norm_name[SG_NAME_MAX], norm_pattern[SG_NAME_MAX];
	struct sg_err err = {0};
	bool name_ok, pattern_ok;

	name_ok = sg_name_normalise(name, norm_name, sizeof(norm_name), &err) == 0;
	if (!name_ok && !err.msg[0])
		fail("rejected without a message", name, NULL);
	check_against_reference(name, name_ok, norm_name);
	memset(&err, 0, sizeof(err));
	pattern_ok = sg_name_normalise(pattern, norm_pattern, sizeof(norm_pattern), &err) == 0;
	if (!pattern_ok && !err.msg[0])
		fail("rejected without a message", pattern, NULL);
	check_against_reference(pattern, pattern_ok, norm_pattern);

	if (name_ok)
		check_normalised(norm_name);
	if (pattern_ok)
		check_normalised(norm_pattern);
	name_ok = name_ok && reference_is_fast(norm_name);
	pattern_ok = pattern_ok && reference_is_fast(norm_pattern);
	if (name_ok && pattern_ok) {
		bool m = sg_pattern_match(norm_pattern, norm_name);
		/* A literal pattern matches exactly itself. */
		if (sg_pattern_is_literal(norm_pattern) &&
		    m != (strcmp(norm_pattern, norm_name) == 0))
			fail("literal pattern matches another name", norm_pattern, norm_name);
		int ab = sg_pattern_precedence(norm_pattern, 0, norm_name, 1);
		int ba = sg_pattern_precedence(norm_name, 1, norm_pattern, 0);
		if ((ab < 0) == (ba < 0))
			fail("precedence is not antisymmetric", norm_pattern, norm_name);
	}
	for (size_t i = 0; i < SG_ARRAY_SIZE(fixed_names); i++) {
		if (pattern_ok)
			(void)sg_pattern_match(norm_pattern, fixed_names[i]);
		if (name_ok)
			(void)sg_pattern_match(norm_name, fixed_names[i]);
	}
	return 0;
}
