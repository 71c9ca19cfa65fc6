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
# A minimal environment: a venv with one distribution (pkg 1.0) and one
# module, pkg/_m, for the interpreter $pybin; built with $CC in $FX.
# minimal_env DIR (sets E and SP)
minimal_env() {
	E=$1
	SP=$E/lib/python3.11/site-packages
	mkdir -p "$E/bin" "$SP/pkg" "$SP/pkg-1.0.dist-info"
	ln -sf "$pybin" "$E/bin/python3"
	printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n' "$(dirname "$pybin")" >"$E/pyvenv.cfg"
	printf 'int PyInit__m(void) { return 0; }\n' >"$FX/m.c"
	$CC -shared -fPIC -o "$SP/pkg/_m.cpython-311-x86_64-linux-gnu.so" "$FX/m.c"
	printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
	printf 'pkg/_m.cpython-311-x86_64-linux-gnu.so,,\npkg-1.0.dist-info/RECORD,,\n' >"$SP/pkg-1.0.dist-info/RECORD"
}
finish() { [ "$fails" -eq 0 ]; }
