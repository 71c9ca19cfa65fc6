/*
 * plan.h: one plan for an environment (advice.h's struct plan), and what
 * advice.c and plan.c share.
 *
 * plan_build() gives every cause the actions that remove it and chooses
 * the one change for the whole environment: stacked causes fold into the
 * change that removes them all, a conflict is resolved by the change that
 * keeps what imports today and moves the fewest distributions.
 */
#ifndef ABISCOPE_ADVICE_PLAN_H
#define ABISCOPE_ADVICE_PLAN_H

#include "advice/advice.h"

void plan_build(struct advice *a, size_t first, size_t end);

/* The requirement the installed environment states on a distribution
 * (normalised name), and who states it; NULL when nothing does. */
const char *advice_installed_pin(struct advice *a, const char *norm, const char **by);

/* A pip-install action (req may be NULL: items added later), or NULL when
 * pip may not change this environment (externally managed). */
struct fix_action *advice_pip_install(struct advice *a, const char *req, bool no_deps, bool force);

#endif
