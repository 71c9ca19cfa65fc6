/*
 * cmd_why.c: `abiscope why` - would dlopen() of TARGET succeed in this
 * process, and if not, why.
 */
#include "cli/cli.h"
#include "cli/causes_out.h"
#include "cli/termsafe.h"
#include "pyenv/check.h"
#include "diagnose/verdict.h"
#include "loader/tunables.h"
#include "pyenv/interpreter.h"
#include "cli/why_module.h"
#include "cuda/verdict.h"

struct why_cli {
	const char *target;
	const char *process;
	const char *root;
	struct scan_where where;
	bool json, verbose, lazy, noload, deepbind;
	bool llp_given, tunables_given;
	const char *llp;
	const char *tunables;
	const char *from;
	enum color_mode color;
	struct why_preload pre[64];
	size_t npre;
	const char *gpus[16];		/* --gpu, for the CUDA verdicts */
	size_t ngpus;
	const char *driver;
	const char *gpu_line;		/* the CUDA target, for the header */
};

static int parse(int argc, char **argv, struct why_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "why");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			if (o->target)
				return usage_error("why", "one TARGET only (got %s and %s)", o->target, a.value);
			o->target = a.value;
		} else if (arg_is(&a, "--lazy")) {
			o->lazy = true;
		} else if (arg_is(&a, "--noload")) {
			o->noload = true;
		} else if (arg_is(&a, "--deepbind")) {
			o->deepbind = true;
		} else if (arg_value(&a, "--from", &v, &err)) {
			o->from = v;
		} else if (arg_value(&a, "--glibc-tunables", &v, &err)) {
			o->tunables = v;
			o->tunables_given = true;
		} else if (arg_value(&a, "--process", &v, &err)) {
			o->process = v;
		} else if (arg_value(&a, "--ld-library-path", &v, &err)) {
			o->llp = v;
			o->llp_given = true;
		} else if (arg_gpu_target(&a, o->gpus, &o->ngpus, ARRAY_SIZE(o->gpus), &o->driver, &err)) {
			/* --gpu, --driver */
		} else if (arg_value(&a, "--preload-global", &v, &err) || arg_value(&a, "--preload", &v, &err)) {
			if (o->npre == ARRAY_SIZE(o->pre))
				return usage_error("why", "too many preloads");
			o->pre[o->npre].path = v;
			o->pre[o->npre].global = str_eq(a.opt->name, "--preload-global");
			o->npre++;
		}
		if (err)
			return EXIT_USAGE;
	}
	if (k != ARG_END)
		return args_status(k);
	o->json = a.common.json;
	o->verbose = a.common.verbose;
	o->root = a.common.root;
	o->where = cli_where(&a.common);
	o->color = a.common.color;
	if (!o->target)
		return usage_error("why", "missing TARGET");
	return 0;
}

/* ---- text ---- */

static const struct failure *failure_for(const struct dlopen_result *r, const struct lmap *req,
					 const char *name)
{
	for (size_t i = 0; i < r->nfail; i++) {
		const struct failure *f = &r->fail[i];
		if (f->requester == req && f->name && str_eq(f->name, name) &&
		    f->kind != FAIL_UNDEFINED && f->kind != FAIL_LAZY_UNDEFINED &&
		    f->kind != FAIL_VERSION && f->kind != FAIL_WEAK_VERSION &&
		    f->kind != FAIL_NO_VERSION_INFO && f->kind != FAIL_STATIC_TLS && f->kind != FAIL_CORRUPT &&
		    !(f->kind == FAIL_EXECSTACK && f->loads_anyway))
			return f;
	}
	return NULL;
}

static const char *edge_tag(struct arena *a, const struct lmap *req, const struct lmap *dep,
			    int serial)
{
	if (dep->initial || dep->is_interp)
		return "already loaded: process start";
	if (dep->loader != req || dep->dlopen_serial != serial)
		return "already loaded";
	if (dep->how == FOUND_RPATH && dep->via && dep->via != req)
		return arena_printf(a, "rpath of %s", path_basename(dep->via->path));
	return found_how_name(dep->how);
}

