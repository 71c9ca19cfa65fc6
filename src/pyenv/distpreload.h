/*
 * distpreload.h: the libraries a package preloads from other
 * distributions by a list it ships beside its loader, read from the files
 * (never run).  faiss-gpu-cu12 (built by faiss-wheels) ships
 * faiss/_preload_library.json:
 *
 *   {"preload-library": [{"group": "cuda", "package": "nvidia-cuda-runtime-cu12",
 *                         "library": "libcudart.so.12"}, ...]}
 *
 * and its loader.py loads, for each entry in order, the first file of that
 * distribution's RECORD with that name (importlib.metadata's
 * distribution(P).files, file.locate()) with ctypes.CDLL(path,
 * RTLD_GLOBAL).  dist_preloads() reads the list in dir and finds each file
 * among the installed distributions; an entry's path is NULL when its
 * distribution is not installed or records no such file (the import then
 * raises).  At most DIST_PRELOAD_MAX entries, from a file of at most
 * DIST_PRELOAD_TEXT bytes (a longer list is one it could not read).  It
 * says whether there is no list (the loader then loads nothing: `if
 * _CONFIG_PATH.exists()`), a list it could not read (too large, not JSON,
 * an entry without both names: the import would raise, or not), or a list.
 * Strings live in the scan's arena.
 */
#ifndef ABISCOPE_PYENV_DISTPRELOAD_H
#define ABISCOPE_PYENV_DISTPRELOAD_H

#include "pyenv/dist.h"

#define DIST_PRELOAD_FILE "_preload_library.json"
#define DIST_PRELOAD_MAX 32
#define DIST_PRELOAD_TEXT (64u * 1024)

struct dist_preload {
	const char *package;	/* the distribution, as the list writes it */
	const char *library;	/* the file name looked for in its RECORD */
	const char *path;	/* the file found, or NULL */
	bool installed;		/* the distribution is */
};

enum dist_preload_list { DIST_PRELOAD_ABSENT, DIST_PRELOAD_UNREADABLE, DIST_PRELOAD_READ };

enum dist_preload_list dist_preloads(struct scan *s, const struct distset *ds, const char *dir,
				     struct dist_preload *out, size_t max, size_t *n);

#endif
