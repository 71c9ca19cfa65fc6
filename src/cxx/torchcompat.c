#include "cxx/torchcompat.h"
#include "cxx/torch.h"

const struct torchabi *tc_index(struct scan *s, struct diag *d)
{
	return torchabi_builtin(&s->arena, &s->torchabi, d);
}

void tc_report_init(struct tc_report *r, const struct torchabi *ix, const char *installed)
{
	memset(r, 0, sizeof *r);
	r->ix = ix;
	r->installed = installed;
	r->installed_rel = -1;	/* found once the first object gives the machine */
}

static struct tc_package *package_for(struct scan *s, struct tc_report *r, const char *name, const char *version,
				      uint16_t machine)
{
	for (size_t i = 0; i < r->npkg; i++)
		if (str_eq(r->pkg[i]->name, name))
			return r->pkg[i];
	struct tc_package *p = arena_alloc(&s->arena, sizeof *p);
	p->name = arena_strdup(&s->arena, name);
	p->version = version ? arena_strdup(&s->arena, version) : NULL;
	torchset_all(&p->ok, r->ix->nrel);
	p->stable_only = true;
	p->cudart_major = -1;
	p->machine = machine;
	r->pkg = arena_grow(&s->arena, r->pkg, r->npkg, r->npkg + 1, sizeof *r->pkg);
	r->pkg[r->npkg++] = p;
	return p;
}

void tc_add_object(struct scan *s, struct tc_report *r, const char *path, const struct object *o,
		   const char *owner, const char *owner_version, const char *module)
{
	if (!o || o->kind != OBJ_ELF || !o->elf_ok)
		return;
	struct torch_compat c;
	torch_compat_of(&s->arena, r->ix, &o->elf, &c);
	tc_add_compat(s, r, path, o, &c, owner, owner_version, module);
}

void tc_add_compat(struct scan *s, struct tc_report *r, const char *path, const struct object *o,
		   const struct torch_compat *c, const char *owner, const char *owner_version,
		   const char *module)
{
	if (!o || o->kind != OBJ_ELF || !o->elf_ok || !c->nneed)
		return;
	struct tc_object *t = arena_alloc(&s->arena, sizeof *t);
	t->c = *c;
	if (!r->machine) {
		r->machine = o->elf.machine;
		r->installed_rel = r->installed ? torchabi_find(r->ix, r->installed, r->machine) : -1;
	}
	t->path = arena_strdup(&s->arena, path);
	t->module = module ? arena_strdup(&s->arena, module) : NULL;
	for (size_t i = 0; i < t->c.nnone && i < TORCH_COMPAT_MAX_LISTED; i++)
		t->c.none[i] = arena_strdup(&s->arena, t->c.none[i]);
	if (r->installed_rel >= 0 && o->elf.machine == r->machine && !torchset_has(&t->c.ok, (size_t)r->installed_rel)) {
		const char *miss[2];
		t->nmissing_installed = torch_compat_missing(r->ix, &o->elf, (size_t)r->installed_rel, miss, 2);
		for (size_t i = 0; i < t->nmissing_installed && i < 2; i++)
			t->missing_installed[i] = arena_strdup(&s->arena, miss[i]);
	}
	struct tc_package *p = package_for(s, r, owner ? owner : path_basename(path), owner_version, o->elf.machine);
	p->obj = arena_grow(&s->arena, p->obj, p->nobj, p->nobj + 1, sizeof *p->obj);
	p->obj[p->nobj++] = t;
	torchset_and(&p->ok, &t->c.ok);
	p->nneed += t->c.nneed;
	p->nstable += t->c.nstable;
	p->stable_only = p->stable_only && t->c.nstable == t->c.nneed;
	for (size_t i = 0; i < t->c.nnone && i < TORCH_COMPAT_MAX_LISTED; i++)
		if (p->nnone < TORCH_COMPAT_MAX_LISTED)
			p->none[p->nnone++] = t->c.none[i];
	if (t->c.cudart_major >= 0)
		p->cudart_major = t->c.cudart_major;
	p->installed_ok = r->installed_rel >= 0 && torchset_has(&p->ok, (size_t)r->installed_rel);
}

void tc_finish(struct tc_report *r)
{
	torchset_all(&r->all, r->ix->nrel);
	for (size_t i = 0; i < r->npkg; i++)
		torchset_and(&r->all, &r->pkg[i]->ok);
	r->nconflict = 0;
	if (!r->npkg || torchset_count(&r->all))
		return;
	for (size_t i = 0; i < r->npkg; i++)
		for (size_t j = i + 1; j < r->npkg; j++) {
			struct torchset both = r->pkg[i]->ok;
			torchset_and(&both, &r->pkg[j]->ok);
			if (torchset_count(&both) || !torchset_count(&r->pkg[i]->ok) || !torchset_count(&r->pkg[j]->ok))
				continue;
			if (r->nconflict < TC_MAX_CONFLICTS) {
				r->conflict[r->nconflict].a = i;
				r->conflict[r->nconflict].b = j;
				r->nconflict++;
			}
		}
}

static const char *who(struct arena *a, const struct tc_package *p)
{
	return p->version ? arena_printf(a, "%s %s", p->name, p->version) : p->name;
}

/* The oldest and newest release of p's machine (the index has one: p has
 * an object that needed torch). */
static void span(const struct torchabi *ix, const struct tc_package *p, const char **lo, const char **hi)
{
	struct torchset m;
	torchabi_machine_set(ix, p->machine, &m);
	int o = torchset_oldest(&m, ix->nrel), n = torchset_newest(&m, ix->nrel);
	*lo = o >= 0 ? ix->rel[o].version : "?";
	*hi = n >= 0 ? ix->rel[n].version : "?";
}

