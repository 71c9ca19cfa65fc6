/*
 * tunables.c: GLIBC_TUNABLES as glibc 2.36 reads it (elf/dl-tunables.c,
 * elf/dl-tunables.list, sysdeps/x86/cpu-tunables.c) and what it changes
 * in the model of a load.
 */
#include "loader/tunables.h"
#include "loader/cpu.h"

/* elf/dl-tls.c: the static TLS surplus is (nns - 1) * LIBC_IE_TLS + nns *
 * OTHER_IE_TLS + optional_static_tls + LEGACY_TLS, 1664 bytes by default. */
#define OPTIONAL_STATIC_TLS_DEFAULT 512
#define NNS_DEFAULT 4
#define IE_TLS 144		/* LIBC_IE_TLS, OTHER_IE_TLS */
#define LEGACY_TLS (1664 - ((NNS_DEFAULT - 1) * IE_TLS + NNS_DEFAULT * IE_TLS + OPTIONAL_STATIC_TLS_DEFAULT))

static size_t tls_surplus(uint64_t nns, uint64_t opt)
{
	return (size_t)((nns - 1) * IE_TLS + nns * IE_TLS + MIN(opt, (uint64_t)SIZE_MAX / 4) + LEGACY_TLS);
}

/* elf/dl-misc.c _dl_strtoul: blanks, a sign, 0x hex, 0 octal. */
static uint64_t dl_strtoul(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	bool neg = false;
	if (*s == '-') {
		neg = true;
		s++;
	} else if (*s == '+') {
		s++;
	}
	if (*s < '0' || *s > '9')
		return 0;
	unsigned base = 10, max_digit = 9;
	if (*s == '0') {
		if (s[1] == 'x' || s[1] == 'X') {
			base = 16;
			s += 2;
		} else {
			base = 8;
			max_digit = 7;
		}
	}
	uint64_t r = 0;
	for (;; s++) {
		unsigned dig;
		if (*s >= '0' && *s <= (char)('0' + max_digit))
			dig = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			dig = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			dig = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (r >= (UINT64_MAX - dig) / base)
			return UINT64_MAX;
		r = r * base + dig;
	}
	return neg ? (uint64_t)0 - r : r;
}

/* A numeric tunable within its bounds (do_tunable_update_val ignores the
 * setting otherwise). */
static bool num_in(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t n = dl_strtoul(v);
	if (n < min || n > max)
		return false;
	*out = n;
	return true;
}

void tunables_parse(struct arena *a, const char *value, struct glibc_tunables *t)
{
	memset(t, 0, sizeof *t);
	t->raw = value;
	if (!value)
		return;
	const char *p = value;
	while (*p) {
		size_t nlen = strcspn(p, "=:");
		if (p[nlen] == '\0')
			break;		/* a name without a value ends the parse */
		if (p[nlen] == ':') {
			p += nlen + 1;
			continue;
		}
		char *name = arena_strndup(a, p, nlen);
		p += nlen + 1;
		size_t vlen = strcspn(p, ":");
		char *v = arena_strndup(a, p, vlen);
		p += vlen;
		if (*p == ':')
			p++;
		if (str_eq(name, "glibc.cpu.hwcaps"))
			t->hwcaps = v;
		else if (str_eq(name, "glibc.cpu.hwcap_mask"))
			t->has_hwcap_mask |= num_in(v, 0, UINT64_MAX, &t->hwcap_mask);
		else if (str_eq(name, "glibc.rtld.optional_static_tls"))
			t->has_optional_static_tls |= num_in(v, 0, UINT64_MAX, &t->optional_static_tls);
		else if (str_eq(name, "glibc.rtld.nns"))
			t->has_nns |= num_in(v, 1, 16, &t->nns);
		else
			ptrvec_push(a, &t->other, arena_printf(a, "%s=%s", name, v));
	}
}

size_t tunables_optional_static_tls(const struct glibc_tunables *t)
{
	if (!t || !t->raw || !t->has_optional_static_tls)
		return OPTIONAL_STATIC_TLS_DEFAULT;
	return (size_t)MIN(t->optional_static_tls, (uint64_t)SIZE_MAX / 4);
}

size_t tunables_apply(struct arena *a, const struct glibc_tunables *t, struct ldso_facts *f,
		      bool facts_preset)
{
	if (!t || !t->raw)
		return tls_surplus(NNS_DEFAULT, OPTIONAL_STATIC_TLS_DEFAULT);
	size_t tls = tls_surplus(t->has_nns ? t->nns : NNS_DEFAULT,
				 t->has_optional_static_tls ? t->optional_static_tls : OPTIONAL_STATIC_TLS_DEFAULT);
	struct ptrvec *n = &f->notes;
	bool cpu = t->hwcaps || t->has_hwcap_mask;
	if (cpu && facts_preset) {
		ptrvec_push(a, n, arena_printf(a, "GLIBC_TUNABLES: glibc.cpu settings not applied: the "
						  "loader facts come from a snapshot of another host"));
	} else if (cpu) {
		uint32_t off = t->hwcaps ? cpu_x86_hwcaps_off(t->hwcaps) : 0;
		uint64_t mask = t->has_hwcap_mask ? t->hwcap_mask : ldso_hwcap_mask_default(f->machine);
		ldso_cpu_facts(a, f, off, mask);
		const char *dirs = "";
		for (size_t i = 0; i < f->nhwcaps_active; i++)
			dirs = arena_printf(a, "%s%s%s", dirs, i ? ", " : "", f->hwcaps_active[i]);
		ptrvec_push(a, n, arena_printf(a, "GLIBC_TUNABLES: %s%s%s%s%s applied: glibc-hwcaps "
						  "subdirectories searched: %s; $PLATFORM %s",
					       t->hwcaps ? "glibc.cpu.hwcaps=" : "",
					       t->hwcaps ? t->hwcaps : "",
					       t->hwcaps && t->has_hwcap_mask ? ", " : "",
					       t->has_hwcap_mask ? "glibc.cpu.hwcap_mask=" : "",
					       t->has_hwcap_mask ? arena_printf(a, "0x%llx",
										(unsigned long long)t->hwcap_mask) : "",
					       dirs[0] ? dirs : "none", f->platform));
	}
	if (t->has_optional_static_tls || t->has_nns)
		ptrvec_push(a, n, arena_printf(a, "GLIBC_TUNABLES: %s%s%s%s%s%s applied: the static TLS "
						  "surplus initial-exec TLS of dlopen()ed objects may take is "
						  "%zu bytes (1664 by default)",
					       t->has_optional_static_tls ? "glibc.rtld.optional_static_tls=" : "",
					       t->has_optional_static_tls
						       ? arena_printf(a, "%llu", (unsigned long long)t->optional_static_tls) : "",
					       t->has_optional_static_tls && t->has_nns ? ", " : "",
					       t->has_nns ? "glibc.rtld.nns=" : "",
					       t->has_nns ? arena_printf(a, "%llu", (unsigned long long)t->nns) : "",
					       "", tls));
	for (size_t i = 0; i < t->other.n; i++)
		ptrvec_push(a, n, arena_printf(a, "GLIBC_TUNABLES: %s is not modelled",
					       (const char *)t->other.item[i]));
	return tls;
}
