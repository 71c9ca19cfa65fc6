#include "pyenv/wheel.h"
#include "pyenv/wheelimg.h"

#include <errno.h>
#include <limits.h>
#include <zip.h>

#define TEXT_MAX (1u << 20)	/* WHEEL and METADATA are read up to this */

/* ---- the file name ---- */

static const char **split(struct arena *a, const char *s, char sep, size_t *n)
{
	size_t cnt = 1;
	for (const char *p = s; *p; p++)
		cnt += *p == sep;
	const char **out = arena_calloc(a, cnt, sizeof *out);
	*n = 0;
	const char *start = s;
	for (const char *p = s;; p++) {
		if (*p == sep || !*p) {
			out[(*n)++] = arena_strndup(a, start, (size_t)(p - start));
			if (!*p)
				break;
			start = p + 1;
		}
	}
	return out;
}

enum status wheel_parse_filename(struct arena *a, const char *filename, struct wheel *w, struct diag *d)
{
	const char *base = path_basename(filename);
	size_t len = strlen(base);
	if (len < 5 || !str_eq(base + len - 4, ".whl"))
		return diag_set(d, ST_MALFORMED, filename, DIAG_NO_OFFSET, "not a wheel: the name does not end in .whl");
	char *stem = arena_strndup(a, base, len - 4);
	size_t np;
	const char **part = split(a, stem, '-', &np);
	if (np != 5 && np != 6)
		return diag_set(d, ST_MALFORMED, filename, DIAG_NO_OFFSET,
				"not a wheel name (name-version[-build]-python-abi-platform.whl)");
	for (size_t i = 0; i < np; i++)
		if (!part[i][0])
			return diag_set(d, ST_MALFORMED, filename, DIAG_NO_OFFSET, "an empty part in the wheel name");
	w->name = part[0];
	w->version = part[1];
	w->build = np == 6 ? part[2] : NULL;
	size_t npy, nabi, nplat;
	const char **py = split(a, part[np - 3], '.', &npy);
	const char **abi = split(a, part[np - 2], '.', &nabi);
	const char **plat = split(a, part[np - 1], '.', &nplat);
	if (npy * nabi * nplat > 4096)
		return diag_set(d, ST_LIMIT, filename, DIAG_NO_OFFSET, "too many tags in the wheel name");
	w->tag = arena_calloc(a, npy * nabi * nplat, sizeof *w->tag);
	w->ntag = 0;
	for (size_t i = 0; i < npy; i++)
		for (size_t j = 0; j < nabi; j++)
			for (size_t k = 0; k < nplat; k++) {
				struct wheel_tag *t = &w->tag[w->ntag++];
				t->python = py[i];
				t->abi = abi[j];
				t->platform = plat[k];
			}
	w->dist_info = arena_printf(a, "%s-%s.dist-info", w->name, w->version);
	w->data_dir = arena_printf(a, "%s-%s.data", w->name, w->version);
	return ST_OK;
}

/* ---- tags ---- */

static bool parse_cp(const char *s, const char *prefix, int *major, int *minor)
{
	size_t n = strlen(prefix);
	if (strncmp(s, prefix, n) != 0 || !s[n] || s[n] < '0' || s[n] > '9')
		return false;
	*major = s[n] - '0';
	*minor = -1;
	if (s[n + 1]) {
		char *end;
		long m = strtol(s + n + 1, &end, 10);
		if (*end || m < 0 || m > 999)
			return false;
		*minor = (int)m;
	}
	return true;
}

