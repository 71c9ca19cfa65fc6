/*
 * selfload.h: what a package's import does before its extension modules,
 * read from its Python sources (never run).
 *
 * `import PKG` runs PKG/__init__.py and what it imports of its own package,
 * top to bottom.  Two things there decide whether an extension module of PKG
 * loads: whether torch is imported before the package's own extension
 * modules (nvfuser's __init__.py imports its _C first, so `import nvfuser`
 * fails where `import torch, nvfuser` works), and the libraries of its own
 * distribution the package loads itself before them: torchaudio's
 * _load_lib("libtorchaudio") (torch.ops.load_library), torchvision's
 * torch.ops.load_library(_get_extension_path("_C")), ctypes.CDLL of a file
 * of the package.  A call is recognised by its name (load_lib*, *CDLL,
 * LoadLibrary) in a module the import runs (not in a function body), its
 * library by the string literals in the call (joined as a path from the
 * calling file's folder, os.path.join(os.path.dirname(__file__), "lib",
 * "libx.so"), or the last one as a file name or stem), or assigned on one of
 * the dozen lines above to the name the call is given, that names a file of
 * the package ("libtorchaudio" -> lib/libtorchaudio.so; a module spec's
 * origin: `spec = finder.find_spec("_C")` ... load_library(spec.origin), as
 * xformers does).  A call into a function of the package is followed into
 * its body, where the same rules name the library; one that computes an
 * RTLD_GLOBAL library's path from a distribution's files and a preload list
 * (faiss's loader.py) loads each file the list names (distpreload.h, from
 * dists: NULL reads no list).  A followed call whose library stays unnamed
 * is kept as unnamed only when RTLD_GLOBAL.  torch's own loads are not
 * listed: `import torch` is replayed whole (importctx.h).
 *
 * A call inside an `if`/`elif`/`else`/`except` block runs only when its
 * condition holds.  Conditions abiscope can decide from the files are
 * decided: `os.name == "nt"`, `sys.platform ...`, `platform.system() ...`
 * (this is Linux), `is_module_available("PKG.mod")` and
 * `importlib.util.find_spec("PKG.mod") is not None` (the module's file
 * exists), a name assigned one of those at the top of the same file, `not`
 * and `and` of them; a call under a false one is not made, one under a
 * condition abiscope cannot decide (an environment variable, a version
 * check, an except clause) keeps the condition, so a verdict that depends on
 * it says so.  These are assumptions, shown with the file and line they come
 * from; a call whose library cannot be named is kept as such too.
 *
 * Results live in the scan's arena; at most SELFLOAD_MAX_FILES files of
 * SELFLOAD_MAX_TEXT bytes each are read, through the scan's file system.
 */
#ifndef ABISCOPE_PYENV_SELFLOAD_H
#define ABISCOPE_PYENV_SELFLOAD_H

#include "pyenv/dist.h"

#define SELFLOAD_MAX_FILES 48
#define SELFLOAD_MAX_TEXT (2u * 1024 * 1024)

enum pkg_torch_order {
	PKG_TORCH_NONE,		/* the import runs no `import torch` (that abiscope sees) */
	PKG_TORCH_FIRST,	/* torch is imported before any extension module of the package */
	PKG_OWN_FIRST,		/* an extension module of the package is imported before torch */
};

struct self_load {
	const char *path;	/* the library loaded; NULL: a call whose library abiscope cannot name */
	const char *file;	/* the source file of the call, relative to site-packages */
	int line;
	const char *condition;	/* "if _USE_FFMPEG:" (one line) the call runs under, abiscope cannot
				 * decide it; NULL: it runs whenever the import does */
	int condition_line;	/* the line of the condition in file */
	bool global;		/* RTLD_GLOBAL is named in the call: its symbols serve later loads */
	const char *call;	/* the loading call as written: "torch.ops.load_library", "ctypes.CDLL" */
	const char *call_file;	/* where that call is when the import reaches it through a function
				 * of the package (file:line above is the call into the function);
				 * NULL when file:line is the loading call itself */
	int call_line;
	bool caught;		/* a try around the load (in that function or around the call into
				 * it) catches the OSError a failed load raises: `import PKG` goes on
				 * without the library */
	const char *caught_file;	/* that except clause (one line), where it is and its line */
	const char *caught_by;
	int caught_line;
	/* a preload list's entry (distpreload.h): the distribution it names,
	 * or NULL for any other load */
	const char *list_dist;
};

/* An absolute import the import of a package runs for sure: outside any
 * try, under no condition abiscope cannot decide, and not reached through
 * an import of its own modules that is in a try or under a condition. */
struct pkg_import {
	const char *module;	/* as written: "torch.utils.cpp_extension", "setuptools" */
	const char *file;	/* where (relative to the site folder), and its line */
	int line;
};

#define PKG_MAX_IMPORTS 256

struct pkg_init {
	enum pkg_torch_order torch;
	bool imports_torch;		/* the import runs an `import torch` somewhere */
	bool torch_import_fatal;	/* ... one outside any try block that always runs: without
					 * torch the import raises ModuleNotFoundError there */
	const char *torch_cond;		/* else the condition (one line) the first such one runs
					 * under that abiscope cannot decide, or NULL */
	const char *torch_file;		/* where that import is (relative), and its line */
	int torch_line;
	const char *order_file;		/* where the order was decided (relative), or NULL */
	int order_line;
	struct self_load *loads;	/* named ones, in the order the import runs them */
	size_t nloads;
	struct self_load *unnamed;	/* the first load call whose library could not be named, or NULL */
	/* the package's preload list (distpreload.h) stops `import PKG` short,
	 * or may: an entry whose file its distribution does not have (the
	 * loader raises: list_certain), or a list abiscope cannot read (too
	 * large, not the JSON it expects: list_certain false); list_why says
	 * which, file and line are the call's.  NULL: no such list, or it
	 * names only files that are there. */
	struct self_load *list_problem;
	const char *list_why;
	bool list_certain;
	/* the first line the import runs that registers for an operator of the
	 * package by name (torchvision 0.24-0.29's module-level
	 * `@torch.library.register_fake("torchvision::nms")`): where the
	 * operators of a load that failed are needed at import time; torch
	 * then raises "operator torchvision::nms does not exist" */
	const char *op_use;		/* that line, trimmed */
	const char *op_use_name;	/* "torchvision::nms" */
	const char *op_use_file;
	int op_use_line;
	size_t op_use_after;		/* loads[0, op_use_after) come before it */
	/* the absolute imports of other top-level modules (not the package's
	 * own) it runs for sure, in order, at most PKG_MAX_IMPORTS */
	struct pkg_import *imports;
	size_t nimports;
};

/* The module-level imports of Python source text: statements at column 0
 * (so in no block: they always run, unless something above raises),
 * outside strings and brackets; absolute modules only, at most max, each
 * with file as given and its line.  Returns how many. */
size_t py_module_imports(struct arena *a, const char *text, size_t len, const char *file, struct pkg_import *out,
			 size_t max);

/* Reads <site>/<package>/__init__.py and the modules of the package it
 * imports, into out (zeroed first). */
void pkg_init_read(struct scan *s, const struct distset *dists, const char *site, const char *package,
		   struct pkg_init *out);

#endif
