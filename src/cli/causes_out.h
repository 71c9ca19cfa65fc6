/*
 * causes_out.h: root causes as every command shows them (report/causes.h).
 *
 * In text a cause is said once: its severity and id, a headline, the few
 * lines that explain it (all of them with -v), the fix, and what it takes
 * down (distributions and their modules).  In JSON each cause links to the
 * findings it explains by index.
 */
#ifndef ABISCOPE_CAUSES_OUT_H
#define ABISCOPE_CAUSES_OUT_H

#include "cli/render.h"
#include "report/causes.h"

/* "sgl-kernel (7 modules: flash_ops, ...)", in the arena; NULL when nothing is named. */
const char *cause_takes_down(struct arena *a, const struct cause *c, bool verbose);
/* One cause; number 0 prints no number. */
void render_cause_text(const struct term *t, struct arena *a, const struct cause *c, int number, bool verbose);
/* The same, shorter for a cause a plan shown above removes: at most
 * max_lines explanation lines (0: the default), one "also", and fix_note
 * in place of its fix ("the change above"). */
void render_cause_text_in_plan(const struct term *t, struct arena *a, const struct cause *c, int number,
			       bool verbose, const char *fix_note, size_t max_lines);
/* Every cause except those whose key is in skip (NULL: none); returns how many were printed. */
size_t render_causes_text(const struct term *t, struct arena *a, const struct causes *cs, bool verbose,
			  bool (*skip)(const struct cause *c, const void *ctx), const void *ctx);
/* The driver cause of cs, or NULL. */
const struct cause *causes_driver(const struct causes *cs);
/*
 * Without a driver: says once that this machine has none and what fails
 * here because of it, then what follows: the verdict with the driver,
 * modelled by stub (NULL: it could not be modelled).
 */
void render_no_driver(const struct term *t, struct arena *a, const struct cause *driver, const char *stub,
		      bool verbose);
/* "causes": [{key, severity, id, title, fix, guess, driver, findings, roots, modules, distributions}] */
void render_causes_json(struct jw *w, const struct causes *cs);

#endif
