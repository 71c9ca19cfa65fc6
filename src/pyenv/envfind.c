/*
 * envfind.c: the findings about an environment as a whole (checkctx.h):
 * the CUDA major of what `import torch` loads, two metadata folders for one
 * project, files that differ from RECORD (a system package's apart),
 * binaries no RECORD owns, files named like extension modules that no one
 * can import, a CUDA 12 namespace folder shadowing CUDA 13.
 */
#include "pyenv/checkctx.h"
#include "pyenv/providers.h"

#include <limits.h>

#define MAX_RECORD_REPORT 12

/* `import torch` itself loading a CUDA library of another major: the
 * major from what the file or its distribution carries, never from a
 * soname both majors ship (provider_file_major). */
void check_torch_import_majors(struct check_ctx *x)
{
	const struct torch_layout *t = &x->c->torch;
	if (!t->cuda || !x->c->torch_replayed)
		return;
	int tmaj = (int)strtol(t->cuda, NULL, 10);
	for (size_t i = 0; i < x->c->torch_import.nstep; i++) {
		const struct import_step *sp = &x->c->torch_import.step[i];
		const struct dist *owner = dists_owner(&x->c->inv.dists, sp->path);
		const struct ptrvec *hits = inventory_find(&x->c->inv, path_basename(sp->path));
		const struct object *o = NULL;
		for (size_t k = 0; hits && k < hits->n && !o; k++)
			if (str_eq(((const struct inv_obj *)hits->item[k])->path, sp->path))
				o = ((const struct inv_obj *)hits->item[k])->obj;
		const char *basis = NULL;
		int major = provider_file_major(&x->s->arena, sp->path, owner, o, &basis);
		if (!major || major == tmaj)
			continue;
		struct finding *f = finding_add(&x->s->findings, "cuda-major-mismatch", SEV_WARNING, sp->path);
		finding_title(&x->s->findings, f, "import torch (built for CUDA %s) would load %s, a CUDA %d library (%s)",
			      t->cuda, sp->path, major, basis);
		finding_line(&x->s->findings, f, "%s", sp->why);
		finding_line(&x->s->findings, f, "torch's preload list takes the first match on sys.path, and "
						 "nvidia/<component>/lib is searched before nvidia/cu%d/lib", tmaj);
		val_set_str(&x->s->arena, f->fields, "library", path_basename(sp->path));
		val_set_int(&x->s->arena, f->fields, "library_cuda_major", major);
		val_set_int(&x->s->arena, f->fields, "torch_cuda_major", tmaj);
		val_set_str(&x->s->arena, f->fields, "evidence", basis);
		val_set(&x->s->arena, f->fields, "distribution", val_str(&x->s->arena, owner ? owner->name : NULL));
		if (owner)
			finding_fix(&x->s->findings, f, "put back the CUDA %d build of that file: reinstall the torch "
				    "dependency that ships it (%s wrote it last)", tmaj, owner->name);
		else
			finding_fix(&x->s->findings, f, "put back the CUDA %d build of that file (no distribution's "
				    "RECORD lists it)", tmaj);
	}
}

/* The system package that owns path, in an environment a system package
 * manager may own (a Python prefix or a bare site folder), or NULL. */
static const char *system_owner(struct check_ctx *x, const char *path)
{
	const struct pyenv *e = &x->c->env;
	if (e->kind != PYENV_PREFIX && e->kind != PYENV_SITE)
		return NULL;
	return sysowner_of(x->s, &x->c->sysowner, e, path);
}

/* One finding for the metadata folders of one project in one site folder
 * (dup: two or more, in the order they were found). */
