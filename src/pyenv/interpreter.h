/*
 * interpreter.h: which executable a "python3" really is, without running it.
 *
 * A name is looked up on a PATH string; a path is taken as given.  When the
 * file found is not an ELF executable but a wrapper script, the wrapper is
 * read, never run: pyenv shims are resolved the way pyenv does (the
 * PYENV_VERSION variable, a .python-version file from the current
 * directory up, the global version file), other wrappers by the absolute
 * path of a python executable they exec.  When nothing fits, the result
 * says plainly which --process to pass.
 */
#ifndef ABISCOPE_INTERPRETER_H
#define ABISCOPE_INTERPRETER_H

#include "core/arena.h"
#include "core/fs.h"

struct interp_result {
	const char *path;	/* the ELF executable, or NULL */
	const char *via;	/* the wrapper it was found through, or NULL */
	const char *how;	/* a sentence for reports: "pyenv shim, version 3.11.7" */
	const char *problem;	/* when path is NULL: what to tell the user */
	/* the text files the answer was read from (the wrapper script, the
	 * pyenv version file that chose the version): part of what the
	 * interpreter is, so a snapshot may carry them */
	const char *read[2];
	size_t nread;
};

/*
 * name_or_path: "python3" or a path.  path_env: the PATH to search (NULL
 * uses a default).  pyenv_version: $PYENV_VERSION or NULL.  pyenv_root:
 * $PYENV_ROOT or NULL.
 */
void interp_resolve(struct arena *a, const struct fsview *fs, const char *name_or_path,
		    const char *path_env, const char *pyenv_version, const char *pyenv_root,
		    struct interp_result *r);

/* True when the file at path starts with the ELF magic. */
bool file_is_elf(const struct fsview *fs, const char *path);

#endif
