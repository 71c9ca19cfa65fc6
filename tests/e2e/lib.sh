# Shared helpers for the end-to-end tests (sourced).
#   ok COND-EXIT-STATUS NAME       - TAP line from the status of the previous command
#   expect_eq GOT WANT NAME
#   expect_contains TEXT NEEDLE NAME
#   golden NAME FILE               - compares FILE with tests/golden/NAME
# Fixtures go to $BUILD/e2e/<suite>; $ABISCOPE is the binary under test.
: "${ABISCOPE:=./abiscope}"
: "${BUILD:=build}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
fails=0

pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; fails=$((fails + 1)); }
expect_eq() {
	if [ "$1" = "$2" ]; then pass "$3"; else fail "$3" "got:  $1" "want: $2"; fi
}
expect_contains() {
	case "$1" in
	*"$2"*) pass "$3" ;;
	*) fail "$3" "missing: $2" "in: $(printf '%s' "$1" | head -c 1500)" ;;
	esac
}
expect_not_contains() {
	case "$1" in
	*"$2"*) fail "$3" "unexpected: $2" ;;
	*) pass "$3" ;;
	esac
}
# JSON field by a python expression on j (the parsed document).
jq_py() {
	python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"
}
golden() {
	name=$1
	file=$2
	want="$TOP/tests/golden/$name"
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$file" "$want"
		pass "golden $name (updated)"
		return
	fi
	if diff -u "$want" "$file" >"$file.diff" 2>&1; then
		pass "golden $name"
	else
		fail "golden $name" "$(head -40 "$file.diff")"
	fi
}
# Replaces the build directory in output so golden files are portable.
# The legacy hwcaps subdirectories glibc 2.36 searches (haswell/, xeon_phi/,
# avx512_1/, tls/) depend on the CPU: drop those lines of a search list so the
# same golden file holds on every x86-64 machine.
portable() {
	sed -e "s#$FX#<fx>#g" -e "s#$(cd "$BUILD" && pwd)/#<build>/#g" -e "s#$TOP#<top>#g" |
		grep -v -E '/(haswell|xeon_phi|avx512_1|tls)/([^ ]*/)?[^/ ]+: no such file$'
}
fixture_dir() {
	FX=$(cd "$BUILD" && pwd)/e2e/$1
	rm -rf "$FX"
	mkdir -p "$FX"
}
# A venv's skeleton for the interpreter $pybin, in Python 3.11's layout
# whatever $pybin is: bin/python3 and pyvenv.cfg.
# venv_skeleton DIR (sets E and SP)
venv_skeleton() {
	E=$1
	SP=$E/lib/python3.11/site-packages
	mkdir -p "$E/bin" "$SP"
	ln -sf "$pybin" "$E/bin/python3"
	printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n' "$(dirname "$pybin")" >"$E/pyvenv.cfg"
}
# An ELF object exporting PyInit__m (no Python.h: it is a module to the
# loader model, it does not import), built once per fixture folder.
# stub_module (sets STUB_SO)
stub_module() {
	STUB_SO=$FX/.stub_m.so
	[ -f "$STUB_SO" ] && return
	printf 'int PyInit__m(void) { return 0; }\n' >"$FX/.stub_m.c"
	$CC -shared -fPIC -o "$STUB_SO" "$FX/.stub_m.c"
}
# A minimal environment: a venv with one distribution (pkg 1.0) and one
# module, pkg/_m, for the interpreter $pybin; built with $CC in $FX.
# minimal_env DIR (sets E and SP)
minimal_env() {
	venv_skeleton "$1"
	mkdir -p "$SP/pkg" "$SP/pkg-1.0.dist-info"
	stub_module
	cp "$STUB_SO" "$SP/pkg/_m.cpython-311-x86_64-linux-gnu.so"
	printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
	printf 'pkg/_m.cpython-311-x86_64-linux-gnu.so,,\npkg-1.0.dist-info/RECORD,,\n' >"$SP/pkg-1.0.dist-info/RECORD"
}
# A real venv of the python3 on PATH (its own lib/pythonX.Y, no pip), and
# what building an extension module for it takes; where there is no venv
# module or no Python.h the suite is one SKIP and ends here.
# python_venv DIR (sets pybin suffix pyver pyinc V SP)
python_venv() {
	pybin=$(command -v python3)
	suffix=$("$pybin" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	pyver=$("$pybin" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	pyinc=$("$pybin" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	if ! "$pybin" -m venv --without-pip "$1" >"$FX/venv.txt" 2>&1 || [ ! -f "$pyinc/Python.h" ]; then
		pass "$(basename "$0" .sh) # SKIP no venv or no Python.h here: $(tail -1 "$FX/venv.txt")"
		finish
		exit
	fi
	V=$1
	SP=$V/lib/python$pyver/site-packages
	unset PYTHONPATH PYTHONHOME PYTHONSTARTUP
}
# An extension module NAME at FILE that imports (PyModule_Create), for the
# interpreter python_venv found.  py_module FILE NAME [LINKER FLAGS...]
py_module() {
	out=$1
	name=$2
	shift 2
	printf '#include <Python.h>\nstatic struct PyModuleDef d = { PyModuleDef_HEAD_INIT, "%s", 0, -1, 0 };\nPyMODINIT_FUNC PyInit_%s(void) { return PyModule_Create(&d); }\n' "$name" "$name" >"$FX/$name.c"
	$CC -shared -fPIC -I"$pyinc" "$@" -o "$out" "$FX/$name.c" || fail "build $name"
}
finish() { [ "$fails" -eq 0 ]; }
