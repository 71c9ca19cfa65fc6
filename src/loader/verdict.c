#include "loader/verdict.h"
#include "cxx/demangle.h"

#include <errno.h>

/* ---- running ---- */

enum status why_run(struct scan *s, const struct why_request *q, struct why_result *r,
		    struct diag *d)
{
	memset(r, 0, sizeof *r);
	enum status st = proc_init(&r->proc, &s->arena, &s->objs, &q->opt, q->exe, d);
	if (st != ST_OK)
		return st;
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
	if (strchr(q->target, '/')) {
		struct fs_stat fst;
		fs_stat(&s->fs, q->target, &fst);
		if (fst.kind == FS_MISSING) {
			r->target_unreadable = true;
			r->unreadable_reason = arena_strdup(&s->arena, strerror(fst.err));
		} else if (fst.kind != FS_REGULAR && fst.kind != FS_DIR) {
			r->target_unreadable = true;
			r->unreadable_reason = "not a regular file";
		}
	}
	if (r->target_unreadable)
		return ST_OK;
	r->proc.opt.lazy = q->opt.lazy;
	proc_dlopen(&r->proc, q->target, false, &r->target);
	r->loads = r->target.ok;
	r->dlerror = r->target.dlerror;
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

static const char *versions_defined(struct arena *a, const struct object *o, size_t max)
{
	if (o->kind != OBJ_ELF || !o->elf_ok || o->elf.nverdef == 0)
		return "no version definitions";
	char buf[1024];
	size_t n = 0;
	buf[0] = '\0';
	size_t shown = 0;
	for (size_t i = o->elf.nverdef; i-- > 0 && shown < max;) {
		const struct elf_verdef *v = &o->elf.verdef[i];
		if (v->flags & VER_FLG_BASE_)
			continue;
		int w = snprintf(buf + n, sizeof buf - n, "%s%s", shown ? ", " : "", v->name);
		if (w < 0 || (size_t)w >= sizeof buf - n)
			break;
		n += (size_t)w;
		shown++;
	}
	if (o->elf.nverdef > max + 1)
		snprintf(buf + n, sizeof buf - n, ", ...");
	return arena_strdup(a, buf);
}

struct conv {
	struct scan *s;
	struct why_result *r;
	const struct why_request *q;
	const char *context;	/* "while preloading X" or NULL */
	int base;		/* index of the first finding of this dlopen */
	bool is_target;
};

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
		f = finding_add(L, "library-not-found", sev, req);
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
		finding_title(L, f, "%s stops the search for %s: %s", fl->path, fl->name,
			      what ? what : (fl->dlerror ? fl->dlerror + strlen(fl->path) + 2 : "invalid"));
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
		finding_line(L, f, "it uses initial-exec TLS; a dlopen'ed object may take at most "
				   "512 bytes of static TLS (glibc.rtld.optional_static_tls)");
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
		finding_line(L, f, "it defines: %s", versions_defined(a, fl->provider->obj, 6));
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
		else
			finding_line(L, f, "no object in the global scope or in the search list of %s "
					   "defines it", short_name(c->r->target.root ? c->r->target.root->path : req));
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

static void convert_result(struct conv *c, const struct dlopen_result *dr)
{
	int *idx = arena_calloc(&c->s->arena, dr->nfail ? dr->nfail : 1, sizeof *idx);
	/* Root causes first: failures without a cause, then their consequences. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < dr->nfail; i++) {
			const struct failure *fl = &dr->fail[i];
			if ((pass == 0) != (fl->cause < 0))
				continue;
			bool first = c->is_target && !dr->ok && i == dr->first;
			struct finding *f = convert(c, fl, first);
			idx[i] = f ? f->index : -1;
			if (f && fl->cause >= 0) {
				f->caused_by = idx[fl->cause];
				const struct failure *cause = &dr->fail[fl->cause];
				finding_line(&c->s->findings, f, "%s: %s %s",
					     fl->cause_guess ? "probably caused by" : "caused by",
					     failure_kind_id(cause->kind), cause->name ? cause->name : "");
				val_set_bool(&c->s->arena, f->fields, "cause_certain", !fl->cause_guess);
			}
		}
}

void why_findings(struct scan *s, const struct why_request *q, struct why_result *r)
{
	struct findings *L = &s->findings;
	struct arena *a = &s->arena;
	if (r->target_unreadable) {
		struct finding *f = finding_add(L, "unreadable", SEV_ERROR, q->target);
		finding_title(L, f, "cannot read %s: %s", q->target, r->unreadable_reason);
		val_set_str(a, f->fields, "path", q->target);
		val_set_str(a, f->fields, "reason", r->unreadable_reason);
	}
	struct conv c = { s, r, q, NULL, 0, false };
	for (size_t i = 0; i < r->proc.nstartup_fail; i++) {
		const struct failure *fl = &r->proc.startup_fail[i];
		if (fl->loads_anyway)
			continue;
		struct finding *f = finding_add(L, "process-cannot-start", SEV_ERROR, q->exe);
		finding_title(L, f, "the process %s itself would not start: %s", q->exe, fl->dlerror);
		val_set_str(a, f->fields, "dlerror", fl->dlerror);
		f->guess = false;
	}
	for (size_t i = 0; i < r->npre; i++) {
		c.context = arena_printf(a, "while preloading %s", r->pre[i].path);
		convert_result(&c, &r->pre[i].r);
	}
	c.context = NULL;
	c.is_target = true;
	if (!r->target_unreadable)
		convert_result(&c, &r->target);
	(void)errno;
}
