#!/bin/sh
# Builds the demo environments from source into demo/build/ (nothing is
# downloaded).  Each object fails in one of the ways of the problem
# statement; run.sh shows what abiscope says about them.
#
#   venv/   a venv-shaped environment: a fake torch 2.10.0+cu130 whose
#           libc10.so changed c10_cuda_check_implementation(int line) to
#           (unsigned line); an sgl_kernel built against the old torch; an
#           extension that needs libcufile.so.0 but looks in the CUDA 12
#           wheel layout; NVIDIA-style lib folders; dist-info with RECORD.
#   conda/  a conda-shaped environment whose python has RPATH $ORIGIN/../lib
#           and whose old libstdc++.so.6 lacks GLIBCXX_3.4.32.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
CC=${CC:-cc}
CXX=${CXX:-c++}
rm -rf "$out"
mkdir -p "$out/src"
src=$out/src
py=lib/python3.11/site-packages

# ---------------------------------------------------------------- venv
V=$out/venv
SP=$V/$py
mkdir -p "$V/bin" "$SP/torch/lib" "$SP/sgl_kernel/sm90" "$SP/sgl_kernel/sm100" \
	"$SP/nvidia/cu13/lib" "$SP/gds_io" "$SP/torch-2.10.0+cu130.dist-info"
pybin=$(command -v python3 || true)
[ -n "$pybin" ] && ln -sf "$pybin" "$V/bin/python3"
cat >"$V/pyvenv.cfg" <<CFG
home = /usr/bin
include-system-site-packages = false
version = 3.11.7
CFG

# torch 2.10: line_number became unsigned (the 2.9 -> 2.10 break)
cat >"$src/c10.cpp" <<'C'
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int err, const char *file, const char *fn, unsigned int line, bool assertions)
{ (void)err; (void)file; (void)fn; (void)line; (void)assertions; }
} }
C
$CXX -shared -fPIC -o "$SP/torch/lib/libc10.so" -Wl,-soname,libc10.so "$src/c10.cpp"
printf "__version__ = '2.10.0+cu130'\ncuda = '13.0'\ngit_version = 'demo'\n" >"$SP/torch/version.py"
printf 'from .version import __version__\n' >"$SP/torch/__init__.py"

# sgl_kernel built against torch 2.9 (int line_number)
cat >"$src/common_ops.cpp" <<'C'
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int err, const char *file, const char *fn, int line, bool assertions);
} }
extern "C" int PyInit_common_ops(void)
{ c10::cuda::c10_cuda_check_implementation(0, __FILE__, __func__, __LINE__, true); return 0; }
C
# link against a stub of the old libc10 so the reference has the 2.9 signature
mkdir -p "$src/oldtorch"
cat >"$src/oldc10.cpp" <<'C'
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int, const char *, const char *, int, bool) {}
} }
C
$CXX -shared -fPIC -o "$src/oldtorch/libc10.so" -Wl,-soname,libc10.so "$src/oldc10.cpp"
for v in sm90 sm100; do
	$CXX -shared -fPIC -o "$SP/sgl_kernel/$v/common_ops.abi3.so" "$src/common_ops.cpp" \
		-L"$src/oldtorch" -lc10 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../torch/lib'
done
printf 'from . import common_ops\n' >"$SP/sgl_kernel/__init__.py"

# A CUDA 13 library installed in the cu13 wheel layout (nvidia/cu13/lib);
# the extension's RUNPATH points at the CUDA 12 layout (nvidia/cufile/lib).
# (libcufile rather than libnvrtc: the toolkit on a CUDA machine would
# otherwise satisfy the demo through ld.so.cache.)
cat >"$src/cufile.c" <<'C'
int cuFileDriverOpen(void) { return 0; }
C
$CC -shared -fPIC -o "$SP/nvidia/cu13/lib/libcufile.so.0" -Wl,-soname,libcufile.so.0 "$src/cufile.c"
cat >"$src/cufile_user.c" <<'C'
int cuFileDriverOpen(void);
int PyInit__C(void) { return cuFileDriverOpen(); }
C
$CC -shared -fPIC -o "$SP/gds_io/_C.abi3.so" "$src/cufile_user.c" \
	-L"$SP/nvidia/cu13/lib" -l:libcufile.so.0 \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nvidia/cufile/lib'

# dist-info for the fake torch, with a RECORD
di=$SP/torch-2.10.0+cu130.dist-info
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0+cu130\n' >"$di/METADATA"
printf 'pip\n' >"$di/INSTALLER"
{
	for f in torch/__init__.py torch/version.py torch/lib/libc10.so; do
		size=$(wc -c <"$SP/$f")
		echo "$f,,$size"
	done
	echo "torch-2.10.0+cu130.dist-info/METADATA,,"
	echo "torch-2.10.0+cu130.dist-info/RECORD,,"
} >"$di/RECORD"

# ---------------------------------------------------------------- conda
C=$out/conda
mkdir -p "$C/bin" "$C/lib" "$C/conda-meta" "$C/$py/fastops"
# an old libstdc++ (GLIBCXX up to 3.4.29, like GCC 11's) in the env's lib
cat >"$src/oldstd.c" <<'C'
void old_glibcxx_marker(void) {}
C
{
	echo "GLIBCXX_3.4 { global: old_glibcxx_marker; local: *; };"
	prev=GLIBCXX_3.4
	for n in $(seq 1 29); do
		echo "GLIBCXX_3.4.$n { } $prev;"
		prev=GLIBCXX_3.4.$n
	done
	echo "CXXABI_1.3 { };"
} >"$src/oldstd.map"
$CC -shared -fPIC -o "$C/lib/libstdc++.so.6" -Wl,-soname,libstdc++.so.6 \
	-Wl,--version-script="$src/oldstd.map" "$src/oldstd.c"
# a newer libstdc++ stub to link against: std::ios_base_library_init() is
# GCC 13's, at GLIBCXX_3.4.32
mkdir -p "$src/newstd"
cat >"$src/newstd.c" <<'C'
void _ZSt21ios_base_library_initv(void) {}
C
printf 'GLIBCXX_3.4.32 { global: _ZSt21ios_base_library_initv; local: *; };\n' >"$src/newstd.map"
$CC -shared -fPIC -o "$src/newstd/libstdc++.so.6" -Wl,-soname,libstdc++.so.6 \
	-Wl,--version-script="$src/newstd.map" "$src/newstd.c"
cat >"$src/fastops.c" <<'C'
void _ZSt21ios_base_library_initv(void);
int PyInit__fastops(void) { _ZSt21ios_base_library_initv(); return 0; }
C
$CC -shared -fPIC -o "$C/$py/fastops/_fastops.cpython-311-x86_64-linux-gnu.so" "$src/fastops.c" \
	-L"$src/newstd" -l:libstdc++.so.6
# conda's python: RPATH $ORIGIN/../lib, which also applies to the
# dependencies of every extension it dlopens
printf 'int main(void){return 0;}\n' >"$src/python.c"
$CC -o "$C/bin/python3.11" "$src/python.c" -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib'
ln -sf python3.11 "$C/bin/python3"
printf '{"name": "libstdcxx-ng", "version": "11.2.0"}\n' >"$C/conda-meta/libstdcxx-ng-11.2.0-h1234567_1.json"
echo "demo built in $out"
