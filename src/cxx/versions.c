#include "cxx/versions.h"

bool ver_parse(const char *name, struct ver_name *out)
{
	memset(out, 0, sizeof *out);
	const char *us = strrchr(name, '_');
	if (!us || us == name || (size_t)(us - name) >= sizeof out->family)
		return false;
	memcpy(out->family, name, (size_t)(us - name));
	const char *p = us + 1;
	while (*p) {
		if (*p < '0' || *p > '9' || out->nnum == VER_MAX_PARTS)
			return false;
		unsigned v = 0;
		while (*p >= '0' && *p <= '9') {
			if (v > 100000)
				return false;
			v = v * 10 + (unsigned)(*p - '0');
			p++;
		}
		out->num[out->nnum++] = v;
		if (*p == '.')
			p++;
		else if (*p)
			return false;
	}
	return out->nnum > 0;
}

bool ver_same_family(const char *a, const char *b)
{
	struct ver_name x, y;
	return ver_parse(a, &x) && ver_parse(b, &y) && str_eq(x.family, y.family);
}

int ver_compare(const char *a, const char *b)
{
	struct ver_name x, y;
	bool px = ver_parse(a, &x), py = ver_parse(b, &y);
	if (!px || !py)
		return px != py ? (px ? 1 : -1) : strcmp(a, b);
	int f = strcmp(x.family, y.family);
	if (f)
		return f;
	for (size_t i = 0; i < VER_MAX_PARTS; i++) {
		unsigned u = i < x.nnum ? x.num[i] : 0, v = i < y.nnum ? y.num[i] : 0;
		if (u != v)
			return u < v ? -1 : 1;
	}
	return 0;
}

/*
 * libstdc++'s version nodes and the GCC release that introduced each.
 * Source: the libstdc++ manual, "ABI Policy and Guidelines", section
 * "Symbol versioning on the libstdc++.so binary" (libstdc++-v3/doc/xml/
 * manual/abi.xml, read in gcc-mirror/gcc up to GCC 12.1, and the GCC 13.1,
 * 13.2 and 14.1 rows from the patch that documented them: gcc.gnu.org
 * libstdc++ list, "Update GCC 14.1 library versions in docs", 2024-04-11;
 * GCC commit 1defe743 confirms "GLIBCXX_3.4.32 was already used for the
 * GCC 13.2.0 release").  GCC 15.1 (GLIBCXX_3.4.34, CXXABI_1.3.16) was
 * documented in Nov 2025 (PR libstdc++/122743), but the text of that row
 * was not read here: it comes from secondary sources and is marked
 * uncertain.  The handbook (ml-abi.md, section 7 item 5) agrees on 11.1
 * to 14.1.  A release not listed has the labels of the one before.
 */
struct release_row {
	unsigned minor;		/* N of GLIBCXX_3.4.N / CXXABI_1.3.N */
	const char *gcc;
	bool certain;
};

static const struct release_row glibcxx_rows[] = {
	{ 0, "3.4.0", true }, { 1, "3.4.1", true }, { 2, "3.4.2", true }, { 3, "3.4.3", true },
	{ 4, "4.0.0", true }, { 5, "4.0.1", true }, { 6, "4.0.2", true }, { 7, "4.0.3", true },
	{ 8, "4.1.1", true }, { 9, "4.2.0", true }, { 10, "4.3.0", true }, { 11, "4.4.0", true },
	{ 12, "4.4.1", true }, { 13, "4.4.2", true }, { 14, "4.5.0", true }, { 15, "4.6.0", true },
	{ 16, "4.6.1", true }, { 17, "4.7.0", true }, { 18, "4.8.0", true }, { 19, "4.8.3", true },
	{ 20, "4.9.0", true }, { 21, "5.1.0", true }, { 22, "6.1.0", true }, { 23, "7.1.0", true },
	{ 24, "7.2.0", true }, { 25, "8.1.0", true }, { 26, "9.1.0", true }, { 27, "9.2.0", true },
	{ 28, "9.3.0", true }, { 29, "11.1.0", true }, { 30, "12.1.0", true }, { 31, "13.1.0", true },
	{ 32, "13.2.0", true }, { 33, "14.1.0", true }, { 34, "15.1.0", false },
};

static const struct release_row cxxabi_rows[] = {
	{ 0, "3.4.0", true }, { 1, "4.0.0", true }, { 2, "4.3.0", true }, { 3, "4.4.0", true },
	{ 4, "4.5.0", true }, { 5, "4.6.0", true }, { 6, "4.7.0", true }, { 7, "4.8.0", true },
	{ 8, "4.9.0", true }, { 9, "5.1.0", true }, { 10, "6.1.0", true }, { 11, "7.1.0", true },
	{ 12, "9.1.0", true }, { 13, "11.1.0", true }, { 14, "13.1.0", true }, { 15, "14.1.0", true },
	{ 16, "15.1.0", false },
};

static const char libstdcxx_source[] = "libstdc++ manual, ABI Policy and Guidelines";

/*
 * GLIBC_2.N nodes are named after the glibc release that added them, so
 * the release is certain.  The distributions are examples of what ships
 * that glibc, from the distributions' package versions (Debian 12's 2.36
 * checked on this machine; the others not checked here) and the manylinux
 * policies of PEP 599 / PEP 600.
 */
struct glibc_row {
	unsigned minor;
	const char *shipped_by;
};

