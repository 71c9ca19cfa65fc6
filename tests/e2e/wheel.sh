#!/bin/sh
# abiscope wheel: a wheel checked against an environment before install.
#
# The environment has torch 2.9 (c10_cuda_check_implementation(int line))
# and an extension built against it.  Wheels are made from C++ source at
# test time with Python's zipfile: torch 2.10 (unsigned line), which would
# break the extension; a wheel of a new extension that needs torch 2.10;
# wheels pip would refuse (musllinux, another CPython, a newer manylinux);
# and hostile archives (a member escaping the folder, a zip bomb, a member
# longer than its header says, not a zip at all).
. "$(dirname "$0")/lib.sh"
fixture_dir wheel
. "$(dirname "$0")/lib_wheel.sh"
wheel_env
mkdir -p "$SP/myext"
pytag=cp$(echo "$pyver" | tr -d .)
c10 "$SP/torch/lib/libc10.so" int "int device_count() { return 0; }"
printf '__version__ = "2.9.0+cu128"\ncuda = "12.8"\n' >"$SP/torch/version.py"
printf 'from .version import __version__\n' >"$SP/torch/__init__.py"
cat >"$FX/src/ext.cpp" <<'C'
namespace c10 { namespace cuda { void c10_cuda_check_implementation(int, const char *, const char *, int, bool); } }
extern "C" int PyInit__ext(void) { c10::cuda::c10_cuda_check_implementation(0, "", "", 1, false); return 0; }
C
$CXX -shared -fPIC -o "$SP/myext/_ext$suffix" "$FX/src/ext.cpp" -L"$SP/torch/lib" -lc10 -Wl,-rpath,'$ORIGIN/../torch/lib'
printf 'import torch\n' >"$SP/myext/__init__.py"
mkrecord() {	# mkrecord NAME VERSION FILE...
	n=$1 v=$2
	shift 2
	di=$SP/$n-$v.dist-info
	mkdir -p "$di"
	printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$n" "$v" >"$di/METADATA"
	{ for f in "$@"; do echo "$f,,"; done; echo "$n-$v.dist-info/RECORD,,"; } >"$di/RECORD"
}
mkrecord torch 2.9.0+cu128 torch/lib/libc10.so torch/version.py torch/__init__.py
mkrecord myext 1.0 "myext/_ext$suffix" myext/__init__.py

# torch 2.10: the same layout, line became unsigned
c10 "$FX/src/libc10_210.so" 'unsigned int' "int device_count() { return 0; }"
# a new extension that needs torch 2.10's signature
sed 's/const char \*, int, bool/const char *, unsigned int, bool/' "$FX/src/ext.cpp" | sed 's/PyInit__ext/PyInit__new/' >"$FX/src/new.cpp"
$CXX -shared -fPIC -o "$FX/src/new.so" "$FX/src/new.cpp" -L"$FX/src" -l:libc10_210.so -Wl,-rpath,'$ORIGIN/../torch/lib'

sed 's/PyInit__new/PyInit__ext/' "$FX/src/new.cpp" >"$FX/src/new_ext.cpp"
$CXX -shared -fPIC -o "$FX/src/new_ext.so" "$FX/src/new_ext.cpp" -L"$FX/src" -l:libc10_210.so -Wl,-rpath,'$ORIGIN/../torch/lib'

