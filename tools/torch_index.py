#!/usr/bin/env python3
"""torch_index.py: builds data/torch/abi.idx, the index of the dynamic
exports of every torch release on PyPI (see data/torch/README.md).

    tools/torch_index.py add [--arch A] SPEC...  add or refresh releases
    tools/torch_index.py list             the releases the index covers
    tools/torch_index.py symbols VERSION  the hashes one release exports

SPEC is a version ("2.9.1": the PyPI default cp311 manylinux wheel for
--arch, x86_64 or aarch64, is downloaded with `pip download --no-deps` into
--wheels, under the directory's .lock; with --delete it is removed once
read, as the aarch64 set is large) or the path of a torch wheel.  A release
is one (version, CUDA major, machine): the machine is the libraries'
e_machine, and the CUDA major their DT_NEEDED libcudart.so.N, checked
against the nvidia-*-cuNN requirements of the wheel's METADATA.  Each wheel is read by
build/devtools/wheel_exports (abiscope's own wheel and ELF readers, no
extraction); its exports replace the release's entry, so running the same
command twice changes nothing (a release whose wheel sha256 is already
recorded is skipped).  The index is lossless for what it stores (a hash set
per release), so adding a release needs no other input than the index.

Names are hashed with 64-bit FNV-1a truncated to HASH_BITS bits (see
data/torch/README.md for why the width is enough).  Exact collisions
between the names seen in this run are checked and fail the build.
"""
import argparse
import gzip
import hashlib
import os
import re
import struct
import subprocess
import sys

MAGIC = b"ABTORCH\0"
FORMAT = 2
EM_X86_64, EM_AARCH64 = 62, 183
MACHINES = {"x86_64": EM_X86_64, "aarch64": EM_AARCH64}
MACHINE_NAMES = {v: k for k, v in MACHINES.items()}
HASH_BITS = 48
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INDEX = os.path.join(ROOT, "data", "torch", "abi.idx")
DUMPER = os.path.join(ROOT, "build", "devtools", "wheel_exports")


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h ^= c
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def name_hash(name, bits=HASH_BITS):
    return fnv1a64(name.encode()) >> (64 - bits)


def version_key(v):
    parts = re.split(r"[.+-]", v)
    key = []
    for p in parts:
        key.append((0, int(p), "") if p.isdigit() else (1, 0, p))
    return key


def uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_uvarint(buf, pos):
    n = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7


class Release:
    def __init__(self, version, wheel, sha256, libs, cuda_major, cxx11, hashes, machine=EM_X86_64):
        self.version, self.wheel, self.sha256, self.libs = version, wheel, sha256, libs
        self.cuda_major, self.cxx11, self.hashes, self.machine = cuda_major, cxx11, hashes, machine

    def key(self):
        # one machine's releases are adjacent (the reader's runs "2.0.0 to 2.3.1" stay on one machine)
        return (self.machine, version_key(self.version), self.cuda_major)

    def ident(self):
        return (self.version, self.cuda_major, self.machine)


def encode(releases, bits):
    releases = sorted(releases, key=Release.key)
    nrel = len(releases)
    setbytes = (nrel + 7) // 8
    member = {}
    for r, rel in enumerate(releases):
        for h in rel.hashes:
            member[h] = member.get(h, 0) | (1 << r)
    groups = {}
    for h, m in member.items():
        groups.setdefault(m, []).append(h)
    order = sorted(groups, key=lambda m: (-len(groups[m]), m))
    strings = bytearray()
    offs = {}

    def sref(s):
        if s not in offs:
            offs[s] = len(strings)
            strings.extend(s.encode() + b"\0")
        return offs[s]

    recs = bytearray()
    for rel in releases:
        recs += struct.pack("<IIIIIBbH", sref(rel.version), sref(rel.wheel), sref(rel.sha256), sref(rel.libs),
                            len(rel.hashes), rel.cuda_major, rel.cxx11, rel.machine)
    sets = bytearray()
    body = bytearray()
    for m in order:
        sets += m.to_bytes(setbytes, "little")
        hs = sorted(groups[m])
        body += uvarint(len(hs))
        prev = 0
        for h in hs:
            body += uvarint(h - prev)
            prev = h
    head = MAGIC + struct.pack("<HHIIIII", FORMAT, bits, nrel, len(order), len(member), len(strings), 0)
    return bytes(head + recs + strings + sets + body)


