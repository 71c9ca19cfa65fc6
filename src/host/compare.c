#include "host/compare.h"
#include "cuda/arch.h"
#include "cxx/demangle.h"
#include "pyenv/dist.h"

#include <limits.h>

#define MAX_LISTED 8	/* symbols or files shown per finding; the rest counted */

#define fnv hash64_bytes

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

uint64_t host_elf_digest(const struct snap_elf *e)
{
	uint64_t h = HASH64_INIT;
	h = fnv_str(h, e->soname);
	h = fnv_str(h, e->rpath);
	h = fnv_str(h, e->runpath);
	for (size_t i = 0; i < e->nneeded; i++)
		h = fnv_str(h, e->needed[i]);
	for (size_t i = 0; i < e->nverdef; i++)
		h = fnv_str(h, e->verdef[i].name);
	for (size_t i = 0; i < e->nverneed; i++)
		for (size_t j = 0; j < e->verneed[i].naux; j++)
			h = fnv_str(h, e->verneed[i].aux[j].name);
	for (size_t i = 0; i < e->nexports; i++)
		h = fnv(h, &e->exports[i], sizeof e->exports[i].hash + sizeof e->exports[i].versym);
	for (size_t i = 0; i < e->nrefs; i++)
		h = fnv_str(h, e->refs[i].name);
	h = fnv(h, &e->dt_flags_1, sizeof e->dt_flags_1);
	h = fnv_str(h, e->cuda);
	return h;
}

const char *host_object_key(struct arena *a, const struct snapshot *snap, const char *path)
{
	for (size_t i = 0; i < snap->nsite; i++) {
		size_t n = strlen(snap->site[i]);
		if (strncmp(path, snap->site[i], n) == 0 && path[n] == '/')
			return arena_printf(a, "site/%s", path + n + 1);
	}
	if (snap->env_root) {
		size_t n = strlen(snap->env_root);
		if (n > 1 && strncmp(path, snap->env_root, n) == 0 && path[n] == '/')
			return arena_printf(a, "env/%s", path + n + 1);
	}
	return path;
}

/* ---- one side's index ---- */

struct side_index {
	const struct host_side *side;
	struct strmap by_key;		/* object key -> struct snap_file * (ELF) */
	struct strmap by_soname;	/* SONAME -> struct snap_file * (first) */
	struct strmap dists;		/* normalised name -> struct ptrvec * of struct snap_dist */
	struct strmap verdicts;		/* module or key -> struct module_verdict * */
	struct strmap cuda_majors;	/* "libcudart.so.13" -> (void *)major */
	struct ptrvec elfs;		/* struct snap_file *, file order */
	struct ptrvec keys;		/* their keys, same order */
	struct strmap users;		/* SONAME -> struct ptrvec * of files that NEED it */
};

static void index_side(struct arena *a, const struct host_side *sd, struct side_index *ix)
{
	memset(ix, 0, sizeof *ix);
	ix->side = sd;
	const struct snapshot *s = sd->snap;
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct snap_file *f = &s->files[i];
		if (f->type != SNAP_ELF || !f->elf)
			continue;
		const char *key = host_object_key(a, s, f->path);
		strmap_put(a, &ix->by_key, key, (void *)f);
		ptrvec_push(a, &ix->elfs, (void *)f);
		ptrvec_push(a, &ix->keys, (void *)key);
		for (size_t k = 0; k < f->elf->nneeded; k++) {
			struct ptrvec *u = strmap_get(&ix->users, f->elf->needed[k]);
			if (!u) {
				u = arena_calloc(a, 1, sizeof *u);
				strmap_put(a, &ix->users, f->elf->needed[k], u);
			}
			if (!u->n || u->item[u->n - 1] != f)
				ptrvec_push(a, u, (void *)f);
		}
		if (f->elf->soname && !strmap_get(&ix->by_soname, f->elf->soname))
			strmap_put(a, &ix->by_soname, f->elf->soname, (void *)f);
		unsigned major = f->elf->soname ? cuda_soname_major(f->elf->soname) : 0;
		if (major && !f->elf->cache_only)
			strmap_put(a, &ix->cuda_majors, f->elf->soname, (void *)(uintptr_t)major);
	}
	for (size_t i = 0; i < s->ndists; i++) {
		const char *key = dist_normalize(a, s->dists[i].name ? s->dists[i].name : "");
		struct ptrvec *v = strmap_get(&ix->dists, key);
		if (!v) {
			v = arena_calloc(a, 1, sizeof *v);
			strmap_put(a, &ix->dists, key, v);
		}
		ptrvec_push(a, v, (void *)&s->dists[i]);
	}
	if (sd->check)
		for (size_t i = 0; i < sd->check->nv; i++) {
			const struct module_verdict *v = &sd->check->v[i];
			const char *key = v->io->module ? v->io->module : host_object_key(a, s, v->io->path);
			strmap_put(a, &ix->verdicts, key, (void *)v);
		}
}

