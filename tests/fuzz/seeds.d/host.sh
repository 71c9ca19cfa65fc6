# seeds for fuzz_snapshot and fuzz_wheel: snapshots and wheels the test
# suite built (when it ran first), and small ones made here
mkdir -p "$corp/fuzz_snapshot" "$corp/fuzz_wheel"
for f in "$here"/../../build/e2e/host/b.json "$here"/../../build/e2e/host/fleet/node21.json; do
	[ -f "$f" ] && head -c 262144 "$f" >"$corp/fuzz_snapshot/$(basename "$f")"
done
for f in "$here"/../../build/e2e/wheel/*.whl; do
	[ -f "$f" ] && [ "$(wc -c <"$f")" -lt 300000 ] && cp "$f" "$corp/fuzz_wheel/"
done
python3 - "$corp" <<'PY'
import io, json, sys, zipfile
corp = sys.argv[1]
snap = {"format": "abiscope-snapshot", "version": 1, "summary": {"label": "h", "dists": {"a": "1"}, "objects": {"site/x.so": "0123456789abcdef"}},
        "loader": {"interp": "/lib64/ld-linux-x86-64.so.2", "glibc": [2, 36], "machine": 62, "system_dirs": ["/lib/"],
                   "cache": {"entries": [[771, "libx.so.1", "/lib/libx.so.1", 0]]}},
        "files": [{"path": "/lib/libx.so.1", "type": "elf", "size": 100, "elf": {"machine": 62, "type": 3, "soname": "libx.so.1",
                   "needed": ["libc.so.6"], "verdef": [[1, 1, "libx.so.1"], [2, 0, "X_1"]], "verneed": [["libc.so.6", [["GLIBC_2.2.5", 0, 3]]]],
                   "exports": "AAAAAAAAAAECAAISAQ==", "refs": [["malloc", 3, 0, 2]], "gnu_stack": 6, "tls": [16, 8]}},
                  {"path": "/lib", "type": "dir", "children": ["libx.so.1", "sub/"]},
                  {"path": "/lib64", "type": "link", "target": "lib"},
                  {"path": "/etc/hostname", "type": "text", "text": "h\n"}]}
open(corp + "/fuzz_snapshot/small.json", "w").write(json.dumps(snap))
b = io.BytesIO()
with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\nVersion: 1.0\n\nbody\n")
    z.writestr("pkg/__init__.py", "x = 1\n")
    z.writestr("pkg-1.0.data/scripts/run", "#!/bin/sh\n")
open(corp + "/fuzz_wheel/small.whl", "wb").write(b"pkg-1.0-py3-none-any.whl\n" + b.getvalue())
PY