/* manylinux_X_Y_arch, the legacy aliases, linux_arch, any */
static bool platform_supported(struct arena *a, const char *p, const struct wheel_target *tg, const char **why)
{
	if (str_eq(p, "any"))
		return true;
	const char *arch = NULL;
	int gmaj = 0, gmin = 0;
	if (str_starts(p, "manylinux_")) {
		char archbuf[64];
		if (sscanf(p, "manylinux_%d_%d_%63s", &gmaj, &gmin, archbuf) != 3) {
			*why = arena_printf(a, "platform tag %s is not manylinux_X_Y_ARCH", p);
			return false;
		}
		arch = arena_strdup(a, archbuf);
	} else if (str_starts(p, "manylinux2014_")) {
		gmaj = 2, gmin = 17, arch = p + strlen("manylinux2014_");
	} else if (str_starts(p, "manylinux2010_")) {
		gmaj = 2, gmin = 12, arch = p + strlen("manylinux2010_");
	} else if (str_starts(p, "manylinux1_")) {
		gmaj = 2, gmin = 5, arch = p + strlen("manylinux1_");
	} else if (str_starts(p, "musllinux_")) {
		*why = arena_printf(a, "%s is built for musl libc; this environment's Python uses glibc", p);
		return false;
	} else if (str_starts(p, "linux_")) {
		arch = p + strlen("linux_");
	} else {
		*why = arena_printf(a, "platform tag %s is not for Linux", p);
		return false;
	}
	if (tg->arch && !str_eq(arch, tg->arch) && !(str_eq(tg->arch, "x86_64") && str_eq(arch, "amd64"))) {
		*why = arena_printf(a, "%s is built for %s; this Python is %s", p, arch, tg->arch);
		return false;
	}
	if (gmaj && tg->glibc_major &&
	    (gmaj > tg->glibc_major || (gmaj == tg->glibc_major && gmin > tg->glibc_minor))) {
		*why = arena_printf(a, "%s needs glibc %d.%d; this system has glibc %d.%d", p, gmaj, gmin,
				    tg->glibc_major, tg->glibc_minor);
		return false;
	}
	return true;
}

bool wheel_tag_supported(struct arena *a, const struct wheel_tag *t, const struct wheel_target *tg, const char **why)
{
	*why = NULL;
	int maj, min;
	/* the interpreter tag: py3, py311, cp311, cp3? */
	if (parse_cp(t->python, "cp", &maj, &min) || parse_cp(t->python, "py", &maj, &min)) {
		bool cp = str_starts(t->python, "cp");
		if (tg->py_major && maj != tg->py_major) {
			*why = arena_printf(a, "%s is for Python %d; this is Python %d.%d", t->python, maj, tg->py_major,
					    tg->py_minor);
			return false;
		}
		bool abi3 = str_eq(t->abi, "abi3");
		if (tg->py_major && min >= 0 && cp && !abi3 && min != tg->py_minor) {
			*why = arena_printf(a, "%s-%s is for CPython %d.%d; this is Python %d.%d", t->python, t->abi, maj,
					    min, tg->py_major, tg->py_minor);
			return false;
		}
		if (tg->py_major && min >= 0 && min > tg->py_minor) {
			*why = arena_printf(a, "%s needs Python >= %d.%d; this is Python %d.%d", t->python, maj, min,
					    tg->py_major, tg->py_minor);
			return false;
		}
	} else {
		*why = arena_printf(a, "interpreter tag %s is not CPython's", t->python);
		return false;
	}
	/* the ABI tag: none, abi3, cp311 (cp311d/m of old builds too) */
	if (!str_eq(t->abi, "none") && !str_eq(t->abi, "abi3")) {
		if (!parse_cp(t->abi, "cp", &maj, &min)) {
			/* cp311d, cp37m: the number then letters */
			int n = 0;
			if (sscanf(t->abi, "cp%d%n", &maj, &n) != 1) {
				*why = arena_printf(a, "ABI tag %s is not CPython's", t->abi);
				return false;
			}
			min = maj % 100;
			maj /= (maj >= 100 ? 100 : 10);
			if (maj >= 10)
				maj /= 10;
		}
		if (tg->py_major && (maj != tg->py_major || (min >= 0 && min != tg->py_minor))) {
			*why = arena_printf(a, "ABI tag %s is CPython %d.%d's; this is Python %d.%d", t->abi, maj, min,
					    tg->py_major, tg->py_minor);
			return false;
		}
	}
	return platform_supported(a, t->platform, tg, why);
}

