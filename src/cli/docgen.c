/*
 * docgen.c: everything printed from the command table (table.h): the
 * usage and --help texts, `abiscope help --man` (roff), `--synopsis` (the
 * README's), and `abiscope completion bash|zsh`.
 */
#include "cli/cli.h"

#define WIDTH 79		/* --help is wrapped to this */
#define SYNOPSIS_WIDTH 96	/* the README's synopses */
#define MAX_OPTIONS 64
/* every command: a report that does not reach stdout is no answer (main.c) */
#define REPORT_LOST "; 3 also when the report could not be written (a full disk, a closed pipe)"

/* ---- plain text ---- */

/* Prints words of text from column col, wrapping at WIDTH to column indent. */
static void wrap(FILE *out, const char *text, size_t col, size_t indent)
{
	const char *p = text;
	bool first = true;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		size_t n = (size_t)(e - p);
		if (!n)
			break;
		if (!first && col + 1 + n > WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)n, p);
		col += n;
		first = false;
		p = e;
	}
	fputc('\n', out);
}

static size_t label_len(const struct cli_option *o)
{
	size_t n = strlen(o->name) + (o->alias ? strlen(o->alias) + 2 : 0);
	return n + (o->value ? strlen(o->value) + 1 : 0);
}

static void print_label(FILE *out, const struct cli_option *o)
{
	if (o->alias)
		fprintf(out, "%s, ", o->alias);
	fputs(o->name, out);
	if (o->value)
		fprintf(out, " %s", o->value);
}

/* abiscope(1)'s and `abiscope --help`'s examples: the command line, what it does */
static const char *const top_examples[][2] = {
	{ "abiscope check", "would every extension module of the active environment import" },
	{ "abiscope explain < traceback.txt", "the root cause of a pasted ImportError, and the fix" },
	{ "abiscope wheel flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl", "would it install and import here" },
	{ "abiscope check --junit report.xml --fail-on warning", "in CI" },
};

