/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `monitor --journal`: each event as a journal entry with fields of its own,
 * through libsystemd. A build without libsystemd (the static one: libsystemd
 * ships no static archive) has none, and says so.
 */
#ifndef SG_JOURNAL_H
#define SG_JOURNAL_H

#include <stdbool.h>

#include "base/err.h"

/* One decision, as monitor shows it; NULL fields are left out. */
struct sg_journal_entry {
	const char *message; /* the line `monitor` prints */
	int priority;	     /* syslog's: LOG_WARNING for a denial */
	const char *container_id;
	const char *sysctl; /* dotted */
	const char *access; /* read or write */
	const char *verdict;
	const char *rule;
	const char *reason;
	const char *value;	    /* written */
	const char *new_value;	    /* stored instead, after a rewrite */
	const char *host_namespace; /* a write denied for reaching the host's namespace */
	const char *comm;
	unsigned pid;
};

/*
 * 0 when this build can write to the journal, else -ENOTSUP and (@err not
 * NULL) a system error saying what to use instead.
 */
int sg_journal_check(struct sg_err *err);

/* Sends @e; -errno when the journal did not take it. */
int sg_journal_send(const struct sg_journal_entry *e);

#endif
