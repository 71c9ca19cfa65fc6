/*
 * table.h: the one table of commands and options (src/cli/commands.c).
 *
 * It drives the option parser (args_next in args.c), --help, the man pages,
 * the bash and zsh completion and the README's synopses (docgen.c), so none
 * of them can disagree with what the parser accepts.
 *
 * To add an option: add a line to the command's options in commands.c and a
 * branch for it in the command's parse loop (arg_is / arg_value).  To add a
 * command: add its entry to cli_commands[] and its cmd_NAME function.
 * tests/e2e/cli_table.sh passes every option of the table to its command and
 * fails when one is listed but not handled.
 */
#ifndef ABISCOPE_CLI_TABLE_H
#define ABISCOPE_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>

enum cli_option_flags {
	OPT_REPEAT = 1u << 0,	/* may be given more than once */
};

/* One option.  The texts are plain: no markup, no line breaks (they are
 * wrapped for --help and escaped for roff and zsh). */
struct cli_option {
	const char *name;	/* "--gpu" */
	const char *alias;	/* "-o", or NULL */
	const char *value;	/* the value's name ("SPEC"), NULL for a flag */
	unsigned flags;		/* enum cli_option_flags */
	const char *complete;	/* the value's completion: "file", "dir", "command",
				 * or words separated by spaces; NULL: none */
	const char *help;
};

/* The options every command shares, parsed by args_next itself into
 * struct common_opts; a command names those it takes in `common`. */
enum cli_common {
	COMMON_ROOT = 1u << 0,		/* --root DIR */
	COMMON_JSON = 1u << 1,		/* --json */
	COMMON_COLOR = 1u << 2,		/* --color WHEN */
	COMMON_VERBOSE = 1u << 3,	/* -v, --verbose */
	COMMON_QUIET = 1u << 6,		/* -q, --quiet (-qq) */
	COMMON_ALL = COMMON_ROOT | COMMON_JSON | COMMON_COLOR | COMMON_VERBOSE | COMMON_QUIET,
	/* the inspected processes' working directory and machine (scan_where) */
	COMMON_CWD = 1u << 4,		/* --cwd DIR */
	COMMON_PAGE_SIZE = 1u << 5,	/* --page-size N */
	COMMON_WHERE = COMMON_CWD | COMMON_PAGE_SIZE,
};

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;		/* one line, lower case, no full stop */
	const char *operands;		/* "[PATH...]", "TARGET", "" */
	const char *operand_complete;	/* completion of operands (as cli_option.complete) */
	/* Paragraphs separated by blank lines, wrapped at 80 columns; a line
	 * that starts with two spaces is shown as it is (an example). */
	const char *description;
	const struct cli_option *options;	/* ends with an entry whose name is NULL */
	unsigned common;			/* enum cli_common */
	/* The command's own words for a common option; NULL: the shared text */
	const char *root_help, *json_help, *color_help, *verbose_help;
	/* Examples, one a line: the command line, a tab, what it does */
	const char *examples;
	const char *exit_status;	/* "0 ..., 1 ..., 2 usage error" */
	bool options_end_at_operand;	/* the first operand ends the options (explain) */
};

extern const struct cli_command cli_commands[];
extern const size_t cli_ncommands;

/* The command of that name, or NULL. */
const struct cli_command *cli_command_named(const char *name);

/* The candidate a mistyped word most likely meant (a small edit away, or
 * the one candidate it begins), or NULL: "chek" -> "check". */
const char *cli_similar(const char *word, size_t len, const char *const *candidates, size_t n);

/* Every option of c in the order --help lists them: its own, then the
 * common ones it takes (with its own words for them), then --help.
 * Writes at most max into out and returns how many there are. */
size_t cli_options_of(const struct cli_command *c, struct cli_option *out, size_t max);

#endif
