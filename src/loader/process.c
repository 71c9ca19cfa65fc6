/*
 * process.c: start-up and dlopen() as glibc 2.36 performs them.
 *
 * Sources mirrored: elf/dl-load.c (_dl_map_object, _dl_map_object_from_fd
 * checks), elf/dl-deps.c (breadth-first dependency list, l_loader),
 * elf/dl-version.c (_dl_check_map_versions), elf/dl-open.c (version check
 * of the new search list, relocation in l_initfini order, rollback,
 * RTLD_GLOBAL), elf/dl-sort-maps.c (the DFS order), dl-reloc.c
 * (RESOLVE_MAP: which references are looked up, lazy JUMP_SLOTs).
 */
#include "loader/internal.h"
#include "loader/memo.h"
#include "loader/rebind.h"
#include "loader/tunables.h"

#include <errno.h>
#include <limits.h>

#define MAX_FAILURES 4096

const char *found_how_name(enum found_how h)
{
	switch (h) {
	case FOUND_NONE: return "not found";
	case FOUND_PATH: return "path";
	case FOUND_ALREADY: return "already loaded";
	case FOUND_SAME_FILE: return "already loaded (same file)";
	case FOUND_RPATH: return "rpath";
	case FOUND_LD_LIBRARY_PATH: return "LD_LIBRARY_PATH";
	case FOUND_RUNPATH: return "runpath";
	case FOUND_CACHE: return "ld.so.cache";
	case FOUND_DEFAULT: return "default path";
	case FOUND_EXECUTABLE: return "executable";
	case FOUND_INTERP: return "interpreter";
	}
	return "?";
}

const char *probe_outcome_name(enum probe_outcome o)
{
	switch (o) {
	case PROBE_OK: return "found";
	case PROBE_MISSING: return "no such file";
	case PROBE_EACCES: return "permission denied (skipped)";
	case PROBE_WRONG_CLASS: return "wrong ELF class (skipped)";
	case PROBE_WRONG_MACHINE: return "wrong machine (skipped)";
	case PROBE_STOP_LIST: return "error: rest of this list skipped";
	case PROBE_FATAL: return "stops the search";
	case PROBE_WOULD_BLOCK: return "FIFO: the loader would hang";
	}
	return "?";
}

const char *failure_kind_id(enum failure_kind k)
{
	switch (k) {
	case FAIL_NOT_FOUND: return "library-not-found";
	case FAIL_WRONG_CLASS: return "wrong-elf";
	case FAIL_INVALID: return "invalid-elf";
	case FAIL_CANNOT_LOAD: return "cannot-load";
	case FAIL_WOULD_BLOCK: return "loader-would-hang";
	case FAIL_VERSION: return "version-not-found";
	case FAIL_UNDEFINED: return "undefined-symbol";
	case FAIL_STATIC_TLS: return "static-tls-exhausted";
	case FAIL_EXECSTACK: return "executable-stack";
	case FAIL_LAZY_UNDEFINED: return "undefined-symbol-lazy";
	case FAIL_WEAK_VERSION: return "weak-version-not-found";
	case FAIL_NO_VERSION_INFO: return "no-version-information";
	case FAIL_CORRUPT: return "corrupt-elf";
	}
	return "unknown";
}

/* ---- failures ---- */

struct fail_list {
	struct arena *a;
	struct failure *item;
	size_t n, cap;
	bool have_first;
	size_t first;
};

/* Records a failure; fatal ones make the load fail and the first of them
 * is the error the real loader reports. */
static struct failure *fail_add(struct fail_list *fl, enum failure_kind k, struct lmap *req,
				bool fatal)
{
	if (fl->n >= MAX_FAILURES)
		return NULL;
	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? fl->cap * 2 : 16;
		fl->item = arena_grow(fl->a, fl->item, fl->n, cap, sizeof *fl->item);
		fl->cap = cap;
	}
	struct failure *f = &fl->item[fl->n++];
	memset(f, 0, sizeof *f);
	f->kind = k;
	f->requester = req;
	f->requester_path = req ? req->path : NULL;
	f->cause = -1;
	f->loads_anyway = !fatal;
	if (fatal && !fl->have_first) {
		fl->have_first = true;
		fl->first = fl->n - 1;
	}
	return f;
}

/* DSO_FILENAME: the main program is named by argv[0]. */
static const char *dso_filename(const struct process *p, const struct lmap *m)
{
	if (m->name[0])
		return m->name;
	return p->opt.argv0 ? p->opt.argv0 : m->path ? m->path : "<main program>";
}

/* ---- link maps ---- */

static void origin_of(struct process *p, const char *realname, char *out, size_t outsz)
{
	/* dl-object.c: the directory part of the name it was opened by, made
	 * absolute with the current directory, never canonicalised. */
	char full[PATH_MAX * 2];
	if (realname[0] == '/')
		snprintf(full, sizeof full, "%s", realname);
	else
		snprintf(full, sizeof full, "%s/%s", p->fs->cwd, realname);
	char *slash = strrchr(full, '/');
	if (slash == full)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	snprintf(out, outsz, "%s", full);
}

static struct lmap *new_map(struct process *p, struct object *o, const char *realname,
			    const char *reqname, struct lmap *loader)
{
	struct lmap *m = arena_alloc(p->arena, sizeof *m);
	m->obj = o;
	m->name = arena_strdup(p->arena, realname);
	m->path = m->name;
	if (reqname && !str_eq(reqname, realname))
		ptrvec_push(p->arena, &m->names, arena_strdup(p->arena, reqname));
	char origin[PATH_MAX * 2];
	origin_of(p, realname, origin, sizeof origin);
	m->origin = arena_strdup(p->arena, origin);
	m->loader = loader;
	m->seq = p->seq++;
	m->dlopen_serial = p->serial;
	return m;
}

/* Whether m is still in the namespace (a failed dlopen truncates maps). */
static bool map_live(const struct process *p, const struct lmap *m)
{
	return m->maps_index < p->maps.n && p->maps.item[m->maps_index] == m;
}

/* by_name keeps, for each name, the first live map in maps order. */
static void index_name(struct process *p, struct lmap *m, const char *name)
{
	struct lmap *cur = strmap_get(&p->by_name, name);
	if (!cur || !map_live(p, cur) || m->maps_index < cur->maps_index)
		strmap_put(p->arena, &p->by_name, name, m);
}

/* Appends m to the namespace, under each name it answers to. */
static void maps_add(struct process *p, struct lmap *m)
{
	m->maps_index = p->maps.n;
	ptrvec_push(p->arena, &p->maps, m);
	index_name(p, m, m->name);
	for (size_t i = 0; i < m->names.n; i++)
		index_name(p, m, m->names.item[i]);
	const struct object *o = m->obj;
	if (o->kind == OBJ_ELF && o->elf_ok && o->elf.soname)
		index_name(p, m, o->elf.soname);
	struct lmap *same = idmap_get(&p->by_file, o->dev, o->ino);
	if (!same || !map_live(p, same))
		idmap_put(p->arena, &p->by_file, o->dev, o->ino, m);
}

static void add_name(struct process *p, struct lmap *m, const char *name)
{
	if (name_matches_map(m, name))
		return;
	char *copy = arena_strdup(p->arena, name);
	ptrvec_push(p->arena, &m->names, copy);
	if (map_live(p, m))
		index_name(p, m, copy);
}

/* The first map in the namespace that answers to name (_dl_name_match_p
 * over the namespace list), through the index. */
static struct lmap *find_loaded(struct process *p, const char *name)
{
	struct lmap *m = strmap_get(&p->by_name, name);
	return m && map_live(p, m) ? m : NULL;
}

