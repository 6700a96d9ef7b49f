/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Learning: a guard that records (audit mode, or io.sysctl-guard.learn=true)
 * keeps every name read and written and the values written in its seen map;
 * this turns that record into a policy that allows exactly that.
 */
#ifndef SG_LEARN_H
#define SG_LEARN_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

#define SG_LEARNED_DIR "/var/lib/sysctl-guard/learned"

/*
 * Writes the policy learned by the guard pinned at SG_PIN_ROOT/@entry to
 * @out; its description says it was learned from @source ("container ID").
 */
int sg_learn_write_policy(const char *entry, const char *source, FILE *out, struct sg_err *err);

/* Writes it to SG_LEARNED_DIR/<container id>.json (poststop). */
int sg_learn_save(const char *entry, const char *container_id, struct sg_err *err);

#endif
