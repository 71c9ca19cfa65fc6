/*
 * versions.h: symbol version nodes (GLIBCXX_3.4.32, CXXABI_1.3.15,
 * GLIBC_2.28, GCC_7.0.0) read as releases.
 *
 * A version node name is a family and a dotted number.  This module
 * orders them (numerically within a family, so GLIBCXX_3.4.9 is older
 * than GLIBCXX_3.4.10), lists what an object defines newest first, and
 * maps a node to the release that introduced it, from a table kept in
 * versions.c with its sources:
 *
 *   GLIBCXX_3.4.N, CXXABI_1.3.N  -> the GCC release (libstdc++ manual,
 *                                   "ABI Policy and Guidelines")
 *   GLIBC_2.N                    -> glibc 2.N, with distributions that
 *                                   ship it
 *   GCC_N.M.0 (libgcc_s)         -> GCC N.M, by the label itself
 *
 * Rows that could not be checked against the primary source carry
 * certain = false and say so in their note.  Nothing here allocates
 * except ver_defined(), which uses the caller's arena.
 */
#ifndef ABISCOPE_CXX_VERSIONS_H
#define ABISCOPE_CXX_VERSIONS_H

#include "core/arena.h"
#include "elf/object.h"

#define VER_MAX_PARTS 4

struct ver_name {
	char family[32];		/* "GLIBCXX" */
	unsigned num[VER_MAX_PARTS];	/* 3, 4, 32 */
	size_t nnum;
};

/* Splits "GLIBCXX_3.4.32" at its last '_'; false when there is no number. */
bool ver_parse(const char *name, struct ver_name *out);
/* <0, 0, >0: numeric within a family; families compare by name. */
int ver_compare(const char *a, const char *b);
bool ver_same_family(const char *a, const char *b);

struct ver_release {
	char release[40];	/* "GCC 13.2", "glibc 2.28" */
	const char *shipped_by;	/* "Debian 12, ..." or NULL */
	bool certain;		/* checked against the primary source */
	const char *source;	/* where the row comes from */
};

/* The release that introduced version node name; false when unknown. */
bool ver_release_of(const char *name, struct ver_release *out);

/* The version nodes o defines (not the base), newest first, the family of
 * prefer (may be NULL) before the others.  Returns how many. */
size_t ver_defined(struct arena *a, const struct object *o, const char *prefer, const char ***out);
/* The newest node of the family of like that o defines, or NULL. */
const char *ver_newest_like(const struct object *o, const char *like);
/* True when o defines version node name. */
bool ver_defines(const struct object *o, const char *name);

#endif
