#include "pyenv/dist.h"

#include "core/sha256.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>

#define MAX_META_FILE (64u * 1024 * 1024)

const char *dist_normalize(struct arena *a, const char *name)
{
	size_t n = strlen(name);
	char *out = arena_alloc(a, n + 1);
	size_t o = 0;
	bool sep = false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c == '-' || c == '_' || c == '.') {
			sep = true;
			continue;
		}
		if (sep && o)
			out[o++] = '-';
		sep = false;
		out[o++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	out[o] = '\0';
	return out;
}

static void problem(struct arena *a, struct dist *d, const char *fmt, ...)
{
	if (d->problems.n >= 20)
		return;
	va_list ap;
	va_start(ap, fmt);
	ptrvec_push(a, &d->problems, arena_vprintf(a, fmt, ap));
	va_end(ap);
}

/* One CSV field, unquoted in place ("..." with "" for a quote; the text
 * only shrinks) or bare up to a comma; *pp moves past its comma. */
static const char *csv_field(char **pp, char *end, bool *ok)
{
	char *p = *pp;
	*ok = true;
	if (p < end && *p == '"') {
		char *out = ++p, *start = p;
		while (p < end) {
			if (*p == '"') {
				if (p + 1 < end && p[1] == '"') {
					*out++ = '"';
					p += 2;
					continue;
				}
				p++;
				break;
			}
			*out++ = *p++;
		}
		if (p < end && *p != ',')
			*ok = false;
		if (p < end && *p == ',')
			p++;
		*out = '\0';	/* out < p here, or p == end, which is the line's own end byte */
		*pp = p;
		return start;
	}
	char *start = p;
	char *comma = p < end ? memchr(p, ',', (size_t)(end - p)) : NULL;
	p = comma ? comma : end;
	if (p < end)
		*p++ = '\0';
	else
		*p = '\0';
	*pp = p;
	return start;
}

static size_t count_rows(const char *text, size_t len);

/* Room for every row of text. */
static void reserve_rows(struct arena *a, struct dist *d, const char *text, size_t len)
{
	d->file = arena_grow(a, d->file, d->nfile, d->nfile + count_rows(text, len), sizeof *d->file);
}

/* A path of names joined by single slashes, none "." or "..", no slash at
 * either end; sets *len.  Such a path normalises to itself. */
static bool path_is_plain(const char *p, size_t *len)
{
	const char *s = p, *nul = p + strlen(p);
	for (;;) {
		const char *c = s;
		s = memchr(c, '/', (size_t)(nul - c));
		if (!s)
			s = nul;
		size_t n = (size_t)(s - c);
		if (n == 0 || (c[0] == '.' && (n == 1 || (n == 2 && c[1] == '.'))))
			return false;
		if (!*s)
			break;
		s++;
	}
	*len = (size_t)(s - p);
	return true;
}

/* The length of d's site when rows relative to it can be taken as they
 * are (add_row), else 0. */
static size_t plain_site_len(const struct dist *d)
{
	size_t len;
	return d->site && d->site[0] == '/' && path_is_plain(d->site + 1, &len) ? len + 1 : 0;
}

/* Stores one row's path, relative to d->site where it lies under it: the
 * text itself when joining it to base and normalising changes nothing.
 * site_len: plain_site_len(d) when base is d's site, else 0. */
static struct dist_file *add_row(struct arena *a, const char *base, const char *path, struct dist *d,
				 size_t site_len)
{
	struct dist_file *f = &d->file[d->nfile++];
	f->hash = NULL;
	f->size = -1;
	size_t path_len;
	/* most rows: a plain path under a plain site, already what the
	 * normalising below makes of it (a torch RECORD has 18,000 of them) */
	if (site_len && base == d->site && path_is_plain(path, &path_len) && site_len + 1 + path_len < DIST_PATH_MAX) {
		f->rel = path;
		return f;
	}
	char joined[DIST_PATH_MAX], norm[DIST_PATH_MAX];
	if (path[0] == '/')
		str_join(joined, sizeof joined, path, "", "");
	else
		str_join(joined, sizeof joined, base, "/", path);
	path_normalize(joined, norm, sizeof norm);
	size_t sl = d->site ? strlen(d->site) : 0;
	if (!d->site || strncmp(norm, d->site, sl) != 0 || norm[sl] != '/' || !norm[sl + 1])
		f->rel = arena_strdup(a, norm);
	else if (base == d->site && path[0] != '/' && str_eq(norm + sl + 1, path))
		f->rel = path;
	else
		f->rel = arena_strdup(a, norm + sl + 1);
	return f;
}

