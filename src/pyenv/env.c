#include "pyenv/env.h"
#include "core/utf8.h"
#include "pyenv/interpreter.h"

#include <limits.h>
#include <stdarg.h>

const char *pyenv_kind_name(enum pyenv_kind k)
{
	switch (k) {
	case PYENV_VENV: return "venv";
	case PYENV_CONDA: return "conda";
	case PYENV_PREFIX: return "python prefix";
	case PYENV_SITE: return "site-packages";
	case PYENV_PLAIN: return "folder";
	}
	return "?";
}

static void note(struct scan *s, struct pyenv *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ptrvec_push(&s->arena, &e->notes, arena_vprintf(&s->arena, fmt, ap));
	va_end(ap);
}

static bool is_dir(struct scan *s, const char *path)
{
	return fs_kind_of(&s->fs, path) == FS_DIR;
}

static bool is_file(struct scan *s, const char *path)
{
	return fs_kind_of(&s->fs, path) == FS_REGULAR;
}

static const char *join(struct scan *s, const char *a, const char *b)
{
	char buf[PATH_MAX];
	path_join(a, b, buf, sizeof buf);
	return arena_strdup(&s->arena, buf);
}

/* "3.11" / "python3.11" / "version = 3.11.7" → major, minor. */
static bool parse_version(const char *v, int *maj, int *min)
{
	while (*v && (*v < '0' || *v > '9'))
		v++;
	if (!*v)
		return false;
	char *end;
	long a = strtol(v, &end, 10);
	if (*end != '.')
		return false;
	long b = strtol(end + 1, &end, 10);
	if (a < 2 || a > 9 || b < 0 || b > 99)
		return false;
	*maj = (int)a;
	*min = (int)b;
	return true;
}

