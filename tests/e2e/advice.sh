#!/bin/sh
# Advice that works (issue 24): the stories of the issue, each on an
# environment built from source (tests/e2e/fixtures/advice_envs.sh and
# mlenv.sh), and abiscope's plan for it: the one change, its actions as data
# (fix_actions, plan), the rules a fix keeps (no pip on an externally managed
# Python or a system package's files, no uninstall of what is not installed,
# no downgrade to mend metadata, a CUDA major only from evidence, versions
# the installed torch pins), each cause once, warnings apart, one screen.
# Where a fix can be applied here it is, in a copy, and the real loader
# (tests/tools/dlopen_driver) or a new check says whether it worked; the
# fix oracle on real PyPI environments is tests/field/fixoracle.py.
. "$(dirname "$0")/lib.sh"
fixture_dir advice
DRIVER=$BUILD/tools/dlopen_driver
{ sh "$TOP/tests/e2e/fixtures/advice_envs.sh" "$FX" && sh "$TOP/tests/e2e/fixtures/mlenv.sh" "$FX/ml"; } \
	>"$FX/build.log" 2>&1 || {
	fail "fixture environments build" "$(tail -5 "$FX/build.log")"
	finish
	exit 1
}
unset LD_LIBRARY_PATH VIRTUAL_ENV CONDA_PREFIX
export CUDA_HOME=$FX/cuda
SP=lib/python3.11/site-packages
EXT=cpython-311-x86_64-linux-gnu.so
check_json() {	# check_json NAME ARGS...: the JSON of check, kept as $FX/NAME.json
	n=$1
	shift
	$ABISCOPE check --json --assume-driver "$@" >"$FX/$n.json" 2>"$FX/$n.err"
}
py() {	# py NAME EXPR: EXPR on j (the JSON of NAME), F its findings, C its causes, P its plan
	python3 -c "import json,sys
j=json.load(open(sys.argv[1])); F=j['findings']; C=j['causes']; P=j['plan']
A=[a for f in F for a in f['fix_actions']]+[a for c in C for a in c['fix_actions']]+(P['actions'] if P else [])
print($2)" "$FX/$1.json"
}

# ---- the rules, on every environment of this suite
rules() {	# rules NAME: no uninstall of what is not installed; no downgrade of torch to mend metadata
	expect_eq "$(py "$1" "sorted(set(d for a in A if a['action']=='pip-uninstall' for d in a['distributions']) - set(x['name'].lower() for e in j['environments'] for x in e['distributions']))")" \
		"[]" "$1: every pip-uninstall names an installed distribution"
	expect_eq "$(py "$1" "all(a['command'] and a['action'] in ('pip-install','pip-uninstall','remove-path','add-library-path','system-package') for a in A)")" \
		True "$1: every action has a kind of the schema and a command"
}

# ---- 1. stacked causes fold into the change that removes them all
CUDA_HOME=$FX/ml/cuda check_json t291 "$FX/ml/t291"
CUDA_HOME=$FX/ml/cuda check_json t210 "$FX/ml/t210"
expect_eq "$(py t291 "[(a['action'], a['requirements'], a['force_reinstall']) for a in P['actions']]")" \
	"[('pip-install', ['torch==2.9.1'], True)]" \
	"t291 (torch 2.9.1+cu130, a CUDA 12 package): one change, PyPI's CUDA 12 build of the same torch (reinstalled: pip takes 2.9.1+cu130 for ==2.9.1)"
expect_eq "$(py t291 "(P['checked'], sorted(P['fixes']) == sorted(c['index'] for c in C if c['severity']=='error'), P['remaining'])")" \
	"('model', True, [])" "t291: the plan removes every error cause, checked by the model"
expect_eq "$(py t291 "all(c['fix_actions'] == P['actions'] for c in C if c['severity']=='error')")" True \
	"t291: each stacked cause's fix is the one change, not its own library first"
expect_eq "$(py t210 "[a['requirements'] for a in P['actions']]")" "[['torch==2.9.1']]" \
	"t210 (torch 2.10, sgl-kernel built for 2.9 with CUDA 12): torch==2.9.1, which brings its own CUDA 12 libraries"
expect_eq "$(py t210 "(P['checked'], len(P['fixes']), P['summary'].startswith('torch 2.10.0+cu130 -> 2.9.1'))")" \
	"('model', 2, True)" "t210: both causes (the CUDA 12 library and the symbol break) fold into it"
