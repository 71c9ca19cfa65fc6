/* libFuzzer target: a package's Python sources read for what its import
 * loads itself (src/pyenv/selfload.h): the input is PKG/__init__.py and
 * PKG/sub.py (which the first may import) of an in-memory site-packages
 * that holds a library and an extension module of PKG to be named. */
#include "core/vfs.h"
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
	s.fs.vfs = v;
	snprintf(s.fs.cwd, sizeof s.fs.cwd, "/");
	struct pkg_init pi;
	pkg_init_read(&s, "/site", "pkg", &pi);
	scan_release(&s);
	return 0;
}
