#!/bin/sh
# The dependency check (mk/deps.sh, run by the Makefile before it compiles):
# on a machine without jansson.h, `make` must stop before any compile error,
# with one line naming the command (not root), or run apt-get (root).
# jansson.h is hidden in a private mount namespace: /usr/include is covered
# by a tmpfs of symlinks to every header but that one.  The inner makes run
# without the outer make's MAKEFLAGS (make test-asan passes its variables down).
. "$(dirname "$0")/lib.sh"
fixture_dir deps

# hidden CMD...: runs CMD with /usr/include/jansson.h absent
hidden() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	$UNSHARE sh -c '
		set -e
		mount --bind /usr/include "$ORIG"
		mount -t tmpfs tmpfs /usr/include
		for f in "$ORIG"/* "$ORIG"/.[!.]*; do
			[ -e "$f" ] || continue
			[ "${f##*/}" = jansson.h ] || ln -s "$f" "/usr/include/${f##*/}"
		done
		"$@"' sh "$@"
}
# The real headers stay reachable at $ORIG, a folder every user can enter
# (the links must resolve for the unprivileged user too, even when the clone
# sits under a 0700 folder).
ORIG=$(mktemp -d)
chmod 755 "$ORIG"
trap 'rmdir "$ORIG" 2>/dev/null' EXIT
export FX ORIG
if [ ! -f /usr/include/jansson.h ]; then
	echo "ok - dependency check # SKIP /usr/include/jansson.h is not where this test hides it"
	exit 0
fi
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	UNSHARE="unshare -m"
elif unshare -rm true 2>/dev/null; then
	UNSHARE="unshare -rm"
else
	echo "ok - dependency check # SKIP no mount namespaces here (unshare -m)"
	exit 0
fi

# The probe itself sees the header go.
out=$(hidden sh -c 'printf "#include <jansson.h>\nint main(void){return 0;}\n" | cc -x c -o /dev/null - 2>&1')
ok=$?
expect_eq "$ok" 1 "with the header hidden, a compile that includes it fails (the hiding works)"

