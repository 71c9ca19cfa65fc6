/*
 * plan.c: one plan for the environment (plan.h).
 *
 * The packages whose modules were judged are grouped by distribution (or
 * package folder); for each, what it binds (the torch releases of the ABI
 * index whose exports satisfy its torch symbols), the CUDA major it needs
 * (only from sonames that name one major) and its own pin on torch.  Each
 * candidate torch (the installed one kept, or a release of the index, from
 * PyPI or for the other CUDA major from PyTorch's index) is then judged:
 * a package that binds it and needs its CUDA major stays; one that does
 * not moves to the release of it whose Requires-Dist pins that torch
 * (pins.h), or, when it imports today and no such release is known, the
 * candidate is refused (never break what works).  The candidate that fixes
 * the most failing packages wins, then the one that moves the fewest
 * distributions (torch counts), then PyPI over another index, the
 * installed torch over a change, the newest release.  The causes the
 * chosen change does not remove keep their own actions (a path, a stale
 * folder, a library), unless a cause it leaves takes down the same
 * modules anyway.  modelcheck.c then checks the result.
 */
#include "advice/plan.h"
#include "advice/pins.h"
#include "pyenv/providers.h"
#include "pyenv/requires.h"

#include <limits.h>

/* ---- the packages ---- */

/* The distribution io belongs to: its RECORD's owner, else the owner of its
 * package's __init__.py (a file copied into an installed package is that
 * package's to mend: reinstalling it puts the package's files back). */
static const struct dist *owner_of(struct advice *a, const struct inv_obj *io)
{
	if (io->dist || !io->site || !io->package)
		return io->dist;
	return dists_owner(&a->c->inv.dists, arena_printf(&a->s->arena, "%s/%s/__init__.py", io->site, io->package));
}

static struct plan_pkg *pkg_for(struct advice *a, struct plan_state *ps, const struct inv_obj *io)
{
	const struct dist *d = owner_of(a, io);
	const char *name = d ? d->name : io->package ? io->package : path_basename(io->path);
	for (size_t i = 0; i < ps->npkg; i++)
		if (str_eq(ps->pkg[i].name, name) && ps->pkg[i].dist == d)
			return &ps->pkg[i];
	if (ps->npkg == ps->cap) {
		size_t ncap = ps->cap ? ps->cap * 2 : 32;
		ps->pkg = arena_grow(&a->s->arena, ps->pkg, ps->cap, ncap, sizeof *ps->pkg);
		ps->cap = ncap;
	}
	struct plan_pkg *p = &ps->pkg[ps->npkg++];
	memset(p, 0, sizeof *p);
	p->name = name;
	p->dist = d;
	p->folder = io->package;
	p->norm = d ? d->norm : dist_normalize(&a->s->arena, name);
	p->version = d ? d->version : NULL;
	return p;
}

int plan_soname_major(struct arena *ar, const char *soname)
{
	return provider_soname_major(ar, soname);
}

