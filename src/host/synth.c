/*
 * synth.c: ELF images made from a snapshot's description of an object.
 *
 * The loader model only ever reads ELF bytes, so a described object is
 * turned back into a small ELF64 shared object that answers every question
 * the model asks exactly as the original did: the same header facts,
 * SONAME, NEEDED, RPATH/RUNPATH, flags, PT_GNU_STACK and PT_TLS, the same
 * version definitions and requirements with the same indices, one
 * undefined symbol and one relocation per load-time reference (of a type
 * in the same lookup class, in the same order, deferrable exactly when the
 * original's was), and the exports under their hashed names with the
 * original version index, binding, type and visibility.  A SysV hash table
 * over those names lets lookups walk it the ordinary way.
 *
 * Layout: one PT_LOAD (read, write, execute) maps the whole file at
 * address 0, so every address is its file offset.
 */
#include "host/snapshot.h"
#include "elf/symtab.h"

#include <limits.h>

struct out {
	uint8_t *p;
	size_t len, cap;
	bool big;
	struct arena *a;
};

static void reserve(struct out *o, size_t more)
{
	if (o->len + more <= o->cap)
		return;
	size_t cap = o->cap ? o->cap : 4096;
	while (cap < o->len + more)
		cap *= 2;
	o->p = arena_grow(o->a, o->p, o->len, cap, 1);
	o->cap = cap;
}

static void put(struct out *o, uint64_t v, int size)
{
	reserve(o, (size_t)size);
	for (int i = 0; i < size; i++) {
		int shift = o->big ? (size - 1 - i) * 8 : i * 8;
		o->p[o->len + (size_t)i] = (uint8_t)(v >> shift);
	}
	o->len += (size_t)size;
}

static void set_at(struct out *o, size_t at, uint64_t v, int size)
{
	for (int i = 0; i < size; i++) {
		int shift = o->big ? (size - 1 - i) * 8 : i * 8;
		o->p[at + (size_t)i] = (uint8_t)(v >> shift);
	}
}

static void align_to(struct out *o, size_t al)
{
	while (o->len % al)
		put(o, 0, 1);
}

/* The string table: offsets of strings already added are reused. */
struct strtab {
	struct out b;
	struct strmap at;	/* string -> offset + 1 */
};

static uint32_t str_add(struct strtab *t, const char *s)
{
	if (!s)
		s = "";
	uintptr_t have = (uintptr_t)strmap_get(&t->at, s);
	if (have)
		return (uint32_t)(have - 1);
	uint32_t off = (uint32_t)t->b.len;
	size_t n = strlen(s) + 1;
	reserve(&t->b, n);
	memcpy(t->b.p + t->b.len, s, n);
	t->b.len += n;
	strmap_put(t->b.a, &t->at, arena_strdup(t->b.a, s), (void *)(uintptr_t)(off + 1));
	return off;
}

struct symbol {
	uint32_t name;
	const char *text;
	uint8_t info, other;
	uint16_t shndx, versym;
	uint64_t value;
};

enum { SHN_ABS_VALUE = 0xfff1, SECTION_INDEX = 1 };
enum { PT_LOAD_V = 1, PT_DYNAMIC_V = 2, PT_INTERP_V = 3, PT_TLS_V = 7, PT_GNU_STACK_V = 0x6474e551 };

/* The ELF hash of version names (vd_hash / vna_hash). */
static uint32_t version_hash(const char *name)
{
	return elf_sysv_hash(name);
}