/* ---- the findings ---- */

struct cmp {
	struct arena *a;
	bool internal;		/* also bindings inside one package (-v) */
	struct findings *fl;
	struct side_index x, y;
	struct compare_summary *sum;
};

static struct finding *add(struct cmp *c, const char *id, enum severity sev, const char *object)
{
	c->sum->differences++;
	return finding_add(c->fl, id, sev, object);
}

static bool verdict_ok(const struct module_verdict *v)
{
	return v->state == V_OK;
}

/* The failing side's explanation of w: its causes first (signature-changed
 * under an undefined symbol), else the loader's own error finding. */
static void root_cause_lines(struct cmp *c, struct finding *f, const struct host_side *side,
			     const struct module_verdict *w)
{
	const struct findings *fl = side->findings;
	if (!fl)
		return;
	size_t shown = 0;
	for (size_t i = w->finding_first; i < w->finding_end && i < fl->list.n && shown < 3; i++) {
		const struct finding *g = fl->list.item[i];
		if (g->caused_by >= 0 && g->title) {
			finding_line(c->fl, f, "cause: %s: %s", g->id, g->title);
			shown++;
		}
	}
	for (size_t i = w->finding_first; !shown && i < w->finding_end && i < fl->list.n; i++) {
		const struct finding *g = fl->list.item[i];
		if (g->severity == SEV_ERROR && g->title) {
			finding_line(c->fl, f, "cause: %s: %s", g->id, g->title);
			if (g->fix)
				finding_line(c->fl, f, "fix: %s", g->fix);
			shown++;
		}
	}
}

static void compare_imports(struct cmp *c)
{
	const struct side_index *ix[2] = { &c->x, &c->y };
	for (int k = 0; k < 2; k++) {
		const struct side_index *here = ix[k], *there = ix[1 - k];
		const struct env_check *hc = here->side->check;
		for (size_t i = 0; hc && i < hc->nv; i++) {
			const struct module_verdict *v = &hc->v[i];
			const char *key = v->io->module ? v->io->module
				: host_object_key(c->a, here->side->snap, v->io->path);
			const struct module_verdict *w = strmap_get(&there->verdicts, key);
			if (!w || v->state == V_NOT_CHECKED || w->state == V_NOT_CHECKED || v->state == V_CANNOT_TELL ||
			    w->state == V_CANNOT_TELL)
				continue;
			/* report each change once: from the side where it works */
			if (!(verdict_ok(v) && !verdict_ok(w)))
				continue;
			const char *mod = v->io->module ? v->io->module : key;
			struct finding *f = add(c, "diff-import", SEV_ERROR, w->io->path);
			finding_title(c->fl, f, "%s imports on %s and fails on %s", mod, here->side->name,
				      there->side->name);
			finding_line(c->fl, f, "on %s: %s", there->side->name, w->dlerror ? w->dlerror : "fails");
			if (w->context)
				finding_line(c->fl, f, "%s", w->context);
			root_cause_lines(c, f, there->side, w);
			val_set_str(c->a, f->fields, "module", mod);
			val_set_str(c->a, f->fields, "works_on", here->side->name);
			val_set_str(c->a, f->fields, "fails_on", there->side->name);
			val_set_str(c->a, f->fields, "error", w->dlerror);
			c->sum->import_changes++;
		}
	}
}

