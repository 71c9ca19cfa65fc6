/*
 * modelcheck.c: the plan checked by the model before it is shown.
 *
 * A plan that changes files the model can lay out (a folder removed, a
 * distribution uninstalled, a folder added to the loader's path, a library
 * installed from a wheel whose folder the providers table knows) is
 * checked by re-running the whole check with the change applied in a
 * scan's vfs, as `wheel` does for an install: the environment on disk is
 * never touched.  A library installed that way is an image with its
 * SONAME whose exports are not known, so what binds to it binds by
 * assumption (the model says so).
 *
 * A plan that changes torch cannot be laid out (the index holds what a
 * release exports, not its files); every failure of every module is
 * judged instead against what the new torch exports (the ABI index) and
 * installs (its Requires-Dist, pins.h, and the libraries of those
 * distributions, providers.tsv), and every module that imports today must
 * still bind it.  A package moved to the release pinned to that torch is
 * taken at its pin's word.
 */
#include "advice/plan.h"
#include "host/snapshot.h"
#include "pyenv/providers.h"
#include "pyenv/requires.h"

#include <limits.h>

/* ---- what a torch release installs ---- */

/* Does torch at version (the installed one: its own METADATA; another: the
 * pins table) require the distribution norm, directly or through the
 * extras of a meta-package (cuda-toolkit[nvrtc,...])? */
static bool torch_requires(struct advice *a, struct plan_state *ps, const struct plan_cand *cand, const char *norm)
{
	struct arena *ar = &a->s->arena;
	if (cand->keep) {
		const char *by;
		return advice_installed_pin(a, norm, &by) != NULL;
	}
	struct marker_env me = { a->machine, a->c->env.py_major, a->c->env.py_minor, NULL };
	size_t first, n = pins_of(ps->pins, "torch", cand->version, &first);
	for (size_t i = first; i < first + n; i++) {
		struct requirement r;
		if (!requirement_parse(ar, ps->pins->row[i].requirement, &r) || !marker_holds(r.marker, &me))
			continue;
		if (str_eq(r.norm, norm))
			return true;
		if (!r.extras || !r.pin)
			continue;
		size_t mf, mn = pins_of(ps->pins, r.norm, r.pin, &mf);
		for (size_t k = mf; k < mf + mn; k++) {
			struct requirement m;
			if (!requirement_parse(ar, ps->pins->row[k].requirement, &m) || !str_eq(m.norm, norm) || !m.marker)
				continue;
			for (const char *x = r.extras; *x;) {
				size_t xn = strcspn(x, ",");
				struct marker_env mx = me;
				mx.extra = arena_strndup(ar, x, xn);
				if (strstr(m.marker, "extra") && marker_holds(m.marker, &mx))
					return true;
				x += xn + (x[xn] == ',');
			}
		}
	}
	return false;
}

/* Would torch of cand bring lib (a CUDA library its pins install)? */
static bool torch_brings(struct advice *a, struct plan_state *ps, const struct plan_cand *cand, const char *lib)
{
	struct arena *ar = &a->s->arena;
	if (torch_is_torch_library(lib))
		return true;
	for (int major = 11; major <= 13; major++) {
		const struct provider *pv = provider_lookup_cuda(ar, lib, major);
		if (!pv || pv->cuda_major != major || strchr(pv->dist, ' '))
			continue;
		if (cand->index_url) {
			/* a variant index's pins are not read here: its CUDA major's libraries */
			if (major == cand->cuda_major)
				return true;
			continue;
		}
		if (torch_requires(a, ps, cand, dist_normalize(ar, pv->dist)))
			return true;
	}
	return false;
}

/* ---- a torch change, judged failure by failure ---- */

static const struct plan_pkg *pkg_of(const struct plan_state *ps, const struct inv_obj *io, size_t *at)
{
	intptr_t k = (intptr_t)strmap_get(&ps->by_path, io->path);
	if (!k)
		return NULL;
	*at = (size_t)(k - 1);
	return &ps->pkg[k - 1];
}

static const struct finding *root_of(const struct findings *fl, const struct finding *f)
{
	for (size_t hops = 0; f->caused_by >= 0 && hops < fl->list.n; hops++)
		f = findings_at(fl, (size_t)f->caused_by);
	return f;
}

