#include "loader/ldcache.h"

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define EXT_MAGIC 0xeaa42174u	/* (uint32_t) -358342284 */
#define HWCAP_EXTENSION (1ull << 62)
#define ISA_LEVEL_MASK 0x3ffu
#define OLD_HEADER 16		/* magic[11] padded + nlibs */
#define OLD_ENTRY 12
#define NEW_HEADER 48
#define NEW_ENTRY 24

int ldcache_libcmp(const char *p1, const char *p2)
{
	while (*p1 != '\0') {
		if (*p1 >= '0' && *p1 <= '9') {
			if (*p2 >= '0' && *p2 <= '9') {
				/* Digit runs compare by value; glibc uses int and
				 * lets absurd runs overflow, we saturate instead. */
				uint64_t v1 = (uint64_t)(*p1++ - '0'), v2 = (uint64_t)(*p2++ - '0');
				while (*p1 >= '0' && *p1 <= '9') {
					v1 = v1 > 1000000000ull ? v1 : v1 * 10 + (uint64_t)(*p1 - '0');
					p1++;
				}
				while (*p2 >= '0' && *p2 <= '9') {
					v2 = v2 > 1000000000ull ? v2 : v2 * 10 + (uint64_t)(*p2 - '0');
					p2++;
				}
				if (v1 != v2)
					return v1 < v2 ? -1 : 1;
			} else {
				return 1;
			}
		} else if (*p2 >= '0' && *p2 <= '9') {
			return -1;
		} else if (*p1 != *p2) {
			return (unsigned char)*p1 - (unsigned char)*p2;
		} else {
			++p1;
			++p2;
		}
	}
	return (unsigned char)*p1 - (unsigned char)*p2;
}

static const char *str_at(const struct bytes *strings, uint32_t off)
{
	const char *s;
	return bytes_cstr(strings, off, &s, NULL) ? s : NULL;
}

/* The extension directory of the new format: generator and hwcaps names. */
static void read_extensions(struct arena *a, struct ldcache *c, uint64_t ext_off)
{
	const struct bytes *b = &c->raw;
	uint32_t magic, count;
	if (ext_off == 0 || ext_off % 4 != 0 || !bytes_u32(b, ext_off, &magic) ||
	    magic != EXT_MAGIC || !bytes_u32(b, ext_off + 4, &count) ||
	    !bytes_has(b, ext_off + 8, (uint64_t)count * 16))
		return;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t tag, flags, off, size;
		uint64_t e = ext_off + 8 + (uint64_t)i * 16;
		bytes_u32(b, e, &tag);
		bytes_u32(b, e + 4, &flags);
		bytes_u32(b, e + 8, &off);
		bytes_u32(b, e + 12, &size);
		if (!bytes_has(b, off, size))
			continue;
		if (tag == 0) {
			struct bytes gen;
			bytes_sub(b, off, size, &gen);
			c->generator = arena_strndup(a, (const char *)gen.data,
						     strnlen((const char *)gen.data, gen.len));
		} else if (tag == 1 && size % 4 == 0 && off % 4 == 0) {
			c->nhwcaps = size / 4;
			c->hwcaps_names = arena_calloc(a, c->nhwcaps ? c->nhwcaps : 1, sizeof(char *));
			for (size_t k = 0; k < c->nhwcaps; k++) {
				uint32_t so;
				bytes_u32(b, off + 4 * k, &so);
				const char *s = str_at(b, so);
				c->hwcaps_names[k] = s ? s : "";
			}
		}
	}
}

enum status ldcache_parse(struct arena *a, struct bytes raw, const char *path, struct ldcache *c,
			  struct diag *d)
{
	memset(c, 0, sizeof *c);
	c->raw = raw;
	c->raw.big_endian = false;
	const struct bytes *b = &c->raw;
	uint64_t new_off = UINT64_MAX;
	uint32_t nlibs;
	if (b->len > NEW_HEADER && memcmp(b->data, NEW_MAGIC, strlen(NEW_MAGIC)) == 0) {
		new_off = 0;
	} else if (b->len > OLD_HEADER && memcmp(b->data, OLD_MAGIC, strlen(OLD_MAGIC)) == 0) {
		bytes_u32(b, 12, &nlibs);
		if ((b->len - OLD_HEADER) / OLD_ENTRY < nlibs)
			return diag_set(d, ST_MALFORMED, path, 12,
					"ld.so.cache: %u entries do not fit the file", nlibs);
		uint64_t off = OLD_HEADER + (uint64_t)nlibs * OLD_ENTRY;
		off = (off + 7) & ~(uint64_t)7;
		const uint8_t *magic = bytes_at(b, off, NEW_HEADER);
		if (magic && memcmp(magic, NEW_MAGIC, strlen(NEW_MAGIC)) == 0) {
			new_off = off;
		} else {
			/* Old format only: strings are relative to the end of the table. */
			struct bytes strings;
			uint64_t soff = OLD_HEADER + (uint64_t)nlibs * OLD_ENTRY;
			bytes_sub(b, soff, b->len - soff, &strings);
			c->entry = arena_calloc(a, nlibs ? nlibs : 1, sizeof *c->entry);
			for (uint32_t i = 0; i < nlibs; i++) {
				uint64_t e = OLD_HEADER + (uint64_t)i * OLD_ENTRY;
				uint32_t flags, key, value;
				bytes_u32(b, e, &flags);
				bytes_u32(b, e + 4, &key);
				bytes_u32(b, e + 8, &value);
				const char *k = str_at(&strings, key), *v = str_at(&strings, value);
				if (!k || !v)
					return diag_set(d, ST_MALFORMED, path, e,
							"ld.so.cache: entry %u points outside the strings", i);
				c->entry[c->nentry++] = (struct ldcache_entry){ (int32_t)flags, k, v, 0 };
			}
			return ST_OK;
		}
	} else {
		return diag_set(d, ST_MALFORMED, path, 0, "ld.so.cache: unknown format (bad magic)");
	}

