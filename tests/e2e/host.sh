#!/bin/sh
# abiscope snapshot / check --host / diff / fleet on simulated hosts.
#
# Two environments are built from C++ source: "A" has torch 2.9.0+cu128
# (c10_cuda_check_implementation(int line), libcudart.so.12 in the CUDA 12
# wheel layout) and "B" torch 2.10.0+cu130 (unsigned line, libcudart.so.13
# in nvidia/cu13).  Each has an extension built against torch 2.9, so it
# imports on A and fails on B.  A fleet of 22 snapshots is 20 of A, one of A
# whose driver line was edited (a host with another driver: there is no GPU
# here to take it from), and one of B.
. "$(dirname "$0")/lib.sh"
fixture_dir host
CXX=${CXX:-c++}
pybin=$(command -v python3)

# env NAME TORCH_VERSION CUDA_MAJOR LINE_TYPE CUDART_DIR
make_env() {
	name=$1 tv=$2 cu=$3 ltype=$4 cdir=$5
	E=$FX/$name
	SP=$E/lib/python3.11/site-packages
	mkdir -p "$E/bin" "$SP/torch/lib" "$SP/$cdir" "$SP/myext"
	ln -sf "$pybin" "$E/bin/python3"
	printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n' "$(dirname "$pybin")" >"$E/pyvenv.cfg"
	printf 'int cudaRuntimeGetVersion(int *v){*v=%s000;return 0;}\n' "$cu" >"$FX/cudart$cu.c"
	$CC -shared -fPIC -o "$SP/$cdir/libcudart.so.$cu" "$FX/cudart$cu.c" -Wl,-soname,libcudart.so.$cu
	cat >"$FX/c10_$name.cpp" <<C
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int e, const char *f, const char *fn, $ltype line, bool a)
{ (void)e; (void)f; (void)fn; (void)line; (void)a; }
int device_count() { return 0; }
} }
C
	$CXX -shared -fPIC -o "$SP/torch/lib/libc10.so" "$FX/c10_$name.cpp" -Wl,-soname,libc10.so
	# torch's own _C binds its own libc10 (consistent on each side: diff shows it only with -v)
	printf 'namespace c10 { namespace cuda { int device_count(); void c10_cuda_check_implementation(int, const char *, const char *, %s, bool); } }\nextern "C" int PyInit__C(void) { c10::cuda::c10_cuda_check_implementation(0, "", "", 1, false); return c10::cuda::device_count(); }\n' "$ltype" >"$FX/C.cpp"
	$CXX -shared -fPIC -o "$SP/torch/_C.cpython-311-x86_64-linux-gnu.so" "$FX/C.cpp" -L"$SP/torch/lib" -lc10 \
		-Wl,--disable-new-dtags,-rpath,'$ORIGIN/lib'
	printf '__version__ = "%s"\ncuda = "%s.0"\n' "$tv" "$cu" >"$SP/torch/version.py"
	printf 'from .version import __version__\n' >"$SP/torch/__init__.py"
	# the extension, built against torch 2.9 (int line)
	cat >"$FX/ext.cpp" <<'C'
namespace c10 { namespace cuda {
void c10_cuda_check_implementation(int, const char *, const char *, int, bool);
} }
extern "C" int PyInit__ext(void) { c10::cuda::c10_cuda_check_implementation(0, "", "", 1, false); return 0; }
C
	# built once, against the first torch (2.9), then installed as is
	[ -f "$FX/ext.so" ] || $CXX -shared -fPIC -o "$FX/ext.so" "$FX/ext.cpp" -L"$SP/torch/lib" -lc10 \
		-Wl,--disable-new-dtags,-rpath,'$ORIGIN/../torch/lib'
	cp "$FX/ext.so" "$SP/myext/_ext.cpython-311-x86_64-linux-gnu.so"
	printf 'import torch\n' >"$SP/myext/__init__.py"
	for d in "torch $tv torch/lib/libc10.so torch/_C.cpython-311-x86_64-linux-gnu.so torch/version.py torch/__init__.py" \
		"myext 1.0 myext/_ext.cpython-311-x86_64-linux-gnu.so myext/__init__.py" \
		"nvidia-cuda-runtime $cu.0.1 $cdir/libcudart.so.$cu"; do
		set -- $d
		n=$1 v=$2
		shift 2
		di=$SP/$(echo "$n" | tr '-' '_')-$v.dist-info
		mkdir -p "$di"
		printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$n" "$v" >"$di/METADATA"
		{ for f in "$@"; do echo "$f,,$(wc -c <"$SP/$f" | tr -d ' ')"; done; echo "$(basename "$di")/RECORD,,"; } >"$di/RECORD"
	done
}
make_env A 2.9.0+cu128 12 int nvidia/cuda_runtime/lib
make_env B 2.10.0+cu130 13 'unsigned int' nvidia/cu13/lib
A=$FX/A B=$FX/B
EXT=lib/python3.11/site-packages/myext/_ext.cpython-311-x86_64-linux-gnu.so

