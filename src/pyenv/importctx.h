/*
 * importctx.h: what importing a package does to the process, so that an
 * extension that only loads "after import torch" is judged in that state.
 *
 * torch is modelled from its installed files, never imported: torch/__init__.py
 * is read for the libraries its _load_global_deps loads (struct torch_layout), torch/_utils_internal.py for USE_GLOBAL_DEPS and
 * USE_RTLD_GLOBAL_WITH_LIBTORCH, torch/version.py for the CUDA version.  The
 * import is then replayed on a process: libtorch_global_deps.so with
 * RTLD_GLOBAL (on failure: the preloads first, then again), the preloads with
 * ctypes.CDLL (RTLD_NOW | RTLD_LOCAL), then torch._C, then what torch's C++
 * dlopen()s as it initialises (libnvfuser_codegen.so where installed,
 * libcuda.so.1).
 *
 * Another package is modelled as the dlopen of the extension module through
 * which it would load the library in question (a guess, and labelled one).
 */
#ifndef ABISCOPE_PYENV_IMPORTCTX_H
#define ABISCOPE_PYENV_IMPORTCTX_H

#include "loader/process.h"
#include "pyenv/inventory.h"

/* One library torch/__init__.py loads with ctypes.CDLL (RTLD_LOCAL |
 * RTLD_NOW) from the first sys.path entry that has it in nvidia/<folder>/lib
 * (or nvidia/cuXX/lib, or <folder>/lib, when the release looks there). */
struct torch_preload {
	const char *folder;	/* "cuda_nvrtc" */
	const char *pattern;	/* "libnvrtc.so.*[0-9]" */
	bool required;		/* not found: ValueError (else skipped) */
	bool in_filter;		/* the OSError fallback runs only when the error
				 * names one of these (lib.split(".")[0] in err) */
	int line;		/* of the call (or list entry) in torch/__init__.py */
};

/*
 * How a release's torch/__init__.py loads its libraries, read from the file
 * itself (no per-version table), in _load_global_deps:
 *
 *   1. ctypes.CDLL(torch/lib/libtorch_global_deps.so, RTLD_GLOBAL);
 *   2. on success, the "slim wheel" branch (2.6+): only when /proc/self/maps
 *      has the text the release looks for (after_needs_mapped), the
 *      after_deps list (2.6-2.9 nvrtc and nvJitLink; 2.10+ all), each a
 *      preload, the first exception ending the list silently (it is inside
 *      try/except Exception);
 *   3. on OSError, the fallback: unless the error names none of the list's
 *      libraries (then it is re-raised), every preload of the list (a missing
 *      required one raises ValueError, a failing dlopen OSError), then the
 *      global deps again;
 *   4. from torch._C import *.
 * With USE_RTLD_GLOBAL_WITH_LIBTORCH or $TORCH_USE_RTLD_GLOBAL, 1-3 are
 * skipped and torch._C is loaded with RTLD_GLOBAL | RTLD_LAZY.
 */
struct torch_layout {
	bool found;
	const char *dir;		/* site/torch */
	const char *site;
	const char *version;		/* __version__ from version.py */
	const char *cuda;		/* cuda = '13.0', or NULL for a CPU build */
	const char *global_deps;	/* torch/lib/libtorch_global_deps.so, or NULL */
	const char *c_module;		/* torch/_C.cpython-...so */
	bool use_global_deps;
	bool rtld_global_with_libtorch;
	bool has_load_global_deps;	/* __init__.py defines _load_global_deps */
	int global_deps_line;		/* its ctypes.CDLL of libtorch_global_deps */
	const char *after_needs_mapped;	/* step 2 runs only when /proc/self/maps has this text
					 * ("libcudart.so"; 2.6-2.8 "nvidia/cuda_runtime/lib/
					 * libcudart.so": a CUDA runtime from the wheel), or NULL */
	int after_line;			/* where step 2 starts, 0 when the release has none */
	struct torch_preload *after_deps;	/* step 2 */
	size_t nafter_deps;
	bool fallback_filters;		/* step 3 re-raises errors that name no listed library */
	int fallback_line;
	bool look_in_cu_dir;		/* also nvidia/cuXX/lib (CUDA 13 single folder) */
	bool look_in_plain_dir;		/* also <sys.path>/<folder>/lib */
	struct torch_preload *preload;	/* step 3 */
	size_t npreload;
	struct ptrvec notes;
};

/* Parses torch's __init__.py, version.py and _utils_internal.py texts
 * (any may be NULL) into t; also the fuzz entry point. */
void torch_source_parse(struct arena *a, const char *init_py, const char *version_py,
			const char *internal_py, struct torch_layout *t);

/* Reads the layout of the installed torch, if any. */
void torch_layout_read(struct scan *s, const struct pyenv *e, struct torch_layout *t);

/* One dlopen an import performs, and what became of it. */
struct import_step {
	const char *path;
	bool global;
	const char *why;
	bool ok;
	const char *error;
};

struct import_run {
	bool ok;			/* the import would succeed */
	const char *error;		/* the exception it would raise */
	struct import_step *step;
	size_t nstep;
	struct dlopen_result c_module;	/* the torch._C dlopen */
	const char **loads;		/* the files the import left mapped, in load order */
	size_t nloads;
};

/* Replays `import torch` on p. */
void torch_import_replay(struct scan *s, struct process *p, const struct pyenv *e,
			 const struct torch_layout *t, struct import_run *r);

/* The file the preload list would choose for folder/pattern, or NULL. */
const char *torch_preload_path(struct scan *s, const struct pyenv *e, const struct torch_layout *t,
			       const struct torch_preload *pl);

#endif