void cli_print_usage(FILE *out)
{
	fprintf(out, "usage: abiscope COMMAND [options] ...\n\n"
		     "abiscope reads shared objects, CUDA fatbins and Python environments without\n"
		     "loading or running them, and predicts what the dynamic loader will do.\n\n"
		     "commands:\n");
	for (size_t i = 0; i < cli_ncommands; i++)
		fprintf(out, "  %-11s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fputs("\nexamples:\n", out);
	for (size_t i = 0; i < ARRAY_SIZE(top_examples); i++)
		fprintf(out, "  %s\n      %s\n", top_examples[i][0], top_examples[i][1]);
	fprintf(out, "\n'abiscope COMMAND --help' describes a command; 'abiscope --version' (-V) prints the version.\n"
		     "The options every command takes (-q, -v, --json, --color) may also come before COMMAND.\n");
}

void cli_print_help(FILE *out, const struct cli_command *c)
{
	struct cli_option opts[MAX_OPTIONS];
	size_t n = cli_options_of(c, opts, MAX_OPTIONS);
	if (n > MAX_OPTIONS)
		n = MAX_OPTIONS;
	fprintf(out, "usage: abiscope %s [options]%s%s\n\n%s\n\noptions:\n", c->name, *c->operands ? " " : "",
		c->operands, c->description);
	size_t widest = 0;
	for (size_t i = 0; i < n; i++)
		if (label_len(&opts[i]) > widest && label_len(&opts[i]) <= 22)
			widest = label_len(&opts[i]);
	size_t col = 2 + widest + 2;
	for (size_t i = 0; i < n; i++) {
		fputs("  ", out);
		print_label(out, &opts[i]);
		size_t len = 2 + label_len(&opts[i]);
		if (len + 1 > col)
			fprintf(out, "\n%*s", (int)col, "");
		else
			fprintf(out, "%*s", (int)(col - len), "");
		wrap(out, opts[i].help, col, col);
	}
	if (c->examples) {
		fputs("\nexamples:\n", out);
		for (const char *p = c->examples; *p;) {
			const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
			if (!tab || !nl || tab > nl)
				break;
			fprintf(out, "  %.*s\n      ", (int)(tab - p), p);
			char what[512];
			snprintf(what, sizeof what, "%.*s", (int)(nl - tab - 1), tab + 1);
			wrap(out, what, 6, 6);
			p = nl + 1;
		}
	}
	fputs("\nexit status: ", out);
	char status[1024];
	snprintf(status, sizeof status, "%s%s", c->exit_status, REPORT_LOST);
	wrap(out, status, strlen("exit status: "), 0);
}

/* The synopsis, wrapped for the README: "abiscope why [--process EXE] ... TARGET" */
static void print_synopsis(FILE *out, const struct cli_command *c)
{
	struct cli_option opts[MAX_OPTIONS];
	size_t n = cli_options_of(c, opts, MAX_OPTIONS);
	n = (n > MAX_OPTIONS ? MAX_OPTIONS : n) - 1;	/* not --help */
	size_t indent = strlen("abiscope ") + strlen(c->name) + 1;
	size_t col = indent - 1;
	fprintf(out, "abiscope %s", c->name);
	for (size_t i = 0; i <= n; i++) {
		char item[160];
		if (i < n)
			snprintf(item, sizeof item, "[%s%s%s]%s", opts[i].alias ? opts[i].alias : opts[i].name,
				 opts[i].value ? " " : "", opts[i].value ? opts[i].value : "",
				 opts[i].flags & OPT_REPEAT ? "..." : "");
		else
			snprintf(item, sizeof item, "%s", c->operands);
		size_t len = strlen(item);
		if (!len)
			continue;
		if (col + 1 + len > SYNOPSIS_WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else {
			fputc(' ', out);
			col++;
		}
		fputs(item, out);
		col += len;
	}
	fputc('\n', out);
}

/* ---- roff ---- */

/* Text with roff's special characters escaped; dashes of options as \-. */
static void roff(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '\\')
			fputs("\\e", out);
		else if (s[i] == '-')
			fputs("\\-", out);
		else if ((s[i] == '.' || s[i] == '\'') && (i == 0 || s[i - 1] == '\n'))
			fputs("\\&", out), fputc(s[i], out);
		else
			fputc(s[i], out);
	}
}

static void roff_str(FILE *out, const char *s)
{
	roff(out, s, strlen(s));
}

/* Paragraphs of a description: lines joined, examples (two spaces) kept. */
static void roff_paragraphs(FILE *out, const char *text)
{
	const char *p = text;
	bool in_example = false;
	fputs(".PP\n", out);
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		bool example = n > 2 && p[0] == ' ' && p[1] == ' ';
		if (example && !in_example)
			fputs(".RS\n.nf\n", out);
		else if (!example && in_example)
			fputs(".fi\n.RE\n", out);
		in_example = example;
		if (n == 0)
			fputs(".PP\n", out);
		else {
			roff(out, example ? p + 2 : p, example ? n - 2 : n);
			fputc('\n', out);
		}
		p += n + (e ? 1 : 0);
	}
	if (in_example)
		fputs(".fi\n.RE\n", out);
}

static void roff_option(FILE *out, const struct cli_option *o)
{
	fputs(".TP\n", out);
	if (o->alias) {
		fputs("\\fB", out);
		roff_str(out, o->alias);
		fputs("\\fR, ", out);
	}
	fputs("\\fB", out);
	roff_str(out, o->name);
	fputs("\\fR", out);
	if (o->value) {
		fputs(" \\fI", out);
		roff_str(out, o->value);
		fputs("\\fR", out);
	}
	fputc('\n', out);
	roff_str(out, o->help);
	fputc('\n', out);
}

