#include "report/finding.h"

static const struct finding_kind kinds[] = {
#define FINDING(id, severity, section) {id, severity, section},
#include "../../data/findings.def"
#undef FINDING
};

const struct finding_kind *finding_kind_of(const char *id)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (str_eq(kinds[i].id, id))
			return &kinds[i];
	return NULL;
}

size_t finding_kinds(const struct finding_kind **table)
{
	*table = kinds;
	return sizeof kinds / sizeof kinds[0];
}

void findings_init(struct findings *fl, struct arena *a)
{
	memset(fl, 0, sizeof *fl);
	fl->arena = a;
}

struct finding *finding_add(struct findings *fl, const char *id, enum severity sev,
			    const char *object)
{
	struct finding *f = arena_alloc(fl->arena, sizeof *f);
	f->index = (int)fl->list.n;
	f->id = id;
	f->severity = sev;
	f->object = object ? arena_strdup(fl->arena, object) : NULL;
	f->fields = val_obj(fl->arena);
	f->caused_by = -1;
	ptrvec_push(fl->arena, &fl->list, f);
	return f;
}

void finding_title(struct findings *fl, struct finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	f->title = arena_vprintf(fl->arena, fmt, ap);
	va_end(ap);
}

void finding_line(struct findings *fl, struct finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ptrvec_push(fl->arena, &f->lines, arena_vprintf(fl->arena, fmt, ap));
	va_end(ap);
}

void finding_fix(struct findings *fl, struct finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	f->fix = arena_vprintf(fl->arena, fmt, ap);
	va_end(ap);
}

const char *severity_name(enum severity s)
{
	switch (s) {
	case SEV_ERROR: return "error";
	case SEV_WARNING: return "warning";
	case SEV_NOTE: return "note";
	}
	return "note";
}

size_t findings_count(const struct findings *fl, enum severity s)
{
	size_t n = 0;
	for (size_t i = 0; i < fl->list.n; i++)
		if (((struct finding *)fl->list.item[i])->severity == s)
			n++;
	return n;
}

struct finding *findings_at(const struct findings *fl, size_t i)
{
	return i < fl->list.n ? fl->list.item[i] : NULL;
}
