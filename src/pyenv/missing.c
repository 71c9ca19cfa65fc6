/*
 * missing.c: where a library the loader did not find is (installed off the
 * loader's path, in a CUDA toolkit folder no cache lists, a system
 * package's file that is gone, shipped by a pip distribution, or declared
 * by the needer's own metadata), and which CUDA major a module needs
 * (checkctx.h).
 */
#include "pyenv/checkctx.h"
#include "pyenv/providers.h"
#include "pyenv/requires.h"

#include <limits.h>

/* A library-not-found: is the file somewhere in the environment? */
/* The folders of a CUDA toolkit installed outside the environment:
 * $CUDA_HOME's, /usr/local/cuda*'s and /opt/cuda's lib64, lib and
 * targets/<arch>/lib (the loader reaches them only through its cache,
 * LD_LIBRARY_PATH or a RUNPATH). */
struct toolkit_scan {
	struct check_ctx *x;
	struct ptrvec *dirs;
};

static void toolkit_add(struct check_ctx *x, struct ptrvec *dirs, const char *home)
{
	static const char *const subs[] = { "lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib",
					     "targets/aarch64-linux/lib" };
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		const char *d = arena_printf(&x->s->arena, "%s/%s", home, subs[i]);
		char real[PATH_MAX];
		int err;
		if (!fs_realpath(&x->s->fs, d, real, sizeof real, &err))
			continue;
		bool dup = false;
		for (size_t k = 0; k < dirs->n && !dup; k++)
			dup = str_eq(dirs->item[k], real);
		if (!dup)
			ptrvec_push(&x->s->arena, dirs, arena_strdup(&x->s->arena, real));
	}
}

static bool toolkit_entry(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct toolkit_scan *ts = ctx;
	(void)kind;
	(void)is_link;
	if (str_starts(name, "cuda"))
		toolkit_add(ts->x, ts->dirs, arena_printf(&ts->x->s->arena, "/usr/local/%s", name));
	return true;
}

static const struct ptrvec *toolkit_dirs(struct check_ctx *x)
{
	if (x->toolkit_read)
		return &x->toolkit;
	x->toolkit_read = true;
	if (x->o->cuda_home && *x->o->cuda_home)
		toolkit_add(x, &x->toolkit, x->o->cuda_home);
	struct toolkit_scan ts = { x, &x->toolkit };
	fs_list_dir(&x->s->fs, "/usr/local", toolkit_entry, &ts);
	toolkit_add(x, &x->toolkit, "/opt/cuda");
	return &x->toolkit;
}

/* A library the loader did not find, installed where no search of it looks:
 * a CUDA toolkit folder (library-off-path; the fix puts the folder on the
 * loader's path), or a system package's file, there or gone (that package
 * is reinstalled: its scripts register it).  NULL when neither. */
static struct finding *system_copy(struct check_ctx *x, struct finding *lnf, const struct inv_obj *io, const char *lib)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	const char *needer = path_basename(lnf->object ? lnf->object : io ? io->path : "?");
	const struct ptrvec *dirs = toolkit_dirs(x);
	for (size_t i = 0; i < dirs->n; i++) {
		const char *path = arena_printf(a, "%s/%s", (const char *)dirs->item[i], lib);
		if (fs_kind_of(&s->fs, path) != FS_REGULAR)
			continue;
		struct finding *f = finding_add(&s->findings, "library-off-path", SEV_ERROR, lnf->object);
		finding_title(&s->findings, f, "%s is installed at %s (a CUDA toolkit), but not where the loader looks "
			      "for %s", lib, path, needer);
		finding_line(&s->findings, f, "no ld.so.cache entry, LD_LIBRARY_PATH or RUNPATH names %s",
			     (const char *)dirs->item[i]);
		finding_line(&s->findings, f, "a pip copy would not help: it lands in site-packages/nvidia/, which is "
					      "on no search path of this module either");
		val_set_str(a, f->fields, "library", lib);
		struct value *where = val_arr(a), *w = val_obj(a);
		val_set_str(a, w, "path", path);
		val_set(a, w, "distribution", val_null(a));
		val_push(a, where, w);
		val_set(a, f->fields, "found_at", where);
		val_set_str(a, f->fields, "folder", dirs->item[i]);
		val_set_bool(a, f->fields, "system", true);
		finding_fix(&s->findings, f, "put %s on the loader's path: an /etc/ld.so.conf.d entry and ldconfig (or "
			    "LD_LIBRARY_PATH for one process)", (const char *)dirs->item[i]);
		return f;
	}
	const char *spath = NULL;
	const char *pkg = sysowner_library(s, &x->c->sysowner, &x->c->env, lib, &spath);
	if (!pkg)
		return NULL;
	struct fs_stat st;
	fs_stat(&s->fs, spath, &st);
	bool there = st.kind == FS_REGULAR;
	struct finding *f = finding_add(&s->findings, there ? "library-off-path" : "library-not-installed", SEV_ERROR,
					lnf->object);
	if (there)
		finding_title(&s->findings, f, "%s is installed at %s by the system package %s, but not where the "
			      "loader looks for %s", lib, spath, pkg, needer);
	else
		finding_title(&s->findings, f, "%s is not installed: the system package %s (%s) ships it as %s, and "
			      "that file is gone", lib, pkg, x->c->sysowner.manager, spath);
	val_set_str(a, f->fields, "library", lib);
	val_set_str(a, f->fields, "system_package", pkg);
	val_set_str(a, f->fields, "manager", x->c->sysowner.manager);
	if (there) {
		struct value *where = val_arr(a), *w = val_obj(a);
		val_set_str(a, w, "path", spath);
		val_set(a, w, "distribution", val_null(a));
		val_push(a, where, w);
		val_set(a, f->fields, "found_at", where);
		val_set_bool(a, f->fields, "system", true);
	}
	finding_fix(&s->findings, f, "reinstall %s: apt-get install --reinstall %s (its files and the links its "
		    "scripts make come back)", pkg, pkg);
	return f;
}

