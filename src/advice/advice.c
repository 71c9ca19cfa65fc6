/*
 * advice.c: each finding's fix as actions (advice.h), within the rules a
 * fix must keep; the plan itself is plan.c's.
 */
#include "advice/advice.h"
#include "advice/plan.h"
#include "pyenv/providers.h"
#include "pyenv/requires.h"

#include <limits.h>

/* ---- who may change the files ---- */

const char *advice_system_owner(struct advice *a, const char *path)
{
	const struct pyenv *e = &a->c->env;
	if (e->kind != PYENV_PREFIX && e->kind != PYENV_SITE)
		return NULL;	/* a venv's files are pip's; only a system prefix has a manager's */
	return sysowner_of(a->s, &a->c->sysowner, e, path);
}

/* ---- pins: what the installed environment asks for ---- */

static struct marker_env marker_env_of(const struct advice *a, const char *extra)
{
	struct marker_env me = { a->machine, a->c->env.py_major, a->c->env.py_minor, extra };
	return me;
}

static const struct dist *installed(const struct advice *a, const char *norm)
{
	return strmap_get(&a->c->inv.dists.by_norm, norm);
}

/*
 * The requirement the installed environment states on norm: torch's own
 * first (or, when torch pins a meta-package with extras, that package's
 * requirement on norm under one of those extras: torch 2.12's
 * cuda-toolkit[nvrtc,...]==13.0.2 and cuda-toolkit's nvidia-cuda-nvrtc
 * ==13.0.88.*), then any other installed distribution's.  *by names who
 * pins it.  NULL when nothing installed does.
 */
static const char *installed_pin(struct advice *a, const char *norm, const char **by);

/* Memoised per name: a missing library is often named by every module of a package. */
const char *advice_installed_pin(struct advice *a, const char *norm, const char **by)
{
	const char *const *hit = strmap_get(&a->pins_seen, norm);
	if (!hit) {
		const char **v = arena_calloc(&a->s->arena, 2, sizeof *v);
		v[0] = installed_pin(a, norm, &v[1]);
		strmap_put(&a->s->arena, &a->pins_seen, arena_strdup(&a->s->arena, norm), v);
		hit = v;
	}
	*by = hit[1];
	return hit[0];
}

static const char *installed_pin(struct advice *a, const char *norm, const char **by)
{
	struct arena *ar = &a->s->arena;
	struct marker_env me = marker_env_of(a, NULL);
	const struct dist *torch = installed(a, "torch");
	const struct ptrvec *all = &a->c->inv.dists.all;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < all->n; i++) {
			const struct dist *d = all->item[i];
			if ((pass == 0) != (d == torch) || str_eq(d->norm, norm))
				continue;
			struct requirement r;
			if (dist_requirement_on(ar, d, norm, &me, &r) && r.spec[0]) {
				*by = arena_printf(ar, "%s %s", d->name, d->version ? d->version : "");
				return arena_printf(ar, "%s%s", r.name, r.spec);
			}
			/* through a meta-package d requires with extras */
			for (size_t k = 0; k < d->requires.n; k++) {
				struct requirement m;
				if (!requirement_parse(ar, d->requires.item[k], &m) || !m.extras || !marker_holds(m.marker, &me))
					continue;
				const struct dist *meta = installed(a, m.norm);
				if (!meta)
					continue;
				for (const char *x = m.extras; *x;) {
					size_t xn = strcspn(x, ",");
					struct marker_env mx = marker_env_of(a, arena_strndup(ar, x, xn));
					if (dist_requirement_on(ar, meta, norm, &mx, &r) && r.spec[0]) {
						*by = arena_printf(ar, "%s %s (through %s%s)", d->name,
								   d->version ? d->version : "", m.name, m.spec);
						return arena_printf(ar, "%s%s", r.name, r.spec);
					}
					x += xn + (x[xn] == ',');
				}
			}
		}
	return NULL;
}

/* ---- building actions within the rules ---- */

/* The interpreter pip acts for: a venv's or conda environment's own
 * bin/python (its site-packages; the ELF it links to is the base's), else
 * the environment's interpreter. */
const char *advice_python(struct advice *a)
{
	const struct pyenv *e = &a->c->env;
	if ((e->kind == PYENV_VENV || e->kind == PYENV_CONDA) && e->root) {
		static const char *const names[] = { "python", "python3" };
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			const char *p = arena_printf(&a->s->arena, "%s/bin/%s", e->root, names[i]);
			struct fs_stat st;
			fs_stat(&a->s->fs, p, &st);
			if (st.kind == FS_REGULAR)
				return p;
		}
	}
	return e->python;
}

/* A pip action may be given: the interpreter is the user's to change. */
static bool pip_allowed(const struct advice *a)
{
	return !a->c->externally_managed && a->c->env.kind != PYENV_PLAIN;
}

