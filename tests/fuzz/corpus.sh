# Builds the seed corpus of every fuzz target (sourced by run.sh and
# replay.sh): real inputs of this machine (system libraries, the ld.so.cache,
# the loader), what the test suite built, small inputs made by
# tests/fuzz/seeds.d/*.sh, and the crash regressions kept in
# tests/fuzz/regressions/<target>/.  Needs $here (tests/fuzz) and $corp.
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
seed fuzz_ldso /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1
for extra in "$here"/seeds.d/*.sh; do
	[ -f "$extra" ] && . "$extra"
done
# the round trip starts from the snapshots the reader's target starts from
mkdir -p "$corp/fuzz_snapshot_roundtrip"
cp "$corp"/fuzz_snapshot/* "$corp/fuzz_snapshot_roundtrip/" 2>/dev/null
for t in "$here"/regressions/*/; do
	[ -d "$t" ] && seed "$(basename "$t")"
done