struct tree_ctx {
	const struct term *t;
	struct arena *a;
	const struct dlopen_result *r;
	struct ptrvec shown;
	int serial;
	int depth;
};

static void tree(struct tree_ctx *c, const struct lmap *m, const char *prefix)
{
	if (c->depth > 64) {
		fprintf(c->t->out, "%s... (deeper than 64 levels: not drawn; --json has every object)\n", prefix);
		return;
	}
	c->depth++;
	const struct elf_file *ef = &m->obj->elf;
	size_t n = m->obj->kind == OBJ_ELF && m->obj->elf_ok ? ef->nneeded : 0;
	for (size_t k = 0; k < n; k++) {
		bool last = k + 1 == n;
		const char *name = ef->needed[k];
		const struct lmap *dep = k < m->nneeded ? m->needed[k] : NULL;
		fprintf(c->t->out, "%s%s ", prefix, last ? "└──" : "├──");
		const char *child = arena_printf(c->a, "%s%s", prefix, last ? "    " : "│   ");
		if (!dep) {
			const struct failure *f = failure_for(c->r, m, name);
			const char *what = !f ? "NOT LOADED" : f->kind == FAIL_NOT_FOUND ? "NOT FOUND"
				: f->kind == FAIL_WRONG_CLASS ? "WRONG ELF CLASS"
				: f->kind == FAIL_INVALID ? "INVALID CANDIDATE" : "CANNOT LOAD";
			fprintf(c->t->out, "%s%s %s%s\n", c_red(c->t), one_line(name), what, c_reset(c->t));
			if (f && f->path && f->kind != FAIL_NOT_FOUND)
				fprintf(c->t->out, "%s  %s: %s\n", child, one_line(f->path),
					f->dlerror ? one_line(f->dlerror) : "");
			continue;
		}
		bool seen = ptrvec_contains(&c->shown, dep);
		const char *tag = edge_tag(c->a, m, dep, c->serial);
		bool expand = !seen && !str_starts(tag, "already loaded");
		fprintf(c->t->out, "%s%s%s %s[%s]%s %s%s\n", expand ? c_cyan(c->t) : "", one_line(name), c_reset(c->t),
			c_dim(c->t), one_line(tag), c_reset(c->t), one_line(dep->path), seen ? " (see above)" : "");
		if (expand) {
			ptrvec_push(c->a, &c->shown, (void *)dep);
			tree(c, dep, child);
		}
	}
	c->depth--;
}

static const char *dlopen_flags(struct arena *a, const struct why_request *q)
{
	return arena_printf(a, "%s|RTLD_LOCAL%s%s", q->opt.lazy ? "RTLD_LAZY" : "RTLD_NOW",
			    q->noload ? "|RTLD_NOLOAD" : "", q->deepbind ? "|RTLD_DEEPBIND" : "");
}

