#!/bin/sh
# What Python can import from, and the folders .pth files add (issue 26
# item 6).  Modules under folders no import statement can name (.cache/,
# not-a-pkg/) are not judged; .pth files are read as CPython's site.py
# addpackage() reads them (universal newlines, import lines skipped, lines
# stripped at the end, any size, a non-UTF-8 file stops the interpreter);
# a .pth naming / is not a reason to read the disk.  The oracle is the real
# interpreter of a real venv: its sys.path, which names an import statement
# can spell (compile()), and the real import of each module.
. "$(dirname "$0")/lib.sh"
fixture_dir pth_and_import_paths
python_venv "$FX/v"

# ext DIR NAME ok|bad: an extension module NAME in DIR that imports, or
# that fails (an undefined symbol, bound at load)
ext() {
	mkdir -p "$1"
	if [ "$3" = ok ]; then
		py_module "$1/$2$suffix" "$2" -Wl,-z,now
		return
	fi
	printf 'extern int nope_%s(void);\nvoid *PyInit_%s(void) { nope_%s(); return 0; }\n' "$2" "$2" "$2" >"$FX/$2.c"
	$CC -shared -fPIC -I"$pyinc" -Wl,-z,now -o "$1/$2$suffix" "$FX/$2.c" || fail "build $2"
}
ext "$SP/good" ok_pkg ok
ext "$SP/good" bad_pkg bad
ext "$SP/.cache" bad_hidden bad
ext "$SP/not-a-pkg" bad_dash bad
ext "$SP/good/sub.dir" bad_dotted bad
ext "$SP" bad_top bad
cp "$SP/bad_top$suffix" "$SP/my-ext$suffix"	# a module name that is no identifier
# folders .pth files add, each with a module only that .pth file reaches
ext "$FX/crlf_a" ok_crlf_a ok
ext "$FX/crlf_b" bad_crlf_b bad
ext "$FX/cr_c" ok_cr_c ok
ext "$FX/cr_d" bad_cr_d bad
ext "$FX/big" bad_big bad
ext "$FX/imp" bad_imp bad
ext "$FX/trail" ok_trail ok
ext "$FX/pthdir/pkg" ok_pthpkg ok
ext "$FX/pthdir/.hidden" bad_pthhidden bad
ext "$FX/pthdir/not-a-pkg" bad_pthdash bad
printf '%s\r\n\r\n# comment\r\n%s\r\n' "$FX/crlf_a" "$FX/crlf_b" >"$SP/a_crlf.pth"
printf '../../../../cr_c\r../../../../cr_d' >"$SP/b_cr.pth"	# relative to site, lone CR, no final newline
python3 - "$SP/c_big.pth" "$FX/big" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write(("# padding line of a .pth file well over sixty-four KiB in all\n") * 2000)
    f.write(sys.argv[2] + "\n")
PY
printf 'import sys\n%s\n' "$FX/imp" >"$SP/d_import.pth"
printf '%s \t\n' "$FX/trail" >"$SP/e_trailing.pth"
printf '%s\n%s/missing\n' "$FX/pthdir" "$FX" >"$SP/f_pthdir.pth"
expect_eq "$([ "$(wc -c <"$SP/c_big.pth")" -gt 65536 ] && echo big)" big "the big .pth file is over 64 KiB"

# the oracle: the venv's real sys.path from site-packages on, and for each
# extension module file the name an import statement reaches it by
"$V/bin/python" - "$SP" "$suffix" >"$FX/real.txt" 2>"$FX/real.err" <<'PY'
import importlib.util, os, subprocess, sys
site, suffix = sys.argv[1], sys.argv[2]
path = sys.path[sys.path.index(site):]
print("path", "\t".join(path))
seen = set()
for entry in path:
    for root, dirs, files in os.walk(entry):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(suffix):
                continue
            full = os.path.join(root, f)
            if full in seen:
                continue
            parts = os.path.relpath(full, entry)[: -len(suffix)].split(os.sep)
            name = ".".join(parts)
            if not all(p.isidentifier() for p in parts):
                continue	# no import statement can spell it
            compile("import " + name, "<test>", "exec")
            try:
                spec = importlib.util.find_spec(name)
            except ImportError:
                continue
            if spec is None or spec.origin != full:
                continue	# the name reaches another file first
            seen.add(full)
            r = subprocess.run([sys.executable, "-c", "import " + name], capture_output=True)
            print("module", name, full, "ok" if r.returncode == 0 else "fails")
PY
expect_eq "$?" 0 "the real interpreter starts in the venv: $(tail -1 "$FX/real.err")"
$ABISCOPE check --json "$V" >"$FX/check.json" 2>"$FX/check.err"
echo "exit $?" >>"$FX/check.err"
python3 - "$FX/check.json" "$FX/" >"$FX/got.txt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["environments"][0]
print("path", "\t".join(e["site_packages"]))
for d in e["distributions"]:
    for m in d["modules"]:
        if m["extension"] and m["path"].startswith(sys.argv[2]):	# not the base interpreter's lib-dynload
            print("module", m["module"], m["path"], m["status"])