/* The requirements of d (its Requires-Dist, for this interpreter) that no installed distribution meets. */
static struct value *missing_requirements(struct check_ctx *x, const struct dist *d)
{
	struct arena *a = &x->s->arena;
	struct value *out = val_arr(a);
	if (!d)
		return out;
	struct marker_env me = { NULL, x->c->env.py_major, x->c->env.py_minor, NULL };
	for (size_t i = 0; i < d->requires.n; i++) {
		struct requirement r;
		if (!requirement_parse(a, d->requires.item[i], &r) || (r.marker && strstr(r.marker, "extra")) ||
		    !marker_holds(r.marker, &me))
			continue;
		if (strmap_get(&x->c->inv.dists.by_norm, r.norm))
			continue;
		val_push(a, out, val_str(a, arena_printf(a, "%s%s%s%s", r.name, r.extras ? "[" : "",
							 r.extras ? r.extras : "", r.extras ? "]" : "")));
		const char *spec = r.spec[0] ? arena_printf(a, "%s%s", (const char *)out->u.list.item[out->u.list.n - 1]->u.s,
							     r.spec) : NULL;
		if (spec)
			out->u.list.item[out->u.list.n - 1] = val_str(a, spec);
	}
	return out;
}

static struct finding *not_installed(struct check_ctx *x, struct finding *lnf, const struct inv_obj *io, const char *lib)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	struct finding *f;
	/* the CUDA major of the object that needs it, else torch's */
	int cuda_hint = io ? provider_file_major(a, io->path, io->dist, io->obj, NULL) : 0;
	if (!cuda_hint && x->c->torch.found && x->c->torch.cuda)
		cuda_hint = (int)strtol(x->c->torch.cuda, NULL, 10);
	const struct provider *pv = provider_lookup_cuda(a, lib, cuda_hint);
	f = finding_add(&s->findings, "library-not-installed", SEV_ERROR, lnf->object);
	val_set_str(a, f->fields, "library", lib);
	if (str_eq(lib, "libcuda.so.1")) {
		finding_title(&s->findings, f, "libcuda.so.1 is not installed: it is the NVIDIA driver's, and "
					       "this machine has none");
		val_set_bool(a, f->fields, "driver", true);
		finding_line(&s->findings, f, "every CUDA extension that links the driver API fails to "
					      "import without it");
		finding_fix(&s->findings, f, "run on a machine with the NVIDIA driver; to check the rest as "
					     "if it were there, use --assume-driver");
	} else if (pv) {
		finding_title(&s->findings, f, "%s is not installed: it comes with %s", lib, pv->dist);
		val_set_str(a, f->fields, "provided_by", pv->dist);
		val_set(a, f->fields, "install_folder", val_str(a, pv->folder));
		if (pv->cuda_major)
			val_set_int(a, f->fields, "cuda_major", pv->cuda_major);
		if (pv->folder && !str_eq(pv->folder, "-"))
			finding_line(&s->findings, f, "%s installs it into site-packages/%s", pv->dist, pv->folder);
		if (pv->note)
			finding_line(&s->findings, f, "%s", pv->note);
		const char *pip = provider_pip_line(a, pv);
		val_set(a, f->fields, "pip_install", val_str(a, pip));
		val_set(a, f->fields, "provider_version", val_str(a, pv->version));
		if (pip && pv->version)
			finding_fix(&s->findings, f, "%s (the version %s pins for CUDA %d; another %s release "
						     "of the same CUDA major works too)",
				    pip, pv->pinned_by ? pv->pinned_by : "torch", pv->cuda_major, pv->dist);
		else
			finding_fix(&s->findings, f, "install %s (the version that matches the rest of the "
						     "environment's CUDA %s)", pv->dist,
				    pv->cuda_major ? arena_printf(a, "%d", pv->cuda_major) : "stack");
	} else {
		/* what the needer's own metadata declares and is not there (pip check's answer) */
		const struct dist *needer = io ? io->dist : strmap_get(&x->c->inv.dists.by_norm, "torch");
		struct value *miss = missing_requirements(x, needer);
		if (miss->u.list.n) {
			finding_title(&s->findings, f, "%s is not installed anywhere in the environment or on the "
				      "system search path; %s requires %s (its Requires-Dist), which is not "
				      "installed", lib, needer->name, miss->u.list.item[0]->u.s);
			val_set(a, f->fields, "requires_missing", miss);
			val_set_str(a, f->fields, "required_by", needer->name);
			finding_line(&s->findings, f, "it was installed without its dependencies (pip install "
				     "--no-deps), or they were removed: pip check says so too");
			finding_fix(&s->findings, f, "install what %s requires", needer->name);
			f->guess = true;	/* that the missing dependency ships lib is read from no file */
		} else {
			finding_title(&s->findings, f, "%s is not installed anywhere in the environment or on the "
				      "system search path", lib);
			finding_fix(&s->findings, f, "install the package that provides %s", lib);
		}
	}
	return f;
}

