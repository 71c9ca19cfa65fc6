/*
 * cmd_fleet.c: `abiscope fleet` - which hosts of a fleet differ from the rest,
 * and how, from their snapshots.
 */
#include "cli/cli.h"
#include "cli/termsafe.h"
#include "host/fleet.h"

#include <dirent.h>
#include <sys/stat.h>

struct fleet_cli {
	struct ptrvec paths;
	struct ptrvec expect;	/* const char *: host names that should have a snapshot */
	struct ptrvec empty;	/* const char *: folders given that hold no snapshot */
	size_t nargs;		/* files and folders given */
	bool json, verbose;
	bool summary_only;	/* read summaries only: fast, the rest of each file unvalidated */
	enum color_mode color;
};

static bool snapshot_name(const char *name)
{
	return str_ends(name, ".json") || str_ends(name, ".json.gz");
}

static int cmp_str(const void *p, const void *q)
{
	return strcmp(*(const char *const *)p, *(const char *const *)q);
}

static void add_path(struct arena *a, struct ptrvec *out, const char *p)
{
	struct stat st;
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(p);
		if (!d) {
			ptrvec_push(a, out, (void *)p);	/* reported when read */
			return;
		}
		size_t first = out->n;
		struct dirent *de;
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.' && snapshot_name(de->d_name))
				ptrvec_push(a, out, arena_printf(a, "%s/%s", p, de->d_name));
		closedir(d);
		if (out->n - first > 1)
			sort_items(out->item + first, out->n - first, sizeof(void *), cmp_str);
		return;
	}
	ptrvec_push(a, out, (void *)p);
}

/* Adds each name of a comma- or space-separated list, once. */
static void add_expected(struct arena *a, struct ptrvec *out, const char *list)
{
	const char *sep = ", \t\n";
	for (const char *p = list; *p;) {
		p += strspn(p, sep);
		size_t n = strcspn(p, sep);
		if (!n)
			break;
		char *name = arena_strndup(a, p, n);
		bool seen = false;
		for (size_t i = 0; i < out->n && !seen; i++)
			seen = str_eq(out->item[i], name);
		if (!seen)
			ptrvec_push(a, out, name);
		p += n;
	}
}

static int parse(struct arena *ar, int argc, char **argv, struct fleet_cli *o)
{
	struct args a;
	enum arg_kind k;
	bool err = false;
	const char *v;
	args_init(&a, argc, argv, "fleet");
	while ((k = args_next(&a)) == ARG_OPTION || k == ARG_OPERAND) {
		if (k == ARG_OPERAND) {
			size_t before = o->paths.n;
			add_path(ar, &o->paths, a.value);
			if (o->paths.n == before)
				ptrvec_push(ar, &o->empty, (void *)a.value);
			o->nargs++;
		} else if (arg_is(&a, "--summary-only")) {
			o->summary_only = true;
		} else if (arg_value(&a, "--expect", &v, &err)) {
			add_expected(ar, &o->expect, v);
		}
	}
	if (k != ARG_END)
		return args_status(k);
	o->json = a.common.json;
	o->verbose = a.common.verbose;
	o->color = a.common.color;
	if (!o->nargs)
		return usage_error("fleet", "give snapshot files or folders of them (see --help)");
	return 0;
}

static const char *host_name(const struct fleet_host *h)
{
	return one_line(h->sum.label ? h->sum.label : path_basename(h->path));
}

/* The expected hosts no snapshot names, sorted. */
static void find_missing(struct arena *a, const struct fleet *f, const struct ptrvec *expect, struct ptrvec *missing)
{
	for (size_t i = 0; i < expect->n; i++) {
		bool found = false;
		for (size_t k = 0; k < f->nhost && !found; k++)
			found = str_eq(host_name(&f->host[k]), expect->item[i]);
		if (!found)
			ptrvec_push(a, missing, expect->item[i]);
	}
	if (missing->n > 1)
		sort_items(missing->item, missing->n, sizeof(void *), cmp_str);
}

