/*
 * advice.h: what to do about a checked environment, as data.
 *
 * advise_env() reads a check's findings and root causes (pyenv/check.h,
 * report/causes.h) in the environment's terms and gives
 *  - each finding its fix as actions (report/action.h), within the rules a
 *    fix must keep: no pip action for an interpreter that is externally
 *    managed (PEP 668) or on files a system package manager owns (the
 *    package is named instead); no uninstall of a distribution that is not
 *    installed; no downgrade to mend metadata (the stale folder is named);
 *    versions from what is installed (the installed torch's pins);
 *  - each cause the actions that remove it;
 *  - one plan for the environment (advice/plan.h): the change that removes
 *    the most causes, checked by the model before it is shown.
 *
 * Everything lives in the scan's arena; the library never prints.
 */
#ifndef ABISCOPE_ADVICE_ADVICE_H
#define ABISCOPE_ADVICE_ADVICE_H

#include "pyenv/check.h"
#include "report/causes.h"

struct plan_state;

/* The one change for a whole environment. */
struct plan {
	struct ptrvec actions;		/* struct fix_action *, in the order to apply them */
	const char *command;		/* one pasteable line (actions joined by " && ") */
	const char *summary;		/* what it changes and why, one line */
	struct ptrvec fixes;		/* const struct cause *: the causes it removes */
	struct idmap fixed;		/* the same, by address (plan_removes) */
	struct ptrvec remaining;	/* const struct cause *: the causes it leaves */
	struct ptrvec remaining_why;	/* const char *: for each of remaining, why */
	bool checked;			/* the verdict re-run with the change applied says so */
	const char *check;		/* "checked by the model: ..." or what would remain */
	bool guess;			/* a step of it rests on heuristics */
};

/* Adds c to the causes the plan removes (once); whether it removes c. */
void plan_fixes_add(struct arena *ar, struct plan *p, const struct cause *c);
bool plan_removes(const struct plan *p, const struct cause *c);

struct advice {
	struct scan *s;
	struct env_check *c;
	struct causes *cs;
	const char *machine;		/* "x86_64", "aarch64" */
	struct plan plan;
	struct plan_state *state;	/* plan.h: the packages and candidates it was chosen from */
	/* the distributions by metadata folder, and by "site\nname" (a ptrvec
	 * of those with that name there), and the names some installed
	 * distribution requires: built once, so that a finding's distribution
	 * is found without a pass over all of them */
	struct strmap dist_by_meta, dists_by_name, required, pins_seen;
	bool dist_maps, required_read;
};

/*
 * Actions for every finding of c in [first, end) and for every cause of
 * cs, and the plan (a->plan; no actions when nothing fails or nothing is
 * known to help), checked by the model with the options c was checked
 * with (o) when model_check is set (a re-run of the check costs as much as
 * the check).  cs must be built over [first, end).
 */
void advise_env(struct scan *s, struct env_check *c, const struct check_options *o, struct causes *cs,
		size_t first, size_t end, bool model_check, struct advice *a);

/* The system package that owns path ("python3-yaml"), or NULL. */
const char *advice_system_owner(struct advice *a, const char *path);

#endif
