#!/bin/sh
# Runs every test and prints one summary line: "N passed, N failed".
#
# Each test program prints TAP-style lines ("ok - ...", "not ok - ...");
# this script runs them all, shows failures and skips, and counts.
#   ABISCOPE  the binary under test (default ./abiscope)
#   BUILD     the build directory holding unit tests and tools (default build)
#   TESTS     optional filter: only suites whose name contains it
#   SLOW=0    skips the comparison over every system library
#   CORPUS=0  runs the binary directly, without recording its --json
#             outputs for the schema check at the end (schema/corpus)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
: "${ABISCOPE:=$top/abiscope}"
: "${BUILD:=$top/build}"
: "${TESTS:=}"
: "${SLOW:=1}"
: "${CORPUS:=1}"
# Every run of the binary with --json is recorded (its arguments, exit
# status and output) by a wrapper in front of it; schema/corpus validates
# them all at the end.  ABISCOPE_BINARY stays the binary itself, for the
# tests that copy it or read its bytes.
ABISCOPE_BINARY=$ABISCOPE
corpus=$BUILD/json-corpus
if [ "$CORPUS" != 0 ]; then
	rm -rf "$corpus"
	mkdir -p "$corpus/runs"
	corpus=$(cd "$corpus" && pwd)
	cat >"$corpus/abiscope" <<WRAPPER
#!/bin/sh
# Written by tests/run.sh: records each run with --json for schema/corpus.
# Absolute paths only: tests run it with PATH emptied.
for a do [ "\$a" = --json ] && with_json=1; done
[ -n "\${with_json:-}" ] || exec '$ABISCOPE' "\$@"
n=\$\$
while ! /bin/mkdir "$corpus/runs/\$n" 2>/dev/null; do n="\$n+"; done
printf '%s\\0' "\$@" >"$corpus/runs/\$n/args"
'$ABISCOPE' "\$@" >"$corpus/runs/\$n/out"
st=\$?
echo \$st >"$corpus/runs/\$n/status"
/bin/cat "$corpus/runs/\$n/out"
exit \$st
WRAPPER
	chmod +x "$corpus/abiscope"
	ABISCOPE=$corpus/abiscope
fi
export ABISCOPE ABISCOPE_BINARY BUILD
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# Every process of the run carries this tag (daemons keep it): the last
# suite, machine/unchanged, finds those left running, and compares the
# services and listening sockets with this snapshot.
ABISCOPE_TEST_RUN=$$.$(date +%s)
export ABISCOPE_TEST_RUN
python3 "$here/machine_state.py" snapshot "$log/machine.json"
passed=0
failed=0
skipped=0

run_suite() {
	name=$1
	shift
	case "$name" in *"$TESTS"*) ;; *) return 0 ;; esac
	out="$log/$(echo "$name" | tr '/ ' '__').out"
	"$@" >"$out" 2>&1
	status=$?
	p=$(grep -c '^ok - ' "$out")
	f=$(grep -c '^not ok - ' "$out")
	s=$(grep -c '^ok - .*# SKIP' "$out")
	p=$((p - s))
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		# a suite that died without reporting a failure counts as one
		f=1
		echo "not ok - $name exited with status $status" >>"$out"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	printf '%-40s %4d passed %3d failed %3d skipped\n' "$name" "$p" "$f" "$s"
	if [ "$f" -ne 0 ]; then
		grep -A12 '^not ok - ' "$out" | head -80 | sed 's/^/    /'
	fi
	grep '# SKIP' "$out" | sed 's/^/    /'
}

cd "$top" || exit 1
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_suite "unit/$(basename "$t")" "$t"
done
for t in "$here"/e2e/*.sh; do
	[ -f "$t" ] || continue
	case $(basename "$t") in lib*.sh) continue ;; esac
	run_suite "e2e/$(basename "$t" .sh)" sh "$t"
done
run_suite "fuzz/replay" sh "$here/fuzz/replay.sh"
for t in "$here"/*/test_*.py; do
	[ -f "$t" ] || continue
	run_suite "$(basename "$(dirname "$t")")/$(basename "$t" .py)" python3 "$t"
done
# the GPU device check, without a GPU: builds its kernels and runs what needs none
run_suite "device/dry-run" sh "$here/device/run.sh" --dry-run "$BUILD/device"
run_suite "diff/fixtures" python3 "$here/diff/differential.py" fixtures
run_suite "diff/host-oracle" python3 "$here/diff/host_oracle.py"
# the real aarch64 loader's recorded answers (tests/diff/aarch64/golden.jsonl);
# make test-aarch64 asks it live
run_suite "diff/aarch64" python3 "$here/diff/aarch64.py" check fixtures
# (diff/tables/ is in: a snapshot carries a corrupt table's fault; not
# diff/corrupt/ nor diff/verrec/: it carries neither a damaged program
# header nor a damaged version table, a known limit, issue 13 item 15)
run_suite "diff/snapshot-agreement" python3 "$here/diff/snapshot_agreement.py" \
	$(ls -d "$BUILD"/diff/*/ 2>/dev/null | grep -v -e '/corrupt/$' -e '/verrec/$') /usr/local/cuda/lib64
if [ "$SLOW" != 0 ]; then
	run_suite "diff/system-libraries" python3 "$here/diff/differential.py" system \
		/usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64
	run_suite "diff/snapshot-agreement-system" python3 "$here/diff/snapshot_agreement.py" \
		/usr/lib/x86_64-linux-gnu
	run_suite "diff/aarch64-system" python3 "$here/diff/aarch64.py" check system
fi
# every --json output of the suites above against its schema
[ "$CORPUS" != 0 ] && run_suite "schema/corpus" python3 "$here/schema/corpus.py" "$corpus/runs"
# last, the machine as the run found it
# (DEPS_RECORD: what the Makefile's dependency check installed)
run_suite "machine/unchanged" env DEPS_RECORD="${DEPS_RECORD:-$BUILD/deps-installed.txt}" \
	python3 "$here/machine_state.py" check "$log/machine.json"
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
