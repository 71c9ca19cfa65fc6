/*
 * snapshot.h: a host, described in one portable file.
 *
 * A snapshot holds what the loader, symbol, C++, CUDA and package checks
 * need to run on another machine (docs/snapshot.md is the reference):
 *  - the loader's facts (glibc release, default directories, $LIB,
 *    $PLATFORM, active hwcaps, the ld.so.cache entries), the driver and GPUs;
 *  - every file the loader could meet: the interpreter and its closure, the
 *    environment's ELF objects, everything ld.so.cache and the default
 *    directories list, with symbolic links and non-ELF candidates kept as
 *    such; per ELF object its header facts, SONAME, NEEDED, RPATH, RUNPATH,
 *    flags, version definitions and requirements, its exported symbols as
 *    64-bit name hashes with their version index and binding, and its
 *    load-time references with readable names;
 *  - the environment: its kind, interpreter, site directories, the text
 *    files its import model reads (pyvenv.cfg, torch's sources, package
 *    __init__.py), and its distributions with the files they own.
 *
 * snapshot_build() collects from a scan, snapshot_write() saves JSON
 * (gzip when the name ends in .gz), snapshot_read() loads one (jansson),
 * snapshot_mount() makes a snapshot the file system of a scan (through a
 * vfs; ELF images are synthesised on first use), so every command runs
 * unchanged "on" the described host.  Everything lives in the arena given.
 */
#ifndef ABISCOPE_SNAPSHOT_H
#define ABISCOPE_SNAPSHOT_H

#include "scan.h"
#include "loader/ldso.h"
#include "pyenv/env.h"
#include "core/fs.h"

#define SNAPSHOT_FORMAT "abiscope-snapshot"
#define SNAPSHOT_VERSION 1

/* One exported symbol: what the loader's check_match needs, without the name. */
struct snap_export {
	uint64_t hash;		/* elf_name_hash64(name) */
	uint16_t versym;	/* raw DT_VERSYM entry (index | 0x8000 hidden) */
	uint8_t info;		/* st_info: binding << 4 | type */
	uint8_t flags;		/* SNAP_* below */
};

enum {
	SNAP_HAS_VALUE = 1,	/* st_value != 0 */
	SNAP_ABS = 2,		/* st_shndx == SHN_ABS */
	SNAP_UNDEF = 4,		/* st_shndx == SHN_UNDEF (a PLT address in an executable) */
	SNAP_VIS_SHIFT = 4,	/* st_other visibility, 2 bits */
};

/* One load-time symbol reference (as elf_collect_refs reports it). */
struct snap_ref {
	const char *name;
	uint16_t versym;	/* of the undefined symbol */
	uint8_t lookup_class;	/* enum reloc_class */
	uint8_t flags;		/* SNAP_REF_* */
};

enum { SNAP_REF_DEFERRABLE = 1, SNAP_REF_EAGER = 2, SNAP_REF_WEAK = 4, SNAP_REF_TLS = 8 };

struct snap_verdef {
	uint16_t ndx, flags;
	const char *name;
};

struct snap_vernaux {
	const char *name;
	uint16_t flags, other;
};

struct snap_verneed {
	const char *file;
	struct snap_vernaux *aux;
	size_t naux;
};

struct snap_elf {
	bool big_endian;	/* always ELFCLASS64: other classes are kept as heads */
	uint16_t machine, type;
	uint8_t osabi, abiversion;
	uint32_t e_flags;
	uint64_t dt_flags, dt_flags_1;
	bool bind_now, has_gnu_stack;
	uint32_t stack_flags;		/* PT_GNU_STACK p_flags */
	uint64_t tls_memsz, tls_align;	/* PT_TLS, 0 when none */
	const char *soname, *rpath, *runpath, *interp;
	const char **needed;
	size_t nneeded;
	const char **filter, **auxiliary;
	size_t nfilter, nauxiliary;
	struct snap_verdef *verdef;
	size_t nverdef;
	struct snap_verneed *verneed;
	size_t nverneed;
	struct snap_export *exports;
	size_t nexports;
	const char **export_names;	/* with snapshot --names: each export's name, else NULL */
	const char **named;		/* exports kept by name too (PyInit_*) */
	size_t nnamed;
	struct snap_ref *refs;		/* in glibc's processing order */
	size_t nrefs;
	bool partial;			/* exports and references not recorded */
	bool cache_only;		/* described because ld.so.cache lists it: no check
					 * of the host loaded it (always so when partial) */
	const uint8_t *head;		/* the file's first bytes, what the loader's probe reads */
	size_t nhead;
	const char *cuda;		/* device code it carries ("sm_90a sm_100a ptx:compute_90"), or NULL */
	int cuda_runtime;		/* the CUDA major it links, 0 unknown */
	/* what the loader does with a corrupt table of the object (it dies,
	 * asserts, or fails with a fixed text): elf_fault_encode()'s line,
	 * or NULL.  An image made from the snapshot carries it back
	 * (DT_ABISCOPE_FAULT). */
	const char *loader_fault;
};

