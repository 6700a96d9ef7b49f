// SPDX-License-Identifier: Apache-2.0
/* The placer (placer.h): a child that makes outer-map updates and waits out their grace periods. */
#include "placer.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bigmem.h"
#include "confine.h"
#include "program.h" /* sg_injected_fault */
#include "util.h"

/* One outer-map update, as a thread of the placer makes it. */
struct update {
	int outer_fd, inner_fd;
	uint32_t slot;
	int error; /* 0 or the errno */
};

/* What the hook sends, with the outer maps' fds, then the inner maps', as SCM_RIGHTS. */
struct placement {
	uint32_t slot;
	uint32_t n;
};

static void *update_one(void *arg)
{
	struct update *u = arg;
	uint32_t fd = (uint32_t)u->inner_fd;
	u->error = bpf_map_update_elem(u->outer_fd, &u->slot, &fd, BPF_ANY) < 0 ? errno : 0;
	return NULL;
}

/* Exits with 0 or the first update's errno, the maps' descriptors closed. */
static void finish(struct update *u, size_t n)
{
	int error = 0;
	for (size_t i = 0; i < n; i++) {
		if (u[i].error && !error)
			error = u[i].error;
		close(u[i].outer_fd);
		close(u[i].inner_fd);
	}
	_exit(error);
}

/*
 * A placement as it crosses the socket: the head, and room for the
 * descriptors, last (clang does not take glibc's CMSG_SPACE for a constant).
 */
struct wire {
	struct placement head;
	struct iovec iov;
	struct msghdr msg;
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2 * SG_PLACER_MAX)];
		struct cmsghdr align;
	} control;
};

/* @w ready to carry a head and @control_len bytes of control data. */
static void wire_init(struct wire *w, size_t control_len)
{
	memset(w, 0, sizeof(*w));
	w->iov = (struct iovec){&w->head, sizeof(w->head)};
	w->msg = (struct msghdr){.msg_iov = &w->iov,
				 .msg_iovlen = 1,
				 .msg_control = w->control.buf,
				 .msg_controllen = control_len};
}

/* The placement the hook sent: the number of updates, or -1 when it sent none (closed). */
static ssize_t receive(int sock, struct update *u)
{
	struct wire w;

	wire_init(&w, sizeof(w.control.buf));
	if (recvmsg(sock, &w.msg, 0) != (ssize_t)sizeof(w.head) || w.head.n == 0 ||
	    w.head.n > SG_PLACER_MAX)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&w.msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int) * 2 * w.head.n))
		return -1;
	int fds[2 * SG_PLACER_MAX];
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * 2 * w.head.n);
	for (uint32_t i = 0; i < w.head.n; i++)
		u[i] = (struct update){fds[i], fds[w.head.n + i], w.head.slot, 0};
	return w.head.n;
}

/*
 * The placer's threads, one per update but the first, started before the
 * maps come, while the hook parses: started once they had come, one after
 * another, they took about 0.1 ms each.
 */
struct crew {
	pthread_mutex_t lock;
	pthread_cond_t go;
	bool ready; /* the updates are in, or none will come (n 0) */
	size_t n;
	struct update u[SG_PLACER_MAX];
};

struct member {
	struct crew *crew;
	size_t i; /* its update */
};

static void *member_main(void *arg)
{
	const struct member *m = arg;
	struct crew *c = m->crew;

	pthread_mutex_lock(&c->lock);
	while (!c->ready)
		pthread_cond_wait(&c->go, &c->lock);
	pthread_mutex_unlock(&c->lock);
	if (m->i < c->n)
		update_one(&c->u[m->i]);
	return NULL;
}

/*
 * Holds nothing of the hook's but its socket: runtimes read the hook's
 * output until every writer is gone, and the pins lock is the hook's to
 * release (the hook waits until the tables are seen placed, and what comes
 * after only needs that).
 */
