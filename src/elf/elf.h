/*
 * elf.h: a read-only view of one ELF file, parsed from a byte window.
 *
 * elf_parse() reads the header, program and section headers and, through
 * PT_DYNAMIC and the PT_LOAD address map (what the loader itself uses;
 * sections only as a fallback), the dynamic section: NEEDED, SONAME,
 * RPATH, RUNPATH, flags, the dynamic symbol table with its version tables,
 * the GNU and SysV hash tables and the relocation tables.  Both classes,
 * both byte orders, any machine.
 *
 * Ownership: the struct elf_file and its arrays live in the arena passed
 * to elf_parse; strings point into the byte window, which the caller keeps
 * mapped as long as the elf_file is used.  Nothing is copied from the
 * symbol table: symbols are decoded on demand by elf_sym().
 *
 * Malformed input never crashes the parser.  A problem that makes the
 * whole file unusable returns ST_MALFORMED with the offset in the diag; a
 * problem in one table drops that table and is recorded in ->problem (the
 * first one) so callers can report it and still use the rest.
 */
#ifndef ABISCOPE_ELF_H
#define ABISCOPE_ELF_H

#include "core/arena.h"
#include "core/bytes.h"
#include "core/diag.h"

/* ELF constants we use (from the gABI), so no <elf.h> dependency. */
enum {
	ELF_CLASS32 = 1, ELF_CLASS64 = 2,
	ELF_DATA_LSB = 1, ELF_DATA_MSB = 2,
	ET_REL_ = 1, ET_EXEC_ = 2, ET_DYN_ = 3, ET_CORE_ = 4,
	PT_LOAD_ = 1, PT_DYNAMIC_ = 2, PT_INTERP_ = 3, PT_NOTE_ = 4, PT_PHDR_ = 6, PT_TLS_ = 7,
	PT_GNU_STACK_ = 0x6474e551, PT_GNU_RELRO_ = 0x6474e552, PT_GNU_PROPERTY_ = 0x6474e553,
	PF_X_ = 1, PF_W_ = 2, PF_R_ = 4,
	SHT_DYNAMIC_ = 6, SHT_DYNSYM_ = 11, SHT_NOBITS_ = 8,
	STB_LOCAL_ = 0, STB_GLOBAL_ = 1, STB_WEAK_ = 2, STB_GNU_UNIQUE_ = 10,
	STT_NOTYPE_ = 0, STT_OBJECT_ = 1, STT_FUNC_ = 2, STT_SECTION_ = 3, STT_FILE_ = 4,
	STT_COMMON_ = 5, STT_TLS_ = 6, STT_GNU_IFUNC_ = 10,
	STV_DEFAULT_ = 0, STV_INTERNAL_ = 1, STV_HIDDEN_ = 2, STV_PROTECTED_ = 3,
	SHN_UNDEF_ = 0, SHN_ABS_ = 0xfff1, SHN_COMMON_ = 0xfff2,
	VER_FLG_BASE_ = 1, VER_FLG_WEAK_ = 2,
	DF_ORIGIN_ = 1, DF_SYMBOLIC_ = 2, DF_TEXTREL_ = 4, DF_BIND_NOW_ = 8, DF_STATIC_TLS_ = 0x10,
	DF_1_NOW_ = 1, DF_1_GLOBAL_ = 2, DF_1_NODELETE_ = 8, DF_1_NOOPEN_ = 0x40,
	DF_1_ORIGIN_ = 0x80, DF_1_NODEFLIB_ = 0x800, DF_1_PIE_ = 0x08000000,
	/* a DT_VERSYM entry: the version index and the hidden bit */
	VERSYM_INDEX_ = 0x7fff, VERSYM_HIDDEN_ = 0x8000,
};

/* Dynamic tags (gABI and GNU extensions): the one list, for the reader
 * (elf.c) and the snapshot's ELF synthesis (host/synth.c). */
