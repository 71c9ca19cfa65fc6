/*
 * cmd_check.c: `abiscope check` - would every extension module of an
 * environment import; grouped by distribution, failures first.
 */
#include "cli/cli.h"
#include "cli/progress.h"
#include "cxx/torchcompat.h"
#include "cli/junit.h"
#include "cli/causes_out.h"
#include "cli/plan_out.h"
#include "advice/plan.h"
#include "cli/termsafe.h"
#include "pyenv/check.h"
#include "host/snapshot.h"
#include "cuda/arch.h"

#include <errno.h>

struct check_cli {
	const char *paths[64];
	size_t npaths;
	const char *root, *host;
	struct scan_where where;	/* --root, --cwd, --page-size */
	/* check --host PATH: the placed binaries (judged in the host's environment,
	 * the first of paths) and the PATHs left where they are (the last nrest) */
	const char *const *focus;
	size_t nfocus, nrest;
	const char *host_python;
	const char *gpus[16];
	size_t ngpus;
	bool json, verbose;
	enum color_mode color;
	struct common_opts common;
	struct check_options opt;
	bool llp_given;
	const char *junit;	/* --junit FILE */
	bool fail_on_warning;	/* --fail-on warning */
};

static int parse(int argc, char **argv, struct check_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "check");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			if (o->npaths == ARRAY_SIZE(o->paths))
				return usage_error("check", "too many paths");
			o->paths[o->npaths++] = a.value;
		} else if (arg_is(&a, "--verify-hashes")) {
			o->opt.verify_hashes = true;
		} else if (arg_gpu_target(&a, o->gpus, &o->ngpus, ARRAY_SIZE(o->gpus), &o->opt.driver, &err)) {
			/* --gpu, --driver */
		} else if (arg_is(&a, "--no-driver")) {
			o->opt.no_driver = true;
		} else if (arg_is(&a, "--assume-driver")) {
			o->opt.assume_driver = true;
		} else if (arg_is(&a, "--libraries")) {
			o->opt.libraries_too = true;
		} else if (arg_value(&a, "--python", &v, &err)) {
			o->opt.python = v;
		} else if (arg_value(&a, "--junit", &v, &err)) {
			o->junit = v;
		} else if (arg_fail_on(&a, &o->fail_on_warning, &err)) {
			/* --fail-on */
		} else if (arg_value(&a, "--host", &v, &err)) {
			o->host = v;
		} else if (arg_value(&a, "--ld-library-path", &v, &err)) {
			o->opt.ld_library_path = v;
			o->llp_given = true;
		}
		if (err)
			return EXIT_USAGE;
	}
	if (k != ARG_END)
		return args_status(k);
	o->root = a.common.root;
	o->where = cli_where(&a.common);
	o->json = a.common.json;
	o->common = a.common;
	o->verbose = a.common.verbose;
	o->color = a.common.color;
	return 0;
}

/* ---- grouping by distribution ---- */

struct group {
	const char *name;	/* distribution name, or a folder for unowned objects */
	const char *version;
	const struct dist *dist;
	size_t nmod, nfail, nother;
	size_t nunsure;		/* of nother: cannot tell whether they import */
	struct ptrvec verdicts;	/* struct module_verdict * */
};

static struct group *group_for(struct scan *s, struct ptrvec *groups, const struct module_verdict *v)
{
	const struct dist *d = v->io->dist;
	const char *name = d ? d->name : v->io->in_stdlib ? "(the standard library)"
		: v->io->package ? v->io->package : "(not owned by any distribution)";
	for (size_t i = 0; i < groups->n; i++) {
		struct group *g = groups->item[i];
		if (g->dist == d && str_eq(g->name, name))
			return g;
	}
	struct group *g = arena_alloc(&s->arena, sizeof *g);
	g->name = name;
	g->version = d ? d->version : NULL;
	g->dist = d;
	ptrvec_push(&s->arena, groups, g);
	return g;
}

static void groups_of(struct scan *s, const struct env_check *c, struct ptrvec *groups)
{
	for (size_t i = 0; i < c->nv; i++) {
		const struct module_verdict *v = &c->v[i];
		struct group *g = group_for(s, groups, v);
		ptrvec_push(&s->arena, &g->verdicts, (void *)v);
		g->nmod++;
		if (v->state == V_FAILS || v->gpu_fails)
			g->nfail++;
		if (v->state == V_OTHER_PYTHON || v->state == V_CANNOT_TELL || (v->state == V_OK && v->guess))
			g->nother++;
		g->nunsure += v->state == V_CANNOT_TELL;
	}
}

/* ---- text ---- */

static const char *display_name(const struct module_verdict *v)
{
	return one_line(v->io->module ? v->io->module : path_basename(v->io->path));
}

static void print_env_header(const struct term *t, const struct env_check *c, bool verbose)
{
	const struct pyenv *e = &c->env;
	fprintf(t->out, "%senvironment%s  %s %s", c_bold(t), c_reset(t), pyenv_kind_name(e->kind), one_line(e->root));
	if (e->py_major)
		fprintf(t->out, " (Python %d.%d)", e->py_major, e->py_minor);
	fputc('\n', t->out);
	if (e->python && verbose)
		fprintf(t->out, "%sinterpreter%s  %s\n", c_bold(t), c_reset(t), one_line(e->python));
	if (c->python_problem)
		fprintf(t->out, "%sinterpreter%s  %s%s%s\n", c_bold(t), c_reset(t), c_red(t), one_line(c->python_problem),
			c_reset(t));
	if (verbose)
		fprintf(t->out, "%sobjects%s      %zu ELF objects: %zu extension modules (and %zu of the standard "
			"library), %zu distributions\n", c_bold(t), c_reset(t), c->inv.nobj, c->nextensions, c->nstdlib,
			c->inv.dists.all.n);
	if (c->torch.found) {
		fprintf(t->out, "%storch%s        %s%s%s", c_bold(t), c_reset(t), c->torch.version ? one_line(c->torch.version) : "?",
			c->torch.cuda ? ", CUDA " : ", CPU build", c->torch.cuda ? c->torch.cuda : "");
		if (c->torch_replayed)
			fprintf(t->out, "; import torch: %s%s%s (%zu libraries loaded by the import)\n",
				c->torch_import.ok ? c_green(t) : c_red(t),
				c->torch_import.ok ? "ok" : c->torch_import.error, c_reset(t), c->torch_import.nstep);
		else
			fputc('\n', t->out);
	}
	if (c->driver_stub)
		fprintf(t->out, "%sdriver%s       assumed: libcuda.so.1 modelled by %s\n", c_bold(t), c_reset(t),
			c->driver_stub);
	if (c->gpu_line)
		fprintf(t->out, "%sgpu%s          %s\n", c_bold(t), c_reset(t), c->gpu_line);
}

