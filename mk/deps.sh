#!/bin/sh
# The dependency check behind `make`, `make test` and .ci/run, driven by
# mk/deps.txt (the one list of Debian packages).
#
#   sh mk/deps.sh check KIND...   probe each package of those kinds; install the
#                                 missing ones with apt-get when root or with
#                                 passwordless sudo, otherwise print one line
#                                 naming the command and exit 1
#   sh mk/deps.sh list KIND...    the package names, one line
#   sh mk/deps.sh readme          the README's package list (markdown)
#   --make (first)                the line that stops the build goes to stdout,
#                                 for the Makefile's $(error); the rest to stderr
#
#   CC            the compiler the header probes use (default cc)
#   DEPS_INSTALL  0: never install, only report
#   DEPS_LIST     the list to read (default mk/deps.txt beside this script)
#   PYTHON        the python the py: probes import with (default /usr/bin/python3)
# Why probes rather than dpkg: what matters is that the compiler finds the
# header and the library, whatever installed them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${DEPS_LIST:=$here/deps.txt}"
: "${CC:=cc}"
: "${DEPS_INSTALL:=1}"
# Debian's python packages serve Debian's python, not a pyenv or venv one first on PATH
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
tmp=

cleanup() { [ -n "$tmp" ] && rm -rf "$tmp"; }
trap cleanup EXIT

# Lines of the list for the given kinds: "PACKAGE PROBE..."
entries() {
	awk -v kinds=" $* " '
		/^[ \t]*(#|$)/ { next }
		index(kinds, " " $1 " ") { $1 = ""; sub(/^ /, ""); print }
	' "$DEPS_LIST"
}

# probe PROBE...: 0 when every probe passes. Prints what failed.
probe() {
	headers= libs= bad=
	for p in "$@"; do
		case "$p" in
		*.h) headers="$headers $p" ;;
		-l*) libs="$libs $p" ;;
		py:*) "$PYTHON" -c "import ${p#py:}" >/dev/null 2>&1 || bad="$bad ${p#py:} (python module)" ;;
		*) command -v "$p" >/dev/null 2>&1 || bad="$bad $p" ;;
		esac
	done
	if [ -n "$headers$libs" ]; then
		[ -n "$tmp" ] || tmp=$(mktemp -d)
		: >"$tmp/probe.c"
		for h in $headers; do echo "#include <$h>" >>"$tmp/probe.c"; done
		echo "int main(void) { return 0; }" >>"$tmp/probe.c"
		# shellcheck disable=SC2086 # word splitting of CC and libs is wanted
		$CC -o "$tmp/probe" "$tmp/probe.c" $libs >/dev/null 2>&1 ||
			bad="$bad$headers$libs"
	fi
	[ -z "$bad" ] && return 0
	echo "${bad# }"
	return 1
}

# missing KIND...: "PACKAGE<TAB>WHY" for each package whose probe fails
missing() {
	entries "$@" | while read -r pkg probes; do
		if [ -n "$probes" ]; then
			# shellcheck disable=SC2086
			why=$(probe $probes) || printf '%s\t%s\n' "$pkg" "$why"
		elif command -v dpkg-query >/dev/null 2>&1; then
			dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' ||
				printf '%s\t%s\n' "$pkg" "not installed"
		fi
	done
}

# How packages get installed here: "apt-get", "sudo apt-get" or "" (we cannot).
installer() {
	[ "$DEPS_INSTALL" = 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 || return 0
	if [ "$(id -u)" = 0 ]; then
		echo "apt-get"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
		echo "sudo apt-get"
	fi
}

# explain MISSING: "libzip-dev: no zip.h -lzip, patchelf: no patchelf"
explain() {
	printf '%s\n' "$1" | awk -F '\t' '{ printf "%s%s: %s%s", (NR > 1 ? ", " : ""), $1, ($2 == "not installed" ? "" : "no "), $2 }'
}

check() {
	[ $# -gt 0 ] || set -- build
	miss=$(missing "$@")
	[ -z "$miss" ] && return 0
	pkgs=$(printf '%s\n' "$miss" | cut -f1 | tr '\n' ' ')
	pkgs=${pkgs% }
	whys=$(explain "$miss")
	apt=$(installer)
	if [ -z "$apt" ]; then
		if command -v apt-get >/dev/null 2>&1; then
			fail "abiscope: missing $whys; install them with: sudo apt-get install -y $pkgs"
		else
			fail "abiscope: missing $whys; install the equivalents of the Debian packages $pkgs"
		fi
		return 1
	fi
	echo "abiscope: missing $whys; installing: $apt install -y $pkgs" >&2
	export DEBIAN_FRONTEND=noninteractive
	$apt update -qq >/dev/null 2>&1 || echo "abiscope: '$apt update' failed; trying the install anyway" >&2
	# shellcheck disable=SC2086
	$apt install -y -qq --no-install-recommends $pkgs >/dev/null || {
		fail "abiscope: '$apt install -y $pkgs' failed (missing $whys)"
		return 1
	}
	still=$(missing "$@")
	if [ -n "$still" ]; then
		whys=$(explain "$still")
		fail "abiscope: still missing after '$apt install': $whys (is CC=$CC the compiler those packages serve?)"
		return 1
	fi
	return 0
}

readme() {
	for kind in build test fuzz wheel aarch64; do
		case $kind in
		build) what="to build (\`make\`, \`make demo\`)" ;;
		test) what="to test (\`make test\`), in addition" ;;
		fuzz) what="for the fuzz targets (\`make fuzz\`)" ;;
		wheel) what="for the wheel (\`make wheel\`; it also fetches zig from PyPI and Debian's sources)" ;;
		aarch64) what="for the real aarch64 loader as an oracle (\`make test-aarch64\`; it also unpacks Debian's aarch64 cross gcc and debootstraps arm64 roots)" ;;
		esac
		printf -- '* %s: %s\n' "$what" "$(entries $kind | awk '{ printf "%s`%s`", (NR > 1 ? ", " : ""), $1 }')"
	done
}

# fail LINE: the one line that says why the check failed
fail() { echo "$1" >&"$fail_fd"; }
fail_fd=2
if [ "${1:-}" = --make ]; then
	fail_fd=1
	shift
fi
cmd=${1:-check}
[ $# -gt 0 ] && shift
case "$cmd" in
check) check "$@" ;;
list) entries "$@" | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 } END { print "" }' ;;
readme) readme ;;
*) echo "usage: sh mk/deps.sh check|list|readme [KIND...]" >&2; exit 2 ;;
esac