/* The first map of the file (dev, ino): _dl_map_object's same-file check. */
static struct lmap *find_loaded_file(struct process *p, uint64_t dev, uint64_t ino)
{
	struct lmap *m = idmap_get(&p->by_file, dev, ino);
	return m && map_live(p, m) ? m : NULL;
}

/* An ld.so assertion as glibc 2.36 prints it; the line number only for
 * the release it was read from (line236 0: not known). */
static const char *ldso_assert(struct process *p, const char *file, int line236, const char *fn,
			       const char *expr)
{
	bool known = line236 && p->facts.glibc_major == 2 && p->facts.glibc_minor == 36;
	return arena_printf(p->arena, "Inconsistency detected by ld.so: %s: %s%s%s: Assertion `%s' failed!",
			    file, known ? arena_printf(p->arena, "%d", line236) : "", known ? ": " : "", fn, expr);
}

/* A corrupt version table: glibc's message (NULL when the process dies
 * of a bad read), the object at fault and what is wrong with it. */
static struct failure *corrupt(struct fail_list *fails, struct lmap *req, struct lmap *at_fault,
			       const char *dlerror, bool dies, const char *detail)
{
	struct failure *f = fail_add(fails, FAIL_CORRUPT, req, true);
	if (f) {
		f->path = at_fault->path;
		f->name = at_fault->name;
		f->provider = at_fault;
		f->dlerror = dlerror;
		f->dies = dies;
		f->detail = detail;
	}
	return f;
}

/*
 * A constructor of m calls a lazily bound function left unresolved (its
 * first bytes call the slot: elf.h ctor_plt_syms): _dl_fixup's lookup fails
 * inside call_init, which dl_open_worker runs under _dl_catch_exception
 * (NULL, ...), so nothing catches it and the process ends (exit status
 * 127) with "symbol lookup error" (glibc's elf/tst-initfinilazyfail).  A
 * guess in part: that the call runs on the constructor's every path.
 */
static bool ctor_calls_unresolved(struct process *p, struct fail_list *fl, struct lmap *m)
{
	const struct elf_file *ef = &m->obj->elf;
	const char *prog = p->opt.argv0 ? p->opt.argv0 : p->main->path;
	for (size_t i = 0; i < fl->n; i++) {
		struct failure *f = &fl->item[i];
		if (f->kind != FAIL_LAZY_UNDEFINED || f->requester != m)
			continue;
		for (size_t k = 0; k < ef->nctor_plt_syms; k++) {
			if (ef->ctor_plt_syms[k] != f->symidx)
				continue;
			f->kind = FAIL_UNDEFINED;
			f->loads_anyway = false;
			f->dies = true;
			f->ctor_call = true;
			f->dlerror = arena_printf(p->arena, "%s: symbol lookup error: %s: undefined symbol: %s", prog,
						  dso_filename(p, m), f->name);
			if (!fl->have_first) {
				fl->have_first = true;
				fl->first = i;
			}
			return true;
		}
	}
	return false;
}

static struct failure *bad_read(struct process *p, struct fail_list *fails, struct lmap *req,
				struct lmap *at_fault, const char *table, uint64_t vaddr)
{
	return corrupt(fails, req, at_fault, NULL, true,
		       arena_printf(p->arena, "its %s lead to address %#llx, outside its memory: the "
				    "loader's read faults (SIGSEGV)", table, (unsigned long long)vaddr));
}

static const char *signal_name(int sig)
{
	return sig == 8 ? "SIGFPE" : sig == 7 ? "SIGBUS" : "SIGSEGV";
}

/* What the loader does with a corrupt table of at_fault (struct elf_fault):
 * dies of a signal, of an assertion, or fails with a fixed text. */
static struct failure *table_fault(struct process *p, struct fail_list *fails, struct lmap *req,
				   struct lmap *at_fault, const struct elf_fault *ft)
{
	const char *where = arena_printf(p->arena, "its %s: the loader %s", ft->table,
					 ft->what ? ft->what : "fails");
	if (ft->assert_expr)
		return corrupt(fails, req, at_fault,
			       ldso_assert(p, ft->assert_file, ft->assert_line, ft->assert_fn, ft->assert_expr),
			       true, where);
	if (ft->signal)
		return corrupt(fails, req, at_fault, NULL, true,
			       arena_printf(p->arena, "%s: the process dies (%s)", where, signal_name(ft->signal)));
	return corrupt(fails, req, at_fault, arena_printf(p->arena, "%s: %s", dso_filename(p, at_fault), ft->dlerror),
		       false, ft->what ? arena_printf(p->arena, "its %s %s: %s", ft->table, ft->what, ft->dlerror)
				       : arena_printf(p->arena, "its %s: %s", ft->table, ft->dlerror));
}

/* _dl_map_object_from_fd's refusals, in its order.  NULL when loadable. */
static const char *load_refusal(const struct process *p, const struct object *o, bool dlopen_mode,
				bool *is_execstack)
{
	*is_execstack = false;
	if (o->kind != OBJ_ELF || !o->elf_ok)
		return "invalid ELF header";
	const struct elf_file *ef = &o->elf;
	size_t nload = 0;
	bool has_dynamic = false;
	uint32_t stack_flags = PF_R_ | PF_W_ | PF_X_;	/* no PT_GNU_STACK: executable */
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type == PT_LOAD_) {
			if (((s->vaddr - s->offset) & (p->facts.page_size - 1)) != 0)
				return "ELF load command address/offset not page-aligned";
			nload++;
		} else if (s->type == PT_DYNAMIC_) {
			/* glibc (2.36 here) refuses an empty PT_DYNAMIC in this loop */
			if (s->filesz == 0)
				return "object file has no dynamic section";
			has_dynamic = true;
		} else if (s->type == PT_GNU_STACK_) {
			stack_flags = s->flags;
		}
	}
	if (nload == 0)
		return "object file has no loadable segments";
	if (ef->type != ET_DYN_)
		return "cannot dynamically load executable";
	if (!has_dynamic)
		return "object file has no dynamic section";
	if ((ef->dt_flags_1 & DF_1_NOOPEN_) && dlopen_mode)
		return "shared object cannot be dlopen()ed";
	if (ef->dt_flags_1 & DF_1_PIE_)
		return "cannot dynamically load position-independent executable";
	if ((stack_flags & PF_X_) && dlopen_mode) {
		*is_execstack = true;
		if (ldso_glibc_at_least(&p->facts, 2, 41))
			return "cannot enable executable stack as shared object requires: Invalid argument";
	}
	return NULL;
}

struct map_ctx {
	struct fail_list *fails;
	bool dlopen_mode;
	bool noload;		/* RTLD_NOLOAD: the root is not mapped */
	bool deepbind;		/* RTLD_DEEPBIND: marks every new map */
};

/*
 * _dl_map_object: the map for name requested by loader.  NULL on failure,
 * which is recorded.  callmap: the dlopen root (its loader is only the
 * caller whose RPATH/RUNPATH applies; it gets no l_loader).
 */