def decode(buf):
    if buf[:8] != MAGIC:
        raise SystemExit("torch_index: %s is not an index" % INDEX)
    fmt, bits, nrel, nsets, nsym, slen, _ = struct.unpack_from("<HHIIIII", buf, 8)
    if fmt not in (1, FORMAT):
        raise SystemExit("torch_index: index format %d, this script writes %d" % (fmt, FORMAT))
    pos = 32
    recs = []
    for _ in range(nrel):
        recs.append(struct.unpack_from("<IIIIIBbH", buf, pos))
        pos += 24
    strings = buf[pos:pos + slen]
    pos += slen

    def s(off):
        return strings[off:strings.index(b"\0", off)].decode()

    setbytes = (nrel + 7) // 8
    masks = []
    for _ in range(nsets):
        masks.append(int.from_bytes(buf[pos:pos + setbytes], "little"))
        pos += setbytes
    per = [set() for _ in range(nrel)]
    for m in masks:
        n, pos = read_uvarint(buf, pos)
        h, group = 0, []
        for _ in range(n):
            d, pos = read_uvarint(buf, pos)
            h += d
            group.append(h)
        for r in range(nrel):
            if m >> r & 1:
                per[r].update(group)
    rels = []
    for r, (v, w, sh, libs, n, cuda, cxx11, machine) in enumerate(recs):
        # format 1 had no machine: every release was an x86_64 wheel
        rels.append(Release(s(v), s(w), s(sh), s(libs), cuda, cxx11, per[r], machine if fmt > 1 else EM_X86_64))
        if len(per[r]) != n:
            raise SystemExit("torch_index: release %s: %d symbols decoded, %d recorded" % (s(v), len(per[r]), n))
    return bits, rels


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dump_wheel(path, cache):
    """The dumper's output for path, cached in cache (gzip) by sha256."""
    sha = sha256_of(path)
    cached = os.path.join(cache, sha + ".tsv.gz") if cache else None
    if cached and os.path.exists(cached):
        with gzip.open(cached, "rt") as f:
            return sha, f.read()
    if not os.path.exists(DUMPER):
        raise SystemExit("torch_index: build the reader first: make build/devtools/wheel_exports")
    out = subprocess.run([DUMPER, path], check=True, capture_output=True, text=True).stdout
    if cached:
        os.makedirs(cache, exist_ok=True)
        with gzip.open(cached + ".tmp", "wt") as f:
            f.write(out)
        os.replace(cached + ".tmp", cached)
    return sha, out


def metadata_cuda(path, machine):
    """The CUDA majors the wheel's METADATA requires (nvidia-*-cuNN) on Linux
    for machine, CPython 3.11, markers evaluated as pip does (PyPI's aarch64
    torch 2.1-2.5 list nvidia-*-cu12 for x86_64 only); read with zipfile (one
    member, nothing extracted).  None when the wheel is not at hand."""
    import zipfile
    try:
        from packaging.markers import Marker
    except ImportError:
        from pip._vendor.packaging.markers import Marker
    if not os.path.exists(path):
        return None
    env = {"platform_system": "Linux", "sys_platform": "linux", "os_name": "posix",
           "platform_machine": MACHINE_NAMES[machine], "python_version": "3.11", "python_full_version": "3.11.2",
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}
    majors = set()
    with zipfile.ZipFile(path) as z:
        meta = [n for n in z.namelist() if re.match(r"^[^/]+\.dist-info/METADATA$", n)]
        for n in meta:
            for line in z.read(n).decode("utf-8", "replace").splitlines():
                m = re.match(r"Requires-Dist:\s*nvidia-[a-z0-9-]+?-cu(\d+)\b[^;]*(?:;(.*))?$", line, re.I)
                if m and (not m.group(2) or Marker(m.group(2).strip()).evaluate(env)):
                    majors.add(int(m.group(1)))
    return majors


