#include "elf/elf.h"
#include "elf/initcheck.h"
#include "core/hashmap.h"

/* Limits on input-driven counts: far above anything real, far below harm. */
#define MAX_DYN_ENTRIES (1u << 20)
#define MAX_VERSIONS 65535u
#define MAX_SECTIONS (1u << 22)

static void note_problem(struct elf_file *ef, uint64_t off, const char *msg)
{
	if (!ef->problem) {
		ef->problem = msg;
		ef->problem_offset = off;
	}
}

bool elf_has_magic(const uint8_t *head, size_t len)
{
	return len >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
}

const char *elf_class_name(bool is64)
{
	return is64 ? "ELFCLASS64" : "ELFCLASS32";
}

const char *elf_machine_name(uint16_t m)
{
	switch (m) {
	case EM_386_: return "i386";
	case EM_ARM_: return "arm";
	case EM_X86_64_: return "x86-64";
	case EM_PPC_: return "ppc";
	case EM_PPC64_: return "ppc64";
	case EM_S390_: return "s390";
	case EM_AARCH64_: return "aarch64";
	case EM_CUDA_: return "cuda";
	case EM_RISCV_: return "riscv";
	case 2: return "sparc";
	case 8: return "mips";
	case 43: return "sparcv9";
	case 258: return "loongarch";
	}
	return "unknown";
}

/* ---- headers ---- */

static bool read_header(struct elf_file *ef, uint64_t *phoff, uint64_t *shoff, uint16_t *phnum,
			uint16_t *shnum, uint16_t *shstrndx, struct diag *d)
{
	const struct bytes *b = &ef->raw;
	uint8_t cls, data;
	if (!elf_has_magic(b->data, b->len)) {
		diag_set(d, ST_MALFORMED, ef->path, 0, "not an ELF file (bad magic)");
		return false;
	}
	if (b->len < 52 || !bytes_u8(b, 4, &cls) || !bytes_u8(b, 5, &data)) {
		diag_set(d, ST_MALFORMED, ef->path, 0, "ELF header truncated");
		return false;
	}
	if (cls != ELF_CLASS32 && cls != ELF_CLASS64) {
		diag_set(d, ST_MALFORMED, ef->path, 4, "invalid ELF class %u", cls);
		return false;
	}
	if (data != ELF_DATA_LSB && data != ELF_DATA_MSB) {
		diag_set(d, ST_MALFORMED, ef->path, 5, "invalid ELF data encoding %u", data);
		return false;
	}
	ef->is64 = cls == ELF_CLASS64;
	ef->big_endian = data == ELF_DATA_MSB;
	ef->raw.big_endian = ef->big_endian;
	if (ef->is64 && b->len < 64) {
		diag_set(d, ST_MALFORMED, ef->path, 0, "ELF header truncated");
		return false;
	}
	bytes_u8(b, 6, &ef->ident_version);
	bytes_u8(b, 7, &ef->osabi);
	bytes_u8(b, 8, &ef->abiversion);
	bytes_u16(b, 16, &ef->type);
	bytes_u16(b, 18, &ef->machine);
	bytes_u32(b, 20, &ef->version);
	if (ef->is64) {
		bytes_u64(b, 32, phoff);
		bytes_u64(b, 40, shoff);
		bytes_u32(b, 48, &ef->flags);
		bytes_u16(b, 54, &ef->phentsize);
		bytes_u16(b, 56, phnum);
		bytes_u16(b, 58, &ef->shentsize);
		bytes_u16(b, 60, shnum);
		bytes_u16(b, 62, shstrndx);
	} else {
		uint32_t v;
		bytes_u32(b, 28, &v);
		*phoff = v;
		bytes_u32(b, 32, &v);
		*shoff = v;
		bytes_u32(b, 36, &ef->flags);
		bytes_u16(b, 42, &ef->phentsize);
		bytes_u16(b, 44, phnum);
		bytes_u16(b, 46, &ef->shentsize);
		bytes_u16(b, 48, shnum);
		bytes_u16(b, 50, shstrndx);
	}
	return true;
}

static bool read_section_header(const struct elf_file *ef, uint64_t off, struct elf_section *s,
				uint32_t *name_off)
{
	const struct bytes *b = &ef->raw;
	if (ef->is64) {
		return bytes_u32(b, off, name_off) && bytes_u32(b, off + 4, &s->type) &&
		       bytes_u64(b, off + 8, &s->flags) && bytes_u64(b, off + 16, &s->addr) &&
		       bytes_u64(b, off + 24, &s->offset) && bytes_u64(b, off + 32, &s->size) &&
		       bytes_u32(b, off + 40, &s->link) && bytes_u32(b, off + 44, &s->info) &&
		       bytes_u64(b, off + 56, &s->entsize);
	}
	uint32_t f, ad, of, sz, es;
	if (!(bytes_u32(b, off, name_off) && bytes_u32(b, off + 4, &s->type) &&
	      bytes_u32(b, off + 8, &f) && bytes_u32(b, off + 12, &ad) &&
	      bytes_u32(b, off + 16, &of) && bytes_u32(b, off + 20, &sz) &&
	      bytes_u32(b, off + 24, &s->link) && bytes_u32(b, off + 28, &s->info) &&
	      bytes_u32(b, off + 36, &es)))
		return false;
	s->flags = f;
	s->addr = ad;
	s->offset = of;
	s->size = sz;
	s->entsize = es;
	return true;
}

static void read_sections(struct arena *a, struct elf_file *ef, uint64_t shoff, uint32_t shnum,
			  uint32_t shstrndx)
{
	uint32_t want = ef->is64 ? 64 : 40;
	if (shoff == 0)
		return;
	if (ef->shentsize != want) {
		note_problem(ef, shoff, "section header entry size is wrong");
		return;
	}
	uint32_t *name_off = NULL;
	if (shnum == 0 || shnum > MAX_SECTIONS || !bytes_has(&ef->raw, shoff, (uint64_t)shnum * want)) {
		if (shnum)
			note_problem(ef, shoff, "section header table outside the file");
		return;
	}
	ef->sec = arena_calloc(a, shnum, sizeof *ef->sec);
	name_off = arena_calloc(a, shnum, sizeof *name_off);
	ef->nsec = shnum;
	for (uint32_t i = 0; i < shnum; i++) {
		if (!read_section_header(ef, shoff + (uint64_t)i * want, &ef->sec[i], &name_off[i])) {
			ef->nsec = i;
			break;
		}
		ef->sec[i].name = "";
	}
	if (shstrndx >= ef->nsec)
		return;
	struct bytes strtab;
	const struct elf_section *ss = &ef->sec[shstrndx];
	if (ss->type == SHT_NOBITS_ || !bytes_sub(&ef->raw, ss->offset, ss->size, &strtab)) {
		note_problem(ef, shoff, "section name table outside the file");
		return;
	}
	for (size_t i = 0; i < ef->nsec; i++) {
		const char *n;
		if (bytes_cstr(&strtab, name_off[i], &n, NULL))
			ef->sec[i].name = n;
	}
}