static void describe_text(const struct term *t, const struct snap_summary *s)
{
	fprintf(t->out, "glibc %s", s->glibc ? one_line(s->glibc) : "?");
	if (s->python)
		fprintf(t->out, ", Python %s", one_line(s->python));
	if (s->torch)
		fprintf(t->out, ", torch %s", one_line(s->torch));
	fprintf(t->out, ", driver %s", s->driver ? one_line(s->driver) : "none");
	if (s->gpus && s->gpus[0])
		fprintf(t->out, ", GPUs %s", one_line(s->gpus));
	fprintf(t->out, ", %zu distributions, %zu binaries", s->ndists, s->nobjects);
	if (s->nfailing)
		fprintf(t->out, ", %zu imports fail", s->nfailing);
	fputc('\n', t->out);
}

static void members_text(const struct term *t, const struct fleet *f, const struct fleet_class *c, bool all)
{
	size_t show = all ? c->n : MIN(c->n, (size_t)6);
	for (size_t i = 0; i < show; i++)
		fprintf(t->out, "%s%s", i ? ", " : "", host_name(&f->host[c->member[i]]));
	if (show < c->n)
		fprintf(t->out, ", ... (%zu more)", c->n - show);
}

/*
 * A host's summary, from a snapshot that check --host would accept: the
 * whole file goes through the same reader (format, version, every member)
 * first, so fleet never groups a file check --host refuses, and refuses it
 * with the same words.  The full read is released at once; only the
 * summary stays.
 */
static enum status read_host(struct arena *a, const char *path, bool summary_only, struct snap_summary *sum,
			     struct diag *d)
{
	if (summary_only)
		return snapshot_read_summary(a, path, sum, d);
	struct arena whole;
	arena_init(&whole);
	struct snapshot snap;
	enum status st = snapshot_read(&whole, path, &snap, d);
	/* a summary from before "machine": the loader's e_machine says it */
	const char *machine = st == ST_OK ? arena_strdup(a, snapshot_machine(&snap)) : NULL;
	arena_release(&whole);
	if (st == ST_OK)
		st = snapshot_read_summary(a, path, sum, d);
	if (st == ST_OK && !sum->machine)
		sum->machine = machine;
	return st;
}