static void duplicate_group(struct check_ctx *x, const struct ptrvec *dup)
{
	struct scan *s = x->s;
	const struct dist *a = dup->item[0];
	struct finding *f = finding_add(&s->findings, "duplicate-dist-info", SEV_WARNING, a->meta);
	const struct dist *b = dup->item[1];
	if (dup->n == 2)
		finding_title(&s->findings, f, "two metadata folders for %s: %s and %s", a->name,
			      path_basename(a->meta), path_basename(b->meta));
	else
		finding_title(&s->findings, f, "%zu metadata folders for %s: %s, %s and %zu more", dup->n, a->name,
			      path_basename(a->meta), path_basename(b->meta), dup->n - 2);
	struct value *arr = val_arr(&s->arena);
	const char *pkg = system_owner(x, a->meta);
	for (size_t j = 0; j < dup->n; j++) {
		const struct dist *d = dup->item[j];
		size_t present = 0, checked = 0;
		for (size_t n = 0; n < d->nfile && checked < 50; n++) {
			char buf[DIST_PATH_MAX];
			const char *path = dist_file_path(d, &d->file[n], buf, sizeof buf);
			if (str_ends(path, "/RECORD") || strstr(path, ".dist-info/"))
				continue;
			struct fs_stat st;
			fs_stat(&s->fs, path, &st);
			checked++;
			if (st.kind == FS_REGULAR && (d->file[n].size < 0 || (uint64_t)d->file[n].size == st.size))
				present++;
		}
		struct value *o = val_obj(&s->arena);
		val_set_str(&s->arena, o, "metadata", d->meta);
		val_set(&s->arena, o, "version", val_str(&s->arena, d->version));
		val_set_int(&s->arena, o, "record_files_matching", (int64_t)present);
		val_set_int(&s->arena, o, "record_files_checked", (int64_t)checked);
		val_push(&s->arena, arr, o);
		finding_line(&s->findings, f, "%s: version %s, %s%zu of %zu recorded files match the disk",
			     path_basename(d->meta), d->version ? d->version : "?",
			     d->has_record ? "" : "no RECORD, ", present, checked);
		/* its own record-mismatch is this cause (check_record_mismatch) */
		strmap_put(&s->arena, &x->dup_by_meta, d->meta, (void *)(intptr_t)(f->index + 1));
		const char *own = system_owner(x, d->meta);
		if (!own || !pkg || !str_eq(own, pkg))
			pkg = NULL;
	}
	val_set(&s->arena, f->fields, "dist_infos", arr);
	val_set_str(&s->arena, f->fields, "distribution", a->name);
	finding_line(&s->findings, f, "which one importlib.metadata and pip report depends on directory "
				      "order; tools may read the stale version");
	finding_fix(&s->findings, f, "remove the stale folder (the one whose RECORD does not match), or "
				     "reinstall %s", a->name);
	if (pkg) {
		/* the system package ships them all: its layout, not a leftover */
		f->severity = SEV_NOTE;
		val_set_str(&s->arena, f->fields, "system_package", pkg);
		finding_line(&s->findings, f, "they are all the files of the system package %s (%s)", pkg,
			     x->c->sysowner.manager);
		finding_fix(&s->findings, f, "nothing to do: %s ships them", pkg);
	}
}

/* Projects with more than one metadata folder in one site folder: grouped
 * by (site, normalized name) in one pass, one finding per project however
 * many folders it has (every pair compared was quadratic, and 1,000
 * folders of one name gave 500,000 findings). */
void check_duplicate_dist_info(struct check_ctx *x)
{
	struct scan *s = x->s;
	struct ptrvec *all = &x->c->inv.dists.all;
	struct strmap groups = { 0 };
	for (size_t i = 0; i < all->n; i++) {
		struct dist *d = all->item[i];
		if (d->kind == DIST_CONDA)
			continue;
		const char *key = arena_printf(&s->arena, "%s\n%s", d->site ? d->site : "", d->norm);
		struct ptrvec *g = strmap_get(&groups, key);
		if (!g) {
			g = arena_calloc(&s->arena, 1, sizeof *g);
			strmap_put(&s->arena, &groups, key, g);
		}
		ptrvec_push(&s->arena, g, d);
	}
	for (size_t i = 0; i < all->n; i++) {
		struct dist *d = all->item[i];
		if (d->kind == DIST_CONDA)
			continue;
		const struct ptrvec *g =
			strmap_get(&groups, arena_printf(&s->arena, "%s\n%s", d->site ? d->site : "", d->norm));
		if (g->n >= 2 && g->item[0] == d)
			duplicate_group(x, g);
	}
}

/*
 * The files whose change can change an import: native objects, package
 * __init__.py (it picks variants, imports torch), version.py (torch's says
 * which CUDA it wants) and .pth files.  Without
 * --verify-hashes only these are compared with RECORD: a torch install has
 * ~18,000 files, and a stat of each was a third of check's time.
 */