# ---- snapshot
$ABISCOPE snapshot --label host-a --no-driver "$A" -o "$FX/a.json.gz" >"$FX/snap.out" 2>&1
ok=$?
expect_eq "$ok" 0 "snapshot: exit 0"
expect_contains "$(cat "$FX/snap.out")" "torch 2.9.0+cu128" "snapshot: says what it described"
$ABISCOPE snapshot --label host-b --no-driver "$B" -o "$FX/b.json" >/dev/null 2>&1
expect_eq "$(jq_py "j['format'], j['summary']['label'], j['summary']['torch']" <"$FX/b.json")" \
	"abiscope-snapshot host-b 2.10.0+cu130" "snapshot: JSON names its format, host and torch"
expect_eq "$(jq_py "sorted(f['elf'].get('soname','') for f in j['files'] if f['type']=='elf' and 'site-packages' in f['path'])" <"$FX/b.json")" \
	"['', '', 'libc10.so', 'libcudart.so.13']" "snapshot: the environment's ELF objects are described"
expect_eq "$(jq_py "sorted(f['path'].split('/')[-1] for f in j['files'] if f['type']=='elf' and 'export_names' in f['elf'])" <"$FX/b.json")" \
	"['libc10.so']" "snapshot: by default, names only for the exports another package binds against (myext -> libc10.so)"

# ---- check --host gives the verdicts check gives on the host itself
for side in A B; do
	lower=$(echo $side | tr AB ab)
	f=$FX/$lower.json.gz
	[ -f "$f" ] || f=$FX/$lower.json
	$ABISCOPE check --color never "$FX/$side" >"$FX/local_$side.txt" 2>&1
	want=$?
	$ABISCOPE check --color never --host "$f" >"$FX/host_$side.txt" 2>&1
	got=$?
	expect_eq "$got" "$want" "check --host $side: same exit status as check on the host ($want)"
	# the verdicts and loader errors; without --names the C++ near-miss
	# explanation needs the provider's export names (checked below)
	verdicts() { grep -E 'would fail|ImportError|imports|error\[|FAIL|OK' "$1" | grep -v 'signature-changed'; }
	if [ "$(verdicts "$FX/local_$side.txt")" = "$(verdicts "$FX/host_$side.txt")" ]; then
		pass "check --host $side: same verdicts and errors as check on the host"
	else
		fail "check --host $side: same verdicts and errors as check on the host" \
			"$(diff "$FX/local_$side.txt" "$FX/host_$side.txt" | head -20)"
	fi
done
for side in A B; do
	if diff "$FX/local_$side.txt" "$FX/host_$side.txt" >/dev/null; then pass "check --host $side: the whole report is identical (the C++ near miss too)"
	else fail "check --host $side: the whole report is identical" "$(diff "$FX/local_$side.txt" "$FX/host_$side.txt" | head)"; fi
done
expect_contains "$(cat "$FX/host_B.txt")" "undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib" \
	"check --host B: the extension built for torch 2.9 fails there"

# ---- a binary of this machine checked on another host
$ABISCOPE check --color never --host "$FX/b.json" "$A/$EXT" >"$FX/copied.txt" 2>&1
expect_eq "$?" 1 "check --host B A's extension: fails (exit 1)"
expect_contains "$(cat "$FX/copied.txt")" "undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib" \
	"check --host B A's extension: the symbol B's torch lacks"
