"""CUDA fixtures for the tests in this folder, compiled with nvcc at test time.

Each fixture is built from the one kernel below with the -gencode list it
needs, into $BUILD/cuda.  A fixture is rebuilt when its command changes
(the command is kept beside it), so a second suite in the same run reuses
it.  Where nvcc is absent, NVCC is None and the tests say they skip.
"""
import concurrent.futures
import os
import shutil
import subprocess

BUILD = os.environ.get("BUILD", "build")
ABISCOPE = os.environ.get("ABISCOPE", "./abiscope")
WORK = os.path.abspath(os.path.join(BUILD, "cuda"))
NVCC = os.environ.get("NVCC") or shutil.which("nvcc") or (
    "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)

KERNEL = "__global__ void k(float *x){ x[threadIdx.x] += 1.0f; }\n"


def gencode(*pairs):
    """gencode(("90a", "sm"), ("120", "compute")) -> nvcc -gencode arguments."""
    out = []
    for arch, kind in pairs:
        virt = "compute_" + arch
        code = {"sm": "sm_" + arch, "compute": virt, "both": "[sm_%s,%s]" % (arch, virt)}[kind]
        out += ["-gencode", "arch=%s,code=%s" % (virt, code)]
    return out


# name -> (output file relative to WORK, nvcc arguments after the source)
FIXTURES = {
    # many targets, for the listing and the comparison with cuobjdump
    "plain": ("plain.so", ["-shared", "-Xcompiler", "-fPIC"] +
              gencode(("80", "sm"), ("90", "both"), ("100", "sm"), ("120", "sm"))),
    "arch_a": ("arch_a.so", ["-shared", "-Xcompiler", "-fPIC"] +
               gencode(("90a", "sm"), ("100a", "sm"), ("120a", "both"))),
    "family": ("family.so", ["-shared", "-Xcompiler", "-fPIC"] +
               gencode(("100f", "both"), ("120f", "sm"))),
    # sm_90 and sm_100 cubins only, linking libcudart.so.13: no image for 12.0
    "hopper_blackwell": ("hopper_blackwell.so", ["-shared", "-Xcompiler", "-fPIC", "--cudart=shared"] +
                         gencode(("90", "sm"), ("100", "sm"))),
    # PTX only (compute_80, ISA 9.0): JIT everywhere from 8.0 up
    "ptx_only": ("ptx_only.so", ["-shared", "-Xcompiler", "-fPIC"] + gencode(("80", "compute"))),
    # an sgl_kernel-shaped package: the same sources, two variant folders
    "sgl_sm90": ("site/sgl_kernel/sm90/common_ops.abi3.so", ["-shared", "-Xcompiler", "-fPIC", "-use_fast_math"] +
                 gencode(("80", "sm"), ("90a", "sm"))),
    "sgl_sm100": ("site/sgl_kernel/sm100/common_ops.abi3.so", ["-shared", "-Xcompiler", "-fPIC"] +
                  gencode(("80", "sm"), ("90a", "sm"), ("100a", "sm"), ("120a", "sm"))),
    # other containers
    "raw_fatbin": ("raw.fatbin", ["-fatbin", "--compress-mode=size"] +
                   gencode(("121a", "both"), ("120f", "compute"))),
    "cubin": ("one.cubin", ["-cubin", "-arch=sm_120a"]),
    "rdc": ("rdc.o", ["-c", "-rdc=true", "-Xcompiler", "-fPIC"] + gencode(("90", "both"), ("103f", "sm"))),
    "lto": ("lto.so", ["-shared", "-Xcompiler", "-fPIC"] +
            ["-gencode", "arch=compute_90,code=lto_90"] + gencode(("80", "sm"))),
    "lz4": ("lz4.so", ["-shared", "-Xcompiler", "-fPIC", "--compress-mode=speed", "-Xfatbin", "-compress-all"] +
            gencode(("89", "sm"), ("90", "compute"))),
}


def path(name):
    return os.path.join(WORK, FIXTURES[name][0])


def _build(name):
    out = path(name)
    args = FIXTURES[name][1]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = os.path.join(WORK, "k.cu")
    cmd = [NVCC, "-o", out, src] + args
    stamp = out + ".cmd"
    if os.path.exists(out) and os.path.exists(stamp) and open(stamp).read() == " ".join(cmd):
        return None
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return "%s: %s" % (" ".join(cmd), p.stderr.strip()[-500:])
    with open(stamp, "w") as f:
        f.write(" ".join(cmd))
    return None


def build_all():
    """Builds every fixture; returns a list of errors (empty when all built)."""
    if not NVCC:
        return ["nvcc not found"]
    os.makedirs(WORK, exist_ok=True)
    src = os.path.join(WORK, "k.cu")
    if not os.path.exists(src) or open(src).read() != KERNEL:
        with open(src, "w") as f:
            f.write(KERNEL)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        errors = [e for e in ex.map(_build, list(FIXTURES)) if e]
    return errors


class Tap:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, name, detail=""):
        if cond:
            print("ok - " + name)
        else:
            self.failed += 1
            print("not ok - " + name)
            for line in str(detail).splitlines()[:30]:
                print("#   " + line)

    def skip(self, name, why):
        print("ok - %s # SKIP %s" % (name, why))


def run(args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([ABISCOPE] + args, capture_output=True, text=True, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr
