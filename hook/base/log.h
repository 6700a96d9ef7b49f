/* SPDX-License-Identifier: Apache-2.0 */
/* Messages to stderr and, for the hook, to syslog, tagged with the short container id. */
#ifndef SG_LOG_H
#define SG_LOG_H

#include <stdbool.h>

enum sg_log_level {
	SG_LOG_ERROR,
	SG_LOG_WARNING,
	SG_LOG_INFO,
	SG_LOG_DEBUG,
};

/* @to_syslog: also send to syslog (the hook); @tag e.g. "container 4f2a9c1b". */
void sg_log_setup(bool to_syslog, bool debug);
void sg_log_set_tag(const char *tag);
void sg_log(enum sg_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sg_error(...)	sg_log(SG_LOG_ERROR, __VA_ARGS__)
#define sg_warning(...) sg_log(SG_LOG_WARNING, __VA_ARGS__)
#define sg_info(...)	sg_log(SG_LOG_INFO, __VA_ARGS__)
#define sg_debug(...)	sg_log(SG_LOG_DEBUG, __VA_ARGS__)

#endif
