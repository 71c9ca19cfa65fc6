/*
 * requires.h: a distribution's Requires-Dist lines (PEP 508) and the
 * versions they allow (PEP 440, the part pins use).
 *
 * The fix lines quote versions from what is installed: the pin of the
 * installed torch (or of the cuda-toolkit meta-package it pins), a
 * companion's `torch==2.9.1`.  requirement_parse() splits one line into
 * name, extras, specifier and marker; marker_holds() evaluates a marker for
 * one interpreter (Linux, its machine and Python version, the extras
 * asked for); version_cmp() orders release numbers ("2.10.0" after
 * "2.9.1"; a local label "+cu128" and pre/post/dev tags after the release
 * are compared as text); spec_allows() checks a comma-separated specifier
 * (==, !=, >=, <=, >, <, ~=, ==X.*).
 *
 * Parsers take untrusted text and never fail loudly: a line they cannot
 * read gives false.  Results live in the arena given.
 */
#ifndef ABISCOPE_PYENV_REQUIRES_H
#define ABISCOPE_PYENV_REQUIRES_H

#include "pyenv/dist.h"

struct requirement {
	const char *name;	/* as written */
	const char *norm;	/* PEP 503 normalised */
	const char *extras;	/* "cublas,cudart" (no brackets), or NULL */
	const char *spec;	/* "==2.9.1", ">=2.10,<3", or "" */
	const char *pin;	/* the version of a single "==X" (not X.*), or NULL */
	const char *marker;	/* the text after ';', or NULL */
};

/* The machine and Python a marker is evaluated for. */
struct marker_env {
	const char *machine;	/* "x86_64", "aarch64" */
	int py_major, py_minor;
	const char *extra;	/* the extra asked for, or NULL (a marker on an extra is false) */
};

bool requirement_parse(struct arena *a, const char *line, struct requirement *out);
bool marker_holds(const char *marker, const struct marker_env *env);
int version_cmp(const char *a, const char *b);
bool spec_allows(const char *spec, const char *version);

/* The version without its local label ("2.10.0+cu128" -> "2.10.0"), in a. */
const char *version_public(struct arena *a, const char *version);

/*
 * The requirement of d on the distribution named norm (normalised) whose
 * marker holds for env (extras: that requirement is taken when env->extra
 * names it or when the marker asks for none), or false.
 */
bool dist_requirement_on(struct arena *a, const struct dist *d, const char *norm, const struct marker_env *env,
			 struct requirement *out);

#endif
