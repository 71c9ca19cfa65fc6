/*
 * plan_out.h: the plan for an environment (advice/advice.h) as check shows
 * it: in text one "fix" block before the root causes (the command, what it
 * removes, whether the model checked it); in JSON the "plan" object of
 * docs/schema/check.v2.schema.json, cause indices into the list given.
 */
#ifndef ABISCOPE_CLI_PLAN_OUT_H
#define ABISCOPE_CLI_PLAN_OUT_H

#include "advice/advice.h"
#include "cli/render.h"

void render_plan_text(const struct term *t, struct arena *a, const struct plan *p, const struct causes *shown);
/* The plan, or null when it has no action; indices of causes in list (by key). */
void render_plan_json(struct jw *w, const struct plan *p, const struct causes *list);

#endif
