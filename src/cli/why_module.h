/*
 * why_module.h: `abiscope why` when TARGET is an import name (no slash and
 * no ".so" in it): every extension module the name stands for in the
 * environment, judged as `check` judges it.  When the name is not an
 * importable module there (no extension module by that name, or no Python
 * environment at all), why_module() prints nothing and returns
 * WHY_NOT_A_MODULE with the reason in not_module, and the caller treats
 * the name the way dlopen() treats a bare library name.
 */
#ifndef ABISCOPE_WHY_MODULE_H
#define ABISCOPE_WHY_MODULE_H

#include "cli/render.h"
#include "scan.h"

struct why_module_args {
	const char *name;
	const char *python;		/* --process / --python: the interpreter and its environment */
	const char *root;
	const char *ld_library_path;
	bool json, verbose;
	enum color_mode color;
	char not_module[1024];		/* out: why the name is not a module here */
	const struct scan_where *where;	/* --root, --cwd, --page-size */
};

#define WHY_NOT_A_MODULE (-100)

int why_module(struct why_module_args *o);

#endif
