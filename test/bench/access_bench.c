// SPDX-License-Identifier: Apache-2.0
/*
 * Per-access cost of /proc/sys from inside cgroups, interleaved:
 *
 *   access_bench --op read|write [--iters N] [--rounds R] [--cpu C] LABEL=CGROUP_DIR...
 *
 * read:  open/read/close of /proc/sys/kernel/ostype
 * write: open/write("4096")/close of /proc/sys/net/core/somaxconn, in a fresh
 *        network namespace (the value is per namespace; the host's is untouched)
 *
 * In every round the process moves itself into each cgroup in turn (the order
 * rotates from round to round), runs a short warm-up, then times N accesses.
 * Prints one line per sample: "sample LABEL ROUND NS_PER_OP". Any access that
 * fails is an error (exit 1): a benchmark of denied accesses measures nothing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_VARIANTS 16

static const char *op_path;
static int write_op;

static void join_cgroup(const char *dir)
{
	char path[4096], pid[32];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (fd < 0 || write(fd, pid, (size_t)len) != len) {
		fprintf(stderr, "access_bench: cannot join %s: %s\n", dir, strerror(errno));
		exit(2);
	}
	close(fd);
}

static int one_access(void)
{
	char buf[64];
	int fd = open(op_path, (write_op ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write_op ? write(fd, "4096", 4) : read(fd, buf, sizeof(buf));
	int e = errno;
	close(fd);
	return n <= 0 ? -(n < 0 ? e : EIO) : 0;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *labels[MAX_VARIANTS], *dirs[MAX_VARIANTS];
	long iters = 20000, rounds = 11, warmup = 500;
	int cpu = -1, n = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
			i++;
			write_op = strcmp(argv[i], "write") == 0;
			if (!write_op && strcmp(argv[i], "read") != 0) {
				fprintf(stderr, "access_bench: --op read|write\n");
				return 2;
			}
		} else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
			iters = atol(argv[++i]);
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = atol(argv[++i]);
		} else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {
			cpu = atoi(argv[++i]);
		} else if (strchr(argv[i], '=') && n < MAX_VARIANTS) {
			char *eq = strchr(argv[i], '=');
			*eq = '\0';
			labels[n] = argv[i];
			dirs[n++] = eq + 1;
		} else {
			fprintf(stderr,
				"usage: access_bench --op read|write [--iters N] [--rounds R] "
				"[--cpu C] LABEL=CGROUP_DIR...\n");
			return 2;
		}
	}
	if (n == 0 || iters < 1 || rounds < 1)
		return 2;
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set); /* best effort: less migration noise */
	}
	if (write_op) {
		if (unshare(CLONE_NEWNET) < 0) {
			perror("access_bench: unshare(CLONE_NEWNET)");
			return 2;
		}
		op_path = "/proc/sys/net/core/somaxconn";
	} else {
		op_path = "/proc/sys/kernel/ostype";
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < n; k++) {
			int v =
			    (int)((k + r) % n); /* rotate the order: no variant always runs first */
			join_cgroup(dirs[v]);
			for (long i = 0; i < warmup; i++) {
				int e = one_access();
				if (e < 0) {
					fprintf(stderr, "access_bench: %s %s in %s: %s\n",
						write_op ? "write" : "read", op_path, dirs[v],
						strerror(-e));
					return 1;
				}
			}
			double t0 = now_ns();
			int bad = 0;
			for (long i = 0; i < iters; i++)
				bad |= one_access();
			double t1 = now_ns();
			if (bad) {
				fprintf(stderr, "access_bench: an access in %s failed\n", dirs[v]);
				return 1;
			}
			printf("sample %s %ld %.1f\n", labels[v], r, (t1 - t0) / (double)iters);
		}
	}
	return 0;
}