void record_parse(struct arena *a, const char *base, const char *text, size_t len, struct dist *d)
{
	/* one copy, cut into fields in place: rows point into it */
	char *copy = arena_alloc(a, len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	record_parse_in_place(a, base, copy, len, d);
}

void record_parse_in_place(struct arena *a, const char *base, char *copy, size_t len, struct dist *d)
{
	reserve_rows(a, d, copy, len);
	size_t site_len = base == d->site ? plain_site_len(d) : 0;
	char *p = copy, *end = copy + len;
	size_t lineno = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *le = nl ? nl : end;
		lineno++;
		char *q = p;
		char *lend = le;
		bool has_nul = memchr(q, '\0', (size_t)(le - q)) != NULL;
		if (lend > q && lend[-1] == '\r')
			lend--;
		p = nl ? nl + 1 : end;
		if (q == lend)
			continue;
		bool ok1, ok2 = true, ok3 = true;
		const char *path = csv_field(&q, lend, &ok1);
		const char *hash = q < lend ? csv_field(&q, lend, &ok2) : "";
		const char *size = q < lend ? csv_field(&q, lend, &ok3) : "";
		if (!ok1 || !ok2 || !ok3 || !*path || has_nul) {
			problem(a, d, "RECORD line %zu is malformed", lineno);
			continue;
		}
		struct dist_file *f = add_row(a, base, path, d, site_len);
		f->hash = *hash ? hash : NULL;
		if (*size) {
			char *e;
			errno = 0;
			long long v = strtoll(size, &e, 10);
			if (*e == '\0' && v >= 0 && errno == ERANGE)
				problem(a, d, "RECORD line %zu: size \"%s\" is out of range (over 2^63 - 1 bytes)",
					lineno, size);
			else if (*e == '\0' && v >= 0 && e != size)
				f->size = v;
			else
				problem(a, d, "RECORD line %zu: size \"%s\" is not a number", lineno, size);
		}
	}
}

/* installed-files.txt: one path per line, relative to the egg-info folder. */
static void installed_files_parse(struct arena *a, const char *text, size_t len, struct dist *d)
{
	char *copy = arena_alloc(a, len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	reserve_rows(a, d, copy, len);
	for (char *line = copy; line < copy + len;) {
		char *nl = memchr(line, '\n', (size_t)(copy + len - line));
		char *next = nl ? nl + 1 : copy + len;
		if (nl)
			*nl = '\0';
		size_t n = strlen(line);	/* up to a NUL byte, as before */
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n)
			add_row(a, d->meta, line, d, 0);
		line = next;
	}
}

const char *dist_file_path(const struct dist *d, const struct dist_file *f, char *buf, size_t bufsz)
{
	if (f->rel[0] == '/' || !d->site)
		return f->rel;
	str_join(buf, bufsz, d->site, "/", f->rel);
	return buf;
}

void metadata_parse(struct arena *a, const char *text, size_t len, struct dist *d)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *lend = le;
		if (lend > p && lend[-1] == '\r')
			lend--;
		if (lend == p)
			break;	/* headers end at the first blank line */
		const char *colon = memchr(p, ':', (size_t)(lend - p));
		if (colon && p[0] != ' ' && p[0] != '\t') {
			const char *v = colon + 1;
			while (v < lend && (*v == ' ' || *v == '\t'))
				v++;
			size_t kl = (size_t)(colon - p);
			char *val = arena_strndup(a, v, (size_t)(lend - v));
			if (kl == 4 && strncasecmp(p, "Name", 4) == 0 && !d->name)
				d->name = val;
			else if (kl == 7 && strncasecmp(p, "Version", 7) == 0 && !d->version)
				d->version = val;
			else if (kl == 13 && strncasecmp(p, "Requires-Dist", 13) == 0)
				ptrvec_push(a, &d->requires, val);
		}
		p = nl ? nl + 1 : end;
	}
	d->has_metadata = d->name != NULL;
}

/* ---- loading ---- */

/* A site's resolved path, found once for all its metadata files; canon
 * NULL: each file's path is resolved whole. */
struct site_path {
	const char *dir, *canon;
};