static void read_packages(struct advice *a, struct plan_state *ps)
{
	struct env_check *c = a->c;
	struct arena *ar = &a->s->arena;
	struct marker_env me = { a->machine, c->env.py_major, c->env.py_minor, NULL };
	for (size_t i = 0; i < c->nv; i++) {
		const struct module_verdict *v = &c->v[i];
		const struct inv_obj *io = v->io;
		if (io->in_stdlib || v->state == V_NOT_CHECKED || v->state == V_OTHER_PYTHON || v->in_torch_import)
			continue;
		if (c->torch.found && io->path && str_starts(io->path, c->torch.dir) && io->path[strlen(c->torch.dir)] == '/')
			continue;	/* torch's own */
		struct plan_pkg *p = pkg_for(a, ps, io);
		strmap_put(ar, &ps->by_path, io->path, (void *)(intptr_t)(p - ps->pkg + 1));
		p->nmod++;
		p->nfail += v->state == V_FAILS;
		p->nunsure += v->state == V_CANNOT_TELL;
		/* the CUDA major it needs */
		const struct object *o = io->obj;
		for (size_t k = 0; o && o->kind == OBJ_ELF && o->elf_ok && k < o->elf.nneeded; k++) {
			int m = plan_soname_major(ar, o->elf.needed[k]);
			if (m && !p->cuda_major)
				p->cuda_major = m;
		}
		if (!p->torch_spec && p->dist) {
			struct requirement r;
			if (dist_requirement_on(ar, p->dist, "torch", &me, &r) && r.spec[0])
				p->torch_spec = r.spec;
		}
	}
	/* what each binds, from the index */
	for (size_t k = 0; ps->tc && k < ps->tc->npkg; k++) {
		const struct tc_package *t = ps->tc->pkg[k];
		for (size_t i = 0; i < ps->npkg; i++)
			if (str_eq(ps->pkg[i].name, t->name))
				ps->pkg[i].tc = t;
	}
	/* a failure another torch can mend: the torch it binds, the CUDA major it needs */
	const struct torch_layout *t = &c->torch;
	int tmaj = t->found && t->cuda ? (int)strtol(t->cuda, NULL, 10) : 0;
	for (size_t i = 0; i < ps->npkg; i++) {
		struct plan_pkg *p = &ps->pkg[i];
		p->torch_level = p->nfail && ((p->tc && !p->tc->installed_ok) || (p->cuda_major && tmaj && p->cuda_major != tmaj));
	}
}

/* Every extension module of inv (and other libraries that need torch), torch's own libraries excepted. */
void tc_add_inventory(struct scan *s, struct tc_report *r, const struct inventory *inv)
{
	for (size_t i = 0; i < inv->nobj; i++) {
		struct inv_obj *io = inv->obj[i];
		if (torch_is_torch_library(io->path) || (io->package && str_eq(io->package, "torch")))
			continue;
		const char *owner = io->dist ? io->dist->name : io->package;
		const struct object *o = io->obj;
		if (!o || o->kind != OBJ_ELF || !o->elf_ok)
			continue;
		if (io->torch_compat_ix != r->ix) {
			torch_compat_of(&s->arena, r->ix, &o->elf, &io->torch_compat);
			io->torch_compat_ix = r->ix;
		}
		tc_add_compat(s, r, io->path, o, &io->torch_compat, owner, io->dist ? io->dist->version : NULL,
			      io->module);
	}
}

/* ---- candidates ---- */

/* The folder of PyTorch's wheel index for a CUDA major: the variants every
 * release since 2.7 (12.8) and 2.9 (13.0) is published for. */
static const char *variant_index(int major, const char **tag)
{
	if (major == 12) {
		*tag = "cu128";
		return "https://download.pytorch.org/whl/cu128";
	}
	if (major == 13) {
		*tag = "cu130";
		return "https://download.pytorch.org/whl/cu130";
	}
	*tag = NULL;
	return NULL;
}

static bool variant_published(const char *version, int major)
{
	return (major == 12 && version_cmp(version, "2.7.0") >= 0) || (major == 13 && version_cmp(version, "2.9.0") >= 0);
}

/* Does p bind the torch of cand (its symbols, from the ABI index) and need its CUDA major? */
static bool binds(const struct plan_pkg *p, const struct plan_cand *cand)
{
	if (p->tc && (cand->rel < 0 || !torchset_has(&p->tc->ok, (size_t)cand->rel)))
		return false;
	return !p->cuda_major || p->cuda_major == cand->cuda_major;	/* a CPU build brings none */
}

/*
 * Whether torch at cand's version would move a CUDA binding package of the
 * environment (cuda-bindings, cuda-python, cuda-core: versioned by the CUDA
 * major they are built for) to another major, while its modules import
 * today: torch 2.10.0 requires cuda-bindings==12.9.4, so installing it
 * where torch 2.12 brought cuda-bindings 13.5.0 replaces that, and modules
 * of 13.x (cuda.bindings._v2) are gone (pins.tsv has torch's requirements).
 */
