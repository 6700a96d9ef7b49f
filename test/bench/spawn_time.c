// SPDX-License-Identifier: Apache-2.0
/*
 * Times one command from fork to exit and reports its peak RSS:
 *
 *   spawn_time [-i STDIN_FILE] [-e STDERR_FILE] LABEL -- COMMAND [ARG...]
 *
 * Prints "LABEL WALL_NS MAXRSS_KIB EXIT_STATUS" on stdout. The command's stdout
 * goes to /dev/null, its stderr to STDERR_FILE (appended) or /dev/null. The
 * wall time covers fork, exec, the run and the reaping, as a runtime that runs
 * a hook sees it; MAXRSS comes from wait4()'s rusage of that child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *in = NULL, *errfile = NULL;
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] != '-'; i += 2) {
		if (strcmp(argv[i], "-i") == 0)
			in = argv[i + 1];
		else if (strcmp(argv[i], "-e") == 0)
			errfile = argv[i + 1];
		else
			break;
	}
	if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0) {
		fprintf(stderr, "usage: spawn_time [-i STDIN] [-e STDERR] LABEL -- COMMAND...\n");
		return 2;
	}
	const char *label = argv[i];
	char **cmd = argv + i + 2;

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(in ? in : "/dev/null", O_RDONLY);
		int out = open("/dev/null", O_WRONLY);
		int err = errfile ? open(errfile, O_WRONLY | O_CREAT | O_APPEND, 0600) : out;
		if (fd < 0 || out < 0 || err < 0)
			_exit(126);
		dup2(fd, 0);
		dup2(out, 1);
		dup2(err, 2);
		execvp(cmd[0], cmd);
		dprintf(2, "spawn_time: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		perror("spawn_time: fork");
		return 2;
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("spawn_time: wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long long ns =
	    (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("%s %lld %ld %d\n", label, ns, ru.ru_maxrss, code);
	return 0;
}
