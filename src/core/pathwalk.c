#include "core/pathwalk.h"

void path_walk_init(struct path_walk *w, const char *path)
{
	snprintf(w->todo, sizeof w->todo, "%s", path);
	w->rest = w->todo;
	snprintf(w->done, sizeof w->done, "/");
	w->comp[0] = '\0';
	w->last = false;
	w->links = 0;
}

int path_walk_next(struct path_walk *w)
{
	for (;;) {
		while (*w->rest == '/')
			w->rest++;
		if (!*w->rest)
			return 0;
		char *e = strchr(w->rest, '/');
		size_t n = e ? (size_t)(e - w->rest) : strlen(w->rest);
		if (n > NAME_MAX)
			return -1;
		memcpy(w->comp, w->rest, n);
		w->comp[n] = '\0';
		w->rest += n;
		w->last = true;
		for (const char *q = w->rest; *q; q++)
			if (*q != '/') {
				w->last = false;
				break;
			}
		if (!str_eq(w->comp, "."))
			return 1;
	}
}

void path_walk_link(struct path_walk *w, const char *target)
{
	char next[PATH_MAX * 2];
	snprintf(next, sizeof next, "%s%s", target, w->rest);
	if (target[0] == '/')
		snprintf(w->done, sizeof w->done, "/");
	snprintf(w->todo, sizeof w->todo, "%s", next);
	w->rest = w->todo;
}
