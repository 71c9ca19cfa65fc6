#!/usr/bin/env python3
"""companion_pins.py: the Requires-Dist lines of torch and of the packages
built against one torch release, read from PyPI's metadata, into
data/torch/pins.tsv.

    tools/companion_pins.py [--only DIST] [--from VERSION]

For each distribution of DISTS and each of its releases that `pip index
versions` lists (from the first that matters, FIRST), pip reads the
release's METADATA the way an install does (`pip install --dry-run
--no-deps --ignore-installed --report`: PEP 658 metadata, no wheel is
downloaded when the index serves it) for CPython 3.11 on linux x86_64.
The rows kept are the Requires-Dist lines a fix line needs: a companion's
requirement on torch, torch's requirements on the NVIDIA wheels, triton and
cuda-toolkit, cuda-toolkit's on the NVIDIA wheels (markers kept as
written; abiscope evaluates them for the interpreter it checks).  A
release pip cannot resolve for that platform is left out.  Rows of the
distributions read are replaced; others are kept.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(os.path.dirname(HERE), "data", "torch", "pins.tsv")
# distribution -> first release read
DISTS = {"torch": "2.0.0", "torchvision": "0.15.0", "torchaudio": "2.0.0", "xformers": "0.0.20",
         "cuda-toolkit": "13.0.0"}
KEEP = re.compile(r"^(torch|nvidia-[a-z0-9-]+|triton|cuda-toolkit|cuda-bindings)\b", re.I)

HEADER = """# data/torch/pins.tsv: what torch and the packages built against it require, from
# their METADATA on PyPI (tools/companion_pins.py; CPython 3.11, linux x86_64).
#   distribution <TAB> version <TAB> Requires-Dist line (markers as written)
# One row per requirement kept: a companion's requirement on torch; torch's on the NVIDIA
# wheels, triton and cuda-toolkit; cuda-toolkit's on the NVIDIA wheels.  A release whose
# METADATA requires none of them has one row with an empty requirement.
"""


def versions(dist):
    r = subprocess.run([sys.executable, "-m", "pip", "index", "versions", dist], capture_output=True, text=True)
    m = re.search(r"Available versions:\s*(.*)", r.stdout)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def vkey(v):
    parts = re.split(r"[.+]", v)
    out = []
    for p in parts:
        m = re.match(r"(\d+)(.*)", p)
        out.append((int(m.group(1)), m.group(2)) if m else (-1, p))
    return out


def requires(dist, version):
    with tempfile.TemporaryDirectory() as t:
        rep = os.path.join(t, "r.json")
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
                            "--quiet", "--only-binary=:all:", "--report", rep, "%s==%s" % (dist, version)],
                           capture_output=True, text=True)
        if r.returncode or not os.path.exists(rep):
            return None
        for item in json.load(open(rep))["install"]:
            return item["metadata"].get("requires_dist") or []
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--from", dest="first")
    args = ap.parse_args()
    dists = {args.only: args.first or DISTS.get(args.only, "0")} if args.only else DISTS
    rows = []
    if os.path.exists(TABLE):
        for line in open(TABLE):
            if line.startswith("#") or not line.strip():
                continue
            if line.split("\t", 1)[0] not in dists:
                rows.append(line.rstrip("\n"))
    for dist, first in dists.items():
        vs = sorted((v for v in versions(dist) if vkey(v) >= vkey(first)), key=vkey)
        for v in vs:
            req = requires(dist, v)
            if req is None:
                print("  %s %s: not installable here" % (dist, v), file=sys.stderr)
                continue
            kept = [x for x in req if KEEP.match(x)]
            if dist != "torch" and dist != "cuda-toolkit":
                kept = [x for x in kept if re.match(r"^torch\b", x)]
            print("%s %s: %d" % (dist, v, len(kept)), file=sys.stderr)
            for x in kept or [""]:
                rows.append("%s\t%s\t%s" % (dist, v, x))
    with open(TABLE, "w") as f:
        f.write(HEADER)
        for r in rows:
            f.write(r + "\n")


if __name__ == "__main__":
    main()
