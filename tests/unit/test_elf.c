/* Unit tests: the ELF reader on generated images of every class and byte
 * order, on damaged ones, and on a real library of this system. */
#include "unit.h"
#include "elfgen.h"
#include "elf/elf.h"
#include "elf/symtab.h"
#include "core/fs.h"

static struct eg_spec base_spec(bool is64, bool big)
{
	struct eg_spec s;
	memset(&s, 0, sizeof s);
	s.is64 = is64;
	s.big = big;
	s.machine = is64 ? 62 : 3;
	s.needed[0] = "libc.so.6";
	s.needed[1] = "libdep.so.2";
	s.soname = "libgen.so.1";
	s.runpath = "$ORIGIN/../lib";
	s.sym[0] = (struct eg_sym){ "exported_fn", true, 1, 2, 0, 2 };
	s.sym[1] = (struct eg_sym){ "needs_this", false, 1, 2, 0, 3 };
	s.sym[2] = (struct eg_sym){ "weak_one", false, 2, 1, 0, 0 };
	s.nsym = 3;
	s.verdef[0] = "GEN_1.0";
	s.verneed_file = "libdep.so.2";
	s.verneed[0] = "DEP_2.0";
	s.with_relocs = true;
	return s;
}

static void roundtrip(bool is64, bool big)
{
	char what[128];
	struct eg_spec s = base_spec(is64, big);
	struct eg_image img;
	eg_build(&s, &img);
	struct arena a;
	arena_init(&a);
	struct elf_file ef;
	struct diag d;
	diag_clear(&d);
	const char *tag = is64 ? (big ? "ELF64 big-endian" : "ELF64 little-endian")
			       : (big ? "ELF32 big-endian" : "ELF32 little-endian");
	snprintf(what, sizeof what, "%s parses", tag);
	CHECK(elf_parse(&a, bytes_make(img.buf, img.len, false), "gen", &ef, &d) == ST_OK, what);
	snprintf(what, sizeof what, "%s: class, order and machine", tag);
	CHECK(ef.is64 == is64 && ef.big_endian == big && ef.machine == s.machine, what);
	snprintf(what, sizeof what, "%s: no problem recorded", tag);
	CHECK(ef.problem == NULL, what);
	snprintf(what, sizeof what, "%s: NEEDED in order", tag);
	CHECK(ef.nneeded == 2 && strcmp(ef.needed[0], "libc.so.6") == 0 &&
	      strcmp(ef.needed[1], "libdep.so.2") == 0, what);
	snprintf(what, sizeof what, "%s: SONAME and RUNPATH", tag);
	CHECK(ef.soname && strcmp(ef.soname, "libgen.so.1") == 0 && ef.runpath &&
	      strcmp(ef.runpath, "$ORIGIN/../lib") == 0 && !ef.rpath, what);
	snprintf(what, sizeof what, "%s: symbol count from the hash table", tag);
	CHECK_INT(ef.nsyms, 4, what);
	struct elf_sym sym;
	snprintf(what, sizeof what, "%s: a defined symbol with its version", tag);
	CHECK(elf_sym(&ef, 1, &sym) && strcmp(sym.name, "exported_fn") == 0 && sym.shndx != 0 &&
	      sym.versym == 2 && sym.bind == 1 && sym.type == 2, what);
	snprintf(what, sizeof what, "%s: version definitions", tag);
	CHECK(ef.nverdef == 2 && strcmp(ef.verdef[1].name, "GEN_1.0") == 0 && ef.verdef[1].ndx == 2 &&
	      (ef.verdef[0].flags & 1), what);
	snprintf(what, sizeof what, "%s: version requirements", tag);
	CHECK(ef.nverneed == 1 && strcmp(ef.verneed[0].file, "libdep.so.2") == 0 &&
	      ef.verneed[0].naux == 1 && strcmp(ef.verneed[0].aux[0].name, "DEP_2.0") == 0, what);
	struct elf_hash_iter it;
	uint32_t idx;
	bool found = false;
	elf_hash_iter_init(&it, &ef, "needs_this", elf_gnu_hash("needs_this"), elf_sysv_hash("needs_this"));
	while (elf_hash_iter_next(&it, &idx))
		found |= idx == 2;
	snprintf(what, sizeof what, "%s: SysV hash lookup finds the symbol", tag);
	CHECK(found, what);
	struct elf_vslot *vs;
	size_t nvs = elf_version_slots(&a, &ef, &vs);
	snprintf(what, sizeof what, "%s: version slots like glibc's l_versions", tag);
	CHECK(nvs == 4 && vs[2].name && strcmp(vs[2].name, "GEN_1.0") == 0 && vs[3].file &&
	      strcmp(vs[3].file, "libdep.so.2") == 0 && vs[1].name == NULL, what);
	arena_release(&a);
	free(img.buf);
}

