#include "cli/render.h"
#include "cli/termsafe.h"

#include <unistd.h>

/* The SGR sequences, each ESC followed by the filter's mark (termsafe.h). */
enum { SGR_BOLD, SGR_RED, SGR_YELLOW, SGR_GREEN, SGR_CYAN, SGR_DIM, SGR_RESET, SGR_N };
static char sgr[SGR_N][48];

static void make_sgr(void)
{
	static const char *const code[SGR_N] = { "1", "1;31", "33", "32", "36", "2", "0" };
	for (int i = 0; i < SGR_N; i++)
		snprintf(sgr[i], sizeof sgr[i], "\033%s[%sm", termsafe_mark(), code[i]);
}

static bool env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

/* --color=auto: what uv, ruff and pip do.  NO_COLOR (no-color.org) wins over
 * FORCE_COLOR (force-color.org) and CLICOLOR_FORCE (not "0"); then a dumb
 * terminal has none; else colour exactly on a terminal. */
static bool auto_color(int fd)
{
	if (env_set("NO_COLOR"))
		return false;
	const char *clicolor_force = getenv("CLICOLOR_FORCE");
	if (env_set("FORCE_COLOR") || (clicolor_force && *clicolor_force && !str_eq(clicolor_force, "0")))
		return true;
	const char *term = getenv("TERM");
	if (term && str_eq(term, "dumb"))
		return false;
	return isatty(fd);
}

void term_init(struct term *t, FILE *out, enum color_mode mode)
{
	t->out = out;
	if (mode == COLOR_ALWAYS)
		t->color = true;
	else if (mode == COLOR_NEVER)
		t->color = false;
	else {
		/* stdout and stderr are filter streams with no descriptor of their own */
		int fd = out == stdout ? STDOUT_FILENO : out == stderr ? STDERR_FILENO : fileno(out);
		t->color = auto_color(fd);
	}
	if (t->color)
		make_sgr();
}

const char *c_bold(const struct term *t) { return t->color ? sgr[SGR_BOLD] : ""; }
const char *c_red(const struct term *t) { return t->color ? sgr[SGR_RED] : ""; }
const char *c_yellow(const struct term *t) { return t->color ? sgr[SGR_YELLOW] : ""; }
const char *c_green(const struct term *t) { return t->color ? sgr[SGR_GREEN] : ""; }
const char *c_cyan(const struct term *t) { return t->color ? sgr[SGR_CYAN] : ""; }
const char *c_dim(const struct term *t) { return t->color ? sgr[SGR_DIM] : ""; }
const char *c_reset(const struct term *t) { return t->color ? sgr[SGR_RESET] : ""; }

static const char *sev_color(const struct term *t, enum severity s)
{
	return s == SEV_ERROR ? c_red(t) : s == SEV_WARNING ? c_yellow(t) : c_cyan(t);
}

static void one_text(const struct term *t, const struct finding *f, int depth)
{
	const char *pad = depth ? "    " : "";
	fprintf(t->out, "%s%s%s[%s]%s %s%s%s\n", pad, sev_color(t, f->severity),
		severity_name(f->severity), f->id, c_reset(t), c_bold(t), f->title ? one_line(f->title) : "",
		c_reset(t));
	if (f->guess)
		fprintf(t->out, "%s    %s(a guess: drawn from heuristics, not from the loader's rules)%s\n",
			pad, c_dim(t), c_reset(t));
	for (size_t i = 0; i < f->lines.n; i++)
		fprintf(t->out, "%s    %s\n", pad, one_line(f->lines.item[i]));
	if (f->fix)
		fprintf(t->out, "%s    %sfix:%s %s\n", pad, c_green(t), c_reset(t), one_line(f->fix));
}

