#include "cuda/fatbin.h"

#define FATBIN_HEADER_SIZE 16u
#define ENTRY_MIN_HEADER 64u
/* Entry headers seen are 0x40..0x90 bytes; a far larger one is not a header. */
#define ENTRY_MAX_HEADER 4096u
/*
 * Entry headers a scan may read to validate candidates found by the magic
 * alone.  Each overlapping candidate can make the next ones walk the same
 * entries again (quadratic: 100,000 crafted headers in 9.6 MB took 133 s);
 * real files reach a few thousand.  Past the budget the search by magic
 * stops, with a problem noted; registered fatbins are still read.
 */
#define FATBIN_STRICT_BUDGET 4000000u
#define WRAPPER_SIZE 24u

static const uint8_t fatbin_magic_bytes[4] = { 0x50, 0xed, 0x55, 0xba };

void fatbin_set_init(struct fatbin_set *set)
{
	memset(set, 0, sizeof *set);
}

bool fatbin_has_magic(const uint8_t *data, size_t len)
{
	return len >= 4 && memcmp(data, fatbin_magic_bytes, 4) == 0;
}

static void note_problem(struct fatbin_set *set, uint64_t off, const char *msg)
{
	set->nproblems++;
	if (!set->problem) {
		set->problem = msg;
		set->problem_offset = off;
	}
}

static struct fatbin_entry *new_entry(struct arena *a, struct fatbin_set *set)
{
	if (set->nentry == set->entry_cap) {
		size_t cap = set->entry_cap ? set->entry_cap * 2 : 64;
		set->entry = arena_grow(a, set->entry, set->nentry, cap, sizeof *set->entry);
		set->entry_cap = cap;
	}
	return &set->entry[set->nentry++];
}

static struct fatbin *new_fatbin(struct arena *a, struct fatbin_set *set)
{
	if (set->nfatbin == set->fatbin_cap) {
		size_t cap = set->fatbin_cap ? set->fatbin_cap * 2 : 16;
		set->fatbin = arena_grow(a, set->fatbin, set->nfatbin, cap, sizeof *set->fatbin);
		set->fatbin_cap = cap;
	}
	struct fatbin *fb = &set->fatbin[set->nfatbin++];
	memset(fb, 0, sizeof *fb);
	return fb;
}

/* One entry header at off (a file offset); false when it does not fit. */
static bool read_entry(const struct bytes *file, uint64_t off, uint64_t end, struct fatbin_entry *e)
{
	uint16_t kind, minor, major;
	uint32_t hsize, csize, arch;
	uint64_t psize, flags, dsize;
	if (end - off < ENTRY_MIN_HEADER)
		return false;
	if (!(bytes_u16(file, off, &kind) && bytes_u32(file, off + 0x04, &hsize) &&
	      bytes_u64(file, off + 0x08, &psize) && bytes_u32(file, off + 0x10, &csize) &&
	      bytes_u16(file, off + 0x18, &minor) && bytes_u16(file, off + 0x1a, &major) &&
	      bytes_u32(file, off + 0x1c, &arch) && bytes_u64(file, off + 0x28, &flags) &&
	      bytes_u64(file, off + 0x38, &dsize)))
		return false;
	if (hsize < ENTRY_MIN_HEADER || hsize > ENTRY_MAX_HEADER || hsize > end - off ||
	    psize > end - off - hsize)
		return false;
	memset(e, 0, sizeof *e);
	e->offset = off;
	e->kind = kind;
	e->header_size = hsize;
	e->payload_size = psize;
	e->compressed_size = csize;
	e->decompressed_size = dsize;
	e->ver_major = major;
	e->ver_minor = minor;
	e->sm = arch > 0xffff ? 0xffff : (uint16_t)arch;
	e->flags = flags;
	e->variant = flags & FATBIN_F_ARCH_SPECIFIC ? 'a' : flags & FATBIN_F_FAMILY ? 'f' : 0;
	return true;
}

/*
 * The fatbin whose header is at off inside [lo, hi) of the file.  strict:
 * every entry must fit and the entries must fill the fatbin exactly (used
 * for candidates found by the magic alone, where a false match is likely
 * to be random bytes).  Returns the end offset, or 0 when there is no
 * usable fatbin at off.
 */
