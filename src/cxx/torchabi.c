#include "cxx/torchabi.h"
#include "core/hashmap.h"
#include "cxx/abi.h"
#include "cxx/exports.h"

#include <stdlib.h>

/* The index is embedded as-is; the Makefile makes this object depend on it. */
__asm__(".section .rodata\n"
	".global abiscope_torch_abi_idx\n"
	".type abiscope_torch_abi_idx, @object\n"
	".balign 16\n"
	"abiscope_torch_abi_idx:\n"
	".incbin \"data/torch/abi.idx\"\n"
	".global abiscope_torch_abi_idx_end\n"
	"abiscope_torch_abi_idx_end:\n"
	".byte 0\n"
	".previous\n");
extern const uint8_t abiscope_torch_abi_idx[];
extern const uint8_t abiscope_torch_abi_idx_end[];

#define HEADER_SIZE 32
#define RECORD_SIZE 24

struct bytes torchabi_builtin_bytes(void)
{
	return bytes_make(abiscope_torch_abi_idx, (size_t)(abiscope_torch_abi_idx_end - abiscope_torch_abi_idx),
			  false);
}

/* ---- sets ---- */

bool torchset_has(const struct torchset *s, size_t r)
{
	return r < TORCHABI_MAX_RELEASES && (s->w[r / 64] >> (r % 64) & 1);
}

void torchset_add(struct torchset *s, size_t r)
{
	if (r < TORCHABI_MAX_RELEASES)
		s->w[r / 64] |= (uint64_t)1 << (r % 64);
}

void torchset_and(struct torchset *s, const struct torchset *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(s->w); i++)
		s->w[i] &= t->w[i];
}

void torchset_all(struct torchset *s, size_t nrel)
{
	memset(s, 0, sizeof *s);
	for (size_t r = 0; r < nrel; r++)
		torchset_add(s, r);
}

size_t torchset_count(const struct torchset *s)
{
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(s->w); i++)
		n += (size_t)__builtin_popcountll(s->w[i]);
	return n;
}

int torchset_newest(const struct torchset *s, size_t nrel)
{
	for (size_t r = nrel; r-- > 0;)
		if (torchset_has(s, r))
			return (int)r;
	return -1;
}

int torchset_oldest(const struct torchset *s, size_t nrel)
{
	for (size_t r = 0; r < nrel; r++)
		if (torchset_has(s, r))
			return (int)r;
	return -1;
}

const char *torchset_text(struct arena *a, const struct torchabi *ix, const struct torchset *s)
{
	size_t n = torchset_count(s);
	if (n == 0)
		return "none";
	if (n == 2) {
		int lo = torchset_oldest(s, ix->nrel), hi = torchset_newest(s, ix->nrel);
		return arena_printf(a, "%s and %s", ix->rel[lo].version, ix->rel[hi].version);
	}
	const char *out = "";
	for (size_t r = 0; r < ix->nrel; r++) {
		if (!torchset_has(s, r))
			continue;
		size_t e = r;
		while (e + 1 < ix->nrel && torchset_has(s, e + 1))
			e++;
		const char *run = e == r ? ix->rel[r].version
			: arena_printf(a, "%s %s %s", ix->rel[r].version, e == r + 1 ? "and" : "to", ix->rel[e].version);
		out = out[0] ? arena_printf(a, "%s, %s", out, run) : run;
		r = e;
	}
	return out;
}

const char *torchset_cuda_text(struct arena *a, const struct torchabi *ix, const struct torchset *s)
{
	bool seen[256] = { false };
	const char *out = "";
	bool cpu = false;
	for (size_t r = 0; r < ix->nrel; r++) {
		if (!torchset_has(s, r))
			continue;
		int m = ix->rel[r].cuda_major;
		if (m == 0) {
			cpu = true;
			continue;
		}
		if (m < 0 || m > 255 || seen[m])
			continue;
		seen[m] = true;
	}
	for (int m = 1; m < 256; m++)
		if (seen[m])
			out = out[0] ? arena_printf(a, "%s or %d", out, m) : arena_printf(a, "CUDA %d", m);
	if (cpu)
		out = out[0] ? arena_printf(a, "%s, or CPU", out) : "CPU";
	return out;
}

