/*
 * check.h: `abiscope check` as a library call: would every extension module
 * of an environment import, and if not, why.
 *
 * For one environment (or plain folder): the inventory of its ELF objects,
 * its distributions, the process its interpreter makes, and torch's import
 * replayed from its installed files.  Every extension module (and every other
 * library) is then dlopen()ed in the state it would meet: a fresh interpreter,
 * or one where torch was imported first when the module needs torch's
 * libraries or its package imports torch.  The loader findings of each load
 * are kept, tagged with the distribution and module, and explained in the
 * environment's terms: a library that is installed but off the path, one no
 * installed file provides (and the pip distribution that ships it), two
 * metadata folders for one project, files that differ from RECORD, binaries
 * no RECORD owns, a CUDA 12 folder shadowing an installed CUDA 13 package,
 * two CUDA majors in one process.
 */
#ifndef ABISCOPE_PYENV_CHECK_H
#define ABISCOPE_PYENV_CHECK_H

#include "pyenv/importctx.h"
#include "pyenv/selfload.h"
#include "pyenv/sysowner.h"

struct check_options {
	const char *python;		/* --python: the interpreter (and environment) to use */
	bool verify_hashes;		/* sha256 every RECORD entry */
	bool libraries_too;		/* also dlopen libraries that are not extension modules */
	const char *path_env;		/* PATH, to find python3 for plain folders */
	/* $VIRTUAL_ENV and $CONDA_PREFIX: the default environment when no
	 * path is given (the CLI reads the environment; the library never does) */
	const char *virtual_env, *conda_prefix;
	const char *ld_library_path;
	bool ld_bind_now;
	bool torch_rtld_global;		/* TORCH_USE_RTLD_GLOBAL set */
	bool assume_driver;		/* model libcuda.so.1 with the CUDA toolkit's stub */
	const char *cuda_home;		/* $CUDA_HOME, where the stub is looked for first */
	/* the GPU verdicts' target (cuda/gpu.h): --gpu specs, known GPUs (a
	 * snapshot's), --driver; what stays unknown is probed unless no_driver */
	const char *const *gpu_specs;
	size_t ngpu_specs;
	const unsigned *gpu_cc;
	const char *const *gpu_names;
	size_t ngpu_cc;
	const char *driver;
	bool no_driver;
	/* judge only the objects at or under these paths (binaries placed into
	 * the environment, check --host PATH); the environment, its interpreter
	 * and its `import torch` are modelled as usual.  NULL: every object */
	const char *const *focus;
	size_t nfocus;
	/* an earlier check of the same environment, in the scan whose object
	 * cache this one borrows (scan_borrow_objects: the same files, read
	 * once): what depends on the files only (the environment, the walk,
	 * the distributions, torch's layout, the packages' Python sources, the
	 * system's package lists) is taken from it, not read again; the
	 * processes and every verdict are made anew.  NULL: read everything */
	const struct env_check *same_files;
};

/* V_CANNOT_TELL: it imports only if a library its package loads itself is
 * loaded first, and abiscope cannot tell whether it is (the call runs under
 * a condition abiscope cannot decide, or its library cannot be named): not
 * known to fail, never counted as importing; depends_on says which call. */
enum verdict_state { V_OK, V_FAILS, V_NOT_CHECKED, V_OTHER_PYTHON, V_CANNOT_TELL };

