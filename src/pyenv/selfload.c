#include "pyenv/selfload.h"

#include <limits.h>

struct reader {
	struct scan *s;
	const char *site;
	const char *package;
	struct pkg_init *out;
	struct ptrvec seen;	/* files read */
	size_t nloads_cap;
};

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static const char *rel(struct reader *r, const char *path)
{
	size_t n = strlen(r->site);
	return strncmp(path, r->site, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

static bool is_file(struct reader *r, const char *path)
{
	struct fs_stat st;
	fs_stat(&r->s->fs, path, &st);
	return st.kind == FS_REGULAR;
}

struct find_ctx {
	struct scan *s;
	const char *stem;	/* "libtorchaudio", "_C", "image" */
	bool any_so;		/* a library (".so" anywhere) rather than a module */
	const char *hit;
};

static bool find_entry(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct find_ctx *f = ctx;
	(void)kind;
	(void)is_link;
	size_t n = strlen(f->stem);
	if (!f->hit && strncmp(name, f->stem, n) == 0 && name[n] == '.' && strstr(name + n, ".so"))
		f->hit = arena_strdup(&f->s->arena, name);
	return true;
}

/* A file "<stem>.*so*" in dir, or NULL. */
static const char *so_in(struct reader *r, const char *dir, const char *stem)
{
	struct find_ctx f = { r->s, stem, true, NULL };
	if (!fs_list_dir(&r->s->fs, dir, find_entry, &f) || !f.hit)
		return NULL;
	return arena_printf(&r->s->arena, "%s/%s", dir, f.hit);
}

/* The library of the package a load call names: stem in the folder of the
 * calling file, the package folder, or its lib/ (torchaudio/lib). */
static const char *package_library(struct reader *r, const char *calling_dir, const char *stem)
{
	if (!*stem || strchr(stem, '/') || strchr(stem, ' ') || strlen(stem) > 128)
		return NULL;
	const char *pkgdir = arena_printf(&r->s->arena, "%s/%s", r->site, r->package);
	const char *dirs[] = { calling_dir, pkgdir, arena_printf(&r->s->arena, "%s/lib", pkgdir) };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		const char *hit = so_in(r, dirs[i], stem);
		if (hit)
			return hit;
	}
	return NULL;
}

/* The first string literal in [p, end), or NULL. */
static const char *first_literal(struct arena *a, const char *p, const char *end)
{
	for (; p < end; p++) {
		if (*p != '"' && *p != '\'')
			continue;
		if (p[-1] == 'f' || p[-1] == 'b' || p[-1] == 'r')
			return NULL;	/* a formatted or raw string: no plain name */
		const char *e = memchr(p + 1, *p, (size_t)(end - p - 1));
		return e ? arena_strndup(a, p + 1, (size_t)(e - p - 1)) : NULL;
	}
	return NULL;
}

static void add_load(struct reader *r, const char *path, const char *file, int line)
{
	struct pkg_init *o = r->out;
	for (size_t i = 0; i < o->nloads; i++)
		if (str_eq(o->loads[i].path, path))
			return;
	o->loads = arena_grow(&r->s->arena, o->loads, o->nloads, o->nloads + 1, sizeof *o->loads);
	o->loads[o->nloads].path = path;
	o->loads[o->nloads].file = file;
	o->loads[o->nloads].line = line;
	o->nloads++;
}

/* A load call on [ls, le): its library, from a literal in the call or on
 * the line above that assigns the name it is given. */
static void load_call(struct reader *r, const char *text, const char *ls, const char *le, const char *call,
		      const char *file, const char *dir, int line)
{
	const char *open = strchr(call, '(');
	if (!open || open > le)
		return;
	const char *lit = first_literal(&r->s->arena, open, le);
	if (!lit) {
		/* a name: "lib_path = _get_extension_path("_C")" a few lines above */
		const char *n0 = open + 1;
		while (*n0 == ' ')
			n0++;
		const char *n1 = n0;
		while (ident_char(*n1))
			n1++;
		size_t nl = (size_t)(n1 - n0);
		const char *p = ls;
		for (int back = 0; nl && back < 6 && p > text; back++) {
			const char *pe = p - 1;
			p = pe;
			while (p > text && p[-1] != '\n')
				p--;
			const char *q = p;
			while (q < pe && (*q == ' ' || *q == '\t'))
				q++;
			if ((size_t)(pe - q) > nl && strncmp(q, n0, nl) == 0 && !ident_char(q[nl])) {
				const char *eq = memchr(q + nl, '=', (size_t)(pe - q - nl));
				if (eq)
					lit = first_literal(&r->s->arena, eq, pe);
				break;
			}
		}
	}
	const char *path = lit ? package_library(r, dir, path_basename(lit)) : NULL;
	if (path) {
		add_load(r, path, file, line);
	} else if (!r->out->unnamed_file) {
		r->out->unnamed_file = file;
		r->out->unnamed_line = line;
	}
}

static void read_module(struct reader *r, const char *path, int depth);

/* "from . import a, b", "from .x import y", "from PKG.x import y",
 * "import PKG.x": the package's own modules the line imports. */
static void own_import(struct reader *r, const char *line, const char *le, const char *dir, const char *file,
		       int lineno, int depth)
{
	char mod[PATH_MAX];
	const char *names = NULL;
	size_t pl = strlen(r->package);
	const char *pkgdir = arena_printf(&r->s->arena, "%s/%s", r->site, r->package);
	const char *base = NULL;
	const char *p;
	if (str_starts(line, "from .")) {
		p = line + 5;
		int dots = 0;
		while (*p == '.')
			p++, dots++;
		base = dir;
		for (int i = 1; i < dots; i++) {
			char up[PATH_MAX];
			path_dirname(base, up, sizeof up);
			base = arena_strdup(&r->s->arena, up);
		}
	} else if ((str_starts(line, "from ") && strncmp(line + 5, r->package, pl) == 0 &&
		    (line[5 + pl] == '.' || line[5 + pl] == ' '))) {
		p = line + 5 + pl;
		if (*p == '.')
			p++;
		base = pkgdir;
	} else if (str_starts(line, "import ") && strncmp(line + 7, r->package, pl) == 0 && line[7 + pl] == '.') {
		p = line + 8 + pl;
		base = pkgdir;
	} else {
		return;
	}
	/* the dotted module after the base */
	const char *m0 = p, *m1 = p;
	while (m1 < le && (ident_char(*m1) || *m1 == '.'))
		m1++;
	snprintf(mod, sizeof mod, "%s/%.*s", base, (int)(m1 - m0), m0);
	for (char *c = mod + strlen(base) + 1; *c; c++)
		if (*c == '.')
			*c = '/';
	if (m1 == m0)
		mod[strlen(base)] = 0;
	const char *imp = strstr(m1, " import ");
	if (imp && imp < le) {
		names = imp + 8;
		/* "from . import (\n    a,\n    b,\n)": the names run to the ')' */
		const char *paren = memchr(names, '(', (size_t)(le - names));
		if (paren && !memchr(paren, ')', (size_t)(le - paren))) {
			const char *close = strchr(paren, ')');
			if (close && close - paren < 4096)
				le = close;
		}
	}
	/* the module itself, then (for "from X import a, b") each name in it */
	const char *targets[17];
	size_t nt = 0;
	if (m1 > m0)
		targets[nt++] = arena_strdup(&r->s->arena, mod);
	for (const char *n = names; n && n < le && nt < ARRAY_SIZE(targets);) {
		while (n < le && (*n == ' ' || *n == ',' || *n == '(' || *n == '\n' || *n == '\r' || *n == '#')) {
			if (*n == '#')
				while (n < le && *n != '\n')
					n++;
			else
				n++;
		}
		const char *e = n;
		while (e < le && ident_char(*e))
			e++;
		if (e == n)
			break;
		targets[nt++] = arena_printf(&r->s->arena, "%s/%.*s", mod, (int)(e - n), n);
		while (e < le && *e != ',' && *e != '\n')
			e++;
		n = e;
	}
	for (size_t i = 0; i < nt; i++) {
		const char *t = targets[i];
		char tdir[PATH_MAX];
		path_dirname(t, tdir, sizeof tdir);
		const char *ext = so_in(r, tdir, path_basename(t));
		if (ext && !strstr(path_basename(ext), ".py")) {
			if (r->out->torch == PKG_TORCH_NONE) {
				r->out->torch = PKG_OWN_FIRST;
				r->out->order_file = file;
				r->out->order_line = lineno;
			}
			continue;
		}
		const char *py = arena_printf(&r->s->arena, "%s.py", t);
		const char *init = arena_printf(&r->s->arena, "%s/__init__.py", t);
		if (is_file(r, py))
			read_module(r, py, depth + 1);
		else if (is_file(r, init))
			read_module(r, init, depth + 1);
	}
}

static bool is_torch_import(const char *q)
{
	if (str_starts(q, "import torch"))
		return q[12] == '\n' || q[12] == ' ' || q[12] == '.' || q[12] == ',' || q[12] == '\r' || !q[12];
	if (str_starts(q, "from torch"))
		return q[10] == ' ' || q[10] == '.';
	return false;
}

static void read_module(struct reader *r, const char *path, int depth)
{
	if (depth > 4 || r->seen.n >= SELFLOAD_MAX_FILES)
		return;
	for (size_t i = 0; i < r->seen.n; i++)
		if (str_eq(r->seen.item[i], path))
			return;
	ptrvec_push(&r->s->arena, &r->seen, (void *)path);
	char *text;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (fs_read_small(&r->s->fs, path, SELFLOAD_MAX_TEXT, &text, &len, &d) != ST_OK)
		return;
	char dir[PATH_MAX];
	path_dirname(path, dir, sizeof dir);
	const char *file = arena_strdup(&r->s->arena, rel(r, path));
	const char *adir = arena_strdup(&r->s->arena, dir);
	bool in_body = false;	/* inside a top-level def or class: not run by the import */
	int lineno = 0;
	for (const char *ls = text; ls && *ls;) {
		const char *le = strchr(ls, '\n');
		if (!le)
			le = ls + strlen(ls);
		lineno++;
		const char *q = ls;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		bool blank = q == le || *q == '#' || *q == '\r';
		if (!blank && q == ls)
			in_body = str_starts(q, "def ") || str_starts(q, "class ") || str_starts(q, "async def ") ||
				  *q == '@';
		if (!blank && !in_body) {
			if (is_torch_import(q))
				r->out->imports_torch = true;
			if (is_torch_import(q) && r->out->torch == PKG_TORCH_NONE) {
				r->out->torch = PKG_TORCH_FIRST;
				r->out->order_file = file;
				r->out->order_line = lineno;
			}
			own_import(r, q, le, adir, file, lineno, depth);
			static const char *const calls[] = { "load_library(", "_load_lib(", "CDLL(", "LoadLibrary(" };
			for (size_t k = 0; k < ARRAY_SIZE(calls); k++) {
				const char *c = strstr(q, calls[k]);
				if (c && c < le && !str_starts(q, "def ")) {
					load_call(r, text, ls, le, c, file, adir, lineno);
					break;
				}
			}
		}
		ls = *le ? le + 1 : NULL;
	}
	free(text);
}

void pkg_init_read(struct scan *s, const char *site, const char *package, struct pkg_init *out)
{
	memset(out, 0, sizeof *out);
	if (!site || !package)
		return;
	struct reader r = { s, site, package, out, { 0 }, 0 };
	read_module(&r, arena_printf(&s->arena, "%s/%s/__init__.py", site, package), 0);
}
