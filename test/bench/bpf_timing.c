// SPDX-License-Identifier: Apache-2.0
/*
 * LD_PRELOAD shim for the hook latency breakdown: times every bpf(2) call
 * the process makes through libc's syscall() (libbpf's only way into the
 * kernel) and, at exit, appends one line of key=value pairs to the file named
 * by SG_BENCH_BPF_LOG:
 *
 *   total      constructor to exit (the process minus exec and dynamic loading)
 *   pre        constructor to the first bpf call: read state, config.json, the
 *              node config, parse the policy, compose, compile
 *   probe_*    BPF_PROG_LOAD calls other than the largest one: feature probes
 *              (ours and libbpf's)
 *   main_*     the largest BPF_PROG_LOAD: the guard's verification and JIT
 *   mapc_*     BPF_MAP_CREATE, mapu_* BPF_MAP_UPDATE_ELEM (filling the policy)
 *   btf_*      BPF_BTF_LOAD, link_* BPF_LINK_CREATE/UPDATE, pin_* OBJ_PIN/GET
 *   other_*    every other bpf command
 *   user_mid   userspace time between the first and the last bpf call
 *   post       the last bpf call to exit
 *
 * Times in microseconds. Only for the breakdown runs: the headline latency
 * is measured without it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { C_PROBE, C_MAIN, C_MAPC, C_MAPU, C_BTF, C_LINK, C_PIN, C_OTHER, C_N };
static const char *const names[C_N] = {"probe", "main", "mapc", "mapu",
				       "btf",	"link", "pin",	"other"};

static double t_start, t_first = -1, t_last_end, sum_bpf;
static double ns_by[C_N];
static long n_by[C_N];
static double load_max_ns = -1;
static unsigned load_max_insns;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

__attribute__((constructor)) static void start(void)
{
	t_start = now_us();
}

/* Adds one bpf(2) call, from @t0 to @t1, with arguments @a. */
static void account(double t0, double t1, double d, const long *a)
{
	if (t_first < 0 || t0 < t_first)
		t_first = t0;
	if (t1 > t_last_end)
		t_last_end = t1;
	sum_bpf += d;

	int cat;
	switch ((int)a[0]) {
	case BPF_PROG_LOAD: {
		const union bpf_attr *attr = (const union bpf_attr *)a[1];
		/* The largest program is the guard; the previous largest was a probe. */
		if (attr->insn_cnt > load_max_insns) {
			if (load_max_ns >= 0) {
				ns_by[C_PROBE] += load_max_ns;
				n_by[C_PROBE]++;
			}
			load_max_insns = attr->insn_cnt;
			load_max_ns = d;
		} else {
			ns_by[C_PROBE] += d;
			n_by[C_PROBE]++;
		}
		return;
	}
	case BPF_MAP_CREATE:
		cat = C_MAPC;
		break;
	case BPF_MAP_UPDATE_ELEM:
	case BPF_MAP_UPDATE_BATCH:
		cat = C_MAPU;
		break;
	case BPF_BTF_LOAD:
		cat = C_BTF;
		break;
	case BPF_LINK_CREATE:
	case BPF_LINK_UPDATE:
	case BPF_PROG_ATTACH:
		cat = C_LINK;
		break;
	case BPF_OBJ_PIN:
	case BPF_OBJ_GET:
		cat = C_PIN;
		break;
	default:
		cat = C_OTHER;
		break;
	}
	ns_by[cat] += d;
	n_by[cat]++;
}

typedef long (*syscall_fn)(long, ...);

long syscall(long number, ...)
{
	static syscall_fn real;
	va_list ap;
	long a[6];

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (number != SYS_bpf)
		return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);

	double t0 = now_us();
	long r = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	double t1 = now_us(), d = t1 - t0;
	account(t0, t1, d, a);
	return r;
}

__attribute__((destructor)) static void finish(void)
{
	const char *path = getenv("SG_BENCH_BPF_LOG");
	char line[1024];
	int len = 0;
	double t_end = now_us();

	if (!path)
		return;
	if (load_max_ns >= 0) {
		ns_by[C_MAIN] = load_max_ns;
		n_by[C_MAIN] = 1;
	}
	if (t_first < 0)
		t_first = t_last_end = t_end;
	len += snprintf(line + len, sizeof(line) - len, "total=%.0f pre=%.0f", t_end - t_start,
			t_first - t_start);
	for (int c = 0; c < C_N; c++)
		len += snprintf(line + len, sizeof(line) - len, " %s_n=%ld %s_us=%.0f", names[c],
				n_by[c], names[c], ns_by[c]);
	len += snprintf(line + len, sizeof(line) - len, " main_insns=%u user_mid=%.0f post=%.0f\n",
			load_max_insns, (t_last_end - t_first) - sum_bpf, t_end - t_last_end);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, line, (size_t)len) < 0) {
			/* nothing to do: the breakdown misses one run */
		}
		close(fd);
	}
}
