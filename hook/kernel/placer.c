// SPDX-License-Identifier: Apache-2.0
/* The placer (placer.h): outer-map updates made by tasks that share the hook's memory. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clone */
#endif
#include "kernel/placer.h"

#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/log.h"
#include "base/util.h"
#include "kernel/fault.h"
#include "kernel/probe.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
/* It cannot run a task that shares memory without being a thread. */
#define UNDER_VALGRIND() RUNNING_ON_VALGRIND
#else
#define UNDER_VALGRIND() 0
#endif

/*
 * A system call that touches no memory of libc's: a task shares the hook's
 * thread pointer, so errno and the rest of libc's thread state are the
 * hook's, in use while the task runs. Returns the result or -errno.
 */
#if defined(__x86_64__)
#define HAVE_RAW_CALLS 1
static inline long raw_call(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define HAVE_RAW_CALLS 1
static inline long raw_call(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory", "cc");
	return x0;
}
#else
#define HAVE_RAW_CALLS 0
#endif

/* Its stack is its own: an update needs a few hundred bytes of it. */
#define TASK_STACK (16 << 10)
/*
 * Tasks alive at once in one process: preload places policy after policy,
 * and a task lives a grace period after its update shows. Beyond them, the
 * updates are made here.
 */
#define POOL 32

struct sg_placer_task {
	/*
	 * Nonzero while the task lives: the kernel writes its pid there before
	 * clone returns (CLONE_PARENT_SETTID) and clears it once the task is
	 * gone (CLONE_CHILD_CLEARTID), stack and all, whether it returned or
	 * was killed. A free entry of the pool is 0.
	 */
	pid_t live;
	pid_t pid; /* the task, until reaped here; 0 after */
	pid_t parent;
	int outer_fd, inner_fd;
	uint32_t slot;
	int error; /* the task's: 0 or the errno of its update */
	bool stall;
	_Alignas(16) char stack[TASK_STACK];
};

static struct sg_placer_task pool[POOL];

/* The part of union bpf_attr that BPF_MAP_UPDATE_ELEM reads; the kernel zeroes the rest. */
struct update_attr {
	uint32_t map_fd;
	uint32_t pad;
	uint64_t key, value, flags;
};

#if HAVE_RAW_CALLS
/* Closes every descriptor but @a and @b (@a < @b) with raw calls. */
__attribute__((no_sanitize("address"))) static void keep_only(unsigned a, unsigned b)
{
	if (a > 0)
		raw_call(__NR_close_range, 0, a - 1, 0);
	if (b > a + 1)
		raw_call(__NR_close_range, a + 1, b - 1, 0);
	raw_call(__NR_close_range, b + 1, ~0u, 0);
}

/* What a task runs, on its own stack, with raw calls only (placer.h says why). */
__attribute__((no_sanitize("address"))) static int task_main(void *arg)
{
	struct sg_placer_task *t = arg;

	/*
	 * A hook killed (say by its runtime's timeout) takes its tasks along:
	 * placing later, after gc found the hook gone and freed its slot, a
	 * task would fill a slot that another policy may hold. Dying after the
	 * hook is harmless: the hook exits only once the updates are in, and
	 * the grace periods left end either way. A confined hook's filter lets
	 * this one prctl through (confine.c).
	 */
	if (raw_call(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0) < 0 ||
	    raw_call(__NR_getppid, 0, 0, 0) != t->parent)
		return 0;
	if (t->outer_fd < t->inner_fd)
		keep_only((unsigned)t->outer_fd, (unsigned)t->inner_fd);
	else
		keep_only((unsigned)t->inner_fd, (unsigned)t->outer_fd);
	/* placer_stall: updates descheduled for longer than the hook waits (placer_timeout) */
	if (t->stall) {
		struct timespec second = {1, 0};
		raw_call(__NR_nanosleep, (long)&second, 0, 0);
	}
	uint32_t inner = (uint32_t)t->inner_fd;
	struct update_attr attr;
	attr.map_fd = (uint32_t)t->outer_fd;
	attr.pad = 0;
	attr.key = (uint64_t)(uintptr_t)&t->slot;
	attr.value = (uint64_t)(uintptr_t)&inner;
	attr.flags = BPF_ANY;
	long r = raw_call(__NR_bpf, BPF_MAP_UPDATE_ELEM, (long)&attr, sizeof(attr));
	t->error = r < 0 ? (int)-r : 0;
	return 0;
}
#endif

/* A free entry of the pool, or NULL. Called by one thread of the process at a time. */
static struct sg_placer_task *free_task(void)
{
	for (size_t i = 0; i < POOL; i++)
		if (__atomic_load_n(&pool[i].live, __ATOMIC_ACQUIRE) == 0)
			return &pool[i];
	return NULL;
}

/* The update started by a task sharing this memory, or NULL when none could be started. */
static struct sg_placer_task *start_task(int outer_fd, int inner_fd, uint32_t slot)
{
#if HAVE_RAW_CALLS
	struct sg_placer_task *t = free_task();
	if (!t)
		return NULL;
	t->parent = getpid();
	t->outer_fd = outer_fd;
	t->inner_fd = inner_fd;
	t->slot = slot;
	t->error = 0;
	t->stall = sg_injected_fault("placer_stall");
	int pid = clone(task_main, t->stack + TASK_STACK,
			CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, t,
			&t->live, NULL, &t->live);
	if (pid < 0)
		return NULL;
	t->pid = pid;
	return t;
#else
	(void)outer_fd, (void)inner_fd, (void)slot;
	return NULL;
#endif
}

/* One update made here: it returns after the grace period. 0 or -errno. */
static int update_here(int outer_fd, int inner_fd, uint32_t slot)
{
	uint32_t inner = (uint32_t)inner_fd;
	return bpf_map_update_elem(outer_fd, &slot, &inner, BPF_ANY) < 0 ? -errno : 0;
}

/*
 * An update that took longer than this was slow: it waited for a full
 * grace period (10 to 25 ms), or for an expedited one that a busy CPU held
 * up; a quick expedited one takes 5 to 150 us here.
 */
#define SLOW_UPDATE_S 1e-3

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return sg_seconds_between(start, &now);
}