static void print_text(struct scan *s, const struct why_cli *o, const struct why_request *q,
		       struct why_result *r, const struct interp_result *ir, const char *meaning)
{
	struct term t;
	term_init(&t, stdout, o->color);
	const struct ldso_facts *fa = &r->proc.facts;
	if (q->exe)
		fprintf(t.out, "%sprocess%s  %s%s%s%s\n", c_bold(&t), c_reset(&t), one_line(q->exe),
			ir && ir->how ? " (" : "", ir && ir->how ? ir->how : "", ir && ir->how ? ")" : "");
	fprintf(t.out, "%sloader%s   %s, glibc %d.%d", c_bold(&t), c_reset(&t), fa->interp,
		fa->glibc_major, fa->glibc_minor);
	if (fa->machine != s->objs.host.machine)
		fprintf(t.out, ", %s", elf_machine_name(fa->machine));
	if (fa->page_size != 4096)
		fprintf(t.out, ", %llu KiB pages", (unsigned long long)fa->page_size / 1024);
	fprintf(t.out, "\n");
	if (o->gpu_line)
		fprintf(t.out, "%sgpu%s      %s\n", c_bold(&t), c_reset(&t), o->gpu_line);
	if (meaning)
		fprintf(t.out, "%starget%s   %s: %s\n", c_bold(&t), c_reset(&t), one_line(q->target), one_line(meaning));
	if (q->from || q->noload || q->deepbind)
		fprintf(t.out, "%sdlopen%s   %s%s%s\n", c_bold(&t), c_reset(&t), dlopen_flags(&s->arena, q),
			q->from ? ", called from " : "", q->from ? one_line(q->from) : "");
	struct why_identity wi;	/* who built the target, and the installed torch */
	why_identity(s, q, r, &wi);
	for (size_t i = 0; i < wi.nline; i++)
		fprintf(t.out, "%s%s%s%*s%s\n", c_bold(&t), wi.line[i].label, c_reset(&t),
			(int)(9 - MIN(strlen(wi.line[i].label), 8)), "", one_line(wi.line[i].text));
	for (size_t i = 0; i < r->npre; i++)
		fprintf(t.out, "%spreload%s  %s (%s): %s\n", c_bold(&t), c_reset(&t), one_line(r->pre[i].path),
			r->pre[i].global ? "RTLD_GLOBAL" : "RTLD_LOCAL",
			r->pre[i].r.ok ? "loads" : one_line(r->pre[i].r.dlerror));
	if (r->from_loaded)
		fprintf(t.out, "%sfrom%s     %s (RTLD_LOCAL): %s\n", c_bold(&t), c_reset(&t), one_line(r->from.path),
			r->from.r.ok ? "loads" : one_line(r->from.r.dlerror));
	fputc('\n', t.out);
	if (!r->target_skipped) {
		const struct lmap *root = r->target.root;
		if (root) {
			fprintf(t.out, "%s%s%s\n", c_bold(&t), one_line(root->path), c_reset(&t));
			struct tree_ctx c = { &t, &s->arena, &r->target, { 0 }, r->proc.serial, 0 };
			ptrvec_push(&s->arena, &c.shown, (void *)root);
			tree(&c, root, "");
		} else {
			fprintf(t.out, "%s%s%s %sNOT LOADED%s\n", c_bold(&t), one_line(q->target), c_reset(&t),
				c_red(&t), c_reset(&t));
		}
		fputc('\n', t.out);
	}
	if (r->process_cannot_start) {
		fprintf(t.out, "%sverdict%s  %swould NOT load%s: the process cannot start:\n", c_bold(&t),
			c_reset(&t), c_red(&t), c_reset(&t));
		for (const char *l = r->dlerror; *l;) {
			size_t n = strcspn(l, "\n");
			fprintf(t.out, "         %s\n", one_line(arena_strndup(&s->arena, l, n)));
			l += n + (l[n] == '\n');
		}
		fputc('\n', t.out);
	} else if (r->target_unreadable)
		fprintf(t.out, "%sverdict%s  cannot read %s: %s%s%s\n\n", c_bold(&t), c_reset(&t), one_line(q->target),
			one_line(r->unreadable_reason), r->dlerror ? "\n         dlopen would say: " : "",
			r->dlerror ? one_line(r->dlerror) : "");
	else if (r->target.noload_absent)
		fprintf(t.out, "%sverdict%s  %swould NOT load%s: not loaded, and RTLD_NOLOAD does not load it "
			"(dlopen returns NULL, dlerror() is NULL)\n\n", c_bold(&t), c_reset(&t), c_red(&t),
			c_reset(&t));
	else if (r->loads)
		fprintf(t.out, "%sverdict%s  %swould load%s\n\n", c_bold(&t), c_reset(&t), c_green(&t),
			c_reset(&t));
	else
		fprintf(t.out, "%sverdict%s  %swould NOT load%s: %s\n\n", c_bold(&t), c_reset(&t),
			c_red(&t), c_reset(&t),
			r->dlerror ? one_line(r->dlerror) : "the process dies in the loader (no dlerror)");
	if (s->findings.list.n)
		render_findings_text(&t, &s->findings, o->verbose);
	for (size_t i = 0; i < r->assumptions.n; i++)
		fprintf(t.out, "%sassumed:%s %s\n", c_yellow(&t), c_reset(&t), one_line(r->assumptions.item[i]));
	for (size_t i = 0; i < fa->notes.n; i++)
		if (o->verbose || str_starts(fa->notes.item[i], "GLIBC_TUNABLES"))
			fprintf(t.out, "%sassumed:%s %s\n", c_dim(&t), c_reset(&t), one_line(fa->notes.item[i]));
}

