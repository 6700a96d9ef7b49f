// SPDX-License-Identifier: Apache-2.0
#include "dfa_job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inputs.h" /* sg_build_id */
#include "log.h"
#include "program.h"
#include "tables.h"
#include "util.h"

struct sg_dfa_job {
	pid_t pid; /* the child, until reaped */
	int sock;  /* to the child, until its answer */
	bool answered;
	int result; /* once answered: 0 or -errno */
	int fd;	    /* the DFA's table, when result is 0 */
	struct sg_dfa_shape shape;
	struct sg_err err; /* the compile error, if that was the failure */
};

/* What the child sends, with the table's descriptor when result is 0. */
struct answer {
	int result;
	struct sg_dfa_shape shape;
	struct sg_err err;
};

static void send_answer(int sock, const struct answer *a, int fd)
{
	struct iovec iov = {(void *)a, sizeof(*a)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	/* no one to answer (the hook died): nothing to do but exit */
	(void)sendmsg(sock, &msg, MSG_NOSIGNAL);
}

/* The child: compiles the DFA, makes its table, answers, exits. */
static __attribute__((noreturn)) void child_main(int sock, const struct sg_policy_set *set)
{
	struct answer a;
	struct sg_compiled dfa = {0};
	int fd = -1;

	memset(&a, 0, sizeof(a));
	sg_close_all_but(sock); /* the hook's locks and sockets stay the hook's */
	/* dfa_child: a fault test's child that dies before it answers; dfa_stall: one late */
	if (sg_injected_fault("dfa_child"))
		kill(getpid(), SIGKILL);
	if (sg_injected_fault("dfa_stall"))
		sleep(1);
	a.result = sg_compile_dfa(set, &dfa, &a.err);
	if (a.result == 0) {
		fd = sg_tables_make_dfa(&dfa);
		if (fd < 0)
			a.result = fd;
		else
			sg_dfa_shape_of(&dfa, &a.shape);
	}
	send_answer(sock, &a, fd);
	/* after the answer, off the hook's path: what valgrind's checks see at exit */
	if (fd >= 0)
		close(fd);
	close(sock);
	sg_compiled_free(&dfa);
	_exit(0);
}

/* A child building @set's DFA, or NULL when none could be started. */
static struct sg_dfa_job *start(const struct sg_policy_set *set)
{
	int sv[2];

	/* dfa_apart: a fault test's hook that cannot fork, which builds the DFA itself */
	if (sg_injected_fault("dfa_apart") ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		child_main(sv[1], set);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return NULL;
	}
	struct sg_dfa_job *job = sg_xcalloc(1, sizeof(*job));
	*job = (struct sg_dfa_job){.pid = pid, .sock = sv[0], .fd = -1};
	return job;
}

int sg_compile_apart(const struct sg_policy_set *set, struct sg_compiled *out, struct sg_err *err)
{
	uint8_t build_id[64];

	if (sg_count_patterns(set, SG_DFA_APART_MIN_PATTERNS) < SG_DFA_APART_MIN_PATTERNS ||
	    sg_build_id(build_id, sizeof(build_id)) == 0)
		return sg_compile(set, out, err);
	struct sg_dfa_job *job = start(set);
	if (!job)
		return sg_compile(set, out, err);
	sg_debug("the DFA is built apart, by process %d", (int)job->pid);
	int r = sg_compile_rules(set, out, err);
	if (r < 0) {
		sg_dfa_job_free(job);
		return r;
	}
	out->dfa_job = job;
	return 0;
}

/* How long the hook waits for the answer: a fault test's child stalls past a short wait. */
static int answer_timeout_ms(void)
{
	return sg_injected_fault("dfa_stall") ? 200 : SG_DFA_JOB_TIMEOUT_S * 1000;
}

/* Kills the child, once, and takes its answer to be @result. */
static void give_up(struct sg_dfa_job *job, int result)
{
	kill(job->pid, SIGKILL);
	job->answered = true;
	job->result = result;
	if (job->sock >= 0)
		close(job->sock);
	job->sock = -1;
}

/*
 * Reads the child's answer: a message of its size, and a descriptor with a
 * success. The child only computes: a wait past the timeout means it was
 * stopped (a debugger, a freezer), and the hook holds the pins lock.
 */
static void receive(struct sg_dfa_job *job)
{
	struct answer a;
	struct iovec iov = {&a, sizeof(a)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf)};
	struct pollfd pfd = {.fd = job->sock, .events = POLLIN};
	ssize_t n;
	int ready;

	while ((ready = poll(&pfd, 1, answer_timeout_ms())) < 0 && errno == EINTR)
		;
	if (ready <= 0) {
		/* -ETIME, not -ETIMEDOUT: that is the placer's (placer.h) */
		give_up(job, ready == 0 ? -ETIME : -errno);
		return;
	}
	while ((n = recvmsg(job->sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&job->fd, CMSG_DATA(cm), sizeof(int));
	job->answered = true;
	close(job->sock);
	job->sock = -1;
	/* a descriptor cut off: this process is at its limit of them */
	if (n > 0 && (msg.msg_flags & MSG_CTRUNC))
		job->result = -EMFILE;
	else if (n != (ssize_t)sizeof(a) || (a.result == 0) != (job->fd >= 0))
		job->result = -EPIPE; /* died (or was killed) before it answered */
	else {
		job->result = a.result;
		job->shape = a.shape;
		job->err = a.err;
	}
}

int sg_dfa_job_finish(struct sg_dfa_job *job, int *fd, struct sg_dfa_shape *shape)
{
	if (!job->answered)
		receive(job);
	if (job->result < 0)
		return job->result;
	*fd = fcntl(job->fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	*shape = job->shape;
	return 0;
}

void sg_dfa_job_stop(struct sg_dfa_job *job)
{
	/* The pid stays this child's until sg_dfa_job_free reaps it. */
	if (job && job->pid > 0)
		kill(job->pid, SIGKILL);
}

void sg_dfa_job_cancel(struct sg_dfa_job *job)
{
	if (job && !job->answered)
		give_up(job, -ECANCELED);
}

bool sg_dfa_job_input_error(struct sg_dfa_job *job, struct sg_err *err)
{
	if (!job)
		return false;
	if (!job->answered)
		receive(job);
	if (!sg_err_is_set(&job->err))
		return false;
	*err = job->err;
	return true;
}

void sg_dfa_job_free(struct sg_dfa_job *job)
{
	if (!job)
		return;
	if (!job->answered)
		give_up(job, -ECANCELED);
	if (job->fd >= 0)
		close(job->fd);
	/*
	 * Waited for: killed, it is gone at once; one that answered exits
	 * right after, long before the hook is done with the tables.
	 */
	while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(job);
}
