#include "diagnose/verdict.h"
#include "cxx/abi.h"
#include "cxx/demangle.h"
#include "cxx/explain.h"
#include "cxx/versions.h"
#include "cxx/torch.h"
#include "cxx/torchcompat.h"

#include <errno.h>

/* Near-miss analyses per why_findings call: enough for every real case,
 * bounded for a plugin with thousands of unresolved host symbols. */
#define WHY_MAX_NEARMISS 64
#define WHY_MAX_COPIES 16

/* ---- running ---- */

/* Whether obj imports name (an undefined reference to it). */
static bool imports(struct scan *s, struct object *obj, const char *name)
{
	const struct elf_refs *refs = object_refs(&s->objs, obj);
	for (size_t i = 0; refs && i < refs->n; i++)
		if (str_eq(refs->ref[i].name, name))
			return true;
	return false;
}

/*
 * Constructors run at dlopen and abiscope does not run them: an object
 * with constructors that imports dlopen may load more, one with lazily
 * bound functions that do not resolve dies if a constructor calls one.
 * Both are assumptions of the verdict, named per object.
 */
static void constructor_assumptions(struct scan *s, struct why_result *r, const struct dlopen_result *dr)
{
	struct arena *a = &s->arena;
	for (size_t i = 0; i < dr->nsearchlist; i++) {
		const struct lmap *m = dr->searchlist[i];
		struct object *o = m->obj;
		if (m->initial || o->kind != OBJ_ELF || !o->elf_ok || !o->elf.has_constructors ||
		    m->dlopen_serial != r->proc.serial)
			continue;
		if (imports(s, o, "dlopen") || imports(s, o, "dlmopen"))
			ptrvec_push(a, &r->assumptions,
				    arena_printf(a, "%s has constructors and imports dlopen: what they load "
						    "when they run is not modelled", m->path));
		const char *lazy = NULL;
		for (size_t k = 0; k < dr->nfail; k++)
			if (dr->fail[k].kind == FAIL_LAZY_UNDEFINED && dr->fail[k].requester == m)
				lazy = arena_printf(a, "%s%s%s", lazy ? lazy : "", lazy ? ", " : "",
						    dr->fail[k].name);
		if (lazy)
			ptrvec_push(a, &r->assumptions,
				    arena_printf(a, "%s has constructors and lazily bound functions that do "
						    "not resolve (%s): a constructor that calls one ends the "
						    "process with \"symbol lookup error\"", m->path, lazy));
	}
}

/* The object dlopen is called from: already in the process, or loaded
 * for the call the way the caller itself would be (RTLD_LOCAL). */
static struct lmap *caller_map(struct why_result *r, const char *from)
{
	struct lmap *m = proc_find_loaded(&r->proc, from);
	if (m)
		return m;
	r->from.path = from;
	r->from_loaded = true;
	proc_dlopen(&r->proc, from, false, &r->from.r);
	return r->from.r.ok ? r->from.r.root : NULL;
}

enum status why_run(struct scan *s, const struct why_request *q, struct why_result *r,
		    struct diag *d)
{
	memset(r, 0, sizeof *r);
	enum status st = proc_init(&r->proc, &s->arena, &s->objs, &q->opt, q->exe, d);
	if (st != ST_OK)
		return st;
	if (r->proc.startup_error) {
		/* The process never reaches main(), let alone dlopen(). */
		r->process_cannot_start = true;
		r->target_skipped = true;
		r->dlerror = r->proc.startup_error;
		return ST_OK;
	}
	r->pre = arena_calloc(&s->arena, q->npreload ? q->npreload : 1, sizeof *r->pre);
	/* Preloads stand for ctypes.CDLL / import, which bind with RTLD_NOW;
	 * --lazy applies to the target only. */
	r->proc.opt.lazy = false;
	for (size_t i = 0; i < q->npreload; i++) {
		r->pre[i].path = q->preload[i].path;
		r->pre[i].global = q->preload[i].global;
		proc_dlopen(&r->proc, q->preload[i].path, q->preload[i].global, &r->pre[i].r);
	}
	r->npre = q->npreload;
	struct dlopen_mode mode = { .noload = q->noload, .deepbind = q->deepbind };
	if (q->from) {
		mode.caller = caller_map(r, q->from);
		if (!mode.caller) {
			r->target_skipped = true;
			r->dlerror = r->from.r.dlerror;
			return ST_OK;
		}
	}
	if (strchr(q->target, '/') && !strchr(q->target, '$')) {
		struct fs_stat fst;
		fs_stat(&s->fs, q->target, &fst);
		if (fst.kind == FS_MISSING) {
			/* exit status 3, but the message is the loader's */
			r->target_unreadable = true;
			r->unreadable_reason = arena_strdup(&s->arena, strerror(fst.err));
		} else if (fst.kind != FS_REGULAR && fst.kind != FS_DIR) {
			r->target_unreadable = true;
			r->unreadable_reason = "not a regular file";
			r->target_skipped = true;
			return ST_OK;
		} else if (fst.kind == FS_REGULAR) {
			/* there but not ours to read (EACCES): unreadable, like a
			 * missing file, not a library that "does not exist" */
			struct fs_probe pr;
			uint8_t head[4];
			fs_probe(&s->fs, q->target, head, sizeof head, &pr);
			if (pr.open_err || pr.read_err) {
				int err = pr.open_err ? pr.open_err : pr.read_err;
				r->target_unreadable = true;
				r->target_skipped = true;
				r->unreadable_reason = arena_strdup(&s->arena, strerror(err));
				r->dlerror = arena_printf(&s->arena, "%s: cannot open shared object file: %s", q->target,
							  strerror(err));
				return ST_OK;
			}
		}
	}
	r->proc.opt.lazy = q->opt.lazy;
	size_t assumed_before = r->proc.assumed.n;
	proc_dlopen_mode(&r->proc, q->target, &mode, &r->target);
	r->loads = r->target.ok;
	r->dlerror = r->target.dlerror;
	constructor_assumptions(s, r, &r->target);
	/* bindings made by assumption (loader/process.h assumed): the verdict
	 * is a guess, and says so */
	size_t nassumed = r->proc.assumed.n - assumed_before;
	if (nassumed)
		ptrvec_push(&s->arena, &r->assumptions,
			    arena_printf(&s->arena, "%zu symbol%s bound by assumption, not by a lookup that read "
						    "to the end: %s%s", nassumed, nassumed == 1 ? " was" : "s were",
					 (const char *)r->proc.assumed.item[assumed_before],
					 nassumed > 1 ? arena_printf(&s->arena, " and %zu more", nassumed - 1) : ""));
	return ST_OK;
}

const char *why_demangled(struct scan *s, const char *sym)
{
	const char *d = cxx_demangle(&s->arena, sym);
	return d == sym ? NULL : d;
}

/* ---- findings ---- */

static const char *short_name(const char *path)
{
	return path ? path_basename(path) : "?";
}

static const char *step_label(struct arena *a, const struct search_step *st)
{
	switch (st->source) {
	case FOUND_RPATH: return arena_printf(a, "RPATH of %s", short_name(st->owner));
	case FOUND_RUNPATH: return arena_printf(a, "RUNPATH of %s", short_name(st->owner));
	case FOUND_LD_LIBRARY_PATH: return "LD_LIBRARY_PATH";
	case FOUND_CACHE: return "ld.so.cache";
	case FOUND_DEFAULT: return "default directories";
	default: return found_how_name(st->source);
	}
}

