#!/usr/bin/env python3
"""A/B of abiscope builds on one environment, interleaved.

    python3 bench/ab.py [--runs N] [--args "check --json"] ENV BIN...

runs each binary N times (default 9), the binaries one after another in
each round, so that a machine whose load drifts treats them alike, and
prints the median user, system and total CPU milliseconds of each (the
child's rusage).  For a change too small to see between two bench/run
runs minutes apart; BENCHMARKS.md's before/after tables use it."""
import argparse
import os
import resource
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--args", default="check --json", help="the command line before ENV")
    ap.add_argument("env")
    ap.add_argument("bins", nargs="+")
    o = ap.parse_args()
    cpu = {b: [] for b in o.bins}
    for _ in range(o.runs):
        for b in o.bins:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([b] + o.args.split() + [o.env], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[b].append(((r1.ru_utime - r0.ru_utime) * 1000, (r1.ru_stime - r0.ru_stime) * 1000))
    for b in o.bins:
        u = statistics.median(x[0] for x in cpu[b])
        s = statistics.median(x[1] for x in cpu[b])
        t = statistics.median(x[0] + x[1] for x in cpu[b])
        print(f"{b:40s} user {u:7.1f}  sys {s:7.1f}  total {t:7.1f} ms  ({os.path.basename(o.env)}, {o.args})")


if __name__ == "__main__":
    main()
