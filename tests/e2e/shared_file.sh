#!/bin/sh
# A file several wheels list (nvidia/__init__.py in every nvidia-* wheel):
# pip uninstall of one removes it for all (issue 24, item 8: each cause
# once).  Real pip makes the environment: three wheels that share
# ns/__init__.py installed into a venv, one uninstalled.  abiscope says it
# once, for the distributions left, and its fix, done for real with pip,
# puts the file back and leaves no record-mismatch.
. "$(dirname "$0")/lib.sh"
fixture_dir shared_file
pybin=$(command -v python3)
mkdir -p "$FX/whl"
python3 - "$FX/whl" <<'PY'
import sys, zipfile
out = sys.argv[1]
for name, extra in (("nsa", ""), ("nsb", ""), ("nsc", ""), ("nsd", "own")):
    w = zipfile.ZipFile("%s/%s-1.0-py3-none-any.whl" % (out, name), "w")
    files = {"ns/__init__.py": "", "ns/%s.py" % name: "X = 1\n"}
    if extra:
        files["ns_%s/__init__.py" % name] = ""
    meta = "%s-1.0.dist-info/" % name
    files[meta + "METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name
    files[meta + "WHEEL"] = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[meta + "RECORD"] = "".join("%s,,\n" % f for f in files) + meta + "RECORD,,\n"
    for f, data in files.items():
        w.writestr(f, data)
    w.close()
PY
if ! "$pybin" -m venv "$FX/env" >"$FX/venv.txt" 2>&1 ||
	! "$FX/env/bin/pip" install -q --no-deps --no-index "$FX"/whl/*.whl >"$FX/pip.txt" 2>&1; then
	pass "shared files # SKIP pip cannot make a venv here: $(tail -1 "$FX/pip.txt" "$FX/venv.txt" 2>/dev/null | tail -1)"
	finish
	exit
fi
SP=$("$FX/env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$FX/env/bin/pip" uninstall -q -y nsc >>"$FX/pip.txt" 2>&1
[ ! -e "$SP/ns/__init__.py" ]
ok=$?
expect_eq "$ok" 0 "real pip: uninstalling nsc removes ns/__init__.py, which nsa, nsb and nsd list too"
rm "$SP/ns_nsd/__init__.py"	# nsd misses a file of its own as well: its own finding

$ABISCOPE check --json "$FX/env" >"$FX/check.json" 2>"$FX/check.err"
expect_eq "$?" 0 "check: exit 0 (warnings)"
expect_eq "$(jq_py "[(f['title'], f.get('distributions')) for f in j['findings'] if f['id'] == 'record-mismatch']" \
	<"$FX/check.json")" \
	"[('2 distributions miss the same file their RECORDs list: ns/__init__.py', ['nsa 1.0', 'nsb 1.0']), ('nsd 1.0 does not match its RECORD: 2 missing, 0 of another size', None)]" \
	"check: one warning for the two that miss only the shared file, nsd's own apart"
$ABISCOPE check --color never "$FX/env" >"$FX/check.txt" 2>&1
expect_contains "$(cat "$FX/check.txt")" "reinstalling any one of them puts it back" "text: says why one reinstall is enough"
expect_eq "$(grep -c 'warning\[record-mismatch\]' "$FX/check.txt")" 2 "text: two record-mismatch lines, not three"

# the fix, done for real: the grouped warning's pip command, from the wheels here
cmd=$(jq_py "[f['fix_actions'][0]['command'] for f in j['findings'] if f.get('distributions')][0]" <"$FX/check.json")
expect_eq "$cmd" "pip install --force-reinstall --no-deps nsa==1.0" "the fix reinstalls one of them (as data)"
"$FX/env/bin/pip" install -q --force-reinstall --no-deps --no-index --find-links "$FX/whl" nsa==1.0 >>"$FX/pip.txt" 2>&1
expect_eq "$?" 0 "real pip: the fix runs"
$ABISCOPE check --json "$FX/env" >"$FX/after.json" 2>&1
expect_eq "$(jq_py "[f['title'] for f in j['findings'] if f['id'] == 'record-mismatch']" <"$FX/after.json")" \
	"['nsd 1.0 does not match its RECORD: 1 missing, 0 of another size']" \
	"after the fix: nsa and nsb match their RECORDs (ns/__init__.py is back); nsd's own file is still missing"
finish
