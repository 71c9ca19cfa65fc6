#!/usr/bin/env python3
"""The benchmark script must keep working: bench/run --short, checked.

Runs `bench/run --short --no-build` (the small corpora, the peers that are
installed, 3 runs) against the build under test and checks what it
produced: it exits 0, every corpus has an abiscope row and
an I/O floor with a byte count, every row of the Markdown table is well
formed with numbers where numbers belong, every peer has a ratio, and the
JSON agrees with the table.  It asserts nothing about speed (it prints
how long it took): timings belong in BENCHMARKS.md, not in a test that a loaded
machine could fail.

Environment: ABISCOPE, BUILD (as tests/run.sh sets them).  The bench
helpers (BUILD/bench/loadall, iofloor, timeit) come from `make bench-tools`
(`make test` builds them); when they are missing and cannot be built for
this BUILD, the test says so and skips.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(TOP, "build")))
# the binary itself (its timings, its bytes), not tests/run.sh's recording wrapper
ABISCOPE = os.path.abspath(os.environ.get("ABISCOPE_BINARY") or os.environ.get("ABISCOPE", os.path.join(BUILD, "abiscope")))
failures = 0


def report(ok, name, detail=""):
    global failures
    if ok:
        print(f"ok - {name}")
    else:
        failures += 1
        print(f"not ok - {name}")
        for line in str(detail).splitlines()[:20]:
            print(f"#   {line}")


def sanitized(exe):
    """True for an ASan/UBSan build (its timings say nothing)."""
    try:
        with open(exe, "rb") as f:
            blob = f.read()
    except OSError:
        return False
    return b"__asan_init" in blob or b"__ubsan_handle" in blob


def helpers_present():
    return all(os.access(os.path.join(BUILD, "bench", t), os.X_OK)
               for t in ("loadall", "iofloor", "timeit"))


def main():
    if not helpers_present():
        subprocess.run(["make", "-C", TOP, f"BUILD={os.path.relpath(BUILD, TOP)}", "bench-tools"],
                       capture_output=True)
    if not helpers_present():
        print(f"ok - bench/run --short # SKIP {BUILD}/bench helpers are not built "
              "(make BUILD=... bench-tools)")
        return 0
    env = dict(os.environ, BUILD=BUILD, ABISCOPE=ABISCOPE)
    with tempfile.TemporaryDirectory() as tmp:
        md, js = os.path.join(tmp, "t.md"), os.path.join(tmp, "t.json")
        t0 = time.monotonic()
        # A sanitizer build is only checked for a well-formed table: one run each
        runs = ["--runs", "1"] if sanitized(ABISCOPE) else []
        r = subprocess.run([sys.executable, os.path.join(TOP, "bench", "run"), "--short",
                            "--no-build", "--md", md, "--json", js] + runs,
                           capture_output=True, text=True, env=env, timeout=600)
        took = time.monotonic() - t0
        # Its duration is printed, never asserted: speed is measured by the
        # benchmark itself, as ratios, not by a timed test on a shared machine.
        report(r.returncode == 0, f"bench/run --short exits 0 (took {took:.0f} s)", r.stderr[-2000:])
        if r.returncode != 0:
            return 1
        table = open(md).read()
        data = json.load(open(js))
        report(table.strip() in r.stdout, "the table printed is the one written to --md")

        corpora = data.get("corpora", [])
        report(len(corpora) >= 1, f"at least one corpus measured ({len(corpora)})")
        for c in corpora:
            n = c["name"]
            ab = [t for t in c["tools"] if t["is_abiscope"]]
            report(len(ab) == 1 and ab[0]["ms"] > 0 and ab[0]["rss_mb"] > 0,
                   f"{n}: one abiscope row with a time and a peak RSS", ab)
            report(c["objects"] > 0 and c["mb"] > 0, f"{n}: objects and bytes counted")
            f = c.get("floor") or {}
            report(f.get("need_bytes", 0) > 0 and f.get("ms", -1) >= 0 and
                   f.get("walk_entries", 0) > 0,
                   f"{n}: I/O floor with the byte count abiscope needs", f)
            report(all(t["ms"] > 0 and t["n"] >= 1 for t in c["tools"]),
                   f"{n}: every tool has a median time", c["tools"])

        rows = [l for l in table.splitlines() if l.startswith("| ") and not l.startswith("| corpus")
                and not l.startswith("|---")]
        main_rows = [l for l in rows if l.count("|") == 10]
        num = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
        bad = []
        for l in main_rows:
            cells = [x.strip() for x in l.strip().strip("|").split("|")]
            # objects, MB, median, CPU, RSS, runs, ratio
            for i in (1, 2, 4, 7, 8):
                if not num.match(cells[i]):
                    bad.append(l)
            if not (num.match(cells[5]) or cells[5] == "-") or \
               not (num.match(cells[6]) or cells[6] == "-"):
                bad.append(l)
        expected_rows = sum(len(c["tools"]) + (1 if c.get("floor") else 0) for c in corpora)
        report(len(main_rows) == expected_rows,
               f"one table row per tool and corpus plus the floor ({len(main_rows)} of "
               f"{expected_rows})", table)
        report(not bad, "every table cell that should be a number is one", "\n".join(bad))
        header = "| corpus | objects | MB on disk | tool | median ms | CPU ms | peak RSS MB | runs"
        report(header in table, "the table has its header", table[:400])
        report(table.startswith("Machine: "), "the machine is recorded above the table",
               table[:200])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
