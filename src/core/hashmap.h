/*
 * hashmap.h: open-addressing maps whose storage lives in an arena.
 *
 * strmap maps NUL-terminated strings to pointers.  Keys are not copied:
 * the caller keeps them alive as long as the map (they usually point
 * into an arena or into a file mapping that outlives the scan).
 * idmap maps a pair of 64-bit numbers (device and inode) to a pointer:
 * it is how each file is parsed once per scan however it was reached.
 *
 * Both grow by doubling at 50% load; old tables are abandoned in the
 * arena.  Lookups never allocate.
 */
#ifndef ABISCOPE_HASHMAP_H
#define ABISCOPE_HASHMAP_H

#include "core/arena.h"

struct strmap_slot {
	const char *key;
	uint32_t hash;
	void *value;
};

struct strmap {
	struct strmap_slot *slot;
	size_t n, cap;	/* cap is a power of two or 0 */
};

/* The maps' hash, eight bytes a step: for memory only (it may differ
 * between releases; nothing stores it, no output follows its order). */
uint32_t hash_str(const char *s);
uint32_t hash_bytes(const void *p, size_t n);
/* The same, 64 bits, from seed: two seeds key a memory by 128 bits. */
uint64_t hash_mem64(uint64_t seed, const void *p, size_t n);

/* 64-bit FNV-1a, continued from h (HASH64_INIT to start): stable across
 * runs and machines, so fit for what files store (snapshot export hashes,
 * digests). */
#define HASH64_INIT 0xcbf29ce484222325ull
uint64_t hash64_bytes(uint64_t h, const void *p, size_t n);

/* Values for maps used as sets or as yes/no memories: strmap_get()
 * returns NULL for "never recorded", so "no" needs a value of its own. */
#define MAP_YES ((void *)1)
#define MAP_NO ((void *)2)

void *strmap_get(const struct strmap *m, const char *key);
/* Inserts or replaces. */
void strmap_put(struct arena *a, struct strmap *m, const char *key, void *value);
/* Inserts unless key is there: returns the value already there (nothing
 * changed), or NULL (value inserted).  One hash and probe where a get and
 * a put would make two. */
void *strmap_put_new(struct arena *a, struct strmap *m, const char *key, void *value);
/* Room for n keys without growing (one table, not a chain of abandoned ones). */
void strmap_reserve(struct arena *a, struct strmap *m, size_t n);
/* Iteration: returns the next occupied slot index >= *pos, or false. */
bool strmap_next(const struct strmap *m, size_t *pos, const char **key, void **value);

struct idmap_slot {
	uint64_t a, b;
	void *value;	/* NULL marks an empty slot */
};

struct idmap {
	struct idmap_slot *slot;
	size_t n, cap;
};

void *idmap_get(const struct idmap *m, uint64_t a, uint64_t b);
/* value must not be NULL. */
void idmap_put(struct arena *ar, struct idmap *m, uint64_t a, uint64_t b, void *value);

#endif
