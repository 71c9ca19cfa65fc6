/*
 * fatbin.h: the CUDA device code inside a file, read from its bytes.
 *
 * A fatbin is a 16-byte header (magic 0xBA55ED50, version 1, header size,
 * size of what follows) and a run of entries, each a header of 64 bytes
 * or more (kind, SM, PTX ISA or cubin code version, flags, sizes) and a
 * payload: a cubin (an ELF file for the GPU), PTX text, or LTO-IR.  The
 * layout and flags are in the handbook (ml-abi.md section 5) and were
 * checked against nvcc 13.0 output and NVIDIA's libraries here.
 *
 * fatbin_scan_elf() finds every fatbin of a host ELF file:
 *   - `.nv_fatbin`, walked header by header from its start (what the CUDA
 *     runtime registers), and `__nv_relfatbin` (relocatable device code
 *     of -rdc builds);
 *   - the `.nvFatBinSegment` wrappers (24 bytes each), whose pointers must
 *     land on a fatbin; one that lands elsewhere is a problem, one that
 *     lands on a fatbin not seen yet adds it;
 *   - with FATBIN_SCAN_ALL, the fatbin magic anywhere else in allocated
 *     data sections (libcufft keeps thousands in .ldata, libcublasLt in
 *     .cask_resource, libcupti in .rodata).  A candidate found this way
 *     counts only when its header and every entry fit exactly.
 * fatbin_scan_raw() reads a file that is itself one or more fatbins
 * (nvcc -fatbin).  cubin_identify() names the SM of a cubin file.
 *
 * Nothing is decompressed: kind, SM, the `a`/`f` variant, the PTX ISA
 * version and the compression all sit in the uncompressed entry header.
 * Payloads are never touched, so a scan costs one pass over the headers.
 *
 * Ownership: the arrays live in the arena given; offsets are from the
 * start of the window scanned (the file), section names point into the
 * ELF view.  Malformed structures never stop a scan: the first one is kept
 * in set->problem with its offset, the rest of the file is still read.
 */
#ifndef ABISCOPE_CUDA_FATBIN_H
#define ABISCOPE_CUDA_FATBIN_H

#include "core/arena.h"
#include "core/bytes.h"
#include "core/fs.h"
#include "elf/elf.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_WRAPPER_MAGIC 0x466243b1u

enum fatbin_kind {
	FATBIN_PTX = 1,
	FATBIN_CUBIN = 2,
	FATBIN_LTOIR = 8,	/* NVVM IR for link-time optimisation (nvJitLink) */
};

/* Entry flags (u64 at entry + 0x28), each established by varying one
 * compile option at a time with nvcc 13.0. */
#define FATBIN_F_64BIT 0x1ull
#define FATBIN_F_HOST_LINUX 0x10ull
#define FATBIN_F_LZ4 0x2000ull		/* raw LZ4 block: --compress-mode=speed */
#define FATBIN_F_ZSTD 0x8000ull		/* zstd frame: default, balance, size */
#define FATBIN_F_ARCH_SPECIFIC 0x100000ull	/* sm_90a, compute_100a ... */
#define FATBIN_F_FAMILY 0x200000ull	/* sm_100f, compute_120f ... */

enum fatbin_where {
	FATBIN_IN_NV_FATBIN,	/* .nv_fatbin: registered by the CUDA runtime */
	FATBIN_IN_RELFATBIN,	/* __nv_relfatbin: relocatable device code (-rdc) */
	FATBIN_ELSEWHERE,	/* another section: loaded by the library itself */
	FATBIN_RAW_FILE,	/* the file is a fatbin (nvcc -fatbin) */
};