static void relocations(void)
{
	struct eg_spec s = base_spec(true, false);
	struct eg_image img;
	eg_build(&s, &img);
	struct arena a;
	arena_init(&a);
	struct elf_file ef;
	struct diag d;
	diag_clear(&d);
	elf_parse(&a, bytes_make(img.buf, img.len, false), "gen", &ef, &d);
	struct elf_refs refs;
	elf_collect_refs(&a, &ef, &refs);
	CHECK_INT(refs.n, 2, "one lookup per undefined symbol referenced by a relocation");
	CHECK(refs.n == 2 && refs.ref[0].symidx == 2 && !refs.ref[0].deferrable,
	      "GLOB_DAT references bind at load time");
	arena_release(&a);
	free(img.buf);
}

static void damaged(void)
{
	struct eg_spec s = base_spec(true, false);
	struct eg_image img;
	eg_build(&s, &img);
	struct arena a;
	arena_init(&a);
	struct elf_file ef;
	struct diag d;
	/* Every prefix of the image: never a crash, and the header-level
	 * errors name an offset. */
	int ok = 1;
	for (size_t n = 0; n < img.len; n += 7) {
		diag_clear(&d);
		enum status st = elf_parse(&a, bytes_make(img.buf, n, false), "cut", &ef, &d);
		if (st != ST_OK && d.offset == DIAG_NO_OFFSET)
			ok = 0;
	}
	CHECK(ok, "every truncation of an image parses or fails with an offset");
	/* A string offset outside .dynstr: the table is dropped, the problem noted. */
	uint8_t *copy = malloc(img.len);
	memcpy(copy, img.buf, img.len);
	size_t needed_val = img.dyn_off + 8;	/* first DT_NEEDED value */
	for (int i = 0; i < 8; i++)
		copy[needed_val + (size_t)i] = 0xee;
	diag_clear(&d);
	CHECK(elf_parse(&a, bytes_make(copy, img.len, false), "bad", &ef, &d) == ST_OK &&
	      ef.problem && ef.nneeded == 1, "a NEEDED string outside .dynstr is dropped and reported");
	/* A hash chain that loops forever must end. */
	memcpy(copy, img.buf, img.len);
	size_t chain = img.hash_off + 8 + 3 * 4;
	for (int i = 1; i < 4; i++) {
		copy[chain + (size_t)i * 4] = (uint8_t)i;	/* chain[i] = i: a self-loop */
	}
	diag_clear(&d);
	elf_parse(&a, bytes_make(copy, img.len, false), "loop", &ef, &d);
	struct elf_hash_iter it;
	uint32_t idx, steps = 0;
	for (int k = 0; k < 4; k++) {
		elf_hash_iter_init(&it, &ef, "x", 0, (uint32_t)k);
		while (elf_hash_iter_next(&it, &idx) && steps < 1000000)
			steps++;
	}
	CHECK(steps < 100, "a looping hash chain is cut off");
	free(copy);
	struct elf_file e2;
	diag_clear(&d);
	const uint8_t notelf[] = "not an elf file at all, long enough to be a header........................";
	CHECK(elf_parse(&a, bytes_make(notelf, sizeof notelf, false), "x", &e2, &d) == ST_MALFORMED &&
	      d.offset == 0, "bad magic is malformed at offset 0");
	arena_release(&a);
	free(img.buf);
}

