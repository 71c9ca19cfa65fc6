#include "pyenv/wheelimg.h"

#include <zip.h>
#include <zlib.h>

#define WIN 32768u			/* deflate's window */
#define CHUNK ((size_t)1 << 16)
#define MAX_SHSTRTAB ((uint64_t)16 << 20)
#define FATBIN_F_COMPRESSED (0x2000ull | 0x8000ull)	/* LZ4, zstd (cuda/fatbin.h) */

struct elf_head {
	bool is64, big;
	uint64_t phoff, shoff;
	uint16_t phentsize, phnum, shentsize, shnum, shstrndx;
};

/* A place to restart inflating from (zran.c's "access point"). */
struct point {
	uint64_t out;		/* uncompressed offset */
	uint64_t in;		/* compressed offset of the next whole byte */
	int bits;		/* bits of the byte before it still to read */
	uint8_t window[WIN];	/* the 32 KiB that precede out */
};

struct span {
	uint64_t lo, hi;
};

struct spans {
	struct span *s;
	size_t n, cap;
};

struct bookmark;

struct reader {
	struct wheel *w;
	struct wheel_member *m;
	const char *where;
	bool stored;
	zip_file_t *zf;		/* the member's raw (compressed) bytes */
	uint64_t raw_read;	/* bytes read from zf */
	z_stream z;
	bool zinit;
	uint8_t *in, *out;	/* CHUNK each */
	uint64_t pos;		/* uncompressed offset of the next byte inflated */
	struct point *pt;	/* malloc'd, freed when the image is built */
	size_t npt, cap;
	uint8_t *img;
	uint64_t filled, budget;
	bool not_elf;		/* its head says it is not one to image: pass 1 stopped */
	uint64_t run_lo;	/* [run_lo, pos) is written in the image */
	struct bookmark *mark;	/* or NULL */
	struct elf_head *h;
	struct diag *d;
};

static enum status fail(struct reader *r, uint64_t off, const char *what)
{
	return diag_set(r->d, ST_MALFORMED, r->where, off, "damaged member: %s", what);
}

static enum status raw_open(struct reader *r)
{
	if (r->zf)
		zip_fclose(r->zf);
	r->zf = zip_fopen_index(r->w->zip, r->m->index, ZIP_FL_COMPRESSED);
	r->raw_read = 0;
	r->z.avail_in = 0;
	if (!r->zf)
		return diag_set(r->d, ST_MALFORMED, r->where, DIAG_NO_OFFSET, "cannot read the member: %s",
				zip_strerror(r->w->zip));
	return ST_OK;
}

/* More raw bytes when none are waiting; *eof at the member's end. */
static enum status raw_fill(struct reader *r, bool *eof)
{
	*eof = false;
	if (r->z.avail_in)
		return ST_OK;
	zip_int64_t n = zip_fread(r->zf, r->in, CHUNK);
	if (n < 0)
		return fail(r, r->pos, zip_file_strerror(r->zf));
	r->raw_read += (uint64_t)n;
	r->z.next_in = r->in;
	r->z.avail_in = (uInt)n;
	*eof = n == 0;
	return ST_OK;
}

/* Positions the raw stream at compressed offset at. */
static enum status raw_seek(struct reader *r, uint64_t at)
{
	uint64_t next = r->raw_read - r->z.avail_in;
	if (r->z.avail_in && at >= next && at - next <= r->z.avail_in) {
		r->z.next_in += at - next;
		r->z.avail_in -= (uInt)(at - next);
		return ST_OK;
	}
	/* libzip seeks in the raw bytes of a member opened with ZIP_FL_COMPRESSED */
	if (at > INT64_MAX || zip_fseek(r->zf, (zip_int64_t)at, SEEK_SET) != 0)
		return fail(r, r->pos, zip_file_strerror(r->zf));
	r->raw_read = at;
	r->z.avail_in = 0;
	return ST_OK;
}

static enum status add_point(struct reader *r, int bits, uint64_t in, uint64_t out, unsigned left,
			     const uint8_t *ring)
{
	if (r->npt == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct point *p = realloc(r->pt, cap * sizeof *p);
		if (!p)
			return diag_set(r->d, ST_LIMIT, r->where, DIAG_NO_OFFSET, "out of memory for its index");
		r->pt = p;
		r->cap = cap;
	}
	struct point *p = &r->pt[r->npt++];
	p->out = out;
	p->in = in;
	p->bits = bits;
	if (left)
		memcpy(p->window, ring + WIN - left, left);
	if (left < WIN)
		memcpy(p->window + left, ring, WIN - left);
	return ST_OK;
}