static bool moves_cuda_bindings(struct advice *a, const struct plan_state *ps, const struct plan_cand *cand)
{
	struct arena *ar = &a->s->arena;
	size_t first = 0, n = ps->pins ? pins_of(ps->pins, "torch", cand->version, &first) : 0;
	for (size_t k = first; n && k < first + n; k++) {
		struct requirement rq;
		if (!requirement_parse(ar, ps->pins->row[k].requirement, &rq))
			continue;
		const char *name = rq.norm, *spec = rq.spec;
		if (!str_eq(name, "cuda-bindings") && !str_eq(name, "cuda-python") && !str_eq(name, "cuda-core"))
			continue;
		for (size_t i = 0; i < ps->npkg; i++) {
			const struct plan_pkg *p = &ps->pkg[i];
			if (!p->norm || !str_eq(p->norm, name) || !p->version || p->nmod <= p->nfail + p->nunsure)
				continue;
			long want = strtol(spec + strcspn(spec, "0123456789"), NULL, 10), have = strtol(p->version, NULL, 10);
			if (!spec_allows(spec, p->version) && want && have && want != have)
				return true;
		}
	}
	return false;
}

/*
 * Judges one candidate: which packages stay, move (to what) or break.  A
 * package that fails because of torch (it binds another, or needs another
 * CUDA major) is fixed when it binds the candidate or moves to the release
 * pinned to it; one that fails for another reason is not fixed by any torch,
 * but its modules that import today must keep importing, as must every
 * package that imports.
 */
static void judge_candidate(struct advice *a, struct plan_state *ps, struct plan_cand *cand)
{
	struct arena *ar = &a->s->arena;
	cand->feasible = true;
	cand->fixed = cand->moves = cand->left = 0;
	cand->move_to = arena_calloc(ar, ps->npkg ? ps->npkg : 1, sizeof *cand->move_to);
	cand->fixes_pkg = arena_calloc(ar, ps->npkg ? ps->npkg : 1, sizeof *cand->fixes_pkg);
	if (!cand->keep)
		cand->moves++;	/* torch itself */
	if (!cand->keep && moves_cuda_bindings(a, ps, cand)) {
		cand->feasible = false;	/* it would take modules that import today away */
		return;
	}
	for (size_t i = 0; i < ps->npkg; i++) {
		const struct plan_pkg *p = &ps->pkg[i];
		bool imports_some = p->nmod > p->nfail + p->nunsure;
		if (cand->keep) {
			if (!p->torch_level)
				continue;	/* as today */
		} else {
			if (!p->tc && !p->cuda_major)
				continue;	/* no torch symbol, no CUDA library: another torch changes nothing */
			/* its own metadata pins another torch: move it too when a release fits */
			bool pin_off = p->torch_spec && !spec_allows(p->torch_spec, cand->version);
			if (binds(p, cand) && !pin_off) {
				if (p->torch_level) {
					cand->fixed++;
					cand->fixes_pkg[i] = true;
				}
				continue;
			}
		}
		/* the release of it built for this torch (PyPI's; a variant index carries the same versions) */
		const char *to = p->dist && ps->pins ? pins_built_for(ar, ps->pins, p->norm, cand->version) : NULL;
		if (to) {
			cand->move_to[i] = to;
			cand->moves++;
			if (p->torch_level) {
				cand->fixed++;
				cand->fixes_pkg[i] = true;
			}
			continue;
		}
		if (!cand->keep && binds(p, cand))
			continue;	/* only its pin disagrees: it keeps importing */
		if (!cand->keep && (imports_some || !p->nfail)) {
			cand->feasible = false;	/* it imports today: never break it */
			return;
		}
		cand->left++;
	}
}

static bool better(const struct plan_cand *x, const struct plan_cand *best)
{
	if (!best)
		return true;
	if (x->fixed != best->fixed)
		return x->fixed > best->fixed;
	if (x->moves != best->moves)
		return x->moves < best->moves;
	if (!x->index_url != !best->index_url)
		return !x->index_url;
	if (x->keep != best->keep)
		return x->keep;
	return x->rel > best->rel;
}