/* SNAP_SAME: another name of the file target (a hard link: same inode) */
enum snap_file_type { SNAP_ELF, SNAP_LINK, SNAP_TEXT, SNAP_HEAD, SNAP_DIR, SNAP_SAME };

struct snap_file {
	const char *path;
	enum snap_file_type type;
	const char *target;	/* SNAP_LINK, SNAP_SAME */
	const uint8_t *bytes;	/* SNAP_TEXT: the contents; SNAP_HEAD: the first bytes */
	size_t nbytes;
	uint64_t size;		/* the file's size */
	struct snap_elf *elf;	/* SNAP_ELF */
	const char **children;	/* SNAP_DIR: entry names, "name/" for folders */
	size_t nchildren;
	bool listed;		/* SNAP_DIR: children is the complete listing */
	const char *sha256;	/* of the whole file, when it was computed */
};

struct snap_dist {
	const char *name, *version, *installer, *meta;
};

struct snap_cache_entry {
	int32_t flags;
	const char *key, *value;
	uint64_t hwcap;
};

struct snap_gpu {
	unsigned cc;		/* 90 for sm_90 */
	const char *name;
};

struct snapshot {
	int version;
	const char *created, *abiscope, *hostname, *kernel, *label;
	/* the loader */
	const char *interp;
	int glibc_major, glibc_minor;
	const char **system_dirs;
	size_t nsystem_dirs;
	const char *dst_lib, *platform;
	const char **capstr;
	size_t ncapstr;
	const char **hwcaps_active;
	size_t nhwcaps_active;
	uint32_t isa_1;
	uint16_t machine;		/* the loader's e_machine */
	const char *uname_machine;	/* uname -m of the running kernel; NULL under --root */
	uint64_t hwcap, hwcap2;		/* AT_HWCAP, AT_HWCAP2 */
	bool hwcap_known;		/* false: not read (--root, a snapshot from before) */
	uint32_t page_size;		/* AT_PAGESZ; 0: not read, 4096 assumed */
	const char *cache_path;
	bool has_cache;
	struct snap_cache_entry *cache;
	size_t ncache;
	const char *cache_generator;
	const char **cache_hwcaps;
	size_t ncache_hwcaps;
	struct ldcache_query cache_query;	/* without its callback */
	const char **notes;
	size_t nnotes;
	/* the NVIDIA driver and the GPUs, as found (NULL / 0 when none) */
	const char *driver;
	unsigned driver_cuda;
	struct snap_gpu *gpus;
	size_t ngpus;
	/* the environment */
	const char *env_kind, *env_root, *python, *ext_suffix;
	int py_major, py_minor;
	const char **site;
	size_t nsite;
	const char *torch_version, *torch_cuda;
	struct snap_dist *dists;
	size_t ndists;
	const char **failing;	/* "module: dlerror" for each import the capture saw fail */
	size_t nfailing;
	/* the files */
	struct snap_file *files;
	size_t nfiles;
	struct strmap by_path;	/* path -> struct snap_file * */
};

/* The machine as uname -m names it ("x86_64", "aarch64"): the recorded
 * one, else the loader's e_machine's name (a snapshot made under --root,
 * or one from before the field: x86_64 when it records no e_machine). */
const char *snapshot_machine(const struct snapshot *s);

/* "9.0 NVIDIA H100, 12.0 RTX 5090": the GPUs as the summary and diff name them. */
const char *snapshot_gpus_text(struct arena *a, const struct snapshot *s);


/*
 * Recording: while a recorder is attached to a scan, every path the scan's
 * file-system view is asked about is remembered with how it was used
 * (stat, probe, map, read, list).  Building a snapshot of an environment is
 * then "check it, and keep what the check looked at", plus what the loader
 * could meet on behalf of other binaries (ld.so.cache's libraries).
 */
struct snap_recorder {
	struct arena *arena;
	struct strmap use;	/* path -> (uintptr_t) bit set of 1 << enum fs_access */
	struct ptrvec order;	/* const char *: paths in first-use order */
	struct fs_recorder hook;
};

void snapshot_record_begin(struct scan *s, struct snap_recorder *r);
void snapshot_record_end(struct scan *s);

struct snapshot_options {
	bool full;			/* describe every library ld.so.cache lists */
	bool names;			/* keep the names of exports, not only their hashes */
	const char *label;		/* a name for the host (default: its hostname) */
	const struct pyenv *env;	/* the environment, or NULL */
	const struct ptrvec *dists;	/* struct dist *, or NULL */
	const char *torch_version, *torch_cuda;
	const char *driver;		/* the driver version found, or NULL */
	unsigned driver_cuda;
	const struct snap_gpu *gpus;
	size_t ngpus;
};

