/*
 * cpu.c: the CPU facts glibc's loader derives from CPUID, computed the
 * same way (sysdeps/x86/cpu-features.c, get-isa-level.h of glibc 2.36):
 * the x86-64 ISA levels that activate glibc-hwcaps subdirectories, the
 * "haswell"/"xeon_phi" platform and the avx512_1 legacy hwcap.  Features
 * switched off by glibc.cpu.hwcaps are removed where glibc removes them:
 * after the "usable" bits are set and before the ISA level, the platform
 * and the hwcap are derived (cpu-features.c init_cpu_features).
 */
#include "loader/ldso.h"
#include "loader/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

void cpu_x86_probe_masked(struct cpu_x86 *c, uint32_t off)
{
	memset(c, 0, sizeof *c);
	unsigned a, b, cx, d, maxleaf;
	if (!__get_cpuid(0, &maxleaf, &b, &cx, &d))
		return;
	c->intel = b == 0x756e6547 && d == 0x49656e69 && cx == 0x6c65746e; /* GenuineIntel */
	__get_cpuid(1, &a, &b, &cx, &d);
	bool fpu = d & 1, cx8 = d >> 8 & 1, cmov = d >> 15 & 1, mmx = d >> 23 & 1;
	bool fxsr = d >> 24 & 1, sse = d >> 25 & 1, sse2 = d >> 26 & 1;
	bool sse3 = cx & 1, ssse3 = cx >> 9 & 1, fma = cx >> 12 & 1, cx16 = cx >> 13 & 1;
	bool sse41 = cx >> 19 & 1, sse42 = cx >> 20 & 1, movbe = cx >> 22 & 1;
	bool popcnt = cx >> 23 & 1, osxsave = cx >> 27 & 1, avx = cx >> 28 & 1, f16c = cx >> 29 & 1;
	uint64_t xcr0 = osxsave ? xgetbv0() : 0;
	bool ymm_ok = (xcr0 & 6) == 6;
	bool zmm_ok = ymm_ok && (xcr0 & 0xe0) == 0xe0;
	unsigned b7 = 0;
	if (maxleaf >= 7) {
		unsigned a7, c7, d7;
		__cpuid_count(7, 0, a7, b7, c7, d7);
	}
	bool bmi1 = b7 >> 3 & 1, avx2 = b7 >> 5 & 1, bmi2 = b7 >> 8 & 1;
	bool avx512f = b7 >> 16 & 1, avx512dq = b7 >> 17 & 1, avx512pf = b7 >> 26 & 1;
	bool avx512er = b7 >> 27 & 1, avx512cd = b7 >> 28 & 1, avx512bw = b7 >> 30 & 1;
	bool avx512vl = b7 >> 31 & 1;
	unsigned ea = 0, eb, ec = 0, ed;
	__get_cpuid(0x80000000, &ea, &eb, &ec, &ed);
	bool lahf = false, lzcnt = false;
	if (ea >= 0x80000001) {
		__get_cpuid(0x80000001, &ea, &eb, &ec, &ed);
		lahf = ec & 1;
		lzcnt = ec >> 5 & 1;
	}
	/* "usable" in glibc's sense: the OS saves the registers. */
	avx = avx && ymm_ok;
	avx2 = avx2 && ymm_ok;
	fma = fma && ymm_ok;
	f16c = f16c && ymm_ok;
	avx512f = avx512f && zmm_ok;
	avx512dq = avx512dq && zmm_ok;
	avx512cd = avx512cd && zmm_ok;
	avx512bw = avx512bw && zmm_ok;
	avx512vl = avx512vl && zmm_ok;
	avx512er = avx512er && zmm_ok;
	avx512pf = avx512pf && zmm_ok;
	bool xsave = osxsave && (cx >> 26 & 1), xsavec = false;
	if (osxsave && maxleaf >= 0xd) {
		unsigned ad, bd, cd, dd;
		__cpuid_count(0xd, 1, ad, bd, cd, dd);
		xsavec = ad >> 1 & 1;
	}

	/* TUNABLE_CALLBACK (set_hwcaps), then what init_cpu_features unsets
	 * with it: XSAVE features without OSXSAVE, and every AVX feature when
	 * neither XSAVE nor XSAVEC is usable. */
#define OFF(flag, var) if (off & (flag)) var = false
	OFF(CPUF_CMOV, cmov); OFF(CPUF_CX8, cx8); OFF(CPUF_SSE2, sse2); OFF(CPUF_POPCNT, popcnt);
	OFF(CPUF_SSE4_1, sse41); OFF(CPUF_SSE4_2, sse42); OFF(CPUF_SSSE3, ssse3); OFF(CPUF_AVX, avx);
	OFF(CPUF_AVX2, avx2); OFF(CPUF_FMA, fma); OFF(CPUF_LZCNT, lzcnt); OFF(CPUF_MOVBE, movbe);
	OFF(CPUF_BMI1, bmi1); OFF(CPUF_BMI2, bmi2); OFF(CPUF_OSXSAVE, osxsave); OFF(CPUF_XSAVE, xsave);
	OFF(CPUF_XSAVEC, xsavec); OFF(CPUF_AVX512F, avx512f); OFF(CPUF_AVX512CD, avx512cd);
	OFF(CPUF_AVX512BW, avx512bw); OFF(CPUF_AVX512DQ, avx512dq); OFF(CPUF_AVX512ER, avx512er);
	OFF(CPUF_AVX512PF, avx512pf); OFF(CPUF_AVX512VL, avx512vl);
#undef OFF
	if (!osxsave)
		xsave = xsavec = false;
	if (!xsave && !xsavec)
		avx = avx2 = fma = f16c = avx512f = avx512cd = avx512er = avx512pf = avx512vl =
			avx512dq = avx512bw = false;

	bool base = cmov && cx8 && fpu && fxsr && mmx && sse && sse2;
	bool v2 = base && cx16 && lahf && popcnt && sse3 && sse41 && sse42 && ssse3;
	bool v3 = v2 && avx && avx2 && bmi1 && bmi2 && f16c && fma && lzcnt && movbe && osxsave;
	bool v4 = v3 && avx512f && avx512bw && avx512cd && avx512dq && avx512vl;
	c->isa_1 = (base ? 1u : 0) | (v2 ? 2u : 0) | (v3 ? 4u : 0) | (v4 ? 8u : 0);

	/* Platform and legacy hwcap: Intel only (cpu-features.c). */
	c->platform = NULL;
	c->avx512_1 = false;
	if (c->intel) {
		if (avx512cd) {
			if (avx512er) {
				if (avx512pf)
					c->platform = "xeon_phi";
			} else if (avx512bw && avx512dq && avx512vl) {
				c->avx512_1 = true;
			}
		}
		if (!c->platform && avx2 && fma && bmi1 && bmi2 && lzcnt && movbe && popcnt)
			c->platform = "haswell";
	}
	c->known = true;
}
#else
void cpu_x86_probe_masked(struct cpu_x86 *c, uint32_t off)
{
	(void)off;
	memset(c, 0, sizeof *c);
}
#endif

