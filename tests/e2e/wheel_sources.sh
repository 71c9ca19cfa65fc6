#!/bin/sh
# make wheel's source packages when an apt source answers 404: a local
# deb-src repository (python's http.server on 127.0.0.1) lists a zlib newer
# than Debian's whose files are not there; mk/wheel.sh (WHEEL_ONLY=sources:
# the apt step alone) names the 404 on stderr, not only in build.log, and
# falls back to the next version, from the system's sources.  Needs the
# network to the distribution's archive (Debian's or Ubuntu's; SKIP when its
# lists cannot be fetched or it answers 404 for its own source files).
. "$(dirname "$0")/lib.sh"
fixture_dir wheel_sources
command -v apt-get >/dev/null 2>&1 || { echo "ok - wheel sources # SKIP no apt-get"; exit 0; }
command -v dpkg-source >/dev/null 2>&1 || { echo "ok - wheel sources # SKIP no dpkg-source (dpkg-dev)"; exit 0; }
mkdir -p "$FX/repo"
cat >"$FX/repo/Sources" <<'EOF'
Package: zlib
Binary: zlib1g
Version: 1:9.9-1
Maintainer: nobody <nobody@example.org>
Architecture: any
Format: 3.0 (quilt)
Directory: pool/z/zlib
Files:
 d41d8cd98f00b204e9800998ecf8427e 100 zlib_9.9-1.dsc
Checksums-Sha256:
 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 100 zlib_9.9-1.dsc

EOF
python3 - "$FX/repo" <<'EOF'
import email.utils, hashlib, os, sys
d = sys.argv[1]
data = open(os.path.join(d, "Sources"), "rb").read()
with open(os.path.join(d, "Release"), "w") as f:
    f.write("Origin: test\nLabel: test\nSuite: test\nCodename: test\nDate: %s\nSHA256:\n %s %d Sources\n"
            % (email.utils.formatdate(usegmt=True), hashlib.sha256(data).hexdigest(), len(data)))
EOF
# the server binds a port of its own choosing (none is free between a probe
# and its bind) and says which when it listens
python3 -u -m http.server --bind 127.0.0.1 --directory "$FX/repo" 0 >"$FX/http.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
port=
for i in $(seq 100); do
	port=$(sed -n 's/^Serving HTTP on .* port \([0-9][0-9]*\) .*/\1/p' "$FX/http.log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { fail "the local apt source listens" "$(cat "$FX/http.log")"; finish; exit 1; }
# a second try when the first fails: the distribution's archive is on the
# network, and a reset connection is no defect of mk/wheel.sh
for try in 1 2; do
	rm -rf "$FX/w"
	WHEEL_ONLY=sources WHEEL_BUILD=$FX/w WHEEL_APT_SOURCES="deb-src [trusted=yes] http://127.0.0.1:$port/ ./" \
		sh "$TOP/mk/wheel.sh" >"$FX/out.txt" 2>"$FX/err.txt"
	rc=$?
	[ "$rc" = 0 ] && break
done
if [ "$rc" != 0 ] && grep -q 'apt-get update: Err.*\(deb\.debian\.org\|\(archive\|security\)\.ubuntu\.com\)' "$FX/err.txt"; then
	echo "ok - wheel sources # SKIP the distribution's archive is not reachable: $(grep -m1 'apt-get update' "$FX/err.txt")"
	exit 0
fi
# the distribution's archive (or the mirror or proxy in its place) answers 404
# for its own source files, not only the test's source: nothing to fall back
# to (seen for Ubuntu 24.04's .dsc files through a site's caching proxy)
others=$(grep 'WHEEL apt-get source .* failed:' "$FX/err.txt" | grep -v "127\.0\.0\.1:$port")
if [ "$rc" != 0 ] && [ -n "$others" ] && ! printf '%s\n' "$others" | grep -qv ' 404 '; then
	echo "ok - wheel sources # SKIP the archive answers 404 for its own sources: $(printf '%s\n' "$others" | head -1 | sed 's/^ *//')"
	exit 0
fi
expect_eq "$rc" 0 "mk/wheel.sh gets the sources although one apt source answers 404"
expect_contains "$(cat "$FX/err.txt")" "WHEEL apt-get source zlib=1:9.9-1 failed: Err:" \
	"the failing version is named on stderr"
expect_contains "$(grep 'zlib=1:9.9-1' "$FX/err.txt")" "404" "with the 404 itself: $(grep -m1 'zlib=1:9.9-1' "$FX/err.txt")"
expect_eq "$(cd "$FX/w/src" && ls -d zlib-1.* jansson-* libzip-* 2>/dev/null | wc -l)" 3 \
	"zlib (from the next version, $(cd "$FX/w/src" && ls -d zlib-1.*)), jansson and libzip are unpacked"
expect_eq "$(grep -c 'GET /pool/z/zlib/zlib_9.9-1.dsc' "$FX/http.log")" "$try" \
	"the local source was asked for the .dsc it lists, once a try"
finish