static uint64_t parse_fatbin(struct arena *a, const struct bytes *file, uint64_t off, uint64_t hi,
			     const char *section, enum fatbin_where where, bool strict,
			     struct fatbin_set *set)
{
	uint32_t magic;
	uint16_t version, hsize;
	uint64_t fsize;
	if (hi - off < FATBIN_HEADER_SIZE || !bytes_u32(file, off, &magic) || magic != FATBIN_MAGIC ||
	    !bytes_u16(file, off + 4, &version) || !bytes_u16(file, off + 6, &hsize) ||
	    !bytes_u64(file, off + 8, &fsize))
		return 0;
	if (version != 1 || hsize < FATBIN_HEADER_SIZE || hsize > hi - off) {
		if (!strict)
			note_problem(set, off, "fatbin header with an unknown version or size");
		return 0;
	}
	uint64_t start = off + hsize;
	uint64_t end;
	if (fsize > hi - start) {
		if (strict)
			return 0;
		note_problem(set, off, "fatbin runs past the end of its section");
		end = hi;
	} else {
		end = start + fsize;
	}
	/* Strict candidates are checked completely before anything is kept;
	 * the work is bounded over the whole scan (see FATBIN_STRICT_BUDGET). */
	if (strict) {
		uint64_t q = start;
		struct fatbin_entry tmp;
		size_t n = 0;
		while (q < end) {
			if (set->strict_reads >= FATBIN_STRICT_BUDGET) {
				if (!set->strict_capped)
					note_problem(set, off, "search for fatbins by their magic stopped: more than 4 million "
							       "entry headers checked among overlapping candidates (crafted data?)");
				set->strict_capped = true;
				return 0;
			}
			set->strict_reads++;
			if (!read_entry(file, q, end, &tmp))
				return 0;
			q += tmp.header_size + tmp.payload_size;
			n++;
		}
		if (n == 0)
			return 0;
	}
	struct fatbin *fb = new_fatbin(a, set);
	uint32_t index = (uint32_t)(set->nfatbin - 1);
	fb->offset = off;
	fb->size = end - off;
	fb->section = section;
	fb->where = where;
	fb->first = (uint32_t)set->nentry;
	uint64_t q = start;
	while (q < end) {
		struct fatbin_entry e;
		if (!read_entry(file, q, end, &e)) {
			note_problem(set, q, "fatbin entry header truncated or overruns its fatbin");
			break;
		}
		e.fatbin = index;
		*new_entry(a, set) = e;
		q += e.header_size + e.payload_size;
	}
	/* new_entry may have moved the array, but fb is in the other array. */
	set->fatbin[index].n = (uint32_t)(set->nentry - set->fatbin[index].first);
	return end;
}

/*
 * Every fatbin in [lo, hi).  walk: a section whose content is fatbins
 * back to back (.nv_fatbin, __nv_relfatbin); bytes between them are
 * skipped to the next magic.  Otherwise only strict candidates count.
 */
static void scan_range(struct arena *a, const struct bytes *file, uint64_t lo, uint64_t hi,
		       const char *section, enum fatbin_where where, bool walk, struct fatbin_set *set)
{
	struct bytes win;
	if (hi <= lo || !bytes_sub(file, lo, hi - lo, &win))
		return;
	uint64_t p = 0;
	while (p + FATBIN_HEADER_SIZE <= win.len && (walk || !set->strict_capped)) {
		int64_t hit = bytes_find(&win, p, fatbin_magic_bytes, sizeof fatbin_magic_bytes);
		if (hit < 0)
			break;
		uint64_t at = lo + (uint64_t)hit;
		uint64_t end = parse_fatbin(a, file, at, hi, section, where, !walk, set);
		p = end > at ? end - lo : (uint64_t)hit + 1;
	}
}

static const struct elf_section *section_at(const struct elf_file *ef, uint64_t off)
{
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		if (s->type != SHT_NOBITS_ && off >= s->offset && off - s->offset < s->size)
			return s;
	}
	return NULL;
}

/* Fatbin offsets sorted, so that wrappers are matched in O(log n). */
struct offset_index {
	uint64_t *off;	/* pairs: (offset, index in set->fatbin) */
	size_t n;
};

