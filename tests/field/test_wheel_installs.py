#!/usr/bin/env python3
"""Field test: `abiscope wheel X.whl --env ENV` against a real install.

For each case (ENV, WHEEL): a hard-link copy of ENV (`cp -al`: uv replaces
files by unlink and create, so ENV is never written), `abiscope wheel
--json --env COPY WHEEL` before anything is installed, then a real `uv pip
install --no-deps` of the wheel into the copy, and tests/field/oracle.py in
the copy's own python, measuring the wheel's top-level packages
(ORACLE_PACKAGES): `import torch`, then each extension module's dlopen().
Per module: the same verdict and the exact dlerror() text.  A module
abiscope says this Python never imports (built for another one) must be
one the oracle does not find either.  Twice: as the machine is (no NVIDIA
driver) and with a libcuda.so.1 stand-in (the CUDA toolkit's stub) on
LD_LIBRARY_PATH, for both sides.

The envs must run (not skeletons; tests/field/revive.py makes a runnable
copy of one).  Nothing is downloaded: the wheels are looked up in
ABISCOPE_FIELD_WHEELS (a folder), /work/cache/wheels and
$ABISCOPE_CACHE/wheels; a case whose env or wheel is missing says SKIP.

    ABISCOPE_FIELD_ENVS=DIR   where the envs are (default: the field matrix's)
    ABISCOPE_FIELD_WHEEL_CASES="t2.8:torchvision-0.29.2-*.whl ..."  overrides the cases
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldlib as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ENVS = os.environ.get("ABISCOPE_FIELD_ENVS", os.path.join(F.CACHE, "field", "envs"))
WHEEL_DIRS = [d for d in (os.environ.get("ABISCOPE_FIELD_WHEELS"), "/work/cache/wheels",
                          os.path.join(F.CACHE, "wheels")) if d]
# an upgrade (torchvision 0.23.0 in t2.8), a downgrade (0.29.2 in t2.14), a
# reinstall of the same version (t2.15), new distributions built for other
# torch releases and CUDA majors
CASES = os.environ.get("ABISCOPE_FIELD_WHEEL_CASES",
                       "t2.8:torchvision-0.29.2-*.whl t2.14:torchvision-0.23.0-*.whl "
                       "t2.15:torchvision-0.29.2-*.whl t2.14:torchaudio-2.8.0-*.whl "
                       "t2.14:xformers-0.0.35-*.whl t2.8:sgl_kernel-0.3.21-*.whl "
                       "t2.8:sglang_kernel-0.4.10-*.whl").split()
STUB = "/usr/local/cuda-13.0/lib64/stubs/libcuda.so"


def find_wheel(pattern):
    for d in WHEEL_DIRS:
        hits = sorted(glob.glob(os.path.join(d, pattern)))
        if hits:
            return hits[-1]
    return None


def top_levels(whl):
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
    tops = set()
    for n in names:
        first = n.split("/")[0]
        if ".dist-info" in first or ".data" in first:
            continue
        tops.add(first.split(".")[0] if "/" not in n else first)
    return sorted(t for t in tops if t.isidentifier())


def defines_pyinit(path):
    """An extension module defines PyInit_<stem>; a library with a module's
    suffix outside any package (sgl-kernel's top-level lib/mscclpp.so) does
    not, and Python refuses to import it: no module to judge."""
    stem = os.path.basename(path).split(".")[0]
    with open(path, "rb") as f:
        return (b"PyInit_" + stem.encode() + b"\0") in f.read()


def stand_in(tmp):
    """A folder holding the toolkit's driver stub as libcuda.so.1, or None."""
    if not os.path.exists(STUB):
        return None
    d = os.path.join(tmp, "stub")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "libcuda.so.1")):
        shutil.copy(STUB, os.path.join(d, "libcuda.so.1"))
    return d


def run_env(llp):
    e = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX")}
    if llp:
        e["LD_LIBRARY_PATH"] = llp
    return e


