#!/bin/sh
# setup.sh: the real aarch64 glibc loader as an oracle on an x86_64 Debian 12
# machine (tests/diff/aarch64.py), built under $ABISCOPE_ARM_DIR
# (default ~/.cache/abiscope/aarch64).  As root, with network; ~3 minutes,
# ~1 GB.  Idempotent: what is there is kept.
#   xgcc/    the aarch64 cross gcc/g++ of Debian 12, unpacked from its .debs, not
#            installed: Debian 12's gcc-12-aarch64-linux-gnu conflicts with
#            gcc-multilib, which the test suite needs (apt removes one for the other)
#   bin/     wrappers for it: the unpacked `as` and `ld` need LD_LIBRARY_PATH to
#            their own libbfd/libopcodes, and gcc needs --sysroot=xgcc because
#            the cross libc.so is a linker script that names absolute paths
#   root/    Debian 12 arm64 (glibc 2.36), root13/ Debian 13 arm64 (glibc 2.41):
#            debootstrap --foreign, every .deb unpacked with dpkg-deb -x (the
#            second stage cannot run without binfmt_misc), merged-/usr links
#            restored, the static qemu copied in, the root's OWN ld.so.cache made
#            by its own ldconfig under qemu, and the drivers dlo (dlo.c) and
#            pydlo.py in /usr/local/bin
# qemu-user-static and debootstrap are installed with apt-get when missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${ABISCOPE_ARM_DIR:=$HOME/.cache/abiscope/aarch64}"
A=$ABISCOPE_ARM_DIR
XG=$A/xgcc
mkdir -p "$A"
export DEBIAN_FRONTEND=noninteractive

if ! command -v qemu-aarch64-static >/dev/null || ! command -v debootstrap >/dev/null; then
	apt-get update -q
	apt-get install -y -q qemu-user-static debootstrap
fi

if [ ! -x "$XG/usr/bin/aarch64-linux-gnu-gcc" ] || [ ! -x "$XG/usr/bin/aarch64-linux-gnu-g++" ]; then
	mkdir -p "$A/xgcc-debs"
	rm -f "$A"/xgcc-debs/*.deb
	(cd "$A/xgcc-debs" && apt-get download gcc-aarch64-linux-gnu g++-aarch64-linux-gnu cpp-aarch64-linux-gnu \
		gcc-12-aarch64-linux-gnu g++-12-aarch64-linux-gnu cpp-12-aarch64-linux-gnu \
		gcc-12-aarch64-linux-gnu-base gcc-12-cross-base binutils-aarch64-linux-gnu libc6-arm64-cross \
		libc6-dev-arm64-cross linux-libc-dev-arm64-cross libgcc-s1-arm64-cross libgcc-12-dev-arm64-cross \
		libstdc++6-arm64-cross libstdc++-12-dev-arm64-cross libgomp1-arm64-cross libatomic1-arm64-cross \
		libasan8-arm64-cross liblsan0-arm64-cross libtsan2-arm64-cross libubsan1-arm64-cross \
		libhwasan0-arm64-cross libitm1-arm64-cross)
	for d in "$A"/xgcc-debs/*.deb; do dpkg-deb -x "$d" "$XG"; done
	rm -rf "$A/xgcc-debs"
fi
mkdir -p "$A/bin"
for t in gcc g++ cpp as ld readelf objdump objcopy nm strip ar; do
	sysroot=
	case $t in gcc | g++) sysroot="--sysroot=$XG" ;; esac
	cat >"$A/bin/aarch64-linux-gnu-$t" <<WRAP
#!/bin/sh
# the unpacked cross toolchain: its own libbfd/libopcodes, a sysroot for libc.so's absolute paths
LD_LIBRARY_PATH=$XG/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec $XG/usr/bin/aarch64-linux-gnu-$t $sysroot "\$@"
WRAP
	chmod +x "$A/bin/aarch64-linux-gnu-$t"
done
"$A/bin/aarch64-linux-gnu-gcc" --version | head -1

# chrun ROOT PROG...: PROG inside ROOT under qemu (no binfmt_misc)
chrun() { r=$1; shift; chroot "$r" /usr/bin/qemu-aarch64-static "$@"; }

make_root() {
	suite=$1 r=$2 include=$3
	if [ ! -e "$r/usr/lib/ld-linux-aarch64.so.1" ]; then
		rm -rf "$r"
		debootstrap --foreign --arch=arm64 --variant=minbase ${include:+--include=$include} \
			"$suite" "$r" http://deb.debian.org/debian
		for d in "$r"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$d" "$r"; done
		rm -f "$r"/var/cache/apt/archives/*.deb
		(cd "$r" && for d in bin sbin lib; do
			if [ -d $d ] && [ ! -L $d ]; then cp -a $d/. usr/$d/ && rm -rf $d && ln -s usr/$d $d; fi
		done)
	fi
	cp /usr/bin/qemu-aarch64-static "$r/usr/bin/"
	mkdir -p "$r/usr/local/bin"
	"$A/bin/aarch64-linux-gnu-gcc" -O2 -o "$r/usr/local/bin/dlo" "$here/dlo.c"
	cp "$here/pydlo.py" "$r/usr/local/bin/pydlo.py"
	chrun "$r" /sbin/ldconfig
	test "$(chrun "$r" /usr/local/bin/dlo libc.so.6)" = OK
	echo "aarch64 root ready: $r ($suite)"
}

make_root bookworm "$A/root" libstdc++6,libgomp1,libssl3,libcurl4,libpython3.11,libglib2.0-0,libxml2,libsqlite3-0,libgfortran5,libopenblas0-pthread,libzstd1,liblzma5,libbz2-1.0,libffi8,libnuma1,libelf1,libexpat1,libatomic1,python3.11-minimal,libpython3.11-stdlib
make_root trixie "$A/root13" libstdc++6,libgomp1,libatomic1,libzstd1,libgfortran5,libssl3t64
