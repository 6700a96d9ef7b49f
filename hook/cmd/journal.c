// SPDX-License-Identifier: Apache-2.0
#include "cmd/journal.h"

#include <errno.h>

#include "sg_build.h"

#ifdef SG_HAVE_JOURNAL
#include <stdio.h>

#include <systemd/sd-journal.h>

int sg_journal_check(struct sg_err *err)
{
	(void)err;
	return 0;
}

/* Field names as journalctl matches them: `journalctl SYSCTL=kernel.domainname`. */
int sg_journal_send(const struct sg_journal_entry *e)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%u", e->pid);
	return sd_journal_send(
	    "MESSAGE=%s", e->message, "PRIORITY=%d", e->priority, "SYSLOG_IDENTIFIER=sysctl-guard",
	    "CONTAINER_ID=%s", e->container_id ? e->container_id : "", "SYSCTL=%s", e->sysctl,
	    "ACCESS=%s", e->access, "VERDICT=%s", e->verdict, "RULE=%s", e->rule ? e->rule : "",
	    "REASON=%s", e->reason ? e->reason : "", "VALUE=%s", e->value ? e->value : "",
	    "NEW_VALUE=%s", e->new_value ? e->new_value : "", "HOST_NAMESPACE=%s",
	    e->host_namespace ? e->host_namespace : "", "TASK_COMM=%s", e->comm ? e->comm : "",
	    "TASK_PID=%s", pid, NULL);
}
#else
int sg_journal_check(struct sg_err *err)
{
	if (!err)
		return -ENOTSUP;
	return sg_system_error(err, ENOTSUP,
			       "this build of sysctl-guard has no journal support (it is linked "
			       "without libsystemd, as the static binary is): use --syslog, or the "
			       "build of the Debian package");
}

int sg_journal_send(const struct sg_journal_entry *e)
{
	(void)e;
	return -ENOTSUP;
}
#endif
