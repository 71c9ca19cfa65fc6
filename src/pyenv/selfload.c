#include "pyenv/selfload.h"

#include "core/hashmap.h"
#include "pyenv/distpreload.h"

#include <limits.h>

/* A compound statement the current line is inside: `if X:`, `def f():` */
enum block_kind { B_IF, B_ELIF, B_ELSE, B_EXCEPT, B_TRY, B_TRY_ELSE, B_BODY, B_OTHER };

struct block {
	int indent;
	enum block_kind kind;
	int truth;		/* 1 it runs, 0 it does not, -1 abiscope cannot decide */
	int chain;		/* if/elif/else: 1 a branch so far runs, 0 none does, -1 unknown */
	const char *text;	/* the header line, for a condition shown to the user */
	int line;
	const char *le;		/* the end of the header line in the file's text */
	/* a try: its except clause that catches an OSError, found once (the
	 * first load call inside asks; later ones reuse the answer) */
	bool catch_known;
	const char *catch_at;
	int catch_line;
};

#define MAX_BLOCKS 32
#define MAX_FLAGS 32
#define MAX_FUNCS 64

struct reader {
	struct scan *s;
	const char *site;
	const char *package;
	struct pkg_init *out;
	const struct distset *dists;	/* the installed distributions, or NULL */
	struct ptrvec seen;	/* files read */
	/* memories that keep the reading linear in the sources' size, however
	 * many lines call a load or a function: */
	struct strmap so_hits;	/* "DIR\nSTEM" -> its "<stem>.*so*" or MAP_NO */
	struct strmap lib_hits;	/* "DIR\nSTEM" -> package_library()'s answer or MAP_NO */
	struct strmap loaded;	/* the paths in out->loads */
	struct strmap fn_index;	/* a followed file's path -> its struct strmap of fn_load */
	int guarded;		/* reading a module its importer imports in a try or under a condition */
};

/* What one file's reading keeps: the blocks around the current line, and
 * the names assigned a condition abiscope decides at the top level
 * ("_IS_EXT_AVAILABLE = is_module_available(...)"). */
struct file_state {
	struct block block[MAX_BLOCKS];
	size_t nblock;
	struct block last;	/* the block closed last at the current indentation */
	const char *flag_name[MAX_FLAGS];
	int flag_truth[MAX_FLAGS];
	size_t nflags;
	/* the functions a module-level call may reach: defined at the top of
	 * this file, or imported from a module of the package (its file) */
	const char *fn_name[MAX_FUNCS];
	const char *fn_file[MAX_FUNCS];
	size_t nfn;
	int preload_list;	/* the file names a preload list (distpreload.h): 1, 0 not, -1 not asked */
};

/* The first needle in [p, e), or NULL: a search that stops at the end of
 * the line (strstr would run on to the end of the file, for every line). */
static const char *span_find(const char *p, const char *e, const char *needle)
{
	return e > p ? memmem(p, (size_t)(e - p), needle, strlen(needle)) : NULL;
}

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
	return fs_kind_of(&r->s->fs, path) == FS_REGULAR;
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

/* A memory of answers keyed by a folder and a name: the lookup itself
 * allocates nothing (one per line of a file must cost no memory). */
static bool memo_get(const struct strmap *m, const char *dir, const char *name, char *key, size_t keysz,
		     const char **answer)
{
	int n = snprintf(key, keysz, "%s\n%s", dir, name);
	void *v = n > 0 && (size_t)n < keysz ? strmap_get(m, key) : NULL;
	*answer = v == MAP_NO ? NULL : v;
	return v != NULL;
}

static void memo_put(struct reader *r, struct strmap *m, const char *key, const char *answer)
{
	strmap_put(&r->s->arena, m, arena_strdup(&r->s->arena, key), answer ? (void *)answer : MAP_NO);
}

/* A file "<stem>.*so*" in dir, or NULL; each folder is listed once per stem. */
static const char *so_in(struct reader *r, const char *dir, const char *stem)
{
	char key[PATH_MAX * 2];
	const char *hit;
	if (memo_get(&r->so_hits, dir, stem, key, sizeof key, &hit))
		return hit;
	struct find_ctx f = { r->s, stem, true, NULL };
	hit = NULL;
	if (fs_list_dir(&r->s->fs, dir, find_entry, &f) && f.hit)
		hit = arena_printf(&r->s->arena, "%s/%s", dir, f.hit);
	memo_put(r, &r->so_hits, key, hit);
	return hit;
}

/* The library of the package a load call names: stem in the folder of the
 * calling file, the package folder, or its lib/ (torchaudio/lib). */
static const char *find_package_library(struct reader *r, const char *calling_dir, const char *stem)
{
	const char *pkgdir = arena_printf(&r->s->arena, "%s/%s", r->site, r->package);
	const char *dirs[] = { calling_dir, pkgdir, arena_printf(&r->s->arena, "%s/lib", pkgdir) };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		const char *exact = arena_printf(&r->s->arena, "%s/%s", dirs[i], stem);
		if (strstr(stem, ".so") && is_file(r, exact))
			return exact;
		const char *hit = so_in(r, dirs[i], stem);
		if (hit)
			return hit;
	}
	return NULL;
}

/* The same, asked once per folder and stem. */
static const char *package_library(struct reader *r, const char *calling_dir, const char *stem)
{
	if (!*stem || strchr(stem, '/') || strchr(stem, ' ') || strlen(stem) > 128)
		return NULL;
	char key[PATH_MAX * 2];
	const char *hit;
	if (!memo_get(&r->lib_hits, calling_dir, stem, key, sizeof key, &hit)) {
		hit = find_package_library(r, calling_dir, stem);
		memo_put(r, &r->lib_hits, key, hit);
	}
	return hit;
}

/* The plain string literals in [p, end), up to max; false when one is
 * formatted (f"...": the name is computed, not written). */
static bool literals(struct arena *a, const char *p, const char *end, const char **out, size_t max, size_t *n)
{
	*n = 0;
	for (; p < end; p++) {
		if (*p != '"' && *p != '\'')
			continue;
		if (p[-1] == 'f' || p[-1] == 'F')
			return false;
		const char *e = memchr(p + 1, *p, (size_t)(end - p - 1));
		if (!e)
			return *n > 0;
		if (*n < max)
			out[(*n)++] = arena_strndup(a, p + 1, (size_t)(e - p - 1));
		p = e;
	}
	return true;
}

static size_t count_of(const char *p, const char *end, const char *what)
{
	size_t n = 0, wl = strlen(what);
	for (; p + wl <= end; p++)
		n += strncmp(p, what, wl) == 0;
	return n;
}

/* The library an expression [p, end) names: its literals joined as a path
 * from the calling file's folder when it starts from __file__
 * (os.path.join(os.path.dirname(__file__), "lib", "libx.so"),
 * Path(__file__).parent / "lib" / "libx.so"), else its last literal as a
 * file or stem of the package; NULL when it names none. */