static bool import_relevant(const char *path)
{
	const char *base = path_basename(path);
	return str_ends(base, ".so") || strstr(base, ".so.") || str_eq(base, "__init__.py") ||
	       str_eq(base, "version.py") || str_ends(base, ".pth");
}

/* The duplicate-dist-info finding that names d's metadata folder, or -1. */
static int duplicate_of(struct check_ctx *x, const struct dist *d)
{
	intptr_t at = (intptr_t)strmap_get(&x->dup_by_meta, d->meta);
	return at ? (int)(at - 1) : -1;
}

/* One distribution's RECORD against the disk. */
struct record_check {
	struct dist *d;
	size_t missing, sized, hashed;
	struct value *list;	/* {path, problem}, the first MAX_RECORD_REPORT */
	const char *shared;	/* shared_missing_key(), or NULL */
};

static void record_check_one(struct check_ctx *x, struct record_check *rc, size_t *done, size_t nfiles)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	struct dist *d = rc->d;
	struct value *list = rc->list = val_arr(a);
	for (size_t n = 0; n < d->nfile; n++) {
		const struct dist_file *df = &d->file[n];
		char buf[DIST_PATH_MAX];
		const char *path = dist_file_path(d, df, buf, sizeof buf);
		if (x->o->verify_hashes)
			scan_report(s, "hashing", path, ++*done, nfiles);
		if (!x->o->verify_hashes && !import_relevant(path))
			continue;	/* the cheap test first: most files are not */
		if (strstr(path, ".dist-info/") || strstr(path, "/__pycache__/") || str_ends(path, ".pyc"))
			continue;	/* written after install, legitimately */
		struct fs_stat st;
		fs_stat(&s->fs, path, &st);
		const char *what = NULL;
		if (st.kind == FS_MISSING) {
			what = "missing";
			rc->missing++;
		} else if (df->size >= 0 && st.kind == FS_REGULAR && (uint64_t)df->size != st.size) {
			what = arena_printf(a, "size %llu, RECORD says %lld", (unsigned long long)st.size,
					    (long long)df->size);
			rc->sized++;
		} else if (x->o->verify_hashes && df->hash && st.kind == FS_REGULAR) {
			char h[128];
			struct diag dd;
			diag_clear(&dd);
			if (file_sha256_record(s, path, h, sizeof h, &dd) == ST_OK && str_starts(df->hash, "sha256=") &&
			    !str_eq(h, df->hash)) {
				what = "content differs (sha256)";
				rc->hashed++;
			}
		}
		if (what && list->u.list.n < MAX_RECORD_REPORT) {
			struct value *o = val_obj(a);
			val_set_str(a, o, "path", path);
			val_set_str(a, o, "problem", what);
			val_push(a, list, o);
		}
	}
}

