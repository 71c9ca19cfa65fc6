/* libFuzzer target: the ELF reader and everything that walks its tables. */
#include "elf/elf.h"
#include "elf/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct elf_file ef;
	struct diag d;
	diag_clear(&d);
	if (elf_parse(&a, bytes_make(data, size, false), "fuzz", &ef, &d) == ST_OK) {
		struct elf_sym s;
		uint32_t n = ef.nsyms < 4096 ? ef.nsyms : 4096;
		for (uint32_t i = 0; i < n; i++)
			if (elf_sym(&ef, i, &s))
				(void)elf_sym_name(&ef, i);
		struct elf_vslot *vs;
		(void)elf_version_slots(&a, &ef, &vs);
		struct elf_refs refs;
		elf_collect_refs(&a, &ef, &refs);
		static const char *const names[] = { "printf", "malloc", "", "_ZN3c104cuda9SetDeviceEi" };
		for (size_t k = 0; k < 4; k++) {
			struct elf_hash_iter it;
			uint32_t idx;
			elf_hash_iter_init(&it, &ef, names[k], elf_gnu_hash(names[k]), elf_sysv_hash(names[k]));
			while (elf_hash_iter_next(&it, &idx))
				(void)elf_sym(&ef, idx, &s);
		}
		const struct elf_section *sec = elf_section_by_name(&ef, ".dynsym");
		struct bytes b;
		if (sec)
			(void)elf_section_bytes(&ef, sec, &b);
		for (uint16_t v = 0; v < 8; v++) {
			const char *file;
			(void)elf_verdef_by_index(&ef, v);
			(void)elf_vernaux_by_index(&ef, v, &file);
		}
	}
	arena_release(&a);
	return 0;
}