struct module_verdict {
	struct inv_obj *io;
	enum verdict_state state;
	const char *dlerror;		/* V_CANNOT_TELL: the error when the library is not loaded */
	const struct self_load *depends_on;	/* V_CANNOT_TELL: the package's own load it depends on */
	const char *context;		/* "assuming torch is imported first (...)" or NULL */
	size_t finding_first, finding_end;	/* its findings in the scan's list */
	bool in_torch_import;		/* loaded by `import torch` itself */
	bool guess;			/* it binds symbols by assumption (a snapshot's library
					 * described by name only): "imports" is not known */
	bool gpu_fails;			/* imports, but has no kernel for a target GPU, or the
					 * driver is too old for it (an error-level CUDA finding) */
	/* a library (no extension module) its package's import loads itself
	 * (selfload.h), judged in the state that load meets: the load, and
	 * when it fails what the user loses, root cause first ("the failure
	 * is caught (...): `import torchvision` goes on without
	 * it, and ...", "`import torchvision` fails all the same: ..." where
	 * the import registers for one of its operators by name, or "`import PKG`
	 * raises OSError: ..." with the message Python shows: the dlerror, or
	 * torch.ops.load_library's "Could not load this library: PATH" where
	 * torch/_ops.py wraps it); NULL otherwise */
	const struct self_load *loaded_by;
	const char *consequence;
};

struct check_ctx;	/* the processes and caches of one check (check.c) */

struct env_check {
	struct check_ctx *ctx;
	struct pyenv env;
	struct inventory inv;
	struct torch_layout torch;
	bool torch_replayed;
	struct import_run torch_import;
	struct module_verdict *v;
	size_t nv;
	size_t nextensions, nstdlib, nfail_ext, nfail_lib;
	size_t nself, nfail_self;	/* libraries the packages' imports load themselves (loaded_by),
					 * judged without --libraries; counted apart from modules */
	size_t ncannot_tell;	/* modules whose verdict depends on a load abiscope cannot decide */
	size_t nunjudged;	/* of nextensions, not judged at all: no interpreter could be modelled (python_problem) */
	size_t nunjudged_other;	/* libraries (--libraries, those the packages load) not judged, likewise */
	size_t nbroken_ext;	/* of nextensions: files no one can import (extension-unreadable) */
	size_t ngpu_fail;		/* modules that import but fail on the GPU */
	const char *gpu_line;		/* the CUDA target ("H100 (sm_90), from --gpu ...") or NULL */
	size_t env_finding_first, env_finding_end;	/* environment-level findings */
	const char *python_problem;	/* why no process could be modelled, or NULL */
	const char *process_exe;	/* the interpreter every load happens in (env's, or python3 on PATH) */
	const char *driver_stub;	/* the stub standing for libcuda.so.1 (--assume-driver), or NULL */
	struct ptrvec assumed;		/* "symbol (library)": bound by assumption on a snapshot
					 * that describes the library by name only (a guess) */
	const char *externally_managed;	/* PEP 668: the interpreter's EXTERNALLY-MANAGED, or NULL */
	struct sysowner sysowner;	/* the system package manager's files (read on first use) */
};

/* The JSON name of a verdict: "ok", "fails", "not-checked", "other-python", "cannot-tell". */
const char *verdict_state_name(enum verdict_state st);

/* Checks the environment (or folder or file) at path; NULL: the default env. */
enum status check_env(struct scan *s, const char *path, const struct check_options *o,
		      struct env_check *c, struct diag *d);

/* Checks one module or file inside an environment, the way check_env would. */
enum status check_one(struct scan *s, struct env_check *c, const struct check_options *o,
		      struct inv_obj *io, struct module_verdict *out);

/* Prepares c for check_one without walking verdicts (environment and process only). */
enum status check_prepare(struct scan *s, const char *path, const struct check_options *o,
			  struct env_check *c, struct diag *d);

/* The CUDA toolkit's stub libcuda.so that stands for the driver under
 * --assume-driver: in $CUDA_HOME (cuda_home), /usr/local/cuda, or an
 * environment's nvidia/cu13/lib/stubs (e may be NULL); NULL when none. */
const char *check_find_driver_stub(struct scan *s, const struct pyenv *e, const char *cuda_home);

/* The inventory entries an import name stands for ("sgl_kernel": every
 * extension module of the package; "torch._C": that module). */
size_t check_resolve_module(struct scan *s, struct env_check *c, const char *name,
			    struct inv_obj ***out);

#endif
