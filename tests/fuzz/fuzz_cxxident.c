/* libFuzzer target: what src/cxx reads from an ELF object: the export index
 * and its queries, the near-miss search for the object's own undefined
 * symbols, who-built-what (.comment, .rodata pybind11 id, CXX11 ABI, LibTorch
 * API), and the version lists. */
#include "cxx/abi.h"
#include "cxx/nearmiss.h"
#include "cxx/versions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct bytes raw = bytes_make(data, size, false);
	const char **strs;
	(void)cxx_comment_strings(&a, &raw, &strs);
	(void)cxx_find_pybind11_id(&a, &raw);
	struct object o;
	memset(&o, 0, sizeof o);
	o.path = "fuzz.so";
	o.dev = 1;
	o.ino = 1;
	o.map.data = data;
	o.map.len = size;
	diag_clear(&o.diag);
	if (elf_parse(&a, raw, "fuzz.so", &o.elf, &o.diag) == ST_OK) {
		o.kind = OBJ_ELF;
		o.elf_ok = true;
		struct cxx_identity id;
		cxx_identify(&a, &o, &id);
		struct cxx_index ix;
		cxx_index_init(&ix, &a);
		struct cxx_exports *x = cxx_exports_of(&ix, &o);
		(void)cxx_exports_count(&ix, &o, "3c10", 4);
		(void)cxx_exports_containing(&ix, x, "4cuda", 5, NULL, NULL);
		(void)cxx_exports_c_prefix(x, "aoti_torch_", 11, NULL, NULL);
		for (size_t i = 0; i < x->n && i < 8; i++)
			(void)cxx_export_version(&o, &x->e[i]);
		const char **defs;
		size_t nd = ver_defined(&a, &o, "GLIBCXX_3.4", &defs);
		for (size_t i = 0; i < nd && i < 4; i++) {
			(void)ver_defines(&o, defs[i]);
			(void)ver_newest_like(&o, defs[i]);
		}
		/* near misses for a few of its own undefined symbols, against itself */
		struct nm_object self = { &o, "fuzz.so", true, true };
		struct nm_object copy = { &o, "copy.so", false, false };
		int tried = 0;
		uint32_t n = o.elf.nsyms < 2048 ? o.elf.nsyms : 2048;
		for (uint32_t i = 1; i < n && tried < 3; i++) {
			struct elf_sym s;
			if (!elf_sym(&o.elf, i, &s) || s.shndx != SHN_UNDEF_ || !s.name[0])
				continue;
			tried++;
			struct nm_result r;
			nm_search(&ix, s.name, tried == 2 ? "GLIBCXX_3.4" : NULL, tried == 3 ? "fuzz.so" : NULL,
				  NULL, &self, 1, &r);
			nm_search_more(&ix, &copy, 1, &r);
			(void)nm_best(&r);
			(void)nm_cause_name(r.cause);
		}
	}
	arena_release(&a);
	return 0;
}
