/*
 * initcheck.c: the DT_INIT_ARRAY entries call_init calls and the relative
 * relocations elf_machine_rela_relative asserts on, each in one pass over
 * the tables (initcheck.h).
 */
#include "elf/initcheck.h"

#define INIT_ENTRIES_CHECKED 4096u

/* The relocation that writes a DT_INIT_ARRAY slot. */
struct slot_reloc {
	bool set;
	uint32_t type, sym;
	uint64_t addend;
};

/* For each of the n slots at array, the first DT_RELA entry whose r_offset
 * is the slot, else the first DT_JMPREL one (the order the question was
 * always answered in): one pass over each table. */
static void index_slot_relocs(const struct elf_file *ef, uint64_t array, uint64_t n, struct slot_reloc *out)
{
	const struct elf_reltab *tabs[2] = { &ef->rela, &ef->jmprel };
	uint64_t span = n * 8;
	for (int t = 0; t < 2; t++) {
		const struct elf_reltab *tab = tabs[t];
		if (!tab->rela)
			continue;
		uint64_t count = tab->data.len / 24;
		for (uint64_t i = 0; i < count; i++) {
			const uint8_t *e = bytes_at(&tab->data, i * 24, 24);
			if (!e)
				break;
			/* wrapping arithmetic: r_offset == array + 8k (mod 2^64) */
			uint64_t rel = elf_load_u64(e, ef->big_endian) - array;
			if (rel >= span || rel % 8)
				continue;
			struct slot_reloc *s = &out[rel / 8];
			if (s->set)
				continue;
			uint64_t info = elf_load_u64(e + 8, ef->big_endian);
			s->set = true;
			s->type = (uint32_t)info;
			s->sym = (uint32_t)(info >> 32);
			s->addend = elf_load_u64(e + 16, ef->big_endian);
		}
	}
}

static void mark_slot(uint64_t vaddr, uint64_t array, uint64_t n, uint8_t *covered)
{
	uint64_t rel = vaddr - array;
	if (rel < n * 8 && rel % 8 == 0)
		covered[rel / 8] = 1;
}

/* Which of the n slots at array DT_RELR (glibc >= 2.36, elf_dynamic_do_Relr)
 * relocates: an even entry is an address (then the next word), an odd one
 * a bitmap of the 63 words after the current one.  One pass; a table that
 * cannot be read relocates nothing from where it cannot. */
static void index_relr(const struct elf_file *ef, uint64_t relr, uint64_t relrsz, uint64_t array, uint64_t n,
		       uint8_t *covered)
{
	uint64_t off, base = 0;
	if (!relr || !relrsz || relrsz > (UINT64_C(1) << 32) || !elf_vaddr_to_offset(ef, relr, relrsz, &off))
		return;
	for (uint64_t k = 0; k + 8 <= relrsz; k += 8) {
		uint64_t e;
		if (!bytes_u64(&ef->raw, off + k, &e))
			return;
		if ((e & 1) == 0) {
			mark_slot(e, array, n, covered);
			base = e + 8;
			continue;
		}
		for (unsigned i = 0; (e >>= 1) != 0; i++)
			if (e & 1)
				mark_slot(base + i * 8, array, n, covered);
		base += 63 * 8;
	}
}

/* call_init calls each entry as it is after relocation (x86-64): a
 * R_X86_64_RELATIVE one at its addend, which must be code; an entry no
 * relocation writes is called at its raw value, which in an object loaded
 * at a base other than 0 is no address of it (a guess: SIGSEGV). */
void elf_check_init_entries(struct arena *a, struct elf_file *ef, uint64_t array, uint64_t n, uint64_t relr,
			    uint64_t relrsz)
{
	if (ef->machine != EM_X86_64_ || !ef->is64)
		return;
	n = MIN(n, INIT_ENTRIES_CHECKED);
	if (!n)
		return;
	struct slot_reloc *rel = arena_calloc(a, n, sizeof *rel);
	uint8_t *relr_covered = NULL;
	index_slot_relocs(ef, array, n, rel);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t slot = array + k * 8, target = rel[k].addend, raw = 0;
		bool relocated = rel[k].set;
		if (relocated && rel[k].type != 8 /* R_X86_64_RELATIVE */) {
			/* a symbol's address: code, unless the symbol is data or a
			 * weak undefined one (0) */
			struct elf_sym s;
			if (!elf_sym_head(ef, rel[k].sym, &s) ||
			    !(s.type == STT_OBJECT_ || s.type == STT_TLS_ || (s.shndx == SHN_UNDEF_ && s.bind == STB_WEAK_)))
				continue;
			ef->init_fault = "DT_INIT_ARRAY entry";
			ef->init_fault_index = k;
			ef->init_fault_at = s.value;
			ef->init_fault_unrelocated = false;
			return;
		}
		uint64_t off;
		if (!relocated && elf_vaddr_to_offset(ef, slot, 8, &off))
			bytes_u64(&ef->raw, off, &raw);
		if (!relocated && !relr_covered) {
			relr_covered = arena_calloc(a, n, 1);
			index_relr(ef, relr, relrsz, array, n, relr_covered);
		}
		if (!relocated && relr_covered[k]) {
			relocated = true;	/* l_addr is added to the word in place */
			target = raw;
		}
		if (relocated ? elf_image_executable(ef, target) : ef->type == ET_EXEC_ && elf_image_executable(ef, raw))
			continue;
		ef->init_fault = "DT_INIT_ARRAY entry";
		ef->init_fault_index = k;
		ef->init_fault_at = relocated ? target : raw;
		ef->init_fault_unrelocated = !relocated;
		return;
	}
}

void elf_check_relative(struct elf_file *ef)
{
	if (ef->machine != EM_X86_64_ || !ef->is64 || !ef->relacount || !ef->rela.data.len)
		return;
	uint64_t n = MIN(ef->relacount, ef->rela.data.len / 24);
	for (uint64_t k = 0; k < n; k++) {
		const uint8_t *e = bytes_at(&ef->rela.data, k * 24 + 8, 8);
		if (!e)
			return;
		if ((elf_load_u64(e, ef->big_endian) & 0xffffffffu) != 8 /* R_X86_64_RELATIVE */) {
			ef->relative_assert = true;
			return;
		}
	}
}