	c->new_format = true;
	uint8_t flags;
	uint32_t ext_off;
	bytes_u32(b, new_off + 20, &nlibs);
	bytes_u8(b, new_off + 28, &flags);
	bytes_u32(b, new_off + 32, &ext_off);
	if ((flags & 3) == 3)
		return diag_set(d, ST_UNSUPPORTED, path, new_off + 28,
				"ld.so.cache: big-endian cache not supported");
	if ((b->len - new_off - NEW_HEADER) / NEW_ENTRY < nlibs)
		return diag_set(d, ST_MALFORMED, path, new_off + 20,
				"ld.so.cache: %u entries do not fit the file", nlibs);
	/* New-format string offsets are from the start of the new header. */
	struct bytes strings;
	bytes_sub(b, new_off, b->len - new_off, &strings);
	c->entry = arena_calloc(a, nlibs ? nlibs : 1, sizeof *c->entry);
	for (uint32_t i = 0; i < nlibs; i++) {
		uint64_t e = new_off + NEW_HEADER + (uint64_t)i * NEW_ENTRY;
		uint32_t fl, key, value;
		uint64_t hwcap;
		bytes_u32(b, e, &fl);
		bytes_u32(b, e + 4, &key);
		bytes_u32(b, e + 8, &value);
		bytes_u64(b, e + 16, &hwcap);
		const char *k = str_at(&strings, key), *v = str_at(&strings, value);
		if (!k || !v)
			return diag_set(d, ST_MALFORMED, path, e,
					"ld.so.cache: entry %u points outside the strings", i);
		c->entry[c->nentry++] = (struct ldcache_entry){ (int32_t)fl, k, v, hwcap };
	}
	/* Extension offsets, like glibc's, count from the start of the file. */
	read_extensions(a, c, ext_off);
	return ST_OK;
}

static bool is_named_hwcap(uint64_t hwcap)
{
	return ((hwcap >> 32) & ~(uint64_t)ISA_LEVEL_MASK) == (HWCAP_EXTENSION >> 32);
}

static bool flags_ok(const struct ldcache_query *q, int32_t flags)
{
	return flags == q->expected_flags || (q->any_elf_flag && flags == 1);
}

const char *ldcache_lookup(const struct ldcache *c, const struct ldcache_query *q, const char *name)
{
	if (!c || c->nentry == 0)
		return NULL;
	long left = 0, right = (long)c->nentry - 1;
	const char *best = NULL;
	uint32_t best_priority = 0;
	while (left <= right) {
		long middle = (left + right) / 2;
		int cmp = ldcache_libcmp(name, c->entry[middle].key);
		if (cmp == 0) {
			left = middle;
			while (middle > 0 && ldcache_libcmp(name, c->entry[middle - 1].key) == 0)
				--middle;
			do {
				const struct ldcache_entry *e = &c->entry[middle];
				if (middle > left && ldcache_libcmp(name, e->key) != 0)
					break;
				if (!flags_ok(q, e->flags))
					continue;
				bool named = false;
				if (c->new_format) {
					named = is_named_hwcap(e->hwcap);
					if (named) {
						uint32_t level = (uint32_t)((e->hwcap >> 32) & ISA_LEVEL_MASK);
						uint32_t bit = level < 32 ? 1u << level : 0;
						if (!bit || (bit & q->isa_1) != bit)
							continue;
					}
					if (!named && best)
						break;
					if (!named && !q->legacy_hwcaps && e->hwcap != 0)
						continue;	/* glibc >= 2.37 skips legacy entries */
					if (!named && q->legacy_hwcaps) {
						if (e->hwcap & q->hwcap_exclude)
							continue;
						uint64_t plat = e->hwcap & q->platform_mask;
						if (plat && plat != q->platform_bit)
							continue;
					}
					if (named) {
						uint32_t idx = (uint32_t)e->hwcap;
						const char *sub = idx < c->nhwcaps ? c->hwcaps_names[idx] : NULL;
						uint32_t prio = sub && q->hwcaps_priority
								    ? q->hwcaps_priority(q->ctx, sub) : 0;
						if (prio == 0)
							continue;
						if (best && prio >= best_priority)
							continue;
						best_priority = prio;
					}
				}
				best = e->value;
				if (!named && e->flags == q->expected_flags)
					break;
			} while (++middle <= right);
			break;
		}
		if (cmp < 0)
			left = middle + 1;
		else
			right = middle - 1;
	}
	return best;
}