static void man_header(FILE *out, const char *name, const char *summary)
{
	char upper[64];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof upper; i++)
		upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
	upper[i] = '\0';
	fputs(".\\\" Generated by abiscope help --man from src/cli/commands.c; do not edit.\n", out);
	fprintf(out, ".TH %s 1 \"\" \"abiscope %s\" \"User Commands\"\n.SH NAME\n", upper, ABISCOPE_VERSION);
	roff_str(out, name);
	fputs(" \\- ", out);
	roff_str(out, summary);
	fputc('\n', out);
}

static void man_command(FILE *out, const struct cli_command *c)
{
	char name[64];
	snprintf(name, sizeof name, "abiscope-%s", c->name);
	man_header(out, name, c->summary);
	fputs(".SH SYNOPSIS\n.B abiscope ", out);
	roff_str(out, c->name);
	fputc('\n', out);
	struct cli_option opts[MAX_OPTIONS];
	size_t n = cli_options_of(c, opts, MAX_OPTIONS);
	n = n > MAX_OPTIONS ? MAX_OPTIONS : n;
	for (size_t i = 0; i + 1 < n; i++) {
		fputs("[\\fB", out);
		roff_str(out, opts[i].alias ? opts[i].alias : opts[i].name);
		fputs("\\fR", out);
		if (opts[i].value) {
			fputs(" \\fI", out);
			roff_str(out, opts[i].value);
			fputs("\\fR", out);
		}
		fputs(opts[i].flags & OPT_REPEAT ? "]...\n" : "]\n", out);
	}
	if (*c->operands) {
		roff_str(out, c->operands);
		fputc('\n', out);
	}
	fputs(".SH DESCRIPTION\n", out);
	roff_paragraphs(out, c->description);
	fputs(".SH OPTIONS\n", out);
	for (size_t i = 0; i < n; i++)
		roff_option(out, &opts[i]);
	if (c->examples) {
		fputs(".SH EXAMPLES\n", out);
		for (const char *p = c->examples; *p;) {
			const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
			if (!tab || !nl || tab > nl)
				break;
			fputs(".TP\n.B ", out);
			roff(out, p, (size_t)(tab - p));
			fputc('\n', out);
			roff(out, tab + 1, (size_t)(nl - tab - 1));
			fputc('\n', out);
			p = nl + 1;
		}
	}
	fputs(".SH \"EXIT STATUS\"\n", out);
	roff_str(out, c->exit_status);
	roff_str(out, REPORT_LOST);
	fputs("\n.SH \"SEE ALSO\"\n\\fBabiscope\\fR(1)\n", out);
}

