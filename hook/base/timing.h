/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the time of one run goes, for whoever runs it with
 * SYSCTL_GUARD_TIMING=1 (an operator, test/bench): the hook and `attach`
 * mark the end of each phase, and the process prints the phases, in the
 * order they ended, to stderr as it exits:
 *
 *   sysctl-guard: timing: parse 6.10 compile 8.02 setup 0.31 tables 2.31 attach 0.22 exit 0.40 ms
 *
 * A phase lasts from the mark before it (or the start) to its own. Without
 * the variable a mark is a branch.
 */
#ifndef SG_TIMING_H
#define SG_TIMING_H

/* Reads SYSCTL_GUARD_TIMING and starts the clock; the report comes at exit. */
void sg_timing_start(void);

/* The phase @name (a string literal) ends now. */
void sg_timing_mark(const char *name);

#endif