/* JSON: every path tried, in order, with what was found there. */
static struct value *searched_value(struct arena *a, const struct search_trace *t)
{
	struct value *arr = val_arr(a);
	if (!t)
		return arr;
	for (size_t i = 0; i < t->nstep; i++) {
		const struct search_step *st = &t->step[i];
		struct value *o = val_obj(a);
		val_set_str(a, o, "source", step_label(a, st));
		if (st->list)
			val_set_str(a, o, "list", st->list);
		if (st->skipped)
			val_set_str(a, o, "skipped", st->skipped);
		struct value *probes = val_arr(a);
		for (size_t k = 0; k < st->nprobe; k++) {
			struct value *po = val_obj(a);
			val_set(a, po, "path", val_str_ref(a, st->probe[k].path));
			val_set_str(a, po, "result", probe_outcome_name(st->probe[k].outcome));
			if (st->probe[k].why)
				val_set_str(a, po, "reason", st->probe[k].why);
			val_push(a, probes, po);
		}
		val_set(a, o, "tried", probes);
		val_push(a, arr, o);
	}
	return arr;
}

/* One line per search step for people: where it looked and what was there. */
static void explain_search(struct findings *fl, struct finding *f, const struct search_trace *t)
{
	if (!t)
		return;
	finding_line(fl, f, "searched, in order:");
	for (size_t i = 0; i < t->nstep; i++) {
		const struct search_step *st = &t->step[i];
		const char *label = step_label(fl->arena, st);
		if (st->skipped) {
			finding_line(fl, f, "  %zu. %s: %s", i + 1, label, st->skipped);
			continue;
		}
		if (st->nprobe == 0) {
			if (st->source == FOUND_CACHE)
				finding_line(fl, f, "  %zu. %s: no entry for %s", i + 1, label, t->name);
			else
				finding_line(fl, f, "  %zu. %s%s%s: nothing there", i + 1, label,
					     st->list ? " " : "", st->list ? st->list : "");
			continue;
		}
		finding_line(fl, f, "  %zu. %s%s%s%s", i + 1, label, st->list ? " (" : "",
			     st->list ? st->list : "", st->list ? ")" : "");
		/* Only the probes worth reading: the directory itself, and any
		 * candidate that was there but rejected. */
		for (size_t k = 0; k < st->nprobe; k++) {
			const struct probe *pr = &st->probe[k];
			bool base = !strstr(pr->path, "/glibc-hwcaps/") && !strstr(pr->path, "/tls/") &&
				    !(strstr(pr->path, "/x86_64/") && st->source != FOUND_CACHE);
			if (pr->outcome == PROBE_MISSING && !base)
				continue;
			finding_line(fl, f, "       %s: %s%s%s", pr->path, probe_outcome_name(pr->outcome),
				     pr->why ? ": " : "", pr->why ? pr->why : "");
		}
	}
}

/* Candidates the search skipped because they are for another machine or class. */
static void explain_skipped_copies(struct findings *fl, struct finding *f, const struct search_trace *t,
				   struct objcache *oc)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstep; i++)
		for (size_t k = 0; k < t->step[i].nprobe; k++) {
			const struct probe *pr = &t->step[i].probe[k];
			if (pr->outcome != PROBE_WRONG_MACHINE && pr->outcome != PROBE_WRONG_CLASS)
				continue;
			struct diag d;
			diag_clear(&d);
			struct object *o = objcache_get(oc, pr->path, &d);
			if (o && o->kind == OBJ_ELF)
				finding_line(fl, f, "a copy exists at %s, but it is %s %s and was skipped",
					     pr->path, elf_class_name(o->elf.is64), elf_machine_name(o->elf.machine));
		}
}

struct conv {
	struct scan *s;
	struct why_result *r;
	const struct why_request *q;
	const char *context;	/* "while preloading X" or NULL */
	int base;		/* index of the first finding of this dlopen */
	bool is_target;
	const struct dlopen_result *dr;	/* the dlopen being converted */
	struct cxx_index *ix;		/* created on first need unless the request shares one */
	const struct torch_identity *torch;
	bool torch_done;
	int nearmiss_done;
	/* the torch ABI index's answer for the last requester explained */
	const struct object *tc_obj;
	const char *tc_releases, *tc_fix;
	struct value *tc_json;
	/* what every failure of one dlopen asks again (each undefined symbol a
	 * missing library explains), made once for memo_dr and the process
	 * with memo_nmaps objects mapped (memo_fresh): loaded_objects(), and
	 * other_copies() of each library name */
	const struct dlopen_result *memo_dr;
	size_t memo_nmaps;
	struct nm_object *loaded;	/* NULL until asked */
	size_t nloaded;
	struct strmap copies_of;	/* library name -> struct copies */
};

/* ---- C++ and version explanations (cxx/) ---- */

static bool usable_elf(const struct object *o)
{
	return o && o->kind == OBJ_ELF && o->elf_ok;
}

static struct cxx_index *index_of(struct conv *c)
{
	if (!c->ix) {
		if (c->q->cxx) {
			c->ix = c->q->cxx;
		} else {
			c->ix = arena_alloc(&c->s->arena, sizeof *c->ix);
			cxx_index_init(c->ix, &c->s->arena);
		}
	}
	return c->ix;
}

/* The installed torch: the caller's, else the one whose libraries are in
 * the graph, else a torch/ package in a directory above the target. */
static const struct torch_identity *installed_torch(struct conv *c)
{
	if (c->torch_done)
		return c->torch;
	c->torch_done = true;
	if (c->q->torch) {
		c->torch = c->q->torch;
		return c->torch;
	}
	struct arena *a = &c->s->arena;
	const char *dir = NULL;
	const struct process *p = &c->r->proc;
	for (size_t i = 0; c->dr && i < c->dr->nsearchlist && !dir; i++)
		dir = torch_dir_of(a, c->dr->searchlist[i]->path);
	for (size_t i = 0; i < p->maps.n && !dir; i++)
		dir = torch_dir_of(a, ((const struct lmap *)p->maps.item[i])->path);
	if (!dir && c->q->target && strchr(c->q->target, '/')) {
		char abs[4096];
		fs_absolute(&c->s->fs, c->q->target, abs, sizeof abs);
		dir = torch_dir_of(a, abs);
		if (!dir)
			dir = torch_dir_near(a, &c->s->fs, abs, 5);
	}
	if (!dir)
		return NULL;
	char norm[4096];
	path_normalize(dir, norm, sizeof norm);
	/* what the folder's files say: the same for every target that maps it,
	 * kept in the index the calls share (a check identified libtorch's ABI
	 * once per failing module) */
	struct cxx_index *ix = index_of(c);
	const void *known = strmap_get(&ix->torch_ids, norm);
	if (known) {
		c->torch = known == MAP_NO ? NULL : known;
		return c->torch;
	}
	a = ix->a;
	dir = arena_strdup(a, norm);
	struct torch_identity *t = arena_alloc(a, sizeof *t);
	struct diag d;
	diag_clear(&d);
	if (torch_identify(a, &c->s->objs, dir, t, &d) == ST_OK)
		c->torch = t;
	strmap_put(a, &ix->torch_ids, dir, c->torch ? (void *)c->torch : MAP_NO);
	return c->torch;
}

static bool in_list(struct lmap *const *v, size_t n, const struct lmap *m)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == m)
			return true;
	return false;
}

/* Every object of the process and of this dlopen, with whether a symbol
 * lookup from the dlopen's objects searches it (global scope + its list). */