static void man_abiscope(FILE *out)
{
	man_header(out, "abiscope", "why native code in a Python environment will not load or run");
	fputs(".SH SYNOPSIS\n.B abiscope\n\\fICOMMAND\\fR [\\fIoptions\\fR] ...\n.br\n"
	      ".B abiscope \\-\\-version\\fR|\\fB\\-V\n.SH DESCRIPTION\n", out);
	roff_paragraphs(out, "abiscope reads shared objects, CUDA fatbins, Python package metadata, wheels and\n"
		"host snapshots without importing, loading or running them, predicts what glibc's\n"
		"dynamic loader, Python's import and the CUDA driver will do, and explains the\n"
		"root cause with the fix.");
	fputs(".SH COMMANDS\n", out);
	for (size_t i = 0; i < cli_ncommands; i++) {
		fputs(".TP\n\\fB", out);
		roff_str(out, cli_commands[i].name);
		fputs("\\fR\n", out);
		roff_str(out, cli_commands[i].summary);
		fputs("; see \\fBabiscope\\-", out);
		roff_str(out, cli_commands[i].name);
		fputs("\\fR(1).\n", out);
	}
	fputs(".SH \"COMMON OPTIONS\"\nMost commands take these; each command's page says which.\n", out);
	static const struct cli_command all = { .name = "", .description = "", .options = NULL,
						.common = COMMON_ALL };
	struct cli_option opts[8];
	size_t n = cli_options_of(&all, opts, ARRAY_SIZE(opts));
	for (size_t i = 0; i < n && i < ARRAY_SIZE(opts); i++)
		roff_option(out, &opts[i]);
	fputs(".SH EXAMPLES\n", out);
	for (size_t i = 0; i < ARRAY_SIZE(top_examples); i++) {
		fputs(".TP\n.B ", out);
		roff_str(out, top_examples[i][0]);
		fputc('\n', out);
		roff_str(out, top_examples[i][1]);
		fputc('\n', out);
	}
	fputs(".SH ENVIRONMENT\n"
	      ".TP\n.B NO_COLOR\nno colour, unless \\-\\-color=always (it wins over the two below)\n"
	      ".TP\n.B FORCE_COLOR\\fR, \\fBCLICOLOR_FORCE\ncolour also when the output is not a terminal (a CI log), unless "
	      "\\-\\-color=never; CLICOLOR_FORCE=0 does not force\n"
	      ".TP\n.B TERM\n\\fBdumb\\fR: no colour with \\-\\-color=auto\n"
	      ".TP\n.B VIRTUAL_ENV\\fR, \\fBCONDA_PREFIX\\fR, \\fBPATH\n"
	      "the environment checked when none is given: the venv, the conda environment, the python3 on PATH\n"
	      ".TP\n.B LD_LIBRARY_PATH\\fR, \\fBLD_BIND_NOW\n"
	      "the loader's, unless \\-\\-ld\\-library\\-path gives the list (not read with \\-\\-root)\n"
	      ".TP\n.B CUDA_HOME\nthe CUDA toolkit, for \\-\\-assume\\-driver and the JIT toolkits\n"
	      ".SH \"EXIT STATUS\"\n"
	      "0 nothing would fail, 1 something would fail, 2 usage error, 3 an input could not be read or "
	      "the report could not be written (a full disk, a closed pipe); "
	      "each command's page has the details.\n.SH \"SEE ALSO\"\n", out);
	for (size_t i = 0; i < cli_ncommands; i++)
		fprintf(out, "\\fBabiscope\\-%s\\fR(1)%s\n", cli_commands[i].name, i + 1 < cli_ncommands ? "," : "");
}

/* ---- completion ---- */

static void bash_words(FILE *out, const struct cli_command *c)
{
	struct cli_option opts[MAX_OPTIONS];
	size_t n = cli_options_of(c, opts, MAX_OPTIONS);
	n = n > MAX_OPTIONS ? MAX_OPTIONS : n;
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s%s%s", i ? " " : "", opts[i].name, opts[i].alias ? " " : "",
			opts[i].alias ? opts[i].alias : "");
}

/* The compgen arguments that complete a value of this kind. */
static void bash_compgen(FILE *out, const char *complete)
{
	if (!complete)
		fputs("return 0", out);
	else if (str_eq(complete, "file"))
		fputs("COMPREPLY=($(compgen -f -P \"$pre\" -- \"$cur\"))", out);
	else if (str_eq(complete, "dir"))
		fputs("COMPREPLY=($(compgen -d -P \"$pre\" -- \"$cur\"))", out);
	else if (str_eq(complete, "command"))
		fputs("COMPREPLY=($(compgen -c -P \"$pre\" -- \"$cur\"))", out);
	else if (str_eq(complete, "commands"))
		fputs("COMPREPLY=($(compgen -W \"$_abiscope_commands\" -- \"$cur\"))", out);
	else
		fprintf(out, "COMPREPLY=($(compgen -W \"%s\" -P \"$pre\" -- \"$cur\"))", complete);
}

