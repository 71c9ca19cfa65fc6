/*
 * cmd_diff.c: `abiscope diff A B` - what differs between two hosts or two
 * environments (snapshot files or environments of this machine), ordered by
 * consequence: imports that change first, the root causes after.
 */
#include "cli/cli.h"
#include "cli/termsafe.h"
#include "host/compare.h"

struct diff_cli {
	const char *side[2];
	size_t nside;
	const char *root;
	bool json, verbose;
	enum color_mode color;
};

static int parse(int argc, char **argv, struct diff_cli *o)
{
	struct args a;
	enum arg_kind k;
	args_init(&a, argc, argv, "diff");
	while ((k = args_next(&a)) == ARG_OPERAND) {
		if (o->nside == 2)
			return usage_error("diff", "two sides, A and B");
		o->side[o->nside++] = a.value;
	}
	if (k != ARG_END)
		return args_status(k);
	o->json = a.common.json;
	o->verbose = a.common.verbose;
	o->root = a.common.root;
	o->color = a.common.color;
	if (o->nside != 2)
		return usage_error("diff", "give two snapshots or environments (see --help)");
	return 0;
}

/* machine: named when the sides differ in it (the line stays as it was
 * for two hosts of one machine) */
static void side_text(const struct term *t, const char *tag, const struct host_side *h, bool machine)
{
	const struct snapshot *s = h->snap;
	fprintf(t->out, "%s%s%s  %s: %s %s", c_bold(t), tag, c_reset(t), one_line(h->name),
		s->env_kind ? one_line(s->env_kind) : "", s->env_root ? one_line(s->env_root) : "");
	if (s->py_major)
		fprintf(t->out, ", Python %d.%d", s->py_major, s->py_minor);
	if (s->torch_version)
		fprintf(t->out, ", torch %s", s->torch_version);
	fprintf(t->out, ", glibc %d.%d", s->glibc_major, s->glibc_minor);
	if (machine)
		fprintf(t->out, ", %s", one_line(snapshot_machine(s)));
	if (s->driver)
		fprintf(t->out, ", driver %s", s->driver);
	if (h->check)
		fprintf(t->out, "; %zu of %zu extension modules fail", h->check->nfail_ext, h->check->nextensions);
	fputc('\n', t->out);
}

static void side_json(struct jw *w, const struct host_side *h)
{
	const struct snapshot *s = h->snap;
	jw_obj_begin(w);
	jw_kstr(w, "name", h->name);
	jw_kstr(w, "host", s->label);
	jw_kstr(w, "environment", s->env_root);
	jw_kstr(w, "torch", s->torch_version);
	char glibc[16];
	snprintf(glibc, sizeof glibc, "%d.%d", s->glibc_major, s->glibc_minor);
	jw_kstr(w, "glibc", glibc);
	jw_kstr(w, "machine", snapshot_machine(s));
	jw_kstr(w, "driver", s->driver);
	if (h->check) {
		jw_kint(w, "extension_modules", (int64_t)h->check->nextensions);
		jw_kint(w, "failing", (int64_t)h->check->nfail_ext);
	}
	jw_obj_end(w);
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	struct scan s[2];
	struct snapshot snap[2];
	struct env_check chk[2];
	struct host_side side[2];
	struct capture_options co;
	memset(&co, 0, sizeof co);
	co.no_driver = true;	/* an environment of this machine: its driver is this one's */
	co.path_env = getenv("PATH");
	int code = EXIT_OK;
	size_t opened = 0;
	for (size_t i = 0; i < 2; i++) {
		bool is_snapshot = snapshot_is_file(o.side[i]);
		scan_init(&s[i], is_snapshot ? NULL : o.root);
		opened++;
		struct diag d;
		diag_clear(&d);
		if (snapshot_open_side(&s[i], o.side[i], &co, &snap[i], &chk[i], &d) != ST_OK) {
			fprintf(stderr, "abiscope diff: %s%s%s\n", d.path, d.path[0] ? ": " : "", d.msg);
			code = EXIT_UNREADABLE;
			goto out;
		}
		side[i].snap = &snap[i];
		side[i].check = &chk[i];
		side[i].findings = &s[i].findings;
		side[i].name = is_snapshot && snap[i].label ? snap[i].label : o.side[i];
	}
	if (str_eq(side[0].name, side[1].name)) {
		side[0].name = o.side[0];
		side[1].name = o.side[1];
	}
	struct findings fl;
	findings_init(&fl, &s[0].arena);
	struct compare_summary sum;
	host_compare(&s[0].arena, &side[0], &side[1], o.verbose, &fl, &sum);
	if (sum.import_changes || sum.broken_symbols || sum.other_machine)
		code = EXIT_FAILS;
	if (o.json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_obj_begin(&w);
		jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&w, "command", "diff");
		jw_key(&w, "a");
		side_json(&w, &side[0]);
		jw_key(&w, "b");
		side_json(&w, &side[1]);
		jw_kint(&w, "import_changes", (int64_t)sum.import_changes);
		jw_kint(&w, "broken_symbols", (int64_t)sum.broken_symbols);
		jw_key(&w, "differences");
		render_findings_json(&w, &fl);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		struct term t;
		term_init(&t, stdout, o.color);
		side_text(&t, "A", &side[0], sum.other_machine);
		side_text(&t, "B", &side[1], sum.other_machine);
		fputc('\n', t.out);
		if (fl.list.n)
			render_findings_text(&t, &fl, o.verbose);
		else
			fprintf(t.out, "no difference abiscope looks at\n");
		fprintf(t.out, "%s%zu difference%s%s; imports that change: %zu; used symbols missing: %zu\n",
			sum.import_changes || sum.broken_symbols || sum.other_machine ? c_red(&t) : "", sum.differences,
			sum.differences == 1 ? "" : "s", c_reset(&t), sum.import_changes, sum.broken_symbols);
	}
out:
	for (size_t i = 0; i < opened; i++)
		scan_release(&s[i]);
	return code;
}