/* The file's text, or NULL; *why (optional) says why a file that is there
 * could not be read (NULL when it is simply absent).  sp: the site the file
 * is below, or NULL. */
static char *slurp_why(struct scan *s, const struct site_path *sp, const char *path, size_t *len, const char **why)
{
	char *buf = NULL;
	struct diag d;
	diag_clear(&d);
	if (why)
		*why = NULL;
	/* a metadata file linked into /proc or /sys describes this process
	 * (/proc/self/environ), not the package */
	if (sp ? fs_on_pseudo_fs_below(&s->fs, sp->dir, sp->canon, path) : fs_on_pseudo_fs(&s->fs, path)) {
		if (why)
			*why = "it leads into /proc or /sys";
		return NULL;
	}
	if (fs_read_small(&s->fs, path, MAX_META_FILE, &buf, len, &d) != ST_OK) {
		if (why && !(d.status == ST_IO && d.sys_errno == ENOENT))
			*why = arena_strdup(&s->arena, d.msg);
		return NULL;
	}
	return buf;
}

static char *slurp(struct scan *s, const struct site_path *sp, const char *path, size_t *len)
{
	return slurp_why(s, sp, path, len, NULL);
}

static void name_from_dir(struct arena *a, const char *dirname, const char *suffix, struct dist *d)
{
	/* {name}-{version}.dist-info: the name has no '-' (PEP 427 escapes it). */
	size_t n = strlen(dirname) - strlen(suffix);
	const char *dash = memchr(dirname, '-', n);
	if (!d->name)
		d->name = arena_strndup(a, dirname, dash ? (size_t)(dash - dirname) : n);
	if (!d->version && dash)
		d->version = arena_strndup(a, dash + 1, n - (size_t)(dash + 1 - dirname));
}

static void add_dist(struct scan *s, struct distset *ds, struct dist *d)
{
	d->norm = dist_normalize(&s->arena, d->name ? d->name : "?");
	d->index = ds->all.n;
	ptrvec_push(&s->arena, &ds->all, d);
	(void)strmap_put_new(&s->arena, &ds->by_norm, d->norm, d);
}

/* Whether a file list of len bytes and rows rows still fits the scan's
 * caps; if not, d owns nothing and says why. */
static bool record_fits(struct scan *s, struct distset *ds, struct dist *d, const char *file, size_t len,
			size_t rows)
{
	if (len <= MAX_RECORD_TOTAL - ds->record_bytes && rows <= MAX_RECORD_ROWS - ds->record_rows) {
		ds->record_bytes += len;
		ds->record_rows += rows;
		return true;
	}
	if (len > MAX_RECORD_TOTAL - ds->record_bytes)
		d->record_error = arena_printf(&s->arena, "left unread: its %s (%zu bytes) would take the file lists "
					       "one scan keeps past %u MiB", file, len, MAX_RECORD_TOTAL >> 20);
	else
		d->record_error = arena_printf(&s->arena, "left unread: its %s (%zu rows) would take the file lists "
					       "one scan keeps past %u rows", file, rows, MAX_RECORD_ROWS);
	return false;
}

/* Rows of a newline-separated list: one per newline, and a last one. */
static size_t count_rows(const char *text, size_t len)
{
	size_t rows = 1;
	for (const char *p = text; (p = memchr(p, '\n', (size_t)(text + len - p))) != NULL; p++)
		rows++;
	return rows;
}

