/*
 * cmd_torch_compat.c: `abiscope torch-compat` - which torch releases the
 * extensions of an environment, files or wheels bind against, from the
 * index of every torch release's exports (cxx/torchabi.h, pyenv/torchcompat.h).
 */
#include "cli/cli.h"
#include "advice/plan.h"
#include "cli/json_out.h"
#include "cxx/demangle.h"
#include "pyenv/env.h"
#include "cxx/torch.h"
#include "cxx/torchcompat.h"
#include "pyenv/inventory.h"
#include "pyenv/wheel.h"

struct tc_cli {
	const char *paths[64];
	size_t npaths;
	const char *env;
	const char *index;
	bool json, verbose, releases;
	enum color_mode color;
};

static int parse(int argc, char **argv, struct tc_cli *o)
{
	struct args a;
	enum arg_kind k;
	args_init(&a, argc, argv, "torch-compat");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		const char *v;
		bool err = false;
		if (k == ARG_OPERAND) {
			if (o->npaths == ARRAY_SIZE(o->paths))
				return usage_error("torch-compat", "at most %zu paths", ARRAY_SIZE(o->paths));
			o->paths[o->npaths++] = a.value;
		} else if (arg_is(&a, "--releases")) {
			o->releases = true;
		} else if (arg_value(&a, "--index", &v, &err)) {
			o->index = v;
		} else if (arg_value(&a, "--env", &v, &err)) {
			o->env = v;
		}
	}
	if (k != ARG_END)
		return k == ARG_HELP ? -1 : EXIT_USAGE;
	o->json = a.common.json;
	o->verbose = a.common.verbose;
	o->color = a.common.color;
	return 0;
}

/* The torch installed in e's site directories, or NULL. */
static const struct torch_identity *env_torch(struct scan *s, const struct pyenv *e)
{
	for (size_t i = 0; i < e->nsite; i++) {
		struct torch_identity *id = arena_alloc(&s->arena, sizeof *id);
		struct diag d = { 0 };
		const char *dir = arena_printf(&s->arena, "%s/torch", e->site[i]);
		if (torch_identify(&s->arena, &s->objs, dir, id, &d) == ST_OK && id->v.version)
			return id;
	}
	return NULL;
}

static bool member_is_library(const struct wheel_member *m)
{
	const char *b = path_basename(m->name);
	return !m->is_dir && (str_ends(b, ".so") || strstr(b, ".so."));
}

/* Every shared object of a wheel, read in memory (never extracted). */
static int add_wheel(struct scan *s, struct tc_report *r, const char *path, const char **err)
{
	struct wheel w;
	struct diag d = { 0 };
	if (wheel_open(&s->arena, path, &w, &d) != ST_OK) {
		*err = arena_printf(&s->arena, "%s: %s", d.path[0] ? d.path : path, d.msg);
		return EXIT_UNREADABLE;
	}
	const char *owner = w.meta_name ? w.meta_name : w.name;
	const char *version = w.meta_version ? w.meta_version : w.version;
	for (size_t i = 0; i < w.nm; i++) {
		if (!member_is_library(&w.m[i]))
			continue;
		/* one member in memory at a time: what the report keeps is copied */
		struct arena ma;
		arena_init(&ma);
		const uint8_t *data;
		size_t len;
		if (wheel_read(&ma, &w, i, &data, &len, &d) != ST_OK) {
			*err = arena_printf(&s->arena, "%s: %s", d.path[0] ? d.path : path, d.msg);
			arena_release(&ma);
			wheel_close(&w);
			return EXIT_UNREADABLE;
		}
		struct object *o = arena_alloc(&ma, sizeof *o);
		o->path = arena_printf(&ma, "%s(%s)", path_basename(path), w.m[i].name);
		o->kind = OBJ_ELF;
		struct diag ed = { 0 };
		o->elf_ok = elf_parse(&ma, bytes_make(data, len, false), o->path, &o->elf, &ed) == ST_OK;
		if (o->elf_ok)
			tc_add_object(s, r, o->path, o, owner, version, NULL);
		arena_release(&ma);
	}
	wheel_close(&w);
	return EXIT_OK;
}

