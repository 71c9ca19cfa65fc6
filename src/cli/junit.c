#include "cli/junit.h"
#include "cli/xml_out.h"


bool junit_open(struct junit *j, const char *cmd, const char *path)
{
	memset(j, 0, sizeof *j);
	j->path = path;
	j->out = open_memstream(&j->buf, &j->len);
	if (!j->out) {
		fprintf(stderr, "abiscope %s: --junit %s: out of memory\n", cmd, path);
		return false;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", j->out);
	return true;
}

bool junit_close(struct junit *j, const char *cmd)
{
	fputs("</testsuites>\n", j->out);
	bool ok = !ferror(j->out);
	ok = fclose(j->out) == 0 && ok;
	struct diag d;
	diag_clear(&d);
	if (ok && str_eq(j->path, "-"))
		ok = fwrite(j->buf, 1, j->len, stdout) == j->len;
	else if (ok && fs_write_output(j->path, j->buf, j->len, false, NULL, &d) != ST_OK) {
		fprintf(stderr, "abiscope %s: --junit %s: %s\n", cmd, j->path, d.msg);
		free(j->buf);
		return false;
	}
	free(j->buf);
	if (!ok)
		fprintf(stderr, "abiscope %s: --junit %s: could not write the report\n", cmd, j->path);
	return ok;
}

void junit_begin(struct junit *j, const char *name)
{
	fputs("<testsuites name=\"", j->out);
	xml_text(j->out, name);
	fputs("\">\n", j->out);
}

void junit_suite_begin(struct junit *j, const char *name, size_t tests, size_t failures, size_t skipped)
{
	fputs("  <testsuite name=\"", j->out);
	xml_text(j->out, name);
	fprintf(j->out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", tests, failures, skipped);
}

void junit_suite_end(struct junit *j)
{
	fputs("  </testsuite>\n", j->out);
}

bool junit_counts(const struct module_verdict *v)
{
	return (v->io->is_extension && !v->io->in_stdlib) || v->loaded_by || v->state == V_FAILS || v->gpu_fails;
}

bool junit_fails(const struct module_verdict *v)
{
	return v->state == V_FAILS || v->gpu_fails;
}

/* The root cause among v's findings: the first error nothing else causes. */
static const struct finding *root_cause(const struct findings *fl, const struct module_verdict *v)
{
	const struct finding *first_error = NULL;
	for (size_t i = v->finding_first; i < v->finding_end; i++) {
		const struct finding *f = findings_at(fl, i);
		if (f->severity != SEV_ERROR)
			continue;
		if (f->caused_by < 0)
			return f;
		if (!first_error)
			first_error = f;
	}
	return first_error;
}

/* cannot-tell: the finding that says what the verdict depends on */
static const struct finding *depends_finding(const struct findings *fl, const struct module_verdict *v)
{
	for (size_t i = v->finding_first; i < v->finding_end; i++)
		if (str_eq(findings_at(fl, i)->id, "depends-on-self-load"))
			return findings_at(fl, i);
	return NULL;
}

static void open_case(struct junit *j, const char *classname, const char *name, const char *file)
{
	fputs("    <testcase classname=\"", j->out);
	xml_text(j->out, classname);
	fputs("\" name=\"", j->out);
	xml_text(j->out, name);
	if (file) {
		fputs("\" file=\"", j->out);
		xml_text(j->out, file);
	}
	fputs("\"", j->out);
}

void junit_module(struct junit *j, const struct findings *fl, const struct module_verdict *v, const char *classname)
{
	const char *name = v->io->module ? v->io->module : path_basename(v->io->path);
	open_case(j, classname, name, v->io->path);
	if (v->state == V_NOT_CHECKED || v->state == V_OTHER_PYTHON || v->state == V_CANNOT_TELL) {
		fputs(">\n      <skipped message=\"", j->out);
		const struct finding *f = v->state == V_CANNOT_TELL ? depends_finding(fl, v) : NULL;
		xml_text(j->out, f && f->title ? f->title : v->state == V_OTHER_PYTHON ? "built for another Python"
			 : v->state == V_CANNOT_TELL ? "cannot tell whether it imports" : "not checked");
		fputs("\"/>\n    </testcase>\n", j->out);
		return;
	}
	if (!junit_fails(v)) {
		fputs("/>\n", j->out);
		return;
	}
	const struct finding *f = root_cause(fl, v);
	fputs(">\n      <failure type=\"", j->out);
	xml_text(j->out, f ? f->id : "import-fails");
	fputs("\" message=\"", j->out);
	xml_text(j->out, f && f->title ? f->title : v->dlerror ? v->dlerror : "would not import");
	fputs("\">", j->out);
	if (v->dlerror) {
		xml_text(j->out, v->dlerror);
		fputc('\n', j->out);
	}
	if (v->consequence) {
		xml_text(j->out, v->consequence);
		fputc('\n', j->out);
	}
	if (f) {
		for (size_t i = 0; i < f->lines.n; i++) {
			xml_text(j->out, f->lines.item[i]);
			fputc('\n', j->out);
		}
		if (f->fix) {
			fputs("fix: ", j->out);
			xml_text(j->out, f->fix);
			fputc('\n', j->out);
		}
	}
	fputs("</failure>\n    </testcase>\n", j->out);
}

void junit_case(struct junit *j, const char *classname, const char *name, const char *failure_type,
		const char *failure)
{
	open_case(j, classname, name, NULL);
	if (!failure) {
		fputs("/>\n", j->out);
		return;
	}
	fputs(">\n      <failure type=\"", j->out);
	xml_text(j->out, failure_type);
	fputs("\" message=\"", j->out);
	xml_text(j->out, failure);
	fputs("\"/>\n    </testcase>\n", j->out);
}
