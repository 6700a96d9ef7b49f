// SPDX-License-Identifier: Apache-2.0
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/fs.h>

/* Room for all of a regular file at once (plus one byte to see its end); a page otherwise. */
static size_t first_capacity(int fd, size_t max)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < max)
		return (size_t)st.st_size + 1;
	return 4096;
}

int sg_read_fd(int fd, const char *what, size_t max, char **out, size_t *len, struct sg_err *err)
{
	size_t cap = first_capacity(fd, max), used = 0;
	_cleanup_free_ char *buf = sg_xmalloc(cap);

	for (;;) {
		if (used == cap) {
			if (cap > max)
				return sg_input_error(err, "%s: larger than %zu bytes", what, max);
			cap *= 2;
			buf = sg_xrealloc(buf, cap, 1);
		}
		ssize_t n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sg_input_error(err, "%s: cannot read: %s", what, strerror(errno));
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > max)
			return sg_input_error(err, "%s: larger than %zu bytes", what, max);
	}
	buf = sg_xrealloc(buf, used + 1, 1);
	buf[used] = '\0';
	*len = used;
	*out = SG_TAKE(buf);
	return 0;
}

int sg_read_file(const char *path, size_t max, char **out, size_t *len, struct sg_err *err)
{
	if (strcmp(path, "-") == 0)
		return sg_read_fd(STDIN_FILENO, "stdin", max, out, len, err);

	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return sg_input_error(err, "%s: cannot open: %s", path, strerror(errno));
	return sg_read_fd(fd, path, max, out, len, err);
}

static void *check_alloc(void *p)
{
	if (!p) {
		fputs("sysctl-guard: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *sg_xmalloc(size_t size)
{
	return check_alloc(malloc(size ? size : 1));
}

void *sg_xcalloc(size_t n, size_t size)
{
	return check_alloc(calloc(n ? n : 1, size ? size : 1));
}

uint32_t *sg_order_by_key(size_t n, uint32_t n_keys, uint32_t (*key)(const void *arg, size_t i),
			  const void *arg)
{
	_cleanup_free_ uint32_t *start = sg_xcalloc((size_t)n_keys + 1, sizeof(*start));
	uint32_t *order = sg_xcalloc(n ? n : 1, sizeof(*order));

	for (size_t i = 0; i < n; i++)
		start[key(arg, i) + 1]++;
	for (uint32_t k = 1; k <= n_keys; k++)
		start[k] += start[k - 1];
	for (size_t i = 0; i < n; i++)
		order[start[key(arg, i)]++] = (uint32_t)i;
	return order;
}

void *sg_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size)
		check_alloc(NULL);
	size_t bytes = n * size;
	if (!p)
		return sg_xmalloc(bytes);
	return check_alloc(realloc(p, bytes ? bytes : 1));
}

char *sg_xstrdup(const char *s)
{
	return check_alloc(strdup(s));
}

char *sg_xstrndup(const char *s, size_t n)
{
	return check_alloc(strndup(s, n));
}

char *sg_xasprintf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return check_alloc(n < 0 ? NULL : s);
}

/* Through syscall(2): not every libc the binary may be linked with wraps renameat2. */
int sg_rename_exchange(const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}
