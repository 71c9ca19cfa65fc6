#!/bin/sh
# Two CUDA majors of one library in one process (cuda-major-mismatch, "one
# process would load X and Y"): a module linking libcudart.so.12 and .13
# and libcublas.so.12 and .13.  The oracle is the real import in a real
# venv: the libraries the process maps (/proc/self/maps) after it.  The
# findings come one per pair, in the order the process loads them (the
# check sorts by stem and major instead of comparing every pair: issue 25).
. "$(dirname "$0")/lib.sh"
fixture_dir two_majors
python_venv "$FX/env"
L=$SP/nvlibs
mkdir -p "$L" "$SP/pkg"
: >"$SP/pkg/__init__.py"
for so in libcudart.so.12 libcudart.so.13 libcublas.so.12 libcublas.so.13; do
	fn=$(echo "$so" | tr -c 'a-z0-9\n' _)
	printf 'int %s(void) { return 1; }\n' "$fn" >"$FX/$fn.c"
	$CC -shared -fPIC -Wl,-soname,"$so" -o "$L/$so" "$FX/$fn.c" || fail "build $so"
done
py_module "$SP/pkg/_m$suffix" _m -Wl,--no-as-needed -L"$L" -l:libcudart.so.12 -l:libcublas.so.12 -l:libcublas.so.13 \
	-l:libcudart.so.13 -Wl,-rpath,'$ORIGIN/../nvlibs'

# the oracle: what the real process maps after `import pkg._m`, in load order
real=$(cd /tmp && "$V/bin/python" -c '
import pkg._m
seen = []
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "/nvlibs/" in p and p.rsplit("/", 1)[1] not in seen:
        seen.append(p.rsplit("/", 1)[1])
print(" ".join(sorted(seen)))' 2>&1)
expect_eq "$real" "libcublas.so.12 libcublas.so.13 libcudart.so.12 libcudart.so.13" \
	"oracle: the real import maps both majors of both libraries"

$ABISCOPE check --json "$V" >"$FX/check.json" 2>"$FX/check.err"
got=$(jq_py "'\n'.join(f['title'] for f in j['findings'] if f['id'] == 'cuda-major-mismatch')" <"$FX/check.json")
expect_eq "$got" "one process would load libcudart.so.12 and libcudart.so.13 (CUDA 12 and 13)
one process would load libcublas.so.12 and libcublas.so.13 (CUDA 12 and 13)" \
	"check: one finding per library loaded in two majors, in the order the loader meets them"
finish
