/* Unit tests: a relocation pass's memory of lookups (loader/memo.h)
 * answers a reference only with what was found for that same reference:
 * same name, version name, version file, version hash, lookup class and
 * RTLD_DEEPBIND; keys that hash alike are told apart by the names; it
 * stops remembering at its bound; clearing gives everything back. */
#include "unit.h"
#include "loader/memo.h"

static struct lookup_result result(uint32_t symidx)
{
	struct lookup_result r;
	memset(&r, 0, sizeof r);
	r.symidx = symidx;
	return r;
}

static bool answer(const struct lookup_memo *m, const struct memo_key *k, uint32_t *symidx)
{
	bool found = false;
	struct lookup_result r = result(0);
	if (!lookup_memo_find(m, k, &found, &r) || !found)
		return false;
	*symidx = r.symidx;
	return true;
}

static void same_reference_only(void)
{
	struct lookup_memo m = { 0 };
	struct lookup_version v = { "GLIBC_2.2.5", 0x09691a75, false, "libc.so.6" };
	struct lookup_version v_other_name = { "GLIBC_2.3", 0x09691a75, false, "libc.so.6" };
	struct lookup_version v_other_file = { "GLIBC_2.2.5", 0x09691a75, false, "libm.so.6" };
	struct lookup_version v_other_hash = { "GLIBC_2.2.5", 0x1234, false, "libc.so.6" };
	struct lookup_version v_hidden = { "GLIBC_2.2.5", 0x09691a75, true, "libc.so.6" };
	struct memo_key k = { "malloc", 0x0d39ad3d, &v, 0, 2 };
	struct lookup_result r = result(7);
	lookup_memo_store(&m, &k, true, &r);
	uint32_t got = 0;
	CHECK(answer(&m, &k, &got) && got == 7, "the same reference gets its answer");
	char copy[] = "malloc";	/* equal names at another address */
	struct memo_key same = { copy, 0x0d39ad3d, &v, 0, 2 };
	CHECK(answer(&m, &same, &got) && got == 7, "a name is compared by its bytes");
	struct memo_key other[] = {
		{ "malloc", 0x0d39ad3d, &v_other_name, 0, 2 }, { "malloc", 0x0d39ad3d, &v_other_file, 0, 2 },
		{ "malloc", 0x0d39ad3d, &v_other_hash, 0, 2 }, { "malloc", 0x0d39ad3d, &v_hidden, 0, 2 },
		{ "malloc", 0x0d39ad3d, NULL, 0, 2 },	       { "malloc", 0x0d39ad3d, &v, 1, 2 },
		{ "malloc", 0x0d39ad3d, &v, 0, 1 },
	};
	bool none = true;
	for (size_t i = 0; i < ARRAY_SIZE(other); i++)
		none &= !answer(&m, &other[i], &got);
	CHECK(none, "another version, file, version hash, hiddenness, class or deepbind is not answered");
	/* a name whose GNU hash is given as malloc's: same key, other name */
	struct memo_key alike = { "calloc", 0x0d39ad3d, &v, 0, 2 };
	CHECK(!answer(&m, &alike, &got), "a key that hashes alike is told apart by its name");
	r = result(9);
	lookup_memo_store(&m, &alike, true, &r);
	CHECK(answer(&m, &alike, &got) && got == 9 && answer(&m, &k, &got) && got == 7,
	      "both answers kept for keys that hash alike");
	struct memo_key missing = { "nowhere", 0x1, NULL, 0, 2 };
	r = result(0);
	lookup_memo_store(&m, &missing, false, &r);
	bool found = true;
	CHECK(lookup_memo_find(&m, &missing, &found, &r) && !found, "a lookup that found nothing is remembered too");
	lookup_memo_clear(&m);
	CHECK(m.slot == NULL && m.answer == NULL && m.n == 0 && !answer(&m, &k, &got), "cleared: nothing left");
}

static void bounded_and_growing(void)
{
	struct lookup_memo m = { 0 };
	static char names[LOOKUP_MEMO_MAX + 10][12];
	struct lookup_result r = result(0);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(names[i], sizeof names[i], "s%zu", i);
		struct memo_key k = { names[i], (uint32_t)(i * 2654435761u), NULL, 0, 2 };
		r.symidx = (uint32_t)i;
		lookup_memo_store(&m, &k, true, &r);
	}
	CHECK_INT(m.n, LOOKUP_MEMO_MAX, "no more answers than the bound");
	bool all = true;
	uint32_t got = 0;
	for (size_t i = 0; i < LOOKUP_MEMO_MAX; i += 997) {
		struct memo_key k = { names[i], (uint32_t)(i * 2654435761u), NULL, 0, 2 };
		all &= answer(&m, &k, &got) && got == i;
	}
	CHECK(all, "answers kept through every growth of the table");
	struct memo_key past = { names[LOOKUP_MEMO_MAX + 5], (uint32_t)((LOOKUP_MEMO_MAX + 5) * 2654435761u), NULL,
				 0, 2 };
	CHECK(!answer(&m, &past, &got), "past the bound, nothing is remembered");
	lookup_memo_clear(&m);
}

int main(void)
{
	same_reference_only();
	bounded_and_growing();
	return unit_done();
}
