/*
 * arena.h: bump allocation for everything that lives as long as a scan.
 *
 * A scan allocates its objects, strings, graphs and findings from one
 * arena and releases them all with arena_release().  Individual
 * allocations are never freed.  Blocks are mapped (mmap) as needed: small
 * allocations share 2 MiB blocks, a request over 64 KiB gets a block of
 * its own (arena.c says why).
 *
 * Allocation failure is not recoverable in abiscope (the inputs are
 * bounded by what is mapped), so the arena aborts on OOM rather than
 * making every caller test for NULL.  It first calls
 * arena_out_of_memory(size): a weak symbol that only aborts, which a
 * program overrides to say so (the CLI prints one line; the library never
 * prints).
 */
#ifndef ABISCOPE_ARENA_H
#define ABISCOPE_ARENA_H

#include "core/common.h"
#include <stdarg.h>

struct arena_block;
struct arena_map;

struct arena {
	struct arena_block *head;
	struct arena_map *maps;	/* arena_alloc_untouched(), arena_adopt() */
	size_t block_size;
	size_t total;	/* bytes handed out, for statistics */
};

void arena_init(struct arena *a);
/* Called once before the arena aborts on exhaustion; see above. */
void arena_out_of_memory(size_t size);
void arena_release(struct arena *a);

/* Zeroed, aligned to 16 bytes. */
void *arena_alloc(struct arena *a, size_t size);
/*
 * size zeroed bytes, page-aligned, whose pages cost no memory until written
 * (an anonymous mapping, released with the arena): a sparse image of which
 * only parts are ever filled in.
 */
void *arena_alloc_untouched(struct arena *a, size_t size);
/* p, from malloc(), is freed with the arena: a buffer read whole whose
 * pieces the scan keeps (a RECORD's rows point into its text), kept
 * instead of copied. */
void arena_adopt(struct arena *a, void *p);
/* n * size zeroed bytes; aborts on overflow. */
void *arena_calloc(struct arena *a, size_t n, size_t size);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* x, sep and y in one string: arena_printf(a, "%s%s%s", ...) without the
 * format's cost, for the paths made once per directory entry. */
char *arena_join(struct arena *a, const char *x, const char *sep, const char *y);
char *arena_vprintf(struct arena *a, const char *fmt, va_list ap);
/* Copy of old (old_n elements) in a new array of new_n elements. */
void *arena_grow(struct arena *a, const void *old, size_t old_n, size_t new_n, size_t elem);

/*
 * A growable array of pointers kept in an arena: the common case of
 * "collect a list while scanning".  Old storage is abandoned on growth,
 * which the doubling keeps to a constant factor.
 */
struct ptrvec {
	void **item;
	size_t n, cap;
};

void ptrvec_push(struct arena *a, struct ptrvec *v, void *p);
bool ptrvec_contains(const struct ptrvec *v, const void *p);

#endif