static int cmp_u64(const void *p, const void *q)
{
	uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;
	return a < b ? -1 : a > b;
}

static bool has_hash(const uint64_t *sorted, size_t n, uint64_t h)
{
	return bsearch(&h, sorted, n, sizeof h, cmp_u64) != NULL;
}

static uint64_t *sorted_hashes(struct arena *a, const struct snap_elf *e)
{
	uint64_t *v = arena_calloc(a, e->nexports ? e->nexports : 1, sizeof *v);
	for (size_t i = 0; i < e->nexports; i++)
		v[i] = e->exports[i].hash;
	sort_items(v, e->nexports, sizeof *v, cmp_u64);
	return v;
}

/*
 * Symbols objects on side `users` import from a library that the same
 * library on side `other` no longer exports: those binaries break there.
 */
/* The package an object key belongs to: "torch" for site/torch/lib/libc10.so. */
static const char *key_package(struct arena *a, const char *key)
{
	if (!str_starts(key, "site/"))
		return key;	/* outside site-packages: each object its own */
	const char *rel = key + 5;
	const char *slash = strchr(rel, '/');
	return slash ? arena_strndup(a, rel, (size_t)(slash - rel)) : rel;
}

/* The other side holds uf too, the same binary (same key, size and ELF
 * digest): there it binds against the other side's library. */
static bool same_binary_there(struct cmp *c, const struct side_index *users, const struct side_index *other,
			      const struct snap_file *uf)
{
	const struct snap_file *of = strmap_get(&other->by_key, host_object_key(c->a, users->side->snap, uf->path));
	return of && of->elf && !of->elf->cache_only && of->size == uf->size &&
	       host_elf_digest(of->elf) == host_elf_digest(uf->elf);
}

static void compare_used_exports(struct cmp *c, const struct side_index *users, const struct side_index *other)
{
	const struct snapshot *us = users->side->snap;
	for (size_t e = 0; e < users->elfs.n; e++) {
		const struct snap_file *pf = users->elfs.item[e];
		const char *key = users->keys.item[e];
		const struct snap_file *qf = strmap_get(&other->by_key, key);
		if (!qf && pf->elf->soname && !str_starts(key, "site/") && !str_starts(key, "env/"))
			qf = strmap_get(&other->by_soname, pf->elf->soname);
		if (!qf || pf->elf->cache_only || qf->elf->cache_only || !pf->elf->soname)
			continue;
		const struct ptrvec *consumers = strmap_get(&users->users, pf->elf->soname);
		if (!consumers)
			continue;
		const struct snap_elf *pe = pf->elf, *qe = qf->elf;
		uint64_t *have_there = sorted_hashes(c->a, qe);
		uint64_t *have_here = sorted_hashes(c->a, pe);
		/* the consumers: objects on the users' side that need this SONAME */
		struct ptrvec lines;
		memset(&lines, 0, sizeof lines);
		size_t nmissing = 0;
		struct strmap seen;
		memset(&seen, 0, sizeof seen);
		const char *first_user = NULL;
		const char *provider_pkg = key_package(c->a, key);
		bool internal_only = true, absent_only = true;
		for (size_t i = 0; i < consumers->n; i++) {
			const struct snap_file *uf = consumers->item[i];
			if (uf->elf->cache_only || uf == pf)
				continue;
			/* each side's torch is consistent in itself: what breaks is a
			 * binary of another package bound to this library */
			bool internal = str_eq(key_package(c->a, host_object_key(c->a, us, uf->path)), provider_pkg);
			if (internal && !c->internal)
				continue;
			/* a binary the other side does not hold as it is here (absent,
			 * or another build: the other side's own is checked there) binds
			 * against that side's library only if it is copied there */
			bool absent = !internal && !same_binary_there(c, users, other, uf);
			if (absent && !c->internal)
				continue;
			for (size_t r = 0; r < uf->elf->nrefs; r++) {
				const struct snap_ref *ref = &uf->elf->refs[r];
				if (ref->flags & SNAP_REF_WEAK)
					continue;
				uint64_t h = elf_name_hash64(ref->name);
				if (!has_hash(have_here, pe->nexports, h) || has_hash(have_there, qe->nexports, h))
					continue;
				if (strmap_get(&seen, ref->name))
					continue;
				strmap_put(c->a, &seen, ref->name, MAP_YES);
				nmissing++;
				internal_only &= internal;
				absent_only &= internal || absent;
				if (!first_user)
					first_user = uf->path;
				if (lines.n < MAX_LISTED)
					ptrvec_push(c->a, &lines,
						    arena_printf(c->a, "%s  (used by %s)", cxx_demangle(c->a, ref->name),
								 host_object_key(c->a, us, uf->path)));
			}
		}
		if (!nmissing)
			continue;
		bool local = internal_only || absent_only;
		struct finding *f = add(c, "diff-exports-removed", local ? SEV_NOTE : SEV_ERROR, qf->path);
		finding_title(c->fl, f, "%s on %s lacks %zu symbol%s that %s's binaries use%s", pe->soname,
			      other->side->name, nmissing, nmissing == 1 ? "" : "s", users->side->name,
			      internal_only ? " (inside its own package: consistent on each side)"
			      : absent_only ? arena_printf(c->a, " (binaries %s does not hold as they are: this matters "
							       "if they are copied there)", other->side->name) : "");
		for (size_t i = 0; i < lines.n; i++)
			finding_line(c->fl, f, "%s", (const char *)lines.item[i]);
		if (nmissing > lines.n)
			finding_line(c->fl, f, "... and %zu more", nmissing - lines.n);
		finding_line(c->fl, f, "%s: %s", users->side->name, pf->path);
		finding_line(c->fl, f, "%s: %s", other->side->name, qf->path);
		val_set_str(c->a, f->fields, "soname", pe->soname);
		val_set_int(c->a, f->fields, "missing", (int64_t)nmissing);
		val_set_str(c->a, f->fields, "users_side", users->side->name);
		val_set(c->a, f->fields, "internal", val_bool(c->a, internal_only));
		val_set(c->a, f->fields, "not_there", val_bool(c->a, !internal_only && absent_only));
		if (!local)
			c->sum->broken_symbols += nmissing;
	}
}

