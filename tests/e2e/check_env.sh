#!/bin/sh
# End to end: `abiscope check` on a generated venv-shaped environment (the
# demo's, built from source into the build directory) and a conda-shaped
# one: every environment finding, the import-context assumption, JSON.
. "$(dirname "$0")/lib.sh"
fixture_dir check_env
sh "$TOP/demo/build.sh" "$FX" >/dev/null 2>&1 || { fail "demo environment builds"; finish; exit 1; }
V=$FX/venv
SP=$V/lib/python3.11/site-packages

$ABISCOPE check --json "$V" >"$FX/check.json"
expect_eq "$?" 1 "exit status 1 when an extension would fail to import"
py() { python3 -c "import json; j=json.load(open('$FX/check.json')); $1"; }
ids=$(py "print(' '.join(sorted(set(f['id'] for f in j['findings']))))")
for id in library-off-path library-not-installed duplicate-dist-info record-mismatch namespace-shadow \
	cuda-major-mismatch undefined-symbol library-not-found; do
	expect_contains " $ids " " $id " "finding $id"
done
expect_eq "$(py "print(j['summary']['extension_modules'], j['summary']['failing'])")" "6 4" \
	"6 extension modules, 4 would fail"
expect_eq "$(py "e=j['environments'][0]; print(e['kind'], e['python_version'], e['torch']['version'], e['torch']['import_ok'])")" \
	"venv 3.11 2.10.0+cu130 True" "environment, Python version, torch version, import torch replayed"
expect_eq "$(py "print([s['path'].rsplit('/',1)[1] for s in j['environments'][0]['torch']['import_steps']])")" \
	"['libtorch_global_deps.so', 'libcudart.so.13', 'libnvrtc.so.12', '_C.cpython-311-x86_64-linux-gnu.so']" \
	"import torch replays global deps, the CUDA preload list read from __init__.py, then torch._C"
expect_eq "$(py "print({d['name']: d['ok'] for d in j['environments'][0]['distributions'] if not d['name'].startswith('(')})")" \
	"{'fast-ctc': False, 'gds-io': False, 'good-ops': True, 'sgl-kernel': False, 'torch': True}" \
	"verdicts grouped by distribution"
ctx=$(py "print([m['context'] for d in j['environments'][0]['distributions'] if d['name']=='sgl-kernel' for m in d['modules']][0])")
expect_contains "$ctx" "assuming torch is imported first" "the import-context assumption is stated"
off=$(py "f=[f for f in j['findings'] if f['id']=='library-off-path'][0]; print(f['library'], f['found_at'][0]['path'], f['distribution'])")
expect_eq "$off" "libcufile.so.0 $SP/nvidia/cu13/lib/libcufile.so.0 gds-io" "library-off-path says where the library is"
ni=$(py "f=[f for f in j['findings'] if f['id']=='library-not-installed'][0]; print(f['library'], f['provided_by'], f['install_folder'])")
expect_eq "$ni" "libcudart.so.12 nvidia-cuda-runtime-cu12 nvidia/cuda_runtime/lib" \
	"library-not-installed names the pip distribution that ships it"
lnf_cause=$(py "fs=j['findings']; f=[f for f in fs if f['id']=='library-not-found' and f['library']=='libcufile.so.0'][0]; print(fs[f['caused_by']]['id'])")
expect_eq "$lnf_cause" "library-off-path" "library-not-found is caused by library-off-path (root cause first)"
mm=$(py "print(sorted((f['library'], f.get('needs_cuda_major'), f.get('torch_cuda_major')) for f in j['findings'] if f['id']=='cuda-major-mismatch' and 'needs_cuda_major' in f))")
expect_eq "$mm" "[('libcudart.so.12', 12, 13)]" "an extension that needs another CUDA major than torch"
mm2=$(py "print([f['library'] for f in j['findings'] if f['id']=='cuda-major-mismatch' and 'library_cuda_major' in f])")
expect_eq "$mm2" "['libnvrtc.so.12']" "import torch loading a CUDA 12 library into a CUDA 13 process"
dup=$(py "f=[f for f in j['findings'] if f['id']=='duplicate-dist-info'][0]; print(sorted(d['version'] for d in f['dist_infos']))")
expect_eq "$dup" "['2.10.0+cu130', '2.5.1']" "duplicate-dist-info names both versions"
rec=$(py "print(sorted((f.get('distribution'), f.get('size_differs'), f.get('missing')) for f in j['findings'] if f['id']=='record-mismatch' and 'size_differs' in f))")
expect_eq "$rec" "[('torch', 1, 0), ('torch', 1, 1)]" "record-mismatch: a file edited after install, the stale RECORD"
unowned=$(py "print([u.rsplit('/',1)[1] for f in j['findings'] if f['id']=='record-mismatch' and 'unowned' in f for u in f['unowned']])")
expect_eq "$unowned" "['libhelper_copied.so']" "record-mismatch: a binary no RECORD owns"
ns=$(py "f=[f for f in j['findings'] if f['id']=='namespace-shadow'][0]; print(f['import_name'], f['cuda12_distribution'], f['cuda13_distribution'])")
expect_eq "$ns" "nvidia.cuda_nvrtc nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvrtc" "namespace-shadow"

