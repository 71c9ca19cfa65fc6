/*
 * causes.h: findings grouped by root cause, across modules and
 * distributions.
 *
 * Every finding leads, through caused_by, to a root (a finding with no
 * cause).  Roots that name the same thing are one cause: the same missing
 * library (library-not-found, -off-path, -not-installed, cuda-major-mismatch
 * name it in "library"), the same missing version, the same undefined
 * symbol, or, for symbols of a torch the module was not built against, that
 * torch; no kernel image for the same GPU; torch's own import failing.  Any
 * other root is a cause of its own.  A cause keeps its roots, every finding
 * it explains, and the modules and distributions those findings belong to
 * (the "module" and "distribution" fields check sets; else the object's
 * file name), so a report can say each cause once and what it takes down.
 *
 * Causes are ordered most severe first, then by first appearance.  The
 * structures live in the arena passed to causes_build; they point into the
 * findings list, which must outlive them.
 */
#ifndef ABISCOPE_CAUSES_H
#define ABISCOPE_CAUSES_H

#include "core/hashmap.h"
#include "report/finding.h"

struct cause {
	int index;			/* position in causes.list */
	const char *key;		/* "library:libcuda.so.1", "torch:2.10.0", "symbol:_ZN..." */
	const struct finding *lead;	/* the root that names it: the first of the most severe */
	struct ptrvec roots;		/* const struct finding *: every root grouped here */
	struct ptrvec members;		/* const struct finding *: every finding it explains, roots too */
	struct ptrvec modules;		/* const char *: distinct modules (or file names), in order */
	struct ptrvec dists;		/* const char *: distinct distributions, in order */
	enum severity severity;		/* of the most severe root */
	bool guess;			/* a root or a link to one is drawn from heuristics */
	bool driver;			/* the cause is the missing NVIDIA driver (libcuda.so.1) */
	/* a torch cause (key "torch:..."): the environment-wide answer, set by
	 * the command that knows the environment (cxx/torchcompat.h), or NULL */
	const char *torch_all;
	const struct value *torch_all_json;
	/* the fix of the cause as data (report/action.h), set by the command
	 * that knows the environment (advice/advice.h); empty: advice only */
	struct ptrvec actions;
	const char *fix;	/* the fix line for those actions, or NULL: the lead's */
};

struct causes {
	struct ptrvec list;		/* struct cause * */
	struct strmap by_key;		/* key -> struct cause * (causes_find) */
	int *of;			/* finding index -> cause index (-1: outside [first, end)) */
	size_t nfindings;
};

/* Groups the findings [first, end) of fl; notes are grouped too. */
void causes_build(struct arena *a, const struct findings *fl, size_t first, size_t end, struct causes *out);

/* The cause a finding belongs to, or NULL. */
const struct cause *causes_of(const struct causes *c, const struct finding *f);

/* The cause with this key, or NULL. */
const struct cause *causes_find(const struct causes *c, const char *key);

/* True when some cause is the missing driver. */
bool causes_driver_missing(const struct causes *c);

#endif