static const char *named_library(struct reader *r, const char *p, const char *end, const char *dir)
{
	const char *lit[8];
	size_t n;
	if (!literals(&r->s->arena, p, end, lit, ARRAY_SIZE(lit), &n) || !n)
		return NULL;
	if (count_of(p, end, "__file__")) {
		size_t ups = count_of(p, end, ".parent");
		size_t dn = count_of(p, end, "dirname(");
		ups = ups > dn ? ups : dn;
		char path[PATH_MAX], norm[PATH_MAX];
		int k = snprintf(path, sizeof path, "%s", dir);
		for (size_t i = 1; i < ups && k > 0 && (size_t)k < sizeof path; i++)
			k += snprintf(path + k, sizeof path - (size_t)k, "/..");
		for (size_t i = 0; i < n && k > 0 && (size_t)k < sizeof path; i++)
			k += snprintf(path + k, sizeof path - (size_t)k, "/%s", lit[i]);
		if (k > 0 && (size_t)k < sizeof path) {
			path_normalize(path, norm, sizeof norm);
			if (strstr(path_basename(norm), ".so") && is_file(r, norm))
				return arena_strdup(&r->s->arena, norm);
		}
	}
	return package_library(r, dir, path_basename(lit[n - 1]));
}

static void add_load(struct reader *r, const struct self_load *sl)
{
	struct pkg_init *o = r->out;
	if (strmap_get(&r->loaded, sl->path))
		return;
	strmap_put(&r->s->arena, &r->loaded, sl->path, MAP_YES);
	o->loads = arena_grow(&r->s->arena, o->loads, o->nloads, o->nloads + 1, sizeof *o->loads);
	o->loads[o->nloads++] = *sl;
}

/* The ')' that closes the '(' at open, or the end of the line when there is
 * none within a few lines. */
static const char *call_end(const char *open, const char *le)
{
	int depth = 0;
	for (const char *p = open; *p && p - open < 2048; p++) {
		depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
		if (!depth)
			return p;
	}
	return le;
}

/* A load call on the line [ls, le): its library, from the literals in the
 * call or on the lines above that assign the name it is given. */
static void load_call(struct reader *r, const char *text, const char *ls, const char *le, const char *call,
		      const char *dir, struct self_load *sl)
{
	const char *open = call < le ? memchr(call, '(', (size_t)(le - call)) : NULL;
	if (!open)
		return;
	const char *close = call_end(open, le);
	sl->global |= count_of(open, close, "RTLD_GLOBAL") > 0;
	sl->path = named_library(r, open, close, dir);
	if (!sl->path) {
		/* a name: "lib_path = _get_extension_path("_C")" on one of the
		 * dozen lines above, given as is or through str(), os.fspath() */
		const char *n0 = open + 1, *n1;
		for (;;) {
			while (*n0 == ' ')
				n0++;
			n1 = n0;
			while (ident_char(*n1) || *n1 == '.')
				n1++;
			if (*n1 != '(' || n1 == n0)
				break;
			n0 = n1 + 1;
		}
		/* a module spec's file: "spec = finder.find_spec("_C")", then
		 * load_library(spec.origin) (xformers' _register_extensions) */
		if (n1 - n0 > 7 && strncmp(n1 - 7, ".origin", 7) == 0)
			n1 -= 7;
		if (memchr(n0, '.', (size_t)(n1 - n0)))
			n1 = n0;	/* an attribute, not a name assigned here */
		size_t nl = (size_t)(n1 - n0);
		const char *p = ls;
		for (int back = 0; nl && back < 12 && p > text; back++) {
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
					sl->path = named_library(r, eq, pe, dir);
				break;
			}
		}
	}
}

static void keep_load(struct reader *r, const struct self_load *sl)
{
	if (sl->path) {
		add_load(r, sl);
	} else if (!r->out->unnamed) {
		r->out->unnamed = arena_alloc(&r->s->arena, sizeof *r->out->unnamed);
		*r->out->unnamed = *sl;
	}
}

static void read_module(struct reader *r, const char *path, int depth);

static void note_function(struct reader *r, struct file_state *fs, const char *name, size_t n, const char *file)
{
	if (!n || n > 128)
		return;
	for (size_t i = 0; i < fs->nfn; i++)
		if (strlen(fs->fn_name[i]) == n && strncmp(fs->fn_name[i], name, n) == 0) {
			fs->fn_file[i] = file;	/* the later definition is the one called */
			return;
		}
	if (fs->nfn < MAX_FUNCS) {
		fs->fn_name[fs->nfn] = arena_strndup(&r->s->arena, name, n);
		fs->fn_file[fs->nfn++] = file;
	}
}

/* How many packages deep the folder dir is below the site folder (pkg: 1,
 * pkg/sub: 2); 0 when it is not below it. */
static int package_depth(struct reader *r, const char *dir)
{
	const char *rd = rel(r, dir);
	if (rd == dir || !*rd)
		return 0;
	int n = 1;
	for (const char *c = rd; *c; c++)
		n += *c == '/';
	return n;
}

/* Is path a file of the package being read (under site/package/)? */
static bool in_package(struct reader *r, const char *path)
{
	size_t sl = strlen(r->site), pl = strlen(r->package);
	return strncmp(path, r->site, sl) == 0 && path[sl] == '/' && strncmp(path + sl + 1, r->package, pl) == 0 &&
	       path[sl + 1 + pl] == '/' && !strstr(path + sl, "/../") && !strstr(path + sl, "/./");
}

/* "from . import a, b", "from .x import y", "from PKG.x import y",
 * "import PKG.x": the package's own modules the line imports. */
