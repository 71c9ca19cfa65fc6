/*
 * elfgen.h: builds small shared-object images in memory for unit tests.
 *
 * Any class and byte order: one PT_LOAD covering the whole image, a
 * PT_DYNAMIC, .dynstr, .dynsym with a SysV hash table, optional version
 * definitions and requirements, and a RELA table referencing symbols.
 * The unit tests use it to check the reader on layouts the host
 * toolchain cannot produce (ELF32, big-endian) and to break one field at
 * a time.  Images are malloc'ed; the caller frees eg.buf.
 */
#ifndef ABISCOPE_ELFGEN_H
#define ABISCOPE_ELFGEN_H

#include "core/common.h"

struct eg_sym {
	const char *name;
	bool defined;
	uint8_t bind, type, vis;
	uint16_t versym;	/* 0 = none given */
};

struct eg_spec {
	bool is64, big;
	uint16_t machine;
	const char *needed[8];
	const char *soname, *rpath, *runpath;
	struct eg_sym sym[16];
	size_t nsym;
	/* one version definition list (index 2..) and one requirement file */
	const char *verdef[4];	/* names; base (index 1) is the soname */
	const char *verneed_file;
	const char *verneed[4];	/* names, indexes 2+ndef .. */
	bool with_relocs;	/* one GLOB_DAT-style reloc per undefined symbol */
};

struct eg_image {
	uint8_t *buf;
	size_t len;
	/* where things ended up, for tests that corrupt them */
	size_t dyn_off, dynstr_off, dynsym_off, hash_off;
};

void eg_build(const struct eg_spec *s, struct eg_image *img);

#endif

/* ---- implementation (header-only: each test is a single file) ---- */

struct eg_w {
	uint8_t *b;
	size_t cap;
	bool big;
};

static void eg_put(struct eg_w *w, size_t off, uint64_t v, int n)
{
	if (off + (size_t)n > w->cap)
		return;
	for (int i = 0; i < n; i++) {
		int shift = w->big ? 8 * (n - 1 - i) : 8 * i;
		w->b[off + (size_t)i] = (uint8_t)(v >> shift);
	}
}

static size_t eg_align(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

static uint32_t eg_sysv_hash(const char *name)
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

void eg_build(const struct eg_spec *s, struct eg_image *img)
{
	size_t W = s->is64 ? 8 : 4;
	size_t ehsz = s->is64 ? 64 : 52, phsz = s->is64 ? 56 : 32, symsz = s->is64 ? 24 : 16;
	size_t relasz = s->is64 ? 24 : 12;
	/* string table */
	char strtab[2048];
	size_t sl = 1;
	strtab[0] = '\0';
#define EG_ADDSTR(str) (__extension__({ size_t o_ = sl; size_t n_ = strlen(str) + 1; \
	if (sl + n_ <= sizeof strtab) { memcpy(strtab + sl, (str), n_); sl += n_; } o_; }))
	size_t needed_off[8] = { 0 }, nneeded = 0;
	for (size_t i = 0; i < 8 && s->needed[i]; i++, nneeded++)
		needed_off[i] = EG_ADDSTR(s->needed[i]);
	size_t soname_off = s->soname ? EG_ADDSTR(s->soname) : 0;
	size_t rpath_off = s->rpath ? EG_ADDSTR(s->rpath) : 0;
	size_t runpath_off = s->runpath ? EG_ADDSTR(s->runpath) : 0;
	size_t symname_off[16];
	for (size_t i = 0; i < s->nsym; i++)
		symname_off[i] = EG_ADDSTR(s->sym[i].name);
	size_t ndef = 0, nneed = 0, def_name[5], need_name[4], need_file = 0;
	if (s->verdef[0] || s->verneed_file)
		def_name[0] = s->soname ? soname_off : EG_ADDSTR("base");
	for (; ndef < 4 && s->verdef[ndef]; ndef++)
		def_name[ndef + 1] = EG_ADDSTR(s->verdef[ndef]);
	if (s->verneed_file) {
		need_file = EG_ADDSTR(s->verneed_file);
		for (; nneed < 4 && s->verneed[nneed]; nneed++)
			need_name[nneed] = EG_ADDSTR(s->verneed[nneed]);
	}
	bool versions = ndef || nneed;
