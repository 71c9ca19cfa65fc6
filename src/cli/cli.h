/*
 * cli.h: what the command files share: argument scanning, exit codes,
 * the version string, and each command's entry point.
 */
#ifndef ABISCOPE_CLI_H
#define ABISCOPE_CLI_H

#include "cli/render.h"

#define ABISCOPE_VERSION "0.1.0"

enum exit_code {
	EXIT_OK = 0,		/* it would load / nothing wrong */
	EXIT_FAILS = 1,		/* it would not load / something would fail */
	EXIT_USAGE = 2,		/* usage error */
	EXIT_UNREADABLE = 3,	/* a target could not be read */
};

/* Argument cursor: options may come anywhere; "--" ends them. */
struct args {
	int argc;
	char **argv;
	int i;
	bool no_more_options;
	const char *cmd;
};

/* True when argv[i] is --name (or --name=...); for value options the value
 * is taken from "=..." or from the next argument.  Prints usage errors. */
bool arg_is(struct args *a, const char *name);
bool arg_value(struct args *a, const char *name, const char **value, bool *error);
/* --gpu SPEC (repeatable, at most max) and --driver VERSION, validated:
 * true when argv[i] was one of them; *error after a usage message. */
bool arg_gpu_target(struct args *a, const char **gpus, size_t *ngpus, size_t max, const char **driver,
		    bool *error);
/* Prints "abiscope CMD: MSG" to stderr and returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses --color=auto|always|never. */
bool parse_color(const char *v, enum color_mode *out);

int cmd_why(int argc, char **argv);
int cmd_cuda(int argc, char **argv);
int cmd_gpu(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_wheel(int argc, char **argv);

#endif
