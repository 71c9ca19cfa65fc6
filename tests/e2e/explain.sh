#!/bin/sh
# End to end: `abiscope explain` on real-looking error text: an ImportError
# with the object path, sgl_kernel's CRITICAL report inside a traceback, a
# missing library named without any path, a version error, junk.
. "$(dirname "$0")/lib.sh"
fixture_dir explain
sh "$TOP/demo/build.sh" "$FX" >/dev/null 2>&1 || { fail "demo environment builds"; finish; exit 1; }
SP=$FX/venv/lib/python3.11/site-packages

out=$($ABISCOPE explain "ImportError: $SP/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib")
expect_eq "$?" 1 "explain exits 1 when it explains a failure"
expect_contains "$out" "environment  venv $FX/venv (where the message's paths point)" "finds the environment from the path"
expect_contains "$out" "abiscope reproduces this error from the files" "reproduces the exact error"
expect_contains "$out" "c10::cuda::c10_cuda_check_implementation(int" "names the symbol demangled"

cat >"$FX/traceback.txt" <<TB
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "$SP/sgl_kernel/__init__.py", line 5, in <module>
    common_ops = _load_architecture_specific_ops()
  File "$SP/sgl_kernel/load_utils.py", line 188, in _load_architecture_specific_ops
    raise ImportError(error_msg)
ImportError:
[sgl_kernel] CRITICAL: Could not load any common_ops library!

Attempted locations:
1. Architecture-specific pattern: $SP/sgl_kernel/sm100/common_ops.* - found files: ['$SP/sgl_kernel/sm100/common_ops.abi3.so']
2. Fallback pattern: $SP/sgl_kernel/common_ops.* - found files: []
3. Standard Python import: common_ops - failed

GPU Info:
- Compute capability: 100
- Expected variant: SM100 (precise math for compatibility)

Error details from previous import attempts:
- ImportError: $SP/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib
- ModuleNotFoundError: No module named 'common_ops'
TB
j=$($ABISCOPE explain --json <"$FX/traceback.txt")
expect_eq "$(printf '%s' "$j" | jq_py 'j["message"]["kind"], j["message"]["package"], j["reproduced"]')" \
	"undefined-symbol sgl_kernel True" "a traceback with sgl_kernel's CRITICAL report, from stdin"
expect_eq "$(printf '%s' "$j" | jq_py '[c["module"] for c in j["checked"]]')" "['sgl_kernel.sm100.common_ops']" \
	"checks the object named under 'Error details'"

out=$(printf 'Traceback (most recent call last):\n  File "%s/gds_io/__init__.py", line 1, in <module>\nImportError: libcufile.so.0: cannot open shared object file: No such file or directory\n' "$SP" | $ABISCOPE explain)
expect_contains "$out" "checked      the objects that need libcufile.so.0" "a library named without a path: the objects that need it"
expect_contains "$out" "library-off-path" "... and why it is not found"

out=$($ABISCOPE explain --json "ImportError: $FX/conda/bin/../lib/libstdc++.so.6: version \`GLIBCXX_3.4.32' not found (required by $FX/conda/lib/python3.11/site-packages/fastops/_fastops.cpython-311-x86_64-linux-gnu.so)")
expect_eq "$(printf '%s' "$out" | jq_py 'j["message"]["kind"], j["message"]["version"], j["environment_kind"], j["reproduced"]')" \
	"version-not-found GLIBCXX_3.4.32 conda True" "a version error in a conda environment"

$ABISCOPE explain "nothing useful here at all" >/dev/null 2>&1
expect_eq "$?" 2 "text without anything to look at is a usage error"
out=$($ABISCOPE explain "ImportError: /elsewhere/site-packages/foo/_C.so: undefined symbol: bar" 2>&1)
expect_contains "$out" "nothing in this environment matches" "a message from another machine is said to be so"
finish
