#!/usr/bin/env python3
"""Field test: `abiscope wheel` on a real PyPI wheel, the real loader as oracle.

sgl-kernel 0.3.9 (built for torch 2.8, CUDA 12) checked against the
sgl-kernel-break environment (torch 2.14.1+cu130, sgl-kernel 0.3.21) before
installing it.  The oracle extracts the wheel's common_ops.abi3.so into a
temporary folder and, in the environment's own python, imports torch and
dlopen()s it with the CUDA 12 wheels' folders and a driver stub on
LD_LIBRARY_PATH; abiscope, given the same LD_LIBRARY_PATH, must predict the
same dlerror() for the module installed in place of 0.3.21.

Needs the wheel in ~/.cache/abiscope/wheels (pip download "sgl-kernel==0.3.9"
--no-deps --only-binary=:all: --python-version 3.11 --platform
manylinux2014_x86_64 -d ~/.cache/abiscope/wheels) and the environment from
bench/prepare_envs.sh; otherwise it says SKIP.
"""
import json
import os
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldlib as F  # noqa: E402

WHEEL = os.path.join(F.CACHE, "wheels", "sgl_kernel-0.3.9-cp310-abi3-manylinux2014_x86_64.whl")
MEMBER = "sgl_kernel/common_ops.abi3.so"


def main():
    t = F.Tap()
    name = "sgl-kernel 0.3.9 wheel into sgl-kernel-break"
    why_not = F.unavailable("sgl-kernel-break")
    if not why_not and not os.path.exists(WHEEL):
        why_not = "no %s (see this file's docstring)" % WHEEL
    if why_not:
        t.skip(name, why_not)
        return 0
    venv = F.env("sgl-kernel-break")
    sp = F.site_packages(venv)
    with F.tempdir() as tmp:
        real = os.path.join(tmp, "site", MEMBER)
        os.makedirs(os.path.dirname(real))
        with zipfile.ZipFile(WHEEL) as z, open(real, "wb") as out:
            out.write(z.read(MEMBER))
        stub = F.stub_driver(tmp, [real])
        llp = ":".join([os.path.join(sp, "nvidia", d, "lib") for d in ("cuda_runtime", "cuda_nvrtc", "cublas")
                        if os.path.isdir(os.path.join(sp, "nvidia", d, "lib"))] + [stub])
        loads, err = F.real_import_then_dlopen(venv, real, llp)
        e = dict(os.environ, LD_LIBRARY_PATH=llp)
        r = subprocess.run([F.ABISCOPE, "wheel", "--json", "--env", venv, WHEEL], capture_output=True, text=True,
                           env=e, timeout=600)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        t.ok(False, name + ": abiscope wheel answers in JSON", r.stdout[-2000:] + r.stderr[-2000:])
        return 1
    mods = [m for m in j["modules"] if m["module"] == "sgl_kernel.common_ops"]
    t.ok(j.get("replaces") == "0.3.21" and j.get("tags_supported") is True,
         name + ": replaces 0.3.21, tags supported", j.get("replaces"))
    t.ok(not loads and err, name + ": the real loader refuses it", err)
    pred = mods[0]["error"] if mods else None
    installed = os.path.join(sp, MEMBER)
    t.ok(pred is not None and err is not None and pred.replace(installed, real) == err,
         name + ": abiscope predicts the exact dlerror()", "real:     %s\nabiscope: %s" % (err, pred))
    t.ok(r.returncode == 1, name + ": exit 1 (its module would not import)", r.returncode)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
