/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a container's policy is made from, as raw bytes: the node config and
 * the profile it names as baseline, the annotations' profile text or inline
 * policy, the mode annotation, linux.sysctl, and the build of sysctl-guard
 * that compiles them. Their digest, keyed with the node's secret, finds a
 * policy already made from the same inputs (guard.c): a container whose
 * policy is in use skips parsing and compiling it.
 *
 * Every input that shapes the compiled tables or the guard's description
 * must be added; one left out would let a changed input reuse a stale
 * policy. Inputs are named and length-prefixed, so no two lists of inputs
 * hash the same bytes. Pure logic.
 */
#ifndef SG_INPUTS_H
#define SG_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_INPUTS_MAX 12

struct sg_input {
	const char *what;
	const void *data; /* NULL: absent, which differs from empty */
	size_t len;
};

struct sg_inputs {
	size_t n;
	bool uncacheable; /* no build id, or more inputs than fit: never looked up */
	struct sg_input items[SG_INPUTS_MAX];
	uint8_t build_id[64];
	size_t build_id_len;
};

/* Starts a list with the build id of this binary (without one, nothing is cached). */
void sg_inputs_init(struct sg_inputs *in);

/* Adds input @what: @len bytes at @data, borrowed until the digest is taken. */
void sg_inputs_add(struct sg_inputs *in, const char *what, const void *data, size_t len);

/* The same for a string, or an absent input when @text is NULL. */
void sg_inputs_add_str(struct sg_inputs *in, const char *what, const char *text);

/* The digest of the list keyed with @key; false when the list may not be cached. */
bool sg_inputs_digest(const struct sg_inputs *in, const uint64_t key[2], uint64_t *out);

/* The build id of this binary, at most @max bytes: its length, 0 when there is none. */
size_t sg_build_id(uint8_t *out, size_t max);

#endif