static int cmp_u64_pair(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static void index_offsets(struct arena *a, const struct fatbin_set *set, struct offset_index *ix)
{
	uint64_t *pairs = arena_calloc(a, set->nfatbin ? set->nfatbin : 1, 2 * sizeof(uint64_t));
	for (size_t i = 0; i < set->nfatbin; i++) {
		pairs[2 * i] = set->fatbin[i].offset;
		pairs[2 * i + 1] = i;
	}
	sort_items(pairs, set->nfatbin, 2 * sizeof(uint64_t), cmp_u64_pair);
	ix->off = pairs;
	ix->n = set->nfatbin;
}

static struct fatbin *fatbin_at(struct fatbin_set *set, const struct offset_index *ix, uint64_t off)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->off[2 * mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && ix->off[2 * lo] == off)
		return &set->fatbin[ix->off[2 * lo + 1]];
	/* Fatbins added by earlier wrappers are not in the index: few. */
	for (size_t i = ix->n; i < set->nfatbin; i++)
		if (set->fatbin[i].offset == off)
			return &set->fatbin[i];
	return NULL;
}

/* The .nvFatBinSegment wrappers: each must point at a fatbin. */
static void read_wrappers(struct arena *a, const struct elf_file *ef, const struct elf_section *ws,
			  struct fatbin_set *set)
{
	struct bytes w;
	if (!elf_section_bytes(ef, ws, &w))
		return;
	struct offset_index ix;
	index_offsets(a, set, &ix);
	for (uint64_t off = 0; off + WRAPPER_SIZE <= w.len; off += WRAPPER_SIZE) {
		uint32_t magic;
		uint64_t data;
		if (!bytes_u32(&w, off, &magic) || !bytes_u64(&w, off + 8, &data))
			break;
		if (magic != FATBIN_WRAPPER_MAGIC) {
			note_problem(set, ws->offset + off, ".nvFatBinSegment record without the wrapper magic");
			continue;
		}
		set->nwrappers++;
		/* In a relocatable object the pointer is 0 plus a relocation. */
		if (data == 0 && ef->type == ET_REL_)
			continue;
		uint64_t foff;
		struct fatbin *fb = NULL;
		if (elf_vaddr_to_offset(ef, data, FATBIN_HEADER_SIZE, &foff)) {
			fb = fatbin_at(set, &ix, foff);
			if (!fb) {
				const struct elf_section *s = section_at(ef, foff);
				uint64_t hi = s ? s->offset + s->size : ef->raw.len;
				size_t before = set->nfatbin;
				parse_fatbin(a, &ef->raw, foff, hi, s ? s->name : "", FATBIN_ELSEWHERE, false, set);
				if (set->nfatbin > before)
					fb = &set->fatbin[before];
			}
		}
		if (fb) {
			fb->registered = true;
		} else {
			set->nwrappers_unmatched++;
			note_problem(set, ws->offset + off, "a .nvFatBinSegment wrapper points at no fatbin");
		}
	}
}

static bool is_fatbin_section(const char *name)
{
	return str_eq(name, ".nv_fatbin") || str_eq(name, "__nv_relfatbin");
}

/* Sections that hold code, symbols, relocations or unwind data, never a fatbin. */
static bool never_holds_fatbins(const struct elf_section *s)
{
	static const char *const prefixes[] = { ".text", ".init", ".fini", ".plt", ".got", ".dyn",
						".rela", ".rel.", ".eh_frame", ".gcc_except_table",
						".gnu", ".note", ".hash", ".symtab", ".strtab",
						".shstrtab", ".interp", ".ctors", ".dtors",
						".init_array", ".fini_array", ".tbss", ".tdata",
						".nvFatBinSegment", "__nv_module_id", ".nvHR" };
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (str_starts(s->name, prefixes[i]))
			return true;
	return false;
}

static void scan_elsewhere(struct arena *a, const struct elf_file *ef, struct fatbin_set *set);