/* The ELF header's facts an image needs; false for anything unusual. */
static bool read_elf_head(const uint8_t *head, size_t n, uint64_t size, struct elf_head *h)
{
	if (n < 64 || !elf_has_magic(head, n) || (head[4] != 1 && head[4] != 2) || (head[5] != 1 && head[5] != 2))
		return false;
	h->is64 = head[4] == 2;
	h->big = head[5] == 2;
	struct bytes b = bytes_make(head, n, h->big);
	if (!(bytes_word(&b, h->is64 ? 32 : 28, h->is64, &h->phoff) &&
	      bytes_word(&b, h->is64 ? 40 : 32, h->is64, &h->shoff) &&
	      bytes_u16(&b, h->is64 ? 54 : 42, &h->phentsize) && bytes_u16(&b, h->is64 ? 56 : 44, &h->phnum) &&
	      bytes_u16(&b, h->is64 ? 58 : 46, &h->shentsize) && bytes_u16(&b, h->is64 ? 60 : 48, &h->shnum) &&
	      bytes_u16(&b, h->is64 ? 62 : 50, &h->shstrndx)))
		return false;
	uint64_t shent = h->is64 ? 64 : 40, phent = h->is64 ? 56 : 32;
	return h->shnum > 0 && h->shentsize == shent && h->shstrndx < h->shnum && h->shoff <= size &&
	       (size - h->shoff) / shent >= h->shnum && (h->phnum == 0 || (h->phentsize == phent &&
	       h->phoff <= size && (size - h->phoff) / phent >= h->phnum));
}

/* The bytes [done, done + n) have been inflated: the CRC, the head. */
static void produced(struct reader *r, const uint8_t *p, size_t n, uint64_t done, uLong *crc)
{
	*crc = crc32(*crc, p, (uInt)n);
	if (done < WHEEL_HEAD) {
		size_t k = (size_t)MIN((uint64_t)n, WHEEL_HEAD - done);
		memcpy(r->m->head + done, p, k);
		r->m->head_len = (size_t)done + k;
		if (r->m->head_len == MIN(WHEEL_HEAD, r->m->size))
			r->not_elf = !read_elf_head(r->m->head, r->m->head_len, r->m->size, r->h);
	}
}

/* Pass 1: the whole member, for its CRC and the checkpoints. */
static enum status index_deflated(struct reader *r, uLong *crc)
{
	uint8_t *ring = r->out;	/* CHUNK >= WIN: its first WIN bytes */
	memset(ring, 0, WIN);
	uint64_t totin = 0, totout = 0, last = 0;
	int ret = Z_OK;
	enum status st;
	r->z.avail_out = 0;
	for (;;) {
		bool eof = false;
		if ((st = raw_fill(r, &eof)) != ST_OK)
			return st;
		if (r->z.avail_out == 0) {
			r->z.avail_out = WIN;
			r->z.next_out = ring;
		}
		uint8_t *from = r->z.next_out;
		totin += r->z.avail_in;
		totout += r->z.avail_out;
		ret = inflate(&r->z, Z_BLOCK);
		totin -= r->z.avail_in;
		totout -= r->z.avail_out;
		if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_MEM_ERROR)
			return fail(r, totout, r->z.msg ? r->z.msg : "invalid compressed data");
		if (totout > r->m->size)
			return diag_set(r->d, ST_MALFORMED, r->where, r->m->size, "member longer than declared");
		produced(r, from, (size_t)(r->z.next_out - from), totout - (uint64_t)(r->z.next_out - from), crc);
		if (ret == Z_STREAM_END || r->not_elf)
			break;
		if (ret == Z_BUF_ERROR && eof)
			return fail(r, totout, "the compressed data ends early");
		if ((r->z.data_type & 128) && !(r->z.data_type & 64) && totout - last > WHEELIMG_SPAN) {
			if ((st = add_point(r, r->z.data_type & 7, totin, totout, r->z.avail_out, ring)) != ST_OK)
				return st;
			last = totout;
		}
	}
	r->pos = totout;
	return ST_OK;
}