static void placer_main(int sock, size_t expected, pid_t parent)
{
	static struct crew crew = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
	struct member members[SG_PLACER_MAX];
	pthread_t threads[SG_PLACER_MAX];
	bool started[SG_PLACER_MAX] = {false};

	/*
	 * A hook killed (say by its runtime's timeout) takes its placer along:
	 * placing later, after gc found the hook gone and freed its slot, it
	 * would fill a slot that another policy may hold. Dying after the hook
	 * is harmless: the hook exits only once the updates are in, and the
	 * grace periods left end either way. A confined parent's filter
	 * (preload's) lets this one prctl through (confine.c).
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(0);
	sg_close_all_but(sock);
	/* It sees no input of the container's, but it needs no more than the hook (confine.c). */
	sg_confine(NULL);
	for (size_t i = 1; i < expected; i++) {
		members[i] = (struct member){&crew, i};
		started[i] = pthread_create(&threads[i], NULL, member_main, &members[i]) == 0;
	}
	ssize_t n = receive(sock, crew.u);
	close(sock);
	/* placer_stall: a placer descheduled for longer than the hook waits (placer_timeout) */
	if (n > 0 && sg_injected_fault("placer_stall"))
		sleep(1);
	pthread_mutex_lock(&crew.lock);
	crew.n = n > 0 ? (size_t)n : 0;
	crew.ready = true;
	pthread_cond_broadcast(&crew.go);
	pthread_mutex_unlock(&crew.lock);
	/* This thread makes the first update, and those no member was started for. */
	for (size_t i = 0; i < crew.n; i++)
		if (i == 0 || i >= expected || !started[i])
			update_one(&crew.u[i]);
	for (size_t i = 1; i < expected; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
	finish(crew.u, crew.n);
}

void sg_placer_init(struct sg_placer *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->pid = -1;
	pl->sock = -1;
}

void sg_placer_start(struct sg_placer *pl, size_t n)
{
	int sv[2];

	sg_placer_init(pl);
	pl->started = true;
	/* placer: a fault test's hook without one, which makes the updates itself */
	if (sg_injected_fault("placer") ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	pid_t parent = getpid(), pid = sg_bigmem_fork_bare(); /* it needs none of the policy */
	if (pid == 0) {
		close(sv[0]);
		placer_main(sv[1], n < SG_PLACER_MAX ? n : SG_PLACER_MAX, parent);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return;
	}
	pl->pid = pid;
	pl->sock = sv[0];
}

/* Hands the updates to the placer: false when it is gone, and they are to be made here. */
static bool hand_over(struct sg_placer *pl, const int *outer_fds, const int *inner_fds)
{
	struct wire w;

	wire_init(&w, CMSG_SPACE(sizeof(int) * 2 * pl->n));
	w.head = (struct placement){pl->slot, (uint32_t)pl->n};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&w.msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * 2 * pl->n);
	memcpy(CMSG_DATA(cm), outer_fds, sizeof(int) * pl->n);
	memcpy((int *)CMSG_DATA(cm) + pl->n, inner_fds, sizeof(int) * pl->n);
	if (sendmsg(pl->sock, &w.msg, MSG_NOSIGNAL) == (ssize_t)sizeof(w.head))
		return true;
	/* It got nothing, so it exits once the socket closes, if it is not gone already. */
	close(pl->sock);
	pl->sock = -1;
	waitpid(pl->pid, NULL, 0);
	pl->pid = -1;
	return false;
}

int sg_placer_send(struct sg_placer *pl, const int *outer_fds, const int *inner_fds, size_t n,
		   uint32_t slot)
{
	if (n == 0 || n > SG_PLACER_MAX)
		return -EINVAL;
	if (!pl->started)
		sg_placer_start(pl, n);
	pl->slot = slot;
	pl->n = n;
	memcpy(pl->outer_fds, outer_fds, n * sizeof(*outer_fds));
	if (pl->pid > 0 && hand_over(pl, outer_fds, inner_fds))
		return 0;
	/* No placer: the updates happen here, waits included. */
	for (size_t i = 0; i < n; i++) {
		struct update u = {outer_fds[i], inner_fds[i], slot, 0};
		update_one(&u);
		if (u.error)
			return -u.error;
	}
	return 0;
}

static bool all_visible(const struct sg_placer *pl)
{
	uint32_t inner_id;
	for (size_t i = 0; i < pl->n; i++)
		if (bpf_map_lookup_elem(pl->outer_fds[i], &pl->slot, &inner_id) < 0)
			return false;
	return true;
}

/* How long a node may keep the placer from running before the hook gives up. */
static double placer_timeout(void)
{
	return sg_injected_fault("placer_stall") ? 0.2 : SG_PLACER_TIMEOUT_S;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return sg_seconds_between(start, &now);
}

/*
 * Killed and reaped before the caller releases the slot: a placer that ran
 * later would put this policy's tables into a slot another policy may have
 * claimed by then. Our own child, not reaped yet (main() leaves SIGCHLD at
 * its default, so the kernel does not reap it for us): its pid is still
 * its own.
 */
static void kill_placer(struct sg_placer *pl)
{
	kill(pl->pid, SIGKILL);
	while (waitpid(pl->pid, NULL, 0) < 0 && errno == EINTR)
		;
	pl->pid = -1;
}

int sg_placer_wait(struct sg_placer *pl)
{
	struct timespec start;
	int status;

	if (pl->pid <= 0)
		return 0; /* made here */
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!all_visible(pl)) {
		if (waitpid(pl->pid, &status, WNOHANG) == pl->pid) {
			pl->pid = -1;
			if (WIFEXITED(status) && WEXITSTATUS(status))
				return -WEXITSTATUS(status);
			/*
			 * The placer may have made its last update, waited out the
			 * grace period and exited since the look above (a busy
			 * node): what it placed is there now.
			 */
			return WIFEXITED(status) && all_visible(pl) ? 0 : -EIO;
		}
		/* A node too busy to run the placer for this long: give up. */
		if (seconds_since(&start) > placer_timeout()) {
			kill_placer(pl);
			return -ETIMEDOUT;
		}
		/* An update shows within microseconds of the placer's call: let it run. */
		sched_yield();
	}
	return 0;
}

void sg_placer_stop(struct sg_placer *pl)
{
	/*
	 * Not waited for: given nothing, it still starts its threads before it
	 * sees the socket close, about 0.5 ms that an attach of a policy in use
	 * waited out.
	 */
	if (pl->sock >= 0)
		close(pl->sock);
	pl->sock = -1;
}