static void own_import(struct reader *r, struct file_state *fs, const char *line, const char *le, const char *dir,
		       const char *file, int lineno, int depth)
{
	char mod[PATH_MAX];
	const char *names = NULL;
	size_t pl = strlen(r->package);
	const char *base = NULL;
	const char *p;
	if (!str_starts(line, "from ") && !str_starts(line, "import "))
		return;	/* most lines: no path made for them */
	const char *pkgdir = arena_printf(&r->s->arena, "%s/%s", r->site, r->package);
	if (str_starts(line, "from .")) {
		p = line + 5;
		int dots = 0;
		while (*p == '.')
			p++, dots++;
		/* each dot past the first goes up one package, never above the
		 * top-level one: Python raises "attempted relative import beyond
		 * top-level package" (a file of pkg/sub/ may use two dots) */
		if (dots > package_depth(r, dir))
			return;
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
	const char *imp = span_find(m1, le, " import ");
	if (imp) {
		names = imp + 8;
		/* "from . import (\n    a,\n    b,\n)": the names run to the ')' */
		const char *paren = memchr(names, '(', (size_t)(le - names));
		if (paren && !memchr(paren, ')', (size_t)(le - paren))) {
			const char *close = memchr(paren, ')', strnlen(paren, 4096));
			if (close)
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
	/* "from .x import f": a call to f runs x.py's f */
	if (names && m1 > m0) {
		const char *mpy = arena_printf(&r->s->arena, "%s.py", mod);
		const char *minit = arena_printf(&r->s->arena, "%s/__init__.py", mod);
		const char *mfile = is_file(r, mpy) ? mpy : is_file(r, minit) ? minit : NULL;
		for (size_t i = m1 > m0; mfile && i < nt; i++)
			note_function(r, fs, path_basename(targets[i]), strlen(path_basename(targets[i])), mfile);
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

/* ---- conditions the import runs a block under ---- */

static const char *skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *trim_end(const char *p, const char *e)
{
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	return e;
}

/* The first " WORD " at parenthesis depth 0 in [p, e), or NULL. */
static const char *top_word(const char *p, const char *e, const char *word)
{
	size_t wl = strlen(word);
	int depth = 0;
	char quote = 0;
	for (const char *q = p; q + wl <= e; q++) {
		if (quote) {
			quote = *q == quote ? 0 : quote;
			continue;
		}
		if (*q == '"' || *q == '\'')
			quote = *q;
		depth += *q == '(' || *q == '[' ? 1 : *q == ')' || *q == ']' ? -1 : 0;
		if (!depth && *q == word[0] && strncmp(q, word, wl) == 0)
			return q;
	}
	return NULL;
}

/* Does the '(' at p close at e[-1] (the whole of [p, e) in parentheses)? */
static bool wraps(const char *p, const char *e)
{
	int depth = 0;
	for (const char *q = p; q < e; q++) {
		depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
		if (!depth)
			return q == e - 1;
	}
	return false;
}

static bool span_is(const char *p, const char *e, const char *lit)
{
	return (size_t)(e - p) == strlen(lit) && strncmp(p, lit, (size_t)(e - p)) == 0;
}

/* A module "PKG.a.b" of the package: does its file exist? -1 outside the package. */
static int module_exists(struct reader *r, const char *p, const char *e)
{
	size_t pl = strlen(r->package);
	if ((size_t)(e - p) <= pl || strncmp(p, r->package, pl) != 0 || p[pl] != '.' || e - p > 200)
		return -1;
	char mod[PATH_MAX];
	int n = snprintf(mod, sizeof mod, "%s/%.*s", r->site, (int)(e - p), p);
	if (n < 0 || (size_t)n >= sizeof mod)
		return -1;
	for (char *c = mod + strlen(r->site) + 1; *c; c++)
		if (*c == '.')
			*c = '/';
	char dir[PATH_MAX];
	path_dirname(mod, dir, sizeof dir);
	if (is_file(r, arena_printf(&r->s->arena, "%s.py", mod)) ||
	    is_file(r, arena_printf(&r->s->arena, "%s/__init__.py", mod)))
		return 1;
	const char *so = so_in(r, dir, path_basename(mod));
	return so ? 1 : 0;
}

/* The string literal that is the only argument of the call "NAME(" at p, as [*a, *b). */
static bool call_literal(const char *p, const char *e, const char *name, const char **a, const char **b)
{
	size_t nl = strlen(name);
	if ((size_t)(e - p) < nl + 3 || strncmp(p, name, nl) != 0 || (p[nl] != '"' && p[nl] != '\''))
		return false;
	const char *close = memchr(p + nl + 1, p[nl], (size_t)(e - p - nl - 1));
	if (!close || close + 1 >= e || close[1] != ')')
		return false;
	*a = p + nl + 1;
	*b = close;
	return close + 2 == e;
}

/* How deep a condition may nest (brackets, `not`, `and` in `or`) before
 * abiscope stops deciding it: each level reads the text once more, so the
 * cap keeps a crafted line of a million brackets linear (and the stack
 * small); real conditions nest two or three deep. */
#define TRUTH_MAX_DEPTH 16

static int truth_at(struct reader *r, const struct file_state *fs, const char *p, const char *e, int depth);

/* "A or B or C" (is_or) or "A and B and C": each operand once, split in
 * one pass; -2 when [p, e) holds no such operator at its top level. */
static int truth_chain(struct reader *r, const struct file_state *fs, const char *p, const char *e, bool is_or,
		       int depth)
{
	const char *op = is_or ? " or " : " and ";
	size_t ol = strlen(op);
	const char *w = top_word(p, e, op);
	if (!w)
		return -2;
	int unknown = 0, hit = 0;	/* hit: an operand that decides it (true for or, false for and) */
	for (const char *part = p;;) {
		int x = truth_at(r, fs, part, w ? w : e, depth + 1);
		hit |= x == (is_or ? 1 : 0);
		unknown |= x < 0;
		if (!w)
			break;
		part = w + ol;
		w = top_word(part, e, op);
	}
	return hit ? (is_or ? 1 : 0) : unknown ? -1 : (is_or ? 0 : 1);
}

/* Whether the Python expression [p, e) holds here (this is Linux, the files
 * are these): 1, 0, or -1 when abiscope cannot decide it. */
static int truth_of(struct reader *r, const struct file_state *fs, const char *p, const char *e)
{
	return truth_at(r, fs, p, e, 0);
}

static int truth_at(struct reader *r, const struct file_state *fs, const char *p, const char *e, int depth)
{
	if (depth > TRUTH_MAX_DEPTH)
		return -1;
	p = skip_ws(p, e);
	e = trim_end(p, e);
	if (e - p >= 2 && *p == '(' && e[-1] == ')' && wraps(p, e))
		return truth_at(r, fs, p + 1, e - 1, depth + 1);
	int x = truth_chain(r, fs, p, e, true, depth);
	if (x == -2)
		x = truth_chain(r, fs, p, e, false, depth);
	if (x != -2)
		return x;
	if (e - p > 4 && strncmp(p, "not ", 4) == 0) {
		x = truth_at(r, fs, p + 4, e, depth + 1);
		return x < 0 ? -1 : !x;
	}
	const char *la, *lb;
	static const char *const avail[] = { "is_module_available(", "importlib.util.find_spec(",
					     "util.find_spec(", "find_spec(" };
	for (size_t i = 0; i < ARRAY_SIZE(avail); i++) {
		size_t al = strlen(avail[i]);
		if ((size_t)(e - p) <= al || strncmp(p, avail[i], al) != 0)
			continue;
		const char *close = memchr(p + al, ')', (size_t)(e - p - al));
		if (!close)
			return -1;
		const char *rest = skip_ws(close + 1, e);
		bool ok = call_literal(p, close + 1, avail[i], &la, &lb);
		int there = ok ? module_exists(r, la, lb) : -1;
		if (there < 0)
			return -1;
		if (rest == e)
			return there;
		if (span_is(rest, e, "is not None"))
			return there;
		if (span_is(rest, e, "is None"))
			return !there;
		return -1;
	}
	/* the platform: Linux */
	static const struct { const char *expr; int truth; } plat[] = {
		{ "os.name == \"nt\"", 0 }, { "os.name == 'nt'", 0 }, { "os.name != \"nt\"", 1 },
		{ "os.name != 'nt'", 1 }, { "os.name == \"posix\"", 1 }, { "os.name == 'posix'", 1 },
		{ "sys.platform == \"win32\"", 0 }, { "sys.platform == 'win32'", 0 },
		{ "sys.platform != \"win32\"", 1 }, { "sys.platform != 'win32'", 1 },
		{ "sys.platform == \"darwin\"", 0 }, { "sys.platform == 'darwin'", 0 },
		{ "sys.platform == \"linux\"", 1 }, { "sys.platform == 'linux'", 1 },
		{ "sys.platform.startswith(\"win\")", 0 }, { "sys.platform.startswith('win')", 0 },
		{ "sys.platform.startswith(\"darwin\")", 0 }, { "sys.platform.startswith('darwin')", 0 },
		{ "sys.platform.startswith(\"linux\")", 1 }, { "sys.platform.startswith('linux')", 1 },
		{ "platform.system() == \"Windows\"", 0 }, { "platform.system() == 'Windows'", 0 },
		{ "platform.system() == \"Darwin\"", 0 }, { "platform.system() == 'Darwin'", 0 },
		{ "platform.system() == \"Linux\"", 1 }, { "platform.system() == 'Linux'", 1 },
		{ "IS_WINDOWS", 0 }, { "_IS_WINDOWS", 0 },
		/* typing's flag is False when the code runs */
		{ "TYPE_CHECKING", 0 }, { "typing.TYPE_CHECKING", 0 }, { "t.TYPE_CHECKING", 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(plat); i++)
		if (span_is(p, e, plat[i].expr))
			return plat[i].truth;
	for (size_t i = 0; i < fs->nflags; i++)
		if (span_is(p, e, fs->flag_name[i]))
			return fs->flag_truth[i];
	return -1;
}

/* "NAME = EXPR" at [q, le): a top-level one abiscope decides is kept; any
 * other assignment of a kept name forgets it. */
static void note_assignment(struct reader *r, struct file_state *fs, const char *q, const char *le, bool top)
{
	const char *n1 = q;
	while (n1 < le && ident_char(*n1))
		n1++;
	const char *eq = skip_ws(n1, le);
	if (n1 == q || eq >= le || *eq != '=' || (eq + 1 < le && eq[1] == '='))
		return;
	int t = top ? truth_of(r, fs, eq + 1, le) : -1;
	const char *rhs = skip_ws(eq + 1, le);
	if (span_is(rhs, trim_end(rhs, le), "True") || span_is(rhs, trim_end(rhs, le), "False"))
		t = -1;	/* a default a later block may change */
	for (size_t i = 0; i < fs->nflags; i++)
		if (span_is(q, n1, fs->flag_name[i])) {
			fs->flag_truth[i] = t;
			return;
		}
	if (t >= 0 && fs->nflags < MAX_FLAGS) {
		fs->flag_name[fs->nflags] = arena_strndup(&r->s->arena, q, (size_t)(n1 - q));
		fs->flag_truth[fs->nflags++] = t;
	}
}

static bool keyword(const char *q, const char *le, const char *kw)
{
	size_t n = strlen(kw);
	return (size_t)(le - q) >= n && *q == kw[0] && strncmp(q, kw, n) == 0 &&
	       (q + n == le || q[n] == ' ' || q[n] == ':' || q[n] == '(');
}

/* The block a compound statement's header [q, le) opens, at indent. */
static void open_block(struct reader *r, struct file_state *fs, const char *q, const char *le, int indent,
		       int lineno)
{
	const char *end = trim_end(q, le);
	struct block b = { .indent = indent, .kind = B_OTHER, .truth = 1, .chain = 1, .line = lineno, .le = le };
	const struct block *prev = fs->last.indent == indent ? &fs->last : NULL;
	bool after_if = prev && (prev->kind == B_IF || prev->kind == B_ELIF);
	if (keyword(q, le, "def") || keyword(q, le, "class") || keyword(q, le, "async") || *q == '@') {
		b.kind = B_BODY;
		b.truth = 0;
	} else if (keyword(q, le, "if")) {
		b.kind = B_IF;
		b.truth = b.chain = truth_of(r, fs, q + 3, end - 1);
	} else if (keyword(q, le, "elif") && after_if) {
		b.kind = B_ELIF;
		int t = prev->chain == 1 ? 0 : truth_of(r, fs, q + 5, end - 1);
		b.truth = prev->chain == 1 ? 0 : prev->chain == 0 ? t : t == 0 ? 0 : -1;
		b.chain = prev->chain == 1 || t == 1 ? 1 : prev->chain == 0 && t == 0 ? 0 : -1;
	} else if (keyword(q, le, "else") && after_if) {
		b.kind = B_ELSE;
		b.truth = prev->chain == 1 ? 0 : prev->chain == 0 ? 1 : -1;
	} else if (keyword(q, le, "else") && prev && prev->kind == B_EXCEPT) {
		b.kind = B_TRY_ELSE;	/* runs only when the try's body raised nothing */
	} else if (keyword(q, le, "try")) {
		b.kind = B_TRY;	/* runs; what it raises may be caught */
	} else if (keyword(q, le, "except") || keyword(q, le, "case")) {
		b.kind = B_EXCEPT;
		b.truth = -1;
	}
	b.text = arena_strndup(&r->s->arena, q, (size_t)(end - q));
	b.le = le;
	if (fs->nblock < MAX_BLOCKS)
		fs->block[fs->nblock++] = b;
}

/* Closes the blocks a line at indent is outside of. */
static void close_blocks(struct file_state *fs, int indent)
{
	while (fs->nblock && fs->block[fs->nblock - 1].indent >= indent) {
		fs->last = fs->block[--fs->nblock];
		if (fs->last.indent > indent)
			fs->last.indent = -1;	/* a nested block: no sibling of this line */
	}
	if (fs->last.indent > indent)
		fs->last.indent = -1;
}

/* 0: the current line does not run; 1: it runs when the import does; -1:
 * it runs under a condition abiscope cannot decide (*cond: its block). */
static int line_runs(const struct file_state *fs, const struct block **cond)
{
	int t = 1;
	*cond = NULL;
	for (size_t i = 0; i < fs->nblock; i++) {
		if (fs->block[i].truth == 0)
			return 0;
		if (fs->block[i].truth < 0 && !*cond) {
			*cond = &fs->block[i];
			t = -1;
		}
	}
	return t;
}

static bool is_torch_import(const char *q)
{
	if (str_starts(q, "import torch"))
		return q[12] == '\n' || q[12] == ' ' || q[12] == '.' || q[12] == ',' || q[12] == '\r' || !q[12];
	if (str_starts(q, "from torch"))
		return q[10] == ' ' || q[10] == '.';
	return false;
}

/* What scan_line does at a byte: most bytes are none of these. */
enum { SC_OTHER, SC_COMMENT, SC_QUOTE, SC_OPEN, SC_CLOSE };
static const unsigned char scan_class[256] = {
	['#'] = SC_COMMENT, ['"'] = SC_QUOTE, ['\''] = SC_QUOTE, ['('] = SC_OPEN, ['['] = SC_OPEN,
	['{'] = SC_OPEN, [')'] = SC_CLOSE, [']'] = SC_CLOSE, ['}'] = SC_CLOSE,
};

/* How the brackets and triple-quoted strings stand after [p, e):
 * *depth open brackets, *triple the quote of an open triple-quoted string. */
static void scan_line(const char *p, const char *e, int *depth, char *triple)
{
	for (; p < e; p++) {
		if (*triple) {
			/* inside a triple-quoted string: to its next quote character */
			const char *q = memchr(p, *triple, (size_t)(e - p));
			if (!q)
				return;
			p = q;
			if (e - q >= 3 && q[1] == *triple && q[2] == *triple) {
				*triple = 0;
				p += 2;
			}
			continue;
		}
		switch (scan_class[(unsigned char)*p]) {
		case SC_OTHER:
			continue;
		case SC_COMMENT:
			return;
		case SC_QUOTE: {
			if (e - p >= 3 && p[1] == *p && p[2] == *p) {
				*triple = *p;
				p += 2;
				continue;
			}
			const char *c = memchr(p + 1, *p, (size_t)(e - p - 1));
			if (!c)
				return;
			p = c;
			continue;
		}
		case SC_OPEN:
			++*depth;
			continue;
		default:	/* SC_CLOSE: never below 0 */
			if (*depth > 0)
				--*depth;
			continue;
		}
	}
}

/* A compound statement's header: a keyword, and ':' ends the line, or its
 * brackets go on to the next lines ("def f(\n    x,\n) -> T:"). */
static bool is_header(const char *q, const char *le, bool brackets_open)
{
	static const char *const kw[] = { "if", "elif", "else", "try", "except", "finally", "with", "for",
					  "while", "def", "class", "async", "match", "case" };
	const char *hash = memchr(q, '#', (size_t)(le - q));
	const char *e = trim_end(q, hash ? hash : le);
	if (e == q || (e[-1] != ':' && !brackets_open))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(kw); i++)
		if (keyword(q, e, kw[i]))
			return true;
	return false;
}

/* ---- following a call into a function of the package ---- */

/* Does the except clause [q, le) catch the OSError a failed load raises? */
static bool catches_oserror(const char *q, const char *le)
{
	static const char *const names[] = { "OSError", "EnvironmentError", "IOError", "Exception", "BaseException" };
	const char *p = skip_ws(q + 6, le);
	if (p < le && *p == ':')
		return true;	/* a bare except */
	const char *end = p;
	while (end < le && *end != ':' && !(end + 4 <= le && strncmp(end, " as ", 4) == 0))
		end++;
	for (const char *t = p; t < end;) {
		if (!ident_char(*t)) {
			t++;
			continue;
		}
		const char *e = t, *last = t;
		while (e < end && (ident_char(*e) || *e == '.'))
			if (*e++ == '.')
				last = e;
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (span_is(last, e, names[i]))
				return true;
		t = e;
	}
	return false;
}

/* The except clause of the try whose header ends at hdr_le (at indent) that
 * catches an OSError, as the start of its text, *lines below the header;
 * NULL when none does. */
static const char *try_catches(const char *hdr_le, int indent, int *lines)
{
	int depth = 0;
	char triple = 0;
	*lines = 0;
	for (const char *ls = *hdr_le ? hdr_le + 1 : NULL; ls && *ls; ++*lines) {
		const char *le = strchr(ls, '\n');
		if (!le)
			le = ls + strlen(ls);
		bool continued = triple || depth > 0;
		scan_line(ls, le, &depth, &triple);
		const char *q = skip_ws(ls, le);
		if (!continued && q < le && *q != '#' && *q != '\r') {
			int ind = (int)(q - ls);
			if (ind < indent)
				return NULL;
			if (ind == indent) {
				if (keyword(q, le, "except")) {
					if (catches_oserror(q, trim_end(q, le))) {
						++*lines;
						return q;
					}
				} else if (!keyword(q, le, "else") && !keyword(q, le, "finally")) {
					return NULL;
				}
			}
		}
		ls = *le ? le + 1 : NULL;
	}
	return NULL;
}

static const char *line_end(const char *ls)
{
	const char *le = strchr(ls, '\n');
	return le ? le : ls + strlen(ls);
}

/* The loading call in [q, le) ("torch.ops.load_library(", "ctypes.CDLL("),
 * as the '(' and *callee, the dotted name before it; NULL when none. */
static const char *loading_call(struct arena *a, const char *ls, const char *q, const char *le, const char **callee)
{
	static const char *const calls[] = { "load_library(", "_load_lib(", "CDLL(", "LoadLibrary(" };
	for (size_t k = 0; k < ARRAY_SIZE(calls); k++) {
		const char *c = span_find(q, le, calls[k]);
		if (!c)
			continue;
		const char *open = c + strlen(calls[k]) - 1;
		const char *b = c;
		while (b > ls && (ident_char(b[-1]) || b[-1] == '.'))
			b--;
		*callee = arena_strndup(a, b, (size_t)(open - b));
		return open;
	}
	return NULL;
}

/* What the body of a top-level function does when called: its first
 * loading call, where it is, and the library it names by itself. */
struct fn_load {
	const char *callee;		/* "torch.ops.load_library" */
	int line;
	bool global;			/* RTLD_GLOBAL in the call, or in the lines that name it */
	const char *caught_by;		/* the except clause that catches its OSError, or NULL */
	int caught_line;
	const char *path;		/* the library the body's call names (its literals, or a
					 * name assigned above it), or NULL */
};

struct fn_scan {			/* the top-level function being read */
	const char *name;
	bool found;
	struct { int indent; const char *le; bool is_try; int line; } stack[MAX_BLOCKS];
	size_t nstack;
};

/* The first loading call of the body of fn, on the line [ls, le) at lineno. */
static struct fn_load *body_load(struct reader *r, struct fn_scan *fn, const char *text, const char *dir,
				 const char *ls, const char *le, int lineno)
{
	struct arena *a = &r->s->arena;
	const char *callee;
	const char *open = loading_call(a, ls, skip_ws(ls, le), le, &callee);
	if (!open)
		return NULL;
	struct fn_load *f = arena_calloc(a, 1, sizeof *f);
	f->callee = callee;
	f->line = lineno;
	f->global = count_of(open, call_end(open, le), "RTLD_GLOBAL") > 0;
	for (size_t i = fn->nstack; i-- > 0 && !f->caught_by;) {
		int below;
		const char *c = fn->stack[i].is_try ? try_catches(fn->stack[i].le, fn->stack[i].indent, &below) : NULL;
		if (c) {
			f->caught_by = arena_strndup(a, c, (size_t)(trim_end(c, line_end(c)) - c));
			f->caught_line = fn->stack[i].line + below;
		}
	}
	struct self_load sl;
	memset(&sl, 0, sizeof sl);
	load_call(r, text, ls, le, open - strlen(callee), dir, &sl);
	f->path = sl.path;
	f->global |= sl.global;
	return f;
}

/* Every top-level function of text (a file in dir) that loads a library:
 * name -> struct fn_load (MAP_NO: a function that loads none).  One pass
 * over the file, however many calls are followed into it; a later `def`
 * of the same name replaces the earlier, as in Python. */
static struct strmap *index_functions(struct reader *r, const char *text, const char *dir)
{
	struct strmap *fns = arena_calloc(&r->s->arena, 1, sizeof *fns);
	int depth = 0, lineno = 0;
	char triple = 0;
	struct fn_scan fn = { 0 };
	for (const char *ls = text; ls && *ls;) {
		const char *le = line_end(ls);
		lineno++;
		bool continued = triple || depth > 0;
		scan_line(ls, le, &depth, &triple);
		const char *q = skip_ws(ls, le);
		int ind = (int)(q - ls);
		if (!continued && q < le && *q != '#' && *q != '\r') {
			if (ind == 0) {
				const char *d = keyword(q, le, "async") ? skip_ws(q + 5, le) : q;
				fn.name = NULL;
				if (keyword(d, le, "def")) {
					const char *n0 = skip_ws(d + 3, le), *n1 = n0;
					while (n1 < le && ident_char(*n1))
						n1++;
					if (n1 > n0 && n1 < le && *n1 == '(' && n1 - n0 <= 128) {
						fn.name = arena_strndup(&r->s->arena, n0, (size_t)(n1 - n0));
						fn.found = false;
						fn.nstack = 0;
						strmap_put(&r->s->arena, fns, fn.name, MAP_NO);
					}
				}
			} else if (fn.name && !fn.found) {
				while (fn.nstack && fn.stack[fn.nstack - 1].indent >= ind)
					fn.nstack--;
				struct fn_load *f = body_load(r, &fn, text, dir, ls, le, lineno);
				if (f) {
					fn.found = true;
					strmap_put(&r->s->arena, fns, fn.name, f);
				} else if (is_header(q, le, false) && fn.nstack < MAX_BLOCKS) {
					fn.stack[fn.nstack].indent = ind;
					fn.stack[fn.nstack].le = le;
					fn.stack[fn.nstack].line = lineno;
					fn.stack[fn.nstack++].is_try = keyword(q, le, "try");
				}
			}
		}
		ls = *le ? le + 1 : NULL;
	}
	return fns;
}

/* Where one statement line is: its file, text and position in both. */
struct line_at {
	const char *text, *ls, *q, *le;
	const char *dir, *file;
	int lineno;
	const char *path;	/* the file's own path */
};

/* What calling the top-level function name of fpath (NULL: of the file at
 * is in) does: its struct fn_load, or NULL when it loads nothing.  Each
 * file is read and indexed once (r->fn_index). */
static const struct fn_load *function_of(struct reader *r, const char *fpath, const struct line_at *at,
					 const char *name)
{
	const char *key = fpath ? fpath : at->path;
	struct strmap *fns = strmap_get(&r->fn_index, key);
	if (!fns) {
		char *owned = NULL;
		size_t len;
		struct diag d;
		diag_clear(&d);
		char fdir[PATH_MAX];
		path_dirname(key, fdir, sizeof fdir);
		if (!fpath)
			fns = index_functions(r, at->text, fdir);
		else if (in_package(r, fpath) && fs_read_small(&r->s->fs, fpath, SELFLOAD_MAX_TEXT, &owned, &len, &d) == ST_OK)
			fns = index_functions(r, owned, fdir);
		else
			fns = arena_calloc(&r->s->arena, 1, sizeof *fns);	/* unreadable: loads nothing */
		free(owned);
		strmap_put(&r->s->arena, &r->fn_index, key, fns);
	}
	void *f = strmap_get(fns, name);
	return f && f != MAP_NO ? f : NULL;
}

/* A call on the line [q, le) into a function of the package whose body
 * loads a library: sl gets the loading call, where it is, whether a try in
 * the body catches its failure, and (when the call into the function does
 * not name it) the library the body names.  False when there is none. */
static bool follow_call(struct reader *r, struct file_state *fs, const struct line_at *at, const char *q,
			const char *le, struct self_load *sl)
{
	for (const char *p = q; p < le; p++) {
		if (*p != '(' || p == q || !ident_char(p[-1]))
			continue;
		const char *n = p;
		while (n > q && ident_char(n[-1]))
			n--;
		if (n > q && n[-1] == '.')
			continue;	/* an attribute's method: not a function of the package */
		for (size_t i = 0; i < fs->nfn; i++) {
			if (strlen(fs->fn_name[i]) != (size_t)(p - n) || strncmp(fs->fn_name[i], n, (size_t)(p - n)) != 0)
				continue;
			const struct fn_load *f = function_of(r, fs->fn_file[i], at, fs->fn_name[i]);
			if (!f)
				return false;
			const char *fpath = fs->fn_file[i];
			sl->call = f->callee;
			sl->call_file = fpath ? arena_strdup(&r->s->arena, rel(r, fpath)) : at->file;
			sl->call_line = f->line;
			sl->global |= f->global;
			if (f->caught_by) {
				sl->caught = true;
				sl->caught_by = f->caught_by;
				sl->caught_file = sl->call_file;
				sl->caught_line = f->caught_line;
			}
			/* the library the call into the function names, else the one the body names */
			sl->path = named_library(r, p, call_end(p, le), at->dir);
			if (!sl->path)
				sl->path = f->path;
			return true;
		}
	}
	return false;
}

/* A line the import runs that registers for an operator of the package by
 * name: `@torch.library.register_fake("PKG::op")`, impl_abstract,
 * register_autograd, register_kernel. */
static void op_use(struct reader *r, const struct line_at *at, const char *q, const char *le)
{
	static const char *const regs[] = { "register_fake(", "impl_abstract(", "register_autograd(",
					    "register_kernel(" };
	struct pkg_init *o = r->out;
	if (o->op_use)
		return;
	for (size_t k = 0; k < ARRAY_SIZE(regs); k++) {
		const char *c = span_find(q, le, regs[k]);
		if (!c)
			continue;
		const char *lit = c + strlen(regs[k]);
		size_t pl = strlen(r->package);
		if ((*lit != '"' && *lit != '\'') || strncmp(lit + 1, r->package, pl) != 0 || strncmp(lit + 1 + pl, "::", 2))
			return;
		const char *e = memchr(lit + 1, *lit, (size_t)(le - lit - 1));
		if (!e)
			return;
		o->op_use = arena_strndup(&r->s->arena, q, (size_t)(trim_end(q, le) - q));
		o->op_use_name = arena_strndup(&r->s->arena, lit + 1, (size_t)(e - lit - 1));
		o->op_use_file = at->file;
		o->op_use_line = at->lineno;
		o->op_use_after = o->nloads;
		return;
	}
}

/*
 * The absolute modules an import statement [q, le) names, each passed to
 * add: "import a.b as c, d" names a.b and d; "from a.b import c" names a.b
 * (c may be a module or a name in it); relative imports and __future__
 * name none.
 */
static void absolute_imports(const char *q, const char *le, void (*add)(void *, const char *, size_t), void *arg)
{
	const char *p;
	bool from = keyword(q, le, "from");
	if (from)
		p = skip_ws(q + 4, le);
	else if (keyword(q, le, "import"))
		p = skip_ws(q + 6, le);
	else
		return;
	for (;;) {
		const char *m = p;
		while (p < le && (ident_char(*p) || *p == '.'))
			p++;
		if (p == m || *m == '.' || !ident_char(*m) || (*m >= '0' && *m <= '9'))
			return;
		if (!(from && p - m == 10 && strncmp(m, "__future__", 10) == 0))
			add(arg, m, (size_t)(p - m));
		if (from)
			return;
		p = skip_ws(p, le);
		if (keyword(p, le, "as")) {
			p = skip_ws(p + 2, le);
			while (p < le && ident_char(*p))
				p++;
			p = skip_ws(p, le);
		}
		if (p >= le || *p != ',')
			return;
		p = skip_ws(p + 1, le);
	}
}

struct import_sink {
	struct arena *a;
	struct pkg_import *out;
	size_t n, max;
	const char *file;
	int line;
	const char *skip;	/* a top-level name not to record (the package itself), or NULL */
};

static void sink_add(void *arg, const char *m, size_t n)
{
	struct import_sink *k = arg;
	size_t top = 0;
	while (top < n && m[top] != '.')
		top++;
	if (k->n >= k->max || (k->skip && strlen(k->skip) == top && strncmp(k->skip, m, top) == 0))
		return;
	k->out[k->n++] = (struct pkg_import){ arena_strndup(k->a, m, n), k->file, k->line };
}

size_t py_module_imports(struct arena *a, const char *text, size_t len, const char *file, struct pkg_import *out,
			 size_t max)
{
	struct import_sink k = { a, out, 0, max, file, 0, NULL };
	int brackets = 0;
	char triple = 0;
	const char *end = text + len;
	for (const char *ls = text; ls < end && k.n < max;) {
		const char *le = memchr(ls, '\n', (size_t)(end - ls));
		if (!le)
			le = end;
		k.line++;
		bool continued = triple || brackets > 0;
		scan_line(ls, le, &brackets, &triple);
		if (!continued)
			absolute_imports(ls, le, sink_add, &k);
		ls = le + 1;
	}
	return k.n;
}

/* A call into a function of the package that loads, RTLD_GLOBAL, a path it
 * computes, in a file that reads a preload list and asks importlib.metadata
 * for a distribution's files (faiss's loader.py, distpreload.h): each file
 * of the list, in its order, is a load of the call (unnamed when not
 * found).  The loop's `if os.getenv("_FAISS_WHEEL_DISABLE_..."): continue`,
 * a switch for those who build faiss themselves, is taken as unset. */
static bool preload_list(struct reader *r, struct file_state *fs, const struct line_at *at,
			 const struct self_load *sl)
{
	if (fs->preload_list < 0)
		fs->preload_list = r->dists && strstr(at->text, DIST_PRELOAD_FILE) && strstr(at->text, "distribution(");
	if (!fs->preload_list)
		return false;
	struct dist_preload list[DIST_PRELOAD_MAX];
	size_t n;
	struct pkg_init *o = r->out;
	switch (dist_preloads(r->s, r->dists, at->dir, list, DIST_PRELOAD_MAX, &n)) {
	case DIST_PRELOAD_ABSENT:
		return true;	/* `if _CONFIG_PATH.exists()`: nothing is loaded */
	case DIST_PRELOAD_UNREADABLE:
		if (!o->list_problem) {
			o->list_problem = arena_alloc(&r->s->arena, sizeof *o->list_problem);
			*o->list_problem = *sl;
			o->list_why = arena_printf(&r->s->arena, "abiscope cannot read the list %s/%s (at most %u "
						   "entries of a package and a library name each, in %u bytes of JSON)",
						   rel(r, at->dir), DIST_PRELOAD_FILE, DIST_PRELOAD_MAX,
						   DIST_PRELOAD_TEXT);
		}
		return true;
	case DIST_PRELOAD_READ:
		break;
	}
	for (size_t i = 0; i < n; i++) {
		struct self_load e = *sl;
		e.path = list[i].path;
		e.list_dist = list[i].package;
		if (!e.path && e.caught)
			continue;	/* a try around the call: the loop goes on */
		if (!e.path) {
			/* the loader looks in the distribution's files and raises
			 * (PackageNotFoundError, FileNotFoundError) before any
			 * later entry: the import stops there */
			if (!o->list_problem) {
				o->list_problem = arena_alloc(&r->s->arena, sizeof *o->list_problem);
				*o->list_problem = e;
				o->list_certain = !e.condition;	/* under a condition: it may not run */
				o->list_why = list[i].installed
					? arena_printf(&r->s->arena, "%s/%s names %s of %s, whose RECORD lists no file of "
						       "that name", rel(r, at->dir), DIST_PRELOAD_FILE, list[i].library,
						       list[i].package)
					: arena_printf(&r->s->arena, "%s/%s names %s of %s, which is not installed",
						       rel(r, at->dir), DIST_PRELOAD_FILE, list[i].library, list[i].package);
			}
			break;
		}
		keep_load(r, &e);
	}
	return true;
}

/* One statement line the import runs (runs: 1, or -1 under cond). */
static void statement(struct reader *r, struct file_state *fs, const struct line_at *at, int depth, int runs,
		      const struct block *cond)
{
	const char *q = at->q, *le = at->le;
	note_assignment(r, fs, q, le, q == at->ls);
	if (is_torch_import(q)) {
		r->out->imports_torch = true;
		bool in_try = false;
		for (size_t i = 0; i < fs->nblock; i++)
			in_try |= fs->block[i].kind == B_TRY;
		if (!in_try && runs > 0 && !r->out->torch_import_fatal) {
			r->out->torch_import_fatal = true;
			r->out->torch_file = at->file;
			r->out->torch_line = at->lineno;
		} else if (!in_try && runs < 0 && !r->out->torch_import_fatal && !r->out->torch_cond) {
			r->out->torch_cond = cond->text;
			r->out->torch_file = at->file;
			r->out->torch_line = at->lineno;
		}
	}
	if (is_torch_import(q) && r->out->torch == PKG_TORCH_NONE) {
		r->out->torch = PKG_TORCH_FIRST;
		r->out->order_file = at->file;
		r->out->order_line = at->lineno;
	}
	bool in_try = false, after_try = false;
	for (size_t i = 0; i < fs->nblock; i++) {
		in_try |= fs->block[i].kind == B_TRY;
		after_try |= fs->block[i].kind == B_TRY_ELSE;
	}
	if (runs > 0 && !in_try && !after_try && !r->guarded) {
		if (!r->out->imports)
			r->out->imports = arena_calloc(&r->s->arena, PKG_MAX_IMPORTS, sizeof *r->out->imports);
		struct import_sink k = { &r->s->arena, r->out->imports, r->out->nimports, PKG_MAX_IMPORTS,
					 at->file, at->lineno, r->package };
		absolute_imports(q, le, sink_add, &k);
		r->out->nimports = k.n;
	}
	/* the package's own modules this line imports: what they import runs
	 * for sure only when this line does */
	int guard = runs < 0 || in_try || after_try;
	r->guarded += guard;
	own_import(r, fs, q, le, at->dir, at->file, at->lineno, depth);
	r->guarded -= guard;
	struct self_load sl;
	memset(&sl, 0, sizeof sl);
	sl.file = at->file;
	sl.line = at->lineno;
	if (runs < 0) {
		sl.condition = cond->text;
		sl.condition_line = cond->line;
	}
	if (runs > 0)
		op_use(r, at, q, le);
	const char *callee = NULL;
	const char *open = loading_call(&r->s->arena, at->ls, q, le, &callee);
	bool followed = follow_call(r, fs, at, q, le, &sl);
	if (open && !(followed && sl.path)) {
		const char *c = open;
		while (c > at->ls && (ident_char(c[-1]) || c[-1] == '.'))
			c--;
		load_call(r, at->text, at->ls, le, c, at->dir, &sl);
	}
	if (!followed)
		sl.call = callee;
	if (!open && !followed)
		return;
	/* a try of the module around the call */
	for (size_t i = fs->nblock; i-- > 0 && !sl.caught;) {
		struct block *b = &fs->block[i];
		if (b->kind != B_TRY)
			continue;
		if (!b->catch_known) {
			int below;
			b->catch_at = try_catches(b->le, b->indent, &below);
			b->catch_line = b->line + below;
			b->catch_known = true;
		}
		if (b->catch_at) {
			const char *c = b->catch_at;
			sl.caught = true;
			sl.caught_by = arena_strndup(&r->s->arena, c, (size_t)(trim_end(c, line_end(c)) - c));
			sl.caught_file = at->file;
			sl.caught_line = b->catch_line;
		}
	}
	if (followed && !sl.path && sl.global && preload_list(r, fs, at, &sl))
		return;
	/* Through a function, a library it computes is kept as an unnamed load
	 * when RTLD_GLOBAL: a preload meant to serve the loads after it
	 * (faiss's loader.py finds libcudart.so.12 in the RECORD of
	 * nvidia-cuda-runtime-cu12).  Not otherwise: torchcodec's loop over
	 * f"libtorchcodec_core{N}" loads its own operator libraries, whose
	 * failure there the verdict already tells. */
	if (open || sl.path || sl.global)
		keep_load(r, &sl);
}


static void read_module(struct reader *r, const char *path, int depth)
{
	/* the import of a package runs its own files only: nothing above or
	 * beside it is read (nor, so, recorded in a snapshot) */
	if (depth > 4 || r->seen.n >= SELFLOAD_MAX_FILES || !in_package(r, path))
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
	struct line_at at = { text, NULL, NULL, NULL, arena_strdup(&r->s->arena, dir),
			      arena_strdup(&r->s->arena, rel(r, path)), 0, path };
	/* the file's parse state lives as long as this call (a few KiB, on the
	 * stack: imports nest at most 5 deep), not in the scan's arena, whose
	 * pages a scan of 700 files would touch fresh for each */
	struct file_state state;
	memset(&state, 0, sizeof state);
	struct file_state *fs = &state;
	fs->last.indent = -1;
	fs->preload_list = -1;
	int brackets = 0;
	char triple = 0;
	for (const char *ls = text; ls && *ls;) {
		const char *le = strchr(ls, '\n');
		if (!le)
			le = ls + strlen(ls);
		at.lineno++;
		/* a line inside a string or brackets continues a statement */
		bool continued = triple || brackets > 0;
		scan_line(ls, le, &brackets, &triple);
		const char *q = skip_ws(ls, le);
		bool blank = q == le || *q == '#' || *q == '\r';
		if (!blank && !continued) {
			int indent = (int)(q - ls);
			close_blocks(fs, indent);
			const struct block *cond;
			int runs = line_runs(fs, &cond);
			if (is_header(q, le, brackets > 0)) {
				if (indent == 0 && (keyword(q, le, "def") || keyword(q, le, "async"))) {
					const char *df = keyword(q, le, "async") ? skip_ws(q + 5, le) : q;
					if (keyword(df, le, "def")) {
						const char *n0 = skip_ws(df + 3, le), *n1 = n0;
						while (n1 < le && ident_char(*n1))
							n1++;
						note_function(r, fs, n0, (size_t)(n1 - n0), NULL);
					}
				}
				open_block(r, fs, q, le, indent, at.lineno);
				if (fs->nblock && fs->block[fs->nblock - 1].kind == B_BODY &&
				    fs->block[fs->nblock - 1].line == at.lineno)
					runs = 0;	/* "def _load_lib(name):" defines, calls nothing */
			} else {
				fs->last.indent = -1;
			}
			at.ls = ls;
			at.q = q;
			at.le = le;
			if (runs != 0)
				statement(r, fs, &at, depth, runs, cond);
		}
		ls = *le ? le + 1 : NULL;
	}
	free(text);
}

void pkg_init_read(struct scan *s, const struct distset *dists, const char *site, const char *package,
		   struct pkg_init *out)
{
	memset(out, 0, sizeof *out);
	if (!site || !package)
		return;
	struct reader r = { .s = s, .site = site, .package = package, .out = out, .dists = dists };
	read_module(&r, arena_printf(&s->arena, "%s/%s/__init__.py", site, package), 0);
}
