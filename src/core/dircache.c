#include "core/dircache.h"
#include "core/hashmap.h"

struct dir_entry {
	const char *name;
	uint32_t hash;
	uint8_t kind;
	bool is_link;
};

struct dir_listing {
	struct dir_entry *entry;	/* in the folder's order */
	size_t n, cap;
	uint32_t *slot;			/* open addressing: entry index + 1, 0 empty */
	size_t nslot;			/* a power of two, at least twice n */
	uint8_t searchable;		/* enum dircache_search, asked on first use */
};

struct dircache {
	struct arena *a;
	struct strmap by_dir;		/* folder path -> struct dir_listing */
	size_t names, max_names;
	bool full;
	/* names packed end to end (the arena rounds each allocation to 16
	 * bytes: a site's 66,000 short names would cost twice their size) */
	char *pool;
	size_t pool_left;
	/* the entries of the listing being recorded, copied out exactly once
	 * kept (growing them in the arena would abandon each old array) */
	struct dir_entry *scratch;
	size_t scratch_cap;
	bool recording;			/* a listing is being recorded into scratch */
};

#define NAME_POOL_CHUNK (64u * 1024u)

struct dircache *dircache_new(struct arena *a, size_t max_names)
{
	struct dircache *c = arena_calloc(a, 1, sizeof *c);
	c->a = a;
	c->max_names = max_names;
	return c;
}

struct dir_listing *dircache_begin(struct dircache *c)
{
	if (c->full || c->recording)
		return NULL;	/* a listing inside another's callback is not kept */
	struct dir_listing *l = arena_calloc(c->a, 1, sizeof *l);
	l->entry = c->scratch;	/* until dircache_finish() copies them out */
	l->cap = c->scratch_cap;
	c->recording = true;
	return l;
}

static const char *pooled(struct dircache *c, const char *name)
{
	size_t n = strlen(name) + 1;
	if (n > c->pool_left) {
		size_t chunk = MAX(n, (size_t)NAME_POOL_CHUNK);
		c->pool = arena_alloc(c->a, chunk);
		c->pool_left = chunk;
	}
	char *p = c->pool;
	memcpy(p, name, n);
	c->pool += n;
	c->pool_left -= n;
	return p;
}

bool dircache_add(struct dircache *c, struct dir_listing *l, const char *name, uint8_t kind, bool is_link)
{
	if (c->full || c->names >= c->max_names) {
		c->full = true;
		return false;
	}
	if (l->n == l->cap) {
		/* the scratch grows to the largest folder, once (what it leaves
		 * behind in the arena is at most as much again) */
		size_t cap = l->cap ? l->cap * 2 : 256;
		l->entry = c->scratch = arena_grow(c->a, l->entry, l->n, cap, sizeof *l->entry);
		l->cap = c->scratch_cap = cap;
	}
	struct dir_entry *e = &l->entry[l->n++];
	e->name = pooled(c, name);
	e->hash = hash_str(name);
	e->kind = kind;
	e->is_link = is_link;
	c->names++;
	return true;
}

void dircache_finish(struct dircache *c, struct dir_listing *l, const char *dir)
{
	c->recording = false;
	if (!dir || c->full || strmap_get(&c->by_dir, dir))
		return;
	struct dir_entry *own = arena_alloc(c->a, (l->n ? l->n : 1) * sizeof *own);
	if (l->n)	/* an empty folder's scratch may be NULL: memcpy must not see it */
		memcpy(own, l->entry, l->n * sizeof *own);
	l->entry = own;
	l->cap = l->n;
	size_t nslot = 4;
	while (nslot < 2 * l->n)
		nslot *= 2;
	l->slot = arena_calloc(c->a, nslot, sizeof *l->slot);
	l->nslot = nslot;
	for (size_t i = 0; i < l->n; i++) {
		size_t j = l->entry[i].hash & (nslot - 1);
		while (l->slot[j])
			j = (j + 1) & (nslot - 1);
		l->slot[j] = (uint32_t)(i + 1);
	}
	strmap_put(c->a, &c->by_dir, arena_strdup(c->a, dir), l);
}

const struct dir_listing *dircache_get(const struct dircache *c, const char *dir)
{
	return strmap_get(&c->by_dir, dir);
}

bool dircache_find(const struct dir_listing *l, const char *name, uint8_t *kind, bool *is_link)
{
	uint32_t h = hash_str(name);
	for (size_t j = h & (l->nslot - 1); l->slot[j]; j = (j + 1) & (l->nslot - 1)) {
		const struct dir_entry *e = &l->entry[l->slot[j] - 1];
		if (e->hash == h && str_eq(e->name, name)) {
			*kind = e->kind;
			*is_link = e->is_link;
			return true;
		}
	}
	return false;
}

size_t dircache_count(const struct dir_listing *l)
{
	return l->n;
}

const char *dircache_entry(const struct dir_listing *l, size_t i, uint8_t *kind, bool *is_link)
{
	*kind = l->entry[i].kind;
	*is_link = l->entry[i].is_link;
	return l->entry[i].name;
}

enum dircache_search dircache_searchable(const struct dir_listing *l)
{
	return (enum dircache_search)l->searchable;
}

void dircache_set_searchable(const struct dir_listing *l, bool yes)
{
	/* a fact about the folder, not the listing's content: noted in
	 * place by its only reader (fs.c), once */
	((struct dir_listing *)l)->searchable = yes ? DIRCACHE_SEARCH_YES : DIRCACHE_SEARCH_NO;
}