struct fix_action *advice_pip_install(struct advice *a, const char *req, bool no_deps, bool force)
{
	if (!pip_allowed(a))
		return NULL;
	struct fix_action *x = fix_action_new(&a->s->arena, FIX_PIP_INSTALL);
	x->python = advice_python(a);
	x->no_deps = no_deps;
	x->force_reinstall = force;
	if (req)
		fix_action_item(&a->s->arena, x, req);
	return x;
}

static void add(struct advice *a, struct finding *f, struct fix_action *x)
{
	if (!x)
		return;
	if (!x->command)
		fix_action_finish(&a->s->arena, x);
	ptrvec_push(&a->s->arena, &f->actions, x);
}

static struct fix_action *remove_path(struct advice *a, const char *path)
{
	struct fix_action *x = fix_action_new(&a->s->arena, FIX_REMOVE_PATH);
	x->path = path;
	return x;
}

static struct fix_action *system_package(struct advice *a, const char *pkg)
{
	struct fix_action *x = fix_action_new(&a->s->arena, FIX_SYSTEM_PACKAGE);
	x->manager = a->c->sysowner.manager ? a->c->sysowner.manager : "dpkg";
	fix_action_item(&a->s->arena, x, pkg);
	return x;
}

/* ---- one finding ---- */

/* The first component of a version ("12" of "12.8.93"). */
static const char *major_of(struct arena *ar, const char *v)
{
	return arena_strndup(ar, v, strcspn(v, "."));
}

/* A library no installed file provides: the pip distribution that ships
 * it, at the version the installed environment pins. */
static void not_installed(struct advice *a, struct finding *f)
{
	struct arena *ar = &a->s->arena;
	const char *pkg = val_get_str(f->fields, "system_package");
	if (pkg) {
		add(a, f, system_package(a, pkg));
		return;
	}
	const struct value *miss = val_get(f->fields, "requires_missing");
	if (miss && miss->kind == VAL_ARR && miss->u.list.n) {
		struct fix_action *x = advice_pip_install(a, NULL, false, false);
		for (size_t i = 0; x && i < miss->u.list.n; i++)
			fix_action_item(ar, x, miss->u.list.item[i]->u.s);
		add(a, f, x);
		if (x)
			finding_fix(&a->s->findings, f, "%s (what %s requires and is not installed)", x->command,
				    val_get_str(f->fields, "required_by"));
		return;
	}
	const char *dist = val_get_str(f->fields, "provided_by");
	if (!dist || strchr(dist, ' ') || dist[0] == '(')
		return;
	const char *norm = dist_normalize(ar, dist);
	const char *by = NULL;
	const char *req = advice_installed_pin(a, norm, &by);
	const char *version = val_get_str(f->fields, "provider_version");
	const struct value *maj = val_get(f->fields, "cuda_major");
	const char *why;
	if (req)
		why = arena_printf(ar, "the version %s requires", by);
	else if (version) {
		req = arena_printf(ar, "%s==%s.*", dist, major_of(ar, version));
		why = arena_printf(ar, "nothing installed pins it; any %s %s.x release%s", dist, major_of(ar, version),
				   maj && maj->kind == VAL_INT ? arena_printf(ar, " is CUDA %lld's", (long long)maj->u.i) : "");
	} else {
		req = dist;
		why = "nothing installed pins it";
	}
	struct fix_action *x = advice_pip_install(a, req, false, false);
	add(a, f, x);
	if (x)
		finding_fix(&a->s->findings, f, "%s (%s)", x->command, why);
}

/* A library the loader does not find although a file of it is there. */
static void off_path(struct advice *a, struct finding *f)
{
	const char *pkg = val_get_str(f->fields, "system_package");
	if (pkg) {
		add(a, f, system_package(a, pkg));
		return;
	}
	const struct value *where = val_get(f->fields, "found_at");
	if (!where || where->kind != VAL_ARR || !where->u.list.n)
		return;
	const char *path = val_get_str(where->u.list.item[0], "path");
	if (!path)
		return;
	char dir[PATH_MAX];
	path_dirname(path, dir, sizeof dir);
	bool in_site = false;
	for (size_t i = 0; i < a->c->env.nsite && !in_site; i++)
		in_site = str_starts(dir, a->c->env.site[i]);
	struct fix_action *x = fix_action_new(&a->s->arena, FIX_ADD_LIBRARY_PATH);
	x->path = arena_strdup(&a->s->arena, dir);
	/* a system folder belongs in the loader's cache; a folder of the
	 * environment only for the processes that use it */
	x->how = in_site ? "LD_LIBRARY_PATH" : "ld.so.conf";
	add(a, f, x);
}

