/*
 * sysowner.h: files a system package manager owns, and interpreters it
 * manages.
 *
 * A distribution's Python marks its stdlib folder with EXTERNALLY-MANAGED
 * (PEP 668): pip refuses to change it, and its packages belong to the
 * system package manager.  dpkg lists each package's files in
 * /var/lib/dpkg/info/PACKAGE[:ARCH].list (read under --root through
 * core/fs.h): sysowner_of() names the package that owns a path, and
 * sysowner_library() the package and path of a shared library by file
 * name (a library that is gone still has its package's list).  The lists
 * are read once, on first use, keeping only the paths under the
 * environment's site directories and the shared libraries.
 *
 * Results live in the scan's arena.
 */
#ifndef ABISCOPE_PYENV_SYSOWNER_H
#define ABISCOPE_PYENV_SYSOWNER_H

#include "pyenv/env.h"

struct sysowner {
	bool read;			/* the lists have been read */
	const char *manager;		/* "dpkg", or NULL when it has no lists here */
	struct strmap by_path;		/* path -> package */
	struct strmap by_lib;		/* file name of a shared library -> "package\tpath" */
};

/* The stdlib folder's EXTERNALLY-MANAGED of e (a venv or conda environment
 * is its user's, whatever its base), or NULL. */
const char *pyenv_externally_managed(struct scan *s, const struct pyenv *e);

/* The system package that owns path, or NULL. */
const char *sysowner_of(struct scan *s, struct sysowner *so, const struct pyenv *e, const char *path);

/* The system package that ships a shared library of this file name, and
 * where (*path), or NULL. */
const char *sysowner_library(struct scan *s, struct sysowner *so, const struct pyenv *e, const char *name,
			     const char **path);

#endif
