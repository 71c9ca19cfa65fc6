#include "cli/causes_out.h"
#include "cli/termsafe.h"
#include "core/fs.h"

#define LINES_DEFAULT 6		/* explanation lines of a cause without -v */
#define MODULES_DEFAULT 4	/* modules named per distribution without -v */

/* Lines that say how, not what: shown with -v only. */
static bool detail_line(const char *l)
{
	static const char *const prefixes[] = {
		"mangled: ", "no object in the global scope", "probably caused by", "caused by",
		"assuming torch is imported first", "in the state `import torch` leaves", "while preloading",
		"searched, in order", "GPU: ",
	};
	while (*l == ' ')
		l++;
	if (*l == '/' || (l[0] >= '0' && l[0] <= '9' && l[1] == '.'))
		return true;	/* a step of a search list, a path tried */
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (str_starts(l, prefixes[i]))
			return true;
	return false;
}

static const char *module_of(const struct finding *f)
{
	const char *m = val_get_str(f->fields, "module");
	return m ? m : f->object ? path_basename(f->object) : NULL;
}

const char *cause_takes_down(struct arena *a, const struct cause *c, bool verbose)
{
	/* distribution -> its modules, in order of appearance */
	const char *dist[64];
	struct ptrvec mods[64];
	size_t nd = 0;
	memset(mods, 0, sizeof mods);
	for (size_t i = 0; i < c->members.n; i++) {
		const struct finding *f = c->members.item[i];
		const char *d = val_get_str(f->fields, "distribution");
		const char *m = module_of(f);
		if (!m)
			continue;
		if (!d)
			d = "";
		size_t k = 0;
		while (k < nd && !str_eq(dist[k], d))
			k++;
		if (k == nd) {
			if (nd == ARRAY_SIZE(dist))
				continue;
			dist[nd++] = d;
		}
		bool seen = false;
		for (size_t j = 0; j < mods[k].n && !seen; j++)
			seen = str_eq(mods[k].item[j], m);
		if (!seen)
			ptrvec_push(a, &mods[k], (void *)m);
	}
	if (!nd)
		return NULL;
	const char *out = "";
	for (size_t k = 0; k < nd; k++) {
		const char *list = "";
		size_t show = verbose ? mods[k].n : MIN(mods[k].n, (size_t)MODULES_DEFAULT);
		for (size_t j = 0; j < show; j++)
			list = arena_printf(a, "%s%s%s", list, j ? ", " : "", (const char *)mods[k].item[j]);
		if (show < mods[k].n)
			list = arena_printf(a, "%s, +%zu more", list, mods[k].n - show);
		const char *one = dist[k][0]
			? arena_printf(a, "%s (%zu module%s: %s)", dist[k], mods[k].n, mods[k].n == 1 ? "" : "s", list)
			: arena_printf(a, "%s", list);
		out = arena_printf(a, "%s%s%s", out, k ? "; " : "", one);
	}
	return out;
}

static const char *sev_col(const struct term *t, enum severity s)
{
	return s == SEV_ERROR ? c_red(t) : s == SEV_WARNING ? c_yellow(t) : c_cyan(t);
}

void render_cause_text(const struct term *t, struct arena *a, const struct cause *c, int number, bool verbose)
{
	render_cause_text_in_plan(t, a, c, number, verbose, NULL, 0);
}

