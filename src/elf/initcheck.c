/*
 * initcheck.c: the DT_INIT_ARRAY entries call_init calls and the relative
 * relocations elf_machine_rela_relative asserts on, each in one pass over
 * the tables (initcheck.h).
 */
#include "elf/initcheck.h"

#define INIT_ENTRIES_CHECKED 4096u
#define CTOR_FUNCS_SCANNED 64u		/* constructors whose code is read for calls */
#define CTOR_BYTES 512u			/* ... at most this much of each */
#define CTOR_CALLS_KEPT 256u
#define CTOR_CALL_DEPTH 3		/* direct calls followed this many levels down */
#define CTOR_SCANS 256u			/* functions read per object, in all (a bound on the fan-out) */

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
		if (relocated ? elf_image_executable(ef, target) : ef->type == ET_EXEC_ && elf_image_executable(ef, raw)) {
			if (ef->nctor_funcs < CTOR_FUNCS_SCANNED) {
				if (!ef->ctor_funcs)
					ef->ctor_funcs = arena_calloc(a, CTOR_FUNCS_SCANNED, sizeof *ef->ctor_funcs);
				ef->ctor_funcs[ef->nctor_funcs++] = relocated ? target : raw;
			}
			continue;
		}
		ef->init_fault = "DT_INIT_ARRAY entry";
		ef->init_fault_index = k;
		ef->init_fault_at = relocated ? target : raw;
		ef->init_fault_unrelocated = !relocated;
		return;
	}
}

/* The GOT slot a PLT stub at vaddr jumps through: jmp *d(%rip), after an
 * endbr64 and with a bnd prefix in .plt.sec (IBT); 0 when it is none. */
static uint64_t plt_stub_got(const struct elf_file *ef, uint64_t vaddr)
{
	uint64_t off;
	const uint8_t *b = elf_vaddr_to_offset(ef, vaddr, 16, &off) ? bytes_at(&ef->raw, off, 16) : NULL;
	if (!b)
		return 0;
	size_t at = 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		at = 4;					/* endbr64 */
	if (b[at] == 0xf2)
		at++;					/* bnd */
	if (b[at] != 0xff || b[at + 1] != 0x25)
		return 0;
	return vaddr + at + 6 + (uint64_t)(int64_t)(int32_t)elf_load_u32(b + at + 2, false);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The GOT slots one function's straight-line code calls through (into
 * got[]), and those of the functions it calls directly, depth levels down
 * (a C++ constructor's _GLOBAL__sub_I_ calls the initialiser that calls
 * the function).  Only code every call runs: the scan stops at a
 * conditional jump, as it does at the function's end.  *scans: how many
 * more functions may be read (crafted code calling many functions at each
 * level would otherwise cost its fan-out to the power of the depth). */
static size_t calls_of(const struct elf_file *ef, uint64_t fn, uint64_t *got, size_t n, size_t cap, int depth,
		       unsigned *scans)
{
	if (!*scans)
		return n;
	--*scans;
	uint64_t off, len = CTOR_BYTES;
	while (len >= 16 && !elf_vaddr_to_offset(ef, fn, len, &off))
		len /= 2;
	const uint8_t *c = len >= 16 ? bytes_at(&ef->raw, off, len) : NULL;
	for (uint64_t i = 0; c && i + 6 <= len && n < cap; i++) {
		/* the end of the function's straight-line code, most likely: ret,
		 * int3 padding, the endbr64 of the next function (an E8 past
		 * them would be another function's call) */
		if (c[i] == 0xc3 || c[i] == 0xcc ||
		    (i > 0 && c[i] == 0xf3 && c[i + 1] == 0x0f && c[i + 2] == 0x1e && c[i + 3] == 0xfa))
			break;
		/* a conditional jump (jcc rel8, jcc rel32, jrcxz, loop): what follows may not run */
		if ((c[i] >= 0x70 && c[i] <= 0x7f) || (c[i] == 0x0f && c[i + 1] >= 0x80 && c[i + 1] <= 0x8f) ||
		    (c[i] >= 0xe0 && c[i] <= 0xe3))
			break;
		uint64_t slot = 0;
		if (c[i] == 0xe8 || c[i] == 0xe9) {	/* call / jmp rel32: a PLT stub, or a function of its own */
			uint64_t to = fn + i + 5 + (uint64_t)(int64_t)(int32_t)elf_load_u32(c + i + 1, false);
			slot = plt_stub_got(ef, to);
			if (!slot && depth > 0 && elf_image_executable(ef, to))
				n = calls_of(ef, to, got, n, cap, depth - 1, scans);
		} else if (c[i] == 0xff && c[i + 1] == 0x15) {	/* call *d(%rip): -fno-plt */
			slot = fn + i + 6 + (uint64_t)(int64_t)(int32_t)elf_load_u32(c + i + 2, false);
		}
		if (slot)
			got[n++] = slot;
		if (c[i] == 0xe9 || (c[i] == 0xff && c[i + 1] == 0x25))
			break;				/* jmp: a tail call, the straight-line code ends */
	}
	return n;
}

void elf_find_ctor_plt_calls(struct arena *a, struct elf_file *ef, bool has_init, uint64_t init)
{
	if (ef->machine != EM_X86_64_ || !ef->is64 || !ef->jmprel.rela || !ef->jmprel.data.len)
		return;
	uint64_t *got = arena_calloc(a, CTOR_CALLS_KEPT, sizeof *got);
	size_t n = 0;
	unsigned scans = CTOR_SCANS;
	if (has_init && elf_image_executable(ef, init))
		n = calls_of(ef, init, got, n, CTOR_CALLS_KEPT, CTOR_CALL_DEPTH, &scans);
	for (size_t k = 0; k < ef->nctor_funcs; k++)
		n = calls_of(ef, ef->ctor_funcs[k], got, n, CTOR_CALLS_KEPT, CTOR_CALL_DEPTH, &scans);
	if (!n)
		return;
	qsort(got, n, sizeof *got, cmp_u64);
	uint32_t *syms = arena_calloc(a, n, sizeof *syms);
	size_t ns = 0;
	uint64_t count = ef->jmprel.data.len / 24;
	for (uint64_t i = 0; i < count && ns < n; i++) {
		const uint8_t *e = bytes_at(&ef->jmprel.data, i * 24, 24);
		if (!e)
			break;
		uint64_t r_offset = elf_load_u64(e, ef->big_endian), info = elf_load_u64(e + 8, ef->big_endian);
		if ((uint32_t)info == 7 /* R_X86_64_JUMP_SLOT */ &&
		    bsearch(&r_offset, got, n, sizeof *got, cmp_u64))
			syms[ns++] = (uint32_t)(info >> 32);
	}
	ef->ctor_plt_syms = ns ? syms : NULL;
	ef->nctor_plt_syms = ns;
}

void elf_check_relative(struct elf_file *ef)
{
	if (ef->machine != EM_X86_64_ || !ef->is64 || !ef->relacount || !ef->rela.data.len)
		return;
	uint64_t n = MIN(ef->relacount, ef->rela.data.len / 24);
	const uint8_t *all = n ? bytes_at(&ef->rela.data, 0, n * 24) : NULL;	/* all n entries, proven once */
	for (uint64_t k = 0; all && k < n; k++) {
		if ((elf_load_u64(all + k * 24 + 8, ef->big_endian) & 0xffffffffu) != 8 /* R_X86_64_RELATIVE */) {
			ef->relative_assert = true;
			return;
		}
	}
}
