// SPDX-License-Identifier: Apache-2.0
#include "confine.h"

#include <errno.h>
#include <string.h>

#include <seccomp.h>

#include "util.h"

/* What loading, pinning and attaching a guard, and logging, need. */
static const char *const needed[] = {
    /* bpf and bpffs */
    "bpf",
    "mount",
    "mkdir",
    "mkdirat",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "rmdir",
    "statfs",
    "fstatfs",
    "name_to_handle_at",
    "getrandom",
    "uname",
    "flock",
    /* placing a new policy's tables (hook/tables.c): children, no exec */
    "clone",
    "clone3",
    "wait4",
    "set_robust_list",
    /* files */
    "openat",
    "open",
    "close",
    "read",
    "pread64",
    "write",
    "writev",
    "lseek",
    "fstat",
    "newfstatat",
    "stat",
    "lstat",
    "statx",
    "fcntl",
    "dup",
    "dup3",
    "ioctl",
    "getdents64",
    "readlink",
    "readlinkat",
    "access",
    "faccessat",
    "faccessat2",
    /* memory, threads, time, exit */
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "futex",
    "clock_gettime",
    "gettimeofday",
    "time",
    "nanosleep",
    "clock_nanosleep",
    "getpid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "prlimit64",
    "sched_getaffinity",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    "restart_syscall",
    "exit",
    "exit_group",
    /* syslog over /dev/log */
    "socket",
    "connect",
    "sendto",
    "sendmsg",
};

#ifdef __SANITIZE_ADDRESS__
/* LeakSanitizer stops the world at exit: a tracer thread ptraces every thread. */
static const char *const sanitizer_needs[] = {
    "clone",   "clone3", "ptrace", "wait4", "waitid",	       "prctl", "sched_yield",
    "getppid", "kill",	 "tgkill", "pipe2", "set_robust_list", "rseq",	"getdents",
};
#endif

static void release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

static int allow_all(scmp_filter_ctx ctx, const char *const *names, size_t n, struct sg_err *err)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (r < 0)
			return sg_system_error(err, -r, "seccomp: cannot allow %s: %s", names[i],
					       strerror(-r));
	}
	return 0;
}

int sg_confine(struct sg_err *err)
{
	__attribute__((cleanup(release))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));

	if (!ctx)
		return sg_system_error(err, ENOMEM, "seccomp: cannot create a filter");
	int r = allow_all(ctx, needed, SG_ARRAY_SIZE(needed), err);
#ifdef __SANITIZE_ADDRESS__
	if (r == 0)
		r = allow_all(ctx, sanitizer_needs, SG_ARRAY_SIZE(sanitizer_needs), err);
#endif
	if (r < 0)
		return r;
	r = seccomp_load(ctx);
	if (r < 0)
		return sg_system_error(err, -r, "seccomp: cannot load the hook's own filter: %s",
				       strerror(-r));
	return 0;
}
