/*
 * hwcaps.c: the loader facts that depend on the CPU, as glibc 2.36
 * derives them: $PLATFORM and the legacy hwcap ("haswell", avx512_1;
 * sysdeps/x86/cpu-features.c), the active glibc-hwcaps subdirectories
 * (sysdeps/x86_64/dl-hwcaps-subdirs.c, from the ISA level recomputed after
 * the tunables), the legacy subdirectories (elf/dl-hwcaps.c
 * _dl_important_hwcaps, dl_hwcap & glibc.cpu.hwcap_mask) and the
 * ld.so.cache hwcap filter (elf/dl-cache.c).  On aarch64 the legacy
 * hwcaps come from AT_HWCAP (sysdeps/unix/sysv/linux/aarch64/dl-procinfo.h:
 * HWCAP_IMPORTANT is HWCAP_ATOMICS, so the one hwcap subdirectory is
 * "atomics"), $PLATFORM is the kernel's AT_PLATFORM "aarch64", and glibc
 * (2.36 to 2.42) defines no glibc-hwcaps subdirectories for it.
 */
#include "loader/ldso.h"
#include "loader/cpu.h"

/*
 * Legacy hwcaps subdirectories (glibc <= 2.36): the power set of the
 * hwcap strings, the platform and "tls", in _dl_important_hwcaps order:
 * masks from all-set down to empty, components from the highest index.
 */
static void add_legacy_capstr(struct arena *a, const char **temp, size_t cnt, struct ptrvec *out)
{
	size_t total = (size_t)1 << cnt;
	for (size_t k = 0; k < total; k++) {
		size_t mask = total - 1 - k;
		char buf[256];
		size_t o = 0;
		for (size_t i = cnt; i-- > 0;) {
			if (!(mask & ((size_t)1 << i)))
				continue;
			int w = snprintf(buf + o, sizeof buf - o, "%s/", temp[i]);
			if (w > 0)
				o += (size_t)w;
		}
		buf[o < sizeof buf ? o : sizeof buf - 1] = '\0';
		ptrvec_push(a, out, arena_strdup(a, buf));
	}
}

/* _dl_hwcap_string of aarch64 (dl-procinfo.c, glibc 2.36): the names of
 * AT_HWCAP's bits, as Linux's /proc/cpuinfo prints them. */
static const char *const aarch64_hwcap_names[32] = {
	"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32",
	"atomics", "fphp", "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma",
	"lrcpc", "dcpop", "sha3", "sm3", "sm4", "asimddp", "sha512", "sve",
	"asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca",
	"pacg",
};

/* Legacy hwcap names modelled at most (2^(n+2) subdirectories each). */
#define LEGACY_HWCAPS_MAX 6

uint64_t ldso_hwcap_mask_default(uint16_t machine)
{
	return machine == EM_AARCH64_ ? AARCH64_HWCAP_ATOMICS : LDSO_HWCAP_MASK_DEFAULT;
}

static uint32_t hwcaps_priority_cb(void *ctx, const char *name)
{
	const struct ldso_facts *f = ctx;
	for (size_t i = 0; i < f->nhwcaps_active; i++)
		if (str_eq(f->hwcaps_active[i], name))
			return (uint32_t)(i + 1);
	return 0;
}

