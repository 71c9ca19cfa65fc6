/*
 * cmd_wheel.c: `abiscope wheel FILE.whl` - would installing this wheel work
 * in this environment, and what would it break: pip's tag check, then the
 * environment checked as it is and as it would be with the wheel installed
 * (in memory, see pyenv/wheel.h), new failures first.
 */
#include "cli/cli.h"
#include "cli/causes_out.h"
#include "cli/junit.h"
#include "cxx/torchcompat.h"
#include "pyenv/check.h"
#include "pyenv/wheel.h"
#include "cuda/arch.h"

struct wheel_cli {
	const char *file, *env, *python, *root;
	struct scan_where where;	/* --root, --cwd, --page-size */
	const char *gpus[16];
	size_t ngpus;
	const char *driver;
	bool json, verbose, assume_driver;
	enum color_mode color;
	const char *junit;	/* --junit FILE */
};

static int parse(int argc, char **argv, struct wheel_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "wheel");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			if (o->file)
				return usage_error("wheel", "one wheel at a time");
			o->file = a.value;
		} else if (arg_value(&a, "--env", &v, &err)) {
			o->env = v;
		} else if (arg_is(&a, "--assume-driver")) {
			o->assume_driver = true;
		} else if (arg_gpu_target(&a, o->gpus, &o->ngpus, ARRAY_SIZE(o->gpus), &o->driver, &err)) {
			/* --gpu, --driver */
		} else if (arg_value(&a, "--python", &v, &err)) {
			o->python = v;
		} else if (arg_value(&a, "--junit", &v, &err)) {
			o->junit = v;
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
	if (!o->file)
		return usage_error("wheel", "give the wheel file (see --help)");
	return 0;
}

static const char *verdict_key(struct arena *a, const struct module_verdict *v)
{
	(void)a;
	return v->io->module ? v->io->module : v->io->path;
}

static bool placed_by_wheel(const struct ptrvec *placed, const char *path)
{
	for (size_t i = 0; i < placed->n; i++)
		if (str_eq(placed->item[i], path))
			return true;
	return false;
}

struct wheel_report {
	const char *name, *version;
	bool tag_ok;
	const char *tag_problem, *glibc_problem;
	const struct ptrvec *own, *own_libs, *broken;	/* struct module_verdict * */
};

/* --junit: the tag check, the glibc floor, its modules, the modules it breaks */
static bool write_junit(const char *path, const struct findings *fl, const struct wheel_report *r)
{
	struct junit j;
	if (!junit_open(&j, "wheel", path))
		return false;
	junit_begin(&j, "abiscope wheel");
	char suite[512];
	snprintf(suite, sizeof suite, "%s %s", r->name, r->version);
	size_t failures = !r->tag_ok + (r->glibc_problem != NULL) + r->broken->n;
	for (size_t i = 0; i < r->own->n; i++)
		failures += junit_fails(r->own->item[i]);
	for (size_t i = 0; i < r->own_libs->n; i++)
		failures += junit_fails(r->own_libs->item[i]);
	junit_suite_begin(&j, suite, 2 + r->own->n + r->own_libs->n + r->broken->n, failures, 0);
	junit_case(&j, "wheel", "pip's tag check", "tags-not-supported",
		   r->tag_ok ? NULL : r->tag_problem ? r->tag_problem : "pip would refuse the wheel");
	junit_case(&j, "wheel", "glibc floor within its manylinux tag", "glibc-floor-above-tag", r->glibc_problem);
	for (size_t i = 0; i < r->own->n; i++)
		junit_module(&j, fl, r->own->item[i], r->name);
	char libgroup[600];
	snprintf(libgroup, sizeof libgroup, "%s: libraries its import loads itself", r->name);
	for (size_t i = 0; i < r->own_libs->n; i++)
		junit_module(&j, fl, r->own_libs->item[i], libgroup);
	for (size_t i = 0; i < r->broken->n; i++) {
		const struct module_verdict *v = r->broken->item[i];
		char group[512];
		snprintf(group, sizeof group, "breaks %s", v->io->dist ? v->io->dist->name : "(unowned)");
		junit_module(&j, fl, v, group);
	}
	junit_suite_end(&j);
	return junit_close(&j, "wheel");
}