enum {
	DT_NULL_ = 0, DT_NEEDED_ = 1, DT_PLTRELSZ_ = 2, DT_HASH_ = 4, DT_STRTAB_ = 5,
	DT_SYMTAB_ = 6, DT_RELA_ = 7, DT_RELASZ_ = 8, DT_RELAENT_ = 9, DT_STRSZ_ = 10,
	DT_SYMENT_ = 11, DT_INIT_ = 12, DT_SONAME_ = 14, DT_RPATH_ = 15, DT_SYMBOLIC_ = 16, DT_REL_ = 17,
	DT_RELSZ_ = 18, DT_RELENT_ = 19, DT_PLTREL_ = 20, DT_TEXTREL_ = 22, DT_JMPREL_ = 23,
	DT_BIND_NOW_ = 24, DT_INIT_ARRAY_ = 25, DT_INIT_ARRAYSZ_ = 27, DT_RUNPATH_ = 29, DT_FLAGS_ = 30, DT_RELRSZ_ = 35, DT_RELR_ = 36,
	DT_GNU_HASH_ = 0x6ffffef5, DT_VERSYM_ = 0x6ffffff0, DT_RELACOUNT_ = 0x6ffffff9,
	DT_RELCOUNT_ = 0x6ffffffa, DT_FLAGS_1_ = 0x6ffffffb, DT_VERDEF_ = 0x6ffffffc,
	DT_VERDEFNUM_ = 0x6ffffffd, DT_VERNEED_ = 0x6ffffffe, DT_VERNEEDNUM_ = 0x6fffffff,
	DT_AUXILIARY_ = 0x7ffffffd, DT_FILTER_ = 0x7fffffff,
	DT_AARCH64_VARIANT_PCS_ = 0x70000005,	/* on aarch64 only (a DT_LOPROC tag) */
};

/* st_other's bit for a function with a variant procedure call standard
 * (SVE, vector PCS): the loader binds its PLT slot at load even lazily. */
#define STO_AARCH64_VARIANT_PCS_ 0x80

/* Marks an image synthesised from a snapshot (an OS-specific tag value). */
#define DT_ABISCOPE_HASHED 0x6ab15c00
/* ... whose exports were not recorded (only its name, needs and versions). */
#define DT_ABISCOPE_PARTIAL 0x6ab15c01
/* ... whose original the loader cannot load or dies on (a corrupt table):
 * the value is the DT_STRTAB offset of elf_fault_encode()'s text. */
#define DT_ABISCOPE_FAULT 0x6ab15c02

/* The 64-bit hash (FNV-1a) a snapshot stores an exported name under, and
 * the name a DT_ABISCOPE_HASHED image exports it as: "#" and 16 hex digits
 * (ELF_HASHED_NAME_SIZE bytes with the NUL). */
#define ELF_HASHED_NAME_SIZE 18
uint64_t elf_name_hash64(const char *name);
void elf_hashed_name(char out[ELF_HASHED_NAME_SIZE], uint64_t hash);

/* e_machine values abiscope names. */
enum {
	EM_386_ = 3, EM_ARM_ = 40, EM_X86_64_ = 62, EM_PPC64_ = 21, EM_S390_ = 22,
	EM_AARCH64_ = 183, EM_CUDA_ = 190, EM_RISCV_ = 243, EM_PPC_ = 20,
};

struct elf_segment {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz, align;
};

struct elf_section {
	const char *name;	/* "" when unnamed or unreadable */
	uint32_t type, link, info;
	uint64_t flags, addr, offset, size, entsize;
};

struct elf_verdef {
	uint16_t ndx, flags;	/* ndx without the hidden bit */
	uint16_t version;	/* vd_version: 1; glibc refuses anything else */
	uint32_t hash;
	const char *name;	/* read through vd_aux whatever vd_cnt says, as glibc does */
	bool aux_fault;		/* vd_aux leads outside the object's memory, */
	uint64_t aux_at;	/* to this address */
};