def one_case(t, tmp, env_name, whl, mode, llp, rows):
    env = os.path.join(ENVS, env_name)
    copy = os.path.join(tmp, f"copy-{env_name}")
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-al", env, copy], check=True)
    label = f"{os.path.basename(whl)} into {env_name} ({mode})"
    t0 = time.time()
    r = subprocess.run([F.ABISCOPE, "wheel", "--json", "--env", copy, whl], capture_output=True, text=True,
                       env=run_env(llp), timeout=900)
    took = time.time() - t0
    try:
        j = json.loads(r.stdout)
    except ValueError:
        t.ok(False, label + ": abiscope wheel answers in JSON", r.stdout[-1500:] + r.stderr[-1500:])
        return
    inst = subprocess.run(["uv", "pip", "install", "--no-deps", "--link-mode", "copy", "--offline",
                           "--python", os.path.join(copy, "bin", "python"), whl],
                          capture_output=True, text=True, env=dict(run_env(None), UV_CACHE_DIR=os.path.join(tmp, "uv")),
                          timeout=900)
    if inst.returncode != 0:
        t.ok(False, label + ": the real install", inst.stderr[-1500:])
        return
    out = os.path.join(tmp, "oracle.json")
    o = subprocess.run([os.path.join(copy, "bin", "python"), os.path.join(HERE, "oracle.py"), out],
                       capture_output=True, text=True, timeout=1800,
                       env=dict(run_env(llp), ORACLE_PACKAGES=",".join(top_levels(whl))))
    if o.returncode != 0:
        t.ok(False, label + ": the oracle ran", o.stderr[-1500:])
        return
    real = json.load(open(out))
    if real["torch"] is not None and not real["torch"]["ok"]:
        t.ok(False, label + ": import torch works in the copy", real["torch"]["error"])
        return
    sp = F.site_packages(copy)
    # every shared object the oracle measured must have a verdict from
    # abiscope wheel: a wheel judged by none of them asserts nothing
    # (a library with a module's suffix but no PyInit_, which Python would
    # refuse to import, is the oracle's "libraries" too: judged below)
    judged = {m["path"] for m in j["modules"]}
    libs = real.get("libraries") or {}
    unjudged = sorted(os.path.relpath(p, sp) for p in real["modules"]
                      if p not in judged and p not in libs and defines_pyinit(p))
    t.ok(not unjudged, f"{label}: abiscope wheel judges every module the oracle measured",
         "no verdict for: " + " ".join(unjudged))
    for m in j["modules"]:
        path = m["path"]
        rel = os.path.relpath(path, sp)
        truth = real["modules"].get(path)
        if path in libs:
            t.ok(False, f"{label}: {rel} is a library (no PyInit_), not a module", "abiscope judged it as a module")
            continue
        if truth is None:
            # abiscope: never imported by this Python (another Python's
            # build): the oracle must not find it as a module either
            agree = not m["imports"] and m["error"] is None
            t.ok(agree, f"{label}: {rel} is no module of this Python, as abiscope says",
                 f"abiscope: imports={m['imports']} error={m['error']}")
            rows.append((label, rel, "not a module here", "yes" if agree else "NO"))
            continue
        if truth["dlopen"] and truth["dlopen"].startswith("crashed"):
            # every symbol bound; a static initialiser aborted (sgl-kernel's
            # op registrations clash with the other variant's, as in the
            # field matrix): no loader verdict to compare, listed, not counted
            rows.append((label, rel, truth["dlopen"], "crash (abiscope: %s)" %
                         ("imports" if m["imports"] else m["error"])))
            print(f"# {label}: {rel}: the real dlopen {truth['dlopen']} (abiscope: "
                  f"{'imports' if m['imports'] else m['error']}); not a loader verdict, not counted")
            continue
        pred = (m["imports"], m["error"])
        want = (truth["dlopen"] is None, truth["dlopen"])
        agree = pred == want
        false_load = m["imports"] and not want[0]
        rows.append((label, rel, "loads" if want[0] else "fails", "yes" if agree else
                     "FALSE LOAD" if false_load else "NO"))
        t.ok(agree, f"{label}: {rel} {'loads' if want[0] else 'fails'} ({took:.0f} s)",
             f"abiscope: {pred}\nreal:     {want}")
    libraries_case(t, label, j, real, sp, rows)
    # a case that compared no verdict at all asserts nothing: say so
    compared = sum(1 for r in rows if r[0] == label and r[2] != "not a module here")
    t.ok(compared > 0, f"{label}: at least one verdict compared with the real install ({compared})",
         f"abiscope: {len(j['modules'])} modules, {len(j.get('libraries') or [])} libraries; "
         f"real: {len(real['modules'])} modules, {len(real.get('libraries') or {})} libraries")
    shutil.rmtree(copy, ignore_errors=True)


