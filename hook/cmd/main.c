// SPDX-License-Identifier: Apache-2.0
/* Dispatches to a command; nothing else lives here. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/timing.h"
#include "cmd/cli.h"
#include "cmd/journal.h"
#include "sg_build.h"

static void print_help(FILE *out)
{
	fprintf(out, "Usage: sysctl-guard COMMAND [ARGS]\n\n"
		     "Confines what a container may read and write under /proc/sys with a\n"
		     "cgroup sysctl BPF program (Linux 5.2+, cgroup v2).\n\nCommands:\n");
	for (const struct sg_command *c = sg_commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->usage);
	fprintf(out, "\n  --version  print the version\n"
		     "  --help     this text; `sysctl-guard help COMMAND` for one command\n");
}

static int help_command(const char *name)
{
	const struct sg_command *c = sg_command_find(name);
	if (!c) {
		fprintf(stderr, "sysctl-guard: unknown command \"%s\"; see sysctl-guard --help\n",
			name);
		return SG_EXIT_INPUT;
	}
	printf("Usage: sysctl-guard %s %s\n\n%s", c->name, c->usage, c->help);
	return SG_EXIT_OK;
}

int main(int argc, char **argv)
{
	/*
	 * A runtime may start the hook with SIGCHLD ignored, which is inherited:
	 * then the kernel reaps children as they exit, and a pid the hook still
	 * holds for one (the probes, gc's removals) may name another process by
	 * the time it is waited for.
	 */
	signal(SIGCHLD, SIG_DFL);
	sg_timing_start();
	if (argc < 2) {
		print_help(stderr);
		return SG_EXIT_INPUT;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    (strcmp(cmd, "help") == 0 && argc == 2)) {
		print_help(stdout);
		return SG_EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		/* What this build can do beyond the rest: operators and tests ask. */
		printf("sysctl-guard %s (%cjournal)\n", SG_VERSION,
		       sg_journal_check(NULL) == 0 ? '+' : '-');
		return SG_EXIT_OK;
	}
	if (strcmp(cmd, "help") == 0)
		return help_command(argv[2]);

	const struct sg_command *c = sg_command_find(cmd);
	if (!c) {
		fprintf(stderr, "sysctl-guard: unknown command \"%s\"; see sysctl-guard --help\n",
			cmd);
		return SG_EXIT_INPUT;
	}
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return help_command(cmd);
	return c->run(argc - 1, argv + 1);
}
