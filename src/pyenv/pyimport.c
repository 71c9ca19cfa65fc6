/*
 * pyimport.c: top-level module names against the standard library and the
 * folders of sys.path (see pyimport.h).
 */
#include "pyenv/pyimport.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"

/* sys.stdlib_module_names of CPython 3.11 (built-in modules included:
 * they are no files), and the folder of the environment's own standard
 * library for what later releases add. */
static const char *const stdlib_names[] = {
	"__future__", "_abc", "_aix_support", "_ast", "_asyncio", "_bisect", "_blake2", "_bootsubprocess", "_bz2",
	"_codecs", "_codecs_cn", "_codecs_hk", "_codecs_iso2022", "_codecs_jp", "_codecs_kr", "_codecs_tw",
	"_collections", "_collections_abc", "_compat_pickle", "_compression", "_contextvars", "_crypt", "_csv",
	"_ctypes", "_curses", "_curses_panel", "_datetime", "_dbm", "_decimal", "_elementtree", "_frozen_importlib",
	"_frozen_importlib_external", "_functools", "_gdbm", "_hashlib", "_heapq", "_imp", "_io", "_json", "_locale",
	"_lsprof", "_lzma", "_markupbase", "_md5", "_msi", "_multibytecodec", "_multiprocessing", "_opcode",
	"_operator", "_osx_support", "_overlapped", "_pickle", "_posixshmem", "_posixsubprocess", "_py_abc",
	"_pydecimal", "_pyio", "_queue", "_random", "_scproxy", "_sha1", "_sha256", "_sha3", "_sha512", "_signal",
	"_sitebuiltins", "_socket", "_sqlite3", "_sre", "_ssl", "_stat", "_statistics", "_string", "_strptime",
	"_struct", "_symtable", "_thread", "_threading_local", "_tkinter", "_tokenize", "_tracemalloc", "_typing",
	"_uuid", "_warnings", "_weakref", "_weakrefset", "_winapi", "_zoneinfo", "abc", "aifc", "antigravity",
	"argparse", "array", "ast", "asynchat", "asyncio", "asyncore", "atexit", "audioop", "base64", "bdb",
	"binascii", "bisect", "builtins", "bz2", "cProfile", "calendar", "cgi", "cgitb", "chunk", "cmath", "cmd",
	"code", "codecs", "codeop", "collections", "colorsys", "compileall", "concurrent", "configparser",
	"contextlib", "contextvars", "copy", "copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime",
	"dbm", "decimal", "difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum",
	"errno", "faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools", "gc",
	"genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip", "hashlib", "heapq", "hmac",
	"html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib", "inspect", "io", "ipaddress", "itertools",
	"json", "keyword", "lib2to3", "linecache", "locale", "logging", "lzma", "mailbox", "mailcap", "marshal",
	"math", "mimetypes", "mmap", "modulefinder", "msilib", "msvcrt", "multiprocessing", "netrc", "nis", "nntplib",
	"nt", "ntpath", "nturl2path", "numbers", "opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib",
	"pdb", "pickle", "pickletools", "pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath",
	"pprint", "profile", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data", "pyexpat",
	"queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter", "runpy", "sched",
	"secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal", "site", "smtpd", "smtplib", "sndhdr",
	"socket", "socketserver", "spwd", "sqlite3", "sre_compile", "sre_constants", "sre_parse", "ssl", "stat",
	"statistics", "string", "stringprep", "struct", "subprocess", "sunau", "symtable", "sys", "sysconfig",
	"syslog", "tabnanny", "tarfile", "telnetlib", "tempfile", "termios", "textwrap", "this", "threading", "time",
	"timeit", "tkinter", "token", "tokenize", "tomllib", "trace", "traceback", "tracemalloc", "tty", "turtle",
	"turtledemo", "types", "typing", "unicodedata", "unittest", "urllib", "uu", "uuid", "venv", "warnings",
	"wave", "weakref", "webbrowser", "winreg", "winsound", "wsgiref", "xdrlib", "xml", "xmlrpc", "zipapp",
	"zipfile", "zipimport", "zlib", "zoneinfo",
};

/* The most bytes of another package's module read for its imports. */
#define PYIMPORT_MAX_TEXT (4u << 20)

static int cmp_name(const void *k, const void *e)
{
	return strcmp(k, *(const char *const *)e);
}

/* Does folder dir hold a module or package named name, as the path-based
 * finder looks for it: a folder (a package, or a namespace package), a
 * source or bytecode file, an extension module? */
