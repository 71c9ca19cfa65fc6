#include "cxx/demangle.h"

/* From libstdc++ (cxxabi.h is C++-only, so declare the C entry point). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

bool cxx_is_mangled(const char *name)
{
	return name[0] == '_' && name[1] == 'Z';
}

const char *cxx_demangle(struct arena *a, const char *name)
{
	if (!cxx_is_mangled(name))
		return name;
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return name;
	}
	const char *copy = arena_strdup(a, out);
	free(out);
	return copy;
}