/*
 * The installed copies of lib a search could find: a file of that name in
 * the copy's folder.  A copy known only by its SONAME under another file
 * name (auditwheel's libcudart.e8e8b82a.so.12 in torchvision.libs, SONAME
 * libcudart.so.12) is never opened by a search for lib, whatever path is
 * added: only the objects that name the renamed file load it.
 */
static const struct ptrvec *findable_copies(struct check_ctx *x, const char *lib)
{
	struct scan *s = x->s;
	const struct ptrvec *hits = inventory_find(&x->c->inv, lib);
	if (!hits)
		return NULL;
	struct ptrvec *out = arena_calloc(&s->arena, 1, sizeof *out);
	for (size_t i = 0; i < hits->n; i++) {
		const struct inv_obj *h = hits->item[i];
		char dir[PATH_MAX];
		path_dirname(h->path, dir, sizeof dir);
		if (fs_kind_of(&s->fs, arena_printf(&s->arena, "%s/%s", dir, lib)) == FS_REGULAR)
			ptrvec_push(&s->arena, out, hits->item[i]);
	}
	return out;
}

void check_explain_missing(struct check_ctx *x, struct finding *lnf, const struct inv_obj *io)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	const char *lib = val_get_str(lnf->fields, "library");
	if (!lib || strchr(lib, '/'))
		return;
	const struct ptrvec *hits = findable_copies(x, lib);
	struct finding *f;
	if (hits && hits->n) {
		const struct inv_obj *h = hits->item[0];
		f = finding_add(&s->findings, "library-off-path", SEV_ERROR, lnf->object);
		finding_title(&s->findings, f, "%s is installed at %s, but not where the loader looks for %s",
			      lib, h->path, path_basename(lnf->object ? lnf->object : "?"));
		val_set_str(a, f->fields, "library", lib);
		struct value *where = val_arr(a);
		for (size_t i = 0; i < hits->n; i++) {
			const struct inv_obj *hi = hits->item[i];
			struct value *w = val_obj(a);
			val_set_str(a, w, "path", hi->path);
			val_set(a, w, "distribution", val_str(a, hi->dist ? hi->dist->name : NULL));
			val_push(a, where, w);
			if (i < 4)
				finding_line(&s->findings, f, "found at %s%s%s%s", hi->path, hi->dist ? " (from " : "",
					     hi->dist ? hi->dist->name : "", hi->dist ? ")" : "");
		}
		val_set(a, f->fields, "found_at", where);
		/* What would put it on the path. */
		char dir[PATH_MAX], odir[PATH_MAX];
		path_dirname(h->path, dir, sizeof dir);
		const char *needer = lnf->object ? lnf->object : io ? io->path : h->path;
		path_dirname(needer, odir, sizeof odir);
		const char *rel = NULL;
		if (io && h->site && io->site && str_eq(h->site, io->site)) {
			/* a RUNPATH entry relative to $ORIGIN */
			int up = 0;
			for (const char *p = odir + strlen(io->site); *p; p++)
				up += *p == '/';
			char buf[PATH_MAX];
			size_t o = (size_t)snprintf(buf, sizeof buf, "$ORIGIN");
			for (int i = 0; i < up && o < sizeof buf; i++)
				o += (size_t)snprintf(buf + o, sizeof buf - o, "/..");
			snprintf(buf + o, sizeof buf - o, "/%s", dir + strlen(io->site) + 1);
			rel = arena_strdup(a, buf);
		}
		bool torch_preloads = false;
		if (x->c->torch.found)
			for (size_t i = 0; i < x->c->torch.npreload; i++) {
				const char *pp = torch_preload_path(s, &x->c->env, &x->c->torch, &x->c->torch.preload[i]);
				if (pp && str_eq(pp, h->path))
					torch_preloads = true;
			}
		val_set_bool(a, f->fields, "torch_preloads_it", torch_preloads);
		/* its package's import loads it first: once that load works, the
		 * requester finds it loaded (a loaded object matches by soname) */
		val_set_bool(a, f->fields, "package_loads_it", check_self_load_of(x, h) != NULL);
		if (torch_preloads)
			finding_line(&s->findings, f, "`import torch` preloads this file; importing torch first "
						      "makes the SONAME already loaded");
		finding_fix(&s->findings, f, "%s%s%s%s", rel ? "rebuild (or patch) the extension with RUNPATH " : "",
			    rel ? rel : "", rel ? ", or " : "",
			    arena_printf(a, "put %s on LD_LIBRARY_PATH before importing it", dir));
	} else if ((f = system_copy(x, lnf, io, lib)) != NULL) {
		/* a CUDA toolkit folder, or a system package's file */
	} else {
		f = not_installed(x, lnf, io, lib);
	}
	check_set_fields(s, f, io);
	lnf->caused_by = f->index;
}