$ABISCOPE check --color never --host "$FX/a.json.gz" "$A/$EXT" >"$FX/copied_a.txt" 2>&1
expect_eq "$?" 0 "check --host A A's extension: imports (exit 0)"
# a package folder and a whole venv: placed into B's site-packages, B's interpreter, after B's import torch
$ABISCOPE check --color never --host "$FX/b.json" "$A/lib/python3.11/site-packages/myext" >"$FX/placed.txt" 2>&1
expect_eq "$?" 1 "check --host B A's myext folder: fails (exit 1)"
expect_contains "$(cat "$FX/placed.txt")" "placed       $A/lib/python3.11/site-packages/myext -> $B/lib/python3.11/site-packages/myext" \
	"check --host B A's myext folder: says where it was placed"
expect_contains "$(cat "$FX/placed.txt")" "in the host's environment, after its import torch 2.10.0+cu130" \
	"check --host B A's myext folder: says which interpreter and torch state it models"
$ABISCOPE check --color never --host "$FX/b.json" "$A" >"$FX/placed_env.txt" 2>&1
expect_contains "$(cat "$FX/placed_env.txt")" "placed       $A/lib/python3.11/site-packages -> $B/lib/python3.11/site-packages" \
	"check --host B A's whole venv: its site-packages placed over B's"

# ---- a binding the snapshot cannot settle is a labelled guess, never a plain "imports"
mkdir -p "$FX/guess/lib/python3.11/site-packages/zext"
printf 'int not_in_zlib_at_all(void);\nint zext(void) { return not_in_zlib_at_all(); }\n' >"$FX/zext.c"
$CC -shared -fPIC -o "$FX/guess/lib/python3.11/site-packages/zext/libzext.so" "$FX/zext.c" -Wl,--no-as-needed -ljansson
if python3 -c "import ctypes.util,sys; sys.exit(0 if ctypes.util.find_library('jansson') else 1)"; then
	zext_verdict() {
		$ABISCOPE check --json --libraries --host "$1" "$FX/guess/lib/python3.11/site-packages/zext" |
			jq_py "[(m['status'], m['error'].split(': ', 1)[-1] if m['error'] else None, m['guess']) for e in j['environments'] for d in e['distributions'] for m in d['modules'] if m['path'].endswith('libzext.so')]"
	}
	# the real loader fails (the symbol is nowhere).  B's default snapshot
	# describes libjansson (ld.so.cache lists it; no check of B loaded it)
	# in full, so the failure is known exactly
	expect_eq "$(zext_verdict "$FX/b.json")" "[('fails', 'undefined symbol: not_in_zlib_at_all', False)]" \
		"check --host: a system library no check of the host loaded is described in full: the real failure"
	# a --lean snapshot describes it by name only: abiscope cannot know, it must say "guess"
	$ABISCOPE snapshot --lean --label host-b --no-driver "$B" -o "$FX/b-lean.json" >/dev/null 2>&1
	expect_eq "$(zext_verdict "$FX/b-lean.json")" "[('ok', None, True)]" \
		"check --host on a --lean snapshot: a symbol only a library described by name could define: a labelled guess"
fi

# ---- file names are bytes: a name that is not UTF-8 round-trips
cp -a "$B" "$FX/nonutf8"
cp "$B/lib/python3.11/site-packages/nvidia/cu13/lib/libcudart.so.13" \
	"$FX/nonutf8/lib/python3.11/site-packages/myext/lib$(printf '\377\376')x.so"
$ABISCOPE snapshot --no-driver "$FX/nonutf8" -o "$FX/nonutf8.json" >/dev/null 2>&1
expect_eq "$?" 0 "snapshot of an env with a non-UTF-8 file name: exit 0"
expect_eq "$(jq_py "sum(1 for f in j['files'] if isinstance(f['path'], dict))" <"$FX/nonutf8.json")" 1 \
	"snapshot: the non-UTF-8 path is kept (as bytes)"