/* "glibc  its binaries need glibc 2.14 (GLIBC_2.14, in x); manylinux promises 2.17" */
static void print_glibc_floor(const struct term *t, const struct glibc_floor *f, int tag_major, int tag_minor,
			      bool over)
{
	if (!f->major)
		return;	/* no binary, or none that needs a GLIBC_ version */
	fprintf(t->out, "%sglibc%s        ", c_bold(t), c_reset(t));
	fprintf(t->out, "%sits binaries need glibc %d.%d%s (%s, in %s)", over ? c_red(t) : "", f->major,
		f->minor, over ? c_reset(t) : "", f->version, f->member);
	if (tag_major)
		fprintf(t->out, "; its manylinux tag promises %d.%d%s", tag_major, tag_minor,
			over ? ": pip would install it on older systems, where it would not load" : "");
	fputc('\n', t->out);
}

/* The target of pip's tag check: the interpreter's version, glibc, machine. */
static void target_of(struct scan *s, const struct env_check *c, struct wheel_target *tg)
{
	memset(tg, 0, sizeof *tg);
	tg->py_major = c->env.py_major;
	tg->py_minor = c->env.py_minor;
	if (!c->env.python)
		return;
	struct diag d;
	diag_clear(&d);
	struct object *po = objcache_get(&s->objs, c->env.python, &d);
	if (!po || po->kind != OBJ_ELF || !po->elf_ok)
		return;
	struct ldso_facts f;
	ldso_facts_load(&s->arena, &s->objs, po->elf.interp, po->elf.machine, po->elf.is64, &f);
	tg->glibc_major = f.glibc_major;
	tg->glibc_minor = f.glibc_minor;
	tg->arch = po->elf.machine == EM_X86_64_ ? "x86_64" : elf_machine_name(po->elf.machine);
}

struct change {
	const struct module_verdict *before, *after;
};

/* A library the package's import loads itself: where, and what its failure costs. */
static void print_library_verdict(struct scan *s, const struct term *t, const struct module_verdict *v, bool verbose)
{
	const struct self_load *sl = v->loaded_by;
	bool ok = v->state == V_OK;
	fprintf(t->out, "   %s%s%s  %s\n", ok ? c_green(t) : c_red(t), path_basename(v->io->path), c_reset(t),
		ok ? "loads" : v->state == V_FAILS ? "would fail to load" : "not checked");
	fprintf(t->out, "      loaded at %s:%d", sl->file, sl->line);
	if (sl->call && sl->call_file)
		fprintf(t->out, " (%s at %s:%d)", sl->call, sl->call_file, sl->call_line);
	else if (sl->call)
		fprintf(t->out, " (%s)", sl->call);
	if (sl->condition)
		fprintf(t->out, ", only when `%s` (line %d)", sl->condition, sl->condition_line);
	fputc('\n', t->out);
	if (v->state != V_FAILS)
		return;
	if (v->dlerror)
		fprintf(t->out, "      dlerror: %s\n", v->dlerror);
	if (v->consequence)
		fprintf(t->out, "      %s\n", v->consequence);
	if (verbose)	/* else its root causes are said once, above */
		render_finding_roots(t, &s->findings, v->finding_first, v->finding_end, verbose);
}

static void print_verdict(struct scan *s, const struct term *t, const struct module_verdict *v, bool verbose)
{
	if (v->loaded_by) {
		print_library_verdict(s, t, v, verbose);
		return;
	}
	bool ok = v->state == V_OK && !v->gpu_fails;
	fprintf(t->out, "   %s%s%s  %s\n", ok ? c_green(t) : c_red(t),
		v->io->module ? v->io->module : path_basename(v->io->path), c_reset(t),
		v->gpu_fails ? "imports, but would fail on the GPU" : v->state == V_OK ? "imports"
		: v->state == V_FAILS ? "would fail to import"
		: v->state == V_CANNOT_TELL ? "cannot tell whether it imports" : "not checked");
	if (v->state == V_FAILS || v->gpu_fails || v->state == V_CANNOT_TELL) {
		if (v->dlerror)
			fprintf(t->out, "      ImportError: %s\n", v->dlerror);
		if (verbose || v->state == V_CANNOT_TELL)	/* else said once, in the root causes */
			render_finding_roots(t, &s->findings, v->finding_first, v->finding_end, verbose);
	}
}

