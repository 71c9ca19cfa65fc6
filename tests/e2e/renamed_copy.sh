#!/bin/sh
# A library installed only under another file name (auditwheel's vendored
# copy: pkg.libs/libfoo.1a2b3c4d.so.1 with SONAME libfoo.so.1) is no copy a
# search for libfoo.so.1 can find, whatever path is added.  check used to
# call it library-off-path with "put pkg.libs on LD_LIBRARY_PATH" as the fix
# (the fix oracle's t2.10-nvidia-cuda-runtime-cu12: torchvision.libs's
# libcudart.e8e8b82a.so.12); the oracle here is the real import, before and
# with that LD_LIBRARY_PATH.
. "$(dirname "$0")/lib.sh"
fixture_dir renamed_copy
pybin=$(python3 -c 'import sys; print(sys.executable)')	# the interpreter itself (a shim would leave the venv)
suffix=$("$pybin" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
pyver=$("$pybin" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
E=$FX/env
SP=$E/lib/python$pyver/site-packages
mkdir -p "$E/bin" "$SP/vendor.libs" "$SP/vendor" "$SP/user"
ln -sf "$pybin" "$E/bin/python3"
printf 'home = %s\ninclude-system-site-packages = false\nversion = %s.0\n' "$(dirname "$pybin")" "$pyver" >"$E/pyvenv.cfg"
printf 'int foo(void) { return 1; }\n' >"$FX/foo.c"
$CC -shared -fPIC -Wl,-soname,libfoo.so.1 -o "$SP/vendor.libs/libfoo.1a2b3c4d.so.1" "$FX/foo.c"
inc=$("$pybin" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
printf '#include <Python.h>\nint foo(void);\nstatic struct PyModuleDef d = { PyModuleDef_HEAD_INIT, "_m", 0, -1, 0 };\n'\
'PyMODINIT_FUNC PyInit__m(void) { foo(); return PyModule_Create(&d); }\n' >"$FX/m.c"
# the vendor's module names the renamed file (auditwheel's patchelf --replace-needed), the user's
# libfoo.so.1; each is linked against a stand-in with that SONAME, left out of the environment
mkdir -p "$FX/link/v" "$FX/link/u"
$CC -shared -fPIC -Wl,-soname,libfoo.1a2b3c4d.so.1 -o "$FX/link/v/libfoo.1a2b3c4d.so.1" "$FX/foo.c"
$CC -shared -fPIC -Wl,-soname,libfoo.so.1 -o "$FX/link/u/libfoo.so.1" "$FX/foo.c"
$CC -shared -fPIC -I"$inc" -o "$SP/vendor/_m$suffix" "$FX/m.c" -L"$FX/link/v" -l:libfoo.1a2b3c4d.so.1 \
	-Wl,-rpath,'$ORIGIN/../vendor.libs'
$CC -shared -fPIC -I"$inc" -o "$SP/user/_m$suffix" "$FX/m.c" -L"$FX/link/u" -l:libfoo.so.1
: >"$SP/vendor/__init__.py"
: >"$SP/user/__init__.py"

# the real import: the user's module fails, and pkg.libs on LD_LIBRARY_PATH does not mend it
real=$(cd / && "$E/bin/python3" -c 'import vendor._m; print("vendor ok")' 2>&1 | tail -1)
expect_eq "$real" "vendor ok" "oracle: the vendor's module imports (it names the renamed file)"
real=$(cd / && "$E/bin/python3" -c 'import user._m' 2>&1 | tail -1)
expect_contains "$real" "libfoo.so.1: cannot open shared object file" "oracle: the user's module fails"
real=$(cd / && LD_LIBRARY_PATH=$SP/vendor.libs "$E/bin/python3" -c 'import user._m' 2>&1 | tail -1)
expect_contains "$real" "libfoo.so.1: cannot open shared object file" \
	"oracle: and still fails with vendor.libs on LD_LIBRARY_PATH (a search opens libfoo.so.1 by name)"

$ABISCOPE check --json --no-driver "$E" >"$FX/check.json" 2>"$FX/check.err"
expect_eq "$?" "1" "check: the user's module fails, exit 1"
ids=$(jq_py "' '.join(sorted(set(f['id'] for f in j['findings'] if f['severity'] == 'error')))" <"$FX/check.json")
expect_not_contains "$ids" "library-off-path" "check: the renamed copy is not called off the path"
expect_contains "$ids" "library-not-installed" "check: libfoo.so.1 is not installed under that name"
expect_not_contains "$(cat "$FX/check.json")" "vendor.libs on LD_LIBRARY_PATH" "check: no LD_LIBRARY_PATH fix that cannot work"
finish