python3 - "$FX" "$pytag" "$suffix" <<'PY'
import os, sys, zipfile
fx, pytag, suffix = sys.argv[1:4]
src = fx + "/src/"
def wheel(fname, name, version, files, wheel_tag=None):
    di = "%s-%s.dist-info" % (name, version)
    with zipfile.ZipFile(fx + "/" + fname, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(arc, data)
        z.writestr(di + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))
        z.writestr(di + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: %s\n" % (wheel_tag or "x"))
        z.writestr(di + "/RECORD", "")
c10 = open(src + "libc10_210.so", "rb").read()
torch_files = [("torch/lib/libc10.so", c10), ("torch/version.py", '__version__ = "2.10.0+cu130"\ncuda = "13.0"\n'),
               ("torch/__init__.py", "from .version import __version__\n")]
wheel("torch-2.10.0+cu130-%s-%s-manylinux_2_28_x86_64.whl" % (pytag, pytag), "torch", "2.10.0+cu130", torch_files)
wheel("newext-1.0-%s-abi3-manylinux2014_x86_64.whl" % pytag, "newext", "1.0",
      [("newext/_new" + suffix, open(src + "new.so", "rb").read()), ("newext/__init__.py", "import torch\n")])
# an upgrade of myext built for torch 2.10: its module fails where 1.0's imports
new_as_ext = open(src + "new_ext.so", "rb").read()
wheel("myext-2.0-%s-abi3-manylinux2014_x86_64.whl" % pytag, "myext", "2.0",
      [("myext/_ext" + suffix, new_as_ext), ("myext/__init__.py", "import torch\n")])
wheel("torch-2.10.0+cu130-%s-%s-musllinux_1_2_x86_64.whl" % (pytag, pytag), "torch", "2.10.0+cu130", torch_files)
wheel("torch-2.10.0+cu130-cp27-cp27mu-manylinux1_x86_64.whl", "torch", "2.10.0+cu130", torch_files)
wheel("torch-2.10.0+cu130-%s-%s-manylinux_2_99_x86_64.whl" % (pytag, pytag), "torch", "2.10.0+cu130", torch_files)
wheel("evil-1.0-py3-none-any.whl", "evil", "1.0", [("../../evil.py", "x")])
with zipfile.ZipFile(fx + "/bomb-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("bomb-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    z.writestr("bomb/zeros.so", b"\0" * (96 << 20))
with zipfile.ZipFile(fx + "/bombs-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("bombs-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    for i in range(3):	# each under the per-member floor, 120 MiB together
        z.writestr("bombs/zeros%d.so" % i, b"\0" * (40 << 20))
open(fx + "/notzip-1.0-py3-none-any.whl", "wb").write(b"PK\3\4 this is not a zip archive at all" * 10)
PY

libc10_before=$(sha256sum <"$SP/torch/lib/libc10.so")
$ABISCOPE wheel --color never --env "$E" "$FX"/torch-2.10.0+cu130-$pytag-$pytag-manylinux_2_28_x86_64.whl >"$FX/torch.txt" 2>&1
expect_eq "$?" 1 "torch 2.10 wheel: exit 1 (it breaks an installed extension)"
out=$(cat "$FX/torch.txt")
expect_contains "$out" "replaces     torch 2.9.0+cu128" "torch 2.10 wheel: replaces the installed torch"
expect_contains "$out" "tags         supported" "torch 2.10 wheel: its tags are supported"
expect_contains "$out" "breaks (1 that import today)" "torch 2.10 wheel: breaks one module"
expect_contains "$out" "undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib" \
	"torch 2.10 wheel: myext would lose the symbol it needs"
# untouched: the installed file is still there, byte for byte as before
expect_eq "$(sha256sum <"$SP/torch/lib/libc10.so" 2>/dev/null)" "$libc10_before" \
	"torch 2.10 wheel: the environment on disk is untouched"

$ABISCOPE wheel --json --env "$E" "$FX"/newext-1.0-$pytag-abi3-manylinux2014_x86_64.whl >"$FX/new.json" 2>&1
expect_eq "$?" 1 "new extension for torch 2.10: exit 1 (its module would not import here)"
expect_eq "$(jq_py "j['replaces'], [(m['module'], m['imports']) for m in j['modules']], j['breaks']" <"$FX/new.json")" \
	"None [('newext._new', False)] []" "new extension: its own module fails, nothing else breaks"
expect_contains "$(jq_py "j['modules'][0]['error']" <"$FX/new.json")" "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb" \
	"new extension: wants the unsigned signature torch 2.9 lacks"

# an upgrade whose module fails where the installed version's imports: the
# root cause once, before the list, and keeping the installed one as a fix
$ABISCOPE wheel --color never --env "$E" "$FX"/myext-2.0-$pytag-abi3-manylinux2014_x86_64.whl >"$FX/up.txt" 2>&1
expect_eq "$?" 1 "myext 2.0 over 1.0: exit 1 (its module would not import here)"
out=$(cat "$FX/up.txt")
expect_contains "$out" "keep         myext 1.0, installed now, instead: the 1 binary its import loads all load here today" \
	"myext 2.0 over 1.0: keeping 1.0 is named as a fix"
expect_eq "$(sed -n '/^root cause/,/^its extension modules/p' "$FX/up.txt" | grep -c 'error\[undefined-symbol\]')" 1 \
	"myext 2.0 over 1.0: the undefined symbol is said once, under root causes, before the module list"
expect_eq "$(sed -n '/^its extension modules/,$p' "$FX/up.txt" | grep -c 'error\[')" 0 \
	"myext 2.0 over 1.0: the module list does not repeat the findings (-v does)"
$ABISCOPE wheel -v --color never --env "$E" "$FX"/myext-2.0-$pytag-abi3-manylinux2014_x86_64.whl >"$FX/up_v.txt" 2>&1
expect_contains "$(sed -n '/^its extension modules/,$p' "$FX/up_v.txt")" "error[undefined-symbol]" \
	"myext 2.0 over 1.0, -v: every finding under its module too"

# The glibc floor: a library that needs glibc's newest pthread_create, in a
# wheel that claims manylinux2014 (glibc 2.17); objdump -T is the oracle.
printf '#include <pthread.h>\nstatic void *f(void *p) { return p; }\nint start(void) { pthread_t t; return pthread_create(&t, 0, f, 0); }\n' \
	>"$FX/src/floor.c"
$CC -shared -fPIC -o "$FX/src/libfloor.so" "$FX/src/floor.c" -lpthread
newest=$(objdump -T "$FX/src/libfloor.so" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1)
python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.write(sys.argv[2], "floor/libfloor.so")
z.writestr("floor-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: floor\nVersion: 1.0\n")
z.writestr("floor-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux2014_x86_64\n")
z.writestr("floor-1.0.dist-info/RECORD", "")' "$FX/floor-1.0-py3-none-manylinux2014_x86_64.whl" "$FX/src/libfloor.so"
$ABISCOPE wheel --json --env "$E" "$FX/floor-1.0-py3-none-manylinux2014_x86_64.whl" >"$FX/floor.json" 2>&1
over=$(printf '%s\nGLIBC_2.17\n' "$newest" | sort -V | tail -1)
[ "$over" = GLIBC_2.17 ] && over=False || over=True
expect_eq "$(jq_py "j['glibc_floor']['symbol_version'], j['glibc_floor']['member'], j['glibc_floor']['tag_promises'], j['glibc_floor']['exceeds_tag']" <"$FX/floor.json")" \
	"$newest floor/libfloor.so 2.17 $over" "glibc floor: the newest GLIBC_ version objdump -T lists, against manylinux2014's 2.17"
$ABISCOPE wheel --color never --env "$E" "$FX/floor-1.0-py3-none-manylinux2014_x86_64.whl" >"$FX/floor.txt" 2>&1
if [ "$over" = True ]; then
	expect_contains "$(cat "$FX/floor.txt")" "its manylinux tag promises 2.17: pip would install it on older systems" \
		"glibc floor above the tag: the text says where it would fail"
fi

for t in "$pytag-$pytag-musllinux_1_2_x86_64:musl" "cp27-cp27mu-manylinux1_x86_64:Python 2" \
	"$pytag-$pytag-manylinux_2_99_x86_64:needs glibc 2.99"; do
	tag=${t%%:*} why=${t#*:}
	$ABISCOPE wheel --color never --env "$E" "$FX/torch-2.10.0+cu130-$tag.whl" >"$FX/tag.txt" 2>&1
	expect_eq "$?" 1 "wheel $tag: exit 1"
	expect_contains "$(cat "$FX/tag.txt")" "$why" "wheel $tag: pip would refuse it ($why)"
done

$ABISCOPE wheel --env "$E" "$FX/evil-1.0-py3-none-any.whl" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "wheel with ../ member: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "evil-1.0-py3-none-any.whl(../../evil.py): member name escapes" \
	"wheel with ../ member: names the member"
$ABISCOPE wheel --env "$E" "$FX/bomb-1.0-py3-none-any.whl" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "zip bomb: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "bomb/zeros.so): compressed" "zip bomb: names the member and the ratio"
$ABISCOPE wheel --env "$E" "$FX/bombs-1.0-py3-none-any.whl" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "many members that are a bomb together: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "members of 125829139 bytes in all, compressed" "many small bombs: the total and the ratio"
# members that overlap (each one's deflate stream runs on into the next's): 100 members of 4 MB in
# a 245 kB file, each compressed 17:1, so no ratio catches it; it was read in full (424 MB, 2 s,
# 531 MB RSS) and said OK.  Python's zipfile reads each member too: the oracle is the sizes.
python3 "$(dirname "$0")/../tools/overlap_wheel.py" "$FX/ov-1.0-py3-none-any.whl" 100 4 >/dev/null
$ABISCOPE wheel --env "$E" "$FX/ov-1.0-py3-none-any.whl" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "overlapping members: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "members overlap: their compressed sizes add up to" \
	"overlapping members: said, with the sizes"
$ABISCOPE wheel --env "$E" "$FX/notzip-1.0-py3-none-any.whl" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "not a zip: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "not a readable zip archive" "not a zip: says so"
$ABISCOPE wheel --env "$E" "$FX/no-such-1.0-py3-none-any.whl" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "missing wheel: exit 3"
$ABISCOPE wheel --env "$E" "$FX/src/ext.cpp" >"$FX/bad.txt" 2>&1
expect_contains "$(cat "$FX/bad.txt")" "does not end in .whl" "a file that is not a wheel: says so"
finish
