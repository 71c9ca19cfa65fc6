#!/bin/sh
# Extension modules that are no ELF object (issue 26 item 3): a file an
# interrupted install emptied or left as text, and a wheel member stored as a
# symbolic link (pip installs it as a file holding the link's target) fail
# the import; check and wheel say so, with the loader's own words.  The
# oracle is Python: the real import of each module in the same tree, and a
# real `pip install` of the wheel into a fresh venv, then its import.
. "$(dirname "$0")/lib.sh"
fixture_dir damaged_modules
pybin=$(command -v python3)
suffix=$("$pybin" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
pyver=$("$pybin" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pytag=cp$(echo "$pyver" | tr -d .)

E=$FX/env
SP=$E/lib/python$pyver/site-packages
mkdir -p "$E/bin" "$SP/pkg" "$SP/pkg-1.0.dist-info"
ln -sf "$pybin" "$E/bin/python3"
printf 'home = %s\ninclude-system-site-packages = false\nversion = %s.0\n' "$(dirname "$pybin")" "$pyver" >"$E/pyvenv.cfg"
printf 'int PyInit__ok(void) { return 0; }\n' >"$FX/ok.c"
$CC -shared -fPIC -o "$SP/pkg/_ok$suffix" "$FX/ok.c"
: >"$SP/pkg/_empty$suffix"
printf 'this file was left as text by an installer that stopped halfway through its work\n' >"$SP/pkg/_text$suffix"
printf 'INPUT(libc.so.6)\n' >"$SP/pkg/_script.abi3.so"
printf 'not a library, and not a module: its name has no module suffix\n' >"$SP/pkg/libnotes.so"
printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
{ for f in _ok$suffix _empty$suffix _text$suffix _script.abi3.so libnotes.so; do echo "pkg/$f,,"; done
  echo "pkg-1.0.dist-info/RECORD,,"; } >"$SP/pkg-1.0.dist-info/RECORD"

$ABISCOPE check --color never "$E" >"$FX/check.txt" 2>&1
expect_eq "$?" 1 "check of an env with emptied, text and ld-script extension modules: exit 1"
expect_contains "$(cat "$FX/check.txt")" "3 of 4 extension modules would fail" \
	"check: the three count as failing modules (the library named without a module suffix is none)"
$ABISCOPE check --json "$E" >"$FX/check.json" 2>"$FX/check.err"
for m in _empty _text _script; do
	case $m in _script) f=$SP/pkg/$m.abi3.so ;; *) f=$SP/pkg/$m$suffix ;; esac
	want=$(cd "$SP" && "$pybin" -c "import pkg.$m" 2>&1 | tail -1)
	got=$(jq_py "[f['dlerror'] for f in j['findings'] if f.get('module') == 'pkg.$m'][0]" <"$FX/check.json" 2>&1)
	expect_eq "ImportError: $got" "$want" "check --json: pkg.$m fails with the error the real import gives"
	abiscope_why=$($ABISCOPE why --color never "$f" 2>&1)
	expect_contains "$abiscope_why" "${want#ImportError: }" "why of $m: the same error"
done
expect_contains "$(cat "$FX/check.txt")" "is no loadable ELF object" "check: says what the file is"
expect_not_contains "$(cat "$FX/check.txt")" "stops the search for" "check: no search stopped (the module is loaded by its path)"

# ---- a wheel whose extension module is a symbolic link member
mkdir -p "$FX/whl"
W=$FX/whl/symext-1.0-$pytag-$pytag-manylinux_2_17_x86_64.whl
python3 - "$W" "$suffix" "$pytag" <<'PY'
import stat, sys, zipfile
w, suffix, tag = sys.argv[1:]
z = zipfile.ZipFile(w, "w")
def add(name, data, link=False):
    zi = zipfile.ZipInfo(name)
    zi.external_attr = ((stat.S_IFLNK | 0o777) if link else (stat.S_IFREG | 0o644)) << 16
    z.writestr(zi, data)
add("symext/__init__.py", "")
add("symext/_m" + suffix, "../libreal.so", link=True)
add("symext-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: symext\nVersion: 1.0\n")
add("symext-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
    "Tag: %s-%s-manylinux_2_17_x86_64\n" % (tag, tag))
add("symext-1.0.dist-info/RECORD", "symext/__init__.py,,\nsymext/_m%s,,\nsymext-1.0.dist-info/RECORD,,\n" % suffix)
z.close()
PY
$ABISCOPE wheel --color never --env "$E" "$W" >"$FX/wheel.txt" 2>&1
expect_eq "$?" 1 "wheel with an extension module stored as a symbolic link: exit 1"
expect_contains "$(cat "$FX/wheel.txt")" "its extension modules (1)" "wheel: the member is one of its modules"
expect_contains "$(cat "$FX/wheel.txt")" "1 of 1 of its modules would fail" "wheel: and it fails"
# the oracle: pip installs it for real, and the import fails the same way
if "$pybin" -m venv "$FX/pipenv" >/dev/null 2>&1 &&
	"$FX/pipenv/bin/pip" install -q --no-deps --no-index "$W" >"$FX/pip.txt" 2>&1; then
	want=$("$FX/pipenv/bin/python" -c 'import symext._m' 2>&1 | tail -1)
	got=$(grep -o 'ImportError: .*' "$FX/wheel.txt" | head -1)
	expect_eq "$(echo "$got" | sed "s#$SP#SITE#")" \
		"$(echo "$want" | sed "s#$FX/pipenv/lib/python$pyver/site-packages#SITE#")" \
		"wheel: the ImportError a real pip install and import give"
else
	pass "the real pip install of the wheel # SKIP pip cannot make a venv here: $(tail -1 "$FX/pip.txt" 2>/dev/null)"
fi
finish
