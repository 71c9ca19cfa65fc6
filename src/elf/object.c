#include "elf/object.h"

#include <sys/auxv.h>

static uint16_t host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64_;
#elif defined(__aarch64__)
	return EM_AARCH64_;
#elif defined(__i386__)
	return EM_386_;
#elif defined(__powerpc64__)
	return EM_PPC64_;
#elif defined(__s390x__)
	return EM_S390_;
#elif defined(__riscv)
	return EM_RISCV_;
#else
	return 0;
#endif
}

void objcache_init(struct objcache *c, struct arena *a, const struct fsview *fs)
{
	memset(c, 0, sizeof *c);
	c->arena = a;
	c->fs = fs;
	c->advise = true;
	c->host.machine = host_machine();
	c->host.page_size = getauxval(AT_PAGESZ);
	c->host.hwcap = getauxval(AT_HWCAP);
	c->host.hwcap2 = getauxval(AT_HWCAP2);
	c->host.hwcap_set = true;
}

void objcache_machine(const struct objcache *c, uint16_t machine, struct machine_view *v)
{
	memset(v, 0, sizeof *v);
	bool here = machine && c->host.machine == machine && !c->given.machine;
	if (machine == EM_X86_64_ || machine == EM_386_) {
		v->page_size = 4096;	/* x86 has no other base page size */
	} else if (c->given.page_size) {
		v->page_size = c->given.page_size;
	} else if (here && c->host.page_size) {
		v->page_size = c->host.page_size;
	} else {
		v->page_size = 4096;
		v->page_size_assumed = true;
	}
	if (c->given.hwcap_set) {
		v->hwcap = c->given.hwcap;
		v->hwcap2 = c->given.hwcap2;
	} else if (here) {
		v->hwcap = c->host.hwcap;
		v->hwcap2 = c->host.hwcap2;
	} else {
		v->hwcap = machine == EM_AARCH64_ ? AARCH64_HWCAP_ATOMICS : 0;
		v->hwcap_assumed = true;
	}
}

/* e_machine from the header bytes, before the file is parsed. */
static uint16_t peek_machine(struct bytes raw)
{
	uint8_t data = 0;
	uint16_t m = 0;
	bytes_u8(&raw, 5, &data);
	raw.big_endian = data == ELF_DATA_MSB;
	bytes_u16(&raw, 18, &m);
	return m;
}

void objcache_release(struct objcache *c)
{
	for (size_t i = 0; i < c->all.n; i++) {
		struct object *o = c->all.item[i];
		fs_unmap(&o->map);
	}
	c->all.n = 0;
}

bool looks_like_ldscript(const uint8_t *data, size_t len)
{
	/* GNU ld scripts (libc.so, libm.so on Debian) are text that starts with
	 * a comment or one of the commands that name inputs. */
	static const char *const starts[] = { "/*", "GROUP", "INPUT", "OUTPUT_FORMAT", "SEARCH_DIR" };
	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	for (size_t k = 0; k < ARRAY_SIZE(starts); k++) {
		size_t n = strlen(starts[k]);
		if (len - i >= n && memcmp(data + i, starts[k], n) == 0)
			return true;
	}
	return false;
}

/* Objects smaller than this are read whole by fault-around anyway. */
#define ADVISE_MIN_SIZE (1u << 20)

static void advise_window(const struct object *o, struct bytes w)
{
	if (!w.len || w.data < o->map.data || w.data >= o->map.data + o->map.len)
		return;
	fs_advise(&o->map, (size_t)((uintptr_t)w.data - (uintptr_t)o->map.data), w.len);
}

/* Pages of a window at least this large leave the resident set when it
 * will not be read again (the relocation tables, the constructors' code):
 * the fault-around of its reads mapped 64 KiB at a time. */
#define FORGET_DONE_MIN ((size_t)64 << 10)

static void forget_window(const struct object *o, struct bytes w, size_t min_len)
{
	/* a vfs node's bytes (a snapshot's sparse image, an installed wheel's
	 * member) are anonymous memory: MADV_DONTNEED would zero them */
	if (o->map.borrowed || o->map.len < ADVISE_MIN_SIZE || w.len < min_len || w.data < o->map.data ||
	    w.data >= o->map.data + o->map.len)
		return;
	/* the whole pages of the window, at this machine's page size */
	fs_forget(&o->map, (size_t)((uintptr_t)w.data - (uintptr_t)o->map.data), w.len);
}

void object_forget(const struct object *o, struct bytes w)
{
	forget_window(o, w, ADVISE_MIN_SIZE);
}