static void read_segments(struct arena *a, struct elf_file *ef, uint64_t phoff, uint32_t phnum)
{
	uint32_t want = ef->is64 ? 56 : 32;
	if (phnum == 0)
		return;
	if (ef->phentsize != want) {
		note_problem(ef, phoff, "program header entry size is wrong");
		return;
	}
	if (!bytes_has(&ef->raw, phoff, (uint64_t)phnum * want)) {
		note_problem(ef, phoff, "program header table outside the file");
		return;
	}
	ef->seg = arena_calloc(a, phnum, sizeof *ef->seg);
	ef->nseg = phnum;
	const struct bytes *b = &ef->raw;
	for (uint32_t i = 0; i < phnum; i++) {
		uint64_t o = phoff + (uint64_t)i * want;
		struct elf_segment *s = &ef->seg[i];
		if (ef->is64) {
			bytes_u32(b, o, &s->type);
			bytes_u32(b, o + 4, &s->flags);
			bytes_u64(b, o + 8, &s->offset);
			bytes_u64(b, o + 16, &s->vaddr);
			bytes_u64(b, o + 32, &s->filesz);
			bytes_u64(b, o + 40, &s->memsz);
			bytes_u64(b, o + 48, &s->align);
		} else {
			uint32_t v[8];
			for (int k = 0; k < 8; k++)
				bytes_u32(b, o + 4u * (uint32_t)k, &v[k]);
			s->type = v[0];
			s->offset = v[1];
			s->vaddr = v[2];
			s->filesz = v[4];
			s->memsz = v[5];
			s->flags = v[6];
			s->align = v[7];
		}
	}
}

/* Outside [p_vaddr, p_vaddr + p_filesz), the loader still sees the file:
 * _dl_map_segments maps whole pages, from the page p_offset lies in to
 * the page p_vaddr + p_filesz ends in (the rest of that last page is
 * cleared when zero fill follows).  A table there is read from those
 * bytes. */
static bool image_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t *off)
{
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		uint64_t span = MAX(s->filesz, s->memsz);
		if (s->type != PT_LOAD_ || s->vaddr > UINT64_MAX - span - 2 * ef->page_size)
			continue;
		uint64_t mapstart = s->vaddr & ~(uint64_t)(ef->page_size - 1);
		uint64_t dataend = s->vaddr + s->filesz;
		uint64_t end = s->memsz > s->filesz ? dataend
						    : (dataend + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		if (vaddr < mapstart || vaddr > end || size > end - vaddr)
			continue;
		*off = (s->offset & ~(uint64_t)(ef->page_size - 1)) + (vaddr - mapstart);
		return bytes_has(&ef->raw, *off, size);
	}
	return false;
}

bool elf_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t *off)
{
	bool any_load = false;
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type != PT_LOAD_)
			continue;
		any_load = true;
		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
		    size <= s->filesz - (vaddr - s->vaddr)) {
			*off = s->offset + (vaddr - s->vaddr);
			return bytes_has(&ef->raw, *off, size);
		}
	}
	if (any_load)
		return image_offset(ef, vaddr, size, off);
	/* No program headers: fall back to allocated sections. */
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		if (s->type == SHT_NOBITS_ || !(s->flags & 2 /* SHF_ALLOC */))
			continue;
		if (vaddr >= s->addr && vaddr - s->addr <= s->size &&
		    size <= s->size - (vaddr - s->addr)) {
			*off = s->offset + (vaddr - s->addr);
			return bytes_has(&ef->raw, *off, size);
		}
	}
	return false;
}

/* A window at a virtual address, clipped to what the PT_LOAD holds. */
static bool window_at_vaddr(const struct elf_file *ef, uint64_t vaddr, uint64_t size,
			    struct bytes *out)
{
	uint64_t off;
	if (!elf_vaddr_to_offset(ef, vaddr, size, &off))
		return false;
	return bytes_sub(&ef->raw, off, size, out);
}

/* ---- dynamic section ---- */

struct dyn_raw {
	uint64_t strtab, strsz, symtab, syment, hash, gnu_hash, versym;
	uint64_t verdef, verdefnum, verneed, verneednum;
	uint64_t rel, relsz, relent, rela, relasz, relaent, jmprel, pltrelsz, pltrel;
	uint64_t relcount, relacount, relr, relrsz;
	bool has_strtab, has_symtab, has_hash, has_gnu_hash, has_versym, has_verdef, has_verneed;
	bool has_rel, has_rela, has_jmprel, has_pltrel, has_soname, has_rpath, has_runpath;
	bool has_relent, has_relaent;
	uint64_t init, init_array, init_arraysz;
	bool has_init, has_init_array;
	uint64_t soname, rpath, runpath, fault;
	bool has_fault;
	uint64_t *needed, *filter, *aux;
	size_t nneeded, nfilter, naux;
};

static bool find_dynamic(const struct elf_file *ef, struct bytes *dyn)
{
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type == PT_DYNAMIC_) {
			/* glibc reads it at p_vaddr (l_ld), not at p_offset */
			uint64_t off;
			if (elf_vaddr_to_offset(ef, s->vaddr, s->filesz, &off) &&
			    bytes_sub(&ef->raw, off, s->filesz, dyn))
				return true;
			if (bytes_sub(&ef->raw, s->offset, s->filesz, dyn))
				return true;
			/* Truncated file: take what is there. */
			if (s->offset < ef->raw.len)
				return bytes_sub(&ef->raw, s->offset, ef->raw.len - s->offset, dyn);
			return false;
		}
	}
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		if (s->type == SHT_DYNAMIC_ && bytes_sub(&ef->raw, s->offset, s->size, dyn))
			return true;
	}
	return false;
}

static void push_u64(struct arena *a, uint64_t **arr, size_t *n, uint64_t v)
{
	/* Capacity is 4, 8, 16...: grow when n reaches one of those. */
	if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0)) {
		size_t cap = *n ? *n * 2 : 4;
		*arr = arena_grow(a, *arr, *n, cap, sizeof **arr);
	}
	(*arr)[(*n)++] = v;
}

static void read_dynamic_entries(struct arena *a, struct elf_file *ef, struct bytes dyn,
				 struct dyn_raw *r)
{
	uint64_t entsz = ef->is64 ? 16 : 8;
	uint64_t n = dyn.len / entsz;
	if (n > MAX_DYN_ENTRIES)
		n = MAX_DYN_ENTRIES;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t tag, val;
		bytes_word(&dyn, i * entsz, ef->is64, &tag);
		bytes_word(&dyn, i * entsz + entsz / 2, ef->is64, &val);
		if (!ef->is64)
			tag = (uint64_t)(int64_t)(int32_t)tag;
		if (tag == DT_NULL_)
			break;
		/* As in glibc's get-dynamic-info, a repeated tag: the last wins. */
		switch (tag) {
		case DT_NEEDED_: push_u64(a, &r->needed, &r->nneeded, val); break;
		case DT_FILTER_: push_u64(a, &r->filter, &r->nfilter, val); break;
		case DT_AUXILIARY_: push_u64(a, &r->aux, &r->naux, val); break;
		case DT_STRTAB_: r->strtab = val; r->has_strtab = true; break;
		case DT_STRSZ_: r->strsz = val; break;
		case DT_INIT_: ef->has_constructors |= val != 0; r->init = val; r->has_init = true; break;
		case DT_INIT_ARRAY_: r->init_array = val; r->has_init_array = true; break;
		case DT_INIT_ARRAYSZ_: ef->has_constructors |= val != 0; r->init_arraysz = val; break;
		case DT_SYMTAB_: r->symtab = val; r->has_symtab = true; break;
		case DT_SYMENT_: r->syment = val; break;
		case DT_HASH_: r->hash = val; r->has_hash = true; break;
		case DT_GNU_HASH_: r->gnu_hash = val; r->has_gnu_hash = true; break;
		case DT_VERSYM_: r->versym = val; r->has_versym = true; break;
		case DT_VERDEF_: r->verdef = val; r->has_verdef = true; break;
		case DT_VERDEFNUM_: r->verdefnum = val; break;
		case DT_VERNEED_: r->verneed = val; r->has_verneed = true; break;
		case DT_VERNEEDNUM_: r->verneednum = val; break;
		case DT_SONAME_: r->soname = val; r->has_soname = true; break;
		case DT_RPATH_: r->rpath = val; r->has_rpath = true; break;
		case DT_RUNPATH_: r->runpath = val; r->has_runpath = true; break;
		case DT_FLAGS_: ef->dt_flags = val; break;
		case DT_FLAGS_1_: ef->dt_flags_1 = val; break;
		case DT_BIND_NOW_: ef->dt_bind_now = true; break;
		case DT_TEXTREL_: ef->dt_textrel = true; break;
		case DT_SYMBOLIC_: ef->dt_symbolic = true; break;
		case DT_AARCH64_VARIANT_PCS_: ef->aarch64_variant_pcs = ef->machine == EM_AARCH64_; break;
		case DT_ABISCOPE_HASHED: ef->hashed_names = true; break;
		case DT_ABISCOPE_PARTIAL: ef->exports_unknown = true; break;
		case DT_ABISCOPE_FAULT: r->fault = val; r->has_fault = true; break;
		case DT_REL_: r->rel = val; r->has_rel = true; break;
		case DT_RELSZ_: r->relsz = val; break;
		case DT_RELENT_: r->relent = val; r->has_relent = true; break;
		case DT_RELA_: r->rela = val; r->has_rela = true; break;
		case DT_RELASZ_: r->relasz = val; break;
		case DT_RELAENT_: r->relaent = val; r->has_relaent = true; break;
		case DT_JMPREL_: r->jmprel = val; r->has_jmprel = true; break;
		case DT_PLTRELSZ_: r->pltrelsz = val; break;
		case DT_PLTREL_: r->pltrel = val; r->has_pltrel = true; break;
		case DT_RELCOUNT_: r->relcount = val; break;
		case DT_RELACOUNT_: r->relacount = val; break;
		case DT_RELR_: r->relr = val; break;
		case DT_RELRSZ_: r->relrsz = val; break;
		default: break;
		}
	}
}

