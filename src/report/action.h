/*
 * action.h: a fix as data, so a CI job (or the fix oracle) can apply it
 * as the text says it.
 *
 * Five kinds, as `check --json` writes them ("fix_actions" of a finding or
 * cause, "plan.actions"): pip-install (PEP 508 requirements, the index
 * when it is not PyPI, --no-deps and --force-reinstall), pip-uninstall
 * (installed distributions only), remove-path (a stale metadata folder),
 * add-library-path (a folder the loader should search, and how:
 * ld.so.conf or LD_LIBRARY_PATH) and system-package (files a system
 * package manager owns: reinstall that package).  command is the line the
 * text shows, built from the rest by fix_action_finish().
 *
 * Actions live in the scan's arena; analyses build them, renderers read.
 */
#ifndef ABISCOPE_REPORT_ACTION_H
#define ABISCOPE_REPORT_ACTION_H

#include "core/arena.h"

enum fix_kind { FIX_PIP_INSTALL, FIX_PIP_UNINSTALL, FIX_REMOVE_PATH, FIX_ADD_LIBRARY_PATH, FIX_SYSTEM_PACKAGE };

struct fix_action {
	enum fix_kind kind;
	const char *python;	/* pip-*: the interpreter pip acts for, or NULL */
	struct ptrvec items;	/* const char *: requirements, distributions or system packages */
	const char *index_url;	/* pip-install: NULL for PyPI */
	bool no_deps, force_reinstall;
	const char *path;	/* remove-path, add-library-path */
	const char *how;	/* add-library-path: "ld.so.conf" or "LD_LIBRARY_PATH" */
	const char *manager;	/* system-package: "dpkg" */
	const char *command;	/* the line the text shows */
};

/* "pip-install", "pip-uninstall", "remove-path", "add-library-path", "system-package" */
const char *fix_kind_name(enum fix_kind k);

struct fix_action *fix_action_new(struct arena *a, enum fix_kind kind);
void fix_action_item(struct arena *a, struct fix_action *x, const char *item);
/* Builds x->command from the other fields. */
void fix_action_finish(struct arena *a, struct fix_action *x);

/* One pasteable line for a list of actions, joined by " && ". */
const char *fix_actions_command(struct arena *a, const struct ptrvec *actions);

/* s quoted for a POSIX shell when it needs it ("'cuda-toolkit[nvrtc]==13.0.2'"). */
const char *shell_word(struct arena *a, const char *s);

#endif