static struct lmap *map_object(struct process *p, struct map_ctx *ctx, struct lmap *loader,
			       const char *name, bool callmap, struct lmap *requester)
{
	struct lmap *m = find_loaded(p, name);
	if (m) {
		add_name(p, m, name);
		return m;
	}
	struct search_result sr;
	const char *realname = NULL;
	enum found_how how = FOUND_PATH;
	const struct lmap *via = NULL;
	struct search_trace *trace = NULL;
	if (!strchr(name, '/')) {
		search_library(p, loader, name, &sr);
		trace = sr.trace;
		if (!sr.ok) {
			struct failure *f = fail_add(ctx->fails, sr.fail, requester, true);
			if (f) {
				f->name = arena_strdup(p->arena, name);
				f->trace = trace;
				f->path = sr.fail_path;
				f->err = sr.fail == FAIL_NOT_FOUND ? sr.err : sr.fail_err;
				if (sr.fail == FAIL_NOT_FOUND && sr.err)
					f->dlerror = arena_printf(p->arena,
								  "%s: cannot open shared object file: %s",
								  name, loader_strerror(sr.err));
				else if (sr.fail == FAIL_NOT_FOUND)
					f->dlerror = arena_printf(p->arena,
								  "%s: cannot open shared object file", name);
				else if (sr.fail == FAIL_WRONG_CLASS)
					f->dlerror = arena_printf(p->arena, "%s: wrong ELF class: %s", name,
								  p->facts.is64 ? "ELFCLASS32" : "ELFCLASS64");
				else if (sr.fail == FAIL_WOULD_BLOCK)
					f->dlerror = arena_printf(p->arena, "%s: (the loader blocks reading this FIFO)",
								  sr.fail_path);
				else
					f->dlerror = arena_printf(p->arena, "%s: %s", sr.fail_path, sr.fail_msg);
			}
			return NULL;
		}
		realname = sr.realname;
		how = sr.how;
		via = sr.via;
	} else {
		char *exp = loader ? expand_dst(p, loader, name) : arena_strdup(p->arena, name);
		struct probe pr;
		uint64_t dev, ino;
		if (exp)
			verify_candidate(p, exp, &pr, &dev, &ino);
		if (!exp || pr.outcome != PROBE_OK) {
			enum failure_kind k = FAIL_NOT_FOUND;
			const char *msg;
			int ferr = 0;
			if (exp && (pr.outcome == PROBE_FATAL || pr.outcome == PROBE_WOULD_BLOCK)) {
				k = pr.outcome == PROBE_FATAL ? FAIL_INVALID : FAIL_WOULD_BLOCK;
				msg = arena_printf(p->arena, "%s: %s", exp, pr.why ? pr.why : "cannot read file data");
				ferr = pr.err;
			} else if (exp && pr.outcome == PROBE_WRONG_CLASS) {
				k = FAIL_WRONG_CLASS;
				msg = arena_printf(p->arena, "%s: wrong ELF class: %s", name,
						   p->facts.is64 ? "ELFCLASS32" : "ELFCLASS64");
			} else {
				int err = exp && pr.outcome != PROBE_WRONG_MACHINE ? pr.err : ENOENT;
				ferr = err ? err : ENOENT;
				msg = arena_printf(p->arena, "%s: cannot open shared object file: %s", name,
						   loader_strerror(ferr));
			}
			struct failure *f = fail_add(ctx->fails, k, requester, true);
			if (f) {
				f->name = arena_strdup(p->arena, name);
				f->path = exp;
				f->dlerror = msg;
				f->err = ferr;
			}
			return NULL;
		}
		realname = exp;
	}

	struct diag d;
	diag_clear(&d);
	struct object *o = objcache_get(p->oc, realname, &d);
	if (!o) {
		struct failure *f = fail_add(ctx->fails, FAIL_INVALID, requester, true);
		if (f) {
			f->name = arena_strdup(p->arena, name);
			f->path = realname;
			f->dlerror = arena_printf(p->arena, "%s: %s", realname, d.msg);
		}
		return NULL;
	}
	m = find_loaded_file(p, o->dev, o->ino);
	if (m) {
		add_name(p, m, name);
		return m;
	}
	if (ctx->noload && callmap)
		return NULL;	/* RTLD_NOLOAD: found, not loaded; dlopen returns NULL */
	bool execstack;
	const char *refusal = load_refusal(p, o, ctx->dlopen_mode, &execstack);
	m = new_map(p, o, realname, name, callmap ? NULL : loader);
	m->how = how;
	m->via = via;
	m->trace = trace;
	m->deepbind = ctx->deepbind;
	if (refusal) {
		struct failure *f = fail_add(ctx->fails, execstack ? FAIL_EXECSTACK : FAIL_CANNOT_LOAD,
					     requester, true);
		if (f) {
			f->name = arena_strdup(p->arena, name);
			f->path = m->name;
			/* _dl_map_object_from_fd names the object as requested */
			f->dlerror = arena_printf(p->arena, "%s: %s", name, refusal);
		}
		return NULL;
	}
	if (o->elf.dyn_assert) {
		/* elf_get_dynamic_info, right after the mapping */
		corrupt(ctx->fails, requester, m,
			ldso_assert(p, "get-dynamic-info.h", o->elf.dyn_assert_line, "elf_get_dynamic_info",
				    o->elf.dyn_assert),
			true, arena_printf(p->arena, "its dynamic section fails the loader's check %s",
					   o->elf.dyn_assert));
		return NULL;
	}
	if (o->elf.map_fault.phase == FAULT_MAP) {
		/* _dl_setup_hash, then the names _dl_map_object_deps reads */
		table_fault(p, ctx->fails, requester, m, &o->elf.map_fault);
		return NULL;
	}
	if (execstack) {
		struct failure *f = fail_add(ctx->fails, FAIL_EXECSTACK, requester, false);
		if (f) {
			f->name = arena_strdup(p->arena, name);
			f->path = m->name;
			f->requester = m;
			f->requester_path = m->path;
		}
	}
	maps_add(p, m);
	return m;
}

/* ---- dependencies (dl-deps.c) ---- */

struct list {
	struct lmap **item;
	size_t n, cap;
};

static void list_push(struct arena *a, struct list *l, struct lmap *m)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		l->item = arena_grow(a, l->item, l->n, cap, sizeof *l->item);
		l->cap = cap;
	}
	l->item[l->n++] = m;
}

/* Appends m unless the list holds it already (members: its set). */
static void list_add_new(struct arena *a, struct list *l, struct idmap *members, struct lmap *m)
{
	if (idmap_get(members, (uint64_t)(uintptr_t)m, 0))
		return;
	idmap_put(a, members, (uint64_t)(uintptr_t)m, 0, MAP_YES);
	list_push(a, l, m);
}

static void map_deps(struct process *p, struct map_ctx *ctx, struct list *bfs)
{
	p->sim_errno = 0;	/* _dl_map_object_deps clears errno first */
	struct idmap members = { 0 };
	for (size_t i = 0; i < bfs->n; i++)
		idmap_put(p->arena, &members, (uint64_t)(uintptr_t)bfs->item[i], 0, MAP_YES);
	for (size_t i = 0; i < bfs->n; i++) {
		struct lmap *l = bfs->item[i];
		struct object *o = l->obj;
		if (o->kind != OBJ_ELF || !o->elf_ok)
			continue;
		const struct elf_file *ef = &o->elf;
		if (!l->needed) {
			l->needed = arena_calloc(p->arena, ef->nneeded ? ef->nneeded : 1, sizeof *l->needed);
			l->nneeded = ef->nneeded;
			for (size_t k = 0; k < ef->nneeded; k++) {
				const char *name = ef->needed[k];
				if (strchr(name, '$')) {
					char *exp = expand_dst(p, l, name);
					name = exp && *exp ? exp : name;
				}
				l->needed[k] = map_object(p, ctx, l, name, false, l);
			}
		}
		for (size_t k = 0; k < l->nneeded; k++) {
			struct lmap *dep = l->needed[k];
			if (dep)
				list_add_new(p->arena, bfs, &members, dep);
		}
		/* DT_FILTER objects must load; DT_AUXILIARY ones may fail silently. */
		for (size_t k = 0; k < ef->nfilter + ef->nauxiliary; k++) {
			bool aux = k >= ef->nfilter;
			const char *name = aux ? ef->auxiliary[k - ef->nfilter] : ef->filter[k];
			struct fail_list scratch = { p->arena, NULL, 0, 0, false, 0 };
			struct map_ctx c2 = { .fails = aux ? &scratch : ctx->fails, .dlopen_mode = ctx->dlopen_mode,
					      .deepbind = ctx->deepbind };
			/* an auxiliary filter that fails to load is ignored (dl-deps.c) */
			struct lmap *dep = map_object(p, &c2, l, name, false, l);
			if (dep)
				list_add_new(p->arena, bfs, &members, dep);
		}
	}
}

