#include "elf/symtab.h"

/* ---- hash iteration ---- */

bool elf_has_hash_table(const struct elf_file *ef)
{
	return ef->has_gnu_hash || (ef->has_sysv_hash && ef->sysv_nbucket > 0);
}

bool elf_hash_iter_init(struct elf_hash_iter *it, const struct elf_file *ef, const char *name,
			uint32_t gnu_hash, uint32_t sysv_hash)
{
	/* This runs for every object of every scope for every reference: the
	 * bloom filter rejects most objects after one word, so keep it lean. */
	(void)name;
	it->ef = ef;
	it->gnu_hash = gnu_hash;
	it->steps = 0;
	it->done = true;
	it->pos = 0;
	if (ef->has_gnu_hash) {
		it->use_gnu = true;
		uint32_t bits = ef->is64 ? 64 : 32;
		uint64_t widx = (gnu_hash / bits) & (ef->gnu_bloom_size - 1);
		const uint8_t *wp = bytes_at(&ef->gnu_bloom, widx * (bits / 8), bits / 8);
		if (!wp)
			return true;
		uint64_t word = ef->is64 ? elf_load_u64(wp, ef->big_endian)
					 : elf_load_u32(wp, ef->big_endian);
		uint32_t b1 = gnu_hash & (bits - 1);
		/* A hostile shift count must not be an undefined shift. */
		uint32_t shifted = ef->gnu_bloom_shift < 32 ? gnu_hash >> ef->gnu_bloom_shift : 0;
		uint32_t b2 = shifted & (bits - 1);
		if (!((word >> b1) & (word >> b2) & 1))
			return true;
		const uint8_t *bp = bytes_at(&ef->gnu_buckets, (uint64_t)(gnu_hash % ef->gnu_nbuckets) * 4, 4);
		uint32_t bucket = bp ? elf_load_u32(bp, ef->big_endian) : 0;
		if (bucket == 0 || bucket < ef->gnu_symoffset)
			return true;
		it->pos = bucket;
		it->done = false;
		return true;
	}
	it->use_gnu = false;
	if (ef->has_sysv_hash && ef->sysv_nbucket > 0) {
		uint32_t first;
		if (bytes_u32(&ef->sysv_bucket, (uint64_t)(sysv_hash % ef->sysv_nbucket) * 4, &first) &&
		    first != 0) {
			it->pos = first;
			it->done = false;
		}
		return true;
	}
	return false;
}

bool elf_hash_iter_next(struct elf_hash_iter *it, uint32_t *symidx)
{
	const struct elf_file *ef = it->ef;
	/* Every step visits a distinct chain slot; nsyms + 1 steps is the most
	 * a well-formed table allows, so a cycle in a hostile table ends here. */
	while (!it->done) {
		if (++it->steps > ef->nsyms + 1) {
			it->done = true;
			return false;
		}
		if (it->use_gnu) {
			uint64_t k = it->pos - ef->gnu_symoffset;
			const uint8_t *hp = bytes_at(&ef->gnu_chain, k * 4, 4);
			if (!hp) {
				it->done = true;
				return false;
			}
			uint32_t h = elf_load_u32(hp, ef->big_endian);
			uint32_t idx = (uint32_t)it->pos;
			it->pos++;
			if (h & 1)
				it->done = true;
			if (((h ^ it->gnu_hash) >> 1) == 0) {
				*symidx = idx;
				return true;
			}
		} else {
			uint32_t idx = (uint32_t)it->pos, next;
			if (idx == 0 || !bytes_u32(&ef->sysv_chain, (uint64_t)idx * 4, &next)) {
				it->done = true;
				return false;
			}
			it->pos = next;
			if (next == 0)
				it->done = true;
			*symidx = idx;
			return true;
		}
	}
	return false;
}

/* ---- relocation types per machine ---- */

struct reloc_machine {
	uint16_t machine;
	uint32_t none, relative, irelative, jump_slot, copy;
	uint32_t plt_class[6];	/* types glibc puts in ELF_RTYPE_CLASS_PLT; 0-terminated */
	bool all_plt_class;	/* ppc64: every type is class PLT */
	uint32_t glob_dat;	/* a class-normal type that names a symbol */
};

/* From glibc 2.36 sysdeps/<arch>/dl-machine.h elf_machine_type_class and
 * the ELF psABI relocation numbers. */
