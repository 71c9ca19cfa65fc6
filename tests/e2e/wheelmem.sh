#!/bin/sh
# abiscope wheel keeps what a verdict reads, not the members (issue 13, item 8).
#
# The environment has a libc10 with c10_cuda_check_implementation(int line).
# Wheels are made at test time with Python's zipfile:
#  1. big: an extension module of 96 MiB, nearly all of it code (.text from
#     assembler) and a .nv_fatbin with an uncompressed cubin and a big
#     compressed PTX entry, built against the unsigned signature.  Its
#     verdict, with and without --gpu, must equal abiscope's verdict on the
#     module really unpacked into a copy of the environment, and the peak
#     RSS must stay under the member's size (before: twice the member).
#  2. 32 members of 64 MiB of zeros in 2 MB: refused (the ratio).
#  3. 17 members of 64 MiB that start like ELF files but are not (nothing to
#     leave out, so each would be kept whole): refused once what a verdict
#     keeps passes 1 GiB, naming the wheel, in bounded memory (before: 2 GiB
#     and more, then a verdict).
. "$(dirname "$0")/lib.sh"
fixture_dir wheelmem
. "$(dirname "$0")/lib_wheel.sh"
wheel_env
# the inputs (about 460 MB: wheels, the unpacked copy, the sources) go when
# the suite ends, however it ends; the small outputs stay for a failure's look
trap 'rm -rf "$FX/src" "$FX/installed" "$FX"/*.whl' EXIT
c10 "$SP/torch/lib/libc10.so" int
c10 "$FX/src/libc10_new.so" 'unsigned int'
printf '__version__ = "2.9.0"\n' >"$SP/torch/version.py"
printf 'from .version import __version__\n' >"$SP/torch/__init__.py"
mkdir -p "$SP/torch-2.9.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n' >"$SP/torch-2.9.0.dist-info/METADATA"
printf 'torch/lib/libc10.so,,\ntorch/version.py,,\ntorch/__init__.py,,\n' >"$SP/torch-2.9.0.dist-info/RECORD"

# ---- 1. a 96 MiB module: code, a fatbin, and the tables a verdict reads
cat >"$FX/src/kern.c" <<'C'
__attribute__((section(".text.kern"))) void kern(void) {}
C
$CC -c -o "$FX/src/kern.o" "$FX/src/kern.c"	# stands in for a cubin: an ELF with a .text.<kernel>
python3 - "$FX/src" <<'PY'
import os, struct, sys
src = sys.argv[1]
# 96 MiB of code that deflate halves (4 bits of entropy a byte), fast to make
code = os.urandom(96 << 20).translate(bytes(range(16)) * 16)
open(src + "/code.bin", "wb").write(code)
open(src + "/code12.bin", "wb").write(code[:12 << 20])
def entry(kind, sm, payload, flags):
    hdr = struct.pack("<HHIQIIHHIQQIIQ", kind, 0x0101, 64, len(payload), 0, 0, 0, 7, sm, 0, flags | 0x11, 0, 0,
                      len(payload))
    return hdr + payload
