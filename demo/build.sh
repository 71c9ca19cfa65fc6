#!/bin/sh
# Builds the demo environments from source into demo/build/ (nothing is
# downloaded).  Each object fails in one of the ways of the problem
# statement; run.sh shows what abiscope says about them.
#
#   venv/   a venv-shaped environment: a small torch 2.10.0+cu130 (libc10,
#           libtorch_global_deps, _C, an __init__.py with a CUDA preload
#           list) whose libc10.so changed c10_cuda_check_implementation(int
#           line) to (unsigned line); an sgl_kernel with sm90/ and sm100/
#           variants built against the old torch; an extension that needs
#           libcufile.so.0 but looks in the CUDA 12 wheel layout; one built
#           for CUDA 12 beside torch +cu130; NVIDIA-style lib folders
#           (cu13 and a stale cu12 nvrtc); dist-info with RECORD, a stale
#           torch-2.5.1.dist-info, a file edited after install and a
#           binary copied in by hand; a healthy extension.
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
mkdir -p "$V/bin" "$SP"
pybin=$(command -v python3 || true)
[ -n "$pybin" ] && ln -sf "$pybin" "$V/bin/python3"
cat >"$V/pyvenv.cfg" <<CFG
home = /usr/bin
include-system-site-packages = false
version = 3.11.7
CFG

# dist NAME VERSION FILE... : a dist-info folder whose RECORD lists FILEs
# (paths relative to site-packages) with their real sizes
dist() {
	name=$1
	version=$2
	shift 2
	di="$SP/$(echo "$name" | tr '-' '_')-$version.dist-info"
	mkdir -p "$di"
	printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$name" "$version" >"$di/METADATA"
	printf 'pip\n' >"$di/INSTALLER"
	{
		for f in "$@"; do
			echo "$f,sha256=demo,$(wc -c <"$SP/$f" | tr -d ' ')"
		done
		echo "$(basename "$di")/METADATA,,"
		echo "$(basename "$di")/RECORD,,"
	} >"$di/RECORD"
}
so() {	# so OUT SRCFILE [cc args...]: a shared object from C
	o=$1
	c=$2
	shift 2
	mkdir -p "$(dirname "$o")"
	$CC -shared -fPIC -o "$o" "$c" "$@"
}
soxx() {
	o=$1
	c=$2
	shift 2
	mkdir -p "$(dirname "$o")"
	$CXX -shared -fPIC -o "$o" "$c" "$@"
}

# NVIDIA wheels: CUDA 13 runtime and nvrtc in the cu13 layout, a stale
# CUDA 12 nvrtc in the cu12 layout, cuFile (CUDA 13)
printf 'int cudaRuntimeGetVersion(int *v){*v=13000;return 0;}\n' >"$src/cudart.c"
so "$SP/nvidia/cu13/lib/libcudart.so.13" "$src/cudart.c" -Wl,-soname,libcudart.so.13
printf 'int nvrtcVersion(int *a,int *b){*a=13;*b=0;return 0;}\n' >"$src/nvrtc13.c"
so "$SP/nvidia/cu13/lib/libnvrtc.so.13" "$src/nvrtc13.c" -Wl,-soname,libnvrtc.so.13
printf 'int nvrtcVersion(int *a,int *b){*a=12;*b=8;return 0;}\n' >"$src/nvrtc12.c"
so "$SP/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" "$src/nvrtc12.c" -Wl,-soname,libnvrtc.so.12
printf 'int cuFileDriverOpen(void){return 0;}\n' >"$src/cufile.c"
so "$SP/nvidia/cu13/lib/libcufile.so.0" "$src/cufile.c" -Wl,-soname,libcufile.so.0
dist nvidia-cuda-runtime 13.0.96 nvidia/cu13/lib/libcudart.so.13
dist nvidia-cuda-nvrtc 13.0.88 nvidia/cu13/lib/libnvrtc.so.13
dist nvidia-cuda-nvrtc-cu12 12.8.93 nvidia/cuda_nvrtc/lib/libnvrtc.so.12
dist nvidia-cufile 1.15.1.6 nvidia/cu13/lib/libcufile.so.0

# torch 2.10.0+cu130: line_number of c10_cuda_check_implementation became
# unsigned (the 2.9 -> 2.10 break)
cat >"$src/c10.cpp" <<'C'
namespace c10 {
struct Error { Error(const char *); };
Error::Error(const char *) {}
namespace cuda {
void c10_cuda_check_implementation(int err, const char *file, const char *fn, unsigned int line, bool assertions)
{ (void)err; (void)file; (void)fn; (void)line; (void)assertions; }
int device_count() { return 0; }
} }
C
soxx "$SP/torch/lib/libc10.so" "$src/c10.cpp" -Wl,-soname,libc10.so
printf 'int cudaRuntimeGetVersion(int *);\nint torch_global_deps_marker(void){int v;return cudaRuntimeGetVersion(&v);}\n' >"$src/gdeps.c"
so "$SP/torch/lib/libtorch_global_deps.so" "$src/gdeps.c" -Wl,-soname,libtorch_global_deps.so \
	-L"$SP/nvidia/cu13/lib" -l:libcudart.so.13 -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cu13/lib'
