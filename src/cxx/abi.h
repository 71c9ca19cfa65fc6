/*
 * abi.h: who built an object, read from the object alone.
 *
 *  - the CXX11 string ABI (_GLIBCXX_USE_CXX11_ABI) its C++ interface uses:
 *    names with std::__cxx11:: or [abi:cxx11] are 1, names with the old
 *    std::string (mangled Ss) or std::list are 0.  Candidates are picked by
 *    a substring of the mangled name and confirmed on the demangled text;
 *    at most CXX_ABI_MAX_DEMANGLE names are demangled.
 *  - whether it uses LibTorch: only the stable C ABI (aoti_torch_*,
 *    torch_* C functions: survives torch upgrades), or the C++ API of
 *    c10::, at::, torch::, c10d:: (must be rebuilt for each torch release);
 *  - the CUDA runtime it links (DT_NEEDED libcudart.so.N) and whether it
 *    carries device code (.nv_fatbin);
 *  - its pybind11 internals id ("__pybind11_internals_v4_gcc_libstdcpp_
 *    cxxabi1011__"), a string in .rodata;
 *  - the compilers recorded in .comment ("GCC: (GNU) 11.2.1 ...").
 *
 * Section contents are untrusted: every string is read through the
 * bounds-checked reader, proven NUL-terminated inside its section, checked
 * to be printable and capped in length and number.  Results live in the
 * caller's arena.
 */
#ifndef ABISCOPE_CXX_ABI_H
#define ABISCOPE_CXX_ABI_H

#include "elf/object.h"

#define CXX_ABI_MAX_DEMANGLE 512
#define CXX_MAX_COMPILERS 8

enum torch_api {
	TORCH_API_NONE,		/* no LibTorch symbols */
	TORCH_API_STABLE,	/* only the stable C ABI */
	TORCH_API_UNSTABLE,	/* the C++ API only */
	TORCH_API_MIXED,	/* both: the C++ part ties it to one torch release */
};

struct cxx_identity {
	int cxx11_abi;			/* 0, 1, -1 unknown, 2 both flavours */
	size_t abi_old, abi_new;	/* names seen with each flavour */
	const char *abi_example;	/* a demangled name that shows it */
	enum torch_api torch_api;
	size_t torch_cxx_imports;	/* undefined c10::/at::/torch:: C++ symbols */
	size_t torch_stable_imports;	/* undefined aoti_torch_* / torch_* C symbols */
	const char *torch_cxx_example;	/* one demangled C++ import, for the text */
	const char *cudart;		/* "libcudart.so.12" from DT_NEEDED, or NULL */
	int cuda_major;			/* from cudart's name, -1 */
	bool device_code;		/* a .nv_fatbin section */
	const char *pybind11_id;	/* or NULL */
	const char **compiler;		/* distinct .comment strings */
	size_t ncompiler;
};

/* Reads everything above from o (an ELF object of the cache). */
void cxx_identify(struct arena *a, const struct object *o, struct cxx_identity *out);

/* Only the ABI flavour, from names o exports (imports = false) or needs
 * (imports = true): what torch's libc10.so says about torch. */
int cxx_abi_of(struct arena *a, const struct object *o, bool imports, size_t *old_n, size_t *new_n,
	       const char **example);

/* The pybind11 internals id in a byte window, or NULL.  Also the fuzz entry. */
const char *cxx_find_pybind11_id(struct arena *a, const struct bytes *b);
/* The distinct strings of a .comment section; returns how many. */
size_t cxx_comment_strings(struct arena *a, const struct bytes *b, const char ***out);

const char *torch_api_name(enum torch_api t);

/* LibTorch's C++ API: a mangled name whose outermost scope is c10::, at::,
 * torch::, c10d:: or caffe2:: (the name goes on after it, or ends there).
 * What identifies an object's torch_cxx_imports and what the torch ABI index
 * (torchabi.h) counts as a torch symbol. */
bool cxx_torch_cxx_name(const char *name);
/* LibTorch's stable C ABI: aoti_torch_* and the torch_* C functions. */
bool cxx_torch_stable_name(const char *name);

#endif