static const struct glibc_row glibc_rows[] = {
	{ 5, "CentOS 5, manylinux1" },
	{ 12, "CentOS 6, manylinux2010" },
	{ 17, "CentOS/RHEL 7, manylinux2014" },
	{ 27, "Ubuntu 18.04" },
	{ 28, "RHEL 8, Debian 10, manylinux_2_28" },
	{ 31, "Ubuntu 20.04, Debian 11" },
	{ 34, "RHEL 9, manylinux_2_34" },
	{ 35, "Ubuntu 22.04" },
	{ 36, "Debian 12" },
	{ 39, "Ubuntu 24.04" },
	{ 41, "Debian 13" },
};

bool ver_release_of(const char *name, struct ver_release *out)
{
	memset(out, 0, sizeof *out);
	struct ver_name v;
	if (!ver_parse(name, &v))
		return false;
	const struct release_row *rows = NULL;
	size_t nrows = 0;
	unsigned minor = 0;
	if (str_eq(v.family, "GLIBCXX") && v.nnum >= 2 && v.num[0] == 3 && v.num[1] == 4 && v.nnum <= 3) {
		rows = glibcxx_rows;
		nrows = ARRAY_SIZE(glibcxx_rows);
		minor = v.nnum == 3 ? v.num[2] : 0;
	} else if (str_eq(v.family, "CXXABI") && v.nnum >= 2 && v.num[0] == 1 && v.num[1] == 3 &&
		   v.nnum <= 3) {
		rows = cxxabi_rows;
		nrows = ARRAY_SIZE(cxxabi_rows);
		minor = v.nnum == 3 ? v.num[2] : 0;
	}
	if (rows) {
		for (size_t i = 0; i < nrows; i++)
			if (rows[i].minor == minor) {
				/* "13.2.0" -> "GCC 13.2" */
				const char *g = rows[i].gcc;
				size_t n = strlen(g);
				if (n > 2 && str_ends(g, ".0") && strchr(g, '.') != g + n - 2)
					n -= 2;
				snprintf(out->release, sizeof out->release, "GCC %.*s", (int)n, g);
				out->certain = rows[i].certain;
				out->source = libstdcxx_source;
				return true;
			}
		return false;
	}
	if (str_eq(v.family, "GLIBC") && v.num[0] == 2 && v.nnum >= 2) {
		if (v.nnum == 2)
			snprintf(out->release, sizeof out->release, "glibc 2.%u", v.num[1]);
		else
			snprintf(out->release, sizeof out->release, "glibc 2.%u.%u", v.num[1], v.num[2]);
		out->certain = true;
		out->source = "the version node is named after the glibc release";
		for (size_t i = 0; i < ARRAY_SIZE(glibc_rows); i++)
			if (glibc_rows[i].minor == v.num[1] && v.nnum == 2)
				out->shipped_by = glibc_rows[i].shipped_by;
		return true;
	}
	if (str_eq(v.family, "GCC") && v.nnum >= 2) {
		snprintf(out->release, sizeof out->release, "GCC %u.%u", v.num[0], v.num[1]);
		out->certain = true;
		out->source = "libgcc_s version nodes are named after the GCC release";
		return true;
	}
	return false;
}

/* ---- what an object defines ---- */

static bool usable(const struct object *o)
{
	return o && o->kind == OBJ_ELF && o->elf_ok;
}

bool ver_defines(const struct object *o, const char *name)
{
	if (!usable(o))
		return false;
	for (size_t i = 0; i < o->elf.nverdef; i++)
		if (!(o->elf.verdef[i].flags & VER_FLG_BASE_) && str_eq(o->elf.verdef[i].name, name))
			return true;
	return false;
}

const char *ver_newest_like(const struct object *o, const char *like)
{
	if (!usable(o))
		return NULL;
	const char *best = NULL;
	for (size_t i = 0; i < o->elf.nverdef; i++) {
		const struct elf_verdef *v = &o->elf.verdef[i];
		if ((v->flags & VER_FLG_BASE_) || !ver_same_family(v->name, like))
			continue;
		if (!best || ver_compare(v->name, best) > 0)
			best = v->name;
	}
	return best;
}

size_t ver_defined(struct arena *a, const struct object *o, const char *prefer, const char ***out)
{
	*out = NULL;
	if (!usable(o) || !o->elf.nverdef)
		return 0;
	const char **v = arena_calloc(a, o->elf.nverdef, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < o->elf.nverdef; i++)
		if (!(o->elf.verdef[i].flags & VER_FLG_BASE_) && o->elf.verdef[i].name[0])
			v[n++] = o->elf.verdef[i].name;
	/* insertion sort: preferred family first, then by family, newest first */
	for (size_t i = 1; i < n; i++) {
		const char *x = v[i];
		size_t j = i;
		for (; j > 0; j--) {
			const char *y = v[j - 1];
			bool xp = prefer && ver_same_family(x, prefer), yp = prefer && ver_same_family(y, prefer);
			bool before;
			if (xp != yp) {
				before = xp;
			} else {
				struct ver_name p, q;
				bool okx = ver_parse(x, &p), oky = ver_parse(y, &q);
				if (okx && oky && str_eq(p.family, q.family))
					before = ver_compare(x, y) > 0;
				else
					before = strcmp(okx ? p.family : x, oky ? q.family : y) < 0;
			}
			if (!before)
				break;
			v[j] = y;
		}
		v[j] = x;
	}
	*out = v;
	return n;
}
