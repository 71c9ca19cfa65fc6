/* Unit tests: ld.so.cache parsing and lookup (both formats, hwcaps
 * extension, numeric ordering), plus the system's own cache. */
#include "unit.h"
#include "core/fs.h"
#include "loader/ldcache.h"

struct ent {
	int32_t flags;
	const char *key, *value;
	uint64_t hwcap;
};

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A new-format cache with an extension naming one hwcaps subdirectory. */
static size_t build_new(uint8_t *buf, size_t cap, const struct ent *e, size_t n, const char *hwname)
{
	memset(buf, 0, cap);
	memcpy(buf, "glibc-ld.so.cache1.1", 20);
	put32(buf + 20, (uint32_t)n);
	size_t strings = 48 + n * 24;
	size_t so = strings;
	for (size_t i = 0; i < n; i++) {
		size_t k = so;
		so += (size_t)snprintf((char *)buf + so, cap - so, "%s", e[i].key) + 1;
		size_t v = so;
		so += (size_t)snprintf((char *)buf + so, cap - so, "%s", e[i].value) + 1;
		uint8_t *en = buf + 48 + i * 24;
		put32(en, (uint32_t)e[i].flags);
		put32(en + 4, (uint32_t)k);
		put32(en + 8, (uint32_t)v);
		put64(en + 16, e[i].hwcap);
	}
	size_t hw = so;
	so += (size_t)snprintf((char *)buf + so, cap - so, "%s", hwname) + 1;
	so = (so + 3) & ~(size_t)3;
	size_t names = so;
	put32(buf + names, (uint32_t)hw);
	so += 4;
	size_t ext = so;
	put32(buf + ext, 0xeaa42174u);
	put32(buf + ext + 4, 1);
	put32(buf + ext + 8, 1);	/* tag: glibc-hwcaps */
	put32(buf + ext + 12, 0);
	put32(buf + ext + 16, (uint32_t)names);
	put32(buf + ext + 20, 4);
	put32(buf + 24, (uint32_t)(strings - strings));	/* len_strings unused by readers */
	put32(buf + 32, (uint32_t)ext);
	return ext + 24;
}

static uint32_t prio_v2(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "x86-64-v2") == 0 ? 1 : 0;
}

static uint32_t prio_none(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return 0;
}

