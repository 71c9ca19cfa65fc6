#include "pyenv/check.h"
#include "pyenv/checkctx.h"
#include "pyenv/requires.h"
#include "cxx/torch.h"
#include "cxx/torchabi.h"

#include <ctype.h>
#include "cuda/verdict.h"
#include "cxx/exports.h"
#include "diagnose/verdict.h"
#include "pyenv/interpreter.h"
#include "pyenv/providers.h"
#include "pyenv/pyimport.h"
#include "pyenv/selfload.h"

#include <limits.h>
#include <stdarg.h>


void check_set_fields(struct scan *s, struct finding *f, const struct inv_obj *io)
{
	if (!io)
		return;
	val_set(&s->arena, f->fields, "distribution", val_str(&s->arena, io->dist ? io->dist->name : NULL));
	val_set(&s->arena, f->fields, "module", val_str(&s->arena, io->module));
	val_set(&s->arena, f->fields, "package", val_str(&s->arena, io->package));
}

/* What `import PKG` does before the module's extension modules (selfload.h),
 * read once per package; NULL for a top-level module. */
static const struct pkg_init *pkg_init_of(struct check_ctx *x, const struct inv_obj *io)
{
	if (!io->site || !io->package || !strcmp(io->package, io->module ? io->module : ""))
		return NULL;
	const char *key = arena_printf(&x->s->arena, "%s/%s", io->site, io->package);
	struct pkg_init *pi = strmap_get(&x->pkg_init, key);
	for (const struct check_ctx *p = x->prev; !pi && p; p = p->prev)
		if ((pi = strmap_get(&p->pkg_init, key)) != NULL)
			strmap_put(&x->s->arena, &x->pkg_init, key, pi);	/* the same files: read once */
	if (!pi) {
		pi = arena_alloc(&x->s->arena, sizeof *pi);
		pkg_init_read(x->s, &x->c->inv.dists, io->site, io->package, pi);
		strmap_put(&x->s->arena, &x->pkg_init, key, pi);
	}
	return pi;
}

/* What the import of io's package finds missing (pyimport.h), once per
 * package: the first module-not-found finding of the package is the cause
 * of the others. */
struct pkg_missing {
	struct py_missing m;
	bool any;
	int first;	/* the package's first finding, or -1 */
};

static struct pkg_missing *pkg_missing_of(struct check_ctx *x, const struct inv_obj *io, const struct pkg_init *pi)
{
	const char *key = arena_printf(&x->s->arena, "%s/%s", io->site, io->package);
	struct pkg_missing *pm = strmap_get(&x->pkg_missing, key);
	if (pm)
		return pm;
	pm = arena_calloc(&x->s->arena, 1, sizeof *pm);
	pm->first = -1;	/* findings are this check's own */
	const struct pkg_missing *same = NULL;
	for (const struct check_ctx *p = x->prev; !same && p; p = p->prev)
		same = strmap_get(&p->pkg_missing, key);	/* the same files: resolved once */
	if (same) {
		pm->m = same->m;
		pm->any = same->any;
	} else {
		pm->any = py_first_missing(x->s, &x->c->env, pi, &pm->m);
	}
	strmap_put(&x->s->arena, &x->pkg_missing, key, pm);
	return pm;
}

/* Does some installed distribution name the project `name` in a
 * Requires-Dist line (under any marker)?  Then that is the distribution
 * that provides the module of that name, and pip can install it. */
static const char *required_project(struct check_ctx *x, const char *name)
{
	const char *norm = dist_normalize(&x->s->arena, name);
	const struct ptrvec *all = &x->c->inv.dists.all;
	for (size_t i = 0; i < all->n; i++) {
		const struct dist *d = all->item[i];
		for (size_t k = 0; k < d->requires.n; k++) {
			struct requirement r;
			if (requirement_parse(&x->s->arena, d->requires.item[k], &r) && str_eq(r.norm, norm))
				return r.name;
		}
	}
	return NULL;
}

/* `import PKG` raises ModuleNotFoundError before io loads: a module it
 * always imports is nowhere on sys.path. */
static bool module_missing(struct check_ctx *x, struct module_verdict *v, const struct inv_obj *io,
			   const struct pkg_init *pi)
{
	struct pkg_missing *pm = pkg_missing_of(x, io, pi);
	if (!pm->any)
		return false;
	struct scan *s = x->s;
	const struct py_missing *m = &pm->m;
	struct finding *f = finding_add(&s->findings, "module-not-found", SEV_ERROR, io->path);
	if (m->via_file)
		finding_title(&s->findings, f, "import %s fails: %s:%d imports %s, whose %s:%d imports %s, which is "
			      "not installed in this environment", io->package, m->file, m->line, m->import,
			      m->via_file, m->via_line, m->name);
	else
		finding_title(&s->findings, f, "import %s fails: %s:%d imports %s, which is not installed in this "
			      "environment", io->package, m->file, m->line, m->name);
	finding_line(&s->findings, f, "Python runs the package's __init__.py before %s: ModuleNotFoundError: "
		     "No module named '%s'", path_basename(io->path), m->name);
	const char *project = required_project(x, m->name);
	if (!project)
		finding_fix(&s->findings, f, "install the distribution that provides the module %s", m->name);
	check_set_fields(s, f, io);
	val_set_str(&s->arena, f->fields, "missing", m->name);
	val_set_str(&s->arena, f->fields, "import", m->import);
	val_set_str(&s->arena, f->fields, "imported_at", arena_printf(&s->arena, "%s:%d", m->file, m->line));
	if (m->via_file)
		val_set_str(&s->arena, f->fields, "via", arena_printf(&s->arena, "%s:%d", m->via_file, m->via_line));
	if (project)
		val_set_str(&s->arena, f->fields, "project", project);
	f->caused_by = pm->first;
	if (pm->first < 0)
		pm->first = f->index;
	v->state = V_FAILS;
	v->dlerror = arena_printf(&s->arena, "No module named '%s'", m->name);
	v->finding_end = s->findings.list.n;
	return true;
}

const struct self_load *check_self_load_of(struct check_ctx *x, const struct inv_obj *io)
{
	/* torch's own loads (_load_global_deps) are `import torch`, replayed
	 * whole (pyenv/importctx.h): not a self-loaded library verdict */
	const struct pkg_init *pi = io->is_extension || check_in_torch(x, io) ? NULL : pkg_init_of(x, io);
	for (size_t i = 0; pi && i < pi->nloads; i++)
		if (str_eq(pi->loads[i].path, io->path))
			return &pi->loads[i];
	return NULL;
}

/* Does the installed torch's file (relative to torch/) hold text? */
static bool torch_file_has(struct check_ctx *x, const char *file, const char *text)
{
	char *buf = NULL;
	size_t len = 0;
	struct diag d;
	diag_clear(&d);
	bool has = x->c->torch.found &&
		   fs_read_small(&x->s->fs, arena_printf(&x->s->arena, "%s/%s", x->c->torch.dir, file), 8u << 20, &buf,
				 &len, &d) == ST_OK && memmem(buf, len, text, strlen(text)) != NULL;
	free(buf);
	return has;
}

/* The OSError message `import PKG` raises when the load of io fails: the
 * dlerror, or for torch.ops.load_library of a torch whose torch/_ops.py
 * wraps it (2.9 and later), "Could not load this library: REALPATH". */