void render_findings_text(const struct term *t, const struct findings *fl, bool verbose)
{
	/* Root causes first, each followed by the findings it causes. */
	for (size_t i = 0; i < fl->list.n; i++) {
		const struct finding *f = fl->list.item[i];
		if (f->caused_by >= 0)
			continue;
		if (!verbose && f->severity == SEV_NOTE)
			continue;
		one_text(t, f, 0);
		size_t shown = 0, hidden = 0;
		for (size_t k = 0; k < fl->list.n; k++) {
			const struct finding *g = fl->list.item[k];
			if (g->caused_by != f->index)
				continue;
			if (!verbose && shown >= 5) {
				hidden++;
				continue;
			}
			one_text(t, g, 1);
			shown++;
		}
		if (hidden)
			fprintf(t->out, "    ... and %zu more caused by this (-v shows all)\n", hidden);
		fputc('\n', t->out);
	}
}

void render_action_json(struct jw *w, const struct fix_action *x)
{
	jw_obj_begin(w);
	jw_kstr(w, "action", fix_kind_name(x->kind));
	switch (x->kind) {
	case FIX_PIP_INSTALL:
		jw_kstr(w, "python", x->python);
		jw_kstrs(w, "requirements", &x->items);
		jw_kstr(w, "index_url", x->index_url);
		jw_kbool(w, "no_deps", x->no_deps);
		jw_kbool(w, "force_reinstall", x->force_reinstall);
		break;
	case FIX_PIP_UNINSTALL:
		jw_kstr(w, "python", x->python);
		jw_kstrs(w, "distributions", &x->items);
		break;
	case FIX_REMOVE_PATH:
		jw_kstr(w, "path", x->path);
		break;
	case FIX_ADD_LIBRARY_PATH:
		jw_kstr(w, "path", x->path);
		jw_kstr(w, "how", x->how);
		break;
	case FIX_SYSTEM_PACKAGE:
		jw_kstr(w, "manager", x->manager);
		jw_kstrs(w, "packages", &x->items);
		break;
	}
	jw_kstr(w, "command", x->command);
	jw_obj_end(w);
}

void render_actions_json(struct jw *w, const struct ptrvec *actions)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < actions->n; i++)
		render_action_json(w, actions->item[i]);
	jw_arr_end(w);
}

void render_finding_json(struct jw *w, const struct finding *f)
{
	jw_obj_begin(w);
	jw_kstr(w, "id", f->id);
	jw_kstr(w, "severity", severity_name(f->severity));
	jw_kstr(w, "object", f->object);
	/* The id-specific fields sit at the top level of the finding. */
	const struct value *v = f->fields;
	for (size_t i = 0; v && i < v->u.list.n; i++) {
		jw_key(w, v->u.list.key[i]);
		jw_value(w, v->u.list.item[i]);
	}
	jw_kstr(w, "title", f->title);
	jw_kstrs(w, "explanation", &f->lines);
	jw_kstr(w, "fix", f->fix);
	jw_key(w, "fix_actions");
	render_actions_json(w, &f->actions);
	jw_key(w, "caused_by");
	if (f->caused_by >= 0)
		jw_int(w, f->caused_by);
	else
		jw_null(w);
	jw_kbool(w, "first_error", f->first_error);
	jw_kbool(w, "guess", f->guess);
	jw_kint(w, "index", f->index);
	jw_obj_end(w);
}

void render_findings_json(struct jw *w, const struct findings *fl)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < fl->list.n; i++)
		render_finding_json(w, fl->list.item[i]);
	jw_arr_end(w);
}

/*
 * What each finding of [first, end) causes, in order, built once per
 * rendering: head[p - first] is 1 + the first finding caused by p, next[i -
 * first] 1 + the one after i.  A finding looked for its children in the
 * whole range, once per finding: thousands of stale metadata folders, each
 * a root, made `check -v` quadratic.  Without memory: the pass per finding.
 */
struct kids {
	size_t first, end;
	size_t *head, *next;
};