static void text_package(const struct term *t, struct arena *a, const struct tc_report *r,
			 const struct tc_package *p, bool verbose)
{
	const struct torchabi *ix = r->ix;
	const char *mark = p->installed_ok ? c_green(t) : torchset_count(&p->ok) ? c_yellow(t) : c_red(t);
	fprintf(t->out, "%s%s%s\n", mark, tc_summary(a, r, p), c_reset(t));
	if (r->installed && r->installed_rel < 0)
		fprintf(t->out, "  the installed torch %s is not in the index\n", r->installed);
	else if (r->installed && !p->installed_ok)
		for (size_t i = 0; i < p->nobj; i++) {
			const struct tc_object *ob = p->obj[i];
			if (torchset_has(&ob->c.ok, (size_t)r->installed_rel))
				continue;
			size_t n = ob->nmissing_installed;
			fprintf(t->out, "  the installed %s lacks %zu of the %zu torch symbols %s needs, e.g. %s\n",
				r->installed, n, ob->c.nneed, path_basename(ob->path),
				n ? cxx_demangle(a, ob->missing_installed[0]) : "?");
			break;
		}
	for (size_t i = 0; i < p->nnone && i < 3; i++)
		fprintf(t->out, "  exported by no release: %s\n", p->none[i]);
	const char *fix = tc_fix(a, r, p);
	if (fix)
		fprintf(t->out, "  %sfix:%s %s\n", c_bold(t), c_reset(t), fix);
	if (!verbose)
		return;
	for (size_t i = 0; i < p->nobj; i++) {
		const struct tc_object *o = p->obj[i];
		fprintf(t->out, "  %s%s%s: %zu torch symbols%s, torch %s\n", c_dim(t), o->path, c_reset(t), o->c.nneed,
			o->c.nstable == o->c.nneed ? " (stable C ABI)" : "", torchset_text(a, ix, &o->c.ok));
	}
}

static void print_text(struct scan *s, const struct tc_report *r, const struct tc_cli *o)
{
	struct term t;
	term_init(&t, stdout, o->color);
	struct arena *a = &s->arena;
	const struct torchabi *ix = r->ix;
	fprintf(t.out, "%storch ABI index%s  %zu releases (PyPI default builds, linux", c_bold(&t), c_reset(&t), ix->nrel);
	for (size_t i = 0; i < ix->nrel;) {
		size_t e = i;
		while (e + 1 < ix->nrel && ix->rel[e + 1].machine == ix->rel[i].machine)
			e++;
		fprintf(t.out, "%s %s %s to %s", i ? ";" : "", torchabi_machine_text(ix->rel[i].machine),
			ix->rel[i].version, ix->rel[e].version);
		i = e + 1;
	}
	fprintf(t.out, ")\n");
	if (o->releases)
		for (size_t i = 0; i < ix->nrel; i++)
			fprintf(t.out, "  %-8s %-7s CUDA %-3s cxx11=%d  %6u symbols  %s  sha256:%s\n", ix->rel[i].version,
				torchabi_machine_text(ix->rel[i].machine),
				ix->rel[i].cuda_major ? arena_printf(a, "%d", ix->rel[i].cuda_major) : "-",
				ix->rel[i].cxx11, ix->rel[i].nsym, ix->rel[i].wheel, ix->rel[i].sha256);
	fprintf(t.out, "%sinstalled torch%s  %s\n\n", c_bold(&t), c_reset(&t), r->installed ? r->installed : "none");
	if (!r->npkg) {
		fprintf(t.out, "nothing here needs torch symbols\n");
		return;
	}
	for (size_t i = 0; i < r->npkg; i++)
		text_package(&t, a, r, r->pkg[i], o->verbose);
	if (r->npkg < 2)
		return;
	fputc('\n', t.out);
	if (torchset_count(&r->all)) {
		int best = torchset_newest(&r->all, ix->nrel);
		fprintf(t.out, "%sall %zu packages%s bind against torch %s; newest: pip install torch==%s\n", c_bold(&t),
			r->npkg, c_reset(&t), torchset_text(a, ix, &r->all), ix->rel[best].version);
		return;
	}
	fprintf(t.out, "%sno torch release satisfies all %zu packages%s\n", c_red(&t), r->npkg, c_reset(&t));
	for (size_t i = 0; i < r->nconflict; i++) {
		const struct tc_package *p = r->pkg[r->conflict[i].a], *q = r->pkg[r->conflict[i].b];
		fprintf(t.out, "  %s (torch %s) conflicts with %s (torch %s)\n", p->name, torchset_text(a, ix, &p->ok),
			q->name, torchset_text(a, ix, &q->ok));
	}
}