int torchabi_find(const struct torchabi *ix, const char *version, uint16_t machine)
{
	size_t n = strcspn(version, "+");
	for (size_t r = 0; r < ix->nrel; r++)
		if (ix->rel[r].machine == machine && strlen(ix->rel[r].version) == n &&
		    strncmp(ix->rel[r].version, version, n) == 0)
			return (int)r;
	return -1;
}

const char *torchabi_machine_text(uint16_t machine)
{
	return machine == EM_X86_64_ ? "x86_64" : elf_machine_name(machine);
}

bool torchabi_machine_set(const struct torchabi *ix, uint16_t machine, struct torchset *out)
{
	memset(out, 0, sizeof *out);
	for (size_t r = 0; r < ix->nrel; r++)
		if (ix->rel[r].machine == machine)
			torchset_add(out, r);
	return torchset_count(out) > 0;
}

/* ---- the file ---- */

static bool read_uvarint(const struct bytes *b, uint64_t *off, uint64_t *out)
{
	uint64_t v = 0;
	/* the bytes a varint can take (10), proven there once: the index holds
	 * 351,665 of them; near the end, byte by byte */
	const uint8_t *p = bytes_at(b, *off, 10);
	for (unsigned shift = 0, i = 0; shift < 64; shift += 7, i++) {
		uint8_t c;
		if (p)
			c = p[i];
		else if (!bytes_u8(b, *off, &c))
			return false;
		(*off)++;
		if (shift == 63 && (c & 0x7e))
			return false;	/* more than 64 bits */
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* A NUL-terminated string at strings + off, inside the strings. */
static const char *string_at(const struct bytes *strings, uint32_t off)
{
	struct bytes rest;
	if (off >= strings->len || !bytes_sub(strings, off, strings->len - off, &rest))
		return NULL;
	return memchr(rest.data, 0, rest.len) ? (const char *)rest.data : NULL;
}

static enum status bad(struct diag *d, const char *name, uint64_t off, const char *what)
{
	return diag_set(d, ST_MALFORMED, name, off, "torch ABI index: %s", what);
}

static enum status parse_releases(struct arena *a, const struct bytes *b, const char *name, struct torchabi *ix,
				  uint32_t slen, uint64_t *off, struct diag *d)
{
	uint64_t rec_off = HEADER_SIZE;
	struct bytes strings;
	uint64_t str_off = rec_off + (uint64_t)ix->nrel * RECORD_SIZE;
	if (!bytes_sub(b, str_off, slen, &strings))
		return bad(d, name, str_off, "the strings run past the end");
	ix->rel = arena_calloc(a, ix->nrel ? ix->nrel : 1, sizeof *ix->rel);
	for (size_t r = 0; r < ix->nrel; r++, rec_off += RECORD_SIZE) {
		uint32_t so[4], nsym;
		uint8_t cuda, cxx;
		uint16_t machine;
		for (size_t k = 0; k < 4; k++)
			if (!bytes_u32(b, rec_off + 4 * k, &so[k]))
				return bad(d, name, rec_off, "truncated release record");
		if (!bytes_u32(b, rec_off + 16, &nsym) || !bytes_u8(b, rec_off + 20, &cuda) ||
		    !bytes_u8(b, rec_off + 21, &cxx) || !bytes_u16(b, rec_off + 22, &machine))
			return bad(d, name, rec_off, "truncated release record");
		struct torchabi_release *rel = &ix->rel[r];
		rel->version = string_at(&strings, so[0]);
		rel->wheel = string_at(&strings, so[1]);
		rel->sha256 = string_at(&strings, so[2]);
		rel->libs = string_at(&strings, so[3]);
		if (!rel->version || !rel->wheel || !rel->sha256 || !rel->libs || !rel->version[0])
			return bad(d, name, rec_off, "a release record names a string outside the string table");
		rel->nsym = nsym;
		rel->cuda_major = cuda;
		rel->cxx11 = (int8_t)cxx;
		if (rel->cxx11 < -1 || rel->cxx11 > 2)
			return bad(d, name, rec_off + 21, "CXX11 ABI flag out of range");
		if (!machine)
			return bad(d, name, rec_off + 22, "a release without a machine");
		/* one machine's releases adjacent: a run of releases never spans two */
		if (r > 0 && machine < ix->rel[r - 1].machine)
			return bad(d, name, rec_off + 22, "releases not sorted by machine");
		rel->machine = machine;
	}
	*off = str_off + slen;
	return ST_OK;
}

/* A hash's slot: its top bits.  The hashes are of names, so spread
 * evenly, and each set lists its own ascending: filling the table set by
 * set sweeps it in order instead of jumping across 12 MB at each insert
 * (the built-in index's parse cost a quarter of a check).  Crafted hashes
 * that crowd together are refused by the probe count (table_put). */
static size_t slot_of(const struct torchabi *ix, uint64_t h)
{
	return (size_t)(h >> ix->slot_shift) & ix->mask;
}

static void table_put(struct torchabi *ix, uint64_t h, uint32_t set, bool *dup, uint64_t *probes)
{
	size_t i = slot_of(ix, h);
	while (ix->key[i]) {
		if (ix->key[i] == h + 1) {
			*dup = true;
			return;
		}
		i = (i + 1) & ix->mask;
		++*probes;
	}
	ix->key[i] = h + 1;
	ix->val[i] = set;
}

static enum status parse_symbols(struct arena *a, const struct bytes *b, const char *name, struct torchabi *ix,
				 uint64_t off, struct diag *d)
{
	size_t setbytes = (ix->nrel + 7) / 8;
	/* the header's counts size the tables below: first the bytes they need
	 * must be there (a set's bitmap and count, a byte at least per hash),
	 * so a short file claiming 2^24 sets allocates nothing */
	uint64_t need = (uint64_t)ix->nsets * (setbytes + 1) + ix->nsym;
	if (off > b->len || need > b->len - off)
		return bad(d, name, off, "the counts claim more sets and symbols than the file holds");
	ix->sets = arena_calloc(a, ix->nsets ? ix->nsets : 1, sizeof *ix->sets);
	for (size_t s = 0; s < ix->nsets; s++, off += setbytes) {
		struct bytes bm;
		if (!bytes_sub(b, off, setbytes, &bm))
			return bad(d, name, off, "the release sets run past the end");
		for (size_t r = 0; r < ix->nrel; r++) {
			uint8_t byte = 0;
			if (bytes_u8(&bm, r / 8, &byte) && (byte >> (r % 8) & 1))
				torchset_add(&ix->sets[s], r);
		}
		if (!torchset_count(&ix->sets[s]))
			return bad(d, name, off, "an empty release set");
	}
	size_t cap = 16;
	while (cap < ix->nsym + ix->nsym / 3)	/* load at most 3/4: 512k slots (6 MB) for the built-in index */
		cap *= 2;
	ix->mask = cap - 1;
	unsigned log2cap = 0;
	while (((size_t)1 << log2cap) < cap)
		log2cap++;
	ix->slot_shift = ix->hash_bits > log2cap ? ix->hash_bits - log2cap : 0;
	uint64_t probes = 0, max_probes = 8 * (uint64_t)ix->nsym + 1024;
	ix->key = arena_calloc(a, cap, sizeof *ix->key);
	ix->val = arena_calloc(a, cap, sizeof *ix->val);
	uint64_t limit = ix->hash_bits == 64 ? UINT64_MAX - 1 : ((uint64_t)1 << ix->hash_bits) - 1;
	size_t total = 0;
	uint32_t *counts = arena_calloc(a, ix->nrel ? ix->nrel : 1, sizeof *counts);
	for (size_t s = 0; s < ix->nsets; s++) {
		uint64_t n, h = 0;
		uint64_t at = off;
		if (!read_uvarint(b, &off, &n) || n > ix->nsym - total)
			return bad(d, name, at, "a set claims more symbols than the header");
		for (uint64_t k = 0; k < n; k++) {
			uint64_t delta;
			at = off;
			if (!read_uvarint(b, &off, &delta))
				return bad(d, name, at, "truncated hash");
			if ((k > 0 && delta == 0) || delta > limit - h)
				return bad(d, name, at, "hashes not ascending or too wide");
			h += delta;
			bool dup = false;
			table_put(ix, h, (uint32_t)s, &dup, &probes);
			if (dup)
				return bad(d, name, at, "a hash listed twice");
			if (probes > max_probes)
				return bad(d, name, at, "the hashes crowd together: they are not hashes of names");
		}
		total += (size_t)n;
		for (size_t r = 0; r < ix->nrel; r++)
			if (torchset_has(&ix->sets[s], r))
				counts[r] += (uint32_t)n;
	}
	if (total != ix->nsym)
		return bad(d, name, off, "fewer symbols than the header says");
	if (off != b->len)
		return bad(d, name, off, "bytes after the last set");
	for (size_t r = 0; r < ix->nrel; r++)
		if (counts[r] != ix->rel[r].nsym)
			return bad(d, name, HEADER_SIZE + r * RECORD_SIZE + 16,
				   "a release's symbol count does not match its sets");
	return ST_OK;
}

enum status torchabi_parse(struct arena *a, struct bytes b, const char *name, struct torchabi *ix,
			   struct diag *d)
{
	memset(ix, 0, sizeof *ix);
	uint16_t format, bits;
	uint32_t nrel, nsets, nsym, slen, zero;
	if (b.len < HEADER_SIZE || memcmp(b.data, "ABTORCH\0", 8) != 0)
		return bad(d, name, 0, "not an index (magic)");
	if (!bytes_u16(&b, 8, &format) || !bytes_u16(&b, 10, &bits) || !bytes_u32(&b, 12, &nrel) ||
	    !bytes_u32(&b, 16, &nsets) || !bytes_u32(&b, 20, &nsym) || !bytes_u32(&b, 24, &slen) ||
	    !bytes_u32(&b, 28, &zero))
		return bad(d, name, 8, "truncated header");
	if (format != 2)
		return diag_set(d, ST_UNSUPPORTED, name, 8, "torch ABI index: format %u (this abiscope reads 2)", format);
	if (bits < 32 || bits > 64)
		return bad(d, name, 10, "hash width outside 32..64");
	if (nrel > TORCHABI_MAX_RELEASES || nsym > TORCHABI_MAX_SYMBOLS || nsets > nsym || zero)
		return bad(d, name, 12, "counts out of range");
	ix->hash_bits = bits;
	ix->nrel = nrel;
	ix->nsets = nsets;
	ix->nsym = nsym;
	uint64_t off = 0;
	enum status st = parse_releases(a, &b, name, ix, slen, &off, d);
	if (st == ST_OK)
		st = parse_symbols(a, &b, name, ix, off, d);
	if (st != ST_OK)
		memset(ix, 0, sizeof *ix);
	return st;
}

const struct torchabi *torchabi_builtin(struct arena *a, struct torchabi **cache, struct diag *d)
{
	if (*cache)
		return (*cache)->nrel ? *cache : NULL;
	struct torchabi *ix = arena_alloc(a, sizeof *ix);
	*cache = ix;
	if (torchabi_parse(a, torchabi_builtin_bytes(), "data/torch/abi.idx (built in)", ix, d) != ST_OK)
		return NULL;
	return ix->nrel ? ix : NULL;
}

uint64_t torchabi_hash(const struct torchabi *ix, const char *name)
{
	uint64_t h = hash64_bytes(HASH64_INIT, name, strlen(name));
	return ix->hash_bits >= 64 ? h : h >> (64 - ix->hash_bits);
}

const struct torchset *torchabi_lookup(const struct torchabi *ix, const char *name)
{
	if (!ix || !ix->key)
		return NULL;
	uint64_t h = torchabi_hash(ix, name);
	if (h == UINT64_MAX)
		return NULL;
	size_t i = slot_of(ix, h);
	while (ix->key[i]) {
		if (ix->key[i] == h + 1)
			return &ix->sets[ix->val[i]];
		i = (i + 1) & ix->mask;
	}
	return NULL;
}

/* ---- what an object needs ---- */

/* torch/csrc's global-namespace Python glue: THPVariable_Wrap, THPDevice... */
static bool torch_python_glue(const char *name)
{
	uint32_t b = cxx_mangled_body(name);
	if (!b)
		return false;
	const char *p = name + b;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > name + b && str_starts(p, "THP");
}

bool torchabi_is_torch_symbol(const char *name, bool *stable)
{
	bool st = cxx_torch_stable_name(name);
	if (stable)
		*stable = st;
	return st || cxx_torch_cxx_name(name) || torch_python_glue(name);
}

static bool needed_torch_symbol(const struct elf_file *ef, uint32_t i, const char **name, bool *stable)
{
	struct elf_sym s;
	if (!elf_sym(ef, i, &s) || s.shndx != SHN_UNDEF_ || !s.name[0] || s.bind == STB_WEAK_)
		return false;
	*name = s.name;
	return torchabi_is_torch_symbol(s.name, stable);
}

static int cudart_major(const struct elf_file *ef)
{
	for (size_t i = 0; i < ef->nneeded; i++)
		if (str_starts(ef->needed[i], "libcudart.so."))
			return (int)strtol(ef->needed[i] + strlen("libcudart.so."), NULL, 10);
	return -1;
}

void torch_compat_of(struct arena *a, const struct torchabi *ix, const struct elf_file *ef,
		     struct torch_compat *out)
{
	(void)a;
	memset(out, 0, sizeof *out);
	out->machine = ef->machine;
	out->cudart_major = cudart_major(ef);
	struct torchset mine;	/* the releases of the object's machine */
	if (!torchabi_machine_set(ix, ef->machine, &mine)) {
		out->no_releases = true;
		return;
	}
	out->ok = mine;
	for (uint32_t i = 1; i < ef->nsyms; i++) {
		const char *name;
		bool stable;
		if (!needed_torch_symbol(ef, i, &name, &stable))
			continue;
		out->nneed++;
		out->nstable += stable;
		const struct torchset *in = torchabi_lookup(ix, name);
		struct torchset here = mine;
		if (in)
			torchset_and(&here, in);
		if (in && torchset_count(&here)) {	/* exported by a release of this machine */
			torchset_and(&out->ok, in);
			continue;
		}
		memset(&out->ok, 0, sizeof out->ok);
		if (out->nnone < TORCH_COMPAT_MAX_LISTED)
			out->none[out->nnone] = name;
		out->nnone++;
	}
	if (!out->nneed)
		memset(&out->ok, 0, sizeof out->ok);
}

size_t torch_compat_missing(const struct torchabi *ix, const struct elf_file *ef, size_t r, const char **out,
			    size_t max)
{
	size_t n = 0;
	for (uint32_t i = 1; i < ef->nsyms; i++) {
		const char *name;
		bool stable;
		if (!needed_torch_symbol(ef, i, &name, &stable))
			continue;
		const struct torchset *in = torchabi_lookup(ix, name);
		if (in && torchset_has(in, r))
			continue;
		if (n < max)
			out[n] = name;
		n++;
	}
	return n;
}