rules t291
rules t210
# a package's own library off its module's path stays there whatever torch is
# installed: that cause keeps its own action beside the change (torchaudio
# 2.9's pybind11_prefixctc.so: the fix oracle's partial-unsaid plans)
CUDA_HOME=$FX/ml/cuda check_json t210own "$FX/ml/t210own"
expect_eq "$(py t210own "[(a['action'], a.get('requirements') or a.get('path', '').split('site-packages/')[-1]) for a in P['actions']]")" \
	"[('pip-install', ['torch==2.9.1']), ('add-library-path', 'sgl_kernel/lib')]" \
	"t210own: the torch change, and the own library's folder on the path (not folded into the change)"
expect_eq "$(py t210own "[c['fix_actions'][0]['action'] for c in C if 'libown.so' in c['title']]")" "['add-library-path']" \
	"t210own: the own library's cause keeps its own action"
expect_eq "$(py t210own "(P['checked'], P['remaining'])")" "('model', [])" \
	"t210own: the model checks the plan with both changes and nothing remains"
# the real loader: the module fails without the folder on the path, loads with it
own=$FX/ml/t210own/$SP/sgl_kernel/_own.abi3.so
"$DRIVER" --out "$FX/own-before.json" "$own" >/dev/null 2>&1
LD_LIBRARY_PATH=$FX/ml/t210own/$SP/sgl_kernel/lib "$DRIVER" --out "$FX/own-after.json" "$own" >/dev/null 2>&1
expect_eq "$(python3 -c "import json; print(json.load(open('$FX/own-before.json'))['loads'], json.load(open('$FX/own-after.json'))['loads'])")" \
	"False True" "t210own, the real loader: _own fails, and loads with the plan's library path"
rules t210own
# torch 2.10 beside torchaudio 2.9.1: keep torch, move the minority to the
# release built for it (torchaudio's libtorchaudio.so is its own library, not
# one of torch's libtorch*.so)
CUDA_HOME=$FX/ml/cuda check_json t210ta "$FX/ml/t210ta"
expect_eq "$(py t210ta "([a['requirements'] for a in P['actions']], P['checked'], P['summary'].split(';')[0])")" \
	"([['torchaudio==2.10.0']], 'model', 'keeps torch 2.10.0+cu130')" \
	"t210ta: keeps torch and installs the torchaudio built for it (its own Requires-Dist pins torch 2.10.0)"
expect_eq "$(py t210ta "[c['fix_actions'] == P['actions'] for c in C if c['severity'] == 'error']")" "[True]" \
	"t210ta: the symbol break's fix is that change"
rules t210ta
# files copied from another host over a torchvision whose metadata is the
# right release: reinstall it, and remove what the copy added that no RECORD
# lists (a reinstall leaves it) and that fails to load
CUDA_HOME=$FX/ml/cuda check_json t291tv "$FX/ml/t291tv"
expect_eq "$(py t291tv "[(a['action'], a.get('requirements') or a['path'].split('site-packages/')[-1]) for a in P['actions']]")" \
	"[('pip-install', ['torchvision==0.24.1']), ('remove-path', 'torchvision/_C_stable.so')]" \
	"t291tv: reinstall torchvision 0.24.1 and remove the copied _C_stable.so"
expect_eq "$(py t291tv "(P['actions'][0]['force_reinstall'], P['actions'][0]['no_deps'], P['checked'], P['remaining'])")" \
	"(True, True, 'model', [])" "t291tv: a reinstall without its dependencies, checked by the model"
expect_contains "$(py t291tv "P['summary']")" "removes 1 file no RECORD lists from its folder" "t291tv: the plan says so"
# the causes about the copied file carry its removal too (a reinstall alone
# leaves it failing), and so does the warning that lists it
expect_eq "$(py t291tv "[(c['id'], [a['action'] for a in c['fix_actions']]) for c in C if c['id'] != 'gpu-not-checked']")" \
	"[('undefined-symbol', ['pip-install', 'remove-path']), ('record-mismatch', ['pip-install']), ('record-mismatch', ['remove-path'])]" \
	"t291tv: the copied _C_stable.so's cause and the unowned-binary warning carry its removal"
rules t291tv

# ---- 2. installed off the loader's path: the search path, not pip
CUDA_HOME=$FX/cuda-13.0 $ABISCOPE check --json --assume-driver "$FX/toolkit" >"$FX/toolkit.json" 2>"$FX/toolkit.err"
expect_eq "$(py toolkit "[(c['id'], F[c['lead']]['found_at'][0]['path']) for c in C if c['severity']=='error']")" \
	"[('library-off-path', '$FX/cuda-13.0/lib/libcutoolkitfx.so.13')]" \
	"toolkit: a library in a CUDA toolkit folder no cache lists is installed, off the path (not 'not installed')"