static size_t find_loaded_objects(struct conv *c, struct nm_object **out)
{
	const struct process *p = &c->r->proc;
	size_t cap = p->maps.n + (c->dr ? c->dr->nsearchlist : 0);
	struct nm_object *v = arena_calloc(&c->s->arena, cap ? cap : 1, sizeof *v);
	size_t n = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		size_t m = pass == 0 ? p->maps.n : (c->dr ? c->dr->nsearchlist : 0);
		for (size_t i = 0; i < m; i++) {
			const struct lmap *l = pass == 0 ? p->maps.item[i] : c->dr->searchlist[i];
			if (!usable_elf(l->obj))
				continue;
			bool dup = false;
			for (size_t k = 0; k < n && !dup; k++)
				dup = v[k].obj == l->obj;
			if (dup)
				continue;
			v[n].obj = l->obj;
			v[n].path = l->path;
			v[n].loaded = true;
			v[n].in_scope = in_list((struct lmap *const *)p->global.item, p->global.n, l) ||
					(c->dr && in_list(c->dr->searchlist, c->dr->nsearchlist, l));
			n++;
		}
	}
	*out = v;
	return n;
}

/* Forgets what was kept for another dlopen or process state. */
static void memo_fresh(struct conv *c)
{
	if (c->memo_dr == c->dr && c->memo_nmaps == c->r->proc.maps.n)
		return;
	c->memo_dr = c->dr;
	c->memo_nmaps = c->r->proc.maps.n;
	c->loaded = NULL;
	memset(&c->copies_of, 0, sizeof c->copies_of);
}

/* find_loaded_objects(), once per dlopen (a torch process has hundreds). */
static size_t loaded_objects(struct conv *c, struct nm_object **out)
{
	memo_fresh(c);
	if (!c->loaded)
		c->nloaded = find_loaded_objects(c, &c->loaded);
	*out = c->loaded;
	return c->nloaded;
}

static const struct lmap *loaded_map_of(struct conv *c, const struct object *o)
{
	const struct process *p = &c->r->proc;
	for (size_t i = 0; c->dr && i < c->dr->nsearchlist; i++)
		if (c->dr->searchlist[i]->obj == o)
			return c->dr->searchlist[i];
	for (size_t i = 0; i < p->maps.n; i++)
		if (((const struct lmap *)p->maps.item[i])->obj == o)
			return p->maps.item[i];
	return NULL;
}

/* A candidate copy at path: an ELF object for the process's machine and
 * class that is not loaded already and not seen yet. */
static void consider_copy(struct conv *c, const char *path, const char *name, struct nm_object *v,
			  size_t *n, const struct nm_object *loaded, size_t nloaded)
{
	if (*n >= WHY_MAX_COPIES)
		return;
	struct fs_stat st;
	fs_stat(&c->s->fs, path, &st);
	if (st.kind != FS_REGULAR)
		return;
	struct diag d;
	diag_clear(&d);
	struct object *o = objcache_get(&c->s->objs, path, &d);
	if (!usable_elf(o) || o->elf.machine != c->r->proc.facts.machine || o->elf.is64 != c->r->proc.facts.is64)
		return;
	if (!(o->elf.soname ? str_eq(o->elf.soname, name) : str_eq(path_basename(path), name)))
		return;
	for (size_t i = 0; i < nloaded; i++)
		if (loaded[i].obj == o)
			return;
	for (size_t i = 0; i < *n; i++)
		if (v[i].obj == o)
			return;
	char norm[4096];
	path_normalize(path, norm, sizeof norm);
	v[*n].obj = o;
	v[*n].path = arena_strdup(&c->s->arena, norm);
	v[*n].loaded = false;
	v[*n].in_scope = false;
	(*n)++;
}

static void copy_in_dir(struct conv *c, const char *dir, const char *name, struct nm_object *v, size_t *n,
			const struct nm_object *loaded, size_t nloaded)
{
	char path[4096];
	path_join(dir, name, path, sizeof path);
	consider_copy(c, path, name, v, n, loaded, nloaded);
}

/*
 * Other copies of the library named name on this machine: in the
 * directories of every loaded object, on LD_LIBRARY_PATH, in ld.so.cache,
 * in the default directories, and the caller's extra paths.
 */
static size_t find_other_copies(struct conv *c, const char *name, struct nm_object **out)
{
	struct nm_object *loaded;
	size_t nloaded = loaded_objects(c, &loaded);
	struct nm_object *v = arena_calloc(&c->s->arena, WHY_MAX_COPIES, sizeof *v);
	size_t n = 0;
	char dir[4096];
	for (size_t i = 0; i < nloaded; i++) {
		path_dirname(loaded[i].path, dir, sizeof dir);
		copy_in_dir(c, dir, name, v, &n, loaded, nloaded);
	}
	const struct process *p = &c->r->proc;
	for (size_t i = 0; p->llp && p->llp[i]; i++)
		copy_in_dir(c, p->llp[i], name, v, &n, loaded, nloaded);
	if (p->facts.has_cache) {
		const char *cached = ldcache_lookup(&p->facts.cache, &p->facts.cache_query, name);
		if (cached)
			consider_copy(c, cached, name, v, &n, loaded, nloaded);
	}
	for (size_t i = 0; i < p->facts.nsystem_dirs; i++)
		copy_in_dir(c, p->facts.system_dirs[i], name, v, &n, loaded, nloaded);
	for (size_t i = 0; i < c->q->nextra_providers; i++)
		consider_copy(c, c->q->extra_providers[i], name, v, &n, loaded, nloaded);
	*out = v;
	return n;
}

struct copies {
	struct nm_object *v;
	size_t n;
};

/* find_other_copies(), once per library name and dlopen. */
static size_t other_copies(struct conv *c, const char *name, struct nm_object **out)
{
	memo_fresh(c);
	struct copies *known = strmap_get(&c->copies_of, name);
	if (!known) {
		known = arena_alloc(&c->s->arena, sizeof *known);
		known->n = find_other_copies(c, name, &known->v);
		strmap_put(&c->s->arena, &c->copies_of, arena_strdup(&c->s->arena, name), known);
	}
	*out = known->v;
	return known->n;
}

/* Whether path is in a directory of the process's LD_LIBRARY_PATH. */
static bool on_ld_library_path(const struct conv *c, const char *path)
{
	char dir[4096], joined[4096], want[4096];
	path_dirname(path, dir, sizeof dir);
	const struct process *p = &c->r->proc;
	for (size_t i = 0; p->llp && p->llp[i]; i++) {
		path_join(p->llp[i], "x", joined, sizeof joined);	/* "a//" and "a/" as "a" */
		path_dirname(joined, want, sizeof want);
		if (str_eq(dir, want))
			return true;
	}
	return false;
}

static const char *soname_of(const struct nm_object *o)
{
	return o->obj->elf.soname ? o->obj->elf.soname : path_basename(o->path);
}

/*
 * How the loader came to use m, and what would make it use the copy at
 * good instead, by glibc's search order: DT_RPATH (of the requester and
 * its loaders, and the executable's) comes before LD_LIBRARY_PATH, which
 * comes before DT_RUNPATH, ld.so.cache and the default directories; an
 * object already loaded is reused for every later request by its SONAME,
 * so a library preloaded with LD_PRELOAD wins over all of them.
 */