/* ---- JSON ---- */

static void json_needed(struct jw *w, struct arena *a, const struct lmap *m, int serial)
{
	const struct elf_file *ef = &m->obj->elf;
	size_t n = m->obj->kind == OBJ_ELF && m->obj->elf_ok ? ef->nneeded : 0;
	jw_key(w, "needed");
	jw_arr_begin(w);
	for (size_t k = 0; k < n; k++) {
		const struct lmap *dep = k < m->nneeded ? m->needed[k] : NULL;
		jw_obj_begin(w);
		jw_kstr(w, "name", ef->needed[k]);
		jw_kstr(w, "path", dep ? dep->path : NULL);
		jw_kstr(w, "found", dep ? edge_tag(a, m, dep, serial) : "not loaded");
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

/* ---- the verdict with the driver ---- */

struct driver_model {
	bool modelled;
	const char *stub;
	struct scan s;
	struct why_result r;
	struct causes causes;
};

static void model_driver(const struct why_cli *o, const struct why_request *q, struct driver_model *dm)
{
	scan_init_where(&dm->s, &o->where);
	dm->stub = check_find_driver_stub(&dm->s, NULL, o->root ? NULL : getenv("CUDA_HOME"));
	if (!dm->stub) {
		scan_release(&dm->s);
		return;
	}
	struct why_request q2 = *q;
	struct why_preload *pre = arena_calloc(&dm->s.arena, q->npreload + 1, sizeof *pre);
	pre[0].path = dm->stub;
	pre[0].global = false;
	memcpy(pre + 1, q->preload, q->npreload * sizeof *pre);
	q2.preload = pre;
	q2.npreload = q->npreload + 1;
	struct diag d;
	diag_clear(&d);
	if (why_run(&dm->s, &q2, &dm->r, &d) != ST_OK) {
		scan_release(&dm->s);
		return;
	}
	why_findings(&dm->s, &q2, &dm->r);
	causes_build(&dm->s.arena, &dm->s.findings, 0, dm->s.findings.list.n, &dm->causes);
	dm->modelled = true;
}

static bool skip_driver_cause(const struct cause *c, const void *ctx)
{
	(void)ctx;
	return c->driver;
}

static void print_driver_text(struct scan *s, const struct why_cli *o, const struct causes *here,
			      const struct driver_model *dm)
{
	const struct cause *driver = causes_driver(here);
	if (!driver)
		return;
	struct term t;
	term_init(&t, stdout, o->color);
	render_no_driver(&t, &s->arena, driver, dm->modelled ? dm->stub : NULL, o->verbose);
	if (!dm->modelled)
		return;
	if (dm->r.loads)
		fprintf(t.out, "%swith the driver%s  %swould load%s\n", c_bold(&t), c_reset(&t), c_green(&t),
			c_reset(&t));
	else
		fprintf(t.out, "%swith the driver%s  %swould NOT load%s: %s\n", c_bold(&t), c_reset(&t), c_red(&t),
			c_reset(&t), dm->r.dlerror ? one_line(dm->r.dlerror) : "");
	render_causes_text(&t, &s->arena, &dm->causes, o->verbose, skip_driver_cause, NULL);
}

static void print_json(struct scan *s, const struct why_request *q, struct why_result *r,
		       const struct interp_result *ir, const struct causes *here, const struct driver_model *dm,
		       const char *meaning)
{
	struct jw w;
	jw_init(&w, stdout);
	const struct ldso_facts *fa = &r->proc.facts;
	jw_obj_begin(&w);
	jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
	jw_kstr(&w, "command", "why");
	jw_kint(&w, "schema", 2);
	jw_kstr(&w, "target", q->target);
	jw_kstr(&w, "target_meaning", meaning);
	jw_kbool(&w, "loads", !r->target_unreadable && r->loads);
	jw_kstr(&w, "error", r->target_unreadable && !r->dlerror ? r->unreadable_reason : r->dlerror);
	jw_kbool(&w, "process_cannot_start", r->process_cannot_start);
	if (r->process_cannot_start) {
		jw_key(&w, "startup_exit_status");
		jw_int(&w, r->proc.startup_exit);
	}
	jw_key(&w, "process");
	jw_obj_begin(&w);
	jw_kstr(&w, "executable", q->exe);
	jw_kstr(&w, "resolved_from", ir ? ir->via : NULL);
	jw_kstr(&w, "how", ir ? ir->how : NULL);
	jw_kstr(&w, "interpreter", fa->interp);
	jw_kstr(&w, "glibc", arena_printf(&s->arena, "%d.%d", fa->glibc_major, fa->glibc_minor));
	jw_kstr(&w, "machine", elf_machine_name(fa->machine));
	jw_key(&w, "page_size");
	jw_int(&w, (long long)fa->page_size);
	jw_kstr(&w, "cwd", s->fs.cwd);
	jw_kstr(&w, "ld_library_path", q->opt.ld_library_path);
	jw_kstr(&w, "binding", q->opt.lazy ? "RTLD_LAZY" : "RTLD_NOW");
	jw_kstr(&w, "dlopen_flags", dlopen_flags(&s->arena, q));
	jw_kstr(&w, "argv0", q->opt.argv0);
	jw_kstr(&w, "glibc_tunables", q->opt.tunables ? q->opt.tunables->raw : NULL);
	jw_key(&w, "global_scope");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->proc.global.n; i++)
		jw_str(&w, ((struct lmap *)r->proc.global.item[i])->path);
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_key(&w, "preloads");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->npre; i++) {
		jw_obj_begin(&w);
		jw_kstr(&w, "path", r->pre[i].path);
		jw_kbool(&w, "global", r->pre[i].global);
		jw_kbool(&w, "loads", r->pre[i].r.ok);
		jw_kstr(&w, "error", r->pre[i].r.dlerror);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "from");
	if (q->from) {
		jw_obj_begin(&w);
		jw_kstr(&w, "path", q->from);
		jw_kbool(&w, "already_loaded", !r->from_loaded);
		jw_kbool(&w, "loads", !r->from_loaded || r->from.r.ok);
		jw_kstr(&w, "error", r->from_loaded ? r->from.r.dlerror : NULL);
		jw_obj_end(&w);
	} else {
		jw_null(&w);
	}
	jw_key(&w, "objects");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->target.nsearchlist; i++) {
		const struct lmap *m = r->target.searchlist[i];
		jw_obj_begin(&w);
		jw_kstr(&w, "path", m->path);
		jw_kstr(&w, "soname", m->obj->kind == OBJ_ELF && m->obj->elf_ok ? m->obj->elf.soname : NULL);
		jw_kbool(&w, "already_loaded", m->relocated && m->dlopen_serial != r->proc.serial);
		json_needed(&w, &s->arena, m, r->proc.serial);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	struct why_identity wi;	/* "built_with": the target's builder and the installed torch */
	why_identity(s, q, r, &wi);
	jw_key(&w, "built_with");
	jw_value(&w, wi.json);
	jw_key(&w, "causes");
	render_causes_json(&w, here);
	jw_key(&w, "findings");
	render_findings_json(&w, &s->findings);
	jw_key(&w, "with_driver");
	if (dm->modelled) {
		jw_obj_begin(&w);
		jw_kstr(&w, "modelled_by", dm->stub);
		jw_kbool(&w, "loads", dm->r.loads);
		jw_kstr(&w, "error", dm->r.dlerror);
		jw_key(&w, "causes");
		render_causes_json(&w, &dm->causes);
		jw_key(&w, "findings");
		render_findings_json(&w, &dm->s.findings);
		jw_obj_end(&w);
	} else {
		jw_null(&w);
	}
	jw_key(&w, "assumptions");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->assumptions.n; i++)
		jw_str(&w, r->assumptions.item[i]);
	for (size_t i = 0; i < fa->notes.n; i++)
		jw_str(&w, fa->notes.item[i]);
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_end(&w);
}