static const char *dynstr_at(struct elf_file *ef, uint64_t off)
{
	const char *s;
	if (bytes_cstr(&ef->dynstr, off, &s, NULL))
		return s;
	/* glibc reads these strings at DT_STRTAB + offset in memory and never
	 * looks at DT_STRSZ (patchelf 0.14 wrote entries past it): so does the
	 * model. */
	if (ef->dt_strtab && (s = elf_image_str(ef, ef->strtab_vaddr + off)) != NULL) {
		note_problem(ef, off, "dynamic string past DT_STRSZ (the loader uses it)");
		return s;
	}
	note_problem(ef, off, "dynamic string outside the string table");
	return NULL;
}

static const char **strings_from(struct arena *a, struct elf_file *ef, const uint64_t *offs,
				 size_t n, size_t *nout)
{
	const char **out = arena_calloc(a, n ? n : 1, sizeof *out);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = dynstr_at(ef, offs[i]);
		if (s)
			out[k++] = s;
	}
	*nout = k;
	return out;
}

/* ---- the memory image (_dl_map_segments) ---- */

static bool image_byte(const struct elf_file *ef, uint64_t vaddr, uint8_t *out)
{
	bool any_load = false;
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type != PT_LOAD_)
			continue;
		any_load = true;
		uint64_t span = MAX(s->filesz, s->memsz);
		if (s->vaddr > UINT64_MAX - span - 2 * ef->page_size)
			continue;	/* glibc could not map it either */
		uint64_t mapstart = s->vaddr & ~(uint64_t)(ef->page_size - 1);
		uint64_t dataend = s->vaddr + s->filesz, allocend = s->vaddr + s->memsz;
		uint64_t mapend = (dataend + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		uint64_t zeroend = (allocend + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		bool zero_fill = allocend > dataend;
		if (vaddr < mapstart)
			continue;
		if (vaddr < mapend) {
			if (zero_fill && vaddr >= dataend) {
				*out = 0;	/* the rest of the last file page is cleared */
				return true;
			}
			/* a page past the end of the file: SIGBUS */
			return bytes_u8(&ef->raw, (s->offset & ~(uint64_t)(ef->page_size - 1)) + (vaddr - mapstart), out);
		}
		if (zero_fill && vaddr < zeroend) {
			*out = 0;
			return true;
		}
	}
	uint64_t off;
	return !any_load && elf_vaddr_to_offset(ef, vaddr, 1, &off) && bytes_u8(&ef->raw, off, out);
}

static bool image_read(const struct elf_file *ef, uint64_t vaddr, uint8_t *buf, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (vaddr + i < vaddr || !image_byte(ef, vaddr + i, &buf[i]))
			return false;
	return true;
}

const char *elf_image_str(const struct elf_file *ef, uint64_t vaddr)
{
	bool any_load = false;
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type != PT_LOAD_)
			continue;
		any_load = true;
		uint64_t span = MAX(s->filesz, s->memsz);
		if (s->vaddr > UINT64_MAX - span - 2 * ef->page_size)
			continue;
		uint64_t mapstart = s->vaddr & ~(uint64_t)(ef->page_size - 1);
		uint64_t dataend = s->vaddr + s->filesz;
		uint64_t mapend = (dataend + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		uint64_t zeroend = (s->vaddr + s->memsz + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		bool zero_fill = s->memsz > s->filesz;
		if (vaddr < mapstart || vaddr >= MAX(mapend, zero_fill ? zeroend : mapend))
			continue;
		if (zero_fill && vaddr >= dataend)
			return "";
		/* the file's pages as mapped; with zero fill, up to p_filesz */
		uint64_t fstart = s->offset & ~(uint64_t)(ef->page_size - 1);
		uint64_t len = (zero_fill ? dataend : mapend) - mapstart;
		struct bytes w;
		const char *str;
		if (fstart > ef->raw.len || !bytes_sub(&ef->raw, fstart, MIN(len, ef->raw.len - fstart), &w))
			return NULL;
		/* no NUL before the end: it runs into zeros (taken as a fault,
		 * rare), the next mapping, or past the file (SIGBUS) */
		return bytes_cstr(&w, vaddr - mapstart, &str, NULL) ? str : NULL;
	}
	uint64_t off;
	const char *str;
	if (!any_load && elf_vaddr_to_offset(ef, vaddr, 1, &off) && bytes_cstr(&ef->raw, off, &str, NULL))
		return str;
	return NULL;
}

bool elf_image_u64(const struct elf_file *ef, uint64_t vaddr, uint64_t *out)
{
	uint8_t b[8];
	if (!image_read(ef, vaddr, b, 8))
		return false;
	*out = elf_load_u64(b, ef->big_endian);
	return true;
}

bool elf_image_u16(const struct elf_file *ef, uint64_t vaddr, uint16_t *out)
{
	uint8_t b[2];
	if (!image_read(ef, vaddr, b, 2))
		return false;
	*out = elf_load_u16(b, ef->big_endian);
	return true;
}

bool elf_image_u32(const struct elf_file *ef, uint64_t vaddr, uint32_t *out)
{
	uint8_t b[4];
	if (!image_read(ef, vaddr, b, 4))
		return false;
	*out = elf_load_u32(b, ef->big_endian);
	return true;
}

/* ---- versions ---- */

static void verdef_fault(struct elf_file *ef, uint64_t vaddr)
{
	ef->verdef_fault = true;
	ef->verdef_fault_at = vaddr;
	note_problem(ef, vaddr, "version definitions lead outside the object's memory");
}

