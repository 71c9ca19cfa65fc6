#include "cli/cli.h"
#include "cli/termsafe.h"
#include "cuda/arch.h"

#include <stdarg.h>
#include <stdint.h>

/* The common options, in the order --help lists them; bit is their
 * enum cli_common, help their shared words. */
static const struct common_option {
	unsigned bit;
	struct cli_option opt;
} common_options[] = {
	{ COMMON_ROOT, { "--root", NULL, "DIR", 0, "dir", "inspect the file system under DIR" } },
	{ COMMON_JSON, { "--json", NULL, NULL, 0, NULL, "one JSON object on stdout" } },
	{ COMMON_COLOR, { "--color", NULL, "WHEN", 0, "auto always never",
			  "auto (default: on a terminal; NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE and TERM=dumb are honoured), "
			  "always or never" } },
	{ COMMON_VERBOSE, { "--verbose", "-v", NULL, 0, NULL, "show more detail" } },
	{ COMMON_CWD, { "--cwd", NULL, "DIR", 0, "dir",
			"the working directory of the processes modelled, a path in the --root tree (default: this "
			"directory when it lies in the tree, else /): relative dlopen() and LD_LIBRARY_PATH entries "
			"resolve against it" } },
	{ COMMON_PAGE_SIZE, { "--page-size", NULL, "BYTES", 0, "4096 16384 65536",
			      "the page size of the machine the processes run on (AT_PAGESZ; many aarch64 kernels "
			      "use 65536): objects whose segments are not aligned to it do not load (default: this "
			      "machine's for its own kind of binary, else 4096, noted as an assumption)" } },
	{ COMMON_QUIET, { "--quiet", "-q", NULL, 0, NULL, "the report only: no progress line, no prompt; -qq: "
			  "nothing on standard output, the exit status answers (errors still go to standard error)" } },
};
static const struct cli_option help_option = { "--help", "-h", NULL, 0, NULL, "show this help" };

const struct cli_command *cli_command_named(const char *name)
{
	for (size_t i = 0; i < cli_ncommands; i++)
		if (str_eq(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

static const char *common_help(const struct cli_command *c, unsigned bit)
{
	switch (bit) {
	case COMMON_ROOT: return c->root_help;
	case COMMON_JSON: return c->json_help;
	case COMMON_COLOR: return c->color_help;
	case COMMON_VERBOSE: return c->verbose_help;
	default: return NULL;
	}
}

size_t cli_options_of(const struct cli_command *c, struct cli_option *out, size_t max)
{
	size_t n = 0;
	for (const struct cli_option *o = c->options; o && o->name; o++, n++)
		if (n < max)
			out[n] = *o;
	for (size_t i = 0; i < ARRAY_SIZE(common_options); i++) {
		if (!(c->common & common_options[i].bit))
			continue;
		if (n < max) {
			out[n] = common_options[i].opt;
			const char *own = common_help(c, common_options[i].bit);
			if (own)
				out[n].help = own;
		}
		n++;
	}
	if (n < max)
		out[n] = help_option;
	return n + 1;
}

void args_init(struct args *a, int argc, char **argv, const char *cmd)
{
	memset(a, 0, sizeof *a);
	a->argc = argc;
	a->argv = argv;
	a->i = 0;	/* argv[0] is the command's name */
	a->cmd = cmd;
	a->spec = cli_command_named(cmd);
	a->claimed = true;
	a->common.color = COLOR_AUTO;
}

int args_status(enum arg_kind k)
{
	return k == ARG_HELP ? -1 : k == ARG_END ? 0 : EXIT_USAGE;
}

static bool option_named(const struct cli_option *o, const char *s, size_t n)
{
	return (strlen(o->name) == n && !strncmp(o->name, s, n)) ||
	       (o->alias && strlen(o->alias) == n && !strncmp(o->alias, s, n));
}

/* The table's option for argv text s (up to '=' for long options). */
static const struct cli_option *find_option(const struct cli_command *c, const char *s, size_t n,
					    unsigned *common_bit)
{
	*common_bit = 0;
	for (const struct cli_option *o = c->options; o && o->name; o++)
		if (option_named(o, s, n))
			return o;
	for (size_t i = 0; i < ARRAY_SIZE(common_options); i++)
		if ((c->common & common_options[i].bit) && option_named(&common_options[i].opt, s, n)) {
			*common_bit = common_options[i].bit;
			return &common_options[i].opt;
		}
	if (option_named(&help_option, s, n))
		return &help_option;
	return NULL;
}

/* Edits (insert, delete, replace, swap two neighbours) from a[0..n) to b. */
static size_t edit_distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	if (n > 40 || m > 40)
		return SIZE_MAX;
	size_t d[41][41];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t best = MIN(d[i - 1][j] + 1, d[i][j - 1] + 1);
			best = MIN(best, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]));
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				best = MIN(best, d[i - 2][j - 2] + 1);
			d[i][j] = best;
		}
	return d[n][m];
}