static const char *pick_advice(struct conv *c, const struct lmap *m, const char *good, const char **fix)
{
	struct arena *a = &c->s->arena;
	bool good_given = good != NULL;
	if (!good)
		good = "<a copy that has it>";
	char gdir[4096], mdir[4096];
	path_dirname(good, gdir, sizeof gdir);
	path_dirname(m->path, mdir, sizeof mdir);
	const char *start = m->initial
		? arena_printf(a, "it was loaded when the process started (a dependency of %s), and every later "
				  "request for it reuses it; ", c->q->exe ? path_basename(c->q->exe) : "the executable")
		: "";
	const char *owner = m->via ? path_basename(m->via->path) : "its requester";
	const char *rpath = m->via && usable_elf(m->via->obj) && m->via->obj->elf.rpath ? m->via->obj->elf.rpath : NULL;
	switch (m->how) {
	case FOUND_RPATH:
		*fix = arena_printf(a, "start the process with LD_PRELOAD=%s, or replace %s with a copy that has it",
				    good, m->path);
		return arena_printf(a, "%sthe loader finds %s through the RPATH of %s%s%s%s, which is searched before "
				       "LD_LIBRARY_PATH: setting LD_LIBRARY_PATH cannot make it pick %s; LD_PRELOAD "
				       "can (a preloaded library is loaded first and then matched by its SONAME)",
				    start, m->path, owner, rpath ? " (" : "", rpath ? rpath : "", rpath ? ")" : "",
				    good_given ? good : "another copy");
	case FOUND_LD_LIBRARY_PATH:
		*fix = arena_printf(a, "put %s before %s in LD_LIBRARY_PATH", gdir, mdir);
		return arena_printf(a, "%sthe loader finds %s through LD_LIBRARY_PATH", start, m->path);
	case FOUND_RUNPATH:
		*fix = arena_printf(a, "start the process with LD_LIBRARY_PATH=%s (searched before the RUNPATH of %s), "
				       "or replace %s with a copy that has it",
				    gdir, owner, m->path);
		return arena_printf(a, "%sthe loader finds %s through the RUNPATH of %s, which is searched after "
				       "LD_LIBRARY_PATH", start, m->path, owner);
	case FOUND_CACHE:
	case FOUND_DEFAULT:
		*fix = arena_printf(a, "start the process with LD_LIBRARY_PATH=%s, or replace %s with a copy that has it",
				    gdir, m->path);
		return arena_printf(a, "%sthe loader finds %s through %s, which is searched after LD_LIBRARY_PATH",
				    start, m->path, m->how == FOUND_CACHE ? "ld.so.cache" : "the default directories");
	case FOUND_PATH:
		*fix = arena_printf(a, "load %s by its path before %s is loaded, or replace %s with a copy that has it",
				    good, m->path, m->path);
		return arena_printf(a, "%s%s is loaded by its path (a dlopen with a slash, or a preload)", start,
				    m->path);
	default:
		*fix = arena_printf(a, "start the process with LD_PRELOAD=%s, or replace %s with a copy that has it",
				    good, m->path);
		return arena_printf(a, "%sthe loader uses %s (%s)", start, m->path, found_how_name(m->how));
	}
}

/* Which torch releases the requester binds against (the torch ABI index),
 * computed once per requester; the sentence goes on its first finding, the
 * fix on each. */
static void torch_releases_for(struct conv *c, const struct failure *fl, const struct torch_identity *t,
			       struct cxx_explain_ctx *ctx)
{
	struct scan *s = c->s;
	struct arena *a = &s->arena;
	const struct object *o = fl->requester ? fl->requester->obj : NULL;
	if (!usable_elf(o))
		return;
	if (c->tc_obj != o) {
		c->tc_obj = o;
		c->tc_releases = c->tc_fix = NULL;
		c->tc_json = NULL;
		struct diag d = { 0 };
		const struct torchabi *ix = torchabi_builtin(a, &s->torchabi, &d);
		if (!ix)
			return;
		struct tc_report r;
		tc_report_init(&r, ix, t ? t->v.version : NULL);
		tc_add_object(s, &r, fl->requester_path, o, cxx_package_of(a, fl->requester_path), NULL, NULL);
		tc_finish(&r);
		if (!r.npkg)
			return;
		const struct tc_package *p = r.pkg[0];
		c->tc_releases = tc_summary(a, &r, p);
		c->tc_fix = tc_fix(a, &r, p);
		struct value *j = val_obj(a);
		val_set(a, j, "releases", tc_set_value(a, ix, &p->ok));
		val_set_int(a, j, "torch_symbols", (int64_t)p->nneed);
		val_set_bool(a, j, "stable_abi_only", p->stable_only);
		val_set_bool(a, j, "installed_ok", p->installed_ok);
		val_set(a, j, "fix", val_str(a, c->tc_fix));
		c->tc_json = j;
		ctx->torch_releases = c->tc_releases;
	}
	ctx->torch_fix = c->tc_fix;
	ctx->torch_compat = c->tc_json;
}

/* The object that needs fl's symbol, for the near-miss search. */
static const struct object *requester_of(const struct failure *fl)
{
	return fl->requester ? fl->requester->obj : NULL;
}

static void explain_undefined(struct conv *c, const struct failure *fl, struct finding *f)
{
	struct scan *s = c->s;
	if (c->nearmiss_done >= WHY_MAX_NEARMISS) {
		if (c->nearmiss_done++ == WHY_MAX_NEARMISS)
			finding_line(&s->findings, f, "(near-miss analysis stops after %d undefined symbols)",
				     WHY_MAX_NEARMISS);
		return;
	}
	c->nearmiss_done++;
	struct cxx_index *ix = index_of(c);
	struct nm_object *objs;
	size_t n = loaded_objects(c, &objs);
	struct nm_result res;
	nm_search(ix, fl->name, fl->version, fl->version_file, requester_of(fl), objs, n, &res);
	const char *libname = res.version_file ? res.version_file : res.expected ? soname_of(res.expected) : NULL;
	if (libname) {
		struct nm_object *copies;
		size_t nc = other_copies(c, libname, &copies);
		if (nc)
			nm_search_more(ix, copies, nc, &res);
	}
	if (fl->version && res.expected) {
		/* a versioned reference: what the provider it names does define */
		const char **defs;
		size_t nd = ver_defined(&s->arena, res.expected->obj, fl->version, &defs);
		struct value *arr = val_arr(&s->arena);
		for (size_t i = 0; i < nd; i++)
			val_push(&s->arena, arr, val_str_ref(&s->arena, defs[i]));
		val_set(&s->arena, f->fields, "provider_versions", arr);
		const char *newest = ver_newest_like(res.expected->obj, fl->version);
		finding_line(&s->findings, f, "%s %s version %s%s%s", path_basename(res.expected->path),
			     ver_defines(res.expected->obj, fl->version) ? "defines" : "lacks", fl->version,
			     newest ? "; its newest of that family is " : "", newest ? newest : "");
	}
	const struct torch_identity *t = installed_torch(c);
	struct cxx_explain_ctx ctx = { .requester = fl->requester_path, .torch_version = t ? t->v.version : NULL,
				       .torch_cxx11_abi = t ? t->cxx11_abi : -1 };
	if (res.cause == NM_CAUSE_OTHER_COPY && res.expected) {
		const struct lmap *m = loaded_map_of(c, res.expected->obj);
		const struct nm_near *b = nm_best(&res);
		const char *fix = NULL;
		if (m && b) {
			const char *how = pick_advice(c, m, b->where->path, &fix);
			finding_line(&s->findings, f, "%s", how);
			ctx.fix_override = fix;
		}
	}
	torch_releases_for(c, fl, t, &ctx);
	cxx_explain_undefined(&s->findings, f, &res, &ctx);
}

