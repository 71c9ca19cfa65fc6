/*
 * compare.h: what differs between two hosts (or two environments), ordered
 * by consequence, as findings.
 *
 * The order is the order of what an engineer must know first:
 *   0. the machine, when the sides differ in it (x86_64 and aarch64): no
 *      binary of one loads on the other, so that is the one finding about
 *      binaries; symbols are not compared across machines;
 *   1. imports that work on one side and fail on the other (from the
 *      checks run on each side), with the failing side's error;
 *   2. exported symbols one side's binaries use that the other side's
 *      library of another package no longer exports (A's extension would
 *      break on B's torch); within one package only on request;
 *   3. the driver, the GPUs, glibc, the Python version, torch and its CUDA
 *      build, the CUDA runtime majors present;
 *   4. libraries (by SONAME) on one side only, binaries that differ under
 *      one distribution version (copied or rebuilt in place);
 *   5. distribution versions added, removed or changed.
 * Ids are diff-* (docs/findings.md).  Objects are paired by their path
 * relative to the environment's site directory (or root), so two hosts with
 * the venv in different places compare.  Everything lives in arena a.
 */
#ifndef ABISCOPE_HOST_COMPARE_H
#define ABISCOPE_HOST_COMPARE_H

#include "host/snapshot.h"
#include "pyenv/check.h"

struct host_side {
	const char *name;		/* how reports call it: a label or the path given */
	const struct snapshot *snap;
	const struct env_check *check;	/* its verdicts, or NULL */
	const struct findings *findings;	/* the findings its verdicts point into, or NULL */
};

struct compare_summary {
	size_t import_changes;		/* imports that work on one side only */
	size_t broken_symbols;		/* used exports missing on the other side */
	size_t differences;		/* every finding added */
	bool other_machine;		/* the sides are different machines */
};

/* internal: also symbols a package's binaries take from the same package's
 * libraries (each side's torch from its own torch; consistent in itself),
 * as notes; without it only bindings across packages are compared. */
void host_compare(struct arena *a, const struct host_side *x, const struct host_side *y, bool internal,
		  struct findings *fl, struct compare_summary *sum);

/* The key an object is paired by: "site/<rel>", "env/<rel>" or its path. */
const char *host_object_key(struct arena *a, const struct snapshot *snap, const char *path);

/* A digest of what the loader sees of an object (names, needs, versions,
 * exports, references): equal digests load and bind alike. */
uint64_t host_elf_digest(const struct snap_elf *e);

#endif