struct fatbin_entry {
	uint64_t offset;		/* of the entry header in the file */
	uint64_t payload_size;		/* stored bytes, padding included */
	uint64_t decompressed_size;	/* 0 when stored raw */
	uint64_t flags;
	uint32_t compressed_size;	/* 0 when stored raw */
	uint32_t header_size;
	uint32_t fatbin;		/* index in fatbin_set.fatbin */
	uint16_t kind;			/* enum fatbin_kind, or another value as read */
	uint16_t sm;			/* 75, 90, 100, 120 ... (major * 10 + minor) */
	uint16_t ver_major, ver_minor;	/* PTX: the PTX ISA; cubin: code version (1.8) */
	char variant;			/* 0, 'a' (arch-specific) or 'f' (family) */
};

struct fatbin {
	uint64_t offset, size;		/* header plus entries, in the file */
	const char *section;		/* section it lies in ("" for a raw file) */
	enum fatbin_where where;
	uint32_t first, n;		/* its entries: entry[first .. first + n) */
	bool registered;		/* a .nvFatBinSegment wrapper points at it */
	bool listed;			/* what `cuobjdump --list-elf/--list-ptx` shows */
};

struct fatbin_set {
	struct fatbin_entry *entry;
	size_t nentry, entry_cap;
	struct fatbin *fatbin;
	size_t nfatbin, fatbin_cap;
	size_t nwrappers;		/* .nvFatBinSegment records */
	size_t nwrappers_unmatched;	/* wrappers pointing at no fatbin */
	const char *problem;		/* first malformed structure, or NULL */
	uint64_t problem_offset;
	size_t nproblems;
	uint64_t strict_reads;		/* entry headers read validating candidates */
	bool strict_capped;		/* ... past the budget: the search by magic stopped */
};

enum fatbin_scan_mode {
	FATBIN_SCAN_REGISTERED,	/* .nv_fatbin, __nv_relfatbin and the wrappers only */
	FATBIN_SCAN_ALL,	/* and the magic in every other allocated data section */
};

void fatbin_set_init(struct fatbin_set *set);
void fatbin_scan_elf(struct arena *a, const struct elf_file *ef, enum fatbin_scan_mode mode,
		     struct fatbin_set *set);
/* raw: a file that starts with the fatbin magic. */
void fatbin_scan_raw(struct arena *a, struct bytes raw, struct fatbin_set *set);
/* True when the window starts with the fatbin magic. */
bool fatbin_has_magic(const uint8_t *data, size_t len);

/*
 * The SM and variant of a cubin file (e_machine EM_CUDA).  The SM is in
 * e_flags (ABI 7: low byte; ABI 8, CUDA 13: second byte).  The `a`
 * variant is EF_CUDA_ACCELERATORS (ABI 7: 0x800; ABI 8: 0x8) or the
 * accelerator attribute (9) of .nv.compat; the `f` variant is visible only
 * in the ptxas/nvlink options of .note.nv.tkinfo ("-arch sm_100f").
 * False when ef is not a cubin.
 */
bool cubin_identify(const struct elf_file *ef, uint16_t *sm, char *variant);

const char *fatbin_kind_name(uint16_t kind);		/* "cubin", "ptx", "lto-ir", "unknown" */
const char *fatbin_compression_name(uint64_t flags);	/* "none", "lz4", "zstd" */
const char *fatbin_where_name(enum fatbin_where w);
/* "sm_90a" for a cubin, "compute_90a" for PTX, "lto_90" for LTO-IR. */
void fatbin_target_name(const struct fatbin_entry *e, char *out, size_t outsz);

/*
 * The lines `cuobjdump --list-elf` (kind FATBIN_CUBIN) or `--list-ptx`
 * (FATBIN_PTX) prints for the file at path, in its order and format:
 * "ELF file    1: libx.1.sm_90a.cubin".  Only listed fatbins count.
 * cubin_file: the file is a cubin (cuobjdump then prints no index).
 * Returns the number of lines, *out in the arena.
 */
size_t fatbin_cuobjdump_list(struct arena *a, const char *path, const struct fatbin_set *set,
			     bool cubin_file, uint16_t kind, const char ***out);

#endif