static void load_dist_info(struct scan *s, struct distset *ds, const struct site_path *sp, const char *name)
{
	const char *site = sp->dir;
	struct dist *d = arena_alloc(&s->arena, sizeof *d);
	bool egg = str_ends(name, ".egg-info");
	d->kind = egg ? DIST_EGG_INFO : DIST_INFO;
	d->site = site;
	d->meta = arena_printf(&s->arena, "%s/%s", site, name);
	size_t len;
	char *text = slurp(s, sp, arena_printf(&s->arena, "%s/%s", d->meta, egg ? "PKG-INFO" : "METADATA"), &len);
	if (text) {
		metadata_parse(&s->arena, text, len, d);
		free(text);
	}
	name_from_dir(&s->arena, name, egg ? ".egg-info" : ".dist-info", d);
	text = slurp(s, sp, arena_printf(&s->arena, "%s/INSTALLER", d->meta), &len);
	if (text) {
		size_t n = strcspn(text, "\r\n");
		d->installer = arena_strndup(&s->arena, text, n);
		free(text);
	}
	if (!egg) {
		const char *why;
		text = slurp_why(s, sp, arena_printf(&s->arena, "%s/RECORD", d->meta), &len, &why);
		d->record_error = why;
		if (text) {
			d->has_record = true;
			if (record_fits(s, ds, d, "RECORD", len, count_rows(text, len))) {
				/* kept as long as the scan, so no larger than its text (a
				 * file whose size reads 0 is read into a buffer of the most
				 * allowed) */
				char *fit = realloc(text, len + 1);
				text = fit ? fit : text;
				arena_adopt(&s->arena, text);	/* the rows point into it */
				record_parse_in_place(&s->arena, site, text, len, d);
			} else {
				free(text);
			}
		}
	} else {
		text = slurp(s, sp, arena_printf(&s->arena, "%s/installed-files.txt", d->meta), &len);
		if (text) {
			d->has_record = true;
			if (record_fits(s, ds, d, "installed-files.txt", len, count_rows(text, len)))
				installed_files_parse(&s->arena, text, len, d);
			free(text);
		}
	}
	add_dist(s, ds, d);
}

struct site_walk {
	struct scan *s;
	struct distset *ds;
	const char *site;
	struct ptrvec names;
};

