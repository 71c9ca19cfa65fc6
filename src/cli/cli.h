/*
 * cli.h: what the command files share: argument parsing, exit codes,
 * the version string, and each command's entry point.  The commands and
 * their options are listed in one table, commands.c (see table.h).
 */
#ifndef ABISCOPE_CLI_H
#define ABISCOPE_CLI_H

#include "cli/render.h"
#include "cli/table.h"
#include "scan.h"

#define ABISCOPE_VERSION "0.1.0"

enum exit_code {
	EXIT_OK = 0,		/* it would load / nothing wrong */
	EXIT_FAILS = 1,		/* it would not load / something would fail */
	EXIT_USAGE = 2,		/* usage error */
	EXIT_UNREADABLE = 3,	/* a target could not be read */
};

/* The options every command shares (table.h's enum cli_common). */
struct common_opts {
	const char *root;		/* --root DIR */
	bool json;			/* --json */
	enum color_mode color;		/* --color WHEN */
	bool verbose;			/* -v, --verbose */
	const char *cwd;		/* --cwd DIR */
	uint64_t page_size;		/* --page-size N (0: not given) */
	int quiet;			/* -q: the report only (no progress line, no
					 * prompt); -qq: nothing on standard output */
};

/* The scan_where of the common options (--root, --cwd, --page-size). */
struct scan_where cli_where(const struct common_opts *c);

/*
 * The option parser, driven by the command's entry in the table
 * (commands.c): options may come anywhere, "--" ends them, --name=VALUE and
 * --name VALUE both work.  A command's parse loop:
 *
 *	struct args a;
 *	enum arg_kind k;
 *	args_init(&a, argc, argv, "check");
 *	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
 *		if (k == ARG_OPERAND)
 *			paths[n++] = a.value;
 *		else if (arg_is(&a, "--libraries"))
 *			...
 *		else if (arg_value(&a, "--python", &v, &err))
 *			...
 *	}
 *	if (k != ARG_END)
 *		return args_status(k);	// -1 after --help, else EXIT_USAGE
 *	... a.common.json, a.common.root ...
 *
 * args_next prints --help, rejects options the table does not list for the
 * command, and handles the common ones itself; an option the table lists
 * that the loop does not claim is reported (tests/e2e/cli_table.sh tries
 * every one).
 */
enum arg_kind {
	ARG_END,	/* no more arguments */
	ARG_OPTION,	/* a.opt is the option, a.value its value (NULL for a flag) */
	ARG_OPERAND,	/* a.value is the operand */
	ARG_HELP,	/* --help was given and printed */
	ARG_ERROR,	/* a usage error, printed */
};

struct args {
	int argc;
	char **argv;
	int i;				/* the argument args_next returned */
	bool no_more_options;
	const char *cmd;
	const struct cli_command *spec;
	const struct cli_option *opt;	/* after ARG_OPTION */
	const char *value;		/* after ARG_OPTION (with a value) and ARG_OPERAND */
	bool claimed;			/* the loop recognised a.opt */
	struct common_opts common;
};

void args_init(struct args *a, int argc, char **argv, const char *cmd);
enum arg_kind args_next(struct args *a);
/* What a parse function returns for a kind other than ARG_END. */
int args_status(enum arg_kind k);

/* True (and claimed) when the option args_next returned is NAME (its
 * name or alias); arg_value also gives its value.  *error is never set by
 * these two: it is there for the helpers below that validate values. */
bool arg_is(struct args *a, const char *name);
bool arg_value(struct args *a, const char *name, const char **value, bool *error);
/* --gpu SPEC (repeatable, at most max) and --driver VERSION, validated:
 * true when the option was one of them; *error after a usage message. */
bool arg_gpu_target(struct args *a, const char **gpus, size_t *ngpus, size_t max, const char **driver,
		    bool *error);
/* --fail-on error|warning: true (and claimed) when the option was it;
 * *on_warning says which, *error after a usage message. */
bool arg_fail_on(struct args *a, bool *on_warning, bool *error);
/* The exit status under --fail-on: code, but 1 in place of 0 when warnings
 * were reported and on_warning (said on stderr: JSON stays one document). */
int fail_on_status(const char *cmd, int code, bool on_warning, size_t nwarnings);
/* Prints "abiscope CMD: MSG" to stderr and returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses --color=auto|always|never. */
bool parse_color(const char *v, enum color_mode *out);

int cmd_why(int argc, char **argv);
int cmd_cuda(int argc, char **argv);
int cmd_gpu(int argc, char **argv);
int cmd_check(int argc, char **argv);

/* "loaded_by": the call of a package's import that loads a library itself
 * (pyenv/selfload.h), or null; check's JSON also says whether the call names
 * RTLD_GLOBAL (with_global), wheel's never has (cmd_check.c) */
struct self_load;
void json_loaded_by(struct jw *w, const struct self_load *sl, bool with_global);
int cmd_explain(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_wheel(int argc, char **argv);
int cmd_torch_compat(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_completion(int argc, char **argv);

/* docgen.c: what the table prints */
void cli_print_usage(FILE *out);					/* abiscope --help */
void cli_print_help(FILE *out, const struct cli_command *c);		/* abiscope CMD --help */

#endif