/* The Verdef chain from DT_VERDEF, as match_symbol walks it. */
static void read_verdef(struct arena *a, struct elf_file *ef, const struct dyn_raw *r)
{
	if (!r->has_verdef)
		return;
	ef->dt_verdef = true;
	ef->dt_verdef_value = r->verdef;
	size_t cap = r->verdefnum && r->verdefnum < MAX_VERSIONS ? r->verdefnum : 16;
	ef->verdef = arena_calloc(a, cap, sizeof *ef->verdef);
	uint64_t at = r->verdef;
	for (size_t i = 0; i < MAX_VERSIONS; i++) {
		uint16_t ver, flags, ndx, cnt;
		uint32_t hash, aux, next;
		if (!(elf_image_u16(ef, at, &ver) && elf_image_u16(ef, at + 2, &flags) &&
		      elf_image_u16(ef, at + 4, &ndx) && elf_image_u16(ef, at + 6, &cnt) &&
		      elf_image_u32(ef, at + 8, &hash) && elf_image_u32(ef, at + 12, &aux) &&
		      elf_image_u32(ef, at + 16, &next))) {
			verdef_fault(ef, at);
			break;
		}
		uint32_t name_off;
		bool aux_ok = elf_image_u32(ef, at + aux, &name_off);
		const char *name = aux_ok ? dynstr_at(ef, name_off) : NULL;
		if (ef->nverdef == cap) {
			ef->verdef = arena_grow(a, ef->verdef, cap, cap * 2, sizeof *ef->verdef);
			cap *= 2;
		}
		struct elf_verdef *v = &ef->verdef[ef->nverdef++];
		v->ndx = ndx & VERSYM_INDEX_;
		v->flags = flags;
		v->version = ver;
		v->hash = hash;
		v->name = name ? name : "";
		v->aux_fault = !aux_ok;
		v->aux_at = at + aux;
		if (v->ndx > ef->version_index_max)
			ef->version_index_max = v->ndx;
		if (next == 0)
			break;
		at += next;
	}
}

static void verneed_fault(struct elf_file *ef, uint64_t vaddr)
{
	ef->verneed_fault = true;
	ef->verneed_fault_at = vaddr;
	note_problem(ef, vaddr, "version requirements lead outside the object's memory");
}

/* One Verneed record's Vernaux chain; false when it leaves the image. */
static bool read_vernaux(struct arena *a, struct elf_file *ef, struct elf_verneed *vn, uint64_t at,
			 size_t *budget)
{
	size_t cap = 4;
	vn->aux = arena_calloc(a, cap, sizeof *vn->aux);
	while (*budget) {
		uint32_t hash, name, next;
		uint16_t flags, other;
		if (!(elf_image_u32(ef, at, &hash) && elf_image_u16(ef, at + 4, &flags) &&
		      elf_image_u16(ef, at + 6, &other) && elf_image_u32(ef, at + 8, &name) &&
		      elf_image_u32(ef, at + 12, &next))) {
			verneed_fault(ef, at);
			return false;
		}
		if (vn->naux == cap) {
			vn->aux = arena_grow(a, vn->aux, cap, cap * 2, sizeof *vn->aux);
			cap *= 2;
		}
		const char *nm = dynstr_at(ef, name);
		struct elf_vernaux *x = &vn->aux[vn->naux++];
		x->hash = hash;
		x->flags = flags;
		x->other = other;
		x->name = nm ? nm : "";
		if ((other & VERSYM_INDEX_) > ef->version_index_max)
			ef->version_index_max = other & VERSYM_INDEX_;
		(*budget)--;
		if (next == 0)
			return true;
		at += next;
	}
	note_problem(ef, at, "more than 65535 version requirements");
	return false;
}

/* The Verneed chain from DT_VERNEED, as _dl_check_map_versions walks it:
 * vn_cnt is not read, each Vernaux chain ends at a vna_next of 0. */
static void read_verneed(struct arena *a, struct elf_file *ef, const struct dyn_raw *r)
{
	if (!r->has_verneed)
		return;
	ef->dt_verneed = true;
	size_t cap = r->verneednum && r->verneednum < MAX_VERSIONS ? r->verneednum : 8;
	ef->verneed = arena_calloc(a, cap, sizeof *ef->verneed);
	size_t budget = MAX_VERSIONS;	/* bounds the total across all entries */
	uint64_t at = r->verneed;
	for (size_t i = 0; i < MAX_VERSIONS && budget; i++) {
		uint16_t ver, cnt;
		uint32_t file, aux, next;
		if (!(elf_image_u16(ef, at, &ver) && elf_image_u16(ef, at + 2, &cnt) &&
		      elf_image_u32(ef, at + 4, &file) && elf_image_u32(ef, at + 8, &aux) &&
		      elf_image_u32(ef, at + 12, &next))) {
			verneed_fault(ef, at);
			break;
		}
		if (i == 0)
			ef->verneed_version = ver;
		if (ef->nverneed == cap) {
			ef->verneed = arena_grow(a, ef->verneed, cap, cap * 2, sizeof *ef->verneed);
			cap *= 2;
		}
		struct elf_verneed *vn = &ef->verneed[ef->nverneed++];
		const char *fname = dynstr_at(ef, file);
		vn->file = fname ? fname : "";
		if (!read_vernaux(a, ef, vn, at + aux, &budget) || next == 0)
			break;
		at += next;
	}
}

const struct elf_verdef *elf_verdef_by_index(const struct elf_file *ef, uint16_t ndx)
{
	ndx &= VERSYM_INDEX_;
	for (size_t i = 0; i < ef->nverdef; i++)
		if (ef->verdef[i].ndx == ndx)
			return &ef->verdef[i];
	return NULL;
}

const struct elf_vernaux *elf_vernaux_by_index(const struct elf_file *ef, uint16_t ndx,
					       const char **file)
{
	ndx &= VERSYM_INDEX_;
	for (size_t i = 0; i < ef->nverneed; i++)
		for (size_t k = 0; k < ef->verneed[i].naux; k++)
			if ((ef->verneed[i].aux[k].other & VERSYM_INDEX_) == ndx) {
				if (file)
					*file = ef->verneed[i].file;
				return &ef->verneed[i].aux[k];
			}
	return NULL;
}

size_t elf_version_slots(struct arena *a, const struct elf_file *ef, struct elf_vslot **out)
{
	*out = NULL;
	uint32_t high = ef->version_index_max;
	if (high == 0 || ef->versym.len == 0)
		return 0;
	struct elf_vslot *v = arena_calloc(a, (size_t)high + 1, sizeof *v);
	for (size_t i = 0; i < ef->nverneed; i++)
		for (size_t k = 0; k < ef->verneed[i].naux; k++) {
			const struct elf_vernaux *x = &ef->verneed[i].aux[k];
			uint16_t ndx = x->other & VERSYM_INDEX_;
			if (ndx > high)
				continue;
			v[ndx].hash = x->hash;
			v[ndx].name = x->name;
			v[ndx].file = ef->verneed[i].file;
			v[ndx].hidden = (x->other & VERSYM_HIDDEN_) != 0;
		}
	for (size_t i = 0; i < ef->nverdef; i++) {
		const struct elf_verdef *d = &ef->verdef[i];
		if (d->flags & VER_FLG_BASE_)
			continue;	/* the base version is not a matchable version */
		v[d->ndx].hash = d->hash;
		v[d->ndx].name = d->name;
		v[d->ndx].file = NULL;
		v[d->ndx].hidden = false;
	}
	*out = v;
	return (size_t)high + 1;
}

/* ---- hash tables and symbol count ---- */

/* dl_new_hash: h = h * 33 + c from 5381.  Four bytes a step (33^4, 33^3,
 * 33^2, 33: the same sum mod 2^32), so one multiply by the running hash
 * per four bytes instead of one per byte: mangled C++ names are long, and
 * a torch environment hashes some 300,000 of them. */
uint32_t elf_gnu_hash(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t n = strlen(name), i = 0;
	uint32_t h = 5381;
	for (; i + 4 <= n; i += 4)
		h = h * 1185921u + p[i] * 35937u + p[i + 1] * 1089u + p[i + 2] * 33u + p[i + 3];
	for (; i < n; i++)
		h = h * 33 + p[i];
	return h;
}

uint64_t elf_name_hash64(const char *name)
{
	return hash64_bytes(HASH64_INIT, name, strlen(name));
}

void elf_hashed_name(char out[ELF_HASHED_NAME_SIZE], uint64_t hash)
{
	snprintf(out, ELF_HASHED_NAME_SIZE, "#%016llx", (unsigned long long)hash);
}