static bool plan_adds_path(const struct plan *p, const char *dir)
{
	for (size_t i = 0; i < p->actions.n; i++) {
		const struct fix_action *x = p->actions.item[i];
		if (x->kind == FIX_ADD_LIBRARY_PATH && str_eq(x->path, dir))
			return true;
	}
	return false;
}

/* Why a root failure stays under cand, or NULL when cand removes it. */
static const char *stays(struct advice *a, struct plan_state *ps, const struct plan_cand *cand,
			 const struct plan_pkg *p, const struct finding *r)
{
	struct arena *ar = &a->s->arena;
	if (r->severity != SEV_ERROR)
		return NULL;
	const char *lib = val_get_str(r->fields, "library");
	if (str_eq(r->id, "undefined-symbol")) {
		const char *sym = val_get_str(r->fields, "symbol");
		bool stable;
		if (!sym || !torchabi_is_torch_symbol(sym, &stable))
			return arena_printf(ar, "%s is no torch symbol", val_get_str(r->fields, "demangled") ?
					    val_get_str(r->fields, "demangled") : sym ? sym : "?");
		const struct torchset *has = torchabi_lookup(ps->ix, sym);
		if (cand->rel < 0 || !has || !torchset_has(has, (size_t)cand->rel))
			return arena_printf(ar, "torch %s does not export %s either", cand->version,
					    val_get_str(r->fields, "demangled") ? val_get_str(r->fields, "demangled") : sym);
		return NULL;
	}
	if ((str_eq(r->id, "library-not-installed") || str_eq(r->id, "library-not-found") ||
	     str_eq(r->id, "cuda-major-mismatch")) && lib) {
		const struct value *m = val_get(r->fields, "needs_cuda_major");
		if (m && m->kind == VAL_INT && m->u.i != cand->cuda_major)
			return arena_printf(ar, "it needs CUDA %lld, torch %s is built for CUDA %d", (long long)m->u.i,
					    cand->version, cand->cuda_major);
		if (str_eq(r->id, "cuda-major-mismatch"))
			return NULL;
		if (torch_brings(a, ps, cand, path_basename(lib)))
			return NULL;
		return arena_printf(ar, "torch %s does not bring %s", cand->version, path_basename(lib));
	}
	if (str_eq(r->id, "library-off-path")) {
		const struct value *w = val_get(r->fields, "found_at");
		const char *path = w && w->kind == VAL_ARR && w->u.list.n ? val_get_str(w->u.list.item[0], "path") : NULL;
		char dir[PATH_MAX];
		if (path) {
			path_dirname(path, dir, sizeof dir);
			if (plan_adds_path(&a->plan, dir))
				return NULL;
		}
		return arena_printf(ar, "%s stays off the loader's path", lib ? lib : "a library");
	}
	(void)p;
	return r->title ? r->title : r->id;
}

/* One part of the check: whether it holds, and in words (no prefix); a
 * part that could not run says so in why_not. */
struct check_result {
	bool checked;
	const char *text;
	const char *why_not;
	bool guess;
	size_t nok;	/* modules that import today and still do */
};