#undef EG_ADDSTR
	size_t nsyms = s->nsym + 1;
	size_t off = ehsz + 2 * phsz;
	size_t dynstr = off;
	off = eg_align(off + sl, 8);
	size_t dynsym = off;
	off += nsyms * symsz;
	size_t versym = off;
	if (versions)
		off = eg_align(off + nsyms * 2, 4);
	size_t verdef = off;
	if (versions)
		off += (ndef + 1) * (20 + 8);
	size_t verneed = off;
	if (nneed)
		off += 16 + nneed * 16;
	off = eg_align(off, 4);
	size_t hash = off, nbucket = 3;
	off += (2 + nbucket + nsyms) * 4;
	off = eg_align(off, 8);
	size_t rela = off, nrela = 0;
	if (s->with_relocs)
		for (size_t i = 0; i < s->nsym; i++)
			nrela += !s->sym[i].defined;
	off += nrela * relasz;
	off = eg_align(off, 8);
	size_t dyn = off;
	size_t ndyn = nneeded + 12 + (versions ? 6 : 0);
	off += ndyn * 2 * W;
	size_t total = off;

	struct eg_w w = { calloc(1, total), total, s->big };
	img->buf = w.b;
	img->len = total;
	img->dyn_off = dyn;
	img->dynstr_off = dynstr;
	img->dynsym_off = dynsym;
	img->hash_off = hash;
	/* ELF header */
	memcpy(w.b, "\177ELF", 4);
	w.b[4] = s->is64 ? 2 : 1;
	w.b[5] = s->big ? 2 : 1;
	w.b[6] = 1;
	eg_put(&w, 16, 3, 2); /* ET_DYN */
	eg_put(&w, 18, s->machine, 2);
	eg_put(&w, 20, 1, 4);
	if (s->is64) {
		eg_put(&w, 32, ehsz, 8);	/* phoff */
		eg_put(&w, 52, ehsz, 2);
		eg_put(&w, 54, phsz, 2);
		eg_put(&w, 56, 2, 2);
		eg_put(&w, 58, 64, 2);
	} else {
		eg_put(&w, 28, ehsz, 4);
		eg_put(&w, 40, ehsz, 2);
		eg_put(&w, 42, phsz, 2);
		eg_put(&w, 44, 2, 2);
		eg_put(&w, 46, 40, 2);
	}
	/* program headers */
	for (int k = 0; k < 2; k++) {
		size_t p = ehsz + (size_t)k * phsz;
		uint32_t type = k == 0 ? 1 : 2;
		uint64_t o = k == 0 ? 0 : dyn, sz = k == 0 ? total : ndyn * 2 * W;
		if (s->is64) {
			eg_put(&w, p, type, 4);
			eg_put(&w, p + 4, 6, 4);
			eg_put(&w, p + 8, o, 8);
			eg_put(&w, p + 16, o, 8);
			eg_put(&w, p + 24, o, 8);
			eg_put(&w, p + 32, sz, 8);
			eg_put(&w, p + 40, sz, 8);
			eg_put(&w, p + 48, 0x1000, 8);
		} else {
			eg_put(&w, p, type, 4);
			eg_put(&w, p + 4, o, 4);
			eg_put(&w, p + 8, o, 4);
			eg_put(&w, p + 12, o, 4);
			eg_put(&w, p + 16, sz, 4);
			eg_put(&w, p + 20, sz, 4);
			eg_put(&w, p + 24, 6, 4);
			eg_put(&w, p + 28, 0x1000, 4);
		}
	}
	memcpy(w.b + dynstr, strtab, sl);
	/* symbols (index 0 is the null symbol) */
	for (size_t i = 0; i < s->nsym; i++) {
		size_t p = dynsym + (i + 1) * symsz;
		const struct eg_sym *y = &s->sym[i];
		uint8_t info = (uint8_t)(y->bind << 4 | y->type);
		uint16_t shndx = y->defined ? 7 : 0;
		uint64_t value = y->defined ? 0x100 + i * 16 : 0;
		eg_put(&w, p, symname_off[i], 4);
		if (s->is64) {
			w.b[p + 4] = info;
			w.b[p + 5] = y->vis;
			eg_put(&w, p + 6, shndx, 2);
			eg_put(&w, p + 8, value, 8);
			eg_put(&w, p + 16, 8, 8);
		} else {
			eg_put(&w, p + 4, value, 4);
			eg_put(&w, p + 8, 8, 4);
			w.b[p + 12] = info;
			w.b[p + 13] = y->vis;
			eg_put(&w, p + 14, shndx, 2);
		}
		if (versions)
			eg_put(&w, versym + (i + 1) * 2, y->versym ? y->versym : 1, 2);
	}
	if (versions) {
		/* verdef: base (ndx 1, VER_FLG_BASE) then the definitions */
		for (size_t k = 0; k <= ndef; k++) {
			size_t p = verdef + k * 28;
			const char *nm = strtab + def_name[k];
			eg_put(&w, p, 1, 2);
			eg_put(&w, p + 2, k == 0 ? 1 : 0, 2);
			eg_put(&w, p + 4, k + 1, 2);
			eg_put(&w, p + 6, 1, 2);
			eg_put(&w, p + 8, eg_sysv_hash(nm), 4);
			eg_put(&w, p + 12, 20, 4);
			eg_put(&w, p + 16, k == ndef ? 0 : 28, 4);
			eg_put(&w, p + 20, def_name[k], 4);
			eg_put(&w, p + 24, 0, 4);
		}
		if (nneed) {
			eg_put(&w, verneed, 1, 2);
			eg_put(&w, verneed + 2, nneed, 2);
			eg_put(&w, verneed + 4, need_file, 4);
			eg_put(&w, verneed + 8, 16, 4);
			eg_put(&w, verneed + 12, 0, 4);
			for (size_t k = 0; k < nneed; k++) {
				size_t p = verneed + 16 + k * 16;
				eg_put(&w, p, eg_sysv_hash(strtab + need_name[k]), 4);
				eg_put(&w, p + 4, 0, 2);
				eg_put(&w, p + 6, ndef + 2 + k, 2);
				eg_put(&w, p + 8, need_name[k], 4);
				eg_put(&w, p + 12, k + 1 == nneed ? 0 : 16, 4);
			}
		}
	}
	/* SysV hash */
	eg_put(&w, hash, nbucket, 4);
	eg_put(&w, hash + 4, nsyms, 4);
	for (size_t i = 1; i < nsyms; i++) {
		size_t b = eg_sysv_hash(s->sym[i - 1].name) % nbucket;
		/* prepend i to bucket b's chain */
		uint32_t head = 0;
		const uint8_t *hp = w.b + hash + 8 + b * 4;
		for (int k = 0; k < 4; k++)
			head |= (uint32_t)hp[k] << (s->big ? 8 * (3 - k) : 8 * k);
		eg_put(&w, hash + 8 + nbucket * 4 + i * 4, head, 4);
		eg_put(&w, hash + 8 + b * 4, i, 4);
	}
	/* relocations: R_X86_64_GLOB_DAT (6) or a generic "6" on other machines */
	size_t r = 0;
	if (s->with_relocs)
		for (size_t i = 0; i < s->nsym; i++) {
			if (s->sym[i].defined)
				continue;
			size_t p = rela + r++ * relasz;
			if (s->is64) {
				eg_put(&w, p, 0x200 + i * 8, 8);
				eg_put(&w, p + 8, (uint64_t)(i + 1) << 32 | 6, 8);
			} else {
				eg_put(&w, p, 0x200 + i * 4, 4);
				eg_put(&w, p + 4, (uint32_t)((i + 1) << 8 | 6), 4);
			}
		}
	/* dynamic section */
	size_t d = dyn;
#define EG_DYN(tag, val) do { eg_put(&w, d, (uint64_t)(tag), (int)W); eg_put(&w, d + W, (val), (int)W); d += 2 * W; } while (0)
	for (size_t i = 0; i < nneeded; i++)
		EG_DYN(1, needed_off[i]);
	if (s->soname)
		EG_DYN(14, soname_off);
	if (s->rpath)
		EG_DYN(15, rpath_off);
	if (s->runpath)
		EG_DYN(29, runpath_off);
	EG_DYN(5, dynstr);
	EG_DYN(10, sl);
	EG_DYN(6, dynsym);
	EG_DYN(11, symsz);
	EG_DYN(4, hash);
	if (nrela) {
		EG_DYN(7, rela);
		EG_DYN(8, nrela * relasz);
		EG_DYN(9, relasz);
	}
	if (versions) {
		EG_DYN(0x6ffffff0, versym);
		EG_DYN(0x6ffffffc, verdef);
		EG_DYN(0x6ffffffd, ndef + 1);
		if (nneed) {
			EG_DYN(0x6ffffffe, verneed);
			EG_DYN(0x6fffffff, 1);
		}
	}
	EG_DYN(0, 0);
#undef EG_DYN
}
