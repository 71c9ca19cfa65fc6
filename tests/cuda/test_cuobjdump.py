#!/usr/bin/env python3
"""`abiscope cuda --list-elf/--list-ptx` against NVIDIA's cuobjdump.

cuobjdump comes from the nvidia-cuda-cuobjdump wheel, installed with pip into
$BUILD/pip-cuobjdump when it is not there yet (or taken from $CUOBJDUMP or
PATH); without it every comparison says SKIP with the reason.  The listings
must be identical, line for line, on every shared library of
/usr/local/cuda/lib64 (SLOW=0 keeps the ones under 64 MiB) and on the nvcc
fixtures of tests/cuda/fixtures.py.  The counts are printed as comments.
"""
import glob
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

t = fx.Tap()
PIP_DIR = os.path.abspath(os.path.join(fx.BUILD, "pip-cuobjdump"))
LIBDIR = os.environ.get("CUDA_LIBDIR", "/usr/local/cuda/lib64")


def find_cuobjdump():
    env = os.environ.get("CUOBJDUMP")
    if env and os.access(env, os.X_OK):
        return env, None
    found = glob.glob(os.path.join(PIP_DIR, "nvidia", "*", "bin", "cuobjdump")) + \
        glob.glob(os.path.join(PIP_DIR, "nvidia", "cuda_cuobjdump", "bin", "cuobjdump"))
    if found:
        return found[0], None
    if shutil.which("cuobjdump"):
        return shutil.which("cuobjdump"), None
    # the release the comparison was established with first, then any
    for spec in ("nvidia-cuda-cuobjdump==13.5.37", "nvidia-cuda-cuobjdump"):
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "--target", PIP_DIR, spec], capture_output=True, text=True)
        if p.returncode == 0:
            break
    found = glob.glob(os.path.join(PIP_DIR, "nvidia", "*", "bin", "cuobjdump"))
    if p.returncode != 0 or not found:
        return None, "pip install nvidia-cuda-cuobjdump failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return found[0], None


def listing(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout


def compare(cuobjdump, path, counts):
    for mode in ("elf", "ptx"):
        t0 = time.time()
        rc_c, want = listing([cuobjdump, "--list-" + mode, path])
        t1 = time.time()
        rc_a, got = listing([fx.ABISCOPE, "cuda", "--list-" + mode, path])
        t2 = time.time()
        counts["cuobjdump_s"] += t1 - t0
        counts["abiscope_s"] += t2 - t1
        n = len(want.splitlines())
        counts[mode] += n
        if got == want:
            t.ok(True, "%s --list-%s: %d lines identical" % (os.path.basename(path), mode, n))
        else:
            gl, wl = got.splitlines(), want.splitlines()
            first = next((i for i in range(max(len(gl), len(wl)))
                          if i >= len(gl) or i >= len(wl) or gl[i] != wl[i]), 0)
            t.ok(False, "%s --list-%s identical to cuobjdump" % (os.path.basename(path), mode),
                 "abiscope %d lines, cuobjdump %d; first difference at line %d:\n  abiscope:  %s\n  cuobjdump: %s"
                 % (len(gl), len(wl), first + 1, gl[first] if first < len(gl) else "(end)",
                    wl[first] if first < len(wl) else "(end)"))


def main():
    cuobjdump, why = find_cuobjdump()
    if not cuobjdump:
        t.skip("cuobjdump comparison", why)
        return 0
    counts = {"elf": 0, "ptx": 0, "files": 0, "cuobjdump_s": 0.0, "abiscope_s": 0.0}
    slow = os.environ.get("SLOW", "1") != "0"
    libs = []
    for p in sorted(glob.glob(os.path.join(LIBDIR, "*.so*"))):
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        if not slow and os.path.getsize(p) > 64 << 20:
            continue
        libs.append(p)
    if not libs:
        t.skip("cuobjdump comparison on %s" % LIBDIR, "no libraries there")
    for p in libs:
        compare(cuobjdump, p, counts)
        counts["files"] += 1
    errors = fx.build_all()
    if errors:
        t.skip("cuobjdump comparison on nvcc fixtures", errors[0])
    else:
        for name in sorted(fx.FIXTURES):
            compare(cuobjdump, fx.path(name), counts)
            counts["files"] += 1
    print("# compared %d files: %d ELF lines, %d PTX lines; cuobjdump %.1fs, abiscope %.1fs%s"
          % (counts["files"], counts["elf"], counts["ptx"], counts["cuobjdump_s"], counts["abiscope_s"],
             "" if slow else " (SLOW=0: libraries over 64 MiB left out)"))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