paths_of() { python3 -c "import json,sys; j=json.loads(sys.stdin.buffer.read().decode('utf-8','surrogateescape')); print(sorted((m['path'],m['status']) for e in j['environments'] for d in e['distributions'] for m in d['modules']))"; }
want=$($ABISCOPE check --json --libraries --no-driver "$FX/nonutf8" | paths_of)
got=$($ABISCOPE check --json --libraries --host "$FX/nonutf8.json" | paths_of)
expect_eq "$got" "$want" "check --host of it: every object, the non-UTF-8 one too, with the same verdict"
expect_contains "$got" "x.so" "check --host of it: the non-UTF-8 library is among them"

# ---- names kept: the C++ explanation is the same as on the host
$ABISCOPE snapshot --names --label host-b --no-driver "$B" -o "$FX/bn.json.gz" >/dev/null 2>&1
$ABISCOPE check --color never --host "$FX/bn.json.gz" >"$FX/host_Bn.txt" 2>&1
if diff "$FX/local_B.txt" "$FX/host_Bn.txt" >/dev/null; then pass "snapshot --names: check --host is identical"
else fail "snapshot --names: check --host is identical" "$(diff "$FX/local_B.txt" "$FX/host_Bn.txt" | head)"; fi

# ---- diff, environments and snapshots
$ABISCOPE diff --json "$A" "$B" >"$FX/diff_env.json" 2>"$FX/diff_env.err"
expect_eq "$?" 1 "diff A B: exit 1 (an import changes)"
ids() { jq_py "[d['id'] for d in j['differences']]"; }
env_ids=$(ids <"$FX/diff_env.json")
expect_eq "$(jq_py "j['differences'][0]['id'], j['differences'][0]['module']" <"$FX/diff_env.json")" \
	"diff-import myext._ext" "diff A B: the import that changes comes first"
expect_contains "$env_ids" "diff-exports-removed" "diff A B: exports A's binaries use are gone on B"
expect_contains "$(jq_py "[l for d in j['differences'] if d['id']=='diff-exports-removed' for l in d['explanation']]" <"$FX/diff_env.json")" \
	"c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)" \
	"diff A B: the removed symbol, demangled, with its user"
expect_eq "$(jq_py "sorted(set(l.split('used by ')[1].rstrip(')') for d in j['differences'] if d['id']=='diff-exports-removed' for l in d['explanation'] if 'used by' in l))" <"$FX/diff_env.json")" \
	"['site/myext/_ext.cpython-311-x86_64-linux-gnu.so']" \
	"diff A B: only bindings across packages (myext -> torch), not torch's own _C -> libc10"
$ABISCOPE diff --json -v "$A" "$B" >"$FX/diff_env_v.json" 2>/dev/null
expect_eq "$(jq_py "[(d['severity'], d['internal']) for d in j['differences'] if d['id']=='diff-exports-removed' and any('torch/_C' in l for l in d['explanation'])][:1]" <"$FX/diff_env_v.json")" \
	"[('note', True)]" "diff -v A B: torch's internal binding too, as a note"
# a binary B does not hold (myext removed from a copy of B): its bindings to
# A's torch matter only if it is copied there, a note with -v, not an error
NOMYEXT=$(mktemp -d)
cp -a "$B" "$NOMYEXT/B" && rm -rf "$NOMYEXT/B/lib/python3.11/site-packages/myext"
$ABISCOPE diff --json "$A" "$NOMYEXT/B" >"$FX/diff_nomyext.json" 2>/dev/null
expect_eq "$(jq_py "[d['severity'] for d in j['differences'] if d['id']=='diff-exports-removed']" <"$FX/diff_nomyext.json")" \
	"[]" "diff A B-without-myext: A's myext -> libc10 bindings are no difference of the two as they are"
$ABISCOPE diff --json -v "$A" "$NOMYEXT/B" >"$FX/diff_nomyext_v.json" 2>/dev/null
rm -rf "$NOMYEXT"
expect_eq "$(jq_py "[(d['severity'], d['not_there']) for d in j['differences'] if d['id']=='diff-exports-removed' and any('myext' in l for l in d['explanation'])]" <"$FX/diff_nomyext_v.json")" \
	"[('note', True)]" "diff -v A B-without-myext: myext's bindings, as a note that they matter if it is copied"