void fatbin_scan_elf(struct arena *a, const struct elf_file *ef, enum fatbin_scan_mode mode,
		     struct fatbin_set *set)
{
	const struct bytes *file = &ef->raw;
	bool have_nv_fatbin = false;
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		if (s->type == SHT_NOBITS_ || !is_fatbin_section(s->name))
			continue;
		bool rel = str_eq(s->name, "__nv_relfatbin");
		have_nv_fatbin |= !rel;
		if (!bytes_has(file, s->offset, s->size)) {
			note_problem(set, s->offset, "fatbin section lies outside the file");
			continue;
		}
		scan_range(a, file, s->offset, s->offset + s->size, s->name,
			   rel ? FATBIN_IN_RELFATBIN : FATBIN_IN_NV_FATBIN, true, set);
	}
	/* cuobjdump lists the executable fatbin (.nv_fatbin) when there is one,
	 * else the relocatable one; --all-fatbin would show both. */
	for (size_t i = 0; i < set->nfatbin; i++)
		set->fatbin[i].listed = have_nv_fatbin ? set->fatbin[i].where == FATBIN_IN_NV_FATBIN
						       : set->fatbin[i].where == FATBIN_IN_RELFATBIN;
	if (mode == FATBIN_SCAN_ALL)
		scan_elsewhere(a, ef, set);
	/* Last, so that a wrapper pointing outside the walked sections finds
	 * what the magic scan saw rather than parsing it twice. */
	const struct elf_section *ws = elf_section_by_name(ef, ".nvFatBinSegment");
	if (ws)
		read_wrappers(a, ef, ws, set);
}

static void scan_elsewhere(struct arena *a, const struct elf_file *ef, struct fatbin_set *set)
{
	const struct bytes *file = &ef->raw;
	if (ef->nsec == 0) {
		/* No section headers: look through the loadable, non-code segments. */
		for (size_t i = 0; i < ef->nseg; i++) {
			const struct elf_segment *g = &ef->seg[i];
			if (g->type != PT_LOAD_ || (g->flags & PF_X_) || !bytes_has(file, g->offset, g->filesz))
				continue;
			scan_range(a, file, g->offset, g->offset + g->filesz, "", FATBIN_ELSEWHERE, false, set);
		}
		return;
	}
	for (size_t i = 0; i < ef->nsec; i++) {
		const struct elf_section *s = &ef->sec[i];
		if (s->type == SHT_NOBITS_ || !(s->flags & 2 /* SHF_ALLOC */) || (s->flags & 4 /* SHF_EXECINSTR */) ||
		    is_fatbin_section(s->name) || never_holds_fatbins(s) || s->size < FATBIN_HEADER_SIZE ||
		    !bytes_has(file, s->offset, s->size))
			continue;
		scan_range(a, file, s->offset, s->offset + s->size, s->name, FATBIN_ELSEWHERE, false, set);
	}
}

void fatbin_scan_raw(struct arena *a, struct bytes raw, struct fatbin_set *set)
{
	scan_range(a, &raw, 0, raw.len, "", FATBIN_RAW_FILE, true, set);
	for (size_t i = 0; i < set->nfatbin; i++)
		set->fatbin[i].listed = true;
}

/* ---- cubin files ---- */

/* The accelerator attribute (9) of .nv.compat: records of a format byte,
 * an attribute byte and a value (formats 1-3: 2 more bytes; 4: a u16
 * size and that many bytes). */
static bool compat_accelerator(const struct elf_file *ef)
{
	const struct elf_section *s = elf_section_by_name(ef, ".nv.compat");
	struct bytes b;
	if (!s || !elf_section_bytes(ef, s, &b))
		return false;
	uint64_t off = 0;
	for (int guard = 0; guard < 4096 && off + 4 <= b.len; guard++) {
		uint8_t fmt, attr, val;
		uint16_t size;
		bytes_u8(&b, off, &fmt);
		bytes_u8(&b, off + 1, &attr);
		if (fmt >= 1 && fmt <= 3) {
			bytes_u8(&b, off + 2, &val);
			if (attr == 9)
				return val != 0;
			off += 4;
		} else if (fmt == 4) {
			bytes_u16(&b, off + 2, &size);
			off += 4 + (uint64_t)size;
		} else {
			return false;
		}
	}
	return false;
}

/* "-arch sm_100f" in the tool options of .note.nv.tkinfo. */
static char tkinfo_variant(const struct elf_file *ef, uint16_t sm)
{
	const struct elf_section *s = elf_section_by_name(ef, ".note.nv.tkinfo");
	struct bytes b;
	if (!s || !elf_section_bytes(ef, s, &b))
		return 0;
	static const char needle[] = "-arch sm_";
	int64_t at = bytes_find(&b, 0, needle, sizeof needle - 1);
	if (at < 0)
		return 0;
	uint64_t p = (uint64_t)at + sizeof needle - 1;
	unsigned n = 0;
	uint8_t c = 0;
	while (bytes_u8(&b, p, &c) && c >= '0' && c <= '9' && n < 10000) {
		n = n * 10 + (unsigned)(c - '0');
		p++;
	}
	if (n != sm)
		return 0;
	return c == 'a' || c == 'f' ? (char)c : 0;
}