static void choose(struct advice *a, struct plan_state *ps)
{
	struct arena *ar = &a->s->arena;
	const struct torch_layout *t = &a->c->torch;
	int installed_major = t->found && t->cuda ? (int)strtol(t->cuda, NULL, 10) : 0;
	const struct plan_cand *best = NULL;
	uint16_t mc = str_eq(a->machine, "aarch64") ? EM_AARCH64_ : EM_X86_64_;
	struct plan_cand keep = { .keep = true, .rel = ps->ix && t->version ? torchabi_find(ps->ix, t->version, mc) : -1,
				  .version = t->version, .cuda_major = installed_major };
	ps->keep = keep;
	judge_candidate(a, ps, &ps->keep);
	if (ps->keep.feasible)
		best = &ps->keep;
	if (!ps->ix || !t->found || !t->version)
		goto done;
	size_t ncand = ps->ix->nrel * 2;
	ps->cand = arena_calloc(ar, ncand, sizeof *ps->cand);
	for (size_t r = 0; r < ps->ix->nrel; r++) {
		const struct torchabi_release *rel = &ps->ix->rel[r];
		if (rel->machine != mc)
			continue;	/* another machine's build */
		for (int variant = 0; variant < 2; variant++) {
			struct plan_cand *c = &ps->cand[ps->ncand];
			memset(c, 0, sizeof *c);
			c->rel = (int)r;
			c->version = rel->version;
			c->cuda_major = rel->cuda_major;
			if (variant) {
				/* the same release for the other CUDA major, from PyTorch's index */
				int other = rel->cuda_major == 12 ? 13 : rel->cuda_major == 13 ? 12 : 0;
				if (!other || !variant_published(rel->version, other))
					continue;
				c->cuda_major = other;
				c->index_url = variant_index(other, &c->variant);
			}
			/* the installed build itself is no change */
			if (torchabi_find(ps->ix, t->version, mc) == (int)r && c->cuda_major == installed_major)
				continue;
			ps->ncand++;
			judge_candidate(a, ps, c);
			if (c->feasible && c->fixed && better(c, best))
				best = c;
		}
	}
done:
	ps->best = best;
}

/* ---- actions ---- */

void plan_fixes_add(struct arena *ar, struct plan *p, const struct cause *c)
{
	if (idmap_get(&p->fixed, (uintptr_t)c, 0))
		return;
	idmap_put(ar, &p->fixed, (uintptr_t)c, 0, MAP_YES);
	ptrvec_push(ar, &p->fixes, (void *)c);
}

bool plan_removes(const struct plan *p, const struct cause *c)
{
	return idmap_get(&p->fixed, (uintptr_t)c, 0) != NULL;
}

/* Adds x to the plan, one pip install for requirements that go together
 * (each requirement once: a set of them, not a pass per item, as a plan can
 * reinstall thousands of distributions); the commands are built at the end
 * (plan_finish). */
static void plan_add(struct advice *a, const struct fix_action *x)
{
	struct plan *p = &a->plan;
	struct arena *ar = &a->s->arena;
	struct plan_state *ps = a->state;
	struct fix_action *into = NULL;
	if (x->kind != FIX_PIP_INSTALL && x->path) {
		/* a path once */
		const char *key = arena_printf(ar, "%d\n%s", (int)x->kind, x->path);
		if (strmap_get(&ps->plan_items, key))
			return;
		strmap_put(ar, &ps->plan_items, key, MAP_YES);
	}
	/* one pip install per flags and index, one system install per manager:
	 * found by a key, not a pass over the plan's actions (a plan can hold
	 * thousands: one removal per stale metadata folder) */
	const char *merge = NULL;
	if (x->kind == FIX_PIP_INSTALL)
		merge = arena_printf(ar, "pip\n%d %d\n%s%s", x->no_deps, x->force_reinstall, x->index_url ? "=" : "-",
				     x->index_url ? x->index_url : "");
	else if (x->kind == FIX_SYSTEM_PACKAGE && x->manager)
		merge = arena_printf(ar, "system\n%s", x->manager);
	if (merge)
		into = strmap_get(&ps->plan_merge, merge);
	if (!into) {
		into = fix_action_new(ar, x->kind);
		*into = *x;
		memset(&into->items, 0, sizeof into->items);
		ptrvec_push(ar, &p->actions, into);
		if (merge)
			strmap_put(ar, &ps->plan_merge, merge, into);
	}
	for (size_t k = 0; k < x->items.n; k++) {
		const char *key = arena_printf(ar, "%p\n%s", (void *)into, (const char *)x->items.item[k]);
		if (strmap_get(&ps->plan_items, key))
			continue;
		strmap_put(ar, &ps->plan_items, key, MAP_YES);
		ptrvec_push(ar, &into->items, x->items.item[k]);
	}
}

