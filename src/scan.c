#include "scan.h"

void scan_init(struct scan *s, const char *root)
{
	struct scan_where w = { .root = root };
	scan_init_where(s, &w);
}

void scan_init_where(struct scan *s, const struct scan_where *w)
{
	memset(s, 0, sizeof *s);
	arena_init(&s->arena);
	fs_init_cwd(&s->fs, w->root, w->cwd);
	objcache_init(&s->objs, &s->arena, &s->fs);
	s->objs.given = w->machine;
	findings_init(&s->findings, &s->arena);
}

void scan_release(struct scan *s)
{
	objcache_release(&s->objs);
	arena_release(&s->arena);
}
