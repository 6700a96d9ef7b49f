/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Threads for work that must start now: the compile's DFA, and the helper
 * that makes a large policy's maps. Kernel-touching (scheduler affinity).
 */
#ifndef SG_THREAD_H
#define SG_THREAD_H

#include <pthread.h>

/*
 * pthread_create, with the new thread running at once on another CPU the
 * process may use, when there is one. Returns 0 or an errno.
 */
int sg_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