/* The executable segments' bytes in the file: read only by the scan of
 * the constructors' calls (elf_find_ctor_plt_calls).  An object linked
 * without -z separate-code has .dynsym, .dynstr and the hash tables at
 * the start of that segment too, which later lookups read: only what lies
 * past the last of them is dropped. */
static void forget_code(const struct object *o)
{
	const struct elf_file *ef = &o->elf;
	/* the chains' window runs on to the end of what the file has there:
	 * a lookup reads no further than one word per symbol (advise_tables) */
	struct bytes chain = ef->gnu_chain.len > (uint64_t)ef->nsyms * 4 ?
				     bytes_make(ef->gnu_chain.data, (size_t)ef->nsyms * 4, false) : ef->gnu_chain;
	const struct bytes kept[] = { ef->dynsym,      ef->dynstr, ef->versym,	    ef->gnu_bloom,
				      ef->gnu_buckets, chain,	   ef->sysv_bucket, ef->sysv_chain };
	for (size_t i = 0; i < ef->nseg; i++) {
		const struct elf_segment *sg = &ef->seg[i];
		struct bytes w;
		if (sg->type != PT_LOAD_ || !(sg->flags & PF_X_) || !bytes_sub(&ef->raw, sg->offset, sg->filesz, &w))
			continue;
		size_t skip = 0;	/* bytes of the segment up to the end of the last table in it */
		for (size_t k = 0; k < ARRAY_SIZE(kept); k++) {
			const struct bytes *t = &kept[k];
			if (t->len && t->data < w.data + w.len && w.data < t->data + t->len)
				skip = MAX(skip, (size_t)MIN(t->data + t->len - w.data, (ptrdiff_t)w.len));
		}
		forget_window(o, bytes_make(w.data + skip, w.len - skip, false), FORGET_DONE_MIN);
	}
}

/*
 * Tells the kernel which tables of a large mapping the scan will read, so
 * that on a cold page cache they are all read ahead at once instead of one
 * page fault at a time (a hint: nothing is read that the scan would not
 * read).  On a warm cache it costs a page-cache lookup per page.
 */
static void advise_tables(const struct object *o)
{
	const struct elf_file *ef = &o->elf;
	if (o->map.len < ADVISE_MIN_SIZE)
		return;
	advise_window(o, ef->dynsym);
	advise_window(o, ef->dynstr);
	advise_window(o, ef->versym);
	advise_window(o, ef->gnu_chain.len > (uint64_t)ef->nsyms * 4 ?
			 bytes_make(ef->gnu_chain.data, (size_t)ef->nsyms * 4, false) : ef->gnu_chain);
	advise_window(o, ef->gnu_buckets);
	advise_window(o, ef->rel.data);
	advise_window(o, ef->rela.data);
	advise_window(o, ef->jmprel.data);
}

struct object *objcache_get(struct objcache *c, const char *path, struct diag *d)
{
	struct object *o = strmap_get(&c->by_path, path);
	if (o)
		return o;
	struct fs_stat st;
	fs_stat(c->fs, path, &st);
	if (st.kind == FS_MISSING) {
		diag_errno(d, path, st.err, "cannot open");
		return NULL;
	}
	if (st.kind != FS_REGULAR) {
		diag_set(d, ST_NOT_FILE, path, DIAG_NO_OFFSET, "not a regular file");
		return NULL;
	}
	o = idmap_get(&c->by_id, st.dev, st.ino);
	if (o) {
		strmap_put(c->arena, &c->by_path, arena_strdup(c->arena, path), o);
		return o;
	}
	o = arena_alloc(c->arena, sizeof *o);
	o->path = arena_strdup(c->arena, path);
	o->dev = st.dev;
	o->ino = st.ino;
	diag_clear(&o->diag);
	if (fs_map(c->fs, path, &o->map, &o->diag) != ST_OK) {
		o->kind = OBJ_UNREADABLE;
	} else if (elf_has_magic(o->map.data, o->map.len)) {
		o->kind = OBJ_ELF;
		struct bytes raw = bytes_make(o->map.data, o->map.len, false);
		struct machine_view mv;
		objcache_machine(c, peek_machine(raw), &mv);
		o->elf_ok = elf_parse_lazy(c->arena, raw, o->path, mv.page_size, &o->elf, &o->diag) == ST_OK;
		if (o->elf_ok && o->elf.problem)
			diag_set(&o->diag, ST_MALFORMED, o->path, o->elf.problem_offset, "%s",
				 o->elf.problem);
		if (o->elf_ok && c->advise)
			advise_tables(o);
		c->bytes_mapped += o->map.len;
	} else if (looks_like_ldscript(o->map.data, o->map.len)) {
		o->kind = OBJ_LDSCRIPT;
	} else {
		o->kind = OBJ_OTHER;
	}
	idmap_put(c->arena, &c->by_id, st.dev, st.ino, o);
	strmap_put(c->arena, &c->by_path, o->path, o);
	ptrvec_push(c->arena, &c->all, o);
	return o;
}