static enum status index_stored(struct reader *r, uLong *crc)
{
	enum status st;
	for (;;) {
		bool eof;
		if ((st = raw_fill(r, &eof)) != ST_OK)
			return st;
		if (eof)
			break;
		if (r->raw_read > r->m->size)
			return diag_set(r->d, ST_MALFORMED, r->where, r->m->size, "member longer than declared");
		produced(r, r->z.next_in, r->z.avail_in, r->raw_read - r->z.avail_in, crc);
		r->z.avail_in = 0;
		if (r->not_elf)
			break;
	}
	r->pos = r->raw_read;
	return ST_OK;
}

/* Where restart() may take the inflater back to, set by mark(). */
struct bookmark {
	bool set;
	z_stream z;		/* a copy of the inflater's state (inflateCopy) */
	uint64_t pos, raw;
};

/* Remembers this place (the start of a cubin, whose headers are read first). */
static enum status mark(struct reader *r, struct bookmark *b)
{
	if (b->set && !r->stored)
		inflateEnd(&b->z);
	b->set = false;
	if (!r->stored && inflateCopy(&b->z, &r->z) != Z_OK)
		return diag_set(r->d, ST_LIMIT, r->where, r->pos, "out of memory for its image");
	b->pos = r->pos;
	b->raw = r->raw_read - r->z.avail_in;
	b->set = true;
	return ST_OK;
}

static void unmark(struct reader *r, struct bookmark *b)
{
	if (b->set && !r->stored)
		inflateEnd(&b->z);
	b->set = false;
}

/*
 * Ready to inflate on towards off: from here when no place to restart
 * from lies between, else from the nearest one before off (the bookmark,
 * a checkpoint, or the stream's start).
 */
static enum status restart(struct reader *r, uint64_t off)
{
	enum status st;
	if (r->stored) {
		if (r->pos != off && (st = raw_seek(r, off)) != ST_OK)
			return st;
		r->pos = off;
		return ST_OK;
	}
	size_t lo = 0, hi = r->npt;	/* the first point past off */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->pt[mid].out <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct point *p = lo ? &r->pt[lo - 1] : NULL;
	uint64_t best = p ? p->out : 0;
	struct bookmark *b = r->mark && r->mark->set && r->mark->pos <= off ? r->mark : NULL;
	if (b && b->pos >= best)
		best = b->pos;
	else
		b = NULL;
	if (r->pos <= off && r->pos >= best)
		return ST_OK;
	if (b) {
		inflateEnd(&r->z);
		if (inflateCopy(&r->z, &b->z) != Z_OK) {
			r->zinit = false;
			return diag_set(r->d, ST_LIMIT, r->where, off, "out of memory for its image");
		}
		r->z.avail_in = 0;
		if ((st = raw_seek(r, b->raw)) != ST_OK)
			return st;
		r->pos = b->pos;
		return ST_OK;
	}
	if ((st = raw_seek(r, p ? p->in - (p->bits ? 1 : 0) : 0)) != ST_OK)
		return st;
	inflateReset(&r->z);
	r->pos = 0;
	if (!p)
		return ST_OK;
	if (p->bits) {
		bool eof;
		if ((st = raw_fill(r, &eof)) != ST_OK)
			return st;
		if (eof)
			return fail(r, p->out, "ends before its data");
		int ch = *r->z.next_in++;
		r->z.avail_in--;
		inflatePrime(&r->z, p->bits, ch >> (8 - p->bits));
	}
	inflateSetDictionary(&r->z, p->window, WIN);
	r->pos = p->out;
	return ST_OK;
}

/*
 * Pass 2: writes the member's bytes [off, off + len) into the image.  Bytes
 * written by the fill just before (the run ending here) are not inflated
 * again, and inflating stops at the end asked for.
 */