/* Stable C ABI only: the symbols appeared over time and stay, so the answer
 * is a lower bound (within the machine's releases). */
static bool open_ended(const struct torchabi *ix, const struct torchset *s)
{
	int lo = torchset_oldest(s, ix->nrel);
	if (lo < 0)
		return false;
	for (size_t r = (size_t)lo; r < ix->nrel && ix->rel[r].machine == ix->rel[lo].machine; r++)
		if (!torchset_has(s, r))
			return false;
	return true;
}

const char *tc_summary(struct arena *a, const struct tc_report *r, const struct tc_package *p)
{
	const struct torchabi *ix = r->ix;
	if (!torchset_count(&p->ok)) {
		const char *lo, *hi;
		span(ix, p, &lo, &hi);
		/* x86_64 was the index's only machine: its sentences stay as they were */
		const char *m = p->machine == EM_X86_64_ ? "" : arena_printf(a, "%s ", elf_machine_name(p->machine));
		if (p->nnone == p->nneed)
			return arena_printf(a, "%s binds against no %storch release from %s to %s: none of them exports "
					       "the %s torch symbol%s it needs",
					    who(a, p), m, lo, hi,
					    p->nneed == 1 ? "one" : arena_printf(a, "%zu", p->nneed), p->nneed == 1 ? "" : "s");
		if (p->nnone)
			return arena_printf(a, "%s binds against no %storch release from %s to %s: %zu of the %zu torch "
					       "symbols it needs are exported by none of them",
					    who(a, p), m, lo, hi, p->nnone, p->nneed);
		return arena_printf(a, "%s binds against no single %storch release from %s to %s: no release exports "
				       "all %zu torch symbols it needs",
				    who(a, p), m, lo, hi, p->nneed);
	}
	if (p->stable_only && open_ended(ix, &p->ok))
		return arena_printf(a, "%s uses only the LibTorch stable C ABI; it needs torch %s or newer (%s)",
				    who(a, p), ix->rel[torchset_oldest(&p->ok, ix->nrel)].version,
				    torchset_cuda_text(a, ix, &p->ok));
	return arena_printf(a, "%s binds against torch %s (%s)", who(a, p), torchset_text(a, ix, &p->ok),
			    torchset_cuda_text(a, ix, &p->ok));
}

const char *tc_fix(struct arena *a, const struct tc_report *r, const struct tc_package *p)
{
	const struct torchabi *ix = r->ix;
	if (p->installed_ok)
		return NULL;
	int best = torchset_newest(&p->ok, ix->nrel);
	const char *installed = r->installed ? r->installed : NULL;
	if (best < 0)
		return installed ? arena_printf(a, "install a %s built for torch %s, or rebuild it from source against it",
						p->name, installed)
				 : arena_printf(a, "rebuild %s from source against the torch you install", p->name);
	const char *line = arena_printf(a, "pip install torch==%s", ix->rel[best].version);
	if (installed)
		return arena_printf(a, "%s, or a %s built for torch %s", line, p->name, installed);
	return line;
}

struct value *tc_set_value(struct arena *a, const struct torchabi *ix, const struct torchset *s)
{
	struct value *arr = val_arr(a);
	for (size_t r = 0; r < ix->nrel; r++)
		if (torchset_has(s, r))
			val_push(a, arr, val_str_ref(a, ix->rel[r].version));
	return arr;
}

const char *tc_all_sentence(struct arena *a, const struct tc_report *r)
{
	const struct torchabi *ix = r->ix;
	if (r->npkg < 2)
		return NULL;
	if (torchset_count(&r->all))
		return arena_printf(a, "torch %s satisfies all %zu packages here that use torch at once; newest: "
				       "pip install torch==%s", torchset_text(a, ix, &r->all), r->npkg,
				    ix->rel[torchset_newest(&r->all, ix->nrel)].version);
	if (!r->nconflict)
		return arena_printf(a, "no torch release satisfies all %zu packages here that use torch at once",
				    r->npkg);
	const struct tc_package *p = r->pkg[r->conflict[0].a], *q = r->pkg[r->conflict[0].b];
	const char *more = r->nconflict > 1 ? arena_printf(a, "; %zu more conflicting pair%s", r->nconflict - 1,
							 r->nconflict == 2 ? "" : "s") : "";
	return arena_printf(a, "no torch release satisfies both %s (%s) and %s (%s)%s", who(a, p),
			    torchset_text(a, ix, &p->ok), who(a, q), torchset_text(a, ix, &q->ok), more);
}

struct value *tc_all_value(struct arena *a, const struct tc_report *r)
{
	struct value *v = val_obj(a);
	val_set(a, v, "text", val_str(a, tc_all_sentence(a, r)));
	val_set_int(a, v, "packages", (int64_t)r->npkg);
	val_set(a, v, "satisfies_all", tc_set_value(a, r->ix, &r->all));
	struct value *cs = val_arr(a);
	for (size_t i = 0; i < r->nconflict; i++) {
		struct value *pair = val_arr(a);
		for (int k = 0; k < 2; k++) {
			const struct tc_package *p = r->pkg[k ? r->conflict[i].b : r->conflict[i].a];
			struct value *o = val_obj(a);
			val_set(a, o, "name", val_str_ref(a, p->name));
			val_set(a, o, "version", val_str(a, p->version));
			val_set(a, o, "releases", tc_set_value(a, r->ix, &p->ok));
			val_push(a, pair, o);
		}
		val_push(a, cs, pair);
	}
	val_set(a, v, "conflicts", cs);
	return v;
}