expect_contains "$env_ids" "diff-torch" "diff A B: torch versions"
expect_contains "$env_ids" "diff-cuda-runtime" "diff A B: CUDA 12 runtime on one side, 13 on the other"
expect_contains "$env_ids" "diff-dist" "diff A B: distribution versions"
$ABISCOPE diff --json "$FX/a.json.gz" "$FX/b.json" >"$FX/diff_snap.json" 2>&1
expect_eq "$?" 1 "diff snapshot A, snapshot B: exit 1"
expect_eq "$(ids <"$FX/diff_snap.json")" "$env_ids" "diff of snapshots finds what diff of environments finds"
$ABISCOPE diff "$FX/a.json.gz" "$A" >"$FX/diff_same.txt" 2>&1
expect_eq "$?" 0 "diff of a snapshot and its own environment: exit 0"
expect_contains "$(cat "$FX/diff_same.txt")" "0 differences" "diff of a snapshot and its own environment: nothing"
$ABISCOPE diff --color never "$A" "$B" >"$FX/diff.txt" 2>&1
expect_contains "$(head -4 "$FX/diff.txt" | tail -1)" "error[diff-import] myext._ext imports on" "diff text: the changed import first"
expect_contains "$(cat "$FX/diff.txt")" "cause: undefined-symbol: undefined symbol c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)" \
	"diff text: the changed import with its root cause"

# ---- fleet reads a snapshot as check --host does: what one refuses, the other refuses, in the same words
mkdir -p "$FX/refused"
python3 - "$FX" <<'PY'
import json, sys
fx = sys.argv[1]
def bad(name, change):
    j = json.load(open(fx + "/b.json"))
    change(j)
    json.dump(j, open(fx + "/refused/" + name + ".json", "w"))
bad("version", lambda j: j.update(version=99))
bad("relpath", lambda j: j["files"][0].update(path="not/absolute"))
bad("noloader", lambda j: j.pop("loader"))
bad("exports", lambda j: next(f for f in j["files"] if f["type"] == "elf" and "exports" in f["elf"])["elf"].update(exports=7))
PY
for k in version relpath noloader exports; do
	$ABISCOPE check --host "$FX/refused/$k.json" >"$FX/refused/$k.check" 2>&1
	rc_check=$?
	$ABISCOPE fleet "$FX/refused/$k.json" "$FX/b.json" >"$FX/refused/$k.fleet" 2>&1
	rc_fleet=$?
	expect_eq "$rc_check $rc_fleet" "3 3" "a snapshot check --host refuses ($k): fleet refuses it too (exit 3)"
	why=$(sed -n 's/^abiscope check: //p' "$FX/refused/$k.check" | head -1)
	expect_contains "$(cat "$FX/refused/$k.fleet")" "${why:-no reason given}" "fleet names the same reason as check --host ($k)"
	expect_contains "$(cat "$FX/refused/$k.fleet")" "1 host" "fleet still groups the readable snapshot ($k)"
done

$ABISCOPE fleet --summary-only --json "$FX/refused/relpath.json" "$FX/b.json" >"$FX/refused/quick.json" 2>&1
expect_eq "$(jq_py "j['hosts'], j['validated']" <"$FX/refused/quick.json")" "2 False" \
	"fleet --summary-only: damage past the summary is not seen, and it says the files were not validated"

# ---- fleet: 20 alike, one with another driver, one with B's environment
mkdir -p "$FX/fleet"
python3 - "$FX" <<'PY'
import gzip, json, sys
fx = sys.argv[1]
a = json.load(gzip.open(fx + "/a.json.gz"))
for i in range(1, 21):
    a["label"] = a["summary"]["label"] = "node%02d" % i
    json.dump(a, open(fx + "/fleet/node%02d.json" % i, "w"))