enum status snapshot_synth_elf(struct arena *a, const struct snap_elf *e, const char *path,
			       const uint8_t **outp, size_t *outlen, struct diag *d)
{
	struct elf_reloc_types rt;
	bool have_types = elf_reloc_types(e->machine, &rt);
	struct strtab st;
	memset(&st, 0, sizeof st);
	st.b.a = a;
	str_add(&st, "");

	/* symbols: the null one, references, then exports */
	size_t nsym_max = 1 + e->nrefs + e->nexports + e->nnamed;
	if (nsym_max > UINT32_MAX / 2)
		return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "too many symbols to describe");
	struct symbol *sym = arena_calloc(a, nsym_max, sizeof *sym);
	size_t nsym = 1;
	uint32_t *ref_sym = arena_calloc(a, e->nrefs ? e->nrefs : 1, sizeof *ref_sym);
	for (size_t i = 0; i < e->nrefs; i++) {
		const struct snap_ref *r = &e->refs[i];
		struct symbol *s = &sym[nsym];
		s->text = r->name;
		uint8_t bind = (r->flags & SNAP_REF_WEAK) ? STB_WEAK_ : STB_GLOBAL_;
		uint8_t type = (r->flags & SNAP_REF_TLS) ? STT_TLS_ : STT_NOTYPE_;
		s->info = (uint8_t)(bind << 4 | type);
		s->versym = r->versym;
		ref_sym[i] = (uint32_t)nsym++;
	}
	char hashed[ELF_HASHED_NAME_SIZE];
	size_t nnamed = e->export_names ? 0 : e->nnamed;	/* with names, PyInit_* is among them */
	for (size_t i = 0; i < e->nexports + nnamed; i++) {
		struct symbol *s = &sym[nsym++];
		if (i < e->nexports) {
			const struct snap_export *x = &e->exports[i];
			if (e->export_names) {
				s->text = e->export_names[i];
			} else {
				elf_hashed_name(hashed, x->hash);
				s->text = arena_strdup(a, hashed);
			}
			s->info = x->info;
			s->other = (uint8_t)((x->flags >> SNAP_VIS_SHIFT) & 3);
			s->versym = x->versym;
			s->shndx = (x->flags & SNAP_ABS) ? SHN_ABS_VALUE : (x->flags & SNAP_UNDEF) ? 0 : SECTION_INDEX;
			s->value = (x->flags & SNAP_HAS_VALUE) ? 0x1000 : 0;
		} else {
			/* kept by name for readers that look a name up (PyInit_*) */
			s->text = e->named[i - e->nexports];
			s->info = STB_GLOBAL_ << 4 | STT_FUNC_;
			s->versym = 1;
			s->shndx = SECTION_INDEX;
			s->value = 0x1000;
		}
	}
	for (size_t i = 1; i < nsym; i++)
		sym[i].name = str_add(&st, sym[i].text);

	/* dynamic strings for the rest */
	uint32_t *needed = arena_calloc(a, e->nneeded + 1, sizeof *needed);
	for (size_t i = 0; i < e->nneeded; i++)
		needed[i] = str_add(&st, e->needed[i]);
	uint32_t *filter = arena_calloc(a, e->nfilter + 1, sizeof *filter);
	for (size_t i = 0; i < e->nfilter; i++)
		filter[i] = str_add(&st, e->filter[i]);
	uint32_t *auxiliary = arena_calloc(a, e->nauxiliary + 1, sizeof *auxiliary);
	for (size_t i = 0; i < e->nauxiliary; i++)
		auxiliary[i] = str_add(&st, e->auxiliary[i]);
	uint32_t soname = e->soname ? str_add(&st, e->soname) : 0;
	uint32_t rpath = e->rpath ? str_add(&st, e->rpath) : 0;
	uint32_t runpath = e->runpath ? str_add(&st, e->runpath) : 0;
	uint32_t fault = e->loader_fault ? str_add(&st, e->loader_fault) : 0;
	uint32_t *vd_name = arena_calloc(a, e->nverdef + 1, sizeof *vd_name);
	for (size_t i = 0; i < e->nverdef; i++)
		vd_name[i] = str_add(&st, e->verdef[i].name);
	uint32_t *vn_file = arena_calloc(a, e->nverneed + 1, sizeof *vn_file);
	size_t naux = 0;
	for (size_t i = 0; i < e->nverneed; i++) {
		vn_file[i] = str_add(&st, e->verneed[i].file);
		naux += e->verneed[i].naux;
	}
	uint32_t *vna_name = arena_calloc(a, naux + 1, sizeof *vna_name);
	for (size_t i = 0, k = 0; i < e->nverneed; i++)
		for (size_t j = 0; j < e->verneed[i].naux; j++)
			vna_name[k++] = str_add(&st, e->verneed[i].aux[j].name);

	/* layout */
	struct out o;
	memset(&o, 0, sizeof o);
	o.a = a;
	o.big = e->big_endian;
	size_t nph = 2 + (e->interp ? 1 : 0) + (e->tls_memsz ? 1 : 0) + (e->has_gnu_stack ? 1 : 0);
	size_t ph_at = 64;
	reserve(&o, 64 + nph * 56);
	memset(o.p, 0, 64 + nph * 56);
	o.len = 64 + nph * 56;

	size_t interp_at = 0;
	if (e->interp) {
		interp_at = o.len;
		size_t n = strlen(e->interp) + 1;
		reserve(&o, n);
		memcpy(o.p + o.len, e->interp, n);
		o.len += n;
	}
	align_to(&o, 8);
	size_t strtab_at = o.len;
	reserve(&o, st.b.len);
	memcpy(o.p + o.len, st.b.p, st.b.len);
	o.len += st.b.len;

	align_to(&o, 8);
	size_t symtab_at = o.len;
	for (size_t i = 0; i < nsym; i++) {
		put(&o, sym[i].name, 4);
		put(&o, sym[i].info, 1);
		put(&o, sym[i].other, 1);
		put(&o, sym[i].shndx, 2);
		put(&o, sym[i].value, 8);
		put(&o, 0, 8);
	}

	/* SysV hash: nbucket buckets, one chain slot per symbol */
	align_to(&o, 8);
	size_t hash_at = o.len;
	uint32_t nbucket = (uint32_t)(nsym / 2 + 1);
	put(&o, nbucket, 4);
	put(&o, nsym, 4);
	size_t bucket_at = o.len;
	for (size_t i = 0; i < nbucket + nsym; i++)
		put(&o, 0, 4);
	for (size_t i = nsym; i-- > 1;) {
		/* prepend: chains list symbols in index order */
		uint32_t h = elf_sysv_hash(sym[i].text) % nbucket;
		size_t b = bucket_at + (size_t)h * 4;
		uint32_t head = 0;
		for (int k = 0; k < 4; k++) {
			int shift = o.big ? (3 - k) * 8 : k * 8;
			head |= (uint32_t)o.p[b + (size_t)k] << shift;
		}
		set_at(&o, bucket_at + ((size_t)nbucket + i) * 4, head, 4);
		set_at(&o, b, i, 4);
	}

	size_t versym_at = 0, verdef_at = 0, verneed_at = 0;
	bool versions = e->nverdef || e->nverneed;
	if (versions) {
		align_to(&o, 8);
		versym_at = o.len;
		for (size_t i = 0; i < nsym; i++)
			put(&o, sym[i].versym, 2);
	}
	if (e->nverdef) {
		align_to(&o, 8);
		verdef_at = o.len;
		for (size_t i = 0; i < e->nverdef; i++) {
			put(&o, 1, 2);
			put(&o, e->verdef[i].flags, 2);
			put(&o, e->verdef[i].ndx, 2);
			put(&o, 1, 2);
			put(&o, version_hash(e->verdef[i].name ? e->verdef[i].name : ""), 4);
			put(&o, 20, 4);
			put(&o, i + 1 < e->nverdef ? 28 : 0, 4);
			put(&o, vd_name[i], 4);
			put(&o, 0, 4);
		}
	}
	if (e->nverneed) {
		align_to(&o, 8);
		verneed_at = o.len;
		for (size_t i = 0, k = 0; i < e->nverneed; i++) {
			const struct snap_verneed *vn = &e->verneed[i];
			put(&o, 1, 2);
			put(&o, vn->naux, 2);
			put(&o, vn_file[i], 4);
			put(&o, vn->naux ? 16 : 0, 4);
			put(&o, i + 1 < e->nverneed ? 16 + 16 * vn->naux : 0, 4);
			for (size_t j = 0; j < vn->naux; j++, k++) {
				put(&o, version_hash(vn->aux[j].name ? vn->aux[j].name : ""), 4);
				put(&o, vn->aux[j].flags, 2);
				put(&o, vn->aux[j].other, 2);
				put(&o, vna_name[k], 4);
				put(&o, j + 1 < vn->naux ? 16 : 0, 4);
			}
		}
	}

	/* relocations: load-time references in order, then the deferrable ones */
	align_to(&o, 8);
	size_t rela_at = o.len, nrela = 0;
	for (size_t i = 0; i < e->nrefs && have_types; i++) {
		const struct snap_ref *r = &e->refs[i];
		if (!(r->flags & SNAP_REF_EAGER))
			continue;
		uint32_t type = r->lookup_class == RELOC_CLASS_COPY ? rt.copy
			: r->lookup_class == RELOC_CLASS_PLT ? rt.plt : rt.normal;
		put(&o, 0, 8);
		put(&o, (uint64_t)ref_sym[i] << 32 | type, 8);
		put(&o, 0, 8);
		nrela++;
	}
	size_t jmprel_at = o.len, njmprel = 0;
	for (size_t i = 0; i < e->nrefs && have_types; i++) {
		const struct snap_ref *r = &e->refs[i];
		if (!(r->flags & SNAP_REF_DEFERRABLE))
			continue;
		put(&o, 0, 8);
		put(&o, (uint64_t)ref_sym[i] << 32 | rt.jump_slot, 8);
		put(&o, 0, 8);
		njmprel++;
	}

	/* the dynamic section */
	align_to(&o, 8);
	size_t dyn_at = o.len;
