#include "loader/ldso.h"

#include <stdarg.h>

static void note(struct arena *a, struct ldso_facts *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ptrvec_push(a, &f->notes, arena_vprintf(a, fmt, ap));
	va_end(ap);
}

bool ldso_glibc_at_least(const struct ldso_facts *f, int maj, int min)
{
	return f->glibc_major > maj || (f->glibc_major == maj && f->glibc_minor >= min);
}

const char *ldso_default_interp(uint16_t machine, bool is64)
{
	switch (machine) {
	case EM_X86_64_: return is64 ? "/lib64/ld-linux-x86-64.so.2" : "/libx32/ld-linux-x32.so.2";
	case EM_386_: return "/lib/ld-linux.so.2";
	case EM_AARCH64_: return "/lib/ld-linux-aarch64.so.1";
	case EM_ARM_: return "/lib/ld-linux-armhf.so.3";
	case EM_PPC64_: return "/lib64/ld64.so.2";
	case EM_S390_: return "/lib/ld64.so.1";
	case EM_RISCV_: return "/lib/ld-linux-riscv64-lp64d.so.1";
	}
	return "/lib64/ld-linux-x86-64.so.2";
}

/* _DL_CACHE_DEFAULT_ID per architecture (sysdeps/.../dl-cache.h). */
static int32_t cache_flags_for(uint16_t machine, bool is64, bool *any_elf)
{
	*any_elf = false;
	switch (machine) {
	case EM_X86_64_: return is64 ? 0x303 : 0x803;
	case EM_AARCH64_: return 0x0a03;
	case EM_PPC64_: return 0x0503;
	case EM_S390_: return is64 ? 0x0403 : 3;
	case EM_RISCV_: return 0x1003;
	case EM_ARM_: return 0x0903;
	}
	*any_elf = true;
	return 3;
}

/* Decimal digits at *off (at most max of them); false when there are none
 * or more than max (no release has them: a crafted banner). */
static bool read_number(const struct bytes *b, uint64_t *off, int max, int *out)
{
	int v = 0, n = 0;
	uint8_t c;
	while (bytes_u8(b, *off, &c) && c >= '0' && c <= '9') {
		if (++n > max)
			return false;
		v = v * 10 + (c - '0');
		(*off)++;
	}
	*out = v;
	return n > 0;
}

/* The banner "... release version 2.36." gives the release. */
static void read_version(struct arena *a, const struct bytes *b, struct ldso_facts *f)
{
	static const char key[] = "release version ";
	int64_t at = bytes_find(b, 0, key, sizeof key - 1);
	if (at < 0)
		return;
	uint64_t off = (uint64_t)at + sizeof key - 1;
	int maj, min;
	uint8_t c;
	if (!read_number(b, &off, 2, &maj) || !bytes_u8(b, off, &c) || c != '.')
		return;
	off++;
	if (!read_number(b, &off, 3, &min) || maj < 2 || maj > 9)
		return;
	f->glibc_major = maj;
	f->glibc_minor = min;
	/* Keep the banner line for reports (at most 200 bytes either side). */
	uint64_t s = (uint64_t)at, e = off;
	while (s > 0 && (uint64_t)at - s < 200 && bytes_u8(b, s - 1, &c) && c != '\0' && c != '\n')
		s--;
	while (e - off < 200 && bytes_u8(b, e, &c) && c != '\0' && c != '\n')
		e++;
	f->glibc_banner = arena_strndup(a, (const char *)bytes_at(b, s, e - s), (size_t)(e - s));
}

static bool is_dir_string(const char *s, size_t len)
{
	if (len < 2 || s[0] != '/' || s[len - 1] != '/')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '/' || c == '_' || c == '-' || c == '.' || c == '+'))
			return false;
	}
	return true;
}

/* True when the bytes at off start with the len bytes of prefix. */
static bool starts_with(const struct bytes *b, uint64_t off, const char *prefix, size_t len)
{
	const uint8_t *p = bytes_at(b, off, len);
	return p && memcmp(p, prefix, len) == 0;
}

/*
 * SYSTEM_DIRS is one constant of NUL-separated directories, each with a
 * trailing slash, starting with the library directory: find the first run
 * of such strings that begins with /lib or /usr.  Every string is proven
 * NUL-terminated inside the file (bytes_cstr) before it is looked at.
 */
static bool read_system_dirs(struct arena *a, const struct bytes *b, struct ldso_facts *f)
{
	/* each string that starts with '/' right after a NUL, found by memmem */
	for (int64_t at = bytes_find(b, 0, "\0/", 2); at >= 0; at = bytes_find(b, (uint64_t)at + 1, "\0/", 2)) {
		uint64_t p = (uint64_t)at + 1;
		if (p + 2 >= b->len)
			break;
		if (!starts_with(b, p, "/lib", 4) && !starts_with(b, p, "/usr", 4))
			continue;
		const char *dirs[16];
		size_t n = 0;
		uint64_t q = p;
		const char *str;
		size_t len;
		while (n < ARRAY_SIZE(dirs) && bytes_cstr(b, q, &str, &len) && is_dir_string(str, len)) {
			dirs[n++] = str;
			q += len + 1;
		}
		if (n == 0)
			continue;
		f->system_dirs = arena_calloc(a, n, sizeof *f->system_dirs);
		for (size_t i = 0; i < n; i++)
			f->system_dirs[i] = arena_strdup(a, dirs[i]);
		f->nsystem_dirs = n;
		return true;
	}
	return false;
}

bool ldso_read_binary(struct arena *a, struct bytes b, struct ldso_facts *f)
{
	read_version(a, &b, f);
	return read_system_dirs(a, &b, f);
}