uint32_t elf_sysv_hash(const char *name)
{
	uint32_t h = 0, g;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		h = (h << 4) + *p;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* _dl_setup_hash: the header is read at map time, in memory; the bloom
 * filter, buckets and chains where a lookup reaches them (symtab.c), so a
 * table that is not all in the file stays usable as far as it is. */
static void read_gnu_hash(struct elf_file *ef, const struct dyn_raw *r)
{
	if (!r->has_gnu_hash)
		return;
	uint32_t nb, so, bs, sh;
	uint64_t gh = r->gnu_hash;
	if (gh > UINT64_MAX - 16 || !elf_image_u32(ef, gh, &nb) || !elf_image_u32(ef, gh + 4, &so) ||
	    !elf_image_u32(ef, gh + 8, &bs) || !elf_image_u32(ef, gh + 12, &sh)) {
		note_problem(ef, gh, "GNU hash table outside the object's memory");
		ef->gnu_hash_fault = true;
		return;
	}
	uint64_t wsz = ef->is64 ? 8 : 4;
	ef->gnu_bloom_vaddr = gh + 16;
	ef->gnu_buckets_vaddr = ef->gnu_bloom_vaddr + (uint64_t)bs * wsz;
	ef->gnu_chain_vaddr = ef->gnu_buckets_vaddr + (uint64_t)nb * 4;
	ef->gnu_nbuckets = nb;
	ef->gnu_symoffset = so;
	ef->gnu_bloom_size = bs;
	ef->gnu_bloom_shift = sh;
	ef->has_gnu_hash = true;
	uint64_t off;
	const struct bytes *b = &ef->raw;
	if (!(nb && bs && (bs & (bs - 1)) == 0 &&
	      elf_vaddr_to_offset(ef, ef->gnu_bloom_vaddr, (uint64_t)bs * wsz, &off) &&
	      bytes_sub(b, off, (uint64_t)bs * wsz, &ef->gnu_bloom) &&
	      bytes_sub(b, off + (uint64_t)bs * wsz, (uint64_t)nb * 4, &ef->gnu_buckets))) {
		note_problem(ef, gh, "GNU hash table malformed");
		ef->gnu_bloom.len = ef->gnu_buckets.len = 0;
		return;
	}
	uint64_t chain_off = off + (uint64_t)bs * wsz + (uint64_t)nb * 4;
	if (chain_off <= b->len)
		bytes_sub(b, chain_off, b->len - chain_off, &ef->gnu_chain);
}

static void read_sysv_hash(struct elf_file *ef, const struct dyn_raw *r)
{
	uint64_t off;
	if (!r->has_hash)
		return;
	/* s390x and alpha use 64-bit hash entries; everyone else 32-bit. */
	uint64_t es = (ef->is64 && ef->machine == EM_S390_) ? 8 : 4;
	if (!elf_vaddr_to_offset(ef, r->hash, 2 * es, &off)) {
		note_problem(ef, r->hash, "SysV hash table outside the file");
		return;
	}
	uint64_t nb, nc;
	if (es == 8) {
		bytes_u64(&ef->raw, off, &nb);
		bytes_u64(&ef->raw, off + 8, &nc);
	} else {
		uint32_t a, c;
		bytes_u32(&ef->raw, off, &a);
		bytes_u32(&ef->raw, off + 4, &c);
		nb = a;
		nc = c;
	}
	if (es == 8 || nb == 0 || nb > UINT32_MAX || nc > UINT32_MAX ||
	    !bytes_sub(&ef->raw, off + 2 * es, nb * es, &ef->sysv_bucket) ||
	    !bytes_sub(&ef->raw, off + 2 * es + nb * es, nc * es, &ef->sysv_chain)) {
		if (es != 8)
			note_problem(ef, off, "SysV hash table malformed");
		return;
	}
	ef->sysv_nbucket = (uint32_t)nb;
	ef->sysv_nchain = (uint32_t)nc;
	ef->has_sysv_hash = true;
}

static uint32_t count_from_gnu_hash(const struct elf_file *ef)
{
	uint32_t maxidx = 0;
	if (!ef->gnu_buckets.len)
		return ef->gnu_symoffset;
	for (uint32_t i = 0; i < ef->gnu_nbuckets; i++) {
		uint32_t v = 0;
		bytes_u32(&ef->gnu_buckets, (uint64_t)i * 4, &v);
		if (v > maxidx)
			maxidx = v;
	}
	if (maxidx < ef->gnu_symoffset)
		return ef->gnu_symoffset;
	for (uint64_t k = maxidx - ef->gnu_symoffset;; k++) {
		uint32_t h;
		if (!bytes_u32(&ef->gnu_chain, k * 4, &h))
			return (uint32_t)MIN(k + ef->gnu_symoffset, UINT32_MAX);
		if (h & 1)
			return (uint32_t)(k + ef->gnu_symoffset + 1);
	}
}

static void read_symbols(struct elf_file *ef, const struct dyn_raw *r)
{
	ef->syment = ef->is64 ? 24 : 16;
	ef->has_versym_tag = r->has_versym;
	ef->versym_vaddr = r->versym;
	if (!r->has_symtab)
		return;
	uint64_t off;
	if (!elf_vaddr_to_offset(ef, r->symtab, ef->syment, &off)) {
		note_problem(ef, r->symtab, "dynamic symbol table outside the file");
		return;
	}
	uint64_t count = 0;
	/* The count: the section header when it agrees, else the hash tables. */
	for (size_t i = 0; i < ef->nsec; i++)
		if (ef->sec[i].type == SHT_DYNSYM_ && ef->sec[i].addr == r->symtab &&
		    ef->sec[i].entsize == ef->syment)
			count = ef->sec[i].size / ef->syment;
	if (!count && ef->has_sysv_hash)
		count = ef->sysv_nchain;
	if (!count && ef->has_gnu_hash)
		count = count_from_gnu_hash(ef);
	if (!count && r->has_strtab && r->strtab > r->symtab)
		count = (r->strtab - r->symtab) / ef->syment;
	uint64_t avail = (ef->raw.len - off) / ef->syment;
	if (count > avail) {
		note_problem(ef, off, "dynamic symbol table truncated");
		count = avail;
	}
	if (count > UINT32_MAX)
		count = UINT32_MAX;
	ef->nsyms = (uint32_t)count;
	bytes_sub(&ef->raw, off, count * ef->syment, &ef->dynsym);
	/* every symbol table starts with the null symbol: anything else there
	 * says DT_SYMTAB points at something else */
	const uint8_t *zero = bytes_at(&ef->raw, off, ef->syment);
	for (uint32_t k = 0; zero && k < ef->syment; k++)
		ef->symtab_not_table |= zero[k] != 0;
	if (r->has_versym) {
		if (!window_at_vaddr(ef, r->versym, count * 2, &ef->versym)) {
			note_problem(ef, r->versym, "symbol version table outside the file");
			ef->versym.len = 0;
		}
	}
}

bool elf_sym_head(const struct elf_file *ef, uint32_t idx, struct elf_sym *out)
{
	if (idx >= ef->nsyms)
		return false;
	const uint8_t *p = bytes_at(&ef->dynsym, (uint64_t)idx * ef->syment, ef->is64 ? 24 : 16);
	if (!p)
		return false;
	bool big = ef->big_endian;
	uint8_t info, other;
	if (ef->is64) {
		info = p[4];
		other = p[5];
		out->shndx = elf_load_u16(p + 6, big);
		out->value = elf_load_u64(p + 8, big);
		out->size = elf_load_u64(p + 16, big);
	} else {
		out->value = elf_load_u32(p + 4, big);
		out->size = elf_load_u32(p + 8, big);
		info = p[12];
		other = p[13];
		out->shndx = elf_load_u16(p + 14, big);
	}
	out->bind = info >> 4;
	out->type = info & 0xf;
	out->visibility = other & 3;
	out->other = other;
	out->name = "";
	out->name_fault = false;
	out->versym = 0;
	return true;
}

bool elf_sym(const struct elf_file *ef, uint32_t idx, struct elf_sym *out)
{
	if (!elf_sym_head(ef, idx, out))
		return false;
	/* elf_sym_head proved the record is there; the name is its first word. */
	uint32_t name = elf_load_u32(bytes_at(&ef->dynsym, (uint64_t)idx * ef->syment, 4),
				     ef->big_endian);
	out->name_fault = false;
	if (!bytes_cstr(&ef->dynstr, name, &out->name, NULL)) {
		/* glibc ignores DT_STRSZ: the name is wherever DT_STRTAB + st_name is */
		out->name = ef->dt_strtab ? elf_image_str(ef, ef->strtab_vaddr + name) : NULL;
		out->name_fault = !out->name;
		if (!out->name)
			out->name = "";
	}
	if (ef->versym.len)
		bytes_u16(&ef->versym, (uint64_t)idx * 2, &out->versym);
	return true;
}

const char *elf_sym_name(const struct elf_file *ef, uint32_t idx)
{
	uint32_t name;
	const char *s;
	if (idx >= ef->nsyms || !bytes_u32(&ef->dynsym, (uint64_t)idx * ef->syment, &name))
		return "";
	if (bytes_cstr(&ef->dynstr, name, &s, NULL))
		return s;
	s = ef->dt_strtab ? elf_image_str(ef, ef->strtab_vaddr + name) : NULL;
	return s ? s : "";
}

/* ---- relocations ---- */

/* Whether a table's end, l_addr + vaddr + size, wraps past 2^64 so that
 * the loader's loop reads nothing: objects are mapped below 2^48 (x86-64's
 * user space; a guess for others), so any size that large wraps. */
static bool size_wraps(uint64_t size)
{
	return size > UINT64_MAX - (UINT64_C(1) << 48);
}

/* span: bytes the leading relative
 * entries cover (do-rel.h processes DT_RELACOUNT of them whatever
 * DT_RELASZ says); the window holds both, count is DT_RELASZ's. */
static void read_reltab(struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t span, bool rela,
			struct elf_reltab *t, const char *tag)
{
	uint64_t ent = rela ? (ef->is64 ? 24 : 12) : (ef->is64 ? 16 : 8);
	t->rela = rela;
	t->vaddr = vaddr;
	t->tag = tag;
	t->present = true;
	/* a size that wraps the loader's end pointer: nothing past the
	 * relative entries is read */
	uint64_t sized = size_wraps(size) ? 0 : size;
	uint64_t want = MAX(sized, span);
	if (want == 0)
		return;
	uint64_t off;
	if (!elf_vaddr_to_offset(ef, vaddr, want, &off) || !bytes_sub(&ef->raw, off, want, &t->data)) {
		note_problem(ef, vaddr, "relocation table outside the file");
		t->data.len = 0;
		return;
	}
	t->count = sized / ent;
}

/* The bytes the first count relative entries cover (0 when that wraps). */
static uint64_t relative_span(uint64_t count, uint64_t ent)
{
	return count && count <= (UINT64_C(1) << 58) ? count * ent : 0;
}

/* The end of the mapped stretch of the image that holds vaddr, or 0. */
static uint64_t image_stretch_end(const struct elf_file *ef, uint64_t vaddr)
{
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		uint64_t span = MAX(s->filesz, s->memsz);
		if (s->type != PT_LOAD_ || s->vaddr > UINT64_MAX - span - 2 * ef->page_size)
			continue;
		uint64_t start = s->vaddr & ~(uint64_t)(ef->page_size - 1);
		uint64_t end = (s->vaddr + span + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		if (vaddr >= start && vaddr < end)
			return end;
	}
	return 0;
}

/* Whether [vaddr, vaddr + size) is all mapped (a file page past the end
 * of the file is not checked here); else *gap: the first address that is not. */
bool elf_image_covers(const struct elf_file *ef, uint64_t vaddr, uint64_t size, uint64_t *gap)
{
	*gap = vaddr;
	if (vaddr > UINT64_MAX - size)
		return false;
	for (uint64_t at = vaddr, end = vaddr + size; at < end;) {
		uint64_t next = image_stretch_end(ef, at);
		if (!next) {
			*gap = at;
			return false;
		}
		at = next;
	}
	return true;
}

/* get-dynamic-info.h's checks of the relocation tags, for the machines
 * with only RELA (x86-64, AArch64) or only REL (i386) relocations. */
static void check_dynamic_info(struct elf_file *ef, const struct dyn_raw *r)
{
	bool only_rela = ef->machine == EM_X86_64_ || ef->machine == EM_AARCH64_;
	bool only_rel = ef->machine == EM_386_;
	if (r->has_pltrel && only_rela && r->pltrel != DT_RELA_) {
		ef->dyn_assert = "info[DT_PLTREL]->d_un.d_val == DT_RELA";
		ef->dyn_assert_line = 115;
	} else if (r->has_pltrel && only_rel && r->pltrel != DT_REL_) {
		ef->dyn_assert = "info[DT_PLTREL]->d_un.d_val == DT_REL";
		ef->dyn_assert_line = 0;	/* not read for this machine */
	} else if (r->has_rela && only_rela && r->has_relaent && r->relaent != (ef->is64 ? 24u : 12u)) {
		ef->dyn_assert = "info[DT_RELAENT]->d_un.d_val == sizeof (ElfW(Rela))";
		ef->dyn_assert_line = 123;
	} else if (r->has_rel && only_rel && r->has_relent && r->relent != 8u) {
		ef->dyn_assert = "info[DT_RELENT]->d_un.d_val == sizeof (ElfW(Rel))";
		ef->dyn_assert_line = 0;
	}
}

static void check_reloc_reach(struct elf_file *ef, const char *tag, bool present, uint64_t vaddr,
			      uint64_t size)
{
	uint64_t gap;
	/* a size that wraps the loader's end pointer: its loop reads nothing */
	if (!present || !size || size_wraps(size) || ef->reloc_fault_table ||
	    elf_image_covers(ef, vaddr, size, &gap))
		return;
	ef->reloc_fault_table = tag;
	ef->reloc_fault_at = gap;
}

/* The pages [*start, *stop) of the first writable PT_LOAD holding at
 * (any PT_LOAD with DT_TEXTREL: the loader makes them writable). */
static bool writable_window(const struct elf_file *ef, uint64_t at, uint64_t *start, uint64_t *stop)
{
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		uint64_t span = MAX(s->filesz, s->memsz);
		if (s->type != PT_LOAD_ || !((s->flags & PF_W_) || ef->dt_textrel) ||
		    s->vaddr > UINT64_MAX - span - 2 * ef->page_size)
			continue;
		*start = s->vaddr & ~(uint64_t)(ef->page_size - 1);
		*stop = (s->vaddr + span + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		if (at >= *start && at < *stop)
			return true;
	}
	return false;
}

/* Whether [vaddr, vaddr + size) lies in the pages of writable PT_LOADs. */
bool elf_image_writable(const struct elf_file *ef, uint64_t vaddr, uint64_t size)
{
	if (vaddr > UINT64_MAX - size)
		return false;
	for (uint64_t at = vaddr, end = vaddr + size; at < end;) {
		uint64_t start, stop;
		if (!writable_window(ef, at, &start, &stop))
			return false;
		at = stop;
	}
	return true;
}

bool elf_writable_cached(const struct elf_file *ef, struct elf_window *w, uint64_t vaddr, uint64_t size)
{
	if (elf_window_holds(w, vaddr, size))
		return true;
	if (!elf_image_writable(ef, vaddr, size))
		return false;
	uint64_t start, stop;
	if (writable_window(ef, vaddr, &start, &stop)) {
		w->start = start;
		w->stop = stop;
	}
	return true;
}

/* Whether vaddr lies in an executable PT_LOAD's pages. */
bool elf_image_executable(const struct elf_file *ef, uint64_t vaddr)
{
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		uint64_t span = MAX(s->filesz, s->memsz);
		if (s->type != PT_LOAD_ || !(s->flags & PF_X_) || s->vaddr > UINT64_MAX - span - 2 * ef->page_size)
			continue;
		uint64_t start = s->vaddr & ~(uint64_t)(ef->page_size - 1);
		uint64_t end = (s->vaddr + span + ef->page_size - 1) & ~(uint64_t)(ef->page_size - 1);
		if (vaddr >= start && vaddr < end)
			return true;
	}
	return false;
}