/* The wheel's own binaries fail where the distribution it replaces loads
 * today: keeping that one is a fix that needs nothing else. */
static void print_keep(const struct term *t, const struct env_check *cb, const struct dist *replaced)
{
	size_t n = 0, ok = 0;
	for (size_t i = 0; i < cb->nv; i++) {
		const struct module_verdict *v = &cb->v[i];
		if (v->io->dist != replaced || (!v->io->is_extension && !v->loaded_by))
			continue;
		n++;
		ok += v->state == V_OK && !v->gpu_fails;
	}
	if (!n || ok != n)
		return;
	fprintf(t->out, "%skeep%s         %s %s, installed now, instead: the %zu binar%s its import loads all load "
		"here today\n", c_bold(t), c_reset(t), replaced->name, replaced->version, n, n == 1 ? "y" : "ies");
}

/* The verdicts whose findings the root causes are drawn from. */
struct shown_verdicts {
	const struct ptrvec *lists[3];
};

static bool finding_in(const struct shown_verdicts *sv, size_t index)
{
	for (size_t k = 0; k < ARRAY_SIZE(sv->lists); k++)
		for (size_t i = 0; i < sv->lists[k]->n; i++) {
			const struct module_verdict *v = sv->lists[k]->item[i];
			if (v->state != V_CANNOT_TELL && index >= v->finding_first && index < v->finding_end)
				return true;
		}
	return false;
}

/* skip a cause none of whose findings belongs to a verdict shown */
static bool cause_not_shown(const struct cause *c, const void *ctx)
{
	for (size_t i = 0; i < c->members.n; i++)
		if (finding_in(ctx, (size_t)((const struct finding *)c->members.item[i])->index))
			return false;
	return true;
}

/*
 * What makes the wheel's modules and libraries (and those it breaks) fail,
 * each cause said once with its fix and what it takes down, as check says
 * them: thirty undefined torch symbols of one extension are one cause.
 */
static void print_root_causes(struct scan *s, const struct term *t, const struct shown_verdicts *sv, bool verbose)
{
	struct causes cs;
	causes_build(&s->arena, &s->findings, 0, s->findings.list.n, &cs);
	size_t n = 0;
	for (size_t i = 0; i < cs.list.n; i++) {
		const struct cause *c = cs.list.item[i];
		n += !cause_not_shown(c, sv) && (verbose || c->severity != SEV_NOTE);
	}
	if (!n)
		return;
	fprintf(t->out, "\n%sroot cause%s%s (%zu)\n", c_bold(t), n == 1 ? "" : "s", c_reset(t), n);
	render_causes_text(t, &s->arena, &cs, verbose, cause_not_shown, sv);
}

