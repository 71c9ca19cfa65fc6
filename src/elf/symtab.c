#include "elf/symtab.h"

/* ---- hash iteration ---- */

bool elf_has_hash_table(const struct elf_file *ef)
{
	return ef->has_gnu_hash || (ef->has_sysv_hash && ef->sysv_nbucket > 0);
}

bool elf_sym_in_image(const struct elf_file *ef, uint32_t idx)
{
	uint64_t gap;
	if (idx < ef->nsyms)
		return true;
	return ef->has_symtab_tag &&
	       elf_image_covers(ef, ef->symtab_vaddr + (uint64_t)idx * ef->syment, ef->syment, &gap);
}

static bool iter_fault(struct elf_hash_iter *it, int sig, const char *what, uint64_t at)
{
	it->fault = true;
	it->fault_signal = sig;
	it->fault_what = what;
	it->fault_at = at;
	it->done = true;
	return false;
}

/* A word of the GNU hash table at vaddr: from the file window when it has
 * it (base: the window's address), else from the memory image. */
static bool gnu_word(const struct elf_file *ef, const struct bytes *win, uint64_t base, uint64_t vaddr,
		     unsigned size, uint64_t *out)
{
	uint64_t k = vaddr - base;
	const uint8_t *p = vaddr >= base ? bytes_at(win, k, size) : NULL;
	if (p) {
		*out = size == 8 ? elf_load_u64(p, ef->big_endian) : elf_load_u32(p, ef->big_endian);
		return true;
	}
	if (size == 8)
		return elf_image_u64(ef, vaddr, out);
	uint32_t v;
	if (!elf_image_u32(ef, vaddr, &v))
		return false;
	*out = v;
	return true;
}

/* do_lookup_x's GNU part: the bloom word, then the bucket.  Addresses are
 * computed as glibc computes them (Elf32_Word index masks, wrapping
 * pointer arithmetic), and read where they land. */