/* The pip install of the chosen torch change, or NULL when it changes nothing. */
static struct fix_action *torch_change(struct advice *a, struct plan_state *ps, const struct plan_cand *cand)
{
	struct arena *ar = &a->s->arena;
	struct fix_action *x = NULL;
	bool reinstall = false;
	if (!cand->keep) {
		/* the same release for another CUDA: pip takes the installed 2.9.1+cu130 for ==2.9.1 */
		bool same = a->c->torch.version && version_cmp(version_public(ar, a->c->torch.version), cand->version) == 0;
		x = advice_pip_install(a, arena_printf(ar, "torch==%s", cand->version), false, same);
		if (!x)
			return NULL;
		x->index_url = cand->index_url;
	}
	for (size_t i = 0; i < ps->npkg; i++) {
		const char *to = cand->move_to[i];
		if (!to)
			continue;
		const struct plan_pkg *p = &ps->pkg[i];
		/* the version it claims is the right one, its files are not: reinstall it */
		reinstall |= p->version && version_cmp(p->version, to) == 0;
		if (!x && !(x = advice_pip_install(a, NULL, false, false)))
			return NULL;
		x->index_url = cand->index_url;
		fix_action_item(ar, x, arena_printf(ar, "%s==%s", p->dist ? p->dist->name : p->name, to));
	}
	if (x && reinstall && cand->keep) {
		/* --force-reinstall without --no-deps would reinstall torch too */
		x->force_reinstall = true;
		x->no_deps = true;
	}
	if (x)
		fix_action_finish(ar, x);
	return x;
}

/* A package's own library off its own module's path, which nothing loads
 * first (neither its package's import nor torch's): a defect of that
 * release's files (torchaudio 2.9's pybind11_prefixctc.so and
 * libctc_prefix_decoder.so), there whatever torch is installed. */
static bool own_library_off_path(const struct finding *f)
{
	if (!str_eq(f->id, "library-off-path"))
		return false;
	const struct value *loads = val_get(f->fields, "package_loads_it");
	const struct value *torch = val_get(f->fields, "torch_preloads_it");
	const struct value *at = val_get(f->fields, "found_at");
	const char *d = val_get_str(f->fields, "distribution");
	if (!d || (loads && loads->kind == VAL_BOOL && loads->u.b) || (torch && torch->kind == VAL_BOOL && torch->u.b) ||
	    !at || at->kind != VAL_ARR || !at->u.list.n)
		return false;
	const char *from = val_get_str(at->u.list.item[0], "distribution");
	return from && str_eq(from, d);
}

/* The removals of copied files (remove_strays) of the objects c's findings
 * are about, added to c's actions: the change alone leaves those files
 * failing (image_stable.so copied in needs libpng16.86585de4.so.16, which
 * no reinstall brings), the removal mends them.  How many. */
static size_t stray_actions(struct arena *ar, const struct plan_state *ps, struct cause *c)
{
	size_t n = 0;
	for (size_t k = 0; k < ps->strays.n; k++) {
		struct fix_action *x = ps->strays.item[k];
		bool about = false;
		for (size_t i = 0; i < c->members.n && !about; i++) {
			const struct finding *f = c->members.item[i];
			about = f->object && str_eq(f->object, x->path);
		}
		if (about && !ptrvec_contains(&c->actions, x)) {
			ptrvec_push(ar, &c->actions, x);
			n++;
		}
	}
	return n;
}

/* Is every finding of a cause about a package the change fixes (a module,
 * or a library its package loads itself), and one a torch change can mend?
 * A package's own library off its path is not, where the change leaves
 * that package's files as they are; where it moves the package, the new
 * release's files decide, and *own_path says the cause's own action (the
 * folder on the path) goes into the plan beside the change (torchaudio
 * 2.10 -> 2.9.1 keeps the defect). */
