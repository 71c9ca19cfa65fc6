#!/bin/sh
# The aarch64 wheel (make wheel: manylinux_2_17_aarch64) on a real arm64
# Debian root under qemu: the root's own python3 and a pip wheel install it
# into a venv of that python (pip decides, on aarch64, that the tag fits, and
# refuses the x86_64 wheel), its console entry point and `python -m abiscope`
# run there, its man pages and completion are the ones this build prints, and
# it gives the same answers as this (x86_64) build on the same tree: the
# root's libraries, a venv in it, wheels, snapshots made on either side.
#
# The root is ARM_ROOT (default /var/tmp/aarch64-oracle/root, made by
# ../shared/aarch64-oracle/setup.sh: Debian 12 arm64 with python3.11 and
# qemu-aarch64-static inside).  Nothing is written into it: it is the lower
# layer of an overlay mounted in a mount namespace of this test's own, which
# goes away with the test.  aarch64 programs run through qemu-aarch64-static
# registered with binfmt_misc in a user namespace of the test's own (Linux
# 6.7 or later), so a program the root runs can exec another (the entry
# point execs the binary), and the machine's binfmt_misc is left alone.
# SKIPs, saying why, without qemu, the root, root privileges or the wheel.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_pywheel.sh"
ARM_ROOT=${ARM_ROOT:-/var/tmp/aarch64-oracle/root}
skip() {
	echo "ok - the aarch64 wheel under qemu # SKIP $1"
	exit 0
}
if [ -z "${PYWHEEL_AARCH64_INNER:-}" ]; then
	fixture_dir pywheel_aarch64
	version=$("$ABISCOPE" --version | sed 's/^abiscope //')
	whl=$TOP/dist/abiscope-$version-py3-none-manylinux_2_17_aarch64.whl
	[ -f "$whl" ] || skip "no $(basename "$whl"): run make wheel"
	[ -z "$(find "$TOP/src" "$TOP/data" -newer "$whl" -type f | head -1)" ] ||
		skip "$(basename "$whl") is older than src/: run make wheel again"
	command -v qemu-aarch64-static >/dev/null 2>&1 || skip "no qemu-aarch64-static (Debian's qemu-user-static)"
	py=
	for p in "$ARM_ROOT"/usr/bin/python3.[0-9]*; do
		case ${p##*/} in python3.[0-9] | python3.[0-9][0-9]) py=${p##*/} && break ;; esac
	done
	[ -n "$py" ] || skip "no arm64 root with a python3 at ARM_ROOT=$ARM_ROOT (../shared/aarch64-oracle/setup.sh makes one)"
	[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace, an overlay, chroot)"
	pipwhl=$(ls /usr/share/python-wheels/pip-*.whl 2>/dev/null | tail -1)
	[ -n "$pipwhl" ] || skip "no pip wheel in /usr/share/python-wheels (Debian's python3-pip-whl)"
	export PYWHEEL_AARCH64_INNER=1 FX whl py pipwhl version
	unshare --user --map-root-user --mount true 2>/dev/null ||
		skip "no user namespaces here (unshare --user): binfmt_misc cannot be registered privately"
	exec unshare --user --map-root-user --mount sh "$0"
fi

# in the namespaces: binfmt_misc for aarch64, the overlay
mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>"$FX/binfmt.err" ||
	skip "binfmt_misc cannot be mounted in a user namespace here (Linux 6.7 or later): $(cat "$FX/binfmt.err")"
printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:F' \
	>/proc/sys/fs/binfmt_misc/register
R=$FX/root
mkdir -p "$FX/upper" "$FX/work" "$R"
mount -t overlay overlay -o "lowerdir=$ARM_ROOT,upperdir=$FX/upper,workdir=$FX/work" "$R" ||
	skip "an overlay of $ARM_ROOT cannot be mounted here"
mkdir -p "$R/tmp/in"
cp "$whl" "$pipwhl" "$R/tmp/in/"
x86whl=$TOP/dist/abiscope-$version-py3-none-manylinux_2_17_x86_64.whl
[ -f "$x86whl" ] && cp "$x86whl" "$R/tmp/in/"
inroot() { PYTHONDONTWRITEBYTECODE=1 chroot "$R" "$@"; }

# pip, in the root's own python, installs it
inroot "/usr/bin/$py" -m venv --without-pip /opt/venv >"$FX/venv.log" 2>&1
expect_eq "$?" 0 "the arm64 root's $py makes a venv"
pipin="/opt/venv/bin/python /tmp/in/$(basename "$pipwhl")/pip install --no-index --disable-pip-version-check"
# shellcheck disable=SC2086 # pip's words
inroot $pipin "/tmp/in/$(basename "$whl")" >"$FX/pip.log" 2>&1
expect_eq "$?" 0 "pip (on aarch64, under qemu) installs $(basename "$whl") into that venv"
if [ -f "$x86whl" ]; then
	# shellcheck disable=SC2086
	inroot $pipin "/tmp/in/$(basename "$x86whl")" >"$FX/pip-x86.log" 2>&1
	expect_eq "$?" 1 "pip on aarch64 refuses the x86_64 wheel"
	pip_says=$(grep -o "[^ ]*\.whl is not a supported wheel on this platform" "$FX/pip-x86.log")
	"$ABISCOPE" wheel --root "$R" --env /opt/venv "$x86whl" >"$FX/wheel-x86.txt" 2>&1
	expect_contains "$(cat "$FX/wheel-x86.txt")" "pip would refuse it: \"$pip_says\"" \
		"abiscope wheel says what the real pip says of the x86_64 wheel on aarch64"
fi
bin=/opt/venv/lib/$py/site-packages/abiscope/_bin/abiscope
expect_eq "$(readelf -h "$R$bin" | sed -n 's/^ *Machine: *//p')" "AArch64" "the wheel's binary is an aarch64 program"
needed=$(readelf -d "$R$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
expect_eq "$needed" "libc.so.6 libdl.so.2 " "it needs only glibc's libraries"
expect_eq "$(inroot /opt/venv/bin/abiscope --version 2>&1)" "abiscope $version" \
	"the console entry point runs in the root: abiscope --version"
expect_eq "$(inroot /opt/venv/bin/python -m abiscope --version 2>&1)" "abiscope $version" "python -m abiscope --version"
out=$(inroot /opt/venv/bin/abiscope check /opt/venv 2>&1)
expect_eq "$?" 0 "abiscope check of the venv it is installed in, on aarch64: exit 0"

# the man pages and completion it installs are the ones this build prints
sh "$TOP/mk/docs.sh" "$ABISCOPE" "$FX/share" >/dev/null 2>&1
same=1
for f in "$FX"/share/man1/*.1; do
	cmp -s "$f" "$R/opt/venv/share/man/man1/$(basename "$f")" || same="$same $(basename "$f")"
done
cmp -s "$FX/share/bash-completion/abiscope" "$R/opt/venv/share/bash-completion/completions/abiscope" || same="$same bash"
cmp -s "$FX/share/zsh/_abiscope" "$R/opt/venv/share/zsh/site-functions/_abiscope" || same="$same zsh"
expect_eq "$same" 1 "its share/man/man1 ($(ls "$FX"/share/man1 | wc -l) pages) and bash, zsh completion are what this build prints"

# the same answers on the same tree: this build, and the aarch64 binary run
# here by the root's own loader (no path remapping: it sees what this sees)
arm() { "$R/lib/ld-linux-aarch64.so.1" --library-path "$R/lib/aarch64-linux-gnu" "$R$bin" "$@"; }
inroot /opt/venv/bin/abiscope snapshot -o /tmp/arm.json.gz /opt/venv >"$FX/snap-arm.log" 2>&1
expect_eq "$?" 0 "the aarch64 abiscope writes a snapshot of its venv, in the root"
cp "$R/tmp/arm.json.gz" "$FX/arm.json.gz"
"$ABISCOPE" snapshot --root "$R" -o "$FX/x86.json.gz" /opt/venv >"$FX/snap-x86.log" 2>&1
# C++ names, for the demangler: the demo environment (torch's) and the
# nested templates of cxx_fixture, snapshots with the names kept
sh "$TOP/demo/build.sh" "$FX/demo" >"$FX/demo.log" 2>&1
"$ABISCOPE" snapshot --names -o "$FX/demo.json.gz" "$FX/demo/venv" >>"$FX/demo.log" 2>&1
cxx_fixture "$FX/cxx" >"$FX/cxx.log" 2>&1
"$ABISCOPE" snapshot --names -o "$FX/cxx.json.gz" "$FX/cxx" >>"$FX/cxx.log" 2>&1
mangled=_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib
set -- "check --json --root $R --libraries /usr/lib/aarch64-linux-gnu" \
	"check --root $R --libraries -v /usr/lib/aarch64-linux-gnu" \
	"check --json --root $R /opt/venv" \
	"check --root $R /usr/lib/$py/lib-dynload" \
	"why --json --root $R --process /usr/bin/$py libstdc++.so.6" \
	"why --json --root $R --process /usr/bin/$py /usr/lib/$py/lib-dynload/_ssl.cpython-311-aarch64-linux-gnu.so" \
	"wheel --json --root $R --env /opt/venv $whl" \
	"check --json --host $FX/arm.json.gz" "check --json --host $FX/x86.json.gz" \
	"diff --json $FX/x86.json.gz $FX/arm.json.gz" \
	"explain --json --root $R --python /usr/bin/$py ImportError: /usr/lib/$py/lib-dynload/_ssl.cpython-311-aarch64-linux-gnu.so: undefined symbol: $mangled" \
	"check -v --host $FX/demo.json.gz" "check --json --host $FX/demo.json.gz" \
	"check --libraries -v --host $FX/cxx.json.gz" \
	"torch-compat --releases" "help --man check" "completion bash"
[ -f "$x86whl" ] && set -- "$@" "wheel --json --root $R --env /opt/venv $x86whl"
# what a binary running on aarch64 knows of its own machine and the x86_64
# build assumes of an aarch64 root: its AT_PAGESZ and AT_HWCAP (the
# assumptions list says so); all else must be the same
neutral() {
	python3 - "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit(0)
def walk(x):
    if isinstance(x, dict):
        return {k: walk(v) for k, v in x.items()}
    if isinstance(x, list):
        return [walk(v) for v in x if not (isinstance(v, str) and v.startswith(
            ("page size assumed to be", "AT_HWCAP assumed")))]
    return x
json.dump(walk(d), open(sys.argv[1], "w"), indent=2)
EOF
}
for args in "$@"; do
	# shellcheck disable=SC2086 # the arguments are words
	"$ABISCOPE" $args >"$FX/x86.out" 2>&1
	want=$?
	# shellcheck disable=SC2086
	arm $args >"$FX/arm.out" 2>&1
	got=$?
	neutral "$FX/x86.out"
	neutral "$FX/arm.out"
	name=$(echo "$args" | sed -e "s#$R#ROOT#g" -e "s#$FX/##g" -e "s#$TOP/##g" | cut -c1-110)
	if [ "$got" = "$want" ] && cmp -s "$FX/x86.out" "$FX/arm.out"; then
		pass "abiscope $name: the aarch64 wheel's binary prints what this build prints, exit $got"
	else
		fail "abiscope $name: the aarch64 wheel's binary prints what this build prints" \
			"exit $got, want $want" "$(diff "$FX/x86.out" "$FX/arm.out" | head -10)"
	fi
done
# and those are what it reads on aarch64, not assumptions
arm why --json --root "$R" --process "/usr/bin/$py" libstdc++.so.6 >"$FX/arm-why.json" 2>&1
"$ABISCOPE" why --json --root "$R" --process "/usr/bin/$py" libstdc++.so.6 >"$FX/x86-why.json" 2>&1
expect_eq "$(jq_py 'len([a for a in j.get("assumptions", []) if a.startswith(("page size assumed", "AT_HWCAP assumed"))])' \
	<"$FX/arm-why.json"):$(jq_py 'len([a for a in j.get("assumptions", []) if a.startswith(("page size assumed", "AT_HWCAP assumed"))])' \
	<"$FX/x86-why.json")" "0:2" \
	"on aarch64 the binary reads its AT_PAGESZ and AT_HWCAP; the x86_64 build says it assumes them"
# across machines: this build's check --host of the snapshot the aarch64
# abiscope made in the root is the check it gives there
inroot /opt/venv/bin/abiscope check --json /opt/venv >"$FX/there.json" 2>&1
"$ABISCOPE" check --json --host "$FX/arm.json.gz" >"$FX/here.json" 2>&1
expect_eq "$(python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
b.pop("host", None)
print(a == b)' "$FX/there.json" "$FX/here.json")" True \
	"check --host of the aarch64 snapshot here gives the check the aarch64 abiscope gives in the root (less the host member)"
finish