static const char *release_text(struct arena *a, const char *version, bool *certain)
{
	struct ver_release rel;
	if (!ver_release_of(version, &rel))
		return NULL;
	if (certain)
		*certain = rel.certain;
	return arena_printf(a, "%s%s%s%s%s", rel.release, rel.shipped_by ? " (" : "",
			    rel.shipped_by ? rel.shipped_by : "", rel.shipped_by ? ")" : "",
			    rel.certain ? "" : " [release not confirmed]");
}

static void explain_version(struct conv *c, const struct failure *fl, struct finding *f)
{
	struct scan *s = c->s;
	struct arena *a = &s->arena;
	struct findings *L = &s->findings;
	const struct lmap *prov = fl->provider;
	const struct object *po = prov->obj;
	const char **defs;
	size_t nd = ver_defined(a, po, fl->version, &defs);
	struct value *arr = val_arr(a);
	for (size_t i = 0; i < nd; i++)
		val_push(a, arr, val_str_ref(a, defs[i]));
	val_set(a, f->fields, "provider_versions", arr);
	char list[1024];
	size_t o = 0;
	list[0] = '\0';
	for (size_t i = 0; i < nd && i < 8; i++) {
		int w = snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", defs[i]);
		if (w < 0 || (size_t)w >= sizeof list - o)
			break;
		o += (size_t)w;
	}
	finding_line(L, f, "it defines, newest first: %s%s", nd ? list : "no version definitions",
		     nd > 8 ? ", ..." : "");

	bool certain = true;
	const char *need_rel = release_text(a, fl->version, &certain);
	const char *newest = ver_newest_like(po, fl->version);
	const char *have_rel = newest ? release_text(a, newest, NULL) : NULL;
	val_set(a, f->fields, "required_release", val_str(a, need_rel));
	val_set(a, f->fields, "provider_newest", val_str(a, newest));
	val_set(a, f->fields, "provider_newest_release", val_str(a, have_rel));
	struct ver_name vn;
	const char *family = ver_parse(fl->version, &vn) ? arena_strdup(a, vn.family) : fl->version;
	if (need_rel && newest)
		finding_line(L, f, "%s came with %s; the newest %s of this copy, %s, came with %s", fl->version, need_rel,
			     family, newest, have_rel ? have_rel : "an unknown release");
	else if (need_rel)
		finding_line(L, f, "%s came with %s; this copy has no %s version at all", fl->version, need_rel, family);

	struct nm_object *copies;
	size_t nc = other_copies(c, fl->name, &copies);
	struct value *cv = val_arr(a);
	const char *good = NULL;
	bool good_on_llp = false;
	for (size_t i = 0; i < nc; i++) {
		bool has = ver_defines(copies[i].obj, fl->version);
		const char *cn = ver_newest_like(copies[i].obj, fl->version);
		const char *cr = cn ? release_text(a, cn, NULL) : NULL;
		struct value *ov = val_obj(a);
		val_set_str(a, ov, "path", copies[i].path);
		val_set_bool(a, ov, "has_version", has);
		val_set(a, ov, "newest", val_str(a, cn));
		val_push(a, cv, ov);
		finding_line(L, f, "another copy: %s %s (its newest %s: %s%s%s)", copies[i].path,
			     has ? "has it" : "lacks it too", family, cn ? cn : "none", cr ? ", " : "", cr ? cr : "");
		/* the copy the process's LD_LIBRARY_PATH names first: the one the user
		 * meant, whom the advice then tells why it was not taken (a system
		 * copy may have the version too: Ubuntu 24.04's libstdc++ of GCC 14) */
		if (has && (!good || (!good_on_llp && on_ld_library_path(c, copies[i].path)))) {
			good_on_llp = on_ld_library_path(c, copies[i].path);
			good = copies[i].path;
		}
	}
	val_set(a, f->fields, "other_copies", cv);
	val_set_str(a, f->fields, "found_by", found_how_name(prov->how));
	const char *fix = NULL;
	const char *how = pick_advice(c, prov, good, &fix);
	finding_line(L, f, "%s", how);
	if (good) {
		/* pick_advice's fix names the copy that has it */
	} else if (str_eq(family, "GLIBC")) {
		fix = arena_printf(a, "install a build of %s made for glibc %d.%d or older (this system's), or run it on "
				      "a system with %s or later",
				   cxx_package_of(a, fl->requester_path), c->r->proc.facts.glibc_major,
				   c->r->proc.facts.glibc_minor, need_rel ? need_rel : fl->version);
	} else if (need_rel && (str_eq(family, "GLIBCXX") || str_eq(family, "CXXABI"))) {
		const char *rel = need_rel;
		size_t cut = 4 + strcspn(rel + 4, " [(");	/* "GCC 13.2" of "GCC 13.2 [...]" */
		fix = arena_printf(a, "put a libstdc++ from %.*s or later first: replace %s with it, or start the process "
				      "with LD_PRELOAD pointing at it",
				   (int)cut, rel, prov->path);
	} else {
		fix = arena_printf(a, "install the %s that %s was built against (one that defines %s)", fl->name,
				   cxx_package_of(a, fl->requester_path), fl->version);
	}
	if (fix)
		finding_fix(L, f, "%s", fix);
}