static bool collect_meta(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct site_walk *w = ctx;
	(void)kind;
	(void)is_link;
	if (str_ends(name, ".dist-info") || str_ends(name, ".egg-info"))
		ptrvec_push(&w->s->arena, &w->names, arena_strdup(&w->s->arena, name));
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool collect_json(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct site_walk *w = ctx;
	(void)kind;
	(void)is_link;
	if (str_ends(name, ".json"))
		ptrvec_push(&w->s->arena, &w->names, arena_strdup(&w->s->arena, name));
	return true;
}

static void load_conda_meta(struct scan *s, struct distset *ds, const char *prefix)
{
	struct site_walk w = { s, ds, prefix, { 0 } };
	const char *dir = arena_printf(&s->arena, "%s/conda-meta", prefix);
	fs_list_dir(&s->fs, dir, collect_json, &w);
	sort_items(w.names.item, w.names.n, sizeof(void *), cmp_str);
	for (size_t i = 0; i < w.names.n; i++) {
		const char *path = arena_printf(&s->arena, "%s/%s", dir, (const char *)w.names.item[i]);
		size_t len;
		char *text = slurp(s, NULL, path, &len);
		if (!text)
			continue;
		json_error_t err;
		json_t *root = json_loadb(text, len, 0, &err);
		free(text);
		if (!root || !json_is_object(root)) {
			json_decref(root);
			continue;
		}
		struct dist *d = arena_alloc(&s->arena, sizeof *d);
		d->kind = DIST_CONDA;
		d->site = prefix;
		d->meta = path;
		d->installer = "conda";
		const char *n = json_string_value(json_object_get(root, "name"));
		const char *v = json_string_value(json_object_get(root, "version"));
		d->name = n ? arena_strdup(&s->arena, n) : NULL;
		d->version = v ? arena_strdup(&s->arena, v) : NULL;
		d->has_metadata = n != NULL;
		json_t *files = json_object_get(root, "files");
		size_t nf = json_is_array(files) ? json_array_size(files) : 0, listed = 0;
		for (size_t k = 0; k < nf; k++) {
			const char *rel = json_string_value(json_array_get(files, k));
			listed += rel ? strlen(rel) + 1 : 0;
		}
		if (json_is_array(files) && record_fits(s, ds, d, "file list", listed, nf)) {
			d->file = arena_calloc(&s->arena, nf ? nf : 1, sizeof *d->file);
			d->has_record = true;
			for (size_t k = 0; k < nf; k++) {
				const char *rel = json_string_value(json_array_get(files, k));
				if (rel)
					add_row(&s->arena, prefix, arena_strdup(&s->arena, rel), d, 0);
			}
		}
		json_decref(root);
		if (!d->name)
			name_from_dir(&s->arena, (const char *)w.names.item[i], ".json", d);
		add_dist(s, ds, d);
	}
}

/* The owner map of site, made on first use: sites in discovery order. */
static struct owner_site *owner_site(struct scan *s, struct distset *ds, const char *site)
{
	for (size_t i = 0; i < ds->owner_sites.n; i++) {
		struct owner_site *os = ds->owner_sites.item[i];
		if (str_eq(os->site, site))
			return os;
	}
	struct owner_site *os = arena_calloc(&s->arena, 1, sizeof *os);
	os->site = site;
	os->len = strlen(site);
	ptrvec_push(&s->arena, &ds->owner_sites, os);
	return os;
}

/* Every recorded file to its first owner; each map sized once. */
static void index_owners(struct scan *s, struct distset *ds)
{
	size_t outside = 0;
	for (size_t i = 0; i < ds->all.n; i++) {
		struct dist *d = ds->all.item[i];
		struct owner_site *os = owner_site(s, ds, d->site);
		for (size_t k = 0; k < d->nfile; k++)
			if (d->file[k].rel[0] == '/')
				outside++;
			else
				os->rows++;
	}
	for (size_t i = 0; i < ds->owner_sites.n; i++) {
		struct owner_site *os = ds->owner_sites.item[i];
		strmap_reserve(&s->arena, &os->files, os->rows);
	}
	strmap_reserve(&s->arena, &ds->owner_abs, outside);
	for (size_t i = 0; i < ds->all.n; i++) {
		struct dist *d = ds->all.item[i];
		struct owner_site *os = owner_site(s, ds, d->site);
		for (size_t k = 0; k < d->nfile; k++) {
			const char *rel = d->file[k].rel;
			struct strmap *m = rel[0] == '/' ? &ds->owner_abs : &os->files;
			(void)strmap_put_new(&s->arena, m, rel, d);	/* the first owner stays */
		}
	}
}

void dists_load(struct scan *s, const struct pyenv *e, struct distset *ds)
{
	memset(ds, 0, sizeof *ds);
	for (size_t i = 0; i < e->nsite; i++) {
		struct site_walk w = { s, ds, e->site[i], { 0 } };
		fs_list_dir(&s->fs, e->site[i], collect_meta, &w);
		/* directory order is arbitrary: sort so reports are stable */
		sort_items(w.names.item, w.names.n, sizeof(void *), cmp_str);
		char canon[PATH_MAX];
		int err = 0;
		struct site_path sp = { e->site[i], NULL };
		if (w.names.n && !fs_on_pseudo_fs(&s->fs, sp.dir) && fs_realpath(&s->fs, sp.dir, canon, sizeof canon, &err))
			sp.canon = canon;
		for (size_t k = 0; k < w.names.n; k++)
			load_dist_info(s, ds, &sp, w.names.item[k]);
	}
	if (e->kind == PYENV_CONDA)
		load_conda_meta(s, ds, e->root);
	index_owners(s, ds);
}

struct dist *dists_owner(const struct distset *ds, const char *path)
{
	/* a file can be under two sites (a conda prefix holds its site-packages)
	 * or recorded outside its own: the first distribution discovered wins */
	struct dist *best = strmap_get(&ds->owner_abs, path);
	for (size_t i = 0; i < ds->owner_sites.n; i++) {
		const struct owner_site *os = ds->owner_sites.item[i];
		if (strncmp(path, os->site, os->len) != 0 || path[os->len] != '/')
			continue;
		struct dist *d = strmap_get(&os->files, path + os->len + 1);
		if (d && (!best || d->index < best->index))
			best = d;
	}
	return best;
}

#define HASH_WINDOW ((size_t)8 << 20)

enum status file_sha256_record(struct scan *s, const char *path, char *out, size_t outsz,
			       struct diag *d)
{
	struct mapped_file mf;
	enum status st = fs_map(&s->fs, path, &mf, d);
	if (st != ST_OK)
		return st;
	/* a window at a time, its pages let go once hashed: the resident set
	 * stays a window, not the file (libtorch_cuda.so is 520 MB) */
	struct bytes all = bytes_make(mf.data, mf.len, false);
	struct sha256 c;
	sha256_init(&c);
	for (size_t off = 0; off < mf.len; off += HASH_WINDOW) {
		size_t n = MIN(HASH_WINDOW, mf.len - off);
		sha256_update(&c, bytes_at(&all, off, n), n);
		fs_forget(&mf, off, n);
	}
	uint8_t md[32];
	sha256_final(&c, md);
	fs_unmap(&mf);
	char enc[48];
	base64_encode(md, sizeof md, enc, true);
	snprintf(out, outsz, "sha256=%s", enc);
	return ST_OK;
}
