// SPDX-License-Identifier: Apache-2.0
/*
 * The filter is a plain allowlist, so it is written out as classic BPF here:
 * building it with libseccomp (its API-level probes, rule database and code
 * generator) cost every hook run more than the rest of the filter's life.
 */
#include "oci/confine.h"

#include <assert.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

#if defined(__x86_64__)
#define SG_AUDIT_ARCH AUDIT_ARCH_X86_64
/* The kernel's asm/unistd.h has it; not every libc's sys/syscall.h includes that. */
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#elif defined(__aarch64__)
#define SG_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "sysctl-guard's seccomp filter knows x86_64 and aarch64; add this architecture's AUDIT_ARCH"
#endif

/* Room for every name below; jumps in classic BPF reach at most 255 instructions ahead. */
#define MAX_ALLOWED 120
#define MAX_INSNS   (2 * MAX_ALLOWED + 11)
_Static_assert(MAX_INSNS <= 255, "filter jumps must stay within 255 instructions");

/* A search narrows down to this many numbers, then compares them one by one. */
#define LEAF_SIZE 4

/*
 * What loading, pinning and attaching a guard, and logging, need: numbers
 * the compiler knows, so no run of the hook looks names up. Calls that only
 * some architectures or kernel headers have are listed where they exist.
 */
static const uint32_t needed[] = {
    /* bpf and bpffs */
    __NR_bpf,
    __NR_mount,
    __NR_mkdirat,
    __NR_renameat,
    __NR_renameat2,
    __NR_unlinkat,
    __NR_statfs,
    __NR_fstatfs,
    __NR_name_to_handle_at,
    __NR_getrandom,
    __NR_uname,
    __NR_flock,
    __NR_symlinkat,
    /*
     * gc, when every slot is taken, removes policies in children (tables.c):
     * fork without exec (glibc's fork is a clone, and its child sets its
     * robust list; musl's is fork, below), and their wait
     */
    __NR_clone,
    __NR_set_robust_list,
    __NR_wait4,
    /*
     * gc's look for a staging directory's hook (kill(pid, 0)), and the
     * kill_after_storage fault. Any process's pid would do; openat and write
     * as root let a hijacked hook do worse already: the filter keeps out exec
     * and the calls no hook makes.
     */
    __NR_kill,
    /* files */
    __NR_openat,
    __NR_close,
    __NR_read,
    __NR_pread64,
    __NR_write,
    __NR_writev,
    __NR_lseek,
    __NR_fstat,
    __NR_newfstatat,
    __NR_statx,
    __NR_fcntl,
    __NR_dup,
    __NR_dup3,
    __NR_ioctl,
    __NR_getdents64,
    __NR_readlinkat,
    __NR_faccessat,
    /* memory, locks, time, exit */
    __NR_brk,
    __NR_mmap,
    __NR_munmap,
    __NR_mremap,
    __NR_mprotect,
    __NR_madvise,
    __NR_futex,
    __NR_clock_gettime,
    __NR_gettimeofday,
    __NR_nanosleep,
    __NR_clock_nanosleep,
    __NR_getpid,
    __NR_gettid,
    __NR_getuid,
    __NR_geteuid,
    __NR_getgid,
    __NR_getegid,
    __NR_prlimit64,
    __NR_sysinfo, /* glibc's qsort, before it sorts more than a kilobyte (the values) */
    __NR_sched_getaffinity,
    __NR_rt_sigaction,
    __NR_rt_sigprocmask,
    __NR_rt_sigreturn,
    __NR_sigaltstack,
    __NR_restart_syscall,
    __NR_exit,
    __NR_exit_group,
    /* syslog over /dev/log */
    __NR_socket,
    __NR_connect,
    __NR_sendto,
    __NR_sendmsg,
#ifdef __NR_faccessat2
    __NR_faccessat2,
#endif
#ifdef __x86_64__
    /* the calls x86-64 keeps beside their *at forms */
    __NR_mkdir,
    __NR_rename,
    __NR_unlink,
    __NR_rmdir,
    __NR_symlink,
    __NR_open,
    __NR_stat,
    __NR_lstat,
    __NR_readlink,
    __NR_access,
    __NR_time,
    __NR_pipe,
    /* musl's fork(); glibc's makes a clone */
    __NR_fork,
#endif
};

#ifdef __SANITIZE_ADDRESS__
/*
 * LeakSanitizer stops the world at exit: a tracer task, which checks that
 * its parent is the hook, ptraces every thread, and the hook waits for it
 * yielding. A call it lacks kills the tracer alone: the hook then spins.
 */
static const uint32_t sanitizer_needs[] = {
    __NR_ptrace,   __NR_waitid, __NR_prctl, __NR_tgkill, __NR_sched_yield, __NR_getppid,
#ifdef __x86_64__
    __NR_getdents,
#endif
};
#endif

/* Adds @n numbers to @nrs. */
static void add_all(const uint32_t *list, size_t n, uint32_t *nrs, size_t *n_nrs)
{
	for (size_t i = 0; i < n && *n_nrs < MAX_ALLOWED; i++)
		nrs[(*n_nrs)++] = list[i];
}

