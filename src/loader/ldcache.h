/*
 * ldcache.h: /etc/ld.so.cache, read from the file, never by running ldconfig.
 *
 * Both formats are understood: the legacy "ld.so-1.7.0" table (possibly
 * followed by the new one) and "glibc-ld.so.cache1.1" with its extension
 * directory (generator string, glibc-hwcaps subdirectory names).  The
 * parser validates every offset against the file and copies nothing: the
 * struct ldcache refers into the caller's byte window.
 *
 * Lookup follows glibc's search_cache: binary search over the entries
 * sorted in _dl_cache_libcmp order, entry flags that must equal the
 * loader's expected value, named-hwcaps entries preferred by priority,
 * legacy-hwcaps entries checked against the loader's hwcap mask.
 */
#ifndef ABISCOPE_LDCACHE_H
#define ABISCOPE_LDCACHE_H

#include "core/arena.h"
#include "core/bytes.h"
#include "core/diag.h"

struct ldcache_entry {
	int32_t flags;
	const char *key;	/* soname */
	const char *value;	/* path */
	uint64_t hwcap;
};

struct ldcache {
	struct bytes raw;
	bool new_format;
	struct ldcache_entry *entry;	/* in file order (sorted descending) */
	size_t nentry;
	const char *generator;		/* from the extension, or NULL */
	const char **hwcaps_names;	/* glibc-hwcaps subdirectory names */
	size_t nhwcaps;
};

/* Parses a cache file image; entries live in arena a. */
enum status ldcache_parse(struct arena *a, struct bytes raw, const char *path, struct ldcache *c,
			  struct diag *d);

/* The loader's view of the running machine needed by the lookup. */
struct ldcache_query {
	int32_t expected_flags;		/* _DL_CACHE_DEFAULT_ID, e.g. 0x303 on x86-64 */
	bool any_elf_flag;		/* generic targets also accept flags == 1 */
	bool legacy_hwcaps;		/* glibc <= 2.36 honours legacy hwcap entries */
	uint64_t hwcap_exclude;		/* legacy hwcap bits the loader rejects */
	uint64_t platform_mask;		/* _DL_HWCAP_PLATFORM */
	uint64_t platform_bit;		/* this CPU's platform bit, or 0 */
	uint32_t isa_1;			/* x86 ISA level bits (1 baseline, 2 v2, 4 v3, 8 v4) */
	/* priority of a glibc-hwcaps subdir name: 0 = not usable, lower = better */
	uint32_t (*hwcaps_priority)(void *ctx, const char *name);
	void *ctx;
};

/* The path glibc's _dl_load_cache_lookup would return, or NULL. */
const char *ldcache_lookup(const struct ldcache *c, const struct ldcache_query *q, const char *name);

/* glibc's _dl_cache_libcmp: digit runs compare numerically. */
int ldcache_libcmp(const char *p1, const char *p2);

#endif
