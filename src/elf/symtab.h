/*
 * symtab.h: walking an object's own hash tables, and the references its
 * relocations make, in the order glibc's loader processes them.
 *
 * Hash iteration yields candidate symbol indices for a name exactly the
 * way glibc's do_lookup_x visits them (GNU hash with its bloom filter when
 * present, else the SysV table); matching rules are the loader model's
 * business, not this module's.  Every walk is bounded by the table sizes.
 *
 * Reference extraction turns DT_REL/DT_RELA/DT_JMPREL into the list of
 * symbol lookups a load performs: one entry per distinct (symbol, lookup
 * class) in the order glibc performs them, each tagged with whether it can
 * be deferred by lazy binding and carrying its name and GNU hash, so that
 * binding the object again (in another process of the scan) decodes
 * nothing.  The array lives in the caller's arena; it is the only
 * allocation, whatever the number of symbols.
 */
#ifndef ABISCOPE_SYMTAB_H
#define ABISCOPE_SYMTAB_H

#include "elf/elf.h"

/*
 * A walk reads a chain until its end, as glibc's does; the words a walk
 * reads past its first ELF_LONG_WALK come out of the object's allowance
 * (elf_file.long_walk_left).  Once it is spent, its walks stop there and
 * say they gave up (gave_up): what they did not read is not known, and the
 * caller takes its answer as a guess.
 */
struct elf_hash_iter {
	const struct elf_file *ef;
	uint32_t gnu_hash;
	bool use_gnu, done;
	bool gave_up;		/* stopped by the allowance, not by the chain's end */
	uint64_t pos;		/* chain position (GNU) or symbol index (SysV) */
	uint32_t steps;
	/* the walk would read outside the object's memory, or divide by a
	 * zero bucket count: the loader's process dies there (done is set) */
	bool fault;
	int fault_signal;	/* 11 SIGSEGV, 8 SIGFPE */
	const char *fault_what;	/* "bloom filter", "buckets", "chains" */
	uint64_t fault_at;
};

/* False when the object has no usable hash table (glibc skips it). */
bool elf_hash_iter_init(struct elf_hash_iter *it, const struct elf_file *ef, const char *name,
			uint32_t gnu_hash, uint32_t sysv_hash);
bool elf_hash_iter_next(struct elf_hash_iter *it, uint32_t *symidx);

/*
 * True when the GNU bloom filter, read from the file's window, says the
 * name with this GNU hash is not in the object: what elf_hash_iter_init
 * would find (done, no fault) in the common case, in a few instructions.
 * False when it may be there or the word is not in the window: then ask
 * elf_hash_iter_init.  A lookup asks it of every object of its scopes,
 * and most say no.
 */
static inline bool elf_bloom_rejects(const struct elf_file *ef, uint32_t gnu_hash)
{
	if (!ef->has_gnu_hash || !ef->gnu_bloom_size)
		return false;
	uint32_t bits = ef->is64 ? 64 : 32;
	uint64_t at = (uint64_t)((gnu_hash / bits) & (ef->gnu_bloom_size - 1)) * (bits / 8);
	const uint8_t *p = bytes_at(&ef->gnu_bloom, at, bits / 8);
	if (!p)
		return false;
	uint64_t word = ef->is64 ? elf_load_u64(p, ef->big_endian) : elf_load_u32(p, ef->big_endian);
	uint32_t b1 = gnu_hash & (bits - 1), b2 = (gnu_hash >> (ef->gnu_bloom_shift & 31)) & (bits - 1);
	return !((word >> b1) & (word >> b2) & 1);
}
bool elf_has_hash_table(const struct elf_file *ef);
/* Whether dynamic symbol idx's entry lies in the object's memory (what
 * the loader reads at DT_SYMTAB + idx * DT_SYMENT, in range or not). */
bool elf_sym_in_image(const struct elf_file *ef, uint32_t idx);
/* Whether a lookup of symbol idx's name in the object's own hash table
 * reaches it (or a symbol of that name): false in a corrupt table. */