static void kids_build(struct kids *k, const struct findings *fl, size_t first, size_t end)
{
	k->first = first;
	k->end = end;
	k->head = end > first ? calloc(end - first, sizeof *k->head) : NULL;
	k->next = end > first ? calloc(end - first, sizeof *k->next) : NULL;
	if (!k->head || !k->next) {
		free(k->head);
		free(k->next);
		k->head = k->next = NULL;
		return;
	}
	for (size_t i = end; i-- > first;) {
		int p = ((const struct finding *)fl->list.item[i])->caused_by;
		if (p < (int)first || p >= (int)end)
			continue;
		k->next[i - first] = k->head[(size_t)p - first];
		k->head[(size_t)p - first] = i + 1;
	}
}

static void kids_free(struct kids *k)
{
	free(k->head);
	free(k->next);
}

/* The next finding of the range that f causes after the one at 1 + at (0: the first), as 1 + its index; 0: none. */
static size_t kid_after(const struct kids *k, const struct findings *fl, const struct finding *f, size_t at)
{
	bool inside = f->index >= (int)k->first && f->index < (int)k->end;
	if (k->head && inside)
		return at ? k->next[at - 1 - k->first] : k->head[(size_t)f->index - k->first];
	for (size_t i = at ? at : k->first; i < k->end; i++)
		if (((const struct finding *)fl->list.item[i])->caused_by == f->index)
			return i + 1;
	return 0;
}

static void tree(const struct term *t, const struct findings *fl, const struct kids *k, const struct finding *f,
		 int depth, bool verbose)
{
	const char *pad = depth == 0 ? "      " : depth == 1 ? "          " : "              ";
	const char *col = f->severity == SEV_ERROR ? c_red(t) : f->severity == SEV_WARNING ? c_yellow(t) : c_cyan(t);
	fprintf(t->out, "%s%s%s[%s]%s %s\n", pad, col, severity_name(f->severity), f->id, c_reset(t),
		f->title ? one_line(f->title) : "");
	size_t nlines = verbose ? f->lines.n : MIN(f->lines.n, (size_t)(depth == 0 ? 14 : depth == 1 ? 12 : 3));
	for (size_t i = 0; i < nlines; i++)
		fprintf(t->out, "%s    %s\n", pad, one_line(f->lines.item[i]));
	if (f->fix)
		fprintf(t->out, "%s    %sfix:%s %s\n", pad, c_green(t), c_reset(t), one_line(f->fix));
	if (depth >= 2)
		return;
	size_t shown = 0, more = 0;
	for (size_t at = kid_after(k, fl, f, 0); at; at = kid_after(k, fl, f, at)) {
		if (!verbose && shown >= 3) {
			more++;
			continue;
		}
		tree(t, fl, k, fl->list.item[at - 1], depth + 1, verbose);
		shown++;
	}
	if (more)
		fprintf(t->out, "%s    ... and %zu more caused by this (-v shows them)\n", pad, more);
}

void render_finding_tree(const struct term *t, const struct findings *fl, size_t first, size_t end,
			 const struct finding *f, int depth, bool verbose)
{
	struct kids k;
	kids_build(&k, fl, first, end);
	tree(t, fl, &k, f, depth, verbose);
	kids_free(&k);
}

void render_finding_children(const struct term *t, const struct findings *fl, size_t first, size_t end,
			     const struct finding *f, int depth, bool verbose)
{
	struct kids k;
	kids_build(&k, fl, first, end);
	for (size_t at = kid_after(&k, fl, f, 0); at; at = kid_after(&k, fl, f, at))
		tree(t, fl, &k, fl->list.item[at - 1], depth, verbose);
	kids_free(&k);
}

/* The findings of [first, end) whose cause is outside the range or absent. */
void render_finding_roots(const struct term *t, const struct findings *fl, size_t first, size_t end, bool verbose)
{
	struct kids k;
	kids_build(&k, fl, first, end);
	for (size_t i = first; i < end; i++) {
		const struct finding *f = fl->list.item[i];
		if (f->caused_by >= (int)first && f->caused_by < (int)end)
			continue;
		if (!verbose && f->severity == SEV_NOTE)
			continue;
		tree(t, fl, &k, f, 0, verbose);
	}
	kids_free(&k);
}