void cpu_x86_probe(struct cpu_x86 *c)
{
	cpu_x86_probe_masked(c, 0);
}

uint32_t cpu_x86_hwcaps_off(const char *value)
{
	static const struct {
		const char *name;
		uint32_t flag;
	} names[] = {
		{ "CMOV", CPUF_CMOV }, { "CX8", CPUF_CX8 }, { "SSE2", CPUF_SSE2 },
		{ "POPCNT", CPUF_POPCNT }, { "SSE4_1", CPUF_SSE4_1 }, { "SSE4_2", CPUF_SSE4_2 },
		{ "SSSE3", CPUF_SSSE3 }, { "AVX", CPUF_AVX }, { "AVX2", CPUF_AVX2 }, { "FMA", CPUF_FMA },
		{ "LZCNT", CPUF_LZCNT }, { "MOVBE", CPUF_MOVBE }, { "BMI1", CPUF_BMI1 },
		{ "BMI2", CPUF_BMI2 }, { "OSXSAVE", CPUF_OSXSAVE }, { "XSAVE", CPUF_XSAVE },
		{ "XSAVEC", CPUF_XSAVEC }, { "AVX512F", CPUF_AVX512F }, { "AVX512CD", CPUF_AVX512CD },
		{ "AVX512BW", CPUF_AVX512BW }, { "AVX512DQ", CPUF_AVX512DQ },
		{ "AVX512ER", CPUF_AVX512ER }, { "AVX512PF", CPUF_AVX512PF },
		{ "AVX512VL", CPUF_AVX512VL },
	};
	uint32_t off = 0;
	const char *p = value ? value : "";
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len > 1 && p[0] == '-')
			for (size_t i = 0; i < ARRAY_SIZE(names); i++)
				if (strlen(names[i].name) == len - 1 && !memcmp(p + 1, names[i].name, len - 1))
					off |= names[i].flag;
		p += len;
		if (*p == ',')
			p++;
	}
	return off;
}

size_t cpu_x86_hwcaps_active(const char **out, size_t max, uint32_t *isa_1)
{
	struct cpu_x86 c;
	cpu_x86_probe(&c);
	return cpu_x86_hwcaps_of(&c, out, max, isa_1);
}

size_t cpu_x86_hwcaps_of(const struct cpu_x86 *c, const char **out, size_t max, uint32_t *isa_1)
{
	*isa_1 = c->isa_1;
	size_t n = 0;
	/* glibc's _dl_hwcaps_subdirs_active: v2 needed before v3, v3 before v4;
	 * priority order is best first. */
	if ((c->isa_1 & 8) && n < max)
		out[n++] = "x86-64-v4";
	if ((c->isa_1 & 4) && n < max)
		out[n++] = "x86-64-v3";
	if ((c->isa_1 & 2) && n < max)
		out[n++] = "x86-64-v2";
	return n;
}
