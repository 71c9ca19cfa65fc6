#include "cli/cli.h"

#include <stdarg.h>

bool arg_is(struct args *a, const char *name)
{
	return !a->no_more_options && str_eq(a->argv[a->i], name);
}

bool arg_value(struct args *a, const char *name, const char **value, bool *error)
{
	if (a->no_more_options)
		return false;
	const char *s = a->argv[a->i];
	size_t n = strlen(name);
	if (strncmp(s, name, n) != 0)
		return false;
	if (s[n] == '=') {
		*value = s + n + 1;
		return true;
	}
	if (s[n] != '\0')
		return false;
	if (a->i + 1 >= a->argc) {
		usage_error(a->cmd, "%s needs a value", name);
		*error = true;
		return true;
	}
	*value = a->argv[++a->i];
	return true;
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
