/*
 * why_module.h: `abiscope why` when TARGET is an import name (no slash and
 * no ".so" in it): every extension module the name stands for in the
 * environment, judged as `check` judges it.
 */
#ifndef ABISCOPE_WHY_MODULE_H
#define ABISCOPE_WHY_MODULE_H

#include "cli/render.h"

struct why_module_args {
	const char *name;
	const char *python;		/* --process / --python: the interpreter and its environment */
	const char *root;
	const char *ld_library_path;
	bool json, verbose;
	enum color_mode color;
};

int why_module(const struct why_module_args *o);

#endif
