// SPDX-License-Identifier: Apache-2.0
#include "cmd/every.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "cmd/cli.h"

/*
 * The signals are blocked and waited for: as a container's pid 1 the
 * process gets none it has not asked for, and a wait that a signal ends
 * ends the loop at once.
 */
int sg_every(unsigned seconds, const char *what, void (*run)(void *arg), void *arg)
{
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	for (;;) {
		run(arg);
		fflush(stdout);
		struct timespec wait = {.tv_sec = seconds};
		int sig = sigtimedwait(&stop, NULL, &wait);
		if (sig > 0) {
			printf("%s: stopping on %s\n", what, sig == SIGTERM ? "SIGTERM" : "SIGINT");
			return SG_EXIT_OK;
		}
	}
}