static void synthetic(void)
{
	/* Sorted the way ldconfig sorts: descending _dl_cache_libcmp. */
	const struct ent e[] = {
		{ 0x303, "libz.so.1", "/lib/libz.so.1", 0 },
		{ 0x303, "libfoo.so.10", "/lib/libfoo.so.10", 0 },
		{ 0x303, "libfoo.so.9", "/lib/libfoo.so.9", 0 },
		{ 0x303, "libbar.so.1", "/lib/glibc-hwcaps/x86-64-v2/libbar.so.1", (1ull << 62) | 0 },
		{ 0x3, "libbar.so.1", "/lib32/libbar.so.1", 0 },
		{ 0x303, "libbar.so.1", "/lib/libbar.so.1", 0 },
		{ 0x303, "liba.so.1", "/lib/liba.so.1", 0 },
	};
	static uint8_t buf[4096];
	size_t len = build_new(buf, sizeof buf, e, ARRAY_SIZE(e), "x86-64-v2");
	struct arena a;
	arena_init(&a);
	struct ldcache c;
	struct diag d;
	diag_clear(&d);
	CHECK(ldcache_parse(&a, bytes_make(buf, len, false), "cache", &c, &d) == ST_OK, "new format parses");
	CHECK(c.new_format && c.nentry == ARRAY_SIZE(e), "all entries read");
	CHECK(c.nhwcaps == 1 && strcmp(c.hwcaps_names[0], "x86-64-v2") == 0, "hwcaps extension read");
	struct ldcache_query q;
	memset(&q, 0, sizeof q);
	q.expected_flags = 0x303;
	q.isa_1 = 0x3;
	q.hwcaps_priority = prio_v2;
	CHECK_STR(ldcache_lookup(&c, &q, "libfoo.so.10"), "/lib/libfoo.so.10", "numeric order: .10 after .9");
	CHECK_STR(ldcache_lookup(&c, &q, "libfoo.so.9"), "/lib/libfoo.so.9", "numeric order: .9");
	CHECK_STR(ldcache_lookup(&c, &q, "libbar.so.1"), "/lib/glibc-hwcaps/x86-64-v2/libbar.so.1",
		  "an active glibc-hwcaps entry wins");
	q.hwcaps_priority = prio_none;
	CHECK_STR(ldcache_lookup(&c, &q, "libbar.so.1"), "/lib/libbar.so.1",
		  "an inactive hwcaps entry and a 32-bit entry are skipped");
	CHECK(ldcache_lookup(&c, &q, "libnope.so") == NULL, "a miss");
	CHECK(ldcache_libcmp("libfoo.so.10", "libfoo.so.9") > 0 &&
	      ldcache_libcmp("libfoo.so.1", "libfoo.so.1") == 0 &&
	      ldcache_libcmp("a1", "ab") > 0, "_dl_cache_libcmp: digits sort after letters");
	/* damaged caches: never a crash, always an error with an offset */
	int ok = 1;
	for (size_t n = 0; n < len; n += 5) {
		diag_clear(&d);
		struct ldcache c2;
		enum status st = ldcache_parse(&a, bytes_make(buf, n, false), "cut", &c2, &d);
		if (st != ST_OK && d.msg[0] == '\0')
			ok = 0;
		if (st == ST_OK)
			ldcache_lookup(&c2, &q, "libbar.so.1");
	}
	CHECK(ok, "every truncated cache parses or fails with a message");
	arena_release(&a);
}

static void old_format(void)
{
	static uint8_t buf[256];
	memset(buf, 0, sizeof buf);
	memcpy(buf, "ld.so-1.7.0", 11);
	put32(buf + 12, 1);
	put32(buf + 16, 1);	/* flags: ELF */
	put32(buf + 20, 0);	/* key at string 0 */
	put32(buf + 24, 10);
	memcpy(buf + 28, "libq.so.1\0/lib/libq.so.1", 25);
	struct arena a;
	arena_init(&a);
	struct ldcache c;
	struct diag d;
	diag_clear(&d);
	CHECK(ldcache_parse(&a, bytes_make(buf, 28 + 25, false), "old", &c, &d) == ST_OK && !c.new_format,
	      "old format parses");
	struct ldcache_query q;
	memset(&q, 0, sizeof q);
	q.expected_flags = 3;
	q.any_elf_flag = true;
	CHECK_STR(ldcache_lookup(&c, &q, "libq.so.1"), "/lib/libq.so.1", "old format lookup");
	arena_release(&a);
}

static void system_cache(void)
{
	struct fsview fs;
	fs_init(&fs, NULL);
	struct mapped_file mf;
	struct diag d;
	diag_clear(&d);
	if (fs_map(&fs, "/etc/ld.so.cache", &mf, &d) != ST_OK) {
		printf("ok - system ld.so.cache # SKIP none\n");
		return;
	}
	struct arena a;
	arena_init(&a);
	struct ldcache c;
	CHECK(ldcache_parse(&a, bytes_make(mf.data, mf.len, false), "/etc/ld.so.cache", &c, &d) == ST_OK,
	      "the system cache parses");
	struct ldcache_query q;
	memset(&q, 0, sizeof q);
	q.expected_flags = 0x303;
	const char *libc = ldcache_lookup(&c, &q, "libc.so.6");
	CHECK(libc && strstr(libc, "libc.so.6"), "the system cache knows libc.so.6");
	arena_release(&a);
	fs_unmap(&mf);
}

int main(void)
{
	synthetic();
	old_format();
	system_cache();
	return unit_done();
}
