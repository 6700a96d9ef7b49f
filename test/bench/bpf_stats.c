// SPDX-License-Identifier: Apache-2.0
/*
 * Runs a command with the kernel's BPF run-time statistics on:
 *
 *   bpf_stats COMMAND [ARG...]
 *
 * BPF_ENABLE_STATS counts run_cnt and run_time_ns of every program for as
 * long as its descriptor is open, here until COMMAND exits; nothing
 * host-global is written (the kernel.bpf_stats_enabled sysctl stays as it
 * is). Exits with COMMAND's status.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	union bpf_attr attr;
	int status;

	if (argc < 2) {
		fprintf(stderr, "usage: bpf_stats COMMAND [ARG...]\n");
		return 2;
	}
	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	int fd = (int)syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
	if (fd < 0) {
		perror("bpf_stats: BPF_ENABLE_STATS");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("bpf_stats: exec");
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