static const char *load_oserror(struct check_ctx *x, const struct self_load *sl, const struct inv_obj *io,
				const char *dlerror)
{
	if (!sl->call || !str_eq(sl->call, "torch.ops.load_library") || !x->c->torch.found)
		return dlerror;
	if (x->ops_wraps_error < 0)
		x->ops_wraps_error = torch_file_has(x, "_ops.py", "raise OSError(f\"Could not load this library: {path}\")");
	if (!x->ops_wraps_error)
		return dlerror;
	char real[PATH_MAX];
	int err;
	if (!fs_realpath(&x->s->fs, io->path, real, sizeof real, &err))
		snprintf(real, sizeof real, "%s", io->path);
	return arena_printf(&x->s->arena, "Could not load this library: %s (torch.ops.load_library's; the "
			    "dlerror: %s)", real, dlerror ? dlerror : "?");
}


/* What failing to load a library its package loads itself costs the user. */
static const char *self_load_consequence(struct check_ctx *x, const struct module_verdict *v,
					 const struct self_load *sl)
{
	struct arena *a = &x->s->arena;
	const char *pkg = v->io->package, *lib = path_basename(v->io->path);
	const char *when = sl->condition ? arena_printf(a, "when `%s` (%s:%d): ", sl->condition, sl->file,
							sl->condition_line) : "";
	bool ops = sl->call && strstr(sl->call, "load_library");
	const struct pkg_init *pi = pkg_init_of(x, v->io);
	if (sl->caught && pi && pi->op_use && strstr(pi->op_use, "register_fake(") &&
	    !torch_file_has(x, "library.py", "def register_fake("))
		/* torch 2.1: the registration itself fails, loaded or not */
		return arena_printf(a, "%s`import %s` fails, with or without %s: %s:%d runs `%s`, and this torch has no "
				    "torch.library.register_fake: AttributeError: module 'torch.library' has no attribute "
				    "'register_fake'", when, pkg, lib, pi->op_use_file, pi->op_use_line, pi->op_use);
	if (sl->caught && pi && pi->op_use && (size_t)(sl - pi->loads) < pi->op_use_after)
		return arena_printf(a, "%s`import %s` fails all the same: the load's OSError is caught (`%s`, %s:%d), but "
				    "%s:%d needs its operators as the import runs (`%s`), and torch raises RuntimeError: "
				    "operator %s does not exist: every module of %s is lost", when, pkg, sl->caught_by,
				    sl->caught_file, sl->caught_line, pi->op_use_file, pi->op_use_line, pi->op_use,
				    pi->op_use_name, pkg);
	if (sl->caught)
		return arena_printf(a, "%sthe failure is caught (`%s`, %s:%d): `import %s` goes on without %s, and %s: %s",
				    when, sl->caught_by, sl->caught_file, sl->caught_line, pkg, lib,
				    ops ? "the operators it registers with torch are missing" : "what it provides is missing",
				    ops ? arena_printf(a, "every call of one (torch.ops.%s.*) fails", pkg)
					: "every function of it fails");
	size_t nmod = 0;
	for (size_t i = 0; i < x->c->inv.nobj; i++) {
		const struct inv_obj *o = x->c->inv.obj[i];
		nmod += o->is_extension && o->site && o->package && str_eq(o->site, v->io->site) && str_eq(o->package, pkg);
	}
	return arena_printf(a, "%s`import %s` raises OSError: %s (the load at %s:%d is not inside a try that catches "
			    "it), so every module of %s is lost%s", when, pkg, load_oserror(x, sl, v->io, v->dlerror),
			    sl->file, sl->line, pkg, nmod ? arena_printf(a, ", its %zu extension module%s with it", nmod,
								  nmod == 1 ? "" : "s") : "");
}

/* Does the object need a library that lives in torch's folder? */
static const char *needs_torch_library(struct check_ctx *x, const struct inv_obj *io)
{
	const struct torch_layout *t = &x->c->torch;
	if (!t->found || io->obj->kind != OBJ_ELF || !io->obj->elf_ok)
		return NULL;
	for (size_t k = 0; k < io->obj->elf.nneeded; k++) {
		const struct ptrvec *hits = inventory_find(&x->c->inv, io->obj->elf.needed[k]);
		for (size_t i = 0; hits && i < hits->n; i++) {
			const struct inv_obj *h = hits->item[i];
			if (str_starts(h->path, t->dir) && h->path[strlen(t->dir)] == '/')
				return io->obj->elf.needed[k];
		}
	}
	return NULL;
}

bool check_in_torch(const struct check_ctx *x, const struct inv_obj *io)
{
	const struct torch_layout *t = &x->c->torch;
	return t->found && str_starts(io->path, t->dir) && io->path[strlen(t->dir)] == '/';
}

static bool loaded_by_torch_import(const struct check_ctx *x, const struct inv_obj *io)
{
	if (!x->torch_ok)
		return false;
	for (size_t i = 0; i < x->torchp.maps.n; i++)
		if (((struct lmap *)x->torchp.maps.item[i])->obj == io->obj)
			return true;
	return false;
}

/* ---- environment-aware explanations of a failed load ---- */

/* ---- one module ---- */

/* A .cpython-XY- suffix another Python: this interpreter never imports it. */
/* Does one of the Tag: lines of d's WHEEL accept this interpreter (the
 * check pip made as it installed it)?  cp3X-abi3 from 3.X on, cp3X-cp3X[t]
 * and py3-none for exactly this Python. */
static bool wheel_accepts(struct check_ctx *x, const struct dist *d)
{
	const struct pyenv *e = &x->c->env;
	char *text;
	size_t len;
	struct diag dg;
	diag_clear(&dg);
	if (!d->meta || d->kind != DIST_INFO || !e->py_major ||
	    fs_read_small(&x->s->fs, arena_printf(&x->s->arena, "%s/WHEEL", d->meta), 1u << 16, &text, &len, &dg) != ST_OK)
		return false;
	bool free_threaded = e->ext_suffix && strstr(e->ext_suffix, "t-");
	bool ok = false;
	for (char *p = text; p < text + len && !ok;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		char *le = nl ? nl : text + len;
		if ((size_t)(le - p) > 5 && strncmp(p, "Tag:", 4) == 0) {
			char tag[128];
			snprintf(tag, sizeof tag, "%.*s", (int)(le - p - 4), p + 4);
			char *t = tag;
			while (*t == ' ')
				t++;
			char *abi = strchr(t, '-');
			if (abi) {
				*abi++ = '\0';
				char *plat = strchr(abi, '-');
				if (plat)
					*plat = '\0';
				int minor = -1;
				if (str_starts(t, "cp3") || str_starts(t, "py3"))
					minor = t[3] ? (int)strtol(t + 3, NULL, 10) : -1;
				bool py3 = str_starts(t, "py3") || str_starts(t, "cp3");
				char own[16];
				snprintf(own, sizeof own, "cp%d%d%s", e->py_major, e->py_minor, free_threaded ? "t" : "");
				if (str_eq(abi, "abi3"))
					ok = str_starts(t, "cp3") && minor >= 0 && minor <= e->py_minor && !free_threaded;
				else if (str_eq(abi, "none"))
					ok = py3 && (minor < 0 || minor == e->py_minor);
				else
					ok = str_eq(abi, own);
			}
		}
		p = le + 1;
	}
	free(text);
	return ok;
}