static void dist_maps(struct advice *a)
{
	if (a->dist_maps)
		return;
	a->dist_maps = true;
	struct arena *ar = &a->s->arena;
	const struct ptrvec *all = &a->c->inv.dists.all;
	for (size_t i = 0; i < all->n; i++) {
		struct dist *d = all->item[i];
		if (d->meta && !strmap_get(&a->dist_by_meta, d->meta))
			strmap_put(ar, &a->dist_by_meta, d->meta, d);
		if (d->kind == DIST_CONDA)
			continue;
		const char *key = arena_printf(ar, "%s\n%s", d->site ? d->site : "", d->norm);
		struct ptrvec *same = strmap_get(&a->dists_by_name, key);
		if (!same) {
			same = arena_calloc(ar, 1, sizeof *same);
			strmap_put(ar, &a->dists_by_name, key, same);
		}
		ptrvec_push(ar, same, d);
	}
}

/* The dist-info of name in site other than d, or NULL. */
static const struct dist *other_dist_info(struct advice *a, const struct dist *d)
{
	dist_maps(a);
	if (d->kind == DIST_CONDA)
		return NULL;
	const struct ptrvec *same = strmap_get(&a->dists_by_name,
					       arena_printf(&a->s->arena, "%s\n%s", d->site ? d->site : "", d->norm));
	for (size_t i = 0; same && i < same->n; i++)
		if (same->item[i] != d)
			return same->item[i];
	return NULL;
}

/* Of the metadata folders of one project, those the files on disk are not:
 * every one but the folder most of whose recorded files match (a folder
 * with no RECORD matches none).  Empty when the best is not alone. */
static void stale_of(const struct value *infos, struct ptrvec *out, struct arena *ar)
{
	if (!infos || infos->kind != VAL_ARR || infos->u.list.n < 2)
		return;
	double best = -1;
	size_t nbest = 0;
	for (size_t i = 0; i < infos->u.list.n; i++) {
		const struct value *m = val_get(infos->u.list.item[i], "record_files_matching");
		const struct value *c = val_get(infos->u.list.item[i], "record_files_checked");
		double share = m && c && c->u.i ? (double)m->u.i / (double)c->u.i : 0;
		if (share > best) {
			best = share;
			nbest = 1;
		} else if (share == best) {
			nbest++;
		}
	}
	if (nbest != 1)
		return;
	for (size_t i = 0; i < infos->u.list.n; i++) {
		const struct value *m = val_get(infos->u.list.item[i], "record_files_matching");
		const struct value *c = val_get(infos->u.list.item[i], "record_files_checked");
		double share = m && c && c->u.i ? (double)m->u.i / (double)c->u.i : 0;
		if (share < best)
			ptrvec_push(ar, out, (void *)val_get_str(infos->u.list.item[i], "metadata"));
	}
}

static void duplicate(struct advice *a, struct finding *f)
{
	struct ptrvec stale = { 0 };
	stale_of(val_get(f->fields, "dist_infos"), &stale, &a->s->arena);
	if (!stale.n || f->severity == SEV_NOTE || a->c->externally_managed)
		return;	/* no folder stands out, or the system package manager's: not ours to remove */
	for (size_t i = 0; i < stale.n; i++)
		if (advice_system_owner(a, stale.item[i]))
			return;
	const char *cmds = NULL;
	for (size_t i = 0; i < stale.n; i++) {
		struct fix_action *x = remove_path(a, stale.item[i]);
		add(a, f, x);
		cmds = cmds ? arena_printf(&a->s->arena, "%s && %s", cmds, x->command) : x->command;
	}
	finding_fix(&a->s->findings, f, "remove the stale folder%s: %s", stale.n == 1 ? "" : "s", cmds);
}

/* None of the files d's RECORD lists (its metadata apart) is there. */
static bool files_gone(struct advice *a, const struct dist *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nfile && n < 4096; i++) {
		char buf[DIST_PATH_MAX];
		const char *p = dist_file_path(d, &d->file[i], buf, sizeof buf);
		if (strstr(p, ".dist-info/") || strstr(p, "/__pycache__/") || str_ends(p, ".pyc"))
			continue;
		struct fs_stat st;
		fs_stat(&a->s->fs, p, &st);
		if (st.kind != FS_MISSING)
			return false;
		n++;
	}
	return n > 0;
}

/* Does another installed distribution require d (pip check would miss it)?
 * The names every installed distribution requires, read once. */
static bool required_by_other(struct advice *a, const struct dist *d)
{
	if (!a->required_read) {
		a->required_read = true;
		struct marker_env me = marker_env_of(a, NULL);
		const struct ptrvec *all = &a->c->inv.dists.all;
		for (size_t i = 0; i < all->n; i++) {
			const struct dist *o = all->item[i];
			for (size_t k = 0; k < o->requires.n; k++) {
				struct requirement r;
				if (requirement_parse(&a->s->arena, o->requires.item[k], &r) &&
				    !(r.marker && strstr(r.marker, "extra")) && marker_holds(r.marker, &me) &&
				    !str_eq(r.norm, o->norm))
					strmap_put(&a->s->arena, &a->required, r.norm, MAP_YES);
			}
		}
	}
	return strmap_get(&a->required, d->norm) != NULL;
}