int cmd_why(int argc, char **argv)
{
	struct why_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	const char *meaning = NULL;
	char not_module[1024];
	if (!strchr(o.target, '/') && !strstr(o.target, ".so")) {
		/* an import name when the environment has it, else a bare library name */
		struct why_module_args m = { o.target, o.process, o.root,
					     o.llp_given ? o.llp : (o.root ? NULL : getenv("LD_LIBRARY_PATH")),
					     o.json, o.verbose, o.color, "", &o.where };
		rc = why_module(&m);
		if (rc != WHY_NOT_A_MODULE)
			return rc;
		snprintf(not_module, sizeof not_module, "%s", m.not_module);
		meaning = not_module;
	}
	struct scan s;
	scan_init_where(&s, &o.where);
	struct interp_result ir;
	memset(&ir, 0, sizeof ir);
	const char *exe = NULL;
	const char *want = o.process ? o.process : "python3";
	interp_resolve(&s.arena, &s.fs, want, o.root ? NULL : getenv("PATH"),
		       o.root ? NULL : getenv("PYENV_VERSION"), o.root ? NULL : getenv("PYENV_ROOT"), &ir);
	if (!ir.path) {
		fprintf(stderr, "abiscope why: %s\n", ir.problem);
		scan_release(&s);
		return EXIT_USAGE;
	}
	exe = ir.path;
	struct why_request q;
	memset(&q, 0, sizeof q);
	q.target = o.target;
	q.exe = exe;
	q.preload = o.pre;
	q.npreload = o.npre;
	q.opt.lazy = o.lazy;
	q.noload = o.noload;
	q.deepbind = o.deepbind;
	q.from = o.from;
	/* argv[0] as a shell passes it: what --process says, or "python3" */
	q.opt.argv0 = o.process ? o.process : "python3";
	q.opt.ld_library_path = o.llp_given ? o.llp : (o.root ? NULL : getenv("LD_LIBRARY_PATH"));
	const char *tun = o.tunables_given ? o.tunables : (o.root ? NULL : getenv("GLIBC_TUNABLES"));
	struct glibc_tunables tunables;
	if (tun) {
		tunables_parse(&s.arena, tun, &tunables);
		q.opt.tunables = &tunables;
	}
	if (meaning)
		meaning = arena_printf(&s.arena, "not an importable module (%s); searched the way dlopen() "
				       "searches a bare library name", meaning);
	const char *bn = o.root ? NULL : getenv("LD_BIND_NOW");
	q.opt.ld_bind_now = bn && *bn;
	struct why_result r;
	struct diag d;
	diag_clear(&d);
	if (why_run(&s, &q, &r, &d) != ST_OK) {
		fprintf(stderr, "abiscope why: cannot model the process %s: %s\n", exe, d.msg);
		scan_release(&s);
		return EXIT_USAGE;
	}
	why_findings(&s, &q, &r);
	/* The CUDA verdicts for the objects of the target's load graph. */
	struct object **objs = arena_calloc(&s.arena, r.target.nsearchlist + 1, sizeof *objs);
	for (size_t i = 0; i < r.target.nsearchlist; i++)
		objs[i] = r.target.searchlist[i]->obj;
	struct cuda_options co = { o.gpus, o.ngpus, o.driver, false, o.root ? NULL : getenv("CUDA_HOME"),
				   o.root ? NULL : getenv("PATH") };
	o.gpu_line = cuda_judge_load_graph(&s, objs, r.target.nsearchlist, &co);
	/* No driver on this machine: the same load where one is (--assume-driver's model). */
	struct causes here;
	causes_build(&s.arena, &s.findings, 0, s.findings.list.n, &here);
	struct driver_model dm;
	memset(&dm, 0, sizeof dm);
	if (causes_driver(&here))
		model_driver(&o, &q, &dm);
	if (o.json)
		print_json(&s, &q, &r, &ir, &here, &dm, meaning);
	else {
		print_text(&s, &o, &q, &r, &ir, meaning);
		print_driver_text(&s, &o, &here, &dm);
	}
	if (dm.modelled)
		scan_release(&dm.s);
	int code = r.target_unreadable ? EXIT_UNREADABLE : r.loads ? EXIT_OK : EXIT_FAILS;
	scan_release(&s);
	return code;
}
