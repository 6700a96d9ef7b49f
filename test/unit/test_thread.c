// SPDX-License-Identifier: Apache-2.0
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/thread.h"
#include "test.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

struct seen {
	atomic_int cpu; /* where the thread first ran, -1 before */
	cpu_set_t allowed;
	bool affinity_read;
};

static void *record(void *arg)
{
	struct seen *s = arg;
	s->affinity_read = sched_getaffinity(0, sizeof(s->allowed), &s->allowed) == 0;
	atomic_store(&s->cpu, sched_getcpu());
	return arg;
}

TEST(runs_the_function_and_returns_what_it_returns)
{
	struct seen s = {.cpu = -1};
	pthread_t t;
	void *ret = NULL;

	CHECK(sg_thread_start(&t, record, &s) == 0);
	CHECK(pthread_join(t, &ret) == 0);
	CHECK(ret == &s);
	CHECK(atomic_load(&s.cpu) >= 0);
}

/* Moved only to start elsewhere: then the thread may use every CPU the process may. */
TEST(the_thread_may_use_every_cpu_of_the_process)
{
	cpu_set_t process;
	struct seen s = {.cpu = -1};
	pthread_t t;

	CHECK(sched_getaffinity(0, sizeof(process), &process) == 0);
	CHECK(sg_thread_start(&t, record, &s) == 0);
	pthread_join(t, NULL);
	CHECK(s.affinity_read);
	CHECK(CPU_EQUAL(&s.allowed, &process));
}

/*
 * The point of it: with its creator busy, a new thread starts on another
 * CPU (a plain pthread_create queues it behind its creator, on the same
 * one). Most of five tries: a creator can be preempted between creating the
 * thread and moving it. The creator stays on its CPU while it waits (the
 * scheduler has no reason to move a running task to a busy CPU).
 */
TEST(a_busy_creator_s_thread_runs_on_another_cpu)
{
	cpu_set_t process;
	int elsewhere = 0;

	CHECK(sched_getaffinity(0, sizeof(process), &process) == 0);
	for (int i = 0; i < 5; i++) {
		struct seen s = {.cpu = -1};
		pthread_t t;
		int mine = sched_getcpu();
		CHECK(sg_thread_start(&t, record, &s) == 0);
		while (atomic_load(&s.cpu) < 0) /* busy, as the hook is */
			;
		elsewhere += atomic_load(&s.cpu) != mine && sched_getcpu() == mine;
		pthread_join(t, NULL);
	}
	if (RUNNING_ON_VALGRIND) { /* it runs one thread at a time: no CPU is another's */
		printf("note: under valgrind, where the thread ran is not asked\n");
		return;
	}
	/* with one CPU, there is nowhere else: the thread runs, behind its creator */
	CHECK(CPU_COUNT(&process) < 2 ? elsewhere == 0 : elsewhere >= 3);
}

RUN_TESTS(T(runs_the_function_and_returns_what_it_returns),
	  T(the_thread_may_use_every_cpu_of_the_process),
	  T(a_busy_creator_s_thread_runs_on_another_cpu))