bool elf_hash_finds(const struct elf_file *ef, uint32_t symidx);
/* Whether no lookup of any name in the object's hash table can fault or
 * meet a symbol it cannot read: a GNU hash table all in the file, its
 * buckets and chains within the symbol table and ending there, every
 * symbol they reach in the file with its name in DT_STRTAB.  One pass over
 * the table (the loader model trusts earlier bindings through such
 * objects, process.c). */
bool elf_lookup_never_faults(const struct elf_file *ef);

enum reloc_class {
	RELOC_CLASS_NORMAL = 0,
	RELOC_CLASS_PLT = 1,	/* glibc ELF_RTYPE_CLASS_PLT: a PLT or TLS reference */
	RELOC_CLASS_COPY = 2,
};

struct elf_symref {
	uint32_t symidx;
	uint8_t lookup_class;	/* enum reloc_class bits */
	bool deferrable;	/* a JUMP_SLOT in the PLT range: lazy binding may defer it */
	bool eager_also;	/* the same symbol is also referenced by a load-time reloc */
	uint32_t order;		/* position in glibc's processing order */
	uint32_t gnu_hash;	/* elf_gnu_hash(name) */
	const char *name;	/* the symbol's name ("" when unreadable) */
	uint8_t tls;		/* enum reloc_tls: TLS relocations of it (aarch64) */
};

/*
 * What a TLS relocation asks of the TLS block of the object its symbol
 * binds to (aarch64: glibc's CHECK_STATIC_TLS and TRY_STATIC_TLS): an
 * initial-exec reference (R_AARCH64_TLS_TPREL64) needs the block in the
 * static TLS area, allocated then if it is not yet; a descriptor
 * (R_AARCH64_TLSDESC) takes it there if the optional surplus allows.
 */
enum reloc_tls {
	RELOC_TLS_IE = 1,
	RELOC_TLS_DESC = 2,
};

/*
 * Where relocating the object ends (x86-64, aarch64): glibc processes the entries
 * in order, and the first that reads or writes outside the object's
 * memory, calls outside its code, or has a type it refuses ends the load
 * there.  References of order >= order are never looked up.
 */
struct elf_reloc_stop {
	bool set;
	uint32_t order;
	struct elf_fault fault;
};

struct elf_refs {
	struct elf_symref *ref;	/* sorted by order */
	size_t n;
	bool unknown_machine;	/* relocation types not modelled: every ref taken as eager */
	/* with RTLD_NOW, and with lazy binding (the PLT range's JUMP_SLOTs
	 * only written, other types there refused as PLT types) */
	struct elf_reloc_stop stop_now, stop_lazy;
	/* the walk of the object's own hash table for one of its defined
	 * references faults (a lookup that reaches the object dies there) */
	struct elf_fault self_lookup_fault;
	/* TLS relocations that bind in the object itself (a local or hidden
	 * symbol, symbol 0): the order of the first of each kind
	 * (enum reloc_tls), UINT32_MAX when none */
	uint32_t self_tls_order[2];
};

/*
 * The symbol lookups a load of ef performs.  Relative, NONE and IRELATIVE
 * relocations and local symbols need no lookup and are left out, as are
 * references to symbols with hidden or internal visibility (they bind
 * inside the object).
 */
void elf_collect_refs(struct arena *a, const struct elf_file *ef, struct elf_refs *out);

/* Relocation types that make a lookup of each class on a machine (the
 * snapshot's ELF synthesiser writes them); false for machines not modelled. */
struct elf_reloc_types {
	uint32_t jump_slot;	/* deferrable inside the PLT range */
	uint32_t copy;		/* RELOC_CLASS_COPY */
	uint32_t normal;	/* RELOC_CLASS_NORMAL (GLOB_DAT) */
	uint32_t plt;		/* RELOC_CLASS_PLT outside the PLT range */
};
bool elf_reloc_types(uint16_t machine, struct elf_reloc_types *t);

/* Printable relocation type for explanations ("R_X86_64_GLOB_DAT",
 * "R_AARCH64_TLS_TPREL64"), or NULL. */
const char *elf_reloc_type_name(uint16_t machine, uint32_t type);

#endif