/* ---- versions (dl-version.c) ---- */

static struct lmap *find_needed(struct process *p, const char *name, struct lmap **sl, size_t nsl)
{
	struct lmap *m = find_loaded(p, name);
	if (m)
		return m;
	for (size_t i = 0; i < nsl; i++)
		if (name_matches_map(sl[i], name))
			return sl[i];
	return NULL;
}

enum vmatch { VM_FOUND, VM_MISSING, VM_FAILED, VM_DIED };

/* match_symbol: the provider's Verdef chain walked for (hash, name); every
 * record met before the match must be of version 1. */
static enum vmatch match_version(struct process *p, struct fail_list *fails, struct lmap *l,
				 struct lmap *prov, const struct elf_vernaux *x)
{
	const struct elf_file *pf = &prov->obj->elf;
	if (pf->dt_verdef_value == 0) {
		corrupt(fails, l, prov, ldso_assert(p, "dl-version.c", 87, "match_symbol", "def_offset != 0"), true,
			"its DT_VERDEF is 0");
		return VM_DIED;
	}
	for (size_t d = 0; d < pf->nverdef; d++) {
		const struct elf_verdef *v = &pf->verdef[d];
		if (v->version != 1) {
			corrupt(fails, l, prov,
				arena_printf(p->arena, "%s: unsupported version %u of Verdef record",
					     dso_filename(p, prov), v->version),
				false, arena_printf(p->arena, "Verdef record %zu has vd_version %u", d, v->version));
			return VM_FAILED;
		}
		if (v->hash != x->hash)
			continue;
		if (v->aux_fault) {
			bad_read(p, fails, l, prov, "version definitions (vd_aux)", v->aux_at);
			return VM_DIED;
		}
		if (str_eq(v->name, x->name))
			return VM_FOUND;
	}
	if (pf->verdef_fault) {
		bad_read(p, fails, l, prov, "version definitions", pf->verdef_fault_at);
		return VM_DIED;
	}
	return VM_MISSING;
}

/* The provider has no DT_VERDEF: a warning, at start-up only, for each
 * entry (under dlopen glibc says nothing: one is kept, for the report). */
static void no_version_info(struct process *p, struct fail_list *fails, struct lmap *l,
			    const struct elf_verneed *vn, struct lmap *prov, bool verbose)
{
	for (size_t k = 0; k < vn->naux; k++) {
		struct failure *f = fail_add(fails, FAIL_NO_VERSION_INFO, l, false);
		if (f) {
			f->name = vn->file;
			f->version = vn->aux[k].name;
			f->provider = prov;
			f->dlerror = arena_printf(p->arena, "%s: no version information available "
						  "(required by %s)", dso_filename(p, prov), dso_filename(p, l));
		}
		if (!verbose)
			break;
	}
}

/* One Vernaux entry of l against its provider; false: stop checking l. */
static bool check_vernaux(struct process *p, struct fail_list *fails, struct lmap *l,
			  const struct elf_verneed *vn, struct lmap *prov, const struct elf_vernaux *x,
			  bool verbose)
{
	enum vmatch m = match_version(p, fails, l, prov, x);
	if (m == VM_FOUND)
		return true;
	if (m != VM_MISSING)
		return m == VM_FAILED && verbose;
	bool weak = x->flags & VER_FLG_WEAK_;
	struct failure *f = fail_add(fails, weak ? FAIL_WEAK_VERSION : FAIL_VERSION, l, !weak);
	if (!f)
		return false;
	f->name = vn->file;
	f->version = x->name;
	f->provider = prov;
	f->path = prov->name;
	f->dlerror = arena_printf(p->arena, "%s: %sversion `%s' not found (required by %s)",
				  dso_filename(p, prov), weak ? "weak " : "", x->name, dso_filename(p, l));
	return true;
}

/*
 * _dl_check_map_versions for l.  verbose: start-up's check, which reports
 * every failure, weak ones and providers without version information
 * included (rtld.c, dl-version.c match_symbol with verbose set).  The
 * tables are walked as glibc walks them (elf.h): a first Verneed record
 * not of version 1 is refused, a vn_file no loaded object answers to and a
 * DT_VERDEF of 0 trip ld.so's assertions, a walk out of the object faults.
 */
static void check_versions(struct process *p, struct fail_list *fails, struct lmap *l,
			   struct lmap **sl, size_t nsl, bool verbose)
{
	const struct object *o = l->obj;
	if (o->kind != OBJ_ELF || !o->elf_ok)
		return;
	const struct elf_file *ef = &o->elf;
	if (!ef->dt_strtab)
		return;	/* "If we don't have a string table, we must be ok." */
	if (ef->dt_verneed && ef->nverneed == 0 && ef->verneed_fault) {
		bad_read(p, fails, l, l, "version requirements (DT_VERNEED)", ef->verneed_fault_at);
		return;
	}
	if (ef->dt_verneed && ef->verneed_version != 1) {
		/* _dl_signal_exception, not the version problem receiver */
		struct failure *f = corrupt(fails, l, l,
			arena_printf(p->arena, "%s: unsupported version %u of Verneed record", dso_filename(p, l),
				     ef->verneed_version),
			false, arena_printf(p->arena, "its first Verneed record has vn_version %u", ef->verneed_version));
		if (f)
			f->startup_fatal = true;
		return;
	}
	for (size_t i = 0; i < ef->nverneed; i++) {
		const struct elf_verneed *vn = &ef->verneed[i];
		struct lmap *prov = find_needed(p, vn->file, sl, nsl);
		if (!prov) {
			if (fails->have_first)
				continue;	/* its loading failed: already reported */
			corrupt(fails, l, l, ldso_assert(p, "dl-version.c", 204, "_dl_check_map_versions", "needed != NULL"), true,
				arena_printf(p->arena, "Verneed record %zu names %s, which no loaded object is", i,
					     vn->file));
			return;
		}
		if (prov->obj->kind != OBJ_ELF || !prov->obj->elf_ok)
			continue;
		if (!prov->obj->elf.dt_verdef) {
			no_version_info(p, fails, l, vn, prov, verbose);
			continue;
		}
		for (size_t k = 0; k < vn->naux; k++)
			if (!check_vernaux(p, fails, l, vn, prov, &vn->aux[k], verbose))
				return;
	}
	if (ef->verneed_fault) {
		bad_read(p, fails, l, l, "version requirements", ef->verneed_fault_at);
		return;
	}
	/* the object's own definitions are walked for the highest index, then
	 * each non-base one's name is taken through vd_aux */
	if (ef->verdef_fault) {
		bad_read(p, fails, l, l, "version definitions", ef->verdef_fault_at);
		return;
	}
	for (size_t d = 0; d < ef->nverdef; d++)
		if (ef->verdef[d].aux_fault && !(ef->verdef[d].flags & VER_FLG_BASE_)) {
			bad_read(p, fails, l, l, "version definitions (vd_aux)", ef->verdef[d].aux_at);
			return;
		}
}

/* ---- relocation order (dl-sort-maps.c, DFS) ---- */

struct sorter {
	struct lmap **rpo;
	size_t head;
	struct idmap visited;
	const struct lmap *root;
	struct arena *a;
};

