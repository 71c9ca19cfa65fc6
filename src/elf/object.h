/*
 * object.h: one file as abiscope sees it, parsed once per scan.
 *
 * The object cache maps (device, inode) to a struct object, so a library
 * reached through several paths or symlinks is mapped and parsed once.
 * An object records what kind of file it is (ELF, GNU ld script, other),
 * its parsed ELF view when it is one, and the diagnostic when parsing
 * failed, so that callers can report "invalid ELF" with the offset and go
 * on with the rest of the scan.
 *
 * The cache owns the mappings: objcache_release() unmaps everything.
 * Objects and their ELF views live in the cache's arena.  Derived data
 * that only some analyses need (relocation references, the export index)
 * is computed on first use and kept.
 */
#ifndef ABISCOPE_OBJECT_H
#define ABISCOPE_OBJECT_H

#include "core/fs.h"
#include "core/hashmap.h"
#include "elf/elf.h"
#include "elf/symtab.h"

enum object_kind {
	OBJ_ELF,
	OBJ_LDSCRIPT,	/* a GNU ld script named like a library (libc.so, libm.so) */
	OBJ_OTHER,	/* any other regular file */
	OBJ_UNREADABLE,	/* could not be opened or mapped: see diag */
};

struct object {
	const char *path;	/* the first logical path it was reached by */
	uint64_t dev, ino;
	enum object_kind kind;
	struct mapped_file map;
	struct elf_file elf;	/* valid when kind == OBJ_ELF */
	struct diag diag;	/* why parsing failed, or the ELF problem */
	bool elf_ok;		/* elf_parse succeeded */
	/* lazily computed */
	bool refs_done;
	bool names_forgotten;	/* object_forget_names() has run */
	struct elf_refs refs;
	bool vslots_done;
	struct elf_vslot *vslot;
	size_t nvslot;
	struct bind_memory *bind;	/* the loader model's memory of binding it (process.c) */
	struct path_lists *paths;	/* its DT_RPATH/DT_RUNPATH as folders, by $ORIGIN (search.c) */
};

/* What the loader's open(O_RDONLY) + read() sees at a path. */
struct file_probe {
	struct fs_probe st;
	uint8_t head[64];
};

struct ldso_facts;

/*
 * The machine the inspected processes run on, as far as no file says it:
 * what the kernel hands a process in its auxiliary vector (AT_PAGESZ,
 * AT_HWCAP, AT_HWCAP2) and the machine itself.  A zero field is not
 * given.  objcache_init() fills `host` from this process; a caller sets
 * `given` before the first object is read (the CLI's --page-size, a
 * snapshot's recorded values).  What a process of machine M sees
 * (objcache_machine): the given value, else this host's when it is an M,
 * else an assumption the loader facts note (4096-byte pages; on aarch64
 * the hwcaps of an ARMv8.1 server, LSE atomics among them).
 */
struct machine_params {
	uint16_t machine;	/* e_machine (EM_AARCH64_); 0: not given */
	uint64_t page_size;	/* AT_PAGESZ; 0: not given */
	bool hwcap_set;		/* hwcap and hwcap2 are given */
	uint64_t hwcap, hwcap2;	/* AT_HWCAP, AT_HWCAP2 */
};

/* What a process of `machine` sees, and which parts are assumed. */
struct machine_view {
	uint64_t page_size, hwcap, hwcap2;
	bool page_size_assumed, hwcap_assumed;
};

struct bind_memory;

struct objcache {
	struct arena *arena;
	const struct fsview *fs;
	struct idmap by_id;
	struct strmap by_path;	/* logical path -> object */
	struct strmap probes;	/* logical path -> struct file_probe */
	struct strmap dirs;	/* logical path -> MAP_YES dir, MAP_NO not a dir */
	struct ptrvec all;	/* every object, in first-seen order */
	uint64_t bytes_mapped;
	/* The loader facts of a described host (a snapshot), used instead of
	 * reading the loader binary and this CPU; NULL on a real system. */
	const struct ldso_facts *preset_facts;
	struct machine_params host;	/* this process's machine (objcache_init) */
	struct machine_params given;	/* the inspected machine, where it is told */
	/* madvise(WILLNEED) the tables of large objects once parsed (default):
	 * a cold page cache then reads them ahead all at once (~17% faster
	 * cold on a PyTorch env, within noise warm; BENCHMARKS.md) */
	bool advise;
	uint64_t scope_gen;	/* relocations made (process.c's scope index) */
};

void objcache_init(struct objcache *c, struct arena *a, const struct fsview *fs);

/* What a process of e_machine `machine` sees (see struct machine_params). */
void objcache_machine(const struct objcache *c, uint16_t machine, struct machine_view *v);
/* The HWCAP_ATOMICS bit of AT_HWCAP on aarch64 (glibc's HWCAP_IMPORTANT there). */
#define AARCH64_HWCAP_ATOMICS 0x100u

/* The scan is done with w (a part of o's mapping, read-only, not written):
 * the pages it touched leave this process's resident set (they stay in the
 * page cache, and come back on the next read).  A fatbin walk touches one
 * page per kernel image, and fault-around maps their neighbours: 300 MB for
 * libcublasLt.so.12, kept for the whole scan otherwise. */
void object_forget(const struct object *o, struct bytes w);
void objcache_release(struct objcache *c);

/*
 * The object for path (logical).  Returns NULL only when the path does
 * not name a regular file; *d then says why.  A file that exists but is
 * not ELF, or is malformed, still gets an object (kind and diag tell).
 */
struct object *objcache_get(struct objcache *c, const char *path, struct diag *d);

/* The probe of path, cached: files do not change during a scan. */
const struct file_probe *objcache_probe(struct objcache *c, const char *path);
/* True when path is a directory (cached). */
bool objcache_is_dir(struct objcache *c, const char *path);

/* The checks over o's whole relocation tables (elf_check_tables), made
 * once: before its relative_assert or init_fault is read.  The cache
 * parses lazily (elf_parse_lazy): an object never relocated never reads
 * its relocations. */
/* Drops the pages of o's symbol table, names and versions from the
 * resident set once its refs are collected (reads fault them back in);
 * once: a later relocation of o in another process rebinds from memory
 * (process.c) and reads few of them again. */
void object_forget_names(struct object *o);
/* Drops every page of o's mapping from the resident set: after the
 * inventory has read its headers, most of a site's objects are never
 * read again, and what a later step reads faults back in from the page
 * cache (a vfs node's bytes are never dropped: they are not the file's). */
void object_forget_all(const struct object *o);
void object_check_tables(struct objcache *c, struct object *o);

/* The relocation references of an ELF object (computed once). */
const struct elf_refs *object_refs(struct objcache *c, struct object *o);

/* glibc's l_versions for o (computed once). */
size_t object_vslots(struct objcache *c, struct object *o, const struct elf_vslot **out);

/* True when the bytes look like a GNU ld script rather than ELF. */
bool looks_like_ldscript(const uint8_t *data, size_t len);

#endif
