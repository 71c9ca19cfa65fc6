/*
 * explain.h: a near-miss result (nearmiss.h) turned into words and fields
 * of an undefined-symbol finding, the way an engineer would explain it.
 *
 * cxx_explain_undefined() adds to the finding:
 *   JSON  "cause" (nm_cause_name, null when unknown), "near": a list of
 *         {provider, symbol, demangled, version, diff, loaded, in_scope},
 *         "near_truncated" (a cap cut the search: there may be more),
 *         "expected_provider" (path or null) with "expected_scope" and
 *         "expected_guess", "torch" ({installed, built_against_other})
 *         when the symbol belongs to the installed torch;
 *   text  a "cause:" line, the wanted and the exported signatures with
 *         their differences element by element, the torch sentence, and
 *         the fix, phrased as what the user would do.
 * It adds nothing but the JSON fields when the cause is unknown.
 *
 * The library never prints; lines go into the finding.  Strings live in
 * the findings' arena.
 */
#ifndef ABISCOPE_CXX_EXPLAIN_H
#define ABISCOPE_CXX_EXPLAIN_H

#include "cxx/nearmiss.h"
#include "report/finding.h"

struct cxx_explain_ctx {
	const char *requester;		/* path of the object that needs the symbol */
	const char *torch_version;	/* the installed torch's __version__, or NULL */
	int torch_cxx11_abi;		/* the installed torch's flavour, -1 */
	const char *fix_override;	/* a fix the caller knows better (other-copy), or NULL */
	/* From the torch ABI index (cxx/torchabi.h), when the requester needs
	 * torch symbols: the releases it binds against ("sgl_kernel binds
	 * against torch 2.9.0 and 2.9.1 (CUDA 12)"), the fix naming one
	 * ("pip install torch==2.9.1, or ...") or NULL when the installed torch
	 * is one of them, and the JSON (releases, installed_ok...). */
	const char *torch_releases;
	const char *torch_fix;
	struct value *torch_compat;
};

void cxx_explain_undefined(struct findings *L, struct finding *f, const struct nm_result *r,
			   const struct cxx_explain_ctx *c);

/* What a user calls the thing that holds path: the package directory under
 * site-packages ("sgl_kernel"), else the file name. */
const char *cxx_package_of(struct arena *a, const char *path);

/* True when the result points at torch's libraries (or torch's namespaces
 * and torch is installed). */
bool cxx_result_is_torch(const struct nm_result *r, const struct cxx_explain_ctx *c);

#endif
