#include "cli/plan_out.h"
#include "cli/termsafe.h"

/* The number the text gives a cause (render_causes_text: the driver and notes are not numbered), or 0. */
static int number_of(const struct causes *shown, const struct cause *c)
{
	int n = 0;
	for (size_t i = 0; i < shown->list.n; i++) {
		const struct cause *x = shown->list.item[i];
		if (x->driver || x->severity == SEV_NOTE)
			continue;
		n++;
		if (str_eq(x->key, c->key))
			return n;
	}
	return 0;
}

/* "1, 2, 4" */
static const char *numbers(struct arena *a, const struct ptrvec *causes, const struct causes *shown)
{
	const char *out = "";
	for (size_t i = 0; i < causes->n; i++) {
		int k = number_of(shown, causes->item[i]);
		if (k)
			out = arena_printf(a, "%s%s%d", out, *out ? ", " : "", k);
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
	const char *fixed = numbers(a, &p->fixes, shown);
	fprintf(t->out, "             removes cause%s %s; %s%s\n", p->fixes.n == 1 ? "" : "s", fixed,
		one_line(p->check), p->guess ? " (a guess in part)" : "");
	for (size_t i = 0; i < p->remaining.n; i++) {
		int k = number_of(shown, p->remaining.item[i]);
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