/* The finding of one distribution whose files differ from its RECORD. */
static void record_finding(struct check_ctx *x, const struct record_check *rc)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	const struct dist *d = rc->d;
	size_t missing = rc->missing, sized = rc->sized, hashed = rc->hashed;
	struct value *list = rc->list;
	struct finding *f = finding_add(&s->findings, "record-mismatch", SEV_WARNING, d->meta);
	f->caused_by = duplicate_of(x, d);	/* a stale metadata folder: one cause with its duplicate */
	if (missing || sized || hashed)
		finding_title(&s->findings, f, "%s %s does not match its RECORD: %zu missing, %zu of another "
			      "size%s", d->name, d->version ? d->version : "", missing, sized,
			      x->o->verify_hashes ? arena_printf(a, ", %zu with other content", hashed) : "");
	else
		finding_title(&s->findings, f, "%s %s: its RECORD has %zu line%s it cannot be checked against",
			      d->name, d->version ? d->version : "", d->problems.n, d->problems.n == 1 ? "" : "s");
	/* malformed lines, sizes out of range: said, not taken as a size */
	struct value *bad = val_arr(a);
	for (size_t k = 0; k < d->problems.n; k++) {
		val_push(a, bad, val_str(a, d->problems.item[k]));
		finding_line(&s->findings, f, "%s: %s", d->meta, (const char *)d->problems.item[k]);
	}
	val_set(a, f->fields, "record_problems", bad);
	val_set_str(a, f->fields, "distribution", d->name);
	val_set_int(a, f->fields, "missing", (int64_t)missing);
	val_set_int(a, f->fields, "size_differs", (int64_t)sized);
	val_set_int(a, f->fields, "hash_differs", (int64_t)hashed);
	val_set(a, f->fields, "files", list);
	for (size_t k = 0; k < list->u.list.n && k < 5; k++)
		finding_line(&s->findings, f, "%s: %s", val_get_str(list->u.list.item[k], "path"),
			     val_get_str(list->u.list.item[k], "problem"));
	finding_fix(&s->findings, f, "reinstall %s (pip install --force-reinstall --no-deps %s==%s)", d->name,
		    d->name, d->version ? d->version : "<version>");
	const char *pkg = system_owner(x, d->meta);
	if (pkg && missing) {
		/* files the system package installed are gone: that package puts them back */
		val_set_str(a, f->fields, "system_package", pkg);
		finding_line(&s->findings, f, "the system package %s (%s) installed them, and %zu %s gone", pkg,
			     x->c->sysowner.manager, missing, missing == 1 ? "is" : "are");
		finding_fix(&s->findings, f, "reinstall %s: apt-get install --reinstall %s", pkg, pkg);
	} else if (pkg) {
		/* a distribution's build strips and patches the wheel's files after RECORD was written */
		f->severity = SEV_NOTE;
		val_set_str(a, f->fields, "system_package", pkg);
		finding_line(&s->findings, f, "the system package %s (%s) owns these files: its build changes them "
			     "after the wheel's RECORD was written (binaries stripped), so RECORD is no measure of "
			     "them", pkg, x->c->sysowner.manager);
		finding_fix(&s->findings, f, "dpkg --verify %s checks them against the package; if it reports them "
			    "changed: apt-get install --reinstall %s", pkg, pkg);
	}
}

/* Distributions whose only difference is the same missing files: a file
 * several wheels list (nvidia/__init__.py in every nvidia-* wheel) goes
 * with the first of them uninstalled, and reinstalling one puts it back.
 * The key of those that can be grouped, or NULL. */
static const char *shared_missing_key(struct check_ctx *x, const struct record_check *rc)
{
	const struct dist *d = rc->d;
	if (!rc->missing || rc->sized || rc->hashed || d->problems.n || rc->missing != rc->list->u.list.n ||
	    duplicate_of(x, d) >= 0 || system_owner(x, d->meta))
		return NULL;
	const char *key = "";
	for (size_t k = 0; k < rc->list->u.list.n; k++)
		key = arena_printf(&x->s->arena, "%s%s\n", key, val_get_str(rc->list->u.list.item[k], "path"));
	return key;
}

/* One finding for the distributions of group (two or more) that miss the
 * same files; the first is the one the fix reinstalls. */
static void shared_missing_finding(struct check_ctx *x, const struct ptrvec *group)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	const struct record_check *first = group->item[0];
	const struct dist *d = first->d;
	const struct value *list = first->list;
	const char *path = val_get_str(list->u.list.item[0], "path");
	const char *shown = str_starts(path, d->site) && path[strlen(d->site)] == '/' ? path + strlen(d->site) + 1
										      : path;
	struct finding *f = finding_add(&s->findings, "record-mismatch", SEV_WARNING, d->meta);
	finding_title(&s->findings, f, "%zu distributions miss the same file%s their RECORDs list: %s%s", group->n,
		      list->u.list.n == 1 ? "" : "s", shown,
		      list->u.list.n == 1 ? "" : arena_printf(a, " and %zu more", list->u.list.n - 1));
	struct value *names = val_arr(a);
	for (size_t i = 0; i < group->n; i++) {
		const struct dist *o = ((const struct record_check *)group->item[i])->d;
		val_push(a, names, val_str(a, arena_printf(a, "%s %s", o->name, o->version ? o->version : "")));
	}
	for (size_t k = 0; k < list->u.list.n && k < 5; k++)
		finding_line(&s->findings, f, "%s: missing", val_get_str(list->u.list.item[k], "path"));
	finding_line(&s->findings, f, "listed by %s, %s%s", names->u.list.item[0]->u.s, names->u.list.item[1]->u.s,
		     group->n > 2 ? arena_printf(a, " and %zu more", group->n - 2) : "");
	finding_line(&s->findings, f, "a file several distributions list goes with the first of them uninstalled; "
				      "reinstalling any one of them puts it back");
	val_set(a, f->fields, "record_problems", val_arr(a));
	val_set_str(a, f->fields, "distribution", d->name);
	val_set(a, f->fields, "distributions", names);
	val_set_int(a, f->fields, "missing", (int64_t)first->missing);
	val_set_int(a, f->fields, "size_differs", 0);
	val_set_int(a, f->fields, "hash_differs", 0);
	val_set(a, f->fields, "files", (struct value *)list);
	finding_fix(&s->findings, f, "reinstall one of them: pip install --force-reinstall --no-deps %s==%s", d->name,
		    d->version ? d->version : "<version>");
}