static enum status fill(struct reader *r, uint64_t off, uint64_t len)
{
	uint64_t end = off + MIN(len, r->m->size - MIN(off, r->m->size));
	enum status st;
	if (off >= end)
		return ST_OK;
	bool goes_on = off <= r->pos && off >= r->run_lo;
	if (goes_on) {
		if (end <= r->pos)
			return ST_OK;
		off = r->pos;
	} else if ((st = restart(r, off)) != ST_OK) {
		return st;
	}
	while (r->pos < end) {
		const uint8_t *chunk;
		size_t n;
		bool eof;
		if ((st = raw_fill(r, &eof)) != ST_OK)
			return st;
		if (r->stored) {
			if (eof)
				return fail(r, r->pos, "ends before its data");
			chunk = r->z.next_in;
			n = (size_t)MIN((uint64_t)r->z.avail_in, end - r->pos);
			r->z.next_in += n;
			r->z.avail_in -= (uInt)n;
		} else {
			/* with no input left, inflate may still have output to give */
			size_t want = (size_t)MIN((uint64_t)CHUNK, end - r->pos);
			r->z.next_out = r->out;
			r->z.avail_out = (uInt)want;
			int ret = inflate(&r->z, Z_NO_FLUSH);
			if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
				return fail(r, r->pos, r->z.msg ? r->z.msg : "invalid compressed data");
			chunk = r->out;
			n = want - r->z.avail_out;
			if (n == 0 && (eof || ret == Z_STREAM_END))
				return fail(r, r->pos, "ends before its data");
		}
		uint64_t lo = MAX(r->pos, off), hi = MIN(r->pos + n, end);
		if (lo < hi && hi - lo > r->budget - r->filled)
			return wheel_kept_limit(r->w, r->m->name, r->d);
		if (lo < hi) {
			memcpy(r->img + lo, chunk + (lo - r->pos), (size_t)(hi - lo));
			r->filled += hi - lo;
		}
		r->pos += n;
	}
	if (!goes_on)
		r->run_lo = off;
	return ST_OK;
}

static bool spans_add(struct spans *v, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return true;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		struct span *s = realloc(v->s, cap * sizeof *s);
		if (!s)
			return false;
		v->s = s;
		v->cap = cap;
	}
	v->s[v->n].lo = lo;
	v->s[v->n].hi = hi;
	v->n++;
	return true;
}

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void spans_merge(struct spans *v)
{
	if (!v->n)
		return;
	qsort(v->s, v->n, sizeof *v->s, span_cmp);
	size_t k = 0;
	for (size_t i = 1; i < v->n; i++) {
		if (v->s[i].lo <= v->s[k].hi)
			v->s[k].hi = MAX(v->s[k].hi, v->s[i].hi);
		else
			v->s[++k] = v->s[i];
	}
	v->n = k + 1;
}

struct section {
	uint32_t name, type, link;
	uint64_t flags, offset, size;
};

static bool read_section(const struct bytes *img, const struct elf_head *h, uint16_t i, struct section *s)
{
	uint64_t at = h->shoff + (uint64_t)i * h->shentsize;
	return bytes_u32(img, at, &s->name) && bytes_u32(img, at + 4, &s->type) &&
	       bytes_word(img, at + 8, h->is64, &s->flags) &&
	       bytes_word(img, at + (h->is64 ? 24 : 16), h->is64, &s->offset) &&
	       bytes_word(img, at + (h->is64 ? 32 : 20), h->is64, &s->size) &&
	       bytes_u32(img, at + (h->is64 ? 40 : 24), &s->link);
}

/* Section types elf_parse() reads the contents of (besides the names). */
static bool parser_reads(uint32_t type)
{
	return type == 5 /* SHT_HASH */ || type == 6 /* SHT_DYNAMIC */ || type == 7 /* SHT_NOTE */ ||
	       type == 11 /* SHT_DYNSYM */ || (type >= 0x6ffffff6u && type <= 0x6fffffffu);	/* GNU hash, versions */
}

/*
 * An uncompressed cubin (an ELF file for the GPU) at [base, base + size).
 * Its only reader is the kernel test in cuda/verdict.c: elf_parse() and the
 * section names.  Kept: its headers, the section names, every segment but
 * PT_LOAD, the sections elf_parse() reads and the string tables they link
 * to; the rest (code, constants, .nv.info, relocations, symbols) is left out.
 */
static enum status fill_spans(struct reader *r, struct spans *v)
{
	spans_merge(v);
	enum status st = ST_OK;
	for (size_t i = 0; i < v->n && st == ST_OK; i++)
		st = fill(r, v->s[i].lo, v->s[i].hi - v->s[i].lo);
	return st;
}

