#include "cli/plan_out.h"
#include "cli/termsafe.h"

/* Causes the plan's change removes, said without -v (each in at most
 * PLANNED_LINES lines under its title): the plan names them by number, and
 * the rest are counted; so three failing packages fit 45 lines. */
#define PLANNED_SHOWN 2
#define PLANNED_LINES 4

/* The numbers the text gives the causes of shown (render_check_causes: the
 * driver and notes are not numbered), by key, made once. */
static struct strmap *numbering(struct arena *a, const struct causes *shown)
{
	struct strmap *m = arena_calloc(a, 1, sizeof *m);
	intptr_t n = 0;
	for (size_t i = 0; i < shown->list.n; i++) {
		const struct cause *x = shown->list.item[i];
		if (!x->driver && x->severity != SEV_NOTE)
			strmap_put(a, m, x->key, (void *)++n);
	}
	return m;
}

static int number_of(const struct strmap *nums, const struct cause *c)
{
	return (int)(intptr_t)strmap_get(nums, c->key);
}

static int cmp_int(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

/* "1, 2, 4", in order */
static const char *numbers(struct arena *a, const struct ptrvec *causes, const struct strmap *nums)
{
	int *k = arena_calloc(a, causes->n ? causes->n : 1, sizeof *k);
	size_t n = 0, len = 1;
	for (size_t i = 0; i < causes->n; i++)
		if ((k[n] = number_of(nums, causes->item[i])) != 0)
			n++;
	sort_items(k, n, sizeof *k, cmp_int);
	/* runs of consecutive numbers as ranges: "1-24, 27" */
	size_t cap = n * 26 + len, at = 0;
	char *out = arena_alloc(a, cap);
	out[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && k[j + 1] == k[j] + 1)
			j++;
		if (j > i + 1)
			at += (size_t)snprintf(out + at, cap - at, "%s%d-%d", i ? ", " : "", k[i], k[j]);
		else
			for (size_t q = i; q <= j; q++)
				at += (size_t)snprintf(out + at, cap - at, "%s%d", q ? ", " : "", k[q]);
		i = j + 1;
	}
	return out;
}

void render_plan_text(const struct term *t, struct arena *a, const struct plan *p, const struct causes *shown)
{
	if (!p->actions.n)
		return;
	fprintf(t->out, "%sfix%s          %s%s%s\n", c_bold(t), c_reset(t), c_green(t), one_line(p->command), c_reset(t));
	if (p->summary)
		fprintf(t->out, "             %s\n", one_line(p->summary));
	struct strmap *nums = numbering(a, shown);
	const char *fixed = numbers(a, &p->fixes, nums);
	fprintf(t->out, "             removes cause%s %s; %s%s\n", p->fixes.n == 1 ? "" : "s", fixed,
		one_line(p->check), p->guess ? " (a guess in part)" : "");
	for (size_t i = 0; i < p->remaining.n; i++) {
		int k = number_of(nums, p->remaining.item[i]);
		fprintf(t->out, "             then: cause %d remains: %s\n", k, one_line(p->remaining_why.item[i]));
	}
	fputc('\n', t->out);
}

static void indices(struct jw *w, const struct ptrvec *causes, const struct causes *list)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < causes->n; i++) {
		const struct cause *x = causes_find(list, ((const struct cause *)causes->item[i])->key);
		if (x)
			jw_int(w, x->index);
	}
	jw_arr_end(w);
}

void render_plan_json(struct jw *w, const struct plan *p, const struct causes *list)
{
	if (!p || !p->actions.n) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	jw_key(w, "actions");
	render_actions_json(w, &p->actions);
	jw_kstr(w, "command", p->command);
	jw_kstr(w, "summary", p->summary);
	jw_key(w, "fixes");
	indices(w, &p->fixes, list);
	jw_key(w, "remaining");
	indices(w, &p->remaining, list);
	jw_key(w, "remaining_why");
	jw_arr_begin(w);
	for (size_t i = 0; i < p->remaining.n; i++)
		if (causes_find(list, ((const struct cause *)p->remaining.item[i])->key))
			jw_str(w, p->remaining_why.item[i]);
	jw_arr_end(w);
	jw_kstr(w, "checked", p->checked ? "model" : "not-checked");
	jw_kstr(w, "check", p->check);
	jw_kbool(w, "guess", p->guess);
	jw_obj_end(w);
}

/* The causes of list by what their lead finding says ("id\ntitle"), for
 * listed_in: one map per rendering, not a pass over list per cause. */
