/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy model (schema/policy.schema.json, version 1): parsing and
 * validation. Pure logic: no global state, no kernel.
 */
#ifndef SG_POLICY_H
#define SG_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sysctl_guard.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/json.h" /* struct sg_pos */
#include "base/util.h"

/* The largest policy text, file, annotation or profile (README, Limits): 4 MiB. */
#define SG_MAX_POLICY_BYTES (4u << 20)

/* The most rules of a policy, and of all layers compiled together: the tables stay bounded. */
#define SG_MAX_RULES 65536

struct sg_range {
	int64_t min, max;
};

/* A rule's strings and its values array are in its policy's arena. */
struct sg_rule {
	char *name;		 /* as written in the policy */
	char *pattern;		 /* normalised slash form (name.h), may hold * ** ? */
	char **values;		 /* normalised token lists (sg_value_normalise) */
	struct sg_range *ranges; /* one range for all fields, or one per field */
	char *rewrite;		 /* NULL when none */
	struct sg_pos pos;
	uint32_t n_values;
	uint16_t name_len; /* strlen of name and of pattern (normalising keeps it); 0: unmeasured */
	uint8_t n_ranges;  /* the parser refuses more than SG_FIELDS_MAX, compile too */
	bool is_literal;   /* pattern has no wildcard */
	bool range_per_field;
	bool shadowed;		   /* an earlier rule has its name (sg_policy_find_shadowed) */
	bool allow_host_namespace; /* writes may reach a namespace shared with the host */
	/* Bytes, not enums' ints: a policy holds up to SG_MAX_RULES rules (64 bytes each). */
	enum sg_access access : 8;
	enum sg_on_violation on_violation : 8;
};

struct sg_policy {
	char *origin; /* what to call it in messages: a file, "profile k8s-safe", an annotation */
	enum sg_mode mode;
	enum sg_access default_access;
	struct sg_rule *rules;
	size_t n_rules;
	char **warnings; /* sg_policy_find_shadowed's: "origin:line:col: rules[i]: ..." */
	size_t n_warnings;
	struct sg_arena strings; /* the rules' strings, value lists and ranges (arena.h) */
};

/*
 * Parses and validates @len bytes of JSON. @origin names the input in every
 * message: "policy.json:7:15: rules[2].range: min 5000 is greater than max 4096".
 * Returns 0 and fills @out (free with sg_policy_free), or -EINVAL and @err.
 */
int sg_policy_parse(const char *text, size_t len, const char *origin, struct sg_policy *out,
		    struct sg_err *err);

/*
 * sg_policy_parse of a text the caller gives up: *@text is freed, and set
 * to NULL, as soon as the JSON tree holds what it says, before the rules are
 * made from the tree: a large policy's text and rules are not held together.
 */
int sg_policy_parse_taking(char **text, size_t len, const char *origin, struct sg_policy *out,
			   struct sg_err *err);

/* Reads @path and parses it (a missing or unreadable file is input error, exit 1). */
int sg_policy_load_file(const char *path, struct sg_policy *out, struct sg_err *err);

void sg_policy_free(struct sg_policy *policy);

/*
 * Sets ->warnings to one for each rule that can never match, and marks it
 * shadowed: its name is an earlier rule's. Parsing does not look: `check` shows these warnings,
 * while the hook has no one to show them to, and the search took 0.4 ms of a 10,000-rule policy's
 * hook.
 */
void sg_policy_find_shadowed(struct sg_policy *p);

/* Deep copy (for composition); returns 0 or -ENOMEM. */
int sg_policy_copy(const struct sg_policy *src, struct sg_policy *dst);

/*
 * Normalises a sysctl value as a whitespace-separated token list: "4096\n" and
 * " 4096 " become "4096", "1024\t65535" becomes "1024 65535". A newline
 * before the last token leaves a newline at the end ("a\nb" becomes "a b\n"):
 * the kernel's string handlers store only what precedes a newline, so such a
 * value matches only one written with a newline there too. Writes at most
 * @cap bytes with the NUL; returns the length, or -E2BIG when it does not fit.
 */
int sg_value_normalise(const char *value, size_t len, char *out, size_t cap);

/*
 * A value that normalises to @normalised: itself, or with its marked newline
 * put back before the last token ("a b\n" is "a\nb"). Cut to @cap bytes.
 */
void sg_value_spell(const char *normalised, char *out, size_t cap);

const char *sg_access_name(enum sg_access access);
const char *sg_mode_name(enum sg_mode mode);

#endif
