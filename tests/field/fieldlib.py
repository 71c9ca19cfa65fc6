"""Helpers for field tests: real wheels from PyPI, the real loader as oracle.

Field tests run abiscope on environments made by bench/prepare_envs.sh
(venvs in $ABISCOPE_CACHE/envs, default ~/.cache/abiscope/envs) and compare
its prediction with what the real loader does in that environment's own
python.  They never download anything: an environment that is not there
makes the test print one "ok - NAME # SKIP ..." line saying how to make it.

The oracle runs code from the environment (it imports torch and dlopen()s
the extension), as tests/diff/differential.py does for system libraries;
abiscope itself never loads what it inspects.
"""
import json
import os
import subprocess
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(TOP, "build")))
ABISCOPE = os.path.abspath(os.environ.get("ABISCOPE", os.path.join(BUILD, "abiscope")))
CACHE = os.environ.get("ABISCOPE_CACHE", os.path.expanduser("~/.cache/abiscope"))
CC = os.environ.get("FIXTURE_CC", "cc")


class Tap:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, name, detail=""):
        print(("ok - " if cond else "not ok - ") + name)
        if not cond:
            self.failed += 1
            for line in str(detail).splitlines()[:30]:
                print(f"#   {line}")
        return cond

    def skip(self, name, why):
        print(f"ok - {name} # SKIP {why}")


def env(name):
    """The prepared venv called name, or None (see bench/prepare_envs.sh).
    An env shrunk by tests/field/skeleton.py is no env to import in."""
    d = os.path.join(CACHE, "envs", name)
    if os.path.exists(os.path.join(d, ".abiscope-skeleton")):
        return None
    return d if os.path.exists(os.path.join(d, ".abiscope-env")) else None


def field_off():
    """Why no field test runs now, or None.  SLOW=0 (tests/run.sh's fast
    mode) skips them: they import torch.  CI skips them unless
    ABISCOPE_FIELD=1: the environments are gigabytes outside the
    repository, built by hand (make field), and a CI run on a machine that
    happens to hold some must not depend on them."""
    if os.environ.get("SLOW") == "0":
        return "SLOW=0: field tests import torch in real environments"
    if os.environ.get("CI") and os.environ.get("ABISCOPE_FIELD") != "1":
        return "CI: field environments are built by make field, not in CI (ABISCOPE_FIELD=1 runs them)"
    return None


def unavailable(name):
    """Why the field test of env name cannot run here, or None."""
    off = field_off()
    if off:
        return off
    if not env(name):
        return f"env {name} not prepared (sh bench/prepare_envs.sh {name})"
    return None


def site_packages(venv):
    lib = os.path.join(venv, "lib")
    for d in sorted(os.listdir(lib)):
        sp = os.path.join(lib, d, "site-packages")
        if d.startswith("python") and os.path.isdir(sp):
            return sp
    raise FileNotFoundError(f"no site-packages under {lib}")


def stub_driver(outdir, objects):
    """A libcuda.so.1 built from source that defines every cu* function the
    given objects import: the stand-in for the NVIDIA driver on a machine
    without one (the real driver's symbols are unversioned)."""
    names = set()
    for o in objects:
        r = subprocess.run(["nm", "-D", "--undefined-only", o], capture_output=True, text=True)
        for line in r.stdout.splitlines():
            sym = line.split()[-1].split("@")[0]
            if sym.startswith("cu") and sym[2:3].isupper():
                names.add(sym)
    src = os.path.join(outdir, "libcuda_stub.c")
    with open(src, "w") as f:
        for n in sorted(names) or ["cuInit"]:
            f.write(f"int {n}(void) {{ return 0; }}\n")
    lib = os.path.join(outdir, "libcuda.so.1")
    subprocess.run([CC, "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", lib, src],
                   check=True)
    return outdir


def real_import_then_dlopen(venv, target, ld_library_path=None, timeout=300):
    """(loads, dlerror) from the environment's python: `import torch`, then
    dlopen(target, RTLD_NOW) the way CPython imports an extension."""
    # a file with holes mapped (a skeleton file, tests/field/skeleton.py,
    # left in a copy revive.py made) would make the answer not the real one
    hollow = ("def hollow():\n"
              "    seen = set()\n"
              "    for l in open('/proc/self/maps'):\n"
              "        p = l.split(None, 5)[5].strip() if len(l.split(None, 5)) > 5 else ''\n"
              "        if p.startswith('/') and p not in seen and os.path.isfile(p):\n"
              "            seen.add(p)\n"
              "            st = os.stat(p)\n"
              "            if st.st_size >= 1 << 20 and st.st_blocks * 512 + 4096 < st.st_size:\n"
              "                print('HOLLOW ' + p)\n")
    code = ("import os, ctypes, torch\n" + hollow +
            "hollow()\n"
            "try:\n"
            f"    ctypes.CDLL({target!r}, mode=os.RTLD_NOW)\n"
            "    hollow()\n"
            "    print('LOADED')\n"
            "except OSError as e:\n"
            "    print('ERROR ' + str(e))\n")
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    if ld_library_path:
        e["LD_LIBRARY_PATH"] = ld_library_path
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], capture_output=True,
                       text=True, env=e, timeout=timeout)
    holes = [l[7:] for l in r.stdout.splitlines() if l.startswith("HOLLOW ")]
    if holes:
        raise RuntimeError("the oracle ran code of a skeleton file (holes where its code was): "
                           + " ".join(holes))
    out = [l for l in r.stdout.splitlines() if l.startswith(("LOADED", "ERROR "))]
    if not out:
        raise RuntimeError(f"the oracle did not answer:\n{r.stdout}{r.stderr}")
    return out[-1] == "LOADED", (None if out[-1] == "LOADED" else out[-1][6:])


def why(venv, target, preload_global=(), preload=(), ld_library_path=None):
    """abiscope why --json in the environment's python process."""
    cmd = [ABISCOPE, "why", "--json", "--process", os.path.join(venv, "bin", "python")]
    for p in preload_global:
        cmd += ["--preload-global", p]
    for p in preload:
        cmd += ["--preload", p]
    cmd += ["--ld-library-path", ld_library_path or ""]
    r = subprocess.run(cmd + [target], capture_output=True, text=True, timeout=300)
    return json.loads(r.stdout)


def torch_import_preloads(sp):
    """What `import torch` leaves loaded, as why preloads: torch/__init__.py
    loads libtorch_global_deps.so with RTLD_GLOBAL, then imports torch._C."""
    g = os.path.join(sp, "torch", "lib", "libtorch_global_deps.so")
    c = [os.path.join(sp, "torch", f) for f in sorted(os.listdir(os.path.join(sp, "torch")))
         if f.startswith("_C.") and f.endswith(".so")]
    return ([g] if os.path.exists(g) else []), c


def tempdir():
    return tempfile.TemporaryDirectory(prefix="abiscope-field-")