static struct strmap *said_in(struct arena *a, const struct causes *list)
{
	struct strmap *m = arena_calloc(a, 1, sizeof *m);
	for (size_t i = 0; i < list->list.n; i++) {
		const struct cause *x = list->list.item[i];
		if (x->lead->title)
			strmap_put(a, m, arena_printf(a, "%s\n%s", x->lead->id, x->lead->title), MAP_YES);
	}
	return m;
}

/* Is c (a cause of one run) also a cause of list: the same key, or the same finding said the same way
 * (said: said_in(list))? */
static bool listed_in(struct arena *a, const struct causes *list, const struct strmap *said, const struct cause *c)
{
	return causes_find(list, c->key) ||
	       (c->lead->title && strmap_get(said, arena_printf(a, "%s\n%s", c->lead->id, c->lead->title)));
}

/* A cause the plan's change removes: advice sets its fix to that change;
 * or a warning whose own actions the plan takes (a reinstall the change
 * makes anyway): its fix line would repeat the plan's. */
static bool removed_by_change(const struct plan *p, const struct cause *c)
{
	if (!p || !p->actions.n)
		return false;
	if (c->fix)
		return true;
	return c->severity == SEV_WARNING && c->actions.n && plan_removes(p, c);
}

void render_check_causes(const struct term *t, struct arena *a, const struct check_causes_view *v)
{
	size_t nerr = 0, nwarn = 0, nnote = 0, nhere = 0;
	const struct strmap *said = v->here && v->here->list.n ? said_in(a, v->shown) : NULL;
	for (size_t i = 0; i < v->shown->list.n; i++) {
		const struct cause *c = v->shown->list.item[i];
		if (c->driver)
			continue;
		nerr += c->severity == SEV_ERROR;
		nwarn += c->severity == SEV_WARNING;
		nnote += c->severity == SEV_NOTE;
	}
	for (size_t i = 0; v->here && i < v->here->list.n; i++) {
		const struct cause *c = v->here->list.item[i];
		nhere += !c->driver && c->severity != SEV_NOTE && !listed_in(a, v->shown, said, c);
	}
	int n = 0;
	if (nerr)
		fprintf(t->out, "%s%s%zu root cause%s%s\n", c_bold(t), v->prefix, nerr, nerr == 1 ? "" : "s", c_reset(t));
	for (int sev = SEV_ERROR; sev <= SEV_NOTE; sev++) {
		if (sev == SEV_WARNING && nwarn)
			fprintf(t->out, "%s%s%zu warning%s%s (not counted as root causes)\n", nerr ? "\n" : "",
				c_bold(t), nwarn, nwarn == 1 ? "" : "s", c_reset(t));
		if (sev == SEV_NOTE && (!v->verbose || !nnote))
			break;
		if (sev == SEV_NOTE)
			fprintf(t->out, "%snotes%s\n", c_bold(t), c_reset(t));
		/* the causes the plan's change removes: the first few said, the rest counted
		 * (-v says them all); numbered all the same, as the plan names them */
		size_t planned_shown = 0, planned_more = 0;
		int first_more = 0, last_more = 0;
		for (size_t i = 0; i < v->shown->list.n; i++) {
			const struct cause *c = v->shown->list.item[i];
			if (c->driver || (int)c->severity != sev)
				continue;
			bool planned = removed_by_change(v->plan, c);
			int num = sev == SEV_NOTE ? 0 : ++n;
			if (planned && !v->verbose && planned_shown >= PLANNED_SHOWN) {
				if (!planned_more++)
					first_more = num;
				last_more = num;
				continue;
			}
			planned_shown += planned;
			render_cause_text_in_plan(t, a, c, num, v->verbose, planned ? "the change above" : NULL,
						  planned ? PLANNED_LINES : sev == SEV_ERROR ? 0 : 2);
		}
		if (planned_more)
			fprintf(t->out, "%s%d. ... and %zu more cause%s the change above removes (-v says %s)\n",
				planned_more == 1 ? "" : arena_printf(a, "%d-", first_more), last_more, planned_more,
				planned_more == 1 ? "" : "s", planned_more == 1 ? "it" : "them");
	}
	if (!nhere)
		return;
	fprintf(t->out, "%sfound here only%s (this machine, without the driver)\n", c_bold(t), c_reset(t));
	for (size_t i = 0; i < v->here->list.n; i++) {
		const struct cause *c = v->here->list.item[i];
		if (!c->driver && c->severity != SEV_NOTE && !listed_in(a, v->shown, said, c))
			render_cause_text_in_plan(t, a, c, ++n, v->verbose, NULL, 2);
	}
}