static bool folder_has(struct scan *s, const struct pyenv *e, const char *dir, const char *name)
{
	static const char *const suffixes[] = { "", ".py", ".pyc", ".abi3.so", ".so" };
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		enum fs_kind k = fs_kind_of(&s->fs, arena_printf(&s->arena, "%s/%s%s", dir, name, suffixes[i]));
		if (i == 0 ? k == FS_DIR : k == FS_REGULAR)
			return true;
	}
	return e->ext_suffix &&
	       fs_kind_of(&s->fs, arena_printf(&s->arena, "%s/%s%s", dir, name, e->ext_suffix)) == FS_REGULAR;
}

static bool in_stdlib(struct scan *s, const struct pyenv *e, const char *name)
{
	if (bsearch(name, stdlib_names, ARRAY_SIZE(stdlib_names), sizeof *stdlib_names, cmp_name))
		return true;
	char lib[PATH_MAX];
	path_dirname(e->dynload, lib, sizeof lib);
	return folder_has(s, e, lib, name) || folder_has(s, e, e->dynload, name);
}

/* The sys.path folder that provides top-level module name, or NULL. */
static const char *site_of(struct scan *s, const struct pyenv *e, const char *name)
{
	for (size_t i = 0; i < e->nsite; i++)
		if (folder_has(s, e, e->site[i], name))
			return e->site[i];
	return NULL;
}

static const char *top_name(struct scan *s, const char *module)
{
	const char *dot = strchr(module, '.');
	return dot ? arena_strndup(&s->arena, module, (size_t)(dot - module)) : module;
}

static bool found(struct scan *s, const struct pyenv *e, const char *top)
{
	return in_stdlib(s, e, top) || site_of(s, e, top);
}

/* The source file of dotted module (a submodule of a package in site), in
 * the path finder's order: a package's __init__.py, then an extension
 * module (no source to read: NULL), then NAME.py; or NULL. */
static const char *module_file(struct scan *s, const struct pyenv *e, const char *site, const char *module)
{
	char *rel = arena_strdup(&s->arena, module);
	for (char *c = rel; *c; c++)
		if (*c == '.')
			*c = '/';
	const char *init = arena_printf(&s->arena, "%s/%s/__init__.py", site, rel);
	if (fs_kind_of(&s->fs, init) == FS_REGULAR)
		return init;
	static const char *const ext[] = { ".abi3.so", ".so" };
	for (size_t i = 0; i < ARRAY_SIZE(ext); i++)
		if (fs_kind_of(&s->fs, arena_printf(&s->arena, "%s/%s%s", site, rel, ext[i])) == FS_REGULAR)
			return NULL;
	if (e->ext_suffix &&
	    fs_kind_of(&s->fs, arena_printf(&s->arena, "%s/%s%s", site, rel, e->ext_suffix)) == FS_REGULAR)
		return NULL;
	const char *py = arena_printf(&s->arena, "%s/%s.py", site, rel);
	return fs_kind_of(&s->fs, py) == FS_REGULAR ? py : NULL;
}

/* The first module-level import of module (another installed package's)
 * that Python cannot find: *out filled from its via_ fields on. */
static bool inner_missing(struct scan *s, const struct pyenv *e, const char *module, struct py_missing *out)
{
	const char *top = top_name(s, module);
	const char *site = site_of(s, e, top);
	const char *file = site && strchr(module, '.') ? module_file(s, e, site, module) : NULL;
	char *text;
	size_t len;
	struct diag d;
	diag_clear(&d);
	if (!file || fs_read_small(&s->fs, file, PYIMPORT_MAX_TEXT, &text, &len, &d) != ST_OK)
		return false;
	struct pkg_import imports[64];
	size_t n = py_module_imports(&s->arena, text, len, file + strlen(site) + 1, imports, ARRAY_SIZE(imports));
	free(text);
	for (size_t i = 0; i < n; i++) {
		const char *t = top_name(s, imports[i].module);
		if (str_eq(t, top) || found(s, e, t))
			continue;
		out->name = t;
		out->via_file = imports[i].file;
		out->via_line = imports[i].line;
		return true;
	}
	return false;
}

bool py_first_missing(struct scan *s, const struct pyenv *e, const struct pkg_init *pi, struct py_missing *out)
{
	memset(out, 0, sizeof *out);
	if (e->kind != PYENV_VENV || !e->path_closed || e->path_opaque || !e->dynload || !pi)
		return false;
	for (size_t i = 0; i < pi->nimports; i++) {
		const struct pkg_import *im = &pi->imports[i];
		const char *top = top_name(s, im->module);
		bool here = found(s, e, top);
		if (here && !inner_missing(s, e, im->module, out))
			continue;
		if (!here)
			out->name = top;
		out->import = im->module;
		out->file = im->file;
		out->line = im->line;
		return true;
	}
	return false;
}