# Root, or passwordless sudo: the check installs the package. A stand-in
# apt-get records its arguments; the header stays hidden, so the check must
# also notice that the install did not fix it.
mkdir -p "$FX/bin"
cat >"$FX/bin/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$FX/apt-get.log"
EOF
chmod +x "$FX/bin/apt-get"
out=$(hidden env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$FX/bin:$PATH" make -C "$TOP" BUILD="$FX/root-build" abiscope 2>&1)
status=$?
expect_eq "$status" 2 "root: make stops"
expect_contains "$out" "abiscope: missing libjansson-dev: no jansson.h -ljansson; installing: apt-get install -y libjansson-dev" \
	"root: it names the package and installs it"
expect_eq "$(cat "$FX/apt-get.log" 2>/dev/null)" "update -qq
install -y -qq --no-install-recommends libjansson-dev" "root: apt-get update, then install of exactly the missing package"
expect_contains "$out" "still missing after 'apt-get install': libjansson-dev" \
	"root: a package that did not fix the probe is reported"
expect_not_contains "$out" "fatal error" "root: no compile error"
expect_eq "$(find "$FX/root-build" -name '*.o' 2>/dev/null | wc -l)" 0 "root: nothing compiled"

# Not root, no sudo: one line, the exact command, nothing compiled.
# The user works in a copy of the tree in a folder every user can reach:
# the clone may sit under a 0700 folder (mktemp -d), which nobody cannot enter.
if [ "$UNSHARE" = "unshare -m" ] && command -v setpriv >/dev/null 2>&1; then
	pub=$(mktemp -d)
	chmod 755 "$pub"
	mkdir -p "$pub/tree" "$pub/user-build"
	(cd "$TOP" && tar cf - Makefile mk src data) | (cd "$pub/tree" && tar xf -)
	chown -R 65534:65534 "$pub/tree" "$pub/user-build"
	out=$(hidden setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="/usr/bin:/bin" HOME=/nonexistent make -s -C "$pub/tree" BUILD="$pub/user-build" abiscope 2>&1)
	status=$?
	expect_eq "$status" 2 "user: make stops"
	expect_eq "$(printf '%s\n' "$out" | wc -l)" 1 "user: one line"
	expect_contains "$out" \
		"abiscope: missing libjansson-dev: no jansson.h -ljansson; install them with: sudo apt-get install -y libjansson-dev" \
		"user: it names the exact command"
	expect_eq "$(find "$pub/user-build" -name '*.o' 2>/dev/null | wc -l)" 0 "user: nothing compiled"
	rm -rf "$pub"
else
	echo "ok - dependency check as a user # SKIP needs root to drop to one"
fi

# An install starts and enables nothing: while apt-get runs, a policy-rc.d
# refuses every start; afterwards the services the install enabled (unit
# links, aliases, rc?.d start links) are disabled again, and what was
# enabled before stays.  A stand-in apt-get plays the maintainer scripts
# under DEPS_SYSROOT.
if [ "$(id -u)" = 0 ]; then
	S=$FX/sysroot
	mkdir -p "$S/etc/systemd/system/multi-user.target.wants" "$S/etc/rc2.d" "$S/usr/sbin" "$FX/bin2"
	ln -s /lib/systemd/system/old.service "$S/etc/systemd/system/multi-user.target.wants/old.service"
	ln -s ../init.d/old "$S/etc/rc2.d/S01old"
	cat >"$FX/bin2/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$FX/apt2.log"
[ "\$1" = install ] || exit 0
if [ -x "$S/usr/sbin/policy-rc.d" ]; then
	"$S/usr/sbin/policy-rc.d" fake start
	echo "policy-rc.d fake start: \$?" >>"$FX/apt2.log"
else
	echo "no policy-rc.d" >>"$FX/apt2.log"
fi
ln -s /lib/systemd/system/fake.service "$S/etc/systemd/system/multi-user.target.wants/fake.service"
ln -s /lib/systemd/system/fake.service "$S/etc/systemd/system/fake-alias.service"
ln -s ../init.d/fake "$S/etc/rc2.d/S01fake"
EOF
	chmod +x "$FX/bin2/apt-get"
	printf 'test fake-daemon abiscope-no-such-command-here\n' >"$FX/deps-fake.txt"
	unset DEPS_RECORD
	out=$(PATH="$FX/bin2:$PATH" DEPS_LIST="$FX/deps-fake.txt" DEPS_SYSROOT="$S" sh "$TOP/mk/deps.sh" check test 2>&1)
	expect_contains "$(cat "$FX/apt2.log")" "policy-rc.d fake start: 101" "install: a policy-rc.d refuses to start services while apt-get runs"
	expect_eq "$(cd "$S" && find etc usr -type l -o -type f | sort | tr '\n' ' ')" \
		"etc/rc2.d/K01fake etc/rc2.d/S01old etc/systemd/system/multi-user.target.wants/old.service " \
		"install: what it enabled is disabled again, what was enabled stays, no policy-rc.d left"
	expect_contains "$out" "the install enabled fake fake-alias: disabled again" "install: the line names what it disabled"
	# a machine's own policy-rc.d is left as it is
	printf '#!/bin/sh\nexit 0\n' >"$S/usr/sbin/policy-rc.d"
	chmod 755 "$S/usr/sbin/policy-rc.d"
	rm -f "$S/etc/rc2.d/K01fake"
	PATH="$FX/bin2:$PATH" DEPS_LIST="$FX/deps-fake.txt" DEPS_SYSROOT="$S" sh "$TOP/mk/deps.sh" check test >/dev/null 2>&1
	expect_eq "$(tail -1 "$FX/apt2.log"):$(cat "$S/usr/sbin/policy-rc.d" | tail -1)" "policy-rc.d fake start: 0:exit 0" \
		"install: the machine's own policy-rc.d is used and kept"
else
	echo "ok - an install starts and enables nothing # SKIP needs root (the check installs only as root or with sudo)"
fi

# Everything present: the check passes quietly and the build goes on.
out=$(sh "$TOP/mk/deps.sh" check build 2>&1)
expect_eq "$?:$out" "0:" "with every header present, the check is silent"

# The README's package list is the list mk/deps.txt gives.
want=$(sh "$TOP/mk/deps.sh" readme)
got=$(sed -n '/<!-- deps.txt: begin/,/<!-- deps.txt: end/p' "$TOP/README.md" | sed '1d;$d')
expect_eq "$got" "$want" "README's package list is mk/deps.txt's (regenerate with: make readme)"
# CI's fresh-root check runs when what decides what a fresh machine needs
# changed since its last recorded pass (.ci/fresh-root --needed, .ci/run)
T=$FX/ci-tree
mkdir -p "$T/mk" "$T/.ci"
cp "$TOP/mk/deps.txt" "$TOP/mk/deps.sh" "$T/mk/" && cp "$TOP/Makefile" "$T/" && cp "$TOP/.ci/fresh-root" "$T/.ci/"
out=$(sh "$T/.ci/fresh-root" --needed)
expect_eq "$?:$out" "0:no recorded pass (.ci/fresh-root.pass)" "fresh-root --needed: no recorded pass, needed"
(cd "$T" && sha256sum mk/deps.txt mk/deps.sh Makefile .ci/fresh-root >.ci/fresh-root.pass)
out=$(sh "$T/.ci/fresh-root" --needed)
expect_eq "$?" 1 "fresh-root --needed: not needed when the inputs are those of the pass ($out)"
echo "test  some-new-package" >>"$T/mk/deps.txt"
out=$(sh "$T/.ci/fresh-root" --needed)
expect_eq "$?:$out" "0:changed since the recorded pass: mk/deps.txt " "fresh-root --needed: a change to mk/deps.txt makes it needed"
expect_contains "$(cat "$TOP/.ci/run")" "sh .ci/fresh-root --needed" ".ci/run asks fresh-root whether it is needed"

# And .ci/run installs from that list, not a copy of it.
expect_contains "$(cat "$TOP/.ci/run")" "mk/deps.sh" ".ci/run installs through mk/deps.sh"
[ "$fails" -eq 0 ]