struct elf_vernaux {
	uint32_t hash;
	uint16_t flags, other;	/* other = version index, 0x8000 = hidden */
	const char *name;
};

struct elf_verneed {
	const char *file;
	struct elf_vernaux *aux;
	size_t naux;
};

struct elf_sym {
	const char *name;	/* "" when the name is unreadable */
	bool name_fault;	/* ... because it lies outside the object's memory */
	uint64_t value, size;
	uint8_t bind, type, visibility;
	uint8_t other;		/* st_other whole (visibility and machine bits) */
	uint16_t shndx;
	uint16_t versym;	/* raw versym entry (0 when none) */
};

/*
 * What kills the process, or fails it with a fixed text, when the loader
 * works on a corrupt table of this object.  phase: when it
 * happens, in glibc's order: at map time (the hash table's set-up, the
 * DT_NEEDED and search path strings), while relocating (entry `index` of
 * `table`), or when a symbol lookup walks the object's hash table.
 */
enum elf_fault_phase { FAULT_NONE = 0, FAULT_MAP, FAULT_RELOC, FAULT_LOOKUP };
struct elf_fault {
	enum elf_fault_phase phase;
	const char *table;	/* "DT_GNU_HASH", "DT_RELA entry 3", ... */
	const char *what;	/* what the loader does there, for the explanation */
	uint64_t at;		/* the address it reads or writes */
	int signal;		/* 11 (SIGSEGV), 8 (SIGFPE); 0: dlerror or assertion */
	const char *dlerror;	/* the exact text, without the "NAME: " prefix, when
				 * signal is 0 and assert_expr NULL */
	const char *assert_file, *assert_fn, *assert_expr;
	int assert_line;	/* in glibc 2.36 */
	bool guess;		/* depends on what lies outside the object (memory layout) */
};

/* A relocation table as the loader sees it: entries decoded on demand. */
struct elf_reltab {
	struct bytes data;	/* the entries */
	uint64_t count;
	uint64_t vaddr;		/* where the loader finds it (for range arithmetic) */
	bool rela;		/* Elf_Rela (with addend) rather than Elf_Rel */
	const char *tag;	/* "DT_RELA", "DT_REL", "DT_JMPREL" */
	bool present;		/* the tag is there (its value may be 0) */
};

/*
 * Linkers make hash chains of a few words; no walk of a real library comes
 * near ELF_LONG_WALK.  The words past it that an object's walks may read
 * in a scan: a multiple of its symbols, so that the cost of any table stays
 * linear in its size.
 */
#define ELF_LONG_WALK 1024u
#define ELF_LONG_WALK_ALLOWANCE(nsyms) (64 * ((uint64_t)(nsyms) + 4096) + (UINT64_C(1) << 22))

struct elf_file {
	struct bytes raw;
	const char *path;	/* for messages; not owned */
	/* the page size the loader maps it with (AT_PAGESZ of the process):
	 * what the memory image below is made of */
	uint64_t page_size;
	bool is64, big_endian;
	uint8_t osabi, abiversion, ident_version;
	uint16_t type, machine;
	uint32_t version, flags;
	uint16_t phentsize, shentsize;

	struct elf_segment *seg;
	size_t nseg;
	struct elf_section *sec;
	size_t nsec;

	/* dynamic section */
	bool has_dynamic;
	const char **needed;
	size_t nneeded;
	const char **filter, **auxiliary;	/* DT_FILTER, DT_AUXILIARY */
	size_t nfilter, nauxiliary;
	const char *soname, *rpath, *runpath;	/* NULL when absent */
	uint64_t dt_flags, dt_flags_1;
	bool dt_bind_now, dt_textrel, dt_symbolic;
	bool aarch64_variant_pcs;	/* DT_AARCH64_VARIANT_PCS: some symbols use a variant PCS */
	/* An image abiscope synthesised from a snapshot: exported symbols are
	 * named "#<16 hex digits of elf_name_hash64(name)>" (DT_ABISCOPE_HASHED). */
	bool hashed_names;
	bool exports_unknown;	/* DT_ABISCOPE_PARTIAL */
	struct bytes dynstr;
	bool has_constructors;		/* DT_INIT or a non-empty DT_INIT_ARRAY */

