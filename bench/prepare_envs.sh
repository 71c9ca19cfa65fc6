#!/bin/sh
# prepare_envs.sh: real PyTorch CUDA environments from PyPI, in a cache
# directory outside the repository, for the benchmark and the field tests.
#
#   sh bench/prepare_envs.sh [ENV...]      default: every env below
#
# Environments (venvs under $ABISCOPE_CACHE/envs, default ~/.cache/abiscope):
#   torch-cu130      torch 2.14.1 (CUDA 13.0 build) with its nvidia-* wheels,
#                    and sglang-kernel 0.4.10, which is built for torch 2.14.1:
#                    a consistent environment where everything should load.
#   sgl-kernel-break the same torch with sgl-kernel 0.3.21, built for torch
#                    2.9 and CUDA 12, plus the CUDA 12 runtime, nvrtc and
#                    cuBLAS wheels it needs (nvidia/{cuda_runtime,cuda_nvrtc,
#                    cublas}/lib, reached through LD_LIBRARY_PATH as users do):
#                    `import sgl_kernel` fails with an undefined
#                    c10::cuda::c10_cuda_check_implementation(int, ..., int, bool)
#                    (torch >= 2.10 takes an unsigned line number); without
#                    the LD_LIBRARY_PATH it fails first on libnvrtc.so.12.
#   bench-tools      the Python peers: pyelftools and auditwheel.
#
# Every package, dependencies included, is pinned by bench/constraints/
# <env>.txt (pip -c), so an env made later holds the same binaries.
# Idempotent: an env whose marker file records the same requirements and
# whose installed packages match its constraints is reused as is.  When the package index cannot be reached the script says
# so and exits 0 without doing anything (exit status 0, "SKIP" on stdout),
# so callers can skip what depends on the envs.  Nothing is ever written
# into the repository; no downloaded file belongs in it.
#
# Environment: ABISCOPE_CACHE (cache root), ABISCOPE_PYTHON (the python
# whose venv module makes the envs; default the pyenv 3.11.7 build when it
# exists, else python3 on PATH).
set -eu

cache=${ABISCOPE_CACHE:-$HOME/.cache/abiscope}
envs=$cache/envs
py=${ABISCOPE_PYTHON:-}
if [ -z "$py" ]; then
	if [ -x /root/.pyenv/versions/3.11.7/bin/python3 ]; then
		py=/root/.pyenv/versions/3.11.7/bin/python3
	else
		py=$(command -v python3)
	fi
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# name -> requirements (pinned: the benchmark and the field tests rely on
# exactly these binaries).  --no-deps entries are installed after the rest
# without their dependencies, so they cannot pull in another torch.
reqs() {
	case $1 in
	torch-cu130) echo "torch==2.14.1 sglang-kernel==0.4.10" ;;
	sgl-kernel-break) echo "torch==2.14.1" ;;
	bench-tools) echo "pyelftools==0.33 auditwheel==6.8.2" ;;
	*) return 1 ;;
	esac
}
nodeps() {
	case $1 in
	sgl-kernel-break) echo "sgl-kernel==0.3.21 nvidia-cuda-runtime-cu12==12.9.79" \
		"nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cublas-cu12==12.9.3.13" ;;
	*) echo "" ;;
	esac
}

index_reachable() {
	timeout 60 "$py" -m pip index versions pip >/dev/null 2>&1
}

here=$(cd "$(dirname "$0")" && pwd)

# True when every pin of the env's constraints file is what is installed.
pins_installed() {
	c=$here/constraints/$1.txt
	[ -f "$c" ] || return 0
	grep -v '^#' "$c" | grep . | while read -r pin; do
		grep -qixF "$pin" "$2/.abiscope-freeze" || { echo "stale: $pin"; return 1; }
	done >/dev/null
}

prepare() {
	name=$1
	want="$(reqs "$name") | nodeps: $(nodeps "$name")"
	dir=$envs/$name
	marker=$dir/.abiscope-env
	if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && pins_installed "$name" "$dir"; then
		echo "reuse $dir"
		return 0
	fi
	if [ "${reachable:-}" = "" ]; then
		if index_reachable; then reachable=yes; else reachable=no; fi
	fi
	if [ "$reachable" = no ]; then
		echo "SKIP $name: the package index is unreachable (pip index versions failed)"
		return 0
	fi
	echo "create $dir: $want"
	rm -rf "$dir"
	mkdir -p "$envs"
	"$py" -m venv "$dir"
	cons=
	[ -f "$here/constraints/$name.txt" ] && cons="-c $here/constraints/$name.txt"
	# shellcheck disable=SC2046,SC2086
	"$dir/bin/python" -m pip install --quiet $cons $(reqs "$name")
	nd=$(nodeps "$name")
	if [ -n "$nd" ]; then
		# shellcheck disable=SC2086
		"$dir/bin/python" -m pip install --quiet --no-deps $cons $nd
	fi
	"$dir/bin/python" -m pip list --format=freeze >"$dir/.abiscope-freeze"
	printf '%s\n' "$want" >"$marker"
	echo "ready $dir"
}

if [ $# -eq 0 ]; then
	set -- bench-tools torch-cu130 sgl-kernel-break
fi
for e in "$@"; do
	if ! reqs "$e" >/dev/null; then
		echo "prepare_envs.sh: unknown env '$e' (torch-cu130, sgl-kernel-break, bench-tools)" >&2
		exit 2
	fi
	prepare "$e"
done