static enum status fill_cubin(struct reader *r, const struct bytes *img, uint64_t base, uint64_t size,
			      struct spans *keep)
{
	struct elf_head h;
	const uint8_t *at = bytes_at(img, base, MIN(size, (uint64_t)64));
	enum status st;
	if ((r->pos == base && r->mark && (st = mark(r, r->mark)) != ST_OK) || (st = fill(r, base, 64)) != ST_OK)
		return st;
	if (!at || !read_elf_head(at, (size_t)MIN(size, (uint64_t)64), size, &h))
		return fill(r, base, size);
	uint64_t shtab = h.shoff, shlen = (uint64_t)h.shnum * h.shentsize;
	uint64_t phtab = h.phoff, phlen = (uint64_t)h.phnum * h.phentsize;
	if ((st = fill(r, base + phtab, phlen)) != ST_OK || (st = fill(r, base + shtab, shlen)) != ST_OK)
		return st;
	struct bytes sub;
	if (!bytes_sub(img, base, size, &sub))
		return fill(r, base, size);
	bool ok = spans_add(keep, base, base + 64) && spans_add(keep, base + shtab, base + shtab + shlen) &&
		  spans_add(keep, base + phtab, base + phtab + phlen);
	for (uint16_t i = 0; i < h.phnum && ok; i++) {
		uint64_t p = phtab + (uint64_t)i * h.phentsize, off, filesz;
		uint32_t type;
		if (bytes_u32(&sub, p, &type) && type != 1 /* PT_LOAD */ &&
		    bytes_word(&sub, p + (h.is64 ? 8 : 4), h.is64, &off) &&
		    bytes_word(&sub, p + (h.is64 ? 32 : 16), h.is64, &filesz) && off <= size)
			ok = spans_add(keep, base + off, base + off + MIN(filesz, size - off));
	}
	bool *linked = calloc(h.shnum, sizeof *linked);	/* the string tables of sections kept */
	ok = ok && linked;
	for (uint16_t i = 0; i < h.shnum && ok; i++) {
		struct section s;
		if (read_section(&sub, &h, i, &s) && parser_reads(s.type) && s.link < h.shnum)
			linked[s.link] = true;
	}
	for (uint16_t i = 0; i < h.shnum && ok; i++) {
		struct section s;
		if (!read_section(&sub, &h, i, &s) || s.type == 8 /* SHT_NOBITS */ || s.offset > size ||
		    s.size > size - s.offset)
			continue;
		if (i == h.shstrndx || parser_reads(s.type) || linked[i])
			ok = spans_add(keep, base + s.offset, base + s.offset + s.size);
	}
	free(linked);
	if (!ok)
		return diag_set(r->d, ST_LIMIT, r->where, base, "out of memory for its image");
	return fill_spans(r, keep);
}

/*
 * The fatbins that fill [lo, hi) back to back (what cuda/fatbin.c walks):
 * the section is left out but for what is filled here, in order: the
 * fatbin and entry headers and, of an uncompressed cubin, what
 * fill_cubin() keeps.  PTX, LTO-IR and compressed payloads are never read.
 * At anything the walk does not expect, the rest of the section is filled.
 */
static enum status fill_fatbins(struct reader *r, const struct bytes *img, uint64_t lo, uint64_t hi)
{
	static const uint8_t magic_bytes[4] = { 0x50, 0xed, 0x55, 0xba };
	struct spans keep = { 0 };
	struct bookmark b = { 0 };
	enum status st = ST_OK;
	uint64_t q = lo;
	r->mark = &b;
	while (hi - q >= 16 && st == ST_OK) {
		uint32_t magic;
		uint16_t version, hsize;
		uint64_t fsize;
		if ((st = fill(r, q, 16)) != ST_OK)
			break;
		if (bytes_u32(img, q, &magic) && magic != 0xBA55ED50u && !img->big_endian) {
			/* padding before the next one, which the walk skips to */
			struct bytes near;
			uint64_t look = MIN(hi - q, (uint64_t)4096);
			if ((st = fill(r, q, look)) != ST_OK)
				break;
			int64_t at = bytes_sub(img, q, look, &near) ? bytes_find(&near, 0, magic_bytes, 4) : -1;
			if (at <= 0)
				break;
			q += (uint64_t)at;
			continue;
		}
		if (!bytes_u32(img, q, &magic) || magic != 0xBA55ED50u || !bytes_u16(img, q + 4, &version) ||
		    !bytes_u16(img, q + 6, &hsize) || !bytes_u64(img, q + 8, &fsize) || version != 1 || hsize < 16 ||
		    hsize > hi - q || fsize > hi - q - hsize || (st = fill(r, q, hsize)) != ST_OK)
			break;
		uint64_t e = q + hsize, end = e + fsize;
		while (e < end && st == ST_OK) {
			uint32_t ehsize;
			uint64_t psize, flags;
			uint16_t kind;
			if (end - e < 64 || (st = fill(r, e, 64)) != ST_OK)
				break;
			if (!bytes_u16(img, e, &kind) || !bytes_u32(img, e + 4, &ehsize) || !bytes_u64(img, e + 8, &psize) ||
			    !bytes_u64(img, e + 0x28, &flags) || ehsize < 64 || ehsize > 4096 || ehsize > end - e ||
			    psize > end - e - ehsize || (st = fill(r, e, ehsize)) != ST_OK)
				break;
			keep.n = 0;
			if (kind == 2 /* FATBIN_CUBIN */ && !(flags & FATBIN_F_COMPRESSED))
				st = fill_cubin(r, img, e + ehsize, psize, &keep);
			e += ehsize + psize;
		}
		if (e != end)
			break;
		q = end;
	}
	free(keep.s);
	unmark(r, &b);
	r->mark = NULL;
	if (st == ST_OK && q < hi)
		st = fill(r, q, hi - q);
	return st;
}

