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

#endif