cubin = open(src + "/kern.o", "rb").read()
cubin += b"\0" * (-len(cubin) % 8)
ptx = os.urandom(8 << 20).translate(bytes(range(16)) * 16)
body = entry(2, 70, cubin, 0) + entry(1, 70, ptx, 0x8000)
open(src + "/fatbin.bin", "wb").write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
PY
asm() {	# asm OUT.S CODE.bin [FATBIN]: code, and the fatbin in .nv_fatbin
	{ printf '\t.section .text.bulk,"ax",@progbits\n\t.incbin "%s"\n' "$2"
	  [ -z "$3" ] || printf '\t.section .nv_fatbin,"a",@progbits\n\t.balign 8\n\t.incbin "%s"\n' "$3"
	  printf '\t.section .note.GNU-stack,"",@progbits\n'; } >"$1"
}
asm "$FX/src/big.S" "$FX/src/code.bin" "$FX/src/fatbin.bin"
asm "$FX/src/bad.S" "$FX/src/code12.bin"
ext() {	# ext OUT NAME LINE_TYPE LIBC10 ASM
	cat >"$FX/src/$2.cpp" <<C
namespace c10 { namespace cuda { void c10_cuda_check_implementation(int, const char *, const char *, $3, bool); } }
extern "C" int PyInit_$2(void) { c10::cuda::c10_cuda_check_implementation(0, "", "", 1, false); return 0; }
C
	$CXX -shared -fPIC -o "$1" "$FX/src/$2.cpp" "$5" -L"$(dirname "$4")" -l:"$(basename "$4")" \
		-Wl,-rpath,'$ORIGIN/../torch/lib'
}
# _big imports (it is built against this libc10), _bad does not (the unsigned line)
ext "$FX/src/_big.so" _big int "$SP/torch/lib/libc10.so" "$FX/src/big.S"
ext "$FX/src/_bad.so" _bad 'unsigned int' "$FX/src/libc10_new.so" "$FX/src/bad.S"
python3 - "$FX" "$suffix" <<'PY'
import os, sys, zipfile
fx, suffix = sys.argv[1:3]
def wheel(fname, name, members, level=6):
    di = "%s-1.0.dist-info" % name
    with zipfile.ZipFile(fx + "/" + fname, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        z.writestr(di + "/METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name)
        z.writestr(di + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n")
        z.writestr(di + "/RECORD", "")
        for arc, data in members:
            z.writestr(arc, data)
wheel("big-1.0-py3-none-any.whl", "big", [("big/_big" + suffix, open(fx + "/src/_big.so", "rb").read()),
                                          ("big/_bad" + suffix, open(fx + "/src/_bad.so", "rb").read()),
                                          ("big/__init__.py", "")], level=1)
wheel("zeros-1.0-py3-none-any.whl", "zeros", [("zeros/z%d.bin" % i, bytes(64 << 20)) for i in range(32)])
# ELF-looking garbage that deflate cannot squeeze past the ratio check (one byte in 64 random)
junk = bytearray(64 << 20)
junk[::64] = os.urandom(len(junk[::64]))
junk[:4] = b"\x7fELF"
wheel("junk-1.0-py3-none-any.whl", "junk", [("junk/part%d.so" % i, bytes(junk)) for i in range(17)], level=1)
PY


rss() {	# rss OUT CMD...: runs CMD, prints its exit status and peak RSS in MiB
	python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "w") as o: rc = subprocess.call(sys.argv[2:], stdout=o, stderr=subprocess.STDOUT)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$@"
}
# the oracle for "after": the wheel really unpacked into a copy of the environment
cp -a "$E" "$FX/installed"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
	"$FX/big-1.0-py3-none-any.whl" "$FX/installed/${SP#"$E"/}"
verdicts() {	# verdicts JSON: the verdicts of the wheel's modules, from check or wheel --json
	python3 -c 'import json, os, sys
d = json.load(open(sys.argv[1]))
norm = lambda s: (s or "").replace(sys.argv[2], sys.argv[3])
if d.get("command") == "wheel":
    for m in d["modules"]:
        print(m["module"], m["imports"], norm(m["error"]))
        for f in m["findings"]:
            print(" ", f["id"], os.path.basename(f.get("object") or ""), norm(f.get("title")))
else:
    for f in d["findings"]:	# of the modules themselves (the RECORD written by pip aside)
        if "/site-packages/big/_" in (f.get("object") or "") and not f["id"].startswith("record-"):
            print(" ", f["id"], os.path.basename(f.get("object") or ""), norm(f.get("title")))' "$1" "$FX/installed" "$E"
}
bound=96
case "$BUILD" in *asan*) bound=200 ;; esac
for gpu in "" "--gpu sm_60"; do
	set -- $(rss "$FX/wheel.json" $ABISCOPE wheel --json $gpu --env "$E" "$FX/big-1.0-py3-none-any.whl")
	expect_eq "$1" 1 "wheel ${gpu:+$gpu }of a 96 MiB module and one that would fail: exit 1"
	if [ "$2" -lt "$bound" ]; then pass "wheel ${gpu:+$gpu }of a 96 MiB module: $2 MiB at most (under $bound)"
	else fail "wheel ${gpu:+$gpu }of a 96 MiB module: $2 MiB at most" "over $bound MiB: the member is kept"; fi
	$ABISCOPE check --json $gpu "$FX/installed" >"$FX/check.json" 2>&1
	verdicts "$FX/wheel.json" >"$FX/wheel.v"
	verdicts "$FX/check.json" >"$FX/check.v"
	expect_contains "$(cat "$FX/wheel.v")" "big._bad False" "wheel ${gpu:+$gpu }of the 96 MiB module: _bad would fail"
	expect_contains "$(cat "$FX/wheel.v")" "undefined-symbol _bad" "wheel ${gpu:+$gpu }of the 96 MiB module: _bad's undefined symbol, from its tables"
	grep -v "^big\\." "$FX/wheel.v" >"$FX/wheel.f"
	if cmp -s "$FX/wheel.f" "$FX/check.v"; then pass "wheel ${gpu:+$gpu }of the 96 MiB module: the findings of the modules really unpacked"
	else fail "wheel ${gpu:+$gpu }of the 96 MiB module: the findings of the modules really unpacked" \
		"wheel: $(cat "$FX/wheel.v")" "check: $(cat "$FX/check.v")"; fi
done

# ---- 2. 32 x 64 MiB of zeros in 2 MB
set -- $(rss "$FX/bad.txt" $ABISCOPE wheel --env "$E" "$FX/zeros-1.0-py3-none-any.whl")
expect_eq "$1" 3 "32 x 64 MiB of zeros in 2 MB: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "zeros-1.0-py3-none-any.whl: members of 2147483" "32 x 64 MiB of zeros: the total, naming the wheel"
[ "$2" -lt "$bound" ]; ok=$?
expect_eq "$ok" 0 "32 x 64 MiB of zeros: refused in $2 MiB"

# ---- 3. 17 x 64 MiB that look like ELF files: more than a verdict may keep
bound=1400
case "$BUILD" in *asan*) bound=1900 ;; esac
set -- $(rss "$FX/bad.txt" $ABISCOPE wheel --env "$E" "$FX/junk-1.0-py3-none-any.whl")
expect_eq "$1" 3 "17 x 64 MiB of ELF-looking junk: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "junk-1.0-py3-none-any.whl: the members a verdict reads" "17 x 64 MiB of junk: says why, naming the wheel"
expect_contains "$(cat "$FX/bad.txt")" "more than 1073741824 bytes once inflated" "17 x 64 MiB of junk: the bound"
if [ "$2" -lt "$bound" ]; then pass "17 x 64 MiB of junk: refused in $2 MiB (under $bound)"
else fail "17 x 64 MiB of junk: refused in $2 MiB" "over $bound MiB"; fi
finish
