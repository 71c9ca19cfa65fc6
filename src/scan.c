#include "scan.h"

void scan_init(struct scan *s, const char *root)
{
	memset(s, 0, sizeof *s);
	arena_init(&s->arena);
	fs_init(&s->fs, root);
	objcache_init(&s->objs, &s->arena, &s->fs);
	findings_init(&s->findings, &s->arena);
}

void scan_release(struct scan *s)
{
	objcache_release(&s->objs);
	arena_release(&s->arena);
}
