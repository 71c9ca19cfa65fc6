#!/bin/sh
# Builds everything the device check (tests/device/run.sh) launches, with
# nvcc, into one folder that can travel to a GPU machine without a toolkit:
#   sh tests/device/prepare.sh [DIR]        (default tests/device/prebuilt)
#   NVCC=/path/to/nvcc  ABISCOPE=build/abiscope  PYTHON=/usr/bin/python3
# DIR/kernels/*.fatbin   one image per case (CASES below); future.fatbin
#                        holds PTX whose .version is raised past every ISA
# DIR/bin/drv_runner     loads an image with the driver API and launches k
# DIR/bin/rt_runner      the same through the static CUDA runtime
# DIR/site/              extension modules for the `check` case, with the
#                        libcudart.so.13 a wheel would ship beside them
# DIR/abiscope/          the abiscope binary and the non-glibc libraries it
#                        links (found through its DT_RPATH), for a machine
#                        that cannot build it
# DIR/prepared.txt       the toolkit and what was built
# Outputs newer than every source are kept; abiscope is copied each time.
# Exit status 0 when everything was built; 1 with the failing command.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
D=${1:-$here/prebuilt}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# the normal build, not a sanitizer one; the binary itself, not tests/run.sh's recording wrapper
ABISCOPE=${ABISCOPE_BINARY:-${ABISCOPE:-$top/build/abiscope}}
: "${CC:=cc}"
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
[ -x "$NVCC" ] || { echo "prepare: no nvcc ($NVCC)" >&2; exit 1; }
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
FATBINARY=$CUDA/bin/fatbinary
mkdir -p "$D/kernels" "$D/bin" "$D/site/nvidia/cuda_runtime/lib" "$D/abiscope/lib"
log=$D/prepare.log
: >"$log"
# an output newer than every source is not built again
fresh() {
	[ -f "$1" ] || return 1
	for src in "$here"/prepare.sh "$here"/*.cu "$here"/*.c; do
		# shellcheck disable=SC3013 # -nt: dash, bash and busybox sh have it
		[ "$src" -nt "$1" ] && return 1
	done
	return 0
}
run() {
	echo "+ $*" >>"$log"
	"$@" >>"$log" 2>&1 || { echo "prepare: failed: $*" >&2; tail -20 "$log" >&2; exit 1; }
}

# name:-gencode list (arch=compute_XY,code=...) for the one kernel
CASES="sm_80:compute_80,sm_80 sm_86:compute_86,sm_86 sm_89:compute_89,sm_89 sm_90:compute_90,sm_90
sm_90a:compute_90a,sm_90a sm_100:compute_100,sm_100 sm_120:compute_120,sm_120
compute_80:compute_80,compute_80 compute_90:compute_90,compute_90
fat_sm80_ptx80:compute_80,[sm_80,compute_80] fat_sm90_ptx90:compute_90,[sm_90,compute_90]"
pids=
for c in $CASES; do
	name=${c%%:*}
	arch=${c#*:}
	fresh "$D/kernels/$name.fatbin" && continue
	run "$NVCC" -fatbin -o "$D/kernels/$name.fatbin" "$here/kernel.cu" \
		-gencode "arch=${arch%%,*},code=${arch#*,}" &
	pids="$pids $!"
done
# PTX of an ISA no driver accepts: nvcc's own, its .version raised
if ! fresh "$D/kernels/future.fatbin"; then
	run "$NVCC" -ptx -arch=compute_90 -o "$D/kernels/future.ptx" "$here/kernel.cu"
	sed -i 's/^\.version [0-9.]*$/.version 9.9/' "$D/kernels/future.ptx"
	grep -q '^\.version 9\.9$' "$D/kernels/future.ptx" || { echo "prepare: no .version line in nvcc's PTX" >&2; exit 1; }
	run "$FATBINARY" --create="$D/kernels/future.fatbin" "--image3=kind=ptx,sm=90,file=$D/kernels/future.ptx"
fi
fresh "$D/bin/drv_runner" || run "$CC" -std=c11 -O2 -Wall -Wextra -o "$D/bin/drv_runner" "$here/drv_runner.c" -ldl
fresh "$D/bin/rt_runner" || run "$NVCC" -O2 -o "$D/bin/rt_runner" "$here/rt_runner.cu" -gencode arch=compute_90,code=sm_90

# extension modules: a wheel's layout, libcudart.so.13 in nvidia/cuda_runtime/lib
py_inc=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
cp "$CUDA/lib64/libcudart.so.13" "$D/site/nvidia/cuda_runtime/lib/" 2>/dev/null ||
	cp "$CUDA"/lib64/libcudart.so.[0-9]* "$D/site/nvidia/cuda_runtime/lib/"
ext() { # ext NAME RPATH GENCODE...
	n=$1 rp=$2
	shift 2
	fresh "$D/site/$n.abi3.so" && return 0
	run "$NVCC" -O2 -shared -Xcompiler -fPIC,-fvisibility=hidden --cudart=shared -DMODNAME="$n" -I"$py_inc" \
		${rp:+-Xlinker -rpath -Xlinker "$rp"} -o "$D/site/$n.abi3.so" "$here/ext.cu" "$@"
}
# shellcheck disable=SC2016 # $ORIGIN is for the loader
ORIGIN_RT='$ORIGIN/nvidia/cuda_runtime/lib'
ext cu_ok "$ORIGIN_RT" -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 &
pids="$pids $!"
ext cu_sm80 "$ORIGIN_RT" -gencode arch=compute_80,code=sm_80 &
pids="$pids $!"
ext cu_ptx80 "$ORIGIN_RT" -gencode arch=compute_80,code=compute_80 &
pids="$pids $!"
ext cu_nort "" -gencode arch=compute_90,code=sm_90 &
pids="$pids $!"
fresh "$D/site/cu_drv.abi3.so" || run "$CC" -O2 -shared -fPIC -I"$py_inc" -o "$D/site/cu_drv.abi3.so" \
	"$here/drv_ext.c" -L"$CUDA/lib64/stubs" -lcuda
for p in $pids; do wait "$p" || exit 1; done

# abiscope and what it links beyond glibc, for a machine that cannot build it
if [ -x "$ABISCOPE" ]; then
	rm -f "$D/abiscope/abiscope"
	cp "$ABISCOPE" "$D/abiscope/abiscope"
	ldd "$ABISCOPE" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
		case $(basename "$lib") in
		libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
		*) cp -L "$lib" "$D/abiscope/lib/" ;;
		esac
	done
	if command -v patchelf >/dev/null 2>&1; then
		# shellcheck disable=SC2016
		run patchelf --force-rpath --set-rpath '$ORIGIN/lib' "$D/abiscope/abiscope"
	fi
fi
{
	echo "prepared $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
	"$NVCC" --version | tail -2
	(cd "$D" && find . -type f ! -name prepare.log ! -name prepared.txt | sort)
} >"$D/prepared.txt"
echo "prepare: built $(find "$D" -type f | wc -l) files into $D ($(du -sh "$D" | cut -f1))"
