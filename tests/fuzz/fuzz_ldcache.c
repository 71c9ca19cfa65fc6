/* libFuzzer target: the ld.so.cache parser and its lookup. */
#include "loader/ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t prio(void *ctx, const char *name)
{
	(void)ctx;
	return name[0] ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct ldcache c;
	struct diag d;
	diag_clear(&d);
	if (ldcache_parse(&a, bytes_make(data, size, false), "fuzz", &c, &d) == ST_OK) {
		struct ldcache_query q;
		memset(&q, 0, sizeof q);
		q.expected_flags = 0x303;
		q.legacy_hwcaps = true;
		q.isa_1 = 0xf;
		q.hwcaps_priority = prio;
		static const char *const names[] = { "libc.so.6", "libz.so.1", "a", "libfoo.so.10" };
		for (size_t k = 0; k < 4; k++)
			(void)ldcache_lookup(&c, &q, names[k]);
		for (size_t i = 0; i < c.nentry && i < 64; i++)
			(void)ldcache_lookup(&c, &q, c.entry[i].key);
	}
	arena_release(&a);
	return 0;
}