PY
sort "$FX/real.txt" >"$FX/real.sorted"
sort "$FX/got.txt" >"$FX/got.sorted"
expect_eq "$(grep '^path' "$FX/got.sorted")" "$(grep '^path' "$FX/real.sorted")" \
	"check --json site_packages is the real sys.path from site-packages on (CRLF, lone CR, over 64 KiB, import line, trailing blanks)"
expect_eq "$(grep '^module' "$FX/got.sorted")" "$(grep '^module' "$FX/real.sorted")" \
	"check --json judges exactly the modules an import statement reaches, with the real import's verdict"
for m in bad_hidden bad_dash bad_dotted my-ext bad_pthhidden bad_pthdash; do
	expect_not_contains "$(cat "$FX/got.txt")" "/$m$suffix" "$m: under a folder (or named) so no import reaches it: not judged"
done
for m in ok_crlf_a bad_crlf_b ok_cr_c bad_cr_d bad_big bad_imp ok_trail pkg.ok_pthpkg; do
	expect_contains "$(cat "$FX/real.txt")" "module $m " "the real interpreter reaches $m (a folder of a .pth file)"
done

# a .pth that is not UTF-8: the interpreter stops at startup
"$pybin" -m venv --without-pip "$FX/latin" >/dev/null 2>&1
ext "$FX/latin/lib/python$pyver/site-packages/good" ok_latin ok
printf 'caf\351\n' >"$FX/latin/lib/python$pyver/site-packages/g_latin1.pth"
real=$("$FX/latin/bin/python" -c 'print("started")' 2>&1)
expect_contains "$real" "Fatal Python error: init_import_site" "the real interpreter stops at a non-UTF-8 .pth"
$ABISCOPE check --color never "$FX/latin" >"$FX/latin.txt" 2>&1
expect_eq "$?" 3 "check of it: not checked (exit 3), never OK"
expect_contains "$(cat "$FX/latin.txt")" "g_latin1.pth is not UTF-8 (byte 3): Python stops at startup" \
	"check says the interpreter stops at the .pth"
$ABISCOPE check --json "$FX/latin" >"$FX/latin.json" 2>/dev/null
expect_eq "$(jq_py "j['ok'], j['environments'][0]['interpreter_problem'] is not None" <"$FX/latin.json")" \
	"False True" "check --json: not ok, interpreter_problem says why"

# a .pth naming /: Python puts / on sys.path; check lists only what an import
# could reach from it, a bounded number of folders, and says so
W=$FX/w
"$pybin" -m venv --without-pip "$W" >/dev/null 2>&1
ext "$W/lib/python$pyver/site-packages/good" ok_w ok
echo / >"$W/lib/python$pyver/site-packages/root.pth"
real=$("$W/bin/python" -c 'import sys; print(sys.path[-1])')
expect_eq "$real" / "the real interpreter puts / on sys.path"
start=$(date +%s)
timeout 60 $ABISCOPE check --json "$W" >"$FX/root.json" 2>"$FX/root.err"
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -ne 124 ] && [ "$took" -lt 20 ]; then
	pass "check of a venv whose .pth names / finishes in ${took}s (exit $rc), not a walk of the disk"
else
	fail "check of a venv whose .pth names / finishes quickly" "took ${took}s, exit $rc" "$(tail -3 "$FX/root.err")"
fi
expect_eq "$(jq_py "j['environments'][0]['site_packages'][-1]" <"$FX/root.json")" / "check: / is on its sys.path too"
# a .pth folder of 5,000 importable folders: listing stops, and says where
mkdir -p "$FX/wide"
(cd "$FX/wide" && i=0 && while [ $i -lt 5000 ]; do mkdir "d$i"; i=$((i + 1)); done)
ext "$FX/wide/zz_last" bad_wide bad
echo "$FX/wide" >"$W/lib/python$pyver/site-packages/root.pth"
$ABISCOPE check --json "$W" >"$FX/wide.json" 2>/dev/null
expect_contains "$(jq_py "j['environments'][0]['notes']" <"$FX/wide.json")" "stopped listing it after 4096 folders" \
	"check --json: the notes say the listing of a huge .pth folder stopped"
expect_contains "$($ABISCOPE check -v --color never "$W" 2>&1)" "stopped listing it after 4096 folders" \
	"check -v: and so does the text"
# the documents with the new notes and interpreter_problem keep to the schema
if python3 -c 'import jsonschema' 2>/dev/null; then
	python3 - "$TOP/docs/schema/check.v2.schema.json" "$FX/check.json" "$FX/latin.json" "$FX/wide.json" <<'PY'
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
bad = [(f, "/".join(map(str, e.absolute_path)), e.message)
       for f in sys.argv[2:] for e in v.iter_errors(json.load(open(f)))]
for b in bad:
    print(*b)
sys.exit(1 if bad else 0)
PY
	expect_eq "$?" 0 "check --json documents valid against check.v2.schema.json"
else
	pass "schema of the documents # SKIP no jsonschema module"
fi
finish