static const struct reloc_machine reloc_machines[] = {
	{ EM_X86_64_, 0, 8, 37, 7, 5, { 7, 16, 17, 18, 36, 0 }, false, 6 },
	{ EM_386_, 0, 8, 42, 7, 5, { 7, 35, 36, 37, 14, 41 }, false, 6 },
	{ EM_AARCH64_, 0, 1027, 1032, 1026, 1024, { 1026, 1028, 1029, 1030, 1031, 0 }, false, 1025 },
	{ EM_ARM_, 0, 23, 160, 22, 20, { 22, 17, 18, 19, 13, 0 }, false, 21 },
	{ EM_S390_, 0, 12, 61, 11, 9, { 11, 54, 55, 56, 0, 0 }, false, 10 },
	{ EM_RISCV_, 0, 3, 58, 5, 4, { 5, 7, 9, 11, 0, 0 }, false, 2 },
	{ EM_PPC64_, 0, 22, 248, 21, 19, { 0 }, true, 38 },
};

bool elf_reloc_types(uint16_t machine, struct elf_reloc_types *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(reloc_machines); i++) {
		const struct reloc_machine *rm = &reloc_machines[i];
		if (rm->machine != machine)
			continue;
		t->jump_slot = rm->jump_slot;
		t->copy = rm->copy;
		t->normal = rm->all_plt_class ? rm->jump_slot : rm->glob_dat;
		t->plt = rm->jump_slot;
		return true;
	}
	return false;
}

static const struct reloc_machine *machine_of(uint16_t m)
{
	for (size_t i = 0; i < ARRAY_SIZE(reloc_machines); i++)
		if (reloc_machines[i].machine == m)
			return &reloc_machines[i];
	return NULL;
}

static uint8_t class_of(const struct reloc_machine *rm, uint32_t type)
{
	if (!rm)
		return RELOC_CLASS_NORMAL;
	if (type == rm->copy)
		return RELOC_CLASS_COPY;
	if (rm->all_plt_class)
		return RELOC_CLASS_PLT;
	for (size_t i = 0; i < ARRAY_SIZE(rm->plt_class) && rm->plt_class[i]; i++)
		if (rm->plt_class[i] == type)
			return RELOC_CLASS_PLT;
	return RELOC_CLASS_NORMAL;
}

const char *elf_reloc_type_name(uint16_t machine, uint32_t type)
{
	if (machine == EM_X86_64_) {
		switch (type) {
		case 1: return "R_X86_64_64";
		case 5: return "R_X86_64_COPY";
		case 6: return "R_X86_64_GLOB_DAT";
		case 7: return "R_X86_64_JUMP_SLOT";
		case 16: return "R_X86_64_DTPMOD64";
		case 17: return "R_X86_64_DTPOFF64";
		case 18: return "R_X86_64_TPOFF64";
		case 36: return "R_X86_64_TLSDESC";
		}
	}
	return NULL;
}

/* ---- reference collection ---- */

struct ref_builder {
	struct arena *a;
	const struct elf_file *ef;
	const struct reloc_machine *rm;
	/* per symbol, decoded once: SYM_UNSEEN, SYM_SKIP (binds in place) or
	 * SYM_LOOKUP (an undefined global the loader must look up) */
	uint8_t *symkind;
	uint32_t *slot[3];	/* per class: symidx -> ref index + 1 */
	struct elf_refs *out;
	size_t cap;
	uint32_t order;
};

enum { SYM_UNSEEN = 0, SYM_SKIP = 1, SYM_LOOKUP = 2 };

/* glibc's RESOLVE_MAP: local and hidden/internal symbols bind in place;
 * defined symbols always find at least their own definition. */
static uint8_t classify_sym(const struct elf_file *ef, uint32_t symidx)
{
	struct elf_sym s;
	if (!elf_sym_head(ef, symidx, &s))
		return SYM_SKIP;
	if (s.bind == STB_LOCAL_ || s.visibility == STV_HIDDEN_ || s.visibility == STV_INTERNAL_)
		return SYM_SKIP;
	if (s.shndx != SHN_UNDEF_)
		return SYM_SKIP;
	return SYM_LOOKUP;
}