static void json_set(struct jw *w, const char *key, const struct torchabi *ix, const struct torchset *s)
{
	jw_key(w, key);
	jw_arr_begin(w);
	for (size_t r = 0; r < ix->nrel; r++)
		if (torchset_has(s, r))
			jw_str(w, ix->rel[r].version);
	jw_arr_end(w);
}

static void json_package(struct jw *w, struct arena *a, const struct tc_report *r, const struct tc_package *p)
{
	const struct torchabi *ix = r->ix;
	jw_obj_begin(w);
	jw_kstr(w, "name", p->name);
	jw_kstr(w, "version", p->version);
	jw_kstr(w, "machine", torchabi_machine_text(p->machine));
	json_set(w, "releases", ix, &p->ok);
	jw_kstr(w, "cuda", torchset_count(&p->ok) ? torchset_cuda_text(a, ix, &p->ok) : NULL);
	jw_kint(w, "torch_symbols", (int64_t)p->nneed);
	jw_kint(w, "stable_abi_symbols", (int64_t)p->nstable);
	jw_kbool(w, "stable_abi_only", p->stable_only);
	jw_kbool(w, "installed_ok", p->installed_ok);
	jw_kstr(w, "summary", tc_summary(a, r, p));
	jw_kstr(w, "fix", tc_fix(a, r, p));
	jw_key(w, "exported_by_no_release");
	jw_arr_begin(w);
	for (size_t i = 0; i < p->nnone; i++)
		jw_str(w, p->none[i]);
	jw_arr_end(w);
	jw_key(w, "objects");
	jw_arr_begin(w);
	for (size_t i = 0; i < p->nobj; i++) {
		const struct tc_object *o = p->obj[i];
		jw_obj_begin(w);
		jw_kstr(w, "path", o->path);
		jw_kstr(w, "module", o->module);
		jw_kint(w, "torch_symbols", (int64_t)o->c.nneed);
		json_set(w, "releases", ix, &o->c.ok);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

static void print_json(struct scan *s, const struct tc_report *r, const char *const *errors, size_t nerr)
{
	struct jw w;
	jw_init(&w, stdout);
	struct arena *a = &s->arena;
	const struct torchabi *ix = r->ix;
	jw_obj_begin(&w);
	jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
	jw_kstr(&w, "command", "torch-compat");
	jw_key(&w, "index");
	jw_obj_begin(&w);
	jw_kint(&w, "hash_bits", ix->hash_bits);
	jw_kint(&w, "symbols", (int64_t)ix->nsym);
	jw_key(&w, "releases");
	jw_arr_begin(&w);
	for (size_t i = 0; i < ix->nrel; i++) {
		jw_obj_begin(&w);
		jw_kstr(&w, "version", ix->rel[i].version);
		jw_kstr(&w, "machine", torchabi_machine_text(ix->rel[i].machine));
		jw_kint(&w, "cuda_major", ix->rel[i].cuda_major);
		jw_kint(&w, "cxx11_abi", ix->rel[i].cxx11);
		jw_kint(&w, "symbols", ix->rel[i].nsym);
		jw_kstr(&w, "wheel", ix->rel[i].wheel);
		jw_kstr(&w, "sha256", ix->rel[i].sha256);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_kstr(&w, "installed_torch", r->installed);
	jw_key(&w, "packages");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->npkg; i++)
		json_package(&w, a, r, r->pkg[i]);
	jw_arr_end(&w);
	json_set(&w, "satisfies_all", ix, &r->all);
	jw_key(&w, "conflicts");
	jw_arr_begin(&w);
	for (size_t i = 0; i < r->nconflict; i++) {
		jw_arr_begin(&w);
		jw_str(&w, r->pkg[r->conflict[i].a]->name);
		jw_str(&w, r->pkg[r->conflict[i].b]->name);
		jw_arr_end(&w);
	}
	jw_arr_end(&w);
	jw_key(&w, "unreadable");
	jw_arr_begin(&w);
	for (size_t i = 0; i < nerr; i++)
		jw_str(&w, errors[i]);
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_end(&w);
}

static const struct torchabi *load_index(struct scan *s, const char *path, struct diag *d)
{
	struct mapped_file mf;
	if (fs_map(&s->fs, path, &mf, d) != ST_OK)
		return NULL;
	struct torchabi *ix = arena_alloc(&s->arena, sizeof *ix);
	/* the decoded index points into the mapping: it stays mapped until exit */
	if (torchabi_parse(&s->arena, bytes_make(mf.data, mf.len, false), path, ix, d) != ST_OK || !ix->nrel) {
		if (d->status == ST_OK)
			diag_set(d, ST_MALFORMED, path, DIAG_NO_OFFSET, "torch ABI index: no releases");
		return NULL;
	}
	return ix;
}

static int add_path(struct scan *s, struct tc_report *r, const char *path, const char **err)
{
	if (str_ends(path, ".whl"))
		return add_wheel(s, r, path, err);
	struct pyenv e;
	struct diag d = { 0 };
	if (pyenv_open(s, path, &e, &d) != ST_OK) {
		*err = arena_printf(&s->arena, "%s: %s", d.path[0] ? d.path : path, d.msg);
		return EXIT_UNREADABLE;
	}
	struct inventory *inv = arena_alloc(&s->arena, sizeof *inv);
	inventory_build(s, &e, inv);
	tc_add_inventory(s, r, inv);
	return EXIT_OK;
}

int cmd_torch_compat(int argc, char **argv)
{
	struct tc_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	struct scan s;
	scan_init(&s, NULL);
	struct diag d = { 0 };
	int code = EXIT_OK;
	const struct torchabi *ix = o.index ? load_index(&s, o.index, &d) : tc_index(&s, &d);
	if (!ix) {
		fprintf(stderr, "abiscope torch-compat: %s: %s\n", d.path, d.msg);
		scan_release(&s);
		return EXIT_UNREADABLE;
	}
	/* the environment whose torch is compared with */
	struct pyenv env;
	bool have_env = false;
	if (o.env)
		have_env = pyenv_open(&s, o.env, &env, &d) == ST_OK;
	else if (o.npaths && !str_ends(o.paths[0], ".whl"))
		have_env = pyenv_open(&s, o.paths[0], &env, &d) == ST_OK;
	else if (!o.npaths)
		have_env = pyenv_default(&s, getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"), getenv("PATH"),
					 getenv("PYENV_VERSION"), getenv("PYENV_ROOT"), &env, &d) == ST_OK;
	if (o.env && !have_env) {
		fprintf(stderr, "abiscope torch-compat: --env %s: %s\n", o.env, d.msg);
		scan_release(&s);
		return EXIT_UNREADABLE;
	}
	if (!have_env && !o.npaths) {
		fprintf(stderr, "abiscope torch-compat: no environment found (give a PATH): %s\n", d.msg);
		scan_release(&s);
		return EXIT_USAGE;
	}
	const struct torch_identity *t = have_env ? env_torch(&s, &env) : NULL;
	struct tc_report r;
	tc_report_init(&r, ix, t ? t->v.version : NULL);
	const char *errors[64];
	size_t nerr = 0;
	if (!o.npaths) {
		struct inventory *inv = arena_alloc(&s.arena, sizeof *inv);
		inventory_build(&s, &env, inv);
		tc_add_inventory(&s, &r, inv);
	}
	for (size_t i = 0; i < o.npaths; i++) {
		const char *err = NULL;
		if (add_path(&s, &r, o.paths[i], &err) != EXIT_OK) {
			code = EXIT_UNREADABLE;
			if (nerr < ARRAY_SIZE(errors))
				errors[nerr++] = err;
			if (!o.json)
				fprintf(stderr, "abiscope torch-compat: %s\n", err);
		}
	}
	tc_finish(&r);
	if (o.json)
		print_json(&s, &r, errors, nerr);
	else
		print_text(&s, &r, &o);
	for (size_t i = 0; code == EXIT_OK && i < r.npkg; i++)
		if (r.installed ? !r.pkg[i]->installed_ok : !torchset_count(&r.pkg[i]->ok))
			code = EXIT_FAILS;
	if (code == EXIT_OK && r.npkg > 1 && !torchset_count(&r.all))
		code = EXIT_FAILS;
	scan_release(&s);
	return code;
}
