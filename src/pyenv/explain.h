/*
 * explain.h: what an error message or traceback says, as facts.
 *
 * Reads the text users paste (an ImportError, a traceback, sgl_kernel's
 * "Could not load any common_ops library" report, an ld.so message) and
 * pulls out what abiscope needs to diagnose it: the object the loader
 * complained about, the undefined symbol and its version, the library that
 * could not be opened, the version that was not found and who required
 * it, the Python files of the traceback (which locate the environment and
 * the package).  The parser works on a byte buffer of any content: it is
 * fuzzed (tests/fuzz/fuzz_explain.c) and never reads past the buffer.
 */
#ifndef ABISCOPE_PYENV_EXPLAIN_H
#define ABISCOPE_PYENV_EXPLAIN_H

#include "core/arena.h"

struct error_facts {
	const char *kind;		/* the finding id the loader error maps to, or NULL */
	const char *error_line;		/* the loader's message as quoted, or NULL */
	const char *object;		/* a shared-object path the message names */
	const char *symbol, *version;	/* undefined symbol [, version] */
	const char *missing_library;	/* "libnvrtc.so.13" of "cannot open shared object file" */
	const char *version_missing;	/* GLIBCXX_3.4.32 of "version `...' not found" */
	const char *version_provider;	/* the file that lacks it */
	const char *required_by;	/* "(required by ...)" */
	const char *py_file;		/* the last Python source file of the traceback */
	const char *package;		/* the top-level package under site-packages */
	const char *site;		/* the site-packages folder the paths point into */
	const char *no_module;		/* "No module named 'x'" */
	struct ptrvec objects;		/* every shared-object path mentioned, in order */
};

void explain_parse(struct arena *a, const char *text, size_t len, struct error_facts *f);

#endif
