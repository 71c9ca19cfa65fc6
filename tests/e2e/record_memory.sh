#!/bin/sh
# RECORD memory (issue 26, item 5): the file lists of an environment's
# distributions (RECORD, installed-files.txt, conda-meta) cost memory in
# proportion to the lists read, and one scan keeps at most 64 MiB or a
# million rows of them however many distributions there are.  A list past
# the cap is not read, and the binaries it would own are reported as owned
# by a RECORD that was not read, never as "copied in by hand".
. "$(dirname "$0")/lib.sh"
fixture_dir record_memory
pybin=$(command -v python3)
stub_module

# make_env DIR NDIST MIB ROWKIND: a venv with NDIST distributions whose
# RECORDs hold MIB MiB each, of pip's rows (path, sha256, size) or of short
# rows (a path alone); one extension module no RECORD lists.
make_env() {
	venv_skeleton "$1"
	mkdir -p "$SP/stray"
	cp "$STUB_SO" "$SP/stray/_m.cpython-311-x86_64-linux-gnu.so"
	python3 - "$SP" "$2" "$3" "$4" <<'PY'
import os, sys
sp, ndist, mib, kind = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
for d in range(ndist):
    meta = os.path.join(sp, "p%d-1.0.dist-info" % d)
    os.makedirs(meta)
    open(meta + "/METADATA", "w").write("Metadata-Version: 2.1\nName: p%d\nVersion: 1.0\n" % d)
    rows, size, i = [], 0, 0
    while size < mib * 1024 * 1024:
        if kind == "pip":
            r = "p%d/sub%d/module_%d.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,%d\n" % (d, i % 97, i, 900 + i)
        else:
            r = "p%d/%d,,\n" % (d, i)
        rows.append(r)
        size += len(r)
        i += 1
    open(meta + "/RECORD", "w").write("".join(rows))
PY
}
# run OUT CMD...: the exit status and the peak RSS in MiB of CMD
run() {
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import scale
rc, cpu, rss = scale.run(sys.argv[3:], sys.argv[2]); print(rc, rss // 1024)' "$TOP/tests" "$@"
}
asan=false
case "$BUILD" in *asan*) asan=true ;; esac
# peak_within WHAT MIB LIMIT DETAIL: a peak resident set (MiB) at most
# LIMIT; under ASan its shadow memory is not the tool's, and it is a SKIP
peak_within() {
	if $asan; then pass "$1 # SKIP ASan's shadow memory is not the tool's"
	elif [ "$2" -le "$3" ]; then pass "$1"
	else fail "$1" "$4"; fi
}

make_env "$FX/base" 1 0.01 pip
# CPU linear in the rows (tests/scale.py: 4x the rows within 5x the CPU)
make_env "$FX/cpu4" 1 4 pip
make_env "$FX/cpu16" 1 16 pip
python3 "$TOP/tests/scale.py" --timeout 300 --rc 0 "check: a RECORD of 4 MiB and of 16 MiB (50,000 and 200,000 rows)" \
	"$FX/cpu4" "$FX/cpu16" -- $ABISCOPE check {} || fails=$((fails + 1))
rm -rf "$FX/cpu4" "$FX/cpu16"
make_env "$FX/pip32" 4 8 pip
set -- $(run "$FX/base.txt" $ABISCOPE check --json "$FX/base")
base=$2
set -- $(run "$FX/pip32.json" $ABISCOPE check --json "$FX/pip32")
expect_eq "$1" 0 "check of 4 RECORDs of 8 MiB of pip's rows and a stray module: exit 0 (a warning)"
grown=$(($2 - base))
peak_within "32 MiB of RECORD rows cost $grown MiB over an environment without them (at most 3 bytes per byte)" \
	"$grown" 96 "base $base MiB, with them $2 MiB"
expect_eq "$(jq_py "[f['unreadable_records'] for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/pip32.json")" "[[]]" "32 MiB of RECORD: every list read (under the cap), the stray module named as unowned"
rm -rf "$FX/pip32"

# past the byte cap: 24 lists of 4 MiB (96 MiB); the last ones are not read
make_env "$FX/pip96" 24 4 pip
set -- $(run "$FX/pip96.json" $ABISCOPE check --json "$FX/pip96")
expect_eq "$1" 0 "check of 24 RECORDs of 4 MiB: exit 0, as under the cap"
peak_within "96 MiB of RECORD: $2 MiB peak, bounded by the 64 MiB cap (at most base + 200 MiB)" \
	"$2" $((base + 200)) "base $base MiB"
expect_eq "$(jq_py "[len(f['unreadable_records']) for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/pip96.json")" "[9]" "96 MiB of RECORD: the 9 lists past 64 MiB are named as not read"
expect_contains "$(jq_py "[f['unreadable_records'] for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/pip96.json")" "p9-1.0.dist-info/RECORD: left unread: its RECORD (4194" "the last list read in order (p9) is one of them, with its size"
expect_contains "$(jq_py "[f['unreadable_records'][0] for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/pip96.json")" "past 64 MiB" "and the cap it would pass"
$ABISCOPE check "$FX/pip96" >"$FX/pip96.txt" 2>&1
expect_not_contains "$(cat "$FX/pip96.txt")" "by hand" "text: no binary called copied in by hand because its list was not read"
expect_contains "$(cat "$FX/pip96.txt")" "RECORD files could not be read" "text: says the lists were not read"
rm -rf "$FX/pip96"

# past the row cap: 3 lists of 400,000 short rows (a path alone)
make_env "$FX/rows" 3 4.6 short
set -- $(run "$FX/rows.json" $ABISCOPE check --json "$FX/rows")
expect_eq "$1" 0 "check of 3 RECORDs of 400,000 short rows each: exit 0"
peak_within "1.2 million RECORD rows: $2 MiB peak, bounded by the million-row cap (at most base + 200 MiB)" \
	"$2" $((base + 200)) "base $base MiB"
expect_contains "$(jq_py "[f['unreadable_records'] for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/rows.json")" "p2-1.0.dist-info/RECORD: left unread: its RECORD (4" "the third list is not read"
expect_contains "$(jq_py "[f['unreadable_records'] for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/rows.json")" "past 1000000 rows" "and says it would pass the row cap"
rm -rf "$FX/rows"
finish