/* ---- the archive ---- */

/* NAME_MAX of Linux file systems: pip's open() of a longer component
 * fails with ENAMETOOLONG */
#define MEMBER_NAME_MAX 255

/*
 * The member name as pip installs it, or NULL with *why.  pip joins the
 * name to the install folder and normalises it (os.path.join, normpath):
 * "a//b", "a/./b" and "a/x/../b" are "a/b", a backslash is a plain
 * character on Linux; a name that then lies outside the folder (absolute,
 * or ".." above it) is refused ("trying to install outside the target
 * directory"); a component over NAME_MAX or a name as long as PATH_MAX
 * makes its open() fail ("[Errno 36] File name too long").
 */
static char *member_install_name(struct arena *a, const char *n, const char **why)
{
	size_t nl = strlen(n);
	*why = NULL;
	if (n[0] == '/') {
		*why = "member name is absolute: pip refuses the wheel (\"trying to install outside the target "
		       "directory\")";
		return NULL;
	}
	if (nl >= PATH_MAX) {
		*why = arena_printf(a, "member name of %zu bytes, over PATH_MAX (%d): pip's install fails with "
				    "\"[Errno 36] File name too long\"", nl, PATH_MAX);
		return NULL;
	}
	char *out = arena_alloc(a, nl + 2), *o = out;
	for (const char *p = n; *p;) {
		size_t len = strcspn(p, "/");
		if (len > MEMBER_NAME_MAX) {
			*why = arena_printf(a, "member name with a component of %zu bytes, over NAME_MAX (%d): pip's "
					    "install fails with \"[Errno 36] File name too long\"", len, MEMBER_NAME_MAX);
			return NULL;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (o == out) {
				*why = "member name escapes the install folder (..): pip refuses the wheel (\"trying to "
				       "install outside the target directory\")";
				return NULL;
			}
			for (o--; o > out && o[-1] != '/'; o--)
				;	/* back over the last component kept */
		} else if (len && !(len == 1 && p[0] == '.')) {
			memcpy(o, p, len);
			o += len;
			*o++ = '/';
		}
		p += len;
		p += *p == '/';
	}
	/* a directory entry keeps its trailing slash */
	if (o > out && n[nl - 1] != '/')
		o--;
	*o = '\0';
	return out;
}

static const char *field_value(struct arena *a, const char *text, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le == p || *p == '\r')
			break;	/* headers end at the first empty line */
		if ((size_t)(le - p) > kl && strncasecmp(p, key, kl) == 0 && p[kl] == ':') {
			const char *v = p + kl + 1;
			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			const char *ve = le;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
				ve--;
			return arena_strndup(a, v, (size_t)(ve - v));
		}
		p = nl ? nl + 1 : end;
	}
	return NULL;
}

static ssize_t member_named(const struct wheel *w, const char *name)
{
	for (size_t i = 0; i < w->nm; i++)
		if (str_eq(w->m[i].name, name))
			return (ssize_t)i;
	return -1;
}

enum status wheel_kept_limit(const struct wheel *w, const char *member, struct diag *d)
{
	return diag_set(d, ST_LIMIT, w->path, DIAG_NO_OFFSET, "the members a verdict reads (%s among them) hold "
			"more than %llu bytes once inflated", member, (unsigned long long)WHEEL_MAX_KEPT);
}

/* What stream_member() keeps of a member's bytes beyond its head. */
enum keep { KEEP_HEAD, KEEP_ELF, KEEP_ALL };

/* Reads up to n bytes (fewer only at the member's end) into dst. */
static zip_int64_t read_up_to(zip_file_t *zf, uint8_t *dst, uint64_t n)
{
	uint64_t got = 0;
	while (got < n) {
		zip_int64_t r = zip_fread(zf, dst + got, n - got);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		got += (uint64_t)r;
	}
	return (zip_int64_t)got;
}