def release_of(path, sha, dump, bits, names_seen):
    m = re.match(r"torch-([^-]+)-", os.path.basename(path))
    if not m:
        raise SystemExit("torch_index: %s is not a torch wheel name" % path)
    version = m.group(1)
    libs, hashes, cuda, cxx11, rss, machines = [], set(), 0, -1, 0, set()
    for line in dump.splitlines():
        f = line.split("\t")
        if f[0] == "L":
            member, soname, needed, abi = f[1], f[2], f[3], int(f[4])
            # reader output kept before the machine was printed: x86_64 wheels only
            machines.add(int(f[5]) if len(f) > 5 else EM_X86_64)
            libs.append(soname if soname != "-" else os.path.basename(member))
            for n in needed.split(","):
                mm = re.match(r"libcudart(?:-[0-9a-f]+)?\.so\.(\d+)", n)
                if mm:
                    cuda = max(cuda, int(mm.group(1)))
            if os.path.basename(member) == "libc10.so":
                cxx11 = abi
        elif f[0] == "S":
            name = f[1] if f[2] == "-" else f[1] + "@" + f[2]
            h = name_hash(name, bits)
            other = names_seen.setdefault(h, name)
            if other != name:
                raise SystemExit("torch_index: %d-bit hash collision: %s and %s; raise HASH_BITS" % (bits, other, name))
            hashes.add(h)
        elif f[0] == "M":
            rss = int(f[1])
    if len(machines) != 1:
        raise SystemExit("torch_index: %s: the libraries are for %s machines" % (path, len(machines) or "no"))
    machine = machines.pop()
    if machine not in MACHINE_NAMES:
        raise SystemExit("torch_index: %s: e_machine %d is neither x86_64 nor aarch64" % (path, machine))
    meta = metadata_cuda(path, machine)
    if meta and (len(meta) > 1 or cuda not in meta):
        # torch 2.0's PyPI wheels require nvidia-*-cu11 and link libcudart.so.11; a mismatch means the
        # reader or the wheel is not what the index says
        raise SystemExit("torch_index: %s: its libraries link CUDA %s, its METADATA requires nvidia-*-cu%s"
                         % (path, cuda or "none", ",".join(map(str, sorted(meta))) or " none"))
    print("  %s %s: %d exports from %d libraries, CUDA %s (METADATA: %s), CXX11 ABI %d, reader peak RSS %d MiB"
          % (version, MACHINE_NAMES[machine], len(hashes), len(libs), cuda or "none",
             "not read" if meta is None else ("cu%s" % ",".join(map(str, sorted(meta))) if meta else "no nvidia-*"),
             cxx11, rss // 1024), file=sys.stderr)
    return Release(version, os.path.basename(path), sha, ",".join(sorted(libs)), cuda, cxx11, hashes, machine)


def download(version, wheels, arch="x86_64"):
    os.makedirs(wheels, exist_ok=True)
    before = set(os.listdir(wheels))
    # pip takes an explicit --platform literally: torch 2.0-2.6 are manylinux1 wheels on x86_64,
    # manylinux2014 on aarch64 (2.0-2.5)
    plats = ["manylinux_2_28_" + arch, "manylinux2014_" + arch] + (["manylinux1_x86_64"] if arch == "x86_64" else [])
    cmd = ["flock", os.path.join(wheels, ".lock"), sys.executable, "-m", "pip", "download", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.11"]
    for p in plats:
        cmd += ["--platform", p]
    cmd += ["-d", wheels, "torch==" + version]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"(?:Saved|File was already downloaded) (\S+\.whl)", out)
    if m:
        return m.group(1)
    new = [f for f in set(os.listdir(wheels)) - before if f.endswith(".whl")]
    cands = new or [f for f in os.listdir(wheels) if re.match(r"torch-%s(-\d+)?-cp311-.*_%s\.whl$"
                                                               % (re.escape(version), arch), f)]
    if len(cands) != 1:
        raise SystemExit("torch_index: cannot tell which wheel pip saved for %s" % version)
    return os.path.join(wheels, cands[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", default=INDEX)
    ap.add_argument("--wheels", default=os.environ.get("TORCH_WHEELS", "/work/cache/wheels"))
    ap.add_argument("--dump-cache", default=os.environ.get("TORCH_DUMP_CACHE"),
                    help="keep each wheel's reader output here (gzip, by sha256)")
    ap.add_argument("--bits", type=int, default=None, help="hash width for a new index")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("add")
    a.add_argument("--arch", choices=sorted(MACHINES), default="x86_64",
                   help="the wheel a version SPEC downloads (default x86_64)")
    a.add_argument("--delete", action="store_true", help="remove each downloaded wheel once it is read")
    a.add_argument("spec", nargs="+")
    sub.add_parser("list")
    sub.add_parser("refresh", help="recompute every entry from --dump-cache")
    s = sub.add_parser("symbols")
    s.add_argument("--arch", choices=sorted(MACHINES), default="x86_64")
    s.add_argument("version")
    sm = sub.add_parser("sample", help="write a small valid index (the first releases, a few symbols): fuzz seeds")
    sm.add_argument("out")
    args = ap.parse_args()

    bits, rels = HASH_BITS, []
    if os.path.exists(args.index):
        with open(args.index, "rb") as f:
            bits, rels = decode(f.read())
    elif args.bits:
        bits = args.bits
    if args.cmd == "list":
        for r in sorted(rels, key=Release.key):
            print("%s\t%s\tCUDA %s\tcxx11=%d\t%d symbols\t%s\t%s" % (r.version, MACHINE_NAMES.get(r.machine, r.machine),
                                                                      r.cuda_major or "-", r.cxx11,
                                                                      len(r.hashes), r.wheel, r.sha256))
        return
    if args.cmd == "symbols":
        for r in rels:
            if r.version == args.version and r.machine == MACHINES[args.arch]:
                for h in sorted(r.hashes):
                    print("%0*x" % ((bits + 3) // 4, h))
                return
        raise SystemExit("torch_index: %s is not in the index" % args.version)
    if args.cmd == "sample":
        # the first releases of each machine, so a seed has both
        keep = []
        for mach in sorted({r.machine for r in rels}):
            keep += [r for r in sorted(rels, key=Release.key) if r.machine == mach][:2]
        pick = sorted(set().union(*(r.hashes for r in keep)))[::997][:64]
        for r in keep:
            r.hashes = set(pick) & r.hashes
        with open(args.out, "wb") as f:
            f.write(encode([r for r in keep if r.hashes], bits))
        return
    names_seen = {}
    changed = False
    if args.cmd == "refresh":
        # re-read every release from the reader output kept by sha256 in --dump-cache:
        # the metadata again, and every name hashed again (collisions checked across all)
        if not args.dump_cache:
            raise SystemExit("torch_index: refresh needs --dump-cache")
        new = []
        for r in rels:
            cached = os.path.join(args.dump_cache, r.sha256 + ".tsv.gz")
            if not os.path.exists(cached):
                print("  %s: no reader output kept; entry unchanged" % r.version, file=sys.stderr)
                new.append(r)
                continue
            with gzip.open(cached, "rt") as f:
                dump = f.read()
            nr = release_of(r.wheel, r.sha256, dump, bits, names_seen)
            nr.version = r.version
            new.append(nr)
        rels, changed = new, True
        args.spec = []
    for spec in args.spec:
        path = spec if spec.endswith(".whl") else download(spec, args.wheels, args.arch)
        sha = sha256_of(path)
        if any(r.sha256 == sha for r in rels) and not args.dump_cache:
            print("  %s: already indexed" % os.path.basename(path), file=sys.stderr)
            continue
        sha, dump = dump_wheel(path, args.dump_cache)
        rel = release_of(path, sha, dump, bits, names_seen)
        if args.delete and not spec.endswith(".whl"):
            os.remove(path)
        rels = [r for r in rels if r.ident() != rel.ident()]
        rels.append(rel)
        changed = True
    if not changed:
        return
    data = encode(rels, bits)
    if decode(data)[1] and sorted(len(r.hashes) for r in decode(data)[1]) != sorted(len(r.hashes) for r in rels):
        raise SystemExit("torch_index: the encoded index does not decode to what was written")
    os.makedirs(os.path.dirname(args.index), exist_ok=True)
    with open(args.index + ".tmp", "wb") as f:
        f.write(data)
    os.replace(args.index + ".tmp", args.index)
    nsym = len(set().union(*(r.hashes for r in rels)))
    print("%s: %d releases, %d distinct symbols, %d bytes" % (args.index, len(rels), nsym, len(data)), file=sys.stderr)


if __name__ == "__main__":
    main()