/* A library its package's import loads itself: where, and what its failure costs. */
static void print_self_loaded(const struct term *t, const struct module_verdict *v, bool verbose)
{
	const struct self_load *sl = v->loaded_by;
	fprintf(t->out, "   %s%s%s  %s: loaded at %s:%d", c_bold(t), display_name(v), c_reset(t),
		v->state == V_OK ? "loads" : v->state == V_FAILS ? "would fail to load" : "not checked",
		one_line(sl->file), sl->line);
	if (sl->call && sl->call_file)
		fprintf(t->out, " (%s at %s:%d)", one_line(sl->call), one_line(sl->call_file), sl->call_line);
	else if (sl->call)
		fprintf(t->out, " (%s)", one_line(sl->call));
	fputc('\n', t->out);
	if (v->state != V_FAILS)
		return;
	/* the causes above say the error (its ImportError line); -v repeats it here */
	if (v->dlerror && (verbose || v->finding_first == v->finding_end))
		fprintf(t->out, "      %sdlerror: %s%s\n", c_dim(t), one_line(v->dlerror), c_reset(t));
	if (v->consequence)
		fprintf(t->out, "      %s\n", one_line(v->consequence));
}

/* -v: every distribution and module with its findings, after the causes. */
static void print_env_detail(struct scan *s, const struct term *t, const struct env_check *c, bool verbose)
{
	const struct pyenv *e = &c->env;
	fprintf(t->out, "%sper module%s\n", c_bold(t), c_reset(t));
	/* torch's own import failure first */
	for (size_t i = 0; i < s->findings.list.n; i++) {
		const struct finding *f = s->findings.list.item[i];
		if (str_eq(f->id, "import-fails")) {
			fprintf(t->out, "%sFAILS%s  import torch\n", c_red(t), c_reset(t));
			render_finding_roots(t, &s->findings, i, i + 1, verbose);
			render_finding_children(t, &s->findings, 0, s->findings.list.n, f, 1, verbose);
			fputc('\n', t->out);
		}
	}
	struct ptrvec groups = { 0 };
	groups_of(s, c, &groups);
	for (int pass = 0; pass < 2; pass++)
		for (size_t gi = 0; gi < groups.n; gi++) {
			const struct group *g = groups.item[gi];
			bool notable = g->nfail > 0 || g->nother > 0;
			if ((pass == 0) != notable)
				continue;
			if (pass == 1 && !verbose)
				continue;
			bool stdlib_only = true;
			for (size_t k = 0; k < g->verdicts.n; k++)
				stdlib_only &= ((const struct module_verdict *)g->verdicts.item[k])->io->in_stdlib;
			if (stdlib_only && !g->nfail && !verbose)
				continue;
			fprintf(t->out, "%s%s%s  %s%s%s%s\n", g->nfail ? c_red(t) : g->nother ? c_yellow(t) : c_green(t),
				g->nfail ? "FAILS" : g->nother ? "WARN " : "ok   ",
				c_reset(t), c_bold(t), one_line(g->name), g->version ? " " : "", g->version ? one_line(g->version) : "");
			for (size_t k = 0; k < g->verdicts.n; k++) {
				const struct module_verdict *v = g->verdicts.item[k];
				if (v->state == V_OK && !v->gpu_fails && !v->guess && !verbose)
					continue;
				if (v->loaded_by) {
					print_self_loaded(t, v, true);
					if (v->state == V_FAILS)
						render_finding_roots(t, &s->findings, v->finding_first, v->finding_end, verbose);
					continue;
				}
				fprintf(t->out, "   %s%s%s  %s\n", c_bold(t), display_name(v), c_reset(t),
					v->gpu_fails ? "imports, but would fail on the GPU"
					: v->state == V_OK && v->guess ? "imports, a guess: some of its symbols were bound to "
					  "libraries the snapshot describes by name only"
					: v->state == V_OK ? (v->in_torch_import ? "imports (loaded by import torch)" : "imports")
					: v->state == V_FAILS ? "would fail to import"
					: v->state == V_OTHER_PYTHON ? "built for another Python: never imported"
					: v->state == V_CANNOT_TELL ? "cannot tell whether it imports"
					: "not checked");
				if (v->state == V_OTHER_PYTHON || v->state == V_CANNOT_TELL || v->gpu_fails ||
				    (verbose && v->state == V_OK))
					render_finding_roots(t, &s->findings, v->finding_first, v->finding_end, verbose);
				if (v->state != V_FAILS)
					continue;
				if (v->dlerror)
					fprintf(t->out, "      %sImportError: %s%s\n", c_dim(t), one_line(v->dlerror), c_reset(t));
				render_finding_roots(t, &s->findings, v->finding_first, v->finding_end, verbose);
			}
			if (pass == 0)
				fputc('\n', t->out);
		}
	if (c->env_finding_end > c->env_finding_first) {
		fprintf(t->out, "%senvironment%s\n", c_bold(t), c_reset(t));
		render_finding_roots(t, &s->findings, c->env_finding_first, c->env_finding_end, verbose);
		fputc('\n', t->out);
	}
	if (verbose) {
		for (size_t i = 0; i < e->notes.n; i++)
			fprintf(t->out, "%snote:%s %s\n", c_dim(t), c_reset(t), (const char *)e->notes.item[i]);
		for (size_t i = 0; i < c->inv.notes.n; i++)
			fprintf(t->out, "%snote:%s %s\n", c_dim(t), c_reset(t), one_line(c->inv.notes.item[i]));
		for (size_t i = 0; i < c->torch.notes.n; i++)
			fprintf(t->out, "%snote:%s %s\n", c_dim(t), c_reset(t), (const char *)c->torch.notes.item[i]);
	}
}

