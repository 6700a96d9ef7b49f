/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The placer: a child process that puts a new policy's tables into the
 * node program's outer maps. The kernel makes an outer-map update visible
 * at once, then waits for an RCU grace period before the syscall returns,
 * so that no program still uses the inner map it replaced (10 to 25 ms each
 * on these machines). A fresh slot replaced nothing, so nobody needs that
 * wait: the placer makes the updates side by side, one thread each, and
 * waits them out detached, while the hook returns as soon as it sees the
 * tables in place.
 *
 * It is forked before the policy is parsed, while the hook is small, and
 * starts its threads then: forked once the tables were made, it cost a copy
 * of the page tables of a hook holding a large policy, and its threads
 * started one after another while the hook waited. It waits on a socket for
 * the maps, which come as file descriptors.
 */
#ifndef SG_PLACER_H
#define SG_PLACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SG_PLACER_MAX	    16 /* updates one placer makes */
#define SG_PLACER_TIMEOUT_S 20 /* sg_placer_wait gives up on a placer that has not placed */

struct sg_placer {
	bool started; /* sg_placer_start ran */
	pid_t pid;    /* the child, or -1: then sg_placer_send makes the updates here */
	int sock;     /* to the child, or -1 */
	uint32_t slot;
	size_t n;
	int outer_fds[SG_PLACER_MAX]; /* the caller's, for sg_placer_wait */
};

/* A placer not started yet: sg_placer_send starts it, if nothing did before. */
void sg_placer_init(struct sg_placer *pl);

/*
 * Forks the placer, for @n updates: it starts a thread for each but one
 * now. Without a placer (no fork, no socket) the updates are made in this
 * process.
 */
void sg_placer_start(struct sg_placer *pl, size_t n);

/*
 * Starts putting inner_fds[i] at @slot of outer_fds[i], for i < @n: hands
 * them to the placer, or makes the updates here, waits included, when there
 * is none. 0 or -errno. The fds stay the caller's, open until sg_placer_wait.
 */
int sg_placer_send(struct sg_placer *pl, const int *outer_fds, const int *inner_fds, size_t n,
		   uint32_t slot);

/*
 * Returns once every update is visible (0), or the placer failed (-errno).
 * A placer that has not placed after SG_PLACER_TIMEOUT_S is killed and
 * reaped first (-ETIMEDOUT): then it will place nothing, and the slot may
 * be released.
 */
int sg_placer_wait(struct sg_placer *pl);

/*
 * Lets the placer go, unwaited for: one given nothing exits when its socket
 * closes, once its threads have started, and whoever adopts it reaps it.
 */
void sg_placer_stop(struct sg_placer *pl);

#endif
