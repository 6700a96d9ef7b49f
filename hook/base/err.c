// SPDX-License-Identifier: Apache-2.0
#include "base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The first error wins; @unsupported: the kind on_unsupported may let pass. */
static int set_error(struct sg_err *err, int code, enum sg_exit status, bool unsupported,
		     const char *fmt, va_list ap)
{
	if (err && !sg_err_is_set(err)) {
		err->code = code;
		err->status = status;
		err->unsupported = unsupported;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return -code;
}

int sg_input_error(struct sg_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = set_error(err, EINVAL, SG_EXIT_INPUT, false, fmt, ap);
	va_end(ap);
	return ret;
}

int sg_system_error(struct sg_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = set_error(err, code > 0 ? code : EIO, SG_EXIT_SYSTEM, false, fmt, ap);
	va_end(ap);
	return ret;
}

int sg_unsupported_error(struct sg_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = set_error(err, code > 0 ? code : EIO, SG_EXIT_SYSTEM, true, fmt, ap);
	va_end(ap);
	return ret;
}

int sg_kernel_error(struct sg_err *err, int code, const char *fmt, ...)
{
	bool lacks = code == EINVAL || code == EACCES || code == EPERM || code == ENOSYS ||
		     code == EOPNOTSUPP || code == ENODEV;
	va_list ap;
	va_start(ap, fmt);
	int ret = set_error(err, code > 0 ? code : EIO, SG_EXIT_SYSTEM, lacks, fmt, ap);
	va_end(ap);
	return ret;
}

void sg_err_prefix(struct sg_err *err, const char *fmt, ...)
{
	char prefix[256], old[sizeof(err->msg)];
	va_list ap;

	if (!err || !sg_err_is_set(err))
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	size_t n = strlen(prefix);
	if (n + 2 >= sizeof(err->msg))
		return;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	/* Truncation keeps the prefix: it says where the root cause was met. */
	strncpy(err->msg + n + 2, old, sizeof(err->msg) - n - 3);
	err->msg[sizeof(err->msg) - 1] = '\0';
}
