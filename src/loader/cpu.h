/*
 * cpu.h: the CPU facts the dynamic loader depends on (x86 only; on other
 * hosts the probe reports known = false and callers assume no hwcaps).
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

void cpu_x86_probe(struct cpu_x86 *c);

#endif