static bool other_python(struct check_ctx *x, const struct inv_obj *io)
{
	const char *suffix = x->c->env.ext_suffix;
	const char *name = path_basename(io->path);
	const char *cp = strstr(name, ".cpython-");
	if (!io->is_extension || io->in_stdlib || !suffix || !cp || str_eq(cp, suffix))
		return false;
	struct scan *s = x->s;
	if (io->dist && wheel_accepts(x, io->dist)) {
		/* pip installed a wheel whose tag is this Python's: its modules for
		 * other Pythons are the vendor's (one per CPython), never imported */
		return true;
	}
	struct finding *f = finding_add(&s->findings, "python-abi-mismatch", SEV_WARNING, io->path);
	const char *tag = arena_strndup(&s->arena, cp + 1, strcspn(cp + 1, "."));
	finding_title(&s->findings, f, "%s is built for %s; Python %d.%d looks for %s and never imports it",
		      name, tag, x->c->env.py_major, x->c->env.py_minor, suffix + 1);
	val_set_str(&s->arena, f->fields, "built_for", tag);
	val_set_str(&s->arena, f->fields, "expected_suffix", suffix);
	finding_line(&s->findings, f, "`import %s` raises ModuleNotFoundError (or finds another file)",
		     io->module ? io->module : "?");
	finding_fix(&s->findings, f, "install the wheel built for this Python (%s) or use the Python it was "
				     "built for", suffix + 1);
	check_set_fields(s, f, io);
	return true;
}

/* The SONAME a failed load missed that `import torch` loads, or NULL. */
static const char *soname_torch_preloads(struct check_ctx *x, const struct dlopen_result *r)
{
	if (!x->torch_ok || r->ok)
		return NULL;
	for (size_t i = 0; i < r->nfail; i++) {
		const struct failure *f = &r->fail[i];
		if (f->kind != FAIL_NOT_FOUND || !f->name)
			continue;
		for (size_t k = 0; k < x->torchp.maps.n; k++) {
			const struct lmap *m = x->torchp.maps.item[k];
			if (m->obj->kind == OBJ_ELF && m->obj->elf_ok && m->obj->elf.soname &&
			    str_eq(m->obj->elf.soname, f->name))
				return f->name;
		}
	}
	return NULL;
}

/* Cheap signs of CUDA, from the section and NEEDED names alone: reading
 * the fatbins themselves waits until there is a GPU to judge them for. */
static bool looks_cuda(const struct object *o)
{
	if (o->kind != OBJ_ELF || !o->elf_ok)
		return false;
	const struct elf_file *ef = &o->elf;
	for (size_t i = 0; i < ef->nsec; i++)
		if (str_eq(ef->sec[i].name, ".nv_fatbin") || str_eq(ef->sec[i].name, "__nv_relfatbin"))
			return true;
	for (size_t i = 0; i < ef->nneeded; i++)
		if (str_starts(ef->needed[i], "libcudart.so"))
			return true;
	return false;
}

/* Does the package's __init__.py name the module (its file name up to the
 * first dot, as a whole word): imported when the package is? */
static bool package_init_names(struct check_ctx *x, const struct inv_obj *io, const char *stem)
{
	if (!io->site || !io->package)
		return false;
	char *text;
	size_t len;
	struct diag d;
	diag_clear(&d);
	const char *init = arena_printf(&x->s->arena, "%s/%s/__init__.py", io->site, io->package);
	if (fs_read_small(&x->s->fs, init, 4u << 20, &text, &len, &d) != ST_OK)
		return false;
	bool yes = false;
	size_t n = strlen(stem);
	for (const char *p = text; n && (p = strstr(p, stem)) != NULL; p += n) {
		char before = p == text ? ' ' : p[-1], after = p[n];
		bool word = !(isalnum((unsigned char)before) || before == '_') &&
			    !(isalnum((unsigned char)after) || after == '_');
		if (word) {
			yes = true;
			break;
		}
	}
	free(text);
	return yes;
}

/*
 * Whether a module decides if its package works on a GPU: torch's own
 * kernels, the variant folder the package loads there (judged only for the
 * GPUs that load it), a module of no package, or one the package's
 * __init__.py imports.  Any other module of a package is optional: the
 * package imports it on demand (FlashMLA-style modules built only for the
 * GPUs that use them).  why says which rule decided.
 */
static bool module_is_core(struct check_ctx *x, const struct inv_obj *io, const char **why)
{
	const char *variant = NULL;
	if (check_in_torch(x, io)) {
		*why = "torch's own kernels";
		return true;
	}
	if (cuda_variant_package(&x->s->arena, io->path, &variant)) {
		*why = arena_printf(&x->s->arena, "%s loads %s/ on this GPU", io->package ? io->package : "the package",
				    variant);
		return true;
	}
	if (!io->package || !io->module || !strchr(io->module, '.')) {
		*why = "a module of no package";
		return true;
	}
	const char *base = path_basename(io->path);
	const char *stem = arena_strndup(&x->s->arena, base, strcspn(base, "."));
	if (package_init_names(x, io, stem)) {
		*why = arena_printf(&x->s->arena, "%s/__init__.py imports %s", io->package, stem);
		return true;
	}
	*why = arena_printf(&x->s->arena, "%s/__init__.py does not import %s: the package loads it on demand",
			    io->package, stem);
	return false;
}

/* A module that loads: can its kernels run on the target GPUs, with the
 * driver there (cuda/verdict.h; sgl_kernel's variant folders honoured).
 * No kernel for a GPU is an error for a module that decides whether its
 * package works there, a warning for an optional one. */
static void judge_gpu(struct check_ctx *x, struct inv_obj *io, struct module_verdict *v)
{
	struct scan *s = x->s;
	if (!looks_cuda(io->obj))
		return;
	if (!x->cuda.host.ngpu && !x->cuda.host.driver_known) {
		cuda_note_not_checked(&x->cuda, io->path);	/* nothing to judge against */
		v->finding_end = s->findings.list.n;
		return;
	}
	const struct cuda_code *k = cuda_code_of(&x->cuda, io->obj);
	if (!k || (!cuda_code_has_device_code(k) && !k->runtime_major))
		return;
	size_t before = s->findings.list.n;
	if (!x->cuda.host.ngpu && cuda_code_has_device_code(k))
		cuda_note_not_checked(&x->cuda, io->path);
	cuda_judge_installed(&x->cuda, io->obj);
	const char *why = NULL;
	bool core = true;
	for (size_t i = before; i < s->findings.list.n; i++) {
		struct finding *f = findings_at(&s->findings, i);
		check_set_fields(s, f, io);
		if (str_eq(f->id, "gpu-arch-missing")) {
			if (!why)
				core = module_is_core(x, io, &why);
			val_set_bool(&s->arena, f->fields, "optional_module", !core);
			val_set_str(&s->arena, f->fields, "role", why);
			if (!core) {
				f->severity = SEV_WARNING;
				f->guess = true;	/* drawn from the package's files, not from its code paths */
				finding_line(&s->findings, f, "optional module (%s): the package works on this GPU "
							      "without it, but any call into it fails there", why);
				/* say it first: it is what the warning is about */
				void **l = f->lines.item;
				void *last = l[f->lines.n - 1];
				memmove(l + 1, l, (f->lines.n - 1) * sizeof *l);
				l[0] = last;
			} else {
				finding_line(&s->findings, f, "it decides whether %s works on this GPU (%s)",
					     io->dist ? io->dist->name : io->package ? io->package : "it", why);
			}
		}
		if (f->severity == SEV_ERROR)
			v->gpu_fails = true;
	}
}

/* The libraries of its own distribution `import PKG` loads itself before
 * the module (selfload.h), loaded into p in that order up to the first that
 * fails uncaught (an OSError no try catches ends the import there; a caught
 * one is skipped, as the import goes on without it); the assumption is added
 * to why, with the file and line each comes from.  Loads under a condition
 * abiscope cannot decide are made only when conditional is set (of them,
 * only `only` when it is not NULL). */
