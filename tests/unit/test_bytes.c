/* Unit tests: the bounds-checked reader, the arena and the hash maps. */
#include "unit.h"
#include "core/arena.h"
#include "core/bytes.h"
#include "core/hashmap.h"

static void reads(void)
{
	const uint8_t data[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 'a', 'b', 0, 'c' };
	struct bytes le = bytes_make(data, sizeof data, false), be = bytes_make(data, sizeof data, true);
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;
	CHECK(bytes_u16(&le, 0, &v16) && v16 == 0x0201, "u16 little-endian");
	CHECK(bytes_u16(&be, 0, &v16) && v16 == 0x0102, "u16 big-endian");
	CHECK(bytes_u32(&le, 1, &v32) && v32 == 0x05040302, "u32 unaligned little-endian");
	CHECK(bytes_u64(&be, 0, &v64) && v64 == 0x0102030405060708ull, "u64 big-endian");
	CHECK(!bytes_u32(&le, 9, &v32), "u32 that would cross the end is refused");
	CHECK(!bytes_u64(&le, UINT64_MAX - 2, &v64), "an offset near UINT64_MAX does not wrap");
	CHECK(bytes_has(&le, 12, 0) && !bytes_has(&le, 13, 0), "empty range at the end only");
	const char *s;
	size_t n;
	CHECK(bytes_cstr(&le, 8, &s, &n) && n == 2 && strcmp(s, "ab") == 0, "terminated string");
	CHECK(!bytes_cstr(&le, 11, &s, &n), "string without a NUL before the end is refused");
	CHECK(!bytes_cstr(&le, 12, &s, &n), "string starting at the end is refused");
	struct bytes sub;
	CHECK(bytes_sub(&le, 8, 3, &sub) && sub.len == 3 && bytes_cstr(&sub, 0, &s, &n) && n == 2 &&
		      strcmp(s, "ab") == 0,
	      "sub-window keeps the NUL inside");
	CHECK(bytes_sub(&le, 8, 2, &sub) && !bytes_cstr(&sub, 0, &s, &n),
	      "a sub-window that cuts the NUL off refuses the string");
	CHECK(!bytes_sub(&le, 10, 3, &sub), "sub-window past the end is refused");
	CHECK(bytes_find(&le, 0, "ab", 2) == 8 && bytes_find(&le, 9, "ab", 2) == -1, "find");
	uint64_t w;
	CHECK(bytes_word(&le, 0, false, &w) && w == 0x04030201, "32-bit word");
}

static void arena_and_maps(void)
{
	struct arena a;
	arena_init(&a);
	char *p = arena_alloc(&a, 10);
	CHECK(((uintptr_t)p & 15) == 0, "arena allocations are 16-byte aligned");
	char *big = arena_alloc(&a, 1 << 20);
	CHECK(big[0] == 0 && big[(1 << 20) - 1] == 0, "an allocation larger than a block is zeroed");
	char *next = arena_alloc(&a, 10);
	CHECK(next == p + 16, "a block of its own for a large request: small ones go on in the current block");
	CHECK_STR(arena_printf(&a, "%s-%d", "x", 7), "x-7", "arena_printf");
	struct strmap m = { 0 };
	char keys[200][16];
	for (int i = 0; i < 200; i++) {
		snprintf(keys[i], sizeof keys[i], "k%d", i);
		strmap_put(&a, &m, keys[i], (void *)(intptr_t)(i + 1));
	}
	int ok = 1;
	for (int i = 0; i < 200; i++)
		ok &= strmap_get(&m, keys[i]) == (void *)(intptr_t)(i + 1);
	CHECK(ok && m.n == 200, "strmap keeps 200 keys through growth");
	CHECK(strmap_get(&m, "absent") == NULL, "strmap miss");
	char same[] = "k7";	/* another copy of a key that is there */
	CHECK(strmap_put_new(&a, &m, same, (void *)-1) == (void *)8 && strmap_get(&m, "k7") == (void *)8 && m.n == 200,
	      "strmap_put_new on a key that is there: returns its value, changes nothing");
	CHECK(strmap_put_new(&a, &m, "new", (void *)9) == NULL && strmap_get(&m, "new") == (void *)9 && m.n == 201,
	      "strmap_put_new on a new key: inserts it");
	strmap_put(&a, &m, same, (void *)10);
	CHECK(strmap_get(&m, "k7") == (void *)10 && m.n == 201, "strmap_put replaces the value of a key that is there");
	struct idmap im = { 0 };
	for (uint64_t i = 0; i < 500; i++)
		idmap_put(&a, &im, i, i * 7, (void *)(uintptr_t)(i + 1));
	CHECK(idmap_get(&im, 499, 499 * 7) == (void *)500 && idmap_get(&im, 1, 1) == NULL, "idmap");
	struct ptrvec v = { 0 };
	for (int i = 0; i < 100; i++)
		ptrvec_push(&a, &v, keys[i]);
	CHECK(v.n == 100 && v.item[99] == keys[99] && ptrvec_contains(&v, keys[5]), "ptrvec");
	arena_release(&a);
}

int main(void)
{
	reads();
	arena_and_maps();
	return unit_done();
}