/* What the image leaves out: code, debug sections, compressed fatbin payloads. */
static enum status plan(struct reader *r, const struct elf_head *h, struct spans *drops, struct spans *keeps)
{
	struct bytes img = bytes_make(r->img, (size_t)r->m->size, h->big);
	uint64_t size = r->m->size;
	enum status st;
	if ((st = fill(r, h->phoff, (uint64_t)h->phnum * h->phentsize)) != ST_OK ||
	    (st = fill(r, h->shoff, (uint64_t)h->shnum * h->shentsize)) != ST_OK)
		return st;
	bool ok = spans_add(keeps, 0, 64) && spans_add(keeps, h->phoff, h->phoff + (uint64_t)h->phnum * h->phentsize) &&
		  spans_add(keeps, h->shoff, h->shoff + (uint64_t)h->shnum * h->shentsize);
	/* every segment the loader reads by its offset (PT_DYNAMIC, PT_NOTE, ...) */
	for (uint16_t i = 0; i < h->phnum && ok; i++) {
		uint64_t at = h->phoff + (uint64_t)i * h->phentsize, off, filesz;
		uint32_t type;
		if (bytes_u32(&img, at, &type) && type != 1 /* PT_LOAD */ &&
		    bytes_word(&img, at + (h->is64 ? 8 : 4), h->is64, &off) &&
		    bytes_word(&img, at + (h->is64 ? 32 : 16), h->is64, &filesz) && off <= size)
			ok = spans_add(keeps, off, off + MIN(filesz, size - off));
	}
	struct section names;
	struct bytes shstr = { 0 };
	if (read_section(&img, h, h->shstrndx, &names) && names.offset <= size && names.size <= size - names.offset &&
	    names.size <= MAX_SHSTRTAB) {
		if ((st = fill(r, names.offset, names.size)) != ST_OK)
			return st;
		bytes_sub(&img, names.offset, names.size, &shstr);
	}
	for (uint16_t i = 0; i < h->shnum && ok; i++) {
		struct section s;
		const char *name = "";
		if (!read_section(&img, h, i, &s) || s.type == 8 /* SHT_NOBITS */ || s.offset > size ||
		    s.size > size - s.offset)
			continue;
		if (!bytes_cstr(&shstr, s.name, &name, NULL))
			name = "";
		uint64_t lo = s.offset, hi = s.offset + s.size;
		if (s.flags & 4 /* SHF_EXECINSTR */)
			ok = spans_add(drops, lo, hi);
		else if (!(s.flags & 2 /* SHF_ALLOC */) && (str_starts(name, ".debug") || str_starts(name, ".zdebug")))
			ok = spans_add(drops, lo, hi);
		else if (str_eq(name, ".nv_fatbin") || str_eq(name, "__nv_relfatbin"))
			ok = spans_add(drops, lo, hi) && (st = fill_fatbins(r, &img, lo, hi)) == ST_OK;
		else
			ok = spans_add(keeps, lo, hi);
		if (st != ST_OK)
			return st;
	}
	if (!ok)
		return diag_set(r->d, ST_LIMIT, r->where, DIAG_NO_OFFSET, "out of memory for its image");
	return ST_OK;
}

