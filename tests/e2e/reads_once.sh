#!/bin/sh
# One check reads each file once (issue 25): on a machine without an
# NVIDIA driver `check` gives two verdicts, this machine's and one with the
# driver (check.v2's with_driver), and the second takes the first's reads
# (check_options.same_files): the walk, the metadata, the packages' Python
# sources.  A shim (tests/tools/preload/log_opens.c) logs every open() and
# opendir() the process makes.
. "$(dirname "$0")/lib.sh"
fixture_dir reads_once
SHIM=$(cd "$BUILD" && pwd)/tools/log_opens.so
pybin=$(command -v python3)
E=$FX/env
# the venv's lib/pythonX.Y and extension suffix are this python3's (3.11 on Debian 12, 3.12 on Ubuntu 24.04)
PYV=$("$pybin" -c "import sys; print('%d.%d' % sys.version_info[:2])")
PYFULL=$("$pybin" -c "import platform; print(platform.python_version())")
SUFFIX=$("$pybin" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
SP=$E/lib/python$PYV/site-packages
mkdir -p "$E/bin" "$SP/pkg/sub" "$SP/pkg-1.0.dist-info"
ln -sf "$pybin" "$E/bin/python3"
printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' "$(dirname "$pybin")" "$PYFULL" >"$E/pyvenv.cfg"
# _gpu needs libcuda.so.1 (the driver's), which this environment lacks
printf 'void cuInit(void) {}\n' >"$FX/cuda.c"
$CC -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$FX/libcuda.so.1" "$FX/cuda.c"
# the stub that stands for the driver in the second verdict ($CUDA_HOME's first)
mkdir -p "$FX/cuda/lib64/stubs"
cp "$FX/libcuda.so.1" "$FX/cuda/lib64/stubs/libcuda.so"
printf 'int PyInit__gpu(void) { return 0; }\n' >"$FX/gpu.c"
$CC -shared -fPIC -o "$SP/pkg/_gpu$SUFFIX" "$FX/gpu.c" -Wl,--no-as-needed "$FX/libcuda.so.1"
printf 'int PyInit__cpu(void) { return 0; }\n' >"$FX/cpu.c"
$CC -shared -fPIC -o "$SP/pkg/_cpu$SUFFIX" "$FX/cpu.c"
printf 'from . import _cpu\nfrom .sub import helper\nfrom . import _gpu\n' >"$SP/pkg/__init__.py"
printf 'x = 1\n' >"$SP/pkg/sub/helper.py"
: >"$SP/pkg/sub/__init__.py"
printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
printf 'pip\n' >"$SP/pkg-1.0.dist-info/INSTALLER"
(cd "$SP" && for f in pkg/__init__.py pkg/sub/helper.py pkg/_gpu$SUFFIX pkg/_cpu$SUFFIX; do
	echo "$f,,$(wc -c <"$f" | tr -d ' ')"
done; echo 'pkg/sub/__init__.py,,3'; echo 'pkg-1.0.dist-info/RECORD,,') >"$SP/pkg-1.0.dist-info/RECORD"

# (an ASan build checks that its runtime comes first in the preload list: the shim goes first here)
CUDA_HOME=$FX/cuda OPEN_LOG=$FX/opens LD_PRELOAD=$SHIM ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	$ABISCOPE check --json "$E" >"$FX/check.json"
expect_eq "$(jq_py 'j["with_driver"]["modelled_by"], j["with_driver"]["summary"]["failing"], j["summary"]["failing"]' \
	<"$FX/check.json" 2>&1)" "$FX/cuda/lib64/stubs/libcuda.so 0 1" \
	"check without a driver: _gpu fails here (no libcuda.so.1) and loads with the driver, both in one run"
# the loader's open() of a library the scan has mapped is answered from the
# mapping: each object is opened once
expect_eq "$(grep "^open $SP/" "$FX/opens" | sort | uniq -d)" "" "no file of site-packages is opened twice"
for f in pkg-1.0.dist-info/RECORD pkg-1.0.dist-info/METADATA pkg/__init__.py pkg/sub/helper.py; do
	expect_eq "$(grep -c "^open $SP/$f\$" "$FX/opens")" 1 "$f is read once"
done
# RECORD says pkg/sub/__init__.py has 3 bytes (it was emptied after install): both
# verdicts say so, from one comparison of each row with the disk
expect_eq "$(jq_py '[[f["size_differs"] for f in r["findings"] if f["id"] == "record-mismatch"]
	for r in (j, j["with_driver"])]' <"$FX/check.json" 2>&1)" "[[1], [1]]" \
	"check without a driver: the edited file is a record-mismatch in both verdicts"
expect_eq "$(grep -c "^stat $SP/pkg/sub/__init__.py\$" "$FX/opens")" 1 \
	"the size of a file RECORD lists is asked once for both verdicts"
# no stub to stand for the driver (no CUDA_HOME, none in /usr/local/cuda):
# with_driver is null, as docs/findings.md says, not an object without modelled_by
if [ -e /usr/local/cuda/lib64/stubs/libcuda.so ]; then
	pass "check without a driver or a stub: with_driver is null # SKIP /usr/local/cuda/lib64/stubs/libcuda.so is there"
else
	env -u CUDA_HOME $ABISCOPE check --json "$E" >"$FX/nostub.json"
	expect_eq "$(jq_py 'j["with_driver"], j["summary"]["failing"]' <"$FX/nostub.json" 2>&1)" "None 1" \
		"check without a driver or a stub: with_driver is null, _gpu fails here"
fi
finish