	/* dynamic symbols */
	struct bytes dynsym;
	uint32_t nsyms;
	uint32_t syment;
	/* Chain words the walks of its hash table may still read past the
	 * first ELF_LONG_WALK of a walk (symtab.h), for the whole scan; NULL:
	 * no limit.  A table whose chains run thousands of words makes every
	 * lookup in it walk them: without an allowance, quadratic. */
	uint64_t *long_walk_left;
	struct bytes versym;	/* len 0 when absent */
	uint64_t versym_vaddr;	/* DT_VERSYM, when present (has_versym_tag) */
	bool has_versym_tag;
	struct elf_verdef *verdef;
	size_t nverdef;
	struct elf_verneed *verneed;
	size_t nverneed;
	uint32_t version_index_max;	/* highest ndx in verdef/verneed */
	/* The version tables as the loader walks them (dl-version.c): in the
	 * object's memory image, by vn_aux/vna_next/vn_next and vd_aux/vd_next,
	 * ignoring vn_cnt, vd_cnt and DT_VERNEEDNUM.  A walk that leaves the
	 * image stops there: *_fault, at the address it would read. */
	bool dt_strtab, dt_verneed, dt_verdef;	/* the tags are present */
	uint64_t dt_verdef_value;		/* glibc asserts it is not 0 */
	uint16_t verneed_version;		/* the first record's vn_version */
	bool verneed_fault, verdef_fault;
	uint64_t verneed_fault_at, verdef_fault_at;
	/* elf_get_dynamic_info's assertion the dynamic section fails
	 * (get-dynamic-info.h: DT_PLTREL not DT_RELA, DT_RELAENT not the size
	 * of an Elf_Rela...): the expression and its line in glibc 2.36 */
	const char *dyn_assert;
	int dyn_assert_line;
	/* a relocation table the loader reads that is not all in the memory
	 * image: its tag ("DT_RELA"), NULL when none */
	const char *reloc_fault_table;
	uint64_t reloc_fault_at;
	/* x86-64: one of the first DT_RELACOUNT relocations is not
	 * R_X86_64_RELATIVE (elf_machine_rela_relative asserts it is) */
	bool relative_assert;
	/* what call_init would jump to or read outside the image: DT_INIT
	 * outside executable memory, DT_INIT_ARRAY outside memory ("DT_INIT"
	 * or "DT_INIT_ARRAY", NULL when neither) */
	const char *init_fault;
	uint64_t init_fault_at;
	/* "DT_INIT_ARRAY entry": entry init_fault_index is called at
	 * init_fault_at, outside its code (unrelocated: no relocation writes
	 * it, its raw value is called) */
	uint64_t init_fault_index;
	bool init_fault_unrelocated;
	/* The DT_JMPREL symbols a constructor (DT_INIT, a DT_INIT_ARRAY entry)
	 * calls directly through the PLT or its GOT slot, as its first bytes
	 * show (x86-64; initcheck.h): a lazy slot left unresolved ends the
	 * process when the constructor runs.  Symbol indices; NULL when none. */
	const uint32_t *ctor_plt_syms;
	size_t nctor_plt_syms;
	uint64_t *ctor_funcs;		/* the constructors' addresses (arena), while parsing */
	size_t nctor_funcs;
	/* the first map-time fault (elf_parse), and one a snapshot carries
	 * (phase FAULT_RELOC or FAULT_LOOKUP: the loader model reports it
	 * when relocating the object) */
	struct elf_fault map_fault, carried_fault;
	uint64_t strtab_vaddr, symtab_vaddr;	/* DT_STRTAB, DT_SYMTAB (0 when absent) */
	bool has_symtab_tag;
	bool symtab_not_table;	/* DT_SYMTAB's entry 0 is not the null symbol */

