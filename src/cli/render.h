/*
 * render.h: the pieces every command's output shares.
 *
 * A struct term knows where text goes and whether it may use colour
 * (--color=always|never, or auto: on a terminal that is not TERM=dumb,
 * forced by FORCE_COLOR or CLICOLOR_FORCE, never with NO_COLOR set).  Findings render the same way for every command: in text root
 * causes first with their consequences under them; in JSON as objects
 * with id, severity, object, title, explanation, fix, caused_by and the
 * fields of their id at the top level.
 */
#ifndef ABISCOPE_RENDER_H
#define ABISCOPE_RENDER_H

#include "cli/json_out.h"
#include "report/finding.h"

enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct term {
	FILE *out;
	bool color;
};

void term_init(struct term *t, FILE *out, enum color_mode mode);
/* Escape sequences, empty when colour is off. */
const char *c_bold(const struct term *t);
const char *c_red(const struct term *t);
const char *c_yellow(const struct term *t);
const char *c_green(const struct term *t);
const char *c_cyan(const struct term *t);
const char *c_dim(const struct term *t);
const char *c_reset(const struct term *t);

void render_findings_text(const struct term *t, const struct findings *fl, bool verbose);
void render_findings_json(struct jw *w, const struct findings *fl);
/*
 * The findings in [first, end) of fl as indented trees: each root (a
 * finding whose cause is outside the range) followed by what it causes.
 * depth 0 is indented six spaces (under a module line).
 */
void render_finding_roots(const struct term *t, const struct findings *fl, size_t first, size_t end,
			  bool verbose);
void render_finding_tree(const struct term *t, const struct findings *fl, size_t first, size_t end,
			 const struct finding *f, int depth, bool verbose);
/* Every finding of [first, end) that f causes, each as a tree at depth. */
void render_finding_children(const struct term *t, const struct findings *fl, size_t first, size_t end,
			     const struct finding *f, int depth, bool verbose);

/* One finding object (used by commands that group findings themselves). */
void render_finding_json(struct jw *w, const struct finding *f);
/* A fix as data (report/action.h): {"action": "pip-install", ..., "command"}; a list of them. */
void render_action_json(struct jw *w, const struct fix_action *x);
void render_actions_json(struct jw *w, const struct ptrvec *actions);

#endif
