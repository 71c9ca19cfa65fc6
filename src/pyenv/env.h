/*
 * env.h: a Python environment found from its files, never by running it.
 *
 * pyenv_open() looks at a path and decides what it is: a venv (pyvenv.cfg),
 * a conda environment (conda-meta/), a Python installation prefix
 * (bin/python3 + lib/python3.X), a bare site-packages folder, or a plain
 * folder or file with no Python around it.  It records the interpreter
 * (resolved to its ELF executable; a venv's bin/python is a link to the
 * base interpreter), the Python version, the site directories in sys.path
 * order, the standard library's lib-dynload directory and the suffixes
 * extension modules carry.  pyenv_default() applies the usual precedence:
 * $VIRTUAL_ENV, then $CONDA_PREFIX, then python3 on PATH.
 *
 * Everything lives in the scan's arena.  What was inferred rather than read
 * is kept in notes, for reports.
 */
#ifndef ABISCOPE_PYENV_ENV_H
#define ABISCOPE_PYENV_ENV_H

#include "scan.h"

enum pyenv_kind {
	PYENV_VENV,
	PYENV_CONDA,
	PYENV_PREFIX,	/* a Python installation: /usr, a pyenv version, ... */
	PYENV_SITE,	/* a site-packages folder with no environment around it */
	PYENV_PLAIN,	/* a folder or file: objects are checked, no Python model */
};

struct pyenv {
	enum pyenv_kind kind;
	const char *root;		/* the environment or the folder given */
	const char *python;		/* the interpreter's ELF executable, or NULL */
	const char *python_how;		/* how it was found, for reports */
	const char *python_files[2];	/* the text files it was found through (a pyenv shim and
					 * its version file: interpreter.h), or none */
	size_t npython_files;
	int py_major, py_minor;		/* 0 when unknown */
	const char **site;		/* site directories, sys.path order */
	size_t nsite;
	const char *dynload;		/* the standard library's lib-dynload, or NULL */
	const char *libdir;		/* conda: <prefix>/lib */
	const char *ext_suffix;		/* ".cpython-311-x86_64-linux-gnu.so" or NULL */
	struct ptrvec notes;		/* const char *: inferences made */
	/* the entries of site that .pth files added: sys.path entries, not
	 * installation trees (the inventory lists only what Python could
	 * import from them: pyenv/inventory.h) */
	struct ptrvec pth_sites;
	const char *startup_error;	/* why the interpreter cannot start here (a .pth file that is
					 * not UTF-8), or NULL */
	/* sys.path may hold what site and the folders above do not list: a
	 * .pth line that runs code (an import hook: editable installs) or
	 * names a zip or egg file */
	bool path_opaque;
	/* a venv without include-system-site-packages: no user site either
	 * (site.py), so sys.path is the stdlib, site and what .pth adds */
	bool path_closed;
};

const char *pyenv_kind_name(enum pyenv_kind k);

/* What path is, and the environment around it. */
enum status pyenv_open(struct scan *s, const char *path, struct pyenv *e, struct diag *d);

/* The default environment: virtual_env, then conda_prefix, then python3 on path_env. */
enum status pyenv_default(struct scan *s, const char *virtual_env, const char *conda_prefix,
			  const char *path_env, const char *pyenv_version, const char *pyenv_root,
			  struct pyenv *e, struct diag *d);

/* The environment that contains path (walking up from it), if any. */
bool pyenv_enclosing(struct scan *s, const char *path, struct pyenv *e);

/*
 * The import name of a file under one of the site directories
 * ("sgl_kernel.sm100.common_ops" for .../sgl_kernel/sm100/common_ops.abi3.so),
 * or NULL when the file is not under a site directory.  *site_out (optional)
 * receives the site directory.  The name says where Python would find a
 * module of that name; whether the file is an extension module is the
 * object's business (it exports PyInit_<name>).
 */
const char *pyenv_module_name(struct scan *s, const struct pyenv *e, const char *path,
			      const char **site_out);

/* The value of key in pyvenv.cfg text ("key = value" lines), or NULL. */
const char *pyvenv_cfg_value(struct arena *a, const char *text, const char *key);

/* The module name a file name stands for ("common_ops" for common_ops.abi3.so). */
const char *pyenv_module_stem(struct arena *a, const char *filename);
/* Whether a folder or module of this name can be imported (an identifier). */
bool pyenv_identifier(const char *name);

#endif
