// SPDX-License-Identifier: Apache-2.0
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

#include "bigmem.h"
#include "siphash.h"
#include "spare.h"

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
	if (cap >= SG_SPARE_MIN) /* a large file: read into it whole, below */
		(void)sg_populate(buf, cap);

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

/* Large blocks come from those kept (spare.h) when one fits. */
void *sg_xmalloc(size_t size)
{
	void *p = sg_spare_take(size);
	return p ? p : check_alloc(malloc(size ? size : 1));
}

void *sg_xcalloc(size_t n, size_t size)
{
	void *p = n && size && n <= (size_t)-1 / size ? sg_spare_take(n * size) : NULL;
	if (p)
		return memset(p, 0, n * size);
	return check_alloc(calloc(n ? n : 1, size ? size : 1));
}

/* Zeroed once, by the memset that writes the pages: calloc would zero a heap chunk first. */
void *sg_xcalloc_probed(size_t n, size_t size)
{
	n = n ? n : 1;
	size = size ? size : 1;
	if (n > (size_t)-1 / size)
		check_alloc(NULL);
	return memset(sg_xmalloc(n * size), 0, n * size);
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

void *sg_xmap(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return check_alloc(p == MAP_FAILED ? NULL : p);
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

uint64_t sg_table_hash(const char *s, size_t len)
{
	static uint64_t key[2];
	static bool keyed;
	struct sg_siphash h;

	/* Without the kernel's randomness (early boot), some: nothing blocks on it. */
	if (!keyed && getrandom(key, sizeof(key), GRND_NONBLOCK) != sizeof(key)) {
		key[0] = (uint64_t)(uintptr_t)&key ^ (uint64_t)getpid();
		key[1] = (uint64_t)time(NULL);
	}
	keyed = true;
	sg_siphash_init(&h, key);
	sg_siphash_update(&h, s, len);
	return sg_siphash_final(&h);
}

/* Through syscall(2): not every libc the binary may be linked with wraps renameat2. */
int sg_rename_exchange(const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}