void check_record_mismatch(struct check_ctx *x)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	struct ptrvec *all = &x->c->inv.dists.all;
	/* the check this one repeats with other options (cmd check's pass with
	 * the driver): its RECORDs' comparisons with the disk, made once */
	const struct check_ctx *same = x->prev && x->prev->records_checked &&
					       x->prev->c->inv.dists.all.item == all->item ? x->prev : NULL;
	size_t nfiles = 0, done = 0, nrec = 0;
	for (size_t i = 0; i < all->n && x->o->verify_hashes && !same; i++)
		nfiles += ((struct dist *)all->item[i])->nfile;
	struct ptrvec differ = { 0 };	/* struct record_check *, discovery order */
	struct strmap groups = { 0 };	/* shared_missing_key -> struct ptrvec * */
	for (size_t i = 0; i < all->n; i++) {
		struct dist *d = all->item[i];
		if (!d->has_record || d->kind == DIST_CONDA) {
			done += x->o->verify_hashes ? d->nfile : 0;
			continue;
		}
		struct record_check *rc = NULL;
		if (same && nrec < same->records.n) {
			/* the same distributions in the same order (take_reads): the
			 * disk was compared with them moments ago, stat by stat */
			rc = same->records.item[nrec];
		} else {
			rc = arena_calloc(a, 1, sizeof *rc);
			rc->d = d;
			record_check_one(x, rc, &done, nfiles);
		}
		ptrvec_push(a, &x->records, rc);
		nrec++;
		if (!rc->missing && !rc->sized && !rc->hashed && !d->problems.n)
			continue;
		ptrvec_push(a, &differ, rc);
		if (!rc->shared)	/* else the key of the same files, made before */
			rc->shared = shared_missing_key(x, rc);
		if (!rc->shared)
			continue;
		struct ptrvec *g = strmap_get(&groups, rc->shared);
		if (!g) {
			g = arena_calloc(a, 1, sizeof *g);
			strmap_put(a, &groups, rc->shared, g);
		}
		ptrvec_push(a, g, rc);
	}
	x->records_checked = true;
	for (size_t i = 0; i < differ.n; i++) {
		const struct record_check *rc = differ.item[i];
		const struct ptrvec *g = rc->shared ? strmap_get(&groups, rc->shared) : NULL;
		if (!g || g->n < 2)
			record_finding(x, rc);
		else if (g->item[0] == rc)
			shared_missing_finding(x, g);
	}
	/* binaries no RECORD owns */
	if (!x->c->inv.dists.all.n)
		return;
	struct value *list = val_arr(a);
	size_t n = 0;
	const char *first_dir = NULL;
	for (size_t i = 0; i < x->c->inv.nobj; i++) {
		const struct inv_obj *io = x->c->inv.obj[i];
		if (io->dist || io->in_stdlib || !io->site || system_owner(x, io->path))
			continue;	/* RECORD's, the stdlib's, the system package manager's */
		n++;
		if (!first_dir)
			first_dir = io->path;
		if (list->u.list.n < MAX_RECORD_REPORT)
			val_push(a, list, val_str(a, io->path));
	}
	if (!n)
		return;
	/* a RECORD that could not be read owns nothing: say so, not "by hand" */
	struct value *unread = val_arr(a);
	for (size_t i = 0; i < x->c->inv.dists.all.n; i++) {
		const struct dist *d = x->c->inv.dists.all.item[i];
		if (d->record_error)
			val_push(a, unread, val_str(a, arena_printf(a, "%s/RECORD: %s", d->meta, d->record_error)));
	}
	struct finding *f = finding_add(&s->findings, "record-mismatch", SEV_WARNING, first_dir);
	if (unread->u.list.n)
		finding_title(&s->findings, f, "%zu binar%s that no installed distribution's RECORD lists (%zu RECORD "
			      "file%s could not be read)", n, n == 1 ? "y" : "ies", unread->u.list.n,
			      unread->u.list.n == 1 ? "" : "s");
	else
		finding_title(&s->findings, f, "%zu binar%s that no installed distribution's RECORD lists (copied in by "
			      "hand?)", n, n == 1 ? "y" : "ies");
	val_set(a, f->fields, "unowned", list);
	val_set(a, f->fields, "unreadable_records", unread);
	for (size_t k = 0; k < unread->u.list.n; k++)
		finding_line(&s->findings, f, "could not read %s", unread->u.list.item[k]->u.s);
	for (size_t k = 0; k < list->u.list.n && k < 5; k++)
		finding_line(&s->findings, f, "%s", list->u.list.item[k]->u.s);
	if (unread->u.list.n)
		finding_fix(&s->findings, f, "these may be files of the RECORDs not read; any that no RECORD lists, "
					     "install through a package (or remove)");
	else
		finding_fix(&s->findings, f, "install these through a package (or remove them): files copied from "
					     "another host are built for that host's torch and CUDA");
}

