// SPDX-License-Identifier: Apache-2.0
/*
 * A new thread is queued on its creator's CPU, and while the creator runs it
 * waits there until the scheduler balances the queues: 3.9 ms here, a whole
 * tick, with the other CPU idle (a thread that records when it starts,
 * created by a busy one; 0.07 to 0.15 ms when it was moved). The hook's
 * helpers waited so long that two threads were hardly faster than one. So
 * the creator moves the new thread, as it is created, to the CPUs it may use
 * but its own, and the thread then sets itself free again: afterwards the
 * scheduler places it as any other.
 */
#include "base/thread.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/util.h"

struct start {
	void *(*fn)(void *);
	void *arg;
	cpu_set_t allowed; /* the process's CPUs */
	bool move;
	atomic_bool moved; /* the creator has moved it (or given up) */
};

static void *run(void *arg)
{
	struct start *s = arg;
	void *(*fn)(void *) = s->fn;
	void *fn_arg = s->arg;

	if (s->move) {
		/* Freed only after the move, which would pin it for good if it came later. */
		while (!atomic_load(&s->moved))
			sched_yield(); /* on the creator's CPU: let it finish */
		sched_setaffinity(0, sizeof(s->allowed), &s->allowed);
	}
	free(s);
	return fn(fn_arg);
}

int sg_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	struct start *s = sg_xmalloc(sizeof(*s));
	cpu_set_t elsewhere;

	*s = (struct start){.fn = fn, .arg = arg};
	int cpu = sched_getcpu();
	if (cpu >= 0 && sched_getaffinity(0, sizeof(s->allowed), &s->allowed) == 0) {
		elsewhere = s->allowed;
		CPU_CLR(cpu, &elsewhere);
		s->move = CPU_COUNT(&elsewhere) > 0;
	}
	bool move = s->move; /* @s is the thread's once it runs */
	int r = pthread_create(thread, NULL, run, s);
	if (r) {
		free(s);
		return r;
	}
	if (move) {
		/* best effort: where it fails, the thread runs where it was queued */
		pthread_setaffinity_np(*thread, sizeof(elsewhere), &elsewhere);
		atomic_store(&s->moved, true);
	}
	return 0;
}