static bool streq_null(const char *a, const char *b)
{
	return (!a && !b) || (a && b && str_eq(a, b));
}

static void compare_platform(struct cmp *c)
{
	const struct snapshot *x = c->x.side->snap, *y = c->y.side->snap;
	const char *xn = c->x.side->name, *yn = c->y.side->name;
	if (!streq_null(x->driver, y->driver) || x->driver_cuda != y->driver_cuda) {
		struct finding *f = add(c, "diff-driver", SEV_WARNING, NULL);
		char xc[16] = "", yc[16] = "";
		if (x->driver_cuda)
			cuda_release_string(x->driver_cuda, xc, sizeof xc);
		if (y->driver_cuda)
			cuda_release_string(y->driver_cuda, yc, sizeof yc);
		finding_title(c->fl, f, "NVIDIA driver: %s %s%s%s%s, %s %s%s%s%s", xn, x->driver ? x->driver : "none",
			      xc[0] ? " (CUDA " : "", xc, xc[0] ? ")" : "", yn, y->driver ? y->driver : "none",
			      yc[0] ? " (CUDA " : "", yc, yc[0] ? ")" : "");
		finding_line(c->fl, f, "the driver decides the newest CUDA runtime that can run, and which PTX it can JIT");
		val_set_str(c->a, f->fields, "a", x->driver);
		val_set_str(c->a, f->fields, "b", y->driver);
	}
	const char *xg = x->ngpus ? snapshot_gpus_text(c->a, x) : "none found";
	const char *yg = y->ngpus ? snapshot_gpus_text(c->a, y) : "none found";
	if (!str_eq(xg, yg)) {
		struct finding *f = add(c, "diff-gpu", SEV_WARNING, NULL);
		finding_title(c->fl, f, "GPUs: %s %s; %s %s", xn, xg, yn, yg);
		finding_line(c->fl, f, "kernels must exist for each compute capability (abiscope cuda --gpu)");
	}
	if (x->glibc_major != y->glibc_major || x->glibc_minor != y->glibc_minor) {
		bool older = y->glibc_major < x->glibc_major ||
			(y->glibc_major == x->glibc_major && y->glibc_minor < x->glibc_minor);
		struct finding *f = add(c, "diff-glibc", older ? SEV_WARNING : SEV_NOTE, NULL);
		finding_title(c->fl, f, "glibc: %s %d.%d, %s %d.%d", xn, x->glibc_major, x->glibc_minor, yn,
			      y->glibc_major, y->glibc_minor);
		finding_line(c->fl, f, "binaries built on the newer glibc can need GLIBC_2.x versions the older one lacks");
		val_set_int(c->a, f->fields, "a_minor", x->glibc_minor);
		val_set_int(c->a, f->fields, "b_minor", y->glibc_minor);
	}
	if ((x->py_major || y->py_major) && (x->py_major != y->py_major || x->py_minor != y->py_minor)) {
		struct finding *f = add(c, "diff-python", SEV_WARNING, NULL);
		finding_title(c->fl, f, "Python: %s %d.%d, %s %d.%d", xn, x->py_major, x->py_minor, yn, y->py_major,
			      y->py_minor);
		finding_line(c->fl, f, "extension modules tagged for one CPython (cpython-311) are not found by another");
	}
	if (!streq_null(x->torch_version, y->torch_version)) {
		struct finding *f = add(c, "diff-torch", SEV_WARNING, NULL);
		finding_title(c->fl, f, "torch: %s %s%s%s%s, %s %s%s%s%s", xn, x->torch_version ? x->torch_version : "none",
			      x->torch_cuda ? " (CUDA " : "", x->torch_cuda ? x->torch_cuda : "", x->torch_cuda ? ")" : "",
			      yn, y->torch_version ? y->torch_version : "none", y->torch_cuda ? " (CUDA " : "",
			      y->torch_cuda ? y->torch_cuda : "", y->torch_cuda ? ")" : "");
		finding_line(c->fl, f, "extensions built against one torch often fail to load against another "
			     "(undefined c10/at symbols)");
		val_set_str(c->a, f->fields, "a", x->torch_version);
		val_set_str(c->a, f->fields, "b", y->torch_version);
	}
	/* CUDA runtime majors that are installed */
	const struct side_index *ix[2] = { &c->x, &c->y };
	for (int k = 0; k < 2; k++) {
		size_t pos = 0;
		const char *key;
		void *val;
		struct ptrvec keys = { 0 };
		while (strmap_next(&ix[k]->cuda_majors, &pos, &key, &val))
			if (str_starts(key, "libcudart.so.") && !strmap_get(&ix[1 - k]->cuda_majors, key))
				ptrvec_push(c->a, &keys, (void *)key);
		/* in name order, not the map's */
		sort_items(keys.item, keys.n, sizeof *keys.item, cmp_strings);
		for (size_t i = 0; i < keys.n; i++) {
			key = keys.item[i];
			val = strmap_get(&ix[k]->cuda_majors, key);
			struct finding *f = add(c, "diff-cuda-runtime", SEV_WARNING, NULL);
			finding_title(c->fl, f, "CUDA %u runtime (%s) on %s only", (unsigned)(uintptr_t)val, key,
				      ix[k]->side->name);
			val_set_str(c->a, f->fields, "soname", key);
			val_set_str(c->a, f->fields, "side", ix[k]->side->name);
		}
	}
}

