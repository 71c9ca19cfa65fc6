/*
 * cxx/torch.h: the installed torch as a C++ library (its release, CXX11 ABI
 * and CUDA runtime), from its files, never imported.  It sits in cxx/
 * because the C++ explanations (cxx/explain.c) name the torch an extension
 * was built against; pyenv/ and above use it too.
 *
 *   torch/version.py         __version__ ("2.10.0+cu130"), cuda ("13.0" or
 *                            None), git_version, hip, rocm, xpu, debug:
 *                            read as text, top-level assignments of
 *                            literals only (torch_version_py_parse);
 *   torch/lib/libc10.so      its CXX11 string ABI, from the names it
 *                            exports (cxx/abi.h);
 *   torch/lib/libtorch_cuda.so   the CUDA runtime it links (DT_NEEDED
 *                            libcudart.so.N); absent on a CPU build.
 *
 * version.py is untrusted text: it is read through the bounds-checked
 * reader, at most TORCH_VERSION_PY_MAX bytes, values longer than
 * TORCH_VALUE_MAX are dropped, and anything that is not a plain literal
 * assignment is skipped.  Results live in the caller's arena; files are
 * read through the scan's file-system view and object cache.
 */
#ifndef ABISCOPE_CXX_TORCH_H
#define ABISCOPE_CXX_TORCH_H

#include "core/bytes.h"
#include "elf/object.h"

#define TORCH_VERSION_PY_MAX (64 * 1024)
#define TORCH_VALUE_MAX 256

struct torch_version_py {
	const char *version;		/* __version__ */
	const char *cuda;		/* NULL when None or absent */
	const char *git_version;
	const char *hip, *rocm, *xpu;
	bool debug;
	bool has_version;		/* __version__ was found */
};

/* Parses the text of torch/version.py.  ST_MALFORMED (with the offset)
 * only when no __version__ assignment is found. */
enum status torch_version_py_parse(struct arena *a, struct bytes text, const char *path,
				   struct torch_version_py *out, struct diag *d);

/* "cu130" from "2.10.0+cu130", "cpu" from "+cpu"; NULL without a local tag. */
const char *torch_local_tag(struct arena *a, const char *version);

struct torch_identity {
	const char *dir;		/* .../site-packages/torch */
	struct torch_version_py v;
	const char *local_tag;		/* "cu130" or NULL */
	int cxx11_abi;			/* from libc10.so's exports; -1 unknown */
	const char *abi_example;	/* a libc10.so export that shows it */
	const char *libc10;		/* path, or NULL when absent */
	const char *cudart;		/* libtorch_cuda.so's libcudart.so.N, or NULL */
	int cudart_major;		/* -1 */
	bool cuda_build;		/* torch/lib/libtorch_cuda.so exists */
	struct diag problem;		/* the first file that could not be read */
};

/* Reads the torch installed in dir (the package directory).  ST_NOT_FOUND
 * when dir has no version.py; problems with the other files go to
 * id->problem and the rest is still filled in. */
enum status torch_identify(struct arena *a, struct objcache *oc, const char *dir,
			   struct torch_identity *id, struct diag *d);

/* The torch package directory of a file inside it (".../torch/lib/libc10.so"
 * -> ".../torch"), or NULL. */
const char *torch_dir_of(struct arena *a, const char *path);

/* Looks for <ancestor>/torch/version.py in the directories above path (at
 * most max_up levels): the torch a package in the same site-packages sees. */
const char *torch_dir_near(struct arena *a, const struct fsview *fs, const char *path, int max_up);

/* True for a library torch ships (libc10.so, libc10_cuda.so, libtorch.so,
 * libtorch_*.so, libshm.so, or any file in torch/lib): not libtorchaudio.so. */
bool torch_is_torch_library(const char *path);

#endif
