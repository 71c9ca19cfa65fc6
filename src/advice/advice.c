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

/* PEP 668: a distribution's Python marks its stdlib folder; a venv or a
 * conda environment is the user's own, whatever its base is. */
static void owner_init(struct advice *a)
{
	const struct pyenv *e = &a->c->env;
	if (e->kind == PYENV_VENV || e->kind == PYENV_CONDA || e->kind == PYENV_PLAIN || !e->py_major)
		return;
	const char *stdlib = NULL;
	char dir[PATH_MAX];
	if (e->dynload) {
		path_dirname(e->dynload, dir, sizeof dir);
		stdlib = arena_strdup(&a->s->arena, dir);
	} else if (e->root) {
		stdlib = arena_printf(&a->s->arena, "%s/lib/python%d.%d", e->root, e->py_major, e->py_minor);
	}
	if (!stdlib)
		return;
	const char *marker = arena_printf(&a->s->arena, "%s/EXTERNALLY-MANAGED", stdlib);
	struct fs_stat st;
	fs_stat(&a->s->fs, marker, &st);
	if (st.kind == FS_REGULAR) {
		a->owner.externally_managed = true;
		a->owner.marker = marker;
	}
}

struct list_scan {
	struct advice *a;
	const char *dir;
};

/* One dpkg file list: the paths under the environment's site directories. */
static bool read_list(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct list_scan *ls = ctx;
	struct advice *a = ls->a;
	(void)is_link;
	size_t n = strlen(name);
	if (kind != FS_REGULAR || n < 6 || strcmp(name + n - 5, ".list") != 0)
		return true;
	char *text;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(&a->s->fs, arena_printf(&a->s->arena, "%s/%s", ls->dir, name), 64u << 20, &text, &len,
			  &d) != ST_OK)
		return true;
	const char *pkg = NULL;
	const struct pyenv *e = &a->c->env;
	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		char *le = nl ? nl : text + len;
		*le = '\0';
		bool ours = false;
		for (size_t i = 0; i < e->nsite && !ours; i++)
			ours = str_starts(p, e->site[i]);
		if (ours) {
			if (!pkg) {
				const char *colon = strchr(name, ':');	/* "python3-yaml:amd64.list" */
				pkg = arena_strndup(&a->s->arena, name, colon ? (size_t)(colon - name) : n - 5);
			}
			strmap_put(&a->s->arena, &a->owner.by_path, arena_strdup(&a->s->arena, p), (void *)pkg);
		}
		p = le + 1;
	}
	free(text);
	return true;
}

const char *advice_system_owner(struct advice *a, const char *path)
{
	if (!a->owner.lists_read) {
		a->owner.lists_read = true;
		struct list_scan ls = { a, "/var/lib/dpkg/info" };
		const struct pyenv *e = &a->c->env;
		/* a venv's files are pip's; only a system prefix has a manager's */
		if (e->kind != PYENV_VENV && e->kind != PYENV_CONDA &&
		    fs_list_dir(&a->s->fs, ls.dir, read_list, &ls))
			a->owner.manager = "dpkg";
	}
	return path ? strmap_get(&a->owner.by_path, path) : NULL;
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
const char *advice_installed_pin(struct advice *a, const char *norm, const char **by)
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

/* A pip action may be given: the interpreter is the user's to change. */
static bool pip_allowed(const struct advice *a)
{
	return !a->owner.externally_managed && a->c->env.kind != PYENV_PLAIN;
}

struct fix_action *advice_pip_install(struct advice *a, const char *req, bool no_deps, bool force)
{
	if (!pip_allowed(a))
		return NULL;
	struct fix_action *x = fix_action_new(&a->s->arena, FIX_PIP_INSTALL);
	x->python = a->c->env.python;
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
	x->manager = a->owner.manager ? a->owner.manager : "dpkg";
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

/* Of two metadata folders of one project, the one the files on disk are
 * not: fewer of its recorded files match.  NULL when they tie. */
static const char *stale_of(const struct value *infos)
{
	if (!infos || infos->kind != VAL_ARR || infos->u.list.n != 2)
		return NULL;
	const struct value *p = infos->u.list.item[0], *q = infos->u.list.item[1];
	const struct value *mp = val_get(p, "record_files_matching"), *mq = val_get(q, "record_files_matching");
	const struct value *cp = val_get(p, "record_files_checked"), *cq = val_get(q, "record_files_checked");
	if (!mp || !mq || !cp || !cq)
		return NULL;
	/* the share of its files that match: a folder with no RECORD matches none */
	double sp = cp->u.i ? (double)mp->u.i / (double)cp->u.i : 0, sq = cq->u.i ? (double)mq->u.i / (double)cq->u.i : 0;
	if (sp == sq)
		return NULL;
	return val_get_str(sp < sq ? p : q, "metadata");
}

static void duplicate(struct advice *a, struct finding *f)
{
	const char *stale = stale_of(val_get(f->fields, "dist_infos"));
	if (!stale)
		return;
	const char *pkg = advice_system_owner(a, stale);
	if (pkg || a->owner.externally_managed)
		return;	/* the system package manager's: not ours to remove */
	struct fix_action *x = remove_path(a, stale);
	add(a, f, x);
	finding_fix(&a->s->findings, f, "remove the stale folder: %s", x->command);
}

static void record(struct advice *a, struct finding *f)
{
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
		struct fix_action *x = system_package(a, pkg);
		add(a, f, x);
		finding_fix(&a->s->findings, f, "%s (%s owns these files: %s)", x->command, x->manager, pkg);
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

void advise_env(struct scan *s, struct env_check *c, struct causes *cs, size_t first, size_t end,
		struct advice *a)
{
	memset(a, 0, sizeof *a);
	a->s = s;
	a->c = c;
	a->cs = cs;
	a->machine = machine_of(c);
	owner_init(a);
	for (size_t i = first; i < end && i < s->findings.list.n; i++)
		finding_actions(a, findings_at(&s->findings, i));
	plan_build(a, first, end);
}