const char *cli_similar(const char *word, size_t len, const char *const *candidates, size_t n)
{
	const char *best = NULL, *prefix_of = NULL;
	size_t best_d = SIZE_MAX, prefixes = 0;
	for (size_t i = 0; i < n; i++) {
		size_t m = strlen(candidates[i]);
		/* one edit in a short word, two from five letters on, three from nine */
		size_t allowed = m >= 9 ? 3 : m >= 5 ? 2 : 1;
		size_t d = edit_distance(word, len, candidates[i]);
		if (d <= allowed && d < best_d) {
			best = candidates[i];
			best_d = d;
		}
		if (len >= 3 && len < m && !strncmp(word, candidates[i], len)) {
			prefix_of = candidates[i];
			prefixes++;
		}
	}
	if (best)
		return best;
	return prefixes == 1 ? prefix_of : NULL;
}

/* Says which option the unknown one (s, n bytes) resembles: one of the
 * command's own, or the commands that take it. */
static void unknown_option(const struct args *a, const char *s, size_t n)
{
	struct cli_option opts[64];
	const char *names[64];
	size_t k = MIN(cli_options_of(a->spec, opts, ARRAY_SIZE(opts)), ARRAY_SIZE(opts));
	for (size_t i = 0; i < k; i++)
		names[i] = opts[i].name;
	const char *like = n > 2 && s[1] == '-' ? cli_similar(s, n, names, k) : NULL;
	char takers[256] = "";
	size_t used = 0;
	for (size_t c = 0; c < cli_ncommands && !like; c++) {
		size_t m = MIN(cli_options_of(&cli_commands[c], opts, ARRAY_SIZE(opts)), ARRAY_SIZE(opts));
		for (size_t i = 0; i < m; i++)
			if (option_named(&opts[i], s, n) && used + strlen(cli_commands[c].name) + 3 < sizeof takers) {
				used += (size_t)snprintf(takers + used, sizeof takers - used, "%s%s", used ? ", " : "",
							 cli_commands[c].name);
				break;
			}
	}
	if (like)
		usage_error(a->cmd, "unknown option %.*s\n  a similar option exists: '%s'", (int)n, s, like);
	else if (used)
		usage_error(a->cmd, "unknown option %.*s\n  %.*s is an option of: %s", (int)n, s, (int)n, s, takers);
	else
		usage_error(a->cmd, "unknown option %.*s", (int)n, s);
}

/* After the last option: -qq sends the report nowhere (errors still
 * reach stderr). */
static void options_done(const struct args *a)
{
	if (a->common.quiet >= 2)
		termsafe_silence_stdout();
}

static bool take_common(struct args *a, unsigned bit)
{
	switch (bit) {
	case COMMON_ROOT: a->common.root = a->value; break;
	case COMMON_JSON: a->common.json = true; break;
	case COMMON_VERBOSE: a->common.verbose = true; break;
	case COMMON_CWD: a->common.cwd = a->value; break;
	case COMMON_PAGE_SIZE: {
		char *end = NULL;
		unsigned long long v = strtoull(a->value, &end, 10);
		if (!*a->value || *end || v < 4096 || v > (1ull << 30) || (v & (v - 1))) {
			usage_error(a->cmd, "--page-size takes a power of two from 4096 to 1073741824 (got %s)",
				    a->value);
			return false;
		}
		a->common.page_size = v;
		break;
	}
	case COMMON_QUIET: a->common.quiet++; break;
	case COMMON_COLOR:
		if (!parse_color(a->value, &a->common.color)) {
			usage_error(a->cmd, "--color takes auto, always or never");
			return false;
		}
		break;
	default: break;
	}
	return true;
}

