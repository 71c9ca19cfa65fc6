#!/bin/sh
# check with no interpreter to model: the modules are not judged, and the run
# is not OK.  A folder of site-packages checked where no python3 is on PATH
# (no environment around it names one) used to say "OK: 0 of 1 extension
# module would fail", exit 0: a false OK from modules never looked at.  The
# oracle is the same folder judged with the interpreter that imports it.
. "$(dirname "$0")/lib.sh"
fixture_dir no_interpreter
pybin=$(command -v python3)
suffix=$("$pybin" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
SP=$FX/site-packages
mkdir -p "$SP/pkg"
: >"$SP/pkg/__init__.py"
printf '#include <Python.h>\nstatic struct PyModuleDef d = { PyModuleDef_HEAD_INIT, "_m", 0, -1, 0 };\n'\
'PyMODINIT_FUNC PyInit__m(void) { return PyModule_Create(&d); }\n' >"$FX/m.c"
inc=$("$pybin" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
$CC -shared -fPIC -I"$inc" -o "$SP/pkg/_m$suffix" "$FX/m.c"

# the real import: the module imports with this interpreter
real=$(cd "$SP" && "$pybin" -c 'import pkg._m; print("imports")' 2>&1)
expect_eq "$real" "imports" "the real import of the module succeeds (the oracle)"

$ABISCOPE check --color never --no-driver "$SP" >"$FX/with.txt" 2>&1
expect_eq "$?" "0" "with python3 on PATH: judged, exit 0"
expect_contains "$(cat "$FX/with.txt")" "OK: 0 of 1 extension module would fail" "with python3 on PATH: OK, as the import says"

PATH=/nonexistent-abiscope-path $ABISCOPE check --color never --no-driver "$SP" >"$FX/without.txt" 2>&1
rc=$?
expect_eq "$rc" "3" "no interpreter to model: exit 3, not 0"
expect_contains "$(cat "$FX/without.txt")" "NOT CHECKED: 1 of 1 extension module not judged: no interpreter could be modelled" "no interpreter: NOT CHECKED, not OK"
expect_not_contains "$(cat "$FX/without.txt")" "OK: 0 of 1" "no interpreter: no OK line"
PATH=/nonexistent-abiscope-path $ABISCOPE check --json --no-driver "$SP" >"$FX/without.json" 2>/dev/null
expect_eq "$(jq_py "j['ok'], j['summary']['not_checked'], j['environments'][0]['not_checked']" <"$FX/without.json")" \
	"False 1 1" "no interpreter: JSON ok false, not_checked 1"
finish