int cmd_fleet(int argc, char **argv)
{
	struct scan s;
	scan_init(&s, NULL);
	struct fleet_cli o;
	memset(&o, 0, sizeof o);
	int rc = parse(&s.arena, argc, argv, &o);
	if (rc) {
		scan_release(&s);
		return rc < 0 ? EXIT_OK : rc;
	}
	struct fleet f;
	memset(&f, 0, sizeof f);
	f.host = arena_calloc(&s.arena, o.paths.n, sizeof *f.host);
	struct ptrvec unreadable;
	memset(&unreadable, 0, sizeof unreadable);
	for (size_t i = 0; i < o.paths.n; i++) {
		struct fleet_host *h = &f.host[f.nhost];
		h->path = o.paths.item[i];
		struct diag d;
		diag_clear(&d);
		if (read_host(&s.arena, h->path, o.summary_only, &h->sum, &d) != ST_OK) {
			ptrvec_push(&s.arena, &unreadable, arena_printf(&s.arena, "%s: %s", d.path, d.msg));
			continue;
		}
		f.nhost++;
	}
	fleet_group(&s.arena, &f);
	struct ptrvec missing;
	memset(&missing, 0, sizeof missing);
	find_missing(&s.arena, &f, &o.expect, &missing);
	/* nothing to group and nothing expected is not "every host alike" */
	int code = unreadable.n || (!f.nhost && !missing.n) ? EXIT_UNREADABLE
		   : f.ncls > 1 || missing.n			 ? EXIT_FAILS
							 : EXIT_OK;
	if (o.json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_obj_begin(&w);
		jw_kstr(&w, "abiscope", ABISCOPE_VERSION);
		jw_kstr(&w, "command", "fleet");
		jw_kint(&w, "hosts", (int64_t)f.nhost);
		jw_kbool(&w, "validated", !o.summary_only);
		jw_key(&w, "groups");
		jw_arr_begin(&w);
		for (size_t i = 0; i < f.ncls; i++) {
			const struct fleet_class *c = &f.cls[i];
			jw_obj_begin(&w);
			jw_kbool(&w, "baseline", i == 0);
			jw_key(&w, "hosts");
			jw_arr_begin(&w);
			for (size_t k = 0; k < c->n; k++)
				jw_str(&w, host_name(&f.host[c->member[k]]));
			jw_arr_end(&w);
			jw_key(&w, "files");
			jw_arr_begin(&w);
			for (size_t k = 0; k < c->n; k++)
				jw_str(&w, f.host[c->member[k]].path);
			jw_arr_end(&w);
			jw_key(&w, "differences");
			jw_arr_begin(&w);
			for (size_t k = 0; k < c->diffs.n; k++)
				jw_str(&w, c->diffs.item[k]);
			jw_arr_end(&w);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_key(&w, "missing");
		jw_arr_begin(&w);
		for (size_t i = 0; i < missing.n; i++)
			jw_str(&w, missing.item[i]);
		jw_arr_end(&w);
		jw_key(&w, "empty_folders");
		jw_arr_begin(&w);
		for (size_t i = 0; i < o.empty.n; i++)
			jw_str(&w, o.empty.item[i]);
		jw_arr_end(&w);
		jw_key(&w, "unreadable");
		jw_arr_begin(&w);
		for (size_t i = 0; i < unreadable.n; i++)
			jw_str(&w, unreadable.item[i]);
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		struct term t;
		term_init(&t, stdout, o.color);
		fprintf(t.out, "%sfleet%s  %zu host%s, %zu group%s%s\n", c_bold(&t), c_reset(&t), f.nhost,
			f.nhost == 1 ? "" : "s", f.ncls, f.ncls == 1 ? "" : "s",
			o.summary_only ? " (summaries only: the snapshots were not validated as check --host "
			"reads them)" : "");
		if (f.ncls) {
			const struct fleet_class *b = &f.cls[0];
			fprintf(t.out, "\n%sbaseline%s (%zu host%s): ", c_bold(&t), c_reset(&t), b->n, b->n == 1 ? "" : "s");
			members_text(&t, &f, b, o.verbose);
			fprintf(t.out, "\n  ");
			describe_text(&t, &f.host[b->member[0]].sum);
		}
		for (size_t i = 1; i < f.ncls; i++) {
			const struct fleet_class *c = &f.cls[i];
			fprintf(t.out, "\n%s%soutlier %zu%s (%zu host%s): ", c_bold(&t), c_yellow(&t), i, c_reset(&t), c->n,
				c->n == 1 ? "" : "s");
			members_text(&t, &f, c, o.verbose);
			fputc('\n', t.out);
			for (size_t k = 0; k < c->diffs.n; k++) {
				const char *line = c->diffs.item[k];
				bool severe = str_starts(line, "fails here only");
				fprintf(t.out, "  %s%s%s\n", severe ? c_red(&t) : "", one_line(line), severe ? c_reset(&t) : "");
			}
			if (!c->diffs.n)
				fprintf(t.out, "  (differs only in what the summary does not name)\n");
		}
		if (missing.n) {
			fprintf(t.out, "\n%s%smissing%s (%zu of %zu expected host%s, no snapshot): ", c_bold(&t), c_red(&t),
				c_reset(&t), missing.n, o.expect.n, o.expect.n == 1 ? "" : "s");
			for (size_t i = 0; i < missing.n; i++)
				fprintf(t.out, "%s%s", i ? ", " : "", (const char *)missing.item[i]);
			fputc('\n', t.out);
		}
		for (size_t i = 0; i < o.empty.n; i++)
			fprintf(stderr, "abiscope fleet: %s: no snapshot (*.json, *.json.gz) in this folder\n",
				(const char *)o.empty.item[i]);
		for (size_t i = 0; i < unreadable.n; i++)
			fprintf(stderr, "abiscope fleet: %s\n", (const char *)unreadable.item[i]);
		if (f.ncls > 1)
			fprintf(t.out, "\n%zu of %zu hosts differ from the baseline\n", f.nhost - f.cls[0].n, f.nhost);
		else if (f.nhost)
			fprintf(t.out, "\nevery host %sis alike\n", missing.n ? "with a snapshot " : "");
	}
	scan_release(&s);
	return code;
}