static int cmp_nr(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Instructions emit_search() takes for @n numbers. */
static size_t search_size(size_t n)
{
	return n <= LEAF_SIZE ? (n ? n : 1) : 1 + search_size(n / 2) + search_size(n - n / 2);
}

/*
 * Emits a binary search for the call's number in @nrs (sorted) at out[*pc]:
 * a JGE on the middle number until LEAF_SIZE are left, then a JEQ on each;
 * a match jumps to @allow, a miss to @deny. When a filter is attached the
 * kernel runs it for every syscall number to cache the always-allowed ones:
 * a plain list of JEQs takes n steps per number, a search log2(n).
 */
static void emit_search(const uint32_t *nrs, size_t n, size_t allow, size_t deny,
			struct sock_filter *out, size_t *pc)
{
	if (n == 0) {
		out[*pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
							(uint32_t)(deny - *pc - 1), 0, 0);
		(*pc)++;
		return;
	}
	if (n <= LEAF_SIZE) {
		for (size_t i = 0; i < n; i++, (*pc)++)
			out[*pc] = (struct sock_filter)BPF_JUMP(
			    BPF_JMP | BPF_JEQ | BPF_K, nrs[i], (uint8_t)(allow - *pc - 1),
			    (uint8_t)(i == n - 1 ? deny - *pc - 1 : 0));
		return;
	}
	size_t half = n / 2;
	out[*pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, nrs[half],
						(uint8_t)search_size(half), 0);
	(*pc)++;
	emit_search(nrs, half, allow, deny, out, pc);
	emit_search(nrs + half, n - half, allow, deny, out, pc);
}

/*
 * What an unlisted call gets: EPERM, which libc's fallbacks handle. The test
 * suites set SYSCTL_GUARD_CONFINE=strict, and then it kills the hook
 * (SIGSYS): a call missing from the list shows as a failure there instead of
 * a quiet, slower fallback (musl's fork() is its own call, and without it
 * gc's removals ran one after the other).
 */
static uint32_t deny_action(void)
{
	const char *mode = getenv("SYSCTL_GUARD_CONFINE");
	return mode && strcmp(mode, "strict") == 0 ? SECCOMP_RET_KILL_PROCESS
						   : SECCOMP_RET_ERRNO | EPERM;
}

/*
 * A filter that allows @nrs (sorted here) and fails every other call of this
 * architecture (deny_action); a call of another ABI (i386 through int 0x80,
 * x32) kills the process, as libseccomp's bad-arch action did. @out has room
 * for MAX_INSNS instructions; returns their number.
 */
static size_t build_filter(uint32_t *nrs, size_t n_nrs, struct sock_filter *out)
{
	enum { HEADER_INSNS = 4 }; /* before the search: arch, nr, ABI */
	const size_t deny = HEADER_INSNS + search_size(n_nrs), allow = deny + 1, kill = deny + 2;
	size_t pc = 0;

	qsort(nrs, n_nrs, sizeof(*nrs), cmp_nr);
	out[pc++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	out[pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SG_AUDIT_ARCH, 0,
					       (uint8_t)(kill - pc - 1));
	pc++;
	out[pc++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
	out[pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT,
					       (uint8_t)(kill - pc - 1), 0);
#else
	out[pc] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0);
#endif
	pc++;
	/* Every jump above was aimed by HEADER_INSNS: a header of another length misses. */
	assert(pc == HEADER_INSNS);
	emit_search(nrs, n_nrs, allow, deny, out, &pc);
	assert(pc == deny);
	out[pc++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny_action());
	out[pc++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	out[pc++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	return pc;
}

/*
 * A test seam: with SYSCTL_GUARD_CONFINE_SELFTEST set, the confined process
 * tries a call it does not need (execve) and says what happened.
 */
static void selftest(void)
{
	if (!getenv("SYSCTL_GUARD_CONFINE_SELFTEST"))
		return;
	char *const argv[] = {"/bin/true", NULL};
	execve(argv[0], argv, NULL);
	sg_warning("confined: execve refused: %s", strerror(errno));
}

static bool confined;

/* Loads the filter; the children the hook forks after inherit it. */
static int load_filter(struct sg_err *err)
{
	uint32_t nrs[MAX_ALLOWED];
	struct sock_filter insns[MAX_INSNS];
	size_t n_nrs = 0;

	add_all(needed, SG_ARRAY_SIZE(needed), nrs, &n_nrs);
#ifdef __SANITIZE_ADDRESS__
	add_all(sanitizer_needs, SG_ARRAY_SIZE(sanitizer_needs), nrs, &n_nrs);
#endif
	struct sock_fprog prog = {
	    .len = (unsigned short)build_filter(nrs, n_nrs, insns),
	    .filter = insns,
	};
	/* Without no_new_privs only CAP_SYS_ADMIN may load a filter; set it as libseccomp did. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return sg_system_error(err, errno, "seccomp: cannot set no_new_privs: %s",
				       strerror(errno));
	/* seccomp(2) where it exists; prctl otherwise (and under valgrind, which lacks seccomp(2)).
	 */
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 &&
	    (errno != ENOSYS || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0))
		return sg_system_error(err, errno, "seccomp: cannot load the hook's own filter: %s",
				       strerror(errno));
	return 0;
}

int sg_confine(struct sg_err *err)
{
	/* Once is enough, and a second time needs prctl and seccomp, which the filter refuses. */
	if (confined)
		return 0;
	int r = load_filter(err);
	if (r < 0)
		return r;
	confined = true;
	selftest();
	return 0;
}