	/* hash tables (one or both) */
	bool has_gnu_hash, has_sysv_hash;
	uint32_t gnu_nbuckets, gnu_symoffset, gnu_bloom_size, gnu_bloom_shift;
	/* where the loader finds them in memory; the windows above hold what
	 * the file has there (empty when not all of it: read the image) */
	uint64_t gnu_bloom_vaddr, gnu_buckets_vaddr, gnu_chain_vaddr;
	bool gnu_hash_fault;	/* DT_GNU_HASH's header is outside the object's memory */
	struct bytes gnu_bloom, gnu_buckets, gnu_chain;	/* chain indexed from symoffset */
	uint32_t sysv_nbucket, sysv_nchain;
	struct bytes sysv_bucket, sysv_chain;

	/* relocations */
	struct elf_reltab rel, rela, jmprel;
	uint64_t relcount, relacount;	/* DT_RELCOUNT / DT_RELACOUNT */
	bool jmprel_is_rela;
	bool has_relr;

	/* other load-relevant facts */
	const char *interp;
	bool has_tls;
	uint64_t tls_memsz, tls_align, tls_vaddr;
	bool has_gnu_stack;
	uint32_t gnu_stack_flags;

	/* first problem met in an optional table, or NULL */
	const char *problem;
	uint64_t problem_offset;

	/* The checks that read whole relocation tables (relative_assert and the
	 * DT_INIT_ARRAY entries' init_fault, initcheck.h) are still to be made
	 * by elf_check_tables(): elf_parse_lazy leaves them, since an object
	 * that is never relocated needs neither, and what they read is
	 * megabytes (every relative relocation) */
	bool tables_pending;
	uint64_t init_array, init_entries, relr, relrsz;	/* what they need of the dynamic section */
	uint64_t init_fn;	/* DT_INIT, when has_init_fn: its direct calls (ctor_plt_syms) */
	bool has_init_fn;
};

/*
 * Parses raw.  Fails (ST_MALFORMED, ST_UNSUPPORTED) only when the header
 * itself is unusable; table-level damage goes to ef->problem.
 */
enum status elf_parse(struct arena *a, struct bytes raw, const char *path, struct elf_file *ef,
		      struct diag *d);
/* The same for a process whose pages are page_size bytes (elf_parse: 4096). */
enum status elf_parse_paged(struct arena *a, struct bytes raw, const char *path, uint64_t page_size,
			    struct elf_file *ef, struct diag *d);

/* elf_parse_paged without the checks over whole relocation tables
 * (ef->tables_pending); elf_check_tables() makes them, once, before
 * relative_assert or init_fault is read. */
enum status elf_parse_lazy(struct arena *a, struct bytes raw, const char *path, uint64_t page_size,
			   struct elf_file *ef, struct diag *d);
void elf_check_tables(struct arena *a, struct elf_file *ef);

/* True when the window starts with the ELF magic. */
bool elf_has_magic(const uint8_t *head, size_t len);

/* The u16 / u32 at vaddr in the object's memory image as glibc's
 * _dl_map_segments lays it out: page-granular file mappings of each
 * PT_LOAD, zeros from p_filesz to p_memsz.  false: the address is in no
 * segment (a hole, or outside), where the real loader's read faults. */
bool elf_image_u16(const struct elf_file *ef, uint64_t vaddr, uint16_t *out);
bool elf_image_u32(const struct elf_file *ef, uint64_t vaddr, uint32_t *out);
bool elf_image_u64(const struct elf_file *ef, uint64_t vaddr, uint64_t *out);

/* Whether [vaddr, vaddr + size) is all in the object's memory image;
 * else *gap: the first address that is not. */
