#!/usr/bin/env python3
"""Field test: the torch ABI index against real installed torch, and its
answer against the real loader.

For each prepared environment (bench/prepare_envs.sh: torch-cu130 and
sgl-kernel-break, both torch 2.14.1 from PyPI), the exports of its installed
torch/lib libraries, read by binutils' `nm -D --defined-only` (not by
abiscope), hashed the way the index hashes them, must equal the index's
entry for that release (tools/torch_index.py symbols VERSION, and the count
the C reader reports).  Then `abiscope torch-compat` on the environment
must say, for each sgl_kernel common_ops, whether the installed torch is
among the releases it binds against exactly when the real loader (import
torch, dlopen) loads it.  A missing environment prints SKIP.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldlib as F  # noqa: E402

TOOL = os.path.join(F.TOP, "tools", "torch_index.py")
TORCH_LIB = re.compile(r"^(libc10|libtorch|libshm|libcaffe2).*\.so")


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def nm_exports(lib):
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
    names = set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        kind, name = f[1], f[2]
        if kind.islower() and kind not in "uvwi":
            continue          # local
        names.add(name.replace("@@", "@"))
    return names


def installed_version(sp):
    text = open(os.path.join(sp, "torch", "version.py")).read()
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"+]+)", text, re.M)
    return m.group(1) if m else None


def index_entry(version):
    r = subprocess.run([sys.executable, TOOL, "symbols", version], capture_output=True, text=True)
    return {int(x, 16) for x in r.stdout.split()} if r.returncode == 0 else None


def case(t, envname, modules):
    name = "%s: torch ABI index" % envname
    why_not = F.unavailable(envname)
    if why_not:
        t.skip(name, why_not)
        return
    venv = F.env(envname)
    sp = F.site_packages(venv)
    ver = installed_version(sp)
    libdir = os.path.join(sp, "torch", "lib")
    names = set()
    for f in sorted(os.listdir(libdir)):
        if TORCH_LIB.match(f) and not os.path.islink(os.path.join(libdir, f)):
            names |= nm_exports(os.path.join(libdir, f))
    r = subprocess.run([F.ABISCOPE, "torch-compat", "--json", venv], capture_output=True, text=True, timeout=600)
    j = json.loads(r.stdout)
    bits = j["index"]["hash_bits"]
    hashes = {fnv1a64(n.encode()) >> (64 - bits) for n in names}
    entry = index_entry(ver)
    t.ok(entry is not None, "%s: torch %s is in the index" % (name, ver))
    if entry is None:
        return
    t.ok(hashes == entry, "%s: the exports of the installed torch %s (nm -D) equal the index entry" % (name, ver),
         "%d exported here, %d in the index, %d only here, %d only in the index"
         % (len(hashes), len(entry), len(hashes - entry), len(entry - hashes)))
    count = [x["symbols"] for x in j["index"]["releases"] if x["version"] == ver]
    t.ok(count == [len(names)], "%s: the C reader counts the same %d symbols" % (name, len(names)), count)
    for mod, pkgname in modules:
        target = os.path.join(sp, mod)
        if not os.path.exists(target):
            t.skip("%s: %s" % (name, mod), "not installed")
            continue
        with F.tempdir() as tmp:
            stub = F.stub_driver(tmp, [target])
            llp = ":".join([os.path.join(sp, "nvidia", d, "lib") for d in ("cuda_runtime", "cuda_nvrtc", "cublas")
                            if os.path.isdir(os.path.join(sp, "nvidia", d, "lib"))] + [stub])
            loads, err = F.real_import_then_dlopen(venv, target, llp)
        pkgs = [p for p in j["packages"] if re.sub(r"[-_.]+", "-", p["name"].lower()) == pkgname]
        obj = [o for p in pkgs for o in p["objects"] if o["path"].endswith("/" + mod)]
        rels = obj[0]["releases"] if obj else None
        t.ok(rels is not None and (ver in rels) == loads,
             "%s: %s binds against the installed %s exactly when the real loader loads it (%s; index: %s)"
             % (name, mod, ver, "loads" if loads else "refused", rels), err)
        if pkgs:
            print("# %s: %s; fix: %s" % (envname, pkgs[0]["summary"], pkgs[0]["fix"]))


def main():
    t = F.Tap()
    case(t, "sgl-kernel-break", [("sgl_kernel/sm100/common_ops.abi3.so", "sgl-kernel")])
    case(t, "torch-cu130", [("sgl_kernel/sm100/common_ops.abi3.so", "sglang-kernel")])
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
