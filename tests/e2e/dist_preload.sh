#!/bin/sh
# A package that preloads libraries of other distributions from a list it
# ships, as faiss-gpu-cu12 does (src/pyenv/distpreload.h): fpkg/loader.py,
# written as faiss's is, loads RTLD_GLOBAL the file of fake-runtime's RECORD
# that fpkg/_preload_library.json names; fpkg._ext needs that library by
# SONAME and has no RUNPATH to it.  The oracle is the real import in a real
# venv, each case against abiscope's verdict on the module:
#   1. the list names the file: the import works (a false failure before:
#      the library of a loop's call into a function was left unnamed);
#   2. the list names a file the RECORD lacks: the loader raises, and
#      the module fails (preload-fails);
#   3. no list: the module fails to import, and abiscope says so;
#   4. a good entry, then a second the import cannot preload: a
#      distribution not installed, a file the RECORD lacks, a file the
#      RECORD lists that is not there: each fails (a false "imports" once:
#      the first entry is all the module needs);
#   5. 33 entries, one more than abiscope reads: cannot tell, never imports.
. "$(dirname "$0")/lib.sh"
fixture_dir dist_preload
python_venv "$FX/env"
mkdir -p "$SP/fake_runtime/lib" "$SP/fake_runtime-1.0.dist-info" "$SP/fpkg" "$SP/fpkg-1.0.dist-info"
printf 'int fake_runtime_version(void) { return 1; }\n' >"$FX/rt.c"
$CC -shared -fPIC -Wl,-soname,libfakert.so.1 -o "$SP/fake_runtime/lib/libfakert.so.1" "$FX/rt.c" || fail "build libfakert"
printf 'Metadata-Version: 2.1\nName: fake-runtime\nVersion: 1.0\n' >"$SP/fake_runtime-1.0.dist-info/METADATA"
printf 'fake_runtime/lib/libfakert.so.1,,\nfake_runtime-1.0.dist-info/METADATA,,\nfake_runtime-1.0.dist-info/RECORD,,\n' \
	>"$SP/fake_runtime-1.0.dist-info/RECORD"
py_module "$SP/fpkg/_ext$suffix" _ext -Wl,--no-as-needed -L"$SP/fake_runtime/lib" -l:libfakert.so.1
printf 'Metadata-Version: 2.1\nName: fpkg\nVersion: 1.0\nRequires-Dist: fake-runtime>=1.0\n' \
	>"$SP/fpkg-1.0.dist-info/METADATA"
printf 'fpkg/__init__.py,,\nfpkg/loader.py,,\nfpkg/_preload_library.json,,\nfpkg/_ext%s,,\nfpkg-1.0.dist-info/RECORD,,\n' \
	"$suffix" >"$SP/fpkg-1.0.dist-info/RECORD"
printf 'from .loader import *\n' >"$SP/fpkg/__init__.py"
cat >"$SP/fpkg/loader.py" <<'EOF'
"""loader.py wrapper loading shared libraries (as faiss-wheels writes it)."""
from __future__ import annotations

import ctypes
import json
import os
from importlib.metadata import distribution
from pathlib import Path


def _load_shared_library(preload_target) -> None:
    for file in distribution(preload_target["package"]).files:
        if preload_target["library"] == file.name:
            path = str(file.locate())
            break
    else:
        msg = f"{preload_target['library']} file isn't found in {preload_target['package']}"
        raise FileNotFoundError(msg)
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


_CONFIG_PATH = Path(__file__).parent / "_preload_library.json"

if _CONFIG_PATH.exists():
    preload_targets = json.loads(_CONFIG_PATH.read_text())["preload-library"]
else:
    preload_targets = []

for target in preload_targets:
    if os.getenv(f"_FPKG_DISABLE_{target['group'].upper()}_PRELOAD"):
        continue
    _load_shared_library(target)


from . import _ext  # noqa: E402
EOF
# list LIBRARY [PACKAGE LIBRARY]...: the list, fake-runtime's LIBRARY first
list() {
	python3 - "$SP/fpkg/_preload_library.json" fake-runtime "$@" <<'PY'
import json, sys
a = sys.argv[2:]
pairs = zip(a[0::2], a[1::2])
json.dump({"preload-library": [{"group": "cuda", "package": p, "library": l} for p, l in pairs]},
          open(sys.argv[1], "w"))
PY
}
# the real import, and abiscope's status of fpkg._ext
real() { (cd /tmp && "$V/bin/python" -c 'import fpkg' >/dev/null 2>&1 && echo imports || echo fails); }
ours() {
	$ABISCOPE check --json "$V" 2>/dev/null | jq_py '[m["status"] for e in j["environments"] for d in e["distributions"] for m in d["modules"] if m["module"] == "fpkg._ext"]'
}

list libfakert.so.1
expect_eq "$(real)" imports "1. the real import works: loader.py preloads libfakert.so.1 of fake-runtime"
expect_eq "$(ours)" "['ok']" "1. abiscope: fpkg._ext imports"
$ABISCOPE check --json --libraries "$V" >"$FX/libs.json" 2>&1
expect_eq "$(jq_py '[m["status"] for e in j["environments"] for d in e["distributions"] for m in d["modules"] if m["path"].endswith("/fpkg/_ext'"$suffix"'")]' <"$FX/libs.json" 2>&1)" \
	"['ok']" "1. check --libraries: fpkg._ext imports"

list libnothere.so.1
expect_eq "$(real)" fails "2. the real import fails: the RECORD has no libnothere.so.1"
expect_eq "$(ours)" "['fails']" "2. abiscope: fpkg._ext fails"
$ABISCOPE check --json "$V" >"$FX/2.json" 2>&1
expect_eq "$(jq_py '[(f["id"], f["preloads_from"], f["line"]) for f in j["findings"] if f.get("module") == "fpkg._ext"]' <"$FX/2.json" 2>&1)" \
	"[('preload-fails', 'fake-runtime', 32)]" "2. one preload-fails finding, at loader.py:32 (the call), naming fake-runtime"

list libfakert.so.1 not-installed libx.so.1
expect_eq "$(real)" fails "4a. the real import fails: the second entry's distribution is not installed"
expect_eq "$(ours)" "['fails']" "4a. abiscope: fpkg._ext fails"
list libfakert.so.1 fake-runtime libnothere.so.1
expect_eq "$(real)" fails "4b. the real import fails: the second entry's file is not in the RECORD"
expect_eq "$(ours)" "['fails']" "4b. abiscope: fpkg._ext fails"
printf 'fake_runtime/lib/libgone.so.1,,\n' >>"$SP/fake_runtime-1.0.dist-info/RECORD"
list libfakert.so.1 fake-runtime libgone.so.1
expect_eq "$(real)" fails "4c. the real import fails: the second entry's file is in the RECORD, not on disk"
expect_eq "$(ours)" "['fails']" "4c. abiscope: fpkg._ext fails"

set -- libfakert.so.1
for i in $(seq 32); do set -- "$@" fake-runtime libfakert.so.1; done
list "$@"
expect_eq "$(real)" imports "5. the real import works with 33 entries"
expect_eq "$(ours)" "['cannot-tell']" "5. abiscope reads at most 32: cannot tell"

rm "$SP/fpkg/_preload_library.json"
expect_eq "$(real)" fails "3. the real import fails without the list"
expect_eq "$(ours)" "['fails']" "3. abiscope: fpkg._ext fails"
finish