/*
 * Inflates member i once, to its end: reaching the end is what makes libzip
 * check the CRC, so a damaged member is an error here whatever is kept.
 * Its first bytes go to m->head; all of them are kept in the arena (m->data)
 * when keep says so (KEEP_ELF: when they start like an ELF file), else they
 * pass through buf and are dropped.  Bytes kept count against WHEEL_MAX_KEPT.
 */
static enum status stream_member(struct arena *a, struct wheel *w, size_t i, enum keep keep, uint8_t *buf,
				 size_t bufsz, struct diag *d)
{
	struct wheel_member *m = &w->m[i];
	const char *where = arena_printf(a, "%s(%s)", w->path, m->name);
	zip_file_t *zf = zip_fopen_index(w->zip, m->index, 0);
	if (!zf)
		return diag_set(d, ST_MALFORMED, where, DIAG_NO_OFFSET, "cannot read the member: %s",
				zip_strerror(w->zip));
	enum status st = ST_OK;
	uint8_t *dst = NULL;
	zip_int64_t r = read_up_to(zf, m->head, MIN((uint64_t)WHEEL_HEAD, m->size));
	uint64_t got = r > 0 ? (uint64_t)r : 0;
	if (r < 0) {
		st = diag_set(d, ST_MALFORMED, where, 0, "damaged member: %s", zip_file_strerror(zf));
		goto out;
	}
	m->head_len = (size_t)got;
	if (keep == KEEP_ALL || (keep == KEEP_ELF && elf_has_magic(m->head, m->head_len))) {
		if (m->size > WHEEL_MAX_KEPT - w->kept) {
			st = wheel_kept_limit(w, m->name, d);
			goto out;
		}
		dst = arena_alloc(a, (size_t)m->size + 1);
		memcpy(dst, m->head, m->head_len);
	}
	while (got < m->size) {
		uint64_t want = dst ? m->size - got : MIN((uint64_t)bufsz, m->size - got);
		r = read_up_to(zf, dst ? dst + got : buf, want);
		if (r < 0) {
			st = diag_set(d, ST_MALFORMED, where, got, "damaged member: %s", zip_file_strerror(zf));
			goto out;
		}
		got += (uint64_t)r;
		if ((uint64_t)r < want)
			break;
	}
	if (got != m->size) {
		st = diag_set(d, ST_MALFORMED, where, got, "member shorter than the %llu bytes its header declares",
			      (unsigned long long)m->size);
		goto out;
	}
	/* one more read: the end of the member, where the CRC is checked */
	uint8_t extra;
	r = zip_fread(zf, &extra, 1);
	if (r != 0) {
		st = diag_set(d, ST_MALFORMED, where, got, "member %s", r > 0 ? "longer than declared"
			      : zip_file_strerror(zf));
		goto out;
	}
	if (dst) {
		dst[got] = 0;
		m->data = dst;
		m->len = (size_t)got;
		w->kept += got;
	}
out:
	zip_fclose(zf);
	return st;
}

enum status wheel_read(struct arena *a, struct wheel *w, size_t i, const uint8_t **data, size_t *len,
		       struct diag *d)
{
	struct wheel_member *m = &w->m[i];
	if (!m->data) {
		uint8_t buf[1];
		enum status st = stream_member(a, w, i, KEEP_ALL, buf, sizeof buf, d);
		if (st != ST_OK)
			return st;
	}
	*data = m->data;
	*len = m->len;
	return ST_OK;
}

/* pip refuses a wheel with any damaged member: every one is inflated once,
 * here, and what a verdict reads of it (its head, an ELF member's bytes) kept */
