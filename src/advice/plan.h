/*
 * plan.h: one plan for an environment (advice.h's struct plan), and what
 * advice.c, plan.c and modelcheck.c share.
 *
 * plan_build() gives every cause the actions that remove it and chooses
 * the one change for the whole environment: stacked causes fold into the
 * change that removes them all, a conflict is resolved by the change that
 * keeps what imports today and moves the fewest distributions.
 * plan_check() then checks the plan with the model (modelcheck.c).
 */
#ifndef ABISCOPE_ADVICE_PLAN_H
#define ABISCOPE_ADVICE_PLAN_H

#include "advice/advice.h"
#include "advice/pins.h"
#include "cxx/torch.h"
#include "cxx/torchcompat.h"

/* A distribution (or package folder) whose modules were judged. */
struct plan_pkg {
	const char *name;		/* distribution name, or the folder of files no RECORD owns */
	const char *folder;		/* the package folder of its modules, or NULL */
	const char *norm;
	const char *version;		/* or NULL */
	const struct dist *dist;	/* or NULL */
	size_t nmod, nfail, nunsure;
	const struct tc_package *tc;	/* the torch releases it binds (ABI index), or NULL: no torch symbol */
	int cuda_major;			/* the CUDA major its objects need (sonames of one major only), 0 */
	const char *torch_spec;		/* its own Requires-Dist on torch, or NULL */
	bool torch_level;		/* it fails, and binds another torch or needs another CUDA major */
};

/* One torch to end up with. */
struct plan_cand {
	bool keep;			/* the installed torch, kept */
	int rel;			/* its ABI index release, -1 unknown */
	const char *version;
	int cuda_major;
	const char *index_url;		/* NULL: PyPI */
	const char *variant;		/* "cu128" with index_url */
	bool feasible;			/* nothing that imports today breaks */
	size_t fixed, moves, left;	/* failing packages fixed; distributions moved; failing ones left */
	const char **move_to;		/* per package: the release it moves to, or NULL */
	bool *fixes_pkg;		/* per package: it fails today and works after */
};

struct plan_state {
	const struct torchabi *ix;	/* NULL: no torch, or no index */
	struct tc_report *tc;
	const struct pins *pins;
	struct pins *pins_cache;
	struct plan_pkg *pkg;
	size_t npkg, cap;
	struct strmap by_path;		/* a judged module's path -> its package's index + 1 */
	struct plan_cand keep;
	struct plan_cand *cand;
	size_t ncand;
	const struct plan_cand *best;	/* the torch chosen, or NULL */
	const struct fix_action *change;	/* its pip install, or NULL when it changes nothing */
	struct ptrvec by_change;	/* const struct cause *: the causes that change removes */
	struct ptrvec strays;		/* struct fix_action *: the removals of copied files beside it */
	struct strmap plan_items;	/* "action\nrequirement": what the plan's actions hold */
	struct strmap plan_merge;	/* "pip\nflags\nindex", "system\nmanager": the action that takes more */
};

void plan_build(struct advice *a, const struct check_options *o, bool model_check);
void plan_check(struct advice *a, struct plan_state *ps, const struct check_options *o);

/* The requirement the installed environment states on a distribution
 * (normalised name), and who states it; NULL when nothing does. */
const char *advice_installed_pin(struct advice *a, const char *norm, const char **by);

/* The interpreter a pip action is for (a venv's own bin/python). */
const char *advice_python(struct advice *a);

/* A pip-install action (req may be NULL: items added later), or NULL when
 * pip may not change this environment (externally managed). */
struct fix_action *advice_pip_install(struct advice *a, const char *req, bool no_deps, bool force);

/* The CUDA major every library of this soname belongs to, 0 when both majors ship it or it is no CUDA library. */
int plan_soname_major(struct arena *ar, const char *soname);

/* Every extension module of inv (and other libraries that need torch),
 * torch's own libraries excepted, added to r (torch-compat and the plan). */
void tc_add_inventory(struct scan *s, struct tc_report *r, const struct inventory *inv);

#endif