static bool cause_in_fixed(const struct plan_state *ps, const struct plan_cand *cand, const struct cause *c,
			   bool *own_path)
{
	*own_path = false;
	if (!cand)
		return false;
	size_t n = 0;
	for (size_t k = 0; k < c->members.n; k++) {
		const struct finding *f = c->members.item[k];
		const char *d = val_get_str(f->fields, "distribution");
		const char *pkg = val_get_str(f->fields, "package");
		if (!d && !pkg)
			continue;
		size_t at = ps->npkg;
		for (size_t i = 0; i < ps->npkg && at == ps->npkg; i++)
			if (cand->fixes_pkg[i] && (d ? str_eq(ps->pkg[i].name, d)
						     : ps->pkg[i].folder && str_eq(ps->pkg[i].folder, pkg)))
				at = i;
		if (at == ps->npkg)
			return false;
		if (own_library_off_path(f)) {
			if (!cand->move_to[at])
				return false;	/* its files stay as they are: the cause keeps its own action */
			*own_path = true;
		}
		n++;
	}
	return n > 0;
}

/* Does a cause of list take down every module c takes down? */
static const struct cause *covered_by(const struct ptrvec *list, const struct cause *c)
{
	for (size_t i = 0; i < list->n; i++) {
		const struct cause *o = list->item[i];
		if (o == c)
			continue;
		bool all = c->modules.n > 0;
		for (size_t k = 0; k < c->modules.n && all; k++) {
			bool has = false;
			for (size_t j = 0; j < o->modules.n && !has; j++)
				has = str_eq(o->modules.item[j], c->modules.item[k]);
			all = has;
		}
		if (all)
			return o;
	}
	return NULL;
}

static const char *cand_text(struct advice *a, const struct plan_state *ps, const struct plan_cand *cand)
{
	struct arena *ar = &a->s->arena;
	const char *moved = "", *again = "";
	size_t n = 0, nagain = 0;
	for (size_t i = 0; i < ps->npkg; i++) {
		const struct plan_pkg *p = &ps->pkg[i];
		if (!cand->move_to[i])
			continue;
		if (p->version && version_cmp(p->version, cand->move_to[i]) == 0)
			/* the release built for it is the one its metadata says: its files are another's */
			again = arena_printf(ar, "%s%s%s %s", again, nagain++ ? ", " : "", p->name, p->version);
		else
			moved = arena_printf(ar, "%s%s%s%s%s -> %s", moved, n++ ? ", " : "", p->name,
					     p->version ? " " : "", p->version ? p->version : "", cand->move_to[i]);
	}
	const char *t = a->c->torch.version ? a->c->torch.version : "?";
	const char *re = nagain ? arena_printf(ar, "; reinstalls %s, whose files are not the release %s metadata "
						   "names (it is the one built for torch %s)", again,
						   nagain == 1 ? "its" : "their", cand->keep ? t : cand->version) : "";
	if (cand->keep && !n)
		return arena_printf(ar, "keeps torch %s%s", t, re);
	if (cand->keep)
		return arena_printf(ar, "keeps torch %s; moves %s to the release%s built for it (%s own Requires-Dist "
					"pins it)%s", t, moved, n == 1 ? "" : "s", n == 1 ? "its" : "their", re);
	const char *why = "";
	for (size_t i = 0; i < ps->npkg; i++)
		if (cand->fixes_pkg[i] && !cand->move_to[i]) {
			const struct plan_pkg *p = &ps->pkg[i];
			why = arena_printf(ar, "%s%s%s%s%s", why, *why ? ", " : "", p->name, p->version ? " " : "",
					   p->version ? p->version : "");
		}
	return arena_printf(ar, "torch %s -> %s (%s%s%s)%s%s%s%s", t, cand->version,
			    cand->index_url ? "PyTorch's " : "PyPI's build, CUDA ",
			    cand->index_url ? cand->variant : arena_printf(ar, "%d", cand->cuda_major),
			    cand->index_url ? " build" : "",
			    *why ? arena_printf(ar, ": the torch %s binds", why) : "", n ? "; moves " : "", moved, re);
}

/* The warning of binaries no RECORD owns (envfind.c), when the strays
 * removed are every one it lists: those removals are its actions too, so
 * the plan mends it and the text does not ask whether they were copied
 * in by hand. */
