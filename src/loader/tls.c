/*
 * tls.c: the static TLS block as glibc lays it out (elf/dl-tls.c
 * _dl_determine_tlsoffset) and hands out of it (elf/dl-reloc.c
 * _dl_try_allocate_static_tls), for either layout: the blocks below the
 * thread pointer (TLS_TCB_AT_TP, x86-64) or after a TCB above it
 * (TLS_DTV_AT_TP, aarch64).  The process says which (process.h).
 */
#include "loader/internal.h"

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) / align * align;
}

static size_t tls_align_of(const struct elf_file *ef)
{
	return ef->tls_align ? (size_t)ef->tls_align : 1;
}

/* glibc >= 2.41 appends the rseq area to the initial TLS blocks
 * (_dl_extra_tls_get_size: 32 bytes, aligned to 32, on every kernel). */
#define RSEQ_AREA_SIZE 32u

/*
 * _dl_determine_tlsoffset: the initial TLS block of the objects loaded at
 * start-up, laid out in load order with the holes that alignment leaves
 * reused (below the thread pointer on x86-64, after a TCB above it on
 * aarch64), then the surplus (glibc.rtld.nns,
 * glibc.rtld.optional_static_tls) rounded up to the block's alignment.
 */
void static_tls_layout(struct process *p, struct lmap **maps, size_t n, size_t surplus)
{
	size_t max_align = p->tcb_alignment, offset = p->tls_dtv_at_tp ? p->tls_tcb_size : 0;
	size_t freetop = 0, freebottom = 0;
	for (size_t i = 0; i < n; i++) {
		const struct object *o = maps[i]->obj;
		if (o->kind != OBJ_ELF || !o->elf_ok || !o->elf.has_tls)
			continue;
		maps[i]->tls_static = true;
		const struct elf_file *ef = &o->elf;
		size_t align = tls_align_of(ef), size = (size_t)ef->tls_memsz;
		size_t firstbyte = (size_t)(-(ef->tls_vaddr & (align - 1)) & (align - 1));
		max_align = MAX(max_align, align);
		if (p->tls_dtv_at_tp) {
			if (size <= freetop - freebottom) {
				size_t off = round_up(freebottom, align);
				if (off - freebottom < firstbyte)
					off += align;
				if (off + size - firstbyte <= freetop) {
					freebottom = off + size - firstbyte;
					continue;
				}
			}
			size_t off = round_up(offset, align);
			if (off - offset < firstbyte)
				off += align;
			if (off - firstbyte - offset > freetop - freebottom) {
				freebottom = offset;
				freetop = off - firstbyte;
			}
			offset = off + size - firstbyte;
			continue;
		}
		if (freebottom - freetop >= size) {
			size_t off = round_up(freetop + size - firstbyte, align) + firstbyte;
			if (off <= freebottom) {
				freetop = off;
				continue;
			}
		}
		size_t off = round_up(offset + size - firstbyte, align) + firstbyte;
		if (off > offset + size + (freebottom - freetop)) {
			freetop = offset;
			freebottom = off - size;
		}
		offset = off;
	}
	if (ldso_glibc_at_least(&p->facts, 2, 41)) {
		max_align = MAX(max_align, RSEQ_AREA_SIZE);
		offset = round_up(offset, RSEQ_AREA_SIZE) + RSEQ_AREA_SIZE;
	}
	p->static_tls_used = offset;
	p->static_tls_size = round_up(offset + surplus, p->tls_dtv_at_tp ? p->tcb_alignment : max_align);
	p->static_tls_align = max_align;
}

/* ALIGN_UP of glibc, in size_t arithmetic as it does it. */
static size_t align_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/* _dl_try_allocate_static_tls for the TLS block of ef; false: no room
 * (optional: a TLS descriptor's try, within the optional surplus). */
bool static_tls_take(struct process *p, const struct elf_file *ef, bool optional)
{
	size_t align = tls_align_of(ef);
	if (align > p->static_tls_align || p->static_tls_used > p->static_tls_size)
		return false;
	size_t fbo = (size_t)(ef->tls_vaddr & (align - 1));
	size_t use;
	if (p->tls_dtv_at_tp) {
		size_t offset = align_up(p->static_tls_used - fbo, align) + fbo;
		size_t used = offset + (size_t)ef->tls_memsz;
		if (used > p->static_tls_size || used < p->static_tls_used)
			return false;
		use = used - p->static_tls_used;
	} else {
		size_t freebytes = p->static_tls_size - p->static_tls_used;
		size_t blsize = (size_t)ef->tls_memsz + fbo;
		if (freebytes < blsize)
			return false;
		size_t nblk = (freebytes - blsize) / align;
		use = freebytes - nblk * align - fbo;
	}
	if (optional && use > p->static_tls_optional)
		return false;
	if (optional)
		p->static_tls_optional -= use;
	p->static_tls_used += use;
	return true;
}