static void dfs_visit(struct sorter *s, struct lmap *m)
{
	if (s->head == 0 || idmap_get(&s->visited, (uint64_t)(uintptr_t)m, 0))
		return;
	idmap_put(s->a, &s->visited, (uint64_t)(uintptr_t)m, 0, MAP_YES);
	/* The dlopen root has no l_initfini yet when glibc sorts. */
	if (m != s->root) {
		for (size_t k = 0; k < m->nneeded; k++) {
			struct lmap *dep = m->needed[k];
			if (dep && !dep->is_main)
				dfs_visit(s, dep);
		}
	}
	if (s->head > 0)
		s->rpo[--s->head] = m;
}

static void sort_initfini(struct arena *a, struct lmap **maps, size_t n, const struct lmap *root,
			  struct lmap **out)
{
	struct sorter s = { .rpo = out, .head = n, .root = root, .a = a };
	for (size_t i = n; i-- > 0;) {
		dfs_visit(&s, maps[i]);
		if (s.head == 0)
			break;
	}
	/* Objects reached outside maps[] cannot overflow: head stops at 0. */
}

/* ---- binding (dl-reloc.c RESOLVE_MAP) ---- */

static bool object_bind_now(const struct process *p, const struct elf_file *ef)
{
	return ef->dt_bind_now || (ef->dt_flags & DF_BIND_NOW_) || (ef->dt_flags_1 & DF_1_NOW_) ||
	       p->opt.ld_bind_now;
}

static void ref_version(const struct elf_file *ef, const struct elf_vslot *vs, size_t nvs,
			uint32_t symidx, struct lookup_version *v, bool *has)
{
	*has = false;
	if (!nvs || !ef->versym.len)
		return;
	uint16_t raw;
	if (!bytes_u16(&ef->versym, (uint64_t)symidx * 2, &raw))
		return;
	uint16_t ndx = raw & VERSYM_INDEX_;
	if (ndx >= nvs || vs[ndx].hash == 0 || !vs[ndx].name)
		return;
	v->name = vs[ndx].name;
	v->hash = vs[ndx].hash;
	v->hidden = vs[ndx].hidden;
	v->filename = vs[ndx].file;
	*has = true;
}

/* The static TLS failure: named by the object whose block has no room.
 * why: what asks for the static place (a relocation type, DF_STATIC_TLS). */
static void static_tls_fail(struct process *p, struct fail_list *fails, struct lmap *req, struct lmap *owner,
			    const char *why)
{
	struct failure *f = fail_add(fails, FAIL_STATIC_TLS, req, true);
	if (!f)
		return;
	f->name = owner->name;
	f->path = owner->name;
	f->provider = owner;
	f->dlerror = arena_printf(p->arena, "%s: cannot allocate memory in static TLS block", owner->name);
	const struct elf_file *ef = &owner->obj->elf;
	const char *size = arena_printf(p->arena, "%llu bytes (aligned to %llu)", (unsigned long long)ef->tls_memsz,
					(unsigned long long)(ef->tls_align ? ef->tls_align : 1));
	const char *left = arena_printf(p->arena, "where %zu bytes are left%s",
					p->static_tls_size > p->static_tls_used ? p->static_tls_size - p->static_tls_used : 0,
					ef->tls_align > p->static_tls_align
						? arena_printf(p->arena, " at an alignment of %zu", p->static_tls_align) : "");
	f->detail = req != owner
		? arena_printf(p->arena, "%s reaches the TLS of %s %s: its %s need a place in the static TLS block, %s",
			       req->path, owner->path, why, size, left)
		: arena_printf(p->arena, "its %s of TLS are reached %s and need a place in the static TLS block, %s",
			       size, why, left);
}

/*
 * A TLS relocation of req that binds to owner's block (aarch64
 * dl-machine.h): TLS_TPREL64 needs it in the static area
 * (CHECK_STATIC_TLS: allocated now, or the load fails); TLSDESC takes it
 * there only if the optional surplus allows (TRY_STATIC_TLS), else it
 * stays dynamic.
 */
static void tls_reloc(struct process *p, struct fail_list *fails, struct lmap *req, struct lmap *owner,
		      uint8_t tls)
{
	const struct object *o = owner->obj;
	if (!tls || owner->tls_static || o->kind != OBJ_ELF || !o->elf_ok || !o->elf.has_tls)
		return;
	if (tls & RELOC_TLS_IE) {
		if (static_tls_take(p, &o->elf, false))
			owner->tls_static = true;
		else
			static_tls_fail(p, fails, req, owner,
					arena_printf(p->arena, "initial-exec (%s)", elf_reloc_type_name(EM_AARCH64_, 1030)));
	} else if (static_tls_take(p, &o->elf, true)) {
		owner->tls_static = true;
	}
}

/*
 * lookup_symbol for a relocation, through the pass's memo (memo.h).
 * Without it a chain of N objects that each miss a weak symbol walked N
 * objects N times (issue 13 item 18).
 */
static bool lookup_reloc(struct process *p, struct lmap *l, const struct elf_symref *r,
			 const struct lookup_version *ver, struct lmap **const *scopes, const size_t *scope_n,
			 struct lookup_result *res)
{
	if (!p->lookup_memo)
		return lookup_symbol(p, l, r->name, r->gnu_hash, ver, r->lookup_class, scopes, scope_n, 2, res);
	struct memo_key k = { r->name, r->gnu_hash, ver, l->deepbind, r->lookup_class };
	bool found;
	if (lookup_memo_find(p->lookup_memo, &k, &found, res))
		return found;
	found = lookup_symbol(p, l, r->name, r->gnu_hash, ver, r->lookup_class, scopes, scope_n, 2, res);
	lookup_memo_store(p->lookup_memo, &k, found, res);
	return found;
}

struct tls_event {
	uint32_t order;
	uint8_t tls;	/* enum reloc_tls */
};

