#!/usr/bin/env python3
"""arm_env.py: abiscope against the real import in an aarch64 root, under qemu.

    python3 tests/field/arm_env.py ROOT [--python /usr/bin/python3.11] [--out DIR]

ROOT is a copy of an arm64 Debian root of the shared aarch64 oracle
(../shared/aarch64-oracle: `cp -a /var/tmp/aarch64-oracle/root COPY`) with
real aarch64 wheels installed into its Python, e.g.

    uv pip install --python-platform aarch64-manylinux_2_28 --python-version 3.11 \\
        --target COPY/usr/local/lib/python3.11/dist-packages torch==2.14.0
    uv pip install ... --no-deps sgl-kernel==0.3.21 vllm==0.33.0

Then, from the first mode's oracle: the root's torch against the torch ABI
index entry of its version and machine (exports by the cross nm, CUDA major
by readelf and METADATA); `explain` of each real import error that carries
a loader message; an x86_64 build placed on the host (`check --host` of the
root's snapshot against the real import once it is copied in); and, per
--wheel FILE (a wheel installed in the root), `abiscope wheel` on a
hard-link copy of the root without it against the real dlopen of its
modules in the root.

Twice, as matrix.py does on x86_64 venvs: with no NVIDIA driver, and with a
libcuda.so.1 stand-in (built here for aarch64 with the oracle kit's cross gcc
from the cu* names the root's objects import, put in ROOT/opt/abiscope-standin
and named by LD_LIBRARY_PATH):

  * the oracle: tests/field/oracle.py run by the root's own python3.11 under
    qemu-aarch64-static in a chroot of ROOT (chrun.py): the real aarch64
    glibc loader's dlopen() of every extension module after `import torch`
    and the package's own import, and the real `import`;
  * `abiscope check --json --root ROOT --ld-library-path ... PYTHON`;
  * matrix.py's comparison: the same verdict and the exact dlerror() per
    module, the libraries a package loads itself, and `import torch`'s
    loads.  Paths on both sides are the root's; they are compared as
    ROOT/path on this machine.

Writes ROOT-named JSON results under --out (default /tmp/abiscope-arm-env)
and prints the table; exit 1 on a disagreement.  The root's tmp/ and opt/
get the oracle script, its answers and the stand-in: use a copy.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import matrix  # noqa: E402

ABISCOPE = os.environ.get("ABISCOPE", os.path.join(TOP, "build", "abiscope"))
KIT = os.environ.get("ARM_KIT", os.path.join(os.path.dirname(TOP), "shared", "aarch64-oracle"))
if not os.path.isdir(KIT):
    KIT = "/work/shared/aarch64-oracle"
ARM_DIR = os.environ.get("ARM_DIR", "/var/tmp/aarch64-oracle")
XBIN = os.path.join(ARM_DIR, "bin")
STANDIN = "/opt/abiscope-standin"


def cu_names(root):
    """The cu* driver functions the root's ELF objects under site directories import."""
    names = set()
    nm = os.path.join(XBIN, "aarch64-linux-gnu-nm")
    for base in ("usr/local/lib", "usr/lib/python3"):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in files:
                p = os.path.join(dirpath, f)
                if ".so" not in f or os.path.islink(p):
                    continue
                r = subprocess.run([nm, "-D", "--undefined-only", p], capture_output=True, text=True)
                for line in r.stdout.splitlines():
                    sym = line.split()[-1].split("@")[0] if line.split() else ""
                    if sym.startswith("cu") and sym[2:3].isupper():
                        names.add(sym)
    return sorted(names) or ["cuInit"]


def build_standin(root):
    d = os.path.join(root, STANDIN.lstrip("/"))
    lib = os.path.join(d, "libcuda.so.1")
    if os.path.exists(lib):
        return STANDIN
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "libcuda.c")
    with open(src, "w") as f:
        for n in cu_names(root):
            f.write("int %s(void) { return 100; }\n" % n)   # CUDA_ERROR_NO_DEVICE, as without a GPU
    subprocess.run([os.path.join(XBIN, "aarch64-linux-gnu-gcc"), "-shared", "-fPIC",
                    "-Wl,-soname,libcuda.so.1", "-o", lib, src], check=True)
    return STANDIN