cat >"$src/torch_C.cpp" <<'C'
namespace c10 { namespace cuda { int device_count(); } }
extern "C" int PyInit__C(void) { return c10::cuda::device_count(); }
C
soxx "$SP/torch/_C.cpython-311-x86_64-linux-gnu.so" "$src/torch_C.cpp" -L"$SP/torch/lib" -lc10 \
	-Wl,--disable-new-dtags,-rpath,'$ORIGIN/lib'
# torch/__init__.py (what abiscope reads to replay `import torch`: the shape
# of torch 2.14+, trimmed to two libraries), version.py, _utils_internal.py
sh "$here/../tests/fixtures/torch_py.sh" "$SP" 2.14 2.10.0+cu130 13.0 demo
dist torch 2.10.0+cu130 torch/__init__.py torch/version.py torch/_utils_internal.py torch/lib/libc10.so \
	torch/lib/libtorch_global_deps.so torch/_C.cpython-311-x86_64-linux-gnu.so
# version.py edited after install: RECORD no longer matches
printf "# edited by hand\n" >>"$SP/torch/version.py"
# a stale dist-info left by an interrupted upgrade from 2.5.1
mkdir -p "$SP/torch-2.5.1.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\n' >"$SP/torch-2.5.1.dist-info/METADATA"
printf 'torch/lib/libtorch_python_251.so,sha256=x,1000\ntorch/__init__.py,sha256=x,50\n' >"$SP/torch-2.5.1.dist-info/RECORD"

# sgl_kernel built against torch 2.9 (int line_number); it relies on
# `import torch` to find libc10.so (no RUNPATH)
cat >"$src/common_ops.cpp" <<'C'
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int err, const char *file, const char *fn, int line, bool assertions);
} }
extern "C" int PyInit_common_ops(void)
{ c10::cuda::c10_cuda_check_implementation(0, __FILE__, __func__, __LINE__, true); return 0; }
C
mkdir -p "$src/oldtorch"
cat >"$src/oldc10.cpp" <<'C'
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int, const char *, const char *, int, bool) {}
} }
C
$CXX -shared -fPIC -o "$src/oldtorch/libc10.so" -Wl,-soname,libc10.so "$src/oldc10.cpp"
for v in sm90 sm100; do
	soxx "$SP/sgl_kernel/$v/common_ops.abi3.so" "$src/common_ops.cpp" -L"$src/oldtorch" -lc10
done
printf 'import torch\nfrom .load_utils import load_common_ops\n' >"$SP/sgl_kernel/__init__.py"
dist sgl-kernel 0.3.21 sgl_kernel/__init__.py sgl_kernel/sm90/common_ops.abi3.so sgl_kernel/sm100/common_ops.abi3.so

# a CUDA 13 library installed in the cu13 layout; the extension's RUNPATH
# points at the CUDA 12 layout (nvidia/cufile/lib)
printf 'int cuFileDriverOpen(void);\nint PyInit__C(void){return cuFileDriverOpen();}\n' >"$src/gds.c"
so "$SP/gds_io/_C.abi3.so" "$src/gds.c" -L"$SP/nvidia/cu13/lib" -l:libcufile.so.0 \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nvidia/cufile/lib'
printf '' >"$SP/gds_io/__init__.py"
dist gds-io 1.0 gds_io/__init__.py gds_io/_C.abi3.so

# an extension built for CUDA 12 (+cu128) beside torch +cu130
mkdir -p "$src/cu12"
printf 'int cudaRuntimeGetVersion(int *v){*v=12080;return 0;}\n' >"$src/cudart12.c"
$CC -shared -fPIC -o "$src/cu12/libcudart.so.12" -Wl,-soname,libcudart.so.12 "$src/cudart12.c"
printf 'int cudaRuntimeGetVersion(int *);\nint PyInit__C(void){int v;return cudaRuntimeGetVersion(&v);}\n' >"$src/ctc.c"
so "$SP/fast_ctc/_C.cpython-311-x86_64-linux-gnu.so" "$src/ctc.c" -L"$src/cu12" -l:libcudart.so.12
printf 'import torch\n' >"$SP/fast_ctc/__init__.py"
dist fast-ctc 0.2.0+cu128 fast_ctc/__init__.py fast_ctc/_C.cpython-311-x86_64-linux-gnu.so

# a healthy extension built against this torch
cat >"$src/good.cpp" <<'C'
namespace c10 { namespace cuda { int device_count(); } }
extern "C" int PyInit__ops(void) { return c10::cuda::device_count(); }
C
soxx "$SP/good_ops/_ops.cpython-311-x86_64-linux-gnu.so" "$src/good.cpp" -L"$SP/torch/lib" -lc10
printf 'import torch\nfrom . import _ops\n' >"$SP/good_ops/__init__.py"
dist good-ops 1.4.0 good_ops/__init__.py good_ops/_ops.cpython-311-x86_64-linux-gnu.so

# a helper library copied in by hand: no RECORD lists it
printf 'int helper(void){return 1;}\n' >"$src/helper.c"
so "$SP/good_ops/libhelper_copied.so" "$src/helper.c"

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
