#!/bin/sh
# Snapshots across machines: the machine, AT_HWCAP(2) and the page size a
# snapshot records (checked against the system's own answers: uname -m,
# getconf PAGESIZE, getauxval), old snapshots without them, and a binary
# of another machine placed on a host (check --host), in diff and in fleet.
#
# The binary of "another machine" is this machine's extension with its
# e_machine set to aarch64 (183): all the loader reads of a file of another
# machine is its header, and the real loader of this machine is the oracle
# for what it does with one (dlopen by path: "cannot open shared object
# file: No such file or directory").  A host of another machine is the
# arm64 root of the shared aarch64 oracle (snapshot --root) where one is
# set up, else this host's snapshot with its machine fields rewritten (the
# report logic only; tests/field/arm_env.py holds the real thing).
. "$(dirname "$0")/lib.sh"
fixture_dir host_machine
pybin=$(python3 -c "import os, sys; print(os.path.realpath(sys.executable))")	# not a pyenv shim: the copy runs it
H=$FX/H
# the venv's lib/pythonX.Y is the one this python3 searches (3.11 on Debian 12, 3.12 on Ubuntu 24.04)
PYV=$(python3 -c "import sys; print('%d.%d' % sys.version_info[:2])")
PYFULL=$(python3 -c "import platform; print(platform.python_version())")
SP=$H/lib/python$PYV/site-packages
mkdir -p "$H/bin" "$SP/pkg" "$SP/pkg-1.0.dist-info"
ln -sf "$pybin" "$H/bin/python3"
printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' "$(dirname "$pybin")" "$PYFULL" >"$H/pyvenv.cfg"
SUFFIX=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
MOD=_m$SUFFIX
printf 'int PyInit__m(void) { return 0; }\n' >"$FX/m.c"
$CC -shared -fPIC -o "$SP/pkg/$MOD" "$FX/m.c"
: >"$SP/pkg/__init__.py"
printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
printf 'pkg/%s,,\npkg/__init__.py,,\npkg-1.0.dist-info/RECORD,,\n' "$MOD" >"$SP/pkg-1.0.dist-info/RECORD"

# the same extension, tagged for aarch64 (e_machine at offset 18)
OSP=$FX/other/lib/python$PYV/site-packages	# a site directory: placed where the host has pkg
mkdir -p "$OSP/pkg"
cp "$SP/pkg/__init__.py" "$OSP/pkg/"
python3 - "$SP/pkg/$MOD" "$OSP/pkg/$MOD" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[18:20] = struct.pack("<H", 183)
open(sys.argv[2], "wb").write(bytes(b))
PY

# ---- the fields, against the kernel's own answers
$ABISCOPE snapshot --label h --no-driver "$H" -o "$FX/h.json" >/dev/null 2>&1
expect_eq "$?" 0 "snapshot: exit 0"
expect_eq "$(jq_py "j['machine'], j['summary']['machine']" <"$FX/h.json")" "$(uname -m) $(uname -m)" \
	"snapshot: the machine is uname -m's"
expect_eq "$(jq_py "j['loader']['page_size'], j['summary']['page_size']" <"$FX/h.json")" \
	"$(getconf PAGESIZE) $(getconf PAGESIZE)" "snapshot: the page size is the kernel's (getconf PAGESIZE)"
# what glibc's loader holds as AT_HWCAP(2) (GLRO(dl_hwcap): the kernel's on
# aarch64; on x86_64 glibc replaces it with its own HWCAP_X86_64 bits)
printf '#include <stdio.h>\n#include <sys/auxv.h>\nint main(void) { printf("%%lu %%lu\\n", getauxval(AT_HWCAP), getauxval(AT_HWCAP2)); return 0; }\n' >"$FX/auxv.c"
$CC -o "$FX/auxv" "$FX/auxv.c"
expect_eq "$(jq_py "j['loader']['hwcap'] % (1 << 64), j['loader']['hwcap2'] % (1 << 64)" <"$FX/h.json")" \
	"$("$FX/auxv")" "snapshot: AT_HWCAP and AT_HWCAP2 are what the loader holds (getauxval)"

# ---- a snapshot from before the fields reads, and gives the same verdicts
python3 - "$FX/h.json" "$FX/h-old.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j.pop("machine")
for k in ("hwcap", "hwcap2", "page_size"):
    j["loader"].pop(k)
for k in ("machine", "page_size"):
    j["summary"].pop(k)
json.dump(j, open(sys.argv[2], "w"))
PY
verdicts() { $ABISCOPE check --json --host "$1" $2 | jq_py "sorted((m['module'], m['status'], m['error']) for e in j['environments'] for d in e['distributions'] for m in d['modules'])"; }
expect_eq "$(verdicts "$FX/h-old.json")" "$(verdicts "$FX/h.json")" \
	"an old snapshot (no machine, hwcaps or page size) reads, with the same verdicts"
$ABISCOPE diff --json "$FX/h-old.json" "$FX/h.json" >"$FX/diff_old.json" 2>&1
expect_eq "$(jq_py "[d['id'] for d in j['differences'] if d['id'] in ('diff-machine', 'diff-page-size')]" <"$FX/diff_old.json")" \
	"[]" "diff old and new snapshot of one host: no machine or page size difference (x86_64 assumed)"