void check_broken_extensions(struct check_ctx *x)
{
	struct scan *s = x->s;
	struct env_check *c = x->c;
	for (size_t i = 0; i < c->inv.broken.n; i++) {
		const struct inv_broken *b = c->inv.broken.item[i];
		if (!inventory_module_file(&c->env, path_basename(b->path)))
			continue;
		if (x->o->nfocus && !check_in_focus(x->o, b->path))
			continue;
		struct finding *f = finding_add(&s->findings, "extension-unreadable", SEV_ERROR, b->path);
		finding_title(&s->findings, f, "%s cannot be imported: %s", b->path, b->why);
		val_set_str(&s->arena, f->fields, "reason", b->why);
		finding_line(&s->findings, f, "Python finds the module by its file name, then cannot load it");
		finding_fix(&s->findings, f, "replace it with the extension module's file (reinstall its package)");
		c->nextensions++;
		c->nfail_ext++;
		c->nbroken_ext++;
	}
}

void check_namespace_shadow(struct check_ctx *x)
{
	struct scan *s = x->s;
	struct ptrvec *all = &x->c->inv.dists.all;
	for (size_t i = 0; i < all->n; i++) {
		struct dist *d12 = all->item[i];
		if (!str_starts(d12->norm, "nvidia-") || !str_ends(d12->norm, "-cu12"))
			continue;
		size_t stem = strlen(d12->norm) - 5;
		for (size_t k = 0; k < all->n; k++) {
			struct dist *d13 = all->item[k];
			if (strlen(d13->norm) != stem || strncmp(d13->norm, d12->norm, stem) != 0 || !d13->version ||
			    strtol(d13->version, NULL, 10) < 13)
				continue;
			/* the cu12 wheel's folder: nvidia/<component>/ */
			const char *folder = NULL;
			for (size_t n = 0; n < d12->nfile && !folder; n++) {
				char buf[DIST_PATH_MAX];
				const char *p = strstr(dist_file_path(d12, &d12->file[n], buf, sizeof buf), "/nvidia/");
				if (p && strstr(p + 8, "/lib/")) {
					const char *e = strchr(p + 8, '/');
					folder = arena_strndup(&s->arena, p + 8, (size_t)(e - p - 8));
				}
			}
			struct finding *f = finding_add(&s->findings, "namespace-shadow", SEV_WARNING, d12->meta);
			finding_title(&s->findings, f, "import nvidia.%s finds the CUDA 12 files of %s %s, while %s %s "
						       "(CUDA 13) is installed in nvidia/cu13",
				      folder ? folder : "?", d12->name, d12->version ? d12->version : "", d13->name,
				      d13->version);
			val_set(&s->arena, f->fields, "import_name",
				val_str(&s->arena, folder ? arena_printf(&s->arena, "nvidia.%s", folder) : NULL));
			val_set_str(&s->arena, f->fields, "cuda12_distribution", d12->name);
			val_set_str(&s->arena, f->fields, "cuda13_distribution", d13->name);
			finding_line(&s->findings, f, "code that locates the library through the Python module (import "
						      "nvidia.%s; its __path__ + /lib) loads the CUDA 12 copy",
				     folder ? folder : "?");
			finding_fix(&s->findings, f, "uninstall %s if nothing needs CUDA 12, or point the CUDA 13 users "
						     "at nvidia/cu13/lib", d12->name);
		}
	}
}