static void compare_libraries(struct cmp *c)
{
	const struct side_index *ix[2] = { &c->x, &c->y };
	/* SONAMEs of the environments' objects on one side only */
	for (int k = 0; k < 2; k++) {
		size_t n = 0;
		struct finding *f = NULL;
		for (size_t e = 0; e < ix[k]->elfs.n; e++) {
			const struct snap_file *pf = ix[k]->elfs.item[e];
			const char *key = ix[k]->keys.item[e];
			if (!pf->elf->soname || (!str_starts(key, "site/") && !str_starts(key, "env/")))
				continue;
			if (strmap_get(&ix[1 - k]->by_soname, pf->elf->soname))
				continue;
			if (!f) {
				f = add(c, "diff-library-one-side", SEV_NOTE, NULL);
			}
			if (n < MAX_LISTED)
				finding_line(c->fl, f, "%s  (%s)", pf->elf->soname, key);
			n++;
		}
		if (f) {
			finding_title(c->fl, f, "%zu librar%s on %s only", n, n == 1 ? "y" : "ies", ix[k]->side->name);
			if (n > MAX_LISTED)
				finding_line(c->fl, f, "... and %zu more", n - MAX_LISTED);
			val_set_int(c->a, f->fields, "count", (int64_t)n);
			val_set_str(c->a, f->fields, "side", ix[k]->side->name);
		}
	}
	/* device code: the GPUs a library has kernels for */
	for (size_t e = 0; e < c->x.elfs.n; e++) {
		const struct snap_file *pf = c->x.elfs.item[e];
		const char *key = c->x.keys.item[e];
		const struct snap_file *qf = strmap_get(&c->y.by_key, key);
		if (!qf || streq_null(pf->elf->cuda, qf->elf->cuda) || pf->elf->cache_only || qf->elf->cache_only)
			continue;
		struct finding *g = add(c, "diff-gpu-code", SEV_WARNING, qf->path);
		finding_title(c->fl, g, "%s has kernels for other GPUs on each side", key);
		finding_line(c->fl, g, "%s: %s", c->x.side->name, pf->elf->cuda ? pf->elf->cuda : "no device code");
		finding_line(c->fl, g, "%s: %s", c->y.side->name, qf->elf->cuda ? qf->elf->cuda : "no device code");
		val_set_str(c->a, g->fields, "a", pf->elf->cuda);
		val_set_str(c->a, g->fields, "b", qf->elf->cuda);
	}
	/* the same file of the same distribution version, different binaries */
	size_t n = 0;
	struct finding *f = NULL;
	for (size_t e = 0; e < c->x.elfs.n; e++) {
		const struct snap_file *pf = c->x.elfs.item[e];
		const char *key = c->x.keys.item[e];
		const struct snap_file *qf = strmap_get(&c->y.by_key, key);
		if (!qf || (!str_starts(key, "site/") && !str_starts(key, "env/")) || pf->elf->cache_only ||
		    qf->elf->cache_only)
			continue;
		if (pf->size == qf->size && host_elf_digest(pf->elf) == host_elf_digest(qf->elf))
			continue;
		if (!f)
			f = add(c, "diff-binary-changed", SEV_NOTE, NULL);
		if (n < MAX_LISTED)
			finding_line(c->fl, f, "%s  (%llu -> %llu bytes)", key, (unsigned long long)pf->size,
				     (unsigned long long)qf->size);
		n++;
	}
	if (f) {
		finding_title(c->fl, f, "%zu binar%s differ between %s and %s", n, n == 1 ? "y" : "ies", c->x.side->name,
			      c->y.side->name);
		if (n > MAX_LISTED)
			finding_line(c->fl, f, "... and %zu more", n - MAX_LISTED);
		val_set_int(c->a, f->fields, "count", (int64_t)n);
	}
}

