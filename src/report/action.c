#include "report/action.h"

const char *fix_kind_name(enum fix_kind k)
{
	switch (k) {
	case FIX_PIP_INSTALL: return "pip-install";
	case FIX_PIP_UNINSTALL: return "pip-uninstall";
	case FIX_REMOVE_PATH: return "remove-path";
	case FIX_ADD_LIBRARY_PATH: return "add-library-path";
	case FIX_SYSTEM_PACKAGE: return "system-package";
	}
	return "?";
}

struct fix_action *fix_action_new(struct arena *a, enum fix_kind kind)
{
	struct fix_action *x = arena_calloc(a, 1, sizeof *x);
	x->kind = kind;
	return x;
}

void fix_action_item(struct arena *a, struct fix_action *x, const char *item)
{
	for (size_t i = 0; i < x->items.n; i++)
		if (str_eq(x->items.item[i], item))
			return;
	ptrvec_push(a, &x->items, arena_strdup(a, item));
}

const char *shell_word(struct arena *a, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			strchr("-_.,/:=+@%", *p) != NULL;
	if (plain)
		return s;
	const char *out = "'";
	for (const char *p = s; *p; p++)
		out = *p == '\'' ? arena_printf(a, "%s'\\''", out) : arena_printf(a, "%s%c", out, *p);
	return arena_printf(a, "%s'", out);
}

/* The items as shell words, joined by spaces: measured, then written once
 * (a plan may reinstall thousands of distributions). */
static const char *items_text(struct arena *a, const struct fix_action *x)
{
	const char **w = arena_calloc(a, x->items.n ? x->items.n : 1, sizeof *w);
	size_t len = 1;
	for (size_t i = 0; i < x->items.n; i++) {
		w[i] = shell_word(a, x->items.item[i]);
		len += strlen(w[i]) + 1;
	}
	char *out = arena_alloc(a, len), *p = out;
	for (size_t i = 0; i < x->items.n; i++) {
		if (i)
			*p++ = ' ';
		size_t n = strlen(w[i]);
		memcpy(p, w[i], n);
		p += n;
	}
	*p = '\0';
	return out;
}

void fix_action_finish(struct arena *a, struct fix_action *x)
{
	switch (x->kind) {
	case FIX_PIP_INSTALL:
		x->command = arena_printf(a, "pip install %s%s%s%s%s", x->force_reinstall ? "--force-reinstall " : "",
					  x->no_deps ? "--no-deps " : "", items_text(a, x),
					  x->index_url ? " --index-url " : "", x->index_url ? x->index_url : "");
		break;
	case FIX_PIP_UNINSTALL:
		x->command = arena_printf(a, "pip uninstall -y %s", items_text(a, x));
		break;
	case FIX_REMOVE_PATH:
		x->command = arena_printf(a, "rm -r %s", shell_word(a, x->path));
		break;
	case FIX_ADD_LIBRARY_PATH:
		if (x->how && str_eq(x->how, "ld.so.conf"))
			x->command = arena_printf(a, "echo %s > /etc/ld.so.conf.d/abiscope.conf && ldconfig",
						  shell_word(a, x->path));
		else
			x->command = arena_printf(a, "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}",
						  shell_word(a, x->path));
		break;
	case FIX_SYSTEM_PACKAGE:
		x->command = x->manager && str_eq(x->manager, "rpm")
				     ? arena_printf(a, "dnf reinstall %s", items_text(a, x))
				     : arena_printf(a, "apt-get install --reinstall %s", items_text(a, x));
		break;
	}
}

const char *fix_actions_command(struct arena *a, const struct ptrvec *actions)
{
	size_t len = 1, n = 0;
	for (size_t i = 0; i < actions->n; i++) {
		const struct fix_action *x = actions->item[i];
		if (x->command) {
			len += strlen(x->command) + 4;
			n++;
		}
	}
	if (!n)
		return NULL;
	char *out = arena_alloc(a, len), *p = out;
	for (size_t i = 0, k = 0; i < actions->n; i++) {
		const struct fix_action *x = actions->item[i];
		if (!x->command)
			continue;
		if (k++) {
			memcpy(p, " && ", 4);
			p += 4;
		}
		size_t l = strlen(x->command);
		memcpy(p, x->command, l);
		p += l;
	}
	*p = '\0';
	return out;
}
