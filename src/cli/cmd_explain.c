/*
 * cmd_explain.c: `abiscope explain` - paste an ImportError or a traceback,
 * get the diagnosis from the environment that produced it.
 */
#include "cli/cli.h"
#include "cli/causes_out.h"
#include "cli/termsafe.h"
#include "pyenv/check.h"
#include "pyenv/explain.h"

#include <unistd.h>

#define MAX_INPUT (4u << 20)

/*
 * All of in, or its last MAX_INPUT bytes from a line start (*cut then
 * says so): a traceback's error is its last line, so the tail is what
 * counts.  Memory stays under 2 * MAX_INPUT.
 */
static char *read_all(FILE *in, size_t *len, bool *cut)
{
	size_t cap = 2 * (size_t)MAX_INPUT, n = 0;
	char *buf = malloc(cap + 1);
	*cut = false;
	if (!buf)
		return NULL;
	for (;;) {
		if (n == cap) {
			/* keep the newest half */
			memmove(buf, buf + cap - MAX_INPUT, MAX_INPUT);
			n = MAX_INPUT;
			*cut = true;
		}
		size_t r = fread(buf + n, 1, cap - n, in);
		if (r == 0)
			break;
		n += r;
	}
	size_t from = n > MAX_INPUT ? n - MAX_INPUT : 0;
	if (from)
		*cut = true;
	if (*cut) {
		const char *nl = memchr(buf + from, '\n', n - from);
		if (nl && (size_t)(nl + 1 - buf) < n)
			from = (size_t)(nl + 1 - buf);	/* from a whole line */
		memmove(buf, buf + from, n - from);
		n -= from;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

struct explain_cli {
	const char *python, *root;
	struct scan_where where;	/* --root, --cwd, --page-size */
	bool json, verbose;
	int quiet;
	enum color_mode color;
	int first_text, argc;
	char **argv;
};

static int parse(int argc, char **argv, struct explain_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "explain");
	while ((k = args_next(&a)) == ARG_OPTION) {
		if (arg_value(&a, "--python", &v, &err))
			o->python = v;
	}
	if (k == ARG_OPERAND)
		o->first_text = a.i;	/* the text: this argument and the rest */
	else if (k != ARG_END)
		return args_status(k);
	o->json = a.common.json;
	o->verbose = a.common.verbose;
	o->quiet = a.common.quiet;
	o->root = a.common.root;
	o->where = cli_where(&a.common);
	o->color = a.common.color;
	o->argc = argc;
	o->argv = argv;
	return 0;
}

/* Which objects of the environment the message is about. */
static size_t pick_targets(struct scan *s, struct env_check *c, const struct error_facts *f,
			   struct inv_obj ***out, const char **why)
{
	struct ptrvec v = { 0 };
	*why = NULL;
	if (f->object) {
		for (size_t i = 0; i < c->inv.nobj; i++)
			if (str_eq(c->inv.obj[i]->path, f->object))
				ptrvec_push(&s->arena, &v, c->inv.obj[i]);
		if (v.n)
			*why = "the object the message names";
	}
	if (!v.n && f->missing_library) {
		for (size_t i = 0; i < c->inv.nobj; i++) {
			const struct object *o = c->inv.obj[i]->obj;
			for (size_t k = 0; o->elf_ok && k < o->elf.nneeded; k++)
				if (str_eq(o->elf.needed[k], f->missing_library) ||
				    str_eq(o->elf.needed[k], path_basename(f->missing_library)))
					ptrvec_push(&s->arena, &v, c->inv.obj[i]);
		}
		if (v.n)
			*why = arena_printf(&s->arena, "the objects that need %s", f->missing_library);
	}
	if (!v.n && f->package) {
		struct inv_obj **hits;
		size_t n = check_resolve_module(s, c, f->package, &hits);
		for (size_t i = 0; i < n; i++)
			ptrvec_push(&s->arena, &v, hits[i]);
		if (v.n)
			*why = arena_printf(&s->arena, "the extension modules of %s", f->package);
	}
	*out = (struct inv_obj **)v.item;
	return v.n;
}

static bool skip_driver_cause(const struct cause *c, const void *ctx)
{
	(void)ctx;
	return c->driver;
}

/* A module's verdict in a line of text. */
static const char *here_word(enum verdict_state st)
{
	return st == V_OK ? "would load here"
	       : st == V_CANNOT_TELL ? "cannot tell whether it loads here (it depends on a library its package loads itself)"
	       : "would fail here";
}

int cmd_explain(int argc, char **argv)
{
	struct explain_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	char *text = NULL;
	size_t len = 0;
	if (o.first_text && o.first_text < argc && !str_eq(argv[o.first_text], "-")) {
		size_t total = 0;
		for (int i = o.first_text; i < argc; i++)
			total += strlen(argv[i]) + 1;
		text = malloc(total + 1);
		if (!text)
			return EXIT_USAGE;
		text[0] = '\0';
		size_t off = 0;
		for (int i = o.first_text; i < argc; i++)
			off += (size_t)snprintf(text + off, total + 1 - off, "%s%s", argv[i], i + 1 < argc ? " " : "");
		len = off;
	} else {
		if (isatty(STDIN_FILENO) && !o.quiet)
			fprintf(stderr, "abiscope explain: paste the error, then Ctrl-D\n");
		bool cut;
		text = read_all(stdin, &len, &cut);
		if (cut)
			fprintf(stderr, "abiscope explain: the input is longer than %u MiB: only its last %u MiB "
					"were read (a traceback's error is its last line)\n", MAX_INPUT >> 20, MAX_INPUT >> 20);
	}
	if (!text || len == 0) {
		free(text);
		return usage_error("explain", "nothing to explain");
	}
	struct scan s;
	scan_init_where(&s, &o.where);
	struct error_facts f;
	explain_parse(&s.arena, text, len, &f);
	free(text);
	if (!f.kind && !f.object && !f.package && !f.py_file) {
		fprintf(stderr, "abiscope explain: the text names no shared object, library, symbol or Python "
				"package abiscope can look at\n");
		scan_release(&s);
		return EXIT_USAGE;
	}
	/* the environment: the one the paths point into, else --python or the default */
	struct check_options opt;
	memset(&opt, 0, sizeof opt);
	opt.python = o.python;
	opt.path_env = o.root ? NULL : getenv("PATH");
	opt.virtual_env = getenv("VIRTUAL_ENV");
	opt.conda_prefix = getenv("CONDA_PREFIX");
	opt.ld_library_path = o.root ? NULL : getenv("LD_LIBRARY_PATH");
	const char *env_path = NULL;
	struct pyenv around;
	const char *anchor = f.object ? f.object : f.py_file ? f.py_file : f.site;
	if (!o.python && anchor && pyenv_enclosing(&s, anchor, &around))
		env_path = around.root;
	struct env_check c;
	struct diag d;
	diag_clear(&d);
	if (check_prepare(&s, env_path, &opt, &c, &d) != ST_OK) {
		fprintf(stderr, "abiscope explain: %s: %s\n", d.path, d.msg);
		scan_release(&s);
		return EXIT_USAGE;
	}
	struct inv_obj **targets;
	const char *why_targets;
	size_t nt = pick_targets(&s, &c, &f, &targets, &why_targets);
	struct module_verdict *v = arena_calloc(&s.arena, nt ? nt : 1, sizeof *v);
	size_t nfail = 0;
	bool reproduced = false;
	for (size_t i = 0; i < nt; i++) {
		check_one(&s, &c, &opt, targets[i], &v[i]);
		if (v[i].state == V_FAILS) {
			nfail++;
			if (f.error_line && v[i].dlerror && strstr(f.error_line, v[i].dlerror))
				reproduced = true;
			if (f.error_line && v[i].dlerror && strstr(v[i].dlerror, f.error_line))
				reproduced = true;
		}
	}
	size_t ffirst = nt ? v[0].finding_first : s.findings.list.n;
	struct causes here;
	causes_build(&s.arena, &s.findings, ffirst, s.findings.list.n, &here);
	/* No driver on this machine: the same analysis as a machine with one makes it. */
	struct scan s2;
	struct env_check c2;
	struct module_verdict *v2 = NULL;
	struct causes with;
	bool modelled = false;
	size_t nfail2 = 0;
	if (causes_driver(&here) && !opt.assume_driver) {
		struct check_options o2 = opt;
		o2.assume_driver = true;
		o2.cuda_home = o.root ? NULL : getenv("CUDA_HOME");
		scan_init_where(&s2, &o.where);
		struct diag d2;
		diag_clear(&d2);
		struct inv_obj **t2;
		const char *w2;
		if (check_prepare(&s2, env_path, &o2, &c2, &d2) == ST_OK && c2.driver_stub &&
		    pick_targets(&s2, &c2, &f, &t2, &w2) == nt) {
			v2 = arena_calloc(&s2.arena, nt ? nt : 1, sizeof *v2);
			for (size_t i = 0; i < nt; i++) {
				check_one(&s2, &c2, &o2, t2[i], &v2[i]);
				nfail2 += v2[i].state == V_FAILS;
			}
			causes_build(&s2.arena, &s2.findings, nt ? v2[0].finding_first : 0, s2.findings.list.n, &with);
			modelled = true;
		} else {
			scan_release(&s2);
		}
	}
	if (o.json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_obj_begin(&w);
		jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&w, "command", "explain");
		jw_kint(&w, "schema", 2);
		jw_key(&w, "message");
		jw_obj_begin(&w);
		jw_kstr(&w, "kind", f.kind);
		jw_kstr(&w, "error", f.error_line);
		jw_kstr(&w, "object", one_line(f.object));
		jw_kstr(&w, "symbol", f.symbol);
		jw_kstr(&w, "version", f.version ? f.version : f.version_missing);
		jw_kstr(&w, "missing_library", f.missing_library);
		jw_kstr(&w, "package", f.package);
		jw_kstr(&w, "python_file", f.py_file);
		jw_obj_end(&w);
		jw_kstr(&w, "environment", c.env.root);
		jw_kstr(&w, "environment_kind", pyenv_kind_name(c.env.kind));
		jw_kbool(&w, "reproduced", reproduced);
		jw_key(&w, "checked");
		jw_arr_begin(&w);
		for (size_t i = 0; i < nt; i++) {
			jw_obj_begin(&w);
			jw_kstr(&w, "path", v[i].io->path);
			jw_kstr(&w, "module", v[i].io->module);
			jw_kstr(&w, "status", verdict_state_name(v[i].state));
			jw_kstr(&w, "error", v[i].dlerror);
			jw_kstr(&w, "context", v[i].context);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_key(&w, "causes");
		render_causes_json(&w, &here);
		jw_key(&w, "findings");
		render_findings_json(&w, &s.findings);
		jw_key(&w, "with_driver");
		if (modelled) {
			jw_obj_begin(&w);
			jw_kstr(&w, "modelled_by", c2.driver_stub);
			jw_kint(&w, "failing", (int64_t)nfail2);
			jw_key(&w, "causes");
			render_causes_json(&w, &with);
			jw_key(&w, "findings");
			render_findings_json(&w, &s2.findings);
			jw_obj_end(&w);
		} else {
			jw_null(&w);
		}
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		struct term t;
		term_init(&t, stdout, o.color);
		fprintf(t.out, "%sthe message%s  %s\n", c_bold(&t), c_reset(&t),
			f.error_line ? one_line(f.error_line) : f.no_module ? one_line(f.no_module) : "(no loader error line)");
		if (f.symbol)
			fprintf(t.out, "             undefined symbol %s%s%s\n", one_line(f.symbol), f.version ? " version " : "",
				f.version ? one_line(f.version) : "");
		if (f.missing_library)
			fprintf(t.out, "             library that could not be opened: %s\n", one_line(f.missing_library));
		if (f.version_missing)
			fprintf(t.out, "             version %s missing from %s\n", one_line(f.version_missing),
				f.version_provider ? one_line(f.version_provider) : "?");
		fprintf(t.out, "%senvironment%s  %s %s%s\n", c_bold(&t), c_reset(&t), pyenv_kind_name(c.env.kind),
			one_line(c.env.root), env_path ? " (where the message's paths point)" : "");
		if (!nt) {
			fprintf(t.out, "\nnothing in this environment matches the message");
			if (f.object)
				fprintf(t.out, " (%s is not here: the message may come from another machine; run "
					       "abiscope there, or compare with abiscope snapshot)", one_line(f.object));
			fprintf(t.out, "\n");
		} else {
			fprintf(t.out, "%schecked%s      %s\n\n", c_bold(&t), c_reset(&t), why_targets);
		}
		for (size_t i = 0; i < nt; i++) {
			fprintf(t.out, "%s%s%s  %s", c_bold(&t), one_line(v[i].io->module ? v[i].io->module : v[i].io->path),
				c_reset(&t), here_word(v[i].state));
			if (modelled)
				fprintf(t.out, "; with the driver: %s", v2[i].state == V_OK ? "would load"
					: v2[i].state == V_CANNOT_TELL ? "cannot tell" : "would fail");
			fputc('\n', t.out);
			if (v[i].context && o.verbose)
				fprintf(t.out, "   (%s)\n", one_line(v[i].context));
		}
		if (nt)
			fputc('\n', t.out);
		const struct cause *driver = causes_driver(&here);
		if (driver) {
			render_no_driver(&t, &s.arena, driver, modelled ? c2.driver_stub : NULL, o.verbose);
			fputc('\n', t.out);
		}
		const struct causes *shown = modelled ? &with : &here;
		size_t ncause = 0;
		for (size_t k = 0; k < shown->list.n; k++) {
			const struct cause *x = shown->list.item[k];
			ncause += !x->driver && (o.verbose || x->severity != SEV_NOTE);
		}
		if (ncause)
			fprintf(t.out, "%s%s%zu root cause%s%s\n", c_bold(&t), modelled ? "with the driver: " : "", ncause,
				ncause == 1 ? "" : "s", c_reset(&t));
		if (render_causes_text(&t, &s.arena, shown, o.verbose, skip_driver_cause, NULL))
			fputc('\n', t.out);
		if (o.verbose)
			for (size_t i = 0; i < nt; i++) {
				fprintf(t.out, "%s%s%s  %s\n", c_bold(&t), v[i].io->module ? v[i].io->module : v[i].io->path,
					c_reset(&t), here_word(v[i].state));
				render_finding_roots(&t, &s.findings, v[i].finding_first, v[i].finding_end, true);
				fputc('\n', t.out);
			}
		if (f.error_line && nfail)
			fprintf(t.out, "%s\n", reproduced ? "abiscope reproduces this error from the files"
							  : "abiscope predicts a failure here, but not with the same text: "
							    "the message may come from another environment or LD_LIBRARY_PATH");
		else if (f.error_line && nt && !nfail)
			fprintf(t.out, "abiscope predicts these objects load here: the message must come from a "
				       "different environment, LD_LIBRARY_PATH, or an import order not modelled\n");
	}
	if (modelled)
		scan_release(&s2);
	scan_release(&s);
	return nfail ? EXIT_FAILS : EXIT_OK;
}
