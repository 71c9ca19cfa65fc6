/*
 * why_module.c: `abiscope why IMPORT_NAME` - the extension modules an import
 * name stands for in the environment, each judged the way `check` judges
 * it (after `import torch` when it needs torch), variants of a package
 * (sgl_kernel's sm90/ and sm100/) side by side.
 */
#include "cli/cli.h"
#include "cli/why_module.h"
#include "pyenv/check.h"
#include "cuda/verdict.h"

/* "sm_90" or "sm_75, sm_80, ... and without a GPU": where the package loads path's variant; NULL when none */
static const char *picked_on(struct scan *s, const char *path)
{
	const char *variant;
	const char *pkg = cuda_variant_package(&s->arena, path, &variant);
	if (!pkg)
		return NULL;
	/* every compute capability of a GPU abiscope knows (data/cuda/gpus.def) */
	unsigned known_cc[CUDA_KNOWN_CC_MAX];
	size_t nknown = cuda_known_ccs(known_cc, ARRAY_SIZE(known_cc));
	const char *out = "";
	for (size_t i = 0; i < nknown; i++) {
		const char *pick = cuda_variant_pick(s, pkg, known_cc[i]);
		if (pick && str_eq(pick, variant))
			out = arena_printf(&s->arena, "%s%ssm_%u", out, out[0] ? ", " : "", known_cc[i]);
	}
	const char *none = cuda_variant_pick(s, pkg, 0);
	if (none && str_eq(none, variant))
		out = arena_printf(&s->arena, "%s%swithout a GPU", out, out[0] ? ", and " : "");
	return out[0] ? out : "no GPU abiscope knows";
}

int why_module(struct why_module_args *o)
{
	struct scan s;
	scan_init_where(&s, o->where);
	struct check_options opt;
	memset(&opt, 0, sizeof opt);
	opt.python = o->python;
	opt.path_env = o->root ? NULL : getenv("PATH");
	opt.virtual_env = getenv("VIRTUAL_ENV");
	opt.conda_prefix = getenv("CONDA_PREFIX");
	opt.ld_library_path = o->ld_library_path;
	struct env_check c;
	struct diag d;
	diag_clear(&d);
	if (check_prepare(&s, NULL, &opt, &c, &d) != ST_OK) {
		snprintf(o->not_module, sizeof o->not_module, "no Python environment: %s%s%s", d.path,
			 d.path[0] ? ": " : "", d.msg);
		scan_release(&s);
		return WHY_NOT_A_MODULE;
	}
	struct inv_obj **mods;
	size_t n = check_resolve_module(&s, &c, o->name, &mods);
	if (n == 0) {
		snprintf(o->not_module, sizeof o->not_module, "no extension module %s in the %s %s%s", o->name,
			 pyenv_kind_name(c.env.kind), c.env.root ? c.env.root : "",
			 c.env.nsite ? "" : " (it has no site-packages)");
		scan_release(&s);
		return WHY_NOT_A_MODULE;
	}
	struct module_verdict *v = arena_calloc(&s.arena, n, sizeof *v);
	size_t nfail = 0, nunsure = 0;
	for (size_t i = 0; i < n; i++) {
		check_one(&s, &c, &opt, mods[i], &v[i]);
		nfail += v[i].state == V_FAILS;
		nunsure += v[i].state == V_CANNOT_TELL;
	}
	if (o->json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_obj_begin(&w);
		jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&w, "command", "why");
		jw_kstr(&w, "target", o->name);
		/* a module abiscope cannot tell about is not known to load */
		jw_kbool(&w, "loads", nfail == 0 && nunsure == 0);
		jw_kint(&w, "cannot_tell", (int64_t)nunsure);
		const struct module_verdict *first_fail = NULL;
		for (size_t i = 0; i < n && !first_fail; i++)
			if (v[i].state == V_FAILS)
				first_fail = &v[i];
		jw_kstr(&w, "error", first_fail ? first_fail->dlerror : NULL);
		jw_kstr(&w, "first_failing_module", first_fail ? first_fail->io->module : NULL);
		jw_kstr(&w, "environment", c.env.root);
		jw_kstr(&w, "python", c.env.python);
		jw_key(&w, "modules");
		jw_arr_begin(&w);
		for (size_t i = 0; i < n; i++) {
			jw_obj_begin(&w);
			jw_kstr(&w, "module", v[i].io->module);
			jw_kstr(&w, "path", v[i].io->path);
			jw_kstr(&w, "distribution", v[i].io->dist ? v[i].io->dist->name : NULL);
			jw_kbool(&w, "loads", v[i].state == V_OK);
			jw_kstr(&w, "status", verdict_state_name(v[i].state));
			jw_kstr(&w, "error", v[i].dlerror);
			jw_kstr(&w, "context", v[i].context);
			jw_kstr(&w, "picked_on", picked_on(&s, v[i].io->path));
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_key(&w, "findings");
		render_findings_json(&w, &s.findings);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		struct term t;
		term_init(&t, stdout, o->color);
		fprintf(t.out, "%smodule%s       %s: %zu extension module%s\n", c_bold(&t), c_reset(&t), o->name, n,
			n == 1 ? "" : "s");
		fprintf(t.out, "%senvironment%s  %s %s\n", c_bold(&t), c_reset(&t), pyenv_kind_name(c.env.kind),
			c.env.root ? c.env.root : "");
		if (c.env.python)
			fprintf(t.out, "%sinterpreter%s  %s\n", c_bold(&t), c_reset(&t), c.env.python);
		fputc('\n', t.out);
		for (size_t i = 0; i < n; i++) {
			fprintf(t.out, "%s%s%s  %s%s%s\n", c_bold(&t), v[i].io->module, c_reset(&t),
				v[i].state == V_OK ? c_green(&t) : v[i].state == V_CANNOT_TELL ? c_yellow(&t) : c_red(&t),
				v[i].state == V_OK ? "would import"
				: v[i].state == V_CANNOT_TELL ? "cannot tell whether it imports" : "would NOT import",
				c_reset(&t));
			fprintf(t.out, "   %s\n", v[i].io->path);
			const char *on = picked_on(&s, v[i].io->path);
			if (on)
				fprintf(t.out, "   the package loads this variant on: %s\n", on);
			if (v[i].context)
				fprintf(t.out, "   (%s)\n", v[i].context);
			if (v[i].dlerror && v[i].state != V_CANNOT_TELL)	/* there, the finding says when */
				fprintf(t.out, "   %sImportError: %s%s\n", c_dim(&t), v[i].dlerror, c_reset(&t));
			render_finding_roots(&t, &s.findings, v[i].finding_first, v[i].finding_end, o->verbose);
			fputc('\n', t.out);
		}
	}
	scan_release(&s);
	return nfail ? EXIT_FAILS : EXIT_OK;
}