static void add_ref(struct ref_builder *rb, uint32_t type, uint32_t symidx, bool in_plt_range)
{
	const struct reloc_machine *rm = rb->rm;
	if (rm && (type == rm->none || type == rm->relative || type == rm->irelative))
		return;
	if (symidx == 0 || symidx >= rb->ef->nsyms)
		return;
	/* Large objects carry many relocations per symbol: decode each once. */
	uint8_t kind = rb->symkind[symidx];
	if (kind == SYM_UNSEEN)
		kind = rb->symkind[symidx] = classify_sym(rb->ef, symidx);
	uint8_t cls = class_of(rm, type);
	if (kind == SYM_SKIP && cls == RELOC_CLASS_COPY) {
		/* A copy relocation's symbol is defined in the executable (its
		 * copy), yet the loader looks it up elsewhere (skipping the
		 * executable): it must be defined by a library. */
		struct elf_sym cs;
		if (elf_sym_head(rb->ef, symidx, &cs) && cs.bind != STB_LOCAL_ &&
		    cs.visibility != STV_HIDDEN_ && cs.visibility != STV_INTERNAL_)
			kind = SYM_LOOKUP;
	}
	if (kind == SYM_SKIP)
		return;
	bool deferrable = in_plt_range && rm && type == rm->jump_slot;
	uint32_t *slot = rb->slot[cls];
	if (!slot) {
		slot = rb->slot[cls] = arena_calloc(rb->a, rb->ef->nsyms, sizeof *slot);
	}
	if (slot[symidx]) {
		struct elf_symref *r = &rb->out->ref[slot[symidx] - 1];
		if (!deferrable) {
			if (r->deferrable) {
				/* First load-time use decides when the error shows. */
				r->deferrable = false;
				r->order = rb->order;
			}
			r->eager_also = true;
		}
		rb->order++;
		return;
	}
	if (rb->out->n == rb->cap) {
		size_t cap = rb->cap ? rb->cap * 2 : 64;
		rb->out->ref = arena_grow(rb->a, rb->out->ref, rb->out->n, cap, sizeof *rb->out->ref);
		rb->cap = cap;
	}
	struct elf_symref *r = &rb->out->ref[rb->out->n++];
	r->symidx = symidx;
	r->lookup_class = cls;
	r->deferrable = deferrable;
	r->eager_also = !deferrable;
	r->order = rb->order++;
	slot[symidx] = (uint32_t)rb->out->n;
}

static void walk_table(struct ref_builder *rb, const struct elf_reltab *t, uint64_t first,
		       uint64_t count, bool plt_range)
{
	const struct elf_file *ef = rb->ef;
	uint64_t ent = t->rela ? (ef->is64 ? 24 : 12) : (ef->is64 ? 16 : 8);
	uint64_t info_off = ef->is64 ? 8 : 4, info_size = ef->is64 ? 8 : 4;
	for (uint64_t i = first; i < count && i < t->count; i++) {
		const uint8_t *ip = bytes_at(&t->data, i * ent + info_off, info_size);
		if (!ip)
			break;
		uint32_t type, sym;
		if (ef->is64) {
			uint64_t info = elf_load_u64(ip, ef->big_endian);
			type = (uint32_t)(info & 0xffffffffu);
			sym = (uint32_t)(info >> 32);
		} else {
			uint32_t info = elf_load_u32(ip, ef->big_endian);
			type = info & 0xff;
			sym = info >> 8;
		}
		add_ref(rb, type, sym, plt_range);
	}
}

/*
 * glibc's _ELF_DYNAMIC_DO_RELOC: the DT_REL(A) range (its leading
 * DT_REL(A)COUNT relative entries skipped, any tail that is the PLT range
 * cut off) then the DT_JMPREL range.
 */
static void walk_kind(struct ref_builder *rb, const struct elf_reltab *main, uint64_t nrelative,
		      bool plt_matches)
{
	const struct elf_file *ef = rb->ef;
	uint64_t ent = main->rela ? (ef->is64 ? 24 : 12) : (ef->is64 ? 16 : 8);
	uint64_t start = main->vaddr, size = main->count * ent;
	if (plt_matches && ef->jmprel.count) {
		uint64_t pstart = ef->jmprel.vaddr, psize = ef->jmprel.count * ent;
		if (start == 0)
			start = pstart;
		if (start + size == pstart + psize && size >= psize)
			size -= psize;
	}
	if (main->count) {
		uint64_t n = size / ent;
		walk_table(rb, main, nrelative, n, false);
	}
	if (plt_matches && ef->jmprel.count)
		walk_table(rb, &ef->jmprel, 0, ef->jmprel.count, true);
}

static int by_order(const void *x, const void *y)
{
	const struct elf_symref *a = x, *b = y;
	return a->order < b->order ? -1 : a->order > b->order;
}

void elf_collect_refs(struct arena *a, const struct elf_file *ef, struct elf_refs *out)
{
	memset(out, 0, sizeof *out);
	struct ref_builder rb;
	memset(&rb, 0, sizeof rb);
	rb.a = a;
	rb.ef = ef;
	rb.rm = machine_of(ef->machine);
	rb.out = out;
	out->unknown_machine = rb.rm == NULL;
	if (!ef->nsyms)
		return;
	rb.symkind = arena_calloc(a, ef->nsyms, sizeof *rb.symkind);
	walk_kind(&rb, &ef->rel, ef->relcount, !ef->jmprel_is_rela);
	walk_kind(&rb, &ef->rela, ef->relacount, ef->jmprel_is_rela);
	/* Processing order, once: a reference first deferred and later needed
	 * at load time moved to that later place.  Orders are distinct. */
	if (out->n > 1)
		sort_items(out->ref, out->n, sizeof *out->ref, by_order);
	for (size_t i = 0; i < out->n; i++) {
		struct elf_symref *r = &out->ref[i];
		r->name = elf_sym_name(ef, r->symidx);
		r->gnu_hash = elf_gnu_hash(r->name);
	}
}
