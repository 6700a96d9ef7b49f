/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The error contract: a fallible function returns 0 or a negative errno and,
 * on failure, fills a struct sg_err with one message that says what was wrong,
 * where, and what to do. The first error wins: callers may add context with
 * sg_err_prefix() but never overwrite the root cause.
 */
#ifndef SG_ERR_H
#define SG_ERR_H

#include <stdbool.h>

/* Exit statuses of the command line contract. */
enum sg_exit {
	SG_EXIT_OK = 0,
	SG_EXIT_INPUT = 1,  /* invalid policy, state, config or usage */
	SG_EXIT_SYSTEM = 2, /* the system refused: no cgroup v2, no hook, attach failed */
};

struct sg_err {
	int code;	     /* positive errno of the failure, 0 when none */
	enum sg_exit status; /* what the process should exit with */
	bool unsupported;    /* the kernel cannot confine sysctls here (on_unsupported) */
	char msg[1024];
};

/* Invalid input; returns -EINVAL. */
int sg_input_error(struct sg_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The system refused; @code is a positive errno; returns -code. */
int sg_system_error(struct sg_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * A system error that says this machine cannot confine sysctls at all (no
 * cgroup v2), the one kind the node config's on_unsupported may let pass;
 * returns -code. sg_kernel_error decides by the errno.
 */
int sg_unsupported_error(struct sg_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The kernel refused a step only it can take (a BPF program, map or attach
 * type, bpffs): sg_unsupported_error when @code says this kernel lacks or
 * forbids it (EINVAL, EACCES, EPERM, ENOSYS, EOPNOTSUPP, ENODEV), else
 * sg_system_error (out of memory or descriptors, say); returns -code.
 */
int sg_kernel_error(struct sg_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Puts "prefix: " in front of the message already set. */
void sg_err_prefix(struct sg_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline bool sg_err_is_set(const struct sg_err *err)
{
	return err->code != 0;
}

/* An error kept aside, reported now: @src into @err, unless @err has one (the first wins). */
static inline void sg_err_copy(struct sg_err *err, const struct sg_err *src)
{
	if (err && !sg_err_is_set(err))
		*err = *src;
}

#endif
