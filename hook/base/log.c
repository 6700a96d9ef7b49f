// SPDX-License-Identifier: Apache-2.0
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

static bool use_syslog;
static bool debug_enabled;
static char tag[96];

void sg_log_setup(bool to_syslog, bool debug)
{
	use_syslog = to_syslog;
	debug_enabled = debug;
	if (use_syslog)
		openlog("sysctl-guard", LOG_PID, LOG_DAEMON);
}

void sg_log_set_tag(const char *t)
{
	snprintf(tag, sizeof(tag), "%s", t ? t : "");
}

void sg_log(enum sg_log_level level, const char *fmt, ...)
{
	static const int priorities[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
	static const char *const labels[] = {"error: ", "warning: ", "", ""};
	char msg[2048];
	va_list ap;

	if (level == SG_LOG_DEBUG && !debug_enabled)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	/* The hook is quiet on success: info goes to syslog only. */
	if (level <= SG_LOG_WARNING || !use_syslog)
		fprintf(stderr, "sysctl-guard: %s%s%s%s\n", tag, tag[0] ? ": " : "", labels[level],
			msg);
	if (use_syslog)
		syslog(priorities[level], "%s%s%s", tag, tag[0] ? ": " : "", msg);
}
