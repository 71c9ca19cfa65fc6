/*
 * plan.c: one plan for the environment (plan.h).
 */
#include "advice/plan.h"

static bool same_flags(const struct fix_action *x, const struct fix_action *y)
{
	return x->kind == y->kind && x->no_deps == y->no_deps && x->force_reinstall == y->force_reinstall &&
	       ((!x->index_url && !y->index_url) || (x->index_url && y->index_url && str_eq(x->index_url, y->index_url)));
}

/* Adds x to the plan, one pip install for requirements that go together. */
static void plan_add(struct advice *a, const struct fix_action *x)
{
	struct plan *p = &a->plan;
	for (size_t i = 0; i < p->actions.n; i++) {
		struct fix_action *y = p->actions.item[i];
		if (x->kind == FIX_PIP_INSTALL && same_flags(x, y)) {
			for (size_t k = 0; k < x->items.n; k++)
				fix_action_item(&a->s->arena, y, x->items.item[k]);
			fix_action_finish(&a->s->arena, y);
			return;
		}
		if (x->kind != FIX_PIP_INSTALL && x->kind == y->kind && x->path && y->path && str_eq(x->path, y->path))
			return;
	}
	struct fix_action *c = fix_action_new(&a->s->arena, x->kind);
	*c = *x;
	memset(&c->items, 0, sizeof c->items);
	for (size_t k = 0; k < x->items.n; k++)
		fix_action_item(&a->s->arena, c, x->items.item[k]);
	fix_action_finish(&a->s->arena, c);
	ptrvec_push(&a->s->arena, &p->actions, c);
}

void plan_build(struct advice *a, size_t first, size_t end)
{
	(void)first;
	(void)end;
	struct plan *p = &a->plan;
	for (size_t i = 0; i < a->cs->list.n; i++) {
		struct cause *c = a->cs->list.item[i];
		for (size_t k = 0; k < c->lead->actions.n; k++)
			ptrvec_push(&a->s->arena, &c->actions, c->lead->actions.item[k]);
		if (c->severity != SEV_ERROR || c->driver)
			continue;
		if (!c->actions.n) {
			ptrvec_push(&a->s->arena, &p->remaining, c);
			ptrvec_push(&a->s->arena, &p->remaining_why,
				    (void *)(c->lead->fix ? c->lead->fix : "no action is known for it"));
			continue;
		}
		for (size_t k = 0; k < c->actions.n; k++)
			plan_add(a, c->actions.item[k]);
		ptrvec_push(&a->s->arena, &p->fixes, c);
	}
	p->command = fix_actions_command(&a->s->arena, &p->actions);
	p->check = "not checked by the model";
}
