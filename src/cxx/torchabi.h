/*
 * torchabi.h: which torch releases an object binds against, from the index
 * of every torch release's dynamic exports (data/torch/abi.idx, built by
 * tools/torch_index.py from the PyPI wheels; data/torch/README.md).
 *
 * The index stores each distinct exported name once, as the top hash_bits
 * bits of its 64-bit FNV-1a hash, with the set of releases that export it.
 * The file is embedded in the binary; torchabi_builtin() decodes it on
 * first use (about 20 ms) into the caller's arena, so only a command whose
 * explanation needs it pays for it.
 *
 * File format (little-endian; every read is bounds-checked, the whole file
 * must be consumed exactly):
 *   0   "ABTORCH\0"
 *   8   u16 format (2), u16 hash_bits (32..64)
 *   12  u32 nrel, u32 nsets, u32 nsym, u32 strings_len, u32 0
 *   32  nrel records of 24 bytes: u32 version, wheel, sha256, libs (string
 *       offsets), u32 nsym, u8 cuda_major (0: CPU build), i8 cxx11 ABI,
 *       u16 e_machine of its libraries (format 1 had 0 there: x86_64 only)
 *       the strings (NUL-terminated)
 *       nsets bitmaps of ceil(nrel / 8) bytes (bit r: release r)
 *       for each set: uvarint count, then count uvarint deltas of the
 *       ascending hashes of the names exported by exactly that set
 *
 * A release is one wheel: a version for one machine (x86_64, aarch64) and
 * one CUDA major.  Releases are sorted by machine, then version, so one
 * machine's releases are adjacent.  An object is compared only with the
 * releases of its own e_machine (PyPI's aarch64 torch 2.9.1 is a CPU
 * build, its x86_64 twin a CUDA 12 one).  Results live in the arena given;
 * the index must outlive them.
 */
#ifndef ABISCOPE_CXX_TORCHABI_H
#define ABISCOPE_CXX_TORCHABI_H

#include "core/arena.h"
#include "core/bytes.h"
#include "core/diag.h"
#include "elf/elf.h"

#define TORCHABI_MAX_RELEASES 256
#define TORCHABI_MAX_SYMBOLS (1u << 24)

struct torchset {
	uint64_t w[TORCHABI_MAX_RELEASES / 64];
};

struct torchabi_release {
	const char *version;	/* "2.9.1" */
	const char *wheel;	/* the wheel file it was read from */
	const char *sha256;	/* of that wheel, hex */
	const char *libs;	/* the sonames read, comma-separated */
	uint32_t nsym;
	int cuda_major;		/* 0: a CPU build */
	int cxx11;		/* _GLIBCXX_USE_CXX11_ABI of libc10.so, -1 unknown */
	uint16_t machine;	/* e_machine of its libraries */
};

struct torchabi {
	unsigned hash_bits;
	size_t nrel, nsets, nsym;
	struct torchabi_release *rel;
	struct torchset *sets;
	/* open addressing: key = hash + 1 (0 empty), val = set index */
	uint64_t *key;
	uint32_t *val;
	size_t mask;
	unsigned slot_shift;	/* a hash's slot is its top bits: h >> slot_shift */
};

/* Decodes an index in b (name for messages).  ST_MALFORMED with the offset
 * on any inconsistency; the fuzz entry point. */
enum status torchabi_parse(struct arena *a, struct bytes b, const char *name, struct torchabi *ix,
			   struct diag *d);

/* The embedded index, decoded into a on first call through *cache. */
const struct torchabi *torchabi_builtin(struct arena *a, struct torchabi **cache, struct diag *d);
/* The embedded bytes (for tests and the fuzz seeds). */
struct bytes torchabi_builtin_bytes(void);

/* The releases exporting name, or NULL when none does. */
const struct torchset *torchabi_lookup(const struct torchabi *ix, const char *name);
/* The hash the index stores name under (its top hash_bits bits of FNV-1a). */
uint64_t torchabi_hash(const struct torchabi *ix, const char *name);

/* Set helpers. */
bool torchset_has(const struct torchset *s, size_t r);
void torchset_add(struct torchset *s, size_t r);
void torchset_and(struct torchset *s, const struct torchset *t);
void torchset_all(struct torchset *s, size_t nrel);
size_t torchset_count(const struct torchset *s);
/* The newest (highest) / oldest release in s, or -1. */
int torchset_newest(const struct torchset *s, size_t nrel);
int torchset_oldest(const struct torchset *s, size_t nrel);
/* "2.9.0 and 2.9.1", "2.0.0 to 2.3.1, 2.5.0" (runs of adjacent releases). */
const char *torchset_text(struct arena *a, const struct torchabi *ix, const struct torchset *s);
/* "CUDA 12", "CUDA 11 or 12", "CPU" for the builds in s. */
const char *torchset_cuda_text(struct arena *a, const struct torchabi *ix, const struct torchset *s);
/* The release index of version ("2.10.0+cu128" matches "2.10.0") for
 * machine (e_machine), or -1. */
int torchabi_find(const struct torchabi *ix, const char *version, uint16_t machine);
/* "x86_64", "aarch64" (uname -m's names), else elf_machine_name's. */
const char *torchabi_machine_text(uint16_t machine);
/* The releases of one machine; false when the index has none. */
bool torchabi_machine_set(const struct torchabi *ix, uint16_t machine, struct torchset *out);

/* A symbol an object needs that torch should provide: LibTorch's stable C
 * ABI (*stable = true) or C++ API (cxx/abi.h), or torch/csrc's THP* Python
 * glue. */
bool torchabi_is_torch_symbol(const char *name, bool *stable);

#define TORCH_COMPAT_MAX_LISTED 8

/*
 * Which releases of the object's machine satisfy every undefined, non-weak
 * torch symbol of an ELF object (c10::, at::, torch::, c10d::, caffe2::,
 * THP*, and the stable C ABI aoti_torch_* / torch_*).  For a machine the
 * index has no release of, nneed is 0 and no_releases is set.
 */
struct torch_compat {
	uint16_t machine;	/* the object's e_machine */
	bool no_releases;	/* the index has no release of that machine: nothing said */
	size_t nneed;		/* torch symbols needed */
	size_t nstable;		/* of which stable C ABI */
	struct torchset ok;	/* releases exporting all of them */
	size_t nnone;		/* needed symbols no release exports */
	const char *none[TORCH_COMPAT_MAX_LISTED];
	int cudart_major;	/* the object's DT_NEEDED libcudart.so.N, -1 */
};

void torch_compat_of(struct arena *a, const struct torchabi *ix, const struct elf_file *ef,
		     struct torch_compat *out);

/* For a release r outside c->ok: up to max symbols of the object it lacks;
 * returns how many it lacks in all. */
size_t torch_compat_missing(const struct torchabi *ix, const struct elf_file *ef, size_t r, const char **out,
			    size_t max);

#endif