expect_eq "$(py toolkit "([(a['action'], a['path'], a['how']) for a in P['actions']], P['checked'])")" \
	"([('add-library-path', '$FX/cuda-13.0/lib', 'ld.so.conf')], 'model')" \
	"toolkit: the fix is the folder on the loader's path (ld.so.conf), checked by the model"
expect_eq "$(py toolkit "[a for a in A if a['action']=='pip-install']")" "[]" "toolkit: no pip line for it"
mod=$FX/toolkit/$SP/tkext/_tk.$EXT
"$DRIVER" --out "$FX/tk-before.json" "$mod" >/dev/null 2>&1
LD_LIBRARY_PATH=$FX/cuda-13.0/lib "$DRIVER" --out "$FX/tk-after.json" "$mod" >/dev/null 2>&1
expect_eq "$(python3 -c "import json; print(json.load(open('$FX/tk-before.json'))['loads'], json.load(open('$FX/tk-after.json'))['loads'])")" \
	"False True" "toolkit, the real loader: the module fails, and loads with the folder on its path"
rules toolkit

# ---- 3. a CUDA major only from evidence: a soname both majors ship is none
check_json cu12 "$FX/cu12"
expect_eq "$(py cu12 "[f['title'] for f in F if f['id']=='cuda-major-mismatch']")" "[]" \
	"cu12: libcurand.so.10 of nvidia-curand-cu12 beside torch +cu128 is no CUDA 13 library (both majors ship the soname)"
expect_eq "$(py cu12 "(j['ok'], P)")" "(True, None)" "cu12: nothing to fix, no plan"

# ---- 4. stale metadata: the folder named, never a downgrade
check_json stale "$FX/stale"
expect_eq "$(py stale "[(a['action'], a['path']) for a in P['actions']]")" \
	"[('remove-path', '$FX/stale/$SP/torch-2.5.1.dist-info')]" "stale: the plan removes the stale torch-2.5.1.dist-info"
expect_eq "$(py stale "[a['command'] for a in A if a['action']=='pip-install']")" "[]" \
	"stale: no pip line at all (no reinstall of torch 2.5.1 over torch 2.14)"
expect_eq "$(py stale "[(f['id'], F[f['caused_by']]['id'] if f['caused_by'] is not None else None) for f in F if f['id']=='record-mismatch']")" \
	"[('record-mismatch', 'duplicate-dist-info')]" "stale: its RECORD mismatch is the same cause as the duplicate, said once"
cp -a "$FX/stale" "$FX/stale.fixed"
rm -r "$FX/stale.fixed/$SP/torch-2.5.1.dist-info"
$ABISCOPE check --json --assume-driver "$FX/stale.fixed" >"$FX/stale.fixed.json" 2>&1
expect_eq "$(py stale.fixed "(j['ok'], j['summary']['warnings'], [c['id'] for c in C if c['severity']!='note'])")" \
	"(True, 0, [])" "stale, applied: the metadata is whole again"
rules stale

# ---- 5. an externally managed system Python: the system's package, never pip
$ABISCOPE check --json --root "$FX/sysroot" --python /usr/bin/python3 >"$FX/sys.json" 2>"$FX/sys.err"
expect_eq "$(py sys "[a['action'] for a in A if a['action'].startswith('pip')]")" "[]" \
	"sysroot: no pip action anywhere (EXTERNALLY-MANAGED, dpkg's files)"
expect_eq "$(py sys "[(a['action'], a['manager'], a['packages']) for a in P['actions']]")" \
	"[('system-package', 'dpkg', ['libyamlish0', 'python3-yamlish'])]" \
	"sysroot: the missing library's package reinstalled (dpkg's list names it), and the package whose module is gone"
expect_eq "$(py sys "[(f['severity'], f['system_package'], f['missing']) for f in F if f['id']=='record-mismatch' and 'distribution' not in f]")" \
	"[('warning', 'python3-yamlish', 1)]" "sysroot: a module file dpkg's list names and that is gone is said (no RECORD needed)"
expect_eq "$(py sys "[(f['severity'], f.get('system_package')) for f in F if f['id']=='record-mismatch' and 'distribution' in f]")" \
	"[('note', 'python3-yamlish')]" "sysroot: a RECORD Debian's build made stale is a note about dpkg's files, not a root cause"
expect_eq "$(py sys "[c['id'] for c in C if c['severity'] in ('error','warning')]")" "['library-not-installed', 'record-mismatch']" \
	"sysroot: one root cause and the gone file, no 'binaries copied in by hand' for dpkg's own"
