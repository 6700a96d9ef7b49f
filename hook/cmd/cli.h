/* SPDX-License-Identifier: Apache-2.0 */
/* The commands. Each returns the process exit status (err.h's enum sg_exit). */
#ifndef SG_CLI_H
#define SG_CLI_H

#include <stdbool.h>

#include "base/err.h"

struct sg_command {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	const char *usage;		   /* one line: arguments */
	const char *help;		   /* what it does, options */
};

/* NULL-terminated table, in the order --help lists them. */
extern const struct sg_command sg_commands[];

const struct sg_command *sg_command_find(const char *name);

int sg_cmd_hook(int argc, char **argv);
int sg_cmd_check(int argc, char **argv);
int sg_cmd_explain(int argc, char **argv);
int sg_cmd_profiles(int argc, char **argv);
int sg_cmd_attach(int argc, char **argv);
int sg_cmd_detach(int argc, char **argv);
int sg_cmd_status(int argc, char **argv);
int sg_cmd_metrics(int argc, char **argv);
int sg_cmd_gc(int argc, char **argv);
int sg_cmd_preload(int argc, char **argv);
int sg_cmd_monitor(int argc, char **argv);
int sg_cmd_learn(int argc, char **argv);
int sg_cmd_install(int argc, char **argv);

/*
 * Parses a command's one option, --config FILE, and loads that node config
 * (the default one without it). Returns SG_EXIT_OK with optind at the first
 * operand, or the exit status after a message.
 */
struct sg_node_config;
int sg_load_config_option(const char *command, int argc, char **argv,
			  struct sg_node_config *config);

/* Prints @err's message on stderr; returns the exit status it calls for. */
int sg_report(const struct sg_err *err);

/* Whether @text is a decimal number of at most @max, digits only; then *@out is it. */
bool sg_parse_number(const char *text, unsigned long long max, unsigned long long *out);

/* Prints an error (and says "see --help") and returns SG_EXIT_INPUT. */
int sg_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