static void check_torch_change(struct advice *a, struct plan_state *ps, const struct plan_cand *cand,
			       struct check_result *res)
{
	struct arena *ar = &a->s->arena;
	const struct env_check *c = a->c;
	const struct findings *fl = &a->s->findings;
	size_t nfixed = 0, nwant = 0, nok = 0, nassumed = 0;
	const char *first_stay = NULL, *first_break = NULL;
	for (size_t i = 0; i < c->nv; i++) {
		const struct module_verdict *v = &c->v[i];
		size_t at = 0;
		const struct plan_pkg *p = pkg_of(ps, v->io, &at);
		if (!p || v->state == V_NOT_CHECKED || v->state == V_OTHER_PYTHON)
			continue;
		const char *mod = v->io->module ? v->io->module : path_basename(v->io->path);
		bool moved = cand->move_to[at] != NULL;
		if (v->state == V_OK) {
			nok++;
			if (moved || cand->keep)
				continue;
			if (p->tc && (cand->rel < 0 || !torchset_has(&p->tc->ok, (size_t)cand->rel)) && !first_break)
				first_break = arena_printf(ar, "%s would stop importing: it binds torch %s, not %s", mod,
							   torchset_text(ar, ps->ix, &p->tc->ok), cand->version);
			else if (p->cuda_major && p->cuda_major != cand->cuda_major && !first_break)
				first_break = arena_printf(ar, "%s would stop importing: it needs CUDA %d", mod,
							   p->cuda_major);
			continue;
		}
		if (v->state != V_FAILS || !cand->fixes_pkg[at])
			continue;
		nwant++;
		if (moved) {
			nfixed++;
			nassumed++;
			continue;
		}
		const char *why = NULL;
		for (size_t k = v->finding_first; k < v->finding_end && !why; k++)
			why = stays(a, ps, cand, p, root_of(fl, findings_at(fl, k)));
		if (why && !first_stay)
			first_stay = arena_printf(ar, "%s would still fail: %s", mod, why);
		nfixed += !why;
	}
	res->checked = nfixed == nwant && !first_break;
	res->nok = nok;
	if (res->checked)
		res->text = nassumed == nwant
			? arena_printf(ar, "the release%s it moves to %s pinned to torch %s (Requires-Dist)",
				       nassumed == 1 ? "" : "s", nassumed == 1 ? "is" : "are", cand->version)
			: arena_printf(ar, "the %zu module%s it fixes bind torch %s (its exports, from the ABI index) and "
				       "find the CUDA libraries it installs%s", nwant, nwant == 1 ? "" : "s", cand->version,
				       nassumed ? "; the releases it moves to are pinned to it" : "");
	else
		res->text = first_break ? first_break : first_stay ? first_stay : "?";
}

/* ---- file changes, re-run ---- */

/* The directory a library of the providers table installs into, under the first site directory. */
static const char *provider_path(struct advice *a, const char *req, const char **soname)
{
	struct arena *ar = &a->s->arena;
	struct requirement r;
	if (!requirement_parse(ar, req, &r) || !a->c->env.nsite)
		return NULL;
	/* which missing library of the plan's causes it is for */
	for (size_t i = 0; i < a->plan.fixes.n; i++) {
		const struct cause *c = a->plan.fixes.item[i];
		const char *lib = val_get_str(c->lead->fields, "library");
		const char *dist = val_get_str(c->lead->fields, "provided_by");
		const char *folder = val_get_str(c->lead->fields, "install_folder");
		if (!lib || !dist || !folder || str_eq(folder, "-") || !str_eq(dist_normalize(ar, dist), r.norm))
			continue;
		*soname = lib;
		return arena_printf(ar, "%s/%s/%s", a->c->env.site[0], folder, lib);
	}
	return NULL;
}

/* A library installed by the plan, as an image the model can load. */
static bool place_library(struct scan *s2, const char *path, const char *soname, uint16_t machine)
{
	struct snap_elf e;
	memset(&e, 0, sizeof e);
	e.machine = machine;
	e.type = 3;	/* ET_DYN */
	e.soname = soname;
	e.partial = true;	/* what it exports is not known: bindings to it are assumed */
	e.has_gnu_stack = true;
	e.stack_flags = 6;	/* RW */
	const uint8_t *img;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (snapshot_synth_elf(&s2->arena, &e, path, &img, &len, &d) != ST_OK)
		return false;
	vfs_add_file(s2->fs.vfs, path, img, len);
	return true;
}

static uint16_t machine_code(const struct advice *a)
{
	return str_eq(a->machine, "aarch64") ? EM_AARCH64_ : EM_X86_64_;
}

/* Is every requirement of x one of change's (x does nothing else)? */
static bool within(const struct fix_action *x, const struct fix_action *change)
{
	if (!change || x->kind != change->kind)
		return false;
	for (size_t i = 0; i < x->items.n; i++) {
		bool in = false;
		for (size_t k = 0; k < change->items.n && !in; k++)
			in = str_eq(x->items.item[i], change->items.item[k]);
		if (!in)
			return false;
	}
	return true;
}

/* The plan's actions but skip, applied in a vfs and the check re-run; the
 * modules of the causes of wanted must import after, and every module that
 * imports today still. */