def chrun(root, argv, ldpath, timeout=7200, pagesize=None):
    """argv in the root under qemu, with /proc mounted in the root inside a
    mount namespace of its own (qemu-user answers the guest's
    /proc/self/maps from the real /proc: without it the oracle would see no
    loads); the mount ends with the process."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
           "CUDA_VISIBLE_DEVICES": ""}
    cmd = [sys.executable, os.path.join(KIT, "chrun.py"), root, "/"]
    if ldpath:
        cmd += ["--env", "LD_LIBRARY_PATH=" + ldpath]
    if pagesize:
        cmd += ["--pagesize", str(pagesize)]
    cmd += ["--"] + argv
    sh = 'mount -t proc proc "$1/proc" && shift && exec "$@"'
    wrapped = ["unshare", "-m", "--propagation", "private", "sh", "-c", sh, "sh", root] + cmd
    return subprocess.run(wrapped, env=dict(env, PATH=env["PATH"] + ":/usr/sbin:/sbin"), capture_output=True,
                          text=True, timeout=timeout)


def run_oracle(root, python, ldpath, tag, pagesize=None):
    inroot = "/tmp/abiscope-oracle"
    os.makedirs(os.path.join(root, inroot.lstrip("/")), exist_ok=True)
    shutil.copy(os.path.join(HERE, "oracle.py"), os.path.join(root, inroot.lstrip("/"), "oracle.py"))
    out = "%s/oracle-%s.json" % (inroot, tag)
    r = chrun(root, [python, inroot + "/oracle.py", out], ldpath, pagesize=pagesize)
    host_out = os.path.join(root, out.lstrip("/"))
    if r.returncode or not os.path.exists(host_out):
        raise RuntimeError("the oracle failed under qemu (%d):\n%s%s" % (r.returncode, r.stdout[-2000:],
                                                                        r.stderr[-2000:]))
    return json.load(open(host_out))


def run_abiscope(root, python, ldpath, pagesize=None):
    r = subprocess.run([ABISCOPE, "check", "--json", "--no-driver", "--root", root, "--ld-library-path",
                        ldpath or ""] + (["--page-size", str(pagesize)] if pagesize else []) + [python],
                       capture_output=True, text=True, timeout=3600,
                       env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")})
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise RuntimeError("abiscope check gave no JSON (%d): %s" % (r.returncode, r.stderr[-2000:]))


def rooted(root, p):
    return os.path.join(root, p.lstrip("/")) if isinstance(p, str) and p.startswith("/") else p


def reroot_oracle(root, o):
    o = dict(o)
    o["modules"] = {rooted(root, p): v for p, v in o.get("modules", {}).items()}
    if o.get("libraries") is not None:
        o["libraries"] = {rooted(root, p): v for p, v in o["libraries"].items()}
    if o.get("torch"):
        t = dict(o["torch"])
        t["loads"] = [rooted(root, p) for p in t.get("loads", [])]
        t["python_level"] = [rooted(root, p) for p in t.get("python_level", [])]
        o["torch"] = t
    return o


def reroot_abiscope(root, j):
    for e in j.get("environments", []):
        for d in e.get("distributions", []):
            for m in d.get("modules", []):
                m["path"] = rooted(root, m["path"])
        t = e.get("torch")
        if t and t.get("import_loads"):
            t["import_loads"] = [rooted(root, p) for p in t["import_loads"]]
    return j


def site_of(root):
    return os.path.join(root, "usr/local/lib/python3.11/dist-packages")


def xtool(name):
    return os.path.join(XBIN, "aarch64-linux-gnu-" + name)


def index_rows(root):
    """The root's torch against the index entry for its version and machine:
    the exports the cross nm reads from torch/lib, the CUDA major its
    libraries link (readelf) and the one its METADATA requires (markers for
    aarch64, as pip evaluates them)."""
    sys.path.insert(0, os.path.join(TOP, "tools"))
    import torch_index as T
    tdir = os.path.join(site_of(root), "torch")
    if not os.path.isdir(tdir):
        return []
    vp = open(os.path.join(tdir, "version.py")).read()
    import re
    version = re.search(r"__version__\s*=\s*['\"]([^'\"+]+)", vp).group(1)
    bits, rels = T.decode(open(T.INDEX, "rb").read())
    entry = next((r for r in rels if r.version == version and r.machine == T.EM_AARCH64), None)
    libdir = os.path.join(tdir, "lib")
    names, cudart = set(), 0
    for f in sorted(os.listdir(libdir)):
        if not re.match(r"^(libc10|libtorch|libshm|libcaffe2).*\.so", f):
            continue
        out = subprocess.run([xtool("nm"), "-D", "--defined-only", os.path.join(libdir, f)], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            x = line.split()
            if len(x) >= 3 and not (x[1].islower() and x[1] not in "uvwi"):
                names.add(x[2].replace("@@", "@"))
        dyn = subprocess.run([xtool("readelf"), "-d", os.path.join(libdir, f)], capture_output=True, text=True).stdout
        for m in re.finditer(r"\[libcudart\.so\.(\d+)\]", dyn):
            cudart = max(cudart, int(m.group(1)))
    meta = [d for d in os.listdir(site_of(root)) if d.startswith("torch-") and d.endswith(".dist-info")]
    req = set()
    if meta:
        from pip._vendor.packaging.markers import Marker
        env = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "aarch64",
               "python_version": "3.11", "implementation_name": "cpython", "extra": ""}
        for line in open(os.path.join(site_of(root), meta[0], "METADATA")):
            m = re.match(r"Requires-Dist:\s*nvidia-[a-z0-9-]+?-cu(\d+)\b[^;]*(?:;(.*))?$", line.strip())
            if m and (not m.group(2) or Marker(m.group(2).strip()).evaluate(env)):
                req.add(int(m.group(1)))
    hashes = {T.name_hash(n, bits) for n in names}
    rows = [("torch %s aarch64 is in the index" % version, entry is not None)]
    if entry:
        rows.append(("its exports (aarch64 nm -D of torch/lib, %d) equal the index entry's" % len(hashes),
                     hashes == entry.hashes))
        rows.append(("its CUDA major: index %s, libraries link libcudart.so.%s, METADATA requires nvidia-*-cu%s"
                     % (entry.cuda_major, cudart, sorted(req)), entry.cuda_major == cudart and req <= {cudart}))
    return rows


def placed_rows(root, python, out):
    """An x86_64 build placed on the aarch64 host: check --host on the root's
    snapshot against the real import once the file is really copied there."""
    work = os.path.join(out, "x86site", "lib", "python3.11", "site-packages", "x86pkg")
    os.makedirs(work, exist_ok=True)
    open(os.path.join(work, "__init__.py"), "w").close()
    src = os.path.join(out, "x86m.c")
    open(src, "w").write("int PyInit_m(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(work, "m.abi3.so"), src], check=True)
    snap = os.path.join(out, "root.json.gz")
    subprocess.run([ABISCOPE, "snapshot", "--root", root, "--no-driver", "--label", "arm", "-o", snap, python],
                   capture_output=True, check=True)
    r = subprocess.run([ABISCOPE, "check", "--json", "--host", snap, work], capture_output=True, text=True)
    j = json.loads(r.stdout)
    mine = [m for e in j["environments"] for d in e["distributions"] for m in d["modules"] if m["module"] == "x86pkg.m"]
    causes = j.get("causes", [])
    dest = os.path.join(site_of(root), "x86pkg")
    shutil.copytree(work, dest)
    try:
        real = chrun(root, [python, "-c", "import x86pkg.m"], "")
    finally:
        shutil.rmtree(dest)
    err = real.stderr.strip().splitlines()[-1] if real.returncode else "imports"
    err = err.split("ImportError: ", 1)[-1]
    ab = mine[0]["error"] if mine else None
    # an aarch64 build linked for 4 KiB pages, on a 64 KiB-page kernel: the
    # snapshot (--root, from x86_64) records no page size; --page-size says it
    k4 = os.path.join(out, "k4site", "lib", "python3.11", "site-packages", "k4pkg")
    os.makedirs(k4, exist_ok=True)
    open(os.path.join(k4, "__init__.py"), "w").close()
    subprocess.run([xtool("gcc"), "-shared", "-fPIC", "-Wl,-z,max-page-size=4096", "-Wl,-z,separate-code",
                    "-o", os.path.join(k4, "m.abi3.so"), src], check=True)
    rows64 = []
    for pg in (None, 65536):
        r = subprocess.run([ABISCOPE, "check", "--json", "--host", snap] + (["--page-size", str(pg)] if pg else [])
                           + [k4], capture_output=True, text=True)
        mods = [m for e in json.loads(r.stdout)["environments"] for d in e["distributions"] for m in d["modules"]
                if m["module"] == "k4pkg.m"]
        dest = os.path.join(site_of(root), "k4pkg")
        shutil.copytree(k4, dest)
        inroot = "/" + os.path.relpath(os.path.join(dest, "m.abi3.so"), root)
        code = ("import ctypes, os\ntry:\n    ctypes.CDLL(%r, os.RTLD_NOW)\n    print('LOADED')\n"
                "except OSError as e:\n    print('ERROR ' + str(e))\n" % inroot)
        try:
            rr = chrun(root, [python, "-c", code], "", pagesize=pg)
        finally:
            shutil.rmtree(dest)
        outl = [l for l in rr.stdout.splitlines() if l.startswith(("LOADED", "ERROR "))]
        rerr = outl[-1][6:] if outl and outl[-1].startswith("ERROR ") else None if outl else "no answer"
        got = (mods[0]["error"] if mods and mods[0]["status"] != "ok" else None) if mods else "not judged"
        rows64.append(("aarch64 build for 4 KiB pages placed with check --host%s: %s, as the real dlopen under qemu%s"
                       % (" --page-size %d" % pg if pg else "", rerr or "imports", " -p %d" % pg if pg else ""),
                       got == rerr))
    return rows64 + [("x86_64 build placed on the aarch64 host: check --host gives the real import's error (%s)" % err,
             ab == err),
            ("... with one error cause, the machine, first (%s)" % [c.get("id") for c in causes][:3],
             bool(causes) and causes[0].get("id") == "wrong-elf" and
             sum(c.get("severity") == "error" for c in causes) == 1)]


def explain_rows(root, python, oracle):
    """explain of each distinct real import error of a failing module: the
    object it names is the module, and its predicted error is the real dlopen's."""
    rows, seen = [], set()
    for path, v in sorted(oracle["modules"].items()):
        if (not v.get("dlopen") or not v.get("import") or v["dlopen"].startswith("crashed") or v["import"] in seen
                or v["dlopen"].split(": ")[-1] not in v["import"]):
            continue	# no loader message in what the import raised (vllm without its Python deps)
        seen.add(v["import"])
        r = subprocess.run([ABISCOPE, "explain", "--json", "--root", root, "--python", python, v["import"]],
                           capture_output=True, text=True)
        try:
            j = json.loads(r.stdout)
        except ValueError:
            rows.append(("explain %s: JSON" % v["module"], False))
            continue
        # a bare message names no object: explain checks every one it could be
        got = {c["path"]: c.get("error") for c in j.get("checked", [])}
        judged = {p: e for p, e in got.items() if p in oracle["modules"]}
        # (sgl_kernel's own ImportError names the sm100 library it tried, not the module imported)
        ok = j.get("reproduced") and judged and all(e == oracle["modules"][p]["dlopen"] for p, e in judged.items())
        rows.append(("explain the import error of %s ('%s'): %d objects checked, each with its real dlerror"
                     % (v["module"], v["import"].strip().splitlines()[-1][:50], len(judged)), bool(ok)))
    return rows