void ldso_cpu_facts(struct arena *a, struct ldso_facts *f, uint32_t cpu_off, uint64_t hwcap_mask)
{
	uint16_t machine = f->machine;
	bool is64 = f->is64;
	struct cpu_x86 cpu;
	memset(&cpu, 0, sizeof cpu);
	bool host_x86 = false;
#if defined(__x86_64__) || defined(__i386__)
	host_x86 = true;
#endif
	if (machine == EM_X86_64_ && host_x86)
		cpu_x86_probe_masked(&cpu, cpu_off);
	f->cpu_off = cpu_off;
	f->hwcap_mask = hwcap_mask;
	if (machine == EM_X86_64_) {
		f->platform = cpu.platform ? cpu.platform : "x86_64";
	} else if (machine == EM_AARCH64_ && is64) {
		/* arch/arm64's ELF_PLATFORM, whatever the CPU */
		f->platform = "aarch64";
	} else if (!f->platform) {
		f->platform = elf_machine_name(machine);
		ptrvec_push(a, &f->notes, arena_printf(a, "$PLATFORM assumed to be \"%s\"", f->platform));
	}
	f->isa_1 = cpu.isa_1;

	struct ptrvec caps;
	memset(&caps, 0, sizeof caps);
	bool hwcaps_dirs = ldso_glibc_at_least(f, 2, 33);
	f->hwcaps_active = NULL;
	f->nhwcaps_active = 0;
	if (machine == EM_X86_64_ && is64 && hwcaps_dirs && f->x86_hwcaps_names) {
		const char *act[3];
		uint32_t isa;
		size_t n = cpu.known ? cpu_x86_hwcaps_of(&cpu, act, 3, &isa) : 0;
		f->hwcaps_active = arena_calloc(a, n ? n : 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			f->hwcaps_active[i] = act[i];
			ptrvec_push(a, &caps, arena_printf(a, "glibc-hwcaps/%s/", act[i]));
		}
		f->nhwcaps_active = n;
	} else if (hwcaps_dirs && machine != EM_X86_64_ && machine != EM_AARCH64_ && !f->capstr) {
		ptrvec_push(a, &f->notes, arena_printf(a, "glibc-hwcaps subdirectories of %s are not modelled",
						       elf_machine_name(machine)));
	}
	/* dl_hwcap of x86-64: HWCAP_X86_64 (bit 1), HWCAP_X86_AVX512_1 (bit 2). */
	uint64_t dl_hwcap = machine == EM_X86_64_ && is64 ? (2u | (cpu.avx512_1 ? 4u : 0u))
			    : machine == EM_AARCH64_ && is64 ? f->hwcap : 0;
	uint64_t masked = dl_hwcap & hwcap_mask;
	if (!ldso_glibc_at_least(f, 2, 37)) {
		const char *temp[LEGACY_HWCAPS_MAX + 2];
		size_t cnt = 0;
		if (machine == EM_AARCH64_) {
			/* _dl_important_hwcaps: the masked bits, lowest first */
			for (unsigned bit = 0; bit < 32; bit++) {
				if (!(masked & (1ull << bit)))
					continue;
				if (cnt == LEGACY_HWCAPS_MAX) {
					ptrvec_push(a, &f->notes, arena_printf(a, "glibc.cpu.hwcap_mask selects more than %d "
										  "hwcaps: the subdirectories of the "
										  "rest are not modelled", LEGACY_HWCAPS_MAX));
					break;
				}
				temp[cnt++] = aarch64_hwcap_names[bit];
			}
		} else {
			if (masked & 2)
				temp[cnt++] = "x86_64";
			if (masked & 4)
				temp[cnt++] = "avx512_1";
		}
		temp[cnt++] = f->platform;
		temp[cnt++] = "tls";
		add_legacy_capstr(a, temp, cnt, &caps);
	} else {
		ptrvec_push(a, &caps, arena_strdup(a, ""));
	}
	f->capstr = (const char **)caps.item;
	f->ncapstr = caps.n;

	struct ldcache_query *q = &f->cache_query;
	q->legacy_hwcaps = !ldso_glibc_at_least(f, 2, 37);
	if (machine == EM_X86_64_ && is64) {
		q->platform_mask = 0xfull << 48;
		uint64_t plat = 0;
		if (cpu.platform && str_eq(cpu.platform, "haswell"))
			plat = 1ull << (48 + 2);
		else if (cpu.platform && str_eq(cpu.platform, "xeon_phi"))
			plat = 1ull << (48 + 3);
		q->platform_bit = plat;
		q->hwcap_exclude = ~(masked | q->platform_mask | (1ull << 63));
	} else if (machine == EM_AARCH64_ && is64) {
		q->platform_mask = 0;	/* _DL_HWCAP_PLATFORM: none on aarch64 */
		q->platform_bit = 0;
		q->hwcap_exclude = ~(masked | (1ull << 63));
	} else {
		q->hwcap_exclude = ~(1ull << 63);
	}
	q->isa_1 = cpu.isa_1;
	q->hwcaps_priority = hwcaps_priority_cb;
	q->ctx = f;
}