static void record(struct advice *a, struct finding *f)
{
	/* files a system package's list names that are gone: that package, reinstalled */
	const char *listed = val_get_str(f->fields, "system_package");
	if (listed && !val_get_str(f->fields, "distribution") && f->severity != SEV_NOTE) {
		add(a, f, system_package(a, listed));
		return;
	}
	/* a distribution's mismatch names its metadata folder as the object */
	struct dist *d = NULL;
	if (f->object && val_get_str(f->fields, "distribution")) {
		dist_maps(a);
		d = strmap_get(&a->dist_by_meta, f->object);
	}
	if (!d)
		return;	/* binaries no RECORD lists: advice only */
	const struct dist *other = other_dist_info(a, d);
	if (other) {
		/* two folders: this one is stale when the other matches better;
		 * never reinstall the stale version over the files */
		finding_fix(&a->s->findings, f, "see the duplicate metadata folders of %s", d->name);
		return;
	}
	const char *pkg = NULL;
	const struct value *files = val_get(f->fields, "files");
	for (size_t k = 0; files && files->kind == VAL_ARR && k < files->u.list.n && !pkg; k++)
		pkg = advice_system_owner(a, val_get_str(files->u.list.item[k], "path"));
	if (!pkg)
		pkg = advice_system_owner(a, d->meta);
	if (pkg) {
		/* the system package's files: gone, it puts them back; changed by its build, a note */
		if (f->severity != SEV_NOTE)
			add(a, f, system_package(a, pkg));
		return;
	}
	if (files_gone(a, d) && !required_by_other(a, d)) {
		/* metadata of a distribution whose files are gone, which nothing installed requires */
		struct fix_action *x = remove_path(a, d->meta);
		add(a, f, x);
		finding_fix(&a->s->findings, f, "remove the metadata of %s, whose files are gone: %s", d->name, x->command);
		return;
	}
	if (!d->version)
		return;
	struct fix_action *x = advice_pip_install(a, arena_printf(&a->s->arena, "%s==%s", d->name, d->version), true,
						  true);
	add(a, f, x);
	if (x)
		finding_fix(&a->s->findings, f, "reinstall %s %s: %s", d->name, d->version, x->command);
}

/* A module Python does not find (torch, not installed): the version the
 * installed distributions require. */
static void module_missing(struct advice *a, struct finding *f)
{
	const char *name = val_get_str(f->fields, "missing");
	if (!name)
		return;
	/* a module that is not torch: pip installs a project, whose name is
	 * the module's only where some Requires-Dist names it (check.c) */
	if (val_get_str(f->fields, "import")) {
		name = val_get_str(f->fields, "project");
		if (!name)
			return;
	}
	const char *by = NULL;
	const char *req = advice_installed_pin(a, dist_normalize(&a->s->arena, name), &by);
	struct fix_action *x = advice_pip_install(a, req ? req : name, false, false);
	add(a, f, x);
	if (x)
		finding_fix(&a->s->findings, f, "%s%s%s%s", x->command, by ? " (the version " : "", by ? by : "",
			    by ? " requires)" : "");
}

static void finding_actions(struct advice *a, struct finding *f)
{
	if (str_eq(f->id, "library-not-installed"))
		not_installed(a, f);
	else if (str_eq(f->id, "library-off-path"))
		off_path(a, f);
	else if (str_eq(f->id, "duplicate-dist-info"))
		duplicate(a, f);
	else if (str_eq(f->id, "record-mismatch"))
		record(a, f);
	else if (str_eq(f->id, "module-not-found") && f->caused_by < 0)
		module_missing(a, f);
}

/* ---- the environment ---- */

static const char *machine_of(const struct env_check *c)
{
	for (size_t i = 0; i < c->inv.nobj; i++) {
		const struct object *o = c->inv.obj[i]->obj;
		if (o && o->kind == OBJ_ELF && o->elf_ok)
			return o->elf.machine == EM_AARCH64_ ? "aarch64" : "x86_64";
	}
	return "x86_64";
}

void advise_env(struct scan *s, struct env_check *c, const struct check_options *o, struct causes *cs,
		size_t first, size_t end, bool model_check, struct advice *a)
{
	memset(a, 0, sizeof *a);
	a->s = s;
	a->c = c;
	a->cs = cs;
	a->machine = machine_of(c);
	for (size_t i = first; i < end && i < s->findings.list.n; i++)
		finding_actions(a, findings_at(&s->findings, i));
	plan_build(a, o, model_check);
}
