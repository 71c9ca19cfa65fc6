#!/bin/sh
# check --verify-hashes against the hashes a real `pip install` writes into
# the installed RECORD (issue 25: the hash is now the CPU's SHA instructions
# where it has them, and a large file is hashed a window at a time with its
# pages let go behind).  The oracle is pip's RECORD and Python's hashlib:
# on the fresh install abiscope finds every file as pip recorded it; after
# bytes change in place (same size) in the first window, past the first
# window and in the last byte of a file 8 MiB and more long, abiscope names
# exactly the files whose hashlib digest no longer matches pip's RECORD.
. "$(dirname "$0")/lib.sh"
fixture_dir verify_hashes
python_venv "$FX/env"
"$pybin" -m venv "$FX/pipenv" >"$FX/pipvenv.txt" 2>&1 || {
	pass "verify_hashes # SKIP pip cannot make a venv here: $(tail -1 "$FX/pipvenv.txt")"
	finish
	exit
}
pytag=cp$(echo "$pyver" | tr -d .)
plat=linux_$(uname -m)
W=$FX/hashed-1.0-$pytag-$pytag-$plat.whl
py_module "$FX/_m$suffix" _m
# sizes around the 64-byte block, the padding and the 8 MiB window
"$pybin" - "$W" "$FX/_m$suffix" "$suffix" "$pytag" "$plat" <<'PY'
import base64, hashlib, random, sys, zipfile
w, ext, suffix, tag, plat = sys.argv[1:]
rnd = random.Random(25)
files = {"hashed/__init__.py": b"", "hashed/_m" + suffix: open(ext, "rb").read()}
for n in (0, 1, 55, 56, 63, 64, 65, 8 << 20, (8 << 20) + 4099, (17 << 20) + 1):
    files["hashed/data/f%d.bin" % n] = rnd.randbytes(n)
def digest(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
files["hashed-1.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: hashed\nVersion: 1.0\n"
files["hashed-1.0.dist-info/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                                       "Tag: %s-%s-%s\n" % (tag, tag, plat)).encode()
record = "".join("%s,%s,%d\n" % (n, digest(b), len(b)) for n, b in files.items())
record += "hashed-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(w, "w", zipfile.ZIP_DEFLATED) as z:
    for n, b in files.items():
        z.writestr(n, b)
    z.writestr("hashed-1.0.dist-info/RECORD", record)
PY
"$FX/pipenv/bin/pip" install -q --no-deps --no-index "$W" >"$FX/pip.txt" 2>&1
expect_eq "$?" 0 "pip installs the wheel for real"
PSP=$FX/pipenv/lib/python$pyver/site-packages

# Which of the distribution's files hashlib finds changed against pip's RECORD.
changed_by_hashlib() {
	"$pybin" - "$PSP" <<'PY'
import base64, csv, hashlib, os, sys
sp = sys.argv[1]
for row in csv.reader(open(os.path.join(sp, "hashed-1.0.dist-info/RECORD"))):
    if len(row) < 2 or not row[1].startswith("sha256="):
        continue
    d = hashlib.sha256(open(os.path.join(sp, row[0]), "rb").read()).digest()
    if "sha256=" + base64.urlsafe_b64encode(d).rstrip(b"=").decode() != row[1]:
        print(os.path.join(sp, row[0]))
PY
}
# What abiscope says differs in content (record-mismatch's files), after a
# first line "read" once its JSON report parsed (no report: no such line).
changed_by_abiscope() {
	$ABISCOPE check --json --verify-hashes "$FX/pipenv" 2>"$FX/check.err" | "$pybin" -c '
import json, sys
j = json.load(sys.stdin)
print("read")
for f in j["findings"]:
    if f["id"] == "record-mismatch" and f.get("distribution") == "hashed":
        for x in f["files"]:
            print(x["path"] + " " + x["problem"])'
}

expect_eq "$(changed_by_hashlib)" "" "oracle: after the install every file hashes as pip recorded it"
expect_eq "$(changed_by_abiscope)" "read" "check --verify-hashes: nothing differs from pip's RECORD after a real install"

# same size, other bytes: the first window, past the first window, the last byte
"$pybin" - "$PSP/hashed/data" <<'PY'
import os, sys
d = sys.argv[1]
def flip(name, off):
    with open(os.path.join(d, name), "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x5a]))
flip("f65.bin", 64)                      # the second block's first byte
flip("f%d.bin" % ((8 << 20) + 4099), (8 << 20) + 5)    # past the first 8 MiB window
flip("f%d.bin" % ((17 << 20) + 1), 17 << 20)           # the last byte, alone in the third window
PY
want=$(changed_by_hashlib | sort)
expect_eq "$(echo "$want" | wc -l)" 3 "oracle: hashlib finds the three changed files"
got=$(changed_by_abiscope | sort)
expect_eq "$got" "$( (echo read; echo "$want" | sed 's/$/ content differs (sha256)/') | sort)" \
	"check --verify-hashes names exactly the files hashlib finds changed, as content that differs"

# Memory: a 256 MiB file is hashed in 8 MiB windows whose pages leave the
# resident set once hashed (it was the whole file: 567 MB peak on torch).
# The file is sparse (no disk), listed in the RECORD with its real digest.
peak_mib() {
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import scale
rc, cpu, rss = scale.run(sys.argv[3:], sys.argv[2]); print(rss // 1024)' "$TOP/tests" "$@"
}
base=$(peak_mib "$FX/base.json" $ABISCOPE check --json --verify-hashes "$FX/pipenv")
truncate -s 256M "$PSP/hashed/data/big.bin"
"$pybin" - "$PSP" <<'PY'
import base64, hashlib, os, sys
sp = sys.argv[1]
h = hashlib.sha256()
zeros = bytes(1 << 20)
for _ in range(256):
    h.update(zeros)
row = "hashed/data/big.bin,sha256=%s,%d\n" % (base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode(), 256 << 20)
open(os.path.join(sp, "hashed-1.0.dist-info/RECORD"), "a").write(row)
PY
big=$(peak_mib "$FX/big.json" $ABISCOPE check --json --verify-hashes "$FX/pipenv")
expect_contains "$(cat "$FX/big.json")" '"hash_differs": 3' "the sparse 256 MiB file hashes as its RECORD says"
case "$BUILD" in
*asan*) pass "hashing a 256 MiB file: peak RSS # SKIP ASan's shadow memory is not the tool's" ;;
*) if [ $((big - base)) -le 64 ]; then
	pass "hashing a 256 MiB file costs $((big - base)) MiB of peak RSS (at most 64: the 8 MiB window, not the file)"
   else
	fail "hashing a 256 MiB file: peak RSS grew by $((big - base)) MiB over $base" "want at most 64"
   fi ;;
esac
finish
