// SPDX-License-Identifier: Apache-2.0
/*
 * The inputs digest (hook/policy/inputs.h): any change to any input, its presence,
 * its name or the order of the inputs changes the digest; so does the key.
 */
#include <string.h>

#include "policy/inputs.h"
#include "test.h"

static const uint64_t key[2] = {1, 2};

/* The digest under @under of one input named @what. */
static uint64_t digest_one(const char *what, const char *text, const uint64_t under[2])
{
	struct sg_inputs in;
	uint64_t d = 0;

	sg_inputs_init(&in);
	sg_inputs_add_str(&in, what, text);
	CHECK(sg_inputs_digest(&in, under, &d));
	return d;
}

static uint64_t digest_of(const char *a, const char *b)
{
	struct sg_inputs in;
	uint64_t d = 0;

	sg_inputs_init(&in);
	sg_inputs_add_str(&in, "a", a);
	sg_inputs_add_str(&in, "b", b);
	CHECK(sg_inputs_digest(&in, key, &d));
	return d;
}

TEST(this_binary_has_a_build_id)
{
	uint8_t id[64];
	CHECK(sg_build_id(id, sizeof(id)) >= 16);
}

TEST(same_inputs_same_digest)
{
	CHECK(digest_of("x", "y") == digest_of("x", "y"));
}

TEST(every_change_changes_the_digest)
{
	uint64_t d = digest_of("x", "y");
	CHECK(digest_of("x", "z") != d);
	CHECK(digest_of("y", "x") != d);
	/* Moving bytes across the boundary of two inputs. */
	CHECK(digest_of("xy", "") != digest_of("x", "y"));
	/* Absent and empty differ. */
	CHECK(digest_of("x", NULL) != digest_of("x", ""));
	CHECK(digest_of(NULL, NULL) != digest_of("", ""));
}

TEST(names_are_part_of_the_digest)
{
	CHECK(digest_one("profile", "x", key) != digest_one("mode", "x", key));
}

TEST(another_key_another_digest)
{
	const uint64_t other[2] = {1, 3};
	CHECK(digest_one("a", "x", key) != digest_one("a", "x", other));
}

TEST(too_many_inputs_are_never_cached)
{
	struct sg_inputs in;
	uint64_t d = 0;

	sg_inputs_init(&in);
	for (int i = 0; i < SG_INPUTS_MAX; i++)
		sg_inputs_add_str(&in, "a", "x");
	CHECK(!sg_inputs_digest(&in, key, &d));
}

RUN_TESTS(T(this_binary_has_a_build_id), T(same_inputs_same_digest),
	  T(every_change_changes_the_digest), T(names_are_part_of_the_digest),
	  T(another_key_another_digest), T(too_many_inputs_are_never_cached))