static enum status stream_members(struct arena *a, struct wheel *w, struct diag *d)
{
	size_t bufsz = 1u << 18;
	uint8_t *buf = arena_alloc(a, bufsz);
	enum status st = ST_OK;
	for (size_t i = 0; i < w->nm && st == ST_OK; i++) {
		struct wheel_member *m = &w->m[i];
		if (m->is_dir)
			continue;
		if (m->size >= WHEELIMG_MIN) {
			bool applies;
			uint64_t filled;
			st = wheelimg_build(a, w, i, WHEEL_MAX_KEPT - w->kept, &applies, &filled, d);
			if (st != ST_OK)
				break;
			if (applies) {
				w->kept += filled;
				continue;
			}
		}
		st = stream_member(a, w, i, KEEP_ELF, buf, bufsz, d);
	}
	return st;
}

static bool read_text(struct arena *a, struct wheel *w, const char *name, const char **text, size_t *len,
		      struct diag *d, enum status *st)
{
	ssize_t i = member_named(w, name);
	if (i < 0)
		return false;
	if (w->m[i].size > TEXT_MAX) {
		*st = diag_set(d, ST_LIMIT, w->path, DIAG_NO_OFFSET, "%s is larger than %u bytes", name, TEXT_MAX);
		return false;
	}
	const uint8_t *data;
	*st = wheel_read(a, w, (size_t)i, &data, len, d);
	if (*st != ST_OK)
		return false;
	*text = (const char *)data;
	return true;
}

static enum status wheel_load(struct arena *a, const char *path, zip_t *z, uint64_t len, struct wheel *w,
			      struct diag *d);

enum status wheel_open(struct arena *a, const char *path, struct wheel *w, struct diag *d)
{
	memset(w, 0, sizeof *w);
	w->path = arena_strdup(a, path);
	enum status st = wheel_parse_filename(a, path, w, d);
	if (st != ST_OK)
		return st;
	zip_error_t ze;
	zip_error_init(&ze);
	/* a source of our own, for the file's size (the bytes members can lie in) */
	zip_source_t *src = zip_source_file_create(path, 0, -1, &ze);
	zip_stat_t ss;
	zip_stat_init(&ss);
	zip_t *z = NULL;
	if (src && (zip_source_stat(src, &ss) != 0 || !(ss.valid & ZIP_STAT_SIZE))) {
		zip_error_t *se = zip_source_error(src);
		zip_error_set(&ze, ZIP_ER_OPEN, zip_error_code_system(se));	/* it cannot be stat()ed: opened */
	} else if (src) {
		z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
	}
	if (!z) {
		int err = zip_error_code_zip(&ze);
		st = diag_set(d, err == ZIP_ER_NOENT || err == ZIP_ER_OPEN ? ST_IO : ST_MALFORMED, path, DIAG_NO_OFFSET,
			      "not a readable zip archive: %s", zip_error_strerror(&ze));
		if (src)
			zip_source_free(src);
		zip_error_fini(&ze);
		return st;
	}
	zip_error_fini(&ze);
	return wheel_load(a, path, z, ss.size, w, d);
}

enum status wheel_open_buffer(struct arena *a, const char *name, const uint8_t *data, size_t len,
			      struct wheel *w, struct diag *d)
{
	memset(w, 0, sizeof *w);
	w->path = arena_strdup(a, name);
	enum status st = wheel_parse_filename(a, name, w, d);
	if (st != ST_OK)
		return st;
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_buffer_create(data, len, 0, &ze);
	zip_t *z = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
	if (!z) {
		st = diag_set(d, ST_MALFORMED, name, DIAG_NO_OFFSET, "not a readable zip archive: %s",
			      zip_error_strerror(&ze));
		if (src)
			zip_source_free(src);
		zip_error_fini(&ze);
		return st;
	}
	zip_error_fini(&ze);
	return wheel_load(a, name, z, len, w, d);
}

