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

/*
 * Deletes the record of cgroup @cgid from the seen map of program
 * @program_key, as its guard goes: a guard attached to the cgroup later
 * starts with none, and the node's 65,536 entries are not used up by
 * cgroups long gone.
 */
void sg_learn_forget(const char *program_key, uint64_t cgid);

/* Deletes the records of cgroups that no guard of the node names (gc). */
void sg_learn_forget_orphans(void);

#endif
