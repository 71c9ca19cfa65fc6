#!/bin/sh
# Replays every fuzz target's seed corpus and crash regressions
# (tests/fuzz/corpus.sh) through replay binaries built with the normal
# compiler ($BUILD/fuzz-replay/fuzz_*, tests/fuzz/replay_main.c): part of
# make test, and under the sanitizers of make test-asan.  One TAP line per
# target; a crash or a sanitizer report is a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${BUILD:=$here/../../build}"
corp=$BUILD/fuzz-replay/corpus
rm -rf "$corp"
. "$here/corpus.sh"
n=0
for bin in "$BUILD"/fuzz-replay/fuzz_*; do
	[ -x "$bin" ] || continue
	t=$(basename "$bin")
	set -- "$corp/$t"/*
	if [ ! -e "$1" ]; then
		echo "ok - $t: no seeds on this machine # SKIP"
		continue
	fi
	if "$bin" "$@" >"$corp/$t.log" 2>&1; then
		echo "ok - $t replays its $# seeds and regressions"
	else
		echo "not ok - $t crashed on one of its $# seeds (see $corp/$t.log)"
		tail -20 "$corp/$t.log" | sed 's/^/#   /'
	fi
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "not ok - no replay binaries in $BUILD/fuzz-replay"; exit 1; }