/* ---- JSON ---- */

/* cannot-tell: the package's own load the verdict depends on, else null */
static void print_depends_on_json(struct jw *w, const struct self_load *sl)
{
	jw_key(w, "depends_on");
	if (!sl) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	jw_kstr(w, "library", sl->path);
	jw_kstr(w, "file", sl->file);
	jw_kint(w, "line", sl->line);
	jw_kstr(w, "condition", sl->condition);
	jw_key(w, "condition_line");
	if (sl->condition)
		jw_int(w, sl->condition_line);
	else
		jw_null(w);
	jw_obj_end(w);
}

/* a library its package's import loads itself: where, by which call, caught or not; else null */
void json_loaded_by(struct jw *w, const struct self_load *sl, bool with_global)
{
	jw_key(w, "loaded_by");
	if (!sl) {
		jw_null(w);
		return;
	}
	jw_obj_begin(w);
	jw_kstr(w, "file", sl->file);
	jw_kint(w, "line", sl->line);
	jw_kstr(w, "call", sl->call);
	jw_kstr(w, "call_file", sl->call_file);
	jw_key(w, "call_line");
	if (sl->call_file)
		jw_int(w, sl->call_line);
	else
		jw_null(w);
	jw_kstr(w, "condition", sl->condition);
	if (with_global)
		jw_kbool(w, "global", sl->global);
	jw_kbool(w, "caught", sl->caught);
	jw_kstr(w, "caught_by", sl->caught_by);
	jw_kstr(w, "caught_file", sl->caught_file);
	jw_key(w, "caught_line");
	if (sl->caught)
		jw_int(w, sl->caught_line);
	else
		jw_null(w);
	jw_obj_end(w);
}