a["label"] = a["summary"]["label"] = "node21"
a["cuda"]["driver"] = a["summary"]["driver"] = "580.65.06"
json.dump(a, open(fx + "/fleet/node21.json", "w"))
b = json.load(open(fx + "/b.json"))
b["label"] = b["summary"]["label"] = "node22"
with gzip.open(fx + "/fleet/node22.json.gz", "wt") as f:
    json.dump(b, f)
PY
$ABISCOPE fleet --json "$FX/fleet" >"$FX/fleet.json" 2>&1
expect_eq "$?" 1 "fleet: exit 1 (hosts differ)"
expect_eq "$(jq_py "j['hosts'], len(j['groups']), len(j['groups'][0]['hosts'])" <"$FX/fleet.json")" "22 3 20" \
	"fleet: 22 hosts, a baseline of 20 and two outliers"
expect_eq "$(jq_py "sorted(h for g in j['groups'][1:] for h in g['hosts'])" <"$FX/fleet.json")" "['node21', 'node22']" \
	"fleet: the outliers are node21 and node22"
expect_contains "$(jq_py "[d for g in j['groups'] if 'node21' in g['hosts'] for d in g['differences']]" <"$FX/fleet.json")" \
	"driver 580.65.06 (baseline: none)" "fleet: node21 differs by its driver"
n22=$(jq_py "[d for g in j['groups'] if 'node22' in g['hosts'] for d in g['differences']]" <"$FX/fleet.json")
expect_contains "$n22" "fails here only: myext._ext: " "fleet: node22's failing import comes first"
expect_contains "$n22" "torch 2.10.0+cu130 (baseline: 2.9.0+cu128)" "fleet: node22's torch"
$ABISCOPE fleet --color never "$FX/fleet/node01.json" "$FX/fleet/node02.json" >"$FX/fleet2.txt" 2>&1
expect_eq "$?" 0 "fleet of alike hosts: exit 0"

# ---- hostile snapshots: a clear error naming the file, exit 3
printf '{"format": "abiscope-snapshot", "version": 1, "loader": {' >"$FX/trunc.json"
$ABISCOPE check --host "$FX/trunc.json" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "truncated snapshot: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "$FX/trunc.json" "truncated snapshot: the error names the file"
python3 - "$FX" <<'PY'
import json, sys
fx = sys.argv[1]
b = json.load(open(fx + "/b.json"))
for f in b["files"]:
    if f["type"] == "elf":
        f["elf"]["exports"] = "not base64!"
        break
json.dump(b, open(fx + "/badexports.json", "w"))
b = json.load(open(fx + "/b.json"))
b["files"][0]["path"] = "../../etc/passwd"
json.dump(b, open(fx + "/badpath.json", "w"))
b = json.load(open(fx + "/b.json"))
b["version"] = 99
json.dump(b, open(fx + "/future.json", "w"))
PY
$ABISCOPE check --host "$FX/badexports.json" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "snapshot with damaged exports: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "snapshot member files[" "snapshot with damaged exports: names the member"
$ABISCOPE check --host "$FX/badpath.json" >"$FX/bad.txt" 2>&1
expect_contains "$(cat "$FX/bad.txt")" "a path is not absolute" "snapshot with a relative path: refused"
$ABISCOPE diff "$FX/future.json" "$A" >"$FX/bad.txt" 2>&1
expect_eq "$?" 3 "snapshot of a future format: exit 3"
expect_contains "$(cat "$FX/bad.txt")" "snapshot format version 99" "snapshot of a future format: says which"
head -c 200 "$FX/a.json.gz" >"$FX/cut.json.gz"
$ABISCOPE fleet "$FX/cut.json.gz" "$FX/fleet/node01.json" >"$FX/bad.txt" 2>"$FX/bad.err"
expect_eq "$?" 3 "fleet with a cut gzip file: exit 3"
expect_contains "$(cat "$FX/bad.err")" "cut.json.gz" "fleet with a cut gzip file: names it, groups the rest"
expect_contains "$(cat "$FX/bad.txt")" "1 host" "fleet with a cut gzip file: the readable one is grouped"
$ABISCOPE check --host "$FX/a.json.gz" --verify-hashes >/dev/null 2>&1
expect_eq "$?" 2 "check --host --verify-hashes: usage error (no file contents on a snapshot)"
finish
