/*
 * checkctx.h: what the files of `abiscope check` share (check.c, missing.c,
 * envfind.c); not part of the library's interface.
 *
 * check.c runs the pipeline (the processes, one verdict per module);
 * missing.c says where a library the loader did not find is and which CUDA
 * major a module needs; envfind.c makes the findings about the environment
 * as a whole (metadata, RECORD, CUDA majors torch's import mixes).
 */
#ifndef ABISCOPE_PYENV_CHECKCTX_H
#define ABISCOPE_PYENV_CHECKCTX_H

#include "pyenv/check.h"
#include "cuda/verdict.h"
#include "cxx/exports.h"

/* The processes of one check: a fresh interpreter, and one after `import torch`. */
struct check_ctx {
	struct scan *s;
	struct env_check *c;
	const struct check_options *o;
	const struct check_ctx *prev;	/* the check of the same files (check_options.same_files) */
	struct process base;
	bool base_ok;
	struct process torchp;
	bool torch_ok;
	struct strmap pkg_init;		/* "site/package" -> struct pkg_init * */
	struct strmap pkg_missing;	/* "site/package" -> struct pkg_missing * (pyimport.h), read once */
	struct cxx_index cxx;		/* exports indexed once for every explanation */
	struct cxx_index *ix;		/* &cxx, or the one of the check of the same files */
	struct cuda_ctx cuda;		/* device code read once; the GPU target */
	int import_fails;		/* the import-fails finding of `import torch`, or -1 */
	struct strmap dup_by_meta;	/* metadata folder -> its duplicate-dist-info finding's index + 1 */
	struct ptrvec toolkit;		/* const char *: CUDA toolkit library folders outside the environment */
	bool toolkit_read;
	int ops_wraps_error;		/* torch/_ops.py's load_library raises "Could not load this
					 * library: PATH" for the dlerror: 1, 0, -1 not read yet */
	/* envfind.c: each RECORD checked against the disk (struct record_check *,
	 * one per distribution with a RECORD, in inv.dists.all's order), kept for
	 * a later check of the same files */
	struct ptrvec records;
	bool records_checked;
};

/* The distribution, module and package of io, as fields of f. */
void check_set_fields(struct scan *s, struct finding *f, const struct inv_obj *io);
/* Is io one of torch's own files? */
bool check_in_torch(const struct check_ctx *x, const struct inv_obj *io);
/* The load of io its package's import makes itself (selfload.h), or NULL. */
const struct self_load *check_self_load_of(struct check_ctx *x, const struct inv_obj *io);
/* Is path at or under one of o's focus paths? */
bool check_in_focus(const struct check_options *o, const char *path);

/* missing.c: a library-not-found explained in the environment's terms
 * (lnf->caused_by is set to the new finding). */
void check_explain_missing(struct check_ctx *x, struct finding *lnf, const struct inv_obj *io);
/* missing.c: an extension that needs another CUDA major than torch; two majors of one library in a process. */
void check_cuda_major_vs_torch(struct check_ctx *x, const struct inv_obj *io);
void check_two_majors(struct check_ctx *x, const struct dlopen_result *r, const struct inv_obj *io);

/* envfind.c: the environment's own findings. */
void check_torch_import_majors(struct check_ctx *x);
void check_duplicate_dist_info(struct check_ctx *x);
void check_record_mismatch(struct check_ctx *x);
void check_broken_extensions(struct check_ctx *x);
void check_namespace_shadow(struct check_ctx *x);
void check_system_files(struct check_ctx *x);

#endif