static void check_rerun(struct advice *a, const struct check_options *o, const struct fix_action *skip,
			const struct ptrvec *wanted_causes, struct check_result *res)
{
	struct arena *ar = &a->s->arena;
	struct plan *pl = &a->plan;
	if (a->s->fs.vfs) {
		res->why_not = "the environment is itself described (a snapshot or a wheel)";
		return;
	}
	struct scan s2;
	scan_init(&s2, a->s->fs.root && a->s->fs.root[0] ? a->s->fs.root : NULL);
	/* a change of the search path only changes no file: the re-run reads the
	 * objects the check parsed (scan_borrow_objects); one that changes files
	 * sees them through an overlay, with a cache of its own */
	bool files = false;
	for (size_t i = 0; i < pl->actions.n; i++)
		files |= ((const struct fix_action *)pl->actions.item[i])->kind != FIX_ADD_LIBRARY_PATH &&
			 !within(pl->actions.item[i], skip);
	if (files) {
		s2.fs.vfs = arena_calloc(&s2.arena, 1, sizeof *s2.fs.vfs);
		vfs_init(s2.fs.vfs, &s2.arena, false);
	} else {
		scan_borrow_objects(&s2, a->s);
	}
	struct check_options o2 = *o;
	o2.same_files = files ? NULL : a->c;	/* the same files: the check's reads are the re-run's */
	const char *llp = o->ld_library_path;
	const char *cannot = NULL;
	bool assumed = false;
	for (size_t i = 0; i < pl->actions.n && !cannot; i++) {
		const struct fix_action *x = pl->actions.item[i];
		switch (x->kind) {
		case FIX_REMOVE_PATH:
			vfs_hide(s2.fs.vfs, x->path);
			break;
		case FIX_PIP_UNINSTALL:
			for (size_t k = 0; k < x->items.n; k++) {
				const struct dist *d = strmap_get(&a->c->inv.dists.by_norm, dist_normalize(ar, x->items.item[k]));
				char buf[DIST_PATH_MAX];
				for (size_t f = 0; d && f < d->nfile; f++)
					vfs_hide(s2.fs.vfs, dist_file_path(d, &d->file[f], buf, sizeof buf));
				if (d && d->meta)
					vfs_hide(s2.fs.vfs, d->meta);
			}
			break;
		case FIX_ADD_LIBRARY_PATH:
			llp = llp && *llp ? arena_printf(ar, "%s:%s", x->path, llp) : x->path;
			break;
		case FIX_PIP_INSTALL:
			for (size_t k = 0; k < x->items.n && !cannot; k++) {
				bool skipped = false;	/* a requirement of the torch change: checked apart */
				for (size_t j = 0; skip && j < skip->items.n && !skipped; j++)
					skipped = str_eq(skip->items.item[j], x->items.item[k]);
				if (skipped)
					continue;
				if (x->force_reinstall) {
					cannot = "a reinstall puts back files the model has no copy of";
					break;
				}
				const char *soname = NULL;
				const char *path = provider_path(a, x->items.item[k], &soname);
				if (!path || !place_library(&s2, path, soname, machine_code(a)))
					cannot = arena_printf(ar, "the files of %s are not known to the model",
							      (const char *)x->items.item[k]);
				assumed = true;
			}
			break;
		case FIX_SYSTEM_PACKAGE:
			cannot = "a system package's files are not known to the model";
			break;
		}
	}
	if (cannot) {
		res->why_not = cannot;
		scan_return_objects(&s2);
		scan_release(&s2);
		return;
	}
	o2.ld_library_path = llp;
	struct env_check c2;
	struct diag d;
	diag_clear(&d);
	const char *path = a->c->env.root;
	if (check_env(&s2, path, &o2, &c2, &d) != ST_OK) {
		res->why_not = arena_printf(ar, "the re-run failed: %s", d.msg);
		scan_return_objects(&s2);
		scan_release(&s2);
		return;
	}
	/* compare module by module: the modules the causes of wanted_causes take down, and the re-run's by path */
	struct strmap wanted = { 0 }, after = { 0 };
	for (size_t k = 0; k < wanted_causes->n; k++) {
		const struct cause *c = wanted_causes->item[k];
		for (size_t j = 0; j < c->modules.n; j++)
			strmap_put(ar, &wanted, c->modules.item[j], MAP_YES);
	}
	for (size_t k = 0; k < c2.nv; k++)
		strmap_put(ar, &after, c2.v[k].io->path, &c2.v[k]);
	size_t nfixed = 0, nwant = 0, nok = 0;
	const char *first_stay = NULL, *first_break = NULL;
	for (size_t i = 0; i < a->c->nv; i++) {
		const struct module_verdict *v = &a->c->v[i];
		const struct module_verdict *w = strmap_get(&after, v->io->path);
		const char *mod = v->io->module ? v->io->module : path_basename(v->io->path);
		bool hidden = false;
		for (size_t k = 0; k < pl->actions.n && !hidden; k++) {
			const struct fix_action *x = pl->actions.item[k];
			hidden = x->kind == FIX_REMOVE_PATH && str_starts(v->io->path, x->path);
		}
		if (v->state == V_OK) {
			nok++;
			if (!hidden && (!w || w->state == V_FAILS) && !first_break)
				first_break = arena_printf(ar, "%s would stop importing%s%s", mod, w && w->dlerror ? ": " : "",
							   w && w->dlerror ? w->dlerror : "");
			continue;
		}
		if (v->state != V_FAILS)
			continue;
		if (!strmap_get(&wanted, mod))
			continue;
		nwant++;
		if (w && w->state == V_OK)
			nfixed++;
		else if (!first_stay)
			first_stay = arena_printf(ar, "%s would still fail%s%s", mod, w && w->dlerror ? ": " : "",
						  w && w->dlerror ? w->dlerror : "");
	}
	res->checked = nfixed == nwant && !first_break;
	res->nok = nok;
	if (res->checked)
		res->text = !nwant ? "a re-run with the change applied" :
			arena_printf(ar, "a re-run with the change applied: the %zu module%s it fixes import%s%s", nwant,
				     nwant == 1 ? "" : "s", nwant == 1 ? "s" : "", assumed ? " (binding by assumption to what it installs, whose "
				     "exports the model does not know)" : "");
	else
		res->text = first_break ? first_break : first_stay ? first_stay : "?";
	res->guess |= assumed;
	scan_return_objects(&s2);
	scan_release(&s2);
}


