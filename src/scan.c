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
	fs_remember_listings(&s->fs, &s->arena);
	objcache_init(&s->objs, &s->arena, &s->fs);
	s->objs.given = w->machine;
	findings_init(&s->findings, &s->arena);
}

void scan_release(struct scan *s)
{
	if (s->objs_of)
		scan_return_objects(s);
	else
		objcache_release(&s->objs);
	arena_release(&s->arena);
}

void scan_borrow_objects(struct scan *s, struct scan *from)
{
	objcache_release(&s->objs);	/* its own, still empty */
	s->objs = from->objs;		/* allocates from from's arena, reads from's fs */
	s->objs_of = from;
	if (!s->torchabi)
		s->torchabi = from->torchabi;	/* in from's arena, which outlives s's use of it */
}

void scan_return_objects(struct scan *s)
{
	if (!s->objs_of)
		return;
	s->objs_of->objs = s->objs;	/* with what this scan added */
	memset(&s->objs, 0, sizeof s->objs);
	s->objs_of = NULL;
}

void scan_report(struct scan *s, const char *what, const char *item, size_t done, size_t total)
{
	if (!s->progress)
		return;
	struct scan_progress p = { what, item, done, total };
	s->progress(s->progress_ctx, &p);
}