static const char *self_loads(struct check_ctx *x, struct process *p, const struct inv_obj *io,
			      const struct pkg_init *pi, const char *why, bool conditional,
			      const struct self_load *only, const struct self_load **raised, const char **raised_err)
{
	if (!pi)
		return why;
	for (size_t i = 0; i < pi->nloads; i++) {
		const struct self_load *sl = &pi->loads[i];
		if (str_eq(sl->path, io->path))
			break;	/* the module itself: what came before it is the state it meets */
		if (sl->condition && (!conditional || (only && sl != only)))
			continue;
		struct dlopen_result dr;
		proc_dlopen(p, sl->path, sl->global, &dr);
		if (!dr.ok && sl->caught)
			continue;	/* caught: the import goes on without it */
		if (!dr.ok && sl->list_dist && raised) {
			/* a preload list's file: the loader raises, no module of the package imports */
			*raised = sl;
			*raised_err = dr.dlerror;
		}
		if (!dr.ok)
			break;
		if (!sl->condition)
			why = arena_printf(&x->s->arena, "%s%sassuming %s loads %s itself first (%s:%d)", why ? why : "",
					   why ? "; " : "", io->package, path_basename(sl->path), sl->file, sl->line);
	}
	return why;
}

/* Does the module load after the loads of pi, conditional ones too (only
 * `only` of them when not NULL)?  Tried in p from its current state. */
static bool loads_with(struct check_ctx *x, struct process *p, const struct inv_obj *io, const struct pkg_init *pi,
		       const struct self_load *only)
{
	struct proc_mark mark;
	proc_mark_save(p, &mark);
	self_loads(x, p, io, pi, NULL, true, only, NULL, NULL);
	struct dlopen_result r;
	proc_dlopen(p, io->path, false, &r);
	proc_rewind(p, &mark, &r);
	return r.ok;
}

/* The load of pi, under a condition abiscope cannot decide, that makes the
 * module load: the first that does alone, else the first of those that do
 * together; NULL when none helps. */
static const struct self_load *conditional_cure(struct check_ctx *x, struct process *p, const struct inv_obj *io,
						const struct pkg_init *pi)
{
	const struct self_load *first = NULL;
	for (size_t i = 0; pi && i < pi->nloads; i++) {
		const struct self_load *sl = &pi->loads[i];
		if (str_eq(sl->path, io->path))
			break;
		if (!sl->condition)
			continue;
		if (!first)
			first = sl;
		if (loads_with(x, p, io, pi, sl))
			return sl;
	}
	return first && loads_with(x, p, io, pi, NULL) ? first : NULL;
}

/* Whether the module's distribution requires the one that owns h (its
 * Requires-Dist, for this interpreter): where a library whose path the
 * package computes comes from (faiss-gpu-cu12 loads libcudart.so.12 of
 * nvidia-cuda-runtime-cu12, found through importlib.metadata). */
static bool required_by(struct check_ctx *x, const struct inv_obj *io, const struct inv_obj *h)
{
	if (!io->dist || !h->dist || h->dist == io->dist || !h->dist->norm)
		return false;
	struct marker_env me = { NULL, x->c->env.py_major, x->c->env.py_minor, NULL };
	struct requirement r;
	return dist_requirement_on(&x->s->arena, io->dist, h->dist->norm, &me, &r);
}

/* A load whose library abiscope cannot name could make the module load
 * when its first failure is one such a load cures: a library not found
 * that a file of the package or of a distribution it requires provides,
 * or (the load is RTLD_GLOBAL) an undefined symbol. */
static bool unnamed_could_cure(struct check_ctx *x, const struct inv_obj *io, const struct pkg_init *pi,
			       const struct dlopen_result *r)
{
	if (!pi || !pi->unnamed || r->ok || !r->nfail)
		return false;
	const struct failure *f = &r->fail[r->first < r->nfail ? r->first : 0];
	if (f->kind == FAIL_UNDEFINED)
		return pi->unnamed->global;
	if (f->kind != FAIL_NOT_FOUND || !f->name || strchr(f->name, '/'))
		return false;
	const char *pkgdir = arena_printf(&x->s->arena, "%s/%s/", io->site, io->package);
	const struct ptrvec *hits = inventory_find(&x->c->inv, f->name);
	for (size_t i = 0; hits && i < hits->n; i++) {
		const struct inv_obj *h = hits->item[i];
		if (str_starts(h->path, pkgdir) || required_by(x, io, h))
			return true;
	}
	return false;
}

/* The module's verdict depends on sl: its findings [first, end) become what
 * happens when the library is not loaded (notes under one warning that
 * says so, with the file and line of the call). */
static void depends_on(struct check_ctx *x, struct module_verdict *v, const struct self_load *sl, size_t first,
		       const char *dlerror)
{
	struct scan *s = x->s;
	const struct inv_obj *io = v->io;
	struct finding *f = finding_add(&s->findings, "depends-on-self-load", SEV_WARNING, io->path);
	const char *mod = io->module ? io->module : path_basename(io->path);
	if (sl->path)
		finding_title(&s->findings, f, "cannot tell whether %s imports: it does only if %s loads %s itself "
			      "(%s:%d), which it does only when `%s` (line %d)", mod, io->package,
			      path_basename(sl->path), sl->file, sl->line, sl->condition, sl->condition_line);
	else
		finding_title(&s->findings, f, "cannot tell whether %s imports: %s loads a library itself at %s:%d "
			      "that abiscope cannot name, and the verdict depends on it", mod, io->package, sl->file,
			      sl->line);
	finding_line(&s->findings, f, "if it is not loaded first: %s", dlerror ? dlerror : "the load fails");
	if (sl->path)
		finding_line(&s->findings, f, "with %s loaded first, %s loads", path_basename(sl->path),
			     path_basename(io->path));
	finding_fix(&s->findings, f, "settle it with a real import in the environment: python -c 'import %s'", mod);
	check_set_fields(s, f, io);
	val_set_str(&s->arena, f->fields, "file", sl->file);
	val_set_int(&s->arena, f->fields, "line", sl->line);
	val_set_str(&s->arena, f->fields, "loads", sl->path);
	val_set_str(&s->arena, f->fields, "condition", sl->condition);
	val_set_str(&s->arena, f->fields, "error", dlerror);
	for (size_t i = first; i + 1 < s->findings.list.n; i++) {
		struct finding *g = findings_at(&s->findings, i);
		g->severity = SEV_NOTE;
		if (g->caused_by < 0)
			g->caused_by = f->index;
	}
	v->state = V_CANNOT_TELL;
	v->depends_on = sl;
}

/* torch is not installed and the package imports it only under a
 * condition abiscope cannot decide: the import may stop there or not. */
static void torch_import_depends(struct check_ctx *x, struct module_verdict *v, const struct pkg_init *pi)
{
	struct scan *s = x->s;
	const struct inv_obj *io = v->io;
	const char *mod = io->module ? io->module : path_basename(io->path);
	struct finding *f = finding_add(&s->findings, "depends-on-torch-import", SEV_WARNING, io->path);
	finding_title(&s->findings, f, "cannot tell whether %s's modules import: it imports torch (%s:%d), which is "
		      "not installed, only when `%s`", io->package, pi->torch_file, pi->torch_line, pi->torch_cond);
	finding_line(&s->findings, f, "if that holds: ModuleNotFoundError: No module named 'torch'");
	finding_fix(&s->findings, f, "settle it with a real import in the environment: python -c 'import %s'", mod);
	check_set_fields(s, f, io);
	val_set_str(&s->arena, f->fields, "file", pi->torch_file);
	val_set_int(&s->arena, f->fields, "line", pi->torch_line);
	val_set_str(&s->arena, f->fields, "condition", pi->torch_cond);
	v->state = V_CANNOT_TELL;
	v->finding_end = s->findings.list.n;
}