/* Describes the scan's host, from what r recorded and the loader facts f. */
enum status snapshot_build(struct scan *s, const struct snap_recorder *r, const struct ldso_facts *f,
			   const struct snapshot_options *o, struct snapshot *snap, struct diag *d);

/* The snapshot as compact JSON text (malloc'd, the caller frees it; NULL
 * when memory runs out).  The CLI writes it (core/fs.h fs_write_output). */
char *snapshot_to_json(const struct snapshot *snap, size_t *len);
/* Reads a snapshot file (plain or gzip) through the real file system. */
enum status snapshot_read(struct arena *a, const char *path, struct snapshot *snap, struct diag *d);
/*
 * The summary a fleet compares, written near the start of every snapshot:
 * the host's platform, the environment's distributions and a digest of each
 * of its ELF objects, and the imports that failed.  snapshot_read_summary()
 * reads only that part of a file (fast for hundreds of files).
 */
struct snap_summary {
	const char *label, *glibc, *driver, *gpus, *python, *torch, *hwcaps;
	const char *machine;		/* uname -m's name; NULL in a summary from before */
	const char *page_size;		/* "65536", or NULL: not recorded */
	const char **dist_names, **dist_versions;
	size_t ndists;
	const char **object_keys;
	uint64_t *object_digests;
	size_t nobjects;
	const char **failing;
	size_t nfailing;
};
enum status snapshot_read_summary(struct arena *a, const char *path, struct snap_summary *sum,
				  struct diag *d);
/* Parses the summary object out of a snapshot's text (also for fuzzing). */
enum status snapshot_parse_summary(struct arena *a, const char *text, size_t len, const char *name,
				   struct snap_summary *sum, struct diag *d);

/* Parses a snapshot already in memory (also the fuzz entry point). */
enum status snapshot_parse(struct arena *a, const char *text, size_t len, const char *name,
			   struct snapshot *snap, struct diag *d);

/*
 * Makes snap the file system of s: an exclusive vfs (nothing else exists,
 * except prefixes passed through afterwards with vfs_passthrough), ELF
 * images synthesised on first use, and the snapshot's loader facts for
 * every process of the scan.
 */
void snapshot_mount(struct scan *s, struct snapshot *snap);

/*
 * Places a file of this machine (real_path) at logical_path of a mounted
 * snapshot, as if it were installed there: a build of an extension checked
 * in the described host's environment.  Folders are placed file by file.
 * The bytes are mapped read-only on first use and stay mapped until exit.
 */
enum status snapshot_overlay(struct scan *s, const char *real_path, const char *logical_path,
			     struct diag *d);

/* The loader facts a snapshot records. */
void snapshot_facts(struct arena *a, const struct snapshot *snap, struct ldso_facts *f);

/* A minimal ELF image that behaves, for the loader model, like e (exports
 * under hashed names, see elf.h DT_ABISCOPE_HASHED). */
enum status snapshot_synth_elf(struct arena *a, const struct snap_elf *e, const char *path,
			       const uint8_t **out, size_t *len, struct diag *d);

/*
 * Capturing: check the environment at path (NULL: the default one) with
 * every library loaded, recording, and build the snapshot of the host from
 * it, with the driver and GPUs (probed unless no_driver; the probe may
 * load the system's libcuda.so.1, see cuda/gpu.h).  The check's results
 * are left in *c for callers that also want them.
 */
struct capture_options {
	const char *python;
	bool full, no_driver, names;
	const char *label;
	const char *path_env;		/* PATH (from the CLI), to find python3 */
	const char *virtual_env, *conda_prefix;	/* the default environment */
};
struct env_check;
enum status snapshot_capture(struct scan *s, const char *path, const struct capture_options *o,
			     struct snapshot *snap, struct env_check *c, struct diag *d);

/*
 * One side of a comparison: a snapshot file (read, mounted on s, and its
 * environment checked there), or an environment of this machine (captured).
 * Either way *snap describes the host and *c holds the verdicts.
 */
enum status snapshot_open_side(struct scan *s, const char *path, const struct capture_options *o,
			       struct snapshot *snap, struct env_check *c, struct diag *d);

/* True when path names a snapshot file (by its first bytes), not an environment. */
bool snapshot_is_file(const char *path);

/*
 * What a path holds, by its first bytes (inflated when gzip), read through
 * fs.h: a snapshot, other JSON (a regular file whose first byte is a JSON
 * value's: a snapshot gone wrong, or not one), or neither (a folder, an
 * interpreter, anything else).
 */
enum snapshot_file_kind { SNAPSHOT_FILE_NOT, SNAPSHOT_FILE_YES, SNAPSHOT_FILE_JSON };
enum snapshot_file_kind snapshot_file_kind(const char *path);

#endif