static struct finding *convert(struct conv *c, const struct failure *fl, bool first)
{
	struct scan *s = c->s;
	struct arena *a = &s->arena;
	struct findings *L = &s->findings;
	const char *req = fl->requester_path;
	struct finding *f = NULL;
	enum severity sev = fl->loads_anyway ? SEV_WARNING : SEV_ERROR;
	switch (fl->kind) {
	case FAIL_NOT_FOUND:
	case FAIL_WRONG_CLASS: {
		bool root = fl->requester == NULL;
		struct diag d;
		diag_clear(&d);
		struct object *o = root && fl->path ? objcache_get(&s->objs, fl->path, &d) : NULL;
		if (root && o && o->kind == OBJ_ELF &&
		    (o->elf.machine != c->r->proc.facts.machine || o->elf.is64 != c->r->proc.facts.is64)) {
			f = finding_add(L, "wrong-elf", SEV_ERROR, fl->path);
			finding_title(L, f, "%s is %s %s, the process is %s %s", fl->path,
				      elf_class_name(o->elf.is64), elf_machine_name(o->elf.machine),
				      elf_class_name(c->r->proc.facts.is64),
				      elf_machine_name(c->r->proc.facts.machine));
			val_set_str(a, f->fields, "path", fl->path);
			val_set_str(a, f->fields, "class", elf_class_name(o->elf.is64));
			val_set_str(a, f->fields, "machine", elf_machine_name(o->elf.machine));
			val_set_str(a, f->fields, "process_class", elf_class_name(c->r->proc.facts.is64));
			val_set_str(a, f->fields, "process_machine", elf_machine_name(c->r->proc.facts.machine));
			if (o->elf.machine != c->r->proc.facts.machine)
				finding_line(L, f, "glibc reports a file for another machine as \"No such file "
						   "or directory\"; the file is there, it is the wrong build");
			finding_fix(L, f, "install the %s build of this package", elf_machine_name(c->r->proc.facts.machine));
			break;
		}
		if (fl->kind == FAIL_WRONG_CLASS) {
			f = finding_add(L, "wrong-elf", sev, req);
			finding_title(L, f, "only a %s copy of %s was found (needed by %s)",
				      c->r->proc.facts.is64 ? "32-bit" : "64-bit", fl->name, short_name(req));
			val_set_str(a, f->fields, "library", fl->name);
			val_set(a, f->fields, "searched", searched_value(a, fl->trace));
			explain_search(L, f, fl->trace);
			explain_skipped_copies(L, f, fl->trace, &s->objs);
			finding_fix(L, f, "install the %s build of %s", elf_class_name(c->r->proc.facts.is64), fl->name);
			break;
		}
		f = finding_add(L, "library-not-found", sev, req ? req : fl->path ? fl->path : fl->name);
		if (root)
			finding_title(L, f, "%s does not exist", fl->name);
		else
			finding_title(L, f, "%s not found (needed by %s)", fl->name, short_name(req));
		val_set_str(a, f->fields, "library", fl->name);
		val_set(a, f->fields, "searched", searched_value(a, fl->trace));
		explain_search(L, f, fl->trace);
		explain_skipped_copies(L, f, fl->trace, &s->objs);
		if (!root)
			finding_fix(L, f, "make %s findable for %s: install what provides it, or add its "
					  "directory to the RUNPATH of %s or to LD_LIBRARY_PATH",
				    fl->name, short_name(req), short_name(req));
		break;
	}
	case FAIL_INVALID:
	case FAIL_WOULD_BLOCK: {
		bool block = fl->kind == FAIL_WOULD_BLOCK;
		f = finding_add(L, block ? "loader-would-hang" : "invalid-elf", sev, req ? req : fl->path);
		struct diag d;
		diag_clear(&d);
		struct object *o = fl->path ? objcache_get(&s->objs, fl->path, &d) : NULL;
		const char *what = block ? "a FIFO" : (o && o->kind == OBJ_LDSCRIPT) ? "a GNU ld script, not a shared object"
											: NULL;
		const char *reason = fl->dlerror ? strrchr(fl->dlerror, ':') : NULL;
		(void)reason;
		/* a path asked for itself (an extension module Python imports): no search to stop */
		bool by_path = fl->name && strchr(fl->name, '/') && !fl->trace;
		const char *why = what ? what : (fl->dlerror ? fl->dlerror + strlen(fl->path) + 2 : "invalid");
		if (by_path)
			finding_title(L, f, "%s is no loadable ELF object: %s", fl->path, why);
		else
			finding_title(L, f, "%s stops the search for %s: %s", fl->path, fl->name, why);
		val_set_str(a, f->fields, "path", fl->path);
		val_set_str(a, f->fields, "library", fl->name);
		val_set_str(a, f->fields, "reason", fl->dlerror ? fl->dlerror + MIN(strlen(fl->dlerror), strlen(fl->path) + 2) : NULL);
		if (fl->trace) {
			val_set(a, f->fields, "searched", searched_value(a, fl->trace));
			finding_line(L, f, "the loader stops at the first file that is there but is not a "
					   "loadable ELF object; later directories are never tried");
			explain_search(L, f, fl->trace);
		}
		if (block)
			finding_line(L, f, "the real loader would block forever reading it; abiscope did not read it");
		if (by_path && !block)
			finding_fix(L, f, "the file is damaged (emptied, text, or a link stored as a file: an "
					  "interrupted or broken install?): reinstall the package it belongs to");
		else
			finding_fix(L, f, "remove or rename %s, or put the directory of the real %s before it",
				    fl->path, fl->name);
		break;
	}
	case FAIL_CANNOT_LOAD:
		f = finding_add(L, "cannot-load", sev, fl->path);
		finding_title(L, f, "%s", fl->dlerror);
		val_set_str(a, f->fields, "path", fl->path);
		val_set_str(a, f->fields, "reason", strchr(fl->dlerror, ':') ? strchr(fl->dlerror, ':') + 2 : fl->dlerror);
		break;
	case FAIL_EXECSTACK:
		f = finding_add(L, "executable-stack", sev, fl->path);
		if (fl->loads_anyway) {
			f->severity = SEV_WARNING;
			finding_title(L, f, "%s asks for an executable stack", fl->path);
			finding_line(L, f, "glibc %d.%d makes the stack executable for it; glibc 2.41 and "
					   "later refuse to dlopen it",
				     c->r->proc.facts.glibc_major, c->r->proc.facts.glibc_minor);
		} else {
			finding_title(L, f, "%s", fl->dlerror);
		}
		val_set_str(a, f->fields, "path", fl->path);
		finding_fix(L, f, "rebuild it with -Wl,-z,noexecstack (or mark it with execstack -c)");
		break;
	case FAIL_STATIC_TLS:
		f = finding_add(L, "static-tls-exhausted", sev, fl->path);
		finding_title(L, f, "%s", fl->dlerror);
		if (fl->detail)
			finding_line(L, f, "%s", fl->detail);
		finding_line(L, f, "it uses initial-exec TLS; dlopen()ed objects share what is left of the "
				   "static TLS block, about 1664 bytes by default (the surplus: "
				   "glibc.rtld.optional_static_tls and glibc.rtld.nns)");
		finding_fix(L, f, "load it at process start (LD_PRELOAD), or raise "
				  "GLIBC_TUNABLES=glibc.rtld.optional_static_tls");
		val_set_str(a, f->fields, "path", fl->path);
		break;
	case FAIL_VERSION:
	case FAIL_WEAK_VERSION: {
		bool weak = fl->kind == FAIL_WEAK_VERSION;
		f = finding_add(L, weak ? "weak-version-not-found" : "version-not-found",
				weak ? SEV_NOTE : sev, req);
		finding_title(L, f, "%s lacks version %s (required by %s)", fl->provider->path, fl->version,
			      short_name(req));
		val_set_str(a, f->fields, "library", fl->provider->path);
		val_set_str(a, f->fields, "version", fl->version);
		val_set_str(a, f->fields, "required_by", req);
		finding_line(L, f, "the loader uses %s (%s) for %s", fl->provider->path,
			     found_how_name(fl->provider->how), fl->name);
		explain_version(c, fl, f);
		break;
	}
	case FAIL_NO_VERSION_INFO:
		f = finding_add(L, "no-version-information", fl->loads_anyway ? SEV_NOTE : SEV_ERROR, req);
		finding_title(L, f, "%s has no version information (required by %s)",
			      fl->provider ? fl->provider->path : fl->name, short_name(req));
		if (!fl->loads_anyway)
			finding_line(L, f, "binding %s@%s then hits an assertion in glibc %d.%d's ld.so "
					   "and the process aborts (fixed in glibc 2.41)",
				     fl->name, fl->version, c->r->proc.facts.glibc_major,
				     c->r->proc.facts.glibc_minor);
		val_set_str(a, f->fields, "library", fl->provider ? fl->provider->path : fl->name);
		break;
	case FAIL_CORRUPT:
		f = finding_add(L, "corrupt-elf", sev, fl->path);
		if (!fl->dies)
			finding_title(L, f, "%s", fl->dlerror);
		else if (fl->dlerror)
			finding_title(L, f, "%s: a corrupt table makes ld.so's assertion fail: the process aborts",
				      fl->path);
		else
			finding_title(L, f, "%s: a corrupt table makes the loader read or write outside it: the "
					    "process dies", fl->path);
		finding_line(L, f, "%s", fl->detail);
		if (fl->dies && fl->dlerror)
			finding_line(L, f, "ld.so prints: %s", fl->dlerror);
		if (fl->dies && !fl->dlerror) {
			/* what lies at that address in the real process is not known */
			f->guess = true;
			finding_line(L, f, "what lies at that address in the real process is not this object: "
					   "abiscope expects unmapped memory, hence SIGSEGV; dlerror() is never reached");
		}
		val_set_str(a, f->fields, "path", fl->path);
		val_set_str(a, f->fields, "reason", fl->detail);
		val_set(a, f->fields, "process_dies", val_bool(a, fl->dies));
		finding_fix(L, f, "the file is damaged (readelf -d, -V and -r show its tables): reinstall or "
				  "rebuild %s", short_name(fl->path));
		break;
	case FAIL_UNDEFINED:
	case FAIL_LAZY_UNDEFINED: {
		bool lazy = fl->kind == FAIL_LAZY_UNDEFINED;
		f = finding_add(L, lazy ? "lazy-undefined-symbol" : "undefined-symbol", sev, req);
		const char *dem = why_demangled(s, fl->name);
		if (fl->version)
			finding_title(L, f, "undefined symbol %s@%s (needed by %s)", dem ? dem : fl->name,
				      fl->version, short_name(req));
		else
			finding_title(L, f, "undefined symbol %s (needed by %s)", dem ? dem : fl->name,
				      short_name(req));
		val_set_str(a, f->fields, "symbol", fl->name);
		val_set(a, f->fields, "version", val_str(a, fl->version));
		val_set(a, f->fields, "demangled", val_str(a, dem));
		if (dem)
			finding_line(L, f, "mangled: %s", fl->name);
		if (fl->version_file)
			finding_line(L, f, "expected from %s, version %s", fl->version_file, fl->version);
		if (lazy)
			finding_line(L, f, "bound lazily through the PLT: the load succeeds, the first call "
					   "aborts the process with \"symbol lookup error\"");
		else if (fl->ctor_call) {
			finding_line(L, f, "bound lazily through the PLT, and a constructor of %s calls it (a call "
					   "instruction in its code): the lookup fails as the constructors run, where "
					   "dlopen catches nothing: the process ends (exit status 127)", short_name(req));
			finding_line(L, f, "ld.so prints: %s", fl->dlerror);
			f->guess = true;	/* that the call runs on the constructor's every path */
			val_set(a, f->fields, "process_dies", val_bool(a, true));
		} else
			finding_line(L, f, "no object in the global scope or in the search list of %s "
					   "defines it", short_name(c->r->target.root ? c->r->target.root->path : req));
		if (fl->cause < 0)
			explain_undefined(c, fl, f);
		break;
	}
	}
	if (!f)
		return NULL;
	if (c->context)
		finding_line(L, f, "%s", c->context);
	f->first_error = first;
	if (fl->dlerror && !fl->loads_anyway)
		val_set_str(a, f->fields, "dlerror", fl->dlerror);
	return f;
}