/* startup: the executable's start, whose TLS is all in the initial block. */
static void relocate_object(struct process *p, struct fail_list *fails, struct lmap *l,
			    struct lmap **sl, size_t nsl, bool startup)
{
	struct object *o = l->obj;
	if (o->kind != OBJ_ELF || !o->elf_ok)
		return;
	object_check_tables(p->oc, o);
	const struct elf_file *ef = &o->elf;
	if (ef->reloc_fault_table) {
		bad_read(p, fails, l, l, arena_printf(p->arena, "relocations (%s)", ef->reloc_fault_table),
			 ef->reloc_fault_at);
		return;
	}
	if (ef->relative_assert) {
		corrupt(fails, l, l,
			ldso_assert(p, "../sysdeps/x86_64/dl-machine.h", 487, "elf_machine_rela_relative",
				    "ELFW(R_TYPE) (reloc->r_info) == R_X86_64_RELATIVE"),
			true, "one of its first DT_RELACOUNT relocations is not R_X86_64_RELATIVE");
		return;
	}
	if (ef->carried_fault.phase == FAULT_RELOC || ef->carried_fault.phase == FAULT_LOOKUP) {
		/* a snapshot's object: the original's corrupt table, as recorded */
		table_fault(p, fails, l, l, &ef->carried_fault);
		return;
	}
	bool needs_static_tls = !startup && !p->tls_by_reloc && ef->has_tls && (ef->dt_flags & DF_STATIC_TLS_) &&
				ef->tls_memsz && !l->tls_static;
	if (needs_static_tls) {
		if (static_tls_take(p, ef, false))
			l->tls_static = true;
		else
			static_tls_fail(p, fails, l, l, "initial-exec (DF_STATIC_TLS)");
	}
	const struct elf_refs *refs = object_refs(p->oc, o);
	/* TLS relocations that bind in the object itself, in their order
	 * among the lookups (aarch64) */
	size_t nself = 0, next_self = 0;
	struct tls_event self[2];
	for (int k = 0; p->tls_by_reloc && !startup && k < 2; k++)
		if (refs->self_tls_order[k] != UINT32_MAX)
			self[nself++] = (struct tls_event){ refs->self_tls_order[k], k ? RELOC_TLS_DESC : RELOC_TLS_IE };
	if (nself == 2 && self[1].order < self[0].order) {
		struct tls_event t = self[0];
		self[0] = self[1];
		self[1] = t;
	}
	const struct elf_vslot *vs;
	size_t nvs = object_vslots(p->oc, o, &vs);
	bool lazy = p->opt.lazy && !object_bind_now(p, ef);
	/* the entry where relocating stops: references after it are never made */
	const struct elf_reloc_stop *stop = lazy ? &refs->stop_lazy : &refs->stop_now;
	/* l_scope: the global scope, then the local one; RTLD_DEEPBIND swaps them. */
	struct lmap **const scopes[2] = { l->deepbind ? sl : (struct lmap **)p->global.item,
					  l->deepbind ? (struct lmap **)p->global.item : sl };
	const size_t scope_n[2] = { l->deepbind ? nsl : p->global.n, l->deepbind ? p->global.n : nsl };
	struct rebind_scopes rs;
	rebind_index(p, scopes, scope_n, &rs);
	struct bind_memory *bm = rebind_memory(p, o, refs);
	/* every reference binds as it did before (where no TLS relocation
	 * takes a block as it goes) */
	if (!stop->set && !(p->tls_by_reloc && !startup) && rebind_all(p, bm, refs, &rs))
		return;
	/* refs are in glibc's processing order, names and hashes decoded once
	 * per object (symtab.h), so a rebind in another process is lookups only. */
	for (size_t i = 0; i < refs->n; i++) {
		const struct elf_symref *r = &refs->ref[i];
		if (stop->set && r->order >= stop->order)
			break;
		for (; next_self < nself && self[next_self].order <= r->order; next_self++)
			tls_reloc(p, fails, l, l, self[next_self].tls);
		if (rebind_one(bm, i, r, &rs) && !(r->tls && p->tls_by_reloc && !startup))
			continue;	/* binds normally again; a TLS one takes its block */
		struct lookup_version ver;
		bool hasver;
		ref_version(ef, vs, nvs, r->symidx, &ver, &hasver);
		struct lookup_result res;
		bool found = lookup_reloc(p, l, r, hasver ? &ver : NULL, scopes, scope_n, &res);
		rebind_record(bm, i, hasver, found && !res.fault && !res.assumed && !res.assert_crash ? res.map->obj : NULL);
		if (res.fault) {
			struct elf_fault ft;
			memset(&ft, 0, sizeof ft);
			ft.phase = FAULT_LOOKUP;
			ft.table = res.fault_what;
			ft.what = arena_printf(p->arena, "reads it at %#llx, outside its memory, looking up %s",
					       (unsigned long long)res.fault_at, r->name);
			ft.signal = res.fault_signal;
			ft.guess = true;
			table_fault(p, fails, l, res.map, &ft);
			return;
		}
		if (found && res.assumed) {
			ptrvec_push(p->arena, &p->assumed,
				    res.gave_up_in ? arena_printf(p->arena, "%s (%s: its hash chains are too long to walk for "
									 "every lookup)", r->name, res.gave_up_in)
						   : arena_printf(p->arena, "%s (%s)", r->name, res.map->path));
			continue;
		}
		if (found && !res.assert_crash) {
			if (r->tls && p->tls_by_reloc && !startup)
				tls_reloc(p, fails, l, res.map, r->tls);
			continue;
		}
		struct elf_sym sym;
		if (!elf_sym(ef, r->symidx, &sym))
			continue;
		if (found && res.assert_crash) {
			struct failure *f = fail_add(fails, FAIL_NO_VERSION_INFO, l, true);
			if (f) {
				f->name = sym.name;
				f->version = ver.name;
				f->version_file = ver.filename;
				f->provider = res.map;
				f->symidx = r->symidx;
				f->dlerror = "Inconsistency detected by ld.so: dl-lookup.c: check_match: "
					     "Assertion `version->filename == NULL || ! _dl_name_match_p "
					     "(version->filename, map)' failed!";
			}
			continue;
		}
		if (sym.bind == STB_WEAK_)
			continue;	/* weak undefined: resolves to 0 */
		bool deferred = lazy && r->deferrable;
		struct failure *f = fail_add(fails, deferred ? FAIL_LAZY_UNDEFINED : FAIL_UNDEFINED, l,
					     !deferred);
		if (!f)
			return;
		f->name = sym.name;
		f->symidx = r->symidx;
		f->is_data = !r->deferrable;
		if (hasver) {
			f->version = ver.name;
			f->version_file = ver.filename;
		}
		f->dlerror = arena_printf(p->arena, "%s: undefined symbol: %s%s%s", dso_filename(p, l), sym.name,
					  hasver ? ", version " : "", hasver ? ver.name : "");
	}
	for (; next_self < nself && !(stop->set && self[next_self].order >= stop->order); next_self++)
		tls_reloc(p, fails, l, l, self[next_self].tls);
	if (stop->set)
		table_fault(p, fails, l, l, &stop->fault);
}

/* Relocates l's object, then lets the pages of its symbols and names leave
 * the resident set (object_forget_names): its own lookups are made, and
 * later ones into it (another object binding to it) read a few entries
 * again, from the page cache. */
static void relocate(struct process *p, struct fail_list *fails, struct lmap *l,
		     struct lmap **sl, size_t nsl, bool startup)
{
	relocate_object(p, fails, l, sl, nsl, startup);
	object_forget_names(l->obj);
}

/* ---- the executable's own start (rtld.c dl_main) ---- */

/* elf/dl-minimal.c __strerror_r: ld.so knows a few messages by heart and
 * prints "Error N" for the rest, until libc is there. */
static const char *rtld_strerror(struct arena *a, int err)
{
	switch (err) {
	case ENOMEM: return "Cannot allocate memory";
	case EINVAL: return "Invalid argument";
	case ENOENT: return "No such file or directory";
	case EPERM: return "Operation not permitted";
	case EIO: return "Input/output error";
	case EACCES: return "Permission denied";
	}
	return arena_printf(a, "Error %d", err);
}

/* A failure's message as ld.so prints it before libc is loaded. */
static const char *rtld_message(struct process *p, const struct failure *f)
{
	const char *msg = f->dlerror ? f->dlerror : "";
	if (!f->err)
		return msg;
	const char *full = loader_strerror(f->err);
	size_t ml = strlen(msg), fl = strlen(full);
	if (ml < fl + 2 || strcmp(msg + ml - fl, full) != 0)
		return msg;
	return arena_printf(p->arena, "%.*s%s", (int)(ml - fl), msg, rtld_strerror(p->arena, f->err));
}

/*
 * What the start-up does after mapping the executable's dependencies:
 * the first mapping failure is fatal (fatal_error: "error while loading
 * shared libraries", status 127); else every version requirement of every
 * object is checked and every problem printed (print_missing_version),
 * status 1 when one is not weak; else the objects are relocated, the
 * dependencies first, lazily unless LD_BIND_NOW or the object's BIND_NOW
 * says otherwise, and the first symbol that does not resolve is fatal
 * ("symbol lookup error", status 127).
 */