def wheel_rows(root, python, wheel, oracle):
    """abiscope wheel WHEEL on a hard-link copy of the root without that
    distribution (its RECORD's files removed), against the real dlopen of
    each of its modules in the root where it is installed (the oracle)."""
    import csv
    import re
    name = re.sub(r"[-_.]+", "_", os.path.basename(wheel).split("-")[0]).lower()
    sp_rel = os.path.relpath(site_of(root), root)
    copy = root.rstrip("/") + ".wheel-check"
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-al", root, copy], check=True)
    try:
        sp = os.path.join(copy, sp_rel)
        dis = [d for d in os.listdir(sp) if d.endswith(".dist-info") and d.split("-")[0].lower() == name]
        if not dis:
            return [("wheel %s: its distribution is installed in the root (the oracle)" % os.path.basename(wheel), False)]
        tops = set()
        for row in csv.reader(open(os.path.join(sp, dis[0], "RECORD"))):
            tops.add(row[0].split("/")[0])
            p = os.path.join(sp, row[0])
            if os.path.lexists(p) and not os.path.isdir(p):
                os.remove(p)	# unlinks the copy's name only
        for t in tops:
            if os.path.isdir(os.path.join(sp, t)):
                shutil.rmtree(os.path.join(sp, t))
        r = subprocess.run([ABISCOPE, "wheel", "--json", "--root", copy, "--python", python, wheel],
                           capture_output=True, text=True, timeout=3600)
        j = json.loads(r.stdout)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    rows = []
    for m in j.get("modules", []):
        v = oracle["modules"].get(m["path"])
        if v is None:
            rows.append(("wheel: %s: not importable, and the real python lists no such module (%s)"
                         % (m["module"], (m.get("findings") or [{}])[0].get("id")), not m["imports"]))
            continue
        ab = None if m["imports"] else m["error"]
        rows.append(("wheel: %s %s as the real dlopen after the install (%s)"
                     % (m["module"], "imports" if m["imports"] else "fails", v["dlopen"] or "loads"), ab == v["dlopen"]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--out", default="/tmp/abiscope-arm-env")
    ap.add_argument("--modes", default="nodriver,standin")
    ap.add_argument("--wheel", action="append", default=[],
                    help="an aarch64 wheel installed in the root: abiscope wheel on a copy without it")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if not os.path.exists(os.path.join(root, "usr/bin/qemu-aarch64-static")):
        print("SKIP %s is no aarch64 oracle root (no usr/bin/qemu-aarch64-static)" % root)
        return 0
    os.makedirs(a.out, exist_ok=True)
    name = os.path.basename(root.rstrip("/"))
    rows = []
    for tag in a.modes.split(","):
        # nodriver, standin (a libcuda.so.1 stand-in), and either with -64k:
        # a 64 KiB-page kernel (qemu -p 65536; abiscope --page-size 65536)
        ldpath = build_standin(root) if tag.startswith("standin") else ""
        pagesize = 65536 if tag.endswith("-64k") else None
        t0 = time.time()
        o = run_oracle(root, a.python, ldpath, tag, pagesize)
        t1 = time.time()
        j = run_abiscope(root, a.python, ldpath, pagesize)
        t2 = time.time()
        json.dump(o, open(os.path.join(a.out, "%s-oracle-%s.json" % (name, tag)), "w"))
        json.dump(j, open(os.path.join(a.out, "%s-abiscope-%s.json" % (name, tag)), "w"))
        mode = ("libcuda stand-in" if ldpath else "no driver") + (", 64 KiB pages" if pagesize else "")
        r = matrix.compare(name, mode, reroot_oracle(root, o),
                           reroot_abiscope(root, j))
        r["oracle_s"], r["abiscope_s"] = round(t1 - t0, 1), round(t2 - t1, 1)
        rows.append(r)
    json.dump(rows, open(os.path.join(a.out, "%s-compare.json" % name), "w"), indent=1)
    matrix.table(rows)
    bad = sum(len([d for d in r["diffs"] if d["kind"] != "not measured"]) + (0 if r.get("torch_replay_exact", True) else 1)
              for r in rows)
    first = json.load(open(os.path.join(a.out, "%s-oracle-%s.json" % (name, a.modes.split(",")[0]))))
    extra = index_rows(root) + explain_rows(root, a.python, first) + placed_rows(root, a.python, a.out)
    for w in a.wheel:
        extra += wheel_rows(root, a.python, os.path.abspath(w), first)
    print()
    for what, good in extra:
        print(("ok - " if good else "not ok - ") + what)
        bad += not good
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