/* torch is not installed and installed distributions require it (their
 * Requires-Dist): one finding, the root of everything that fails for it. */
static void torch_missing(struct check_ctx *x)
{
	struct scan *s = x->s;
	struct env_check *c = x->c;
	if (c->torch.found || c->env.kind == PYENV_PLAIN)
		return;
	struct marker_env me = { NULL, c->env.py_major, c->env.py_minor, NULL };
	struct value *by = val_arr(&s->arena);
	const char *spec = NULL, *names = "";
	for (size_t i = 0; i < c->inv.dists.all.n; i++) {
		const struct dist *d = c->inv.dists.all.item[i];
		struct requirement r;
		if (!dist_requirement_on(&s->arena, d, "torch", &me, &r))
			continue;
		val_push(&s->arena, by, val_str(&s->arena, d->name));
		if (by->u.list.n <= 3)
			names = arena_printf(&s->arena, "%s%s%s", names, by->u.list.n > 1 ? ", " : "", d->name);
		if (!spec && r.spec[0])
			spec = arena_printf(&s->arena, "torch%s (%s)", r.spec, d->name);
	}
	if (!by->u.list.n)
		return;
	struct finding *f = finding_add(&s->findings, "module-not-found", SEV_ERROR, NULL);
	finding_title(&s->findings, f, "torch is not installed, and %s%s require%s it", names,
		      by->u.list.n > 3 ? arena_printf(&s->arena, " and %zu more", by->u.list.n - 3) : "",
		      by->u.list.n == 1 ? "s" : "");
	if (spec)
		finding_line(&s->findings, f, "Requires-Dist: %s", spec);
	val_set_str(&s->arena, f->fields, "missing", "torch");
	val_set(&s->arena, f->fields, "required_by", by);
	finding_fix(&s->findings, f, "install the torch they require");
	x->import_fails = f->index;
}

/* A failure `import torch` would have prevented had it worked: a library of
 * torch's own, or one in torch's folder or an NVIDIA wheel's (it loads or
 * preloads them), or one a package's import loads itself after importing
 * torch (torchaudio's libtorchaudio.so: once it loads, its modules find it
 * loaded), or an undefined torch symbol. */
static bool torch_would_mend(struct check_ctx *x, const struct finding *f)
{
	const char *lib = val_get_str(f->fields, "library");
	if (str_eq(f->id, "library-not-found") && lib) {
		if (torch_is_torch_library(lib))
			return true;
		const struct ptrvec *hits = inventory_find(&x->c->inv, path_basename(lib));
		for (size_t i = 0; hits && i < hits->n; i++) {
			const struct inv_obj *h = hits->item[i];
			if (check_in_torch(x, h) || strstr(h->path, "/nvidia/") || check_self_load_of(x, h))
				return true;
		}
		return false;
	}
	const char *sym = val_get_str(f->fields, "symbol");
	bool stable;
	if (!str_eq(f->id, "undefined-symbol") || !sym)
		return false;
	if (torchabi_is_torch_symbol(sym, &stable))
		return true;
	/* the API of a CUDA library torch's import loads globally or preloads */
	static const char *const apis[] = { "cublas", "cuda", "nvrtc", "cufft", "curand", "cusparse", "cusolver",
					     "nccl", "cudnn", "nvJitLink", "cupti", "nvtx", "cuFile" };
	for (size_t i = 0; i < ARRAY_SIZE(apis); i++)
		if (str_starts(sym, apis[i]))
			return true;
	return false;
}

/* `import PKG` stops at its preload list (selfload.h): an entry whose file
 * its distribution does not have, or (dlerror) one that does not load;
 * every module of the package is lost.  Or it may: a list abiscope cannot
 * read makes every module cannot tell. */
static void list_stops_import(struct check_ctx *x, struct module_verdict *v, const struct inv_obj *io,
			      const struct pkg_init *pi, const struct self_load *sl, const char *dlerror)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	const char *mod = io->module ? io->module : path_basename(io->path);
	const char *what = dlerror ? arena_printf(a, "the list names %s of %s, which does not load: %s",
						  path_basename(sl->path), sl->list_dist, dlerror)
				   : pi->list_why;
	struct finding *f;
	if (dlerror || pi->list_certain) {
		f = finding_add(&s->findings, "preload-fails", SEV_ERROR, io->path);
		finding_title(&s->findings, f, "import %s fails at %s:%d, before %s: %s", io->package, sl->file, sl->line,
			      path_basename(io->path), what);
		finding_line(&s->findings, f, "the package's loader preloads (RTLD_GLOBAL) each file its list names, "
			     "from that distribution's RECORD, and raises when one is not there or does not load");
		v->state = V_FAILS;
		v->dlerror = arena_printf(a, "`import %s` raises at %s:%d (%s)", io->package, sl->file, sl->line, what);
	} else {
		f = finding_add(&s->findings, "depends-on-self-load", SEV_WARNING, io->path);
		finding_title(&s->findings, f, "cannot tell whether %s imports: `import %s` preloads libraries by a "
			      "list (%s:%d), and %s", mod, io->package, sl->file, sl->line, what);
		finding_fix(&s->findings, f, "settle it with a real import in the environment: python -c 'import %s'",
			    mod);
		v->state = V_CANNOT_TELL;
		v->depends_on = sl;
	}
	check_set_fields(s, f, io);
	val_set_str(a, f->fields, "file", sl->file);
	val_set_int(a, f->fields, "line", sl->line);
	val_set_str(a, f->fields, "loads", sl->path);
	val_set_str(a, f->fields, "preloads_from", sl->list_dist);
	val_set_str(a, f->fields, "error", dlerror);
	v->finding_end = s->findings.list.n;
}