static void strays_mend_unowned(struct advice *a, const struct ptrvec *removed)
{
	struct arena *ar = &a->s->arena;
	for (size_t i = 0; i < a->cs->list.n; i++) {
		struct cause *c = a->cs->list.item[i];
		const struct value *un = val_get(c->lead->fields, "unowned");
		if (c->severity != SEV_WARNING || !str_eq(c->lead->id, "record-mismatch") || !un || un->kind != VAL_ARR ||
		    !un->u.list.n || un->u.list.n != removed->n)
			continue;
		bool all = true;
		for (size_t k = 0; k < un->u.list.n && all; k++) {
			bool hit = false;
			for (size_t j = 0; j < removed->n && !hit; j++)
				hit = str_eq(un->u.list.item[k]->u.s, ((const struct fix_action *)removed->item[j])->path);
			all = hit;
		}
		for (size_t j = 0; all && j < removed->n; j++)
			ptrvec_push(ar, &c->actions, removed->item[j]);
	}
}

/*
 * Files no RECORD lists, in the folder of a distribution the change
 * reinstalls because its files are another release's (copied from another
 * host): a reinstall rewrites the files its RECORD lists and leaves these,
 * and they were copied with the rest.  Only those that fail to load today
 * are removed (nothing that works can need one), each once; returns how many.
 */
static size_t remove_strays(struct advice *a, struct plan_state *ps, const struct plan_cand *cand)
{
	struct arena *ar = &a->s->arena;
	struct ptrvec removed = { 0 };
	size_t n = 0;
	for (size_t i = 0; i < a->c->nv; i++) {
		const struct module_verdict *v = &a->c->v[i];
		const struct inv_obj *io = v->io;
		if (v->state != V_FAILS || io->dist || io->in_stdlib)
			continue;
		/* its package: the distribution owning its folder (read_packages) */
		size_t k = (size_t)(intptr_t)strmap_get(&ps->by_path, io->path);
		const struct plan_pkg *p = k ? &ps->pkg[k - 1] : NULL;
		if (!p || !p->dist || !cand->move_to[k - 1] || !p->version || version_cmp(p->version, cand->move_to[k - 1]))
			continue;
		struct fix_action *x = fix_action_new(ar, FIX_REMOVE_PATH);
		x->path = io->path;
		fix_action_finish(ar, x);	/* the warning it mends carries this one (plan_add keeps a copy) */
		plan_add(a, x);
		ptrvec_push(ar, &removed, x);
		n++;
	}
	if (n)
		strays_mend_unowned(a, &removed);
	ps->strays = removed;
	return n;
}