enum arg_kind args_next(struct args *a)
{
	if (!a->spec) {
		fprintf(stderr, "abiscope %s: not in the command table (src/cli/commands.c)\n", a->cmd);
		return ARG_ERROR;
	}
	if (!a->claimed) {
		fprintf(stderr, "abiscope %s: %s is in the command table but the command does not handle it\n",
			a->cmd, a->opt->name);
		return ARG_ERROR;
	}
	for (;;) {
		a->opt = NULL;
		a->value = NULL;
		a->claimed = true;
		if (++a->i >= a->argc) {
			options_done(a);
			return ARG_END;
		}
		const char *s = a->argv[a->i];
		if (a->no_more_options || s[0] != '-' || !s[1]) {
			if (a->spec->options_end_at_operand && !a->no_more_options) {
				a->no_more_options = true;
				options_done(a);
			}
			a->value = s;
			return ARG_OPERAND;
		}
		if (str_eq(s, "--")) {
			a->no_more_options = true;
			continue;
		}
		/* -qq...: -q given that many times */
		if ((a->spec->common & COMMON_QUIET) && s[1] == 'q' && s[2] == 'q' &&
		    strspn(s + 1, "q") == strlen(s + 1)) {
			a->common.quiet += (int)strlen(s + 1);
			continue;
		}
		const char *eq = s[1] == '-' ? strchr(s, '=') : NULL;
		size_t n = eq ? (size_t)(eq - s) : strlen(s);
		unsigned bit;
		const struct cli_option *o = find_option(a->spec, s, n, &bit);
		if (!o) {
			unknown_option(a, s, n);
			return ARG_ERROR;
		}
		if (o->value && eq) {
			a->value = eq + 1;
		} else if (o->value) {
			if (a->i + 1 >= a->argc) {
				usage_error(a->cmd, "%s needs a value (%s)", o->name, o->value);
				return ARG_ERROR;
			}
			a->value = a->argv[++a->i];
		} else if (eq) {
			usage_error(a->cmd, "%s takes no value", o->name);
			return ARG_ERROR;
		}
		if (o == &help_option) {
			cli_print_help(stdout, a->spec);
			return ARG_HELP;
		}
		if (bit) {
			if (!take_common(a, bit))
				return ARG_ERROR;
			continue;
		}
		a->opt = o;
		a->claimed = false;
		return ARG_OPTION;
	}
}

struct scan_where cli_where(const struct common_opts *c)
{
	struct scan_where w = { .root = c->root, .cwd = c->cwd };
	w.machine.page_size = c->page_size;
	return w;
}

bool arg_is(struct args *a, const char *name)
{
	if (!a->opt || !str_eq(a->opt->name, name))
		return false;
	a->claimed = true;
	return true;
}

bool arg_value(struct args *a, const char *name, const char **value, bool *error)
{
	(void)error;
	if (!arg_is(a, name))
		return false;
	*value = a->value;
	return true;
}

bool arg_gpu_target(struct args *a, const char **gpus, size_t *ngpus, size_t max, const char **driver,
		    bool *error)
{
	const char *v;
	if (arg_value(a, "--gpu", &v, error)) {
		unsigned cc;
		const char *name;
		if (*error)
			return true;
		if (!cuda_parse_gpu_spec(v, &cc, &name) || *ngpus == max) {
			usage_error(a->cmd, "--gpu %s names no GPU abiscope knows (sm_90, 12.0, H100 ...)", v);
			*error = true;
			return true;
		}
		gpus[(*ngpus)++] = v;
		return true;
	}
	if (arg_value(a, "--driver", &v, error)) {
		struct driver_version dv;
		if (!*error && !cuda_parse_driver_version(v, &dv)) {
			usage_error(a->cmd, "--driver takes a driver version such as 580.65.06");
			*error = true;
		}
		if (!*error)
			*driver = v;
		return true;
	}
	return false;
}

bool arg_fail_on(struct args *a, bool *on_warning, bool *error)
{
	const char *v;
	if (!arg_value(a, "--fail-on", &v, error))
		return false;
	if (str_eq(v, "error") || str_eq(v, "warning"))
		*on_warning = str_eq(v, "warning");
	else {
		usage_error(a->cmd, "--fail-on takes error or warning");
		*error = true;
	}
	return true;
}

int fail_on_status(const char *cmd, int code, bool on_warning, size_t nwarnings)
{
	if (code != EXIT_OK || !on_warning || !nwarnings)
		return code;
	fflush(stdout);
	fprintf(stderr, "abiscope %s: exit 1: %zu warning%s and --fail-on warning\n", cmd, nwarnings,
		nwarnings == 1 ? "" : "s");
	return EXIT_FAILS;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "abiscope %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'abiscope %s --help'.\n", cmd);
	va_end(ap);
	return EXIT_USAGE;
}

bool parse_color(const char *v, enum color_mode *out)
{
	if (str_eq(v, "auto"))
		*out = COLOR_AUTO;
	else if (str_eq(v, "always"))
		*out = COLOR_ALWAYS;
	else if (str_eq(v, "never"))
		*out = COLOR_NEVER;
	else
		return false;
	return true;
}