static void judge(struct check_ctx *x, struct inv_obj *io, struct module_verdict *v)
{
	struct scan *s = x->s;
	memset(v, 0, sizeof *v);
	v->io = io;
	v->finding_first = s->findings.list.n;
	if (!x->base_ok) {
		v->state = V_NOT_CHECKED;
		v->finding_end = v->finding_first;
		return;
	}
	if (loaded_by_torch_import(x, io)) {
		v->state = V_OK;
		v->in_torch_import = true;
		v->finding_end = v->finding_first;
		return;
	}
	if (other_python(x, io)) {
		v->state = V_OTHER_PYTHON;
		v->finding_end = s->findings.list.n;
		return;
	}
	const struct pkg_init *pi = pkg_init_of(x, io);
	if (!x->c->torch.found && io->is_extension && pi && !pi->torch_import_fatal && pi->torch_cond) {
		torch_import_depends(x, v, pi);
		return;
	}
	if (!x->c->torch.found && io->is_extension && pi && pi->torch_import_fatal) {
		/* Python stops at the package's `import torch`, before any dlopen */
		struct finding *f = finding_add(&s->findings, "module-not-found", SEV_ERROR, io->path);
		finding_title(&s->findings, f, "%s imports torch (%s:%d), and torch is not installed in this "
			      "environment", io->package, pi->torch_file, pi->torch_line);
		finding_fix(&s->findings, f, "install the torch %s was built for", io->package);
		check_set_fields(s, f, io);
		val_set_str(&s->arena, f->fields, "missing", "torch");
		f->caused_by = x->import_fails;	/* torch is missing: one cause (torch_missing) */
		v->state = V_FAILS;
		v->dlerror = "No module named 'torch'";
		v->finding_end = s->findings.list.n;
		return;
	}
	if (io->is_extension && pi && module_missing(x, v, io, pi))
		return;
	if (io->is_extension && pi && pi->list_problem) {
		list_stops_import(x, v, io, pi, pi->list_problem, NULL);
		return;
	}
	struct process *p = &x->base;
	const char *why = NULL;
	bool own_first = pi && pi->torch == PKG_OWN_FIRST;
	const char *order_note = NULL;
	if (x->c->torch.found && !check_in_torch(x, io)) {
		const char *lib = needs_torch_library(x, io);
		if (own_first && lib)
			/* `import PKG` reaches its own extension modules before torch */
			order_note = arena_printf(&s->arena, "`import %s` imports its extension module before torch "
							     "(%s:%d); %s needs %s from torch/lib, so it loads only "
							     "when torch is imported first",
						  io->package, pi->order_file, pi->order_line,
						  path_basename(io->path), lib);
		else if (lib)
			why = arena_printf(&s->arena, "assuming torch is imported first: %s needs %s from torch/lib",
					   path_basename(io->path), lib);
		else if (pi && pi->torch == PKG_TORCH_FIRST)
			why = arena_printf(&s->arena, "assuming torch is imported first: %s imports torch (%s:%d)",
					   io->package, pi->order_file, pi->order_line);
	} else if (check_in_torch(x, io) && x->c->torch_replayed) {
		why = "in the state `import torch` leaves";
	}
	if (why && x->torch_ok)
		p = &x->torchp;
	/* it needs torch imported first, and that import fails (or torch is missing): what it
	 * lacks then is that failure's */
	bool torch_failed = x->import_fails >= 0 && !check_in_torch(x, io) &&
			    ((why && !x->torch_ok) || !x->c->torch.found);
	struct proc_mark mark;
	proc_mark_save(p, &mark);
	const struct self_load *raised = NULL;
	const char *raised_err = NULL;
	why = self_loads(x, p, io, pi, why, false, NULL, &raised, &raised_err);
	if (raised) {
		proc_rewind(p, &mark, NULL);
		list_stops_import(x, v, io, pi, raised, raised_err ? raised_err : "the load fails");
		return;
	}
	struct why_result wr;
	memset(&wr, 0, sizeof wr);
	size_t assumed_before = p->assumed.n;
	proc_dlopen(p, io->path, false, &wr.target);
	const char *preloaded = p != &x->torchp ? soname_torch_preloads(x, &wr.target) : NULL;
	if (preloaded) {
		/* `import torch` would load the missing SONAME, but nothing in
		 * `import PKG` imports torch first: a real failure, said with what
		 * would make it load (judging it after torch was a false "loads") */
		const char *n = arena_printf(&s->arena, "it loads only when torch is imported first (`import torch` "
							"loads %s), which %s does not do", preloaded,
					     io->package && pi ? io->package : "importing it");
		why = why ? arena_printf(&s->arena, "%s; %s", why, n) : n;
	}
	/* a symbol bound by assumption to a library a snapshot describes by
	 * name only: the verdict is a guess, and says so */
	v->guess = p->assumed.n > assumed_before;
	if (!wr.target.ok && order_note)
		why = why ? arena_printf(&s->arena, "%s; %s", why, order_note) : order_note;
	v->context = why;
	wr.proc = *p;
	wr.loads = wr.target.ok;
	wr.dlerror = wr.target.dlerror;
	struct why_request q;
	memset(&q, 0, sizeof q);
	q.target = io->path;
	q.exe = p->main ? p->main->path : NULL;
	q.cxx = x->ix;
	size_t before = s->findings.list.n;
	why_findings(s, &q, &wr);
	size_t after = s->findings.list.n;
	for (size_t i = before; i < after; i++) {
		struct finding *f = findings_at(&s->findings, i);
		check_set_fields(s, f, io);
		if (why)
			val_set_str(&s->arena, f->fields, "context", why);
		if (torch_failed && f->caused_by < 0 && torch_would_mend(x, f))
			f->caused_by = x->import_fails;
		if (str_eq(f->id, "library-not-found") && f->caused_by < 0)
			check_explain_missing(x, f, io);
	}
	check_two_majors(x, &wr.target, io);
	/* an object of another machine never loads: what it needs is moot */
	if (io->is_extension && io->obj->kind == OBJ_ELF && io->obj->elf_ok && io->obj->elf.machine == p->facts.machine)
		check_cuda_major_vs_torch(x, io);
	proc_rewind(p, &mark, &wr.target);
	v->state = wr.target.ok ? V_OK : V_FAILS;
	v->dlerror = wr.target.dlerror;
	if (v->state == V_OK) {
		judge_gpu(x, io, v);
	} else {
		/* not known to fail when a load of its package abiscope cannot
		 * decide (or name) would make it load */
		const struct self_load *sl = conditional_cure(x, p, io, pi);
		if (!sl && unnamed_could_cure(x, io, pi, &wr.target))
			sl = pi->unnamed;
		if (sl)
			depends_on(x, v, sl, v->finding_first, wr.target.dlerror);
	}
	v->finding_end = s->findings.list.n;
}

/* ---- environment findings ---- */

/*
 * Files named like extension modules that are no file Python can import
 * (a FIFO, a socket, a directory, a link to nothing or in a loop, one it
 * may not read, a path over PATH_MAX): the import fails, so each is a
 * failing module, with the reason.
 */

/* ---- the pipeline ---- */

/* The CUDA toolkit's stub libcuda.so: it exports the driver API, so it can
 * stand for the driver when checking a machine that has none. */
const char *check_find_driver_stub(struct scan *s, const struct pyenv *e, const char *cuda_home)
{
	const char *cands[8];
	size_t n = 0;
	if (cuda_home && *cuda_home) {
		cands[n++] = arena_printf(&s->arena, "%s/lib64/stubs/libcuda.so", cuda_home);
		cands[n++] = arena_printf(&s->arena, "%s/lib/stubs/libcuda.so", cuda_home);
	}
	cands[n++] = "/usr/local/cuda/lib64/stubs/libcuda.so";
	for (size_t i = 0; e && i < e->nsite && n < ARRAY_SIZE(cands); i++)
		cands[n++] = arena_printf(&s->arena, "%s/nvidia/cu13/lib/stubs/libcuda.so", e->site[i]);
	for (size_t i = 0; i < n; i++) {
		struct fs_stat st;
		fs_stat(&s->fs, cands[i], &st);
		if (st.kind == FS_REGULAR)
			return cands[i];
	}
	return NULL;
}

/* The GPUs and driver the CUDA verdicts are judged for. */
static void prepare_gpu(struct check_ctx *x)
{
	struct scan *s = x->s;
	const struct check_options *o = x->o;
	struct cuda_host *h = &x->cuda.host;
	for (size_t i = 0; i < o->ngpu_specs; i++)
		cuda_host_add_spec(h, o->gpu_specs[i]);
	for (size_t i = 0; i < o->ngpu_cc; i++)
		cuda_host_add_gpu(h, o->gpu_cc[i], o->gpu_names ? o->gpu_names[i] : NULL, "the snapshot");
	if (o->driver)
		cuda_host_set_driver(h, o->driver);
	/* a probe only when something in the environment carries device code */
	bool any = false;
	for (size_t i = 0; i < x->c->inv.nobj && !any; i++)
		any = looks_cuda(x->c->inv.obj[i]->obj);
	if (!any)
		return;
	struct gpu_probe probe;
	bool described = s->fs.vfs && s->fs.vfs->exclusive;	/* a snapshot: its GPUs were given */
	cuda_host_complete(&s->arena, &s->fs, !o->no_driver && !fs_is_rooted(&s->fs) && !described, h, &probe);
	x->c->gpu_line = cuda_host_line(&s->arena, h);
}

/* What the check reads of the environment's files, and of nothing else:
 * the environment, the walk and its distributions, torch's layout. */