static void bash_completion(FILE *out)
{
	fputs("# bash completion for abiscope; generated by `abiscope completion bash` from\n"
	      "# src/cli/commands.c. Install: make install, or eval \"$(abiscope completion bash)\".\n"
	      "_abiscope_commands=\"", out);
	for (size_t i = 0; i < cli_ncommands; i++)
		fprintf(out, "%s%s", i ? " " : "", cli_commands[i].name);
	fputs("\"\n_abiscope() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} pre=\n"
	      "\tCOMPREPLY=()\n"
	      "\t# --option=VALUE: one word (COMP_WORDBREAKS without =), or three: --option = VALUE\n"
	      "\tif [[ $cur == --*=* ]]; then\n"
	      "\t\tprev=${cur%%=*} pre=${cur%%=*}= cur=${cur#*=}\n"
	      "\telif [ \"$cur\" = = ] && [[ $prev == --* ]]; then\n"
	      "\t\tcur=\n"
	      "\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -ge 3 ]; then\n"
	      "\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n"
	      "\tfi\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$_abiscope_commands --help --version\" -- \"$cur\"))\n"
	      "\t\treturn 0\n\tfi\n"
	      "\tcase ${COMP_WORDS[1]} in\n", out);
	for (size_t i = 0; i < cli_ncommands; i++) {
		const struct cli_command *c = &cli_commands[i];
		struct cli_option opts[MAX_OPTIONS];
		size_t n = cli_options_of(c, opts, MAX_OPTIONS);
		n = n > MAX_OPTIONS ? MAX_OPTIONS : n;
		fprintf(out, "\t%s)\n\t\tcase $prev in\n", c->name);
		for (size_t k = 0; k < n; k++) {
			if (!opts[k].value)
				continue;
			fprintf(out, "\t\t%s%s%s) ", opts[k].name, opts[k].alias ? "|" : "", opts[k].alias ? opts[k].alias : "");
			bash_compgen(out, opts[k].complete);
			fputs("; return 0 ;;\n", out);
		}
		fputs("\t\tesac\n\t\tcase $cur in\n\t\t-*) COMPREPLY=($(compgen -W \"", out);
		bash_words(out, c);
		fputs("\" -- \"$cur\")) ;;\n\t\t*) ", out);
		bash_compgen(out, str_eq(c->name, "help") ? "commands" : c->operand_complete);
		fputs(" ;;\n\t\tesac ;;\n", out);
	}
	fputs("\tesac\n\treturn 0\n}\ncomplete -o filenames -o bashdefault -F _abiscope abiscope\n", out);
}

/* Text for inside a zsh _arguments spec: '[]:\ and quotes escaped. */
static void zsh_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

static void zsh_action(FILE *out, const char *complete)
{
	if (!complete)
		fputs(" ", out);
	else if (str_eq(complete, "file"))
		fputs("_files", out);
	else if (str_eq(complete, "dir"))
		fputs("_files -/", out);
	else if (str_eq(complete, "command"))
		fputs("_command_names -e", out);
	else if (str_eq(complete, "commands"))
		fputs("($_abiscope_commands)", out);
	else
		fprintf(out, "(%s)", complete);
}

static void zsh_option(FILE *out, const struct cli_option *o)
{
	const char *rep = o->flags & OPT_REPEAT ? "*" : "";
	fputs("\t\t\t", out);
	if (o->alias)
		fprintf(out, "'(%s %s)'{%s%s,%s%s}'", o->alias, o->name, o->alias, o->value ? "+" : "", o->name,
			o->value ? "=" : "");
	else
		fprintf(out, "'%s%s%s", rep, o->name, o->value ? "=" : "");
	fputc('[', out);
	zsh_text(out, o->help);
	fputc(']', out);
	if (o->value) {
		fputc(':', out);
		zsh_text(out, o->value);
		fputc(':', out);
		zsh_action(out, o->complete);
	}
	fputs("' \\\n", out);
}

