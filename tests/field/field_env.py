#!/usr/bin/env python3
"""Field test: abiscope's verdicts against what Python really does.

    field_env.py VENV [--driver-stub]

Outside the fast suite (real environments are gigabytes; bench/prepare_envs.sh
builds them from PyPI).  For every extension module `abiscope check --json`
reports in VENV, the real interpreter of VENV loads the same file the way an
import does (dlopen RTLD_NOW|RTLD_LOCAL, through ctypes),
after `import torch` when abiscope's verdict states that assumption, and the
outcome must agree: both load, or both fail with the same dlerror() text.
Then the user-level import of each failing package (`import sgl_kernel`) must
show abiscope's predicted error somewhere in its message.

--driver-stub: this machine has no NVIDIA driver; both sides get a directory
holding libcuda.so.1 -> the CUDA toolkit's stub on LD_LIBRARY_PATH, so the
comparison reaches past the missing driver.

Prints TAP lines and a summary table.
"""
import json
import os
import subprocess
import sys
import tempfile

ABISCOPE = os.environ.get("ABISCOPE", "./abiscope")

# The loader part of an import: dlopen(path, RTLD_NOW | RTLD_LOCAL), which is
# what CPython's extension import does before it calls PyInit_<name> (the
# module's own initialisation is not the loader's verdict, so it is not run).
LOAD_ONE = r"""
import ctypes, os, sys
if sys.argv[3] == "torch":
    import torch
try:
    ctypes.CDLL(sys.argv[2], mode=os.RTLD_NOW | os.RTLD_LOCAL)
    print("OK")
except OSError as e:
    print("ERR " + str(e))
"""


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    venv = os.path.abspath(sys.argv[1])
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"ok - field test # SKIP no environment at {venv} (run bench/prepare_envs.sh)")
        return 0
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    stubdir = None
    if "--driver-stub" in sys.argv:
        stub = "/usr/local/cuda/lib64/stubs/libcuda.so"
        if not os.path.exists(stub):
            print("ok - field test # SKIP no CUDA stub libcuda.so")
            return 0
        stubdir = tempfile.mkdtemp(prefix="abiscope-driver-")
        os.symlink(stub, os.path.join(stubdir, "libcuda.so.1"))
        env["LD_LIBRARY_PATH"] = stubdir
    args = [ABISCOPE, "check", "--json", venv]
    if stubdir:
        args[2:2] = ["--ld-library-path", stubdir]
    j = json.loads(subprocess.run(args, capture_output=True, text=True, env=env).stdout)
    e = j["environments"][0]
    rows = []
    agree = disagree = 0
    for d in e["distributions"]:
        for m in d["modules"]:
            if m["status"] not in ("ok", "fails") or not m["extension"] or d["name"].startswith("(the standard"):
                continue
            ctx = "torch" if (m["context"] or "").startswith("assuming torch") else "-"
            r = subprocess.run([python, "-c", LOAD_ONE, m["module"], m["path"], ctx], capture_output=True,
                               text=True, env=env, timeout=300)
            out = (r.stdout.strip().splitlines() or ["(no output) " + r.stderr[-300:]])[-1]
            real_ok = out == "OK"
            real_err = out[4:] if out.startswith("ERR ") else None
            pred_ok = m["status"] == "ok"
            same = real_ok == pred_ok and (real_ok or real_err == m["error"])
            agree += same
            disagree += not same
            rows.append((d["name"], m["module"], "loads" if real_ok else "fails", "loads" if pred_ok else "fails",
                         ctx, same))
            name = f"{m['module']} ({d['name']} {d['version']}): real {'loads' if real_ok else 'fails'}, " \
                   f"abiscope {'loads' if pred_ok else 'fails'}"
            if same:
                print(f"ok - {name}")
            else:
                print(f"not ok - {name}\n#   real:     {real_err}\n#   abiscope: {m['error']}")
    # the user-level import of every package that fails
    failing = sorted({d["name"] for d in e["distributions"] if not d["ok"] and not d["name"].startswith("(")})
    for dist in failing:
        mods = [m for d in e["distributions"] if d["name"] == dist for m in d["modules"] if m["status"] == "fails"]
        top = sorted({m["module"].split(".")[0] for m in mods if m["module"]})
        for pkg in top:
            r = subprocess.run([python, "-c", f"import torch\nimport {pkg}"], capture_output=True, text=True,
                               env=env, timeout=300)
            msg = r.stderr
            predicted = [m["error"] for m in mods if m["module"] and m["module"].split(".")[0] == pkg]
            hit = any(p and p in msg for p in predicted)
            name = f"import {pkg}: the real ImportError shows an error abiscope predicted"
            if r.returncode == 0:
                print(f"not ok - {name}\n#   import {pkg} succeeded for real")
            elif hit:
                print(f"ok - {name}")
            else:
                last = [l for l in msg.splitlines() if l.strip()][-3:]
                print(f"not ok - {name}\n#   real: {' | '.join(last)}\n#   predicted one of: {predicted[:3]}")
    print("\n# module                                    real    abiscope  context  agree")
    for dist, mod, real, pred, ctx, same in rows:
        print(f"# {mod[:42]:42} {real:7} {pred:9} {ctx:8} {'yes' if same else 'NO'}")
    print(f"# {agree} agree, {disagree} disagree")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