#define DYN(tag, val) do { put(&o, (uint64_t)(tag), 8); put(&o, (uint64_t)(val), 8); } while (0)
	for (size_t i = 0; i < e->nneeded; i++)
		DYN(DT_NEEDED_, needed[i]);
	for (size_t i = 0; i < e->nfilter; i++)
		DYN(DT_FILTER_, filter[i]);
	for (size_t i = 0; i < e->nauxiliary; i++)
		DYN(DT_AUXILIARY_, auxiliary[i]);
	if (e->soname)
		DYN(DT_SONAME_, soname);
	if (e->rpath)
		DYN(DT_RPATH_, rpath);
	if (e->runpath)
		DYN(DT_RUNPATH_, runpath);
	DYN(DT_HASH_, hash_at);
	DYN(DT_STRTAB_, strtab_at);
	DYN(DT_STRSZ_, st.b.len);
	DYN(DT_SYMTAB_, symtab_at);
	DYN(DT_SYMENT_, 24);
	if (versions)
		DYN(DT_VERSYM_, versym_at);
	if (e->nverdef) {
		DYN(DT_VERDEF_, verdef_at);
		DYN(DT_VERDEFNUM_, e->nverdef);
	}
	if (e->nverneed) {
		DYN(DT_VERNEED_, verneed_at);
		DYN(DT_VERNEEDNUM_, e->nverneed);
	}
	if (nrela) {
		DYN(DT_RELA_, rela_at);
		DYN(DT_RELASZ_, nrela * 24);
		DYN(DT_RELAENT_, 24);
	}
	if (njmprel) {
		DYN(DT_JMPREL_, jmprel_at);
		DYN(DT_PLTRELSZ_, njmprel * 24);
		DYN(DT_PLTREL_, DT_RELA_);
	}
	if (e->dt_flags)
		DYN(DT_FLAGS_, e->dt_flags);
	if (e->dt_flags_1)
		DYN(DT_FLAGS_1_, e->dt_flags_1);
	if (e->bind_now)
		DYN(DT_BIND_NOW_, 0);
	if (!e->export_names)
		DYN(DT_ABISCOPE_HASHED, 1);
	if (e->partial)
		DYN(DT_ABISCOPE_PARTIAL, 1);
	if (e->loader_fault)
		DYN(DT_ABISCOPE_FAULT, fault);
	DYN(DT_NULL_, 0);
