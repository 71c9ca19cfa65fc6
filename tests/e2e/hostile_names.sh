#!/bin/sh
# Names with bytes that are not UTF-8 (issue 26 item 6): a METADATA Name in
# Latin-1 and a DT_NEEDED with \377 reach --junit and --json through one
# escaper each (cli/xml_out.c, cli/json_out.c; fuzzed by fuzz_escape).  The
# oracles are real parsers: Python's expat for the XML, and the JSON decoded
# as strict UTF-8.
. "$(dirname "$0")/lib.sh"
fixture_dir hostile_names
pybin=$(command -v python3)
E=$FX/env
SP=$E/lib/python3.11/site-packages
mkdir -p "$E/bin" "$SP/pkg" "$SP/pkg-1.0.dist-info" "$FX/src"
ln -sf "$pybin" "$E/bin/python3"
printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11.2\n' "$(dirname "$pybin")" >"$E/pyvenv.cfg"
# a library whose SONAME has a byte that is no UTF-8, linked by the module, then removed
printf 'int f(void) { return 1; }\n' >"$FX/src/l.c"
$CC -shared -fPIC -o "$FX/src/libhostile.so" "$FX/src/l.c" -Wl,-soname,"$(printf 'lib\377\376caf\351.so.1')"
printf 'int f(void); int PyInit__m(void) { return f(); }\n' >"$FX/src/m.c"
$CC -shared -fPIC -o "$SP/pkg/_m.cpython-311-x86_64-linux-gnu.so" "$FX/src/m.c" -L"$FX/src" -lhostile
rm "$FX/src/libhostile.so"
printf 'Metadata-Version: 2.1\nName: caf\351-<&>"\001\nVersion: 1.0\n' >"$SP/pkg-1.0.dist-info/METADATA"
printf 'pkg/_m.cpython-311-x86_64-linux-gnu.so,,\npkg-1.0.dist-info/RECORD,,\n' >"$SP/pkg-1.0.dist-info/RECORD"
BIN=${ABISCOPE_BINARY:-$ABISCOPE}
$BIN check --junit "$FX/r.xml" --json "$E" >"$FX/r.json" 2>"$FX/r.err"
expect_eq "$?" 1 "check --junit --json of an env with hostile names: exit 1 (the module fails)"
grep -q "$(printf '\377')" "$FX/r.xml"
expect_eq "$?" 1 "the JUnit report holds no raw \\377 byte"
python3 - "$FX/r.xml" "$FX/r.json" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
xmlp, jsonp = sys.argv[1:]
def tap(ok, name, why=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok and why:
        print("#   " + str(why)[:800].replace("\n", "\n#   "))
try:
    root = ET.parse(xmlp).getroot()
    cases = root.findall(".//testcase")
    fails = [c for c in cases if c.find("failure") is not None]
    tap(len(cases) == 1 and len(fails) == 1, "JUnit: well-formed XML (expat), one failing test case", [c.attrib for c in cases])
    msg = fails[0].find("failure").get("message") if fails else ""
    tap("\ufffd\ufffdcaf\ufffd.so.1" in msg, "JUnit: the soname's bytes become U+FFFD, the rest kept", msg)
    cls = cases[0].get("classname") if cases else ""
    tap(cls.startswith("caf\ufffd-<&>\""), "JUnit: the distribution's name, markup kept as text", cls)
except ET.ParseError as e:
    tap(False, "JUnit: well-formed XML (expat), one failing test case", e)
try:
    raw = open(jsonp, "rb").read().decode("utf-8")   # strict: no invalid byte
    j = json.loads(raw)
    names = [d["name"] for e in j["environments"] for d in e["distributions"]]
    tap(any(n.startswith("caf\ufffd") for n in names), "JSON: strict UTF-8, the name with U+FFFD", names)
except (UnicodeDecodeError, ValueError) as e:
    tap(False, "JSON: strict UTF-8, the name with U+FFFD", e)
PY
finish
