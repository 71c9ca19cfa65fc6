/* Unit tests: the near-miss search (cxx/nearmiss.h) asked again for the
 * same symbol.  What the search finds in one object under one symbol's
 * name is kept in the index (exports.h, same_name_hits) and replayed for
 * the next process that misses the symbol: each answer must be the one a
 * fresh index gives, whichever object asks and in whatever order the
 * objects come, and the object that needs the symbol never provides it. */
#include "unit.h"
#include "elfgen.h"
#include "cxx/nearmiss.h"

#define WANTED "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"
#define WANTED2 "_ZN3c104cuda9SetDeviceEa"	/* SetDevice(signed char) */

static void build(struct arena *a, const struct eg_spec *s, struct object *o, struct eg_image *img)
{
	struct diag d;
	diag_clear(&d);
	eg_build(s, img);
	memset(o, 0, sizeof *o);
	o->kind = OBJ_ELF;
	SETUP(elf_parse(a, bytes_make(img->buf, img->len, false), s->soname, &o->elf, &d) == ST_OK,
	      "the image parses");
	o->elf_ok = true;
}

static void add(struct eg_spec *s, const char *name, bool defined)
{
	s->sym[s->nsym++] = (struct eg_sym){ name, defined, STB_GLOBAL_, STT_FUNC_, STV_DEFAULT_, 0 };
}

/* The result as text: cause, expected provider, each near miss and where
 * (its index in objs, of 3; -1 for another array's). */
static const char *describe(struct arena *a, const struct nm_result *r, const struct nm_object *objs)
{
	const char *t = arena_printf(a, "%s expected=%s truncated=%d", nm_cause_name(r->cause),
				     r->expected ? r->expected->path : "-", r->truncated);
	for (size_t i = 0; i < r->nnear; i++) {
		/* which of objs it is (by address: where may be another array's) */
		uintptr_t at = (uintptr_t)r->near[i].where, lo = (uintptr_t)objs;
		long idx = at >= lo && at < lo + 3 * sizeof *objs ? (long)((at - lo) / sizeof *objs) : -1;
		t = arena_printf(a, "%s | %s in %s (%ld) %zu lines", t, r->near[i].symbol, r->near[i].where->path,
				 idx, r->near[i].diff.nline);
	}
	return t;
}

static void repeated(void)
{
	struct arena a;
	arena_init(&a);
	struct eg_spec lib, other, user;
	memset(&lib, 0, sizeof lib);
	lib.is64 = true;
	lib.machine = 62;	/* EM_X86_64 */
	lib.soname = "libc10_cuda.so";
	other = user = lib;
	/* torch 2.9's signature (unsigned int line), and two unrelated names */
	add(&lib, "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb", true);
	add(&lib, "_ZN3c104cuda9SetDeviceEi", true);
	add(&lib, "_ZN3c104cuda14device_synchronizeEv", true);
	other.soname = "libother.so";
	add(&other, "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ilb", true);
	user.soname = "libuser.so";
	add(&user, WANTED, false);
	add(&user, WANTED2, false);
	add(&user, "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_Kib", true);
	struct object olib, oother, ouser;
	struct eg_image ilib, iother, iuser;
	build(&a, &lib, &olib, &ilib);
	build(&a, &other, &oother, &iother);
	build(&a, &user, &ouser, &iuser);
	struct nm_object objs[3] = {
		{ &olib, "libc10_cuda.so", true, true },
		{ &oother, "libother.so", true, true },
		{ &ouser, "libuser.so", true, true },
	};
	struct nm_object reversed[3] = { objs[2], objs[1], objs[0] };

	/* every question to a fresh index first: the answers to match */
	const char *want[4];
	const struct object *requester[4] = { &ouser, &oother, &olib, &ouser };
	const struct nm_object *lists[4] = { objs, objs, objs, reversed };
	for (int i = 0; i < 4; i++) {
		struct cxx_index fresh;
		cxx_index_init(&fresh, &a);
		struct nm_result r;
		nm_search(&fresh, WANTED, NULL, NULL, requester[i], lists[i], 3, &r);
		want[i] = describe(&a, &r, lists[i]);
	}
	CHECK(strstr(want[0], "signature-changed") && strstr(want[0], "S2_jb in libc10_cuda.so (0)") &&
		      !strstr(want[0], "libuser.so"),
	      "the unsigned int overload is the near miss, and the requester offers none");
	CHECK(strstr(want[2], "libuser.so") && !strstr(want[2], "S2_jb"),
	      "another requester: the library it is skips its own exports");

	/* then the same questions to one index, twice over */
	struct cxx_index shared;
	cxx_index_init(&shared, &a);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 4; i++) {
			struct nm_result r;
			nm_search(&shared, WANTED, NULL, NULL, requester[i], lists[i], 3, &r);
			CHECK_STR(describe(&a, &r, lists[i]), want[i],
				  round ? "a shared index answers as a fresh one, asked again"
					: "a shared index answers as a fresh one");
		}
	/* another symbol of the same objects: its own answer, not the first's */
	struct cxx_index fresh;
	cxx_index_init(&fresh, &a);
	struct nm_result r;
	nm_search(&fresh, WANTED2, NULL, NULL, &ouser, objs, 3, &r);
	const char *want2 = describe(&a, &r, objs);
	CHECK(strstr(want2, "9SetDeviceEi in libc10_cuda.so"), "SetDevice(int) is the other symbol's near miss");
	nm_search(&shared, WANTED2, NULL, NULL, &ouser, objs, 3, &r);
	CHECK_STR(describe(&a, &r, objs), want2, "another symbol asked of a shared index");
	/* another copy of the library on disk, with the symbol: what
	 * nm_search_more adds, the same from a fresh and from a shared index */
	struct eg_spec copy = lib;
	copy.nsym = 0;
	copy.soname = "libc10_cuda.so";
	add(&copy, WANTED, true);
	struct object ocopy;
	struct eg_image icopy;
	build(&a, &copy, &ocopy, &icopy);
	struct nm_object copies[1] = { { &ocopy, "other/libc10_cuda.so", false, false } };
	struct cxx_index fresh2;
	cxx_index_init(&fresh2, &a);
	nm_search(&fresh2, WANTED, NULL, NULL, &ouser, objs, 3, &r);
	nm_search_more(&fresh2, copies, 1, &r);
	const char *more = describe(&a, &r, objs);
	CHECK(strstr(more, "S2_ib in other/libc10_cuda.so"), "nm_search_more finds the other copy's symbol");
	nm_search(&shared, WANTED, NULL, NULL, &ouser, objs, 3, &r);
	nm_search_more(&shared, copies, 1, &r);
	CHECK_STR(describe(&a, &r, objs), more, "and so does a shared index");
	arena_release(&a);
	free(icopy.buf);
	free(ilib.buf);
	free(iother.buf);
	free(iuser.buf);
}

int main(void)
{
	repeated();
	return unit_done();
}
