/*
 * ldso.h: what the dynamic loader of the inspected system is built to do.
 *
 * glibc fixes several search rules at build time: the default directories
 * (SYSTEM_DIRS), the expansion of $LIB, the glibc-hwcaps subdirectory
 * names.  abiscope reads them from the loader binary itself (its string
 * table holds them) and reads the glibc release from its version banner,
 * never by running it.  What depends on the CPU ($PLATFORM, the x86-64 ISA
 * level that activates glibc-hwcaps/x86-64-v3, the legacy hwcaps
 * subdirectories of glibc <= 2.36) is computed from CPUID on this host for
 * x86-64, and from AT_HWCAP for aarch64; the page size is AT_PAGESZ.  The
 * auxiliary-vector values are this host's for a process of its own
 * machine, else what the caller gave (struct machine_params), else assumed.
 * Every fact that had to be assumed rather than read is listed in notes.
 *
 * The struct lives in the caller's arena; the ld.so.cache mapping is owned
 * by the object cache passed in.
 */
#ifndef ABISCOPE_LDSO_H
#define ABISCOPE_LDSO_H

#include "elf/object.h"
#include "loader/ldcache.h"

struct ldso_facts {
	const char *interp;		/* the loader binary the facts come from */
	bool interp_read;		/* false: it could not be read; facts assumed */
	uint16_t machine;
	bool is64;
	int glibc_major, glibc_minor;	/* 0.0 when unknown */
	const char *glibc_banner;

	const char **system_dirs;	/* each ends in '/' */
	size_t nsystem_dirs;
	const char *dst_lib;		/* $LIB */
	const char *platform;		/* $PLATFORM */

	/* subdirectories probed inside every search directory, in order,
	 * each ending in '/'; the last one is "" (the directory itself) */
	const char **capstr;
	size_t ncapstr;
	const char **hwcaps_active;	/* active glibc-hwcaps names, best first */
	size_t nhwcaps_active;
	uint32_t isa_1;			/* x86 ISA level bits of this CPU */
	bool x86_hwcaps_names;		/* the loader knows the x86-64-vN names */
	uint64_t hwcap_mask;		/* glibc.cpu.hwcap_mask in effect */
	uint32_t cpu_off;		/* CPU features glibc.cpu.hwcaps switched off */

	const char *cache_path;
	bool has_cache;
	struct ldcache cache;
	struct diag cache_diag;
	struct ldcache_query cache_query;

	/* What the kernel tells the process (objcache_machine): its page
	 * size (PT_LOAD alignment, the memory image) and AT_HWCAP(2) (the
	 * legacy hwcap subdirectories and ld.so.cache entries of aarch64). */
	uint64_t page_size;
	uint64_t hwcap, hwcap2;

	struct ptrvec notes;		/* const char *: assumptions made */
};

/*
 * Loads the facts for a process whose loader is interp (NULL: the default
 * loader path for machine/is64).  Never fails: what cannot be read is
 * assumed from tables and noted.
 */
void ldso_facts_load(struct arena *a, struct objcache *oc, const char *interp, uint16_t machine,
		     bool is64, struct ldso_facts *f);

/*
 * The facts the loader binary's bytes give, read through bytes.h (a
 * crafted loader under --root is hostile input): the release and its
 * banner line, and SYSTEM_DIRS into f->system_dirs.  False when no
 * SYSTEM_DIRS string was found (the caller assumes them).
 */
bool ldso_read_binary(struct arena *a, struct bytes b, struct ldso_facts *f);

/* glibc version comparison helper: true when the facts say >= maj.min. */
bool ldso_glibc_at_least(const struct ldso_facts *f, int maj, int min);

/* The default PT_INTERP path for a machine, e.g. /lib64/ld-linux-x86-64.so.2. */
const char *ldso_default_interp(uint16_t machine, bool is64);

/*
 * The facts that depend on the CPU: $PLATFORM, the glibc-hwcaps and
 * legacy hwcaps subdirectories, the ld.so.cache hwcap filter.  cpu_off
 * are features switched off (glibc.cpu.hwcaps, enum cpu_x86_feature),
 * hwcap_mask is glibc.cpu.hwcap_mask.  ldso_facts_load calls it with the
 * defaults; a caller with GLIBC_TUNABLES calls it again (hwcaps.c).
 */
#define LDSO_HWCAP_MASK_DEFAULT 6u	/* HWCAP_IMPORTANT: x86_64 | avx512_1 */
/* glibc.cpu.hwcap_mask's default on a machine: its HWCAP_IMPORTANT
 * (x86-64: LDSO_HWCAP_MASK_DEFAULT; aarch64: HWCAP_ATOMICS). */
uint64_t ldso_hwcap_mask_default(uint16_t machine);
void ldso_cpu_facts(struct arena *a, struct ldso_facts *f, uint32_t cpu_off, uint64_t hwcap_mask);

/* The x86-64 ISA level names glibc would activate on this CPU, best first. */
size_t cpu_x86_hwcaps_active(const char **out, size_t max, uint32_t *isa_1);

#endif