static void assume_system_dirs(struct arena *a, struct ldso_facts *f, struct objcache *oc)
{
	/* Debian-style multiarch when the triplet directory exists, else the
	 * upstream lib64 layout for 64-bit and lib for 32-bit. */
	const char *triplet = NULL;
	switch (f->machine) {
	case EM_X86_64_: triplet = "x86_64-linux-gnu"; break;
	case EM_AARCH64_: triplet = "aarch64-linux-gnu"; break;
	case EM_386_: triplet = "i386-linux-gnu"; break;
	}
	struct fs_stat st;
	char dir[256];
	if (triplet) {
		snprintf(dir, sizeof dir, "/lib/%s", triplet);
		fs_stat(oc->fs, dir, &st);
	}
	if (triplet && st.kind == FS_DIR) {
		f->nsystem_dirs = 4;
		f->system_dirs = arena_calloc(a, 4, sizeof(char *));
		f->system_dirs[0] = arena_printf(a, "/lib/%s/", triplet);
		f->system_dirs[1] = arena_printf(a, "/usr/lib/%s/", triplet);
		f->system_dirs[2] = "/lib/";
		f->system_dirs[3] = "/usr/lib/";
	} else if (f->is64 && f->machine != EM_AARCH64_) {
		f->nsystem_dirs = 2;
		f->system_dirs = arena_calloc(a, 2, sizeof(char *));
		f->system_dirs[0] = "/lib64/";
		f->system_dirs[1] = "/usr/lib64/";
	} else {
		f->nsystem_dirs = 2;
		f->system_dirs = arena_calloc(a, 2, sizeof(char *));
		f->system_dirs[0] = "/lib/";
		f->system_dirs[1] = "/usr/lib/";
	}
	note(a, f, "default directories assumed (%s%s), not read from the loader",
	     f->system_dirs[0], f->nsystem_dirs > 1 ? " ..." : "");
}

/* $LIB: upstream notdir(slibdir); Debian lib/<triplet>. */
static const char *dst_lib_from(struct arena *a, const char *first_dir)
{
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s", first_dir);
	size_t n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = '\0';
	const char *base = path_basename(tmp);
	if (strstr(base, "-linux-")) {
		/* multiarch: the component before the triplet plus the triplet */
		char parent[256];
		path_dirname(tmp, parent, sizeof parent);
		return arena_printf(a, "%s/%s", path_basename(parent), base);
	}
	return arena_strdup(a, base);
}

void ldso_facts_load(struct arena *a, struct objcache *oc, const char *interp, uint16_t machine,
		     bool is64, struct ldso_facts *f)
{
	memset(f, 0, sizeof *f);
	const struct ldso_facts *pre = oc->preset_facts;
	if (pre && pre->machine == machine && pre->is64 == is64) {
		*f = *pre;
		f->cache_query.ctx = f;
		if (!f->page_size) {	/* a snapshot that did not record it */
			struct machine_view mv;
			objcache_machine(oc, machine, &mv);
			f->page_size = mv.page_size;
		}
		return;
	}
	f->machine = machine;
	f->is64 = is64;
	f->interp = interp ? interp : ldso_default_interp(machine, is64);
	struct machine_view mv;
	objcache_machine(oc, machine, &mv);
	f->page_size = mv.page_size;
	f->hwcap = mv.hwcap;
	f->hwcap2 = mv.hwcap2;
	if (mv.page_size_assumed)
		note(a, f, "page size assumed to be %llu bytes (the machine's AT_PAGESZ is not known: --page-size)",
		     (unsigned long long)mv.page_size);
	if (mv.hwcap_assumed && machine == EM_AARCH64_)
		note(a, f, "AT_HWCAP assumed to have the atomics bit (LSE, every ARMv8.1 CPU: Neoverse, Grace)");
	struct diag d;
	diag_clear(&d);
	struct object *lo = objcache_get(oc, f->interp, &d);
	bool have_bytes = lo && lo->kind == OBJ_ELF && lo->map.len;
	bool have_hwcaps_string = false;
	if (have_bytes) {
		struct bytes b = bytes_make(lo->map.data, lo->map.len, false);
		f->interp_read = true;
		if (!ldso_read_binary(a, b, f))
			assume_system_dirs(a, f, oc);
		have_hwcaps_string = bytes_find(&b, 0, "x86-64-v2", 9) >= 0;
	} else {
		note(a, f, "loader %s could not be read (%s); its rules are assumed", f->interp,
		     d.msg[0] ? d.msg : "not an ELF file");
		assume_system_dirs(a, f, oc);
	}
	if (!f->glibc_major) {
		f->glibc_major = 2;
		f->glibc_minor = 36;
		note(a, f, "glibc release unknown; glibc 2.36 rules assumed");
	}
	f->dst_lib = dst_lib_from(a, f->system_dirs[0]);

	/* ld.so.cache */
	f->cache_path = "/etc/ld.so.cache";
	diag_clear(&f->cache_diag);
	struct object *co = objcache_get(oc, f->cache_path, &f->cache_diag);
	if (co && co->map.len) {
		struct bytes cb = bytes_make(co->map.data, co->map.len, false);
		f->has_cache = ldcache_parse(a, cb, f->cache_path, &f->cache, &f->cache_diag) == ST_OK;
	}
	f->x86_hwcaps_names = have_hwcaps_string || !have_bytes;
	f->cache_query.expected_flags = cache_flags_for(machine, is64, &f->cache_query.any_elf_flag);
	ldso_cpu_facts(a, f, 0, ldso_hwcap_mask_default(machine));
}