/* update_here, timed: *@slow says whether it took SLOW_UPDATE_S or longer. */
static int update_here_timed(int outer_fd, int inner_fd, uint32_t slot, bool *slow)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	int r = update_here(outer_fd, inner_fd, slot);
	/*
	 * outer_slow and outer_quick: a fault test's updates, each counted as
	 * slow as a full grace period, or as quick as an expedited one (a
	 * kernel without rcu_expedited waits the full one every time)
	 */
	const bool counted_slow = sg_injected_fault("outer_slow");
	if (counted_slow || sg_injected_fault("outer_quick"))
		*slow = counted_slow;
	else
		*slow = seconds_since(&start) >= SLOW_UPDATE_S;
	return r;
}

/* How a placer makes its updates. */
struct placing {
	bool tasks;	/* by tasks (where one can be started), else here */
	bool measuring; /* here, each timed, until one is slow: then by tasks */
};

/*
 * By tasks where updates were slow lately (the probe cache's record, which
 * expires), else here, measuring. Fault tests, and hosts where tasks cannot
 * run, have it one way and measure nothing: placer, a hook without tasks;
 * placer_tasks and placer_stall, tasks whatever was measured.
 */
static struct placing how_to_place(void)
{
	if (sg_injected_fault("placer") || UNDER_VALGRIND() || !HAVE_RAW_CALLS)
		return (struct placing){.tasks = false, .measuring = false};
	if (sg_injected_fault("placer_tasks") || sg_injected_fault("placer_stall"))
		return (struct placing){.tasks = true, .measuring = false};
	bool slow = sg_probe_outer_updates_slow();
	return (struct placing){.tasks = slow, .measuring = !slow};
}