$ABISCOPE check "$V" >"$FX/check.txt"
expect_contains "$($ABISCOPE check -v "$V")" "FAILS  sgl-kernel 0.3.21" "-v groups failures by distribution"
expect_contains "$(cat "$FX/check.txt")" "takes down: sgl-kernel (2 modules: sgl_kernel.sm100.common_ops, sgl_kernel.sm90.common_ops)" \
	"one root cause for both variants of sgl_kernel, with what it takes down"
expect_eq "$(grep -c 'error\[library-not-found\]' "$FX/check.txt")" 0 \
	"the default text says library-not-found only through its root cause"
expect_not_contains "$(cat "$FX/check.txt")" "good-ops" "healthy distributions only with -v"
expect_contains "$($ABISCOPE check -v "$V")" "ok     good-ops 1.4.0" "-v lists healthy distributions"
expect_contains "$(tail -1 "$FX/check.txt")" "FAIL: 4 of 6 extension modules would fail to import" "one summary line"

# the same environment found through its site-packages folder and its python
$ABISCOPE check --json "$SP" | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['environments'][0]['kind'])" >"$FX/kind"
expect_eq "$(cat "$FX/kind")" venv "a site-packages folder stands for its venv"
VIRTUAL_ENV=$V $ABISCOPE check --json | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['environments'][0]['root'])" >"$FX/root"
expect_eq "$(cat "$FX/root")" "$V" "no PATH: \$VIRTUAL_ENV is the environment"

# a plain folder: every ELF object in it
$ABISCOPE check --json "$SP/gds_io" >"$FX/plain.json"
expect_eq "$(python3 -c "import json; j=json.load(open('$FX/plain.json')); print(j['environments'][0]['kind'], j['summary']['failing'])")" \
	"folder 1" "a plain folder is checked object by object"

# import names: every variant of a package, in the environment's context
out=$(VIRTUAL_ENV=$V $ABISCOPE why sgl_kernel)
expect_eq "$?" 1 "why MODULE: exit 1 when the module would not import"
expect_contains "$out" "sgl_kernel.sm100.common_ops  would NOT import" "why MODULE checks the sm100 variant"
expect_contains "$out" "sgl_kernel.sm90.common_ops  would NOT import" "why MODULE checks the sm90 variant"
expect_contains "$out" "(assuming torch is imported first" "why MODULE states the import context"
expect_contains "$out" "the package loads this variant on: sm_90
" "why MODULE: sm90/ is what the package loads on Hopper"
expect_contains "$out" "loads this variant on: sm_70, sm_75, sm_80, sm_86, sm_87, sm_89, sm_100" "why MODULE: sm100/ on the other GPUs (every GPU of data/cuda/gpus.def)"
VIRTUAL_ENV=$V $ABISCOPE why good_ops >/dev/null
expect_eq "$?" 0 "why MODULE: exit 0 for a module that imports after torch"
j=$(VIRTUAL_ENV=$V $ABISCOPE why --json torch._C)
expect_eq "$(printf '%s' "$j" | jq_py 'j["loads"], [m["module"] for m in j["modules"]]')" "True ['torch._C']" \
	"why MODULE with a dotted name"
j=$(VIRTUAL_ENV=$V $ABISCOPE why --json no_such_module)
expect_eq "$?" 1 "why NAME: a name that is not an importable module is searched like dlopen() does"
expect_eq "$(printf '%s' "$j" | jq_py 'j["error"], "not an importable module" in j["target_meaning"]')" \
	"no_such_module: cannot open shared object file: No such file or directory True" \
	"... and says which meaning it took"

# conda: the env's python has RPATH \$ORIGIN/../lib, its old libstdc++ shadows
$ABISCOPE check --json "$FX/conda" >"$FX/conda.json"
expect_eq "$?" 1 "conda environment with an old libstdc++ fails"
expect_eq "$(python3 -c "import json; j=json.load(open('$FX/conda.json')); e=j['environments'][0]; print(e['kind'], [f['id'] for f in j['findings']][0], [f['version'] for f in j['findings'] if f['id']=='version-not-found'])")" \
	"conda version-not-found ['GLIBCXX_3.4.32']" "conda: the executable's RPATH picks the env's old libstdc++"
finish
