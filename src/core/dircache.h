/*
 * dircache.h: the names of the folders a scan has listed, as the listing
 * saw them.
 *
 * A scan lists every folder of a site (the inventory), then asks of many
 * paths in them whether they are there and what they are: a module's
 * candidates (NAME.py, NAME/__init__.py) for every line importing it, and
 * the same folder again for each library name it looks for.  fs.c keeps
 * each complete listing here and answers those questions from it, without
 * a system call (see fs_remember_listings in fs.h for when it may).
 *
 * Kinds are fs.h's enum fs_kind, carried as bytes (this module sits
 * below fs.h).  Everything lives in the arena given to dircache_new; the
 * number of names kept is bounded, so a hostile tree costs no more.
 */
#ifndef ABISCOPE_DIRCACHE_H
#define ABISCOPE_DIRCACHE_H

#include "core/arena.h"

struct dircache;
struct dir_listing;

/* max_names: the most names kept over all listings; past it, no more
 * listings are kept (the questions go to the disk). */
struct dircache *dircache_new(struct arena *a, size_t max_names);

/* A listing being recorded, or NULL when the cache is full or another is
 * being recorded (a folder listed from inside another's listing is not
 * kept: the entries being recorded live in one buffer). */
struct dir_listing *dircache_begin(struct dircache *c);
/* One entry, in the order the folder gave it; false when the cache is
 * full (the listing is then never kept). */
bool dircache_add(struct dircache *c, struct dir_listing *l, const char *name, uint8_t kind, bool is_link);
/* Ends l's recording, and keeps it as dir's complete listing (dir NULL:
 * the listing stopped early, keep nothing). */
void dircache_finish(struct dircache *c, struct dir_listing *l, const char *dir);

/* dir's listing, or NULL when it was never kept. */
const struct dir_listing *dircache_get(const struct dircache *c, const char *dir);
/* Whether name is in the listing, and its kind and link-ness. */
bool dircache_find(const struct dir_listing *l, const char *name, uint8_t *kind, bool *is_link);
/* Whether this process may search the folder (stat a name in it): an
 * answer taken from its listing stands for stat()'s only then.  Unknown
 * until the first question about one of its names asks the kernel. */
enum dircache_search { DIRCACHE_SEARCH_UNKNOWN, DIRCACHE_SEARCH_YES, DIRCACHE_SEARCH_NO };
enum dircache_search dircache_searchable(const struct dir_listing *l);
void dircache_set_searchable(const struct dir_listing *l, bool yes);
/* The listing's entries in the folder's order, for a second listing. */
size_t dircache_count(const struct dir_listing *l);
const char *dircache_entry(const struct dir_listing *l, size_t i, uint8_t *kind, bool *is_link);

#endif
