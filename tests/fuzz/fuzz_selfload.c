/* libFuzzer target: a package's Python sources read for what its import
 * loads itself (src/pyenv/selfload.h): the input is PKG/__init__.py and
 * PKG/sub.py (which the first may import) of an in-memory site-packages
 * that holds a library and an extension module of PKG to be named; the
 * same text is the module of another package PKG may import
 * (other/mod.py), for the imports pyimport.h resolves, and the preload list
 * beside them (pkg/_preload_library.json, distpreload.h), read against one
 * installed distribution, dep, that records dep/libdep.so.1. */
#include "core/vfs.h"
#include "pyenv/distpreload.h"
#include "pyenv/pyimport.h"
#include "pyenv/selfload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scan s;
	scan_init(&s, NULL);
	struct vfs *v = arena_calloc(&s.arena, 1, sizeof *v);
	vfs_init(v, &s.arena, true);
	vfs_add_file(v, "/site/pkg/__init__.py", data, size);
	vfs_add_file(v, "/site/pkg/sub.py", data, size);
	vfs_add_file(v, "/site/pkg/lib/libpkg.so", (const uint8_t *)"", 0);
	vfs_add_file(v, "/site/pkg/_ext.cpython-311-x86_64-linux-gnu.so", (const uint8_t *)"", 0);
	vfs_add_file(v, "/site/other/__init__.py", (const uint8_t *)"", 0);
	vfs_add_file(v, "/site/other/mod.py", data, size);
	vfs_add_file(v, "/site/pkg/_preload_library.json", data, size);
	vfs_add_file(v, "/site/dep/libdep.so.1", (const uint8_t *)"", 0);
	vfs_add_file(v, "/py/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so", (const uint8_t *)"",
		     0);
	s.fs.vfs = v;
	snprintf(s.fs.cwd, sizeof s.fs.cwd, "/");
	struct distset ds;
	memset(&ds, 0, sizeof ds);
	struct dist_file df = { "dep/libdep.so.1", NULL, -1 };
	struct dist dep = { .name = "dep", .norm = "dep", .site = "/site", .file = &df, .nfile = 1 };
	ptrvec_push(&s.arena, &ds.all, &dep);
	strmap_put(&s.arena, &ds.by_norm, dep.norm, &dep);
	struct pkg_init pi;
	pkg_init_read(&s, &ds, "/site", "pkg", &pi);
	struct dist_preload list[4];
	size_t n;
	(void)dist_preloads(&s, &ds, "/site/pkg", list, 4, &n);
	const char *site = "/site";
	struct pyenv e = { .kind = PYENV_VENV, .root = "/", .site = &site, .nsite = 1, .path_closed = true,
			   .dynload = "/py/lib/python3.11/lib-dynload",
			   .ext_suffix = ".cpython-311-x86_64-linux-gnu.so" };
	struct py_missing m;
	(void)py_first_missing(&s, &e, &pi, &m);
	struct pkg_import im[8];
	(void)py_module_imports(&s.arena, (const char *)data, size, "pkg/__init__.py", im, 8);
	scan_release(&s);
	return 0;
}