/*
 * A guessed link from an undefined symbol to a missing library (the
 * requester needed it, or it is the only one missing) is weighed against
 * the evidence: a near miss in a loaded library (the same function with
 * another signature, the exact symbol out of scope or at another version)
 * is the symbol's own root cause, so the link is dropped; another copy of
 * the missing library that exports the symbol confirms it.
 */
static void weigh_guess(struct conv *c, struct failure *fl)
{
	if (fl->cause < 0 || !fl->cause_guess || fl->kind != FAIL_UNDEFINED || failure_api_owner(fl->name))
		return;
	struct cxx_index *ix = index_of(c);
	struct nm_object *objs;
	size_t n = loaded_objects(c, &objs);
	struct nm_result res;
	nm_search(ix, fl->name, fl->version, fl->version_file, requester_of(fl), objs, n, &res);
	const struct nm_near *b = nm_best(&res);
	if (b && b->where->loaded && b->cause != NM_CAUSE_OTHER_COPY && b->cause != NM_CAUSE_UNKNOWN &&
	    b->cause != NM_CAUSE_REMOVED) {
		fl->cause = -1;
		fl->cause_guess = false;
		fl->cause_basis = NULL;
		return;
	}
	const char *lib = c->dr->fail[fl->cause].name;
	struct nm_object *copies;
	size_t nc = lib ? other_copies(c, lib, &copies) : 0;
	if (!nc)
		return;
	struct nm_result more;
	nm_search(ix, fl->name, fl->version, fl->version_file, requester_of(fl), copies, nc, &more);
	const struct nm_near *m = nm_best(&more);
	if (m && m->cause == NM_CAUSE_OTHER_COPY)
		fl->cause_basis = arena_printf(&c->s->arena, "another copy of %s, %s, exports it", lib, m->where->path);
}

static void convert_result(struct conv *c, const struct dlopen_result *dr)
{
	c->dr = dr;
	int *idx = arena_calloc(&c->s->arena, dr->nfail ? dr->nfail : 1, sizeof *idx);
	struct failure *fails = arena_calloc(&c->s->arena, dr->nfail ? dr->nfail : 1, sizeof *fails);
	for (size_t i = 0; i < dr->nfail; i++) {
		fails[i] = dr->fail[i];
		weigh_guess(c, &fails[i]);
	}
	/* Root causes first: failures without a cause, then their consequences. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < dr->nfail; i++) {
			const struct failure *fl = &fails[i];
			if ((pass == 0) != (fl->cause < 0))
				continue;
			bool first = c->is_target && !dr->ok && i == dr->first;
			struct finding *f = convert(c, fl, first);
			idx[i] = f ? f->index : -1;
			if (f && fl->cause >= 0) {
				f->caused_by = idx[fl->cause];
				const struct failure *cause = &fails[fl->cause];
				finding_line(&c->s->findings, f, "%s: %s %s%s%s%s",
					     fl->cause_guess ? "probably caused by" : "caused by",
					     failure_kind_id(cause->kind), cause->name ? cause->name : "",
					     fl->cause_basis ? " (" : "", fl->cause_basis ? fl->cause_basis : "",
					     fl->cause_basis ? ")" : "");
				val_set_bool(&c->s->arena, f->fields, "cause_certain", !fl->cause_guess);
				val_set(&c->s->arena, f->fields, "cause_basis", val_str(&c->s->arena, fl->cause_basis));
				/* the link is the finding's conclusion: a guessed one makes it a guess */
				f->guess = fl->cause_guess;
			}
		}
}

/* One finding for a start-up the loader ends: its own text, and each failure. */
static void process_cannot_start(struct scan *s, const struct why_request *q, struct why_result *r)
{
	struct findings *L = &s->findings;
	struct arena *a = &s->arena;
	const struct process *p = &r->proc;
	struct finding *f = finding_add(L, "process-cannot-start", SEV_ERROR, q->exe);
	const char *first = p->startup_error;
	size_t cut = strcspn(first, "\n");
	finding_title(L, f, "the process %s cannot start: %.*s", q->exe, (int)cut, first);
	finding_line(L, f, "the loader prints this and exits with status %d before main() runs; "
			   "no dlopen() happens", p->startup_exit);
	for (size_t i = 0; i < p->nstartup_fail; i++) {
		const struct failure *fl = &p->startup_fail[i];
		if (!fl->loads_anyway && fl->dlerror && (fl->kind == FAIL_NOT_FOUND || fl->kind == FAIL_VERSION))
			finding_line(L, f, "%s (found: %s)", fl->dlerror,
				     fl->provider ? found_how_name(fl->provider->how) : "not found");
	}
	val_set_str(a, f->fields, "dlerror", p->startup_error);
	val_set_int(a, f->fields, "exit_status", p->startup_exit);
	f->first_error = true;
	f->guess = false;
}

