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
#   DEPS_SYSROOT  where /etc and /usr/sbin are (default /; tests/e2e/deps.sh)
#   DEPS_RECORD   a file the names of the packages it installs are added to
#                 (the Makefile's: build/deps-installed.txt, for the check
#                 that make test leaves no service of theirs enabled)
# Why probes rather than dpkg: what matters is that the compiler finds the
# header and the library, whatever installed them.
#
# An install starts and enables nothing: the test packages include daemons
# (openssh-server, munge, slurmd, slurmctld) that the fleet suites start
# themselves, in namespaces, and stop.  While apt-get runs, a policy-rc.d
# (unless the machine has its own) refuses every start, the Debian way
# (invoke-rc.d, deb-systemd-invoke); afterwards each unit or rc?.d start
# link the install added is taken away again (systemctl list-unit-files
# shows them disabled), and the line that says so names them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${DEPS_LIST:=$here/deps.txt}"
: "${CC:=cc}"
: "${DEPS_INSTALL:=1}"
: "${DEPS_SYSROOT:=}"
sysroot=${DEPS_SYSROOT%/}
# Debian's python packages serve Debian's python, not a pyenv or venv one first on PATH
if [ -z "${PYTHON:-}" ]; then
	PYTHON=python3
	[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
tmp=

policy=
drop_policy() {
	[ -n "$policy" ] && $policy rm -f "$sysroot/usr/sbin/policy-rc.d"
	policy=
}
cleanup() {
	[ -n "$tmp" ] && rm -rf "$tmp"
	drop_policy
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# One scratch folder, made here: the probes run in subshells ($(probe ...),
# a pipeline's loop), where one they made was lost to this cleanup and left
# in /tmp, one per run (a thousand on a build machine).
tmp=$(mktemp -d) || exit 1

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

# Services enabled: the links in /etc/systemd/system (a unit in a *.wants
# or *.requires folder, an alias: what systemctl enable makes), and the
# rc?.d start links, one a line.
enabled() {
	find "$sysroot/etc/systemd/system" -type l 2>/dev/null
	ls -d "$sysroot"/etc/rc[2-5S].d/S* 2>/dev/null
}

# quiet_install ROOT APT PACKAGE...: apt-get install with a policy-rc.d that
# refuses to start services, then undoes the enabling of each service the
# install enabled; ROOT is "" or "sudo", what writes under /etc.
quiet_install() {
	root=$1 apt=$2
	shift 2
	before=$(enabled | sort)
	if [ ! -e "$sysroot/usr/sbin/policy-rc.d" ]; then
		policy=${root:-env}
		# shellcheck disable=SC2016
		$policy sh -c 'mkdir -p "$1" && printf "#!/bin/sh\n# abiscope mk/deps.sh: no service starts while it installs\nexit 101\n" \
			>"$1/policy-rc.d" && chmod 755 "$1/policy-rc.d"' sh "$sysroot/usr/sbin" || policy=
	fi
	# shellcheck disable=SC2086
	$apt install -y -qq --no-install-recommends "$@" >/dev/null
	status=$?
	drop_policy
	[ -n "$tmp" ] || tmp=$(mktemp -d)
	printf '%s\n' "$before" >"$tmp/before"
	added=$(enabled | sort | comm -13 "$tmp/before" -)
	names=
	for link in $added; do
		case "$link" in
		*/rc?.d/S*)
			# sysvinit's way to disable: the start link becomes a stop link
			$root mv -f "$link" "${link%/S*}/K${link##*/S}" ;;
		*)
			$root rm -f "$link" ;;
		esac
		name=${link##*/}
		name=${name#S[0-9][0-9]}
		name=${name%.service}
		case " $names " in *" $name "*) ;; *) names="$names $name" ;; esac
	done
	[ -z "$names" ] ||
		echo "abiscope: the install enabled${names}: disabled again (the tests start their own daemons)" >&2
	return $status
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
	root=
	[ "$apt" = "sudo apt-get" ] && root=sudo
	# shellcheck disable=SC2086
	quiet_install "$root" "$apt" $pkgs || {
		fail "abiscope: '$apt install -y $pkgs' failed (missing $whys)"
		return 1
	}
	[ -n "${DEPS_RECORD:-}" ] && printf '%s\n' $pkgs >>"$DEPS_RECORD"
	still=$(missing "$@")
	if [ -n "$still" ]; then
		whys=$(explain "$still")
		fail "abiscope: still missing after '$apt install': $whys (is CC=$CC the compiler those packages serve?)"
		return 1
	fi
	return 0
}

readme() {
	for kind in build test fuzz wheel aarch64 ci; do
		case $kind in
		build) what="to build (\`make\`, \`make demo\`)" ;;
		test) what="to test (\`make test\`), in addition" ;;
		fuzz) what="for the fuzz targets (\`make fuzz\`)" ;;
		wheel) what="for the wheel (\`make wheel\`; it also fetches zig from PyPI and Debian's sources)" ;;
		aarch64) what="for the real aarch64 loader as an oracle (\`make test-aarch64\`; it also unpacks Debian's aarch64 cross gcc and debootstraps arm64 roots)" ;;
		ci) what="for CI's check of the README's two commands on a fresh Debian 12 root (\`.ci/fresh-root\`)" ;;
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