/* "2.10.0+cu130" or "2.10.0+cu130 and 2.5.1" (two metadata folders) */
static const char *versions_of(struct arena *a, const struct ptrvec *v)
{
	const char *out = "";
	for (size_t i = 0; i < v->n; i++) {
		const struct snap_dist *d = v->item[i];
		out = arena_printf(a, "%s%s%s", out, i ? " and " : "", d->version ? d->version : "?");
	}
	return out;
}

static bool same_versions(const struct ptrvec *x, const struct ptrvec *y)
{
	if (x->n != y->n)
		return false;
	for (size_t i = 0; i < x->n; i++) {
		const struct snap_dist *dx = x->item[i];
		bool found = false;
		for (size_t k = 0; k < y->n && !found; k++)
			found = streq_null(dx->version, ((const struct snap_dist *)y->item[k])->version);
		if (!found)
			return false;
	}
	return true;
}

static void compare_dists(struct cmp *c)
{
	const struct side_index *ix[2] = { &c->x, &c->y };
	for (int k = 0; k < 2; k++) {
		const struct snapshot *ks = ix[k]->side->snap;
		for (size_t i = 0; i < ks->ndists; i++) {
			const char *key = dist_normalize(c->a, ks->dists[i].name ? ks->dists[i].name : "");
			const struct ptrvec *mine = strmap_get(&ix[k]->dists, key);
			const struct ptrvec *theirs = strmap_get(&ix[1 - k]->dists, key);
			if (mine->item[0] != &ks->dists[i])
				continue;	/* one report per name */
			if (theirs && (k == 1 || same_versions(mine, theirs)))
				continue;
			struct finding *f = add(c, "diff-dist", SEV_NOTE, NULL);
			const char *name = ks->dists[i].name;
			if (theirs) {
				finding_title(c->fl, f, "%s %s on %s, %s on %s", name, versions_of(c->a, mine),
					      ix[k]->side->name, versions_of(c->a, theirs), ix[1 - k]->side->name);
				val_set_str(c->a, f->fields, "a", versions_of(c->a, mine));
				val_set_str(c->a, f->fields, "b", versions_of(c->a, theirs));
			} else {
				finding_title(c->fl, f, "%s %s on %s only", name, versions_of(c->a, mine),
					      ix[k]->side->name);
				val_set_str(c->a, f->fields, k ? "b" : "a", versions_of(c->a, mine));
			}
			val_set_str(c->a, f->fields, "name", name);
		}
	}
}