static void real_library(void)
{
	struct fsview fs;
	fs_init(&fs, NULL);
	struct mapped_file mf;
	struct diag d;
	diag_clear(&d);
	if (fs_map(&fs, "/lib/x86_64-linux-gnu/libc.so.6", &mf, &d) != ST_OK) {
		printf("ok - libc.so.6 # SKIP not this layout\n");
		return;
	}
	struct arena a;
	arena_init(&a);
	struct elf_file ef;
	CHECK(elf_parse(&a, bytes_make(mf.data, mf.len, false), "libc", &ef, &d) == ST_OK, "libc parses");
	CHECK(ef.soname && strcmp(ef.soname, "libc.so.6") == 0, "libc SONAME");
	CHECK(ef.has_gnu_hash && ef.nsyms > 1000, "libc GNU hash and symbol count");
	bool has_2_2_5 = false;
	for (size_t i = 0; i < ef.nverdef; i++)
		has_2_2_5 |= strcmp(ef.verdef[i].name, "GLIBC_2.2.5") == 0;
	CHECK(has_2_2_5, "libc defines GLIBC_2.2.5");
	struct elf_hash_iter it;
	uint32_t idx;
	bool found = false;
	elf_hash_iter_init(&it, &ef, "printf", elf_gnu_hash("printf"), elf_sysv_hash("printf"));
	while (elf_hash_iter_next(&it, &idx))
		found |= strcmp(elf_sym_name(&ef, idx), "printf") == 0;
	CHECK(found, "GNU hash lookup finds printf in libc");
	/* The regression fuzz_elf found: a bloom shift of 1536 (built here
	 * from the real libc by patching the header word). */
	uint8_t *copy = malloc(mf.len);
	memcpy(copy, mf.data, mf.len);
	size_t shift_at = (size_t)(ef.gnu_bloom.data - mf.data) - 4;
	copy[shift_at] = 0x00;
	copy[shift_at + 1] = 0x06;
	copy[shift_at + 2] = 0;
	copy[shift_at + 3] = 0;
	struct elf_file e2;
	diag_clear(&d);
	elf_parse(&a, bytes_make(copy, mf.len, false), "patched", &e2, &d);
	elf_hash_iter_init(&it, &e2, "printf", elf_gnu_hash("printf"), elf_sysv_hash("printf"));
	while (elf_hash_iter_next(&it, &idx))
		;
	CHECK(e2.gnu_bloom_shift == 1536, "a hostile GNU hash shift count is defined behaviour");
	free(copy);
	CHECK_INT(elf_gnu_hash(""), 5381, "GNU hash of the empty string");
	CHECK_INT(elf_sysv_hash("printf"), 0x077905a6, "SysV hash of printf");
	arena_release(&a);
	fs_unmap(&mf);
}

/* The GNU hash, four bytes a step, against dl_new_hash's byte loop on
 * names of every length 0..63 and every byte value 1..255. */
static void gnu_hash_steps(void)
{
	char name[64];
	bool same = true;
	unsigned seed = 1;
	for (size_t len = 0; len < sizeof name && same; len++)
		for (int round = 0; round < 64 && same; round++) {
			for (size_t i = 0; i < len; i++) {
				seed = seed * 1103515245u + 12345u;
				name[i] = (char)(1 + (seed >> 16) % 255);
			}
			name[len] = '\0';
			uint32_t h = 5381;
			for (size_t i = 0; i < len; i++)
				h = h * 33 + (unsigned char)name[i];
			same = elf_gnu_hash(name) == h;
		}
	CHECK(same, "elf_gnu_hash equals dl_new_hash's h * 33 + c on names of every length");
	CHECK(elf_gnu_hash("") == 5381 && elf_gnu_hash("printf") == 0x156b2bb8u, "elf_gnu_hash of \"\" and printf");
}

int main(void)
{
	gnu_hash_steps();
	roundtrip(true, false);
	roundtrip(true, true);
	roundtrip(false, false);
	roundtrip(false, true);
	relocations();
	damaged();
	real_library();
	return unit_done();
}