/* An extension that needs another CUDA major than torch. */
void check_cuda_major_vs_torch(struct check_ctx *x, const struct inv_obj *io)
{
	const struct torch_layout *t = &x->c->torch;
	if (!t->found || !t->cuda || io->obj->kind != OBJ_ELF || !io->obj->elf_ok || check_in_torch(x, io))
		return;
	int tmaj = (int)strtol(t->cuda, NULL, 10);
	for (size_t k = 0; k < io->obj->elf.nneeded; k++) {
		const char *n = io->obj->elf.needed[k];
		/* only a soname of one CUDA major says which the object is built for */
		int major = provider_soname_major(&x->s->arena, n);
		const struct provider *pv = major ? provider_lookup_cuda(&x->s->arena, n, major) : NULL;
		if (!pv || pv->cuda_major == tmaj)
			continue;
		struct finding *f = finding_add(&x->s->findings, "cuda-major-mismatch", SEV_ERROR, io->path);
		finding_title(&x->s->findings, f, "%s is built for CUDA %d (it needs %s); the installed torch %s is "
						  "built for CUDA %s", io->module ? io->module : path_basename(io->path),
			      pv->cuda_major, n, t->version ? t->version : "", t->cuda);
		val_set_str(&x->s->arena, f->fields, "library", n);
		val_set_int(&x->s->arena, f->fields, "needs_cuda_major", pv->cuda_major);
		val_set_int(&x->s->arena, f->fields, "torch_cuda_major", tmaj);
		val_set(&x->s->arena, f->fields, "torch_version", val_str(&x->s->arena, t->version));
		for (size_t i = 0; i < t->npreload; i++) {
			const char *pp = torch_preload_path(x->s, &x->c->env, t, &t->preload[i]);
			if (pp && strncmp(path_basename(pp), n, strcspn(n, ".")) == 0)
				finding_line(&x->s->findings, f, "torch loads %s instead", path_basename(pp));
		}
		finding_fix(&x->s->findings, f, "install the build of %s made for CUDA %d, or the torch built for "
						"CUDA %d", io->dist ? io->dist->name : "this package", tmaj, pv->cuda_major);
		check_set_fields(x->s, f, io);
		return;
	}
}