static void gnu_iter_init(struct elf_hash_iter *it, const struct elf_file *ef, uint32_t gnu_hash)
{
	uint32_t bits = ef->is64 ? 64 : 32;
	uint32_t widx = (gnu_hash / bits) & (ef->gnu_bloom_size - 1);
	uint64_t wat = ef->gnu_bloom_vaddr + (uint64_t)widx * (bits / 8), word;
	if (!gnu_word(ef, &ef->gnu_bloom, ef->gnu_bloom_vaddr, wat, bits / 8, &word)) {
		iter_fault(it, 11, "DT_GNU_HASH's bloom filter", wat);
		return;
	}
	uint32_t b1 = gnu_hash & (bits - 1);
	/* new_hash is an unsigned int: a shift count of 32 or more is taken
	 * modulo 32, as x86 does */
	uint32_t b2 = (gnu_hash >> (ef->gnu_bloom_shift & 31)) & (bits - 1);
	if (!((word >> b1) & (word >> b2) & 1))
		return;
	if (ef->gnu_nbuckets == 0) {
		iter_fault(it, 8, "DT_GNU_HASH's bucket count (0: it divides by it)", ef->gnu_buckets_vaddr);
		return;
	}
	uint64_t bat = ef->gnu_buckets_vaddr + (uint64_t)(gnu_hash % ef->gnu_nbuckets) * 4, bucket;
	if (!gnu_word(ef, &ef->gnu_buckets, ef->gnu_buckets_vaddr, bat, 4, &bucket)) {
		iter_fault(it, 11, "DT_GNU_HASH's buckets", bat);
		return;
	}
	if (bucket == 0)
		return;
	it->pos = bucket;
	it->done = false;
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
	it->gave_up = false;
	it->fault = false;
	it->pos = 0;
	if (ef->has_gnu_hash) {
		it->use_gnu = true;
		gnu_iter_init(it, ef, gnu_hash);
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

/* Chain words past the table's symbols that a walk reads before it gives
 * up on finding an end bit (glibc reads on until one, or a fault). */
#define GNU_CHAIN_OVERRUN 4096u

/* Another step of a walk past ELF_LONG_WALK, from the object's allowance;
 * false (the walk gives up) once it is spent. */
static bool long_walk_step(struct elf_hash_iter *it)
{
	uint64_t *left = it->ef->long_walk_left;
	if (it->steps <= ELF_LONG_WALK || !left)
		return true;
	if (*left) {
		--*left;
		return true;
	}
	it->done = true;
	it->gave_up = true;
	return false;
}

bool elf_hash_iter_next(struct elf_hash_iter *it, uint32_t *symidx)
{
	const struct elf_file *ef = it->ef;
	/* Every step visits a distinct chain slot; a well-formed table ends a
	 * chain within nsyms + 1 steps, so a cycle in a hostile table ends here. */
	while (!it->done) {
		if (it->use_gnu) {
			if (++it->steps > ef->nsyms + 1 + GNU_CHAIN_OVERRUN) {
				it->done = true;
				return false;
			}
			if (!long_walk_step(it))
				return false;
			/* l_gnu_chain_zero[pos]: the chain less symoffset words */
			uint64_t at = ef->gnu_chain_vaddr + (it->pos - ef->gnu_symoffset) * 4, h;
			if (!gnu_word(ef, &ef->gnu_chain, ef->gnu_chain_vaddr, at, 4, &h))
				return iter_fault(it, 11, "DT_GNU_HASH's chains", at);
			uint32_t idx = (uint32_t)it->pos;
			it->pos++;
			if (h & 1)
				it->done = true;
			if (((h ^ it->gnu_hash) >> 1) == 0) {
				*symidx = idx;
				return true;
			}
		} else {
			if (++it->steps > ef->nsyms + 1) {
				it->done = true;
				return false;
			}
			if (!long_walk_step(it))
				return false;
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
	if (machine == EM_AARCH64_) {
		switch (type) {
		case 0: return "R_AARCH64_NONE";
		case 257: return "R_AARCH64_ABS64";
		case 258: return "R_AARCH64_ABS32";
		case 259: return "R_AARCH64_ABS16";
		case 260: return "R_AARCH64_PREL64";
		case 261: return "R_AARCH64_PREL32";
		case 262: return "R_AARCH64_PREL16";
		case 1024: return "R_AARCH64_COPY";
		case 1025: return "R_AARCH64_GLOB_DAT";
		case 1026: return "R_AARCH64_JUMP_SLOT";
		case 1027: return "R_AARCH64_RELATIVE";
		case 1028: return "R_AARCH64_TLS_DTPMOD64";
		case 1029: return "R_AARCH64_TLS_DTPREL64";
		case 1030: return "R_AARCH64_TLS_TPREL64";
		case 1031: return "R_AARCH64_TLSDESC";
		case 1032: return "R_AARCH64_IRELATIVE";
		}
	}
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
		case 8: return "R_X86_64_RELATIVE";
		case 37: return "R_X86_64_IRELATIVE";
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
	/* per symbol: 1 once check_symbol_reads found everything it reads in
	 * place (that depends on the symbol alone): not decoded again */
	uint8_t *sym_reads_ok;
	struct elf_window writable;	/* the last writable window a write fell in */
	uint32_t *slot[3];	/* per class: symidx -> ref index + 1 */
	struct elf_refs *out;
	size_t cap;
	uint32_t order;
	/* per reference, 1 when its order moved (first deferred, then needed
	 * at load time): the only ones out of processing order */
	uint8_t *moved;
	size_t moved_cap, nmoved;
};

enum { SYM_UNSEEN = 0, SYM_SKIP = 1, SYM_LOOKUP = 2 };
/* with SYM_LOOKUP: classified ahead (classify_ahead), and the walk of its
 * own hash table faulted; the fault is recorded when the walk reaches it */
#define SYM_FAULTED 4

/* Whether the object's own hash table leads a lookup of defined symbol
 * idx to it (or to a symbol of its name): then its reference binds at
 * worst to itself.  A corrupt table may not; then the reference is looked
 * up like an undefined one, and may fail as it does for glibc. */
/* fault (optional): where the walk faults, when it does */
static bool hash_finds(const struct elf_file *ef, uint32_t symidx, struct elf_fault *fault)
{
	const char *name = elf_sym_name(ef, symidx);
	struct elf_hash_iter it;
	if (!elf_hash_iter_init(&it, ef, name, elf_gnu_hash(name), ef->has_gnu_hash ? 0 : elf_sysv_hash(name)))
		return false;
	uint32_t idx;
	while (elf_hash_iter_next(&it, &idx))
		if (idx == symidx || str_eq(elf_sym_name(ef, idx), name))
			return true;
	if (it.fault && fault && !fault->phase) {
		memset(fault, 0, sizeof *fault);
		fault->phase = FAULT_LOOKUP;
		fault->table = it.fault_what;
		fault->what = "reads it outside its memory, looking up one of its own symbols";
		fault->at = it.fault_at;
		fault->signal = it.fault_signal;
		fault->guess = true;
	}
	return false;
}

bool elf_hash_finds(const struct elf_file *ef, uint32_t symidx)
{
	return hash_finds(ef, symidx, NULL);
}

bool elf_lookup_never_faults(const struct elf_file *ef)
{
	uint32_t word = ef->is64 ? 8 : 4, lo = ef->gnu_symoffset, hi = ef->nsyms, v;
	if (!ef->has_gnu_hash || ef->hashed_names || ef->exports_unknown || ef->gnu_hash_fault ||
	    !ef->gnu_bloom_size || ef->gnu_bloom.len / word < ef->gnu_bloom_size || !ef->gnu_nbuckets ||
	    ef->gnu_buckets.len / 4 < ef->gnu_nbuckets || lo > hi || ef->gnu_chain.len / 4 < (uint64_t)(hi - lo) ||
	    ef->dynsym.len / ef->syment < hi || !ef->dynstr.len || ef->dynstr.data[ef->dynstr.len - 1] != 0)
		return false;
	/* every chain starts in [symoffset, nsyms) and the last word ends one */
	for (uint32_t b = 0; b < ef->gnu_nbuckets; b++)
		if (!bytes_u32(&ef->gnu_buckets, (uint64_t)b * 4, &v) || (v && (v < lo || v >= hi)))
			return false;
	if (hi > lo && (!bytes_u32(&ef->gnu_chain, (uint64_t)(hi - 1 - lo) * 4, &v) || !(v & 1)))
		return false;
	for (uint32_t i = lo; i < hi; i++)
		if (!bytes_u32(&ef->dynsym, (uint64_t)i * ef->syment, &v) || v >= ef->dynstr.len)
			return false;
	return true;
}

static bool finds_itself(const struct elf_file *ef, uint32_t symidx, struct elf_fault *fault)
{
	struct elf_sym self;
	/* check_match: no value (but absolute or TLS), a type that defines nothing */
	if (!elf_sym_head(ef, symidx, &self) || (self.value == 0 && self.shndx != SHN_ABS_ && self.type != STT_TLS_) ||
	    !(self.type <= STT_TLS_ || self.type == STT_GNU_IFUNC_))
		return false;
	return hash_finds(ef, symidx, fault);
}

/* glibc's RESOLVE_MAP: local and hidden/internal symbols bind in place;
 * defined symbols find at least their own definition, through the
 * object's own hash table. */
static uint8_t classify_sym(const struct elf_file *ef, uint32_t symidx, struct elf_fault *fault)
{
	struct elf_sym s;
	if (!elf_sym_head(ef, symidx, &s))
		return SYM_SKIP;
	if (s.bind == STB_LOCAL_ || s.visibility == STV_HIDDEN_ || s.visibility == STV_INTERNAL_)
		return SYM_SKIP;
	if (s.shndx != SHN_UNDEF_ && finds_itself(ef, symidx, fault))
		return SYM_SKIP;
	return SYM_LOOKUP;
}

/* What a relocation type asks of a TLS block (enum reloc_tls), on the
 * machines whose static TLS is modelled by relocation (aarch64). */
static uint8_t tls_kind(const struct elf_file *ef, uint32_t type)
{
	if (ef->machine != EM_AARCH64_)
		return 0;
	return type == 1030 ? RELOC_TLS_IE : type == 1031 ? RELOC_TLS_DESC : 0;
}

/* aarch64's elf_machine_lazy_rel binds a JUMP_SLOT of a variant-PCS
 * symbol at load, even lazily, when the object has DT_AARCH64_VARIANT_PCS. */
static bool variant_pcs(const struct elf_file *ef, uint32_t symidx)
{
	struct elf_sym s;
	return ef->aarch64_variant_pcs && elf_sym_head(ef, symidx, &s) && (s.other & STO_AARCH64_VARIANT_PCS_);
}

/* A TLS relocation that binds in the object itself: the first of its kind. */
static void self_tls(struct ref_builder *rb, uint8_t tls)
{
	uint32_t *first = &rb->out->self_tls_order[tls == RELOC_TLS_IE ? 0 : 1];
	if (*first == UINT32_MAX)
		*first = rb->order;
}

static void add_ref(struct ref_builder *rb, uint32_t type, uint32_t symidx, bool in_plt_range)
{
	const struct reloc_machine *rm = rb->rm;
	if (rm && (type == rm->none || type == rm->relative || type == rm->irelative))
		return;
	uint8_t tls = tls_kind(rb->ef, type);
	if (symidx == 0 && tls)
		self_tls(rb, tls);	/* the null symbol is local: RESOLVE_MAP gives the object */
	if (symidx == 0 || symidx >= rb->ef->nsyms)
		return;
	/* Large objects carry many relocations per symbol: decode each once. */
	uint8_t kind = rb->symkind[symidx];
	if (kind == SYM_UNSEEN)
		kind = rb->symkind[symidx] = classify_sym(rb->ef, symidx, &rb->out->self_lookup_fault);
	if (kind & SYM_FAULTED) {
		/* the first reference to it in processing order: its fault is
		 * the object's if none came before (as classifying it here) */
		kind = rb->symkind[symidx] = SYM_LOOKUP;
		if (!rb->out->self_lookup_fault.phase)
			classify_sym(rb->ef, symidx, &rb->out->self_lookup_fault);
	}
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
	if (kind == SYM_SKIP) {
		if (tls)
			self_tls(rb, tls);
		return;
	}
	bool deferrable = in_plt_range && rm && type == rm->jump_slot && !variant_pcs(rb->ef, symidx);
	uint32_t *slot = rb->slot[cls];
	if (!slot) {
		slot = rb->slot[cls] = arena_calloc(rb->a, rb->ef->nsyms, sizeof *slot);
	}
	if (slot[symidx]) {
		struct elf_symref *r = &rb->out->ref[slot[symidx] - 1];
		r->tls |= tls;
		if (!deferrable) {
			if (r->deferrable) {
				/* First load-time use decides when the error shows. */
				r->deferrable = false;
				r->order = rb->order;
				if (!rb->moved) {
					rb->moved_cap = rb->cap;
					rb->moved = arena_calloc(rb->a, rb->moved_cap ? rb->moved_cap : 1, 1);
				}
				if (slot[symidx] - 1 < rb->moved_cap)
					rb->moved[slot[symidx] - 1] = 1;
				rb->nmoved++;	/* counted either way: put_in_order checks */
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
	r->tls = tls;
	r->deferrable = deferrable;
	r->eager_also = !deferrable;
	r->order = rb->order++;
	slot[symidx] = (uint32_t)rb->out->n;
}

/* ---- where relocation stops (glibc 2.36 sysdeps/{x86_64,aarch64}/dl-machine.h) ---- */

/* Whether elf_machine_rela is modelled for ef (64-bit x86-64 and aarch64). */
static bool rela_modelled(const struct elf_file *ef)
{
	return ef->is64 && (ef->machine == EM_X86_64_ || ef->machine == EM_AARCH64_);
}

/* The types elf_machine_rela handles; any other is _dl_reloc_bad_type.
 * aarch64: NONE, ABS64, ABS32, COPY, GLOB_DAT, JUMP_SLOT, RELATIVE,
 * TLS_DTPMOD64, TLS_DTPREL64, TLS_TPREL64, TLSDESC, IRELATIVE. */
static bool known_type(const struct elf_file *ef, uint32_t t)
{
	static const uint32_t x86_64[] = { 0, 1, 2, 5, 6, 7, 8, 10, 16, 17, 18, 32, 33, 36, 37, 38 };
	static const uint32_t aarch64[] = { 0, 257, 258, 1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031, 1032 };
	const uint32_t *known = ef->machine == EM_AARCH64_ ? aarch64 : x86_64;
	size_t n = ef->machine == EM_AARCH64_ ? ARRAY_SIZE(aarch64) : ARRAY_SIZE(x86_64);
	for (size_t i = 0; i < n; i++)
		if (known[i] == t)
			return true;
	return false;
}

/* What a relocation entry of this type writes at r_offset (a copy
 * relocation: at least its first byte; a TLS descriptor: two words). */
static uint64_t write_size(const struct elf_file *ef, uint32_t t)
{
	if (ef->machine == EM_AARCH64_)
		return t == 1024 ? 1 : t == 1031 ? 16 : 8;
	return t == 2 || t == 10 || t == 32 ? 4 : t == 5 ? 1 : 8;
}

/* Types elf_machine_rela applies before looking at the symbol. */
static bool type_without_symbol(const struct elf_file *ef, uint32_t t)
{
	if (ef->machine == EM_AARCH64_)
		return t == 0 || t == 1027;
	return t == 0 || t == 8 || t == 38;
}

static uint32_t irelative_type(const struct elf_file *ef)
{
	return ef->machine == EM_AARCH64_ ? 1032 : 37;
}

struct reloc_entry {
	const struct elf_reltab *t;
	uint64_t index, offset, addend;
	uint32_t type, sym;
	bool plt;		/* in the PLT range */
};

static void stop_set(struct ref_builder *rb, struct elf_reloc_stop *st, const struct reloc_entry *e, int sig,
		     const char *what, uint64_t at, const char *dlerror)
{
	if (st->set)
		return;
	st->set = true;
	st->order = rb->order;
	struct elf_fault *f = &st->fault;
	memset(f, 0, sizeof *f);
	f->phase = FAULT_RELOC;
	f->table = arena_printf(rb->a, "%s entry %llu", e->t->tag, (unsigned long long)e->index);
	f->what = what;
	f->at = at;
	f->signal = sig;
	f->dlerror = dlerror;
	f->guess = sig != 0;
}

static void stop_both(struct ref_builder *rb, const struct reloc_entry *e, int sig, const char *what,
		      uint64_t at, const char *dlerror)
{
	stop_set(rb, &rb->out->stop_now, e, sig, what, at, dlerror);
	stop_set(rb, &rb->out->stop_lazy, e, sig, what, at, dlerror);
}

static const char *bad_type_text(struct arena *a, uint32_t type, bool plt)
{
	/* _dl_reloc_bad_type: two hex digits, eight above 0xff */
	return arena_printf(a, type > 0xff ? "unexpected %sreloc type 0x%08x" : "unexpected %sreloc type 0x%02x",
			    plt ? "PLT " : "", type);
}

/* What a refused type is, for the explanation. */
static const char *bad_type_what(struct arena *a, const struct elf_file *ef, uint32_t type, bool plt)
{
	const char *name = elf_reloc_type_name(ef->machine, type);
	const char *mach = ef->machine == EM_AARCH64_ ? "aarch64" : "x86-64";
	if (plt)
		return arena_printf(a, "is %s%s%#x%s in the PLT range, where lazy binding takes only JUMP_SLOT, "
				       "TLSDESC and IRELATIVE", name ? name : "type ", name ? " (" : "", type,
				    name ? ")" : "");
	return arena_printf(a, "is %s%s%#x%s, a type glibc's %s loader does not apply", name ? name : "type ",
			    name ? " (" : "", type, name ? ")" : "", mach);
}

/* The write at l_addr + r_offset. */
static bool check_write(struct ref_builder *rb, struct elf_reloc_stop *st, const struct reloc_entry *e,
			uint64_t size)
{
	if (elf_writable_cached(rb->ef, &rb->writable, e->offset, size))
		return true;
	stop_set(rb, st, e, 11, arena_printf(rb->a, "writes its relocation result at %#llx, outside its "
						      "writable memory", (unsigned long long)e->offset),
		 e->offset, NULL);
	return false;
}

/* A version index whose slot lies this far past l_versions (512 KiB) is
 * taken to be outside the loader's heap (a guess about the layout). */
#define VERSION_SLOTS_FAR 16384u

static bool sym_reads_ok(struct ref_builder *rb, uint32_t sym)
{
	if (sym < rb->ef->nsyms)
		rb->sym_reads_ok[sym] = 1;
	return true;
}

/* Before the lookup: elf_dynamic_do_Rela reads the DT_VERSYM entry, and
 * RESOLVE_MAP the symbol, its name and its l_versions slot.  true when the
 * entry gets that far. */
static bool check_symbol_reads(struct ref_builder *rb, struct elf_reloc_stop *st, const struct reloc_entry *e)
{
	const struct elf_file *ef = rb->ef;
	uint64_t gap;
	if (e->sym < ef->nsyms && rb->sym_reads_ok[e->sym])
		return true;
	if (ef->has_versym_tag && e->sym >= ef->nsyms &&
	    !elf_image_covers(ef, ef->versym_vaddr + (uint64_t)e->sym * 2, 2, &gap)) {
		stop_set(rb, st, e, 11, arena_printf(rb->a, "reads the DT_VERSYM entry of symbol %u, outside its memory",
						     e->sym), ef->versym_vaddr + (uint64_t)e->sym * 2, NULL);
		return false;
	}
	if (type_without_symbol(ef, e->type))
		return true;	/* NONE, RELATIVE: no symbol */
	if (ef->symtab_not_table) {
		stop_set(rb, st, e, 11, "reads symbols from DT_SYMTAB, which does not point at a symbol table (its "
					"entry 0 is not the null symbol): it binds garbage",
			 ef->symtab_vaddr, NULL);
		return false;
	}
	if (!elf_sym_in_image(ef, e->sym)) {
		stop_set(rb, st, e, 11, arena_printf(rb->a, "reads symbol %u at %#llx, outside its memory", e->sym,
						     (unsigned long long)(ef->symtab_vaddr + (uint64_t)e->sym * ef->syment)),
			 ef->symtab_vaddr + (uint64_t)e->sym * ef->syment, NULL);
		return false;
	}
	struct elf_sym s;
	if (!elf_sym(ef, e->sym, &s) || s.bind == STB_LOCAL_ || s.visibility == STV_HIDDEN_ ||
	    s.visibility == STV_INTERNAL_)
		return sym_reads_ok(rb, e->sym);	/* binds in place: nothing more is read */
	if (s.name_fault) {
		stop_set(rb, st, e, 11, arena_printf(rb->a, "reads the name of symbol %u outside its memory", e->sym),
			 ef->strtab_vaddr, NULL);
		return false;
	}
	uint16_t ndx = s.versym & VERSYM_INDEX_;
	/* l_versions has version_index_max + 1 slots of 32 bytes, in the heap;
	 * none (NULL) without version records.  A slot past them is read from
	 * whatever follows: near, the heap (zeros, seen to load); far, or from
	 * NULL, unmapped memory. */
	bool none = !ef->version_index_max && ndx != 0;
	if (ef->versym.len && (none || (ndx > ef->version_index_max && ndx >= VERSION_SLOTS_FAR))) {
		stop_set(rb, st, e, 11, arena_printf(rb->a, "takes version index %u of symbol %u, past its %u "
							     "version slots: it reads %s",
						     ndx, e->sym, ef->version_index_max ? ef->version_index_max + 1 : 0,
						     none ? "near address 0" : "far past them, outside the heap"),
			 0, NULL);
		return false;
	}
	return sym_reads_ok(rb, e->sym);
}

/* After the lookup: the type switch, the IRELATIVE call, the write. */
static void check_apply(struct ref_builder *rb, struct elf_reloc_stop *st, const struct reloc_entry *e)
{
	if (e->type == 0)
		return;
	if (!known_type(rb->ef, e->type)) {
		stop_set(rb, st, e, 0, bad_type_what(rb->a, rb->ef, e->type, false), 0,
			 bad_type_text(rb->a, e->type, false));
		return;
	}
	if (e->type == irelative_type(rb->ef) && !elf_image_executable(rb->ef, e->addend)) {
		stop_set(rb, st, e, 11, arena_printf(rb->a, "calls its IRELATIVE resolver at %#llx, outside its "
							     "code", (unsigned long long)e->addend), e->addend, NULL);
		return;
	}
	check_write(rb, st, e, write_size(rb->ef, e->type));
}

/* elf_machine_lazy_rel: the PLT range when binding is lazy.  A JUMP_SLOT
 * is only written; x86-64 defers a TLSDESC too, aarch64 relocates it in
 * full ("always initialize TLS descriptors completely"). */
static void check_lazy(struct ref_builder *rb, const struct reloc_entry *e)
{
	struct elf_reloc_stop *st = &rb->out->stop_lazy;
	bool aarch64 = rb->ef->machine == EM_AARCH64_;
	uint32_t jump_slot = aarch64 ? 1026 : 7, tlsdesc = aarch64 ? 1031 : 36;
	if (e->type == jump_slot)
		check_write(rb, st, e, 8);
	else if (e->type == irelative_type(rb->ef) || (aarch64 && e->type == tlsdesc))
		check_apply(rb, st, e);
	else if (e->type != tlsdesc)
		stop_set(rb, st, e, 0, bad_type_what(rb->a, rb->ef, e->type, true), 0,
			 bad_type_text(rb->a, e->type, true));
}

/* The size of one entry of t (Elf_Rel or Elf_Rela, 32- or 64-bit). */
static uint64_t entry_size(const struct elf_file *ef, const struct elf_reltab *t)
{
	return t->rela ? (ef->is64 ? 24 : 12) : (ef->is64 ? 16 : 8);
}

/* The entries of a table its window holds. */
static size_t entries_in(const struct elf_file *ef, const struct elf_reltab *t)
{
	return (size_t)MIN(t->count, t->data.len / entry_size(ef, t));
}

/* r_info's symbol index of the entry at p. */
static uint32_t entry_sym(const struct elf_file *ef, const uint8_t *p)
{
	return ef->is64 ? (uint32_t)(elf_load_u64(p + 8, ef->big_endian) >> 32) : elf_load_u32(p + 4, ef->big_endian) >> 8;
}

static bool decode_entry(const struct ref_builder *rb, const struct elf_reltab *t, uint64_t i,
			 struct reloc_entry *e)
{
	const struct elf_file *ef = rb->ef;
	uint64_t ent = entry_size(ef, t);
	const uint8_t *p = bytes_at(&t->data, i * ent, ent);
	if (!p)
		return false;
	e->t = t;
	e->index = i;
	e->sym = entry_sym(ef, p);
	if (ef->is64) {
		e->offset = elf_load_u64(p, ef->big_endian);
		e->type = (uint32_t)(elf_load_u64(p + 8, ef->big_endian) & 0xffffffffu);
		e->addend = t->rela ? elf_load_u64(p + 16, ef->big_endian) : 0;
	} else {
		e->offset = elf_load_u32(p, ef->big_endian);
		e->type = elf_load_u32(p + 4, ef->big_endian) & 0xff;
		e->addend = t->rela ? elf_load_u32(p + 8, ef->big_endian) : 0;
	}
	return true;
}

/* A stop just set for binding now is the same stop for lazy binding. */
static void copy_new_stop(struct ref_builder *rb)
{
	if (rb->out->stop_now.set && !rb->out->stop_lazy.set)
		rb->out->stop_lazy = rb->out->stop_now;
}

/* An entry outside the PLT range while neither binding mode has stopped:
 * both read, look up and write the same, so it is checked once. */
static void walk_both(struct ref_builder *rb, const struct reloc_entry *e)
{
	struct elf_refs *out = rb->out;
	if (!check_symbol_reads(rb, &out->stop_now, e)) {
		copy_new_stop(rb);
		return;
	}
	add_ref(rb, e->type, e->sym, false);
	check_apply(rb, &out->stop_now, e);
	copy_new_stop(rb);
}

static void walk_table(struct ref_builder *rb, const struct elf_reltab *t, uint64_t first,
		       uint64_t count, bool plt_range)
{
	const struct elf_file *ef = rb->ef;
	/* what elf_machine_rela does is modelled for x86-64's and aarch64's RELA */
	bool model = rela_modelled(ef) && t->rela;
	struct elf_refs *out = rb->out;
	for (uint64_t i = first; i < count && i < t->count; i++) {
		struct reloc_entry e;
		if (!decode_entry(rb, t, i, &e))
			break;
		e.plt = plt_range;
		bool now_open = model && !out->stop_now.set;
		bool lazy_open = model && !out->stop_lazy.set;
		if (now_open && lazy_open && !plt_range) {
			walk_both(rb, &e);
			continue;
		}
		bool now_reads = !now_open || check_symbol_reads(rb, &out->stop_now, &e);
		bool lazy_reads = !lazy_open || plt_range || check_symbol_reads(rb, &out->stop_lazy, &e);
		if (now_reads && lazy_reads)
			add_ref(rb, e.type, e.sym, plt_range);
		if (now_open && now_reads)
			check_apply(rb, &out->stop_now, &e);
		if (lazy_open && lazy_reads) {
			if (plt_range)
				check_lazy(rb, &e);
			else
				check_apply(rb, &out->stop_lazy, &e);
		}
	}
}

/* The leading DT_RELACOUNT entries: elf_machine_rela_relative writes each. */
static void walk_relative(struct ref_builder *rb, const struct elf_reltab *t, uint64_t n)
{
	const struct elf_file *ef = rb->ef;
	if (!(rela_modelled(ef) && t->rela))
		return;
	/* the entries there are, read in place (a large library has a million):
	 * only r_offset is needed until one writes outside the window */
	uint64_t ent = entry_size(ef, t), have = MIN(n, t->data.len / ent);	/* count or not: do-rel.h */
	const uint8_t *all = have ? bytes_at(&t->data, 0, have * ent) : NULL;
	const struct elf_window *w = &rb->writable;
	for (uint64_t i = 0; all && i < have && !rb->out->stop_now.set; i++) {
		const uint8_t *p = all + i * ent;
		uint64_t off = ef->is64 ? elf_load_u64(p, ef->big_endian) : elf_load_u32(p, ef->big_endian);
		if (elf_window_holds(w, off, 8))
			continue;
		struct reloc_entry e;
		if (!decode_entry(rb, t, i, &e))
			break;
		e.plt = false;
		if (!elf_writable_cached(ef, &rb->writable, e.offset, 8))
			stop_both(rb, &e, 11, arena_printf(rb->a, "writes its relocation result at %#llx, outside its "
								  "writable memory", (unsigned long long)e.offset),
				  e.offset, NULL);
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
	uint64_t ent = entry_size(ef, main);
	uint64_t start = main->vaddr, size = main->count * ent;
	if (plt_matches && ef->jmprel.count) {
		uint64_t pstart = ef->jmprel.vaddr, psize = ef->jmprel.count * ent;
		if (!main->present)
			start = pstart;
		if (start + size == pstart + psize && size >= psize)
			size -= psize;
	}
	walk_relative(rb, main, nrelative);
	if (main->count)
		walk_table(rb, main, nrelative, size / ent, false);
	if (plt_matches && ef->jmprel.count)
		walk_table(rb, &ef->jmprel, 0, ef->jmprel.count, true);
}

static int by_order(const void *x, const void *y)
{
	const struct elf_symref *a = x, *b = y;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* The entries of t past its leading nrelative relative ones. */
static size_t symbol_entries(const struct elf_file *ef, const struct elf_reltab *t, uint64_t nrelative)
{
	size_t n = entries_in(ef, t);
	return n - (size_t)MIN(nrelative, n);
}

/* Names asked for ahead of the symbol classify_ahead is at. */
#define NAME_PREFETCH 16

/*
 * Every symbol a relocation names, classified before the walk, in symbol
 * order: what classify_sym reads of each (its entry, its bucket, its
 * chain) then comes in the order the tables are laid out, where the walk's
 * order (the relocations') jumped across tables of tens of megabytes
 * (libtensorflow_cc.so: half a scan's time waited on those reads).  The
 * answers are the same; only when they are read changes.
 */
static void classify_ahead(struct ref_builder *rb)
{
	const struct elf_file *ef = rb->ef;
	uint8_t *wanted = arena_calloc(rb->a, ef->nsyms, 1);
	const struct elf_reltab *tabs[3] = { &ef->rel, &ef->rela, &ef->jmprel };
	const uint64_t relative[3] = { ef->relcount, ef->relacount, 0 };	/* no symbol there */
	for (int t = 0; t < 3; t++) {
		uint64_t ent = entry_size(ef, tabs[t]), n = entries_in(ef, tabs[t]);
		const uint8_t *all = n ? bytes_at(&tabs[t]->data, 0, n * ent) : NULL;
		for (uint64_t i = MIN(relative[t], n); all && i < n; i++) {
			uint32_t sym = entry_sym(ef, all + i * ent);
			if (sym < ef->nsyms)
				wanted[sym] = 1;
		}
	}
	/* names lie in the order the linker wrote them, not the symbols':
	 * the names of the next NAME_PREFETCH symbols are asked for early, so
	 * that their reads overlap (a hint; nothing else is read) */
	uint32_t ahead = 1;
	unsigned inflight = 0;
	for (uint32_t idx = 1; idx < ef->nsyms; idx++) {
		if (!wanted[idx])
			continue;
		if (idx < ahead) {
			inflight--;
		} else {
			ahead = idx + 1;
			inflight = 0;
		}
		for (; ahead < ef->nsyms && inflight < NAME_PREFETCH; ahead++) {
			if (!wanted[ahead])
				continue;
			inflight++;
			const uint8_t *sp = bytes_at(&ef->dynsym, (uint64_t)ahead * ef->syment, 4);
			const uint8_t *np = sp ? bytes_at(&ef->dynstr, elf_load_u32(sp, ef->big_endian), 1) : NULL;
			if (np)
				__builtin_prefetch(np);
		}
		struct elf_fault fault;
		memset(&fault, 0, sizeof fault);
		uint8_t kind = classify_sym(ef, idx, &fault);
		rb->symkind[idx] = kind | (fault.phase ? SYM_FAULTED : 0);
	}
}

/*
 * Processing order, once.  References are added in it; those whose order
 * moved later (rb->moved) are taken out, sorted, and merged back: linear
 * in the references (a merge sort of all of them was 5% of a scan).
 */
static void put_in_order(struct ref_builder *rb)
{
	struct elf_refs *out = rb->out;
	if (!rb->nmoved || out->n < 2)
		return;
	if (rb->moved_cap < out->n) {	/* grown past the first guess: the marks are partial */
		sort_items(out->ref, out->n, sizeof *out->ref, by_order);
		return;
	}
	struct elf_symref *moved = arena_alloc(rb->a, rb->nmoved * sizeof *moved);
	size_t kept = 0, k = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (rb->moved[i])
			moved[k++] = out->ref[i];
		else
			out->ref[kept++] = out->ref[i];
	}
	sort_items(moved, k, sizeof *moved, by_order);
	/* merge from the back: the kept ones are in order already */
	size_t i = kept, j = k, at = out->n;
	while (j > 0) {
		if (i > 0 && out->ref[i - 1].order > moved[j - 1].order)
			out->ref[--at] = out->ref[--i];
		else
			out->ref[--at] = moved[--j];
	}
}

void elf_collect_refs(struct arena *a, const struct elf_file *ef, struct elf_refs *out)
{
	memset(out, 0, sizeof *out);
	out->self_tls_order[0] = out->self_tls_order[1] = UINT32_MAX;
	struct ref_builder rb;
	memset(&rb, 0, sizeof rb);
	rb.a = a;
	rb.ef = ef;
	rb.rm = machine_of(ef->machine);
	rb.out = out;
	out->unknown_machine = rb.rm == NULL;
	/* without symbols there is nothing to look up, but a relocation
	 * still reads DT_SYMTAB where it points */
	if (!ef->nsyms && !(ef->has_symtab_tag && rela_modelled(ef)))
		return;
	/* room for a reference per entry there is (the leading relative ones
	 * name no symbol), taken once: an array grown
	 * by doubling left every smaller copy in the arena (6 MB on a serving
	 * stack); a large one has a mapping of its own, whose pages no
	 * reference reaches are never touched */
	rb.cap = symbol_entries(ef, &ef->rel, ef->relcount) + symbol_entries(ef, &ef->rela, ef->relacount) +
		 symbol_entries(ef, &ef->jmprel, 0);
	out->ref = arena_calloc(a, rb.cap ? rb.cap : 1, sizeof *out->ref);
	rb.symkind = arena_calloc(a, ef->nsyms ? ef->nsyms : 1, sizeof *rb.symkind);
	if (ef->nsyms)
		classify_ahead(&rb);
	rb.sym_reads_ok = arena_calloc(a, ef->nsyms ? ef->nsyms : 1, sizeof *rb.sym_reads_ok);
	walk_kind(&rb, &ef->rel, ef->relcount, !ef->jmprel_is_rela);
	walk_kind(&rb, &ef->rela, ef->relacount, ef->jmprel_is_rela);
	put_in_order(&rb);	/* orders are distinct */
	for (size_t i = 0; i < out->n; i++) {
		struct elf_symref *r = &out->ref[i];
		r->name = elf_sym_name(ef, r->symidx);
		r->gnu_hash = elf_gnu_hash(r->name);
	}
}