/* dl-init.c counts the DT_INIT_ARRAY entries in an unsigned int. */
static uint64_t init_count(const struct elf_file *ef, const struct dyn_raw *r)
{
	return (uint32_t)(r->init_arraysz / (ef->is64 ? 8u : 4u));
}

/* dl-init.c call_init: DT_INIT is called, DT_INIT_ARRAY read. */
static void check_init(struct elf_file *ef, const struct dyn_raw *r)
{
	uint64_t gap;
	bool any_load = false;
	for (size_t i = 0; i < ef->nseg; i++)
		any_load |= ef->seg[i].type == PT_LOAD_;
	if (!any_load)
		return;
	if (r->has_init && !elf_image_executable(ef, r->init)) {
		ef->init_fault = "DT_INIT";
		ef->init_fault_at = r->init;
	} else if (r->has_init_array && init_count(ef, r) &&
		   !elf_image_covers(ef, r->init_array, init_count(ef, r) * (ef->is64 ? 8u : 4u), &gap)) {
		ef->init_fault = "DT_INIT_ARRAY";
		ef->init_fault_at = gap;
	} else if (r->has_init_array) {
		ef->init_array = r->init_array;
		ef->init_entries = init_count(ef, r);
		ef->relr = r->relr;
		ef->relrsz = r->relrsz;
		ef->tables_pending = true;
	}
	if (!ef->init_fault && r->has_init) {
		ef->init_fn = r->init;	/* its direct calls: elf_check_tables */
		ef->has_init_fn = true;
		ef->tables_pending = true;
	}
}

