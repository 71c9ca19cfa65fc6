/*
 * importctx.h: what importing a package does to the process, so that an
 * extension that only loads "after import torch" is judged in that state.
 *
 * torch is modelled from its installed files, never imported: torch/__init__.py
 * is read for the CUDA libraries it preloads (the (folder, pattern) list of
 * _preload_cuda_deps, whether it also looks in nvidia/cuXX/lib, whether the
 * preload is unconditional), torch/_utils_internal.py for USE_GLOBAL_DEPS and
 * USE_RTLD_GLOBAL_WITH_LIBTORCH, torch/version.py for the CUDA version.  The
 * import is then replayed on a process: libtorch_global_deps.so with
 * RTLD_GLOBAL (on failure: the preloads first, then again), the preloads with
 * ctypes.CDLL (RTLD_NOW | RTLD_LOCAL), then torch._C.
 *
 * Another package is modelled as the dlopen of the extension module through
 * which it would load the library in question (a guess, and labelled one).
 */
#ifndef ABISCOPE_PYENV_IMPORTCTX_H
#define ABISCOPE_PYENV_IMPORTCTX_H

#include "loader/process.h"
#include "pyenv/inventory.h"

struct torch_preload {
	const char *folder;	/* "cuda_nvrtc" */
	const char *pattern;	/* "libnvrtc.so.*[0-9]" */
	bool required;
};

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
	bool preload_always;		/* newer torch: preload once cudart is in the process */
	bool look_in_cu_dir;		/* newer torch: also nvidia/cuXX/lib */
	bool look_in_plain_dir;		/* newer torch: also <sys.path>/<folder>/lib */
	struct torch_preload *preload;
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
};

/* Replays `import torch` on p. */
void torch_import_replay(struct scan *s, struct process *p, const struct pyenv *e,
			 const struct torch_layout *t, struct import_run *r);

/* The file the preload list would choose for folder/pattern, or NULL. */
const char *torch_preload_path(struct scan *s, const struct pyenv *e, const struct torch_layout *t,
			       const struct torch_preload *pl);

#endif
