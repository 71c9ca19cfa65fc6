#include "cli/cli.h"
#include "cuda/arch.h"

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
