/*
 * cpu.h: the CPU facts the dynamic loader depends on (x86 only; on other
 * hosts the probe reports known = false and callers assume no hwcaps).
 *
 * GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,... switches features off before
 * the loader derives its facts from them; cpu_x86_hwcaps_off() turns that
 * value into the mask cpu_x86_probe_masked() applies.
 */
#ifndef ABISCOPE_CPU_H
#define ABISCOPE_CPU_H

#include "core/common.h"

struct cpu_x86 {
	bool known;
	bool intel;
	uint32_t isa_1;		/* 1 baseline, 2 x86-64-v2, 4 v3, 8 v4 */
	const char *platform;	/* "haswell", "xeon_phi" or NULL (AT_PLATFORM stays) */
	bool avx512_1;		/* legacy HWCAP_X86_AVX512_1 */
};

/* Features glibc.cpu.hwcaps can switch off that decide a load (the ISA
 * level, $PLATFORM, the avx512_1 hwcap). */
enum cpu_x86_feature {
	CPUF_CMOV = 1u << 0, CPUF_CX8 = 1u << 1, CPUF_SSE2 = 1u << 2, CPUF_POPCNT = 1u << 3,
	CPUF_SSE4_1 = 1u << 4, CPUF_SSE4_2 = 1u << 5, CPUF_SSSE3 = 1u << 6, CPUF_AVX = 1u << 7,
	CPUF_AVX2 = 1u << 8, CPUF_FMA = 1u << 9, CPUF_LZCNT = 1u << 10, CPUF_MOVBE = 1u << 11,
	CPUF_BMI1 = 1u << 12, CPUF_BMI2 = 1u << 13, CPUF_OSXSAVE = 1u << 14, CPUF_XSAVE = 1u << 15,
	CPUF_XSAVEC = 1u << 16, CPUF_AVX512F = 1u << 17, CPUF_AVX512CD = 1u << 18,
	CPUF_AVX512BW = 1u << 19, CPUF_AVX512DQ = 1u << 20, CPUF_AVX512ER = 1u << 21,
	CPUF_AVX512PF = 1u << 22, CPUF_AVX512VL = 1u << 23,
};

void cpu_x86_probe(struct cpu_x86 *c);
/* The probe with the features in off (enum cpu_x86_feature bits) unusable. */
void cpu_x86_probe_masked(struct cpu_x86 *c, uint32_t off);

/*
 * The value of glibc.cpu.hwcaps as sysdeps/x86/cpu-tunables.c reads it:
 * comma-separated names, case-sensitive, "-NAME" disables; enabling and
 * names that do not change a load are ignored.  Returns the mask of
 * features switched off.
 */
uint32_t cpu_x86_hwcaps_off(const char *value);

/* The glibc-hwcaps subdirectory names active for c, best first. */
size_t cpu_x86_hwcaps_of(const struct cpu_x86 *c, const char **out, size_t max, uint32_t *isa_1);

#endif