const char *pyvenv_cfg_value(struct arena *a, const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *p = line;
		while (p < line + len && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(line + len - p) > kl && strncmp(p, key, kl) == 0) {
			const char *q = p + kl;
			while (q < line + len && (*q == ' ' || *q == '\t'))
				q++;
			if (q < line + len && *q == '=') {
				q++;
				while (q < line + len && (*q == ' ' || *q == '\t'))
					q++;
				const char *end = line + len;
				while (end > q && (end[-1] == ' ' || end[-1] == '\r' || end[-1] == '\t'))
					end--;
				return arena_strndup(a, q, (size_t)(end - q));
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

struct pydir_scan {
	struct scan *s;
	int maj, min;
	bool found;
};

static bool find_pythonXY(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct pydir_scan *ps = ctx;
	(void)kind;
	(void)is_link;
	int maj, min;
	if (strncmp(name, "python", 6) == 0 && parse_version(name + 6, &maj, &min) &&
	    (!ps->found || maj > ps->maj || (maj == ps->maj && min > ps->min))) {
		ps->maj = maj;
		ps->min = min;
		ps->found = true;
	}
	return true;
}

static void add_site(struct scan *s, struct pyenv *e, const char *dir)
{
	if (!is_dir(s, dir))
		return;
	char real[PATH_MAX];
	int err;
	const char *key = fs_realpath(&s->fs, dir, real, sizeof real, &err) ? real : dir;
	for (size_t i = 0; i < e->nsite; i++) {
		char r2[PATH_MAX];
		const char *k2 = fs_realpath(&s->fs, e->site[i], r2, sizeof r2, &err) ? r2 : e->site[i];
		if (str_eq(k2, key))
			return;
	}
	const char **n = arena_grow(&s->arena, e->site, e->nsite, e->nsite + 1, sizeof *n);
	n[e->nsite++] = arena_strdup(&s->arena, dir);
	e->site = n;
}

struct pth_list {
	struct scan *s;
	struct ptrvec names;
};

static bool pth_entry(void *ctx, const char *name, enum fs_kind kind, bool is_link)
{
	struct pth_list *l = ctx;
	(void)is_link;
	if (str_ends(name, ".pth") && kind != FS_DIR)
		ptrvec_push(&l->s->arena, &l->names, arena_strdup(&l->s->arena, name));
	return true;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Python's str.isspace() for the bytes a .pth line may end in. */
static bool py_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* One line of a .pth file [p, p + n), as addpackage() takes it: the folder
 * it adds (joined to site, normalised as os.path.abspath does) when it
 * names one that exists, else NULL.  An existing file goes on sys.path too,
 * but no extension module imports from one (zipimport loads none). */
static const char *pth_line(struct scan *s, const char *site, const char *p, size_t n, bool *opaque)
{
	if (!n || p[0] == '#')
		return NULL;
	size_t k = n;
	while (k && py_space((unsigned char)p[k - 1]))
		k--;
	if (!k)
		return NULL;	/* only whitespace */
	if (n >= 7 && (strncmp(p, "import ", 7) == 0 || strncmp(p, "import\t", 7) == 0)) {
		*opaque = true;	/* code, not run here: it may install an import hook */
		return NULL;
	}
	if (memchr(p, '\0', k))
		return NULL;	/* a NUL (os.path.exists says no) */
	char line[PATH_MAX], joined[PATH_MAX], norm[PATH_MAX];
	if (k >= sizeof line)
		return NULL;
	memcpy(line, p, k);
	line[k] = '\0';
	if (line[0] == '/')	/* os.path.join(site, "/x") is "/x" */
		snprintf(joined, sizeof joined, "%s", line);
	else
		path_join(site, line, joined, sizeof joined);
	path_normalize(joined, norm, sizeof norm);
	if (is_dir(s, norm))
		return arena_strdup(&s->arena, norm);
	if (is_file(s, norm))
		*opaque = true;	/* a file (a zip or an egg): what it holds is not listed */
	return NULL;
}

/*
 * The folders one .pth file adds to sys.path, as CPython 3.11's site.py
 * addpackage() reads it: the whole file (mapped: no size limit, Python has
 * none), lines ending at \n, \r\n or \r (universal newlines).  A file that
 * is not UTF-8 stops the interpreter at startup (the decode error escapes
 * site.py: "Fatal Python error: init_import_site"): *fatal says so.
 */
static void pth_file(struct scan *s, const char *site, const char *path, struct ptrvec *out, const char **fatal,
		     bool *opaque)
{
	struct mapped_file mf;
	struct diag d;
	diag_clear(&d);
	if (fs_map(&s->fs, path, &mf, &d) != ST_OK)
		return;
	struct bytes b = bytes_make(mf.data, mf.len, false);
	const char *text = mf.len ? (const char *)bytes_at(&b, 0, mf.len) : "";
	for (size_t i = 0; i < mf.len;) {
		uint32_t cp;
		size_t l = utf8_seq((const unsigned char *)text + i, mf.len - i, &cp);
		if (!l) {
			*fatal = arena_printf(&s->arena, "%s is not UTF-8 (byte %zu): Python stops at startup "
							 "under a UTF-8 or C locale (Fatal Python error: "
							 "init_import_site)", path, i);
			goto out;
		}
		i += l;
	}
	for (size_t i = 0; i < mf.len;) {
		size_t e = i;
		while (e < mf.len && text[e] != '\n' && text[e] != '\r')
			e++;
		const char *dir = pth_line(s, site, text + i, e - i, opaque);
		if (dir)
			ptrvec_push(&s->arena, out, (void *)dir);
		i = e + (e + 1 < mf.len && text[e] == '\r' && text[e + 1] == '\n' ? 2 : 1);
	}
out:
	fs_unmap(&mf);
}

/* The folders the .pth files of site add to sys.path: every *.pth, in name
 * order (site.py's sorted(os.listdir())). */
static void pth_dirs(struct scan *s, const char *site, struct ptrvec *out, const char **fatal, bool *opaque)
{
	struct pth_list l = { s, { 0 } };
	if (!fs_list_dir(&s->fs, site, pth_entry, &l) || !l.names.n)
		return;
	sort_items(l.names.item, l.names.n, sizeof(void *), cmp_name);
	for (size_t i = 0; i < l.names.n && !*fatal; i++)
		pth_file(s, site, join(s, site, l.names.item[i]), out, fatal, opaque);
}

/* sys.path after site.py: each site directory followed by what its .pth
 * files add. */
static void add_pth_sites(struct scan *s, struct pyenv *e)
{
	const char **orig = e->site;
	size_t n = e->nsite;
	e->site = NULL;
	e->nsite = 0;
	for (size_t i = 0; i < n; i++) {
		add_site(s, e, orig[i]);
		struct ptrvec extra = { 0 };
		bool opaque = false;
		pth_dirs(s, orig[i], &extra, &e->startup_error, &opaque);
		e->path_opaque |= opaque;
		for (size_t k = 0; k < extra.n; k++) {
			size_t before = e->nsite;
			add_site(s, e, extra.item[k]);
			if (e->nsite > before) {
				ptrvec_push(&s->arena, &e->pth_sites, (void *)e->site[e->nsite - 1]);
				note(s, e, "%s: a .pth file in %s adds it to sys.path", (const char *)extra.item[k],
				     orig[i]);
			}
		}
	}
}

static void set_ext_suffix(struct scan *s, struct pyenv *e)
{
	if (!e->py_major)
		return;
	const char *plat = "x86_64-linux-gnu";
	if (e->python) {
		struct diag d;
		diag_clear(&d);
		struct object *o = objcache_get(&s->objs, e->python, &d);
		if (o && o->kind == OBJ_ELF && o->elf.machine == EM_AARCH64_)
			plat = "aarch64-linux-gnu";
	}
	e->ext_suffix = arena_printf(&s->arena, ".cpython-%d%d-%s.so", e->py_major, e->py_minor, plat);
}

/* Site and lib-dynload directories of a prefix laid out like CPython's. */
static void prefix_dirs(struct scan *s, struct pyenv *e, const char *prefix, bool site_too)
{
	if (!e->py_major) {
		struct pydir_scan ps = { s, 0, 0, false };
		fs_list_dir(&s->fs, join(s, prefix, "lib"), find_pythonXY, &ps);
		if (ps.found) {
			e->py_major = ps.maj;
			e->py_minor = ps.min;
		}
	}
	if (!e->py_major)
		return;
	const char *lib = arena_printf(&s->arena, "%s/lib/python%d.%d", prefix, e->py_major, e->py_minor);
	const char *dyn = join(s, lib, "lib-dynload");
	if (!e->dynload && is_dir(s, dyn))
		e->dynload = dyn;
	if (site_too) {
		add_site(s, e, join(s, lib, "site-packages"));
		add_site(s, e, arena_printf(&s->arena, "%s/lib64/python%d.%d/site-packages", prefix,
					    e->py_major, e->py_minor));
		/* Debian's layout for its own python */
		add_site(s, e, arena_printf(&s->arena, "%s/local/lib/python%d.%d/dist-packages", prefix,
					    e->py_major, e->py_minor));
		add_site(s, e, arena_printf(&s->arena, "%s/lib/python%d/dist-packages", prefix, e->py_major));
		add_site(s, e, join(s, lib, "dist-packages"));
	}
}

static void find_python_in(struct scan *s, struct pyenv *e, const char *bindir)
{
	/* pythonX.Y last, once the prefix's lib/pythonX.Y gave the version:
	 * Debian's python3.11 without python3-minimal's python3 link */
	const char *names[] = { "python3", "python",
				e->py_major ? arena_printf(&s->arena, "python%d.%d", e->py_major, e->py_minor) : NULL };
	for (size_t i = 0; i < ARRAY_SIZE(names) && names[i] && !e->python; i++) {
		const char *p = join(s, bindir, names[i]);
		if (!is_file(s, p))
			continue;
		if (file_is_elf(&s->fs, p)) {
			char real[PATH_MAX];
			int err;
			e->python = fs_realpath(&s->fs, p, real, sizeof real, &err) ? arena_strdup(&s->arena, real) : p;
			e->python_how = arena_printf(&s->arena, "%s", p);
		} else {
			struct interp_result ir;
			interp_resolve(&s->arena, &s->fs, p, NULL, NULL, NULL, &ir);
			if (ir.path) {
				e->python = ir.path;
				e->python_how = ir.how;
				for (size_t k = 0; k < ir.nread; k++)
					e->python_files[e->npython_files++] = ir.read[k];
			}
		}
	}
	if (e->python && !e->py_major) {
		int maj, min;
		if (parse_version(path_basename(e->python), &maj, &min)) {
			e->py_major = maj;
			e->py_minor = min;
		}
	}
}

static void open_venv(struct scan *s, const char *root, struct pyenv *e)
{
	e->kind = PYENV_VENV;
	char *cfg;
	size_t len;
	struct diag d;
	diag_clear(&d);
	const char *home = NULL, *exe = NULL, *ver = NULL, *sys_site = NULL;
	if (fs_read_small(&s->fs, join(s, root, "pyvenv.cfg"), 65536, &cfg, &len, &d) == ST_OK) {
		home = pyvenv_cfg_value(&s->arena, cfg, "home");
		exe = pyvenv_cfg_value(&s->arena, cfg, "executable");
		ver = pyvenv_cfg_value(&s->arena, cfg, "version_info");
		if (!ver)
			ver = pyvenv_cfg_value(&s->arena, cfg, "version");
		sys_site = pyvenv_cfg_value(&s->arena, cfg, "include-system-site-packages");
		free(cfg);
	}
	if (ver && parse_version(ver, &e->py_major, &e->py_minor))
		note(s, e, "Python %d.%d from pyvenv.cfg", e->py_major, e->py_minor);
	find_python_in(s, e, join(s, root, "bin"));
	if (!e->python && exe && file_is_elf(&s->fs, exe)) {
		e->python = exe;
		e->python_how = "pyvenv.cfg executable";
	}
	if (!e->python && home) {
		find_python_in(s, e, home);
		if (e->python)
			note(s, e, "interpreter found through pyvenv.cfg home = %s", home);
	}
	prefix_dirs(s, e, root, true);
	e->path_closed = !(sys_site && str_eq(sys_site, "true"));
	if (sys_site && str_eq(sys_site, "true") && e->python) {
		char bin[PATH_MAX], base[PATH_MAX];
		path_dirname(e->python, bin, sizeof bin);
		path_dirname(bin, base, sizeof base);
		prefix_dirs(s, e, base, true);
		note(s, e, "include-system-site-packages: the base interpreter's site directories follow");
	}
	if (e->python) {
		char bin[PATH_MAX], base[PATH_MAX];
		path_dirname(e->python, bin, sizeof bin);
		path_dirname(bin, base, sizeof base);
		prefix_dirs(s, e, base, false);	/* the stdlib's lib-dynload */
	}
}

static void open_prefix(struct scan *s, const char *root, struct pyenv *e, enum pyenv_kind kind)
{
	e->kind = kind;
	find_python_in(s, e, join(s, root, "bin"));
	prefix_dirs(s, e, root, true);
	if (!e->python)
		find_python_in(s, e, join(s, root, "bin"));
	if (kind == PYENV_CONDA)
		e->libdir = join(s, root, "lib");
}

static bool looks_like_site(struct scan *s, const char *dir)
{
	const char *b = path_basename(dir);
	if (str_eq(b, "site-packages") || str_eq(b, "dist-packages"))
		return true;
	(void)s;
	return false;
}

static enum status open_dir(struct scan *s, const char *dir, struct pyenv *e)
{
	e->root = arena_strdup(&s->arena, dir);
	if (is_file(s, join(s, dir, "pyvenv.cfg"))) {
		open_venv(s, dir, e);
	} else if (is_dir(s, join(s, dir, "conda-meta"))) {
		open_prefix(s, dir, e, PYENV_CONDA);
	} else if (looks_like_site(s, dir)) {
		/* .../lib/python3.X/site-packages: the environment three levels up */
		char up1[PATH_MAX], up2[PATH_MAX], up3[PATH_MAX];
		path_dirname(dir, up1, sizeof up1);
		path_dirname(up1, up2, sizeof up2);
		path_dirname(up2, up3, sizeof up3);
		int maj, min;
		if (parse_version(path_basename(up1), &maj, &min) && str_eq(path_basename(up2), "lib") &&
		    (is_file(s, join(s, up3, "pyvenv.cfg")) || is_dir(s, join(s, up3, "conda-meta")) ||
		     is_dir(s, join(s, up3, "bin")))) {
			struct pyenv outer;
			memset(&outer, 0, sizeof outer);
			open_dir(s, up3, &outer);
			if (outer.kind != PYENV_PLAIN) {
				*e = outer;
				note(s, e, "site-packages %s belongs to the %s at %s", dir,
				     pyenv_kind_name(outer.kind), up3);
				return ST_OK;
			}
		}
		e->kind = PYENV_SITE;
		add_site(s, e, dir);
	} else if (is_dir(s, join(s, dir, "bin")) && is_dir(s, join(s, dir, "lib"))) {
		open_prefix(s, dir, e, PYENV_PREFIX);
		if (!e->python && !e->nsite)
			e->kind = PYENV_PLAIN;
	} else {
		e->kind = PYENV_PLAIN;
	}
	if (e->kind != PYENV_PLAIN)
		add_pth_sites(s, e);
	set_ext_suffix(s, e);
	return ST_OK;
}

enum status pyenv_open(struct scan *s, const char *given, struct pyenv *e, struct diag *d)
{
	memset(e, 0, sizeof *e);
	/* Absolute and normalised: every path in a report is then unambiguous. */
	char abs[PATH_MAX], norm[PATH_MAX];
	fs_absolute(&s->fs, given, abs, sizeof abs);
	path_normalize(abs, norm, sizeof norm);
	const char *path = arena_strdup(&s->arena, norm);
	struct fs_stat st;
	fs_stat(&s->fs, path, &st);
	if (st.kind == FS_MISSING)
		return diag_errno(d, path, st.err, "cannot open");
	if (st.kind == FS_DIR)
		return open_dir(s, path, e);
	if (st.kind != FS_REGULAR)
		return diag_set(d, ST_NOT_FILE, path, DIAG_NO_OFFSET, "not a file or folder");
	/* A python executable stands for its environment. */
	if (strncmp(path_basename(path), "python", 6) == 0) {
		char real[PATH_MAX], bin[PATH_MAX], root[PATH_MAX];
		int err;
		if (!fs_realpath(&s->fs, path, real, sizeof real, &err))
			snprintf(real, sizeof real, "%s", path);
		path_dirname(path, bin, sizeof bin);
		path_dirname(bin, root, sizeof root);
		if (is_file(s, join(s, root, "pyvenv.cfg")) || is_dir(s, join(s, root, "conda-meta"))) {
			open_dir(s, root, e);
		} else {
			path_dirname(real, bin, sizeof bin);
			path_dirname(bin, root, sizeof root);
			open_dir(s, root, e);
		}
		/* the interpreter named is the one the environment runs, also
		 * where its folder has no python3 (Debian's python3.11 without
		 * the python3-minimal link) */
		if (e->kind != PYENV_PLAIN && !e->python && file_is_elf(&s->fs, real)) {
			e->python = arena_strdup(&s->arena, real);
			e->python_how = arena_strdup(&s->arena, path);
			set_ext_suffix(s, e);	/* its machine names the suffix */
		}
		if (e->kind != PYENV_PLAIN)
			return ST_OK;
		memset(e, 0, sizeof *e);
	}
	/* A single ELF object is checked as a folder of one; any other file
	 * (a text file, JSON that is no snapshot) holds no environment. */
	uint8_t head[4];
	struct fs_probe pr;
	fs_probe(&s->fs, path, head, sizeof head, &pr);
	if (pr.head_len < 4 || memcmp(head, "\177ELF", 4) != 0)
		return diag_set(d, ST_UNSUPPORTED, path, DIAG_NO_OFFSET,
				"no environment here: a file that is neither an ELF object nor a Python "
				"interpreter (give an environment's folder, its python, or a snapshot)");
	e->kind = PYENV_PLAIN;
	e->root = arena_strdup(&s->arena, path);
	return ST_OK;
}

enum status pyenv_default(struct scan *s, const char *virtual_env, const char *conda_prefix,
			  const char *path_env, const char *pyenv_version, const char *pyenv_root,
			  struct pyenv *e, struct diag *d)
{
	if (virtual_env && *virtual_env) {
		enum status st = pyenv_open(s, virtual_env, e, d);
		if (st == ST_OK)
			note(s, e, "from $VIRTUAL_ENV");
		return st;
	}
	if (conda_prefix && *conda_prefix) {
		enum status st = pyenv_open(s, conda_prefix, e, d);
		if (st == ST_OK)
			note(s, e, "from $CONDA_PREFIX");
		return st;
	}
	struct interp_result ir;
	interp_resolve(&s->arena, &s->fs, "python3", path_env, pyenv_version, pyenv_root, &ir);
	if (!ir.path)
		return diag_set(d, ST_NOT_FOUND, "python3", DIAG_NO_OFFSET, "%s", ir.problem);
	enum status st = pyenv_open(s, ir.path, e, d);
	if (st == ST_OK) {
		e->python_how = ir.how;
		if (!e->npython_files) {	/* the files of the python3 on PATH, unless the env's own */
			for (size_t k = 0; k < ir.nread; k++)
				e->python_files[k] = ir.read[k];
			e->npython_files = ir.nread;
		}
		note(s, e, "the python3 on PATH (%s)", ir.how);
	}
	return st;
}

bool pyenv_enclosing(struct scan *s, const char *path, struct pyenv *e)
{
	char dir[PATH_MAX];
	fs_absolute(&s->fs, path, dir, sizeof dir);
	for (int depth = 0; depth < 64; depth++) {
		char up[PATH_MAX];
		path_dirname(dir, up, sizeof up);
		if (str_eq(up, dir))
			break;
		snprintf(dir, sizeof dir, "%s", up);
		if (looks_like_site(s, dir) || is_file(s, join(s, dir, "pyvenv.cfg")) ||
		    is_dir(s, join(s, dir, "conda-meta"))) {
			struct diag d;
			diag_clear(&d);
			if (pyenv_open(s, dir, e, &d) == ST_OK && e->kind != PYENV_PLAIN)
				return true;
		}
	}
	memset(e, 0, sizeof *e);
	return false;
}

const char *pyenv_module_stem(struct arena *a, const char *filename)
{
	/* name.cpython-311-x86_64-linux-gnu.so, name.abi3.so, name.so */
	const char *dot = strchr(filename, '.');
	if (!dot || !str_ends(filename, ".so"))
		return NULL;
	return arena_strndup(a, filename, (size_t)(dot - filename));
}

/* A name Python can import (PEP 3131): ASCII letters, digits (not first)
 * and '_'; any byte of a non-ASCII character is taken as a letter (Python
 * accepts most; refusing one would leave a real module unjudged). */
static bool is_identifier(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c >= 0x80))
			return false;
	}
	return true;
}

bool pyenv_identifier(const char *name)
{
	return is_identifier(name, strlen(name));
}

const char *pyenv_module_name(struct scan *s, const struct pyenv *e, const char *path,
			      const char **site_out)
{
	for (size_t i = 0; i < e->nsite; i++) {
		const char *site = e->site[i];
		size_t sl = strlen(site);
		if (strncmp(path, site, sl) != 0 || path[sl] != '/')
			continue;
		const char *rel = path + sl + 1;
		const char *stem = pyenv_module_stem(&s->arena, path_basename(rel));
		if (!stem)
			return NULL;
		char buf[PATH_MAX];
		size_t o = 0;
		for (const char *p = rel; *p;) {
			const char *slash = strchr(p, '/');
			if (!slash)
				break;
			size_t n = (size_t)(slash - p);
			if (!is_identifier(p, n))
				return NULL;
			if (o + n + 2 >= sizeof buf)
				return NULL;
			memcpy(buf + o, p, n);
			o += n;
			buf[o++] = '.';
			p = slash + 1;
		}
		if (!is_identifier(stem, strlen(stem)))
			return NULL;	/* "my-ext.cpython-311-x86_64-linux-gnu.so": no import reaches it */
		snprintf(buf + o, sizeof buf - o, "%s", stem);
		if (site_out)
			*site_out = site;
		return arena_strdup(&s->arena, buf);
	}
	return NULL;
}
