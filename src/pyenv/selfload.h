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
 * LoadLibrary) at the top level of a module the import runs (not in a
 * function body), its library by a string literal in the call, or assigned
 * on one of the lines just above to the name the call is given, that names
 * a file of the package ("libtorchaudio" -> lib/libtorchaudio.so).  These
 * are assumptions, shown with the file and line they come from; a call whose
 * library cannot be named is kept as such, so a verdict that depends on it
 * can say so.
 *
 * Results live in the scan's arena; at most SELFLOAD_MAX_FILES files of
 * SELFLOAD_MAX_TEXT bytes each are read, through the scan's file system.
 */
#ifndef ABISCOPE_PYENV_SELFLOAD_H
#define ABISCOPE_PYENV_SELFLOAD_H

#include "scan.h"

#define SELFLOAD_MAX_FILES 48
#define SELFLOAD_MAX_TEXT (2u * 1024 * 1024)

enum pkg_torch_order {
	PKG_TORCH_NONE,		/* the import runs no `import torch` (that abiscope sees) */
	PKG_TORCH_FIRST,	/* torch is imported before any extension module of the package */
	PKG_OWN_FIRST,		/* an extension module of the package is imported before torch */
};

struct self_load {
	const char *path;	/* the library loaded */
	const char *file;	/* the source file of the call, relative to site-packages */
	int line;
};

struct pkg_init {
	enum pkg_torch_order torch;
	bool imports_torch;		/* the import runs an `import torch` somewhere */
	const char *order_file;		/* where the order was decided (relative), or NULL */
	int order_line;
	struct self_load *loads;	/* in the order the import runs them */
	size_t nloads;
	const char *unnamed_file;	/* a load call whose library could not be named, or NULL */
	int unnamed_line;
};

/* Reads <site>/<package>/__init__.py and the modules of the package it
 * imports, into out (zeroed first). */
void pkg_init_read(struct scan *s, const char *site, const char *package, struct pkg_init *out);

#endif