void why_findings(struct scan *s, const struct why_request *q, struct why_result *r)
{
	struct findings *L = &s->findings;
	struct arena *a = &s->arena;
	if (r->target_unreadable && r->target_skipped) {
		struct finding *f = finding_add(L, "unreadable", SEV_ERROR, q->target);
		finding_title(L, f, "cannot read %s: %s", q->target, r->unreadable_reason);
		val_set_str(a, f->fields, "path", q->target);
		val_set_str(a, f->fields, "reason", r->unreadable_reason);
	}
	struct conv c = { .s = s, .r = r, .q = q };
	if (r->process_cannot_start) {
		process_cannot_start(s, q, r);
		return;
	}
	for (size_t i = 0; i < r->npre; i++) {
		c.context = arena_printf(a, "while preloading %s", r->pre[i].path);
		convert_result(&c, &r->pre[i].r);
	}
	if (r->from_loaded) {
		c.context = arena_printf(a, "while loading %s, the caller of dlopen", r->from.path);
		c.is_target = !r->from.r.ok;
		convert_result(&c, &r->from.r);
	}
	c.context = NULL;
	c.is_target = true;
	if (!r->target_skipped)
		convert_result(&c, &r->target);
	if (r->target.noload_absent) {
		struct finding *f = finding_add(L, "not-loaded-noload", SEV_ERROR, q->target);
		finding_title(L, f, "%s is not loaded, and RTLD_NOLOAD does not load it", q->target);
		finding_line(L, f, "dlopen returns NULL and dlerror() returns NULL: no error is set");
		val_set_str(a, f->fields, "path", q->target);
		f->first_error = true;
	}
	(void)errno;
}

/* ---- who built what ---- */

static const char *compilers_text(struct arena *a, const struct cxx_identity *id)
{
	if (!id->ncompiler)
		return NULL;
	const char *t = id->compiler[0];
	for (size_t i = 1; i < id->ncompiler && i < 3; i++)
		t = arena_printf(a, "%s; %s", t, id->compiler[i]);
	return t;
}

static const char *torch_api_text(struct arena *a, const struct cxx_identity *id)
{
	switch (id->torch_api) {
	case TORCH_API_STABLE:
		return arena_printf(a, "uses only the LibTorch stable C ABI (%zu aoti_torch_*/torch_* import%s): it "
				       "survives torch upgrades", id->torch_stable_imports,
				    id->torch_stable_imports == 1 ? "" : "s");
	case TORCH_API_UNSTABLE:
		return arena_printf(a, "uses the LibTorch C++ API (%zu import%s, e.g. %s): it must be rebuilt for each "
				       "torch release", id->torch_cxx_imports, id->torch_cxx_imports == 1 ? "" : "s",
				    id->torch_cxx_example);
	case TORCH_API_MIXED:
		return arena_printf(a, "uses the LibTorch stable C ABI and the C++ API (%zu C++ imports, e.g. %s): the "
				       "C++ part ties it to one torch release", id->torch_cxx_imports, id->torch_cxx_example);
	case TORCH_API_NONE:
		break;
	}
	return NULL;
}

static struct value *target_json(struct arena *a, const char *path, const struct cxx_identity *id)
{
	struct value *o = val_obj(a);
	val_set_str(a, o, "path", path);
	struct value *comp = val_arr(a);
	for (size_t i = 0; i < id->ncompiler; i++)
		val_push(a, comp, val_str_ref(a, id->compiler[i]));
	val_set(a, o, "compilers", comp);
	val_set(a, o, "cxx11_abi", id->cxx11_abi == 0 || id->cxx11_abi == 1 ? val_int(a, id->cxx11_abi) : val_null(a));
	val_set(a, o, "cxx11_abi_example", val_str(a, id->abi_example));
	val_set_str(a, o, "torch_api", torch_api_name(id->torch_api));
	val_set_int(a, o, "torch_cxx_imports", (int64_t)id->torch_cxx_imports);
	val_set_int(a, o, "torch_stable_imports", (int64_t)id->torch_stable_imports);
	val_set(a, o, "cuda_runtime", val_str(a, id->cudart));
	val_set(a, o, "cuda_major", id->cuda_major >= 0 ? val_int(a, id->cuda_major) : val_null(a));
	val_set_bool(a, o, "device_code", id->device_code);
	val_set(a, o, "pybind11_internals", val_str(a, id->pybind11_id));
	return o;
}

static struct value *torch_json(struct arena *a, const struct torch_identity *t)
{
	struct value *o = val_obj(a);
	val_set_str(a, o, "path", t->dir);
	val_set(a, o, "version", val_str(a, t->v.version));
	val_set(a, o, "local_tag", val_str(a, t->local_tag));
	val_set(a, o, "cuda", val_str(a, t->v.cuda));
	val_set(a, o, "git_version", val_str(a, t->v.git_version));
	val_set(a, o, "cxx11_abi", t->cxx11_abi == 0 || t->cxx11_abi == 1 ? val_int(a, t->cxx11_abi) : val_null(a));
	val_set(a, o, "cuda_runtime", val_str(a, t->cudart));
	val_set_bool(a, o, "cuda_build", t->cuda_build);
	return o;
}

void why_identity(struct scan *s, const struct why_request *q, const struct why_result *r,
		  struct why_identity *out)
{
	struct arena *a = &s->arena;
	memset(out, 0, sizeof *out);
	out->json = val_obj(a);
	struct conv c = { .s = s, .r = (struct why_result *)r, .q = q, .is_target = true, .dr = &r->target };
	const struct torch_identity *t = r->target_unreadable ? NULL : installed_torch(&c);
	const struct lmap *root = r->target_unreadable ? NULL : r->target.root;
	struct cxx_identity id;
	bool have = root && usable_elf(root->obj);
	if (have)
		cxx_identify(a, root->obj, &id);
	val_set(a, out->json, "target", have ? target_json(a, root->path, &id) : val_null(a));
	val_set(a, out->json, "torch", t ? torch_json(a, t) : val_null(a));
	if (have && (id.cxx11_abi >= 0 || id.torch_api != TORCH_API_NONE || id.cudart || id.pybind11_id)) {
		const char *parts[6];
		size_t n = 0;
		const char *comp = compilers_text(a, &id);
		if (comp)
			parts[n++] = comp;
		if (id.cxx11_abi == 0 || id.cxx11_abi == 1)
			parts[n++] = arena_printf(a, "_GLIBCXX_USE_CXX11_ABI=%d", id.cxx11_abi);
		const char *api = torch_api_text(a, &id);
		if (api)
			parts[n++] = api;
		if (id.cudart)
			parts[n++] = arena_printf(a, "CUDA runtime %d (%s)", id.cuda_major, id.cudart);
		if (id.pybind11_id)
			parts[n++] = arena_printf(a, "pybind11 %s", id.pybind11_id);
		const char *text = arena_printf(a, "%s:", path_basename(root->path));
		for (size_t i = 0; i < n; i++)
			text = arena_printf(a, "%s%s %s", text, i ? ";" : "", parts[i]);
		out->line[out->nline++] = (struct why_identity_line){ "built", text };
	}
	if (t) {
		const char *text = arena_printf(a, "%s (%s)", t->v.version ? t->v.version : "version unknown", t->dir);
		if (t->v.git_version)
			text = arena_printf(a, "%s, git %s", text, t->v.git_version);
		text = arena_printf(a, "%s, CUDA %s", text, t->v.cuda ? t->v.cuda : "none (CPU build)");
		if (t->cxx11_abi == 0 || t->cxx11_abi == 1)
			text = arena_printf(a, "%s, _GLIBCXX_USE_CXX11_ABI=%d", text, t->cxx11_abi);
		if (t->cudart)
			text = arena_printf(a, "%s, links %s", text, t->cudart);
		out->line[out->nline++] = (struct why_identity_line){ "torch", text };
	}
}