static enum status read_env(struct check_ctx *x, const char *path, struct diag *d)
{
	struct scan *s = x->s;
	struct env_check *c = x->c;
	enum status st;
	if (x->o->python)
		st = pyenv_open(s, x->o->python, &c->env, d);
	else if (path)
		st = pyenv_open(s, path, &c->env, d);
	else
		st = pyenv_default(s, x->o->virtual_env, x->o->conda_prefix, x->o->path_env, NULL, NULL,
				   &c->env, d);
	if (st != ST_OK)
		return st;
	if (x->o->python && path) {
		/* --python gives the interpreter; PATH is still what to check */
		struct pyenv outer = c->env;
		struct pyenv inner;
		if (pyenv_open(s, path, &inner, d) == ST_OK && inner.kind == PYENV_PLAIN) {
			inner.python = outer.python;
			inner.py_major = outer.py_major;
			inner.py_minor = outer.py_minor;
			inner.site = outer.site;
			inner.nsite = outer.nsite;
			c->env = inner;
		}
	}
	inventory_build(s, &c->env, &c->inv);
	c->externally_managed = pyenv_externally_managed(s, &c->env);
	torch_layout_read(s, &c->env, &c->torch);
	return ST_OK;
}

/* The same from an earlier check of the same files (check_options.same_files). */
static void take_reads(struct check_ctx *x, const struct env_check *prev)
{
	struct env_check *c = x->c;
	c->env = prev->env;
	c->inv = prev->inv;
	c->externally_managed = prev->externally_managed;
	c->torch = prev->torch;
	if (prev->sysowner.read)
		c->sysowner = prev->sysowner;	/* read: never written again */
	x->prev = prev->ctx;
	x->ops_wraps_error = prev->ctx->ops_wraps_error;
	/* the exports of the same files: indexed once (a new round of budgets);
	 * none when that check stopped before indexing anything */
	x->ix = prev->ctx->ix;
	if (x->ix)
		cxx_index_new_round(x->ix);
	if (prev->ctx->toolkit_read) {
		x->toolkit = prev->ctx->toolkit;
		x->toolkit_read = true;
	}
}

static enum status prepare(struct check_ctx *x, const char *path, struct diag *d)
{
	struct scan *s = x->s;
	struct env_check *c = x->c;
	const struct env_check *prev = x->o->same_files;
	if (prev) {
		take_reads(x, prev);
	} else {
		enum status st = read_env(x, path, d);
		if (st != ST_OK)
			return st;
	}
	if (!x->ix) {
		cxx_index_init(&x->cxx, &s->arena);
		x->ix = &x->cxx;
	}
	cuda_ctx_init(&x->cuda, s, FATBIN_SCAN_REGISTERED);
	prepare_gpu(x);
	if (x->o->torch_rtld_global)
		c->torch.rtld_global_with_libtorch = true;
	/* the process every import happens in */
	const char *exe = c->env.python;
	struct interp_result ir;
	if (!exe) {
		interp_resolve(&s->arena, &s->fs, "python3", x->o->path_env, NULL, NULL, &ir);
		exe = ir.path;
		if (!exe)
			c->python_problem = ir.problem;
	}
	c->process_exe = exe;
	struct proc_options po;
	memset(&po, 0, sizeof po);
	po.ld_library_path = x->o->ld_library_path;
	po.ld_bind_now = x->o->ld_bind_now;
	struct diag pd;
	diag_clear(&pd);
	if (c->env.startup_error)
		c->python_problem = c->env.startup_error;	/* no import runs: the interpreter stops first */
	else if (exe && proc_init(&x->base, &s->arena, &s->objs, &po, exe, &pd) == ST_OK)
		x->base_ok = true;
	else if (exe)
		c->python_problem = arena_printf(&s->arena, "cannot model the interpreter %s: %s", exe, pd.msg);
	if (x->o->assume_driver)
		c->driver_stub = check_find_driver_stub(s, &c->env, x->o->cuda_home);
	if (x->base_ok && c->driver_stub) {
		struct dlopen_result dr;
		proc_dlopen(&x->base, c->driver_stub, false, &dr);
	}
	if (x->base_ok && c->torch.found && c->torch.c_module) {
		diag_clear(&pd);
		if (proc_init(&x->torchp, &s->arena, &s->objs, &po, exe, &pd) == ST_OK) {
			if (c->driver_stub) {
				struct dlopen_result dr;
				proc_dlopen(&x->torchp, c->driver_stub, false, &dr);
			}
			scan_report(s, "importing", "torch", 0, 0);
			torch_import_replay(s, &x->torchp, &c->env, &c->torch, &c->torch_import);
			c->torch_replayed = true;
			x->torch_ok = c->torch_import.ok;
		}
	}
	return ST_OK;
}

