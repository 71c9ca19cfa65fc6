#!/bin/sh
# Runs every fuzz target for a bounded time, each from its seed corpus
# (tests/fuzz/corpus.sh: real inputs of this machine plus the crash
# regressions kept in tests/fuzz/regressions/<target>/).
#   run.sh BUILDDIR SECONDS
# Prints one TAP line per target; exits non-zero when a target finds a crash.
set -u
bdir=${1:-build-fuzz}
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
corp="$bdir/corpus"
. "$here/corpus.sh"
fail=0
for bin in "$bdir"/fuzz_*; do
	[ -x "$bin" ] || continue
	t=$(basename "$bin")
	mkdir -p "$corp/$t" "$bdir/artifacts/$t"
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$bdir/artifacts/$t/" "$corp/$t" >"$bdir/$t.log" 2>&1; then
		runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$bdir/$t.log" | grep -o '[0-9]*$')
		echo "ok - $t ran ${secs}s (${runs:-?} inputs) without a finding"
	else
		echo "not ok - $t found a problem (see $bdir/$t.log and $bdir/artifacts/$t/)"
		tail -30 "$bdir/$t.log" | sed 's/^/#   /'
		fail=1
	fi
done
exit $fail
