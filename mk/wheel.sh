#!/bin/sh
# make wheel: dist/abiscope-VERSION-py3-none-manylinux_2_17_ARCH.whl for ARCH
# x86_64 and aarch64 (WHEEL_ARCHES picks), the abiscope binary for any Linux
# of that machine with glibc 2.17 or later (RHEL 7+, Ubuntu 18.04+), with no
# shared library beyond glibc's own.
#
#   1. Through a private apt configuration made from the system's sources
#      (no root, no change to /etc/apt): zlib, jansson and libzip from their
#      source packages (apt-get source), and for another machine than this
#      one, GCC's libstdc++ for it (libstdc++-N-dev-DEBARCH-cross, a .deb
#      opened, not installed).  A source that fails (a 404) is named on
#      stderr and the next tried: the package's other versions, then the
#      distribution's main archive alone.  (WHEEL_ONLY=sources stops here.)
#   2. zig (PyPI's ziglang) and auditwheel in a venv: zig's clang targets
#      ARCH-linux-gnu.2.17, linking against glibc 2.17's symbol versions.  It
#      links C only: no libc++ (building it took zig 25 of the 34 minutes).
#   3. Per ARCH: the three libraries as static archives; libstdc++'s
#      demangler alone, cp-demangle.o taken out of libstdc++.a (this
#      machine's for its own ARCH: the very code behind the native build's
#      __cxa_demangle); abiscope with that toolchain (the Makefile,
#      BUILD=$W/ARCH/obj); then mk/wheel.py packages the binary behind a
#      console entry point, with the man pages and completion (mk/docs.sh,
#      printed by the binary that runs here) as the wheel's data, and
#      auditwheel checks the tag.
# Everything lands in $WHEEL_BUILD (default build-wheel/), zig's cache too; a
# rerun reuses what is there.  libcuda.so.1 is still dlopen()ed from the
# system at run time.  The log of every step is $WHEEL_BUILD/build.log; a
# failing step also prints its last lines here.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
W=${WHEEL_BUILD:-$top/build-wheel}
PYTHON=${PYTHON:-python3}
ZIGLANG=${ZIGLANG:-ziglang==0.17.1}
AUDITWHEEL=${AUDITWHEEL:-auditwheel==6.4.0}
CHECKERS=${CHECKERS:-packaging>=24.2 trove-classifiers}
ARCHES=${WHEEL_ARCHES:-x86_64 aarch64}
mkdir -p "$W"
W=$(cd "$W" && pwd)
log=$W/build.log
: >"$log"
export ZIG_GLOBAL_CACHE_DIR="$W/zig-cache" ZIG_LOCAL_CACHE_DIR="$W/zig-cache"
step() { echo "  WHEEL $*"; }
fail() {
	echo "mk/wheel.sh: $1 (the whole log: $log)" >&2
	[ $# -gt 1 ] && printf '%s\n' "$2" | tail -20 | sed 's/^/  | /' >&2
	exit 1
}
run() {
	echo "+ $*" >>"$log"
	out=$("$@" 2>&1) || { rc=$?; printf '%s\n' "$out" >>"$log"; fail "failed (exit $rc): $*" "$out"; }
	printf '%s\n' "$out" >>"$log"
}
host=$(uname -m)
debarch() { case $1 in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) fail "no wheel for machine $1" ;; esac; }
for arch in $ARCHES; do debarch "$arch" >/dev/null; done
# the man pages are printed by a binary that runs here: this machine's is
# built even when no wheel of it is asked for
BUILD_ARCHES=$ARCHES
case " $ARCHES " in *" $host "*) ;; *) BUILD_ARCHES="$host $ARCHES" ;; esac