/* do-rel.h: the relative entries end at DT_RELA + count * entry size, in
 * wrapping pointer arithmetic; a count whose product wraps to within the
 * table (0x8000000000000000 * 24 is 0) covers that many entries. */
static uint64_t relative_count(uint64_t count, uint64_t ent, uint64_t size)
{
	uint64_t k = count * ent;
	if (count == 0 || k / ent == count)
		return count;
	return k <= size ? k / ent : count;
}

static void read_relocations(struct elf_file *ef, const struct dyn_raw *r)
{
	uint64_t relent = ef->is64 ? 16 : 8, relaent = ef->is64 ? 24 : 12;
	ef->relcount = relative_count(r->relcount, relent, r->relsz);
	ef->relacount = relative_count(r->relacount, relaent, r->relasz);
	uint64_t relspan = relative_span(ef->relcount, relent), relaspan = relative_span(ef->relacount, relaent);
	check_dynamic_info(ef, r);
	/* dynamic-link.h: "With DT_RELR, DT_RELA/DT_REL can have zero value":
	 * a table at 0 is not processed at all (nor its relative count) */
	bool has_rela = r->has_rela && r->rela, has_rel = r->has_rel && r->rel;
	check_reloc_reach(ef, "DT_RELA", has_rela, r->rela, MAX(r->relasz, relaspan));
	check_reloc_reach(ef, "DT_REL", has_rel, r->rel, MAX(r->relsz, relspan));
	check_reloc_reach(ef, "DT_JMPREL", r->has_jmprel && r->has_pltrel, r->jmprel, r->pltrelsz);
	if (has_rel)
		read_reltab(ef, r->rel, r->relsz, relspan, false, &ef->rel, "DT_REL");
	if (has_rela)
		read_reltab(ef, r->rela, r->relasz, relaspan, true, &ef->rela, "DT_RELA");
	if (r->has_jmprel && r->has_pltrel) {
		ef->jmprel_is_rela = r->pltrel == DT_RELA_;
		read_reltab(ef, r->jmprel, r->pltrelsz, 0, ef->jmprel_is_rela, &ef->jmprel, "DT_JMPREL");
	}
	ef->has_relr = r->relr != 0;
	/* each symbolic relocation reads its symbol's DT_VERSYM entry */
	bool symbolic = ef->rela.count + ef->rel.count + ef->jmprel.count > ef->relacount + ef->relcount ||
			r->pltrelsz || (r->relasz && !ef->rela.count);
	if (symbolic)
		check_reloc_reach(ef, "DT_VERSYM", r->has_versym, r->versym, (uint64_t)ef->nsyms * 2);
	ef->tables_pending = ef->relacount != 0;	/* elf_check_relative */
	check_init(ef, r);
}

void elf_check_tables(struct arena *a, struct elf_file *ef)
{
	if (!ef->tables_pending)
		return;
	ef->tables_pending = false;
	elf_check_relative(ef);
	if (ef->init_entries && !ef->init_fault)
		elf_check_init_entries(a, ef, ef->init_array, ef->init_entries, ef->relr, ef->relrsz);
	if (!ef->init_fault)
		elf_find_ctor_plt_calls(a, ef, ef->has_init_fn, ef->init_fn);
}

/* ---- sections by name ---- */

const struct elf_section *elf_section_by_name(const struct elf_file *ef, const char *name)
{
	for (size_t i = 0; i < ef->nsec; i++)
		if (str_eq(ef->sec[i].name, name))
			return &ef->sec[i];
	return NULL;
}

bool elf_section_bytes(const struct elf_file *ef, const struct elf_section *s, struct bytes *out)
{
	if (s->type == SHT_NOBITS_)
		return false;
	return bytes_sub(&ef->raw, s->offset, s->size, out);
}

/* ---- what the loader does at map time with corrupt tables ---- */

static void map_fault(struct arena *a, struct elf_fault *f, const char *table, uint64_t at, const char *what)
{
	memset(f, 0, sizeof *f);
	f->phase = FAULT_MAP;
	f->table = table;
	f->at = at;
	f->signal = 11;
	f->guess = true;
	f->what = arena_printf(a, "%s at %#llx, outside its memory", what, (unsigned long long)at);
}

/* A dynamic string the loader reads at DT_STRTAB + off: false when that
 * lies outside the object's memory. */
static bool string_readable(const struct elf_file *ef, uint64_t off)
{
	const char *s;
	return bytes_cstr(&ef->dynstr, off, &s, NULL) ||
	       (ef->dt_strtab && elf_image_str(ef, ef->strtab_vaddr + off) != NULL);
}

/* _dl_map_object_from_fd's _dl_setup_hash, then _dl_map_object_deps:
 * the DT_NEEDED names, and while searching for them the RPATH/RUNPATH
 * strings and the SONAME of every object already loaded (this one too). */
