#!/bin/sh
# make wheel: dist/abiscope-VERSION-py3-none-manylinux_2_17_x86_64.whl, the
# abiscope binary for any x86-64 Linux with glibc 2.17 or later (RHEL 7+,
# Ubuntu 18.04+), with no shared library beyond glibc's own.
#
#   1. zig (PyPI's ziglang) in a venv: its clang targets x86_64-linux-gnu.2.17,
#      linking against glibc 2.17's symbol versions, and brings libc++ for
#      __cxa_demangle, linked statically.
#   2. zlib, jansson and libzip from Debian's source packages (apt-get source,
#      with a private deb-src list made from the system's sources, so neither
#      root nor a change to /etc/apt is needed), built as static libraries.
#   3. abiscope itself with that toolchain (the Makefile, BUILD=$W/obj/abiscope),
#      then packaged by mk/wheel.py with the binary behind a console entry point.
# Everything lands in $WHEEL_BUILD (default build-wheel/); a rerun reuses what
# is there.  libcuda.so.1 is still dlopen()ed from the system at run time.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
W=${WHEEL_BUILD:-$top/build-wheel}
PYTHON=${PYTHON:-python3}
ZIGLANG=${ZIGLANG:-ziglang==0.17.1}
TARGET=x86_64-linux-gnu.2.17
mkdir -p "$W"
W=$(cd "$W" && pwd)
log=$W/build.log
: >"$log"
step() { echo "  WHEEL $*"; }
run() { "$@" >>"$log" 2>&1 || { echo "mk/wheel.sh: failed: $*; see $log" >&2; tail -20 "$log" >&2; exit 1; }; }

# 1. zig
step "zig ($ZIGLANG, PyPI) in $W/venv"
[ -x "$W/venv/bin/python" ] || run "$PYTHON" -m venv "$W/venv"
"$W/venv/bin/python" -c 'import ziglang' 2>/dev/null || run "$W/venv/bin/pip" install -q "$ZIGLANG"
mkdir -p "$W/bin"
for tool in cc c++ ar ranlib; do
	case $tool in
	cc | c++) args="$tool -target $TARGET" ;;
	*) args=$tool ;;
	esac
	printf '#!/bin/sh\nexec "%s" -m ziglang %s "$@"\n' "$W/venv/bin/python" "$args" >"$W/bin/z$tool"
	chmod +x "$W/bin/z$tool"
done

# 2. the libraries, from Debian's sources
src=$W/src
if ! ls -d "$src"/zlib-*/ "$src"/jansson-*/ "$src"/libzip-*/ >/dev/null 2>&1; then
	step "apt-get source zlib jansson libzip (deb-src of the system's sources)"
	apt=$W/apt
	rm -rf "$apt"
	mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$src"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >>"$apt/parts/system.list"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt/parts/${f##*/}"
	done
	set -- -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt/parts" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1
	run apt-get "$@" update
	(cd "$src" && apt-get "$@" source zlib jansson libzip) >>"$log" 2>&1 ||
		{ echo "mk/wheel.sh: apt-get source failed; see $log" >&2; exit 1; }
fi
prefix=$W/prefix
mkdir -p "$prefix/lib" "$prefix/include" "$W/obj"
if [ ! -f "$prefix/lib/libz.a" ]; then
	step "zlib (static)"
	z=$(ls -d "$src"/zlib-*/ | head -1)
	mkdir -p "$W/obj/zlib"
	# zlib's CMakeLists renames zconf.h; its plain sources need no configure step
	[ -f "$z/zconf.h" ] || cp "$z/zconf.h.included" "$z/zconf.h" 2>/dev/null || cp "$z/zconf.h.in" "$z/zconf.h"
	for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate \
		inftrees trees uncompr zutil; do
		run "$W/bin/zcc" -O2 -fPIC -w -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -c "$z/$f.c" -o "$W/obj/zlib/$f.o"
	done
	run "$W/bin/zar" rcs "$prefix/lib/libz.a" "$W"/obj/zlib/*.o
	cp "$z/zlib.h" "$z/zconf.h" "$prefix/include/"
fi
cmake_common="-DCMAKE_C_COMPILER=$W/bin/zcc -DCMAKE_AR=$W/bin/zar -DCMAKE_RANLIB=$W/bin/zranlib
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-w -DCMAKE_INSTALL_PREFIX=$prefix
	-DCMAKE_PREFIX_PATH=$prefix -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF"
if [ ! -f "$prefix/lib/libjansson.a" ]; then
	step "jansson (static)"
	# shellcheck disable=SC2086 # the cmake options are words
	run cmake -S "$(ls -d "$src"/jansson-*/ | head -1)" -B "$W/obj/jansson" $cmake_common \
		-DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON
	run cmake --build "$W/obj/jansson" -j2
	run cmake --install "$W/obj/jansson"
fi
if [ ! -f "$prefix/lib/libzip.a" ]; then
	step "libzip (static, zlib only)"
	# shellcheck disable=SC2086
	run cmake -S "$(ls -d "$src"/libzip-*/ | head -1)" -B "$W/obj/libzip" $cmake_common \
		-DZLIB_LIBRARY="$prefix/lib/libz.a" -DZLIB_INCLUDE_DIR="$prefix/include" \
		-DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_GNUTLS=OFF -DENABLE_OPENSSL=OFF \
		-DENABLE_MBEDTLS=OFF -DENABLE_COMMONCRYPTO=OFF -DENABLE_WINDOWS_CRYPTO=OFF \
		-DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF
	run cmake --build "$W/obj/libzip" -j2
	run cmake --install "$W/obj/libzip"
fi

# 3. abiscope, and the wheel
step "abiscope for $TARGET"
run make -C "$top" -j2 DEPS=skip BUILD="$W/obj/abiscope" CC="$W/bin/zcc" LINK="$W/bin/zc++" \
	EXTRA_CFLAGS="-isystem $prefix/include" EXTRA_LDFLAGS="-s" \
	LDLIBS_BASE="$prefix/lib/libzip.a $prefix/lib/libjansson.a $prefix/lib/libz.a -lpthread -ldl" \
	"$W/obj/abiscope/abiscope"
mkdir -p "$top/dist"
step "package"
"$PYTHON" "$top/mk/wheel.py" --binary "$W/obj/abiscope/abiscope" --out "$top/dist" \
	--license "zlib=$(ls -d "$src"/zlib-*/ | head -1)debian/copyright" \
	--license "jansson=$(ls -d "$src"/jansson-*/ | head -1)debian/copyright" \
	--license "libzip=$(ls -d "$src"/libzip-*/ | head -1)debian/copyright"