bool check_in_focus(const struct check_options *o, const char *path)
{
	for (size_t i = 0; i < o->nfocus; i++) {
		size_t n = strlen(o->focus[i]);
		if (strncmp(path, o->focus[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* The package folder (or module) of io's import name (or of the package
 * whose import loads io itself) in a site directory before io's, which
 * Python finds first; NULL when io is the one imported. */
static const char *shadowed_by(struct check_ctx *x, const struct inv_obj *io)
{
	const struct pyenv *e = &x->c->env;
	if (!io->site || !io->package || (!io->is_extension && !check_self_load_of(x, io)))
		return NULL;
	for (size_t i = 0; i < e->nsite && !str_eq(e->site[i], io->site); i++) {
		const char *cand[] = { arena_printf(&x->s->arena, "%s/%s/__init__.py", e->site[i], io->package),
				       arena_printf(&x->s->arena, "%s/%s.py", e->site[i], io->package) };
		for (size_t k = 0; k < ARRAY_SIZE(cand); k++)
			if (fs_kind_of(&x->s->fs, cand[k]) == FS_REGULAR)
				return cand[k];
	}
	return NULL;
}

static int cmp_inv(const void *a, const void *b)
{
	const struct inv_obj *x = *(struct inv_obj *const *)a, *y = *(struct inv_obj *const *)b;
	if (x->is_extension != y->is_extension)
		return x->is_extension ? -1 : 1;
	return strcmp(x->path, y->path);
}

static struct check_ctx *ctx_of(struct scan *s, struct env_check *c, const struct check_options *o)
{
	struct check_ctx *x = arena_alloc(&s->arena, sizeof *x);
	x->s = s;
	x->c = c;
	x->o = o;
	x->ops_wraps_error = -1;
	x->import_fails = -1;
	c->ctx = x;
	return x;
}

enum status check_prepare(struct scan *s, const char *path, const struct check_options *o,
			  struct env_check *c, struct diag *d)
{
	memset(c, 0, sizeof *c);
	struct check_ctx *x = ctx_of(s, c, o);
	return prepare(x, path, d);
}

enum status check_one(struct scan *s, struct env_check *c, const struct check_options *o,
		      struct inv_obj *io, struct module_verdict *out)
{
	struct check_ctx *x = c->ctx;
	x->o = o;
	(void)s;
	judge(x, io, out);
	return ST_OK;
}

enum status check_env(struct scan *s, const char *path, const struct check_options *o,
		      struct env_check *c, struct diag *d)
{
	memset(c, 0, sizeof *c);
	struct check_ctx *x = ctx_of(s, c, o);
	scan_report(s, "reading", path, 0, 0);
	enum status st = prepare(x, path, d);
	if (st != ST_OK)
		return st;
	torch_missing(x);
	size_t n = c->inv.nobj;
	struct inv_obj **order = arena_calloc(&s->arena, n ? n : 1, sizeof *order);
	if (n)	/* an empty folder has no list at all: memcpy from NULL is undefined */
		memcpy(order, c->inv.obj, n * sizeof *order);
	sort_items(order, n, sizeof *order, cmp_inv);
	c->v = arena_calloc(&s->arena, n ? n : 1, sizeof *c->v);
	/* torch's own import first: its failure explains everything after */
	if (c->torch_replayed && !c->torch_import.ok) {
		struct why_result wr;
		memset(&wr, 0, sizeof wr);
		wr.proc = x->torchp;
		wr.target = c->torch_import.c_module;
		wr.loads = false;
		wr.dlerror = c->torch_import.error;
		struct why_request q;
		memset(&q, 0, sizeof q);
		q.target = c->torch.c_module;
		q.exe = x->torchp.main ? x->torchp.main->path : NULL;
		struct finding *f = finding_add(&s->findings, "import-fails", SEV_ERROR, c->torch.c_module);
		finding_title(&s->findings, f, "import torch fails: %s", c->torch_import.error);
		val_set_str(&s->arena, f->fields, "module", "torch");
		val_set_str(&s->arena, f->fields, "error", c->torch_import.error);
		for (size_t i = 0; i < c->torch_import.nstep; i++) {
			const struct import_step *sp = &c->torch_import.step[i];
			finding_line(&s->findings, f, "%s: %s", sp->why, sp->ok ? "ok" : sp->error);
		}
		x->import_fails = f->index;
		/* a step of the import that could not open a library (libtorch_global_deps.so's
		 * libcudart.so.12): that library, explained as any missing one, is the root */
		for (size_t i = 0; i < c->torch_import.nstep && !c->torch_import.c_module.nfail; i++) {
			const struct import_step *sp = &c->torch_import.step[i];
			const char *colon = !sp->ok && sp->error ? strstr(sp->error, ": cannot open shared object file") : NULL;
			if (!colon || f->caused_by >= 0)
				continue;
			const char *lib = arena_strndup(&s->arena, sp->error, (size_t)(colon - sp->error));
			if (strchr(lib, '/') || strchr(lib, ' '))
				continue;
			struct finding *g = finding_add(&s->findings, "library-not-found", SEV_ERROR, sp->path);
			finding_title(&s->findings, g, "%s not found (needed by %s)", lib, path_basename(sp->path));
			val_set_str(&s->arena, g->fields, "library", lib);
			finding_line(&s->findings, g, "%s: %s", sp->why, sp->error);
			check_explain_missing(x, g, NULL);
			if (g->caused_by >= 0) {
				struct finding *root = findings_at(&s->findings, (size_t)g->caused_by);
				f->caused_by = root->index;
				finding_line(&s->findings, root, "`import torch` fails for it: %s", c->torch_import.error);
			}
		}
		if (c->torch_import.c_module.nfail) {
			size_t before = s->findings.list.n;
			why_findings(s, &q, &wr);
			size_t after = s->findings.list.n;
			for (size_t i = before; i < after; i++) {
				struct finding *g = findings_at(&s->findings, i);
				if (g->caused_by < 0)
					g->caused_by = f->index;
				if (!str_eq(g->id, "library-not-found"))
					continue;
				check_explain_missing(x, g, NULL);
				/* a library torch needs that is missing is the root of its failing
				 * import, and of everything that fails for it */
				struct finding *root = g->caused_by >= 0 ? findings_at(&s->findings, (size_t)g->caused_by) : NULL;
				if (root && root != f && f->caused_by < 0 && g->first_error) {
					f->caused_by = root->index;
					finding_line(&s->findings, root, "`import torch` fails for it: %s", c->torch_import.error);
				}
			}
		}
	}
	size_t to_judge = 0, judged = 0;
	for (size_t i = 0; i < n; i++)
		to_judge += (order[i]->is_extension || o->libraries_too || check_self_load_of(x, order[i])) &&
			    (!o->nfocus || check_in_focus(o, order[i]->path));
	for (size_t i = 0; i < n; i++) {
		struct inv_obj *io = order[i];
		const struct self_load *loader = check_self_load_of(x, io);
		if (!io->is_extension && !o->libraries_too && !loader)
			continue;
		if (o->nfocus && !check_in_focus(o, io->path))
			continue;
		scan_report(s, "checking", io->path, ++judged, to_judge);
		const char *by = shadowed_by(x, io);
		if (by && loader && !io->is_extension && !o->libraries_too)
			continue;	/* its package's import is another folder's: nothing loads it */
		struct module_verdict *v = &c->v[c->nv++];
		if (by) {
			/* Python imports the package from an earlier sys.path entry */
			memset(v, 0, sizeof *v);
			v->io = io;
			v->state = V_NOT_CHECKED;
			v->context = arena_printf(&s->arena, "shadowed: `import %s` finds %s first", io->package, by);
			v->finding_first = v->finding_end = s->findings.list.n;
			continue;
		}
		judge(x, io, v);
		if (loader) {
			/* counted apart from modules and --libraries */
			v->loaded_by = loader;
			if (v->state == V_FAILS)
				v->consequence = self_load_consequence(x, v, loader);
			c->nself++;
			c->nfail_self += v->state == V_FAILS;
		} else if (io->is_extension && io->in_stdlib)
			c->nstdlib++;
		else if (io->is_extension)
			c->nextensions++;
		c->ncannot_tell += v->state == V_CANNOT_TELL;
		/* judge() without a process: the extension modules counted in nextensions, and the rest
		 * (libraries under --libraries, those the packages load) apart */
		if (v->state == V_NOT_CHECKED && !(io->is_extension && io->in_stdlib)) {
			if (!loader && io->is_extension)
				c->nunjudged++;
			else
				c->nunjudged_other++;
		}
		if (v->state == V_FAILS && !loader) {
			if (io->is_extension)
				c->nfail_ext++;
			else
				c->nfail_lib++;
		}
		c->ngpu_fail += v->gpu_fails;
	}
	c->env_finding_first = s->findings.list.n;
	check_torch_import_majors(x);
	check_duplicate_dist_info(x);
	check_record_mismatch(x);
	check_system_files(x);
	check_broken_extensions(x);
	check_namespace_shadow(x);
	c->env_finding_end = s->findings.list.n;
	/* bindings a snapshot could not settle (loader/process.h assumed) */
	const struct ptrvec *as[2] = { &x->base.assumed, &x->torchp.assumed };
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < as[k]->n; i++) {
			bool dup = false;
			for (size_t j = 0; j < c->assumed.n && !dup; j++)
				dup = str_eq(c->assumed.item[j], as[k]->item[i]);
			if (!dup)
				ptrvec_push(&s->arena, &c->assumed, as[k]->item[i]);
		}
	return ST_OK;
}

const char *verdict_state_name(enum verdict_state st)
{
	switch (st) {
	case V_OK: return "ok";
	case V_FAILS: return "fails";
	case V_OTHER_PYTHON: return "other-python";
	case V_CANNOT_TELL: return "cannot-tell";
	case V_NOT_CHECKED: break;
	}
	return "not-checked";
}

size_t check_resolve_module(struct scan *s, struct env_check *c, const char *name,
			    struct inv_obj ***out)
{
	struct ptrvec hits = { 0 };
	size_t nl = strlen(name);
	for (size_t i = 0; i < c->inv.nobj; i++) {
		struct inv_obj *io = c->inv.obj[i];
		if (!io->module)
			continue;
		/* the module itself, or every extension module under the package */
		if (str_eq(io->module, name) || (strncmp(io->module, name, nl) == 0 && io->module[nl] == '.'))
			ptrvec_push(&s->arena, &hits, io);
	}
	*out = (struct inv_obj **)hits.item;
	return hits.n;
}