static void check_map_faults(struct arena *a, struct elf_file *ef, const struct dyn_raw *r)
{
	struct elf_fault *f = &ef->map_fault;
	if (r->has_gnu_hash && ef->gnu_hash_fault) {
		map_fault(a, f, "DT_GNU_HASH", r->gnu_hash, "reads the hash table's header");
		return;
	}
	if (ef->has_gnu_hash && (ef->gnu_bloom_size & (ef->gnu_bloom_size - 1)) != 0) {
		memset(f, 0, sizeof *f);
		f->phase = FAULT_MAP;
		f->table = "DT_GNU_HASH";
		f->at = r->gnu_hash;
		f->what = arena_printf(a, "its bloom filter has %u words, not a power of two", ef->gnu_bloom_size);
		f->assert_file = "dl-setup_hash.c";
		f->assert_fn = "_dl_setup_hash";
		f->assert_expr = "(bitmask_nwords & (bitmask_nwords - 1)) == 0";
		f->assert_line = 36;
		return;
	}
	uint64_t gap;
	if (!r->has_gnu_hash && r->has_hash && !elf_image_covers(ef, r->hash, 8, &gap)) {
		map_fault(a, f, "DT_HASH", r->hash, "reads the hash table's header");
		return;
	}
	if (!r->has_strtab && !r->nneeded)
		return;
	for (size_t i = 0; i < r->nneeded; i++)
		if (!string_readable(ef, r->needed[i])) {
			map_fault(a, f, "DT_NEEDED", ef->strtab_vaddr + r->needed[i], "reads a DT_NEEDED name");
			return;
		}
	if (!r->nneeded)
		return;
	if (r->has_soname && !string_readable(ef, r->soname))
		map_fault(a, f, "DT_SONAME", ef->strtab_vaddr + r->soname, "reads its DT_SONAME");
	else if (r->has_runpath && !string_readable(ef, r->runpath))
		map_fault(a, f, "DT_RUNPATH", ef->strtab_vaddr + r->runpath, "reads its DT_RUNPATH");
	else if (r->has_rpath && !r->has_runpath && !string_readable(ef, r->rpath))
		map_fault(a, f, "DT_RPATH", ef->strtab_vaddr + r->rpath, "reads its DT_RPATH");
}

/* DT_ABISCOPE_FAULT: a snapshot's object whose original has a corrupt
 * table.  A map-time fault is reported as map_fault; a later one is kept
 * for the loader model to report when it relocates the object. */
static void read_carried_fault(struct arena *a, struct elf_file *ef, const struct dyn_raw *r)
{
	if (!r->has_fault)
		return;
	const char *text = dynstr_at(ef, r->fault);
	struct elf_fault f;
	if (!text || !elf_fault_decode(a, text, &f)) {
		note_problem(ef, r->fault, "DT_ABISCOPE_FAULT is not a fault record");
		return;
	}
	if (f.phase == FAULT_MAP)
		ef->map_fault = f;
	else
		ef->carried_fault = f;
}

/* ---- entry point ---- */

static void read_dynamic(struct arena *a, struct elf_file *ef)
{
	struct bytes dyn;
	if (!find_dynamic(ef, &dyn))
		return;
	ef->has_dynamic = true;
	struct dyn_raw r;
	memset(&r, 0, sizeof r);
	read_dynamic_entries(a, ef, dyn, &r);
	ef->dt_strtab = r.has_strtab;
	ef->strtab_vaddr = r.strtab;
	ef->symtab_vaddr = r.symtab;
	ef->has_symtab_tag = r.has_symtab;
	if (r.has_strtab) {
		uint64_t off;
		uint64_t size = r.strsz;
		if (elf_vaddr_to_offset(ef, r.strtab, 0, &off)) {
			/* glibc never bounds names by DT_STRSZ: with 0 there it still
			 * reads them from DT_STRTAB (and loads the object) */
			if (size == 0) {
				note_problem(ef, off, "DT_STRSZ is 0: the string table is read to the end of the file");
				size = ef->raw.len - off;
			}
			if (size > ef->raw.len - off) {
				note_problem(ef, off, "dynamic string table truncated");
				size = ef->raw.len - off;
			}
			bytes_sub(&ef->raw, off, size, &ef->dynstr);
		} else {
			note_problem(ef, r.strtab, "dynamic string table outside the file");
		}
	}
	ef->needed = strings_from(a, ef, r.needed, r.nneeded, &ef->nneeded);
	ef->filter = strings_from(a, ef, r.filter, r.nfilter, &ef->nfilter);
	ef->auxiliary = strings_from(a, ef, r.aux, r.naux, &ef->nauxiliary);
	if (r.has_soname)
		ef->soname = dynstr_at(ef, r.soname);
	if (r.has_runpath)
		ef->runpath = dynstr_at(ef, r.runpath);
	/* glibc ignores DT_RPATH_ when DT_RUNPATH_ is present (get-dynamic-info.h). */
	if (r.has_rpath)
		ef->rpath = dynstr_at(ef, r.rpath);
	read_gnu_hash(ef, &r);
	read_sysv_hash(ef, &r);
	read_symbols(ef, &r);
	read_verdef(a, ef, &r);
	read_verneed(a, ef, &r);
	read_relocations(ef, &r);
	check_map_faults(a, ef, &r);
	read_carried_fault(a, ef, &r);
}

enum status elf_parse(struct arena *a, struct bytes raw, const char *path, struct elf_file *ef,
		      struct diag *d)
{
	return elf_parse_paged(a, raw, path, 0, ef, d);
}

enum status elf_parse_paged(struct arena *a, struct bytes raw, const char *path, uint64_t page_size,
			    struct elf_file *ef, struct diag *d)
{
	enum status st = elf_parse_lazy(a, raw, path, page_size, ef, d);
	if (st == ST_OK)
		elf_check_tables(a, ef);
	return st;
}

enum status elf_parse_lazy(struct arena *a, struct bytes raw, const char *path, uint64_t page_size,
			   struct elf_file *ef, struct diag *d)
{
	memset(ef, 0, sizeof *ef);
	ef->raw = raw;
	ef->path = path;
	/* a power of two from 4 KiB to 1 GiB, else the usual 4 KiB */
	ef->page_size = page_size >= 4096 && page_size <= (UINT64_C(1) << 30) && !(page_size & (page_size - 1))
		? page_size : 4096;
	uint64_t phoff = 0, shoff = 0;
	uint16_t phnum16 = 0, shnum16 = 0, shstrndx16 = 0;
	if (!read_header(ef, &phoff, &shoff, &phnum16, &shnum16, &shstrndx16, d))
		return d ? d->status : ST_MALFORMED;
	uint32_t phnum = phnum16, shnum = shnum16, shstrndx = shstrndx16;
	/* Extended numbering: the real counts live in section header 0. */
	if (shoff && (shnum == 0 || shstrndx == 0xffff || phnum == 0xffff)) {
		struct elf_section s0;
		uint32_t n0;
		if (ef->shentsize == (ef->is64 ? 64 : 40) && read_section_header(ef, shoff, &s0, &n0)) {
			if (shnum == 0 && s0.size <= MAX_SECTIONS)
				shnum = (uint32_t)s0.size;
			if (shstrndx == 0xffff)
				shstrndx = s0.link;
			if (phnum == 0xffff)
				phnum = s0.info;
		}
	}
	read_segments(a, ef, phoff, phnum);
	read_sections(a, ef, shoff, shnum, shstrndx);
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *s = &ef->seg[i];
		if (s->type == PT_INTERP_) {
			struct bytes w;
			const char *str;
			if (bytes_sub(&ef->raw, s->offset, s->filesz, &w) && bytes_cstr(&w, 0, &str, NULL))
				ef->interp = str;
		} else if (s->type == PT_TLS_) {
			ef->has_tls = true;
			ef->tls_memsz = s->memsz;
			ef->tls_align = s->align;
			ef->tls_vaddr = s->vaddr;
		} else if (s->type == PT_GNU_STACK_) {
			ef->has_gnu_stack = true;
			ef->gnu_stack_flags = s->flags;
		}
	}
	read_dynamic(a, ef);
	ef->long_walk_left = arena_alloc(a, sizeof *ef->long_walk_left);
	*ef->long_walk_left = ELF_LONG_WALK_ALLOWANCE(ef->nsyms);
	return ST_OK;
}
