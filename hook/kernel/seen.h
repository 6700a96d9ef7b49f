/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seen map of the node's program: what guards that record (audit mode,
 * or io.sysctl-guard.learn=true) saw their cgroups read and write, by
 * guarded cgroup (struct sg_seen_key), for `learn`. A record goes with its
 * guard.
 */
#ifndef SG_SEEN_H
#define SG_SEEN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Deletes the record of cgroup @cgid from the seen map of program
 * @program_key, as its guard goes: a guard attached to the cgroup later
 * starts with none, and the node's 65,536 entries are not used up by
 * cgroups long gone.
 */
void sg_seen_forget(const char *program_key, uint64_t cgid);

/* Deletes the records of the cgroups @drop names from the seen maps of every program. */
void sg_seen_forget_where(bool (*drop)(uint64_t cgid, void *arg), void *arg);

#endif