#undef DYN
	size_t dyn_len = o.len - dyn_at;
	align_to(&o, 8);

	/* the header and program headers, now that sizes are known */
	size_t end = o.len;
	o.len = 0;
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
	reserve(&o, 0);
	memcpy(o.p, magic, 4);
	o.p[4] = 2;			/* ELFCLASS64 */
	o.p[5] = e->big_endian ? 2 : 1;
	o.p[6] = 1;
	o.p[7] = e->osabi;
	o.p[8] = e->abiversion;
	o.len = 16;
	put(&o, e->type, 2);
	put(&o, e->machine, 2);
	put(&o, 1, 4);
	put(&o, 0, 8);			/* e_entry */
	put(&o, ph_at, 8);
	put(&o, 0, 8);			/* no sections */
	put(&o, e->e_flags, 4);
	put(&o, 64, 2);
	put(&o, 56, 2);
	put(&o, nph, 2);
	put(&o, 64, 2);
	put(&o, 0, 2);
	put(&o, 0, 2);
#define PHDR(type, flags, off, sz, memsz, al) do { \
		put(&o, type, 4); put(&o, flags, 4); put(&o, off, 8); put(&o, off, 8); \
		put(&o, off, 8); put(&o, sz, 8); put(&o, memsz, 8); put(&o, al, 8); } while (0)
	if (e->interp)
		PHDR(PT_INTERP_V, 4, interp_at, strlen(e->interp) + 1, strlen(e->interp) + 1, 1);
	/* RWX: the relocations (all at address 0) write where the model checks */
	PHDR(PT_LOAD_V, 7, 0, end, end, 0x1000);
	PHDR(PT_DYNAMIC_V, 6, dyn_at, dyn_len, dyn_len, 8);
	if (e->tls_memsz)
		PHDR(PT_TLS_V, 4, 0, 0, e->tls_memsz, e->tls_align ? e->tls_align : 1);
	if (e->has_gnu_stack)
		PHDR(PT_GNU_STACK_V, e->stack_flags, 0, 0, 0, 16);
#undef PHDR
	o.len = end;
	*outp = o.p;
	*outlen = o.len;
	return ST_OK;
}
