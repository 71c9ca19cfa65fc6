/*
 * plan_out.h: the plan for an environment (advice/advice.h) as check shows
 * it: in text one "fix" block before the root causes (the command, what it
 * removes, whether the model checked it); in JSON the "plan" object of
 * docs/schema/check.v2.schema.json, cause indices into the list given.
 */
#ifndef ABISCOPE_CLI_PLAN_OUT_H
#define ABISCOPE_CLI_PLAN_OUT_H

#include "advice/advice.h"
#include "cli/causes_out.h"
#include "cli/render.h"

void render_plan_text(const struct term *t, struct arena *a, const struct plan *p, const struct causes *shown);
/* The plan, or null when it has no action; indices of causes in list (by key). */
void render_plan_json(struct jw *w, const struct plan *p, const struct causes *list);

/* The causes check prints for one environment: errors numbered as root
 * causes (one the plan's change removes in short, its fix "the change
 * above"), then the warnings apart, notes with -v, then what this machine
 * only has (here: its own list when shown is the driver's, else NULL). */
struct check_causes_view {
	const struct causes *shown;
	const struct causes *here;
	const struct plan *plan;
	const char *prefix;		/* "with the driver: " or "" */
	bool verbose;
};
void render_check_causes(const struct term *t, struct arena *a, const struct check_causes_view *v);

#endif