def libraries_case(t, label, j, real, sp, rows):
    """The libraries the wheel's packages load themselves (torchvision's
    _C_stable.so by torch.ops.load_library): abiscope wheel's "libraries"
    against the oracle's "libraries" (dlopen after `import PKG`).  Each
    library the real import mapped, or asked ctypes.CDLL for (a failed load
    maps nothing), must have a verdict; each one abiscope says the import loads unconditionally
    and that loads must be one the real import mapped."""
    libs = real.get("libraries") or {}
    mine = {m["path"]: m for m in j.get("libraries") or []}
    # the real import loaded it (mapped), or asked ctypes for it and failed
    missed = sorted(os.path.relpath(p, sp) for p, o in libs.items()
                    if (o.get("mapped_by_import") or o.get("tried_by_import")) and not o.get("mapped_before_import")
                    and p not in mine)
    t.ok(not missed, f"{label}: abiscope wheel judges every library the real import loaded itself",
         "no verdict for: " + " ".join(missed))
    for path, m in sorted(mine.items()):
        rel = os.path.relpath(path, sp)
        o = libs.get(path)
        if o is None:
            t.ok(False, f"{label}: {rel}: the oracle measured the library abiscope says the import loads",
                 "not in the oracle's libraries")
            rows.append((label, rel, "not measured", "NO"))
            continue
        by = m.get("loaded_by") or {}
        if (o["dlopen"] is None and not by.get("condition") and o.get("package_error") is None
                and not o.get("mapped_by_import") and not o.get("mapped_before_import")):
            t.ok(False, f"{label}: {rel}: the real import loads it, as abiscope says ({by.get('file')}:{by.get('line')})",
                 "the real import did not map it")
            rows.append((label, rel, "not loaded by the import", "NO"))
            continue
        pred = (m["loads"], m["error"])
        want = (o["dlopen"] is None, o["dlopen"])
        agree = pred == want
        rows.append((label, rel + " (loaded by its import)", "loads" if want[0] else "fails",
                     "yes" if agree else "FALSE LOAD" if m["loads"] and not want[0] else "NO"))
        t.ok(agree, f"{label}: {rel} (its import loads it) {'loads' if want[0] else 'fails'}",
             f"abiscope: {pred}\nreal:     {want}")


def main():
    t = F.Tap()
    off = F.field_off()
    if off:
        t.skip("wheel installs on field envs", off)
        return 0
    if not shutil.which("uv"):
        t.skip("wheel installs on field envs", "needs uv on PATH")
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="abiscope-wheels-", dir=os.environ.get("ABISCOPE_FIELD_TMP")) as tmp:
        stub = stand_in(tmp)
        for spec in CASES:
            env_name, pattern = spec.split(":", 1)
            env = os.path.join(ENVS, env_name)
            whl = find_wheel(pattern)
            name = f"{pattern} into {env_name}"
            if not os.path.isdir(env) or os.path.exists(os.path.join(env, ".abiscope-skeleton")):
                t.skip(name, f"needs a runnable {env_name} in {ENVS} (tests/field/revive.py)")
                continue
            if not whl:
                t.skip(name, f"no {pattern} in {' '.join(WHEEL_DIRS)}")
                continue
            one_case(t, tmp, env_name, whl, "no driver", None, rows)
            if stub:
                one_case(t, tmp, env_name, whl, "libcuda stand-in", stub, rows)
    if rows:
        print("# case | module | real | agree")
        for r in rows:
            print("# " + " | ".join(r))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