static void zsh_completion(FILE *out)
{
	fputs("#compdef abiscope\n"
	      "# zsh completion for abiscope; generated by `abiscope completion zsh` from\n"
	      "# src/cli/commands.c. Install: make install, or eval \"$(abiscope completion zsh)\".\n"
	      "_abiscope_commands=(", out);
	for (size_t i = 0; i < cli_ncommands; i++)
		fprintf(out, "%s%s", i ? " " : "", cli_commands[i].name);
	fputs(")\n_abiscope() {\n\tlocal -a commands\n\tcommands=(\n", out);
	for (size_t i = 0; i < cli_ncommands; i++) {
		fprintf(out, "\t\t'%s:", cli_commands[i].name);
		zsh_text(out, cli_commands[i].summary);
		fputs("'\n", out);
	}
	fputs("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe 'abiscope command' commands\n\t\treturn\n\tfi\n"
	      "\tlocal cmd=$words[2]\n\tshift words\n\t(( CURRENT-- ))\n\tcase $cmd in\n", out);
	for (size_t i = 0; i < cli_ncommands; i++) {
		const struct cli_command *c = &cli_commands[i];
		struct cli_option opts[MAX_OPTIONS];
		size_t n = cli_options_of(c, opts, MAX_OPTIONS);
		n = n > MAX_OPTIONS ? MAX_OPTIONS : n;
		fprintf(out, "\t%s)\n\t\t_arguments -s \\\n", c->name);
		for (size_t k = 0; k < n; k++)
			zsh_option(out, &opts[k]);
		if (*c->operands) {
			fputs("\t\t\t'*:", out);
			zsh_text(out, c->operands);
			fputc(':', out);
			zsh_action(out, str_eq(c->name, "help") ? "commands" : c->operand_complete);
			fputs("'\n", out);
		} else {
			fputs("\t\t\t&& return\n", out);
		}
		fputs("\t\t;;\n", out);
	}
	fputs("\tesac\n}\nif [ \"$funcstack[1]\" = _abiscope ]; then\n\t_abiscope \"$@\"\nelse\n"
	      "\tcompdef _abiscope abiscope\nfi\n", out);
}

/* ---- the commands ---- */

int cmd_help(int argc, char **argv)
{
	struct args a;
	enum arg_kind k;
	bool man = false, synopsis = false;
	const struct cli_command *which[32];
	size_t n = 0;
	args_init(&a, argc, argv, "help");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			const struct cli_command *c = cli_command_named(a.value);
			if (!c)
				return usage_error("help", "no command '%s'", a.value);
			if (n == ARRAY_SIZE(which))
				return usage_error("help", "too many commands");
			which[n++] = c;
		} else if (arg_is(&a, "--man")) {
			man = true;
		} else if (arg_is(&a, "--synopsis")) {
			synopsis = true;
		}
	}
	if (k != ARG_END)
		return k == ARG_HELP ? EXIT_OK : EXIT_USAGE;
	if (synopsis && !n)
		return usage_error("help", "--synopsis needs a COMMAND");
	if (man && n > 1)
		return usage_error("help", "--man prints one page: give one COMMAND");
	if (man) {
		if (n)
			man_command(stdout, which[0]);
		else
			man_abiscope(stdout);
		return EXIT_OK;
	}
	if (!n)
		cli_print_usage(stdout);
	for (size_t i = 0; i < n; i++) {
		if (synopsis)
			print_synopsis(stdout, which[i]);
		else
			cli_print_help(stdout, which[i]);
	}
	return EXIT_OK;
}

int cmd_completion(int argc, char **argv)
{
	struct args a;
	enum arg_kind k;
	const char *shell = NULL;
	args_init(&a, argc, argv, "completion");
	while ((k = args_next(&a)) == ARG_OPERAND) {
		if (shell)
			return usage_error("completion", "one shell: bash or zsh");
		shell = a.value;
	}
	if (k != ARG_END)
		return k == ARG_HELP ? EXIT_OK : EXIT_USAGE;
	if (shell && str_eq(shell, "bash"))
		bash_completion(stdout);
	else if (shell && str_eq(shell, "zsh"))
		zsh_completion(stdout);
	else
		return usage_error("completion", "give the shell: bash or zsh");
	return EXIT_OK;
}
