/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sysctl names and the patterns rules use. Pure logic.
 *
 * Forms (sysctl.d(5)): "net.ipv4.tcp_rmem" (dotted) and "net/ipv4/tcp_rmem"
 * (slash, as the kernel reports it). If the first separator is '/', dots are
 * literal; in dotted form a '/' stands for a literal dot, so the VLAN device
 * "eth0.100" is written "net.ipv4.conf.eth0/100.rp_filter".
 *
 * Patterns: '*' matches within one component, '?' one character other than
 * '/', and "**" as a whole component matches zero or more components.
 */
#ifndef SG_NAME_H
#define SG_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/*
 * Converts a rule name or a sysctl name to slash form in @out (@cap bytes,
 * at most SG_NAME_MAX). Rejects empty names and components, whitespace and
 * control characters, "**" mixed with other characters in a component, and
 * names that do not fit: -EINVAL with a message that does not repeat the
 * position (callers add "file:line:col: rules[i].name: ").
 */
int sg_name_normalise(const char *name, char *out, size_t cap, struct sg_err *err);

/* The same, for a @name whose length the caller knows: @len is strlen(name). */
int sg_name_normalise_n(const char *name, size_t len, char *out, size_t cap, struct sg_err *err);

/* True when the slash-form @pattern has no wildcard. */
bool sg_pattern_is_literal(const char *pattern);
/* The same of the @len bytes at @pattern (its strlen): a word at a time. */
bool sg_pattern_is_literal_n(const char *pattern, size_t len);

/* Characters of @pattern that are not wildcards, for precedence. */
size_t sg_pattern_literal_chars(const char *pattern);

/*
 * Rule precedence: an exact name beats any pattern; among patterns, more
 * literal characters win; on a tie the rule listed first wins. Returns < 0
 * when rule a (listed at index ia) wins over rule b (index ib).
 */
int sg_pattern_precedence(const char *a, size_t ia, const char *b, size_t ib);

/* The reference matcher: straightforward recursion, used to test the compiler. */
bool sg_pattern_match(const char *pattern, const char *name);

/* Dotted form of a slash-form name, for messages: "net/ipv4/conf/eth0.100/x" ->
 * "net.ipv4.conf.eth0/100.x". */
void sg_name_to_dotted(const char *slash, char *out, size_t cap);

#endif
