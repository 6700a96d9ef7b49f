// SPDX-License-Identifier: Apache-2.0
#include "base/timing.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define MAX_MARKS 16

static struct {
	bool on;
	pid_t pid; /* forked children (probes, gc) inherit the exit handler: they stay quiet */
	struct timespec start;
	size_t n;
	const char *name[MAX_MARKS];
	struct timespec at[MAX_MARKS];
} timing;

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return sg_seconds_between(a, b) * 1e3;
}

static void report(void)
{
	struct timespec end;
	char line[512];
	size_t o = 0;

	if (getpid() != timing.pid)
		return;
	clock_gettime(CLOCK_MONOTONIC, &end);
	o += (size_t)snprintf(line + o, sizeof(line) - o, "sysctl-guard: timing:");
	for (size_t i = 0; i < timing.n && o < sizeof(line); i++)
		o += (size_t)snprintf(
		    line + o, sizeof(line) - o, " %s %.2f", timing.name[i],
		    ms_between(i ? &timing.at[i - 1] : &timing.start, &timing.at[i]));
	if (o < sizeof(line))
		snprintf(line + o, sizeof(line) - o, " exit %.2f ms\n",
			 ms_between(timing.n ? &timing.at[timing.n - 1] : &timing.start, &end));
	fputs(line, stderr);
}

void sg_timing_start(void)
{
	const char *v = getenv("SYSCTL_GUARD_TIMING");

	timing.on = v && strcmp(v, "1") == 0;
	if (!timing.on)
		return;
	timing.pid = getpid();
	clock_gettime(CLOCK_MONOTONIC, &timing.start);
	atexit(report);
}

void sg_timing_mark(const char *name)
{
	if (!timing.on || timing.n == MAX_MARKS)
		return;
	timing.name[timing.n] = name;
	clock_gettime(CLOCK_MONOTONIC, &timing.at[timing.n++]);
}
