#!/bin/sh
# The CI examples of docs/ci.md (contrib/ci/github-actions.yml, gitlab-ci.yml):
# docs/ci.md shows each file as it is, and with CI_EXAMPLES=1 both run as
# written (tests/ci/localrun.py: each job in a chroot of a debootstrap'd
# Debian 12 root standing for their debian:bookworm image; minutes: two cold
# make wheel, apt installs): the wheel job builds the wheel, the check job
# installs it, its check fails on the demo environment as it should, and the
# JUnit report it uploads counts what this build's own report counts.
# CI_ROOT is that root (default $BUILD/ci-root/bookworm, made when absent).
. "$(dirname "$0")/lib.sh"
fixture_dir ci_examples
C=$TOP/contrib/ci
for f in github-actions.yml gitlab-ci.yml; do
	python3 - "$TOP/docs/ci.md" "$C/$f" >"$FX/$f.doc" 2>&1 <<'EOF'
import re, sys
doc, want = open(sys.argv[1]).read(), open(sys.argv[2]).read()
blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
sys.exit(0 if want in blocks else 1)
EOF
	expect_eq "$?" 0 "docs/ci.md shows contrib/ci/$f as it is"
done
if [ "${CI_EXAMPLES:-0}" != 1 ]; then
	echo "ok - the CI examples run as written # SKIP CI_EXAMPLES=1 runs them (minutes: two cold make wheel)"
	finish
	exit
fi
[ "$(id -u)" = 0 ] || { echo "ok - the CI examples run as written # SKIP needs root (chroot, mounts)"; finish; exit; }
root=${CI_ROOT:-$(cd "$BUILD" && pwd)/ci-root/bookworm}
if [ ! -x "$root/bin/bash" ]; then
	command -v debootstrap >/dev/null 2>&1 || { echo "ok - the CI examples # SKIP no debootstrap"; finish; exit; }
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$FX/debootstrap.log" 2>&1
	expect_eq "$?" 0 "debootstrap --variant=minbase bookworm (the jobs' debian:bookworm)"
fi
# this build's own report of the demo environment, for the counts
sh "$TOP/demo/build.sh" "$FX/demo" >"$FX/demo.log" 2>&1
"$ABISCOPE" check --gpu H100 --junit "$FX/want.xml" "$FX/demo/venv" >/dev/null 2>&1
want=$(python3 -c "import sys; sys.path.insert(0, '$TOP/tests/ci'); import localrun; c = localrun.junit_counts('$FX/want.xml'); print(c['tests'], c['failures'])")
ca=
[ -n "${PIP_CERT:-}" ] && ca="--ca $PIP_CERT"
for kind in github gitlab; do
	f=$C/github-actions.yml
	[ $kind = gitlab ] && f=$C/gitlab-ci.yml
	# shellcheck disable=SC2086 # ca is words
	unshare --mount python3 "$TOP/tests/ci/localrun.py" $kind "$f" --image "debian:bookworm=$root" $ca \
		--out "$FX/$kind" >"$FX/$kind.txt" 2>&1
	expect_eq "$?" 0 "$kind: localrun ran $(basename "$f")"
	r=$FX/$kind/result.json
	[ -f "$r" ] || continue
	if [ $kind = github ]; then
		got=$(jq_py 'j["wheel"]["status"], j["check"]["status"], [s.get("exit") for s in j["check"]["steps"]]' <"$r")
		expect_eq "$got" "success failure [0, 0, 0, 0, 0, 1, 0, 0]" \
			"github: the wheel job passes; in the check job every step passes but abiscope check, which fails (the demo is broken), and the report steps run"
		whl=$(ls "$FX/github/artifacts/abiscope-wheel" 2>/dev/null)
		report=$(jq_py '" ".join("%d %d" % (c["tests"], c["failures"]) for c in j["check"]["junit"])' <"$r")
	else
		got=$(jq_py 'j["abiscope-wheel"]["status"], j["imports"]["status"], j["imports"]["exit"]' <"$r")
		expect_eq "$got" "success failure 1" "gitlab: the wheel job passes, the imports job fails at abiscope check (exit 1)"
		whl=$(cd "$FX/gitlab/artifacts/abiscope-wheel/dist" 2>/dev/null && ls)
		report=$(jq_py '" ".join("%d %d" % (c["tests"], c["failures"]) for c in j["imports"].get("junit", []))' <"$r")
	fi
	expect_contains "$whl" "-py3-none-manylinux_2_17_x86_64.whl" "$kind: the wheel job's artifact is the wheel ($whl)"
	expect_eq "$report" "$want" "$kind: the JUnit report it keeps counts what this build's does (tests, failures: $want)"
done
finish
