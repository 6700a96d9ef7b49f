/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DFA of a policy with many patterns, built apart: a child process
 * compiles it (sg_compile_dfa), makes and fills its table (tables.c) and
 * hands the map back as a file descriptor, while the hook compiles the rules
 * and makes the other tables. Of a new 10,000-rule policy, the DFA is 4 ms
 * of compiling and its table 2 MB of the tables' 5.
 *
 * A process, not a thread: side by side in one address space, the two
 * were slower than one after the other, each page fault and unmapping of
 * one interrupting the other's CPU to flush its TLB (costly in a VM).
 *
 * The child only computes and makes one map: it waits on nothing, so the
 * hook's wait for it is bounded by that work (and by a timeout, for a
 * child someone stopped). Should it die, the hook sees its end of the
 * socket close and fails; a hook that dies leaves a child that finishes,
 * finds no one to hand the map to and exits, the map freed with it. The
 * child keeps none of the hook's descriptors, standard ones included: a
 * runtime reads a hook's output until every writer is gone.
 */
#ifndef SG_DFA_JOB_H
#define SG_DFA_JOB_H

#include "compile.h"
#include "err.h"

/* Patterns from which a DFA is built apart: fewer take less than forking costs. */
#define SG_DFA_APART_MIN_PATTERNS 256

/*
 * Compiles @set into @out as sg_compile does, but with at least
 * SG_DFA_APART_MIN_PATTERNS patterns (and a build id: the policy's key names
 * the DFA by its patterns) builds the DFA in a child: then @out has no DFA
 * but out->dfa_job, which sg_tables_get waits for. Free the job with
 * sg_dfa_job_free before @out. A child that cannot be started leaves the
 * DFA to be built here.
 */
int sg_compile_apart(const struct sg_policy_set *set, struct sg_compiled *out, struct sg_err *err);

/* A child that has not answered after this long is killed (a stopped one, say). */
#define SG_DFA_JOB_TIMEOUT_S 20

/*
 * Waits for the child's answer, once; later calls return the same. 0 and
 * the DFA's table (a new descriptor for each call, the caller's) and shape,
 * or -errno: -EINVAL when the DFA could not be compiled (then
 * sg_dfa_job_input_error says why), -EPIPE when the child died without
 * answering, -ETIME when it did not answer in SG_DFA_JOB_TIMEOUT_S
 * (killed), -ECANCELED after sg_dfa_job_cancel, or the kernel's refusal
 * of the table.
 */
int sg_dfa_job_finish(struct sg_dfa_job *job, int *fd, struct sg_dfa_shape *shape);

/* The DFA is not needed after all (its policy was found made): kills the child. NULL is fine. */
void sg_dfa_job_cancel(struct sg_dfa_job *job);

/*
 * Kills the child and changes nothing else, so that another thread waiting
 * in sg_dfa_job_finish returns at once (-EPIPE). Call sg_dfa_job_cancel
 * once no thread waits. NULL is fine.
 */
void sg_dfa_job_stop(struct sg_dfa_job *job);

/*
 * Whether the policy's DFA could not be compiled: then its input error
 * replaces @err. Waits for the answer if it has not come: an input error
 * is what a failure reports first, as when the DFA is built in the
 * process, whatever failed after. NULL is fine (false).
 */
bool sg_dfa_job_input_error(struct sg_dfa_job *job, struct sg_err *err);

/* Kills a child that has not answered, reaps it, closes the table. NULL is fine. */
void sg_dfa_job_free(struct sg_dfa_job *job);

#endif
