/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The userspace evaluator: decides an access over the compiled tables exactly
 * as bpf/sysctl_guard.bpf.c does. Used by `explain`, `learn` and tests that
 * compare it with the kernel.
 */
#ifndef SG_EVAL_H
#define SG_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "compile/compile.h"

struct sg_access_req {
	const char *name; /* slash form */
	bool write;
	const char *value; /* written bytes (not NUL terminated), for writes */
	size_t value_len;
	uint64_t file_pos;
	uint32_t host_namespaces; /* enum sg_namespace: those the writer shares with the host */
};

struct sg_decision {
	enum sg_verdict verdict;
	uint32_t rule;	/* the deciding rule, SG_NO_RULE for a layer default or an early decision */
	int layer;	/* deciding layer, -1 when none */
	bool rewritten; /* new_value holds the value the kernel will see */
	char new_value[SG_VALUE_MAX];
	size_t new_len;	    /* of new_value, padding included: what write() returns */
	const char *reason; /* "not in values", "field 2 above max 65535", ... */
};

/* The keyed hash the kernel's values table is indexed by (bpf/sysctl_guard_decide.h). */
uint64_t sg_value_hash(const __u64 key[2], const char *normalised);

/* What an enum sg_reason means, for people. */
const char *sg_reason_text(unsigned reason);

/* Whether it is a write's denial for reaching a namespace shared with the host. */
bool sg_reason_is_host_namespace(unsigned reason);

void sg_eval(const struct sg_compiled *c, const struct sg_access_req *req, struct sg_decision *out);

/*
 * The namespace (enum sg_namespace) that keeps the sysctl named @slash_name,
 * as the program finds it, or 0 for one the kernel keeps once.
 */
uint32_t sg_namespace_of(const char *slash_name);

/* "net", "uts", "ipc", "user" or "pid" for one enum sg_namespace bit. */
const char *sg_namespace_name(uint32_t ns);

/* "net,uts" (those names), "all" or "none" as enum sg_namespace bits; -EINVAL for others. */
int sg_namespace_parse_list(const char *text, uint32_t *ns);

/*
 * The integer at the start of @text (its first SG_VALUE_MAX - 1 bytes), read
 * as the program reads each field of a value a range rule checks. Returns
 * the bytes taken, or -EINVAL (no digit) or -ERANGE (beyond 64 bits).
 */
long sg_eval_scan_long(const char *text, long long *value);

/*
 * The program's fast path for a value that is one plain decimal field
 * ("4096", "4096\n"): its digits, with the value, or 0 when the value needs
 * the general scan.
 */
unsigned sg_eval_scan_plain_decimal(const char *text, long long *value);

#endif