static void startup_check(struct process *p, struct fail_list *fl, struct list *bfs)
{
	struct arena *a = p->arena;
	const char *prog = p->opt.argv0 ? p->opt.argv0 : p->main->path;
	if (fl->have_first) {
		p->startup_error = arena_printf(a, "%s: error while loading shared libraries: %s", prog,
						rtld_message(p, &fl->item[fl->first]));
		p->startup_exit = 127;
		return;
	}
	size_t before = fl->n;
	for (size_t i = 0; i < p->maps.n; i++) {
		struct lmap *m = p->maps.item[i];
		check_versions(p, fl, m, bfs->item, bfs->n, true);
	}
	const char *lines = NULL;
	for (size_t i = before; i < fl->n; i++) {
		const struct failure *f = &fl->item[i];
		if (f->kind == FAIL_CORRUPT && f->dies) {
			/* an assertion aborts ld.so (_dl_fatal_printf: status 127),
			 * a bad read kills it (SIGSEGV); what was printed stays */
			if (f->dlerror)
				lines = arena_printf(a, "%s%s%s", lines ? lines : "", lines ? "\n" : "", f->dlerror);
			p->startup_error = lines ? lines : "(killed by SIGSEGV in ld.so: nothing printed)";
			p->startup_exit = f->dlerror ? 127 : 128 + 11;
			return;
		}
		if (f->kind == FAIL_CORRUPT && f->startup_fatal) {
			p->startup_error = arena_printf(a, "%s%s%s: error while loading shared libraries: %s",
							lines ? lines : "", lines ? "\n" : "", prog, f->dlerror);
			p->startup_exit = 127;
			return;
		}
		if (f->dlerror)
			lines = arena_printf(a, "%s%s%s: %s", lines ? lines : "", lines ? "\n" : "", prog,
					     f->dlerror);
	}
	if (fl->have_first) {
		p->startup_error = lines;
		p->startup_exit = 1;
		return;
	}
	struct lmap **sorted = arena_calloc(a, bfs->n ? bfs->n : 1, sizeof *sorted);
	sort_initfini(a, bfs->item, bfs->n, p->main, sorted);
	bool lazy = p->opt.lazy;
	p->opt.lazy = true;	/* GLRO(dl_lazy): objects bind lazily unless told not to */
	struct lookup_memo memo = { 0 };
	p->lookup_memo = &memo;
	for (size_t i = bfs->n; i-- > 0 && !fl->have_first;) {
		struct lmap *m = sorted[i];
		if (m && !m->is_interp)
			relocate(p, fl, m, bfs->item, bfs->n, true);
	}
	p->lookup_memo = NULL;
	lookup_memo_clear(&memo);
	p->opt.lazy = lazy;
	if (fl->have_first) {
		const struct failure *f = &fl->item[fl->first];
		p->startup_error = f->kind == FAIL_NO_VERSION_INFO
			? f->dlerror
			: arena_printf(a, "%s: symbol lookup error: %s", prog, f->dlerror);
		p->startup_exit = 127;
	}
}

/* ---- start-up ---- */

static void setup_llp(struct process *p)
{
	p->llp_raw = p->opt.ld_library_path;
	p->llp = NULL;
	if (p->llp_raw && *p->llp_raw)
		p->llp = split_path_list(p, p->main, p->llp_raw, ":;");
}

enum status proc_init(struct process *p, struct arena *a, struct objcache *oc,
		      const struct proc_options *opt, const char *exe, struct diag *d)
{
	memset(p, 0, sizeof *p);
	p->arena = a;
	p->oc = oc;
	p->fs = oc->fs;
	p->opt = *opt;

	struct object *eo = NULL;
	uint16_t machine = EM_X86_64_;
	bool is64 = true;
	const char *interp = NULL;
	if (exe) {
		eo = objcache_get(oc, exe, d);
		if (!eo)
			return d->status;
		if (eo->kind != OBJ_ELF || !eo->elf_ok)
			return diag_set(d, ST_UNSUPPORTED, exe, DIAG_NO_OFFSET, "not an ELF executable");
		machine = eo->elf.machine;
		is64 = eo->elf.is64;
		interp = eo->elf.interp;
	}
#if defined(__aarch64__)
	if (!exe)
		machine = EM_AARCH64_;
#endif
	ldso_facts_load(a, oc, interp, machine, is64, &p->facts);
	/* the static TLS surplus: 1664 bytes unless GLIBC_TUNABLES says */
	size_t surplus = tunables_apply(a, opt->tunables, &p->facts, oc->preset_facts != NULL);
	p->static_tls_optional = tunables_optional_static_tls(opt->tunables);
	/* sysdeps/aarch64/nptl/tls.h: TLS_DTV_AT_TP, a 16-byte tcbhead_t,
	 * nptl/descr.h's TCB_ALIGNMENT of 32; x86-64: TLS_TCB_AT_TP, 64 */
	bool aarch64 = machine == EM_AARCH64_ && is64;
	p->tls_dtv_at_tp = p->tls_by_reloc = aarch64;
	p->tls_tcb_size = aarch64 ? 16 : 0;
	p->tcb_alignment = aarch64 ? 32 : 64;
	static_tls_layout(p, NULL, 0, surplus);

	if (eo) {
		p->main = arena_alloc(a, sizeof *p->main);
		p->main->obj = eo;
		p->main->name = "";
		p->main->path = arena_strdup(a, exe);
		char real[PATH_MAX];
		int err;
		if (!fs_realpath(p->fs, exe, real, sizeof real, &err))
			snprintf(real, sizeof real, "%s", exe);
		char origin[PATH_MAX];
		path_dirname(real, origin, sizeof origin);
		p->main->origin = arena_strdup(a, origin);
		p->main->is_main = true;
		p->main->how = FOUND_EXECUTABLE;
		p->main->seq = p->seq++;
		maps_add(p, p->main);
	}
	/* The interpreter is in the namespace from the start, under its
	 * PT_INTERP name and its SONAME. */
	struct diag di;
	diag_clear(&di);
	struct object *io = objcache_get(oc, p->facts.interp, &di);
	if (io && io->kind == OBJ_ELF && io->elf_ok) {
		p->interp = arena_alloc(a, sizeof *p->interp);
		p->interp->obj = io;
		p->interp->name = arena_strdup(a, p->facts.interp);
		p->interp->path = p->interp->name;
		char origin[PATH_MAX * 2];
		origin_of(p, p->interp->name, origin, sizeof origin);
		p->interp->origin = arena_strdup(a, origin);
		p->interp->is_interp = true;
		p->interp->how = FOUND_INTERP;
		p->interp->seq = p->seq++;
		maps_add(p, p->interp);
	}
	setup_llp(p);
	if (p->main) {
		struct fail_list fl = { a, NULL, 0, 0, false, 0 };
		struct map_ctx ctx = { .fails = &fl };
		struct list bfs = { 0 };
		list_push(a, &bfs, p->main);
		map_deps(p, &ctx, &bfs);
		for (size_t i = 0; i < bfs.n; i++) {
			struct lmap *m = bfs.item[i];
			m->global = true;
			ptrvec_push(a, &p->global, m);
		}
		static_tls_layout(p, bfs.item, bfs.n, surplus);
		startup_check(p, &fl, &bfs);
		for (size_t i = 0; i < bfs.n; i++) {
			struct lmap *m = bfs.item[i];
			m->relocated = m->versions_done = m->initial = true;
		}
		p->startup_fail = fl.item;
		p->nstartup_fail = fl.n;
	} else if (p->interp) {
		p->interp->global = p->interp->relocated = p->interp->versions_done = true;
		ptrvec_push(a, &p->global, p->interp);
		static_tls_layout(p, &p->interp, 1, surplus);
	}
	if (p->interp)
		p->interp->relocated = p->interp->versions_done = p->interp->initial = true;
	/* What errno holds when the program first calls dlopen is unknowable;
	 * ENOENT (from start-up's failed probes) is what it nearly always is. */
	p->sim_errno = ENOENT;
	return ST_OK;
}

/* ---- dlopen ---- */

void proc_dlopen(struct process *p, const char *path, bool global, struct dlopen_result *r)
{
	struct dlopen_mode m = { .global = global };
	proc_dlopen_mode(p, path, &m, r);
}