void plan_check(struct advice *a, struct plan_state *ps, const struct check_options *o)
{
	struct arena *ar = &a->s->arena;
	struct plan *pl = &a->plan;
	if (!pl->actions.n) {
		pl->check = "nothing to check: no action";
		return;
	}
	struct check_result tr, fr;
	memset(&tr, 0, sizeof tr);
	memset(&fr, 0, sizeof fr);
	tr.checked = fr.checked = true;
	if (ps->change && ps->ix)
		check_torch_change(a, ps, ps->best, &tr);
	/* the other actions (a path, a stale folder, a library), re-run for the causes they remove */
	struct ptrvec others = { 0 };
	for (size_t i = 0; i < pl->fixes.n; i++)
		if (!((const struct cause *)pl->fixes.item[i])->fix)	/* the change's causes have its fix */
			ptrvec_push(ar, &others, pl->fixes.item[i]);
	bool more = false;
	for (size_t i = 0; i < pl->actions.n && !more; i++)
		more = !within(pl->actions.item[i], ps->change);
	if (more)
		check_rerun(a, o, ps->change, &others, &fr);
	const char *why_not = tr.why_not ? tr.why_not : fr.why_not;
	pl->checked = !why_not && tr.checked && fr.checked;
	pl->guess |= tr.guess || fr.guess;
	const char *parts = tr.text && fr.text ? arena_printf(ar, "%s; %s", tr.text, fr.text) : tr.text ? tr.text : fr.text;
	size_t nok = tr.nok > fr.nok ? tr.nok : fr.nok;
	if (why_not)
		pl->check = arena_printf(ar, "not checked by the model: %s", why_not);
	else if (pl->checked)
		pl->check = arena_printf(ar, "checked by the model: %s%s", parts ? parts : "",
					 nok ? arena_printf(ar, "; the %zu module%s that import%s today still do%s", nok,
							    nok == 1 ? "" : "s", nok == 1 ? "s" : "", nok == 1 ? "es" : "") : "");
	else
		pl->check = arena_printf(ar, "the model says it is not enough: %s",
					 !tr.checked ? tr.text : fr.text);
}