/* Two machines: every binary of one side is another build on the other,
 * and none copied across loads ("cannot open shared object file: No such
 * file or directory", glibc's answer to another e_machine).  One finding
 * says so, with the page sizes when they differ too. */
static void compare_machine(struct cmp *c)
{
	const struct snapshot *x = c->x.side->snap, *y = c->y.side->snap;
	const char *xm = snapshot_machine(x), *ym = snapshot_machine(y);
	const char *xn = c->x.side->name, *yn = c->y.side->name;
	if (!str_eq(xm, ym)) {
		c->sum->other_machine = true;
		struct finding *f = add(c, "diff-machine", SEV_ERROR, NULL);
		finding_title(c->fl, f, "machine: %s %s, %s %s: no binary built for one loads on the other", xn, xm,
			      yn, ym);
		finding_line(c->fl, f, "a copy fails with \"cannot open shared object file: No such file or "
				       "directory\" (glibc's answer to another machine's ELF file); install each "
				       "side's own build of every native package");
		val_set_str(c->a, f->fields, "a", xm);
		val_set_str(c->a, f->fields, "b", ym);
	}
	if (x->page_size && y->page_size && x->page_size != y->page_size) {
		struct finding *f = add(c, "diff-page-size", SEV_WARNING, NULL);
		finding_title(c->fl, f, "page size: %s %u, %s %u", xn, x->page_size, yn, y->page_size);
		finding_line(c->fl, f, "a library whose PT_LOAD segments are aligned for smaller pages fails on the "
				       "larger (\"ELF load command address/offset not page-aligned\")");
		val_set_int(c->a, f->fields, "a_page_size", x->page_size);
		val_set_int(c->a, f->fields, "b_page_size", y->page_size);
	}
}

void host_compare(struct arena *a, const struct host_side *x, const struct host_side *y, bool internal,
		  struct findings *fl, struct compare_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	struct cmp c;
	memset(&c, 0, sizeof c);
	c.a = a;
	c.internal = internal;
	c.fl = fl;
	c.sum = sum;
	index_side(a, x, &c.x);
	index_side(a, y, &c.y);
	compare_machine(&c);
	compare_imports(&c);
	if (!sum->other_machine) {
		/* across machines every binary is another build: what one side's
		 * exports lack, or which binaries differ, says nothing more */
		compare_used_exports(&c, &c.x, &c.y);
		compare_used_exports(&c, &c.y, &c.x);
	}
	compare_platform(&c);
	if (!sum->other_machine)
		compare_libraries(&c);
	compare_dists(&c);
}
