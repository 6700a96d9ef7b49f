/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hook confines itself: once its inputs are read and its policy compiled,
 * a seccomp filter lets through only the system calls it still needs to
 * attach a guard; any other fails with EPERM.
 */
#ifndef SG_CONFINE_H
#define SG_CONFINE_H

#include <stdbool.h>

#include "base/err.h"

int sg_confine(struct sg_err *err);

/*
 * The same filter on the calling thread alone, for a thread started before
 * the process confines itself that reads untrusted input (forecast.h).
 */
int sg_confine_thread(struct sg_err *err);

/* Whether this process runs under the filter: loaded here, or by its parent before a fork. */
bool sg_confined(void);

#endif