$ABISCOPE fleet --json "$FX/h-old.json" "$FX/h.json" >"$FX/fleet_old.json" 2>&1
expect_eq "$(jq_py "len(j['groups'])" <"$FX/fleet_old.json")" 1 "fleet: the old and the new snapshot of one host are one group"

# ---- a binary of another machine placed on the host: the real loader's answer, one cause
copy_oracle() {	# the real import of pkg in a copy of H where the aarch64-tagged file replaced it
	rm -rf "$FX/H2" && cp -a "$H" "$FX/H2" && cp "$OSP/pkg/$MOD" "$FX/H2/lib/python$PYV/site-packages/pkg/$MOD"
	"$FX/H2/bin/python3" -c "
try:
    import pkg._m
    print('imports')
except ImportError as e:
    print(e)"
}
real=$(copy_oracle)
expect_eq "$real" "$FX/H2/lib/python$PYV/site-packages/pkg/$MOD: cannot open shared object file: No such file or directory" \
	"the real import of an aarch64 file on this host: glibc's 'No such file or directory'"
$ABISCOPE check --json --host "$FX/h.json" "$OSP/pkg" >"$FX/placed.json" 2>"$FX/placed.err"
expect_eq "$?" 1 "check --host of the aarch64 build: fails (exit 1)"
expect_eq "$(jq_py "[m['error'] for e in j['environments'] for d in e['distributions'] for m in d['modules'] if m['module']=='pkg._m']" <"$FX/placed.json")" \
	"['$SP/pkg/$MOD: cannot open shared object file: No such file or directory']" \
	"check --host: placed over the host's own file, the placed file is judged (not the host's recorded header): the real loader's error"
$ABISCOPE check --color never --host "$FX/h.json" "$OSP/pkg" >"$FX/placed.txt" 2>&1
expect_contains "$(cat "$FX/placed.txt")" "1 root cause" "check --host: one root cause"
expect_contains "$(cat "$FX/placed.txt")" "error[wrong-elf] $SP/pkg/$MOD is ELFCLASS64 aarch64, the process is ELFCLASS64" \
	"check --host: the cause is the machine, in one line"

# ---- Debian's python3.11 without python3-minimal's python3 link (the arm64
# oracle root's layout): the prefix's pythonX.Y is its interpreter
P=$FX/pfx
mkdir -p "$P/usr/bin" "$P/usr/lib/python3.11" "$P/usr/local/lib/python3.11/dist-packages/pkg"
cp "$pybin" "$P/usr/bin/python3.11"
cp "$SP/pkg/$MOD" "$SP/pkg/__init__.py" "$P/usr/local/lib/python3.11/dist-packages/pkg/"
expect_eq "$($ABISCOPE check --json --no-driver --root "$P" /usr | jq_py "j['environments'][0]['python'], j['environments'][0]['interpreter_problem']")" \
	"/usr/bin/python3.11 None" "a prefix with only bin/python3.11: that is its interpreter"

# ---- a host of another machine: diff and fleet say so first, and compare no symbols
ARM=${ARM_DIR:-/var/tmp/aarch64-oracle}/root
if [ -x "$ARM/usr/bin/python3.11" ] && $ABISCOPE snapshot --root "$ARM" --label arm --no-driver -o "$FX/arm.json" \
	/usr/bin/python3.11 >/dev/null 2>&1; then
	how="the arm64 root's snapshot"
else
	how="this host's snapshot relabelled aarch64"
	python3 - "$FX/h.json" "$FX/arm.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["machine"] = j["summary"]["machine"] = "aarch64"
j["label"] = j["summary"]["label"] = "arm"
j["loader"]["machine"] = 183
for f in j["files"]:
    if f.get("type") == "elf":
        f["elf"]["machine"] = 183
json.dump(j, open(sys.argv[2], "w"))
PY
fi
expect_eq "$(jq_py "j['summary']['machine']" <"$FX/arm.json")" aarch64 "the aarch64 host's snapshot says aarch64 ($how)"
$ABISCOPE diff --json "$FX/h.json" "$FX/arm.json" >"$FX/diff_arm.json" 2>&1
expect_eq "$?" 1 "diff x86_64 host, aarch64 host: exit 1 ($how)"
expect_eq "$(jq_py "j['differences'][0]['id'], j['differences'][0]['a'], j['differences'][0]['b']" <"$FX/diff_arm.json")" \
	"diff-machine $(uname -m) aarch64" "diff: the machine is the first difference ($how)"
expect_eq "$(jq_py "[d['id'] for d in j['differences'] if d['id'] in ('diff-exports-removed', 'diff-binary-changed', 'diff-gpu-code')]" <"$FX/diff_arm.json")" \
	"[]" "diff: across machines no symbol or binary lists ($how)"
$ABISCOPE fleet --json "$FX/h.json" "$FX/h-old.json" "$FX/arm.json" >"$FX/fleet_arm.json" 2>&1
expect_eq "$(jq_py "j['groups'][1]['differences'][0]" <"$FX/fleet_arm.json")" \
	"machine aarch64 (baseline: $(uname -m)): binaries built for one do not load on the other" \
	"fleet: the machine is the outlier's first difference ($how)"
finish