/*
 * The relocation tables (DT_REL, DT_RELA, DT_JMPREL) are read by
 * elf_check_tables (the loader's assertion on the relative entries, the
 * init-array slots, the constructors' PLT calls) and by elf_collect_refs
 * (where each entry writes, what it looks up), and never again: another
 * process that loads the object takes its refs from the object.  They are
 * most of a large library's bytes read (7.8 MB of libtorch_cpu.so's
 * relative entries alone, 8.3 MB of libcublasLt.so's): once both are done
 * their pages leave the resident set, which is then bounded by the tables
 * the rest of the scan still reads (symbols, names, hashes).  So do the
 * code pages the constructors' scan read (3.5 MB of libtriton.so's, whose
 * thousands of constructors are spread over its text).
 */
static void forget_relocations(const struct object *o)
{
	if (o->kind != OBJ_ELF || !o->elf_ok || !o->refs_done || o->elf.tables_pending)
		return;
	forget_window(o, o->elf.rel.data, FORGET_DONE_MIN);
	forget_window(o, o->elf.rela.data, FORGET_DONE_MIN);
	forget_window(o, o->elf.jmprel.data, FORGET_DONE_MIN);
	forget_code(o);
}

void object_forget_all(const struct object *o)
{
	fs_forget(&o->map, 0, o->map.len);
}

void object_forget_names(struct object *o)
{
	if (o->kind != OBJ_ELF || !o->elf_ok || !o->refs_done || o->names_forgotten)
		return;
	o->names_forgotten = true;
	object_forget(o, o->elf.dynsym);
	object_forget(o, o->elf.dynstr);
	object_forget(o, o->elf.versym);
}

void object_check_tables(struct objcache *c, struct object *o)
{
	if (o->kind == OBJ_ELF && o->elf_ok && o->elf.tables_pending) {
		elf_check_tables(c->arena, &o->elf);
		forget_relocations(o);
	}
}

const struct elf_refs *object_refs(struct objcache *c, struct object *o)
{
	if (!o->refs_done) {
		o->refs_done = true;
		if (o->kind == OBJ_ELF && o->elf_ok) {
			elf_collect_refs(c->arena, &o->elf, &o->refs);
			forget_relocations(o);
		}
	}
	return &o->refs;
}

const struct file_probe *objcache_probe(struct objcache *c, const char *path)
{
	struct file_probe *fp = strmap_get(&c->probes, path);
	if (fp)
		return fp;
	fp = arena_alloc(c->arena, sizeof *fp);
	const struct object *o = strmap_get(&c->by_path, path);
	if (o && o->kind != OBJ_UNREADABLE && !o->map.borrowed) {
		/* mapped from this path: what an open() and read() see is what
		 * the mapping holds (files do not change during a scan) */
		memset(&fp->st, 0, sizeof fp->st);
		fp->st.kind = FS_REGULAR;
		fp->st.dev = o->dev;
		fp->st.ino = o->ino;
		fp->st.size = o->map.len;
		fp->st.head_len = MIN(sizeof fp->head, o->map.len);
		if (fp->st.head_len)
			memcpy(fp->head, o->map.data, fp->st.head_len);
	} else {
		fs_probe(c->fs, path, fp->head, sizeof fp->head, &fp->st);
	}
	strmap_put(c->arena, &c->probes, arena_strdup(c->arena, path), fp);
	return fp;
}

bool objcache_is_dir(struct objcache *c, const char *path)
{
	void *v = strmap_get(&c->dirs, path);
	if (!v) {
		struct fs_stat st;
		fs_stat(c->fs, path, &st);
		v = (void *)(uintptr_t)(st.kind == FS_DIR ? 1 : 2);
		strmap_put(c->arena, &c->dirs, arena_strdup(c->arena, path), v);
	}
	return v == MAP_YES;
}

size_t object_vslots(struct objcache *c, struct object *o, const struct elf_vslot **out)
{
	if (!o->vslots_done) {
		o->vslots_done = true;
		if (o->kind == OBJ_ELF && o->elf_ok)
			o->nvslot = elf_version_slots(c->arena, &o->elf, &o->vslot);
	}
	*out = o->vslot;
	return o->nvslot;
}