bool cubin_identify(const struct elf_file *ef, uint16_t *sm, char *variant)
{
	if (ef->machine != EM_CUDA_)
		return false;
	bool accel;
	if (ef->abiversion >= 8) {
		*sm = (uint16_t)((ef->flags >> 8) & 0xff);
		accel = (ef->flags & 0x8) != 0;
	} else {
		*sm = (uint16_t)(ef->flags & 0xff);
		accel = (ef->flags & 0x800) != 0;
	}
	char v = tkinfo_variant(ef, *sm);
	if (!v && (accel || compat_accelerator(ef)))
		v = 'a';
	*variant = v;
	return true;
}

/* ---- names ---- */

const char *fatbin_kind_name(uint16_t kind)
{
	switch (kind) {
	case FATBIN_PTX: return "ptx";
	case FATBIN_CUBIN: return "cubin";
	case FATBIN_LTOIR: return "lto-ir";
	}
	return "unknown";
}

const char *fatbin_compression_name(uint64_t flags)
{
	if (flags & FATBIN_F_ZSTD)
		return "zstd";
	if (flags & FATBIN_F_LZ4)
		return "lz4";
	return "none";
}

const char *fatbin_where_name(enum fatbin_where w)
{
	switch (w) {
	case FATBIN_IN_NV_FATBIN: return ".nv_fatbin";
	case FATBIN_IN_RELFATBIN: return "__nv_relfatbin";
	case FATBIN_ELSEWHERE: return "elsewhere";
	case FATBIN_RAW_FILE: return "file";
	}
	return "?";
}

void fatbin_target_name(const struct fatbin_entry *e, char *out, size_t outsz)
{
	const char *prefix = e->kind == FATBIN_PTX ? "compute_" : e->kind == FATBIN_LTOIR ? "lto_" : "sm_";
	if (e->variant)
		snprintf(out, outsz, "%s%u%c", prefix, e->sm, e->variant);
	else
		snprintf(out, outsz, "%s%u", prefix, e->sm);
}

/* ---- cuobjdump's listing ---- */

size_t fatbin_cuobjdump_list(struct arena *a, const char *path, const struct fatbin_set *set,
			     bool cubin_file, uint16_t kind, const char ***out)
{
	/* cuobjdump names entries after the file without its last extension. */
	const char *base = path_basename(path);
	const char *dot = strrchr(base, '.');
	size_t stem_len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	size_t n = 0, cap = 16;
	const char **lines = arena_calloc(a, cap, sizeof *lines);
	for (size_t f = 0; f < set->nfatbin; f++) {
		const struct fatbin *fb = &set->fatbin[f];
		if (!fb->listed)
			continue;
		for (uint32_t i = 0; i < fb->n; i++) {
			const struct fatbin_entry *e = &set->entry[fb->first + i];
			if (e->kind != kind)
				continue;
			/* A cubin is named from its own ELF header, where a family
			 * (`f`) cubin looks like a plain one: cuobjdump prints sm_100
			 * for sm_100f.  PTX names come from the entry and keep it. */
			char variant = e->variant;
			if (kind == FATBIN_CUBIN && variant == 'f')
				variant = 0;
			char arch[24];
			if (variant)
				snprintf(arch, sizeof arch, "sm_%u%c", e->sm, variant);
			else
				snprintf(arch, sizeof arch, "sm_%u", e->sm);
			const char *ext = kind == FATBIN_CUBIN ? "cubin" : "ptx";
			const char *what = kind == FATBIN_CUBIN ? "ELF" : "PTX";
			if (n == cap) {
				lines = arena_grow(a, lines, n, cap * 2, sizeof *lines);
				cap *= 2;
			}
			if (cubin_file)
				lines[n] = arena_printf(a, "%s file %4zu: %.*s.%s.%s", what, n + 1, (int)stem_len, base,
							arch, ext);
			else
				lines[n] = arena_printf(a, "%s file %4zu: %.*s.%zu.%s.%s", what, n + 1, (int)stem_len,
							base, n + 1, arch, ext);
			n++;
		}
	}
	*out = lines;
	return n;
}
