#!/usr/bin/env python3
"""Scale tests: is a command linear in its input?  (issue 26: every loop over
an input is linear, checked per reader in `make test`.)

A scale test runs one command on an input and on the same kind of input four
times as large, and compares the CPU seconds the two runs used (user + system
of the child, never the wall clock, so a busy machine does not fail it): a
linear reader stays well within 5x, a quadratic one takes 16x.  The smaller
run's time is taken as at least FLOOR seconds, so the noise of a very fast run
cannot fail the test; size the inputs so the smaller run takes longer than
the floor, or the test proves little (the line says so).

CPU time is noisy on a shared machine (a CI run saw one run take twice the
CPU of the same run here), so a ratio that fails is measured again: both
inputs are run RETRIES more times, interleaved, and the least CPU each took is
judged.  Noise only ever adds CPU, so the least is the nearest to the cost of
the work; a superlinear reader fails every time.

From a shell test:
    python3 tests/scale.py [--factor 5] [--floor 0.05] [--timeout 600] \\
        [--rc N] NAME SMALL LARGE -- CMD ARG... {} ...
runs CMD with {} replaced by SMALL, then by LARGE, and prints TAP lines: one
for the exit status (when --rc is given), one for the ratio.  Exit status 1
when a line failed.

From Python:
    import scale
    rc, cpu, rss_kib = scale.run(argv, out_path)
    ok = scale.judge(name, cpu_small, cpu_large)   # prints the TAP line
"""
import argparse
import os
import subprocess
import sys

FACTOR = 5.0
FLOOR = 0.05
RETRIES = 2


def run(argv, out=os.devnull, timeout=600):
    """Runs argv (stdout and stderr to the file out) in a child and returns
    (exit status, CPU seconds, peak resident KiB).  A child past timeout is
    killed: status 124, and the CPU it had used."""
    pid = os.fork()
    if pid == 0:  # the child: its own rusage, read exactly by wait4
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    import signal
    import threading
    timer = threading.Timer(timeout, lambda: os.kill(pid, signal.SIGKILL))
    timer.start()
    try:
        _, status, ru = os.wait4(pid, 0)
    finally:
        timed_out = not timer.is_alive()
        timer.cancel()
    rc = 124 if timed_out else (os.waitstatus_to_exitcode(status))
    return rc, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def judge(name, small, large, factor=FACTOR, floor=FLOOR):
    """Prints the TAP line of one ratio and returns whether it held."""
    base = max(small, floor)
    ok = large < factor * base
    note = "" if small >= floor else f"; the small run took under the {floor} s floor"
    line = (f"{name}: 4x the input within {factor:g}x the CPU "
            f"({small:.3f} s, {large:.3f} s: {large / base:.1f}x{note})")
    print(("ok - " if ok else "not ok - ") + line)
    if not ok:
        print(f"#   superlinear: 4x the input took {large / base:.1f}x the CPU")
    sys.stdout.flush()
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--factor", type=float, default=FACTOR)
    p.add_argument("--floor", type=float, default=FLOOR)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--rc", type=int, help="the exit status both runs must have")
    p.add_argument("--out", default=os.devnull, help="where the larger run's output goes")
    p.add_argument("name")
    p.add_argument("small")
    p.add_argument("large")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        p.error("no command after --")
    runs = []
    for inp, out in ((a.small, os.devnull), (a.large, a.out)):
        argv = [w.replace("{}", inp) for w in cmd]
        runs.append(run(argv, out, a.timeout))
    ok = True
    if a.rc is not None:
        got = (runs[0][0], runs[1][0])
        good = got == (a.rc, a.rc)
        print(("ok - " if good else "not ok - ") + f"{a.name}: exit {a.rc} on both inputs (got {got[0]}, {got[1]})")
        ok &= good
    if any(r[0] == 124 for r in runs):
        print(f"not ok - {a.name}: a run went past the {a.timeout:g} s guard "
              f"(CPU {runs[0][1]:.3f} s, {runs[1][1]:.3f} s)")
        return 1
    small, large = runs[0][1], runs[1][1]
    tries = 1
    while large >= a.factor * max(small, a.floor) and tries <= RETRIES:
        tries += 1
        # a retry counts only when it ends as the first run did: one killed
        # early (memory, a signal) used less CPU for less work
        for i, inp in ((0, a.small), (1, a.large)):
            rc, cpu, _ = run([w.replace("{}", inp) for w in cmd], os.devnull, a.timeout)
            if rc == runs[i][0] and rc != 124:
                small, large = (min(small, cpu), large) if i == 0 else (small, min(large, cpu))
    if tries > 1:
        print(f"# {a.name}: measured {tries} times, the least CPU of each judged")
    ok &= judge(a.name, small, large, a.factor, a.floor)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