int cmd_wheel(int argc, char **argv)
{
	struct wheel_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	struct scan before, after;
	scan_init_where(&before, &o.where);
	scan_init_where(&after, &o.where);
	struct wheel w;
	memset(&w, 0, sizeof w);
	int code = EXIT_OK;
	struct diag d;
	diag_clear(&d);
	if (wheel_open(&after.arena, o.file, &w, &d) != ST_OK) {
		fprintf(stderr, "abiscope wheel: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
		code = d.status == ST_IO ? EXIT_UNREADABLE : EXIT_FAILS;
		if (d.status != ST_IO)
			code = EXIT_UNREADABLE;
		goto out;
	}
	struct check_options co;
	memset(&co, 0, sizeof co);
	co.python = o.python;
	co.path_env = o.root ? NULL : getenv("PATH");
	co.virtual_env = getenv("VIRTUAL_ENV");
	co.conda_prefix = getenv("CONDA_PREFIX");
	co.ld_library_path = o.root ? NULL : getenv("LD_LIBRARY_PATH");
	co.assume_driver = o.assume_driver;
	co.cuda_home = o.root ? NULL : getenv("CUDA_HOME");
	co.gpu_specs = o.gpus;
	co.ngpu_specs = o.ngpus;
	co.driver = o.driver;
	struct env_check cb, ca;
	if (check_env(&before, o.env, &co, &cb, &d) != ST_OK) {
		fprintf(stderr, "abiscope wheel: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
		code = EXIT_UNREADABLE;
		goto out;
	}
	/* No driver on this machine: every module that links libcuda.so.1 fails
	 * before and after, which hides what the wheel changes.  Judge both as a
	 * machine with the driver does (--assume-driver's model), and say so. */
	struct causes bc;
	causes_build(&before.arena, &before.findings, 0, before.findings.list.n, &bc);
	const struct cause *no_driver = causes_driver(&bc);
	const char *no_driver_down = no_driver ? cause_takes_down(&before.arena, no_driver, o.verbose) : NULL;
	if (no_driver && !co.assume_driver) {
		co.assume_driver = true;
		no_driver_down = no_driver_down ? arena_strdup(&after.arena, no_driver_down) : NULL;
		scan_release(&before);
		scan_init_where(&before, &o.where);
		if (check_env(&before, o.env, &co, &cb, &d) != ST_OK) {
			fprintf(stderr, "abiscope wheel: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
			code = EXIT_UNREADABLE;
			goto out;
		}
	}
	/* the glibc its binaries need, against what its manylinux tags promise */
	struct glibc_floor floor;
	if (wheel_glibc_floor(&after.arena, &w, &floor, &d) != ST_OK) {
		fprintf(stderr, "abiscope wheel: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
		code = EXIT_UNREADABLE;
		goto out;
	}
	int tag_major = 0, tag_minor = 0;
	for (size_t i = 0; i < w.ntag; i++) {
		int ma, mi;
		if (wheel_tag_glibc(w.tag[i].platform, &ma, &mi) && (!tag_major || ma < tag_major ||
								      (ma == tag_major && mi < tag_minor)))
			tag_major = ma, tag_minor = mi;
	}
	bool floor_over_tag = tag_major && (floor.major > tag_major ||
					    (floor.major == tag_major && floor.minor > tag_minor));
	/* pip's tag check */
	struct wheel_target tg;
	target_of(&before, &cb, &tg);
	bool tag_ok = false;
	const char *why_not = NULL;
	for (size_t i = 0; i < w.ntag && !tag_ok; i++) {
		const char *why;
		tag_ok = wheel_tag_supported(&after.arena, &w.tag[i], &tg, &why);
		if (!why_not)
			why_not = why;
	}
	/* what it replaces, and the environment with it installed */
	const char *name = w.meta_name ? w.meta_name : w.name;
	const struct dist *replaced = strmap_get(&cb.inv.dists.by_norm, dist_normalize(&before.arena, name));
	const char *site = cb.env.nsite ? cb.env.site[0] : NULL;
	if (!site) {
		fprintf(stderr, "abiscope wheel: %s has no site-packages to install into\n", cb.env.root);
		code = EXIT_UNREADABLE;
		goto out;
	}
	struct ptrvec placed;
	memset(&placed, 0, sizeof placed);
	if (wheel_install_overlay(&after, &w, site, cb.env.root, replaced, &placed, &d) != ST_OK ||
	    check_env(&after, cb.env.root, &co, &ca, &d) != ST_OK) {
		fprintf(stderr, "abiscope wheel: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
		code = EXIT_UNREADABLE;
		goto out;
	}
	/* compare */
	struct strmap was;
	memset(&was, 0, sizeof was);
	for (size_t i = 0; i < cb.nv; i++)
		strmap_put(&before.arena, &was, verdict_key(&before.arena, &cb.v[i]), &cb.v[i]);
	struct ptrvec own, own_libs, broken, fixed;
	memset(&own, 0, sizeof own);
	memset(&own_libs, 0, sizeof own_libs);
	memset(&broken, 0, sizeof broken);
	memset(&fixed, 0, sizeof fixed);
	size_t own_fail = 0, own_lib_fail = 0;
	for (size_t i = 0; i < ca.nv; i++) {
		const struct module_verdict *v = &ca.v[i];
		if (v->loaded_by && placed_by_wheel(&placed, v->io->path)) {
			/* a library its import loads itself: listed apart from its modules */
			ptrvec_push(&after.arena, &own_libs, (void *)v);
			own_lib_fail += v->state == V_FAILS;
			continue;
		}
		if (!v->io->is_extension && v->state == V_OK)
			continue;
		if (placed_by_wheel(&placed, v->io->path)) {
			ptrvec_push(&after.arena, &own, (void *)v);
			own_fail += v->state == V_FAILS;
			continue;
		}
		const struct module_verdict *b = strmap_get(&was, verdict_key(&after.arena, v));
		if (v->state == V_FAILS && (!b || b->state == V_OK))
			ptrvec_push(&after.arena, &broken, (void *)v);
		else if (v->state == V_OK && b && b->state == V_FAILS)
			ptrvec_push(&after.arena, &fixed, (void *)v);
	}
	size_t own_gpu_fail = 0;
	for (size_t i = 0; i < own.n; i++)
		own_gpu_fail += ((const struct module_verdict *)own.item[i])->gpu_fails;
	for (size_t i = 0; i < ca.nv; i++)
		if (ca.v[i].gpu_fails && !placed_by_wheel(&placed, ca.v[i].io->path)) {
			const struct module_verdict *b = strmap_get(&was, verdict_key(&after.arena, &ca.v[i]));
			if (!b || !b->gpu_fails)
				ptrvec_push(&after.arena, &broken, (void *)&ca.v[i]);
		}
	if (!tag_ok || own_fail || own_lib_fail || own_gpu_fail || broken.n)
		code = EXIT_FAILS;
	if (o.junit) {
		struct wheel_report rep = { name, w.meta_version ? w.meta_version : w.version, tag_ok, why_not,
					    floor_over_tag ? arena_printf(&after.arena, "its binaries need glibc %d.%d "
									  "(%s, in %s); its manylinux tag promises %d.%d",
									  floor.major, floor.minor, floor.version,
									  floor.member, tag_major, tag_minor)
							   : NULL,
					    &own, &own_libs, &broken };
		if (!write_junit(o.junit, &after.findings, &rep))
			code = EXIT_UNREADABLE;
	}
	/* which torch the wheel's native code binds against (torch ABI index) */
	struct tc_report tr;
	const struct tc_package *tp = NULL;
	struct diag td = { 0 };
	const struct torchabi *tix = tc_index(&after, &td);
	if (tix) {
		tc_report_init(&tr, tix, ca.torch.found ? ca.torch.version : NULL);
		const struct ptrvec *judged[2] = { &own, &own_libs };
		for (size_t k = 0; k < 2; k++)
			for (size_t i = 0; i < judged[k]->n; i++) {
				const struct module_verdict *v = judged[k]->item[i];
				tc_add_object(&after, &tr, v->io->path, v->io->obj, name,
					      w.meta_version ? w.meta_version : w.version, v->io->module);
			}
		tc_finish(&tr);
		tp = tr.npkg ? tr.pkg[0] : NULL;
	}
	if (o.json) {
		struct jw j;
		jw_init(&j, stdout);
		jw_obj_begin(&j);
		jw_kstr(&j, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&j, "command", "wheel");
		jw_kstr(&j, "wheel", w.path);
		jw_kstr(&j, "name", name);
		jw_kstr(&j, "version", w.meta_version ? w.meta_version : w.version);
		jw_kstr(&j, "environment", cb.env.root);
		jw_kstr(&j, "replaces", replaced ? replaced->version : NULL);
		jw_kbool(&j, "tags_supported", tag_ok);
		jw_kstr(&j, "tags_problem", tag_ok ? NULL : why_not);
		jw_key(&j, "glibc_floor");
		jw_obj_begin(&j);
		jw_kstr(&j, "version", floor.major ? arena_printf(&after.arena, "%d.%d", floor.major, floor.minor) : NULL);
		jw_kstr(&j, "symbol_version", floor.version);
		jw_kstr(&j, "member", floor.member);
		jw_kint(&j, "elf_members", (long long)floor.nelf);
		jw_kstr(&j, "tag_promises", tag_major ? arena_printf(&after.arena, "%d.%d", tag_major, tag_minor) : NULL);
		jw_kbool(&j, "exceeds_tag", floor_over_tag);
		jw_obj_end(&j);
		jw_kbool(&j, "ok", code == EXIT_OK);
		jw_kbool(&j, "driver_here", !no_driver);
		jw_kstr(&j, "driver_modelled_by", no_driver ? cb.driver_stub : NULL);
		jw_key(&j, "torch_compat");
		if (tp) {
			jw_obj_begin(&j);
			jw_key(&j, "releases");
			jw_arr_begin(&j);
			for (size_t r = 0; r < tix->nrel; r++)
				if (torchset_has(&tp->ok, r))
					jw_str(&j, tix->rel[r].version);
			jw_arr_end(&j);
			jw_kstr(&j, "installed_torch", tr.installed);
			jw_kbool(&j, "installed_ok", tp->installed_ok);
			jw_kstr(&j, "summary", tc_summary(&after.arena, &tr, tp));
			jw_kstr(&j, "fix", tc_fix(&after.arena, &tr, tp));
			jw_obj_end(&j);
		} else {
			jw_null(&j);
		}
		const struct ptrvec *lists[4] = { &own, &broken, &fixed, &own_libs };
		const char *keys[4] = { "modules", "breaks", "fixes", "libraries" };
		jw_kint(&j, "failing_modules", (long long)own_fail);
		jw_kint(&j, "failing_libraries", (long long)own_lib_fail);
		for (int k = 0; k < 4; k++) {
			jw_key(&j, keys[k]);
			jw_arr_begin(&j);
			for (size_t i = 0; i < lists[k]->n; i++) {
				const struct module_verdict *v = lists[k]->item[i];
				jw_obj_begin(&j);
				jw_kstr(&j, "module", v->io->module);
				jw_kstr(&j, "path", v->io->path);
				jw_kbool(&j, "imports", v->state == V_OK);
				jw_kstr(&j, "error", v->dlerror);
				if (v->loaded_by || k == 3) {
					/* a library its package's import loads itself */
					jw_kbool(&j, "loads", v->state == V_OK);
					json_loaded_by(&j, v->loaded_by, false);
					jw_kstr(&j, "consequence", v->consequence);
				}
				jw_key(&j, "findings");
				jw_arr_begin(&j);
				for (size_t f = v->finding_first; f < v->finding_end; f++)
					render_finding_json(&j, findings_at(&after.findings, f));
				jw_arr_end(&j);
				jw_obj_end(&j);
			}
			jw_arr_end(&j);
		}
		jw_obj_end(&j);
		jw_end(&j);
		goto out;
	}
	struct term t;
	term_init(&t, stdout, o.color);
	fprintf(t.out, "%swheel%s        %s %s", c_bold(&t), c_reset(&t), name, w.meta_version ? w.meta_version : w.version);
	fprintf(t.out, " (");
	for (size_t i = 0; i < w.ntag && i < 4; i++)
		fprintf(t.out, "%s%s-%s-%s", i ? ", " : "", w.tag[i].python, w.tag[i].abi, w.tag[i].platform);
	fprintf(t.out, "%s)\n", w.ntag > 4 ? ", ..." : "");
	fprintf(t.out, "%senvironment%s  %s %s", c_bold(&t), c_reset(&t), pyenv_kind_name(cb.env.kind), cb.env.root);
	if (cb.env.py_major)
		fprintf(t.out, " (Python %d.%d, glibc %d.%d)", cb.env.py_major, cb.env.py_minor, tg.glibc_major,
			tg.glibc_minor);
	fputc('\n', t.out);
	if (no_driver) {
		fprintf(t.out, "%shere%s         this machine has no NVIDIA driver (libcuda.so.1), and every module that "
			"links it fails to import here%s%s\n", c_bold(&t), c_reset(&t),
			no_driver_down ? ": " : "", no_driver_down ? no_driver_down : "");
		if (cb.driver_stub)
			fprintf(t.out, "             below: the verdicts of a machine with the driver, modelled as "
				"--assume-driver does (libcuda.so.1 stood for by %s)\n", cb.driver_stub);
		else
			fprintf(t.out, "             a machine with the driver cannot be modelled: no CUDA toolkit stub "
				"libcuda.so (set CUDA_HOME)\n");
	}
	if (replaced)
		fprintf(t.out, "%sreplaces%s     %s %s\n", c_bold(&t), c_reset(&t), replaced->name, replaced->version);
	fprintf(t.out, "%stags%s         %s%s%s\n", c_bold(&t), c_reset(&t), tag_ok ? c_green(&t) : c_red(&t),
		tag_ok ? "supported" : why_not ? why_not : "not supported", c_reset(&t));
	if (!tag_ok)
		fprintf(t.out, "             pip would refuse it: \"%s is not a supported wheel on this platform\"\n",
			path_basename(w.path));
	print_glibc_floor(&t, &floor, tag_major, tag_minor, floor_over_tag);
	if (replaced && (own_fail || own_lib_fail))
		print_keep(&t, &cb, replaced);
	if (tp) {
		const char *fix = tc_fix(&after.arena, &tr, tp);
		fprintf(t.out, "%storch%s        %s%s%s%s\n", c_bold(&t), c_reset(&t), tp->installed_ok ? c_green(&t) : c_yellow(&t),
			tc_summary(&after.arena, &tr, tp), c_reset(&t), tp->installed_ok && tr.installed
			? arena_printf(&after.arena, ", the installed %s among them", tr.installed) : "");
		if (fix)
			fprintf(t.out, "             fix: %s\n", fix);
	}
	struct shown_verdicts sv = { { &own, &own_libs, &broken } };
	print_root_causes(&after, &t, &sv, o.verbose);
	fprintf(t.out, "\n%sits extension modules%s (%zu)\n", c_bold(&t), c_reset(&t), own.n);
	for (size_t i = 0; i < own.n; i++)
		print_verdict(&after, &t, own.item[i], o.verbose);
	if (own_libs.n) {
		fprintf(t.out, "\n%slibraries its import loads itself%s (%zu)\n", c_bold(&t), c_reset(&t), own_libs.n);
		for (size_t i = 0; i < own_libs.n; i++)
			print_verdict(&after, &t, own_libs.item[i], o.verbose);
	}
	if (broken.n) {
		fprintf(t.out, "\n%s%sbreaks%s (%zu that import today)\n", c_bold(&t), c_red(&t), c_reset(&t), broken.n);
		for (size_t i = 0; i < broken.n; i++)
			print_verdict(&after, &t, broken.item[i], o.verbose);
	}
	if (fixed.n) {
		fprintf(t.out, "\n%sfixes%s (%zu that fail today)\n", c_bold(&t), c_reset(&t), fixed.n);
		for (size_t i = 0; i < fixed.n; i++)
			print_verdict(&after, &t, fixed.item[i], o.verbose);
	}
	fprintf(t.out, "\n%s%s%s: ", code ? c_red(&t) : c_green(&t), code ? "FAIL" : "OK", c_reset(&t));
	if (!tag_ok)
		fprintf(t.out, "pip would refuse the wheel; ");
	fprintf(t.out, "%zu of %zu of its modules would fail", own_fail, own.n);
	if (own_libs.n)
		fprintf(t.out, ", %zu of %zu librar%s its import loads itself would fail to load", own_lib_fail,
			own_libs.n, own_libs.n == 1 ? "y" : "ies");
	fprintf(t.out, ", %zu other module%s would break, %zu would be fixed\n", broken.n, broken.n == 1 ? "" : "s",
		fixed.n);
out:
	wheel_close(&w);
	scan_release(&after);
	scan_release(&before);
	return code;
}