# 1. sources and cross libraries through a private apt configuration: first
# the system's sources (each deb or deb-src line as both kinds), then, for
# what they fail to give, the distribution's main archive alone.
gcc_major=$(${HOSTCC:-gcc} -dumpversion | cut -d. -f1)
. /etc/os-release
case ${ID:-} in
debian) archive="http://deb.debian.org/debian main" keyring=/usr/share/keyrings/debian-archive-keyring.gpg ;;
ubuntu) archive="http://archive.ubuntu.com/ubuntu main universe" keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg ;;
*) archive= ;;
esac
apt_setup() { # system|archive
	apt=$W/apt-$1
	[ -f "$apt/updated" ] && return 0
	rm -rf "$apt"
	mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
	if [ "$1" = system ]; then
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			sed -n 's/^deb\(-src\)\{0,1\}[ \t]\{1,\}\(.*\)/deb \2\ndeb-src \2/p' "$f" | sort -u >>"$apt/parts/system.list"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] && sed 's/^Types:.*/Types: deb deb-src/' "$f" >"$apt/parts/${f##*/}"
		done
		# a local mirror (or a test's), before the others
		[ -z "${WHEEL_APT_SOURCES:-}" ] || printf '%s\n' "$WHEEL_APT_SOURCES" >"$apt/parts/00-extra.list"
	else
		[ -n "$archive" ] && [ -n "${VERSION_CODENAME:-}" ] || return 1
		printf 'Types: deb deb-src\nURIs: %s\nSuites: %s %s-updates\nComponents: %s\nSigned-By: %s\n' \
			"${archive%% *}" "$VERSION_CODENAME" "$VERSION_CODENAME" "${archive#* }" "$keyring" >"$apt/parts/archive.sources"
	fi
	echo "+ apt-get update ($apt)" >>"$log"
	out=$(apt_do apt-get update 2>&1) || true
	printf '%s\n' "$out" >>"$log"
	# apt goes on without a source that fails (its lists stay empty): say which
	printf '%s\n' "$out" | apt_errors 20 | sed 's/^/  WHEEL apt-get update: /' >&2
	touch "$apt/updated"
}
apt_do() { # apt-get|apt-cache ARGS, with the configuration in $apt
	cmd=$1
	shift
	"$cmd" -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt/parts" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status=/dev/null \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root -o Acquire::Retries=2 "$@"
}
errors=
# apt_errors: apt's Err lines joined with the reason on the line after each
apt_errors() { awk '/^(Err|E):/ {if (e) print e; e = $0; next} e && /^ / {sub(/^ +/, ""); print e ": " $0; e = ""; next} {if (e) print e; e = ""} END {if (e) print e}' | head -"$1"; }
# try_source PKG: apt-get source of each version the lists name, newest first,
# until one downloads and verifies
try_source() {
	for v in $(apt_do apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -urV); do
		echo "+ apt-get source $1=$v" >>"$log"
		if out=$(cd "$src" && apt_do apt-get source --only-source "$1=$v" 2>&1); then
			printf '%s\n' "$out" >>"$log"
			return 0
		fi
		printf '%s\n' "$out" >>"$log"
		err=$(printf '%s\n' "$out" | apt_errors 3)
		echo "  WHEEL apt-get source $1=$v failed: $(printf '%s\n' "$err" | head -1)" >&2
		errors="$errors$err
"
		rm -rf "$src/$1"-* "$src/$1"_*
	done
	return 1
}
# try_deb PKG DIR: the same for a binary package, unpacked into DIR
try_deb() {
	for v in $(apt_do apt-cache madison "$1" 2>/dev/null | awk -F' *[|] *' '$3 ~ /Packages$/ {print $2}' | sort -urV); do
		echo "+ apt-get download $1=$v" >>"$log"
		rm -f "$W/debs/$1"_*.deb
		if out=$(cd "$W/debs" && apt_do apt-get download "$1=$v" 2>&1); then
			printf '%s\n' "$out" >>"$log"
			run dpkg-deb -x "$(ls "$W/debs/$1"_*.deb | head -1)" "$2"
			echo "$1 $v" >"$2/.version"
			return 0
		fi
		printf '%s\n' "$out" >>"$log"
		err=$(printf '%s\n' "$out" | apt_errors 3)
		echo "  WHEEL apt-get download $1=$v failed: $(printf '%s\n' "$err" | head -1)" >&2
		errors="$errors$err
"
	done
	return 1
}
fetch() { # source|deb PKG [DIR]: from the system's sources, else the archive alone
	kind=$1
	shift
	errors=
	apt_setup system
	try_"$kind" "$@" && return 0
	if apt_setup archive; then
		echo "  WHEEL $1: trying ${archive%% *} ${VERSION_CODENAME:-} alone" >&2
		try_"$kind" "$@" && return 0
	fi
	fail "no $kind package $1 could be fetched from any apt source" "${errors:-(no apt source lists $1)}"
}
src=$W/src
mkdir -p "$src"
for pkg in zlib jansson libzip; do
	ls -d "$src/$pkg"-*/ >/dev/null 2>&1 && continue
	step "apt-get source $pkg"
	fetch source "$pkg"
