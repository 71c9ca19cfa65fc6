#!/usr/bin/env python3
"""The torch ABI index end to end, on wheels built at test time.

Two fake torch wheels (9.0.0 and 9.1.0, whose torch/lib/libc10.so are
compiled here from C: 9.1.0 changed c10_cuda_check_implementation's line
number from int to unsigned int and added a stable-ABI shim) are indexed by
tools/torch_index.py (the Python writer, reading them with
build/devtools/wheel_exports); `abiscope torch-compat --index` (the C reader)
must then name, for extensions built here against one or the other, the
releases computed independently in this file from `nm -D` of the libraries.
Also: adding a wheel twice leaves the index byte for byte the same; the
built-in index decodes and lists releases from 2.0 on; a damaged index is an
error naming the file and the offset.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(TOP, "build")))
ABISCOPE = os.path.abspath(os.environ.get("ABISCOPE", os.path.join(BUILD, "abiscope")))
TOOL = os.path.join(TOP, "tools", "torch_index.py")
CC = os.environ.get("FIXTURE_CC", "cc")
failed = 0


def ok(cond, name, detail=""):
    global failed
    print(("ok - " if cond else "not ok - ") + name)
    if not cond:
        failed += 1
        for line in str(detail).splitlines()[:20]:
            print("#   " + line)


OLD = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"   # (int, char const*, char const*, int, bool)
NEW = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb"   # ... unsigned int ...
COMMON = "_ZN3c106detail14torchCheckFailEPKcS2_jS2_"
SHIM = "aoti_torch_new_tensor_handle"
LIBS = {"9.0.0": [OLD, COMMON], "9.1.0": [NEW, COMMON, SHIM]}


def cc(out, src, *flags):
    c = out + ".c"
    with open(c, "w") as f:
        f.write(src)
    subprocess.run([CC, "-shared", "-fPIC", "-o", out, c] + list(flags), check=True)


def set_machine(src, dst, machine):
    """A copy of src whose ELF header says e_machine = machine."""
    b = bytearray(open(src, "rb").read())
    b[18:20] = machine.to_bytes(2, "little")
    open(dst, "wb").write(bytes(b))


def torch_wheel(tmp, version, names, machine=None):
    lib = os.path.join(tmp, "libc10-%s.so" % version)
    cc(lib, "".join("void %s(void) {}\n" % n for n in names), "-Wl,-soname,libc10.so")
    if machine:
        set_machine(lib, lib, machine)
    arch = "aarch64" if machine == 183 else "x86_64"
    w = os.path.join(tmp, "torch-%s-cp311-cp311-manylinux_2_28_%s.whl" % (version, arch))
    di = "torch-%s.dist-info" % version
    with zipfile.ZipFile(w, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(lib, "torch/lib/libc10.so")
        z.writestr("torch/version.py", "__version__ = '%s'\n" % version)
        z.writestr(di + "/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: %s\n" % version)
        z.writestr(di + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_%s\n" % arch)
        z.writestr(di + "/RECORD", "")
    return w, lib


def extension(tmp, name, needs):
    out = os.path.join(tmp, name + ".so")
    decl = "".join("extern void %s(void);\n" % n for n in needs)
    body = "".join("  %s();\n" % n for n in needs)
    cc(out, decl + "void PyInit_%s(void) {\n%s}\n" % (name, body))
    return out


def nm_exports(lib):
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
    return {l.split()[-1] for l in r.stdout.splitlines() if len(l.split()) >= 3}


def compat(index, *paths):
    r = subprocess.run([ABISCOPE, "torch-compat", "--json", "--index", index] + list(paths),
                       capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout) if r.stdout.startswith("{") else None, r


def main():
    if not os.path.exists(os.path.join(BUILD, "devtools", "wheel_exports")):
        print("not ok - build/devtools/wheel_exports is missing (make devtools)")
        return 1
    tmp = tempfile.mkdtemp(prefix="abiscope-torchidx-")
    try:
        return run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tmp):
    index = os.path.join(tmp, "abi.idx")
    wheels, exports = {}, {}
    for v, names in LIBS.items():
        wheels[v], lib = torch_wheel(tmp, v, names)
        exports[v] = nm_exports(lib)
    env = dict(os.environ, BUILD=BUILD)
    r = subprocess.run([sys.executable, TOOL, "--index", index, "--bits", "48", "add"] + list(wheels.values()),
                       capture_output=True, text=True, env=env)
    ok(r.returncode == 0 and os.path.exists(index), "torch_index.py add writes an index", r.stderr)
    if r.returncode:
        return 1
    first = open(index, "rb").read()
    r = subprocess.run([sys.executable, TOOL, "--index", index, "add", wheels["9.0.0"]], capture_output=True,
                       text=True, env=env)
    ok(r.returncode == 0 and open(index, "rb").read() == first, "adding the same wheel again changes nothing",
       r.stderr)
    r = subprocess.run([sys.executable, TOOL, "--index", index, "list"], capture_output=True, text=True)
    rows = [l.split("\t") for l in r.stdout.splitlines()]
    sha = hashlib.sha256(open(wheels["9.1.0"], "rb").read()).hexdigest()
    ok([x[0] for x in rows] == ["9.0.0", "9.1.0"] and rows[1][-1] == sha and rows[1][-2] == os.path.basename(wheels["9.1.0"]),
       "the index records each release with its wheel file name and sha256", r.stdout)

    # the oracle: a release satisfies an extension when nm -D of its library defines every name it needs
    cases = {
        "built_for_900": [OLD, COMMON],
        "built_for_910": [NEW, COMMON],
        "needs_common": [COMMON],
        "stable_only": [SHIM],
    }
    exts = {n: extension(tmp, n, needs) for n, needs in cases.items()}
    for n, needs in cases.items():
        want = [v for v in LIBS if all(x in exports[v] for x in needs)]
        rc, j, raw = compat(index, exts[n])
        got = j["packages"][0]["releases"] if j and j["packages"] else None
        ok(got == want, "%s: torch-compat names the releases whose exports satisfy it (%s)" % (n, want),
           raw.stdout[-1500:] + raw.stderr[-500:])
    rc, j, raw = compat(index, exts["stable_only"])
    ok(j and j["packages"][0]["stable_abi_only"] and "9.1.0 or newer" in j["packages"][0]["summary"],
       "stable C ABI only: the oldest release that has them all, or newer", raw.stdout[-800:])
    rc, j, raw = compat(index, exts["built_for_900"])
    ok(j and j["packages"][0]["fix"] == "pip install torch==9.0.0", "the fix names the torch to install",
       raw.stdout[-800:])
    # two packages built for different releases: no release satisfies both
    rc, j, raw = compat(index, exts["built_for_900"], exts["built_for_910"])
    ok(j and j["satisfies_all"] == [] and len(j["conflicts"]) == 1 and rc == 1,
       "two extensions built for different torch releases conflict (exit 1)", raw.stdout[-1500:])
    rc, j, raw = compat(index, exts["built_for_910"], exts["needs_common"])
    ok(j and j["satisfies_all"] == ["9.1.0"] and rc == 0, "the environment answer is the intersection",
       raw.stdout[-1500:])
    rc, _, raw = compat(index, exts["built_for_900"])
    r = subprocess.run([ABISCOPE, "torch-compat", "--index", index, exts["built_for_900"]], capture_output=True,
                       text=True)
    ok("binds against torch 9.0.0" in r.stdout and "fix: pip install torch==9.0.0" in r.stdout,
       "text: the releases and the fix", r.stdout)

    # damaged indexes: an error naming the file and the offset, never a crash
    bad = os.path.join(tmp, "bad.idx")
    crashes = []
    for cut in sorted(set([0, 8, 31, 32, 60, len(first) // 2, len(first) - 1])):
        open(bad, "wb").write(first[:cut])
        r = subprocess.run([ABISCOPE, "torch-compat", "--index", bad, exts["needs_common"]], capture_output=True,
                           text=True)
        if r.returncode != 3 or "bad.idx" not in r.stderr or r.returncode < 0:
            crashes.append((cut, r.returncode, r.stderr))
    ok(not crashes, "a truncated index is an error naming the file (exit 3)", crashes)
    flipped = bytearray(first)
    flipped[-3] ^= 0xff
    open(bad, "wb").write(bytes(flipped))
    r = subprocess.run([ABISCOPE, "torch-compat", "--index", bad, exts["needs_common"]], capture_output=True, text=True)
    ok(r.returncode == 3 and "torch ABI index" in r.stderr, "a damaged symbol group is an error", r.stderr)
    # a small file whose header claims 2^24 sets and symbols: refused before anything is allocated for
    # them (it took 530 MB), here under a 256 MB address-space limit (not under ASan: its shadow
    # memory alone needs more; there the error itself says nothing was read past the header)
    claims = bytearray(first)
    claims[16:24] = ((1 << 24) - 1).to_bytes(4, "little") * 2
    open(bad, "wb").write(bytes(claims))
    import resource
    asan = "asan" in os.path.basename(BUILD)
    r = subprocess.run([ABISCOPE, "torch-compat", "--index", bad, exts["needs_common"]], capture_output=True,
                       text=True, preexec_fn=None if asan else
                       lambda: resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20)))
    ok(r.returncode == 3 and "bad.idx" in r.stderr and "more sets and symbols than the file holds" in r.stderr,
       f"counts the file cannot hold ({len(claims)} bytes claiming 2^24 sets): an error, nothing allocated", r.stderr)

    # hashes that crowd together (1, 2, 3 ... 200,000: each a slot's neighbour): a table of them
    # probes quadratically; refused once the probes pass a linear bound, with the offset
    def uvarint(v):
        out = bytearray()
        while True:
            b = v & 0x7f
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    n = 200000
    strings = b"9.0.0\0w\0s\0l\0"
    crowd = (b"ABTORCH\0" + (2).to_bytes(2, "little") + (48).to_bytes(2, "little") +
             b"".join(x.to_bytes(4, "little") for x in (1, 1, n, len(strings), 0)) +
             b"".join(x.to_bytes(4, "little") for x in (0, 6, 8, 10, n)) + bytes([12, 1]) +
             (62).to_bytes(2, "little") + strings + b"\x01" + uvarint(n) + b"\x01" * n)
    open(bad, "wb").write(crowd)
    r = subprocess.run([ABISCOPE, "torch-compat", "--index", bad, exts["needs_common"]], capture_output=True,
                       text=True, timeout=120)
    ok(r.returncode == 3 and "bad.idx" in r.stderr and "crowd together" in r.stderr,
       "an index of 200,000 adjacent hashes is refused (they are no hashes of names)", r.stderr)

    # one release, two machines: an aarch64 wheel of 9.0.0 that is a CPU build
    # (PyPI's aarch64 torch 2.9.1 is, its x86_64 twin CUDA 12) and lacks the
    # CUDA symbol.  The libraries are this machine's with e_machine set to
    # aarch64 (183): the index reads only the dynamic tables.  An object is
    # compared with its own machine's releases only.
    arm = os.path.join(tmp, "arm")
    os.makedirs(arm)
    awheel = torch_wheel(arm, "9.0.0", [COMMON], machine=183)[0]
    mindex = os.path.join(tmp, "machines.idx")
    r = subprocess.run([sys.executable, TOOL, "--index", mindex, "--bits", "48", "add", wheels["9.0.0"], awheel],
                       capture_output=True, text=True, env=env)
    rows = [l.split("\t") for l in subprocess.run([sys.executable, TOOL, "--index", mindex, "list"],
                                                  capture_output=True, text=True).stdout.splitlines()]
    ok(r.returncode == 0 and [(x[0], x[1]) for x in rows] == [("9.0.0", "x86_64"), ("9.0.0", "aarch64")],
       "one version for two machines: two releases, by the libraries' e_machine", r.stderr + str(rows))
    x86ext = extension(tmp, "needs_check", [OLD, COMMON])
    armext = os.path.join(arm, "needs_check.so")
    set_machine(x86ext, armext, 183)
    rc, j, raw = compat(mindex, x86ext)
    ok(j and j["packages"][0]["releases"] == ["9.0.0"] and j["packages"][0]["machine"] == "x86_64",
       "an x86_64 extension binds against the x86_64 9.0.0", raw.stdout[-800:])
    rc, j, raw = compat(mindex, armext)
    ok(j and j["packages"][0]["releases"] == [] and j["packages"][0]["machine"] == "aarch64" and
       "no aarch64 torch release" in j["packages"][0]["summary"],
       "the same extension for aarch64: the aarch64 9.0.0 lacks the symbol (not the x86_64 one's answer)",
       raw.stdout[-800:])
    armcommon = os.path.join(arm, "needs_common.so")
    set_machine(exts["needs_common"], armcommon, 183)
    rc, j, raw = compat(mindex, armcommon)
    ok(j and j["packages"][0]["releases"] == ["9.0.0"] and j["packages"][0]["cuda"] == "CPU",
       "an aarch64 extension binds against the aarch64 build, named for its own CUDA major (CPU)", raw.stdout[-800:])

    # the built-in index
    r = subprocess.run([ABISCOPE, "torch-compat", "--json", exts["needs_common"]], capture_output=True, text=True)
    j = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    vers = [x["version"] for x in j.get("index", {}).get("releases", [])]
    ok(vers and vers[0].startswith("2.") and all(x["sha256"] and x["wheel"].endswith(".whl")
                                                for x in j["index"]["releases"]),
       "the built-in index decodes, with a wheel and sha256 per release (%d releases)" % len(vers), r.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
