// SPDX-License-Identifier: Apache-2.0
/*
 * Test helper: joins a cgroup and fresh namespaces, then performs /proc/sys
 * accesses and prints what each one observed, one line per operation:
 *
 *   sysctl_io [--cgroup DIR] [--uts] [--net] OP...
 *   OP: read NAME | read1 NAME (1-byte reads) | write NAME VALUE | pwrite NAME VALUE POS
 *       | writen NAME VALUE (prints "ok N": the count write() returned)
 *       | walk (every file under /proc/sys: "NAME ok|EPERM|E<errno>")
 *       | sh CMD (runs CMD with /bin/sh in the same cgroup and namespaces)
 *   prints: "ok VALUE" (read, trailing newline dropped), "ok" (write), or the errno
 *   name ("EPERM", "EINVAL", ...).
 *
 * NAME is the slash form under /proc/sys.
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
#include <unistd.h>
#include <ftw.h>
#include <sys/stat.h>

static void print_errno(int e)
{
	const char *name = e == EPERM	 ? "EPERM"
			   : e == EINVAL ? "EINVAL"
			   : e == ENOENT ? "ENOENT"
			   : e == EACCES ? "EACCES"
					 : NULL;
	if (name)
		printf("%s\n", name);
	else
		printf("errno %d\n", e);
}

static int open_sysctl(const char *name, int flags)
{
	char path[512];
	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	return open(path, flags | O_CLOEXEC);
}

static void do_read(const char *name, size_t chunk)
{
	char buf[4096];
	size_t len = 0;
	int fd = open_sysctl(name, O_RDONLY);
	if (fd < 0) {
		print_errno(errno);
		return;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len,
				 chunk < sizeof(buf) - 1 - len ? chunk : sizeof(buf) - 1 - len);
		if (n < 0) {
			print_errno(errno);
			close(fd);
			return;
		}
		if (n == 0 || len + (size_t)n >= sizeof(buf) - 1)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	printf("ok %s\n", buf);
}

static void do_write(const char *name, const char *value, off_t pos, int show_count)
{
	int fd = open_sysctl(name, O_WRONLY);
	if (fd < 0) {
		print_errno(errno);
		return;
	}
	ssize_t n = pos ? pwrite(fd, value, strlen(value), pos) : write(fd, value, strlen(value));
	if (n < 0)
		print_errno(errno);
	else if (show_count)
		printf("ok %zd\n", n);
	else
		printf("ok\n");
	close(fd);
}

/* Reads every readable file under /proc/sys: "NAME ok|EPERM|E<errno>" per file. */
static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char buf[4096];
	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0; /* not readable by mode: the program never sees it */
	ssize_t n = read(fd, buf, sizeof(buf));
	int e = errno;
	close(fd);
	const char *name = path + strlen("/proc/sys/");
	if (n >= 0)
		printf("%s ok\n", name);
	else if (e == EPERM)
		printf("%s EPERM\n", name);
	else
		printf("%s E%d\n", name, e);
	return 0;
}

static void do_walk(void)
{
	nftw("/proc/sys", walk_one, 32, FTW_PHYS | FTW_MOUNT);
}

static void join_cgroup(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int i = 1, flags = 0;
	const char *cgroup = NULL;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc)
			cgroup = argv[++i];
		else if (strcmp(argv[i], "--uts") == 0)
			flags |= CLONE_NEWUTS;
		else if (strcmp(argv[i], "--net") == 0)
			flags |= CLONE_NEWNET;
		else {
			fprintf(stderr, "sysctl_io: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (flags && unshare(flags) < 0) {
		perror("unshare");
		return 2;
	}
	if (cgroup)
		join_cgroup(cgroup);
	setvbuf(stdout, NULL, _IOLBF, 0);

	while (i < argc) {
		const char *op = argv[i++];
		if (strcmp(op, "read") == 0 && i < argc) {
			do_read(argv[i++], 4096);
		} else if (strcmp(op, "read1") == 0 && i < argc) {
			do_read(argv[i++], 1);
		} else if (strcmp(op, "write") == 0 && i + 1 < argc) {
			do_write(argv[i], argv[i + 1], 0, 0);
			i += 2;
		} else if (strcmp(op, "writen") == 0 && i + 1 < argc) {
			do_write(argv[i], argv[i + 1], 0, 1);
			i += 2;
		} else if (strcmp(op, "pwrite") == 0 && i + 2 < argc) {
			do_write(argv[i], argv[i + 1], atol(argv[i + 2]), 0);
			i += 3;
		} else if (strcmp(op, "walk") == 0) {
			do_walk();
		} else if (strcmp(op, "sh") == 0 && i < argc) {
			fflush(stdout);
			int status = system(argv[i++]);
			if (status != 0)
				printf("sh status %d\n", status);
		} else {
			fprintf(stderr, "sysctl_io: bad operation at %s\n", op);
			return 2;
		}
	}
	return 0;
}