void plan_build(struct advice *a, const struct check_options *o, bool model_check)
{
	struct arena *ar = &a->s->arena;
	struct plan *p = &a->plan;
	struct plan_state *ps = arena_calloc(ar, 1, sizeof *ps);
	a->state = ps;
	/* a torch change is weighed only when a cause another torch could mend
	 * fails something: a torch it was not built against, another CUDA major
	 * (the index costs a decode) */
	const struct torch_layout *tl = &a->c->torch;
	int tmaj = tl->found && tl->cuda ? (int)strtol(tl->cuda, NULL, 10) : 0;
	bool failing = false;
	for (size_t i = 0; i < a->cs->list.n && !failing; i++) {
		const struct cause *c = a->cs->list.item[i];
		if (c->severity != SEV_ERROR || c->driver)
			continue;
		const struct value *m = val_get(c->lead->fields, "cuda_major");
		const struct value *n = val_get(c->lead->fields, "needs_cuda_major");
		failing = str_starts(c->key, "torch:") || (n && n->kind == VAL_INT && n->u.i != tmaj) ||
			  (m && m->kind == VAL_INT && tmaj && m->u.i != tmaj);
		for (size_t k = 0; k < c->roots.n && !failing; k++)
			failing = val_get(((const struct finding *)c->roots.item[k])->fields, "torch") != NULL;
	}
	struct diag d = { 0 };
	ps->ix = failing && a->c->torch.found ? tc_index(a->s, &d) : NULL;
	if (ps->ix) {
		ps->tc = arena_calloc(ar, 1, sizeof *ps->tc);
		tc_report_init(ps->tc, ps->ix, a->c->torch.version);
		tc_add_inventory(a->s, ps->tc, &a->c->inv);
		tc_finish(ps->tc);
	}
	ps->pins = failing ? pins_table(ar, &ps->pins_cache) : NULL;
	read_packages(a, ps);
	if (failing)
		choose(a, ps);
	const struct plan_cand *cand = ps->best;
	struct fix_action *change = cand ? torch_change(a, ps, cand) : NULL;
	ps->change = change;
	if (change) {
		plan_add(a, change);
		p->summary = cand_text(a, ps, cand);
		p->guess = cand->index_url != NULL;	/* the variant index is not read here */
		size_t strays = remove_strays(a, ps, cand);
		if (strays)
			p->summary = arena_printf(ar, "%s; removes %zu file%s no RECORD lists from %s folder, which fail%s to "
						      "load (a reinstall leaves them)", p->summary, strays,
						  strays == 1 ? "" : "s", strays == 1 ? "its" : "their", strays == 1 ? "s" : "");
	}
	/* which causes the change removes; the others keep their own actions */
	struct ptrvec left = { 0 };
	for (size_t i = 0; i < a->cs->list.n; i++) {
		struct cause *c = a->cs->list.item[i];
		if (c->severity != SEV_ERROR || c->driver)
			continue;
		bool own_path;
		if (change && cause_in_fixed(ps, cand, c, &own_path)) {
			plan_fixes_add(ar, p, c);
			ptrvec_push(ar, &ps->by_change, c);
			ptrvec_push(ar, &c->actions, change);
			for (size_t k = 0; own_path && k < c->lead->actions.n; k++) {
				/* the new release's files may keep the defect: its folder on the path too */
				plan_add(a, c->lead->actions.item[k]);
				ptrvec_push(ar, &c->actions, c->lead->actions.item[k]);
			}
			bool more = stray_actions(ar, ps, c) > 0;
			c->fix = arena_printf(ar, "%s (one change for this cause and the others it removes: %s)",
					      own_path || more ? fix_actions_command(ar, &c->actions) : change->command,
					      p->summary);
			continue;
		}
		ptrvec_push(ar, &left, c);
	}
	/* causes with actions of their own (a cause without one that takes down the
	 * same modules stays, and the plan says so) */
	for (size_t i = 0; i < left.n; i++) {
		struct cause *c = left.item[i];
		for (size_t k = 0; k < c->lead->actions.n; k++)
			ptrvec_push(ar, &c->actions, c->lead->actions.item[k]);
		if (!c->actions.n) {
			const struct cause *over = covered_by(&left, c);
			ptrvec_push(ar, &p->remaining, c);
			ptrvec_push(ar, &p->remaining_why,
				    over && over->lead->actions.n
					    ? (void *)arena_printf(ar, "no action is known for it; it may go with cause "
								       "\"%s\", whose modules it takes down", over->key)
					    : (void *)(c->lead->fix ? c->lead->fix : "no action is known for it"));
			continue;
		}
		for (size_t k = 0; k < c->actions.n; k++)
			plan_add(a, c->actions.item[k]);
		plan_fixes_add(ar, p, c);
	}
	/* warnings keep their own actions, in the plan after the errors' (a stale folder named) */
	for (size_t i = 0; i < a->cs->list.n; i++) {
		struct cause *c = a->cs->list.item[i];
		if (c->severity == SEV_ERROR && !c->driver)
			continue;
		for (size_t k = 0; k < c->lead->actions.n; k++)
			ptrvec_push(ar, &c->actions, c->lead->actions.item[k]);
		if (c->severity != SEV_WARNING || !c->actions.n)
			continue;
		for (size_t k = 0; k < c->actions.n; k++)
			plan_add(a, c->actions.item[k]);
		plan_fixes_add(ar, p, c);
	}
	for (size_t i = 0; i < p->actions.n; i++)
		fix_action_finish(ar, p->actions.item[i]);
	p->command = fix_actions_command(ar, &p->actions);
	if (model_check)
		plan_check(a, ps, o);
	else
		p->check = "not checked by the model";
}
