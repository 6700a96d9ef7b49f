/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The placer: puts a new policy's tables into the node program's outer
 * maps. The kernel makes an outer-map update visible at once, then waits
 * for an RCU grace period before the syscall returns, so that no program
 * still uses the inner map it replaced. Where that is an expedited grace
 * period (30 to 50 us with 6.18 here) the hook makes the updates itself.
 * Where it is a full one (10 to 25 ms each; earlier kernels), which a fresh
 * slot does not need (it replaced nothing), each update is made by a task
 * of its own, side by side, and the hook returns as soon as it sees the
 * tables in place while the tasks wait the grace periods out. Updates made
 * here are timed: after a slow one, the rest go to tasks, and the probe
 * cache (probe.h) keeps that for a minute, or longer where it is found slow
 * again, when placers measure again (how long the kernel waits depends on
 * the moment's load, too).
 *
 * A task is a process that shares the hook's memory (clone with CLONE_VM):
 * starting it copies no page table and leaves no page to copy on the next
 * write, where a forked placer with a thread per update cost a new
 * 100-rule policy's hook 3.6 ms of its 12. It runs on a stack of its own,
 * makes raw system calls only (it shares the hook's thread pointer, so
 * libc, errno included, is the hook's), holds the two maps of its update
 * and no other descriptor (runtimes read a hook's output until every
 * writer is gone, and the pins lock is the hook's), and dies with the hook.
 * Where such tasks cannot be made (valgrind, an architecture without the
 * raw calls in placer.c, a fault test) the updates are made here, waits
 * included.
 */
#ifndef SG_PLACER_H
#define SG_PLACER_H

#include <stddef.h>
#include <stdint.h>

#define SG_PLACER_MAX	    16 /* updates one placer makes */
#define SG_PLACER_TIMEOUT_S 20 /* sg_placer_wait gives up on updates not placed by then */

struct sg_placer_task;

struct sg_placer {
	uint32_t slot;
	size_t n;
	int outer_fds[SG_PLACER_MAX];		     /* the caller's, for sg_placer_wait */
	struct sg_placer_task *tasks[SG_PLACER_MAX]; /* NULL: the update was made here */
};

/* A placer with nothing to place. */
void sg_placer_init(struct sg_placer *pl);

/*
 * Starts putting inner_fds[i] at @slot of outer_fds[i], for i < @n: here
 * where the kernel's wait after each is short, else each by a task of its
 * own, or here, waits included, where none can be started (above). 0 or
 * -errno (of an update made here). The fds stay the caller's, open until
 * sg_placer_wait.
 */
int sg_placer_send(struct sg_placer *pl, const int *outer_fds, const int *inner_fds, size_t n,
		   uint32_t slot);

/*
 * Returns once every update is visible (0), or a task failed (-errno).
 * Updates not placed after SG_PLACER_TIMEOUT_S have their tasks killed and
 * reaped first (-ETIMEDOUT): then they will place nothing, and the slot may
 * be released. Tasks left running need no stopping: each exits once its
 * grace period ends, and whoever adopts it reaps it.
 */
int sg_placer_wait(struct sg_placer *pl);

#endif