static enum status wheel_load(struct arena *a, const char *path, zip_t *z, uint64_t file_len, struct wheel *w,
			      struct diag *d)
{
	enum status st;
	w->zip = z;
	zip_int64_t n = zip_get_num_entries(z, 0);
	if (n < 0 || n > WHEEL_MAX_MEMBERS)
		return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "%lld members (at most %d are read)", (long long)n,
				WHEEL_MAX_MEMBERS);
	w->m = arena_calloc(a, n ? (size_t)n : 1, sizeof *w->m);
	uint64_t total_csize = 0;
	struct strmap seen;
	memset(&seen, 0, sizeof seen);
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t zs;
		if (zip_stat_index(z, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME))
			return diag_set(d, ST_MALFORMED, path, DIAG_NO_OFFSET, "member %lld cannot be read: %s",
					(long long)i, zip_strerror(z));
		const char *why;
		const char *name = member_install_name(a, zs.name, &why);
		if (!name)
			return diag_set(d, ST_MALFORMED, arena_printf(a, "%s(%s)", path, zs.name), DIAG_NO_OFFSET,
					"%s", why);
		if (!*name)
			continue;	/* "./": the install folder itself */
		struct wheel_member *m = &w->m[w->nm];
		size_t nl = strlen(name);
		m->is_dir = nl && name[nl - 1] == '/';
		m->name = arena_strndup(a, name, m->is_dir ? nl - 1 : nl);
		m->size = zs.size;
		m->csize = zs.comp_size;
		m->index = (uint64_t)i;
		if (strmap_get(&seen, m->name))
			return diag_set(d, ST_MALFORMED, arena_printf(a, "%s(%s)", path, name), DIAG_NO_OFFSET,
					"the member appears twice");
		strmap_put(a, &seen, m->name, MAP_YES);
		if (m->size > WHEEL_MAX_MEMBER)
			return diag_set(d, ST_LIMIT, arena_printf(a, "%s(%s)", path, name), DIAG_NO_OFFSET,
					"member of %llu bytes (at most %llu)", (unsigned long long)m->size,
					(unsigned long long)WHEEL_MAX_MEMBER);
		if (m->size > WHEEL_RATIO_FLOOR && m->size / (m->csize ? m->csize : 1) > WHEEL_MAX_RATIO)
			return diag_set(d, ST_LIMIT, arena_printf(a, "%s(%s)", path, name), DIAG_NO_OFFSET,
					"compressed %llu:1 (a zip bomb?)",
					(unsigned long long)(m->size / (m->csize ? m->csize : 1)));
		w->total += m->size;
		total_csize += m->csize;
		if (w->total > WHEEL_MAX_TOTAL)
			return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET, "more than %llu bytes once unpacked",
					(unsigned long long)WHEEL_MAX_TOTAL);
		w->nm++;
	}
	/* members whose compressed bytes overlap (each counted, all one run of
	 * the file: 400 members of a 378 KB wheel unpacking to 25 GB) are no
	 * zip file (Python's zipfile: "Overlapped entries") */
	if (total_csize > file_len)
		return diag_set(d, ST_MALFORMED, path, DIAG_NO_OFFSET,
				"members overlap: their compressed sizes add up to %llu bytes in a %llu-byte file "
				"(a zip bomb?)", (unsigned long long)total_csize, (unsigned long long)file_len);
	/* many small members can be a bomb too (32 x 64 MiB of zeros in 2 MB) */
	if (w->total > WHEEL_RATIO_FLOOR && w->total / (total_csize ? total_csize : 1) > WHEEL_MAX_RATIO)
		return diag_set(d, ST_LIMIT, path, DIAG_NO_OFFSET,
				"members of %llu bytes in all, compressed %llu:1 (a zip bomb?)",
				(unsigned long long)w->total, (unsigned long long)(w->total / (total_csize ? total_csize : 1)));
	st = stream_members(a, w, d);
	if (st != ST_OK)
		return st;
	/* the .dist-info folder: by the name (pip normalises) or the only one */
	ssize_t wi = member_named(w, arena_printf(a, "%s/WHEEL", w->dist_info));
	if (wi < 0) {
		for (size_t i = 0; i < w->nm; i++) {
			const char *slash = strchr(w->m[i].name, '/');
			if (slash && str_eq(slash, "/WHEEL") && str_ends(arena_strndup(a, w->m[i].name,
				(size_t)(slash - w->m[i].name)), ".dist-info")) {
				w->dist_info = arena_strndup(a, w->m[i].name, (size_t)(slash - w->m[i].name));
				w->data_dir = arena_printf(a, "%.*s.data",
							   (int)(strlen(w->dist_info) - strlen(".dist-info")), w->dist_info);
				wi = (ssize_t)i;
				break;
			}
		}
	}
	if (wi < 0)
		return diag_set(d, ST_MALFORMED, path, DIAG_NO_OFFSET, "no %s/WHEEL: not a wheel", w->dist_info);
	const char *text;
	size_t len;
	st = ST_OK;
	if (read_text(a, w, arena_printf(a, "%s/WHEEL", w->dist_info), &text, &len, d, &st)) {
		const char *rip = field_value(a, text, len, "Root-Is-Purelib");
		w->root_is_purelib = rip && str_eq(rip, "true");
	}
	if (st != ST_OK)
		return st;
	if (read_text(a, w, arena_printf(a, "%s/METADATA", w->dist_info), &text, &len, d, &st)) {
		w->meta_name = field_value(a, text, len, "Name");
		w->meta_version = field_value(a, text, len, "Version");
	}
	return st;
}