void render_cause_text_in_plan(const struct term *t, struct arena *a, const struct cause *c, int number,
			       bool verbose, const char *fix_note, size_t max_lines)
{
	size_t nlines = max_lines ? max_lines : LINES_DEFAULT;
	/* under a plan the header says the fix: without -v, one other finding
	 * of another kind is said (a CUDA major beside a missing library), and
	 * more of the lead's own kind (other symbols) are counted */
	size_t nalso = fix_note ? 1 : 2;
	bool brief = fix_note && !verbose;	/* under a plan, without -v */
	const struct finding *f = c->lead;
	const char *num = number ? arena_printf(a, "%d. ", number) : "";
	const char *title = f->title ? f->title : "";
	const char *needed = strstr(title, " (needed by ");
	if (needed && c->modules.n > 1)
		title = arena_strndup(a, title, (size_t)(needed - title));	/* takes down says who */
	fprintf(t->out, "%s%s%s[%s]%s %s%s%s\n", num, sev_col(t, c->severity), severity_name(c->severity), f->id,
		c_reset(t), c_bold(t), one_line(title), c_reset(t));
	const char *pad = "      ";
	const char *dlerr = val_get_str(f->fields, "dlerror");
	if (dlerr && f->first_error)
		fprintf(t->out, "%s%sImportError: %s%s\n", pad, c_dim(t), one_line(dlerr), c_reset(t));
	if (c->torch_all && !fix_note)	/* a plan above says what to do about it */
		fprintf(t->out, "%s%s\n", pad, one_line(c->torch_all));
	if (c->guess)
		fprintf(t->out, "%s%s(a guess: drawn from heuristics, not from the loader's rules)%s\n", pad, c_dim(t),
			c_reset(t));
	size_t shown = 0;
	for (size_t i = 0; i < f->lines.n; i++) {
		const char *l = f->lines.item[i];
		if (!verbose && (detail_line(l) || shown >= nlines))
			continue;
		fprintf(t->out, "%s%s\n", pad, one_line(l));
		shown++;
	}
	/* other symbols of the same torch, other findings about the same library */
	size_t more = 0, said = 0;	/* other findings, and those said */
	for (size_t i = 0; i < c->roots.n; i++) {
		const struct finding *r = c->roots.item[i];
		if (r == f)
			continue;
		bool dup = false;
		for (size_t k = 0; k < i && !dup; k++) {
			const struct finding *q = c->roots.item[k];
			dup = q != f && str_eq(q->id, r->id) && str_same(val_get_str(q->fields, "symbol"),
									  val_get_str(r->fields, "symbol"));
		}
		if (dup || (str_eq(r->id, f->id) && str_same(val_get_str(r->fields, "symbol"),
								 val_get_str(f->fields, "symbol"))))
			continue;
		more++;
		if (!verbose && (said >= nalso || (brief && str_eq(r->id, f->id))))
			continue;
		said++;
		fprintf(t->out, "%salso: %s[%s]%s %s\n", pad, sev_col(t, r->severity), r->id, c_reset(t),
			r->title ? one_line(r->title) : "");
		if (r->fix && !str_same(r->fix, f->fix) && !c->fix)	/* a cause's own fix replaces the alternatives */
			fprintf(t->out, "%s      %sor fix:%s %s\n", pad, c_green(t), c_reset(t), one_line(r->fix));
	}
	if (more > said)
		fprintf(t->out, "%s... and %zu more of this cause (-v shows them)\n", pad, more - said);
	const char *fix = fix_note ? fix_note : c->fix ? c->fix : f->fix;
	if (fix && !brief)	/* "the change above" repeats what the numbering says */
		fprintf(t->out, "%s%sfix:%s %s\n", pad, c_green(t), c_reset(t), one_line(fix));
	bool any_module = false;
	for (size_t i = 0; i < c->members.n && !any_module; i++)
		any_module = val_get_str(((const struct finding *)c->members.item[i])->fields, "module") != NULL;
	const char *down = c->severity == SEV_ERROR || any_module ? cause_takes_down(a, c, verbose) : NULL;
	if (down && c->severity != SEV_NOTE)
		fprintf(t->out, "%s%s:%s %s\n", pad, c->severity == SEV_ERROR ? "takes down" : "concerns",
			c_reset(t), one_line(down));
}

size_t render_causes_text(const struct term *t, struct arena *a, const struct causes *cs, bool verbose,
			  bool (*skip)(const struct cause *c, const void *ctx), const void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; i < cs->list.n; i++) {
		const struct cause *c = cs->list.item[i];
		if (skip && skip(c, ctx))
			continue;
		if (c->severity == SEV_NOTE && !verbose)
			continue;
		render_cause_text(t, a, c, (int)++n, verbose);
	}
	return n;
}

const struct cause *causes_driver(const struct causes *cs)
{
	for (size_t k = 0; k < cs->list.n; k++)
		if (((const struct cause *)cs->list.item[k])->driver)
			return cs->list.item[k];
	return NULL;
}

void render_no_driver(const struct term *t, struct arena *a, const struct cause *driver, const char *stub,
		      bool verbose)
{
	fprintf(t->out, "%shere%s         this machine has no NVIDIA driver (libcuda.so.1), and every module that "
		"links it fails to import here\n", c_bold(t), c_reset(t));
	const char *down = cause_takes_down(a, driver, verbose);
	if (down)
		fprintf(t->out, "             takes down: %s\n", down);
	if (stub)
		fprintf(t->out, "             below: the verdict on a machine with the driver, modelled as "
			"--assume-driver does (libcuda.so.1 stood for by %s)\n", stub);
	else
		fprintf(t->out, "             a machine with the driver cannot be modelled: no CUDA toolkit stub "
			"libcuda.so (set CUDA_HOME); below: what else fails here\n");
}

void render_causes_json(struct jw *w, const struct causes *cs)
{
	jw_arr_begin(w);
	for (size_t i = 0; i < cs->list.n; i++) {
		const struct cause *c = cs->list.item[i];
		jw_obj_begin(w);
		jw_kint(w, "index", c->index);
		jw_kstr(w, "key", c->key);
		jw_kstr(w, "severity", severity_name(c->severity));
		jw_kstr(w, "id", c->lead->id);
		jw_kstr(w, "title", c->lead->title);
		jw_kstr(w, "fix", c->fix ? c->fix : c->lead->fix);
		jw_key(w, "fix_actions");
		render_actions_json(w, c->actions.n ? &c->actions : &c->lead->actions);
		jw_kint(w, "lead", c->lead->index);
		jw_kbool(w, "guess", c->guess);
		jw_kbool(w, "driver", c->driver);
		jw_key(w, "roots");
		jw_arr_begin(w);
		for (size_t k = 0; k < c->roots.n; k++)
			jw_int(w, ((const struct finding *)c->roots.item[k])->index);
		jw_arr_end(w);
		jw_key(w, "findings");
		jw_arr_begin(w);
		for (size_t k = 0; k < c->members.n; k++)
			jw_int(w, ((const struct finding *)c->members.item[k])->index);
		jw_arr_end(w);
		jw_kstrs(w, "modules", &c->modules);
		jw_kstrs(w, "distributions", &c->dists);
		if (c->torch_all_json) {
			jw_key(w, "torch_environment");
			jw_value(w, c->torch_all_json);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
}
