/*
 * torchcompat.h: which torch releases the extensions of an environment (or
 * the files given) bind against, from the torch ABI index (cxx/torchabi.h),
 * and which releases would satisfy all of them at once.
 *
 * Objects are grouped by the distribution that owns them (RECORD), else by
 * their package folder; torch's own libraries are skipped.  An object that
 * needs no torch symbol is left out.  A package's set is the intersection
 * of its objects' sets; the environment's is the intersection of all.  When
 * that is empty, the pairs of packages whose sets do not meet are listed.
 *
 * Everything lives in the scan's arena.  The library never prints: the
 * sentences (tc_summary, tc_fix) are returned as strings.
 */
#ifndef ABISCOPE_CXX_TORCHCOMPAT_H
#define ABISCOPE_CXX_TORCHCOMPAT_H

#include "cxx/torchabi.h"
#include "scan.h"

#define TC_MAX_CONFLICTS 16

struct tc_object {
	const char *path;
	const char *module;		/* import name, or NULL */
	struct torch_compat c;		/* names copied: the object may be unmapped after */
	size_t nmissing_installed;	/* needed names the installed release lacks */
	const char *missing_installed[2];	/* the first of them */
};

struct tc_package {
	const char *name;		/* distribution name, or the package folder */
	const char *version;		/* or NULL */
	struct tc_object **obj;
	size_t nobj;
	struct torchset ok;		/* releases satisfying all its objects */
	size_t nneed, nstable, nnone;	/* summed over its objects */
	const char *none[TORCH_COMPAT_MAX_LISTED];
	bool stable_only;		/* every torch symbol is stable C ABI */
	int cudart_major;		/* of its objects, -1 */
	uint16_t machine;		/* of its first object: the releases it is compared with */
	bool installed_ok;		/* the installed torch is in ok (false when no torch) */
};

struct tc_report {
	const struct torchabi *ix;
	const char *installed;		/* installed torch __version__, or NULL */
	uint16_t machine;		/* of the first object added: the installed torch's */
	int installed_rel;		/* its index entry for that machine, -1 */
	struct tc_package **pkg;
	size_t npkg;
	struct torchset all;		/* releases satisfying every package */
	size_t nconflict;
	struct { size_t a, b; } conflict[TC_MAX_CONFLICTS];
};

/* The index of the scan, decoded on first use; NULL (with d) when unusable. */
const struct torchabi *tc_index(struct scan *s, struct diag *d);

void tc_report_init(struct tc_report *r, const struct torchabi *ix, const char *installed);
/* Adds one ELF object (owner name/version may be NULL: the file name is used).
 * The first object that needs torch fixes the report's machine, so the
 * installed torch is looked up among that machine's releases. */
void tc_add_object(struct scan *s, struct tc_report *r, const char *path, const struct object *o,
		   const char *owner, const char *owner_version, const char *module);
/* tc_add_object() with what o needs, c: torch_compat_of(r->ix, o) computed
 * before (the same object in report after report). */
void tc_add_compat(struct scan *s, struct tc_report *r, const char *path, const struct object *o,
		   const struct torch_compat *c, const char *owner, const char *owner_version,
		   const char *module);
/* Computes r->all and the conflicts. */
void tc_finish(struct tc_report *r);

/* "sgl-kernel 0.3.21 binds against torch 2.9.0 and 2.9.1 (CUDA 12)" */
const char *tc_summary(struct arena *a, const struct tc_report *r, const struct tc_package *p);
/* "pip install torch==2.9.1, or a sgl-kernel built for torch 2.10.0", or NULL
 * when the installed torch already satisfies p. */
const char *tc_fix(struct arena *a, const struct tc_report *r, const struct tc_package *p);
/* The environment-wide answer in one sentence: "no torch release satisfies
 * both sgl-kernel 0.3.21 (2.9.0 and 2.9.1) and sglang-kernel 0.4.10 (2.14.0
 * to 2.15.0)", or the releases that satisfy every package; NULL with fewer
 * than two packages (nothing to intersect). */
const char *tc_all_sentence(struct arena *a, const struct tc_report *r);
/* The same as a value: {text, packages, satisfies_all: [versions],
 * conflicts: [[{name, version, releases}, {...}]]}. */
struct value *tc_all_value(struct arena *a, const struct tc_report *r);
/* The releases as a JSON-friendly list of version strings. */
struct value *tc_set_value(struct arena *a, const struct torchabi *ix, const struct torchset *s);

#endif
