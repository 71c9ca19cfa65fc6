#!/bin/sh
# The device check: abiscope's GPU verdicts against a real NVIDIA GPU and
# driver, in one short run (docs/cuda.md, "On a real GPU").
#
#   sh tests/device/run.sh [--dry-run] [OUTDIR]
#
# OUTDIR (default $OUT, else build/device) receives device.json (every
# fact, prediction and outcome) and device.tap (TAP, then "N passed, N
# failed"); the TAP lines are also printed.  Exit status 0 when every
# comparison agrees.
#
# What it needs on the GPU machine: python3, the NVIDIA driver, and either
# a compiler with abiscope's build dependencies or the carried
# tests/device/prebuilt/abiscope; the kernels, runners and extension modules
# come from tests/device/prebuilt (made here by tests/device/prepare.sh,
# git-ignored, carried with the working tree), or are rebuilt there when it
# has nvcc and no prebuilt folder.  No network.
#
# --dry-run (any machine, in `make test`): builds everything (prepare.sh
# when nvcc is here and the folder is older than its sources), runs every
# part that needs no GPU (abiscope's verdicts for an H200 and a 580 driver
# against the documented rules, the runners and imports failing the way a
# machine without a driver makes them fail), and checks this script and
# prepare.sh with `sh -n` and shellcheck (when installed) and check.py with
# py_compile.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dry=0
if [ "${1:-}" = --dry-run ]; then
	dry=1
	shift
fi
R=${1:-${OUT:-$top/build/device}}
mkdir -p "$R" || exit 2
R=$(cd "$R" && pwd)
PRE=${DEVICE_PREBUILT:-$here/prebuilt}
t0=$(date +%s)
fails=0
# lines printed here go into device.tap too (check.py adds them)
: >"$R/run.tap"
say() {
	echo "$*"
	echo "$*" >>"$R/run.tap"
}
nok() {
	say "not ok - $1"
	fails=$((fails + 1))
}

# 1. the script itself is well formed
if [ $dry = 1 ]; then
	for s in "$here/run.sh" "$here/prepare.sh"; do
		if sh -n "$s"; then say "ok - device: sh -n $(basename "$s")"; else nok "device: sh -n $(basename "$s")"; fi
		if command -v shellcheck >/dev/null 2>&1; then
			if out=$(shellcheck -s sh "$s" 2>&1); then
				say "ok - device: shellcheck $(basename "$s")"
			else
				nok "device: shellcheck $(basename "$s")"
				printf '%s\n' "$out" | head -20 | sed 's/^/#   /' | tee -a "$R/run.tap"
			fi
		else
			say "ok - device: shellcheck $(basename "$s") # SKIP shellcheck is not installed (Debian: shellcheck)"
		fi
	done
	if python3 -m py_compile "$here/check.py" 2>"$R/py_compile.txt"; then
		say "ok - device: check.py compiles"
	else
		nok "device: check.py compiles"
		sed 's/^/#   /' "$R/py_compile.txt"
	fi
fi

# 2. abiscope: the one under test ($ABISCOPE), else built from this tree,
#    else the carried binary
provenance=
A=${ABISCOPE_BINARY:-${ABISCOPE:-}}	# the binary, not tests/run.sh's recording wrapper
if [ -n "$A" ] && [ -x "$A" ]; then
	provenance="\$ABISCOPE"
elif [ -x "$top/build/abiscope" ] && "$top/build/abiscope" --help >/dev/null 2>&1; then
	A=$top/build/abiscope
	provenance="build/abiscope (already built)"
elif command -v make >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 &&
	make -C "$top" -j"$(nproc 2>/dev/null || echo 4)" DEPS=skip abiscope >"$R/make.log" 2>&1 &&
	"$top/build/abiscope" --help >/dev/null 2>&1; then
	A=$top/build/abiscope
	provenance="built here with make (log: make.log)"
elif [ -x "$PRE/abiscope/abiscope" ] && "$PRE/abiscope/abiscope" --help >/dev/null 2>&1; then
	A=$PRE/abiscope/abiscope
	provenance="carried prebuilt/abiscope (make failed or absent: see make.log)"
else
	nok "device: no abiscope runs here (make.log: $(tail -1 "$R/make.log" 2>/dev/null))"
	echo "0 passed, 1 failed"
	exit 1
fi
say "# abiscope: $A ($provenance)"

# 3. the kernels, runners and modules: prepare.sh when nvcc is here (it
#    keeps what is newer than its sources), else the carried folder
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ -x "$NVCC" ]; then
	if NVCC=$NVCC sh "$here/prepare.sh" "$PRE" >"$R/prepare.txt" 2>&1; then
		say "ok - device: prepare.sh: the kernels, runners and modules ($(tail -1 "$R/prepare.txt"))"
	else
		nok "device: prepare.sh"
		sed 's/^/#   /' "$R/prepare.txt" | tail -20
	fi
elif [ ! -f "$PRE/prepared.txt" ]; then
	if [ $dry = 1 ]; then
		say "ok - device: the GPU parts # SKIP no nvcc here and no prepared folder ($PRE)"
		[ $fails = 0 ]
		exit
	fi
	nok "device: no prepared folder ($PRE) and no nvcc to make one"
else
	say "# prepared folder: $(head -1 "$PRE/prepared.txt")"
fi

# 4. everything else
dryflag=
[ $dry = 1 ] && dryflag=--dry-run
if command -v python3 >/dev/null 2>&1; then
	python3 "$here/check.py" --prebuilt "$PRE" --out "$R" --abiscope "$A" --provenance "$provenance" \
		--pre-tap "$R/run.tap" $dryflag
	status=$?
else
	nok "device: python3 is not installed"
	status=1
fi
say "# device check: $(($(date +%s) - t0)) s in all"
[ $fails = 0 ] && [ $status = 0 ]