static void print_env_json(struct scan *s, struct jw *w, const struct env_check *c)
{
	const struct pyenv *e = &c->env;
	jw_obj_begin(w);
	jw_kstr(w, "root", e->root);
	jw_kstr(w, "kind", pyenv_kind_name(e->kind));
	jw_kstr(w, "python", e->python);
	jw_kstr(w, "python_version", e->py_major ? arena_printf(&s->arena, "%d.%d", e->py_major, e->py_minor) : NULL);
	jw_kstr(w, "interpreter_problem", c->python_problem);
	jw_key(w, "site_packages");
	jw_arr_begin(w);
	for (size_t i = 0; i < e->nsite; i++)
		jw_str(w, e->site[i]);
	jw_arr_end(w);
	jw_kint(w, "objects", (int64_t)c->inv.nobj);
	jw_kint(w, "extension_modules", (int64_t)c->nextensions);
	jw_kint(w, "failing_extension_modules", (int64_t)c->nfail_ext);
	jw_kint(w, "cannot_tell", (int64_t)c->ncannot_tell);
	jw_kint(w, "not_checked", (int64_t)(c->nunjudged + c->nunjudged_other));
	jw_kint(w, "self_loaded_libraries", (int64_t)c->nself);
	jw_kint(w, "failing_self_loaded_libraries", (int64_t)c->nfail_self);
	jw_key(w, "torch");
	if (c->torch.found) {
		jw_obj_begin(w);
		jw_kstr(w, "version", c->torch.version);
		jw_kstr(w, "cuda", c->torch.cuda);
		jw_kbool(w, "import_ok", c->torch_replayed && c->torch_import.ok);
		jw_kstr(w, "import_error", c->torch_import.error);
		jw_key(w, "import_steps");
		jw_arr_begin(w);
		for (size_t i = 0; i < c->torch_import.nstep; i++) {
			const struct import_step *sp = &c->torch_import.step[i];
			jw_obj_begin(w);
			jw_kstr(w, "path", sp->path);
			jw_kbool(w, "global", sp->global);
			jw_kstr(w, "why", sp->why);
			jw_kbool(w, "ok", sp->ok);
			jw_kstr(w, "error", sp->error);
			jw_obj_end(w);
		}
		jw_arr_end(w);
		jw_key(w, "import_loads");
		jw_arr_begin(w);
		if (c->torch_replayed && c->torch_import.ok)
			for (size_t i = 0; i < c->torch_import.nloads; i++)
				jw_str(w, c->torch_import.loads[i]);
		jw_arr_end(w);
		jw_obj_end(w);
	} else {
		jw_null(w);
	}
	jw_key(w, "distributions");
	jw_arr_begin(w);
	struct ptrvec groups = { 0 };
	groups_of(s, c, &groups);
	for (size_t gi = 0; gi < groups.n; gi++) {
		const struct group *g = groups.item[gi];
		jw_obj_begin(w);
		jw_kstr(w, "name", g->name);
		jw_kstr(w, "version", g->version);
		jw_kstr(w, "installer", g->dist ? g->dist->installer : NULL);
		jw_kbool(w, "ok", g->nfail == 0 && g->nunsure == 0);	/* cannot tell: not known to import */
		jw_key(w, "modules");
		jw_arr_begin(w);
		for (size_t k = 0; k < g->verdicts.n; k++) {
			const struct module_verdict *v = g->verdicts.item[k];
			jw_obj_begin(w);
			jw_kstr(w, "module", v->io->module);
			jw_kstr(w, "path", v->io->path);
			jw_kbool(w, "extension", v->io->is_extension);
			jw_kstr(w, "status", verdict_state_name(v->state));
			jw_kstr(w, "error", v->dlerror);
			print_depends_on_json(w, v->depends_on);
			json_loaded_by(w, v->loaded_by, true);
			jw_kstr(w, "consequence", v->consequence);
			jw_kbool(w, "gpu_fails", v->gpu_fails);
			jw_kbool(w, "guess", v->guess);
			jw_kstr(w, "context", v->context);
			jw_key(w, "findings");
			jw_arr_begin(w);
			for (size_t f = v->finding_first; f < v->finding_end; f++)
				jw_int(w, (int64_t)f);
			jw_arr_end(w);
			jw_obj_end(w);
		}
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_kstrs(w, "assumed_bindings", &c->assumed);
	jw_key(w, "notes");
	jw_arr_begin(w);
	for (size_t i = 0; i < e->notes.n; i++)
		jw_str(w, e->notes.item[i]);
	for (size_t i = 0; i < c->inv.notes.n; i++)
		jw_str(w, c->inv.notes.item[i]);
	for (size_t i = 0; i < c->torch.notes.n; i++)
		jw_str(w, c->torch.notes.item[i]);
	jw_arr_end(w);
	jw_obj_end(w);
}

/* ---- check --host PATH: this machine's binaries placed into the host ---- */

struct placement {
	const char *from[64], *to[64];	/* this machine's path -> where it goes on the host */
	size_t nplaced;
	size_t nrest;			/* PATHs left where they are: the last nrest of the list */
	const char *site;		/* the host's site directory they went into */
};

/* Where a path of this machine would be installed in site: a whole
 * environment's site-packages goes onto site, a file or folder under a site
 * directory to the same place under site; NULL when it is neither. */
static const char *install_place(struct scan *s, const char *path, const char *site, const char **from)
{
	struct pyenv e;
	struct diag d;
	diag_clear(&d);
	*from = path;
	if (pyenv_open(s, path, &e, &d) == ST_OK && e.kind != PYENV_PLAIN && e.nsite) {
		*from = e.site[0];
		return site;
	}
	if (pyenv_enclosing(s, path, &e))
		for (size_t i = 0; i < e.nsite; i++) {
			size_t n = strlen(e.site[i]);
			if (strncmp(path, e.site[i], n) == 0 && path[n] == '/')
				return arena_printf(&s->arena, "%s/%s", site, path + n + 1);
		}
	const char *sp = strstr(path, "/site-packages/");
	if (!sp)
		sp = strstr(path, "/dist-packages/");
	if (sp)
		return arena_printf(&s->arena, "%s/%s", site, strchr(sp + 1, '/') + 1);
	return NULL;
}

static enum status place_paths(struct scan *s, struct check_cli *o, struct snapshot *host, struct placement *pl,
			       struct diag *d)
{
	const char *where[64];
	const char *from[64];
	bool is_dir[64];
	size_t n = o->npaths;
	for (size_t i = 0; i < n; i++) {
		char abs[4096], norm[4096];
		fs_absolute(&s->fs, o->paths[i], abs, sizeof abs);
		path_normalize(abs, norm, sizeof norm);
		o->paths[i] = arena_strdup(&s->arena, norm);
		/* a PATH of this machine is a file or a folder, as for check
		 * without --host: a missing one, a FIFO or a device is an error,
		 * never "0 of 0" */
		struct fs_stat st;
		fs_stat(&s->fs, o->paths[i], &st);
		if (st.kind == FS_MISSING)
			return diag_errno(d, o->paths[i], st.err ? st.err : ENOENT, "cannot open");
		if (st.kind != FS_REGULAR && st.kind != FS_DIR)
			return diag_set(d, ST_NOT_FILE, o->paths[i], DIAG_NO_OFFSET, "not a file or folder");
		is_dir[i] = st.kind == FS_DIR;
		where[i] = host->nsite ? install_place(s, o->paths[i], host->site[0], &from[i]) : NULL;
	}
	snapshot_mount(s, host);
	pl->site = host->nsite ? host->site[0] : NULL;
	size_t keep = 0;
	const char *rest[64];
	for (size_t i = 0; i < n; i++) {
		if (where[i]) {
			enum status st = snapshot_overlay(s, from[i], where[i], d);
			if (st != ST_OK)
				return st;
			pl->from[pl->nplaced] = from[i];
			pl->to[pl->nplaced++] = where[i];
			continue;
		}
		/* not an installed file (a build folder): checked where it is,
		 * with the host's interpreter */
		if (!is_dir[i]) {
			char dir[4096];
			path_dirname(o->paths[i], dir, sizeof dir);
			vfs_passthrough(s->fs.vfs, dir);
		} else {
			vfs_passthrough(s->fs.vfs, o->paths[i]);
		}
		rest[keep++] = o->paths[i];
	}
	o->npaths = 0;
	if (pl->nplaced && host->env_root)
		o->paths[o->npaths++] = host->env_root;
	else
		pl->nplaced = 0;
	for (size_t i = 0; i < keep; i++)
		o->paths[o->npaths++] = rest[i];
	pl->nrest = keep;
	return ST_OK;
}

/* What check --host modelled: the host, its environment and interpreter. */
static void print_host_text(const struct term *t, const struct snapshot *host, const struct placement *pl,
			    const struct env_check *c)
{
	fprintf(t->out, "%shost%s         %s (snapshot of %s %s, glibc %d.%d, %s)\n", c_bold(t), c_reset(t),
		host->label ? host->label : host->hostname ? host->hostname : "?",
		host->env_kind ? host->env_kind : "environment", host->env_root ? host->env_root : "?",
		host->glibc_major, host->glibc_minor, snapshot_machine(host));
	for (size_t i = 0; i < pl->nplaced; i++)
		fprintf(t->out, "%splaced%s       %s -> %s\n", c_bold(t), c_reset(t), pl->from[i], pl->to[i]);
	if (!pl->nplaced || !c)
		return;
	fprintf(t->out, "%smodelled%s     imported by %s in the host's environment",
		c_bold(t), c_reset(t), c->process_exe ? c->process_exe : "(no interpreter)");
	if (c->torch.found && c->torch_replayed)
		fprintf(t->out, ", after its import torch %s", c->torch.version ? c->torch.version : "");
	fputs("\n\n", t->out);
}

static void print_host_json(struct jw *w, const struct snapshot *host, const struct placement *pl,
			    const struct env_check *c)
{
	jw_key(w, "host");
	jw_obj_begin(w);
	jw_kstr(w, "label", host->label);
	jw_kstr(w, "environment", host->env_root);
	jw_kstr(w, "kind", host->env_kind);
	jw_kstr(w, "machine", snapshot_machine(host));
	jw_kstr(w, "site_packages", pl->site);
	jw_kstr(w, "interpreter", pl->nplaced && c ? c->process_exe : host->python);
	jw_kbool(w, "after_import_torch", pl->nplaced && c && c->torch.found && c->torch_replayed);
	jw_key(w, "placed");
	jw_arr_begin(w);
	for (size_t i = 0; i < pl->nplaced; i++) {
		jw_obj_begin(w);
		jw_kstr(w, "from", pl->from[i]);
		jw_kstr(w, "to", pl->to[i]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

/* ---- one run over every environment ---- */

/* Version of the JSON document: 2 added "causes" and "with_driver". */
#define CHECK_JSON_SCHEMA 2

struct check_run {
	struct env_check *envs;
	size_t nenv;
	size_t *ffirst, *fend;		/* each environment's findings in the scan's list */
	struct causes *causes;		/* each environment's root causes */
	struct causes all;		/* over every finding (JSON) */
	struct advice *advice;		/* each environment's actions and plan */
	struct check_options *opts;	/* each environment's options (the plan's model check re-runs with them) */
	size_t nfail, next, ngpu_fail, nwarn;
	size_t nself, nfail_self;	/* libraries the packages' imports load themselves */
	size_t ncannot_tell;		/* not known to fail: never counted as importing, nor as failing */
	size_t nunjudged;		/* not judged: no interpreter to model; never "OK" */
	bool torch_fails, driver_missing, failed_to_run;
	int code;
	struct scan *scan;		/* the scan it ran in */
};

/* The torch causes of cs, with the environment-wide answer: which torch
 * releases satisfy every package of c that uses torch, or which conflict. */
static void torch_all_for(struct scan *s, const struct env_check *c, struct causes *cs, struct causes *all)
{
	struct cause *tc = NULL;
	for (size_t k = 0; k < cs->list.n && !tc; k++)
		if (str_starts(((struct cause *)cs->list.item[k])->key, "torch:"))
			tc = cs->list.item[k];
	if (!tc)
		return;
	struct diag d = { 0 };
	const struct torchabi *ix = tc_index(s, &d);
	if (!ix)
		return;
	struct tc_report r;
	tc_report_init(&r, ix, c->torch.found ? c->torch.version : NULL);
	tc_add_inventory(s, &r, &c->inv);
	tc_finish(&r);
	tc->torch_all = tc_all_sentence(&s->arena, &r);
	if (!tc->torch_all)
		return;
	tc->torch_all_json = tc_all_value(&s->arena, &r);
	for (size_t k = 0; k < all->list.n; k++) {
		struct cause *x = all->list.item[k];
		if (str_eq(x->key, tc->key) && !x->torch_all) {
			x->torch_all = tc->torch_all;
			x->torch_all_json = tc->torch_all_json;
		}
	}
}

/* The actions advice gave an environment's causes, on the same causes of the list over every finding. */
static void copy_cause_fixes(const struct causes *from, struct causes *all)
{
	for (size_t k = 0; k < all->list.n; k++) {
		struct cause *x = all->list.item[k];
		const struct cause *c = causes_find(from, x->key);
		if (c && !x->actions.n && !x->fix) {
			x->actions = c->actions;
			x->fix = c->fix;
		}
	}
}

/* first: a run over the same files in the scan whose objects s borrows, or NULL. */
static int run_envs(struct scan *s, const struct check_cli *o, const struct check_options *opt,
		    const struct check_run *first, struct check_run *r)
{
	memset(r, 0, sizeof *r);
	r->scan = s;
	r->nenv = o->npaths ? o->npaths : 1;
	r->envs = arena_calloc(&s->arena, r->nenv, sizeof *r->envs);
	r->ffirst = arena_calloc(&s->arena, r->nenv, sizeof *r->ffirst);
	r->fend = arena_calloc(&s->arena, r->nenv, sizeof *r->fend);
	r->causes = arena_calloc(&s->arena, r->nenv, sizeof *r->causes);
	r->advice = arena_calloc(&s->arena, r->nenv, sizeof *r->advice);
	r->opts = arena_calloc(&s->arena, r->nenv, sizeof *r->opts);
	for (size_t i = 0; i < r->nenv; i++) {
		struct diag d;
		diag_clear(&d);
		r->ffirst[i] = s->findings.list.n;
		struct check_options one = *opt;
		if (i == 0 && o->nfocus) {
			/* the placed binaries, judged in the host's environment */
			one.focus = o->focus;
			one.nfocus = o->nfocus;
		} else if (o->host && i + o->nrest >= r->nenv && !one.python) {
			/* a build folder of this machine, imported by the host's interpreter */
			one.python = o->host_python;
		}
		one.same_files = first ? &first->envs[i] : NULL;
		r->opts[i] = one;
		if (check_env(s, o->npaths ? o->paths[i] : NULL, &r->opts[i], &r->envs[i], &d) != ST_OK) {
			fprintf(stderr, "abiscope check: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
			return d.status == ST_NOT_FOUND ? EXIT_USAGE : EXIT_UNREADABLE;
		}
		r->fend[i] = s->findings.list.n;
		causes_build(&s->arena, &s->findings, r->ffirst[i], r->fend[i], &r->causes[i]);
		r->driver_missing |= causes_driver_missing(&r->causes[i]);
		r->nfail += r->envs[i].nfail_ext + r->envs[i].nfail_lib;
		r->nfail_self += r->envs[i].nfail_self;
		r->nself += r->envs[i].nself;
		r->ngpu_fail += r->envs[i].ngpu_fail;
		r->ncannot_tell += r->envs[i].ncannot_tell;
		r->nunjudged += r->envs[i].nunjudged + r->envs[i].nunjudged_other;
		r->next += r->envs[i].nextensions;
	}
	causes_build(&s->arena, &s->findings, 0, s->findings.list.n, &r->all);
	for (size_t i = 0; i < r->nenv; i++) {
		torch_all_for(s, &r->envs[i], &r->causes[i], &r->all);
		/* the plan shown is the one for the machine with the driver when this one
		 * has none and that is modelled next: the model checks only that one */
		bool shown = opt->assume_driver || o->host || !r->driver_missing;
		advise_env(s, &r->envs[i], &r->opts[i], &r->causes[i], r->ffirst[i], r->fend[i], shown, &r->advice[i]);
		copy_cause_fixes(&r->causes[i], &r->all);
	}
	for (size_t i = 0; i < s->findings.list.n; i++)
		if (str_eq(((struct finding *)s->findings.list.item[i])->id, "import-fails"))
			r->torch_fails = true;
	r->code = r->nfail || r->nfail_self || r->torch_fails || r->ngpu_fail ? EXIT_FAILS : EXIT_OK;
	if (r->code == EXIT_OK && r->nunjudged)
		r->code = EXIT_UNREADABLE;	/* nothing known to fail, but not checked either: never OK */
	r->nwarn = findings_count(&s->findings, SEV_WARNING);
	return 0;
}

static void print_run_json(struct scan *s, struct jw *w, const struct check_run *r)
{
	jw_key(w, "summary");
	jw_obj_begin(w);
	jw_kint(w, "extension_modules", (int64_t)r->next);
	jw_kint(w, "failing", (int64_t)r->nfail);
	jw_kint(w, "failing_on_gpu", (int64_t)r->ngpu_fail);
	jw_kint(w, "self_loaded_libraries", (int64_t)r->nself);
	jw_kint(w, "failing_self_loaded_libraries", (int64_t)r->nfail_self);
	jw_kint(w, "cannot_tell", (int64_t)r->ncannot_tell);
	jw_kint(w, "not_checked", (int64_t)r->nunjudged);
	jw_kint(w, "errors", (int64_t)findings_count(&s->findings, SEV_ERROR));
	jw_kint(w, "warnings", (int64_t)r->nwarn);
	jw_kint(w, "causes", (int64_t)r->all.list.n);
	jw_obj_end(w);
	jw_key(w, "environments");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->nenv; i++)
		print_env_json(s, w, &r->envs[i]);
	jw_arr_end(w);
	jw_key(w, "causes");
	render_causes_json(w, &r->all);
	jw_key(w, "plans");
	jw_arr_begin(w);
	for (size_t i = 0; i < r->nenv; i++)
		render_plan_json(w, &r->advice[i].plan, &r->all);
	jw_arr_end(w);
	jw_key(w, "findings");
	render_findings_json(w, &s->findings);
}

static size_t failing_in(const struct env_check *c)
{
	return c->nfail_ext + c->nfail_lib + c->nfail_self;
}

static void print_env_text(struct scan *s, const struct term *t, const struct check_run *r, size_t i,
			   const struct check_run *drv, bool modelled, bool verbose)
{
	const struct env_check *c = &r->envs[i];
	const struct causes *cs = &r->causes[i];
	print_env_header(t, c, verbose);
	size_t nf = c->nfail_ext + c->nfail_lib;
	size_t checked = c->nv - c->nstdlib + c->nbroken_ext - c->nself;	/* libraries too under --libraries */
	bool bad = nf || c->nfail_self || c->ngpu_fail;
	bool unjudged = c->nunjudged || c->nunjudged_other;
	bool unsure = c->ncannot_tell || unjudged;
	fprintf(t->out, "%sverdict%s      %s%s%s: %zu of %zu %s would fail to import here", c_bold(t),
		c_reset(t), bad ? c_red(t) : unsure ? c_yellow(t) : c_green(t),
		bad ? "FAIL" : unjudged ? "NOT CHECKED" : c->ncannot_tell ? "CANNOT TELL" : "OK", c_reset(t),
		nf, checked, checked > c->nextensions ? "modules and libraries"
		: checked == 1 ? "extension module" : "extension modules");
	if (c->ngpu_fail)
		fprintf(t->out, ", %zu would fail on the GPU", c->ngpu_fail);
	if (c->nself)
		fprintf(t->out, "; %zu of %zu librar%s its packages load themselves would fail to load", c->nfail_self,
			c->nself, c->nself == 1 ? "y" : "ies");
	if (unjudged)
		fprintf(t->out, "; %zu not judged (no interpreter could be modelled)", c->nunjudged + c->nunjudged_other);
	if (c->ncannot_tell)
		fprintf(t->out, "; cannot tell for %zu (each depends on what its package does as it imports: see below)",
			c->ncannot_tell);
	if (drv) {
		const struct env_check *d = &drv->envs[i];
		fprintf(t->out, "; with the NVIDIA driver, %zu would", failing_in(d));
		if (d->ngpu_fail)
			fprintf(t->out, " and %zu would fail on the GPU", d->ngpu_fail);
	}
	fputc('\n', t->out);
	fputc('\n', t->out);
	const struct cause *driver = causes_driver(cs);
	if (driver) {
		render_no_driver(t, &s->arena, driver, drv ? drv->envs[i].driver_stub : NULL, verbose);
		fputc('\n', t->out);
	}
	(void)modelled;
	const struct causes *shown = drv ? &drv->causes[i] : cs;
	const struct plan *plan = drv ? &drv->advice[i].plan : &r->advice[i].plan;
	render_plan_text(t, &s->arena, plan, shown);
	struct check_causes_view view = { shown, drv ? cs : NULL, plan, drv ? "with the driver: " : "", verbose };
	render_check_causes(t, &s->arena, &view);
	size_t ncause = 0;
	for (size_t k = 0; k < shown->list.n; k++) {
		const struct cause *x = shown->list.item[k];
		ncause += !x->driver && (verbose || x->severity != SEV_NOTE);
	}
	if (ncause)
		fputc('\n', t->out);
	if (c->nfail_self && !verbose) {
		/* what each failing one costs: the causes above say why it fails */
		fprintf(t->out, "%slibraries its packages load themselves%s (%zu of %zu would fail to load)\n", c_bold(t),
			c_reset(t), c->nfail_self, c->nself);
		for (size_t k = 0; k < c->nv; k++)
			if (c->v[k].loaded_by && c->v[k].state == V_FAILS)
				print_self_loaded(t, &c->v[k], false);
		fputc('\n', t->out);
	}
	if (verbose) {
		print_env_detail(s, t, c, verbose);
		if (drv) {
			fprintf(t->out, "\n%swith the driver%s (modelled by %s):\n", c_bold(t), c_reset(t),
				drv->envs[i].driver_stub);
			print_env_detail(drv->scan, t, &drv->envs[i], verbose);
		}
	}
	if (c->assumed.n) {
		/* always shown: these verdicts are guesses */
		fprintf(t->out, "%sguess:%s %zu symbol%s bound by assumption, to libraries a snapshot describes by "
			"name only (a snapshot made without --lean records their exports) or whose hash chains are too "
			"long to walk for every lookup:", c_yellow(t), c_reset(t), c->assumed.n,
			c->assumed.n == 1 ? " was" : "s were");
		for (size_t k = 0; k < c->assumed.n && (verbose || k < 3); k++)
			fprintf(t->out, "%s %s", k ? "," : "", (const char *)c->assumed.item[k]);
		fprintf(t->out, "%s\n", !verbose && c->assumed.n > 3 ? ", ..." : "");
	}
}

static void print_summary_line(const struct term *t, const struct check_run *r)
{
	/* cannot tell: not a failure (exit status 0), but not "OK" either */
	bool unsure = !r->code && r->ncannot_tell;
	if (r->code == EXIT_UNREADABLE) {
		size_t ext = 0;
		for (size_t i = 0; i < r->nenv; i++)
			ext += r->envs[i].nunjudged;
		fprintf(t->out, "%sNOT CHECKED%s: %zu of %zu extension module%s not judged", c_yellow(t), c_reset(t), ext,
			r->next, r->next == 1 ? "" : "s");
		if (r->nunjudged > ext)
			fprintf(t->out, " (and %zu librar%s)", r->nunjudged - ext, r->nunjudged - ext == 1 ? "y" : "ies");
		fprintf(t->out, ": no interpreter could be modelled (see 'interpreter' above); %zu warning%s\n", r->nwarn,
			r->nwarn == 1 ? "" : "s");
		return;
	}
	fprintf(t->out, "%s%s%s: %zu of %zu extension module%s would fail to import%s",
		r->code ? c_red(t) : unsure ? c_yellow(t) : c_green(t), r->code ? "FAIL" : unsure ? "CANNOT TELL" : "OK",
		c_reset(t), r->nfail, r->next, r->next == 1 ? "" : "s",
		r->torch_fails ? " (and import torch itself fails)" : "");
	if (r->ngpu_fail)
		fprintf(t->out, ", %zu would import and fail on the GPU", r->ngpu_fail);
	if (r->ncannot_tell)
		fprintf(t->out, ", %zu cannot tell", r->ncannot_tell);
	if (r->nself)
		fprintf(t->out, "; %zu of %zu librar%s the packages load themselves would fail to load", r->nfail_self,
			r->nself, r->nself == 1 ? "y" : "ies");
	fprintf(t->out, "; %zu warning%s\n", r->nwarn, r->nwarn == 1 ? "" : "s");
}

/* --junit: one suite per environment, one case per extension module */
static bool write_junit(const char *path, const struct check_run *r)
{
	struct junit j;
	if (!junit_open(&j, "check", path))
		return false;
	junit_begin(&j, "abiscope check");
	for (size_t e = 0; e < r->nenv; e++) {
		const struct env_check *c = &r->envs[e];
		size_t tests = 0, failures = 0, skipped = 0;
		for (size_t i = 0; i < c->nv; i++) {
			if (!junit_counts(&c->v[i]))
				continue;
			tests++;
			failures += junit_fails(&c->v[i]);
			skipped += c->v[i].state == V_NOT_CHECKED || c->v[i].state == V_OTHER_PYTHON ||
				   c->v[i].state == V_CANNOT_TELL;
		}
		junit_suite_begin(&j, c->env.root, tests, failures, skipped);
		for (size_t i = 0; i < c->nv; i++) {
			const struct module_verdict *v = &c->v[i];
			if (!junit_counts(v))
				continue;
			const char *group = v->io->dist ? v->io->dist->name : v->io->package ? v->io->package
											      : "(unowned)";
			junit_module(&j, &r->scan->findings, v, group);
		}
		junit_suite_end(&j);
	}
	return junit_close(&j, "check");
}

int cmd_check(int argc, char **argv)
{
	struct check_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (o.host && o.root)
		return usage_error("check", "--host and --root describe two different systems; give one");
	if (o.host && o.opt.verify_hashes)
		return usage_error("check", "--verify-hashes needs the files themselves; a snapshot has their facts only");
	struct scan s;
	scan_init_where(&s, &o.where);
	struct snapshot host;
	struct placement pl;
	memset(&pl, 0, sizeof pl);
	if (o.host) {
		struct diag hd;
		diag_clear(&hd);
		if (snapshot_read(&s.arena, o.host, &host, &hd) != ST_OK) {
			fprintf(stderr, "abiscope check: %s: %s\n", hd.path, hd.msg);
			scan_release(&s);
			return EXIT_UNREADABLE;
		}
		/* this machine's PATHs: placed into the host's environment when
		 * they are installed files (or a whole environment), else left
		 * where they are, visible through the described host */
		if (place_paths(&s, &o, &host, &pl, &hd) != ST_OK) {
			fprintf(stderr, "abiscope check: %s: %s\n", hd.path, hd.msg);
			scan_release(&s);
			return EXIT_UNREADABLE;
		}
		o.focus = pl.to;
		o.nfocus = pl.nplaced;
		o.nrest = pl.nrest;
		o.host_python = host.python;
		bool plain = host.env_kind && str_eq(host.env_kind, "folder");
		if (plain && !o.opt.python)
			o.opt.python = host.python;
		/* the GPUs and driver the host has, unless --gpu / --driver say otherwise */
		unsigned *cc = arena_calloc(&s.arena, host.ngpus + 1, sizeof *cc);
		const char **names = arena_calloc(&s.arena, host.ngpus + 1, sizeof *names);
		for (size_t i = 0; i < host.ngpus; i++) {
			cc[i] = host.gpus[i].cc;
			names[i] = host.gpus[i].name;
		}
		if (!o.ngpus) {
			o.opt.gpu_cc = cc;
			o.opt.gpu_names = names;
			o.opt.ngpu_cc = host.ngpus;
		}
		if (!o.opt.driver)
			o.opt.driver = host.driver;
		o.opt.no_driver = true;
		if (!o.npaths && host.env_root)
			o.paths[o.npaths++] = host.env_root;
		o.root = "(snapshot)";	/* nothing of this machine's environment applies */
	}
	o.opt.path_env = o.root ? NULL : getenv("PATH");
	o.opt.virtual_env = getenv("VIRTUAL_ENV");
	o.opt.conda_prefix = getenv("CONDA_PREFIX");
	if (!o.llp_given)
		o.opt.ld_library_path = o.root ? NULL : getenv("LD_LIBRARY_PATH");
	const char *bn = o.root ? NULL : getenv("LD_BIND_NOW");
	o.opt.ld_bind_now = bn && *bn;
	const char *tg = o.root ? NULL : getenv("TORCH_USE_RTLD_GLOBAL");
	o.opt.torch_rtld_global = tg && *tg;
	o.opt.cuda_home = o.root ? NULL : getenv("CUDA_HOME");
	o.opt.gpu_specs = o.gpus;
	o.opt.ngpu_specs = o.ngpus;
	struct check_run here, drv;
	memset(&drv, 0, sizeof drv);
	struct progress_line prog;
	progress_attach(&prog, &s, &o.common);
	int rc2 = run_envs(&s, &o, &o.opt, NULL, &here);
	if (rc2) {
		progress_end(&prog, &s);
		scan_release(&s);
		return rc2;
	}
	/* No driver on this machine: also the verdict a machine with one reaches. */
	struct scan s2;
	bool modelled = false;
	if (!o.opt.assume_driver && !o.host && here.driver_missing) {
		struct check_options o2 = o.opt;
		o2.assume_driver = true;
		scan_init_where(&s2, &o.where);
		scan_borrow_objects(&s2, &s);	/* the same files: parsed once */
		modelled = true;
		s2.progress = s.progress;
		s2.progress_ctx = s.progress_ctx;
		if (run_envs(&s2, &o, &o2, &here, &drv) != 0)
			drv.failed_to_run = true;
		progress_end(&prog, &s2);
		scan_return_objects(&s2);
	}
	progress_end(&prog, &s);
	int code = here.code;
	if (o.junit && !write_junit(o.junit, &here))
		code = EXIT_UNREADABLE;
	if (o.json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_obj_begin(&w);
		jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&w, "command", "check");
		jw_kint(&w, "schema", CHECK_JSON_SCHEMA);
		jw_kbool(&w, "ok", code == EXIT_OK);
		if (o.host)
			print_host_json(&w, &host, &pl, here.nenv ? &here.envs[0] : NULL);
		print_run_json(&s, &w, &here);
		jw_key(&w, "with_driver");
		/* null, as documented, also when no stub could stand for the driver */
		if (modelled && !drv.failed_to_run && drv.nenv && drv.envs[0].driver_stub) {
			jw_obj_begin(&w);
			jw_kstr(&w, "modelled_by", drv.envs[0].driver_stub);
			jw_kbool(&w, "ok", drv.code == EXIT_OK);
			print_run_json(&s2, &w, &drv);
			jw_obj_end(&w);
		} else {
			jw_null(&w);
		}
		/* the plan for the machine the causes are shown for: with the
		 * driver when this one has none */
		const struct check_run *pr = modelled && !drv.failed_to_run && drv.envs[0].driver_stub ? &drv : &here;
		jw_key(&w, "plan");
		render_plan_json(&w, pr->nenv == 1 ? &pr->advice[0].plan : NULL, &pr->all);
		jw_kstr(&w, "plan_causes", pr == &drv ? "with_driver" : "causes");
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		struct term t;
		term_init(&t, stdout, o.color);
		if (o.host && pl.nplaced)
			print_host_text(&t, &host, &pl, &here.envs[0]);
		for (size_t i = 0; i < here.nenv; i++)
			print_env_text(&s, &t, &here, i,
				       modelled && !drv.failed_to_run && drv.envs[i].driver_stub ? &drv : NULL, modelled,
				       o.verbose);
		print_summary_line(&t, &here);
	}
	if (modelled)
		scan_release(&s2);
	scan_release(&s);
	return fail_on_status("check", code, o.fail_on_warning, here.nwarn);
}