bool elf_image_covers(const struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t *gap);
/* Whether vaddr lies in the pages of an executable / writable PT_LOAD. */
bool elf_image_executable(const struct elf_file *ef, uint64_t vaddr);
bool elf_image_writable(const struct elf_file *ef, uint64_t vaddr, uint64_t size);
/* The same, for a run of questions about one object (its relocations):
 * w (zeroed first) remembers the last writable window found, and a write
 * inside it is answered without a pass over the segments. */
struct elf_window {
	uint64_t start, stop;
};
/* Whether size bytes at vaddr lie in w: the fast path, inline, for loops
 * over a million relocations. */
static inline bool elf_window_holds(const struct elf_window *w, uint64_t vaddr, uint64_t size)
{
	return vaddr >= w->start && vaddr < w->stop && size <= w->stop - vaddr;
}
bool elf_writable_cached(const struct elf_file *ef, struct elf_window *w, uint64_t vaddr, uint64_t size);
/* The NUL-terminated string at vaddr in the image (NULL when it runs
 * outside the image: the loader's read faults there; "" in zero fill). */
const char *elf_image_str(const struct elf_file *ef, uint64_t vaddr);

/* A fault as one line of text (a snapshot carries it), and back
 * (elf/fault.c).  decode: false when the text is not one. */
const char *elf_fault_encode(struct arena *a, const struct elf_fault *f);
bool elf_fault_decode(struct arena *a, const char *text, struct elf_fault *f);

/* Translates a virtual address to a file offset through PT_LOAD. */
bool elf_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t size,
			 uint64_t *off);

/*
 * Field loads inside a record whose whole extent bytes_at() has already
 * proved to lie in its window: one bounds check per record instead of one
 * per field (the hot loops: symbols, hash chains, relocations).  In the
 * window's byte order; no alignment assumed.
 */
static inline uint16_t elf_load_u16(const uint8_t *p, bool big)
{
	return big ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t elf_load_u32(const uint8_t *p, bool big)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return big == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? v : __builtin_bswap32(v);
}

static inline uint64_t elf_load_u64(const uint8_t *p, bool big)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return big == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? v : __builtin_bswap64(v);
}

/* Decodes dynamic symbol idx; false when out of range. */
bool elf_sym(const struct elf_file *ef, uint32_t idx, struct elf_sym *out);
/* The same without the name and version (no string is looked at): what
 * relocation scanning needs to tell undefined globals from the rest. */
bool elf_sym_head(const struct elf_file *ef, uint32_t idx, struct elf_sym *out);
/* Name of dynamic symbol idx without decoding the rest. */
const char *elf_sym_name(const struct elf_file *ef, uint32_t idx);

/* The verdef / verneed entry carrying version index ndx, or NULL. */
const struct elf_verdef *elf_verdef_by_index(const struct elf_file *ef, uint16_t ndx);
const struct elf_vernaux *elf_vernaux_by_index(const struct elf_file *ef, uint16_t ndx,
					       const char **file);

/*
 * glibc's l_versions table: slot i describes version index i, from the
 * version requirements (with the file and hidden bit) and from the
 * non-base version definitions.  Returns the number of slots, 0 when the
 * object has no version index above 0 (glibc then ignores DT_VERSYM).
 */
struct elf_vslot {
	uint32_t hash;
	const char *name;	/* NULL for an unused slot */
	const char *file;	/* verneed file, NULL for a definition */
	bool hidden;
};
size_t elf_version_slots(struct arena *a, const struct elf_file *ef, struct elf_vslot **out);

/* The GNU (dl_new_hash) and SysV (ELF) hash functions. */
uint32_t elf_gnu_hash(const char *name);
uint32_t elf_sysv_hash(const char *name);

/* A section by name, or NULL. */
const struct elf_section *elf_section_by_name(const struct elf_file *ef, const char *name);
/* The bytes of a section (empty for NOBITS or out of range). */
bool elf_section_bytes(const struct elf_file *ef, const struct elf_section *s, struct bytes *out);

/* Printable names for messages. */
const char *elf_machine_name(uint16_t machine);
const char *elf_class_name(bool is64);

#endif
