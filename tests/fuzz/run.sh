#!/bin/sh
# Runs every fuzz target for a bounded time, each from a seed corpus made
# of real inputs of this machine (system libraries, the ld.so.cache) plus
# the crash regressions kept in tests/fuzz/regressions/<target>/.
#   run.sh BUILDDIR SECONDS
# Prints one TAP line per target; exits non-zero when a target finds a crash.
set -u
bdir=${1:-build-fuzz}
secs=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
corp="$bdir/corpus"
mkdir -p "$corp"
seed() {
	t=$1
	shift
	mkdir -p "$corp/$t"
	for f in "$@"; do
		[ -f "$f" ] || continue
		# keep seeds small: the head of a file holds the headers and tables
		head -c 262144 "$f" >"$corp/$t/$(basename "$f")" 2>/dev/null
	done
	if [ -d "$here/regressions/$t" ]; then
		cp "$here"/regressions/"$t"/* "$corp/$t/" 2>/dev/null
	fi
}
seed fuzz_elf /lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libm.so.6 \
	/usr/lib/x86_64-linux-gnu/libstdc++.so.6 /bin/true /usr/local/cuda/lib64/libcudart.so.13
seed fuzz_ldcache /etc/ld.so.cache
for extra in "$here"/seeds.d/*.sh; do
	[ -f "$extra" ] && . "$extra"
done
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