/* A library of the process by its soname's stem ("libcudart" of
 * libcudart.so.12) and CUDA major, for check_two_majors. */
struct stem_major {
	const char *soname;
	size_t stem;	/* bytes before the first ".so." */
	int major;
	size_t index;	/* in the search list */
};

static int cmp_stem_major(const void *a, const void *b)
{
	const struct stem_major *x = a, *y = b;
	if (x->stem != y->stem)
		return x->stem < y->stem ? -1 : 1;
	int c = memcmp(x->soname, y->soname, x->stem);
	if (c)
		return c;
	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_index_pair(const void *a, const void *b)
{
	const size_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void two_majors_finding(struct check_ctx *x, const struct dlopen_result *r, const struct inv_obj *io,
			       size_t i, size_t k)
{
	const char *a = r->searchlist[i]->obj->elf.soname, *b = r->searchlist[k]->obj->elf.soname;
	const struct provider *pa = provider_lookup_cuda(&x->s->arena, a, provider_soname_major(&x->s->arena, a));
	const struct provider *pb = provider_lookup_cuda(&x->s->arena, b, provider_soname_major(&x->s->arena, b));
	struct finding *f = finding_add(&x->s->findings, "cuda-major-mismatch", SEV_ERROR, io->path);
	finding_title(&x->s->findings, f, "one process would load %s and %s (CUDA %d and %d)", a, b,
		      pa->cuda_major, pb->cuda_major);
	val_set_str(&x->s->arena, f->fields, "library", a);
	val_set_str(&x->s->arena, f->fields, "other", b);
	finding_line(&x->s->findings, f, "%s from %s", a, r->searchlist[i]->path);
	finding_line(&x->s->findings, f, "%s from %s", b, r->searchlist[k]->path);
	finding_fix(&x->s->findings, f, "keep one CUDA major in the environment: the packages built "
					"for the other one need their matching build");
	check_set_fields(x->s, f, io);
}

/* Two majors of one CUDA library in one process: every pair of the search
 * list (earlier, later) whose sonames share the stem and name two CUDA
 * majors, in search-list order.  Sorted by stem and major, not compared
 * pair by pair: a serving stack's process has hundreds of libraries. */
void check_two_majors(struct check_ctx *x, const struct dlopen_result *r, const struct inv_obj *io)
{
	struct arena *a = &x->s->arena;
	struct stem_major *e = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->nsearchlist; i++) {
		const char *so = r->searchlist[i]->obj->elf_ok ? r->searchlist[i]->obj->elf.soname : NULL;
		const char *dot = so ? strstr(so, ".so.") : NULL;
		if (!dot)
			continue;
		if (!e)
			e = arena_alloc(a, r->nsearchlist * sizeof *e);
		e[n++] = (struct stem_major){ so, (size_t)(dot - so), 0, i };
	}
	/* by stem first (majors all 0): only a stem two libraries share needs
	 * their majors, then the group is sorted again by major */
	sort_items(e, n, sizeof *e, cmp_stem_major);
	size_t *pair = NULL, npair = 0, cap = 0;
	for (size_t g = 0, g_end; g < n; g = g_end) {
		/* [g, g_end): one stem; within it, runs of one major */
		for (g_end = g + 1; g_end < n && e[g_end].stem == e[g].stem &&
				    !memcmp(e[g_end].soname, e[g].soname, e[g].stem); g_end++)
			;
		if (g_end - g < 2)
			continue;
		for (size_t p = g; p < g_end; p++)
			e[p].major = provider_soname_major(a, e[p].soname);
		sort_items(e + g, g_end - g, sizeof *e, cmp_stem_major);
		size_t run_end = g;	/* the end of p's run of one major: pairs start after it */
		for (size_t p = g; p < g_end; p++) {
			if (p == run_end)
				for (run_end = p + 1; run_end < g_end && e[run_end].major == e[p].major; run_end++)
					;
			for (size_t q = run_end; e[p].major && q < g_end; q++) {
				if (npair == cap) {
					size_t grown = cap ? cap * 2 : 8;
					pair = arena_grow(a, pair, 2 * npair, 2 * grown, sizeof *pair);
					cap = grown;
				}
				pair[2 * npair] = MIN(e[p].index, e[q].index);
				pair[2 * npair + 1] = MAX(e[p].index, e[q].index);
				npair++;
			}
		}
	}
	sort_items(pair, npair, 2 * sizeof *pair, cmp_index_pair);
	for (size_t k = 0; k < npair; k++)
		two_majors_finding(x, r, io, pair[2 * k], pair[2 * k + 1]);
}
