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

/* One CSV field: quoted ("..." with "" for a quote) or bare up to a comma. */
static const char *csv_field(struct arena *a, const char **pp, const char *end, bool *ok)
{
	const char *p = *pp;
	*ok = true;
	if (p < end && *p == '"') {
		p++;
		char *buf = arena_alloc(a, (size_t)(end - p) + 1);
		size_t o = 0;
		while (p < end) {
			if (*p == '"') {
				if (p + 1 < end && p[1] == '"') {
					buf[o++] = '"';
					p += 2;
					continue;
				}
				p++;
				break;
			}
			buf[o++] = *p++;
		}
		buf[o] = '\0';
		if (p < end && *p != ',')
			*ok = false;
		if (p < end && *p == ',')
			p++;
		*pp = p;
		return buf;
	}
	const char *start = p;
	while (p < end && *p != ',')
		p++;
	const char *f = arena_strndup(a, start, (size_t)(p - start));
	if (p < end)
		p++;
	*pp = p;
	return f;
}

void record_parse(struct arena *a, const char *base, const char *text, size_t len, struct dist *d)
{
	size_t cap = 0;
	const char *p = text, *end = text + len;
	size_t lineno = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		lineno++;
		const char *q = p;
		const char *lend = le;
		bool has_nul = memchr(q, '\0', (size_t)(le - q)) != NULL;
		if (lend > q && lend[-1] == '\r')
			lend--;
		p = nl ? nl + 1 : end;
		if (q == lend)
			continue;
		bool ok1, ok2 = true, ok3 = true;
		const char *path = csv_field(a, &q, lend, &ok1);
		const char *hash = q < lend ? csv_field(a, &q, lend, &ok2) : "";
		const char *size = q < lend ? csv_field(a, &q, lend, &ok3) : "";
		if (!ok1 || !ok2 || !ok3 || !*path || has_nul) {
			problem(a, d, "RECORD line %zu is malformed", lineno);
			continue;
		}
		char joined[PATH_MAX * 2], norm[PATH_MAX * 2];
		if (path[0] == '/')
			snprintf(joined, sizeof joined, "%s", path);
		else
			snprintf(joined, sizeof joined, "%s/%s", base, path);
		path_normalize(joined, norm, sizeof norm);
		if (d->nfile == cap) {
			cap = cap ? cap * 2 : 64;
			d->file = arena_grow(a, d->file, d->nfile, cap, sizeof *d->file);
		}
		struct dist_file *f = &d->file[d->nfile++];
		f->path = arena_strdup(a, norm);
		f->hash = *hash ? hash : NULL;
		f->size = -1;
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

/* The file's text, or NULL; *why (optional) says why a file that is there
 * could not be read (NULL when it is simply absent). */
static char *slurp_why(struct scan *s, const char *path, size_t *len, const char **why)
{
	char *buf = NULL;
	struct diag d;
	diag_clear(&d);
	if (why)
		*why = NULL;
	/* a metadata file linked into /proc or /sys describes this process
	 * (/proc/self/environ), not the package */
	if (fs_on_pseudo_fs(&s->fs, path)) {
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

static char *slurp(struct scan *s, const char *path, size_t *len)
{
	return slurp_why(s, path, len, NULL);
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
	ptrvec_push(&s->arena, &ds->all, d);
	if (!strmap_get(&ds->by_norm, d->norm))
		strmap_put(&s->arena, &ds->by_norm, d->norm, d);
	for (size_t i = 0; i < d->nfile; i++)
		if (!strmap_get(&ds->owner, d->file[i].path))
			strmap_put(&s->arena, &ds->owner, d->file[i].path, d);
}

static void load_dist_info(struct scan *s, struct distset *ds, const char *site, const char *name)
{
	struct dist *d = arena_alloc(&s->arena, sizeof *d);
	bool egg = str_ends(name, ".egg-info");
	d->kind = egg ? DIST_EGG_INFO : DIST_INFO;
	d->site = site;
	d->meta = arena_printf(&s->arena, "%s/%s", site, name);
	size_t len;
	char *text = slurp(s, arena_printf(&s->arena, "%s/%s", d->meta, egg ? "PKG-INFO" : "METADATA"), &len);
	if (text) {
		metadata_parse(&s->arena, text, len, d);
		free(text);
	}
	name_from_dir(&s->arena, name, egg ? ".egg-info" : ".dist-info", d);
	text = slurp(s, arena_printf(&s->arena, "%s/INSTALLER", d->meta), &len);
	if (text) {
		size_t n = strcspn(text, "\r\n");
		d->installer = arena_strndup(&s->arena, text, n);
		free(text);
	}
	if (!egg) {
		const char *why;
		text = slurp_why(s, arena_printf(&s->arena, "%s/RECORD", d->meta), &len, &why);
		if (text) {
			d->has_record = true;
			record_parse(&s->arena, site, text, len, d);
			free(text);
		}
		d->record_error = why;
	} else {
		/* installed-files.txt paths are relative to the egg-info folder */
		text = slurp(s, arena_printf(&s->arena, "%s/installed-files.txt", d->meta), &len);
		if (text) {
			d->has_record = true;
			char *copy = arena_strndup(&s->arena, text, len);
			free(text);
			for (char *line = copy; line && *line;) {
				char *nl = strchr(line, '\n');
				if (nl)
					*nl = '\0';
				if (*line) {
					const char *quoted = arena_printf(&s->arena, "\"%s\"", line);
					record_parse(&s->arena, d->meta, quoted, strlen(quoted), d);
				}
				line = nl ? nl + 1 : NULL;
			}
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
		char *text = slurp(s, path, &len);
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
		if (json_is_array(files)) {
			size_t nf = json_array_size(files);
			d->file = arena_calloc(&s->arena, nf ? nf : 1, sizeof *d->file);
			d->has_record = true;
			for (size_t k = 0; k < nf; k++) {
				const char *rel = json_string_value(json_array_get(files, k));
				if (!rel)
					continue;
				char norm[PATH_MAX * 2];
				char joined[PATH_MAX * 2];
				snprintf(joined, sizeof joined, "%s/%s", prefix, rel);
				path_normalize(joined, norm, sizeof norm);
				d->file[d->nfile].path = arena_strdup(&s->arena, norm);
				d->file[d->nfile].size = -1;
				d->nfile++;
			}
		}
		json_decref(root);
		if (!d->name)
			name_from_dir(&s->arena, (const char *)w.names.item[i], ".json", d);
		add_dist(s, ds, d);
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
		for (size_t k = 0; k < w.names.n; k++)
			load_dist_info(s, ds, e->site[i], w.names.item[k]);
	}
	if (e->kind == PYENV_CONDA)
		load_conda_meta(s, ds, e->root);
}

struct dist *dists_owner(const struct distset *ds, const char *path)
{
	return strmap_get(&ds->owner, path);
}

enum status file_sha256_record(struct scan *s, const char *path, char *out, size_t outsz,
			       struct diag *d)
{
	struct mapped_file mf;
	enum status st = fs_map(&s->fs, path, &mf, d);
	if (st != ST_OK)
		return st;
	uint8_t md[32];
	sha256(mf.len ? mf.data : (const uint8_t *)"", mf.len, md);
	fs_unmap(&mf);
	char enc[48];
	base64_encode(md, sizeof md, enc, true);
	snprintf(out, outsz, "sha256=%s", enc);
	return ST_OK;
}