/* Fills everything but drops minus keeps, in order. */
static enum status fill_rest(struct reader *r, struct spans *drops, struct spans *keeps)
{
	spans_merge(drops);
	spans_merge(keeps);
	uint64_t at = 0;
	size_t k = 0;
	enum status st;
	for (size_t i = 0; i < drops->n; i++) {
		uint64_t lo = drops->s[i].lo, hi = drops->s[i].hi;
		/* a kept range inside a dropped one splits it */
		while (lo < hi) {
			while (k < keeps->n && keeps->s[k].hi <= lo)
				k++;
			uint64_t cut = k < keeps->n ? MAX(keeps->s[k].lo, lo) : hi;
			if (cut > hi)
				cut = hi;
			if (cut > lo) {	/* [lo, cut) is left out */
				if ((st = fill(r, at, lo - at)) != ST_OK)
					return st;
				at = cut;
			}
			if (cut >= hi)
				break;
			lo = MIN(keeps->s[k].hi, hi);	/* [cut, lo) is kept */
		}
	}
	return fill(r, at, r->m->size - at);
}

static enum status index_member(struct reader *r, bool *applies)
{
	zip_stat_t zs;
	enum status st;
	uLong crc = crc32(0L, Z_NULL, 0);
	if ((st = r->stored ? index_stored(r, &crc) : index_deflated(r, &crc)) != ST_OK)
		return st;
	if (r->not_elf)
		return ST_OK;	/* *applies stays false: the caller streams it */
	if (r->pos != r->m->size)
		return diag_set(r->d, ST_MALFORMED, r->where, r->pos, "member of %llu bytes where its header declares %llu",
				(unsigned long long)r->pos, (unsigned long long)r->m->size);
	if (zip_stat_index(r->w->zip, r->m->index, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_CRC) || zs.crc != crc)
		return fail(r, r->pos, "CRC error");
	*applies = r->m->head_len == WHEEL_HEAD;
	return ST_OK;
}

enum status wheelimg_build(struct arena *a, struct wheel *w, size_t i, uint64_t budget, bool *applies,
			   uint64_t *filled, struct diag *d)
{
	struct wheel_member *m = &w->m[i];
	*applies = false;
	*filled = 0;
	zip_stat_t zs;
	if (zip_stat_index(w->zip, m->index, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_COMP_METHOD) ||
	    !(zs.valid & ZIP_STAT_ENCRYPTION_METHOD) || zs.encryption_method != ZIP_EM_NONE ||
	    (zs.comp_method != ZIP_CM_DEFLATE && zs.comp_method != ZIP_CM_STORE))
		return ST_OK;
	struct elf_head h;
	memset(&h, 0, sizeof h);
	struct reader r = { .w = w, .m = m, .d = d, .stored = zs.comp_method == ZIP_CM_STORE, .h = &h, .budget = budget,
			    .where = arena_printf(a, "%s(%s)", w->path, m->name) };
	struct spans drops = { 0 }, keeps = { 0 };
	enum status st = ST_OK;
	r.in = malloc(CHUNK);
	r.out = malloc(CHUNK);
	if (!r.in || !r.out) {
		st = diag_set(d, ST_LIMIT, r.where, DIAG_NO_OFFSET, "out of memory");
		goto out;
	}
	if (!r.stored) {
		if (inflateInit2(&r.z, -15) != Z_OK) {
			st = diag_set(d, ST_LIMIT, r.where, DIAG_NO_OFFSET, "cannot inflate: %s", r.z.msg ? r.z.msg : "zlib");
			goto out;
		}
		r.zinit = true;
	}
	if ((st = raw_open(&r)) != ST_OK || (st = index_member(&r, applies)) != ST_OK || !*applies)
		goto out;
	r.run_lo = r.pos;	/* nothing written yet */
	r.img = arena_alloc_untouched(a, (size_t)m->size + 1);
	memcpy(r.img, m->head, m->head_len);
	if ((st = plan(&r, &h, &drops, &keeps)) != ST_OK || (st = fill_rest(&r, &drops, &keeps)) != ST_OK)
		goto out;
	m->data = r.img;
	m->len = (size_t)m->size;
	*filled = r.filled;
out:
	if (st != ST_OK)
		*applies = false;
	if (r.zf)
		zip_fclose(r.zf);
	if (r.zinit)
		inflateEnd(&r.z);
	free(r.in);
	free(r.out);
	free(r.pt);
	free(drops.s);
	free(keeps.s);
	return st;
}