/*
 * Our own child, not reaped yet (main() leaves SIGCHLD at its default, so
 * the kernel does not reap it for us): its pid is still its own.
 */
static void reap(struct sg_placer_task *t)
{
	while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
		;
	t->pid = 0;
}

/*
 * Killed and reaped before the caller releases the slot: a task that ran
 * later would put this policy's table into a slot another policy may have
 * claimed by then.
 */
static void kill_tasks(struct sg_placer *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		struct sg_placer_task *t = pl->tasks[i];
		if (!t || !t->pid)
			continue;
		kill(t->pid, SIGKILL);
		reap(t);
		pl->tasks[i] = NULL;
	}
}

void sg_placer_init(struct sg_placer *pl)
{
	memset(pl, 0, sizeof(*pl));
}

int sg_placer_send(struct sg_placer *pl, const int *outer_fds, const int *inner_fds, size_t n,
		   uint32_t slot)
{
	if (n == 0 || n > SG_PLACER_MAX)
		return -EINVAL;
	struct placing how = how_to_place();
	bool measured = how.measuring;

	pl->slot = slot;
	pl->n = n;
	memcpy(pl->outer_fds, outer_fds, n * sizeof(*outer_fds));
	const char *way = how.tasks ? "by tasks" : how.measuring ? "here, timed" : "here";
	sg_debug("outer-map updates: %s", way);
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		pl->tasks[i] = how.tasks ? start_task(outer_fds[i], inner_fds[i], slot) : NULL;
		if (pl->tasks[i])
			continue;
		bool slow;
		r = update_here_timed(outer_fds[i], inner_fds[i], slot, &slow);
		if (r < 0) {
			/* Nothing waits for them: they would place into a slot being released. */
			kill_tasks(pl);
			break;
		}
		if (slow && how.measuring) {
			sg_debug("an outer-map update was slow: the rest by tasks");
			how = (struct placing){.tasks = true, .measuring = false};
		}
	}
	/*
	 * Slow (for a while: probe.h), or quick: what the next placers start
	 * with. Quick is known only once every update was made.
	 */
	bool saw_slow = measured && !how.measuring;
	if (saw_slow || (measured && r == 0))
		sg_probe_record_slow_outer_updates(saw_slow);
	return r;
}

static bool visible(const struct sg_placer *pl, size_t i)
{
	uint32_t inner_id;
	return bpf_map_lookup_elem(pl->outer_fds[i], &pl->slot, &inner_id) == 0;
}

/* How long a node may keep the tasks from running before the hook gives up. */
static double placer_timeout(void)
{
	return sg_injected_fault("placer_stall") ? 0.2 : SG_PLACER_TIMEOUT_S;
}

/*
 * 0 when update @i shows or its task still runs; else the task is gone
 * without placing it: reaped, -errno.
 */
static int check_task(struct sg_placer *pl, size_t i)
{
	struct sg_placer_task *t = pl->tasks[i];

	if (!t || __atomic_load_n(&t->live, __ATOMIC_ACQUIRE) != 0)
		return 0;
	int error = t->error;
	reap(t);
	pl->tasks[i] = NULL;
	/* It may have placed and exited since the look before (a busy node). */
	if (visible(pl, i))
		return 0;
	return -(error ? error : EIO);
}

int sg_placer_wait(struct sg_placer *pl)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (size_t i = 0; i < pl->n; i++) {
		while (!visible(pl, i)) {
			int r = check_task(pl, i);
			if (r < 0) {
				kill_tasks(pl);
				return r;
			}
			/* A node too busy to run the tasks for this long: give up. */
			if (seconds_since(&start) > placer_timeout()) {
				kill_tasks(pl);
				return -ETIMEDOUT;
			}
			/* An update shows within microseconds of the task's call: let it run. */
			sched_yield();
		}
	}
	return 0;
}