rules sys

# ---- 6. a conflict: keep what imports, move the minority to the release its pin matches
check_json conflict "$FX/conflict"
expect_eq "$(py conflict "[(a['action'], a['requirements']) for a in P['actions']]")" \
	"[('pip-install', ['torchaudio==2.9.1'])]" \
	"conflict: torch and sgl-kernel (which imports) stay; torchaudio moves to 2.9.1, whose Requires-Dist pins torch 2.9.1"
expect_eq "$(py conflict "(P['checked'], [c['severity'] for c in C if c['index'] in P['fixes']])")" "('model', ['error'])" \
	"conflict: checked by the model"
rules conflict

# ---- 7. a --no-deps install: its own Requires-Dist names the provider
check_json nodeps "$FX/nodeps"
expect_eq "$(py nodeps "[(f['required_by'], f['requires_missing']) for f in F if f['id']=='library-not-installed']")" \
	"[('fooext', ['foo-runtime==2.1'])]" "nodeps: the missing library's package is what fooext requires and is not installed"
expect_eq "$(py nodeps "[a['requirements'] for a in P['actions']]")" "[['foo-runtime==2.1']]" \
	"nodeps: the fix installs that requirement (no extra-only requirement)"
rules nodeps

# ---- 8. each cause once, warnings apart, one screen
check_json multipy "$FX/multipy"
expect_eq "$(py multipy "sorted(f['object'].rsplit('/',1)[1] for f in F if f['id']=='python-abi-mismatch')")" \
	"['stray.cpython-310-x86_64-linux-gnu.so']" \
	"multipy: the modules a py3-none wheel ships for other Pythons are no finding; a stray one no RECORD lists is"
$ABISCOPE check --color never --assume-driver "$FX/multipy" >"$FX/multipy.txt" 2>&1
expect_eq "$(grep -c -E '^([0-9]+ )?root causes?$' "$FX/multipy.txt")" 0 "multipy: warnings are not counted as root causes"
expect_contains "$(cat "$FX/multipy.txt")" "warnings (not counted as root causes)" "multipy: they are said apart"
$ABISCOPE check --color never --assume-driver "$FX/three" >"$FX/three.txt" 2>&1
n=$(wc -l <"$FX/three.txt")
[ "$n" -le 45 ] && pass "three failing packages: the default text fits 45 lines ($n)" ||
	fail "three failing packages: the default text fits 45 lines" "$n lines"
expect_contains "$(cat "$FX/three.txt")" "then: cause 1 remains" "three: the plan says what it leaves"
check_json three "$FX/three"
expect_eq "$(py three "sorted(len([x for x in C if x['key']==c['key']]) for c in C)")" "[1, 1, 1]" "three: each cause once"
rules three

# ---- import torch fails for a library it requires: one cause, at torch's pin
check_json nocudart "$FX/nocudart"
expect_eq "$(py nocudart "[(c['id'], F[c['lead']]['library'], sorted(c['modules'])) for c in C if c['severity']=='error']")" \
	"[('library-not-installed', 'libcudart.so.12', ['libtorch_global_deps.so', 'sgl_kernel.common_ops', 'torch'])]" \
	"nocudart: the missing library is the root of torch's failing import and of what fails with it, said once"
expect_eq "$(py nocudart "[a['requirements'] for a in P['actions']]")" "[['nvidia-cuda-runtime-cu12==12.8.90']]" \
	"nocudart: the fix installs it at the version torch's own Requires-Dist pins"
rules nocudart

# ---- torch is not installed: one cause, the version what is installed requires
check_json notorch "$FX/notorch"
expect_eq "$(py notorch "[(c['id'], F[c['lead']]['missing'], c['modules']) for c in C if c['severity']=='error']")" \
	"[('module-not-found', 'torch', ['torchaudio._torchaudio'])]" "notorch: torch missing is one cause, with what it takes down"
expect_eq "$(py notorch "[a['requirements'] for a in P['actions']]")" "[['torch==2.9.1']]" \
	"notorch: the fix installs the torch torchaudio's Requires-Dist pins"
rules notorch

# ---- issue 28: the version the installed torch pins
check_json pins "$FX/pins"
expect_eq "$(py pins "[a['requirements'] for a in P['actions']]")" "[['nvidia-cufile==1.15.1.6']]" \
	"pins: libcufile.so.0's package at the version torch 2.14.0's own Requires-Dist pins, not the newest the tables know"
expect_contains "$(py pins "C[0]['fix']")" "the version torch 2.14.0 requires" "pins: and says whose pin it is"
rules pins

finish