struct lmap *proc_find_loaded(struct process *p, const char *path)
{
	struct lmap *m = find_loaded(p, path);
	if (m)
		return m;
	struct diag d;
	diag_clear(&d);
	struct object *o = objcache_get(p->oc, path, &d);
	return o ? find_loaded_file(p, o->dev, o->ino) : NULL;
}

void proc_dlopen_mode(struct process *p, const char *path, const struct dlopen_mode *mode,
		      struct dlopen_result *r)
{
	memset(r, 0, sizeof *r);
	p->serial++;
	size_t maps_before = p->maps.n, tls_before = p->static_tls_used;
	struct fail_list fl = { p->arena, NULL, 0, 0, false, 0 };
	struct map_ctx ctx = { .fails = &fl, .dlopen_mode = true, .noload = mode->noload,
				.deepbind = mode->deepbind };
	bool global = mode->global;
	r->global = global;
	/* The caller's RPATH/RUNPATH apply to a name without a slash, its
	 * $ORIGIN to one with; by default the caller is the executable. */
	struct lmap *caller = mode->caller ? mode->caller : p->main;
	struct lmap *root = map_object(p, &ctx, caller, path, true, NULL);
	if (!root && !fl.n && mode->noload) {
		r->noload_absent = true;	/* dlopen returns NULL, dlerror() says nothing */
		return;
	}
	if (!root) {
		r->ok = false;
		r->fail = fl.item;
		r->nfail = fl.n;
		r->first = fl.first;
		r->dlerror = fl.n ? fl.item[fl.first].dlerror : NULL;
		return;
	}
	r->root = root;
	r->root_preexisting = root->dlopen_serial != p->serial;
	r->root_was_opened = root->opened;
	if (root->opened) {
		/* Already opened before: only RTLD_GLOBAL can change. */
		r->ok = true;
		r->searchlist = root->searchlist;
		r->nsearchlist = root->nsearchlist;
		if (global)
			for (size_t i = 0; i < root->nsearchlist; i++)
				if (!root->searchlist[i]->global) {
					root->searchlist[i]->global = true;
					ptrvec_push(p->arena, &p->global, root->searchlist[i]);
				}
		return;
	}
	struct list bfs = { 0 };
	list_push(p->arena, &bfs, root);
	map_deps(p, &ctx, &bfs);
	r->searchlist = bfs.item;
	r->nsearchlist = bfs.n;

	/* Versions of every object in the new search list not yet checked. */
	for (size_t i = 0; i < bfs.n; i++)
		if (!bfs.item[i]->versions_done)
			check_versions(p, &fl, bfs.item[i], bfs.item, bfs.n, false);

	/* Relocation: dependencies first, in glibc's DFS order. */
	struct lmap **sorted = arena_calloc(p->arena, bfs.n, sizeof *sorted);
	sort_initfini(p->arena, bfs.item, bfs.n, root, sorted);
	struct lookup_memo memo = { 0 };
	p->lookup_memo = &memo;
	for (size_t i = bfs.n; i-- > 0;) {
		struct lmap *m = sorted[i];
		if (!m || m->relocated)
			continue;
		relocate(p, &fl, m, bfs.item, bfs.n, false);
	}
	p->lookup_memo = NULL;
	lookup_memo_clear(&memo);
	/* call_init, dependencies first: a constructor outside the object */
	for (size_t i = bfs.n; i-- > 0 && !fl.have_first;) {
		struct lmap *m = sorted[i];
		struct object *o = m ? m->obj : NULL;
		if (o)
			object_check_tables(p->oc, o);
		if (o && !m->relocated && o->kind == OBJ_ELF && o->elf_ok && o->elf.nctor_plt_syms && p->opt.lazy &&
		    ctor_calls_unresolved(p, &fl, m))
			break;
		if (!o || m->relocated || o->kind != OBJ_ELF || !o->elf_ok || !o->elf.init_fault)
			continue;
		if (str_eq(o->elf.init_fault, "DT_INIT"))
			corrupt(&fl, m, m, NULL, true,
				arena_printf(p->arena, "its DT_INIT, %#llx, is not in an executable segment: calling "
						       "it faults (SIGSEGV)", (unsigned long long)o->elf.init_fault_at));
		else if (str_eq(o->elf.init_fault, "DT_INIT_ARRAY entry"))
			corrupt(&fl, m, m, NULL, true,
				arena_printf(p->arena, "its constructor %llu (DT_INIT_ARRAY) is %s%#llx, not in an executable "
						       "segment: calling it faults (SIGSEGV)",
					     (unsigned long long)o->elf.init_fault_index,
					     o->elf.init_fault_unrelocated ? "left unrelocated, the raw address " : "",
					     (unsigned long long)o->elf.init_fault_at));
		else
			bad_read(p, &fl, m, m, "constructors (DT_INIT_ARRAY)", o->elf.init_fault_at);
	}
	link_causes(p, fl.item, fl.n);
	r->fail = fl.item;
	r->nfail = fl.n;
	r->ok = !fl.have_first;
	r->first = fl.first;
	r->dlerror = r->ok ? NULL : fl.item[fl.first].dlerror;
	if (!r->ok) {
		/* A failed dlopen unloads everything it mapped, and gives back
		 * the static TLS it took at the end of the block (_dl_close_worker;
		 * what TLS descriptors took of the optional surplus stays taken). */
		p->maps.n = maps_before;
		p->static_tls_used = tls_before;
		return;
	}
	root->opened = true;
	root->searchlist = bfs.item;
	root->nsearchlist = bfs.n;
	for (size_t i = 0; i < bfs.n; i++) {
		struct lmap *m = bfs.item[i];
		if (!m->relocated) {
			/* l_scope[1] of a new object: the root's search list */
			m->scope = bfs.item;
			m->nscope = bfs.n;
		}
		m->relocated = m->versions_done = true;
	}
	if (global)
		for (size_t i = 0; i < bfs.n; i++)
			if (!bfs.item[i]->global) {
				bfs.item[i]->global = true;
				ptrvec_push(p->arena, &p->global, bfs.item[i]);
			}
}

struct lmap *proc_lookup(struct process *p, struct lmap *requester, const char *name,
			 const char *version, uint32_t *symidx)
{
	struct lookup_version v = { version, version ? elf_sysv_hash(version) : 0, false, NULL };
	struct lmap **sl = requester ? requester->scope : NULL;
	size_t nsl = requester ? requester->nscope : 0;
	struct lmap **const scopes[2] = { (struct lmap **)p->global.item, sl };
	const size_t scope_n[2] = { p->global.n, nsl };
	struct lookup_result res;
	if (!lookup_symbol(p, requester, name, elf_gnu_hash(name), version ? &v : NULL,
			   RELOC_CLASS_NORMAL, scopes, scope_n, 2, &res))
		return NULL;
	if (symidx)
		*symidx = res.symidx;
	return res.map;
}

void proc_mark_save(const struct process *p, struct proc_mark *m)
{
	m->nmaps = p->maps.n;
	m->nglobal = p->global.n;
	m->static_tls = p->static_tls_used;
	m->static_tls_optional = p->static_tls_optional;
	m->sim_errno = p->sim_errno;
}

void proc_rewind(struct process *p, const struct proc_mark *m, const struct dlopen_result *r)
{
	if (p->maps.n > m->nmaps)
		p->maps.n = m->nmaps;
	if (p->global.n > m->nglobal) {
		for (size_t i = m->nglobal; i < p->global.n; i++)
			((struct lmap *)p->global.item[i])->global = false;
		p->global.n = m->nglobal;
	}
	p->static_tls_used = m->static_tls;
	p->static_tls_optional = m->static_tls_optional;
	p->sim_errno = m->sim_errno;
	if (r && r->root && r->root_preexisting && !r->root_was_opened) {
		r->root->opened = false;
		r->root->searchlist = NULL;
		r->root->nsearchlist = 0;
	}
}