done
srcdir() { ls -d "$src/$1"-*/ | head -1; }
[ "${WHEEL_ONLY:-}" != sources ] || exit 0

# 2. zig, and what checks the wheels
step "zig ($ZIGLANG), $AUDITWHEEL, $CHECKERS from PyPI in $W/venv"
[ -x "$W/venv/bin/python" ] || run "$PYTHON" -m venv "$W/venv"
"$W/venv/bin/python" -c 'import ziglang, auditwheel, packaging.licenses, trove_classifiers' 2>/dev/null ||
	# shellcheck disable=SC2086 # CHECKERS are words
	run "$W/venv/bin/pip" install -q --disable-pip-version-check "$ZIGLANG" "$AUDITWHEEL" $CHECKERS
mkdir -p "$W/bin"
for arch in $BUILD_ARCHES; do
	for tool in cc ar ranlib; do
		case $tool in cc) args="cc -target $arch-linux-gnu.2.17" ;; *) args=$tool ;; esac
		printf '#!/bin/sh\nexec "%s" -m ziglang %s "$@"\n' "$W/venv/bin/python" "$args" >"$W/bin/$arch-$tool"
		chmod +x "$W/bin/$arch-$tool"
	done
done

# 3. per machine: the libraries, the demangler, abiscope, the wheel
mkdir -p "$top/dist"
for arch in $BUILD_ARCHES; do
	A=$W/$arch
	prefix=$A/prefix
	cc=$W/bin/$arch-cc
	mkdir -p "$prefix/lib" "$prefix/include" "$A/obj"
	if [ ! -f "$prefix/lib/libz.a" ]; then
		step "$arch: zlib (static)"
		z=$(srcdir zlib)
		mkdir -p "$A/obj/zlib"
		# zlib's CMakeLists renames zconf.h; its plain sources need no configure step
		[ -f "$z/zconf.h" ] || cp "$z/zconf.h.included" "$z/zconf.h" 2>/dev/null || cp "$z/zconf.h.in" "$z/zconf.h"
		for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate \
			inftrees trees uncompr zutil; do
			run "$cc" -O2 -fPIC -w -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -c "$z/$f.c" -o "$A/obj/zlib/$f.o"
		done
		run "$W/bin/$arch-ar" rcs "$prefix/lib/libz.a" "$A"/obj/zlib/*.o
		cp "$z/zlib.h" "$z/zconf.h" "$prefix/include/"
	fi
	cmake_common="-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=$arch -DCMAKE_C_COMPILER=$cc
		-DCMAKE_AR=$W/bin/$arch-ar -DCMAKE_RANLIB=$W/bin/$arch-ranlib
		-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-w -DCMAKE_INSTALL_PREFIX=$prefix
		-DCMAKE_FIND_ROOT_PATH=$prefix -DCMAKE_PREFIX_PATH=$prefix -DCMAKE_POSITION_INDEPENDENT_CODE=ON
		-DBUILD_SHARED_LIBS=OFF"
	if [ ! -f "$prefix/lib/libjansson.a" ]; then
		step "$arch: jansson (static)"
		# shellcheck disable=SC2086 # the cmake options are words
		run cmake -S "$(srcdir jansson)" -B "$A/obj/jansson" $cmake_common \
			-DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON
		run cmake --build "$A/obj/jansson" -j2
		run cmake --install "$A/obj/jansson"
	fi
	if [ ! -f "$prefix/lib/libzip.a" ]; then
		step "$arch: libzip (static, zlib only)"
		# shellcheck disable=SC2086
		run cmake -S "$(srcdir libzip)" -B "$A/obj/libzip" $cmake_common \
			-DZLIB_LIBRARY="$prefix/lib/libz.a" -DZLIB_INCLUDE_DIR="$prefix/include" \
			-DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_GNUTLS=OFF -DENABLE_OPENSSL=OFF \
			-DENABLE_MBEDTLS=OFF -DENABLE_COMMONCRYPTO=OFF -DENABLE_WINDOWS_CRYPTO=OFF \
			-DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF
		run cmake --build "$A/obj/libzip" -j2
		run cmake --install "$A/obj/libzip"
	fi
	# libstdc++'s demangler: the one object of libstdc++.a that defines
	# __cxa_demangle (it needs only malloc, realloc, free and string functions)
	if [ ! -f "$A/cp-demangle.o" ]; then
		if [ "$arch" = "$host" ]; then
			libstdcxx=$(${HOSTCC:-gcc} -print-file-name=libstdc++.a)
			[ -f "$libstdcxx" ] || fail "no libstdc++.a for ${HOSTCC:-gcc} (install g++, libstdc++-$gcc_major-dev)"
			pkg=$(dpkg-query -S "$(readlink -f "$libstdcxx")" 2>/dev/null | cut -d: -f1 | head -1)
			echo "${pkg:-libstdc++} $(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null)" >"$A/libstdc++.version"
		else
			step "$arch: libstdc++-$gcc_major-dev-$(debarch "$arch")-cross (for its cp-demangle.o)"
			rm -rf "$A/cross"
			mkdir -p "$W/debs"
			fetch deb "libstdc++-$gcc_major-dev-$(debarch "$arch")-cross" "$A/cross"
			libstdcxx=$A/cross/usr/lib/gcc-cross/$arch-linux-gnu/$gcc_major/libstdc++.a
			cp "$A/cross/.version" "$A/libstdc++.version"
		fi
		(cd "$A" && ar x "$libstdcxx" cp-demangle.o) || fail "no cp-demangle.o in $libstdcxx"
	fi
	step "$arch: abiscope for $arch-linux-gnu.2.17 (with cp-demangle.o of $(cat "$A/libstdc++.version"))"
	run make -C "$top" -j2 DEPS=skip BUILD="$A/obj/abiscope" CC="$cc" LINK="$cc" \
		EXTRA_CFLAGS="-isystem $prefix/include" EXTRA_LDFLAGS="-s" \
		LDLIBS_BASE="$prefix/lib/libzip.a $prefix/lib/libjansson.a $prefix/lib/libz.a $A/cp-demangle.o -lpthread -ldl" \
		"$A/obj/abiscope/abiscope"
	[ "$arch" != "$host" ] || run sh "$top/mk/docs.sh" "$A/obj/abiscope/abiscope" "$W/share"
done
gcc_copyright=/usr/share/doc/libstdc++-$gcc_major-dev/copyright
[ -f "$gcc_copyright" ] || gcc_copyright=/usr/share/doc/gcc-$gcc_major-base/copyright
[ -f "$gcc_copyright" ] || fail "no copyright file of GCC $gcc_major's libstdc++ (/usr/share/doc/libstdc++-$gcc_major-dev)"
version=$(sed -n 's/^#define ABISCOPE_VERSION "\(.*\)"/\1/p' "$top/src/cli/cli.h")
for arch in $ARCHES; do
	A=$W/$arch
	whl=$top/dist/abiscope-$version-py3-none-manylinux_2_17_$arch.whl
	"$PYTHON" "$top/mk/wheel.py" --arch "$arch" --binary "$A/obj/abiscope/abiscope" --share "$W/share" \
		--out "$top/dist" --demangler "$(cat "$A/libstdc++.version")" \
		--license "zlib=$(srcdir zlib)debian/copyright" \
		--license "jansson=$(srcdir jansson)debian/copyright" \
		--license "libzip=$(srcdir libzip)debian/copyright" \
		--license "libstdc++=$gcc_copyright" || fail "mk/wheel.py failed"
	"$W/venv/bin/auditwheel" show "$whl" >"$A/auditwheel.txt" 2>&1 || true
	cat "$A/auditwheel.txt" >>"$log"
	tr '\n' ' ' <"$A/auditwheel.txt" | grep -q "consistent with the following platform tag: \"manylinux_2_17_$arch\"" ||
		fail "auditwheel does not accept $(basename "$whl") as manylinux_2_17_$arch" "$(cat "$A/auditwheel.txt")"
	# the metadata as PyPI would take it: packaging's validation (license
	# expression, fields), every classifier a known one
	out=$("$W/venv/bin/python" - "$whl" 2>&1 <<'EOF'
import sys, zipfile
from packaging.metadata import Metadata
from trove_classifiers import classifiers
with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    md = Metadata.from_email(z.read(name), validate=True)
    missing = [f for f in md.license_files or [] if name.replace("METADATA", "licenses/") + f not in z.namelist()]
unknown = [c for c in md.classifiers or [] if c not in classifiers]
if missing or unknown:
    sys.exit("license files not in the wheel: %s; unknown classifiers: %s" % (missing, unknown))
print("metadata %s: license %s" % (md.metadata_version, md.license_expression))
EOF
	) || fail "the metadata of $(basename "$whl") is not valid" "$out"
	echo "$out" >>"$log"
done
