/*
 * pyimport.h: whether the modules a package's import always imports can be
 * found on the environment's sys.path, without running anything.
 *
 * `import deep_gemm.deep_gemm_cpp` runs deep_gemm/__init__.py first, which
 * runs `import torch.utils.cpp_extension`, whose module-level
 * `import setuptools` raises ModuleNotFoundError in a venv without
 * setuptools: the extension module never loads, though every library it
 * needs is there.  py_first_missing() finds the first such module: an
 * absolute import the package runs for sure (selfload.h's pkg_import), or
 * one at column 0 of the module of another installed package it names
 * (one level: that module's own imports, not theirs), whose top-level name
 * is neither the standard library's nor anything a sys.path folder holds.
 *
 * It answers only where sys.path is known whole: a venv without
 * include-system-site-packages (no user site), whose standard library is
 * found (lib-dynload), and no .pth line that runs code (an import hook, as
 * editable installs use) or names a zip.  Elsewhere it finds nothing.
 * Results live in the scan's arena.
 */
#ifndef ABISCOPE_PYENV_PYIMPORT_H
#define ABISCOPE_PYENV_PYIMPORT_H

#include "pyenv/env.h"
#include "pyenv/selfload.h"

struct py_missing {
	const char *name;	/* the top-level module nothing provides: "setuptools" */
	const char *import;	/* the package's import that leads to it: "torch.utils.cpp_extension" */
	const char *file;	/* where the package runs that import (relative to its site), and the line */
	int line;
	const char *via_file;	/* where the imported module imports name (relative), or NULL when */
	int via_line;		/* the package's own line names it */
};

/* The first module the import of a package always imports that
 * Python cannot find, or false. */
bool py_first_missing(struct scan *s, const struct pyenv *e, const struct pkg_init *pi, struct py_missing *out);

#endif
