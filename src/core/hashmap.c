#include "core/hashmap.h"

/*
 * The maps' hash: eight bytes a step (FNV-1a takes one, and its multiply
 * on every byte made hashing the paths and symbol names of a whole
 * environment a tenth of the scan).  In memory only: nothing stores it,
 * and no output may depend on the order it gives a table.
 */
static uint64_t word_at(const uint8_t *p, size_t n)
{
	uint64_t w = 0;
	memcpy(&w, p, n);
	return w;
}

uint64_t hash_mem64(uint64_t seed, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = (seed ^ n) * 0x9E3779B97F4A7C15ull;
	for (; n >= 8; s += 8, n -= 8) {
		h = (h ^ word_at(s, 8)) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h = (h ^ word_at(s, n)) * 0x94d049bb133111ebull;
	return h ^ (h >> 32);
}

uint32_t hash_bytes(const void *p, size_t n)
{
	return (uint32_t)hash_mem64(0, p, n);
}

uint64_t hash64_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t hash_str(const char *s)
{
	return hash_bytes(s, strlen(s));
}

static void strmap_rehash(struct arena *a, struct strmap *m, size_t cap)
{
	struct strmap_slot *old = m->slot;
	size_t oldcap = m->cap;
	m->slot = arena_calloc(a, cap, sizeof *m->slot);
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key)
			continue;
		size_t j = old[i].hash & (cap - 1);
		while (m->slot[j].key)
			j = (j + 1) & (cap - 1);
		m->slot[j] = old[i];
	}
}

void *strmap_get(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	uint32_t h = hash_str(key);
	size_t j = h & (m->cap - 1);
	while (m->slot[j].key) {
		if (m->slot[j].hash == h && str_eq(m->slot[j].key, key))
			return m->slot[j].value;
		j = (j + 1) & (m->cap - 1);
	}
	return NULL;
}

/* The slot of key, or the empty slot where it goes (room made first). */
static struct strmap_slot *strmap_slot_for(struct arena *a, struct strmap *m, const char *key)
{
	if ((m->n + 1) * 2 > m->cap)
		strmap_rehash(a, m, m->cap ? m->cap * 2 : 16);
	uint32_t h = hash_str(key);
	size_t j = h & (m->cap - 1);
	while (m->slot[j].key) {
		if (m->slot[j].hash == h && str_eq(m->slot[j].key, key))
			return &m->slot[j];
		j = (j + 1) & (m->cap - 1);
	}
	m->slot[j].hash = h;
	return &m->slot[j];
}

void strmap_put(struct arena *a, struct strmap *m, const char *key, void *value)
{
	struct strmap_slot *sl = strmap_slot_for(a, m, key);
	if (!sl->key) {
		sl->key = key;
		m->n++;
	}
	sl->value = value;
}

void *strmap_put_new(struct arena *a, struct strmap *m, const char *key, void *value)
{
	struct strmap_slot *sl = strmap_slot_for(a, m, key);
	if (sl->key)
		return sl->value;
	sl->key = key;
	sl->value = value;
	m->n++;
	return NULL;
}

void strmap_reserve(struct arena *a, struct strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;
	while (cap / 2 < n)
		cap *= 2;
	if (cap > m->cap)
		strmap_rehash(a, m, cap);
}

bool strmap_next(const struct strmap *m, size_t *pos, const char **key, void **value)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (m->slot[i].key) {
			*key = m->slot[i].key;
			*value = m->slot[i].value;
			*pos = i + 1;
			return true;
		}
	}
	*pos = m->cap;
	return false;
}

static size_t id_hash(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6));
	h ^= h >> 29;
	return (size_t)h;
}

static void idmap_rehash(struct arena *ar, struct idmap *m, size_t cap)
{
	struct idmap_slot *old = m->slot;
	size_t oldcap = m->cap;
	m->slot = arena_calloc(ar, cap, sizeof *m->slot);
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].value)
			continue;
		size_t j = id_hash(old[i].a, old[i].b) & (cap - 1);
		while (m->slot[j].value)
			j = (j + 1) & (cap - 1);
		m->slot[j] = old[i];
	}
}

void *idmap_get(const struct idmap *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return NULL;
	size_t j = id_hash(a, b) & (m->cap - 1);
	while (m->slot[j].value) {
		if (m->slot[j].a == a && m->slot[j].b == b)
			return m->slot[j].value;
		j = (j + 1) & (m->cap - 1);
	}
	return NULL;
}

void idmap_put(struct arena *ar, struct idmap *m, uint64_t a, uint64_t b, void *value)
{
	if ((m->n + 1) * 2 > m->cap)
		idmap_rehash(ar, m, m->cap ? m->cap * 2 : 64);
	size_t j = id_hash(a, b) & (m->cap - 1);
	while (m->slot[j].value) {
		if (m->slot[j].a == a && m->slot[j].b == b) {
			m->slot[j].value = value;
			return;
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->slot[j].a = a;
	m->slot[j].b = b;
	m->slot[j].value = value;
	m->n++;
}