void wheel_close(struct wheel *w)
{
	if (w->zip)
		zip_discard(w->zip);
	w->zip = NULL;
}

/* ---- installing into a vfs ---- */

struct member_ref {
	struct wheel *w;
	size_t i;
	struct arena *a;
};

static enum status load_member(void *ctx, struct vfs_node *n, struct diag *d)
{
	struct member_ref *r = ctx;
	const uint8_t *data;
	size_t len;
	enum status st = wheel_read(r->a, r->w, r->i, &data, &len, d);
	if (st != ST_OK)
		return st;
	n->data = data;
	n->len = len;
	return ST_OK;
}

/* Where pip puts a member (PEP 427 "spread"), or NULL to skip it. */
static const char *destination(struct arena *a, const struct wheel *w, const char *name, const char *site,
			       const char *prefix)
{
	size_t dl = strlen(w->data_dir);
	if (strncmp(name, w->data_dir, dl) == 0 && name[dl] == '/') {
		const char *rest = name + dl + 1;
		const char *slash = strchr(rest, '/');
		if (!slash)
			return NULL;
		size_t kl = (size_t)(slash - rest);
		const char *tail = slash + 1;
		if ((kl == 7 && !strncmp(rest, "purelib", 7)) || (kl == 7 && !strncmp(rest, "platlib", 7)))
			return arena_printf(a, "%s/%s", site, tail);
		if (kl == 7 && !strncmp(rest, "scripts", 7))
			return arena_printf(a, "%s/bin/%s", prefix, tail);
		if (kl == 7 && !strncmp(rest, "headers", 7))
			return arena_printf(a, "%s/include/%s", prefix, tail);
		if (kl == 4 && !strncmp(rest, "data", 4))
			return arena_printf(a, "%s/%s", prefix, tail);
		return NULL;
	}
	return arena_printf(a, "%s/%s", site, name);
}