/* A system Python's packages are listed by its package manager, not RECORD
 * (Debian's python3-numpy ships an egg-info): the files of its lists under
 * the site folders that an import needs and that are gone, one finding per
 * package, sorted by package name. */
struct gone_pkg {
	const char *pkg;
	struct ptrvec paths;
};

static int cmp_gone(const void *a, const void *b)
{
	return strcmp((*(struct gone_pkg *const *)a)->pkg, (*(struct gone_pkg *const *)b)->pkg);
}

void check_system_files(struct check_ctx *x)
{
	struct scan *s = x->s;
	struct arena *a = &s->arena;
	const struct pyenv *e = &x->c->env;
	if (e->kind != PYENV_PREFIX && e->kind != PYENV_SITE)
		return;
	struct sysowner *so = &x->c->sysowner;
	sysowner_of(s, so, e, "/");	/* the lists, read once */
	if (!so->manager)
		return;
	struct strmap by_pkg = { 0 };
	struct ptrvec pkgs = { 0 };
	size_t pos = 0;
	const char *path;
	void *pkg;
	while (strmap_next(&so->by_path, &pos, &path, &pkg)) {
		if (!import_relevant(path) || fs_kind_of(&s->fs, path) != FS_MISSING)
			continue;
		struct gone_pkg *g = strmap_get(&by_pkg, pkg);
		if (!g) {
			g = arena_calloc(a, 1, sizeof *g);
			g->pkg = pkg;
			strmap_put(a, &by_pkg, g->pkg, g);
			ptrvec_push(a, &pkgs, g);
		}
		ptrvec_push(a, &g->paths, (void *)path);
	}
	sort_items(pkgs.item, pkgs.n, sizeof *pkgs.item, cmp_gone);
	for (size_t i = 0; i < pkgs.n; i++) {
		struct gone_pkg *g = pkgs.item[i];
		/* in path order, not the map's */
		sort_items(g->paths.item, g->paths.n, sizeof *g->paths.item, cmp_strings);
		struct finding *f = finding_add(&s->findings, "record-mismatch", SEV_WARNING, g->paths.item[0]);
		finding_title(&s->findings, f, "%zu file%s the system package %s installed %s gone", g->paths.n,
			      g->paths.n == 1 ? "" : "s", g->pkg, g->paths.n == 1 ? "is" : "are");
		struct value *list = val_arr(a);
		for (size_t k = 0; k < g->paths.n; k++) {
			if (k < MAX_RECORD_REPORT) {
				struct value *o = val_obj(a);
				val_set_str(a, o, "path", g->paths.item[k]);
				val_set_str(a, o, "problem", "missing");
				val_push(a, list, o);
			}
			if (k < 5)
				finding_line(&s->findings, f, "%s: missing (%s's list names it)", (const char *)g->paths.item[k],
					     so->manager);
		}
		val_set(a, f->fields, "files", list);
		val_set_int(a, f->fields, "missing", (int64_t)g->paths.n);
		val_set_str(a, f->fields, "system_package", g->pkg);
		val_set_str(a, f->fields, "manager", so->manager);
		finding_line(&s->findings, f, "an import that needs one of them fails (Python finds no module, or the "
					      "module's own import of it fails)");
		finding_fix(&s->findings, f, "reinstall %s: apt-get install --reinstall %s", g->pkg, g->pkg);
	}
}
