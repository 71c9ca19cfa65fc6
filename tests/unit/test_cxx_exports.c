/* Unit tests: the exports index (cxx/exports.h) shared by a later check of
 * the same files.  A substring query finds an export by its identifier;
 * the per-object count of such queries (what nearmiss.h's
 * NM_MAX_SUBSTRING bounds) is the round's own: a new round starts it at 0,
 * so a second check's explanations do not depend on what the first asked,
 * while the exports themselves are gathered once. */
#include "unit.h"
#include "elfgen.h"
#include "cxx/exports.h"

static bool count_one(void *ctx, const struct cxx_export *e)
{
	(void)e;
	++*(size_t *)ctx;
	return true;
}

static void rounds(void)
{
	struct eg_spec s;
	memset(&s, 0, sizeof s);
	s.is64 = true;
	s.machine = 62;	/* EM_X86_64 */
	s.soname = "libgen.so.1";
	s.sym[s.nsym++] = (struct eg_sym){ "_ZN3c104cuda9SetDeviceEi", true, STB_GLOBAL_, STT_FUNC_, STV_DEFAULT_, 0 };
	s.sym[s.nsym++] = (struct eg_sym){ "_ZN3c1010GetDeviceEv", true, STB_GLOBAL_, STT_FUNC_, STV_DEFAULT_, 0 };
	struct eg_image img;
	eg_build(&s, &img);
	struct arena a;
	arena_init(&a);
	struct diag d;
	diag_clear(&d);
	struct object o;
	memset(&o, 0, sizeof o);
	o.kind = OBJ_ELF;
	SETUP(elf_parse(&a, bytes_make(img.buf, img.len, false), "gen", &o.elf, &d) == ST_OK, "the image parses");
	o.elf_ok = true;

	struct cxx_index ix;
	cxx_index_init(&ix, &a);
	struct cxx_exports *x = cxx_exports_of(&ix, &o);
	CHECK_INT(x->n, 2, "both exports are indexed");
	size_t seen = 0;
	CHECK_INT(cxx_exports_containing(&ix, x, "9SetDevice", 10, count_one, &seen), 1,
		  "a substring query finds the export that spells the identifier");
	CHECK_INT(seen, 1, "and reports it once");
	CHECK_INT(cxx_exports_containing(&ix, x, "10GetDevice", 11, NULL, NULL), 1,
		  "another identifier, another export");
	CHECK_INT(cxx_exports_substring_queries(&ix, x), 2, "two queries counted in the first round");

	cxx_index_new_round(&ix);
	CHECK(cxx_exports_of(&ix, &o) == x, "a new round keeps the exports gathered");
	CHECK_INT(cxx_exports_substring_queries(&ix, x), 0, "a new round starts the count at 0");
	seen = 0;
	cxx_exports_containing(&ix, x, "9SetDevice", 10, count_one, &seen);
	CHECK_INT(seen, 1, "the shared exports answer the same in the new round");
	CHECK_INT(cxx_exports_substring_queries(&ix, x), 1, "the new round counts its own query");
	arena_release(&a);
	free(img.buf);
}

int main(void)
{
	rounds();
	return unit_done();
}
