// SPDX-License-Identifier: Apache-2.0
/*
 * The floor of a new policy on this machine: what no hook can skip, without
 * anything the hook adds. Reads a policy file and visits each of its bytes
 * once, as any JSON reader must (finding where every string ends and
 * counting the tokens between), and makes and fills mappable BPF arrays of
 * the given total size, as many as a policy has, through 128 KiB windows (as
 * tables.c fills them):
 *
 *   floor POLICY.json KERNEL_BYTES
 *
 * No JSON tree, no rules, no compiling, no hashing, no pins. Exit status 0,
 * or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { MAPS = 5, WINDOW = 128 << 10, PAGE = 4096, VALUE_SIZE = 8 };

/*
 * The tokens of JSON text @t: strings, and the punctuation that starts or
 * separates values. A byte at a time, without checking anything.
 */
static size_t count_tokens(const unsigned char *t, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i] == '"') {
			for (i++; i < n && t[i] != '"'; i++)
				i += t[i] == '\\';
			count++;
		} else if (t[i] == '{' || t[i] == '[' || t[i] == ',' || t[i] == ':') {
			count++;
		}
	}
	return count;
}

static int fail(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	return 1;
}

static int lex(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return fail(path);
	unsigned char *text = malloc((size_t)st.st_size + 1);
	if (!text || read(fd, text, (size_t)st.st_size) != st.st_size)
		return fail(path);
	close(fd);
	size_t tokens = count_tokens(text, (size_t)st.st_size);
	free(text);
	if (tokens == 0) {
		fprintf(stderr, "floor: %s: no JSON tokens\n", path);
		return 1;
	}
	return 0;
}

/* A mappable array of @bytes, filled a window at a time, as the hook fills its tables. */
static int make_and_fill(size_t bytes)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = VALUE_SIZE;
	attr.max_entries = (unsigned)(bytes / VALUE_SIZE);
	attr.map_flags = BPF_F_MMAPABLE;
	int fd = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return fail("BPF_MAP_CREATE");
	for (size_t off = 0; off < bytes; off += WINDOW) {
		size_t len = bytes - off < WINDOW ? bytes - off : WINDOW;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		if (p == MAP_FAILED)
			return fail("mmap");
		memset(p, 1, len);
		munmap(p, len);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: floor POLICY.json KERNEL_BYTES\n");
		return 1;
	}
	size_t per_map = (size_t)strtoull(argv[2], NULL, 10) / MAPS / PAGE * PAGE;
	if (lex(argv[1]))
		return 1;
	for (int i = 0; i < MAPS; i++)
		if (make_and_fill(per_map ? per_map : WINDOW))
			return 1;
	return 0;
}
