/*
 * finding.h: the one thing analyses produce and renderers consume.
 *
 * A finding has a stable id (library-not-found, undefined-symbol, ...), a
 * severity, the object that needs the thing, a one-line title and
 * explanation lines in the engineer's words, the fix, and typed fields
 * for JSON.  caused_by links a consequence to its root cause (an index in
 * the same list), so renderers can put root causes first.  guess marks a
 * conclusion drawn from heuristics rather than from the loader's rules.
 *
 * The list and everything in it live in the scan's arena.
 */
#ifndef ABISCOPE_FINDING_H
#define ABISCOPE_FINDING_H

#include "core/arena.h"
#include "report/action.h"
#include "report/value.h"

enum severity { SEV_ERROR, SEV_WARNING, SEV_NOTE };

struct finding {
	int index;
	const char *id;
	enum severity severity;
	const char *object;	/* path of the object that needs the thing, or NULL */
	const char *title;
	struct ptrvec lines;	/* const char *: explanation, one line each */
	const char *fix;
	struct ptrvec actions;	/* struct fix_action *: the fix as data (report/action.h);
				 * empty when the fix is advice only */
	struct value *fields;	/* id-specific fields, a VAL_OBJ */
	int caused_by;		/* index of the root-cause finding, or -1 */
	bool guess;
	bool first_error;	/* the failure the real loader reports */
};

struct findings {
	struct arena *arena;
	struct ptrvec list;	/* struct finding * */
};

void findings_init(struct findings *fl, struct arena *a);
struct finding *finding_add(struct findings *fl, const char *id, enum severity sev,
			    const char *object);
void finding_title(struct findings *fl, struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void finding_line(struct findings *fl, struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void finding_fix(struct findings *fl, struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *severity_name(enum severity s);

/* The registry of finding ids (data/findings.def): every id a finding may
 * carry, with its default severity and the section of docs/findings.md
 * that documents it.  NULL for an id that is not registered. */
struct finding_kind {
	const char *id;
	enum severity severity;
	const char *section;
};
const struct finding_kind *finding_kind_of(const char *id);
size_t finding_kinds(const struct finding_kind **table);
size_t findings_count(const struct findings *fl, enum severity s);
struct finding *findings_at(const struct findings *fl, size_t i);

#endif
