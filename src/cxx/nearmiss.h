/*
 * nearmiss.h: why a symbol is undefined, from what the other objects export.
 *
 * Given a symbol the loader could not bind and the objects around it (every
 * object of the load graph, whether or not the requester's lookup scope
 * sees it, plus other copies of the expected provider found on disk), the
 * search looks for:
 *
 *  - the exact symbol in an object the requester cannot see (not-in-scope),
 *    or exported at another symbol version (version-changed), or only in
 *    another copy of the library on disk (other-copy);
 *  - for a C++ name, exports with the same qualified name (overloads,
 *    other template instantiations, the other std::string flavour) and,
 *    failing those, the same name in another namespace or class; each is
 *    compared element by element (signature.h);
 *  - the library that was expected to provide it: the one named by the
 *    symbol's version requirement, else the one that exports the most
 *    symbols of the same class or namespace (for a C name: the same
 *    prefix, a guess), never the object that needs the symbol.
 *
 * and names one cause (nm_cause_name): signature-changed, cxx11-abi,
 * template-changed, namespace-changed, removed, not-in-scope,
 * version-changed, other-copy, or unknown.
 *
 * Work is bounded: candidates examined per object and near misses kept are
 * capped (the result says when a cap was hit), and export tables come from
 * the per-scan index (exports.h).  Results live in the caller's arena.
 */
#ifndef ABISCOPE_NEARMISS_H
#define ABISCOPE_NEARMISS_H

#include "cxx/exports.h"

#define NM_MAX_NEAR 8		/* near misses kept, best first */
#define NM_MAX_EXAMINE 256	/* candidates demangled per object and query */
#define NM_MAX_SUBSTRING 16	/* "same name elsewhere" scans per object and index: each reads
				   every exported name (tens of MB for libtorch_cpu) */

struct nm_object {
	const struct object *obj;
	const char *path;	/* as shown to the user */
	bool loaded;		/* part of the process; false: another copy on disk */
	bool in_scope;		/* the requester's symbol lookup searches it */
};

enum nm_cause {
	NM_CAUSE_UNKNOWN,
	NM_CAUSE_SIGNATURE,	/* same qualified name, other parameters or qualifiers */
	NM_CAUSE_CXX11_ABI,	/* the other std::string flavour */
	NM_CAUSE_TEMPLATE,	/* that template instantiation is not exported */
	NM_CAUSE_NAMESPACE,	/* same name in another namespace or class */
	NM_CAUSE_REMOVED,	/* nothing like it; the expected provider is known */
	NM_CAUSE_NOT_IN_SCOPE,	/* defined by a loaded object the requester cannot see */
	NM_CAUSE_VERSION,	/* exported, but at another symbol version */
	NM_CAUSE_OTHER_COPY,	/* only another copy of the library on disk has it */
};

struct nm_near {
	const struct nm_object *where;
	const char *symbol;	/* mangled */
	const char *version;	/* its symbol version, or NULL */
	const char *demangled;
	struct cxx_diff diff;	/* rel CXX_REL_SAME for the exact symbol */
	enum nm_cause cause;
};

struct nm_result {
	const char *symbol, *version, *version_file;
	const char *demangled;	/* NULL for a C name */
	struct cxx_sig want;
	enum nm_cause cause;
	struct nm_near *near;	/* best first */
	size_t nnear;
	const struct nm_object *expected;	/* the library expected to provide it, or NULL */
	const char *expected_scope;	/* "c10::cuda" (C++) or "aoti_torch_" (C prefix) */
	size_t expected_count;	/* how many exports of that scope it has */
	bool expected_guess;	/* from counts, not from a version requirement */
	int want_abi, have_abi;	/* _GLIBCXX_USE_CXX11_ABI of the reference and the best near miss, -1 */
	bool truncated;		/* a cap was hit: there may be more candidates */
};

/* requester: the object that needs the symbol (NULL when unknown).  Its own
 * exports are what it was compiled with (inline wrappers, template code of
 * the library's headers), not the library it lacks: a definition of its own
 * would have bound, so it is never the expected provider and none of its
 * exports is a near miss. */
void nm_search(struct cxx_index *ix, const char *symbol, const char *version,
	       const char *version_file, const struct object *requester, const struct nm_object *objs,
	       size_t nobjs, struct nm_result *r);

/* Adds what other copies (objects not loaded) export; may change the cause
 * to other-copy when nothing loaded came close. */
void nm_search_more(struct cxx_index *ix, const struct nm_object *objs, size_t nobjs,
		    struct nm_result *r);

const char *nm_cause_name(enum nm_cause c);

/* The best near miss that the cause is drawn from, or NULL. */
const struct nm_near *nm_best(const struct nm_result *r);

#endif