enum status wheel_install_overlay(struct scan *s, struct wheel *w, const char *site, const char *prefix,
				  const struct dist *replaced, struct ptrvec *placed, struct diag *d)
{
	struct arena *a = &s->arena;
	if (!s->fs.vfs) {
		s->fs.vfs = arena_calloc(a, 1, sizeof *s->fs.vfs);
		vfs_init(s->fs.vfs, a, false);
	}
	struct vfs *v = s->fs.vfs;
	if (replaced) {
		char buf[DIST_PATH_MAX];
		for (size_t i = 0; i < replaced->nfile; i++)
			vfs_hide(v, dist_file_path(replaced, &replaced->file[i], buf, sizeof buf));
		if (replaced->meta)
			vfs_hide(v, replaced->meta);
	}
	for (size_t i = 0; i < w->nm; i++) {
		const struct wheel_member *m = &w->m[i];
		const char *dest = destination(a, w, m->name, site, prefix);
		if (!dest)
			continue;
		if (strlen(dest) >= PATH_MAX)
			return diag_set(d, ST_MALFORMED, arena_printf(a, "%s(%s)", w->path, m->name), DIAG_NO_OFFSET,
					"installed as %s, a path of %zu bytes, over PATH_MAX (%d): pip's install fails "
					"with \"[Errno 36] File name too long\"", dest, strlen(dest), PATH_MAX);
		char norm[PATH_MAX];
		path_normalize(dest, norm, sizeof norm);
		if (m->is_dir) {
			vfs_add_dir(v, norm);
			continue;
		}
		struct member_ref *r = arena_alloc(a, sizeof *r);
		r->w = w;
		r->i = i;
		r->a = a;
		struct vfs_node *n = vfs_add_lazy(v, norm, 0, load_member, r);
		n->size = m->size;
		n->head = m->head;
		n->head_len = m->head_len;
		n->sized = true;
		if (placed && (str_ends(norm, ".so") || strstr(path_basename(norm), ".so.")))
			ptrvec_push(a, placed, (void *)n->path);
	}
	return ST_OK;
}

/* ---- the glibc floor ---- */

static bool may_be_elf(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	size_t n = strlen(base);
	return !strchr(base, '.') || (n > 3 && str_eq(base + n - 3, ".so")) || strstr(base, ".so.");
}

static bool glibc_version(const char *v, int *major, int *minor)
{
	char tail;
	return str_starts(v, "GLIBC_") && sscanf(v + 6, "%d.%d%c", major, minor, &tail) == 2;
}

enum status wheel_glibc_floor(struct arena *a, struct wheel *w, struct glibc_floor *out, struct diag *d)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < w->nm; i++) {
		const struct wheel_member *m = &w->m[i];
		if (m->is_dir || m->size < 64 || !may_be_elf(m->name) || !elf_has_magic(m->head, m->head_len))
			continue;
		const uint8_t *data;
		size_t len;
		enum status st = wheel_read(a, w, i, &data, &len, d);
		if (st != ST_OK)
			return st;
		if (!elf_has_magic(data, len))
			continue;
		struct elf_file ef;
		struct diag ed;
		diag_clear(&ed);
		if (elf_parse(a, bytes_make(data, len, false), m->name, &ef, &ed) != ST_OK)
			continue;
		out->nelf++;
		for (size_t k = 0; k < ef.nverneed; k++)
			for (size_t j = 0; j < ef.verneed[k].naux; j++) {
				int major, minor;
				const char *v = ef.verneed[k].aux[j].name;
				if (!v || !glibc_version(v, &major, &minor))
					continue;
				if (major > out->major || (major == out->major && minor > out->minor)) {
					out->major = major;
					out->minor = minor;
					out->version = v;
					out->member = m->name;
				}
			}
	}
	return ST_OK;
}

bool wheel_tag_glibc(const char *platform, int *major, int *minor)
{
	char arch[64];
	if (sscanf(platform, "manylinux_%d_%d_%63s", major, minor, arch) == 3)
		return true;
	static const struct { const char *prefix; int major, minor; } legacy[] = {
		{ "manylinux2014_", 2, 17 }, { "manylinux2010_", 2, 12 }, { "manylinux1_", 2, 5 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(legacy); i++)
		if (str_starts(platform, legacy[i].prefix)) {
			*major = legacy[i].major;
			*minor = legacy[i].minor;
			return true;
		}
	return false;
}
