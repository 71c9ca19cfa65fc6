#!/bin/sh
# Scale tests (issue 26): every reader is linear in what it reads.  Each
# test runs abiscope on one input and on one four times as large, built
# here, and compares the CPU the two runs used (tests/scale.py: within 5x,
# where a quadratic reader takes 16x); never a wall-clock limit.
. "$(dirname "$0")/lib.sh"
fixture_dir scale
SCALE="python3 $TOP/tests/scale.py --timeout 300"
pybin=$(command -v python3)
scale() { $SCALE "$@" || fails=$((fails + 1)); }

# ---- a package's own Python sources (pyenv/selfload.c): each line once
# Lines of every kind the reader acts on: a load call in a try, a call into
# a function of this file and of a module it imports (followed), a condition
# of nested not/and/or; the large __init__.py is 1.7 MB, under the 2 MiB read.
for n in 4000 16000; do
	minimal_env "$FX/self$n"
	python3 - "$n" "$FX/self$n/lib/python3.11/site-packages/pkg" <<'PY'
import sys
n, d = int(sys.argv[1]), sys.argv[2]
open(d + "/helper.py", "w").write("def g():\n    torch.ops.load_library('libnothere.so')\n" + "y = 2\n" * n)
unit = ("x = 1\ntry:\n    ctypes.CDLL('libnothere.so')\nexcept OSError:\n    pass\nf()\ng()\n"
        "if not (A and B or C):\n    pass\n")
with open(d + "/__init__.py", "w") as f:
    f.write("import ctypes\nfrom .helper import g\ndef f():\n    torch.ops.load_library('libnothere.so')\n" + unit * n)
PY
done
scale --rc 0 "check: a package's __init__.py of 36,000 and 144,000 lines (load calls, calls followed, conditions)" \
	"$FX/self4000" "$FX/self16000" -- $ABISCOPE check {}
# one condition line: 100,000 and 400,000 nested brackets, or a chain of `and`
for n in 50000 200000; do
	minimal_env "$FX/cond$n"
	python3 -c 'import sys; n = int(sys.argv[1]); open(sys.argv[2], "w").write(
	    "if " + "(" * n + "not a" + ")" * n + ":\n    pass\nif " + " and ".join(["a"] * n) + ":\n    pass\n")' \
		"$n" "$FX/cond$n/lib/python3.11/site-packages/pkg/__init__.py"
done
scale --rc 0 "check: an if of 50,000 and 200,000 nested brackets and 'and's" \
	"$FX/cond50000" "$FX/cond200000" -- $ABISCOPE check {}
# ---- torch/__init__.py's _load_global_deps (pyenv/importctx.c): preload
# calls with literals, in a loop over a collection, and through functions
for n in 5000 20000; do
	minimal_env "$FX/torch$n"
	python3 - "$n" "$FX/torch$n/lib/python3.11/site-packages/torch" <<'PY'
import os, sys
n, d = int(sys.argv[1]), sys.argv[2]
os.makedirs(d, exist_ok=True)
calls = ['        _preload_cuda_deps("cublas", "libcublas.so.*[0-9]")',
         '        for a, b in cuda_libs.items():\n            _preload_cuda_deps(a, b)',
         '        _preload_cuda_lib%d()']
body = "\n".join(calls[i % 3] % (i % 50) if i % 3 == 2 else calls[i % 3] for i in range(n))
defs = "".join('def _preload_cuda_lib%d(required=True):\n    _preload_cuda_deps("cudnn", "libcudnn.so.*[0-9]")\n\n' % k
               for k in range(50))
open(d + "/__init__.py", "w").write(
    "import ctypes\n" + defs + "def _preload_cuda_deps(lib_folder, lib_name, required=True):\n    pass\n\n"
    "def _load_global_deps():\n    cuda_libs = {\n        'cublas': 'libcublas.so.*[0-9]',\n    }\n    try:\n"
    "        ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL)\n    except OSError as err:\n" + body + "\n        raise err\n")
open(d + "/version.py", "w").write("__version__ = '2.9.1'\ncuda = '12.8'\n")
PY
done
scale --rc 0 "check: a torch/__init__.py of 5,000 and 20,000 preload calls" \
	"$FX/torch5000" "$FX/torch20000" -- $ABISCOPE check {}
# ---- distributions (pyenv/dist.c, the duplicate metadata check, causes and
# advice): many projects, and many metadata folders of one project
mkdists() {	# mkdists DIR N SAME: N .dist-info folders, all of one name when SAME=1
	python3 - "$@" <<'PY'
import os, sys
sp, n, same = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
for i in range(n):
    name = "same" if same else "p%d" % i
    d = os.path.join(sp, "%s-%d.0.dist-info" % (name, i))
    os.makedirs(d)
    open(d + "/METADATA", "w").write("Metadata-Version: 2.1\nName: %s\nVersion: %d.0\n" % (name, i))
    open(d + "/RECORD", "w").write("%s/__init__.py,,\n%s-%d.0.dist-info/RECORD,,\n" % (name, name, i))
PY
}
for n in 2500 10000; do
	minimal_env "$FX/dists$n"
	mkdists "$FX/dists$n/lib/python3.11/site-packages" $n 0
done
scale --rc 0 "check: 2,500 and 10,000 distributions (each with a RECORD that does not match)" \
	"$FX/dists2500" "$FX/dists10000" -- $ABISCOPE check {}
# -v renders each one's finding tree too (each root looked for its children
# in every finding of the environment: 4.7x here before, 3.6x after)
scale --rc 0 "check -v: 2,500 and 10,000 distributions (each with a RECORD that does not match)" \
	"$FX/dists2500" "$FX/dists10000" -- $ABISCOPE check -v {}
rm -rf "$FX/dists2500" "$FX/dists10000"
for n in 500 2000; do
	minimal_env "$FX/same$n"
	mkdists "$FX/same$n/lib/python3.11/site-packages" $n 1
done
scale --rc 0 --out "$FX/same.json" "check --json: 500 and 2,000 metadata folders of one project" \
	"$FX/same500" "$FX/same2000" -- $ABISCOPE check --json {}
expect_eq "$(jq_py "[len(f['dist_infos']) for f in j['findings'] if f['id'] == 'duplicate-dist-info']" <"$FX/same.json")" \
	"[2000]" "check: one duplicate-dist-info finding for the project, listing its 2,000 folders (not one per pair)"
rm -rf "$FX/same500" "$FX/same2000"
finish
