#!/usr/bin/env python3
"""nvidia_providers.py: which pip distribution and version ships each CUDA
library, read from the real NVIDIA wheels that torch pins, into the rows of
data/pyenv/providers.tsv.

    tools/nvidia_providers.py TORCH_WHEEL...

For each torch wheel, the nvidia-* pins of its METADATA (Requires-Dist, and
the extras of a cuda-toolkit[...]==X pin, read from that wheel's METADATA)
are downloaded with `pip download --no-deps` into --wheels (under its
.lock) and their member lists read (zip central directory only, nothing
extracted): every lib*.so* under nvidia/ is a row "soname, CUDA major,
distribution, install folder, version, pinned by torch X".  Rows for those
sonames are replaced in providers.tsv; other rows are kept as they are.
"""
import argparse
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(os.path.dirname(HERE), "data", "pyenv", "providers.tsv")
PIN = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*==\s*([^;\s]+)\s*(;.*)?$")


def metadata(whl):
    with zipfile.ZipFile(whl) as z:
        name = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")][0]
        return z.read(name).decode("utf-8", "replace")


def pins(meta, extras=None):
    out = []
    for line in meta.splitlines():
        m = PIN.match(line.strip())
        if not m:
            continue
        marker = m.group(4) or ""
        if extras is not None:
            em = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
            if not em or em.group(1) not in extras:
                continue
        elif "extra ==" in marker or ("platform_system" in marker and "Linux" not in marker):
            continue
        out.append((m.group(1), m.group(2), m.group(3)))
    return out


def download(spec, wheels):
    cmd = ["flock", os.path.join(wheels, ".lock"), sys.executable, "-m", "pip", "download", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
           "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64", "-d", wheels, spec]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print("  %s: not on the index (%s)" % (spec, (r.stderr.strip().splitlines() or ["?"])[-1]), file=sys.stderr)
        return None
    out = r.stdout
    m = re.search(r"(?:Saved|File was already downloaded) (\S+\.whl)", out)
    if not m:
        raise SystemExit("nvidia_providers: cannot tell which wheel pip saved for %s" % spec)
    return m.group(1)


def cuda_major(dist, version, torch_cuda):
    m = re.search(r"-cu(\d+)$", dist)
    if m:
        return int(m.group(1))
    return torch_cuda


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheels", default=os.environ.get("TORCH_WHEELS", "/work/cache/wheels"))
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("torch_wheels", nargs="+")
    args = ap.parse_args()
    rows = {}
    for tw in args.torch_wheels:
        tver = re.match(r"torch-([^-]+)-", os.path.basename(tw)).group(1)
        meta = metadata(tw)
        reqs = []
        for dist, extras, ver in pins(meta):
            if dist == "cuda-toolkit" and extras:
                tk = download("%s==%s" % (dist, ver), args.wheels)
                if not tk:
                    continue
                want = {e.strip() for e in extras.strip("[]").split(",")}
                reqs += pins(metadata(tk), want)
            elif dist.startswith("nvidia-"):
                reqs.append((dist, None, ver))
        cu = [int(m) for m in re.findall(r"-cu(\d+)==", " ".join("%s==%s" % (d, v) for d, _, v in reqs))]
        torch_cuda = max(cu) if cu else 0
        for dist, _, ver in reqs:
            whl = download("%s==%s" % (dist, ver), args.wheels)
            if not whl:
                continue
            ver = re.sub(r"\.\*$", "", ver)
            with zipfile.ZipFile(whl) as z:
                names = z.namelist()
            for n in names:
                b = os.path.basename(n)
                if not n.startswith("nvidia/") or not re.match(r"^lib.*\.so(\.\d+)*$", b):
                    continue
                major = cuda_major(dist, ver, torch_cuda)
                if re.search(r"^nvidia/cu(\d+)/", n):
                    major = int(re.search(r"^nvidia/cu(\d+)/", n).group(1))
                key = (b, major)
                rows[key] = (b, str(major), dist, os.path.dirname(n), ver, "torch " + tver)
            print("  %s==%s: %d libraries" % (dist, ver, sum(1 for r in rows.values() if r[2] == dist)),
                  file=sys.stderr)
    # merge: replace the rows of the sonames seen (for that CUDA major), keep the rest
    out, seen = [], set()
    for line in open(args.table).read().splitlines():
        if line.startswith("#") or not line.strip():
            out.append(line)
            continue
        f = line.split("\t")
        try:
            key = (f[0], int(f[1]))
        except ValueError:
            key = None
        if key in rows:
            r = rows[key]
            note = f[4] if len(f) > 4 else ""
            out.append("\t".join(list(r[:4]) + [note, r[4], r[5]]).rstrip("\t"))
            seen.add(key)
        else:
            out.append(line)
    for key in sorted(rows):
        if key not in seen:
            r = rows[key]
            out.append("\t".join(list(r[:4]) + ["", r[4], r[5]]))
    with open(args.table + ".tmp", "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(args.table + ".tmp", args.table)
    print("%s: %d rows from real wheels" % (args.table, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
